"""A running mean and its count (frontend/cooccurrence.py) in a categorical s-op, a selected key
or a product of several factors: every answer the compiler asks for on a pair that never meets
must be one the s-op can write (a categorical s-op writes only its values), and a lambda is not
called there at all where a selector asks. Each program is compiled with the optimisations on and
off and checked against the interpreter on every input up to its max_len."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rasp_compile import compile_rasp_to_model, ir, rasp
from rasp_compile.compiler import OPTIMIZATIONS, compile_program
from rasp_compile.compiler.passes.split_keys import split_selectors
from rasp_compile.compiler.variables import sort_key
from rasp_compile.errors import RaspValueError
from rasp_compile.frontend import parse_program
from rasp_compile.frontend.infer import infer_value_sets, nullable_sops
from rasp_compile.testing.differential import assert_agree, every_input


RUNNING = """
vocab {"(", ")"}
max_len 8
causal
step = numerical(map(lambda t: 1 if t == "(" else -1, tokens))
balance = numerical(aggregate(select(tokens, tokens, true), step))
opened = numerical(aggregate(select(tokens, tokens, true), numerical(map(lambda t: 1 if t == "(" else 0, tokens))))
"""

PRODUCTS = {
    "balance * length": "output balance * length",  # docs/language.md's own example, categorical
    "b * (i + 1)": "output sequence_map(lambda b, i: b * (i + 1), balance, indices)",
    "balance * (indices + 1)": "output balance * (indices + 1)",
    "f * n * 10": "output opened * length * 10",
    "lambda f, n: f * n * 10": "output sequence_map(lambda f, n: f * n * 10, opened, length)",
    "round(m * n * 1000)": "output sequence_map(lambda m, n: round(m * n * 1000), balance, length)",
    "n * b": "output sequence_map(lambda n, b: b * n, length, balance)",
    "numerical": "output numerical(balance * length)",
}


def agrees_on_and_off(program, inputs: list[list]) -> None:
    """Compiled with the optimisations on and all off, the model agrees with the interpreter on
    `inputs`; or the program is refused, located, for an answer holding -0.0 beside 0.0 (a negative
    mean times the index 0), which the model could not tell apart (docs/language.md)."""
    try:
        compiled = compile_program(program)
    except RaspValueError as refusal:
        assert "-0.0 and 0.0" in refusal.message and refusal.loc is not None
        return
    assert_agree(compiled, program, inputs)
    assert_agree(compile_program(program, disabled=OPTIMIZATIONS), program, inputs)


@pytest.mark.slow
@pytest.mark.parametrize("max_len", [3, 5, 8])
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_a_running_product_compiles_and_agrees_on_every_input(name, max_len):
    program = parse_program(RUNNING + PRODUCTS[name], max_len=max_len)
    inputs = every_input(program.vocab, max_len)
    agrees_on_and_off(program, inputs)


def test_a_running_product_of_the_embedded_api_compiles():
    step = rasp.numerical(rasp.Map(lambda t: 1 if t == "(" else -1, rasp.tokens))
    balance = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE), step))
    product = rasp.SequenceMap(lambda b, n: b * n, balance, rasp.length)
    program = ir.Program(output=product, vocab=("(", ")"), max_len=6, causal=True)
    model = compile_rasp_to_model(product, vocab={"(", ")"}, max_seq_len=6, causal=True)
    assert_agree(model, program, every_input(program.vocab, 6))


def test_a_selected_running_product_is_not_computed_where_it_never_meets():
    """split-keys asks the select about each (mean, length) pair of the table it keys on; the
    lambda divides by zero on pairs that never meet, and the predicate would on others."""
    text = RUNNING + """
depth = sequence_map(lambda b, n: round(b * n) if abs(b * n - round(b * n)) < 0.001 else 1 / 0, balance, length)
output aggregate(select(depth, indices, lambda k, q: k == q - 1 if k == round(k) else 1 / 0), tokens, default="-")
"""
    program = parse_program(text, max_len=6)
    sets = infer_value_sets(program)
    split = split_selectors(program.output.selector, sets, program, nullable_sops(program), 10**6, sort_key)
    assert split is not None and len(split[0]) == 6  # a part for each length the table meets
    assert_agree(compile_program(program), program, every_input(program.vocab, 6))
    assert_agree(compile_program(program, disabled=["split-keys"]), program, every_input(program.vocab, 6))


STEPS = st.lists(st.sampled_from([-2, -1, 0, 1, 2, 0.5, 3]), min_size=2, max_size=2)
FORMS = st.sampled_from([
    "m * p", "m * (p + 1)", "m * p * {k}", "round(m * p * {k})", "m * p + {k}", "m * {k} - p",
    "1 if m * p > {k} else 0", "m * p * p", "abs(m) * p",
])


@pytest.mark.slow
@settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(STEPS, st.sampled_from(["length", "indices"]), FORMS, st.integers(1, 4), st.booleans(), st.booleans(),
       st.integers(2, 6))
def test_random_products_of_a_running_mean_and_its_count_agree(steps, position, form, k, numerical, first, max_len):
    """Random step values, the length or the index, a product, step or affine form, either
    encoding, either argument order: compiled with and without the optimisations, it agrees."""
    body = form.format(k=k)
    args = "m, p" if first else "p, m"
    operands = f"mean, {position}" if first else f"{position}, mean"
    answer = f"sequence_map(lambda {args}: {body}, {operands})"
    program = parse_program(f"""
vocab {{a, b}}
max_len {max_len}
causal
step = numerical(map(lambda t: {steps[0]} if t == "a" else {steps[1]}, tokens))
mean = numerical(aggregate(select(tokens, tokens, true), step))
output {f"numerical({answer})" if numerical else answer}
""")
    inputs = every_input(program.vocab, max_len)
    agrees_on_and_off(program, inputs)
