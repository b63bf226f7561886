"""`trace(model, tokens)`: one forward pass kept whole, to look at.

    t = rc.trace(model, ["b", "a", "c"])
    t.residual(1)          # the residual stream after layer 1: rows = positions, columns = dimensions
    t.sop("count")         # a named s-op read back from the residual, one value per token
    t.attention(0, 1)      # layer 0 head 1's pattern: rows = queries, columns = keys
    t.heads                # every head, with the select it computes
    t.output               # the model's prediction at every token

Positions are labelled `BOS` (when the model has one) and `i:token`; the BOS row is part of the
residual and of every pattern, but s-op values are given at the tokens only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import cast

import numpy as np

from .. import ir
from ..errors import InputError, NotInModel, NotInResidual
from ..runtime import execute, prediction
from ..runtime.model import Model
from ..safe_text import counted
from .folded import folded_message, folded_values, named_node, recorded_program
from .decode import Variable, decode, meaning, output_numbers, residual_labels, residual_variables
from .heads import HeadDescription, head_descriptions
from .html_report import trace_html
from .labelled import LabelledArray

BOS_ROW = "BOS"
WRITTEN_TOLERANCE = 1e-6  # a change above this means the stage wrote the variable (float32 noise is ~1e-7)


@dataclass(frozen=True)
class Stage:
    """The residual stream [n_positions, d_model] after the embedding or one sub-layer."""

    name: str  # "embedding", "layer 0 attention", "layer 0 MLP", ...
    layer: int | None
    x: np.ndarray


def token_text(token) -> str:
    """A token as a label: strings bare, other values as JSON writes them."""
    return token if isinstance(token, str) else json.dumps(token)


class Trace:
    """Everything one forward pass computes on `tokens` (see the module docstring)."""

    def __init__(self, model: Model, tokens: list):
        self.model = model
        self.tokens = list(tokens)
        if len(self.tokens) > model.meta["max_len"]:  # a trace is one pass: no sliding window
            raise InputError(f"an input of {len(self.tokens)} tokens is longer than max_len {model.meta['max_len']}; "
                             "a trace runs one forward pass over at most max_len tokens")
        ids = np.array([prediction.encode(model, self.tokens)])
        self.first = ids.shape[1] - len(self.tokens)  # 1 when position 0 is BOS
        steps = execute.trace(model, ids)
        x = model.params["wte"][ids[0]] + model.params["wpe"][: ids.shape[1]]
        self.stages = [Stage("embedding", None, x)]
        self.patterns = []  # per layer: [head, n, n]
        for i, (layer, step) in enumerate(zip(model.meta["layers"], steps)):
            if layer["n_head"]:
                self.stages.append(Stage(f"layer {i} attention", i, step["after_attn"][0]))
            if layer["d_mlp"]:
                self.stages.append(Stage(f"layer {i} MLP", i, step["after_mlp"][0]))
            self.patterns.append(step["attn_patterns"][0])
        self.after_layer = [step["after_mlp"][0] for step in steps]
        self.positions = tuple([BOS_ROW] * self.first + [f"{i}:{token_text(t)}" for i, t in enumerate(self.tokens)])
        self.labels = tuple(residual_labels(model.meta, model.d_model))
        self.variables: dict[str, Variable] = residual_variables(model.meta, model.d_model)
        self.head_table = head_descriptions(model.meta)
        self.output = self._predicted()
        self._writes: dict[str, list[int]] | None = None

    def _predicted(self) -> list:
        """The model's prediction at each token; a numerical one as the value it stands for (the
        read-out variable's nearest value, meta.sops), not float32's approximation of it."""
        predicted = prediction.predict(self.model, [self.tokens])[0] if self.tokens else []
        if self.model.meta["output"]["encoding"] != "numerical":
            return predicted
        numbers = output_numbers(self.variables)
        return [meaning(cast(float, v), numbers) for v in predicted]  # a numerical output's predictions are numbers

    @cached_property
    def program(self) -> ir.Program | None:
        """The program the model's meta records (its source, checked), or None when it has none."""
        return recorded_program(self.model.meta.get("source"))

    @property
    def heads(self) -> list[HeadDescription]:
        """Every head, layer by layer, with the select it computes."""
        return [head for layer in self.head_table for head in layer]

    @property
    def output_name(self) -> str:
        return self.model.meta["output"].get("name") or "output"

    def residual(self, layer: int | str) -> LabelledArray:
        """The residual stream after block `layer` (both sub-layers), or "embedding" before any:
        rows = positions, columns = the labelled dimensions of meta.residual."""
        if layer == "embedding":
            return LabelledArray(self.stages[0].x, self.positions, self.labels, "residual after the embedding")
        if not isinstance(layer, int) or not 0 <= layer < len(self.after_layer):
            raise NotInModel(f"layer {layer!r} out of range: the model has {len(self.after_layer)} layers "
                             "(or ask for \"embedding\")")
        return LabelledArray(self.after_layer[layer], self.positions, self.labels, f"residual after layer {layer}")

    def attention(self, layer: int, head: int) -> LabelledArray:
        """Head `head` of layer `layer`: [n_query, n_key] weights, titled with the select it computes."""
        if not 0 <= layer < len(self.patterns) or not 0 <= head < len(self.patterns[layer]):
            raise NotInModel(f"no head {head} in layer {layer}")
        return LabelledArray(self.patterns[layer][head], self.positions, self.positions,
                             self.head_table[layer][head].title, "unit")

    def sop(self, name: str) -> list:
        """The named s-op's value at each token, read from the residual stream (the output: the
        model's prediction). NotInResidual, saying why, when the residual does not hold it."""
        variable = self.variables.get(name)
        if variable is None or not variable.readable:
            if name == self.output_name:
                return list(self.output)
            folded = self._folded(name) if variable is None else None
            if folded is None:
                raise NotInResidual(self._missing(name, variable))
            return folded
        return decode(variable, self.stages[-1].x[self.first:])

    def _folded(self, name: str) -> list | None:
        """A map or sequence_map folded into its readers' weights, from the values the residual
        holds of what it reads (folded.py); None for anything else."""
        program = self.program
        node = named_node(program, name) if program is not None else None
        if node is None:
            return None

        def read(label: str) -> list | None:
            variable = self.variables.get(label)
            return decode(variable, self.stages[-1].x[self.first:]) if variable and variable.readable else None

        return folded_values(node, read, self.tokens, bool(self.model.meta.get("causal")))

    def sops(self) -> dict[str, list]:
        """Every variable the residual holds readably, decoded at the last stage."""
        return {name: decode(v, self.stages[-1].x[self.first:]) for name, v in self.variables.items() if v.readable}

    def writes(self) -> dict[str, list[int]]:
        """Each variable -> the indices into `stages` of the stages that change it (embedding: 0)."""
        if self._writes is None:
            self._writes = self._written()
        return self._writes

    def _written(self) -> dict[str, list[int]]:
        written: dict[str, list[int]] = {}
        for name, variable in self.variables.items():
            dims = list(variable.dims)
            previous = np.zeros_like(self.stages[0].x[:, dims])
            written[name] = []
            for i, stage in enumerate(self.stages):
                if np.abs(stage.x[:, dims] - previous).max(initial=0.0) > WRITTEN_TOLERANCE:
                    written[name].append(i)
                previous = stage.x[:, dims]
        return written

    def _missing(self, name: str, variable: Variable | None) -> str:
        if variable is not None:
            lost = ", ".join("none" if v is None else str(v) for v in variable.unseen)
            return (f"'{name}' is only partly in the residual stream: the compiler pruned the dimensions of "
                    f"{lost} (no weight reads them), so its value cannot be read back there")
        names = program_names(self.program)
        if names is not None and name not in names:
            return f"the program has no s-op named '{name}' (its names: {', '.join(sorted(names))})"
        return folded_message(name)

    def __repr__(self) -> str:
        return (f"<Trace of {counted(len(self.tokens), 'token')} through {counted(len(self.after_layer), 'layer')}, "
                f"{counted(len(self.heads), 'head')}, d_model {len(self.labels)}>")

    def _repr_html_(self) -> str:
        return trace_html(self)


def program_names(program: ir.Program | None) -> set[str] | None:
    """The names a model's recorded program (folded.recorded_program) binds to s-ops, or None."""
    if program is None:
        return None
    return {node.label for node in program.nodes() if isinstance(node, ir.SOp) and node.label} | {program.output_name}


def trace(model: Model, tokens: list) -> Trace:
    """Run `model` on `tokens` and keep every residual stream and attention pattern."""
    return Trace(model, tokens)
