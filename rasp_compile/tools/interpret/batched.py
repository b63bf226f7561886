"""The interpreter over many inputs at once: the reference's semantics (`reference.py`), run as
NumPy operations over every input of one length together.

Each s-op is held as a `Column`: `codes`, an int array [batch, n] indexing `values`, a table of
the values it can take in this batch (`values[0]` is none). A lambda then runs once per distinct
value (or pair of values) occurring in the batch, not once per position. A selector is a bool
array [batch, n_query, n_key] read off a table of its predicate on every pair of its keys' and
queries' values, kept in a memo between calls (in a causal program keys after the query are
False: every selector is restricted to k <= q, and "and", "or", "not" commute with that). A selector_width is a count along keys, a categorical aggregate takes
the first selected key's value after checking that every selected value equals it, a numerical
mean is an exact integer sum (every value a whole number of 1/scale) over a count.

An input on which a categorical aggregate selects different values drops out of the batch at
that aggregate, with the same RaspRuntimeError the reference raises (input, query position).
Anything else that goes wrong on some input (a token outside the vocab, a lambda or predicate
that fails, a mean of non-numbers) is left to the reference: the inputs are run again one by one,
which raises exactly what `evaluate` would. A checked program never gets there.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from collections.abc import Sequence

import numpy as np

from ... import ir
from ...element_fn import identity_key
from ...errors import RaspError, attributed
from ...frontend.lambda_calls import call_checked, describe
from .reference import evaluate_each
from .rules import conflict, exact_ratio, vocab_spellings

BATCH_CELLS = 2**22
"""The most selector cells (batch x n x n) one pass holds: 4 MB per selector as booleans, so
a batch of long inputs runs in slices that stay small."""

MEMO_CELLS = 2**25
"""The most predicate-table cells a memo keeps (two bool tables each, 64 MB in all); past it
the memo starts again empty."""

PAIR_CELLS = 2**15
"""Selector cells looked up at once (`_at_pairs`): 256 kB of indices, in the CPU's cache."""

Memo = dict  # (select, its keys' values, its queries' values) -> (holds, failed) [key code, query code]


class LeftToReference(Exception):
    """Something the batch cannot report as the reference would: the caller runs the reference."""


@dataclass
class Column:
    """An s-op over a batch: `codes` [batch, n] index `values` (values[0] is None, none)."""

    codes: np.ndarray
    values: list

    def __getitem__(self, rows) -> Column:
        return Column(self.codes[rows], self.values)


def evaluate_batch(program: ir.Program, inputs: Sequence[Sequence[ir.Value]], memo: Memo | None = None) -> list:
    """Per input, its output as `evaluate` gives it (a list, None for none), or the
    RaspRuntimeError the program raises on it; the same as `reference.evaluate_each`.

    `memo`: a dict to keep the predicate tables in between calls on the same program (a select on
    indices at max_len 1,000 is a million predicate calls, once instead of once per call)."""
    try:
        return _evaluate(program, inputs, {} if memo is None else memo)
    except LeftToReference:
        return evaluate_each(program, inputs)


def evaluate_vocab_indices(program: ir.Program, vocab: Sequence[ir.Value], picks: np.ndarray,
                           memo: Memo | None = None) -> list:
    """`evaluate_batch` of inputs of one length given as indices into `vocab`, picks [batch, n]
    (input i is `[vocab[j] for j in picks[i]]`): the same results, without looking up each token
    (`rasp-run --accuracy` draws its inputs so)."""
    try:
        tokens = _token_column_values(program)
        vocab_codes = _token_codes({value: code for code, value in enumerate(tokens) if code}, [vocab])[0]
        if picks.shape[1] > program.max_len:
            raise LeftToReference
        return _evaluate_codes(program, Column(vocab_codes[picks], tokens), {} if memo is None else memo)
    except LeftToReference:
        return evaluate_each(program, [[vocab[j] for j in row] for row in picks.tolist()])


def _evaluate(program: ir.Program, inputs: Sequence, memo: Memo) -> list:
    tokens = _token_column_values(program)
    code_of = {value: code for code, value in enumerate(tokens) if code}
    by_length: dict[int, list[int]] = defaultdict(list)
    for i, sequence in enumerate(inputs):
        by_length[len(sequence)].append(i)
    results: list = [None] * len(inputs)
    for n, members in by_length.items():
        if n > program.max_len:
            raise LeftToReference
        codes = _token_codes(code_of, [inputs[i] for i in members]).reshape(len(members), n)
        for i, result in zip(members, _evaluate_codes(program, Column(codes, tokens), memo)):
            results[i] = result
    return results


