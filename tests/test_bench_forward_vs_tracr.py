"""bench/forward_vs_tracr.py, run small (hist at max_len 3, 20 sequences): its report holds the
figures it claims. Needs the `[tracr]` extra (tests/extras.py: skipped without it locally, never in CI)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from extras import require
from rasp_compile.compiler import compile_program
from rasp_compile.frontend import load_program
from rasp_compile.runtime.model import n_params
from rasp_compile.tools.flops import count_flops

require("tracr.compiler.compiling", "tracr")

ROOT = Path(__file__).resolve().parent.parent


def test_forward_vs_tracr_reports_what_it_measured(tmp_path):
    command = [sys.executable, str(ROOT / "bench" / "forward_vs_tracr.py"), "--programs", "hist",
               "--max-lens", "3", "--batch", "20", "--runs", "1", "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "forward_vs_tracr.json").read_text())
    assert report["threads"] == "one thread each" and report["batch"] == 20
    (cell,) = report["cells"]
    assert cell["status"] == "ok" and (cell["program"], cell["max_len"]) == ("hist", 3)
    ours = compile_program(dataclasses.replace(load_program(ROOT / "programs" / "hist.rasp"), max_len=3),
                           dtype=np.float32)
    assert cell["params"] == n_params(ours)
    assert cell["flops"] == count_flops(ours, 4)["total"]
    assert cell["tracr_params"] > cell["params"] > 0
    assert cell["ours_gflops"] == pytest.approx(cell["flops"] * 20 / (cell["ours_ms"] / 1e3) / 1e9)
    assert cell["matmul_gflops"] > 0
    row = f"| hist | 3 | {cell['params']:,} | {cell['tracr_params']:,} |"
    markdown = (tmp_path / "forward_vs_tracr.md").read_text()
    assert row in markdown
    assert f"{cell['tracr_ms'] / cell['ours_ms']:,.1f}x" in markdown
    assert "1 of 1 cells measured" in markdown
