"""What the forward pass reads of a model, as a Protocol: `runtime/model.py`'s `Model` has it.

The forward pass (forward.py, forward_plan.py, execute.py, prediction.py) is typed against this, not against the `Model`
class, so the model's own tracr-style `apply` (tracr_apply.py), which runs the forward pass, can
be a method of `Model` without an import circle.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class ModelLike(Protocol):
    """meta: the JSON header of docs/format.md; params: every array by its flat key."""

    @property
    def meta(self) -> dict[str, Any]: ...

    @property
    def params(self) -> dict[str, np.ndarray]: ...

    @property
    def d_model(self) -> int: ...

    @property
    def n_ctx(self) -> int: ...

    @property
    def n_out(self) -> int: ...

    @property
    def dtype(self) -> np.dtype[Any]: ...

    def blocks(self) -> list[dict[str, Any]]:
        """Per block, its arrays nested as picoGPT's params: attn.c_attn.w, mlp.c_fc.b, ..."""
        ...

    def nested(self) -> dict[str, Any]:
        """All arrays as picoGPT's nested params (wte, wpe, blocks, unembed[, unembed_b])."""
        ...
