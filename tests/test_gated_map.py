"""The gated-maps pass (compiler/passes/gated_maps.py, compiler/primitives/gated_map.py): a sequence_map of a number and an exactly one-hot
input is one small MLP of the number per value of the one-hot (one unit for an affine piece,
two per step otherwise), not a table over every pair after a categorical view of the number;
and the compiled model still agrees with the interpreter."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rasp_compile.compiler import OPTIMIZATIONS, compile_program
from rasp_compile.compiler.passes.gated_maps import affine_pieces
from rasp_compile.compiler.primitives.gated_map import gated_map_mlp, hidden_units
from rasp_compile.compiler import build_graph
from rasp_compile.compiler.layout import lay_out
from rasp_compile.compiler.primitives.numeric_mlp import step_mlp
from rasp_compile.compiler import ops
from rasp_compile.compiler.ops import GatedMap, NumericMLP, Op, TableMLP
from rasp_compile.compiler.variables import Var
from rasp_compile.frontend import parse_program
from rasp_compile.element_fn import identity_key
from rasp_compile.frontend import lambda_arrays
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.runtime.model import n_params
from rasp_compile.testing.differential import assert_agree, compiled_exactly, disagreements, every_input, random_inputs


RUNNING_COUNT = """
vocab {x, y}
max_len 6
causal
is_x = numerical(map(lambda t: 1 if t == "x" else 0, tokens))
frac = numerical(aggregate(select(tokens, tokens, true), is_x, default=0))
output numerical(sequence_map(lambda f, n: f * n, frac, length))
"""

PROGRAMS = {
    "running count (causal length gate)": RUNNING_COUNT,
    "depth over indices, read by a step map": """
vocab {"(", ")"}
max_len 6
opener = numerical(map(lambda t: 1 if t == "(" else 0, tokens))
frac = numerical(aggregate(select(indices, indices, <=), opener))
depth = numerical(sequence_map(lambda f, i: (2 * f - 1) * (i + 1), frac, indices))
output map(lambda d: "ok" if d >= 0 else "below", depth)
""",
    "token gate first, negative and constant pieces": """
vocab {a, b, c}
max_len 5
m = numerical(aggregate(select(tokens, tokens, ==), numerical(map(lambda i: i, indices))))
output numerical(sequence_map(lambda t, x: -3 * x + 2 if t == "a" else (x / 2 if t == "b" else 7), tokens, m))
""",
    "gate from a table, number from a width": """
vocab {a, b}
max_len 6
causal
kind = sequence_map(lambda t, i: t + "e" if i % 2 == 0 else t + "o", tokens, indices)
w = numerical(selector_width(select(tokens, tokens, ==)))
output numerical(sequence_map(lambda k, x: x * 10 - 5 if k == "ae" else (x if k == "bo" else -x), kind, w))
""",
    "a rounded count against the length (categorical steps)": """
vocab {x, y}
max_len 6
causal
is_x = numerical(map(lambda t: 1 if t == "x" else 0, tokens))
frac = numerical(aggregate(select(tokens, tokens, true), is_x, default=0))
n_x = sequence_map(lambda f, n: round(f * n), frac, length)
output sequence_map(lambda c, n: "more_x" if 2 * c > n else ("tie" if 2 * c == n else "more_y"), n_x, length)
""",
    "a mean and the token, categorical, token first": """
vocab {a, b, c}
max_len 5
m = numerical(aggregate(select(tokens, tokens, !=), numerical(map(lambda i: i, indices)), default=-1))
output sequence_map(lambda t, x: "hi" if x > 1 and t == "a" else ("lo" if x < 0.5 else t), tokens, m)
""",
    "the running count shifted by one (a mean over at most one key)": """
vocab {a, b}
max_len 6
causal
f = numerical(aggregate(select(tokens, tokens, true), numerical(map(lambda t: 1 if t == "a" else 0, tokens))))
count = numerical(sequence_map(lambda f, n: f * n, f, length))
output numerical(aggregate(select(indices, indices, lambda k, q: k == q - 1), count, default=-1))
""",
    "numerical gate held by the embedding": """
