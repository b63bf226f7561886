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
        made.append({"program": program, "max_len": 1024, "params": params_1024, "cold_cpu_s": compile_s,
                     "cold_runs": [{"cpu_s": compile_s, "wall_s": compile_s}], "accuracy": accuracy, "status": "ok"})
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


def long_cells(params_4096: int = 10, compile_cpu_s: float = 1.0, accuracy: float = 100.0) -> list[dict]:
    """Every program of the 4,096 goal at 1,024 (2 params) and at 4,096 with these figures."""
    made = []
    for program in goals.LONG_PROGRAMS:
        made.append({"program": program, "max_len": 1024, "params": 2, "status": "ok"})
        made.append({"program": program, "max_len": 4096, "params": params_4096, "compile_cpu_s": compile_cpu_s,
                     "accuracy": accuracy, "inputs": 8, "skipped": 0, "lengths": [4089, 4096],
                     "largest_array": "wpe 4,097x9", "widest_sop": "tokens 2 of 9 residual dims", "status": "ok"})
    return made


def test_long_goal_passes_at_five_times_and_thirty_seconds_exact():
    goal, passed, detail = goals.goal_long(long_cells())
    assert passed and "largest growth" in detail


def test_long_goal_names_the_figure_and_what_stands_in_the_way():
    detail = goals.goal_long(long_cells(params_4096=11))[2]
    assert "reverse params 11, 5.5x those at 1,024 (2): largest array wpe 4,097x9" in detail
    assert "aab compiles in 30.1 CPU s" in goals.goal_long(long_cells(compile_cpu_s=30.1))[2]
    inexact = long_cells(accuracy=97.5)
    inexact[1]["max_error"] = 0.5
    inexact[1]["float64"] = {"accuracy": 100.0, "inputs": 8, "skipped": 0, "lengths": [4089, 4096]}
    detail = goals.goal_long(inexact)[2]
    assert ("length float32 97.50% of positions, largest error 0.5 on 8 inputs of 4,089..4,096 tokens; "
            "float64: exact on 8 inputs of 4,089..4,096 tokens") in detail


def test_long_goal_shows_a_refusal_by_its_location_and_first_clause():
    refused = [c for c in long_cells() if c["program"] != "count" or c["max_len"] == 1024]
    refused.append({"program": "count", "max_len": 4096, "status": "refused", "compile_cpu_s": 2.0,
                    "refused": "count.rasp:6:8: error: the model would need about 117,715,070 parameters: "
                               "each value set is within the checker's limits; use fewer values\n  output = ...\n"})
    goal, passed, detail = goals.goal_long(refused)
    assert not passed
    assert detail == ("count refused: count.rasp:6:8: the model would need about 117,715,070 parameters "
                      "(after 2.0 CPU s)" + goals.in_the_way("L", "count"))


def test_what_stands_in_the_way_is_named_where_a_goal_fails_only():
    """A program failing a goal gets IN_THE_WAY's text for that goal, in brackets; a passing one
    none, and a program without an entry nothing more than its figure."""
    cells = long_cells()
    assert goals.goal_long(cells)[1] and "[" not in goals.goal_long(cells)[2]
    slow = [dict(c, compile_cpu_s=31.0) if c["program"] in ("count", "reverse") and c["max_len"] == 4096 else c
            for c in cells]
    detail = goals.goal_long(slow)[2]
    assert f"count compiles in 31.0 CPU s (widest s-op tokens 2 of 9 residual dims) [{goals.IN_THE_WAY['L', 'count']}]" in detail
    assert "reverse compiles in 31.0 CPU s (widest s-op tokens 2 of 9 residual dims);" in detail + ";"
    assert goals.in_the_way("C2", "reverse") == ""
