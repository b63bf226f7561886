"""Twins: values equal to Python but not the same value (2 and 2.0; 1, 1.0 and True; 0, 0.0, -0.0
and False; tuples holding such), and where a program tells them apart (docs/language.md, "Equal
values of different types").

A value set is a Python set: it holds one of a group of twins, and so does the model, whose one-hot
(or number) cannot tell them apart. That is exact as long as nothing downstream tells them apart
either: comparisons and means treat twins alike, and a lambda may give equal results for them
(`v + 1` gives 3 and 3.0: twins again). The inference records, for every s-op, its groups of twins
(`Groups`: a value -> every distinct value equal to it, only where there are two or more), calls
every lambda on every member too, and refuses the program where a lambda's results on twins differ
(`str` gives "2" and "2.0") or where a categorical output takes twins (the model would print one
where the program gives the other).
"""

from __future__ import annotations

from itertools import product
from typing import Any
from collections.abc import Iterable

from .. import ir
from ..element_fn import same_value
from ..errors import RaspValueError
from .lambda_calls import call_checked, describe, describe_fn

Groups = dict  # dict[ir.Value, tuple[ir.Value, ...]]: equal values, distinct; found by any of them


def note_twin(groups: Groups, kept, value) -> None:
    """Record `value` as a twin of `kept` (the member of the value set equal to it) unless it is
    the same value."""
    if same_value(kept, value):
        return
    group = groups.get(kept, (kept,))
    if not any(same_value(member, value) for member in group):
        groups[kept] = (*group, value)


def members(groups: Groups, value) -> tuple:
    """Every distinct value of the group `value` belongs to (itself alone when it has no twin)."""
    return groups.get(value, (value,)) if groups else (value,)


def calls_with_twins(fn: ir.Fn, node: ir.SOp, argument_tuples, argument_groups: list[Groups], diagonal=False):
    """fn(*args) for each tuple of `argument_tuples` (representatives, each as the value set holds
    it), and, where an argument has twins, fn on every combination of their members too (on
    `diagonal`, one s-op twice: each member in every place at once); a RaspValueError where two
    of these results differ (the lambda tells twins apart)."""
    if not any(argument_groups):
        yield from (call_checked(fn, args, node) for args in argument_tuples)
        return
    for args in argument_tuples:
        result = call_checked(fn, args, node)
        yield result
        combinations: Iterable[tuple[Any, ...]]
        if diagonal:
            combinations = ((member,) * len(args) for member in members(argument_groups[0], args[0]))
        else:
            combinations = product(*(members(groups, arg) for groups, arg in zip(argument_groups, args)))
        for other in combinations:
            if all(a is b for a, b in zip(other, args)):
                continue
            other_result = call_checked(fn, other, node)
            if other_result != result:
                holders = [describe(child) for child, a, b in zip(node.children(), args, other) if a is not b]
                raise told_apart(describe_fn(fn), args, other, (result, other_result), holders, fn.loc or node.loc)
            yield other_result


def check_predicate(select: ir.Select, key_values, query_values, key_groups: Groups, query_groups: Groups) -> None:
    """A select's lambda must hold or not alike on twins (a comparison always does)."""
    if isinstance(select.predicate, str) or not (key_groups or query_groups):
        return
    for key in key_values:
        for query in query_values:
            if key not in key_groups and query not in query_groups:
                continue
            holds = bool(call_checked(select.predicate, (key, query), select))
            for other in product(members(key_groups, key), members(query_groups, query)):
                other_holds = bool(call_checked(select.predicate, other, select))
                if other_holds != holds:
                    holders = [describe(s) for s, a, b in zip((select.keys, select.queries), (key, query), other)
                               if a is not b]
                    raise told_apart(f"select predicate {describe_fn(select.predicate)}", (key, query), other,
                                     (holds, other_holds), holders, select.predicate.loc or select.loc)


def check_output(program: ir.Program, groups: Groups) -> None:
    """A categorical output must not take twins: the model prints one of them for both."""
    output = program.output
    if output.encoding == ir.NUMERICAL or not groups:
        return
    twins = min(groups.values(), key=lambda group: repr(group))
    shown = " and ".join(map(spelled, sorted(twins, key=lambda v: (not isinstance(v, bool), isinstance(v, float)))))
    raise RaspValueError(
        f"the output{' ' + describe(output) if output.label else ''} takes both {shown}, which are equal to Python but print "
        f"differently; the model holds them as one value, so it could print one where the program "
        f"gives the other; {ONE_TYPE}",
        output.loc or program.output_loc,
    )


ONE_TYPE = ("make them one type where they arise (int(...), float(...), or booleans throughout; "
            "x + 0.0 turns -0.0 into 0.0)")


def told_apart(what: str, args: tuple, other: tuple, results: tuple, holders: list, loc) -> RaspValueError:
    """The error of a function whose results on twin arguments differ; `holders`: the s-ops
    that take the twins, described."""
    first, second = (", ".join(map(spelled, a)) for a in (args, other))
    return RaspValueError(
        f"{what} gives {spelled(results[0])} on ({first}) but {spelled(results[1])} on ({second}); "
        f"{' and '.join(dict.fromkeys(holders))} take{'s' if len(set(holders)) == 1 else ''} both, and they "
        f"are equal to Python, so the model holds them as one value; {ONE_TYPE}",
        loc,
    )


def spelled(value) -> str:
    """A value as the language writes it: true / false for booleans, repr otherwise."""
    return str(value).lower() if isinstance(value, bool) else repr(value)
