"""bench/goals.py's checks of GPT-2's context on made-up cells: each passes on figures that meet
it, fails (naming the program and the figure) on figures that do not, and counts a missing
measurement as a failure."""

from __future__ import annotations

import goals  # bench/goals.py: bench/ is on the tests' path (pyproject.toml)


def cells(params_64: int, params_1024: int, compile_s: float = 1.0, accuracy: float = 100.0) -> list[dict]:
    """A cell at 64 and one at 1,024 for every library program, with these figures."""
    made = []
    for program in goals.library_programs():
        made.append({"program": program, "max_len": 64, "params": params_64, "status": "ok"})
        made.append({"program": program, "max_len": 1024, "params": params_1024, "compile_s": compile_s,
                     "compile_runs": [compile_s], "accuracy": accuracy, "status": "ok"})
    return made


def test_linear_growth_passes_at_twenty_times_and_fails_above():
    assert goals.goal_linear_growth(cells(1000, 20_000))[1]
    goal, passed, detail = goals.goal_linear_growth(cells(1000, 20_001))
    assert not passed and "reverse 20.0x" in detail


def test_context_goal_needs_a_fast_compile_and_every_position_exact():
    assert goals.goal_context(cells(1, 1))[1]
    assert "compiles in 10.01 s" in goals.goal_context(cells(1, 1, compile_s=10.01))[2]
    assert "99.99% exact" in goals.goal_context(cells(1, 1, accuracy=99.99))[2]


def test_sizes_fail_over_a_million_at_64_or_fifty_million_at_1024():
    assert goals.goal_sizes(cells(1_000_000, 50_000_000))[1]
    assert not goals.goal_sizes(cells(1_000_001, 1))[1]
    assert not goals.goal_sizes(cells(1, 50_000_001))[1]


def test_a_program_not_measured_fails_its_goal():
    partial = [c for c in cells(1, 1) if c["program"] != "sort"]
    for check in (goals.goal_context, goals.goal_linear_growth, goals.goal_sizes):
        goal, passed, detail = check(partial)
        assert not passed and "not measured" in detail and "sort" in detail
