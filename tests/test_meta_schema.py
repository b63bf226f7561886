"""rasp_compile/runtime/meta.schema.json, the JSON Schema of the weights file's meta
(docs/format.md), says what the compiler writes and what the loader takes: it is a valid Draft
2020-12 schema shipped with the package; the meta of every program of programs/ (optimisations on
and off, float32 and float64), of the hand-made example, and of a tracr-style port follows it;
fields it does not know are allowed, as docs/format.md allows them; malformed metas fail it.
tests/conftest.py checks every weights file the other tests write against it. Needs jsonschema
(tests/extras.py)."""

from __future__ import annotations

import copy
import importlib.util
import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import rasp_compile as rc
from conftest import schema_errors
from extras import require

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted((ROOT / "programs").glob("*.rasp"))


@pytest.fixture(autouse=True, scope="module")
def jsonschema():
    return require("jsonschema", "jsonschema")


def test_the_schema_is_valid_and_shipped_with_the_package(jsonschema):
    text = resources.files("rasp_compile.runtime").joinpath("meta.schema.json").read_text("utf-8")
    jsonschema.Draft202012Validator.check_schema(json.loads(text))
    assert "meta.schema.json" in (ROOT / "docs" / "format.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_every_compiled_meta_follows_the_schema(path):
    program = rc.load_program(path)
    for options in ({}, {"disabled": tuple(rc.OPTIMIZATIONS)}, {"dtype": np.float64}):
        assert schema_errors(rc.compile(program, **options).meta) == []


def test_the_handmade_and_the_ported_models_follow_it():
    spec = importlib.util.spec_from_file_location("handmade_aab", ROOT / "examples" / "handmade_aab.py")
    handmade = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(handmade)
    from rasp_compile import rasp

    width = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)).named("hist")
    ported = rc.compile_rasp_to_model(width, vocab={1, 2, 3}, max_seq_len=4, compiler_bos="BOS")
    assert schema_errors(handmade.build().meta) == schema_errors(ported.meta) == []


def base_meta() -> dict:
    return copy.deepcopy(rc.compile(rc.load_program(ROOT / "programs" / "aab.rasp")).meta)


def test_fields_the_format_does_not_name_are_allowed():
    meta = base_meta()
    meta["margins"] = [{"readout": "output", "kind": "logit gap", "bound": 1.5, "tolerance": 1e-3}]
    meta["future"] = {"anything": [1, "two"]}
    assert schema_errors(meta) == []


@pytest.mark.parametrize("change, where", [
    (lambda m: m.pop("format"), ""),
    (lambda m: m.update(format="rasp-compile/2"), "format"),
    (lambda m: m.update(max_len=0), "max_len"),
    (lambda m: m.update(activation="tanh"), "activation"),
    (lambda m: m["layers"][0].update(n_head=-1), "layers/0/n_head"),
    (lambda m: m["output"].update(encoding="one-hot"), "output/encoding"),
    (lambda m: m["output"].pop("values"), "output"),
    (lambda m: m.update(vocab=[]), "vocab"),
    (lambda m: m.update(residual=[1, 2]), "residual/0"),
])
def test_malformed_metas_fail_it(change, where):
    meta = base_meta()
    change(meta)
    problems = schema_errors(meta)
    assert problems and any(problem.startswith(f"{where}: ") for problem in problems), problems
