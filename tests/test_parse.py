"""The front end on well-formed programs: every expression form lowers to the IR it means."""

from pathlib import Path

import pytest

from rasp_compile.frontend import infer
from rasp_compile import ir
from rasp_compile.errors import InputError
from rasp_compile.frontend import load_program, parse_program

HEADER = "vocab {a, b}\nmax_len 5\n"

AAB = """\
# After "aa" comes "b"; after anything else comes "a".
vocab {a, b}
max_len 5
causal

prev = aggregate(select(indices, indices, lambda k, q: k == q - 1), tokens, default="a")
next = sequence_map(lambda p, t: "b" if p == "a" and t == "a" else "a", prev, tokens)
output next
"""


def output_of(body: str, header: str = HEADER) -> ir.SOp:
    return parse_program(header + body).output


def value_sets(program: ir.Program) -> list[list[str]]:
    """The value set of every s-op, in the order of the graph: comparable across two programs."""
    sets = infer.infer_value_sets(program)
    return [sorted(map(repr, sets[n])) for n in program.nodes() if isinstance(n, ir.SOp)]


def test_spec_example_structure():
    program = parse_program(AAB, "aab.rasp")
    assert (program.vocab, program.max_len, program.causal) == (("a", "b"), 5, True)
    assert (program.source, program.filename, program.output_name) == (AAB, "aab.rasp", "next")
    nxt = program.output
    assert isinstance(nxt, ir.SequenceMap) and nxt.label == "next"
    assert nxt.fn.text == 'lambda p, t: "b" if p == "a" and t == "a" else "a"'
    assert nxt.fn.loc.line == 7 and nxt.fn.loc.col == 21
    prev, tok = nxt.first, nxt.second
    assert tok is ir.tokens and isinstance(prev, ir.Aggregate) and prev.label == "prev"
    assert prev.default == "a" and prev.sop is ir.tokens and prev.loc.line == 6
    select = prev.selector
    assert select.keys is ir.indices and select.queries is ir.indices
    assert select.predicate.text == "lambda k, q: k == q - 1"
    assert select.holds(1, 2) and not select.holds(2, 2)
    assert [nxt.fn(p, t) for p, t in [("a", "a"), ("a", "b"), ("b", "a")]] == ["b", "a", "a"]


def test_spec_example_matches_embedded_api():
    prev = ir.Aggregate(ir.Select(ir.indices, ir.indices, lambda k, q: k == q - 1), ir.tokens, default="a")
    nxt = ir.SequenceMap(lambda p, t: "b" if p == "a" and t == "a" else "a", prev, ir.tokens)
    embedded = ir.Program(output=nxt, vocab=("a", "b"), max_len=5, causal=True)
    assert value_sets(parse_program(AAB)) == value_sets(embedded)


def test_arithmetic_is_left_associative():
    out = output_of("output length - indices - 1")
    assert isinstance(out, ir.Map) and out.fn.text == "x - 1" and out.fn(5) == 4
    inner = out.inner
    assert isinstance(inner, ir.SequenceMap) and inner.first is ir.length and inner.second is ir.indices
    assert inner.fn(5, 2) == 3


def test_embedded_and_text_value_sets_agree_on_operator_sugar():
    text = parse_program(HEADER + "output numerical(length - indices - 1) * 2 + 1")
    opp = ir.SequenceMap(lambda n, i: n - i - 1, ir.length, ir.indices)
    out = ir.Map(lambda x: x * 2 + 1, ir.Map(lambda x: x, ir.numerical(opp)))
    # Same values, though the text builds one map per operator.
    assert value_sets(text)[-1] == value_sets(ir.Program(output=out, vocab=("a", "b"), max_len=5))[-1]


def test_multiplication_binds_tighter_than_addition():
    out = output_of("output 1 + indices * 2")
    assert out.fn.text == "1 + x" and out.inner.fn.text == "x * 2" and out.inner.inner is ir.indices
    out = output_of("output (1 + indices) * 2")
    assert out.fn.text == "x * 2" and out.inner.fn.text == "1 + x"


