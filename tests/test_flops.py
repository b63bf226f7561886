"""The closed FLOP formula against an instrumented run of the forward pass, and the hand-made
(aab)* model's 3,985 FLOPs at 5 tokens."""

from __future__ import annotations

import numpy as np
import pytest

from instrumented_forward import count_last_position, count_whole_sequence
from model_zoo import handmade_module, model_variants, random_model, random_token_ids
from rasp_compile.runtime import execute
from rasp_compile.tools.flops import COMPONENTS, count_flops


def models():
    yield "handmade", handmade_module().build()
    for name, kwargs in model_variants():
        yield name, random_model(0, **kwargs)


MODELS = dict(models())


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("n_tokens", [1, 2, 5])
def test_formula_equals_instrumented_count(name, n_tokens):
    model = MODELS[name]
    ids = random_token_ids(model, n_tokens, batch=1)
    n_positions = ids.shape[1]
    assert count_whole_sequence(model, ids) == count_flops(model, n_positions)["total"]
    last, step_logits = count_last_position(model, ids)
    assert last == count_flops(model, n_positions, last_only=True)["total"]
    if model.meta["causal"]:  # a KV-cached step of a decoder is the full pass's last row
        np.testing.assert_allclose(step_logits, execute.logits(model, ids)[:, -1:], rtol=1e-5, atol=1e-5)


def test_handmade_model_costs_3985_flops_at_5_tokens():
    flops = count_flops(handmade_module().build(), 5)
    assert flops == {
        "embedding": 5 * 8,                         # wte[ids] + wpe
        "qkv projection": 2 * 5 * 8 * 24 + 5 * 24,  # [5,8] @ [8,24] + bias
        "scores": 2 * 5 * 5 * 8,                    # q k^T, one head of width 8
        "scale and mask": 5 * 5 + 5 * 5,            # / sqrt(8), + causal mask
        "softmax": 5 * 5 * 5,
        "weighted sum": 2 * 5 * 5 * 8,
        "attention out": 2 * 5 * 8 * 8 + 5 * 8,     # c_proj [8,8] + bias
        "MLP in": 0, "activation": 0, "MLP out": 0,
        "residual adds": 5 * 8,                     # one sub-layer
        "read-out": 2 * 5 * 8 * 2,                  # x @ unembed [8,2], no bias
        "output softmax": 5 * 5 * 2,
        "total": 3985,
    }


def test_components_are_ordered_and_sum_to_total():
    flops = count_flops(random_model(0, activation="gelu"), 6)
    assert list(flops) == [*COMPONENTS, "total"]
    assert flops["total"] == sum(flops[name] for name in COMPONENTS)
    assert flops["activation"] == 6 * (5 + 4) * 8  # gelu: 8 per element of both MLPs


def test_positions_must_fit_the_context():
    with pytest.raises(ValueError, match="1..6"):
        count_flops(random_model(0), 7)
