"""The Graph -> Graph passes (and prune, Model -> Model) on tiny graphs: what each changes, and
what it must leave as it is."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rasp_compile import ir
from rasp_compile.compiler import OPTIMIZATIONS, build_graph, compile_program
from rasp_compile.compiler.ops import Attend, Linear, TableMLP
from rasp_compile.compiler.passes.amplification import amplify
from rasp_compile.compiler.passes.dead_ops import drop_dead_ops
from rasp_compile.compiler.passes.head_features import fold_head_features
from rasp_compile.compiler.passes.interpolated_steps import interpolate_steps
from rasp_compile.compiler.passes.linear_readout import choose_linear_readout
from rasp_compile.compiler.passes.number_readout import choose_number_readout
from rasp_compile.compiler.passes.prune import prune
from rasp_compile.compiler.tolerances import STEP_WINDOW
from rasp_compile.frontend import load_program, parse_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.runtime.prediction import predict

from tiny import by_label, plain_graph

PROGRAMS = Path(__file__).resolve().parents[2] / "programs"
AAB = (PROGRAMS / "aab.rasp").read_text()
XOR = AAB.replace('"b" if p == "a" and t == "a" else "a"', '"b" if p == t else "a"')


def test_linear_readout_reads_the_last_tables_inputs():
    graph = plain_graph(AAB)
    read = choose_linear_readout(graph)
    assert [v.label for v in read.readout.inputs] == ["prev", "tokens"] and read.readout.classes == ["a", "b"]
    assert read.ops == graph.ops  # the table is still there, for dead_ops to drop


def test_linear_readout_leaves_a_table_no_line_separates():
    graph = plain_graph(XOR)
    assert choose_linear_readout(graph) is graph


def test_number_readout_writes_a_numeric_answer_as_one_number():
    graph = plain_graph("vocab {a, b}\nmax_len 4\noutput map(lambda t: 1 if t == \"a\" else 5, tokens)\n")
    read = choose_number_readout(graph)
    writer = by_label(read)["output"]  # the unnamed answer carries the output's name
    assert isinstance(writer, TableMLP) and writer.out.encoding == ir.NUMERICAL and writer.out.values == (1, 5)
    assert read.readout.inputs == (writer.out,) and read.readout.weights.shape == (1, 2)
    assert read.output is graph.output  # the answer keeps its categorical meaning
    strings = plain_graph(AAB)  # strings: nothing to do
    assert choose_number_readout(strings) is strings


def test_number_readout_reads_a_number_too_large_for_float32_from_a_centred_copy():
    """Classes 0..600 from 0: A = 600^2, 16 u A > 1/4; centred on 300: A = 300^2 fits. The copy
    is written by the number's writers; the read-out's argmax is every class at every length."""
    text = "vocab {a}\nmax_len 600\noutput map(lambda i: i, indices)\n"
    graph = plain_graph(text)
    read = choose_number_readout(graph)
    (number,) = read.readout.inputs
    assert number.label == "output.centred" and number.values[0] == -299.5 and isinstance(by_label(read)["output.centred"], Linear)
    program = parse_program(text)
    model = compile_program(program)
    assert model.meta["layers"] == [] or all(layer["d_mlp"] == 0 for layer in model.meta["layers"])
    assert predict(model, [["a"] * 600])[0] == list(range(600))


def test_dead_ops_drops_what_nothing_reads_and_keeps_the_order():
    read = choose_linear_readout(plain_graph(AAB))
    live = drop_dead_ops(read)
    assert "next" not in by_label(live)  # only the read-out needed the table, and it reads its inputs
    assert [op.out.label for op in live.ops] == [op.out.label for op in read.ops if op.out.label != "next"]
    assert drop_dead_ops(live).ops == live.ops


WIDTH_SELECT = """
vocab {a, b}
max_len 5
w = selector_width(select(tokens, tokens, ==))
output aggregate(select(w, indices, ==), tokens)
"""


def test_interpolated_steps_interpolates_a_width_only_scores_read():
    graph = interpolate_steps(plain_graph(WIDTH_SELECT))
    ops = by_label(graph)
    assert ops["w"].interpolated and ops["w.bos_share"].window < STEP_WINDOW


def test_interpolated_steps_keeps_flat_steps_a_table_reads():
    text = WIDTH_SELECT.replace("output aggregate(select(w, indices, ==), tokens)",
                                "output sequence_map(lambda a, b: a + b, aggregate(select(w, indices, ==), w), w)")
    ops = by_label(interpolate_steps(plain_graph(text)))
    assert not ops["w"].interpolated and ops["w.bos_share"].window == STEP_WINDOW


SPREAD = """
vocab {a, b}
max_len 8
x = map(lambda t: 1 if t == "a" else 8, tokens)
agg = aggregate(select(indices, indices, ==), x)
output {read}
"""


def test_amplification_divides_the_leak_by_the_spread_a_number_reads():
    ops = by_label(amplify(plain_graph(SPREAD.replace("{read}", "numerical(map(lambda v: v, agg))"))))
    assert ops["agg"].amplification == 8.0  # read as the numbers 0 (none), 1 and 8


def test_amplification_is_one_where_only_one_hots_read():
    ops = by_label(amplify(plain_graph(SPREAD.replace("{read}", "map(lambda v: v > 4, agg)"))))
    assert ops["agg"].amplification == 1.0


def test_head_features_writes_sorts_key_features_in_place_of_two_widths():
    program = load_program(PROGRAMS / "sort.rasp", 5)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS) - {"head-features"})
    folded = fold_head_features(graph)
    new = [op for op in folded.ops if op not in set(graph.ops)]
    assert new and all(isinstance(op, (Linear, Attend)) for op in new)
    heads = [op for op in new if isinstance(op, Attend)]
    assert heads and all(any(v.label.startswith(h.out.label + ".") for v in h.score.reads()) for h in heads)
    assert {op.out.label for op in new if isinstance(op, Linear)} <= folded.labels - graph.labels


def test_head_features_leaves_a_head_whose_variables_others_read():
    graph = drop_dead_ops(choose_linear_readout(plain_graph(AAB)))  # the shift's indices: both sides
    assert fold_head_features(graph).ops == graph.ops


def test_prune_drops_only_dimensions_no_weight_reads():
    program = parse_program(AAB)
    whole = compile_program(program, disabled=["prune"], dtype="float64")
    pruned = prune(whole)
    dropped = set(whole.meta["residual"]) - set(pruned.meta["residual"])
    assert dropped and pruned.params["wte"].shape[1] == len(pruned.meta["residual"])
    inputs = [list("aabaa"), list("ab"), list("bbbab")]
    assert predict(pruned, inputs) == predict(whole, inputs)
    assert prune(pruned).meta["residual"] == pruned.meta["residual"]


def test_number_readout_reads_4097_widths_from_centred_digits_float32_can_sum():
    """A width of max_len 4,096 takes 4,097 values. One number cannot be read by float32 (its
    logits reach K^2/4), nor the plain two digits (terms ~1.05e6: 8 u of them is 0.5 of the margin
    of 1); the digits of the rank centred on its middle, over the centred copy, keep the terms
    below 2.7e5. Measured here: float32 logits of the exact digits, and of digits off by the most
    the read-out tolerates, pick every class."""
    graph = plain_graph('vocab {a, b}\nmax_len 4096\noutput selector_width(select(tokens, tokens, lambda k, q: k == "a"))\n')
    read = choose_number_readout(graph)
    number, high = read.readout.inputs
    assert (number.label, high.label) == ("output.centred", "output.high") and read.readout.classes == list(range(4097))
    assert high.values == tuple(range(-32, 33)) and isinstance(by_label(read)["output.centred"], Linear)
    weights, bias = read.readout.weights.astype(np.float32), read.readout.bias.astype(np.float32)
    terms = np.abs(weights).T @ np.array([2048.0, 32.0]) + np.abs(bias)
    assert 2.6e5 < terms.max() < 2.7e5  # 8 u of it: 0.128, within the quarter of the margin
    ranks = np.arange(4097)
    digits = np.floor((ranks - 2048 + 32) / 65)
    for error in (0.0, 0.3, -0.3):  # in units of the gap, on the number: within 3/8
        inputs = np.stack([ranks - 2048 + error, digits], axis=1).astype(np.float32)
        assert (np.argmax(inputs @ weights + bias, axis=1) == ranks).all()
