"""The command line (docs/cli.md), run in-process: `main(argv)` with stdout/stderr captured.

Reports are checked against their oracles: completions against the post's, --accuracy and
--score against the interpreter's agreement, --flops against count_flops and the OpCounter.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from model_zoo import handmade_module
from rasp_compile import OPTIMIZATIONS, compile
from rasp_compile.cli import compile_cmd, run_cmd
from rasp_compile.tools.flops import count_flops
from rasp_compile.frontend import load_program
from rasp_compile.tools.interpret import OpCounter, evaluate
from rasp_compile.frontend.lower import MAX_LEN_LIMIT
from rasp_compile.runtime.model import n_nonzero, n_params
from rasp_compile.runtime.weights_file import load, save

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
AAB = str(PROGRAMS / "aab.rasp")
AAB_TEXT = "aabaabaabaabaabaabaabaabaabaab"


@pytest.fixture(scope="module")
def aab(tmp_path_factory) -> str:
    """programs/aab.rasp compiled by `rasp-compile --emit`."""
    path = str(tmp_path_factory.mktemp("cli") / "aab.npz")
    assert compile_cmd.main([AAB, "--emit", path]) == 0
    return path


@pytest.fixture(scope="module")
def handmade(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("cli") / "handmade_aab.npz")
    save(handmade_module().build(), path)
    return path


def run(capsys, main, *argv) -> tuple[int, str, str]:
    status = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return status, out, err


def run_json(capsys, main, *argv) -> dict:
    status, out, err = run(capsys, main, *argv, "--json")
    assert (status, err) == (0, "")
    return json.loads(out)


COMPLETIONS = {"aabaa": "baabaabaab", "a": "baabaabaab", "ba": "abaabaabaa",
               "abaab": "aabaabaaba", "ababa": "abaabaabaa", "bbbbb": "aabaabaaba"}


@pytest.mark.parametrize("text", COMPLETIONS)
def test_compiled_aab_completes_like_the_post(capsys, aab, text):
    assert run(capsys, run_cmd.main, aab, text) == (0, f"{text} :: {COMPLETIONS[text]}\n", "")


def test_rasp_file_runs_compiled_on_the_fly_and_handmade_model_runs(capsys, handmade):
    assert run(capsys, run_cmd.main, AAB, "aabaa", "--steps", 3)[1] == "aabaa :: baa\n"
    assert run(capsys, run_cmd.main, handmade, "bbbbb")[1] == "bbbbb :: aabaabaaba\n"


def test_compile_summary_reports_the_model(capsys, aab):
    model = load(aab)
    status, out, _ = run(capsys, compile_cmd.main, AAB)
    assert status == 0
    for text in ("prev", "next (output)", "sequence_map", f"d_model {model.d_model}",
                 f"parameters {n_params(model):,} ({n_nonzero(model):,} non-zero",
                 f"{count_flops(model, 6)['total']:,}"):
        assert text in out
    report = run_json(capsys, compile_cmd.main, AAB, "--max-len", 7, "--dtype", "float64")
    assert report["program"]["max_len"] == 7 and report["model"]["dtype"] == "float64"
    at_7 = compile(load_program(AAB), max_len=7)
    assert report["model"]["layers"] == at_7.meta["layers"]
    assert report["model"]["flops"] == count_flops(at_7, 8)
    assert [s["name"] for s in report["program"]["sops"]] == ["indices", "tokens", "prev", "next"]


def test_score_counts_27_of_27(capsys, aab):
    assert run(capsys, run_cmd.main, aab, "--score", AAB_TEXT, "--skip", 2) == (0, "27/27 (100.0%)\n", "")
    report = run_json(capsys, run_cmd.main, aab, "--score", "abbab", "--skip", 0)
    program = load_program(AAB)  # prediction i+1 is the program's output at i
    expected = evaluate(program, list("abba"))
    assert report["predictions"] == expected
    right = sum(e == t for e, t in zip(expected, "bbab"))
    assert (report["correct"], report["counted"]) == (right, 4)


def test_accuracy_is_100_percent_on_all_62_inputs(capsys, aab, handmade):
    status, out, _ = run(capsys, run_cmd.main, aab, "--accuracy")
    assert status == 0 and "62" in out and "100.0%" in out
    for path in (aab, handmade):
        report = run_json(capsys, run_cmd.main, path, "--accuracy")
        assert report["mode"] == "exhaustive" and not report["recompiles_to_other_weights"]
        assert report["total"] == {"sequences": 62, "positions": 258, "agree": 258,
                                   "program_errors": 0, "percent": 100.0}
        assert [row["sequences"] for row in report["lengths"]] == [2, 4, 8, 16, 32]


def test_accuracy_shows_disagreements_and_samples(capsys, tmp_path):
    model = compile(load_program(AAB))
    for key in ("unembed", "unembed_b"):  # swap the a and b logits
        if key in model.params:
            model.params[key] = model.params[key][..., ::-1].copy()
    path = tmp_path / "wrong.npz"
    save(model, path)
    status, out, err = run(capsys, run_cmd.main, path, "--accuracy", "--json")
    report = json.loads(out)
    assert report["total"]["agree"] == 0 and report["n_disagreeing_inputs"] == 62
    assert report["disagreements"][0] == {"input": "a", "expected": ["b"], "got": ["a"]}
    assert report["recompiles_to_other_weights"] and "other weights than its meta.source" in err
    status, out, _ = run(capsys, run_cmd.main, path, "--accuracy")
    assert "62 inputs disagree" in out


def test_accuracy_samples_beyond_100000_inputs(capsys, tmp_path):
    path = tmp_path / "aab17.npz"  # 2 + 4 + ... + 2**17 > 100,000 inputs
    assert run(capsys, compile_cmd.main, AAB, "--max-len", 17, "--emit", path)[0] == 0
    report = run_json(capsys, run_cmd.main, path, "--accuracy", "--samples", 40, "--seed", 3)
    assert report["mode"] == "sampled" and report["seed"] == 3
    assert report["total"]["sequences"] == 40 and report["total"]["percent"] == 100.0
    assert report == run_json(capsys, run_cmd.main, path, "--accuracy", "--samples", 40, "--seed", 3)


def test_program_errors_are_counted_apart(capsys, tmp_path):
    conflict = tmp_path / "conflict.rasp"  # every input holding both tokens selects two values
    conflict.write_text("vocab {a, b}\nmax_len 3\nx = aggregate(select(tokens, tokens, true), tokens)\noutput x\n")
    report = run_json(capsys, run_cmd.main, conflict, "--accuracy")
    assert report["total"] == {"sequences": 14, "positions": 12, "agree": 12, "program_errors": 8,
                               "percent": 100.0}
    assert report["program_errors"][0]["input"] == "ab"
    err = run(capsys, run_cmd.main, conflict, "ab", "--flops")[2]
    assert err.startswith(f"{conflict}:3:5: error: 'x' selects different values")


def test_flops_json_equals_count_flops_and_the_interpreter_counter(capsys, aab):
    report = run_json(capsys, run_cmd.main, aab, "aabaa", "--flops")
    model, program = load(aab), load_program(AAB)
    assert report["model"]["whole"] == count_flops(model, 6)
    assert report["model"]["last"] == count_flops(model, 6, last_only=True)
    whole, before = OpCounter(), OpCounter()
    evaluate(program, list("aabaa"), whole)
    evaluate(program, list("aaba"), before)
    assert report["direct_rule"]["whole"]["total"] == whole.total
    assert report["direct_rule"]["whole"]["predicate_tests"] == whole.predicate_tests
    assert report["direct_rule"]["last"]["total"] == whole.total - before.total
    assert report["ratio"]["whole"] == pytest.approx(count_flops(model, 6)["total"] / whole.total)
    status, out, _ = run(capsys, run_cmd.main, aab, "aabaa", "--flops")
    assert status == 0 and "FLOP conventions" in out and f"{count_flops(model, 6)['total']:,}" in out


def test_flops_of_a_model_without_source(capsys, tmp_path):
    model = handmade_module().build()
    del model.meta["source"]
    save(model, tmp_path / "bare.npz")
    report = run_json(capsys, run_cmd.main, tmp_path / "bare.npz", "aabaa", "--flops")
    assert report["model"]["whole"]["total"] == 3985 and report["direct_rule"] is None
    assert "needs the program" in run(capsys, run_cmd.main, tmp_path / "bare.npz", "aabaa", "--flops")[1]


def test_trace_decodes_named_sops_and_attention(capsys, aab):
    status, out, _ = run(capsys, run_cmd.main, aab, "aabaa", "--trace")
    assert status == 0
    assert all(name in out for name in ("tokens", "indices", "prev", "next", "BOS", "layer 0 head 0"))
    report = run_json(capsys, run_cmd.main, aab, "aabaa", "--trace")
    last = report["stages"][-1]
    assert last["values"]["prev"] == ["a", "a", "a", "b", "a"]  # the default "a", then the previous token
    assert last["stage"] == "read-out" and last["written"] == ["next"]
    assert last["values"]["next"] == [*"bbaab"]
    pattern = np.array(report["attention"][0]["pattern"])  # [BOS + 5 queries, BOS + 5 keys]
    np.testing.assert_allclose(pattern[1:].argmax(axis=1), [0, 1, 2, 3, 4])  # query i reads key i-1


def test_non_completing_model_prints_a_table_and_numbers_match_the_vocab(capsys):
    status, out, _ = run(capsys, run_cmd.main, PROGRAMS / "reverse.rasp", "1 2 3")
    assert status == 0 and "position" in out
    assert run_json(capsys, run_cmd.main, PROGRAMS / "reverse.rasp", "123")["output"] == [3, 2, 1]
    assert run_json(capsys, run_cmd.main, PROGRAMS / "reverse.rasp", "3.0 1 2")["output"] == [2, 1, 3]
    for unlike_a_program in ("+1", "1e0", "1_0", "\u0663"):  # float() takes each; a program writes none of them
        assert "is not in the vocab" in one_line_error(capsys, run_cmd.main, PROGRAMS / "reverse.rasp", f"1 {unlike_a_program}")
    numbers = run_json(capsys, run_cmd.main, PROGRAMS / "frac_prevs.rasp", "xyyx")["output"]
    assert numbers == pytest.approx([1, 0.5, 1 / 3, 0.5], abs=1e-5)


def test_json_completion(capsys, aab):
    report = run_json(capsys, run_cmd.main, aab, "aabaa")
    assert report["continuation"] == list("baabaabaab") and report["text"] == "aabaa :: baabaabaab"


@pytest.mark.parametrize("main", [compile_cmd.main, run_cmd.main])
def test_help(capsys, main):
    status, out, _ = run(capsys, main, "--help")
    assert status == 0 and "--json" in out


def one_line_error(capsys, main, *argv, status=2) -> str:
    got, out, err = run(capsys, main, *argv)
    assert got == status and out == ""
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_input_errors(capsys, aab):
    assert one_line_error(capsys, run_cmd.main, aab, "abc") == "error: token 'c' is not in the vocab {a, b}\n"
    assert "empty" in one_line_error(capsys, run_cmd.main, aab, " ")
    assert "longer than max_len 8" in one_line_error(capsys, run_cmd.main, PROGRAMS / "reverse.rasp", "1" * 9)
    assert "max_len" in one_line_error(capsys, run_cmd.main, aab, "aabaab", "--flops")
    assert "INPUT is required" in one_line_error(capsys, run_cmd.main, aab)


def test_file_errors(capsys, aab, tmp_path):
    truncated, pickled, not_zip = tmp_path / "truncated.npz", tmp_path / "pickled.npz", tmp_path / "text.npz"
    truncated.write_bytes(Path(aab).read_bytes()[:300])
    np.savez(pickled, meta=np.array([{"a": 1}], dtype=object))  # savez pickles object arrays by default
    not_zip.write_text("hello\n")
    assert "no such file" in one_line_error(capsys, run_cmd.main, tmp_path / "missing.npz", "a")
    assert "truncated" in one_line_error(capsys, run_cmd.main, truncated, "a")
    assert "pickled" in one_line_error(capsys, run_cmd.main, pickled, "a")
    assert "not a zip" in one_line_error(capsys, run_cmd.main, not_zip, "a")
    assert "no such file" in one_line_error(capsys, compile_cmd.main, tmp_path / "missing.rasp")


def test_command_line_errors(capsys):
    assert "--bogus" in one_line_error(capsys, compile_cmd.main, AAB, "--bogus")
    assert "--max-len" in one_line_error(capsys, compile_cmd.main, AAB, "--max-len", "0")
    assert "--max-len" in one_line_error(capsys, compile_cmd.main, AAB, "--max-len", "x")
    assert "not allowed with" in one_line_error(capsys, run_cmd.main, AAB, "a", "--flops", "--trace")


def test_malformed_program_exits_1_with_location_and_caret(capsys, tmp_path):
    bad = tmp_path / "bad.rasp"
    bad.write_text("vocab {a, b}\nmax_len 5\nx = map(lambda t: t, tokenz)\noutput x\n")
    status, out, err = run(capsys, compile_cmd.main, bad)
    assert status == 1 and out == ""
    assert err.splitlines() == [f"{bad}:3:22: error: unknown name 'tokenz'; did you mean 'tokens'?",
                                "x = map(lambda t: t, tokenz)", " " * 21 + "^"]
    assert run(capsys, run_cmd.main, bad, "ab")[0] == 1


@pytest.mark.slow
def test_installed_console_scripts(tmp_path):
    """The two commands pyproject.toml declares, as installed beside this Python (the tests run from
    an installed package, `pip install -e '.[test]'`, whether or not its bin directory is on PATH)."""
    scripts = Path(sysconfig.get_path("scripts"))
    weights = tmp_path / "aab.npz"
    subprocess.run([scripts / "rasp-compile", AAB, "--emit", weights], check=True, capture_output=True)
    done = subprocess.run([scripts / "rasp-run", weights, "aabaa"], check=True, capture_output=True, text=True)
    assert done.stdout == "aabaa :: baabaabaab\n"
    version = subprocess.run([scripts / "rasp-run", "--version"], check=True, capture_output=True, text=True)
    assert version.stdout == f"rasp-run {importlib.metadata.version('rasp-compile')}\n"


def test_no_opt_switches_passes_off(capsys):
    plain = run_json(capsys, compile_cmd.main, AAB, "--no-opt", "all")
    assert plain["model"]["layers"] == compile(load_program(AAB), disabled=OPTIMIZATIONS).meta["layers"]
    one_off = run_json(capsys, compile_cmd.main, AAB, "--no-opt", "linear-readout")
    assert one_off["model"]["layers"] == compile(load_program(AAB), disabled=["linear-readout"]).meta["layers"]
    assert plain["model"]["d_model"] > run_json(capsys, compile_cmd.main, AAB)["model"]["d_model"]
    status, _, err = run(capsys, compile_cmd.main, AAB, "--no-opt", "bogus")
    assert status == 2 and len(err.strip().splitlines()) == 1 and "bogus" in err


def test_broken_pipe_ends_quietly():
    """A reader that leaves (`rasp-run ... | head`) ends the run with status 141 (128 + SIGPIPE)
    and no traceback, also when Python flushes stdout at exit."""
    body = ("import sys; from rasp_compile.cli.common import Parser, run_edge\n"
            "def body(args):\n    raise BrokenPipeError\n"
            "sys.exit(run_edge(body, Parser(prog='x'), []))")
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, timeout=60)
    assert done.returncode == 141 and b"Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("flags", [["--json"], [], ["--trace"]], ids=["buffered-json", "buffered-text", "rich"])
def test_closed_output_pipe_exits_141_quietly(aab, flags):
    """stdout a pipe whose reader is gone: plain prints sit in Python's buffer until exit (status
    120 and "Exception ignored" unless the edge flushes), rich's console exits 1 by itself."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    body = f"import sys; from rasp_compile.cli import run_cmd; sys.exit(run_cmd.main({[aab, 'aabaa', *flags]!r}))"
    try:
        done = subprocess.run([sys.executable, "-c", body], stdout=write_end, stderr=subprocess.PIPE,
                              env=env, timeout=120)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, b"")


