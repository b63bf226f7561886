"""The reference figures of the small-model goals, as data: tracr (float32, default settings) as
measured when the project set its first goals, on the programs it shares with programs/, the
layer counts of the RASP paper's analysis, and the goals' thresholds. (Goal 5's hand-made model
is measured, from examples/handmade_aab.py, not quoted.)

`scale.py` puts these beside its own measurements and goals.py checks the goals against them.
A layer is one attention and one MLP sub-layer, in both sources.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TracrFigure:
    """tracr on one program at one max_len, as the reference measurement gives it.

    heads: per layer. exactness: how many inputs it gets right (or how it fails).
    compile_seconds: the range of a cold tracr compile, one range for all programs, not a figure
    per program. forward_ms_per_1000: jitted forward on 1,000 sequences at max_len (None where
    none was measured).
    """

    program: str
    vocab: tuple
    max_len: int
    layers: int
    heads: tuple[int, ...]
    d_model: int
    params: int
    exactness: str
    compile_seconds: tuple[float, float] = (2.1, 4.1)
    forward_ms_per_1000: float | None = None


TRACR = [
    TracrFigure("length", (1, 2, 3), 20, 1, (1,), 48, 6_393, "44% of inputs (counts >= 10 off by one)"),
    TracrFigure("reverse", (1, 2, 3), 20, 4, (1, 0, 0, 1), 131, 534_830, "44% of inputs",
                forward_ms_per_1000=291.0),
    TracrFigure("reverse", (1, 2, 3), 40, 4, (1, 0, 0, 1), 251, 3_643_530, "24% of inputs"),
    TracrFigure("hist", (1, 2, 3), 20, 1, (1,), 48, 6_393, "96% of inputs"),
    TracrFigure("sort", (1, 2, 3), 20, 3, (0, 1, 1), 111, 126_834, "77% of inputs"),
    TracrFigure("sort", (1, 2, 3), 40, 3, (0, 1, 1), 211, 473_254, "39% of inputs"),
    TracrFigure("sort_freq", (1, 2, 3), 20, 5, (1, 0, 0, 1, 1), 514, 6_523_894, "61% of inputs",
                forward_ms_per_1000=2_500.0),
    TracrFigure("frac_prevs", ("x", "y"), 40, 2, (0, 1), 47, 18_537, "within 1e-3, not 1e-7"),
    TracrFigure("shuffle_dyck", ("(", ")"), 20, 6, (1, 2, 0, 0, 2, 0), 83, 1_644_623,
                "72% of inputs (rejects even \"()\")"),
    TracrFigure("shuffle_dyck2", ("(", ")", "{", "}"), 20, 8, (1, 4, 0, 0, 0, 1, 1, 0), 100, 5_272_844,
                "73% of inputs"),
]

RASP_PAPER_LAYERS = {
    "reverse": 2, "hist": 1, "double_hist": 2, "sort": 2, "most_freq": 3, "dyck1": 2, "dyck2": 4,
}
"""Layers each program needs by the RASP paper's analysis."""

PARAMS_GOAL = {
    "reverse": 1 / 10, "sort": 1 / 10, "sort_freq": 1 / 10, "shuffle_dyck": 1 / 10, "shuffle_dyck2": 1 / 10,
    "length": 1 / 2, "hist": 1 / 2,
}
"""Goal 3: the largest allowed ratio of our parameters to tracr's at max_len 20."""

COMPARISON_MAX_LEN = 20
"""The max_len of the comparison table and of goals 3 and 4."""

COLD_COMPILE_GOAL_SECONDS = 0.5
"""Goal 4: a cold `rasp-compile` of any program at max_len 20, imports included."""

FORWARD_SPEEDUP_GOAL = 2.0
"""Goal 4: our forward on 1,000 sequences at max_len 20 at least this much faster than tracr's."""

EXACT_MAX_LEN = 64
EXACT_MIN_INPUTS = 2_000
"""Goal 1: every program exact at max_len 64 on at least this many seeded random inputs."""
