"""head_meta: what each head computes and what each residual variable holds, for the weights
file's meta (docs/inspect.md, "What the file records").

`describe_model(graph, blocks, conflicts)` returns two meta entries:

    heads   per layer, per head (in c_attn's order): the s-op the head computes (`sop`, its
            `line`/`col`), its `kind` (categorical / numerical aggregate, or the attention half
            of a selector_width, `width`), the `select` it scores as the program writes it, each
            `select(keys, queries, predicate)` inside it with its place (`selects`), the residual
            variables its query and key read (`q_reads`, `k_reads`), the one it averages
            (`value`) and the one it writes (`writes`); `part` [k, n] for one of n split heads;
            on a categorical aggregate's head, `conflicts`: "impossible" when the compiler
            proved its selected keys never hold different values, else "possible"
            (frontend/single_valued.py).
    sops    per residual variable (its label, as in meta.residual): `encoding`, `may_be_none`,
            and its `values` with the dimension `labels` holding them (categorical), or its
            `values` when there are at most MAX_LISTED_VALUES (numerical; omitted beyond);
            `read_out` on the variables unembed reads.

An Attend op is matched to the program's aggregate or selector_width by the selector it scores
(`Attend.selector`, the program's own selector object) and its output variable's place (`loc`,
the node's). Two nodes that match both (one selector aggregated twice at one place, as a def's
body called twice does) describe alike; they are taken in program order. Three kinds of head
score a selector the compiler made: length's select-all (matched to `length`), split-keys' parts
of the answer's select (matched to the program's answer, the only aggregate split-keys splits),
and position-widths' mean of the index over all keys (matched to the first selector_width or
length it counts, whose place it carries; it is described by the select-all it scores).

Reads: graph.program, graph.ops (each op's `out`), Attend's `kind`, `out`, `value`, `selector` and
`score.columns` (which variables q and k read), Var's `label`, `encoding`, `values`,
`may_be_none`, `loc`; graph.readout.inputs (the variables unembed reads); blocks[i].heads (the
heads of layer i, in assemble's order).
"""

from __future__ import annotations

from typing import Any

from .. import ir
from .naming import expression_text
from .ops import Attend, Graph, HeadKind
from .variables import CONSTANT, Var
from .schedule import Block

MAX_LISTED_VALUES = 1000
"""A numerical variable's values are listed in meta (so a report snaps a decoded number to the
value it stands for) up to this many; a longer list would only grow the file."""

HEAD_NODES = (ir.Aggregate, ir.SelectorWidth, ir.Length)
"""The kinds of node a head computes."""


def describe_model(graph: Graph, blocks: list[Block], conflicts: dict[ir.Aggregate, str]) -> dict[str, Any]:
    """{"heads": [[head description, ...] per layer], "sops": {label: description}}; `conflicts`:
    each categorical aggregate -> "impossible" / "possible" (single_valued.conflicts_possible)."""
    attends = [op for op in graph.ops if isinstance(op, Attend)]
    sources = _sources(attends, graph.program)
    heads = [[_head(op, sources.get(op), graph.program) for op in block.heads] for block in blocks]
    for block, layer in zip(blocks, heads):
        for op, head in zip(block.heads, layer):
            node = sources.get(op)
            if isinstance(node, ir.Aggregate) and node in conflicts:
                head["conflicts"] = conflicts[node]
    parts: dict[str, list[dict[str, Any]]] = {}  # an s-op -> the heads of its split answer
    for layer in heads:
        for head in layer:
            if head.get("part") is not None:
                parts.setdefault(head["sop"], []).append(head)
    for split in parts.values():
        for k, head in enumerate(split):
            head["part"] = [k, len(split)]
    sops = {op.out.label: _variable(op.out) for op in graph.ops}
    for var in graph.readout.inputs:
        sops.get(var.label, {})["read_out"] = True
    return {"heads": heads, "sops": sops}


def _sources(attends: list[Attend], program: ir.Program) -> dict[Attend, ir.Aggregate | ir.SelectorWidth | ir.Length]:
    """Each Attend op -> the aggregate / selector_width / length node it computes, when found."""
    candidates = [node for node in program.nodes() if isinstance(node, HEAD_NODES)]
    written = {id(node.selector) for node in candidates if not isinstance(node, ir.Length)}
    taken: set[int] = set()
    found = {}
    for op in attends:
        made = id(op.selector) not in written  # a selector the compiler made (module docstring)
        for node in candidates:
            if (node.loc == op.out.loc and (made or id(node) not in taken)
                    and _computes(op, node, made, program)):
                found[op] = node
                taken.add(id(node))
                break
    return found


