"""bench/accuracy_speed.py, run small: it runs as the user runs it and its report holds every
figure, beside another checkout (here this one again), each command having found the model 100%
in agreement with the interpreter (the script exits non-zero otherwise)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ROWS = ["rasp-run --accuracy, this checkout", "rasp-run --accuracy, this checkout, CPU time", "inputs", "interpreter (batched)", "model (ids, forward, decoding)",
        "accuracy.measure, in process"]


@pytest.mark.slow
def test_accuracy_speed_bench_reports_every_figure(tmp_path):
    out = tmp_path / "speed.md"
    subprocess.run([sys.executable, str(ROOT / "bench" / "accuracy_speed.py"), "--program", "hist", "--max-len", "8",
                    "--samples", "300", "--runs", "1", "--before", str(ROOT), "--out", str(out)], capture_output=True, text=True, check=True)
    text = out.read_text()
    assert "program hist, max_len 8, samples 300" in text
    for row in ROWS:
        seconds, per_second = re.search(rf"^\| {re.escape(row)} \| ([\d.]+) \| ([\d,]+) \|$", text, re.MULTILINE).groups()
        assert float(seconds) >= 0 and int(per_second.replace(",", "")) > 0
    commit = r"commit \w+( \+ changes)?"  # harness.revision: "+ changes" while rasp_compile/ differs from it
    assert re.search(rf"^\| rasp-run --accuracy, {commit} \| [\d.]+ \|", text, re.MULTILINE)
    assert re.search(rf"`rasp-run --accuracy`: [\d.]+x the inputs per second of {commit} in wall time, "
                     r"[\d.]+x in CPU time", text)
