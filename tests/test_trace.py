"""The inspection API against the reference interpreter: `rc.trace(model, tokens).sop(name)` reads
back exactly what `rc.evaluate_all(program, tokens)[name]` computes, for every library program on
seeded random inputs; every head is described by the select whose pattern it draws (checked on the
pattern itself); `model.head`'s QK form gives the scores the forward pass computes; the notebook
reprs stay short; meta the compiler did not write (old or hostile files) shows as "unknown"."""

from __future__ import annotations

import contextlib
import html
import json
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rasp_compile as rc
from extras import require
from rasp_compile import ir
from rasp_compile.cli import run_cmd
from rasp_compile.errors import RaspRuntimeError
from rasp_compile.runtime import forward
from rasp_compile.runtime.model import astype
from rasp_compile.tools.trace import NotInResidual
from rasp_compile.testing import random_programs
from rasp_compile.testing.differential import random_inputs

PROGRAMS = sorted((Path(__file__).resolve().parent.parent / "programs").glob("*.rasp"))
SELECTED = 0.01  # a key with more attention than this is one the head selects (exact weights give >= 1/(n+1))


@cache
def compiled(path: Path) -> tuple[ir.Program, rc.Model]:
    program = rc.load_program(path)
    return program, rc.compile(program)


def named_values(program: ir.Program, tokens: list) -> dict | None:
    """evaluate_all's s-op values (not selectors), or None where the program is in error."""
    try:
        values = rc.evaluate_all(program, tokens)
    except RaspRuntimeError:
        return None
    return {name: v for name, v in values.items() if isinstance(v, list)}


@pytest.mark.slow
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_sop_reads_back_what_the_interpreter_computes(path):
    program, model = compiled(path)
    held = set()
    for tokens in random_inputs(program.vocab, program.max_len, 12, rng=len(path.stem)):
        expected = named_values(program, tokens)
        if expected is None:
            continue
        t = rc.trace(model, tokens)
        assert t.sop(program.output_name) == expected[program.output_name] == t.output
        for name, values in expected.items():
            try:
                got = t.sop(name)
            except NotInResidual as missing:
                assert name in str(missing)
                continue
            held.add(name)
            assert got == values, (name, tokens)
    assert program.output_name in held


def test_most_freq_holds_its_named_sops_and_says_why_others_are_gone():
    program, model = compiled(PROGRAMS[[p.stem for p in PROGRAMS].index("most_freq")])
    t = rc.trace(model, list("bacac"))
    assert t.sop("count") == [1, 2, 2, 2, 2] and t.sop("repeated") == [0, 0, 0, 1, 1]
    assert t.sop("indices") == [0, 1, 2, 3, 4]  # index 0's dimension is pruned: all zeros read as 0
    with pytest.raises(NotInResidual, match="'rank' is not in the residual stream: an optimisation folded it"):
        t.sop("rank")
    with pytest.raises(NotInResidual, match="no s-op named 'bogus'"):
        t.sop("bogus")


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_sop_agrees_on_any_input_of_sort_freq(data):
    program, model = compiled(PROGRAMS[[p.stem for p in PROGRAMS].index("sort_freq")])
    tokens = data.draw(st.lists(st.sampled_from(program.vocab), min_size=1, max_size=program.max_len))
    expected = named_values(program, tokens)
    t = rc.trace(model, tokens)
    for name in ("tokens", "count", "indices", program.output_name):
        assert t.sop(name) == expected[name]


@pytest.mark.slow
@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(random_programs.programs())
def test_random_programs_heads_are_described_and_sops_read_back(program: ir.Program):
    model = rc.compile(program)
    for tokens in random_inputs(program.vocab, program.max_len, 4, rng=2):
        expected = named_values(program, tokens)
        if expected is None:
            continue
        t = rc.trace(model, tokens)
        assert all(head.known and head.selects for head in t.heads)
        for name, values in expected.items():
            with contextlib.suppress(NotInResidual):
                assert t.sop(name) == values, name


def test_evaluate_all_gives_selector_matrices_and_the_output():
    program = rc.parse_program("vocab {a, b}\nmax_len 4\nsame = select(tokens, tokens, ==)\n"
                               "n = selector_width(same)\noutput n")
    values = rc.evaluate_all(program, list("abba"))
    same = np.array([[k == q for k in "abba"] for q in "abba"])  # plain Python: key == query
    np.testing.assert_array_equal(values["same"], same)
    assert values["n"] == values[program.output_name] == [2, 2, 2, 2] and values["tokens"] == list("abba")


