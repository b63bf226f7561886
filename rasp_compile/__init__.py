"""rasp-compile: RASP programs -> the exact weights of a transformer, and back again.

The Python API, for research code:

    import rasp_compile as rc
    program = rc.load_program("programs/aab.rasp")      # or rc.parse_program(text), or build rc.ir
    model = rc.compile(program, max_len=8)              # a Model: meta + docs/format.md arrays
    rc.save(model, "aab.npz"); model = rc.load("aab.npz")
    rc.run(model, ["a", "a", "b"])                      # the model's output at every position
    rc.run_batch(model, [["a", "b"], ["a", "a", "b"]])  # many inputs, of any lengths, at once
    rc.complete(model, ["a", "a"], steps=10)            # a causal model continuing a sequence
    rc.evaluate(program, ["a", "a", "b"])               # the reference interpreter, directly
    rc.evaluate_all(program, ["a", "a", "b"])           # every named s-op's values (docs/inspect.md)
    t = rc.trace(model, ["a", "a", "b"])                # residuals, s-ops, attention, heads
    model.head(0, 0)                                    # one head's labelled W_Q, W_K, W_V, W_O, QK
    rc.count_flops(model, n_positions=6)                # FLOPs per component of one forward
    tl_model = rc.to_transformer_lens(model)            # the model in TransformerLens ([interop] extra)
    tl_model(rc.tl_tokens(model, [["a", "a", "b"]]))    # its logits: BOS first, as our forward takes

Programs can also be written in Python with `rasp_compile.ir` (tokens, indices, Map, Select, ...),
or with tracr's names (docs/from_tracr.md):

    from rasp_compile import rasp                       # tracr's `rasp` module, over our IR
    model = rc.compile_rasp_to_model(sop, vocab={1, 2, 3}, max_seq_len=5)
    sop = rc.from_tracr(tracr_sop)                      # a live tracr program (extra [tracr])

Every public name, with its signature, is in docs/api.md; every error a user can meet is an
`rc.Error`.
"""

from __future__ import annotations

__version__ = "0.1.0"
"""The package's version: pyproject.toml reads it from here (`rasp-compile --version` shows it)."""

from importlib import import_module
from os import PathLike
from pathlib import Path

import numpy as np

from . import ir
from .compiler import OPTIMIZATIONS, compile_program
from .errors import (ArgumentError, ArgumentTypeError, Error, InputError, MissingExtraError, NotInModel,
                     NotInResidual, OutputError, RaspError, WeightsError, format_error)
from .frontend import check_max_len, load_checked, load_program, parse_checked, parse_program
from .runtime.prediction import complete as complete_tokens
from .runtime.execute import logits
from .runtime.prediction import predict
from .runtime.model import Model
from .runtime.token_text import tokens_from
from .tools.decode import output_numbers, residual_variables, snapped
from .runtime.weights_file import load, save
from .tools.flops import count_flops

LAZY = {
    "rasp": (".rasp", None),
    "compile_rasp_to_model": (".tracr_compile", "compile_rasp_to_model"),
    "from_tracr": (".frontend.from_tracr", "from_tracr"),
    "evaluate": (".tools.interpret", "evaluate"),
    "evaluate_all": (".tools.interpret", "evaluate_all"),
    "OpCounter": (".tools.interpret", "OpCounter"),
    "trace": (".tools.trace", "trace"),
    "to_transformer_lens": (".interop", "to_transformer_lens"),
    "tl_tokens": (".interop", "tl_tokens"),
}
"""Names imported on first use, `rc.NAME` -> (module, attribute; None for the module itself): the
interpreter, inspection, tracr and TransformerLens layers are not what a compile needs, and a cold
`rasp-compile` would otherwise pay for importing them (about 15 ms)."""


def __getattr__(name: str):
    """`rc.trace`, `rc.rasp`, ...: the LAZY names, imported when first asked for (PEP 562)."""
    if name not in LAZY:
        raise AttributeError(f"module 'rasp_compile' has no attribute {name!r}")
    module, attribute = LAZY[name]
    value = import_module(module, __name__)
    value = value if attribute is None else getattr(value, attribute)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    """The public names, and only they: `dir(rc)` is `__all__` (the imports this module makes for
    its own functions, and the subpackages, are not part of the API)."""
    return sorted(__all__)


