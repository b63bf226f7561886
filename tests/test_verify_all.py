"""`rasp-run --accuracy --all [--workers N | --dask ADDRESS]` (cli/verify.py, tools/all_inputs.py,
executors.py, dask_run.py): every input of every length is compared once, the figures are an
independent count's, and the run gives the same report wherever its chunks run.

The model compared is programs/dyck1.rasp with two of its output columns swapped, so that some
positions agree and some do not: counts and the first disagreements then mean something."""

from __future__ import annotations

import json
import sys
from itertools import product
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extras import require
from rasp_compile import compile
from rasp_compile.cli import dask_run, run_cmd
from rasp_compile.tools import all_inputs
from rasp_compile.tools.all_inputs import chunk_inputs, chunks, count_chunks, count_inputs
from rasp_compile.frontend import load_program
from rasp_compile.runtime import prediction
from rasp_compile.runtime.weights_file import load, save
from rasp_compile.tools.interpret import evaluate

DYCK1 = Path(__file__).resolve().parent.parent / "programs" / "dyck1.rasp"
MAX_LEN = 7  # 254 inputs


def dyck1(tokens: list) -> list:
    """The program in plain Python: "F" once a prefix closed more than it opened, else "T" when
    balanced, "P" when not yet."""
    out, depth, broken = [], 0, False
    for token in tokens:
        depth += 1 if token == "(" else -1
        broken = broken or depth < 0
        out.append("F" if broken else ("T" if depth == 0 else "P"))
    return out


@pytest.fixture(scope="module")
def swapped(tmp_path_factory) -> str:
    """dyck1 at MAX_LEN with the columns of its outputs "T" and "F" exchanged."""
    model = compile(load_program(DYCK1, max_len=MAX_LEN))
    values = model.meta["output"]["values"]
    t, f = values.index("T"), values.index("F")
    for key in ("unembed", "unembed_b"):
        if key in model.params:
            array = model.params[key]
            array[..., [t, f]] = array[..., [f, t]]
    path = str(tmp_path_factory.mktemp("verify") / "dyck1_swapped.npz")
    save(model, path)
    return path


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of a few inputs (longer inputs, fewer), so that every length spans several."""
    monkeypatch.setattr(all_inputs, "CHUNK_PAIRS", 200)
    monkeypatch.setattr(all_inputs, "MAX_CHUNK", 16)


def report_of(capsys, *argv) -> dict:
    status = run_cmd.main([str(arg) for arg in argv] + ["--json"])
    out, err = capsys.readouterr()
    assert status == 0 and all("holds other weights than its meta.source" in line for line in err.splitlines())
    return json.loads(out)


def independent_count(path: str) -> dict:
    """What --accuracy must report on every input, counted here: the model (`predict`) against the
    plain-Python dyck1, which must itself be the interpreter's answer on every input."""
    model, program = load(path), load_program(DYCK1, max_len=MAX_LEN)
    rows, disagreeing = [], []
    for n in range(1, MAX_LEN + 1):
        inputs = [list(tokens) for tokens in product("()", repeat=n)]
        got = prediction.predict(model, inputs)
        agree = 0
        for tokens, outputs in zip(inputs, got):
            want = dyck1(tokens)
            assert evaluate(program, tokens) == want
            agree += sum(map(str.__eq__, want, outputs))
            if outputs != want:
                disagreeing.append({"input": "".join(tokens), "expected": want, "got": outputs})
        rows.append({"length": n, "sequences": 2 ** n, "positions": n * 2 ** n, "agree": agree,
                     "program_errors": 0, "percent": 100.0 * agree / (n * 2 ** n)})
    return {"lengths": rows, "n_disagreeing_inputs": len(disagreeing), "disagreements": disagreeing[:5]}


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.integers(1, 60), st.integers(1, 20))
def test_chunks_number_every_input_once_in_order(vocab_size, max_len, pairs, most):
    original = all_inputs.CHUNK_PAIRS, all_inputs.MAX_CHUNK
    all_inputs.CHUNK_PAIRS, all_inputs.MAX_CHUNK = pairs, most
    try:
        cut = list(chunks(vocab_size, max_len))
        assert len(cut) == count_chunks(vocab_size, max_len)
        assert all(1 <= chunk.count <= most for chunk in cut)
        rows = [tuple(row) for chunk in cut for row in chunk_inputs(chunk, vocab_size).tolist()]
    finally:
        all_inputs.CHUNK_PAIRS, all_inputs.MAX_CHUNK = original
    assert rows == [row for n in range(1, max_len + 1) for row in product(range(vocab_size), repeat=n)]
    assert len(rows) == count_inputs(vocab_size, max_len)


