"""`model.apply(["BOS", ...])` and `program(xs)` (which names `rasp.evaluate`), as tracr's compiled models and expressions are
used (runtime/tracr_apply.py, docs/from_tracr.md); tracr itself: tests/test_tracr_surface.py."""

from __future__ import annotations

import numpy as np
import pytest

import rasp_compile as rc
from rasp_compile import rasp
from rasp_compile.errors import InputError

LENGTH = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE))
REVERSE = rasp.Aggregate(rasp.Select(rasp.indices, LENGTH - rasp.indices - 1, rasp.Comparison.EQ),
                         rasp.tokens).named("reverse")


@pytest.fixture(scope="module")
def model():
    return rc.compile_rasp_to_model(REVERSE, vocab={1, 2, 3}, max_seq_len=5, compiler_bos="BOS")


def test_apply_decodes_bos_then_the_output_at_each_token(model):
    for xs in ([1, 2, 3], [3], [2, 2, 1, 3, 1]):
        assert model.apply(["BOS", *xs]).decoded == ["BOS", *rc.run(model, xs)] == ["BOS", *xs[::-1]]


def test_apply_residuals_are_the_stream_after_each_sub_layer(model):
    out = model.apply(["BOS", 1, 2, 3])
    assert len(out.residuals) == len(out.layer_outputs) == 2 * model.n_layers
    assert all(r.shape == (1, 4, model.d_model) for r in out.residuals)
    running = out.input_embeddings
    for residual, added in zip(out.residuals, out.layer_outputs):
        np.testing.assert_allclose(running + added, residual, atol=1e-6)
        running = residual
    np.testing.assert_array_equal(out.transformer_output, out.residuals[-1])
    assert out.logits.shape == (1, 4, model.n_out)


def test_apply_without_bos_first_says_what_to_call(model):
    for tokens in ([1, 2, 3], [], ["bos", 1]):
        with pytest.raises(InputError, match=r"with the BOS token 'BOS' first; rasp_compile.run\(model, xs\)"):
            model.apply(tokens)


def test_a_field_of_tracrs_we_do_not_keep_names_what_to_use(model):
    out = model.apply(["BOS", 1])
    with pytest.raises(AttributeError, match="attn_patterns"):
        _ = out.attn_logits
    with pytest.raises(AttributeError, match="logits"):
        _ = out.unembedded


def test_program_of_xs_says_to_call_evaluate():
    """The IR does not run itself (the interpreter reads the IR): tracr's `program(xs)` is one line
    naming `rasp.evaluate`, which gives what tracr's call gives."""
    for program in (REVERSE, LENGTH, rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)):
        with pytest.raises(TypeError, match=r"rasp\.evaluate\("):
            program([1, 2, 3])
    assert rasp.evaluate(REVERSE, [1, 2, 3]) == [3, 2, 1]
    assert rasp.evaluate(LENGTH, ["a", "b"]) == [2, 2]


def test_an_sop_is_not_taken_for_a_function():
    with pytest.raises(TypeError, match="expected a function"):
        rasp.Map(rasp.tokens, rasp.tokens)
