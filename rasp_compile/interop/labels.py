"""What a converted model's numbers mean, from the weights file's meta: the label of every residual
dimension, the token of every input id, the value of every logit column, and what every head
computes, each by the TransformerLens hook that shows it (docs/interop.md). Plain Python: no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..runtime.model import Model
from ..safe_text import terminal_safe
from ..tools.decode import residual_labels


@dataclass(frozen=True)
class Labels:
    """The meaning of a converted model's activations, axis by axis.

    residual    [d_model] labels ("tokens:a", "indices:3", ...): the last axis of hook_embed +
                hook_pos_embed and of blocks.{i}.hook_resid_pre / hook_resid_mid / hook_resid_post,
                hook_attn_out, hook_mlp_out
    vocab       [d_vocab] the token of each input id (BOS at `bos_id`): what `tl_tokens` encodes
    bos_id      the id every input starts with, or None for a model without BOS
    encoding    the output's encoding: "categorical" or "numerical"
    output      [d_vocab_out] the value each logit column stands for (None for none); a numerical
                output has one column, whose logit is the value itself (labelled by the name)
    output_name the name of the program's output s-op
    heads       per layer, per TransformerLens head (n_heads of them, the head axis of
                blocks.{i}.attn.hook_pattern, hook_z, ...): the model's description of the head
                (meta.heads: the select it scores, the s-op it writes), {} for a head of the model
                whose file carries no description, None for a zero head added as padding
    d_mlp       per layer, how many MLP units (the last axis of blocks.{i}.mlp.hook_post) are the
                model's; the rest are zero padding
    source      the program's text
    """

    residual: tuple[str, ...]
    vocab: tuple
    bos_id: int | None
    encoding: str
    output: tuple
    output_name: str
    heads: tuple[tuple[dict | None, ...], ...]
    d_mlp: tuple[int, ...]
    source: str

    def __repr__(self) -> str:  # short: the source and descriptions can be long
        heads = len(self.heads[0]) if self.heads else 0
        return (f"Labels({len(self.residual)} residual dims, {len(self.heads)} layers of {heads} heads, "
                f"{len(self.vocab)} ids, {len(self.output)} {self.encoding} output columns)")

    def describe_head(self, layer: int, head: int) -> str:
        """One line: what head `head` of layer `layer` computes, as far as the file says (its text
        made safe to print on a terminal)."""
        description = self.heads[layer][head]
        if description is None:
            return f"L{layer}H{head}: zero padding (the layer has {self.n_real_heads(layer)} heads)"
        select = description.get("select")  # the selector as the program writes it
        sop = description.get("sop") or description.get("writes")  # the s-op (or variable) it computes
        if select is None and sop is None:
            return f"L{layer}H{head}: a head of the model (its file does not describe it)"
        text = f"L{layer}H{head}: {select if select is not None else 'a head'}" + (f" -> {sop}" if sop else "")
        return terminal_safe(text)

    def n_real_heads(self, layer: int) -> int:
        """How many of the layer's heads are the model's (they come first)."""
        return sum(description is not None for description in self.heads[layer])


def _head_descriptions(meta: dict) -> list | None:
    """meta.heads when it has the shape meta.layers implies (per layer, per head, an object);
    None otherwise: the description is optional and a file may predate it."""
    heads = meta.get("heads")
    layers = meta["layers"]
    if not (isinstance(heads, list) and len(heads) == len(layers)):
        return None
    for layer, described in zip(layers, heads):
        if not (isinstance(described, list) and len(described) == layer["n_head"]
                and all(isinstance(head, dict) for head in described)):
            return None
    return heads


def labels_of(model: Model, n_heads: int) -> Labels:
    """The labels of `model` converted with `n_heads` heads in every layer."""
    meta = model.meta
    described = _head_descriptions(meta)
    heads = []
    for i, layer in enumerate(meta["layers"]):
        own = [dict(described[i][h]) if described else {} for h in range(layer["n_head"])]
        heads.append(tuple(own + [None] * (n_heads - layer["n_head"])))
    output = meta["output"]
    name = output.get("name") or "output"
    return Labels(
        residual=tuple(residual_labels(meta, model.d_model)),
        vocab=tuple(meta["vocab"]),
        bos_id=meta["bos_id"],
        encoding=output["encoding"],
        output=tuple(output["values"]) if output["encoding"] == "categorical" else (name,),
        output_name=name,
        heads=tuple(heads),
        d_mlp=tuple(layer["d_mlp"] for layer in meta["layers"]),
        source=meta.get("source", ""),
    )
