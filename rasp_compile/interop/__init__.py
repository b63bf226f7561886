"""Compiled models in other tools (docs/interop.md).

`to_transformer_lens(model)` and `tl_tokens(model, inputs)` need the optional extra
(`pip install 'rasp-compile[interop]'`: TransformerLens 2.x, 3.x or 4.x, and torch); without it
they raise `MissingExtraError`, an ImportError whose one line names the extra. Importing this
package needs nothing beyond the core. (`.safetensors` weights files need no extra:
runtime/safetensors_file.)
"""

from ..errors import MissingExtraError
from .labels import Labels
from .transformer_lens import tl_tokens, to_transformer_lens

__all__ = ["Labels", "MissingExtraError", "tl_tokens", "to_transformer_lens"]
