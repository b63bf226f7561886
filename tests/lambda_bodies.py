"""Random lambda bodies for the arrays-path tests (tests/test_lambda_arrays.py, tests/test_map_arrays.py),
and a lambda's text made into the evaluator's Fn."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from rasp_compile import ir
from rasp_compile.frontend import syntax_tree, lambda_eval
from rasp_compile.frontend.parse import parse

OPERATORS = ["+", "-", "*", "/", "//", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or"]


def make(text: str) -> ir.Fn:
    """`lambda ...: ...` text as the evaluator's Fn (no names but its parameters)."""
    call = parse(f"f = g({text})").statements[0].value
    assert isinstance(call.args[0], syntax_tree.Lambda)
    return lambda_eval.make_fn(call.args[0], lambda name: pytest.fail(f"unknown name {name.name}"))


@st.composite
def bodies(draw, names: tuple[str, str], literals, ternaries: int = 1, depth: int = 3) -> str:
    """A lambda body over `names`: `literals`, the operators, not, -, a ternary (drawn `ternaries`
    times as often as a unary), abs/min/max."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.one_of(st.sampled_from(list(names)), literals))
    inner = bodies(names, literals, ternaries, depth - 1)
    kind = draw(st.sampled_from(["binary", "binary", "unary", *["ternary"] * ternaries, "call"]))
    if kind == "binary":
        return f"({draw(inner)} {draw(st.sampled_from(OPERATORS))} {draw(inner)})"
    if kind == "unary":
        return f"({draw(st.sampled_from(['-', 'not ']))}{draw(inner)})"
    if kind == "ternary":
        return f"({draw(inner)} if {draw(inner)} else {draw(inner)})"
    function = draw(st.sampled_from(["abs", "min", "max"]))
    count = 1 if function == "abs" else draw(st.integers(2, 3))
    return f"{function}({', '.join(draw(inner) for _ in range(count))})"
