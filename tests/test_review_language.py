"""Language forms from an outside review: programs outside the test suite, each checked as
docs/language.md states it (interpreter, compiled model and a plain-Python expectation)."""

from __future__ import annotations

import rasp_compile as rc


def outputs(source: str, tokens: list) -> tuple[list, list]:
    program = rc.parse_program(source)
    return rc.evaluate(program, tokens), rc.run(rc.compile(program), tokens)


def test_floats_are_snapped_when_a_lambda_returns_them_not_inside_its_body():
    source = """vocab {0, 1}
max_len 2
output map(lambda x: str(x + 0.1 + 0.2) + "," + str(0.1 + 0.2 == 0.3) + "," + str(x + 0.1 + 0.2 - 0.3), tokens)
"""
    interpreted, compiled = outputs(source, [0, 1])
    assert interpreted == compiled == ["0.30000000000000004,false,5.551115123125783e-17",
                                       "1.3,false,1.0"]
    snapped, _ = outputs("vocab {0}\nmax_len 1\noutput map(lambda x: x + 0.1 + 0.2, tokens)", [0])
    assert snapped == [0.3]