def _evaluate_codes(program: ir.Program, tokens: Column, memo: Memo) -> list:
    """Per input of one length (the rows of `tokens`), its output or RaspRuntimeError; the batch
    runs in slices of at most BATCH_CELLS selector cells."""
    batch, n = tokens.codes.shape
    if n == 0:
        return [[] for _ in range(batch)]
    rows, nodes = max(1, BATCH_CELLS // (n * n)), program.nodes()
    return [result for start in range(0, batch, rows)
            for result in _run(program, nodes, tokens[start:start + rows], memo)]


def _token_column_values(program: ir.Program) -> list:
    """None, then the vocab's distinct tokens as it spells them (matched by ==, first wins)."""
    return [None, *vocab_spellings(program).values()]


def _token_codes(code_of: dict, inputs: list) -> np.ndarray:  # -> [batch, n]
    try:
        return np.array([[code_of[token] for token in tokens] for tokens in inputs], dtype=np.int64)
    except (KeyError, TypeError):
        raise LeftToReference from None


def _run(program: ir.Program, nodes: list, tokens: Column, memo: Memo) -> list:
    """Every node once, in topological order, over one batch of inputs of one length; per input
    the output or its RaspRuntimeError."""
    batch, n = tokens.codes.shape
    results: list = [None] * batch
    alive = np.arange(batch)  # which input each row of the batch is
    env: dict = {}
    for node in nodes:
        try:
            env[node] = _step(node, env, tokens, program, memo)
        except RaspError:
            raise LeftToReference from None  # a lambda that fails on a value of some input
        if isinstance(node, ir.Aggregate) and node.encoding != ir.NUMERICAL:
            errors = _conflicts(node, env, tokens)
            if errors:
                for row, error in errors.items():
                    results[alive[row]] = error
                keep = np.setdiff1d(np.arange(len(alive)), list(errors))
                env = {key: value[keep] for key, value in env.items()}
                tokens, alive = tokens[keep], alive[keep]
    output = env[program.output]
    for row, values in zip(alive, _as_objects(output.values)[output.codes].tolist()):
        results[row] = values
    return results


def _as_objects(values: list) -> np.ndarray:
    """`values` as a 1-d object array (np.array would make tuples a second dimension)."""
    array = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        array[i] = value
    return array


def _step(node: ir.Node, env: dict, tokens: Column, program: ir.Program, memo: Memo):
    """One node's Column (an s-op) or bool array [batch, n_query, n_key] (a selector). Indices,
    length and widths take their values from one table for every n (0..max_len), so a select on
    them meets the same tables at every length and its predicate table is memoised once."""
    batch, n = tokens.codes.shape
    causal, max_len = program.causal, program.max_len
    if isinstance(node, ir.Tokens):
        return tokens
    if isinstance(node, (ir.Indices, ir.Length)):
        first = 1 if isinstance(node, ir.Length) else 0
        at = np.arange(1, n + 1) if causal or isinstance(node, ir.Indices) else np.full(n, n)
        return Column(np.broadcast_to(at, (batch, n)), [None, *range(first, max_len + first)])
    if isinstance(node, (ir.Map, ir.SequenceMap)):
        return _map(node, [env[child] for child in node.children()])
    if isinstance(node, ir.Select):
        return _select(node, env[node.keys], env[node.queries], causal, memo)
    if isinstance(node, ir.SelectNot):
        return ~env[node.inner] & _causal_mask(n) if causal else ~env[node.inner]
    if isinstance(node, ir.SelectAnd):
        return env[node.first] & env[node.second]
    if isinstance(node, ir.SelectOr):
        return env[node.first] | env[node.second]
    if isinstance(node, ir.SelectorWidth):
        return Column(env[node.selector].sum(axis=-1) + 1, [None, *range(max_len + 1)])
    if isinstance(node, ir.Aggregate) and node.encoding == ir.NUMERICAL:
        return _mean(node, env[node.selector], env[node.sop])
    if isinstance(node, ir.Aggregate):
        return _common_value(node, env[node.selector], env[node.sop])
    raise TypeError(f"the interpreter has no rule for {type(node).__name__}")


def _causal_mask(n: int) -> np.ndarray:  # -> [n_query, n_key]: True where k <= q
    return np.tri(n, dtype=bool)


def _map(node: ir.Map | ir.SequenceMap, columns: list[Column]) -> Column:
    """`fn` once per distinct argument tuple occurring; none in gives none (categorical) or 0
    (numerical). The tuple's code is the mixed-radix number of its arguments' codes."""
    empty = 0 if node.encoding == ir.NUMERICAL else None
    combined, size = columns[0].codes, len(columns[0].values)
    for column in columns[1:]:
        combined, size = combined * len(column.values) + column.codes, size * len(column.values)
    occurring = _occurring(combined, size)
    results = []
    for code in occurring.tolist():
        backwards = []
        for column in reversed(columns):
            code, own = divmod(code, len(column.values))
            backwards.append(column.values[own])
        args = tuple(reversed(backwards))
        results.append(empty if None in args else call_checked(node.fn, args, node))
    values, codes = _tabled(results)
    lookup = np.zeros(size, dtype=np.int64)
    lookup[occurring] = codes
    return Column(lookup[combined], values)


def _occurring(codes: np.ndarray, size: int) -> np.ndarray:
    """The distinct entries of `codes` (each in 0..size-1), sorted."""
    if size <= 4 * codes.size + 1024:
        return np.flatnonzero(np.bincount(codes.ravel(), minlength=size))
    return np.unique(codes)


def _tabled(results: list) -> tuple[list, list[int]]:
    """(values: None, then each distinct result once; each result's code in values). Results are
    told apart by value, type and sign, as the reference keeps them (1, 1.0 and True stay distinct,
    and so do 0.0 and -0.0)."""
    values, code_of, codes = [None], {identity_key(None): 0}, []
    for result in results:
        key = identity_key(result)
        code = code_of.get(key)
        if code is None:
            code = code_of[key] = len(values)
            values.append(result)
        codes.append(code)
    return values, codes


def _select(node: ir.Select, keys: Column, queries: Column, causal: bool, memo: Memo) -> np.ndarray:
    """[batch, n_query, n_key]: read off the predicate's table [key code, query code] (none,
    code 0, never selects). A pair where the predicate fails is an error only where it occurs."""
    holds, failed = _predicate_tables(node, keys.values, queries.values, memo)
    selected = _at_pairs(holds, keys.codes, queries.codes)
    if failed.any():
        occurs = _at_pairs(failed, keys.codes, queries.codes)
        if (occurs & _causal_mask(keys.codes.shape[1]) if causal else occurs).any():
            raise LeftToReference  # the reference reports it, at the first input that meets it
    return selected & _causal_mask(keys.codes.shape[1]) if causal else selected


def _at_pairs(table: np.ndarray, key_codes: np.ndarray, query_codes: np.ndarray) -> np.ndarray:
    """table[key code, query code] at every (query, key) pair: [K, Q], 2 x [batch, n] ->
    [batch, n_query, n_key]. A slice of rows at a time, of about PAIR_CELLS cells: the index of
    every pair at once (8 bytes a cell, in fresh memory) took longer than the lookup itself."""
    batch, n = key_codes.shape
    out = np.empty((batch, n, n), dtype=table.dtype)
    flat, key_rows = table.ravel(), key_codes * table.shape[1]
    step = max(1, PAIR_CELLS // (n * n))
    for start in range(0, batch, step):
        rows = slice(start, start + step)
        np.take(flat, key_rows[rows, None, :] + query_codes[rows, :, None], out=out[rows])
    return out


def _predicate_tables(node: ir.Select, keys: list, queries: list, memo: Memo) -> tuple[np.ndarray, np.ndarray]:
    """(holds, failed) [key code, query code]: the predicate on every pair of the two tables'
    values, and where it raised; row and column 0 (none) False. Memoised by the tables' values."""
    key = (node, tuple(map(identity_key, keys)), tuple(map(identity_key, queries)))
    if key in memo:
        return memo[key]
    holds = np.zeros((len(keys), len(queries)), dtype=bool)
    failed = np.zeros_like(holds)
    compared = _compared(node.predicate, _as_objects(keys[1:]), _as_objects(queries[1:]))
    if compared is not None:
        holds[1:, 1:] = compared
    else:
        for k, key_value in enumerate(keys[1:], start=1):
            row = _lambda_row(node.predicate, key_value, queries[1:])
            if row is not None:
                holds[k, 1:] = row
                continue
            for q, query_value in enumerate(queries[1:], start=1):
                try:
                    holds[k, q] = node.holds(key_value, query_value)
                except Exception:  # the user's lambda, or an ordering of incomparable values
                    failed[k, q] = True
    if sum(table[0].size for table in memo.values()) + holds.size > MEMO_CELLS:
        memo.clear()
    memo[key] = (holds, failed)
    return holds, failed


def _lambda_row(predicate: str | ir.Fn, key, queries: list) -> list[bool] | None:
    """The predicate's lambda on (key, query) for every query, called directly, not through the
    Fn's memo: a table of max_len^2 pairs (16.8M at 4,096) would fill the memo with as many
    entries, many GB, where the table itself is 16.8 MB. None when the predicate is a comparison,
    when some call raises or when some result is not a bool: then each pair goes through
    `ir.Select.holds`, which checks and reports results as everywhere else."""
    if isinstance(predicate, str):
        return None
    call = predicate.call
    try:
        row: list = [call(key, query) for query in queries]
    except Exception:  # the user's lambda fails on some pair: found pair by pair
        return None
    return row if all(type(result) is bool for result in row) else None


COMPARISON_UFUNCS = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
                     ">=": np.greater_equal}


def _compared(predicate: str | ir.Fn, keys: np.ndarray, queries: np.ndarray) -> np.ndarray | None:
    """[key, query]: a comparison predicate on every pair of the values (1-d object arrays), each
    pair compared by Python's own operator as `ir.compare` does, in one NumPy loop; None for a
    lambda, or when some pair cannot be compared (then each pair is tried on its own)."""
    if not isinstance(predicate, str):
        return None
    if predicate in ("true", "false"):
        return np.full((len(keys), len(queries)), predicate == "true")
    try:
        return COMPARISON_UFUNCS[predicate].outer(keys, queries).astype(bool)
    except Exception:  # e.g. "<" between a string and a number
        return None


def _common_value(node: ir.Aggregate, selector: np.ndarray, column: Column) -> Column:
    """The value of the first selected key (or the default where none is); `_conflicts` then
    finds the queries where another selected value differs from it."""
    first = np.take_along_axis(column.codes, selector.argmax(axis=-1), axis=1)
    if node.default is None:
        return Column(np.where(selector.any(axis=-1), first, 0), column.values)
    return Column(np.where(selector.any(axis=-1), first, len(column.values)), [*column.values, node.default])


def _conflicts(node: ir.Aggregate, env: dict, tokens: Column) -> dict:
    """{row: the RaspRuntimeError of that input} for the inputs where `node` selects values
    that are not all equal (compared by ==, none apart), at their first such query."""
    selector, column = env[node.selector], env[node.sop]
    equal_as = _equality_classes(column.values)
    classes = equal_as[column.codes]  # [batch, n_key]
    first = np.take_along_axis(classes, selector.argmax(axis=-1), axis=1)  # [batch, n_query]
    differs = (selector & (classes[:, None, :] != first[:, :, None])).any(axis=-1)  # [batch, n_query]
    errors = {}
    for row in np.flatnonzero(differs.any(axis=-1)).tolist():
        q = int(differs[row].argmax())
        selected = [column.values[code] for code, chosen in zip(column.codes[row].tolist(), selector[row, q]) if chosen]
        xs = [tokens.values[code] for code in tokens.codes[row].tolist()]
        errors[row] = attributed(conflict(node, selected, xs, q), describe(node))
    return errors


def _equality_classes(values: list) -> np.ndarray:
    """Per value, the index of the first value equal to it (by ==: 1, 1.0 and True are one
    class; None is a class of its own)."""
    first_of: dict = {}
    return np.array([first_of.setdefault(value, i) for i, value in enumerate(values)], dtype=np.int64)


def _mean(node: ir.Aggregate, selector: np.ndarray, column: Column) -> Column:
    """At each query, the exact mean of the selected values, or the default (0 when None)."""
    if (selector & (column.codes == 0)[:, None, :]).any():
        raise LeftToReference  # none among a mean's values: the reference says what that is
    try:
        fractions = [Fraction(0), *(Fraction(value) for value in column.values[1:])]
    except (TypeError, ValueError):
        raise LeftToReference from None
    scale = lcm(*(f.denominator for f in fractions))
    steps = [int(f * scale) for f in fractions]
    n = selector.shape[-1]
    exact = max(map(abs, steps)) * max(1, n) < 2**62  # int64 sums cannot overflow
    weights = np.array(steps, dtype=np.int64 if exact else object)[column.codes]  # [batch, n_key]
    sums = np.matmul(selector.astype(weights.dtype), weights[:, :, None])[:, :, 0]  # [batch, n_query]
    counts = selector.sum(axis=-1)
    default = 0 if node.default is None else node.default
    pairs, codes = _distinct_pairs(sums, counts)
    values = [None, *(default if c == 0 else exact_ratio(int(s), c * scale) for s, c in pairs)]
    return Column(codes + 1, values)


def _distinct_pairs(sums: np.ndarray, counts: np.ndarray) -> tuple[list, np.ndarray]:
    """(the distinct (sum, count) pairs, as tuples; each position's index among them [batch, n])."""
    if sums.dtype != object:
        pairs, inverse = np.unique(np.stack([sums.ravel(), counts.ravel()], axis=1), axis=0, return_inverse=True)
        return [tuple(pair) for pair in pairs.tolist()], inverse.reshape(sums.shape)
    index_of: dict = {}
    indices = [index_of.setdefault(pair, len(index_of)) for pair in zip(sums.ravel().tolist(), counts.ravel().tolist())]
    return list(index_of), np.array(indices, dtype=np.int64).reshape(sums.shape)
