"""Hostile weights files: every field of a real model's meta, and every field nested inside one
(a head's `kind`, an s-op's `values`, a residual label, ...), replaced by JSON of another type
(list, object, number, string, null, nested), or deleted. Every reader of a weights file must then
either refuse the file with the project's one-line WeightsError (exit status 2 on the command line)
or read it: rasp-run plain, --json, --trace, --html, --flops, --accuracy, rc.trace and its views,
the model's repr and notebook view, model.head, the weights printout and the TransformerLens
labels. A traceback is never an answer."""

from __future__ import annotations

import contextlib
import io
import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rasp_compile as rc
from rasp_compile.cli import run_cmd
from rasp_compile.cli.tokens import join_tokens
from rasp_compile.errors import InputError, WeightsError
from rasp_compile.interop.labels import labels_of
from rasp_compile.runtime.prediction import input_vocab
from rasp_compile.safe_text import shortened
from rasp_compile.tools.inspect_weights import format_model, labelled_blocks

pytestmark = pytest.mark.off_schema  # its files break meta on purpose (tests/conftest.py)

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
SHOWN_PROGRAMS = ("aab", "frac_prevs")  # a categorical output that completes; a numerical one


@cache
def meta_and_params(name: str) -> tuple[str, dict]:
    model = rc.compile(rc.load_program(PROGRAMS / f"{name}.rasp"))
    return json.dumps(model.meta), model.params


def write_raw(path: Path, meta, params: dict) -> None:
    """A weights file holding `meta` as it is: what a hostile file holds, never validated."""
    np.savez(path, meta=np.array(json.dumps(meta)), **params)


def paths(value, prefix=()) -> list[tuple]:
    """Every place inside a JSON value, as the keys and indices leading to it (the value itself: ())."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += paths(item, prefix + (i,))
    return found


DELETE = object()
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=10**30, max_value=10**40),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
                    st.sampled_from(["categorical", "numerical", "width", "a", "bos", "tokens:a", "", "rasp-compile/1"]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)


def mutated(meta: dict, where: tuple, value):
    """`meta` with the value at `where` replaced by `value` (or deleted: DELETE)."""
    if not where:
        return meta if value is DELETE else value
    *parent_path, last = where
    parent = meta
    for key in parent_path:
        parent = parent[key]
    if value is DELETE:
        del parent[last]
    else:
        parent[last] = value
    return meta


@st.composite
def place(draw, value) -> tuple:
    """A place inside `value`: a field of each level picked evenly, going deeper or stopping there
    (so that a head's `kind` is as likely as the file's `vocab`)."""
    where, deeper = (), True  # meta itself is replaced rarely: the loader's first check refuses it
    while isinstance(value, (dict, list)) and value and deeper:
        key = draw(st.sampled_from(list(value) if isinstance(value, dict) else range(len(value))))
        where, value = where + (key,), value[key]
        deeper = draw(st.booleans())
    return where


@st.composite
def hostile_meta(draw) -> tuple[str, dict]:
    name = draw(st.sampled_from(SHOWN_PROGRAMS))
    text, _ = meta_and_params(name)
    meta = json.loads(text)
    for _ in range(draw(st.integers(1, 2))):
        where = draw(place(meta))
        meta = mutated(meta, where, draw(st.just(DELETE) | json_values))
        if not isinstance(meta, dict):
            break
    return name, meta


def run_quietly(argv: list[str]) -> tuple[int, str]:
    """rasp-run's status and stderr; any exception it lets out fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run_cmd.main(argv)
    return status, err.getvalue()


def check_command_line(path: Path, text: str, report: Path, every_report: bool = True) -> None:
    """rasp-run with the reports that read meta (all of them, or --trace and --html only)."""
    runs = [[text, "--trace"], [text, "--html", str(report)]]
    if every_report:
        runs += [[text], [text, "--json"], [text, "--trace", "--json"], [text, "--flops"], ["--accuracy", "--json"]]
    for argv in runs:
        status, err = run_quietly([str(path), *argv])
        assert status in (0, 1, 2), (argv, status, err)
        if status == 2:
            assert err.count("\n") == 1 and err.startswith("error: "), (argv, err)