def test_max_len_is_bounded_like_a_programs_own(capsys, tmp_path):
    """--max-len takes what a program's own `max_len` may be, 1..MAX_LEN_LIMIT; beyond, compiling
    grows without bound (10**8 ran for minutes, a 23-digit one hung)."""
    tiny = tmp_path / "tiny.rasp"  # quick to compile at any max_len: the bound is the flag's
    tiny.write_text("vocab {a, b}\nmax_len 2\noutput map(lambda t: t, tokens)\n")
    for bad in (MAX_LEN_LIMIT + 1, "99999999999999999999999", 0, -3, "5_0", " 5", "\u0665"):  # ٥, int() takes it
        err = one_line_error(capsys, compile_cmd.main, tiny, "--max-len", bad)
        assert err.startswith("rasp-compile: error: argument --max-len:") and f"{MAX_LEN_LIMIT:,}" in err
    assert run_json(capsys, compile_cmd.main, tiny, "--max-len", MAX_LEN_LIMIT)["program"]["max_len"] == MAX_LEN_LIMIT


def test_emit_needs_a_file_it_can_write(capsys, tmp_path):
    for path, problem in (("", "expected a file name"), (tmp_path, "is a directory"),
                          (tmp_path / "missing" / "out.npz", "no such directory")):
        err = one_line_error(capsys, compile_cmd.main, AAB, "--emit", path)
        assert err.startswith("rasp-compile: error: argument --emit:") and problem in err
    assert "expected a file name" in one_line_error(capsys, compile_cmd.main, "")
    assert "expected a file name" in one_line_error(capsys, run_cmd.main, "", "a")