def head_nodes(program: ir.Program) -> dict:
    """(line, col) -> the aggregate / selector_width written there."""
    kinds = (ir.Aggregate, ir.SelectorWidth)
    return {(n.loc.line, n.loc.col): n for n in program.nodes() if isinstance(n, kinds) and n.loc}


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_every_head_is_described_by_the_select_whose_pattern_it_draws(path, tmp_path):
    program, model = compiled(path)
    rc.save(model, tmp_path / "m.npz")
    loaded = rc.load(tmp_path / "m.npz")
    assert loaded.meta["heads"] == json.loads(json.dumps(model.meta["heads"]))
    nodes = head_nodes(program)
    tokens = random_inputs(program.vocab, program.max_len, 1, rng=3)[0]
    t = rc.trace(loaded, tokens)
    assert len(t.heads) == sum(layer["n_head"] for layer in model.meta["layers"]) > 0
    for head in t.heads:
        assert head.known and head.selects and all("select(" in str(s) and s.line for s in head.selects)
        assert all(str(s) in head.select or s.name and s.name in head.select for s in head.selects)
        node = nodes[(head.line, head.col)]
        assert head.sop == (program.output_name if node is program.output else node.label or head.sop)
        if head.part:  # one of several heads that each take a part of the keys
            continue
        selected = t.attention(head.layer, head.head).array[t.first:, t.first:] > SELECTED
        if isinstance(node, ir.SelectorWidth) and head.kind == "numerical":  # position-widths' mean index
            assert head.select == "select(tokens, tokens, true)"
            np.testing.assert_array_equal(selected, np.ones_like(selected), err_msg=head.title)
            continue
        node.selector.label = node.selector.label or f"selector_of_head_{head.layer}_{head.head}"
        matrix = rc.evaluate_all(program, tokens)[node.selector.label]
        np.testing.assert_array_equal(selected, matrix, err_msg=head.title)