def check_python_api(model: rc.Model, tokens: list) -> None:
    repr(model), model._repr_html_(), format_model(model)
    labels = labels_of(model, max((layer["n_head"] for layer in model.meta["layers"]), default=0))
    for i, layer in enumerate(model.meta["layers"]):
        for h in range(layer["n_head"]):
            head = model.head(i, h)
            repr(head), head._repr_html_(), labels.describe_head(i, h)
    try:
        t = rc.trace(model, tokens)
    except InputError:  # the tokens a mutated vocab no longer holds
        return
    repr(t), t._repr_html_(), t.sops(), [str(head) for head in t.heads]


ON_THE_COMMAND_LINE: list[object] = [None, 0, "x", [[1]], ["a", None], {}]
"""null, a number, a string, nested lists, an object: what the sweep also runs through rasp-run."""
DEEP = json.loads("[" * 600 + '"a"' + "]" * 600)  # nested as deep as JSON parses, not as the stack allows
REPLACEMENTS = ON_THE_COMMAND_LINE + [DELETE, True, -1, 2.5, 10**30, float("nan"), "", [],
                                      {"kind": ["categorical"]}, [{"a": [None]}], DEEP, [DEEP, "b"]]
"""One value of every JSON type (and nested ones) that the sweep puts in every place of meta."""


def sweep_paths(meta: dict) -> list[tuple]:
    """Every place of `meta`, but of a list only its first and last items (they stand for the rest)."""
    return [where for where in paths(meta)
            if all(not isinstance(key, int) or key in (0, -1) or _is_last(meta, where, i)
                   for i, key in enumerate(where))]


def _is_last(meta, where: tuple, i: int) -> bool:
    parent = meta
    for key in where[:i]:
        parent = parent[key]
    return where[i] == len(parent) - 1


@pytest.mark.slow
@pytest.mark.parametrize("name", SHOWN_PROGRAMS)
def test_every_place_of_meta_with_every_json_type_is_refused_or_read(tmp_path, name):
    text, params = meta_and_params(name)
    failures = []
    for where in sweep_paths(json.loads(text)):
        for i, value in enumerate(REPLACEMENTS):
            meta = mutated(json.loads(text), where, value)
            write_raw(tmp_path / "m.npz", meta, params)
            try:
                model = rc.load(tmp_path / "m.npz")
                tokens = input_vocab(model)[:3]
                check_python_api(model, tokens)
                if i < len(ON_THE_COMMAND_LINE):  # a few types there: the property below runs every report
                    check_command_line(tmp_path / "m.npz", join_tokens(model, tokens) or "a", tmp_path / "r.html",
                                       every_report=False)
            except WeightsError as error:
                assert "\n" not in str(error)
            except Exception as error:  # noqa: BLE001 (collected, to name every place that fails)
                failures.append(f"{where} = {shortened(repr(value), 80)}: {type(error).__name__}: {error}")
    assert not failures, "\n".join(failures[:30])


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_meta())
def test_a_hostile_meta_is_refused_in_one_line_or_read_by_every_reader(tmp_path_factory, case):
    name, meta = case
    folder = tmp_path_factory.mktemp("hostile")
    path = folder / f"{name}.npz"
    write_raw(path, meta, meta_and_params(name)[1])
    try:
        model = rc.load(path)
    except WeightsError as error:
        assert "\n" not in str(error)
        status, err = run_quietly([str(path), "a"])
        assert status == 2 and err.count("\n") == 1, err
        return
    tokens = input_vocab(model)[:3]
    check_python_api(model, tokens)
    check_command_line(path, join_tokens(model, tokens) or "a", folder / "report.html")


