"""A residual coordinate with one MLP's share summed in an order of our choosing, for the tests
that hold a step MLP's recorded bound against the orders a matmul (or an independent forward
pass) may take."""

from __future__ import annotations

import numpy as np

import rasp_compile as rc


def column_in_order(model, tokens: list, label: str, order) -> np.ndarray:
    """The final residual's coordinate of `label` at each token, with the share the last MLP
    writing it adds taken again: its hidden units' products (and c_proj's bias last) added in the
    model's dtype one by one in the order `order(row)` gives (each term is the same product in
    every order, as a hidden unit reads one coordinate). [len(tokens)]"""
    trace = rc.trace(model, tokens)
    column = trace.variables[label].dims[0]
    layer = max(i for i in range(len(model.meta["layers"])) if f"blocks.{i}.mlp.c_proj.w" in model.params
                and np.any(model.params[f"blocks.{i}.mlp.c_proj.w"][:, column]))
    w_in, b_in = model.params[f"blocks.{layer}.mlp.c_fc.w"], model.params[f"blocks.{layer}.mlp.c_fc.b"]
    w_out, b_out = model.params[f"blocks.{layer}.mlp.c_proj.w"], model.params[f"blocks.{layer}.mlp.c_proj.b"]
    mlp = next(i for i, stage in enumerate(trace.stages) if stage.name == f"layer {layer} MLP")
    before, after = (trace.stages[i].x[trace.first:] for i in (mlp - 1, mlp))
    terms = np.maximum(before @ w_in + b_in, 0) * w_out[:, column]
    ordered = [np.concatenate([order(row), [b_out[column]]]) for row in terms]
    share = np.array([np.cumsum(row, dtype=model.dtype)[-1] for row in ordered])
    final = trace.stages[-1].x[trace.first:, column]
    return (final - (after[:, column] - before[:, column]) + share).astype(float)  # in the model's dtype, as a residual adds


def shuffled(seed: int):
    """A seeded random order."""
    rng = np.random.default_rng(seed)
    return lambda row: rng.permutation(row)


def positives_first(row):
    """Every positive term before every negative one: the order whose partial sums grow largest."""
    return np.concatenate([row[row > 0], row[row < 0]])


def backwards(row):
    return row[::-1]
