"""What both interpreters (the per-input reference and the batched one) must do alike: read an
input against the vocab, take an exact mean, and report an ambiguous categorical aggregate.

The means are computed here, in code of the interpreter's own: the value-set inference computes
the means an s-op may take by its own route, and tests check that every mean found here is one
of those (so the oracle shares nothing with what it checks but the lambda evaluator).
"""

from __future__ import annotations

from fractions import Fraction
from collections.abc import Sequence

from ... import ir
from ...errors import InputError, RaspRuntimeError
from ...frontend.lambda_calls import describe
from ...safe_text import shortened


def vocab_spellings(program: ir.Program) -> dict:
    """Token -> the vocab's spelling of it (matched by ==, so 1.0 reads as a vocab's 1; the
    first spelling listed wins)."""
    return {value: value for value in reversed(program.vocab)}


def checked_input(program: ir.Program, spellings: dict, tokens: Sequence) -> list:
    """The tokens as the vocab spells them, or an InputError (too long, or a token outside)."""
    if len(tokens) > program.max_len:
        raise InputError(f"the input has {len(tokens)} tokens; this program accepts at most {program.max_len}")
    xs = []
    for token in tokens:
        try:
            xs.append(spellings[token])
        except (KeyError, TypeError):
            shown = ", ".join(repr(v) for v in program.vocab)
            raise InputError(f"token {token!r} is not in the vocab {{{shown}}}") from None
    return xs


def exact_mean(values: Sequence[ir.Value]) -> float:
    """The mean of `values` (numbers), computed exactly, as one float: the float nearest the
    exact rational (so a mean reached any way, in any order, is one value)."""
    total = sum(Fraction(value) for value in values)
    return exact_ratio(total.numerator, total.denominator * len(values))


def exact_ratio(numerator: int, denominator: int) -> float:
    """numerator / denominator (whole numbers), the float nearest the exact quotient: Python's
    int / int rounds once, whatever the size of the two."""
    return numerator / denominator


def conflict(node: ir.Aggregate, selected: list, xs: list, q: int) -> RaspRuntimeError:
    """The error of a categorical aggregate that selects different values (`selected`, in key
    order) at query position `q` of input `xs`, naming both."""
    distinct: list = []
    for value in selected:
        if value not in distinct:
            distinct.append(value)
    shown = ", ".join("none" if v is None else repr(v) for v in distinct)
    return RaspRuntimeError(
        f"{describe(node)} selects different values ({shown}) "
        f"at query position {q} on input {shortened(repr(xs))}; a categorical aggregate must select one value",
        node.loc,
    )
