"""`rasp-run --accuracy`'s inputs and model path (cli/accuracy.py, tools/all_inputs.py, cli/comparison.py):
inputs drawn or enumerated as vocab-index arrays, and the model run on them, must be what `predict`
gives on the same tokens."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from model_zoo import model_variants, random_model
from rasp_compile.cli.accuracy import sampled_inputs
from rasp_compile.tools.all_inputs import chunk_inputs, chunks
from rasp_compile.cli.comparison import model_outputs
from rasp_compile.runtime import prediction
from rasp_compile.runtime.model import Model


def test_sampled_inputs_are_seeded_and_cover_every_length():
    model = random_model(0, max_len=12, n_tokens=3)
    by_length = sampled_inputs(model, 3_000, seed=4)
    assert sorted(by_length) == list(range(1, 13))
    assert sum(map(len, by_length.values())) == 3_000
    assert all(picks.shape[1] == n and picks.min() >= 0 and picks.max() < 3 for n, picks in by_length.items())
    again = sampled_inputs(model, 3_000, seed=4)
    assert all(np.array_equal(by_length[n], again[n]) for n in by_length)
    other = sampled_inputs(model, 3_000, seed=5)
    assert not all(np.array_equal(by_length[n], other[n]) for n in by_length)


def test_exhaustive_inputs_are_every_sequence_once():
    model = random_model(0, max_len=4, n_tokens=2)
    vocab_size = len(prediction.input_vocab(model))
    enumerated = [tuple(row) for chunk in chunks(vocab_size, 4) for row in chunk_inputs(chunk, vocab_size).tolist()]
    assert enumerated == [row for n in range(1, 5) for row in product(range(vocab_size), repeat=n)]


@pytest.mark.parametrize("name, kwargs", model_variants())
def test_model_outputs_are_predict_on_the_same_tokens(name, kwargs):
    model = random_model(7, max_len=6, **kwargs)
    vocab = prediction.input_vocab(model)
    rng = np.random.default_rng(1)
    for n in (1, 3, 6):
        picks = rng.integers(0, len(vocab), size=(20, n))
        tokens = [[vocab[j] for j in row] for row in picks.tolist()]
        assert model_outputs(model, picks) == prediction.predict(model, tokens)


def test_decode_keeps_tuple_values_whole_and_null_as_none():
    model = random_model(2)
    values = [(1, 2), "t1", None]
    model = Model({**model.meta, "output": {**model.meta["output"], "values": values}}, model.params)
    token_logits = np.array([[[0.0, 1.0, 0.0], [3.0, 1.0, 0.0], [0.0, 0.0, 2.0], [1.0, 1.0, 0.0]]])
    assert prediction.decode(model, token_logits) == [["t1", (1, 2), None, (1, 2)]]  # a tie: the first column