def test_options_may_come_before_the_positionals(capsys, aab):
    assert run(capsys, run_cmd.main, aab, "--steps", 3, "aa") == (0, "aa :: baa\n", "")
    assert run(capsys, run_cmd.main, "--steps", 3, aab, "aa") == (0, "aa :: baa\n", "")
    assert run(capsys, run_cmd.main, aab, "--json", "aa")[0] == 0
    assert run_json(capsys, run_cmd.main, aab, "--flops", "aabaa") == run_json(capsys, run_cmd.main, aab, "aabaa", "--flops")
    assert run(capsys, run_cmd.main, "--score", AAB_TEXT, "--skip", 2, aab) == (0, "27/27 (100.0%)\n", "")
    assert "unrecognized arguments: b" in one_line_error(capsys, run_cmd.main, aab, "--steps", 3, "a", "b")


def test_unknown_flag_is_named_before_a_missing_positional(capsys):
    assert "unrecognized arguments: --bogus" in one_line_error(capsys, compile_cmd.main, "--bogus")
    assert "unrecognized arguments: --bogus" in one_line_error(capsys, run_cmd.main, "--bogus")
    assert "PROGRAM.rasp is required" in one_line_error(capsys, compile_cmd.main, "--json")
    assert "WEIGHTS is required" in one_line_error(capsys, run_cmd.main, "--json")