def test_chunk_inputs_far_into_a_large_length():
    start = 3 ** 39 + 5  # a vocab of 3 at length 40: numbers past 2**61
    expected = [[int(digit) for digit in f"{number:0>40}"] for number in map(base_3, range(start, start + 3))]
    assert chunk_inputs(all_inputs.Chunk(length=40, start=start, count=3), 3).tolist() == expected


def base_3(number: int) -> str:
    return "" if number == 0 else base_3(number // 3) + str(number % 3)


def test_all_is_an_independent_count_of_every_input(capsys, swapped, small_chunks):
    report = report_of(capsys, swapped, "--accuracy", "--all")
    expected = independent_count(swapped)
    assert report["mode"] == "exhaustive" and report["seed"] is None
    assert report["lengths"] == expected["lengths"]
    assert report["n_disagreeing_inputs"] == expected["n_disagreeing_inputs"] > 0
    assert report["disagreements"] == expected["disagreements"]
    assert report["total"]["agree"] == sum(row["agree"] for row in expected["lengths"])
    assert report == report_of(capsys, swapped, "--accuracy")  # 254 inputs: every one either way


@pytest.mark.slow
def test_workers_give_the_single_process_report(capsys, swapped, small_chunks):
    alone = report_of(capsys, swapped, "--accuracy", "--all")
    assert report_of(capsys, swapped, "--accuracy", "--all", "--workers", 2) == alone
    compiled = report_of(capsys, DYCK1, "--max-len", 5, "--accuracy", "--all")  # a .rasp travels too
    assert report_of(capsys, DYCK1, "--max-len", 5, "--accuracy", "--all", "--workers", 2) == compiled
    assert compiled["total"]["sequences"] == 62 and compiled["total"]["percent"] == 100.0


def test_dask_cluster_gives_the_single_process_report(capsys, swapped, small_chunks):
    distributed = require("distributed", "distributed")
    alone = report_of(capsys, swapped, "--accuracy", "--all")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0") as cluster:
        assert len(cluster.workers) == 2
        assert report_of(capsys, swapped, "--accuracy", "--all", "--dask", cluster.scheduler_address) == alone


def one_line_error(capsys, *argv) -> str:
    status = run_cmd.main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("argv, said", [
    (["--all"], "--all applies only with --accuracy"),
    (["((", "--all"], "--all applies only with --accuracy"),
    (["--accuracy", "--workers", "2"], "--workers applies only with --accuracy --all"),
    (["--accuracy", "--dask", "tcp://127.0.0.1:8786"], "--dask applies only with --accuracy --all"),
    (["--accuracy", "--all", "--samples", "5"], "--samples does not apply with --all"),
    (["--accuracy", "--all", "--seed", "1"], "--seed does not apply with --all"),
    (["--accuracy", "--all", "--workers", "0"], "argument --workers: expected a whole number from 1 to 256, got '0'"),
    (["--accuracy", "--all", "--workers", "-2"], "got '-2'"),
    (["--accuracy", "--all", "--workers", "two"], "got 'two'"),
    (["--accuracy", "--all", "--workers", "2", "--dask", "tcp://127.0.0.1:8786"], "exclude each other"),
])
def test_misused_flags_are_one_line(capsys, swapped, argv, said):
    assert said in one_line_error(capsys, swapped, *argv)


def test_more_inputs_than_all_compares_is_refused(capsys):
    err = one_line_error(capsys, DYCK1, "--max-len", 64, "--accuracy", "--all")  # 2**65 - 2 inputs
    assert "--all would compare 36,893,488,147,419,103,230 inputs" in err and "at most 10**18" in err


def test_dask_without_the_extra_names_the_install(capsys, swapped, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # an import of it then fails
    assert "pip install 'rasp-compile[distributed]'" in one_line_error(
        capsys, swapped, "--accuracy", "--all", "--dask", "tcp://127.0.0.1:8786")


def test_bad_or_unreachable_dask_addresses_are_one_line(capsys, swapped, monkeypatch):
    require("distributed", "distributed")
    monkeypatch.setattr(dask_run, "DASK_TIMEOUT", 1)
    assert "expects a scheduler's address" in one_line_error(capsys, swapped, "--accuracy", "--all", "--dask", "nowhere")
    err = one_line_error(capsys, swapped, "--accuracy", "--all", "--dask", "tcp://127.0.0.1:1")
    assert err.startswith("error: cannot reach a Dask scheduler at tcp://127.0.0.1:1: ")
