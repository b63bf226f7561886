"""The split-keys pass (compiler/passes/split_keys.py) and compose-views: the answer's aggregate on a
table of two s-ops becomes one head per value of one of them, reading their one-hots one MLP
sub-layer sooner than the table's; the model still agrees with the interpreter, also where
several heads select at once or none does."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasp_compile.compiler import OPTIMIZATIONS, compile_program
from rasp_compile.compiler import build_graph
from rasp_compile.compiler.driver import whole_answer
from rasp_compile.compiler.layout import lay_out
from rasp_compile.compiler.ops import Attend, Linear
from rasp_compile.frontend import load_program, parse_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.testing.differential import assert_agree, every_input, random_inputs


PROGRAMS_DIR = Path(__file__).resolve().parent.parent / "programs"

PROGRAMS = {
    "two heads may select at once (a common value), none has a default": """
vocab {a, b}
max_len 5
w = selector_width(select(tokens, tokens, ==))
key = sequence_map(lambda c, t: c + (1 if t == "a" else 0), w, tokens)
output aggregate(select(key, length, >=), map(lambda t: "z", tokens), default="nothing")
""",
    "no default: none where no head selects": """
vocab {a, b, c}
max_len 5
w = selector_width(select(tokens, tokens, <))
v = selector_width(select(tokens, tokens, ==))
output aggregate(select(sequence_map(lambda x, y: x * 3 + y, w, v), indices, ==), tokens)
""",
    "numerical widths, a rank by two counts (sort_freq's shape) and a categorical rest": """
vocab {1, 2, 3}
max_len 6
count = selector_width(select(tokens, tokens, ==))
more = numerical(selector_width(select(count, count, >)))
tied = numerical(selector_width(select(count, count, ==) and select(indices, indices, <)))
parity = map(lambda i: i % 2, indices)
output aggregate(select(numerical(more + tied), indices, ==)
                 and select(parity, parity, lambda k, q: k == 0 or q == 1), tokens, default=0)
""",
    "a line through one index, where v and v^2 are one feature (a fuzz found it)": """
