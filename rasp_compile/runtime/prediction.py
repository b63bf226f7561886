"""Tokens in, values out: `encode` (tokens to the ids `logits` takes, BOS first), `decode` (logits
to `meta.output.values`), `predict` (both, batched by length, a causal model sliding over inputs
longer than max_len) and `complete` (a decoder's continuation).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..errors import InputError
from ..ir import Value
from .execute import logits
from .model_like import ModelLike
from .token_keys import token_key


def input_vocab(model: ModelLike) -> list[Value]:
    """The tokens an input may hold: the vocab without the BOS marker."""
    return [token for i, token in enumerate(model.meta["vocab"]) if i != model.meta["bos_id"]]


def encode(model: ModelLike, tokens: list[Value]) -> list[int]:
    """Token values to ids, BOS first when the model has one. Tokens match the vocab by value."""
    return encode_batch(model, [tokens])[0].tolist()


def encode_batch(model: ModelLike, inputs: list[list[Value]]) -> np.ndarray:  # n tokens each -> [batch, (1 +) n]
    """`encode` of inputs of one length, as one id array: each distinct token (by type and value)
    is matched to the vocab once, not once per position (a large --accuracy encodes millions)."""
    id_of = {token_key(token): i for i, token in enumerate(model.meta["vocab"])
             if i != model.meta["bos_id"]}
    matched: dict[tuple[type, Value], int] = {}  # (type, token) -> id, for the tokens met so far

    def id_for(token: Value) -> int:
        try:
            return matched[type(token), token]
        except (KeyError, TypeError):  # not met yet, or unhashable (then never a vocab token)
            key = token_key(token)
            if key not in id_of:
                raise InputError(f"token {token!r} is not in the vocab {input_vocab(model)!r}") from None
            matched[type(token), token] = id_of[key]
            return id_of[key]

    bos = [] if model.meta["bos_id"] is None else [model.meta["bos_id"]]
    return np.array([bos + [id_for(token) for token in tokens] for tokens in inputs], dtype=np.int64)


def _token_logits(model: ModelLike, inputs: list[list[Value]]) -> np.ndarray:  # -> [batch, n, n_out]
    """The logits at every token (not BOS) of inputs that all have the same length n.

    A causal model reads an input longer than max_len through a sliding window: its output at
    position i depends on tokens up to i only, so it is the last output of the window of the
    max_len tokens ending at i (what `complete` feeds it too)."""
    n, max_len = len(inputs[0]), model.meta["max_len"]
    if n == 0:
        return np.zeros((len(inputs), 0, model.n_out), model.dtype)
    if n <= max_len:
        ids = encode_batch(model, inputs)
        return logits(model, ids)[:, ids.shape[1] - n:]
    if not model.meta["causal"]:
        raise InputError(f"input of {n} tokens is longer than max_len {max_len}")
    first = _token_logits(model, [tokens[:max_len] for tokens in inputs])  # [batch, max_len, n_out]
    windows = [tokens[end - max_len:end] for tokens in inputs for end in range(max_len + 1, n + 1)]
    later = _token_logits(model, windows)[:, -1].reshape(len(inputs), n - max_len, -1)
    return np.concatenate([first, later], axis=1)



def decode(model: ModelLike, token_logits: np.ndarray) -> list[list[Value]]:  # [batch, n, n_out] -> n values each
    """Per input, the prediction at each position: the argmax column's `meta.output.values` entry
    (None for null; the first column on a tie) for a categorical output, the logit itself for a
    numerical one. One NumPy lookup for the whole batch (--accuracy decodes millions)."""
    output = model.meta["output"]
    if output["encoding"] == "numerical":
        return token_logits[..., 0].tolist()
    values = np.empty(len(output["values"]), dtype=object)  # filled one by one: a tuple stays one value
    for column, value in enumerate(output["values"]):
        values[column] = value
    return values[np.argmax(token_logits, axis=-1)].tolist()


def predict(model: ModelLike, inputs: list[list[Value]]) -> list[list[Value]]:
    """Per input, the model's output at each token: the argmax column's `meta.output.values` entry
    (None for null) for a categorical output, the logit itself for a numerical one. Inputs of the
    same length run as one batch."""
    outputs: list[list[Value]] = [[] for _ in inputs]
    by_length: dict[int, list[int]] = defaultdict(list)
    for i, tokens in enumerate(inputs):
        by_length[len(tokens)].append(i)
    for members in by_length.values():
        batch_outputs = decode(model, _token_logits(model, [list(inputs[i]) for i in members]))
        for i, output in zip(members, batch_outputs):
            outputs[i] = output
    return outputs


def can_complete(model: ModelLike) -> bool:
    """Whether the model continues sequences: causal, with categorical outputs that are all
    tokens of its own vocab (docs/cli.md, rasp-run)."""
    output = model.meta["output"]
    vocab = {token_key(token) for token in input_vocab(model)}
    return (model.meta["causal"] and output["encoding"] == "categorical"
            and all(value is not None and token_key(value) in vocab for value in output["values"]))


def complete(model: ModelLike, tokens: list[Value], steps: int = 10) -> list[Value]:
    """The continuation of `tokens` by `steps` predicted tokens, each predicted from the last
    position of at most the last max_len tokens."""
    if not can_complete(model):
        raise InputError("this model does not complete sequences "
                         "(not causal, or its outputs are not tokens of its vocab)")
    if not tokens:
        raise InputError("nothing to complete: the input is empty")
    sequence = list(tokens)
    for _ in range(steps):
        window = sequence[-model.meta["max_len"]:]
        sequence.append(predict(model, [window])[0][-1])
    return sequence[len(tokens):]