def test_vocab_in_a_message_escapes_control_characters(capsys, aab, tmp_path):
    model = load(aab)  # vocab ["\n", "b", "BOS"]: the token "a" renamed to a newline
    model.meta["vocab"] = ["\n" if token == "a" else token for token in model.meta["vocab"]]
    model.meta["output"]["values"] = ["\n" if v == "a" else v for v in model.meta["output"]["values"]]
    save(model, tmp_path / "newline.npz")
    err = one_line_error(capsys, run_cmd.main, tmp_path / "newline.npz", "a")
    assert err == "error: token 'a' is not in the vocab {\\n, b}\n"


def test_score_and_steps_need_a_model_that_completes(capsys):
    err = one_line_error(capsys, run_cmd.main, PROGRAMS / "frac_prevs.rasp", "--score", "xyxy")
    assert err.startswith("error: --score needs a model that completes sequences") and "numerical output" in err
    err = one_line_error(capsys, run_cmd.main, PROGRAMS / "reverse.rasp", "123", "--steps", 3)
    assert err.startswith("error: --steps needs a model that completes sequences") and "not causal" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_a_fifo_or_a_directory_is_refused_without_reading_it(capsys, tmp_path):
    """Opening a FIFO for reading waits for a writer: `rasp-run PIPE aa` used to hang forever."""
    weights, program = tmp_path / "pipe.npz", tmp_path / "pipe.rasp"
    os.mkfifo(weights)
    os.mkfifo(program)
    assert one_line_error(capsys, run_cmd.main, weights, "aa") == f"error: {weights}: a FIFO, not an .npz weights file\n"
    assert one_line_error(capsys, compile_cmd.main, program) == f"error: {program}: a FIFO, not a program file\n"
    folder = tmp_path / "folder.rasp"
    folder.mkdir()
    assert "a directory, not a program file" in one_line_error(capsys, compile_cmd.main, folder)
    assert "a directory, not an .npz weights file" in one_line_error(capsys, run_cmd.main, tmp_path, "aa")


