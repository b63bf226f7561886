"""Every weights file a test writes into its `tmp_path`, and that loads, has a meta that
rasp_compile/runtime/meta.schema.json accepts. Checked where the jsonschema package is installed
(CI's second step, where tests/extras.py's `jsonschema` extra must be there); files written to be
refused (the loader's tests) do not load, and are left alone; a test that writes a loadable file
whose meta.heads or meta.sops is malformed on purpose (readers show such entries as unknown) is
marked `off_schema`."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

import pytest

from extras import installed_in_ci

SUFFIXES = (".npz", ".safetensors")


@cache
def schema_validator():
    """A jsonschema validator of the weights file's meta, or None without jsonschema (locally)."""
    try:
        import jsonschema
    except ImportError:
        if installed_in_ci("jsonschema"):
            raise
        return None
    schema = json.loads(resources.files("rasp_compile.runtime").joinpath("meta.schema.json").read_text("utf-8"))
    return jsonschema.Draft202012Validator(schema)


def schema_errors(meta: dict) -> list[str]:
    """What the schema finds wrong with `meta` (as a file holds it: JSON), as `path: message` lines."""
    problems = schema_validator().iter_errors(json.loads(json.dumps(meta)))
    return sorted(f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in problems)


def pytest_configure(config):
    config.addinivalue_line("markers", "off_schema: the test writes weights files whose meta breaks the "
                                       "schema on purpose (entries the readers must tolerate); they are not checked")


@pytest.fixture(autouse=True)
def weights_files_follow_the_meta_schema(request):
    yield
    folder = request.node.funcargs.get("tmp_path") if hasattr(request.node, "funcargs") else None
    if folder is None or request.node.get_closest_marker("off_schema") or schema_validator() is None:
        return
    from rasp_compile.errors import WeightsError
    from rasp_compile.runtime.weights_file import load

    for path in sorted(p for p in folder.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file()):
        try:
            meta = load(path).meta
        except (WeightsError, OSError, ValueError):
            continue  # written to be refused
        problems = schema_errors(meta)
        assert not problems, f"{path.name}: meta does not follow meta.schema.json: {problems[:3]}"
