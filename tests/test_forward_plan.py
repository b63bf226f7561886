"""`execute.logits` runs the pass on each weight's nonzero part (runtime/forward_plan.py): it must
agree with `forward.gpt`, the pass with every weight, on dense models, on sparse ones (whole rows,
columns, head dimensions and biases zeroed at random) and on compiled programs."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import random
from pathlib import Path

import numpy as np
import pytest

from model_zoo import model_variants, random_model, random_token_ids
from rasp_compile.compiler import compile_program
from rasp_compile.frontend import load_program
from rasp_compile.runtime import execute, forward, forward_plan, prediction
from rasp_compile.runtime.forward_plan import cached_plan, kept_dims, nonzero_span, plan
from rasp_compile.runtime.model import Model


PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
WIDE_LAYERS = ((3, 4, 7), (2, 1, 0), (0, 0, 5), (4, 2, 3))  # (n_head, d_head, d_mlp) per block


def full_logits(model: Model, ids: np.ndarray) -> np.ndarray:  # every weight, one call
    with np.errstate(all="ignore"):
        return forward.gpt(ids, **model.nested(), **forward.hparams(model))


def sparse_model(seed: int, **kwargs) -> Model:
    """A random model with about half of its weight rows, columns and biases set to zero, and some
    whole heads' query, key or value columns zeroed: the shapes a compiled model has."""
    model = random_model(seed, layers=WIDE_LAYERS, d_model=9, **kwargs)
    rng = np.random.default_rng(seed)
    params = {key: array.copy() for key, array in model.params.items()}
    for array in params.values():
        if array.ndim == 1:
            array[rng.random(array.shape) < 0.5] = 0
            continue
        array[rng.random(array.shape[0]) < 0.5, :] = 0
        array[:, rng.random(array.shape[1]) < 0.5] = 0
    return Model(model.meta, params)


def assert_agrees(model: Model, ids: np.ndarray) -> None:
    want = full_logits(model, ids)
    got = execute.logits(model, ids)
    tolerance = (1e-5 if model.dtype == np.float32 else 1e-12) * max(1.0, np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=0, atol=tolerance)


@pytest.mark.parametrize("name, kwargs", model_variants())
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_models_agree(name, kwargs, dtype):
    model = random_model(3, dtype=dtype, **kwargs)
    for n_tokens in (1, 3, model.meta["max_len"]):
        assert_agrees(model, random_token_ids(model, n_tokens, batch=5, seed=n_tokens))


@pytest.mark.parametrize("seed", range(12))
def test_sparse_models_agree(seed):
    kwargs = dict(model_variants()[seed % 8][1])
    model = sparse_model(seed, dtype=np.float32 if seed % 2 else np.float64, **kwargs)
    for n_tokens in (1, 2, model.meta["max_len"]):
        assert_agrees(model, random_token_ids(model, n_tokens, batch=7, seed=seed))


@pytest.mark.parametrize("name, max_len", [("hist", 5), ("sort_unique", 8), ("frac_prevs", 10),
                                           ("sort", 6), ("shuffle_dyck2", 6), ("length", 16)])
def test_compiled_programs_agree_and_predict_alike(name, max_len):
    program = dataclasses.replace(load_program(PROGRAMS / f"{name}.rasp"), max_len=max_len)
    model = compile_program(program, dtype=np.float32)
    rng = random.Random(max_len)
    ids = np.array([prediction.encode(model, [rng.choice(program.vocab) for _ in range(max_len)])
                    for _ in range(300)])
    assert_agrees(model, ids)
    if model.meta["output"]["encoding"] == "categorical":
        assert (execute.logits(model, ids).argmax(-1) == full_logits(model, ids).argmax(-1)).all()


@pytest.mark.parametrize("name, max_len", [("hist", 5), ("hist", 20), ("length", 5), ("sort_unique", 5),
                                           ("sort_unique", 10), ("sort", 5), ("reverse", 5), ("frac_prevs", 6),
                                           ("pair_balance", 6)])