vocab {a, b}
max_len 2
seen = map(lambda w: min(w, 1), selector_width(select(tokens, tokens, lambda k, q: k == "a")))
output aggregate(select(seen + indices, indices, ==), tokens, default="-")
""",
}


def heads_of(program, disabled=()) -> list[Attend]:
    ops = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS) - set(disabled)).ops
    return [op for op in ops if isinstance(op, Attend)]


@pytest.mark.slow
@pytest.mark.parametrize("text", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_split_programs_agree_with_the_interpreter_on_every_input(text: str):
    program = parse_program(text)
    model = compile_program(program)
    whole = compile_program(program, disabled=["split-keys"])
    assert len(model.meta["layers"]) == len(whole.meta["layers"]) - 1  # the split is why
    for compiled in (model, whole):
        assert_agree(compiled, program, every_input(program.vocab, program.max_len))


@pytest.mark.slow
@pytest.mark.parametrize("text", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_split_programs_agree_at_max_len_32(text: str):
    program = parse_program(text, max_len=32)
    assert_agree(compile_program(program), program, random_inputs(program.vocab, 32, 200, rng=32))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["most_freq", "sort_freq"])
def test_a_rank_by_two_counts_is_matched_to_the_index_in_the_third_layer(name: str):
    """more frequent + tied and earlier, matched to the index: 3 layers (the RASP analysis'
    count for most_freq), 4 with either pass off (the rank's one-hot waits for both counts)."""
    program = load_program(PROGRAMS_DIR / f"{name}.rasp", max_len=20)
    assert len(compile_program(program).meta["layers"]) == 3
    for off in ("split-keys", "compose-views"):
        assert len(compile_program(program, disabled=[off]).meta["layers"]) == 4
    assert len(compile_program(program, max_len=100).meta["layers"]) == 4  # 100 heads of 101: not tried


@pytest.mark.slow
def test_no_split_whose_heads_would_score_the_index_by_one_hot_tables():
    """At max_len 64 float32 cannot carry the rank's position features (position_selects.py),
    so each of the 64 split heads would score the index from its one-hot: 5M parameters, where
    the unsplit model, one layer deeper, has under 1M. The split is not made there."""
    program = load_program(PROGRAMS_DIR / "most_freq.rasp", max_len=64)
    model = compile_program(program)
    whole = compile_program(program, disabled=["split-keys"])
    assert model.params.keys() == whole.params.keys()
    assert all((model.params[k] == whole.params[k]).all() for k in model.params)
    assert sum(a.size for a in model.params.values()) < 1_000_000
    assert_agree(model, program, random_inputs(program.vocab, 64, 30, rng=64))


def test_a_table_of_the_token_and_the_index_is_split_too():
    """Its one-hot needs a table MLP; the token's and the index's are embedded."""
    program = parse_program("""
vocab {a, b}
max_len 5
output aggregate(select(sequence_map(lambda t, i: i if t == "a" else 0, tokens, indices), indices, ==), tokens)
""")
    assert len(heads_of(program)) == 2 and len(compile_program(program).meta["layers"]) == 1
    assert_agree(compile_program(program), program, every_input(program.vocab, program.max_len))


def test_one_head_per_value_of_the_smaller_input_that_can_select():
    """w takes 0..5, the tokens 2 values: split by token, the sum of two heads, less the
    default's one-hot once."""
    program = parse_program(PROGRAMS["two heads may select at once (a common value), none has a default"])
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    answer = graph.ops[-1]
    assert isinstance(answer, Linear) and answer.out is graph.output
    assert len(answer.inputs) == 2 and all(isinstance(graph_writer(graph, v), Attend) for v in answer.inputs)
    assert answer.bias == {"output:nothing": -1.0}
    assert whole_answer(graph, lay_out(graph), infer_value_sets(program), frozenset(OPTIMIZATIONS))[0] is graph


def graph_writer(graph, var):
    return next(op for op in graph.ops if op.out is var)


def test_no_split_without_a_sub_layer_to_save():
    """The sum of two means is written with them (linear folding), so its one-hot is as early as
    theirs would be; an aggregate that is not the answer is read by other ops, which need an
    exact one-hot. Both keep one head."""
    for text in (
        """
vocab {a, b}
max_len 5
x = numerical(aggregate(select(tokens, tokens, ==), numerical(map(lambda i: i, indices))))
y = numerical(aggregate(select(tokens, tokens, !=), numerical(map(lambda i: i, indices)), default=0))
output aggregate(select(numerical(x + y), indices, lambda k, q: k >= q), tokens, default="a")
""",
        """
vocab {a, b}
max_len 5
w = selector_width(select(tokens, tokens, ==))
v = selector_width(select(tokens, tokens, !=))
inner = aggregate(select(sequence_map(lambda x, y: x - y, w, v), indices, ==), tokens, default="a")
output map(lambda t: t == "a", inner)
""",
    ):
        program = parse_program(text)
        assert len(heads_of(program)) == len(heads_of(program, disabled=["split-keys"]))


def test_no_split_of_a_number_table_whose_input_may_be_none():
    """A numerical sequence_map of none is 0 (docs/language.md), a key the select takes here; the heads' selects
    on the input itself never select a none, so they would miss it (a fuzz found this)."""
    program = parse_program("""
vocab {0, 1, 2, 3}
max_len 3
never = aggregate(select(indices, length, >=), tokens)
x = numerical(map(lambda t: t, tokens))
key = numerical(sequence_map(lambda a, b: a * b, never, x))
output aggregate(select(key, indices, lambda k, q: k < q or k == 0) and select(x, x, >=), indices, default=1)
""")
    assert len(heads_of(program)) == len(heads_of(program, disabled=["split-keys"]))
    assert_agree(compile_program(program), program, every_input(program.vocab, program.max_len))


def test_the_heads_match_lines_to_the_index_from_three_shared_features():
    """Part j matches tied + j to the index: a line in tied's values. All parts read tied's
    value and square (it is never none, so the constant is the third), not a target and a
    match each."""
    program = load_program(PROGRAMS_DIR / "sort_freq.rasp", max_len=20)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    parts = [op for op in graph.ops if isinstance(op, Attend) and op.out.label.startswith("output.part")]
    assert len(parts) == 20
    read = {var.label for op in parts for var in op.score.reads()}
    assert not any(label.endswith((".target", ".match")) for label in read)
    assert {label for label in read if label.endswith((".value", ".value^2"))} >= {
        "as_frequent_before.cat.value", "as_frequent_before.cat.value^2"}


@pytest.mark.slow
def test_a_split_too_large_for_the_budget_is_built_whole():
    """With 300 token values every head's output is a 300-wide one-hot until pruning, and the
    24 heads exceed the parameter budget: the answer is built as one head, a layer deeper."""
    vocab = ", ".join(str(t) for t in range(300))
    program = parse_program(f"""
vocab {{{vocab}}}
max_len 24
w = selector_width(select(tokens, tokens, ==))
output aggregate(select(w + indices, indices, ==), tokens)
""")
    value_sets, everything = infer_value_sets(program), frozenset(OPTIMIZATIONS)
    split = build_graph(program, value_sets, everything)
    graph, _, enabled = whole_answer(split, lay_out(split), value_sets, everything)
    assert split.split and not graph.split and enabled == everything - {"split-keys"}
    model = compile_program(program)
    assert len(model.meta["layers"]) == len(compile_program(program, disabled=["split-keys"]).meta["layers"])
    assert_agree(model, program, random_inputs(program.vocab, program.max_len, 50, rng=24))
