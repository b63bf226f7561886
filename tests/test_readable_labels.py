"""Residual labels and head names in the program's words (docs/inspect.md, "The names you see"):
derived features named after what they hold, the output's variable by the output's name, a def's
locals by theirs; `t.sop` of a folded s-op answered from what the residual holds, or refused
with the flag that keeps it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import rasp_compile as rc
from rasp_compile.compiler.naming import readable_labels, sop_label
from rasp_compile.tools.decode import residual_variables

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
COMPILER_WORDS = (".cat", ".value", ".bos_share", ".part", "aggregate", "sequencemap", "selectorwidth", "<")


def compiled(name: str, **options) -> rc.Model:
    return rc.compile(rc.load_program(PROGRAMS / f"{name}.rasp"), **options)


def test_most_freq_is_labelled_in_the_programs_words():
    model = compiled("most_freq")
    labels = model.meta["residual"]
    for label in ("count (BOS share)", "repeated == 1.0", "more_frequent == 3", "tied_earlier", "tied_earlier^2",
                  "indices (number)", "indices^2", "output:a", "output:-"):
        assert label in labels
    assert not [label for label in labels if any(word in label for word in COMPILER_WORDS)]
    heads = [head for layer in model.meta["heads"] for head in layer]
    assert heads[2]["k_reads"] == ["count", "repeated (one-hot)"]
    assert [head["writes"] for head in heads[4:6]] == ["output (head 1)", "output (head 2)"]
    assert model.meta["sops"]["more_frequent (one-hot)"]["labels"][:2] == ["more_frequent == 0", "more_frequent == 1"]  # 0: pruned


def test_the_output_and_head_features_carry_the_outputs_name():
    sort = compiled("sort").meta["residual"]
    assert "output:1" in sort and "output key 0" in sort
    dyck = compiled("dyck1").meta["residual"]
    assert "output:T" in dyck and "map(tokens)" in dyck  # the unnamed map the balance averages, written out


DEFS = """vocab {a, b, c}
max_len 5
def count_of(x) {
    same = select(x, x, ==)
    n = selector_width(same)
    return map(lambda v: v * 2, n)
}
c = count_of(tokens)
e = count_of(map(lambda t: t == "a", tokens))
output sequence_map(lambda u, v: u + v, c, e)
"""


def test_names_inside_a_def_are_kept_one_per_call():
    program = rc.parse_program(DEFS)
    model = rc.compile(program)
    heads = [head for layer in model.meta["heads"] for head in layer]
    assert [head["sop"] for head in heads] == ["count_of.n", "count_of.n_2"]
    assert [head["select"] for head in heads] == ["select(tokens, tokens, ==)", "select(map(tokens), map(tokens), ==)"]
    assert "count_of.n (BOS share)" in model.meta["residual"]
    values = rc.evaluate_all(program, list("abca"))
    assert values["count_of.n"] == [2, 1, 1, 2] and values["count_of.same"][0].tolist() == [True, False, False, True]


def test_a_top_level_name_wins_over_a_defs_local_name():
    program = rc.parse_program("vocab {a}\nmax_len 3\ndef f(x) { y = map(lambda v: v, x); return y }\n"
                               "z = f(tokens)\noutput z\n")
    assert program.output.label == "z"


def test_a_derived_name_that_would_name_two_variables_keeps_the_compilers_label():
    program = rc.parse_program("vocab {a}\nmax_len 3\noutput tokens\n")
    meta = {"residual": ["bos", "x.value", "x (number)", "x"], "heads": [], "margins": [],
            "sops": {"x.value": {"encoding": "numerical"}, "x (number)": {"encoding": "numerical"},
                     "x": {"encoding": "numerical"}}}
    assert readable_labels(meta, program)["residual"] == ["bos", "x.value", "x (number)", "x"]
    assert sop_label(program.output, program) == "tokens"


def test_old_labels_still_read_back():
    """A file from before these names (`x.cat:v`, no meta.sops) groups its dimensions by NAME:."""
    meta = {"residual": ["bos", "rank.cat:1", "rank.cat:2", "indices.value"]}
    variables = residual_variables(meta, 4)
    assert variables["rank.cat"].values == ("1", "2") and variables["indices.value"].encoding == "numerical"


@pytest.mark.parametrize("name, sop", [("dyck2", "balanced"), ("shuffle_dyck", "closed")])
def test_a_folded_map_is_read_from_what_the_residual_holds(name, sop):
    program = rc.load_program(PROGRAMS / f"{name}.rasp")
    model = rc.compile(program)
    rng = random.Random(0)
    for _ in range(5):
        tokens = [rng.choice(program.vocab) for _ in range(program.max_len)]
        trace = rc.trace(model, tokens)
        assert sop not in trace.variables  # folded: no dimensions of its own
        assert trace.sop(sop) == rc.evaluate_all(program, tokens)[sop]


def test_an_sop_that_cannot_be_read_names_the_flag_that_keeps_it():
    program = rc.load_program(PROGRAMS / "most_freq.rasp")
    trace = rc.trace(rc.compile(program), list("bacac"))
    with pytest.raises(LookupError, match="--no-opt all"):
        trace.sop("rank")
    plain = rc.trace(rc.compile(program, disabled=rc.OPTIMIZATIONS), list("bacac"))
    values = rc.evaluate_all(program, list("bacac"))
    for name in ("rank", "more_frequent", "tied_earlier", "repeated", "count", "one"):
        assert name in plain.variables and plain.sop(name) == values[name]
