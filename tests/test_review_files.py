"""Hostile weights files from an outside review: meta that lies about the residual stream, strings
that would act on a terminal, through every report (`--trace`, `--html`, `rc.trace`, `model.head`,
reprs). Each must give its report, degraded, or one line; never a traceback or raw control text."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path

import pytest

import rasp_compile as rc
from rasp_compile.cli import run_cmd

AAB = Path(__file__).resolve().parent.parent / "programs" / "aab.rasp"
HOSTILE_TEXT = "</script><img src=x onerror=alert(1)>\x1b]0;pwned\x07\u202e"


@cache
def aab() -> rc.Model:
    return rc.compile(AAB)


def with_meta(**changes) -> rc.Model:
    model = aab()
    return rc.Model({**copy.deepcopy(model.meta), **changes}, model.params)


def sops_numerical_where_labels_say_categorical() -> rc.Model:
    """meta.sops calls a one-hot (`tokens:a`, `tokens:b`) numerical: no dimension is named `tokens`."""
    sops = copy.deepcopy(aab().meta["sops"])
    sops["tokens"] = {"encoding": "numerical", "values": [1, 2]}
    return with_meta(sops=sops)


def sops_numbers_not_finite() -> rc.Model:
    sops = copy.deepcopy(aab().meta["sops"])
    sops["indices (number)"]["values"] = [float("nan"), 10**400, 1, 2]
    return with_meta(sops=sops)


LYING = {"numerical-one-hot": sops_numerical_where_labels_say_categorical,
         "numbers-not-finite": sops_numbers_not_finite}


@pytest.mark.parametrize("make", LYING.values(), ids=LYING.keys())
def test_trace_degrades_on_meta_sops_that_lie(make, tmp_path, capsys):
    model = make()
    t = rc.trace(model, list("aab"))
    assert t.output == rc.run(aab(), "aab")
    assert t.sop("tokens") == list("aab")  # read from the labels when meta.sops contradicts them
    assert all(v in (0, 1, 2) for v in t.sop("indices (number)"))
    rc.save(model, tmp_path / "lying.npz")
    for flags in (["--trace"], ["--trace", "--json"], ["--html", str(tmp_path / "r.html")]):
        assert run_cmd.main([str(tmp_path / "lying.npz"), "aab", *flags]) == 0
    capsys.readouterr()


def terminal_clean(text: str) -> bool:
    return all(c.isprintable() for c in text)


def test_reprs_of_hostile_strings_stay_short_and_terminal_safe():
    """A REPL prints reprs to the terminal: vocab tokens, names and titles from a file or from
    Python are escaped and shortened there too."""
    from rasp_compile import ir, rasp

    hostile = with_meta(vocab=[HOSTILE_TEXT * 1000, "b\x1b[2J", "BOS"],
                        heads=[[dict(aab().meta["heads"][0][0], sop=HOSTILE_TEXT * 1000)]],
                        output=dict(aab().meta["output"], name=HOSTILE_TEXT))
    head = hostile.head(0, 0)
    named = rasp.Map(lambda x: x, rasp.tokens).named(HOSTILE_TEXT * 10_000)
    program = ir.Program(ir.Map(ir.Fn(lambda t: t, HOSTILE_TEXT * 1000), ir.tokens), (HOSTILE_TEXT, "b"), 3,
                         filename=HOSTILE_TEXT, output_name=HOSTILE_TEXT)
    for text in (repr(hostile), repr(head), repr(head.QK), repr(named), repr(program), repr(program.output)):
        assert terminal_clean(text) and len(text) < 1_000, text[:200]
    assert "\\x1b]0;pwned\\x07\\u202e" in repr(program)


def test_report_and_weights_outputs_are_checked_alike_before_any_work(tmp_path, capsys):
    """--html is refused for a name the system cannot take before the weights are even read, as
    --emit is before compiling: both use one check."""
    too_long = str(tmp_path / ("x" * 5_000 + ".html"))
    missing = str(tmp_path / "missing.npz")
    assert run_cmd.main([missing, "ab", "--html", too_long]) == 2
    error = capsys.readouterr().err
    assert error.startswith("rasp-run: error: argument --html:") and "File name too long" in error
    assert error.count("\n") == 1


def test_a_file_without_residual_labels_gets_the_same_labels_in_every_report():
    from rasp_compile.interop.labels import labels_of
    from rasp_compile.tools.inspect_weights import labelled_blocks

    unlabelled = rc.Model({k: v for k, v in aab().meta.items() if k != "residual"}, aab().params)
    expected = tuple(f"d{i}" for i in range(unlabelled.d_model))
    assert rc.trace(unlabelled, list("ab")).labels == expected
    assert unlabelled.head(0, 0).W_O.columns == expected
    assert labelled_blocks(unlabelled)[0].col_labels == expected
    assert labels_of(unlabelled, n_heads=1).residual == expected


def test_a_lone_surrogate_in_meta_is_refused_at_load(tmp_path, capsys):
    """JSON can spell "\\udcff"; no page or terminal can show it: --html ended in a
    UnicodeEncodeError traceback, a notebook could not send the model's view."""
    import json

    import numpy as np

    meta = copy.deepcopy(aab().meta)
    meta["vocab"][1] = "b\udcff"
    np.savez(tmp_path / "s.npz", meta=np.array(json.dumps(meta)), **aab().params)
    for flags in (["a"], ["a", "--html", str(tmp_path / "r.html")], ["a", "--trace"]):
        assert run_cmd.main([str(tmp_path / "s.npz"), *flags]) == 2
        error = capsys.readouterr().err
        assert "lone surrogate" in error and error.count("\n") == 1 and "\\udcff" in error