vocab {1, 2, 3}
max_len 5
frac = numerical(aggregate(select(tokens, tokens, <=), numerical(map(lambda t: t, tokens))))
scaled = numerical(sequence_map(lambda f, n: f * n - n, frac, numerical(map(lambda t: t * 2, tokens))))
output numerical(sequence_map(lambda s, i: s + i * 0.5, scaled, indices))
""",
}


def ops_of(program) -> tuple[Op, ...]:
    return build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS)).ops


@pytest.mark.parametrize("text", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_gated_programs_agree_with_the_interpreter_on_every_input(text: str):
    program = parse_program(text)
    assert any(isinstance(op, GatedMap) for op in ops_of(program))
    assert_agree(compiled_exactly(program), program, every_input(program.vocab, program.max_len))


@pytest.mark.slow
@pytest.mark.parametrize("text", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_gated_programs_agree_at_max_len_40(text: str):
    program = parse_program(text, max_len=40)
    assert_agree(compiled_exactly(program), program, random_inputs(program.vocab, 40, 300, rng=40))


@pytest.mark.slow
def test_the_running_count_is_one_layer_of_one_unit_per_length():
    program = parse_program(RUNNING_COUNT, max_len=40)
    gated = compile_program(program, disabled=["binary-products"])  # else the count's digits gate it
    table = compile_program(program, disabled=["gated-maps", "binary-products"])
    assert gated.meta["layers"] == [{"n_head": 1, "d_head": 2, "d_mlp": 40}]  # f * n >= 0: no c_g units
    assert len(table.meta["layers"]) == 2  # the table waits for a categorical view of frac
    assert n_params(table) > 1000 * n_params(gated)


@pytest.mark.slow
def test_with_its_gate_on_the_units_compute_the_ungated_steps_and_the_rest_are_0():
    """The other gates' -M weights meet exact zeros, so g's units compute what step_mlp's would
    (the same pre-activations; only the output's sum runs in another order), and every unit of
    another value is exactly 0."""
    program = parse_program(PROGRAMS["a rounded count against the length (categorical steps)"], max_len=32)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    op = next(op for op in graph.ops if isinstance(op, GatedMap))
    layout = lay_out(graph)
    gated = float32_mlp(gated_map_mlp(op, layout))
    x_dim, gate_dims = layout.dims(op.input)[0], layout.dims(op.gate)
    for g, gate_dim in zip(op.gate.values, gate_dims):
        alone = float32_mlp(step_mlp(NumericMLP(op.out, op.input, lambda p, g=g: op.fn(p, g)), layout))
        residual = np.zeros((len(op.input.values), layout.d_model), dtype=np.float32)
        residual[:, x_dim] = op.input.values
        residual[:, gate_dim] = 1.0
        hidden, out = run_mlp(gated, residual)
        assert np.allclose(out, run_mlp(alone, residual)[1], rtol=0, atol=1e-5)
        others = np.any(gated.w_in[gate_dims] > 0, axis=0) & (gated.w_in[gate_dim] <= 0)  # constant units of others
        others |= (gated.w_in[gate_dim] < 0)  # units another value owns (this one switches them off)
        assert others.any() and not hidden[:, others].any()


def float32_mlp(mlp):
    return type(mlp)(**{name: getattr(mlp, name).astype(np.float32) for name in ("w_in", "b_in", "w_out", "b_out")})


def run_mlp(mlp, residual):
    hidden = np.maximum(residual @ mlp.w_in + mlp.b_in, 0)
    return hidden, hidden @ mlp.w_out + mlp.b_out


def test_gate_values_computing_the_same_function_share_one_piece():
    """f * n > n - f * n is f > 1/2 for every length: one step of f, no switching, as small as
    the table path (which value-classes and the linear read-out reduce to the same)."""
    program = parse_program("""
vocab {x, y}
max_len 8
causal
frac = numerical(aggregate(select(tokens, tokens, true), numerical(map(lambda t: 1 if t == "x" else 0, tokens))))
output sequence_map(lambda f, n: f * n > n - f * n, frac, length)
""")
    gated, table = compile_program(program), compile_program(program, disabled=["gated-maps"])
    assert gated.meta["layers"] == [{"n_head": 1, "d_head": 2, "d_mlp": 2}]
    assert n_params(gated) <= n_params(table)
    bad, _ = disagreements(gated, program, every_input(program.vocab, program.max_len))
    assert bad == []


@pytest.mark.slow
def test_the_budget_counts_the_units_the_map_builds():
    """budget.py charges hidden_units(op): the units built, plus at most one constant per value."""
    program = parse_program(PROGRAMS["a rounded count against the length (categorical steps)"], max_len=32)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    layout = lay_out(graph)
    for op in (op for op in graph.ops if isinstance(op, GatedMap)):
        built = gated_map_mlp(op, layout).b_in.shape[0]
        assert built <= hidden_units(op) <= built + len(op.gate.values)


def test_a_gate_read_from_attention_keeps_the_table():
    """A categorical aggregate's one-hot carries softmax leak, which the guard G would magnify."""
    program = parse_program("""
vocab {a, b}
max_len 5
prev = aggregate(select(indices, indices, lambda k, q: k == q - 1), tokens, default="a")
frac = numerical(aggregate(select(tokens, tokens, ==), numerical(map(lambda i: i, indices))))
output numerical(sequence_map(lambda f, p: 2 * f if p == "a" else f - 1, frac, prev))
""")
    ops = ops_of(program)
    assert not any(isinstance(op, GatedMap) for op in ops)
    assert any(isinstance(op, TableMLP) for op in ops)
    bad, _ = disagreements(compile_program(program), program, every_input(program.vocab, 5))
    assert bad == []


@pytest.mark.slow
def test_a_numerical_answer_not_affine_in_the_number_interpolates_where_float32_does_better():
    """f * f * n: no affine pieces; as the answer, each value's piece is the polyline when its
    float32 bound beats the flat steps' (as for a map of the number alone), and it stays exact."""
    program = parse_program(RUNNING_COUNT.replace("f * n", "f * f * n"), max_len=64)
    op = next(op for op in ops_of(program) if isinstance(op, GatedMap))
    assert op.affine is None and op.interpolated
    rng = random.Random(64)
    inputs = [[rng.choice("xy") for _ in range(rng.randint(30, 64))] for _ in range(200)]
    bad, _ = disagreements(compile_program(program), program, inputs)
    assert bad == []


def test_affine_pieces_fits_each_gate_value_and_refuses_a_curve():
    x = Var("x", "numerical", (0, 0.25, 0.5, 1))
    gate = Var("g", "categorical", ("p", "q"))
    out = Var("out", "numerical", ())
    fit = lambda fn: affine_pieces(GatedMap(out, x, gate, fn))  # noqa: E731
    assert fit(lambda v, g: 3 * v - 1 if g == "p" else 5) == {"p": (3.0, -1.0), "q": (0.0, 5.0)}
    assert fit(lambda v, g: v * v if g == "q" else v) is None
    assert fit(lambda v, g: "big" if v > 0.5 else "small") is None


GATES = {"tokens": ("tokens", ["a", "b", "c"]), "indices": ("indices", None), "length": ("length", None)}


@pytest.mark.slow
@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(sorted(GATES)),
    st.lists(st.tuples(st.integers(-4, 4), st.sampled_from([-2, -0.5, 0, 1, 3.5])), min_size=3, max_size=3),
    st.integers(1, 7),
    st.booleans(),
)
def test_random_affine_pieces_agree_with_the_interpreter(gate_name, pieces, max_len, number_first):
    """Slopes and intercepts drawn per gate value (the last piece covers the remaining values)."""
    gate, values = GATES[gate_name]
    values = values or list(range(1, 4))
    (a0, b0), (a1, b1), (a2, b2) = pieces
    body = f"{a0} * x + {b0} if g == {values[0]!r} else ({a1} * x + {b1} if g == {values[1]!r} else {a2} * x + {b2})"
    body = body.replace("'", '"')
    call = (f"sequence_map(lambda x, g: {body}, frac, {gate})" if number_first
            else f"sequence_map(lambda g, x: {body}, {gate}, frac)")
    program = parse_program(f"""
vocab {{a, b, c}}
max_len {max_len}
causal
is_a = numerical(map(lambda t: 1 if t == "a" else 0, tokens))
frac = numerical(aggregate(select(tokens, tokens, true), is_a))
output numerical({call})
""")
    assert not any(isinstance(op, TableMLP) for op in ops_of(program))  # gated, or linear when it can be
    rng = random.Random(max_len)
    inputs = [[rng.choice("abc") for _ in range(rng.randint(1, max_len))] for _ in range(60)]
    bad, _ = disagreements(compiled_exactly(program), program, inputs)
    assert bad == [], bad[:2]


