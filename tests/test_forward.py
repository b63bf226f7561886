"""The forward pass on tiny models computed by hand, and its invariants on random models:
batching, dtypes, causal masking; then encode / predict / complete / trace."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from model_zoo import handmade_module, model_variants, random_model, random_token_ids
from rasp_compile.runtime import execute, forward, prediction
from rasp_compile.errors import InputError, WeightsError
from rasp_compile.runtime.model import FORMAT, Model, astype, validate

E = math.e


def tiny_model(params: dict, *, layers=(), causal=False, activation="relu", n_out=2) -> Model:
    """Vocab x, y without BOS, max_len 2."""
    meta = {"format": FORMAT, "vocab": ["x", "y"], "bos_id": None, "max_len": 2, "causal": causal,
            "activation": activation,
            "layers": [{"n_head": h, "d_head": d, "d_mlp": m} for h, d, m in layers],
            "output": {"name": "out", "encoding": "categorical", "values": ["x", "y", None][:n_out]}}
    model = Model(meta, {key: np.array(value, dtype=np.float64) for key, value in params.items()})
    validate(model)
    return model


def test_embedding_and_readout_only():
    model = tiny_model({"wte": [[1, 0], [0, 2]], "wpe": [[0, 1], [1, 0]],
                        "unembed": [[1, 0], [0, 1]], "unembed_b": [0.5, -0.5]})
    # x = wte[[x, y]] + wpe = [[1, 1], [1, 2]]; logits = x + [0.5, -0.5]
    np.testing.assert_allclose(execute.logits(model, [[0, 1]]), [[[1.5, 0.5], [1.5, 1.5]]])


@pytest.mark.parametrize("causal", [False, True])
def test_one_head_by_hand(causal):
    # d_model 2 = (is_x, is_y), one head of width 1: q = k = is_x, v = is_y; c_proj adds the head
    # into is_y; the read-out is the identity.
    model = tiny_model({"wte": [[1, 0], [0, 1]], "wpe": [[0, 0], [0, 0]],
                        "blocks.0.attn.c_attn.w": [[1, 1, 0], [0, 0, 1]],
                        "blocks.0.attn.c_attn.b": [0, 0, 0],
                        "blocks.0.attn.c_proj.w": [[0, 1]], "blocks.0.attn.c_proj.b": [0, 0],
                        "unembed": [[1, 0], [0, 1]]},
                       layers=[(1, 1, 0)], causal=causal)
    # Input "x y": q = k = [1, 0], v = [0, 1]. Query 0 scores [1, 0] -> weights [e, 1] / (e + 1),
    # reading v = 1/(e+1); causal, it sees only itself (v = 0). Query 1 scores [0, 0] -> mean 1/2.
    head_0 = 0.0 if causal else 1 / (E + 1)
    np.testing.assert_allclose(execute.logits(model, [[0, 1]]), [[[1, head_0], [0, 1.5]]])


def gpt2_gelu(x: float) -> float:
    return 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("activation, expected", [
    ("relu", lambda v: abs(v)),
    ("gelu", lambda v: gpt2_gelu(v) + gpt2_gelu(-v)),
])
def test_mlp_by_hand(activation, expected):
    # d_model 1, d_mlp 2: hidden = (v, -v), out = act(v) + act(-v), added to the residual v.
    model = tiny_model({"wte": [[2.0], [-0.5]], "wpe": [[0.0], [1.0]],
                        "blocks.0.mlp.c_fc.w": [[1, -1]], "blocks.0.mlp.c_fc.b": [0, 0],
                        "blocks.0.mlp.c_proj.w": [[1], [1]], "blocks.0.mlp.c_proj.b": [0],
                        "unembed": [[1]]},
                       layers=[(0, 0, 2)], activation=activation, n_out=1)
    residual = [2.0 + 0.0, -0.5 + 1.0]  # "x" at position 0, "y" at position 1
    want = [[[v + expected(v)] for v in residual]]
    np.testing.assert_allclose(execute.logits(model, [[0, 1]]), want, rtol=1e-12)


def test_gelu_is_gpt2_tanh_form():
    # tanh form, not the erf form (whose gelu(1) is 0.841345)
    np.testing.assert_allclose(forward.gelu(np.array([1.0, -1.0, 0.0])), [0.8411920, -0.1588080, 0.0],
                               atol=1e-7)


def test_softmax_is_stable_and_sees_masked_rows():
    probs = forward.softmax(np.array([[1000.0, 1000.0, -np.inf]]))
    np.testing.assert_array_equal(probs, [[0.5, 0.5, 0.0]])


@pytest.mark.parametrize("name, kwargs", model_variants())
def test_batch_equals_one_by_one(name, kwargs):
    model = random_model(1, **kwargs)
    ids = random_token_ids(model, 4, batch=6)
    together = execute.logits(model, ids)
    for row, one in zip(ids, together):
        np.testing.assert_allclose(execute.logits(model, row[None]), one[None], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, kwargs", model_variants())
def test_a_batch_in_chunks_equals_one_call(monkeypatch, name, kwargs):
    model = random_model(8, **kwargs)
    ids = random_token_ids(model, model.meta["max_len"], batch=7)
    whole = execute.logits(model, ids)  # 7 sequences fit in one chunk
    monkeypatch.setattr(execute, "CHUNK_BYTES", 1)
    monkeypatch.setattr(execute, "MIN_ROWS", 3)  # chunks of 3, 3 and 1 sequences
    assert execute._rows_per_chunk(model, ids.shape[1]) == 3
    np.testing.assert_allclose(execute.logits(model, ids), whole, rtol=1e-12, atol=1e-12)


def test_attention_pattern_is_the_softmax_of_each_heads_scores():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 3, 6, 5))  # 4 queries, 6 keys, D 5
    mask = np.where(rng.random((4, 6)) < 0.3, -np.inf, 0.0)
    mask[:, 0] = 0  # every query keeps a key
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(5) + mask
    want = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(forward.attention_pattern(q, k, mask), want, rtol=1e-12, atol=1e-15)


def test_softmax_along_an_axis_in_place():
    x = np.array([[0.0, 1.0], [2.0, -np.inf]])
    want = np.array([[1 / (1 + E**2), 1.0], [E**2 / (1 + E**2), 0.0]])
    assert forward.softmax(x, axis=0, out=x) is x
    np.testing.assert_allclose(x, want, rtol=1e-12)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_one_non_finite_logit_anywhere_is_a_weights_error(bad):
    for position in [0, 17, -1]:
        logits = np.zeros((3, 4, 5), np.float32)
        logits.flat[position] = bad
        with pytest.raises(WeightsError):
            execute._check_finite(np.zeros(2), logits)
    execute._check_finite(np.zeros((3, 4, 5)), np.zeros((0, 4, 5)))  # all finite, one empty: fine


@pytest.mark.parametrize("name, kwargs", model_variants())
def test_float32_matches_float64(name, kwargs):
    model = random_model(2, **kwargs)
    ids = random_token_ids(model, model.meta["max_len"], batch=4)
    logits32 = execute.logits(astype(model, np.float32), ids)
    assert logits32.dtype == np.float32
    np.testing.assert_allclose(logits32, execute.logits(model, ids), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("bos", [True, False])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_causal_later_tokens_never_change_earlier_logits(bos, activation):
    model = random_model(3, bos=bos, activation=activation)
    ids = random_token_ids(model, model.meta["max_len"], batch=1)
    base = execute.logits(model, ids)
    n_vocab = len(model.meta["vocab"]) - bos
    for position in range(bos, ids.shape[1]):
        changed = ids.copy()
        changed[0, position] = (changed[0, position] + 1) % n_vocab
        after = execute.logits(model, changed)
        np.testing.assert_array_equal(after[:, :position], base[:, :position])
        assert not np.allclose(after[:, position:], base[:, position:])


def test_trace_agrees_with_logits():
    model = random_model(4)
    ids = random_token_ids(model, 5, batch=2)
    steps = execute.trace(model, ids)
    assert len(steps) == model.n_layers
    final = steps[-1]["after_mlp"] @ model.params["unembed"] + model.params["unembed_b"]
    np.testing.assert_allclose(final, execute.logits(model, ids), rtol=1e-12)
    two_heads, no_attn = steps[0]["attn_patterns"], steps[1]["attn_patterns"]
    assert two_heads.shape == (2, 2, 6, 6) and no_attn.shape == (2, 0, 6, 6)
    np.testing.assert_allclose(two_heads.sum(axis=-1), 1.0)
    assert np.all(np.triu(two_heads, k=1) == 0)  # causal: nothing above the diagonal
    np.testing.assert_array_equal(steps[2]["after_attn"], steps[2]["after_mlp"])  # no MLP there


def test_blocks_nest_like_picogpt_and_omit_absent_sub_layers():
    blocks = random_model(0).blocks()
    assert set(blocks[0]) == {"attn", "mlp"} and set(blocks[1]) == {"mlp"} and set(blocks[2]) == {"attn"}
    assert set(blocks[0]["attn"]) == {"c_attn", "c_proj"} and set(blocks[0]["attn"]["c_attn"]) == {"w", "b"}
    assert set(blocks[1]["mlp"]) == {"c_fc", "c_proj"}


def test_encode_prepends_bos_and_refuses_unknown_tokens():
    model = random_model(0)  # vocab t0 t1 t2 BOS
    assert prediction.encode(model, ["t2", "t0"]) == [3, 2, 0]
    with pytest.raises(InputError, match="'zz' is not in the vocab"):
        prediction.encode(model, ["t0", "zz"])
    with pytest.raises(InputError, match="'BOS'"):
        prediction.encode(model, ["BOS"])


def test_encode_matches_numbers_by_value():
    model = random_model(0)
    model.meta["vocab"] = [1, 2.5, "1", "BOS"]
    assert prediction.encode(model, [1.0, 2.5, "1", 1]) == [3, 0, 1, 2, 0]
    with pytest.raises(InputError):
        prediction.encode(model, [True])


def test_predict_batches_by_length_and_keeps_order():
    model = random_model(5, causal=False)
    inputs = [["t0", "t1"], ["t2"], ["t1", "t1"], [], ["t0", "t1", "t2"]]
    got = prediction.predict(model, inputs)
    assert got == [prediction.predict(model, [tokens])[0] for tokens in inputs]
    assert [len(out) for out in got] == [2, 1, 2, 0, 3]
    assert set().union(*map(set, got)) <= {"t0", "t1", None}


def test_predict_numerical_gives_the_logit():
    model = random_model(6, numerical=True, unembed_b=False)
    (out,) = prediction.predict(model, [["t0", "t2", "t1"]])
    ids = np.array([prediction.encode(model, ["t0", "t2", "t1"])])
    np.testing.assert_allclose(out, execute.logits(model, ids)[0, 1:, 0])
    assert all(isinstance(v, float) for v in out)


def test_predict_refuses_long_inputs_of_non_causal_models():
    model = random_model(0, causal=False)
    with pytest.raises(InputError, match="longer than max_len 5"):
        prediction.predict(model, [["t0"] * 6])


def test_predict_slides_a_window_over_long_inputs_of_causal_models():
    model = random_model(7)
    tokens = ["t0", "t1", "t2", "t2", "t1", "t0", "t0", "t1"]
    (out,) = prediction.predict(model, [tokens])
    assert out[:5] == prediction.predict(model, [tokens[:5]])[0]
    for end in range(6, len(tokens) + 1):
        assert out[end - 1] == prediction.predict(model, [tokens[end - 5:end]])[0][-1]


@pytest.mark.parametrize("text, continuation", list(handmade_module().COMPLETIONS.items()))
def test_handmade_completions_are_the_posts(text, continuation):
    model = handmade_module().build()
    assert "".join(prediction.complete(model, list(text), steps=10)) == continuation


def test_complete_refuses_models_that_do_not_complete():
    assert not prediction.can_complete(random_model(0))  # outputs include null
    with pytest.raises(InputError, match="does not complete"):
        prediction.complete(random_model(0, causal=False), ["t0"])
    with pytest.raises(InputError, match="empty"):
        prediction.complete(handmade_module().build(), [])


def test_handmade_model_agrees_with_the_interpreter_on_its_source():
    from rasp_compile.frontend import parse_program
    from rasp_compile.tools.interpret import evaluate_many

    model = handmade_module().build()
    inputs = [list(t) for n in range(1, 6) for t in itertools.product("ab", repeat=n)]
    assert prediction.predict(model, inputs) == evaluate_many(parse_program(model.meta["source"]), inputs)


def overflowing_models() -> list[Model]:
    """float32 models with finite weights whose numbers overflow: every weight times 1e30 (the
    layers overflow), and an embedding whose wte + wpe overflows before any layer."""
    huge = astype(random_model(0), np.float32)
    huge = Model(huge.meta, {key: array * np.float32(1e30) for key, array in huge.params.items()})
    embedding = astype(random_model(0, layers=()), np.float32)
    embedding.params["wte"][:] = embedding.params["wpe"][:] = np.finfo(np.float32).max
    return [huge, embedding]


@pytest.mark.parametrize("model", overflowing_models(), ids=["layers", "embedding"])
def test_overflow_is_a_weights_error_without_numpy_warnings(model):
    from rasp_compile.cli import trace_report

    ids = np.array([prediction.encode(model, ["t0", "t1", "t2"])])
    runs = {"logits": lambda: execute.logits(model, ids), "trace": lambda: execute.trace(model, ids),
            "predict": lambda: prediction.predict(model, [["t0", "t1", "t2"]]),
            "rasp-run --trace": lambda: trace_report.measure(model, ["t0", "t1", "t2"])}
    for run in runs.values():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a NumPy RuntimeWarning fails the test
            with pytest.raises(WeightsError, match=r"overflow \(inf/NaN\)"):
                run()


@pytest.mark.parametrize("run", [execute.logits, execute.trace])
def test_ids_without_positions_are_refused(run):
    model = random_model(0, bos=False)
    with pytest.raises(InputError, match="1 to 5 positions"):
        run(model, np.zeros((2, 0), dtype=np.int64))
