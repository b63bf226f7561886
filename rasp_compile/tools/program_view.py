"""A program as one short line (`repr`) and as a notebook view: its source and a table of its named
s-ops and selectors (kind, encoding, what each reads, where it is written).

A program is read through its attributes only (ir.py imports this module for `Program.__repr__`
and `_repr_html_`): a node's kind is its class name, an s-op is a node with an `encoding`."""

from __future__ import annotations

from ..safe_text import shown
from .html_parts import esc, source_html, table
from .model_view import vocab_text

KIND_NAMES = {"SequenceMap": "sequence_map", "SelectorWidth": "selector_width", "SelectAnd": "and",
              "SelectOr": "or", "SelectNot": "not"}


def _kind(node) -> str:
    name = type(node).__name__
    return KIND_NAMES.get(name, name.lower())


def _named(program) -> list:
    return [node for node in program.nodes() if node.label]


def program_repr(program) -> str:
    """`<Program most_freq.rasp: output 'output' (aggregate), 12 named nodes, vocab {a, b}, max_len 6>`."""
    return (f"<Program {shown(program.filename)}: output {shown(repr(program.output_name))} ({_kind(program.output)}), "
            f"{len(_named(program))} named nodes, vocab {vocab_text(program.vocab)}, max_len {program.max_len}"
            f"{', causal' if program.causal else ''}>")


def program_html(program) -> str:
    """A program in a notebook: its source (when it has one) and its named s-ops and selectors."""
    rows = []
    for node in _named(program) + ([program.output] if not program.output.label else []):
        reads = ", ".join(child.label or _kind(child) for child in node.children())
        place = f"{node.loc.line}:{node.loc.col}" if node.loc else ""
        rows.append([node.label or program.output_name, _kind(node), getattr(node, "encoding", "selector"),
                     reads, place])
    return (f"<div><b>{esc(program_repr(program))}</b>" + source_html(program.source or "")
            + table(["name", "kind", "encoding", "reads", "line:col"], rows) + "</div>")