def test_column_by_column_changes_no_bit(monkeypatch, name, max_len):
    """Reading and updating a few residual columns one column at a time (execute.COLUMN_BY_COLUMN)
    does each element's operation as the row-by-row pass does: the logits are the same bits, on
    batches of one to 300 sequences, full length and shorter (BOS included), on categorical,
    numerical and causal programs."""
    program = dataclasses.replace(load_program(PROGRAMS / f"{name}.rasp"), max_len=max_len)
    model = compile_program(program, dtype=np.float32)
    updates = [sub.proj.writes for block in cached_plan(model).blocks for sub in block if sub is not None]
    assert any(np.arange(model.d_model)[columns].size < model.d_model for columns in updates)  # the path is taken
    rng = random.Random(max_len)
    batches = [np.array([prediction.encode(model, rng.choices(program.vocab, k=length)) for _ in range(count)])
               for count, length in [(1, max_len), (7, max_len), (300, max_len), (40, max_len // 2), (3, 1)]]
    by_column = [execute.logits(model, ids) for ids in batches]
    monkeypatch.setattr(execute, "COLUMN_BY_COLUMN", 0)
    for ids, got in zip(batches, by_column):
        assert got.tobytes() == execute.logits(model, ids).tobytes()


def test_a_compiled_model_is_cut_to_what_it_uses():
    model = compile_program(dataclasses.replace(load_program(PROGRAMS / "hist.rasp"), max_len=5))
    cut = plan(model)
    attn, mlp = cut.blocks[0]
    assert attn.d_v == 1 and attn.proj.w.shape == (1, 1)  # one value, one column
    assert mlp.fc.w.shape[0] < model.d_model and cut.wpe is None  # reads few columns; no positions
    assert attn.scale == 1.0  # d_head 4: 1/2 multiplied into the queries


def test_plans_follow_weights_edited_in_place():
    model = random_model(5)
    ids = random_token_ids(model, 4, batch=3)
    before = execute.logits(model, ids)
    weight = model.params["blocks.0.attn.c_proj.w"]
    with pytest.raises(ValueError, match="read-only"):  # never a stale plan: the edit is refused
        weight[:] = 0
    weight.flags.writeable = True
    weight[:] = 0  # an ablation
    after = execute.logits(model, ids)
    assert not np.allclose(before, after)
    np.testing.assert_allclose(after, full_logits(model, ids), rtol=0, atol=1e-12)
    assert cached_plan(model) is cached_plan(model)


def test_plans_follow_weights_replaced():
    model = random_model(5)
    ids = random_token_ids(model, 4, batch=3)
    before = execute.logits(model, ids)
    model.params["blocks.0.attn.c_proj.w"] = np.zeros_like(model.params["blocks.0.attn.c_proj.w"])
    after = execute.logits(model, ids)
    assert not np.allclose(before, after)
    np.testing.assert_allclose(after, full_logits(model, ids), rtol=0, atol=1e-12)


def test_a_model_is_planned_once_and_its_weights_never_hashed(monkeypatch):
    """The plan is kept for the model object: later calls read no weight (no hash of the arrays'
    bytes: 0.2 s per call on a 50M-parameter model) and build no plan; a meta field the pass
    reads, changed, plans again."""
    planned = []
    monkeypatch.setattr(forward_plan, "plan", lambda model: planned.append(model) or plan(model))
    monkeypatch.setattr(hashlib, "blake2b", lambda *args, **kwargs: pytest.fail("weights hashed"))
    model = random_model(5)
    ids = random_token_ids(model, 4, batch=3)
    first = execute.logits(model, ids)
    np.testing.assert_array_equal(execute.logits(model, ids), first)
    execute.logits(model, ids[:1])
    assert planned == [model]
    model.meta["causal"] = not model.meta["causal"]
    execute.logits(model, ids)
    assert len(planned) == 2


def test_a_plan_goes_with_its_model():
    model = random_model(5)
    execute.logits(model, random_token_ids(model, 4, batch=3))
    assert id(model) in forward_plan._plans
    key = id(model)
    del model
    gc.collect()
    assert key not in forward_plan._plans


def test_the_embedding_table_holds_each_sum_the_pass_adds():
    model = random_model(7, dtype=np.float32)
    wte, wpe = model.params["wte"], model.params["wpe"]
    table = forward_plan.embedding_table(wte, wpe)
    assert table is not None and table.shape == (len(wpe) * len(wte), wte.shape[1])
    for position, token in [(0, 0), (2, 1), (len(wpe) - 1, len(wte) - 1)]:
        np.testing.assert_array_equal(table[position * len(wte) + token], wte[token] + wpe[position])
    assert forward_plan.embedding_table(np.zeros((1000, 100)), np.zeros((100, 100))) is None  # 80 MB


def test_logits_on_the_table_equal_logits_without_it(monkeypatch):
    """The table changes no bit: the same sums, gathered instead of added."""
    program = dataclasses.replace(load_program(PROGRAMS / "sort_unique.rasp"), max_len=7)
    model = compile_program(program, dtype=np.float32)
    ids = np.array([prediction.encode(model, random.Random(i).choices(program.vocab, k=7)) for i in range(50)])
    assert cached_plan(model).embed is not None
    with_table = execute.logits(model, ids)
    monkeypatch.setattr(forward_plan, "EMBED_TABLE_BYTES", 0)
    other = Model(model.meta, dict(model.params))  # planned again, without the table
    assert cached_plan(other).embed is None
    np.testing.assert_array_equal(execute.logits(other, ids), with_table)


def test_a_sub_layer_that_writes_nothing_is_left_out():
    model = random_model(6)
    model.params["blocks.0.attn.c_proj.w"][:] = 0
    model.params["blocks.0.attn.c_proj.b"][:] = 0
    assert plan(model).blocks[0][0] is None
    assert_agrees(model, random_token_ids(model, 5, batch=4))


def test_nonzero_span():
    flags = np.array([0, 0, 1, 0, 1, 0], dtype=bool)
    assert nonzero_span(flags) == slice(2, 5)
    assert nonzero_span(np.zeros(3, dtype=bool)) == slice(0, 0)
    assert nonzero_span(np.array([0, 0, 1], dtype=bool), at_least=2) == slice(1, 3)  # widened to the left
    assert nonzero_span(np.array([1, 0, 0], dtype=bool), at_least=2) == slice(0, 2)
    assert nonzero_span(np.array([1], dtype=bool), at_least=2) == slice(0, 1)  # no room to widen


def test_kept_dims_put_used_dimensions_first_and_share_one_width():
    used = np.array([[False, True, False, True], [False, False, False, False], [True, False, False, False]])
    np.testing.assert_array_equal(kept_dims(used), [[1, 3], [0, 1], [0, 1]])
    assert kept_dims(np.zeros((2, 3), dtype=bool)).shape == (2, 1)
