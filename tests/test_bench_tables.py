"""bench/scale_tables.py on made-up cells: a cell without a model says why in one short line (the
refusal's location and first clause, not "error"), and the cells past max_len 1,024 show float32's
and float64's exactness with the measured error, and that of float64's weights cast to float32;
scale.py does not try a cell that would surely run out of time."""

from __future__ import annotations

import cells  # bench/cells.py
import scale  # bench/scale.py
import scale_tables  # bench/scale_tables.py: bench/ is on the tests' path (pyproject.toml)

REFUSAL = ("sort.rasp:9:10: error: the model would need about 101,200,587 parameters (d_model 4,107), more than "
           "this compiler builds (100,000,000): the s-ops' value sets are too large; use fewer values\n"
           "  sorted = aggregate(...)\n           ^\n")


def test_a_refused_cell_shows_where_and_why_in_one_cell_of_its_row():
    cell = {"program": "sort", "max_len": 1024, "status": "refused", "refused": REFUSAL, "compile_cpu_s": 4.25}
    [row] = scale_tables.program_table("sort", [cell]).rows
    assert row[:2] == ["1,024", "refused: sort.rasp:9:10: the model would need about 101,200,587 parameters "
                                "(d_model 4,107), more than this compiler builds (100,000,000)"]
    assert row[7] == "4.250" and set(row[2:7] + row[8:]) == {"-"}
    killed = {"program": "sort", "max_len": 2048, "status": "error", "error": "MemoryError: a | b"}
    assert scale_tables.program_table("sort", [killed]).rows[0][1] == "error: MemoryError: a \\| b"


def test_a_long_refusal_is_cut_at_a_word_never_inside_a_number():
    message = ("x.rasp:3:4: error: 'output' must tell apart values of 'state' only 0.000977 apart, and in float32 it "
               "may be off by up to 0.00076 (allowed 0.00024) after the sum of many large and cancelling units, "
               "added in an order of the matmul's own; compile with --dtype float64")
    shown = cells.reason({"status": "refused", "refused": message})
    assert shown.endswith(" ...") and "(allowed 0.00024)" in shown
    assert len(shown) <= len("refused: x.rasp:3:4 ") + cells.ERROR_CHARS + len(" ...")


def test_past_1024_float32_and_float64_are_shown_side_by_side():
    base = {"program": "p", "max_len": 1024, "status": "ok", "params": 100}
    wrong = {"program": "p", "max_len": 4096, "status": "ok", "layers": 2, "params": 450, "compile_cpu_s": 12.0,
             "accuracy": 97.5, "max_error": 3.1e-5, "inputs": 8, "skipped": 0, "lengths": [4089, 4096],
             "float64": {"accuracy": 100.0, "inputs": 8, "skipped": 0, "lengths": [4089, 4096], "params": 450,
                         "cast_to_float32": {"accuracy": 100.0, "max_error": 4.7e-6}}}
    refused = {"program": "q", "max_len": 2048, "status": "refused", "refused": REFUSAL}
    table = scale_tables.long_table([base, wrong, refused])
    assert table.rows[0] == ["p", "4,096", "2", "450", "4.50x", "12.0",
                             "97.50% of positions, largest error 3.1e-05 on 8 inputs of 4,089..4,096 tokens",
                             "exact on 8 inputs of 4,089..4,096 tokens", "largest error 4.7e-06 (exact)"]
    assert table.rows[1][6].startswith("refused: sort.rasp:9:10: the model would need")
    assert table.rows[1][7:] == ["not tried (refused, not for precision)", "-"]


def test_float64_weights_cast_to_float32_show_their_error_or_share():
    cast = scale_tables.cast_exactness
    assert cast({"accuracy": 99.5, "max_error": 3.1e-5}) == "largest error 3.1e-05 (99.50% of positions)"
    assert cast({"accuracy": 100.0}) == "exact"  # a categorical answer: no error to show
    assert cast({"accuracy": 87.25}) == "87.25% of positions"
    assert cast({"accuracy": None}) == cast(None) == "-"  # no input checked; float64 not compiled


def test_a_cell_that_would_surely_run_out_of_time_is_not_tried():
    timed = [{"program": "p", "max_len": 1024, "status": "ok", "compile_cpu_s": 70.0}]
    assert scale.not_worth_trying(timed, 2048, 120) == (
        "not run: the compile took 70 CPU s at max_len 1,024, at least 2x that here: past the 120 s limit")
    assert scale.not_worth_trying(timed, 2048, 150) is None
    killed = [{"program": "p", "max_len": 1024, "status": "timeout"}, {"program": "p", "max_len": 2048,
                                                                          "status": "skipped"}]
    assert scale.not_worth_trying(killed, 4096, 120) == "not run: the compile ran out of time at max_len 1,024"
