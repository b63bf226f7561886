"""The HTML views of a trace, and `report(trace)`: the one self-contained page `rasp-run --html`
writes (docs/inspect.md).

The page holds the program's source, the residual stream after the embedding and each sub-layer
decoded into s-ops per position, each head's attention pattern titled with the select it computes,
and every weight matrix with labelled axes, all drawn as inline SVG (svg.py). It loads nothing:
no script, no stylesheet, font or image from anywhere, and its Content-Security-Policy forbids
fetching any. Every string from the program or the file goes through `html.escape`.

A trace is read through its attributes only (tools/trace.py imports this module for its own
notebook view).
"""

from __future__ import annotations

from .decode import decode
from .heads import head_descriptions, head_weights
from .html_parts import esc, page, source_html, table, value_text
from .inspect_weights import labelled_blocks
from .model_view import model_html
from .graph_view import graph_svg
from .svg import heatmap, nonzero_heatmap, scale_of

MAX_SHOWN_SOPS = 40  # rows of the decoded table in a notebook view (the page shows them all)


def stage_table(t, stage_index: int) -> str:
    """The s-ops written so far at every token after one stage, the ones it wrote highlighted."""
    x = t.stages[stage_index].x[t.first:]
    rows, written = [], []
    for name, stages in t.writes().items():
        if stages and stages[0] <= stage_index:
            rows.append([name, *map(value_text, decode(t.variables[name], x))])
            written.append(stage_index in stages)
    return table(["s-op", *t.positions[t.first:]], rows, written)


def attention_figures(t) -> str:
    """Every head's pattern, titled with what it computes, side by side, each axis labelled with
    the values its select compares (`1:a  count=2`); one scale (0 to 1) for the whole panel."""
    figures = []
    for layer, patterns in enumerate(t.patterns):
        for head in range(len(patterns)):
            pattern = t.attention(layer, head)
            description = t.head_table[layer][head]
            rows = compared(t, pattern.rows, [s.queries for s in description.selects])
            columns = compared(t, pattern.columns, [s.keys for s in description.selects])
            place = description.place
            figures.append(heatmap(pattern.array, rows, columns, pattern.title, pattern.scale,
                                   caption=f"rows: queries, columns: keys{'; ' + place if place else ''}"))
    return f'<div class="figures">{"".join(figures)}</div>' if figures else '<p class="note">no attention heads</p>'


def compared(t, positions, names: list[str]) -> list[str]:
    """Each position's label followed by the value at that token of each s-op in `names` (those
    the trace can read; BOS as it is): `2:c count=2`."""
    columns = []
    for name in dict.fromkeys(names):
        try:
            columns.append((name, t.sop(name)))
        except LookupError:
            continue
    labels = list(positions[:t.first])
    for i, position in enumerate(positions[t.first:]):
        labels.append(" ".join([position, *(f"{name}={value_text(values[i])}" for name, values in columns)]))
    return labels


def output_table(t) -> str:
    return table([t.output_name, *t.positions[t.first:]], [["prediction", *map(value_text, t.output)]])


def trace_html(t, max_sops: int | None = MAX_SHOWN_SOPS) -> str:
    """A trace in a notebook: the prediction, the decoded s-ops, the last residual stream as a
    heatmap, and every head's pattern."""
    final = t.residual(len(t.after_layer) - 1) if t.after_layer else t.residual("embedding")
    sops = list(t.sops().items())[:max_sops]
    decoded = table(["s-op", *t.positions[t.first:]], [[name, *map(value_text, v)] for name, v in sops])
    return (f"<div><b>{esc(repr(t))}</b>" + output_table(t) + decoded
            + nonzero_heatmap(final.array, final.rows, final.columns, final.title) + attention_figures(t) + "</div>")


def weights_section(model) -> str:
    """Each head's QK form, then every weight matrix (zero rows and columns left out)."""
    parts = []
    qks = [(d, head_weights(model, layer, d.head).QK)
           for layer, heads in enumerate(head_descriptions(model.meta)) for d in heads]
    largest = scale_of([qk.array for _, qk in qks])  # one scale for the panel of QK forms
    for description, qk in qks:
        parts.append(nonzero_heatmap(qk.array, qk.rows, qk.columns, f"{description.title}: QK (rows: query, "
                                     "columns: key; 1: the bias)", "every row and column shown", largest))
    for block in labelled_blocks(model):
        if block.matrix.any():
            parts.append(nonzero_heatmap(block.matrix, block.row_labels, block.col_labels,
                                         f"{block.name} [{block.matrix.shape[0]} x {block.matrix.shape[1]}]"))
        else:
            parts.append(f'<p class="note">{esc(block.name)}: all zero</p>')
    return f'<div class="figures">{"".join(parts)}</div>'


def report(t, title: str = "rasp-compile report") -> str:
    """The whole page for one trace (tools/trace.py): source, decoded residual stream per stage,
    attention, weights."""
    stages = "".join(f"<h3>{esc(stage.name)}</h3>{stage_table(t, i)}" for i, stage in enumerate(t.stages))
    body = (f"<h1>{esc(title)}</h1>"
            f'<p class="input">Input: {esc(" ".join(t.positions[t.first:]))}</p>{output_table(t)}'
            f"<h2>Program</h2>{source_html(t.model.meta.get('source') or '')}"
            f"<h2>Program graph</h2>"
            f'<p class="note">Each s-op in the column of the stage that writes it, an arrow from each s-op to '
            f"those computed from it; dashed: not in the residual stream (folded into what reads it).</p>"
            f"{graph_svg(t)}"
            f"<h2>Model</h2>{model_html(t.model)}"
            f"<h2>Residual stream, decoded into s-ops</h2>"
            f'<p class="note">After the embedding and each sub-layer: each s-op\'s value at every token; '
            f"highlighted rows are the ones that sub-layer wrote.</p>{stages}"
            f"<h2>Attention</h2>{attention_figures(t)}"
            f"<h2>Weights</h2>{weights_section(t.model)}")
    return page(title, body)