@pytest.mark.slow
def test_trace_names_every_head_by_its_select(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # the head lines unwrapped
    for path in PROGRAMS:
        program, model = compiled(path)
        rc.save(model, tmp_path / "m.npz")
        tokens = random_inputs(program.vocab, program.max_len, 1, rng=5)[0]
        words = [t if isinstance(t, str) else json.dumps(t) for t in tokens]
        assert run_cmd.main([str(tmp_path / "m.npz"), " ".join(words), "--trace"]) == 0
        out = capsys.readouterr().out
        for head in rc.trace(model, tokens).heads:
            assert head.title in out


def test_trace_is_short_and_has_no_float_noise(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    assert run_cmd.main([str(PROGRAMS[[p.stem for p in PROGRAMS].index("most_freq")]), "bacac", "--trace"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) < 120  # it was 222 lines, with 10 heads of 6 rows each
    table = out.split("s-ops at each token")[1].split("layer 0 head 0")[0]
    assert "e-0" not in out and "none" not in table and "0.857 " in table  # 6/7 as 0.857, noise as 0
    assert "more_frequent (BOS share) " in table  # a label whole, not wrapped


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_qk_form_gives_the_scores_the_forward_pass_sees(path):
    _, model = compiled(path)
    model = astype(model, np.float64)
    program = compiled(path)[0]
    tokens = random_inputs(program.vocab, program.max_len, 1, rng=7)[0]
    t = rc.trace(model, tokens)
    entering = [t.stages[0].x] + t.after_layer  # the residual entering each block
    for i, layer in enumerate(model.meta["layers"]):
        if not layer["n_head"]:
            continue
        q, k, _ = forward.qkv_heads(entering[i][None], model.blocks()[i]["attn"]["c_attn"], layer["n_head"])
        for h in range(layer["n_head"]):
            weights = model.head(i, h)
            expected = q[0, h] @ k[0, h].T / np.sqrt(layer["d_head"])
            np.testing.assert_allclose(weights.scores(entering[i]), expected, rtol=1e-9, atol=1e-6)
            assert weights.QK.rows[-1] == "1" and weights.QK.rows[:-1] == tuple(model.meta["residual"])
            assert weights.W_O.shape == (layer["d_head"], model.d_model)


def test_residual_is_labelled_and_to_pandas_says_what_to_install(monkeypatch):
    program, model = compiled(PROGRAMS[0])
    t = rc.trace(model, list("aab"))
    residual = t.residual(0)
    assert residual.columns == tuple(model.meta["residual"]) and residual.rows == ("BOS", "0:a", "1:a", "2:b")
    np.testing.assert_array_equal(residual.array, t.after_layer[0])
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    with pytest.raises(ModuleNotFoundError, match=r"^to_pandas needs pandas: pip install pandas$"):
        residual.to_pandas()


def test_to_pandas_when_installed():
    """Skipped without pandas locally; .ci/run installs it (tests/extras.py)."""
    pandas = require("pandas", "pandas")
    _, model = compiled(PROGRAMS[0])
    frame = rc.trace(model, list("aab")).residual("embedding").to_pandas()
    assert isinstance(frame, pandas.DataFrame) and list(frame.columns) == model.meta["residual"]


def test_reprs_are_short():
    for path in PROGRAMS:
        program, model = compiled(path)
        t = rc.trace(model, random_inputs(program.vocab, program.max_len, 1, rng=1)[0])
        for shown in (repr(program), repr(model), repr(t), repr(model.head(0, 0)) if t.heads else ""):
            assert len(shown) < 300 and "\n" not in shown
        assert len(model._repr_html_()) < 20_000  # most_freq's repr was 39,478 characters
        assert all(html.escape(head.title.split(": ", 1)[1]) in model._repr_html_() for head in t.heads)
        assert "<svg" in t._repr_html_() and "<table" in program._repr_html_()


@pytest.mark.off_schema  # writes malformed meta.heads / meta.sops on purpose (tests/conftest.py)
def test_a_file_without_head_descriptions_or_with_hostile_ones(capsys, tmp_path, monkeypatch):
    program, model = compiled(PROGRAMS[0])
    old = rc.Model({k: v for k, v in model.meta.items() if k not in ("heads", "sops")}, model.params)
    t = rc.trace(old, list("aab"))
    assert [h.title for h in t.heads] == ["layer 0 head 0: unknown (the file does not say what it computes)"]
    assert t.sop("prev") == ["a", "a", "a"]  # read from the labels alone
    hostile = dict(model.meta, heads=[[{"kind": "categorical", "select": "\x1b]0;pwned\x07", "sop": 3}]],
                   sops={"prev": "nonsense"})
    rc.save(rc.Model(hostile, model.params), tmp_path / "h.npz")
    monkeypatch.setenv("COLUMNS", "200")
    assert run_cmd.main([str(tmp_path / "h.npz"), "aab", "--trace"]) == 0
    out = capsys.readouterr().out
    assert "\x1b]" not in out and "\x07" not in out and "\\x1b]0;pwned\\x07" in out


def test_decode_a_one_hot_with_pruned_values_and_numbers_near_their_value():
    from rasp_compile.tools.decode import AMBIGUOUS, Variable, decode, meaning

    x = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.98], [0.0, 0.0, 0.0]])  # 3 positions, dims 1 and 2
    one_pruned = Variable("v", "categorical", (1, 2), ("b", "c"), unseen=("a",))
    assert decode(one_pruned, x) == ["b", "c", "a"]  # all zero: the one value without a dimension
    two_unseen = Variable("v", "categorical", (1, 2), ("b", "c"), unseen=("a", None))
    assert decode(two_unseen, x) == ["b", "c", AMBIGUOUS] and not two_unseen.readable
    assert decode(Variable("v", "categorical", (1, 2), ("b", "c"), unseen=()), x)[2] is None
    assert meaning(0.3333333432674408, (0, 1 / 3, 0.5)) == 1 / 3 and meaning(0.42, (0, 1 / 3, 0.5)) == 0.42
    assert meaning(1.4e-07) == 0.0 and meaning(2.718281828) == 2.718


def test_trace_json_lists_heads_and_titles_patterns(capsys):
    assert run_cmd.main([str(PROGRAMS[[p.stem for p in PROGRAMS].index("sort")]), "3 1 2", "--trace", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    titles = [head["title"] for head in report["heads"]]
    assert titles == [head["title"] for head in report["attention"]]
    assert titles[2] == ("layer 1 head 0: output = aggregate(select(smaller, indices, <=) and "
                         "select(not_larger, indices, >), tokens)")
    assert report["stages"][-1]["values"]["output"] == [1, 2, 3]


def test_a_trace_of_too_many_tokens_says_max_len_not_n_ctx():
    _, model = compiled(PROGRAMS[[p.stem for p in PROGRAMS].index("aab")])
    with pytest.raises(rc.InputError, match="an input of 7 tokens is longer than max_len 5"):
        rc.trace(model, list("aaaaaaa"))
