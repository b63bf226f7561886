"""`rasp-compile --json` (cli/compile_cmd.py): the summary's content pinned for a small program,
and its value lists, sorted on arrays for sets of numbers, in exactly the order the plain sort
of their texts gives (numbers by value, then words; ties in the set's own order)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rasp_compile.cli import compile_cmd
from rasp_compile.cli.compile_cmd import _natural, sorted_texts
from rasp_compile.compiler import compile_program
from rasp_compile.frontend import load_program
from rasp_compile.runtime.model import n_nonzero, n_params
from rasp_compile.runtime.token_text import value_text
from rasp_compile.tools.flops import count_flops

SMALL = """vocab {a, b, 7}
max_len 4
causal
is_a = numerical(map(lambda t: 1 if t == "a" else 0, tokens))
frac = numerical(aggregate(select(indices, indices, <=), is_a))
frac_b = numerical(aggregate(select(indices, indices, <=), numerical(map(lambda t: 1 if t == "b" else 0, tokens))))
most = sequence_map(lambda f, g: f > g, frac, frac_b)
first = aggregate(select(indices, indices, lambda k, q: k == 0), tokens)
output sequence_map(lambda m, t: t if m else -1, most, first)
"""

MEANS = ["0", "0.25", "0.333333", "0.5", "0.666667", "0.75", "1"]


def sop(name, kind, encoding, values, output=False, **conflicts) -> dict:
    return {"name": name, "output": output, "kind": kind, "encoding": encoding,
            "n_values": len(values), "values": values, **conflicts}


def test_json_holds_every_value_of_every_sop_in_order(tmp_path: Path, capsys):
    path = tmp_path / "small.rasp"
    path.write_text(SMALL)
    assert compile_cmd.main([str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert out == json.dumps(report, indent=2) + "\n" and err == ""
    assert report["program"] == {
        "file": str(path), "name": "small", "output": "output", "vocab": ["a", "b", "7"], "max_len": 4,
        "causal": True, "sops": [
            sop("indices", "indices", "categorical", ["0", "1", "2", "3"]),
            sop("tokens", "tokens", "categorical", ["7", "a", "b"]),
            sop("is_a", "map", "numerical", ["0", "1"]),
            sop("frac", "aggregate", "numerical", MEANS),
            sop(None, "map", "numerical", ["0", "1"]),
            sop("frac_b", "aggregate", "numerical", MEANS),
            sop("most", "sequence_map", "categorical", ["false", "true"]),
            sop("first", "aggregate", "categorical", ["7", "a", "b"], conflicts="impossible"),
            sop(None, "sequence_map", "categorical", ["-1", "7", "a", "b"], output=True),
        ]}
    model = compile_program(load_program(path))
    assert report["model"] == {
        "layers": model.meta["layers"], "d_model": model.d_model, "params": n_params(model),
        "nonzero": n_nonzero(model), "dtype": "float32", "flops_positions": 5, "flops": count_flops(model, 5)}
    assert report["emitted"] is None


def plain_sort(values: frozenset) -> list[str]:
    return sorted(map(value_text, values), key=_natural)


NUMBERS = st.one_of(
    st.integers(-10**7, 10**7), st.floats(-2e6, 2e6, allow_nan=False), st.fractions(-3, 3, max_denominator=64).map(float),
    st.sampled_from([0.0, -0.0, 999999.7, 1000000, 1000000.3, 999999.5, 2**53, 2**53 + 1, 2.0**53, 10**20, 1e20, 1e-7]))
VALUES = st.one_of(NUMBERS, st.booleans(), st.sampled_from(["a", "b", "1.5", "10", None, (1, "a")]))


@settings(max_examples=300, deadline=None)
@given(st.lists(NUMBERS, max_size=40), st.lists(VALUES, max_size=5), st.randoms(use_true_random=False))
def test_sorted_texts_is_the_plain_sort_and_equal_sets_share_it(numbers: list, others: list, random):
    done: dict[frozenset, list[str]] = {}
    assert sorted_texts(frozenset(numbers), done) == plain_sort(frozenset(numbers))
    shuffled = [float(x) if type(x) is int and abs(x) < 2**53 and random.random() < 0.5 else x for x in numbers]
    random.shuffle(shuffled)  # an equal set, built in another order, ints as floats where equal
    assert sorted_texts(frozenset(shuffled), done) == plain_sort(frozenset(shuffled))
    mixed = frozenset(numbers + others)
    assert sorted_texts(mixed, done) == plain_sort(mixed)


def test_ties_of_different_texts_keep_the_sets_order():
    ties = frozenset([1000000, 999999.7, 1000000.3, 2**53, 2**53 + 1])  # `1000000` / `1e+06`; two ints as one float
    done: dict[frozenset, list[str]] = {}
    assert sorted_texts(ties, done) == plain_sort(ties) and ties not in done
