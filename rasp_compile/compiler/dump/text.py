"""The compiler's graph as text: one entry per variable, in the graph's order (every variable after
the ones its writer reads), so that two dumps of one program compare line by line.

    prev: categorical {a, b}  (8:8)
      <- Attend categorical of tokens, default a; selector 8:18; 1 term in 3 columns; query reads
         indices.target, indices.match; key reads indices.value, indices.value^2  [layer 0 attention]

Each entry is the variable (label, encoding, values, where the program wrote it) and its writer
(the op, what it reads, the choices a pass makes in it, and the sub-layer schedule.py would give
it). Long value sets are abbreviated to their first and last values and their count; names and
values from the program are terminal-safe (safe_text.py). dump/__init__.py prints it after any step.
"""

from __future__ import annotations

from collections.abc import Iterable

from ... import ir
from ...safe_text import shortened, terminal_safe
from ..ops import Attend, Embed, GatedMap, Graph, Linear, NumericMLP, Op, TableMLP
from ..schedule import sublayer_of
from ..selector_terms import Score
from ..variables import CONSTANT, Var, value_text

SHOWN_VALUES = 8
"""A value set this long or shorter is shown whole; a longer one as its first FIRST_SHOWN and
last LAST_SHOWN values with its count (a mean's thousands of values stay one short line)."""
FIRST_SHOWN, LAST_SHOWN = 5, 2
SHOWN_TEXT = 40  # characters of one label or value shown (shortened in the middle beyond)
SIGNIFICANT = 6  # significant digits of a float shown (a mean's 0.333333, not 0.3333333333333333)


def graph_lines(graph: Graph, pruned: frozenset[str] | None = None) -> list[str]:
    """The graph as lines of text: two per variable, then the answer's read-out. `pruned`: the
    residual dimension labels the model dropped (passes/prune.py), shown on each variable's
    line, or None where the model is not built yet."""
    layers = sublayer_of(graph)
    lines = []
    for op in graph.ops:
        lines.append(_variable(op.out, pruned))
        lines.append(f"  <- {writer(op)}  [{_sublayer(layers[op])}]")
    lines.append(f"output {_name(graph.output)}; {_readout(graph)}")
    return lines


def writer(op: Op) -> str:
    """An op as one line: its kind, what it reads and what passes chose in it."""
    if isinstance(op, Embed):
        return f"Embed of {op.source.value}" + ("" if op.fn is ir.identity else ", mapped")
    if isinstance(op, TableMLP):
        covered = ", none included" if op.covers_none else ""
        possible = "" if op.possible is None else f", {len(op.possible):,} combinations possible"
        return f"TableMLP of {_names(op.inputs)}{covered}{possible}"
    if isinstance(op, NumericMLP):
        return f"NumericMLP of {_name(op.input)}, {'polyline' if op.interpolated else 'steps'}"
    if isinstance(op, GatedMap):
        pieces = "affine pieces" if op.affine is not None else "steps"
        interpolated = f", polylines for {_count(len(op.interpolated), 'gate value')}" if op.interpolated else ""
        return f"GatedMap of {_name(op.input)} gated by {_name(op.gate)}, {pieces}{interpolated}"
    if isinstance(op, Linear):
        return _linear(op)
    return _attend(op)


def _linear(op: Linear) -> str:
    coefficients = sum(1 for row in op.weights.values() for c in row.values() if c != 0)
    bias = "; with a bias" if any(c != 0 for c in op.bias.values()) else ""
    return f"Linear of {_names(op.inputs)}: {_count(coefficients, 'coefficient')}{bias}"