def test_emit_targets_that_cannot_take_weights_are_refused_before_compiling(capsys, tmp_path):
    """An existing FIFO blocked the write forever; a name too long raised OSError from pathlib."""
    fifo = tmp_path / "out.npz"
    os.mkfifo(fifo)
    assert "is a FIFO" in one_line_error(capsys, compile_cmd.main, AAB, "--emit", str(fifo))
    assert "too long" in one_line_error(capsys, compile_cmd.main, AAB, "--emit", str(tmp_path / ("x" * 300)))


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("module, argv", [("compile_cmd", [AAB, "--json"]), ("run_cmd", [AAB, "aab"])])
def test_an_unwritable_output_is_one_line_and_status_2(module, argv):
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", f"rasp_compile.cli.{module}", *map(str, argv)],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr == "error: cannot write the output: No space left on device\n"


def test_an_input_whose_attention_would_not_fit_in_memory_is_refused(capsys, tmp_path):
    """A valid weights file may declare any max_len: 30,000 positions would need 10.8 GB of scores."""
    model = compile(load_program(AAB))
    model.meta["max_len"] = 30_000
    model.params["wpe"] = np.zeros((30_001, model.params["wpe"].shape[1]), model.dtype)
    save(model, tmp_path / "long.npz")
    assert "GB for its attention scores" in one_line_error(capsys, run_cmd.main, tmp_path / "long.npz", "a" * 30_000)


