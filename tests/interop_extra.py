"""The optional interop extra in tests: its modules are imported when installed; a test that needs
them skips when they are absent locally, and fails when RASP_COMPILE_TEST_EXTRAS names "interop"
(.ci/run sets it after installing the extra, so these tests cannot skip there)."""

from __future__ import annotations

import importlib
import os

import pytest


def require(module: str):
    """`module`, imported; skip the test without it, unless CI says the extra is installed."""
    if "interop" in os.environ.get("RASP_COMPILE_TEST_EXTRAS", "").split(","):
        return importlib.import_module(module)  # CI installed the extra: a failure here is real
    return pytest.importorskip(module, reason="the interop extra is not installed "
                                              "(pip install -e '.[interop]')")