@pytest.mark.parametrize("disabled", [(), ("binary-products",)], ids=["all passes", "no binary-products"])
def test_answers_on_arrays_are_the_per_value_answers(disabled, monkeypatch):
    """GatedMap.answers computed on arrays (a gate value at a time, lambda_arrays.results_at) are
    the lambda's answers called value by value, type included (2 and 2.0 told apart), on every
    gated map of the programs above at max_len 16, where the means have enough values for arrays."""
    def answers(per_value: bool) -> list[dict]:
        with monkeypatch.context() as patch:
            if per_value:
                patch.setattr(ops, "results_at", lambda fn, values, *fixed: [fn(v, *fixed) for v in values])
            graphs = [build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS) - set(disabled))
                      for program in (parse_program(text, max_len=16) for text in PROGRAMS.values())]  # fresh memos
            return [{g: [identity_key(a) for a in column] for g, column in op.answers.items()}
                    for graph in graphs for op in graph.ops if isinstance(op, GatedMap)]

    on_arrays = []
    counted = lambda_arrays.results_on_arrays

    def counting(fn, rows):
        computed = counted(fn, rows)
        on_arrays.append(computed is not None and len(rows[0]) == 2)  # a gated map's (number, gate value)
        return computed

    monkeypatch.setattr(lambda_arrays, "results_on_arrays", counting)
    computed = answers(per_value=False)
    assert computed == answers(per_value=True) and len(computed) >= 4
    assert any(on_arrays)  # some gated maps' answers did come from arrays
