"""HTML views of a model, a trace, a head and a labelled array (the notebook's `_repr_html_`), and
`report(model, tokens)`: the one self-contained page `rasp-run --html` writes.

The page holds the program's source, the residual stream after the embedding and each sub-layer
decoded into s-ops per position, each head's attention pattern titled with the select it computes,
and every weight matrix with labelled axes, all drawn as inline SVG (svg.py). It loads nothing:
no script, no stylesheet, font or image from anywhere, and its Content-Security-Policy forbids
fetching any. Every string from the program or the file goes through `html.escape`.
"""

from __future__ import annotations

import html

import numpy as np

from ..runtime.model import Model, n_params
from .decode import AMBIGUOUS, decode
from .heads import HeadWeights, head_descriptions, head_weights
from .inspect_weights import labelled_blocks
from .labelled import LabelledArray
from .svg import heatmap, nonzero_part
from .trace import Trace, trace

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; margin-bottom: 0.3em; }
pre.source { background: #f6f6f6; padding: 0.6em; overflow-x: auto; }
table.rc { border-collapse: collapse; font-family: monospace; font-size: 12px; margin: 0.4em 0 1em; }
table.rc td, table.rc th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; white-space: nowrap; }
table.rc th { background: #f0f0f0; } tr.written td { font-weight: bold; background: #eef5ff; }
figure { margin: 0.5em 1.5em 1.2em 0; } figcaption { font-size: 12px; color: #555; max-width: 40em; }
figure .title { font-family: monospace; font-size: 12px; font-weight: bold; max-width: 60em; margin-bottom: 4px; }
.figures { display: flex; flex-wrap: wrap; align-items: flex-start; }
.note { color: #555; font-size: 0.9em; }
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'"  # nothing may be fetched, no script may run
MAX_SHOWN_SOPS = 40  # rows of a decoded stage table in a notebook view (the page shows them all)


def esc(value) -> str:
    return html.escape(str(value))


def page(title: str, body: str) -> str:
    """A whole HTML document around `body`."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")


def table(header: list, rows: list[list], written: list[bool] | None = None) -> str:
    """An HTML table; rows marked in `written` are highlighted."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        f'<tr{" class=written" if written and written[i] else ""}>' + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>"
        for i, row in enumerate(rows))
    return f'<table class="rc"><tr>{head}</tr>{body}</table>'


def value_text(value) -> str:
    """A decoded value as a report shows it: none for None, numbers as they mean."""
    if value is None:
        return "none"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.4g}"
    return "(ambiguous)" if value == AMBIGUOUS else str(value)


def source_html(source: str) -> str:
    lines = source.rstrip("\n").split("\n") if source else []
    numbered = "\n".join(f"{i + 1:>3}  {line}" for i, line in enumerate(lines))
    return f'<pre class="source">{esc(numbered)}</pre>' if lines else '<p class="note">(no source recorded)</p>'


def labelled_array_html(array: LabelledArray, scale: str = "signed") -> str:
    return heatmap(array.array, array.rows, array.columns, array.title or "array", scale)


def heads_table(model: Model) -> str:
    """Every head and what it computes, as a table."""
    rows = [[d.layer, d.head, d.title.split(": ", 1)[1], d.place] for layer in head_descriptions(model.meta)
            for d in layer]
    return table(["layer", "head", "computes", "where"], rows) if rows else '<p class="note">no attention heads</p>'


def model_html(model: Model) -> str:
    """A model in a notebook: its size, its layers and what each head computes (no weights)."""
    meta = model.meta
    layers = [[i, layer["n_head"], layer["d_head"], layer["d_mlp"]] for i, layer in enumerate(meta["layers"])]
    summary = (f"{model.n_layers} layers, d_model {model.d_model}, {n_params(model):,} parameters; "
               f"vocab {', '.join(map(str, meta['vocab']))}; max_len {meta['max_len']}; "
               f"{'causal' if meta['causal'] else 'not causal'}; output {meta['output'].get('name') or 'output'} "
               f"({meta['output']['encoding']})")
    return (f"<div><b>Model</b>: {esc(summary)}"
            + table(["layer", "heads", "d_head", "d_mlp"], layers) + heads_table(model) + "</div>")


def stage_table(t: Trace, stage_index: int) -> str:
    """The s-ops written so far at every token after one stage, the ones it wrote highlighted."""
    x = t.stages[stage_index].x[t.first:]
    rows, written = [], []
    for name, stages in t.writes().items():
        if stages and stages[0] <= stage_index:
            variable = t.variables[name]
            values = decode(variable, x) if variable.readable else ["(pruned)"] * len(t.tokens)
            rows.append([name, *map(value_text, values)])
            written.append(stage_index in stages)
    return table(["s-op", *t.positions[t.first:]], rows, written)


def attention_figures(t: Trace) -> str:
    """Every head's pattern, titled with what it computes, side by side."""
    figures = []
    for layer, patterns in enumerate(t.patterns):
        for head in range(len(patterns)):
            pattern = t.attention(layer, head)
            place = t.head_table[layer][head].place
            figures.append(heatmap(pattern.array, pattern.rows, pattern.columns, pattern.title, "unit",
                                   caption=f"rows: queries, columns: keys{'; ' + place if place else ''}"))
    return f'<div class="figures">{"".join(figures)}</div>' if figures else '<p class="note">no attention heads</p>'


def trace_html(t: Trace, max_sops: int | None = MAX_SHOWN_SOPS) -> str:
    """A trace in a notebook: the decoded s-ops after the last stage, the residual heatmap, and every
    head's pattern."""
    final = t.residual(len(t.after_layer) - 1) if t.after_layer else t.residual("embedding")
    matrix, rows, columns, note = nonzero_part(final.array, final.rows, final.columns)
    sops = list(t.sops().items())[:max_sops]
    decoded = table(["s-op", *t.positions[t.first:]], [[name, *map(value_text, v)] for name, v in sops])
    output = table([t.output_name, *t.positions[t.first:]], [["prediction", *map(value_text, t.output)]])
    return (f"<div><b>Trace</b> of {esc(' '.join(t.positions[t.first:]))}" + output + decoded
            + heatmap(matrix, rows, columns, final.title, caption=note) + attention_figures(t) + "</div>")


def head_weights_html(weights: HeadWeights) -> str:
    parts = [f"<div><b>{esc(weights.description.title)}</b>"]
    for array in (weights.QK, weights.OV):
        matrix, rows, columns, note = nonzero_part(array.array, array.rows, array.columns)
        parts.append(heatmap(matrix, rows, columns, array.title, caption=note))
    return "".join(parts) + "</div>"


def weights_section(model: Model) -> str:
    """Every weight matrix (zero rows and columns left out), and each head's QK form."""
    parts = []
    for layer, heads in enumerate(head_descriptions(model.meta)):
        for description in heads:
            qk = head_weights(model, layer, description.head).QK
            matrix, rows, columns, note = nonzero_part(qk.array, qk.rows, qk.columns)
            parts.append(heatmap(matrix, rows, columns, f"{description.title}: QK (rows: query, columns: key)",
                                 caption=note or "every row and column shown"))
    for block in labelled_blocks(model):
        matrix, rows, columns, note = nonzero_part(block.matrix, block.row_labels, block.col_labels)
        if matrix.size:
            parts.append(heatmap(matrix, rows, columns, f"{block.name} [{block.matrix.shape[0]} x "
                                 f"{block.matrix.shape[1]}]", caption=note))
        else:
            parts.append(f'<p class="note">{esc(block.name)}: all zero</p>')
    return f'<div class="figures">{"".join(parts)}</div>'


def report(model: Model, tokens: list, title: str = "rasp-compile report") -> str:
    """The whole page for one input: source, decoded residual stream per stage, attention, weights."""
    t = trace(model, tokens)
    stages = "".join(f"<h3>{esc(stage.name)}</h3>{stage_table(t, i)}" for i, stage in enumerate(t.stages))
    output = table([t.output_name, *t.positions[t.first:]], [["prediction", *map(value_text, t.output)]])
    body = (f"<h1>{esc(title)}</h1>"
            f'<p>Input: {esc(" ".join(t.positions[t.first:]))}</p>{output}'
            f"<h2>Program</h2>{source_html(model.meta.get('source') or '')}"
            f"<h2>Model</h2>{model_html(model)}"
            f"<h2>Residual stream, decoded into s-ops</h2>"
            f'<p class="note">After the embedding and each sub-layer: each s-op\'s value at every token; '
            f"rows in bold are the ones that sub-layer wrote.</p>{stages}"
            f"<h2>Attention</h2>{attention_figures(t)}"
            f"<h2>Weights</h2>{weights_section(model)}")
    return page(title, body)
