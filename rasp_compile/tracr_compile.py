"""Compiling with tracr's arguments: `compile_rasp_to_model`, returning our `Model` (docs/from_tracr.md).

    import rasp_compile as rc
    from rasp_compile import rasp                # was: from tracr.rasp import rasp
    model = rc.compile_rasp_to_model(program, vocab={1, 2, 3}, max_seq_len=5, compiler_bos="BOS")
    rc.run(model, [1, 2, 3])                     # BOS is added by the model's runner, not by you

A tracr expression (from `tracr.rasp.rasp`) is converted first (`from_tracr`); an expression of
`rasp_compile.rasp` / `rasp_compile.ir` is compiled as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np

from . import ir
from .compiler import compile_program
from .errors import ArgumentError, ArgumentTypeError, RaspTypeError
from .frontend.from_tracr import from_tracr, is_tracr_expression
from .frontend.infer import infer_value_sets
from .runtime.model import Model, validate

COMPILER_BOS = "compiler_bos"
COMPILER_PAD = "compiler_pad"


def compile_rasp_to_model(
    program: ir.SOp,
    vocab: Iterable[ir.Value],
    max_seq_len: int,
    causal: bool = False,
    compiler_bos: str = COMPILER_BOS,
    compiler_pad: str = COMPILER_PAD,
    mlp_exactness: int = 100,
    *,
    dtype=np.float32,
    disabled: Iterable[str] = (),
) -> Model:
    """Compile the s-op `program` over `vocab` for inputs of up to `max_seq_len` tokens.

    causal:        our causal semantics (`length` is i + 1 at position i, selectors see keys <= the
                   query), which tracr's causal flag does not change in its evaluator.
    compiler_bos:  the name the model's vocab gives its BOS token; like `compiler_pad`, it must not
                   be in `vocab`. Our models need no padding token, so `compiler_pad` is only checked.
    mlp_exactness: accepted and not needed: every MLP of ours is exact on every input.
    dtype, disabled: as in `rasp_compile.compile` (float dtype, optimisation passes to leave out).
    Raises ArgumentError (a ValueError) for a BOS or PAD token in the vocab, ArgumentTypeError (a
    TypeError) for a selector, RaspError for a program we cannot compile.
    """
    vocab = _checked_vocab(vocab, max_seq_len)
    for role, token in (("BOS", compiler_bos), ("PAD", compiler_pad)):
        if token in vocab:
            raise ArgumentError(f"the compiler's {role} token {token!r} must not be in the vocab")
    sop = from_tracr(program) if is_tracr_expression(program) else program
    if not isinstance(sop, ir.SOp):
        raise ArgumentTypeError(f"compile_rasp_to_model compiles an s-op, not {type(sop).__name__}")
    whole = ir.Program(output=sop, vocab=vocab, max_len=max_seq_len, causal=causal, output_name=sop.label or "output")
    value_sets = infer_value_sets(whole)
    _check_output_values(sop, value_sets[sop])
    model = compile_program(whole, dtype=dtype, disabled=disabled, value_sets=value_sets)
    vocab_names = list(model.meta["vocab"])
    vocab_names[model.meta["bos_id"]] = compiler_bos
    model = dataclasses.replace(model, meta={**model.meta, "vocab": vocab_names})
    validate(model)
    return model


def _checked_vocab(vocab: Iterable[ir.Value], max_seq_len: int) -> tuple:
    """The vocab as a sorted tuple (the model's token ids follow it); ArgumentError for an empty
    vocab, a token that is not a str, int, float or bool, or a max_seq_len that is not >= 1."""
    if isinstance(max_seq_len, bool) or not isinstance(max_seq_len, int) or max_seq_len < 1:
        raise ArgumentError(f"max_seq_len must be a whole number >= 1, not {max_seq_len!r}")
    tokens = set(vocab)
    bad = [token for token in tokens if not isinstance(token, (str, int, float))]
    if bad or not tokens:
        raise ArgumentError(f"the vocab must hold tokens (str, int, float, bool), not {bad[0]!r}" if bad
                         else "the vocab is empty")
    return tuple(sorted(tokens, key=lambda v: (type(v).__name__, v)))


def _check_output_values(output: ir.SOp, values: frozenset) -> None:
    """A model's output is one value per position: a tuple (an n-ary map's arguments) must be
    mapped to one value first."""
    tuples = [v for v in values if isinstance(v, tuple)]
    if tuples:
        raise RaspTypeError(
            f"the output takes tuple values such as {tuples[0]!r}; a model outputs one value per "
            "position: map the tuple to one value first",
            output.loc,
        )
