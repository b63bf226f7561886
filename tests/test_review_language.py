"""Language forms from an outside review: programs outside the test suite, each checked as
docs/language.md states it (interpreter, compiled model and a plain-Python expectation)."""

from __future__ import annotations

import pytest

import rasp_compile as rc


def outputs(source: str, tokens: list) -> tuple[list, list]:
    program = rc.parse_program(source)
    return rc.evaluate(program, tokens), rc.run(rc.compile(program), tokens)


def test_a_float_a_lambda_returns_is_kept_as_python_computed_it():
    source = """vocab {0, 1}
max_len 2
output map(lambda x: str(x + 0.1 + 0.2) + "," + str(0.1 + 0.2 == 0.3) + "," + str(x + 0.1 + 0.2 - 0.3), tokens)
"""
    interpreted, compiled = outputs(source, [0, 1])
    assert interpreted == compiled == ["0.30000000000000004,false,5.551115123125783e-17",
                                       "1.3,false,1.0"]
    interpreted, compiled = outputs("vocab {0}\nmax_len 1\noutput map(lambda x: x + 0.1 + 0.2, tokens)", [0])
    assert interpreted == compiled == [0 + 0.1 + 0.2] != [0.3]


@pytest.mark.slow
def test_the_first_failure_reported_is_the_same_in_every_run():
    """Value sets are sets: tried in their iteration order, the value an error names changed with
    Python's hash seed ('cherry' in one run, 'bananas' in the next)."""
    import os
    import subprocess
    import sys

    head = "vocab {apple, bananas, cherry, b, c}\nmax_len 3\n"
    failing = {"map": 'output map(lambda t: "xyz"[len(t)], tokens)',
               "select": 'output selector_width(select(tokens, tokens, lambda k, q: "xyz"[len(k)] == q))'}
    script = ("import sys, rasp_compile as rc\n"
              "try: rc.parse_program(sys.argv[1])\n"
              "except rc.RaspError as e: print(e)\n")
    for name, line in failing.items():
        runs = {subprocess.run([sys.executable, "-c", script, head + line], capture_output=True, text=True,
                               env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(6)}
        assert len(runs) == 1, runs
        assert "fails on ('apple'" in runs.pop(), name


def test_a_lone_surrogate_in_program_text_is_a_located_syntax_error():
    """A Python str can hold "\\udcff" (a file cannot): the value it made could be neither saved
    nor shown, and compiling ended in a WeightsError about meta."""
    import pytest

    text = 'vocab {a}\nmax_len 2\noutput map(lambda t: t + "\udcff", tokens)'
    with pytest.raises(rc.errors.RaspSyntaxError, match="lone surrogate") as caught:
        rc.parse_program(text)
    assert (caught.value.loc.line, caught.value.loc.col) == (3, 27)
    assert "\\udcff" in rc.format_error(caught.value, text, "p.rasp")
