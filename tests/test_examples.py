"""The runnable examples stay right: the embedded-API program compiles to a model that agrees
with the interpreter on every input, with the causal `<=` select needing no index dimensions."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

from rasp_compile.testing.differential import disagreements

EXAMPLES = Path(__file__).parent.parent / "examples"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_embedded_api_program_compiles_and_agrees(capsys):
    import rasp_compile as rc

    example = load_example("embedded_api")
    program = example.frac_prevs()
    model = rc.compile(program)
    inputs = [list(t) for n in range(1, 9) for t in itertools.product("xy", repeat=n)]
    bad, checked = disagreements(model, program, inputs)
    assert checked == len(inputs) and bad == []
    assert not any(label.startswith("indices") for label in model.meta["residual"])
    example.main()
    assert "interpreter [1.0, 0.5, 0.6666666666666666, 0.75]" in capsys.readouterr().out
