"""Every pass has a golden graph before and after it (tests/golden_graphs.py says which, and how to
regenerate them), the files are what the dump prints now, and on each one's program the pass
visibly does something. A new pass (a new line in the driver's lists, a new optimisation) fails
here until its files are made."""

from __future__ import annotations

import difflib

import pytest

from rasp_compile.compiler.dump import steps
from golden_graphs import BUILT_BY, GOLDEN, before_and_after, files, passes

REGENERATE = "python tests/golden_graphs.py --update {name}"


def test_every_pass_has_its_golden_pair_and_nothing_else_is_there():
    missing = [path.name for name in passes() for path in files(name) if not path.exists()]
    assert not missing, f"no golden file for {missing}: write a small program NAME.rasp on which the pass " \
                        f"does something, then run {REGENERATE.format(name='NAME')}"
    expected = {path.name for name in passes() for path in files(name)}
    stray = sorted(path.name for path in GOLDEN.iterdir())
    assert [name for name in stray if name not in expected] == [], "golden files of a pass that is gone"


def test_the_passes_are_the_drivers_graph_steps_and_optimisations():
    names = passes()
    assert names[0] == BUILT_BY and "drop_dead_ops" in names and "amplify" in names  # steps with no name too
    assert set(steps()[: steps().index("lay_out")]) <= set(names) and len(names) == len(set(names))


@pytest.mark.parametrize("name", passes())
def test_the_golden_graphs_are_what_the_dump_prints(name):
    program, *pair = files(name)
    for path, now in zip(pair, before_and_after(name, program)):
        kept = path.read_text(encoding="utf-8")
        diff = "\n".join(difflib.unified_diff(kept.splitlines(), now.splitlines(), str(path.name), "now", lineterm=""))
        assert kept == now, f"{path.name} is not what the dump prints now; if the change is meant, " \
                            f"run {REGENERATE.format(name=name)} and read the diff:\n{diff[:3000]}"


@pytest.mark.parametrize("name", passes())
def test_each_pass_changes_its_golden_graph(name):
    before, after = (path.read_text(encoding="utf-8") for path in files(name)[1:])
    body = (lambda text: text) if name == BUILT_BY else (lambda text: text.split("\n", 1)[1])  # past the header
    assert body(before) != body(after), f"{name} does nothing on {name}.rasp: choose a program on which it does"
