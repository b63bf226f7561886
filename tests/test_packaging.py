"""The version is written once, `rasp_compile.__version__`: pyproject.toml reads it from there
(so the installed metadata, `rasp-compile --version` and `rasp-run --version` say the same), and
the package ships the data files it reads. `python -m build` and `twine check` run in .ci/run."""

from __future__ import annotations

import re
from importlib import metadata, resources
from pathlib import Path

import rasp_compile
from rasp_compile.cli import compile_cmd, run_cmd

ROOT = Path(__file__).resolve().parent.parent


def test_the_version_is_written_once():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = pyproject.split("\n[project]\n")[1].split("\n[")[0]  # the [project] table
    assert not re.search(r"^version\s*=", project, re.MULTILINE) and 'dynamic = ["version"]' in project
    assert 'version = {attr = "rasp_compile.__version__"}' in pyproject
    assert re.fullmatch(r"\d+\.\d+\.\d+", rasp_compile.__version__)


def test_the_installed_version_and_both_commands_say_the_same(capsys):
    assert metadata.version("rasp-compile") == rasp_compile.__version__
    for main, name in ((compile_cmd.main, "rasp-compile"), (run_cmd.main, "rasp-run")):
        assert main(["--version"]) == 0
        assert capsys.readouterr().out == f"{name} {rasp_compile.__version__}\n"


def test_the_data_files_are_package_data():
    for package, name in (("rasp_compile.frontend", "grammar.lark"), ("rasp_compile.runtime", "meta.schema.json"),
                          ("rasp_compile", "py.typed")):
        assert resources.files(package).joinpath(name).is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"frontend/*.lark", "runtime/*.json", "py.typed"' in pyproject


def test_install_hints_work_from_a_checkout_too():
    from rasp_compile.frontend.from_tracr import EXTRA_HINT
    from rasp_compile.interop.transformer_lens import EXTRA

    for hint, extra in ((EXTRA, "interop"), (EXTRA_HINT, "tracr")):
        assert f"pip install 'rasp-compile[{extra}]'" in hint and f"pip install -e '.[{extra}]'" in hint
