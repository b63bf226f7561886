"""The driver's lists: every optimisation names lines of them, `disabled=` drops exactly those."""

from __future__ import annotations

from rasp_compile.compiler import OPTIMIZATIONS, driver


def test_every_optimisation_is_a_line_of_the_driver_and_every_named_line_an_optimisation():
    steps = driver.GRAPH_PASSES + driver.MODEL_PASSES
    named = {step.name for step in steps if step.name is not None}
    named |= {rewrite.name for rewrite in driver.LOWERING_REWRITES} | set(driver.LOWERING_OPTIONS)
    assert named | set(driver.PRECISION_PASSES) == set(OPTIMIZATIONS)
    assert all(set(step.needs) <= set(OPTIMIZATIONS) for step in steps)


def test_disabling_a_name_drops_its_rewrites_and_turns_off_its_option_and_nothing_else():
    everything = frozenset(OPTIMIZATIONS)
    for name in OPTIMIZATIONS:
        options = driver.lowering_options(everything - {name})
        assert options.rewrites == tuple(r for r in driver.LOWERING_REWRITES if r.name != name)
        for option, field in driver.LOWERING_OPTIONS.items():
            assert getattr(options, field) == (option != name)
    nothing = driver.lowering_options(frozenset())
    assert nothing.rewrites == () and not any(getattr(nothing, f) for f in driver.LOWERING_OPTIONS.values())


def test_disabling_a_name_drops_its_lines_and_nothing_else():
    everything = frozenset(OPTIMIZATIONS)
    for name in OPTIMIZATIONS:
        for steps in (driver.GRAPH_PASSES, driver.MODEL_PASSES):
            kept = driver.active_steps(steps, everything - {name})
            expected = [s for s in steps if s.name != name and name not in s.needs]
            assert kept == expected


def test_with_every_optimisation_off_only_the_unnamed_lines_run():
    for steps in (driver.GRAPH_PASSES, driver.MODEL_PASSES):
        assert all(s.name is None for s in driver.active_steps(steps, frozenset()))
