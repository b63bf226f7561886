"""Element-wise s-ops of lambdas over any mix of s-ops and constants, built from the IR's two
element-wise nodes (`ir.Map`, `ir.SequenceMap`); and the constant s-op.

`map(f, s)` and `sequence_map(f, a, b, ...)` lower here (docs/language.md, "sequence_map"):
- constants are folded into the function, never made s-ops: `sequence_map(f, tokens, 0)` is
  `map(lambda x: f(x, 0), tokens)`;
- an s-op given twice is read once: `sequence_map(f, x, y, x)` is a sequence_map of x and y;
- no s-op left: the function is computed now and the result is a constant;
- one s-op: an `ir.Map`; two: an `ir.SequenceMap`;
- three or more (s1 .. sn): the first n - 1 are packed into one tuple-valued s-op by a chain of
  sequence_maps ((a, b), then (a, b, c), ...; each pack led by its items' spelling, see
  `_packed`), and one last sequence_map applies the function to that pack's items and sn.
  Each pack holds every combination of its parts' values (a one-hot of their product in the
  compiled model), so the s-op with the most values is best given last.

A function called through such an adapter reports a failure with the values the user's lambda
received (`lambda_eval.FailedOn`), so messages name the user's lambda and arguments, never a pack.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import ir
from ..errors import Loc
from .lambda_calls import call_checked
from .lambda_eval import FailedOn, literal


def constant_sop(value: ir.Value, encoding: str, loc: Loc | None) -> ir.Map:
    """The s-op holding `value` at every position: a map of `tokens` (never none) to it. The
    compiler folds such a map into the embedding: it costs one residual dimension, no layer."""
    return ir.Map(ir.Fn(lambda _token: value, literal(value), loc), ir.tokens, encoding=encoding, loc=loc)


def elementwise(fn: ir.Fn, arguments: list, loc: Loc) -> ir.SOp | ir.Value:
    """`fn` applied at each position to `arguments` (s-ops and constants, in the lambda's
    parameter order), as the fewest IR nodes (see the module docstring)."""
    sops = list({id(a): a for a in arguments if isinstance(a, ir.SOp)}.values())
    if not sops:
        return call_checked(fn, tuple(arguments), None)
    if len(sops) == len(arguments) == 1:
        return ir.Map(fn, sops[0], loc=loc)
    if len(sops) == len(arguments) == 2:
        return ir.SequenceMap(fn, sops[0], sops[1], loc=loc)
    slot = {id(sop): position for position, sop in enumerate(sops)}

    def user_arguments(values: tuple) -> tuple:
        """The lambda's arguments, from the distinct s-ops' values (in the order of `sops`)."""
        return tuple(values[slot[id(a)]] if isinstance(a, ir.SOp) else a for a in arguments)

    if len(sops) == 1:
        return ir.Map(_adapted(fn, user_arguments), sops[0], loc=loc)
    if len(sops) == 2:
        return ir.SequenceMap(_adapted(fn, user_arguments), sops[0], sops[1], loc=loc)
    pack: ir.SOp = ir.SequenceMap(ir.Fn(_pair, "(x, y)", loc), sops[0], sops[1], loc=loc)
    for sop in sops[2:-1]:
        pack = ir.SequenceMap(ir.Fn(_append, "x + (y,)", loc), pack, sop, loc=loc)
    unpacked = _adapted(fn, lambda values: user_arguments((*values[0][1:], values[1])))
    return ir.SequenceMap(unpacked, pack, sops[-1], loc=loc)


def _packed(items: tuple) -> tuple:
    """A pack of values: its items spelled out by `repr`, then the items themselves. The spelling
    keeps two packs apart in any text made of their parts: ("a,b", "c") and ("a", "b,c") would
    both read `(a,b,c)` in a residual label, and "1" and 1 both `1`."""
    return (repr(items), *items)


def _pair(first: ir.Value, second: ir.Value) -> tuple:
    return _packed((first, second))


def _append(pack: tuple, value: ir.Value) -> tuple:
    return _packed((*pack[1:], value))


def _adapted(fn: ir.Fn, user_arguments: Callable[[tuple], tuple]) -> ir.Fn:
    """`fn` called on `user_arguments(its own arguments)`, named and placed as `fn`."""

    def call(*values: ir.Value) -> ir.Value:
        arguments = user_arguments(values)
        try:
            return fn(*arguments)
        except Exception as failure:  # the user's lambda failed: report its own arguments
            raise FailedOn(arguments, failure) from None

    return ir.Fn(call, fn.text, fn.loc)
