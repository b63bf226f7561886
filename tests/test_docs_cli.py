"""docs/cli.md and docs/flops.md cannot go stale silently: the (aab)* figures they quote (d_model,
parameters, FLOPs of the compiled model with and without its optimisation passes, of the hand-made
examples/handmade_aab.py, the direct rule's counts and the growth with max_len) must be what the
code computes now. Each figure is rebuilt here in the doc's own wording and looked up verbatim; a
failure names the doc, the figure, and the command that regenerates it."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import importlib.util
from functools import cache
from pathlib import Path

import pytest

from rasp_compile.compiler import OPTIMIZATIONS, compile_program
from rasp_compile.tools.direct_cost import direct_rule_cost
from rasp_compile.tools.flops import count_flops
from rasp_compile.runtime.prediction import encode
from rasp_compile.frontend import load_program
from rasp_compile.runtime.model import Model, n_nonzero, n_params

ROOT = Path(__file__).resolve().parent.parent
CLI, FLOPS = ROOT / "docs" / "cli.md", ROOT / "docs" / "flops.md"
AAB = ROOT / "programs" / "aab.rasp"
INPUT = list("aabaa")  # the input of the --flops examples
GROWTH = (5, 10, 20, 40, 80, 160)  # the max_len rows of flops.md's growth tables
ATTENTION = ("scores", "scale and mask", "softmax", "weighted sum")


@cache
def compiled(max_len: int | None = None, plain: bool = False) -> Model:
    return compile_program(load_program(AAB), max_len, disabled=OPTIMIZATIONS if plain else ())


@cache
def handmade() -> Model:
    spec = importlib.util.spec_from_file_location("handmade_aab", ROOT / "examples" / "handmade_aab.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()


def flops(model: Model, tokens: list) -> tuple[dict, dict]:
    """count_flops on this input, whole sequence and last position, as `rasp-run --flops` gives them."""
    n = len(encode(model, tokens))
    return count_flops(model, n), count_flops(model, n, last_only=True)


def direct(tokens: list) -> dict:
    program = dataclasses.replace(load_program(AAB), max_len=len(tokens))
    return direct_rule_cost(program, tokens)


def doc_text(doc: Path) -> str:
    return doc.read_text(encoding="utf-8")


def expect(doc: Path, text: str, what: str, command: str) -> None:
    assert text in doc_text(doc), (
        f"docs/{doc.name} is stale: its {what} should read {text!r}; regenerate it with `{command}`")


def layer_text(model: Model) -> str:
    layer = model.meta["layers"][0]
    return f"1 head, d_head {layer['d_head']}; " + (f"d_mlp {layer['d_mlp']}" if layer["d_mlp"] else "no MLP")


# docs/cli.md

def summary_lines(model: Model) -> str:
    return (f"d_model {model.d_model}   parameters {n_params(model):,} ({n_nonzero(model):,} non-zero, "
            f"{model.dtype})\nFLOPs per forward at max_len ({model.n_ctx} positions): "
            f"{count_flops(model, model.n_ctx)['total']:,}\n")


def test_cli_compile_summary():
    expect(CLI, summary_lines(compiled()) + "wrote aab.npz\n", "(aab)* summary (d_model, parameters, FLOPs)",
           "rasp-compile programs/aab.rasp --emit aab.npz")


def test_cli_no_opt_all_summary():
    expect(CLI, summary_lines(compiled(plain=True)) + "wrote aab_plain.npz\n",
           "`--no-opt all` (aab)* summary (d_model, parameters, FLOPs)",
           "rasp-compile programs/aab.rasp --no-opt all --emit aab_plain.npz")


@pytest.mark.parametrize("disabled", [(), ("position-selects",), ("linear-readout",), ("prune",), tuple(OPTIMIZATIONS)])
def test_cli_no_opt_table(disabled):
    model = compile_program(load_program(AAB), disabled=disabled)
    flag = "(every pass)" if not disabled else f"`--no-opt {'all' if len(disabled) > 1 else disabled[0]}`"
    row = (f"| {flag} | {layer_text(model)} | {model.d_model} | {n_params(model):,} ({n_nonzero(model):,}) | "
           f"{count_flops(model, model.n_ctx)['total']:,} |")
    expect(CLI, row, f"--no-opt table row {flag}",
           f"rasp-compile programs/aab.rasp {'' if not disabled else '--no-opt ' + ' --no-opt '.join(disabled)} --json")


def test_cli_no_opt_names_and_descriptions():
    for name, description in OPTIMIZATIONS.items():
        expect(CLI, f"| `{name}` | {description} |", f"--no-opt table entry for {name}",
               "python -c 'from rasp_compile.compiler import OPTIMIZATIONS; print(OPTIMIZATIONS)'")


def test_cli_compile_json():
    model = compiled()
    for key, value in (("d_model", model.d_model), ("params", n_params(model)), ("nonzero", n_nonzero(model)),
                       ("total", count_flops(model, model.n_ctx)["total"])):
        expect(CLI, f'"{key}": {value}', f"--json sample's {key}", "rasp-compile programs/aab.rasp --json")


def test_cli_flops_total():
    whole, last = flops(compiled(), INPUT)
    rule = direct(INPUT)
    table = doc_text(CLI)
    row = next((line for line in table.splitlines() if line.startswith("│ total          │")), "")
    cells = [cell.strip() for cell in row.strip("│").split("│")]
    assert cells[1:] == [f"{whole['total']:,}", f"{last['total']:,}"], (
        f"docs/cli.md is stale: its --flops total row reads {cells[1:]}, the model gives "
        f"{whole['total']:,} / {last['total']:,}; regenerate it with `rasp-run aab.npz aabaa --flops`")
    ratio = f"│ ratio model / direct      │ {whole['total'] / rule['whole']['total']:.1f}×"
    expect(CLI, ratio, "--flops ratio row", "rasp-run aab.npz aabaa --flops")


# docs/flops.md

def test_flops_doc_aab_table():
    models = (compiled(), handmade(), compiled(plain=True))
    costs = [flops(model, INPUT) for model in models]
    rows = {
        "d_model": [str(m.d_model) for m in models],
        "layers": [layer_text(m).replace("d_mlp", "MLP") for m in models],
        "parameters (non-zero)": [f"{n_params(m):,} ({n_nonzero(m):,})" for m in models],
        "**total, whole sequence**": [f"**{whole['total']:,}**" for whole, _ in costs],
        "**total, last position**": [f"**{last['total']:,}**" for _, last in costs],
        **{component: [f"{whole[component]:,}" for whole, _ in costs]
           for component in ("embedding", "qkv projection", "scores", "scale and mask", "softmax", "weighted sum",
                             "attention out", "residual adds", "read-out", "output softmax")},
    }
    for label, cells in rows.items():
        expect(FLOPS, f"| {label} | {' | '.join(cells)} |", f"(aab)* table row {label!r} (compiled | hand-made | "
               "--no-opt all)", "rasp-run MODEL aabaa --flops --json on aab.npz, handmade_aab.npz and the "
               "--no-opt all model; rasp-compile ... --json for the sizes")


def test_flops_doc_ratios():
    rule = direct(INPUT)
    assert (rule["whole"]["total"], rule["last"]["total"]) == (34, 9), (
        "docs/flops.md is stale: the direct rule on aabaa is now "
        f"{rule['whole']['total']} / {rule['last']['total']}; regenerate with `rasp-run aab.npz aabaa --flops`")
    for label, model in (("compiled", compiled()), ("hand-made", handmade()),
                         ("compiled, `--no-opt all`", compiled(plain=True))):
        whole, last = flops(model, INPUT)
        row = (f"| {label} | {whole['total'] / rule['whole']['total']:,.1f}× | "
               f"{last['total'] / rule['last']['total']:,.1f}× |")
        expect(FLOPS, row, f"ratio row for {label}", "rasp-run MODEL aabaa --flops")


@pytest.mark.parametrize("plain", [False, True], ids=["compiled", "no-opt-all"])
def test_flops_doc_growth_table(plain):
    for n in GROWTH:
        model = compiled(n, plain)
        tokens = list(("aab" * n)[:n])
        whole, last = flops(model, tokens)
        rule = direct(tokens)
        row = (f"| {n} | {model.d_model} | {model.meta['layers'][0]['d_head']} | {n_params(model):,} | "
               f"{whole['total']:,} | {sum(whole[c] for c in ATTENTION):,} | {last['total']:,} | "
               f"{rule['whole']['total']:,} | {rule['last']['total']:,} | "
               f"{whole['total'] / rule['whole']['total']:,.1f}× | {last['total'] / rule['last']['total']:,.1f}× |")
        expect(FLOPS, row, f"growth table row n = {n}{' (--no-opt all)' if plain else ''}",
               f"rasp-compile programs/aab.rasp --max-len {n}{' --no-opt all' if plain else ''} --emit M.npz; "
               f"rasp-run M.npz {''.join(tokens)} --flops --json")


def test_flops_doc_closed_form():
    """The per-position 375 and per-cell 23 that flops.md derives the growth from."""
    for n in GROWTH:
        whole, last = flops(compiled(n), list(("aab" * n)[:n]))
        positions = n + 1
        assert whole["total"] == 375 * positions + 23 * positions ** 2 and last["total"] == 375 + 23 * positions, (
            "docs/flops.md is stale: the compiled (aab)* no longer costs 375·N + 23·N² "
            f"(N = {positions}); rewrite 'What grows with n' from `rasp-run ... --flops --json`")


# -- every one-line error example of docs/cli.md, run as written -----------------------------------

def one_line_examples() -> list[tuple[str, str]]:
    """(command, the error line the doc prints for it) for each `$ rasp-...` line of docs/cli.md
    followed by a line holding `error:`."""
    lines = doc_text(CLI).splitlines()
    return [(command[2:], answer) for command, answer in zip(lines, lines[1:])
            if command.startswith("$ rasp-") and "error:" in answer]


def test_the_error_examples_are_what_the_commands_print(tmp_path, monkeypatch):
    """Run in a folder holding `programs/` (a link), aab.npz, bad.rasp (the doc's) and link.npz (a
    link to the program), the files the examples name; nope.rasp is missing on purpose."""
    import shlex

    from rasp_compile.cli import compile_cmd, run_cmd

    monkeypatch.chdir(tmp_path)
    (tmp_path / "programs").symlink_to(ROOT / "programs")
    (tmp_path / "link.npz").symlink_to(tmp_path / "programs" / "aab.rasp")
    (tmp_path / "bad.rasp").write_text("vocab {a, b}\nmax_len 5\nx = map(lambda t: t, tokenz)\noutput x\n")
    with contextlib.redirect_stdout(io.StringIO()):
        assert compile_cmd.main(["programs/aab.rasp", "--emit", "aab.npz"]) == 0
    examples = one_line_examples()
    assert len(examples) >= 14, "docs/cli.md lost its error examples"
    mains = {"rasp-compile": compile_cmd.main, "rasp-run": run_cmd.main}
    for command, answer in examples:
        name, *argv = shlex.split(command)
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            status = mains[name](argv)
        assert status in (1, 2) and errors.getvalue().splitlines()[0] == answer, (
            f"docs/cli.md: `{command}` prints {errors.getvalue()!r}, the doc says {answer!r}")
    assert (ROOT / "programs" / "aab.rasp").read_text().startswith("#")  # the refused --emit left it