def _computes(op: Attend, node: ir.Node, made: bool, program: ir.Program) -> bool:
    """Whether head `op` computes `node`: an aggregate or selector_width whose very selector it
    scores; or, its selector `made` by the compiler, length (a width head's select-all) or the
    program's answer (split-keys' parts of the answer's select)."""
    if op.kind is HeadKind.WIDTH:
        return isinstance(node, ir.Length) if made else isinstance(node, ir.SelectorWidth) and node.selector is op.selector
    if made and op.kind is HeadKind.NUMERICAL:
        return isinstance(node, ir.Length | ir.SelectorWidth)  # position-widths' mean index
    if made:
        return node is program.output
    return isinstance(node, ir.Aggregate) and node.selector is op.selector


def _head(op: Attend, node: ir.Node | None, program: ir.Program) -> dict[str, Any]:
    head = {
        "kind": op.kind.value,
        "writes": op.out.label,
        "value": op.value.label if op.value is not None else None,
        "q_reads": _reads(op, "q"),
        "k_reads": _reads(op, "k"),
        "part": [0, 1] if isinstance(node, ir.Aggregate) and op.selector is not node.selector else None,
    }
    if node is None:
        return {**head, "sop": op.out.label, "line": None, "col": None, "select": None, "selects": []}
    # an aggregate's or a width's own selector; length's select-all and the mean index: the one scored
    if isinstance(node, ir.Aggregate) or (op.kind is HeadKind.WIDTH and isinstance(node, ir.SelectorWidth)):
        selector = node.selector
    else:
        assert op.selector is not None  # every head the lowering makes scores a selector
        selector = op.selector
    return {
        **head,
        "sop": program.output_name if node is program.output else _name(node),
        "line": node.loc.line if node.loc else None,
        "col": node.loc.col if node.loc else None,
        "select": _selector_text(selector, top=True),
        "selects": [_select(s) for s in _selects(selector)],
    }


def _reads(op: Attend, side: str) -> list[str]:
    """The labels of the variables one side of the head reads (its linear forms' features)."""
    forms = [getattr(column, side) for column in op.score.columns]
    return list(dict.fromkeys(f[0].label for form in forms for f in form if f is not CONSTANT))


def _name(node: ir.Node) -> str:
    """A node as the program names it: its label, else as it is written (naming.expression_text)."""
    return expression_text(node)


def _predicate(select: ir.Select) -> str:
    return select.predicate if isinstance(select.predicate, str) else select.predicate.text


def _selector_text(selector: ir.Selector, top: bool = False) -> str:
    """`select(tokens, tokens, ==) and earlier`: named selectors inside by name, the top one written out."""
    if selector.label and not top:
        return selector.label
    if isinstance(selector, ir.Select):
        return f"select({_name(selector.keys)}, {_name(selector.queries)}, {_predicate(selector)})"
    if isinstance(selector, ir.SelectNot):
        return f"not {_selector_text(selector.inner)}"
    assert isinstance(selector, ir.SelectAnd | ir.SelectOr)  # the selectors left
    word = "and" if isinstance(selector, ir.SelectAnd) else "or"
    text = f"{_selector_text(selector.first)} {word} {_selector_text(selector.second)}"
    return text if top else f"({text})"


def _selects(selector: ir.Selector) -> list[ir.Select]:
    """The selects a selector combines (not those inside the s-ops they compare), left to right."""
    if isinstance(selector, ir.Select):
        return [selector]
    if isinstance(selector, ir.SelectNot):
        return _selects(selector.inner)
    assert isinstance(selector, ir.SelectAnd | ir.SelectOr)  # the selectors left
    return _selects(selector.first) + _selects(selector.second)


def _select(select: ir.Select) -> dict[str, Any]:
    return {
        "name": select.label,
        "keys": _name(select.keys),
        "queries": _name(select.queries),
        "predicate": _predicate(select),
        "line": select.loc.line if select.loc else None,
        "col": select.loc.col if select.loc else None,
    }


def _variable(var: Var) -> dict[str, Any]:
    """How a residual variable is laid out, and the values it holds (JSON: tuples as lists)."""
    described: dict[str, Any] = {"encoding": var.encoding, "may_be_none": bool(var.may_be_none)}
    if var.encoding == ir.CATEGORICAL:
        described["values"] = [_json(v) for v in var.values]
        described["labels"] = list(var.dim_labels)
    elif len(var.values) <= MAX_LISTED_VALUES:
        described["values"] = [_json(v) for v in var.values]
    return described


def _json(value: Any) -> Any:
    """A value as JSON holds it: a tuple (a joint variable's) as a list, numbers and strings as they are."""
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    return float(value)