@pytest.mark.parametrize("kind", [["categorical"], {"a": 1}, 3, None])
def test_a_head_whose_kind_is_not_a_string_is_unknown(tmp_path, kind):
    text, params = meta_and_params("aab")
    meta = json.loads(text)
    meta["heads"][0][0]["kind"] = kind
    write_raw(tmp_path / "k.npz", meta, params)
    model = rc.load(tmp_path / "k.npz")
    assert "unknown" in model.head(0, 0).description.title and "unknown" in model._repr_html_()
    assert "unknown" in rc.trace(model, ["a", "b"]).heads[0].title
    assert run_quietly([str(tmp_path / "k.npz"), "a b", "--trace"])[0] == 0


def aab_with_meta(**changes) -> rc.Model:
    """aab's model with `changes` to its meta (the same params)."""
    meta, params = meta_and_params("aab")
    return rc.Model({**json.loads(meta), **changes}, params)


def sops_numerical_where_labels_say_categorical() -> rc.Model:
    """meta.sops calls a one-hot (`tokens:a`, `tokens:b`) numerical: no dimension is named `tokens`."""
    sops = json.loads(meta_and_params("aab")[0])["sops"]
    sops["tokens"] = {"encoding": "numerical", "values": [1, 2]}
    return aab_with_meta(sops=sops)


def sops_numbers_not_finite() -> rc.Model:
    sops = json.loads(meta_and_params("aab")[0])["sops"]
    sops["indices (number)"]["values"] = [float("nan"), 10**400, 1, 2]
    return aab_with_meta(sops=sops)


LYING = {"numerical-one-hot": sops_numerical_where_labels_say_categorical,
         "numbers-not-finite": sops_numbers_not_finite}


@pytest.mark.parametrize("make", LYING.values(), ids=LYING.keys())
def test_trace_degrades_on_meta_sops_that_lie(make, tmp_path, capsys):
    model = make()
    t = rc.trace(model, list("aab"))
    assert t.output == rc.run(aab_with_meta(), "aab")
    assert t.sop("tokens") == list("aab")  # read from the labels when meta.sops contradicts them
    assert all(v in (0, 1, 2) for v in t.sop("indices (number)"))
    rc.save(model, tmp_path / "lying.npz")
    for flags in (["--trace"], ["--trace", "--json"], ["--html", str(tmp_path / "r.html")]):
        assert run_cmd.main([str(tmp_path / "lying.npz"), "aab", *flags]) == 0
    capsys.readouterr()


def test_a_file_without_residual_labels_gets_the_same_labels_in_every_report():
    meta, params = meta_and_params("aab")
    unlabelled = rc.Model({k: v for k, v in json.loads(meta).items() if k != "residual"}, params)
    expected = tuple(f"d{i}" for i in range(unlabelled.d_model))
    assert rc.trace(unlabelled, list("ab")).labels == expected
    assert unlabelled.head(0, 0).W_O.columns == expected
    assert labelled_blocks(unlabelled)[0].col_labels == expected
    assert labels_of(unlabelled, n_heads=1).residual == expected


def test_a_lone_surrogate_in_meta_is_refused_at_load(tmp_path, capsys):
    """JSON can spell "\\udcff"; no page or terminal can show it: --html ended in a
    UnicodeEncodeError traceback, a notebook could not send the model's view."""
    meta, params = meta_and_params("aab")
    meta = json.loads(meta)
    meta["vocab"][1] = "b\udcff"
    write_raw(tmp_path / "s.npz", meta, params)
    for flags in (["a"], ["a", "--html", str(tmp_path / "r.html")], ["a", "--trace"]):
        assert run_cmd.main([str(tmp_path / "s.npz"), *flags]) == 2
        error = capsys.readouterr().err
        assert "lone surrogate" in error and error.count("\n") == 1 and "\\udcff" in error
