"""Optional extras in tests: a test that needs one skips when it is absent locally, and fails when
the environment variable RASP_COMPILE_TEST_EXTRAS names that extra, or `all` (.ci/run installs every
extra and sets it, so no such test can skip there).

Extras: `interop` (torch, transformer_lens, safetensors), `tracr` (tracr, with jax), `browser`
(Debian's chromium), `pandas` (for `LabelledArray.to_pandas`), `distributed` (Dask's distributed
scheduler, for `rasp-run --accuracy --all --dask`), `notebook` (nbclient, nbformat and ipykernel,
to execute examples/tutorial.ipynb), `jsonschema` (to check weights files against
rasp_compile/runtime/meta.schema.json).
"""

from __future__ import annotations

import importlib
import os

import pytest

ENVIRONMENT = "RASP_COMPILE_TEST_EXTRAS"
INSTALL = {
    "interop": "pip install -e '.[interop]'",
    "tracr": "pip install -e '.[tracr]'",
    "browser": "apt-get install chromium",
    "pandas": "pip install pandas",
    "distributed": "pip install -e '.[distributed]'",
    "notebook": "pip install -e '.[notebook]'",
    "jsonschema": "pip install jsonschema",
}


def installed_in_ci(extra: str) -> bool:
    """Whether the environment says `extra` is installed (so a test needing it must not skip)."""
    named = os.environ.get(ENVIRONMENT, "").split(",")
    return extra in named or "all" in named


def missing(extra: str, what: str) -> None:
    """Skip the test (`what` is absent locally), or fail it when `extra` is said to be installed."""
    message = f"{what} is not installed ({INSTALL[extra]})"
    if installed_in_ci(extra):
        pytest.fail(f"{message}, though {ENVIRONMENT} says the {extra} extra is")
    pytest.skip(message, allow_module_level=True)  # also when a whole module needs the extra


def require(module: str, extra: str = "interop"):
    """`module`, imported; without it, `missing(extra, ...)`."""
    if installed_in_ci(extra):
        return importlib.import_module(module)  # said to be installed: an ImportError here is real
    try:
        return importlib.import_module(module)
    except ImportError:
        missing(extra, module)