def test_unary_minus_binds_tighter_than_multiplication():
    out = output_of("output -indices * 3")
    assert out.fn.text == "x * 3" and out.inner.fn.text == "-x" and out.inner.fn(2) == -2


def test_comparison_and_boolean_precedence():
    out = output_of('output tokens == "a" and indices > 0')
    assert isinstance(out, ir.SequenceMap) and out.fn.text == "x and y"
    assert out.first.fn.text == 'x == "a"' and out.first.inner is ir.tokens
    assert out.second.fn.text == "x > 0" and out.second.inner is ir.indices
    out = output_of('output indices % 2 == 0 or tokens == "b" and indices < 3')
    assert out.fn.text == "x or y" and out.second.fn.text == "x and y"
    assert out.first.fn.text == "x == 0" and out.first.inner.fn.text == "x % 2"


def test_not_is_looser_than_comparison():
    out = output_of('output not tokens == "a"')
    assert out.fn.text == "not x" and out.inner.fn.text == 'x == "a"'
    assert out.fn(True) is False


def test_constants_fold_and_reach_lambdas():
    out = output_of("n = 1 + 2 * 3\nk = -n\noutput map(lambda x: x + n + k, indices)")
    assert out.fn(10) == 10 and out.fn.text == "lambda x: x + n + k"


def test_selector_combinations():
    out = output_of(
        "a = select(indices, indices, <)\nb = select(tokens, tokens, ==)\nc = select(indices, indices, true)\n"
        "output selector_width(not (a and b) or c)"
    )
    sel = out.selector
    assert isinstance(sel, ir.SelectOr) and sel.second.label == "c" and sel.second.predicate == "true"
    assert isinstance(sel.first, ir.SelectNot) and isinstance(sel.first.inner, ir.SelectAnd)
    assert (sel.first.inner.first.label, sel.first.inner.second.label) == ("a", "b")


@pytest.mark.parametrize("pred", ["==", "!=", "<", "<=", ">", ">=", "true", "false"])
def test_select_comparisons(pred):
    out = output_of(f"output selector_width(select(indices, length, {pred}))")
    assert out.selector.predicate == pred and out.selector.keys is ir.indices and out.selector.queries is ir.length


def test_aggregate_encodings_and_defaults():
    out = output_of("s = select(indices, indices, ==)\noutput numerical(aggregate(s, numerical(indices), default=-1))")
    assert isinstance(out, ir.Aggregate) and out.encoding == ir.NUMERICAL and out.default == -1
    assert out.sop.encoding == ir.NUMERICAL and isinstance(out.sop, ir.Indices) and out.sop is not ir.indices
    assert ir.indices.encoding == ir.CATEGORICAL and ir.indices.label == "indices"
    back = output_of("n = numerical(indices)\noutput categorical(n)")
    assert back.encoding == ir.CATEGORICAL and back.label is None


def test_bound_names_become_labels_but_builtins_keep_theirs():
    program = parse_program(HEADER + "t = tokens\nu = t\nv = map(lambda x: x, u)\nw = v\noutput w")
    assert program.output.label == "v" and program.output.inner is ir.tokens
    assert ir.tokens.label == "tokens" and program.output_name == "w"
    assert parse_program(HEADER + "output tokens").output_name == "tokens"
    assert parse_program(HEADER + "output map(lambda x: x, tokens)").output_name == "output"


def test_def_expands_to_fresh_nodes_per_call():
    program = parse_program(
        HEADER + "x = shift(tokens, 1)\ny = shift(x, 2)\noutput y\n"
        "def shift(s, k) {\n  sel = select(indices, indices, lambda a, b: a == b - k)\n  return aggregate(sel, s)\n}\n"
    )
    y = program.output
    x = y.sop
    assert x.label == "x" and y.label == "y" and x.sop is ir.tokens
    assert x.selector is not y.selector  # a local keeps its name, made unique per call (def.local)
    assert (x.selector.label, y.selector.label) == ("shift.sel", "shift.sel_2")
    assert x.selector.holds(0, 1) and y.selector.holds(0, 2) and not y.selector.holds(0, 1)


