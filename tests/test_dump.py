"""The graph dump (rasp_compile/compiler/dump/, `python -m rasp_compile.compiler.dump`, `rasp-compile
--dump-graph`): what each step shows, its refusals in one line, program errors in the compiler's
format, abbreviated and terminal-safe values, and a text that does not depend on the run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rasp_compile.cli import compile_cmd, dump_cmd
from rasp_compile.compiler import OPTIMIZATIONS, build_graph
from rasp_compile.compiler.driver import GRAPH_PASSES, LOWERING_REWRITES
from rasp_compile.compiler.dump import graph_after, graph_steps, model_steps, steps
from rasp_compile.compiler.dump.text import graph_lines
from rasp_compile.frontend import load_checked, parse_checked

ROOT = Path(__file__).resolve().parent.parent
AAB = str(ROOT / "programs" / "aab.rasp")
SORT = str(ROOT / "programs" / "sort.rasp")


def run(capsys, main, *argv) -> tuple[int, str, str]:
    status = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return status, out, err


def body(text: str) -> str:
    """A dump past its header line."""
    return text.split("\n", 1)[1]


def test_the_default_is_the_graph_the_compiler_builds(capsys):
    status, out, err = run(capsys, dump_cmd.main, SORT)
    assert status == 0 and err == "" and out.startswith(f"# sort.rasp, max_len 8, after {GRAPH_PASSES[-1].label}\n")
    program, value_sets = load_checked(SORT)
    graph = build_graph(program, value_sets, frozenset(OPTIMIZATIONS))
    labels = re.findall(r"^(\S+): (?:categorical|numerical) ", out, re.MULTILINE)
    assert labels == [op.out.label for op in graph.ops]  # every variable, in the graph's order
    assert out.count("\n  <- ") == len(graph.ops) and out.endswith("output output; read out from output into 4 classes\n")


def test_both_commands_print_the_same(capsys):
    for step in ("lower", "amplify", "prune"):
        dumped = run(capsys, dump_cmd.main, AAB, "--after", step, "--no-opt", "fold-linear")
        compiled = run(capsys, compile_cmd.main, AAB, "--dump-graph", step, "--no-opt", "fold-linear")
        assert dumped == compiled and dumped[0] == 0
    assert run(capsys, compile_cmd.main, "--dump-graph", AAB) == run(capsys, dump_cmd.main, AAB)


def test_each_graph_step_shows_its_own_graph():
    program, value_sets = load_checked(SORT)
    seen = {}
    build_graph(program, value_sets, frozenset(OPTIMIZATIONS), watch=seen.__setitem__)
    assert list(seen) == graph_steps()  # every graph step runs on sort
    for step in graph_steps():
        assert graph_lines(graph_after(program, step, value_sets=value_sets).graph) == graph_lines(seen[step])
    assert graph_lines(seen["lower"]) != graph_lines(seen[graph_steps()[-1]])


def test_a_step_that_did_not_run_shows_the_graph_before_it(capsys):
    status, out, _ = run(capsys, dump_cmd.main, AAB, "--after", "head-features", "--no-opt", "prune")
    assert status == 0
    assert out.startswith("# aab.rasp, max_len 5, after head-features (which did not run: the graph as after amplify); off: prune\n")
    assert body(out) == body(run(capsys, dump_cmd.main, AAB, "--after", "amplify", "--no-opt", "prune")[1])


def test_steps_after_the_graph_passes_show_the_final_graph_and_what_prune_dropped(capsys):
    final = body(run(capsys, dump_cmd.main, SORT)[1])
    for step in steps()[len(graph_steps()):]:
        status, out, _ = run(capsys, dump_cmd.main, SORT, "--after", step)
        assert status == 0 and out.startswith(f"# sort.rasp, max_len 8, after {step}\n")
        if step in model_steps():
            assert "; pruned" in out and re.sub(r";\s?pruned[^\n]*", "", body(out)) == final
        else:
            assert body(out) == final
    assert "smaller: categorical {0, 1, 2, 3, 4, ..., 7, 8} (9 values)  (8:11); pruned\n" in out


@pytest.mark.parametrize("step, message", [
    ("lowr", "unknown step 'lowr'; did you mean 'lower'?"),
    ("fold-linear", "'fold-linear' is a lowering rewrite, which acts inside 'lower'"),
    ("infer_value_sets", "'infer_value_sets' runs before 'lower' builds the graph"),
    ("\x1b[2J", "unknown step '\\x1b[2J'"),
])
def test_a_bad_step_is_one_line_with_the_steps(capsys, step, message):
    for main, flag in ((dump_cmd.main, "--after"), (compile_cmd.main, "--dump-graph")):
        status, out, err = run(capsys, main, AAB, flag, step)
        assert (status, out, err.count("\n")) == (2, "", 1), err
        assert f"error: {flag}: {message}" in err and f"(steps: {', '.join(steps())})" in err


def test_every_lowering_rewrite_is_explained_not_unknown(capsys):
    for name in {step.name for step in LOWERING_REWRITES}:
        assert "is a lowering rewrite" in run(capsys, dump_cmd.main, AAB, "--after", name)[2]


def test_flags_the_dump_does_not_take_are_refused(capsys, tmp_path):
    for extra in (["--emit", tmp_path / "w.npz"], ["--json"]):
        status, out, err = run(capsys, compile_cmd.main, AAB, "--dump-graph", *extra)
        assert (status, out) == (2, "") and f"give {extra[0]} without it" in err
    assert not (tmp_path / "w.npz").exists()
    status, _, err = run(capsys, dump_cmd.main)
    assert status == 2 and "PROGRAM.rasp is required" in err
    status, _, err = run(capsys, dump_cmd.main, AAB, "--aftr", "lower")
    assert status == 2 and "did you mean '--after'?" in err


def test_a_program_error_is_located_like_the_compilers(capsys, tmp_path):
    bad = tmp_path / "bad.rasp"
    bad.write_text("vocab {a}\nmax_len 3\nx = map(lambda t: t + 1, tokens)\noutput x\n")
    status, out, err = run(capsys, dump_cmd.main, bad, "--after", "lower")
    assert (status, out) == (1, "") and err.startswith(f"{bad}:3:9: error: lambda t: t + 1 fails on")
    assert run(capsys, compile_cmd.main, bad, "--dump-graph") == run(capsys, compile_cmd.main, bad)
    status, _, err = run(capsys, dump_cmd.main, tmp_path / "missing.rasp")
    assert status == 2 and err == f"error: {tmp_path / 'missing.rasp'}: no such file\n"


def test_long_value_sets_are_abbreviated_and_outside_text_is_terminal_safe(capsys, tmp_path):
    program = tmp_path / "long.rasp"
    program.write_text('vocab {a, b}\nmax_len 30\n'
                       'mean = numerical(aggregate(select(indices, indices, <=), numerical(indices)))\n'
                       'output sequence_map(lambda m, t: "\\x1b[2J" if m > 3 else t, mean, tokens)\n')
    status, out, err = run(capsys, dump_cmd.main, program, "--after", "lower", "--no-opt", "all")
    assert status == 0, err
    assert "indices: categorical {0, 1, 2, 3, 4, ..., 28, 29} (30 values)\n" in out
    assert "mean: numerical {0, 0.0333333, 0.0344828, 0.0357143, 0.037037, ..., 28.9667, 29} (8,063 values)  (3:18)\n" in out
    assert "\x1b" not in out and "output: categorical {\\x1b[2J, a, b}  (4:8)\n" in out


def test_the_text_does_not_depend_on_the_run():
    """Two processes with different hash seeds print the same dump (nothing is ordered by a set)."""
    texts = {subprocess.run([sys.executable, "-m", "rasp_compile.compiler.dump", str(ROOT / "programs" / "sort_freq.rasp"),
                             "--after", "lower"], capture_output=True, text=True, check=True, cwd=ROOT,
                            env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(texts) == 1


def test_max_len_changes_the_graph(capsys):
    status, out, _ = run(capsys, dump_cmd.main, AAB, "--max-len", "3", "--after", "lower")
    assert status == 0 and out.startswith("# aab.rasp, max_len 3, after lower\n") and "indices: categorical {0, 1, 2}\n" in out


def test_the_dump_needs_no_file(capsys):
    """graph_after takes a checked program from anywhere, as compile_program does."""
    program, value_sets = parse_checked("vocab {a, b}\nmax_len 4\noutput map(lambda t: t == \"a\", tokens)\n")
    dump = graph_after(program, "lower", tuple(OPTIMIZATIONS), value_sets=value_sets)
    assert dump.instead == "" and dump.pruned is None and [op.out.label for op in dump.graph.ops] == ["tokens", "output"]
