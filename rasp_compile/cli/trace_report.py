"""`rasp-run WEIGHTS INPUT --trace`: what the model computes, as a teacher shows it.

After the embedding and after each sub-layer, the residual stream decoded back into named s-op
values at every token position, from `meta.residual`: the `label:value` dimensions of one label
form a categorical s-op, shown as the value of its largest dimension when that exceeds 0.5 and
`none` otherwise; a dimension named without a value is a numerical s-op, shown as its number;
`bos` is hidden. Rows an s-op's sub-layer wrote are marked; the last stage is the read-out's
prediction, under the output's name. Then each head's attention pattern as
a heatmap: query rows x key columns, the BOS column labelled.
"""

from __future__ import annotations

import numpy as np
from rich.table import Table

from ..runtime.forward import encode, predict, trace
from ..runtime.model import Model
from ..safe_text import markup_safe
from .common import check_one_pass
from ..runtime.token_text import value_text

BOS_LABEL = "bos"
ONE_HOT_THRESHOLD = 0.5  # a categorical dimension this high is the value; all below: none
WRITTEN_TOLERANCE = 1e-6  # a change above this means the sub-layer wrote the s-op


def residual_groups(model: Model) -> dict[str, list[tuple[int, str | None]]]:
    """label -> its (dimension, value text) pairs; value text None for a numerical s-op.
    Without meta.residual every dimension is its own numerical `d<i>`."""
    labels = model.meta.get("residual") or [f"d{i}" for i in range(model.d_model)]
    groups: dict[str, list[tuple[int, str | None]]] = {}
    for dim, label in enumerate(labels):
        if label != BOS_LABEL:
            name, colon, value = label.partition(":")
            groups.setdefault(name, []).append((dim, value if colon else None))
    return groups


def decode(x: np.ndarray, groups: dict) -> dict[str, list[str]]:
    """[n, d_model] residual -> label -> the value text at each of the n positions."""
    decoded = {}
    for label, dims in groups.items():
        columns = x[:, [dim for dim, _ in dims]]  # [n, len(dims)]
        if dims[0][1] is None:
            decoded[label] = [f"{v:.4g}" for v in columns.sum(axis=1)]
        else:
            decoded[label] = [dims[int(np.argmax(row))][1] if row.max() > ONE_HOT_THRESHOLD else "none"
                              for row in columns]
    return decoded


def measure(model: Model, tokens: list) -> dict:
    """The decoded stream per stage (embedding, then each present sub-layer) and every pattern."""
    check_one_pass(model, tokens, "--trace")
    ids = np.array([encode(model, tokens)])
    first = ids.shape[1] - len(tokens)  # 1 when position 0 is BOS
    groups = residual_groups(model)
    steps = trace(model, ids)  # first: it refuses a model whose numbers overflow, embedding included
    x = model.params["wte"][ids[0]] + model.params["wpe"][: ids.shape[1]]  # [n, d_model]
    stages = [_stage("embedding", np.zeros_like(x), x, groups, first)]
    attention = []
    for i, (layer, step) in enumerate(zip(model.meta["layers"], steps)):
        for sublayer, key, present in (("attention", "after_attn", layer["n_head"]),
                                       ("MLP", "after_mlp", layer["d_mlp"])):
            if present:
                stages.append(_stage(f"layer {i} {sublayer}", x, step[key][0], groups, first))
                x = step[key][0]
        attention += [{"layer": i, "head": h, "pattern": np.round(pattern, 4).tolist()}
                      for h, pattern in enumerate(step["attn_patterns"][0])]
    stages.append(_readout_stage(model, tokens, stages[-1]))
    positions = ["BOS"] * first + [f"{i}:{value_text(t)}" for i, t in enumerate(tokens)]
    return {"positions": positions, "first_token": first, "stages": stages, "attention": attention}


def _readout_stage(model: Model, tokens: list, last: dict) -> dict:
    """The prediction `unembed` reads at each position, under the output's name: the output
    s-op may have no dimensions of its own when the read-out computes it from its inputs."""
    name = model.meta["output"].get("name") or "output"
    predicted = [value_text(v) for v in predict(model, [tokens])[0]]
    return {"stage": "read-out", "written": [name], "values": {**last["values"], name: predicted}}


def _stage(name: str, before: np.ndarray, after: np.ndarray, groups: dict, first: int) -> dict:
    """One stage: the decoded values at token positions and the labels this stage wrote."""
    written = [label for label, dims in groups.items()
               if np.abs(after - before)[:, [d for d, _ in dims]].max() > WRITTEN_TOLERANCE]
    return {"stage": name, "written": written, "values": decode(after[first:], groups)}


def render(report: dict, console) -> None:
    first, positions = report["first_token"], report["positions"]
    shown: list[str] = []  # s-ops written so far, in the order they appeared
    for stage in report["stages"]:
        shown += [label for label in stage["written"] if label not in shown]
        table = Table("s-op", *map(markup_safe, positions[first:]), title=stage["stage"], title_justify="left")
        for label in shown:
            new = label in stage["written"]
            table.add_row(("* " if new else "  ") + markup_safe(label), *map(markup_safe, stage["values"][label]),
                          style="bold" if new else "")
        console.print(table)
    console.print("* written by this sub-layer")
    for head in report["attention"]:
        heatmap = Table("query \\ key", *map(markup_safe, positions), title=f"layer {head['layer']} head {head['head']} attention",
                        title_justify="left")
        for label, row in zip(positions[first:], head["pattern"][first:]):
            heatmap.add_row(markup_safe(label), *(_cell(w) for w in row))
        console.print(heatmap)


def _cell(weight: float) -> str:
    """A weight as a shaded cell: darker for 0, lighter towards 1, blank below 0.005."""
    shade = int(40 + 215 * weight)
    ink = "black" if shade > 128 else "white"
    return f"[{ink} on rgb({shade},{shade},{shade})]{'' if weight < 0.005 else f'{weight:.2f}':>4}[/]"
