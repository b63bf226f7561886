"""The model object of docs/format.md: `meta` (the JSON header) and `params` (every array, by its flat key).

`Model(meta, params)` is a plain container; `validate(model)` is the one place that decides whether
a model can be trusted, and raises `WeightsError` with one line naming the first problem. The
compiler builds a `Model` and validates it; the loader does the same with what it read from disk.

Layer metadata and sub-layers: `meta.layers[i]` describes block i. A block has attention exactly
when `n_head > 0` (then all four `attn` keys are present, of width 3·n_head·d_head), and an MLP
exactly when `d_mlp > 0` (then all four `mlp` keys are present). `d_head` is ignored when
`n_head` is 0 (write 0).

`validate` is `check_structure` (meta, and every array's dtype and shape: nothing that reads array
values, so the loader runs it on the .npy headers before reading any data) then `check_values`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
from numpy.typing import DTypeLike

from ..errors import WeightsError
from .token_keys import token_key

if TYPE_CHECKING:
    from ..tools.heads import HeadWeights
    from .tracr_apply import AppliedOutput

FORMAT = "rasp-compile/1"
ACTIVATIONS = ("relu", "gelu")
ENCODINGS = ("categorical", "numerical")
FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
MAX_DIM = int(np.iinfo(np.intp).max)  # no array dimension can be longer, so no meta size may be either
SHOWN_CHARS = 60  # a bad meta value is quoted in an error message up to this length

SHAPE_HINTS = {
    "wte": " (one row per meta.vocab entry)",
    "wpe": " (n_ctx = meta.max_len, plus 1 when bos_id is not null)",
    "unembed": " (n_out = len(meta.output.values), or 1 for a numerical output)",
    "unembed_b": " (n_out = len(meta.output.values), or 1 for a numerical output)",
}


@dataclass(frozen=True)
class Model:
    """A transformer in the docs/format.md format.

    meta:   the JSON header (format, vocab, bos_id, max_len, causal, activation, layers, output, ...)
    params: every array of the file except `meta`, by its flat key (`wte`, `blocks.0.attn.c_attn.w`, ...)

    Frozen: the compiler's steps build a new model (`dataclasses.replace`) rather than change one.
    Its arrays become read-only when the model first runs (runtime/forward_plan.py); a user who edits
    weights to see what they do makes one writable again, and the forward pass notices.
    """

    meta: dict[str, Any]
    params: dict[str, np.ndarray]

    @property
    def n_layers(self) -> int:
        return len(self.meta["layers"])

    @property
    def d_model(self) -> int:
        return int(self.params["wte"].shape[1])

    @property
    def n_ctx(self) -> int:
        """Positions of `wpe`: max_len, plus one for BOS when there is one."""
        return int(self.meta["max_len"]) + (self.meta["bos_id"] is not None)

    @property
    def n_out(self) -> int:
        return int(self.params["unembed"].shape[1])

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.params["wte"].dtype

    def blocks(self) -> list[dict[str, Any]]:
        """Per block, the arrays nested as picoGPT's params, ready to splat into the forward pass:
        `{"attn": {"c_attn": {"w", "b"}, "c_proj": {"w", "b"}}, "mlp": {"c_fc": ..., "c_proj": ...}}`,
        with an absent sub-layer left out."""
        blocks: list[dict[str, Any]] = [{} for _ in range(self.n_layers)]
        for key, array in self.params.items():
            if key.startswith("blocks."):
                _, i, sub_layer, layer, name = key.split(".")
                blocks[int(i)].setdefault(sub_layer, {}).setdefault(layer, {})[name] = array
        return blocks

    def nested(self) -> dict[str, Any]:
        """All arrays as picoGPT's nested params: wte, wpe, blocks (see `blocks()`), unembed,
        and unembed_b when present."""
        top = {key: array for key, array in self.params.items() if not key.startswith("blocks.")}
        return {**top, "blocks": self.blocks()}

    def head(self, layer: int, head: int) -> HeadWeights:
        """Head `head` of layer `layer`: labelled W_Q, W_K, W_V, W_O and its QK and OV forms, the
        biases folded in (tools/heads.py)."""
        from ..tools.heads import head_weights

        return head_weights(self, layer, head)

    def apply(self, tokens: list[Any]) -> AppliedOutput:
        """The model on `tokens` given as tracr's `apply` takes them, BOS first: `.decoded`,
        `.residuals`, ... (runtime/tracr_apply.py; docs/from_tracr.md)."""
        from .tracr_apply import apply

        return apply(self, tokens)

    def __repr__(self) -> str:
        from ..tools.model_view import model_repr

        return model_repr(self)

    def _repr_html_(self) -> str:
        from ..tools.model_view import model_html

        return model_html(self)


def n_params(model: Model) -> int:
    """Total number of weights (every array element)."""
    return sum(int(array.size) for array in model.params.values())


def n_nonzero(model: Model) -> int:
    """Number of weights that are not exactly zero."""
    return sum(int(np.count_nonzero(array)) for array in model.params.values())


def astype(model: Model, dtype: DTypeLike) -> Model:
    """The same model with every array converted to `dtype` (float32 or float64)."""
    return Model(model.meta, {key: array.astype(dtype) for key, array in model.params.items()})


def expected_shapes(model: Model) -> dict[str, tuple[int, ...]]:
    """Every key the model must hold, and its shape, as meta and `wte` dictate."""
    meta = model.meta
    d_model = model.d_model
    n_out = len(meta["output"]["values"]) if meta["output"]["encoding"] == "categorical" else 1
    shapes: dict[str, tuple[int, ...]] = {
        "wte": (len(meta["vocab"]), d_model),
        "wpe": (model.n_ctx, d_model),
        "unembed": (d_model, n_out),
    }
    if "unembed_b" in model.params:
        shapes["unembed_b"] = (n_out,)
    for i, layer in enumerate(meta["layers"]):
        width = layer["n_head"] * layer["d_head"]
        if layer["n_head"] > 0:
            shapes[f"blocks.{i}.attn.c_attn.w"] = (d_model, 3 * width)
            shapes[f"blocks.{i}.attn.c_attn.b"] = (3 * width,)
            shapes[f"blocks.{i}.attn.c_proj.w"] = (width, d_model)
            shapes[f"blocks.{i}.attn.c_proj.b"] = (d_model,)
        if layer["d_mlp"] > 0:
            shapes[f"blocks.{i}.mlp.c_fc.w"] = (d_model, layer["d_mlp"])
            shapes[f"blocks.{i}.mlp.c_fc.b"] = (layer["d_mlp"],)
            shapes[f"blocks.{i}.mlp.c_proj.w"] = (layer["d_mlp"], d_model)
            shapes[f"blocks.{i}.mlp.c_proj.b"] = (d_model,)
    return shapes


def meta_from_json(path: object, text: str) -> dict[str, Any]:
    """The meta object a weights file at `path` holds as JSON `text`; WeightsError (one line) when
    it is not JSON, too large or too deep to parse, or not a JSON object. Both file formats call it."""
    try:
        meta = json.loads(text)
    except (ValueError, RecursionError) as e:  # bad JSON; an int over 4300 digits; nesting too deep
        raise WeightsError(f"{path}: 'meta' is not valid JSON ({e})") from None
    if not isinstance(meta, dict):
        raise WeightsError(f"{path}: 'meta' must be a JSON object")
    return meta


def validate(model: Model) -> None:
    """Raise `WeightsError` (one line, naming the problem) unless the model is safe to run."""
    check_structure(model)
    check_values(model)


def check_structure(model: Model) -> None:
    """`WeightsError` unless meta is well formed and every array has the key, dtype and shape meta
    implies. Reads `.dtype` and `.shape` only, never array values."""
    _check_meta(model.meta)
    _check_arrays(model)


def check_values(model: Model) -> None:
    """`WeightsError` if an array holds NaN or infinity (run after `check_structure`)."""
    for key, array in model.params.items():
        if not np.all(np.isfinite(array)):
            _fail(f"array {key!r} holds NaN or infinity")


def _fail(message: str) -> NoReturn:
    raise WeightsError(message)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_token(value: object) -> bool:
    return token_key(value) is not None


def _is_size(value: Any, least: int) -> bool:
    """An integer from `least` up to MAX_DIM."""
    return _is_int(value) and least <= value <= MAX_DIM


def _shown(value: object) -> str:
    """A meta value as JSON for an error message: one line, at most SHOWN_CHARS characters, even
    for values too deep or too long to print whole."""
    try:
        text = json.dumps(value, default=repr)
    except (ValueError, RecursionError):  # an int over 4300 digits; nesting deeper than the stack
        return "a value too large to print"
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 3] + "..."


def _require(meta: dict[str, Any], field: str, check: Callable[[Any], object], what: str, where: str = "meta") -> Any:
    if field not in meta:
        _fail(f"{where} has no '{field}' field")
    if not check(meta[field]):
        _fail(f"{where}.{field} must be {what}, got {_shown(meta[field])}")
    return meta[field]


def _check_format(fmt: str) -> None:
    if fmt == FORMAT:
        return
    if re.fullmatch(r"rasp-compile/[1-9]\d*", fmt):  # a version other than 1 without leading zeros: > 1
        _fail(f"made by a newer rasp-compile (format {_shown(fmt)}; this version reads {FORMAT!r})")
    _fail(f"unknown format {_shown(fmt)} (expected {FORMAT!r})")


def _check_meta(meta: Any) -> None:
    if not isinstance(meta, dict):
        _fail(f"meta must be a JSON object, got {type(meta).__name__}")
    _check_format(_require(meta, "format", lambda v: isinstance(v, str), "a string"))
    _check_text(meta)
    vocab = _require(meta, "vocab", lambda v: isinstance(v, list) and v and all(map(_is_token, v)),
                     "a non-empty list of strings or numbers")
    if len({token_key(v) for v in vocab}) != len(vocab):
        _fail("meta.vocab holds a token twice")
    bos_id = _require(meta, "bos_id", lambda v: v is None or _is_int(v), "an integer or null")
    if bos_id is not None and not 0 <= bos_id < len(vocab):
        _fail(f"meta.bos_id {bos_id} is out of range for a vocab of {len(vocab)}")
    _require(meta, "max_len", lambda v: _is_size(v, 1), "a positive integer (an array dimension)")
    _require(meta, "causal", lambda v: isinstance(v, bool), "true or false")
    _require(meta, "activation", lambda v: v in ACTIVATIONS, "one of " + "/".join(ACTIVATIONS))
    layers = _require(meta, "layers", lambda v: isinstance(v, list), "a list")
    for i, layer in enumerate(layers):
        if not isinstance(layer, dict):
            _fail(f"meta.layers[{i}] must be an object")
        for field in ("n_head", "d_head", "d_mlp"):
            _require(layer, field, lambda v: _is_size(v, 0), "a non-negative integer (an array dimension)",
                     f"meta.layers[{i}]")
        if layer["n_head"] > 0 and layer["d_head"] == 0:
            _fail(f"meta.layers[{i}] has {layer['n_head']} heads of width 0")
    output = _require(meta, "output", lambda v: isinstance(v, dict), "an object")
    if "name" in output:  # optional: reports fall back to "output"
        _require(output, "name", lambda v: v is None or isinstance(v, str), "a string or null", "meta.output")
    encoding = _require(output, "encoding", lambda v: v in ENCODINGS, "one of " + "/".join(ENCODINGS),
                        "meta.output")
    if encoding == "categorical":
        _require(output, "values", lambda v: isinstance(v, list) and v
                 and all(x is None or _is_token(x) for x in v),
                 "a non-empty list of values or nulls", "meta.output")
    if "residual" in meta and not (isinstance(meta["residual"], list)
                                   and all(isinstance(label, str) for label in meta["residual"])):
        _fail("meta.residual must be a list of strings")
    if "source" in meta and not isinstance(meta["source"], str):
        _fail("meta.source must be a string")
    if "margins" in meta:  # optional: files written before it have none
        _check_margins(meta["margins"])


def _check_margins(margins: Any) -> None:
    """meta.margins: a list of {readout, kind, bound, tolerance} objects, `reads` and `proof` optional (docs/format.md)."""
    if not isinstance(margins, list):
        _fail("meta.margins must be a list")
    for i, margin in enumerate(margins):
        where = f"meta.margins[{i}]"
        if not isinstance(margin, dict):
            _fail(f"{where} must be an object")
        for field in ("readout", "kind") + tuple(f for f in ("reads", "proof") if f in margin):
            _require(margin, field, lambda v: isinstance(v, str), "a string", where)
        _require(margin, "bound", lambda v: _is_number(v) and v >= 0, "a finite number >= 0", where)
        _require(margin, "tolerance", lambda v: _is_number(v) and v > 0, "a finite number > 0", where)


def _is_number(value: object) -> bool:
    """A finite JSON number (not a bool; an int beyond float range is not)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _check_text(meta: dict[str, Any]) -> None:
    """Every string of meta must be text UTF-8 can write: JSON's escapes can spell a lone surrogate
    (`"\\udcff"`), which no report, page or terminal can show (writing the HTML report failed)."""
    try:
        json.dumps(meta, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as error:
        _fail(f"meta holds {error.object[error.start:error.end]!r}, a lone surrogate, which is no text")
    except (ValueError, RecursionError, TypeError):  # what the other checks report, each in its words
        pass


def _shape_hint(key: str) -> str:
    if key.startswith("blocks."):
        return f" (from meta.layers[{key.split('.')[1]}])"
    return SHAPE_HINTS.get(key, "")


def _check_arrays(model: Model) -> None:
    params = model.params
    for key, array in params.items():
        if not isinstance(array, np.ndarray):
            _fail(f"array {key!r} is a {type(array).__name__}, not a numpy array")
        if array.dtype == object:
            _fail(f"array {key!r} holds Python objects")
        if array.dtype not in FLOAT_DTYPES:
            _fail(f"array {key!r} has dtype {array.dtype}; expected float32 or float64")
    if "wte" not in params:
        _fail("missing array 'wte'")
    if params["wte"].ndim != 2 or params["wte"].shape[1] == 0:
        _fail(f"array 'wte' has shape {list(params['wte'].shape)}; expected [n_vocab, d_model >= 1]")
    dtypes = {array.dtype for array in params.values()}
    if len(dtypes) > 1:
        _fail("arrays mix " + " and ".join(sorted(map(str, dtypes))) + "; use one float dtype")
    shapes = expected_shapes(model)
    for key in params:
        if key not in shapes:
            _fail(f"unknown array {key!r} (not in docs/format.md, or disagrees with meta.layers)")
    for key, shape in shapes.items():
        if key not in params:
            _fail(f"missing array {key!r} (meta.layers / meta.output call for it)")
        if params[key].shape != shape:
            _fail(f"array {key!r} has shape {list(params[key].shape)}; expected {list(shape)}"
                  + _shape_hint(key))
    residual = model.meta.get("residual")
    if residual is not None and len(residual) != model.d_model:
        _fail(f"meta.residual labels {len(residual)} dimensions; d_model is {model.d_model}")
