"""Short `repr`s and the notebook view of a program: a model or a program prints as one line (the
weights print with `format_model`, the heads with `model.head`), and a notebook shows a
program's source and a table of its named s-ops and selectors."""

from __future__ import annotations

from .. import ir
from ..runtime.model import Model, n_params
from .html_report import esc, source_html, table

MAX_SHOWN_VOCAB = 12  # tokens of the vocab a one-line repr names before "..."


def _vocab_text(vocab) -> str:
    shown = [v if isinstance(v, str) else repr(v) for v in list(vocab)[:MAX_SHOWN_VOCAB]]
    return "{" + ", ".join(shown) + (", ..." if len(vocab) > MAX_SHOWN_VOCAB else "") + "}"


def model_repr(model: Model) -> str:
    """`<Model: 3 layers (heads 2+2+6), d_model 37, 15,140 parameters, vocab {a, b, c, d, BOS}, ...>`."""
    meta = model.meta
    heads = "+".join(str(layer["n_head"]) for layer in meta["layers"]) or "0"
    return (f"<Model: {model.n_layers} layers (heads {heads}), d_model {model.d_model}, "
            f"{n_params(model):,} parameters, vocab {_vocab_text(meta['vocab'])}, max_len {meta['max_len']}, "
            f"output {meta['output'].get('name') or 'output'!r} ({meta['output']['encoding']})>")


def _kind(node: ir.Node) -> str:
    names = {ir.SequenceMap: "sequence_map", ir.SelectorWidth: "selector_width", ir.SelectAnd: "and",
             ir.SelectOr: "or", ir.SelectNot: "not"}
    return names.get(type(node), type(node).__name__.lower())


def _named(program: ir.Program) -> list[ir.Node]:
    return [node for node in program.nodes() if node.label]


def program_repr(program: ir.Program) -> str:
    """`<Program most_freq.rasp: output 'output' (aggregate), 12 named nodes, vocab {a, b}, max_len 6>`."""
    return (f"<Program {program.filename}: output {program.output_name!r} ({_kind(program.output)}), "
            f"{len(_named(program))} named nodes, vocab {_vocab_text(program.vocab)}, max_len {program.max_len}"
            f"{', causal' if program.causal else ''}>")


def program_html(program: ir.Program) -> str:
    """A program in a notebook: its source (when it has one) and its named s-ops and selectors."""
    rows = []
    for node in _named(program) + ([program.output] if not program.output.label else []):
        name = node.label or program.output_name
        encoding = node.encoding if isinstance(node, ir.SOp) else "selector"
        reads = ", ".join(child.label or _kind(child) for child in node.children())
        place = f"{node.loc.line}:{node.loc.col}" if node.loc else ""
        rows.append([name, _kind(node), encoding, reads, place])
    return (f"<div><b>{esc(program_repr(program))}</b>" + source_html(program.source or "")
            + table(["name", "kind", "encoding", "reads", "line:col"], rows) + "</div>")