def test_def_over_selectors_and_scalars():
    out = output_of(
        "def both(s1, s2) { return s1 and s2 }\n"
        "def width(s, n) { w = selector_width(s); return w + n }\n"
        "output width(both(select(indices, indices, <=), select(tokens, tokens, ==)), 10)"
    )
    assert out.fn.text == "x + 10" and isinstance(out.inner.selector, ir.SelectAnd)


def test_statement_separators_comments_and_line_continuation():
    text = (
        "vocab {\n  a,   # first\n  b\n}\r\n; ; max_len 3 ; causal\n\n"
        "x = sequence_map(\n    lambda p,\n    t: p + t,   # a pair\n  tokens, tokens)\n"
        "output x"
    )
    program = parse_program(text)
    assert program.vocab == ("a", "b") and program.causal and program.max_len == 3
    assert program.output.fn.text == "lambda p, t: p + t" and program.output.fn.loc.line == 8


def test_vocab_items():
    program = parse_program('vocab {1, -2, 0.5, "(", \'x"y\', name}\nmax_len 2\noutput tokens')
    assert program.vocab == (1, -2, 0.5, "(", 'x"y', "name")


def test_output_may_come_first_and_declarations_any_order():
    program = parse_program("output x\nx = indices + 1\nmax_len 4\nvocab {a}")
    assert program.output.label == "x" and program.max_len == 4


def test_load_program(tmp_path: Path):
    path = tmp_path / "aab.rasp"
    path.write_text(AAB, encoding="utf-8")
    program = load_program(path)
    assert program.filename == str(path) and program.source == AAB
    with pytest.raises(InputError, match="no such file"):
        load_program(tmp_path / "missing.rasp")
    (tmp_path / "latin1.rasp").write_bytes(b"vocab {\xe9}\n")
    with pytest.raises(InputError, match="not UTF-8"):
        load_program(tmp_path / "latin1.rasp")
    with pytest.raises(InputError, match="a directory, not a program file"):
        load_program(tmp_path)


def test_tuples_indexing_and_in_parse_as_python_reads_them():
    from rasp_compile.frontend import syntax_tree
    from rasp_compile.frontend.parse import parse

    def expr(text):
        return parse(f"x = {text}").statements[0].value

    assert expr("()") == syntax_tree.Tuple([], expr("()").loc) and len(expr("(1,)").items) == 1
    assert isinstance(expr("(1)"), syntax_tree.Literal) and len(expr("(1, 2,)").items) == 2
    chained = expr('("ab", "c")[0][1]')
    assert isinstance(chained, syntax_tree.Index) and isinstance(chained.value, syntax_tree.Index)
    negated = expr('-"ab"[0]')  # indexing binds tighter than unary minus
    assert negated.op == "-" and isinstance(negated.operand, syntax_tree.Index)
    assert expr("a not in b").op == "not in" and expr("a in b").op == "in"
    outer = expr("not a in b")  # `not` is looser than `in`, as in Python
    assert outer.op == "not" and outer.operand.op == "in"
    assert expr('"ab"[\n0\n]').index.value == 0  # newlines inside [ ] are dropped


def test_constant_tuples_and_indexing_fold():
    program = parse_program(HEADER + 'pairs = ("ab", "ba")\nfirst = pairs[0][1]\noutput map(lambda t: t + first in pairs, tokens)')
    sets = infer.infer_value_sets(program)
    assert sets[program.output] == {True, False}


def test_a_constant_becomes_an_s_op_only_where_one_is_needed():
    program = parse_program(HEADER + "output map(lambda x: x + 1, 3)")
    folded = program.output  # map(f, 3) is computed now: the constant 4, an s-op only as the output
    assert isinstance(folded, ir.Map) and folded.inner is ir.tokens
    assert infer.infer_value_sets(program)[folded] == {4}
    select = output_of('output selector_width(select(tokens, "a", ==))').selector
    assert isinstance(select.queries, ir.Map) and select.predicate == "=="
    mean = output_of('output numerical(aggregate(select(tokens, "a", ==), 1))')
    assert mean.encoding == ir.NUMERICAL and mean.sop.encoding == ir.NUMERICAL
    assert output_of('output aggregate(select(tokens, "a", ==), 1)').sop.encoding == ir.CATEGORICAL
