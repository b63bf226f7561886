"""to_transformer_lens: the converted model computes our forward pass, in TransformerLens.

Every program in programs/: the converted model's logits equal ours within 1e-5 (relative to
max(1, |logit|), float32), its predictions equal the interpreter's on every input up to 2,000 of
them (all inputs when there are at most 2,000, else 2,000 seeded random ones), and the residual
stream run_with_cache records after each block (blocks.{i}.hook_resid_post) equals our trace's.
Random float64 models with mixed layers (BOS or not, causal or not, relu or gelu, numerical)
agree to 1e-9. Under TransformerLens 2.x and 3.x the model is a HookedTransformer, under 4.x a
TransformerBridge (.ci/run tests both). Also: the per-head weight views, labels, hooks, tl_tokens'
refusals, and the one-line missing-extra and too-old-version errors.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from test_examples import load_example
from extras import require
from model_zoo import model_variants, random_model, random_token_ids
from rasp_compile import ir
from rasp_compile.errors import InputError, RaspRuntimeError
from rasp_compile.frontend import load_program
from rasp_compile.compiler import compile_program
from rasp_compile.interop import MissingExtraError, tl_tokens, to_transformer_lens
from rasp_compile.interop.tl_weights import hooked_weights, padded_sizes
from rasp_compile.interop.transformer_lens import installed_version, uses_bridge
from rasp_compile.runtime.execute import logits, trace
from rasp_compile.tools.interpret import evaluate
from rasp_compile.testing.differential import every_input, same_value

PROGRAMS = sorted((Path(__file__).parent.parent / "programs").glob("*.rasp"))
MAX_INPUTS = 2_000
TOLERANCE = 1e-5  # float32, relative to max(1, |value|)


def close(got: np.ndarray, expected: np.ndarray, tolerance: float) -> bool:
    return bool(np.all(np.abs(got - expected) <= tolerance * np.maximum(1.0, np.abs(expected))))


def inputs_of(program: ir.Program) -> list[list]:
    """Every input when there are at most MAX_INPUTS, else MAX_INPUTS seeded random ones."""
    every = every_input(program.vocab, program.max_len, MAX_INPUTS + 1)
    if len(every) <= MAX_INPUTS:
        return every
    rng = random.Random(14)
    return [[rng.choice(program.vocab) for _ in range(rng.randint(1, program.max_len))] for _ in range(MAX_INPUTS)]


def decoded(model, token_logits: np.ndarray) -> list:  # [n, n_out] -> n values
    output = model.meta["output"]
    if output["encoding"] == "numerical":
        return [float(value) for value in token_logits[:, 0]]
    return [output["values"][column] for column in token_logits.argmax(-1)]


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_converted_program_equals_our_forward_and_the_interpreter(path: Path):
    torch = require("torch")
    program = load_program(path)
    model = compile_program(program)
    tl_model = to_transformer_lens(model)
    numerical = model.meta["output"]["encoding"] == ir.NUMERICAL
    by_length: dict[int, list] = {}
    for tokens in inputs_of(program):
        by_length.setdefault(len(tokens), []).append(tokens)
    checked = 0
    for n, group in sorted(by_length.items()):
        ids = tl_tokens(model, group)
        with torch.no_grad():
            tl_logits, cache = tl_model.run_with_cache(ids)
        assert close(tl_logits.numpy(), logits(model, ids.numpy()), TOLERANCE), f"logits at length {n}"
        for i, step in enumerate(trace(model, ids.numpy())):
            resid = cache[f"blocks.{i}.hook_resid_post"].numpy()
            assert close(resid, step["after_mlp"], TOLERANCE), f"residual after block {i}, length {n}"
        for tokens, token_logits in zip(group, tl_logits.numpy()[:, ids.shape[1] - n:]):
            try:
                expected = evaluate(program, tokens)
            except RaspRuntimeError:  # the program itself is in error on this input
                continue
            got = decoded(model, token_logits)
            assert all(same_value(e, g, numerical) for e, g in zip(expected, got)), (tokens, expected, got)
            checked += 1
    assert checked > 0


@pytest.mark.parametrize("name,kwargs", model_variants(), ids=[name for name, _ in model_variants()])
def test_random_float64_models_convert_exactly(name, kwargs):
    """Mixed layers (2 heads of 3 with an MLP of 5, an MLP alone, 1 head of 4 alone): padding,
    the per-layer softmax scale, absent sub-layers, BOS or not, masks, activations, read-out."""
    torch = require("torch")
    model = random_model(3, **kwargs)
    tl_model = to_transformer_lens(model)
    ids = random_token_ids(model, model.meta["max_len"], batch=9, seed=4)
    with torch.no_grad():
        tl_logits = tl_model(torch.from_numpy(ids))
    assert tl_logits.dtype == torch.float64
    assert close(tl_logits.numpy(), logits(model, ids), 1e-9)


def test_config_pads_layers_and_keeps_the_model_kind():
    require("torch")
    model = random_model(0, causal=False, activation="gelu", bos=False)
    cfg = to_transformer_lens(model).cfg
    assert (cfg.n_layers, cfg.n_heads, cfg.d_head, cfg.d_mlp) == (3, 2, 4, 5)
    assert (cfg.d_model, cfg.d_vocab, cfg.d_vocab_out, cfg.n_ctx) == (6, 3, 3, 5)
    assert (cfg.act_fn, cfg.attention_dir, cfg.normalization_type) == ("gelu_new", "bidirectional", None)


def test_labels_travel_with_the_converted_model():
    require("torch")
    program = load_program(PROGRAMS[[p.stem for p in PROGRAMS].index("reverse")])
    model = compile_program(program)
    labels = to_transformer_lens(model).rasp_labels
    assert list(labels.residual) == model.meta["residual"]
    assert list(labels.vocab) == model.meta["vocab"] and labels.bos_id == model.meta["bos_id"]
    assert list(labels.output) == model.meta["output"]["values"]
    assert [len(layer) for layer in labels.heads] == [1, 1]  # reverse: one head in each layer
    assert labels.d_mlp == tuple(layer["d_mlp"] for layer in model.meta["layers"])
    assert repr(labels).startswith(f"Labels({model.d_model} residual dims, 2 layers of 1 heads")

    padded = to_transformer_lens(random_model(0)).rasp_labels  # layers of 2, 0 and 1 heads
    assert [[head is not None for head in layer] for layer in padded.heads] == [[True, True], [False, False],
                                                                             [True, False]]
    assert padded.describe_head(2, 1) == "L2H1: zero padding (the layer has 1 heads)"
    assert padded.residual == tuple(f"d{d}" for d in range(6))  # a file without meta.residual


def test_head_descriptions_are_read_from_meta_when_present():
    require("torch")
    model = random_model(0, layers=((1, 2, 0),))
    model.meta["heads"] = [[{"select": "select(indices, indices, ==)", "writes": "copy"}]]
    labels = to_transformer_lens(model).rasp_labels
    assert labels.heads[0][0]["select"] == "select(indices, indices, ==)"
    assert labels.describe_head(0, 0) == "L0H0: select(indices, indices, ==) -> copy"
    model.meta["heads"] = [["not an object"]]  # a malformed description is ignored, not trusted
    assert to_transformer_lens(model).rasp_labels.heads == (({},),)


def test_a_zeroed_head_changes_the_output_through_its_hook():
    torch = require("torch")
    model = compile_program(load_program(PROGRAMS[[p.stem for p in PROGRAMS].index("reverse")]))
    tl_model = to_transformer_lens(model)
    ids = tl_tokens(model, [[1, 2, 3, 3, 2]])

    def zero_pattern(pattern, hook):
        return torch.zeros_like(pattern)

    with torch.no_grad():
        clean = tl_model(ids)
        ablated = tl_model.run_with_hooks(ids, fwd_hooks=[("blocks.1.attn.hook_pattern", zero_pattern)])
    assert decoded(model, clean[0, 1:].numpy()) == [2, 3, 3, 2, 1]
    assert decoded(model, ablated[0, 1:].numpy()) != [2, 3, 3, 2, 1]


def test_demo_ablates_the_moving_head_as_the_program_says(capsys):
    require("torch")
    assert load_example("transformer_lens_demo").main() == 0
    out = capsys.readouterr().out
    assert "-> converted model [2, 3, 3, 2, 1], interpreter [2, 3, 3, 2, 1]" in out
    assert "head L1H0 ablated -> [None, None, None, None, None]" in out


def test_tl_tokens_encodes_with_bos_and_refuses_bad_inputs():
    require("torch")
    model = random_model(0)  # tokens t0, t1, t2, then BOS (id 3); max_len 5
    assert tl_tokens(model, [["t2", "t0"], ["t1", "t1"]]).tolist() == [[3, 2, 0], [3, 1, 1]]
    for bad in ([["t0"], ["t0", "t1"]], [["t0"] * 6], [[]], [["nope"]], []):
        with pytest.raises(InputError):
            tl_tokens(model, bad)


def test_without_the_extra_one_line_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformer_lens", None)  # as if not installed
    with pytest.raises(MissingExtraError) as raised:
        to_transformer_lens(random_model(0))
    assert isinstance(raised.value, ImportError)
    assert "\n" not in str(raised.value) and "pip install 'rasp-compile[interop]'" in str(raised.value)
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_the_installed_version_picks_the_kind_of_model():
    require("torch")
    tl_model = to_transformer_lens(random_model(0))
    major = int(installed_version().split(".")[0])
    assert type(tl_model).__name__ == ("TransformerBridge" if major >= 4 else "HookedTransformer")


def test_versions_choose_hooked_transformer_or_bridge():
    assert not uses_bridge("2.18.0", False) and not uses_bridge("3.9.0", True)
    assert uses_bridge("4.3.0", True) and uses_bridge("5.0.0rc1", True)
    assert uses_bridge("0.0.0", True) and not uses_bridge("0.0.0", False)  # a source checkout
    with pytest.raises(MissingExtraError) as raised:
        uses_bridge("1.19.0", False)
    assert str(raised.value) == ("TransformerLens 1.19.0 is installed; to_transformer_lens needs 2.x, 3.x or "
                                 "4.x: pip install 'rasp-compile[interop]' (from a checkout: pip install -e "
                                 "'.[interop]')")


def test_per_head_weight_views_are_the_hooked_layout_and_keep_the_logits():
    """HookedTransformer's W_Q, W_O, W_in, W_U... (2.x, 3.x) and a TransformerBridge's in
    compatibility mode without processing (4.x; docs/interop.md: weight centring is not safe) are
    the arrays hooked_weights lays out, and the logits stay ours."""
    torch = require("torch")
    model = random_model(5)
    tl_model = to_transformer_lens(model)
    if hasattr(tl_model, "enable_compatibility_mode"):
        tl_model.enable_compatibility_mode(no_processing=True, disable_warnings=True)
    weights = hooked_weights(model, padded_sizes(model))
    for i in range(model.n_layers):
        for name in ("attn.W_Q", "attn.b_Q", "attn.W_K", "attn.W_V", "attn.W_O", "mlp.W_in", "mlp.W_out"):
            view = getattr(tl_model, name.split(".")[1])[i].detach().numpy()
            assert np.array_equal(view, weights[f"blocks.{i}.{name}"]), (i, name)
    for name in ("embed.W_E", "pos_embed.W_pos", "unembed.W_U", "unembed.b_U"):
        assert np.array_equal(getattr(tl_model, name.split(".")[1]).detach().numpy(), weights[name]), name
    ids = random_token_ids(model, model.meta["max_len"], batch=4, seed=6)
    with torch.no_grad():
        assert close(tl_model(torch.from_numpy(ids)).numpy(), logits(model, ids), 1e-9)


def test_the_python_in_docs_interop_runs(tmp_path, monkeypatch):
    """Every ```python block of docs/interop.md, in order, in a directory where the shell block's
    `rasp-compile programs/reverse.rasp --emit reverse.safetensors` has run."""
    require("torch")
    require("safetensors")
    from rasp_compile.cli import compile_cmd

    repo = Path(__file__).parent.parent
    (tmp_path / "programs").symlink_to(repo / "programs")
    monkeypatch.chdir(tmp_path)
    assert compile_cmd.main(["programs/reverse.rasp", "--emit", "reverse.safetensors"]) == 0
    text = (repo / "docs" / "interop.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```\n", text, re.MULTILINE | re.DOTALL)
    assert len(blocks) == 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/interop.md", "exec"), namespace)  # the project's own doc, not user text
    assert namespace["meta"]["residual"] == namespace["model"].meta["residual"]
    assert tuple(namespace["logits"].shape) == (1, 6, 4)