@pytest.mark.slow
def test_counts_given_to_flags_are_bounded(capsys, aab):
    """--steps 99999999999999999999 completed forever; --samples likewise."""
    assert "from 1 to 10,000" in one_line_error(capsys, run_cmd.main, aab, "aa", "--steps", "99999999999999999999")
    assert "from 1 to 100,000" in one_line_error(capsys, run_cmd.main, aab, "--accuracy", "--samples", "100001")
    assert run(capsys, run_cmd.main, aab, "aa", "--steps", "10000")[0] == 0


def test_accuracy_of_a_file_declaring_a_max_len_no_program_may_is_refused(capsys, tmp_path):
    """The interpreter would run the source on inputs of up to 60,000 tokens, for hours."""
    model = compile(load_program(AAB))
    model.meta["max_len"] = 60_000
    model.params["wpe"] = np.zeros((60_001, model.params["wpe"].shape[1]), model.dtype)
    save(model, tmp_path / "long.npz")
    assert "beyond what a program may declare" in one_line_error(capsys, run_cmd.main, tmp_path / "long.npz", "--accuracy")


def test_a_closed_standard_output_is_one_line_and_status_2(aab):
    done = subprocess.run(f"{sys.executable} -m rasp_compile.cli.run_cmd {aab} aab >&-", shell=True,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr == "error: standard output is closed\n"


def test_every_flag_is_honoured_or_refused_with_a_reason(capsys, aab):
    for argv, flag in [((aab, "aa", "--skip", 1), "--skip"), ((aab, "aa", "--seed", 1), "--seed"),
                       ((aab, "aa", "--samples", 9), "--samples"), ((aab, "--accuracy", "--steps", 2), "--steps"),
                       ((aab, "aa", "--trace", "--steps", 2), "--steps"), ((aab, "--score", "abab", "--seed", 2), "--seed"),
                       ((aab, "aa", "--max-len", 9), "--max-len"), ((aab, "aa", "--dtype", "float64"), "--dtype"),
                       ((aab, "aa", "--no-opt", "prune"), "--no-opt")]:
        err = one_line_error(capsys, run_cmd.main, *argv)
        assert f"{flag} applies only" in err, err


def test_samples_and_seed_say_when_every_input_is_run(capsys, aab):
    status, out, err = run(capsys, run_cmd.main, aab, "--accuracy", "--samples", 50, "--seed", 4, "--json")
    assert status == 0 and json.loads(out)["mode"] == "exhaustive"
    assert err.startswith("note: --samples and --seed did not apply: every one of the 62 inputs")


def test_rasp_run_compiles_a_program_with_the_compiler_flags(capsys):
    plain = run_json(capsys, run_cmd.main, AAB, "aabaa", "--no-opt", "all", "--flops")
    assert plain["model"]["whole"] == count_flops(compile(load_program(AAB), disabled=OPTIMIZATIONS), 6)
    longer = run_json(capsys, run_cmd.main, AAB, "aabaabaa", "--max-len", 8, "--dtype", "float64", "--trace")
    assert len(longer["positions"]) == 9  # BOS and 8 tokens: beyond the program's own max_len 5
    reverse = PROGRAMS / "reverse.rasp"  # not causal: an input longer than max_len is refused
    assert "longer than max_len 8" in one_line_error(capsys, run_cmd.main, reverse, "1 2 3 1 2 3 1 2 3")
    assert run_json(capsys, run_cmd.main, reverse, "1 2 3 1 2 3 1 2 3", "--max-len", 9)["output"][0] == 3


def test_version(capsys):
    expected = importlib.metadata.version("rasp-compile")
    for main, name in ((compile_cmd.main, "rasp-compile"), (run_cmd.main, "rasp-run")):
        assert run(capsys, main, "--version") == (0, f"{name} {expected}\n", "")


def test_a_program_error_on_the_input_is_said_with_status_1(capsys, tmp_path):
    conflict = tmp_path / "conflict.rasp"  # an input holding both tokens selects two values
    conflict.write_text("vocab {a, b}\nmax_len 3\nx = aggregate(select(tokens, tokens, true), tokens)\noutput x\n")
    status, out, err = run(capsys, run_cmd.main, conflict, "ab")
    assert status == 1 and "none" in out
    assert err.startswith(f"{conflict}:3:5: error: 'x' selects different values") and "is in error on this input" in err
    status, out, err = run(capsys, run_cmd.main, conflict, "ab", "--json")
    assert status == 1 and "selects different values" in json.loads(out)["program_error"]
    assert run(capsys, run_cmd.main, conflict, "aa")[0] == 0
    weights = tmp_path / "conflict.npz"  # from a weights file: its meta.source, checked the same way
    assert run(capsys, compile_cmd.main, conflict, "--emit", weights)[0] == 0
    status, out, err = run(capsys, run_cmd.main, weights, "ab")
    assert status == 1 and err.startswith(f"{weights}:meta.source:3:5: error: 'x' selects different values")
    decoder = tmp_path / "decoder.rasp"  # causal; errs once the window holds both tokens
    decoder.write_text("vocab {a, b}\nmax_len 3\ncausal\n"
                       "output aggregate(select(tokens, tokens, true), tokens, default=\"a\")\n")
    assert run(capsys, run_cmd.main, decoder, "a", "--steps", 2) == (0, "a :: aa\n", "")
    status, out, err = run(capsys, run_cmd.main, decoder, "ab", "--steps", 2)
    assert (status, out) == (1, "ab :: aa\n") and "is in error on this input" in err


def test_accuracy_refuses_a_source_that_is_not_the_weights_program(capsys, tmp_path, aab):
    model = load(aab)
    model.meta["source"] = model.meta["source"].replace("vocab {a, b}", "vocab {a, b, c}")
    assert "vocab {a, b, c}" in model.meta["source"]
    other = tmp_path / "other_vocab.npz"
    save(model, other)
    err = one_line_error(capsys, run_cmd.main, other, "--accuracy")
    assert "meta.source is not the program of these weights (its vocab is not the model's)" in err


def ctrl_c_as_on_a_terminal():
    """In the child before it starts Python: SIGINT's default action, as a terminal gives a command
    (a test run started in the background of a script inherits SIGINT ignored, and Python then
    leaves it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_without_a_traceback_and_leaves_no_partial_output():
    """SIGINT in the middle of the work of `rasp-run PROGRAM --accuracy` (sampled inputs at max_len
    30): status 130, one line, no traceback. The process says when it is inside the work (its first
    batch of the model, which then waits for the signal), so the test does not guess how long
    imports and compiling take on this machine."""
    ready, announce = os.pipe()
    body = ("import os, signal, sys\n"
            "from rasp_compile.cli import comparison, run_cmd\n"
            "def first_batch(model, picks):\n"
            f"    os.write({announce}, b'working')\n"
            "    signal.pause()  # until the SIGINT arrives: it raises KeyboardInterrupt here\n"
            "comparison.model_outputs = first_batch\n"
            f"sys.exit(run_cmd.main([{AAB!r}, '--accuracy', '--max-len', '30']))")
    process = subprocess.Popen([sys.executable, "-c", body], pass_fds=[announce], preexec_fn=ctrl_c_as_on_a_terminal,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(announce)
    with os.fdopen(ready, "rb") as said:
        assert said.read(7) == b"working"  # b"" if the process ended before reaching the work
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=600)
    assert (process.returncode, out, err) == (130, "", "interrupted\n")
    body = ("import sys; from rasp_compile.cli.common import Parser, run_edge\n"
            "def body(args):\n    raise KeyboardInterrupt\n"
            "sys.exit(run_edge(body, Parser(prog='x'), []))")
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, timeout=600)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "interrupted\n")


def test_the_summary_shortens_long_names_and_vocabs(capsys, tmp_path):
    long = tmp_path / "long.rasp"
    name = "x" * 100_000
    long.write_text("vocab {" + ", ".join(map(str, range(100))) + f"}}\nmax_len 2\n{name} = tokens\noutput {name}\n")
    status, out, _ = run(capsys, compile_cmd.main, long)
    assert status == 0 and len(out) < 5_000 and "(100,000 characters)" in out and "… (100 tokens)" in out
    assert run_json(capsys, compile_cmd.main, long)["program"]["output"] == name  # JSON keeps it whole


def test_a_long_run_is_checked_within_a_budget_and_says_so(capsys, aab, monkeypatch):
    from rasp_compile.cli import reference

    monkeypatch.setattr(reference, "CHECKED_PAIRS", 30)  # windows of 5 tokens: 25 pairs, then 50
    status, out, err = run(capsys, run_cmd.main, aab, "aabaa", "--steps", 4)
    assert (status, out) == (0, "aabaa :: baab\n")
    assert err == "note: the program was checked on the first 1 of the 4 inputs the model read " \
                  "(the interpreter is slow at this length)\n"
