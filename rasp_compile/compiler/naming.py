"""Names in the program's language for the residual stream's variables and dimensions.

Two steps, both about names only (no weight depends on them; the residual's order is the graph's):

- `sop_label(node, program)`: the label the lowering gives an s-op's variable: the name it was
  bound to (a def's local as `def.local`, frontend/defs.py), the output's name for the output,
  else the expression it is written as (`map(tokens)`, `aggregate(same, one)`): never a colon,
  which separates a one-hot dimension's name from its value (`NAME:VALUE`, docs/format.md).
- `readable_labels(meta, program)`: the meta entries that name variables (`residual`, `sops`,
  `heads`, `margins`) with the features the compiler derives renamed after what they hold:

      X.cat:v          X == v           a one-hot of the number X (the variable `X (one-hot)`)
      X.value, X.cat.value   X          X as a number (`X (number)` when X names another variable)
      X.value^2        X^2              its square (a select comparing positions scores with it)
      X.bos_share      X (BOS share)    the share of attention BOS keeps in X's width head
      X.part3          X (head 4)       the 4th of the heads one aggregate was split into
      X.k2, X.q2       X key 2, X query 2   column 2 of the head computing X, written directly
      X.target, X.match, X.any, X.offset, X.centred, X.digit1, length.mean_index: alike

  A derived name that would name two variables keeps the compiler's label.
"""

from __future__ import annotations

import re
from typing import Any

from .. import ir

MAX_EXPRESSION = 48  # characters of an unnamed s-op's written-out label before its arguments are elided

_DERIVED = re.compile(r"(?P<base>.+?)\.(?P<suffix>cat\.value\^2|cat\.value|value\^2|value|cat|bos_share|target|match|"
                      r"any|offset|centred\^2|centred|mean_index|part(?P<part>\d+)|(?P<side>[kq])(?P<column>\d+)|"
                      r"digit(?P<digit>\d+))")
_SIMPLE = {"value^2": "{}^2", "cat.value^2": "{}^2", "bos_share": "{} (BOS share)", "cat": "{} (one-hot)",
           "target": "{} target", "match": "{} match", "any": "{} is not none", "offset": "{} offset",
           "centred": "{} (centred)", "centred^2": "{} (centred)^2", "mean_index": "{} mean index"}


def sop_label(node: ir.SOp, program: ir.Program) -> str:
    """The label of the variable holding `node` (see the module docstring)."""
    if node.label:
        return node.label
    if node is program.output:
        return program.output_name
    return expression_text(node)


def expression_text(node: ir.Expression) -> str:
    """An unnamed node as the program writes it, its named arguments by name: `map(tokens)`,
    `selector_width(select(tokens, tokens, ==))` (a lambda as `λ`; long ones end in `…`)."""
    if node.label:
        return node.label
    if isinstance(node, ir.Select):
        predicate = node.predicate if isinstance(node.predicate, str) else "λ"
        args = [expression_text(node.keys), expression_text(node.queries), predicate]
    elif isinstance(node, ir.SelectNot):
        return f"not {expression_text(node.inner)}"
    elif isinstance(node, ir.SelectAnd | ir.SelectOr):
        word = "and" if isinstance(node, ir.SelectAnd) else "or"
        return _shortened(f"({expression_text(node.first)} {word} {expression_text(node.second)})")
    else:
        args = [expression_text(child) for child in node.children()]
    kind = "length" if isinstance(node, ir.Length) else node.kind
    return _shortened(f"{kind}({', '.join(args)})" if args else kind)


def _shortened(text: str) -> str:
    return text if len(text) <= MAX_EXPRESSION else text[: MAX_EXPRESSION - 2] + "…)"


def readable_labels(meta: dict[str, Any], program: ir.Program) -> dict[str, Any]:
    """meta's `residual`, `sops`, `heads` and `margins` with derived variables renamed (module
    docstring); the entries as they were when a renamed dimension would collide."""
    sops = meta["sops"]
    named = {sop_label(node, program) for node in program.nodes() if isinstance(node, ir.SOp)}
    renamed, taken = {}, set(sops)
    for label in sops:
        new = None if label in named else _derived_name(label, taken)
        if new is not None and new not in taken:
            renamed[label] = new
            taken.add(new)
    dims = {}
    for label, new in renamed.items():
        entry = sops[label]
        if entry["encoding"] == ir.NUMERICAL:
            dims[label] = new
        else:
            derived = _DERIVED.fullmatch(label)
            assert derived is not None  # a categorical derived label always matches (_derived_name)
            base = derived["base"]
            for old_dim in entry["labels"]:
                value = old_dim[len(label) + 1:]
                dims[old_dim] = f"{base} == {value}" if label.endswith(".cat") else f"{new}:{value}"
    residual = [dims.get(d, d) for d in meta["residual"]]
    if len(set(residual)) != len(residual):
        return {}
    return {
        "residual": residual,
        "sops": {renamed.get(k, k): _relabelled_sop(v, dims) for k, v in sops.items()},
        "heads": [[_relabelled_head(head, renamed) for head in layer] for layer in meta["heads"]],
        "margins": [{**m, "reads": renamed.get(m["reads"], m["reads"])} if "reads" in m else m
                    for m in meta.get("margins", [])],
    }


def _derived_name(label: str, taken: set[str]) -> str | None:
    match = _DERIVED.fullmatch(label)
    if match is None:
        return None
    base, suffix = match["base"], match["suffix"]
    if suffix in ("value", "cat.value"):
        return base if base not in taken else f"{base} (number)"
    if suffix in _SIMPLE:
        return _SIMPLE[suffix].format(base)
    if match["part"] is not None:
        return f"{base} (head {int(match['part']) + 1})"
    if match["side"] is not None:
        return f"{base} {'key' if match['side'] == 'k' else 'query'} {match['column']}"
    return f"{base} bit {match['digit']}"


def _relabelled_sop(entry: dict[str, Any], dims: dict[str, str]) -> dict[str, Any]:
    if "labels" not in entry:
        return entry
    return {**entry, "labels": [dims.get(d, d) for d in entry["labels"]]}


def _relabelled_head(head: dict[str, Any], renamed: dict[str, str]) -> dict[str, Any]:
    new = {**head, "writes": renamed.get(head["writes"], head["writes"]), "sop": renamed.get(head["sop"], head["sop"]),
           "q_reads": [renamed.get(r, r) for r in head["q_reads"]], "k_reads": [renamed.get(r, r) for r in head["k_reads"]]}
    if head["value"] is not None:
        new["value"] = renamed.get(head["value"], head["value"])
    return new