__all__ = [
    "__version__",
    # programs: read, build, check, run in the interpreter
    "ir", "parse_program", "load_program", "evaluate", "evaluate_all", "OpCounter",
    # compile, save, load, run
    "compile", "OPTIMIZATIONS", "Model", "save", "load", "run", "run_batch", "complete", "logits",
    # inspect
    "trace", "count_flops",
    # tracr's names, and other tools
    "rasp", "compile_rasp_to_model", "from_tracr", "to_transformer_lens", "tl_tokens",
    # errors
    "Error", "RaspError", "InputError", "WeightsError", "OutputError", "ArgumentError", "ArgumentTypeError",
    "MissingExtraError", "NotInModel", "NotInResidual", "format_error",
]
"""The public surface, one list: `from rasp_compile import *`, `dir(rc)` and docs/api.md (which a
test keeps equal to it) name these names."""


def compile(
    program: ir.Program | str | PathLike, max_len: int | None = None, dtype=np.float32, disabled=()
) -> Model:
    """Compile a program given as IR, as `.rasp` text (a `str`), or as a file (a `pathlib.Path`),
    optionally at another max_len (1 to 4,096, as a program declares; ArgumentError otherwise) and
    without the optimisation passes named in `disabled` (see `OPTIMIZATIONS`). A `str` that is a
    file name rather than a program is refused with an ArgumentError saying to use `load_program`."""
    if isinstance(program, str) and _names_a_file(program):
        raise ArgumentError(f"rc.compile({program!r}): a str is the program's text, and this is a file name; "
                         f"compile the file with rc.compile(rc.load_program({program!r}))")
    if max_len is not None:
        check_max_len(max_len)
    value_sets = None  # inferred once, by the check at the max_len compiled (not its own)
    if isinstance(program, PathLike):
        program, value_sets = load_checked(Path(program), max_len)
    elif isinstance(program, str):
        program, value_sets = parse_checked(program, max_len=max_len)
    return compile_program(program, max_len=max_len, dtype=dtype, disabled=disabled, value_sets=value_sets)


def _names_a_file(text: str) -> bool:
    """Whether `text`, given as a program's text, is rather a file name: one line, naming a `.rasp`
    file or a file that exists (a program needs at least two lines, or `;` between declarations)."""
    if "\n" in text or ";" in text:
        return False
    try:
        return text.strip().lower().endswith(".rasp") or Path(text).is_file()
    except (OSError, ValueError):  # a name the system refuses (too long, a NUL): not a file
        return False


def run(model: Model, tokens: list | str) -> list:
    """The model's output at every position of one input (None for none). Tokens are vocab values
    or their text, as the command line reads them: `run(model, ["1", "2"])` and `run(model, "12")`
    on a number vocab are `run(model, [1, 2])` (runtime/token_text.tokens_from). A numerical output
    is the program's value it stands for (`1.0`, not float32's 0.99999988): see `run_batch`."""
    return run_batch(model, [tokens])[0]


def run_batch(model: Model, inputs: list) -> list[list]:
    """The model's outputs for each of `inputs` (each read as `run` reads one; lengths may differ:
    the inputs of one length run as one batch). A numerical output is snapped to the nearest value
    the program can give there (from meta.sops, within a quarter of the gap to the next: the
    compiled weights are exact to float rounding), and left as computed when the file does not
    record the values (docs/inspect.md)."""
    if isinstance(inputs, str):
        raise ArgumentTypeError("run_batch takes a list of inputs; for one input, call rc.run(model, tokens)")
    outputs = predict(model, [tokens_from(model, tokens) for tokens in inputs])
    if model.meta["output"]["encoding"] != "numerical":
        return outputs
    numbers = output_numbers(residual_variables(model.meta, model.d_model))
    return [[_value(x, numbers) for x in row] for row in outputs]


def _value(x, numbers: tuple):
    near = snapped(x, numbers)
    return x if near is None else near


def complete(model: Model, tokens: list | str, steps: int = 10) -> list:
    """The continuation of `tokens` (read as `run` reads them) by `steps` predicted tokens, for a
    causal model whose outputs are tokens of its vocab (runtime/prediction.complete)."""
    return complete_tokens(model, tokens_from(model, tokens), steps)
