"""`rasp-run WEIGHTS --score TEXT --skip K`: next-token accuracy along TEXT.

For each position i >= 1 the model predicts token i from the tokens before it, fed as `complete`
feeds a decoder: at most the last max_len of them, the prediction being the output at the last
position. The first K predictions are not counted (a decoder's first outputs may lack context).
"""

from __future__ import annotations

from ..runtime.prediction import predict
from ..runtime.model import Model
from .common import CliError
from .tokens import join_tokens, same_value


def measure(model: Model, tokens: list, skip: int) -> dict:
    """Counted predictions, how many were right, and every prediction (None before the first)."""
    if len(tokens) < 2:
        raise CliError("error: --score needs a TEXT of at least two tokens")
    if not 0 <= skip < len(tokens) - 1:
        raise CliError(f"error: --skip must lie in 0..{len(tokens) - 2} for a TEXT of {len(tokens)} tokens")
    predicted = [outputs[-1] for outputs in predict(model, windows(model, tokens))]
    right = [same_value(token, guess) for token, guess in zip(tokens[1:], predicted)][skip:]
    return {"correct": sum(right), "counted": len(right), "skipped": skip,
            "percent": 100.0 * sum(right) / len(right),
            "text": join_tokens(model, tokens), "predictions": predicted}


def windows(model: Model, tokens: list) -> list[list]:
    """What the model reads to predict each token after the first: at most the last max_len before it."""
    max_len = model.meta["max_len"]
    return [tokens[max(0, i - max_len):i] for i in range(1, len(tokens))]


def render(report: dict, console) -> None:
    print(f"{report['correct']}/{report['counted']} ({report['percent']:.1f}%)")
