"""The public surface is one list: `rc.__all__` is what `dir(rc)` shows and what docs/api.md
documents, a line per name with its signature as `inspect` reads it (or, for an error, its base
classes); and every error a user can meet is an `rc.Error`, still the built-in error it was."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest

import rasp_compile as rc
from rasp_compile import errors, ir, rasp

API_PAGE = Path(__file__).resolve().parent.parent / "docs" / "api.md"
ENTRY = re.compile(r"^- `([^`]+)`: \S", re.MULTILINE)  # a name's line: "- `SIGNATURE`: meaning"


def default_text(value) -> str:
    """A default as docs/api.md writes it: a NumPy type as `np.NAME`, anything else as its repr."""
    if isinstance(value, type):
        return ("np." if value.__module__ == "numpy" else "") + value.__name__
    return repr(value)


def documented_form(name: str) -> str:
    """What docs/api.md must write for `rc.NAME`: a function's or class's call signature without
    annotations, an error's bases, or the bare name (a module, a constant)."""
    value = getattr(rc, name)
    if isinstance(value, type) and issubclass(value, BaseException):
        return f"{name}({', '.join(base.__name__ for base in value.__bases__)})"
    if not (inspect.isfunction(value) or isinstance(value, type)):
        return name
    parts, keyword_only = [], False
    for p in inspect.signature(value).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not keyword_only:
            parts.append("*")
        keyword_only = keyword_only or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        prefix = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else ""
        parts.append(prefix + p.name + ("" if p.default is p.empty else f"={default_text(p.default)}"))
    return f"{name}({', '.join(parts)})"


def test_dir_shows_exactly_the_public_names_and_each_resolves():
    assert len(set(rc.__all__)) == len(rc.__all__)
    assert dir(rc) == sorted(rc.__all__)
    assert set(rc.LAZY) <= set(rc.__all__)  # a name imported on first use is public like the others
    for name in rc.__all__:
        assert getattr(rc, name) is not None, name


def test_docs_api_has_one_line_per_public_name_with_its_signature():
    entries = ENTRY.findall(API_PAGE.read_text(encoding="utf-8"))
    names = [re.match(r"[\w]+", entry).group() for entry in entries]
    assert len(names) == len(set(names)), "docs/api.md documents a name twice"
    assert sorted(set(rc.__all__) - set(names)) == [], "public names docs/api.md does not document"
    assert sorted(set(names) - set(rc.__all__)) == [], "names docs/api.md documents that are not public"
    for entry, name in zip(entries, names):
        assert entry == documented_form(name), f"docs/api.md should write `{documented_form(name)}`"


def test_every_error_class_derives_from_the_one_base():
    classes = [value for value in vars(errors).values()
               if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == errors.__name__]
    assert rc.Error in classes and len(classes) > 10
    assert [cls.__name__ for cls in classes if not issubclass(cls, rc.Error)] == []
    exported = [getattr(rc, name) for name in rc.__all__ if isinstance(getattr(rc, name), type)]
    assert all(issubclass(cls, rc.Error) for cls in exported if issubclass(cls, BaseException))


@pytest.fixture(scope="module")
def model() -> rc.Model:
    return rc.compile("vocab {a, b}\nmax_len 3\noutput tokens")


MISUSES = {  # what a user may get wrong -> the error class, which is also the built-in it always was
    "max_len out of range": (lambda m: rc.compile("vocab {a}; max_len 2; output tokens", max_len=0),
                             rc.ArgumentError, ValueError),
    "a file name as program text": (lambda m: rc.compile("missing.rasp"), rc.ArgumentError, ValueError),
    "a BOS token in the vocab": (lambda m: rc.compile_rasp_to_model(rasp.tokens, {"a", "B"}, 2, compiler_bos="B"),
                                 rc.ArgumentError, ValueError),
    "an unknown comparison": (lambda m: ir.Select(ir.tokens, ir.tokens, "=~"), rc.ArgumentError, ValueError),
    "an unknown optimisation": (lambda m: rc.compile(rc.parse_program("vocab {a}\nmax_len 2\noutput tokens"), disabled=["bogus"]), rc.ArgumentError, ValueError),
    "too many positions to count": (lambda m: rc.count_flops(m, 99), rc.ArgumentError, ValueError),
    "a str for a list of inputs": (lambda m: rc.run_batch(m, "ab"), rc.ArgumentTypeError, TypeError),  # type: ignore[arg-type]
    "a number for a function": (lambda m: rasp.Map(3, rasp.tokens), rc.ArgumentTypeError, TypeError),  # type: ignore[arg-type]
    "an s-op called": (lambda m: rasp.tokens([1]), rc.ArgumentTypeError, TypeError),
    "an s-op as a truth value": (lambda m: bool(rasp.tokens == "a"), rc.ArgumentTypeError, TypeError),  # type: ignore[comparison-overlap]
    "a selector compiled": (lambda m: rc.compile_rasp_to_model(rasp.Select(rasp.tokens, rasp.tokens,
                                                                           rasp.Comparison.EQ), {"a"}, 2),
                            rc.ArgumentTypeError, TypeError),
    "no such head": (lambda m: m.head(9, 0), rc.NotInModel, IndexError),
    "no such layer in a trace": (lambda m: rc.trace(m, "ab").residual(9), rc.NotInModel, IndexError),
    "no such s-op in a trace": (lambda m: rc.trace(m, "ab").sop("bogus"), rc.NotInResidual, LookupError),
    "a token outside the vocab": (lambda m: rc.run(m, ["z"]), rc.InputError, Exception),
    "a missing weights file": (lambda m: rc.load("missing.npz"), rc.WeightsError, Exception),
    "a program in error": (lambda m: rc.parse_program("vocab {a}\nmax_len 2\noutput nothing"), rc.RaspError,
                           Exception),
}


@pytest.mark.parametrize("misuse", MISUSES.values(), ids=MISUSES.keys())
def test_every_misuse_is_an_rc_error_and_still_its_builtin(model, misuse, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the file names above name no file
    call, expected, builtin = misuse
    with pytest.raises(expected) as raised:
        call(model)
    assert isinstance(raised.value, rc.Error) and isinstance(raised.value, builtin)
    assert str(raised.value).strip() and "\n" not in str(raised.value)


def test_the_subpackages_are_not_public_but_stay_importable():
    public_modules = {name for name in rc.__all__ if isinstance(getattr(rc, name), ModuleType)}
    assert public_modules == {"ir", "rasp"}
    assert "compiler" not in dir(rc) and isinstance(rc.compiler, ModuleType)
