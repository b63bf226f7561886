"""A model as one short line (`repr`) and as a compact notebook view: its size, its layers and what
each head computes, never its weights (`format_model` prints those, `model.head` one head's).

A model is read through its attributes only: runtime/model.py imports this module for its own
`__repr__` and `_repr_html_`."""

from __future__ import annotations

from .heads import head_descriptions
from ..safe_text import counted, shown
from .html_parts import esc, table

MAX_SHOWN_VOCAB = 12  # tokens of the vocab a one-line repr names before "..."
SHOWN_TOKEN = 20  # characters of one token (or the output's name) a one-line repr shows


def vocab_text(vocab) -> str:
    """`{a, b, c}`: a vocab in one short line, terminal-safe (tokens come from files and Python)."""
    tokens = [shown(v if isinstance(v, str) else repr(v), SHOWN_TOKEN) for v in list(vocab)[:MAX_SHOWN_VOCAB]]
    return "{" + ", ".join(tokens) + (", ..." if len(vocab) > MAX_SHOWN_VOCAB else "") + "}"


def _parameters(model) -> int:
    return sum(array.size for array in model.params.values())


def model_repr(model) -> str:
    """`<Model: 3 layers (heads 2+2+6), d_model 37, 15,140 parameters, vocab {a, b, c, d, BOS}, ...>`."""
    meta = model.meta
    heads = shown("+".join(str(layer["n_head"]) for layer in meta["layers"]) or "0")
    name = shown(repr(meta["output"].get("name") or "output"), SHOWN_TOKEN)
    return (f"<Model: {counted(model.n_layers, 'layer')} (heads {heads}), d_model {model.d_model}, "
            f"{counted(_parameters(model), 'parameter')}, vocab {vocab_text(meta['vocab'])}, max_len {meta['max_len']}, "
            f"output {name} ({meta['output']['encoding']})>")


def heads_table(model) -> str:
    """Every head and what it computes, as a table."""
    rows = [[d.layer, d.head, d.title.split(": ", 1)[1], d.definitions, d.place]
            for layer in head_descriptions(model.meta) for d in layer]
    if not rows:
        return '<p class="note">no attention heads</p>'
    return table(["layer", "head", "computes", "with", "where"], rows, wrap=True)


def model_html(model) -> str:
    """A model in a notebook: its size, its layers and what each head computes (no weights)."""
    layers = [[i, layer["n_head"], layer["d_head"], layer["d_mlp"]] for i, layer in enumerate(model.meta["layers"])]
    return (f"<div><b>{esc(model_repr(model))}</b>"
            + table(["layer", "heads", "d_head", "d_mlp"], layers) + heads_table(model) + "</div>")