def _attend(op: Attend) -> str:
    """An attention head: its kind, value and default, selector, score columns and the numbers
    passes set (shown only where they differ from the plain construction's)."""
    parts = [f"Attend {op.kind.value}"]
    if op.value is not None:
        parts[0] += f" of {_name(op.value)}, default {_value(op.default)}"
    if op.selector is not None and op.selector.loc is not None:
        parts.append(f"selector {op.selector.loc.line}:{op.selector.loc.col}")
    score = op.score
    sides = [f"{side} reads {_names(_read(score, side)) or 'a constant'}" for side in ("query", "key")]
    always = " (always selects)" if score.always_selects else ""
    columns = f"{_count(score.terms, 'term')} in {_count(len(score.columns), 'column')}"
    parts += [f"{columns}{always}", *sides]
    defaults = Attend.__dataclass_fields__
    for field, text in (("window", "window"), ("amplification", "amplification"), ("bos_weight", "BOS weight")):
        if getattr(op, field) != defaults[field].default:
            parts.append(f"{text} {_number(getattr(op, field))}")
    return "; ".join(parts)


def _read(score: Score, side: str) -> tuple[Var, ...]:
    """The variables one side (query or key) of a head's score reads, each once, in order."""
    forms = (column.q if side == "query" else column.k for column in score.columns)
    return tuple(dict.fromkeys(f[0] for form in forms for f in form if f is not CONSTANT))


def _readout(graph: Graph) -> str:
    readout = graph.readout
    read = f"read out from {_names(readout.inputs)}"
    classes = "as a number" if readout.classes is None else f"into {_count(len(readout.classes), 'class')}"
    split = "; the answer's aggregate is split into heads" if graph.split else ""
    return f"{read} {classes}{split}"


def _variable(var: Var, pruned: frozenset[str] | None) -> str:
    values = _values(var.values) + (", or none" if var.may_be_none else "")
    where = f"  ({var.loc.line}:{var.loc.col})" if var.loc is not None else ""
    return f"{_name(var)}: {var.encoding} {values}{where}{_pruned(var, pruned)}"


def _pruned(var: Var, pruned: frozenset[str] | None) -> str:
    """`; pruned: x:1, x:2` (the dimensions prune dropped), `; pruned` (all), or ""."""
    if not pruned:
        return ""
    dims = (var.label,) if var.encoding == ir.NUMERICAL else var.dim_labels
    gone = [label for label in dims if label in pruned]
    if not gone:
        return ""
    return "; pruned" if len(gone) == len(dims) else f"; pruned: {_names_text(gone)}"


def _values(values: tuple[object, ...]) -> str:
    """`{a, b}`, or `{0, 1, 2, 3, 4, ..., 19, 20} (21 values)` for a long set."""
    if len(values) <= SHOWN_VALUES:
        return "{" + ", ".join(map(_value, values)) + "}"
    shown = [*map(_value, values[:FIRST_SHOWN]), "...", *map(_value, values[-LAST_SHOWN:])]
    return "{" + ", ".join(shown) + f"}} ({len(values):,} values)"


def _value(value: object) -> str:
    """One value: floats to SIGNIFICANT digits, the rest as a dimension label spells them."""
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, tuple):
        return "(" + ",".join(map(_value, value)) + ")"
    return shortened(terminal_safe(value_text(value)), SHOWN_TEXT)


def _number(x: float) -> str:
    return f"{x:.{SIGNIFICANT}g}"


def _count(n: int, noun: str) -> str:
    """`1 term`, `3 terms`, `2 classes`."""
    return f"{n:,} {noun}{'' if n == 1 else 'es' if noun.endswith('s') else 's'}"


def _sublayer(index: int) -> str:
    """schedule.py's numbering in words: -1 the embedding, 2i block i's attention, 2i + 1 its MLP."""
    if index < 0:
        return "embedding"
    return f"layer {index // 2} {'attention' if index % 2 == 0 else 'MLP'}"


def _name(var: Var) -> str:
    return shortened(terminal_safe(var.label), SHOWN_TEXT)


def _names(variables: Iterable[Var]) -> str:
    return ", ".join(_name(var) for var in variables)


def _names_text(labels: Iterable[str]) -> str:
    return ", ".join(shortened(terminal_safe(label), SHOWN_TEXT) for label in labels)
