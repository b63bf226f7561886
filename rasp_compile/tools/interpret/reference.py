"""The reference interpreter: a program evaluated directly on one concrete input at a time
(docs/language.md, "Semantics"), in plain Python, as readably as it goes.

This is the oracle the compiled model is checked against, the one the batched interpreter
(`batched.py`) is checked against, and the "direct rule" whose cost `rasp-run --flops` prints
beside the model's FLOPs (counted by an `OpCounter`).

    from rasp_compile.tools.interpret import evaluate
    evaluate(program, ["a", "a", "b"])     # -> one value per position, None for none

A selector is held as one row of booleans per query position. In a causal program row q covers
keys 0..q only (every selector is restricted to k <= q wherever it is used, and "and", "or" and
"not" commute with that restriction), so keys after the query are never even tested.

The program is assumed checked (`infer.infer_value_sets`): a lambda that fails is still reported at
its line with its values, but a numerical mean of non-numbers is not diagnosed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable, Sequence

from ... import ir
from ...errors import RaspError, RaspRuntimeError, RaspValueError, attributed
from ...frontend.lambda_calls import call_checked, describe, reason
from ...safe_text import shortened
from .rules import checked_input, conflict, exact_mean, vocab_spellings

Row = list  # list[bool]: which keys one query selects
Memo = dict  # dict[ir.Fn | ir.Select | ir.Aggregate, dict[tuple, Value]]: results per argument tuple
# (maps and selects key their arguments with their types, as `ir.Fn` does: 1, 1.0 and True are
# equal, not the same)


@dataclass
class OpCounter:
    """The primitive operations of one or more evaluations (the cost of the "direct rule").

    Conventions (n = input length; a "cell" is one (query, key) pair in the selector's rows, i.e.
    n*n, or n(n+1)/2 when causal):
    - `lookups`: reading the input at a position for `tokens`, `indices` or `length` (n each);
      one table lookup per position of a map / sequence_map whose arguments are not none; one read
      of the aggregated s-op per selected key.
    - `predicate_tests`: one per cell of a `select` where both key and query are not none.
    - `additions`: a mean of m values costs m - 1; selector_width costs one per selected key (a
      counter incremented from 0); `and`, `or`, `not` cost one per cell.
    - `comparisons`: a categorical aggregate of m selected values checks m - 1 of them against the
      first.
    - `divisions`: one per numerical mean over at least one key.
    Defaults, none checks and loop bookkeeping are free. Memoisation is the interpreter's speed-up,
    not part of the rule: a memoised lambda or predicate still counts once per use.
    """

    lookups: int = 0
    predicate_tests: int = 0
    additions: int = 0
    comparisons: int = 0
    divisions: int = 0

    @property
    def total(self) -> int:
        return self.lookups + self.predicate_tests + self.additions + self.comparisons + self.divisions


def evaluate(
    program: ir.Program, tokens: Sequence[ir.Value], counter: OpCounter | None = None
) -> list[ir.Value | None]:
    """The program's output at each position of `tokens` (None for none).

    Raises InputError for a token outside the vocab or an input longer than max_len, and
    RaspRuntimeError when a categorical aggregate selects several different values.
    """
    return evaluate_many(program, [tokens], counter)[0]


def evaluate_many(
    program: ir.Program, inputs: Iterable[Sequence[ir.Value]], counter: OpCounter | None = None
) -> list[list[ir.Value | None]]:
    """`evaluate` on each input, sharing the memo of lambda results between inputs (faster)."""
    nodes = program.nodes()
    vocab = vocab_spellings(program)
    memo: Memo = {}
    return [_run(program, nodes, vocab, memo, tokens, counter) for tokens in inputs]


def evaluate_each(program: ir.Program, inputs: Iterable[Sequence[ir.Value]]) -> list:
    """Per input, `evaluate`'s output, or the RaspRuntimeError the program raises on that input
    (an ambiguous categorical aggregate). Any other error (a token outside the vocab, a failing
    lambda) is raised, at the first input that has one."""
    nodes = program.nodes()
    vocab = vocab_spellings(program)
    memo: Memo = {}
    results: list = []
    for tokens in inputs:
        try:
            results.append(_run(program, nodes, vocab, memo, tokens, None))
        except RaspRuntimeError as error:
            results.append(error)
    return results


def _run(program, nodes, vocab, memo, tokens, counter) -> list:
    """One evaluation: every node once, in topological order."""
    xs = checked_input(program, vocab, tokens)
    if not xs:
        return []
    env: dict = {}
    try:
        for node in nodes:
            env[node] = _step(node, env, xs, program.causal, memo, counter)
    except RaspError as error:
        raise attributed(error, describe(node)) from None
    return env[program.output]


def node_values(node: ir.Node, env: dict, xs: list, causal: bool):
    """The value of one node on input `xs` from its children's values in `env` (node -> values),
    as `evaluate` computes it (tools/folded.py gives it values read from a model's residual)."""
    return _step(node, env, xs, causal, {}, None)


def _step(node: ir.Node, env: dict, xs: list, causal: bool, memo: Memo, counter: OpCounter | None):
    """The value of one node (a list per position, or selector rows) from its children's."""
    n = len(xs)
    if isinstance(node, (ir.Tokens, ir.Indices, ir.Length)):
        if counter:
            counter.lookups += n
        if isinstance(node, ir.Tokens):
            return list(xs)
        if isinstance(node, ir.Indices):
            return list(range(n))
        return list(range(1, n + 1)) if causal else [n] * n
    if isinstance(node, (ir.Map, ir.SequenceMap)):
        return _map(node, [env[child] for child in node.children()], memo, counter)
    if isinstance(node, ir.Select):
        return _select(node, env[node.keys], env[node.queries], causal, memo, counter)
    if isinstance(node, (ir.SelectAnd, ir.SelectOr, ir.SelectNot)):
        rows = _combine(node, env)
        if counter:
            counter.additions += sum(map(len, rows))
        return rows
    if isinstance(node, ir.SelectorWidth):
        widths = [row.count(True) for row in env[node.selector]]
        if counter:
            counter.additions += sum(widths)
        return widths
    if isinstance(node, ir.Aggregate):
        return _aggregate(node, env[node.selector], env[node.sop], xs, memo, counter)
    raise TypeError(f"the interpreter has no rule for {type(node).__name__}")


def _combine(node: ir.SelectAnd | ir.SelectOr | ir.SelectNot, env: dict) -> list[Row]:
    """Elementwise and / or / not of selector rows."""
    if isinstance(node, ir.SelectNot):
        return [[not s for s in row] for row in env[node.inner]]
    pairs = zip(env[node.first], env[node.second])
    if isinstance(node, ir.SelectAnd):
        return [[a and b for a, b in zip(r1, r2)] for r1, r2 in pairs]
    return [[a or b for a, b in zip(r1, r2)] for r1, r2 in pairs]


def _map(node: ir.Map | ir.SequenceMap, columns: list, memo: Memo, counter: OpCounter | None) -> list:
    """`fn` at each position; none in gives none (categorical) or 0 (numerical)."""
    table = memo.setdefault(node.fn, {})
    empty = 0 if node.encoding == ir.NUMERICAL else None
    out = []
    for args in zip(*columns):
        if None in args:
            out.append(empty)
            continue
        key = args + tuple(map(type, args))
        result = table.get(key, table)  # `table` itself marks a miss
        if result is table:
            result = table[key] = call_checked(node.fn, args, node)
        out.append(result)
    if counter:
        counter.lookups += sum(None not in args for args in zip(*columns))
    return out


def _select(
    node: ir.Select, keys: list, queries: list, causal: bool, memo: Memo, counter: OpCounter | None
) -> list[Row]:
    """Row q: which keys (0..q when causal) satisfy `predicate(key, query)`; none never selects."""
    table = memo.setdefault(node, {})
    rows = []
    for q, query in enumerate(queries):
        span = keys[: q + 1] if causal else keys
        row = [False] * len(span)
        if query is not None:
            for k, key in enumerate(span):
                if key is not None:
                    pair = (key, query, type(key), type(query))
                    held = table.get(pair)
                    if held is None:
                        held = table[pair] = _holds(node, key, query)
                    row[k] = held
            if counter:
                counter.predicate_tests += len(span) - span.count(None)
        rows.append(row)
    return rows


def _holds(node: ir.Select, key: ir.Value, query: ir.Value) -> bool:
    """The predicate on two non-none values; a failure is reported at the lambda or the select."""
    try:
        return node.holds(key, query)
    except Exception as failure:  # the user's lambda, or an ordering of incomparable values
        if isinstance(node.predicate, str):
            predicate, loc = node.predicate, node.loc
        else:
            predicate, loc = node.predicate.text, node.predicate.loc or node.loc
        raise RaspValueError(f"select predicate {shortened(predicate)} fails on key {shortened(repr(key))}, "
                             f"query {shortened(repr(query))}: {reason(failure)}", loc) from None


def _aggregate(
    node: ir.Aggregate, rows: list[Row], values: list, xs: list, memo: Memo, counter: OpCounter | None
) -> list:
    """At each query, the mean (numerical) or the common value (categorical) of the selected keys."""
    numerical = node.encoding == ir.NUMERICAL
    means = memo.setdefault(node, {})  # exact means are slow: one per tuple of selected values
    default = 0 if numerical and node.default is None else node.default
    out = []
    for q, row in enumerate(rows):
        selected = [value for value, chosen in zip(values, row) if chosen]
        if counter:
            _count_aggregate(counter, len(selected), numerical)
        if not selected:
            out.append(default)
        elif numerical:
            key = tuple(selected)
            mean = means.get(key)
            if mean is None:
                mean = means[key] = exact_mean(selected)
            out.append(mean)
        else:
            first = selected[0]
            if any(value != first for value in selected):
                raise conflict(node, selected, xs, q)
            out.append(first)
    return out


def _count_aggregate(counter: OpCounter, m: int, numerical: bool) -> None:
    counter.lookups += m
    if m and numerical:
        counter.additions += m - 1
        counter.divisions += 1
    elif m:
        counter.comparisons += m - 1


def evaluate_all(program: ir.Program, tokens: Sequence[ir.Value]) -> dict:
    """Every named s-op's values and every named selector's matrix on one input, as `evaluate`
    computes them: name -> a list of n values (None for none) for an s-op, an [n_query, n_key]
    bool array for a selector (keys after the query are False in a causal program). Names are
    the program's bound names (an IR program's labels; the first node of a label wins); the
    output is also under `program.output_name`."""
    import numpy as np  # only here: the interpreter itself is plain Python

    vocab = {value: value for value in reversed(program.vocab)}
    xs = checked_input(program, vocab, tokens)
    named: dict = {}
    env: dict = {}
    for node in program.nodes():
        env[node] = _step(node, env, xs, program.causal, {}, None) if xs else []
        if node.label and node.label not in named:
            named[node.label] = node
    values: dict[str, Any] = {}  # a name -> its s-op's values (a list) or its selector's matrix
    for name, node in named.items():
        if isinstance(node, ir.Selector):
            matrix = np.zeros((len(xs), len(xs)), dtype=bool)
            for q, row in enumerate(env[node]):
                matrix[q, : len(row)] = row
            values[name] = matrix
        else:
            values[name] = list(env[node])
    values[program.output_name] = list(env[program.output])
    return values
