"""tolerances: every margin and tolerance the compiler builds to, each with its derivation.

How sharp each softmax must be follows from the gaps between the values it must separate. Every
head we build gives the keys it means to read a score at least `gap` above every other key's.
With at most n + 1 keys (BOS included), the weight left on the others is at most
(n + 1) * exp(-gap). Each primitive states the largest leak its output tolerates, and the
sharpness is the smallest that keeps the leak below it:

    gap >= ln((n + 1) / tolerated_leak)

Scores stay far below float32's exp overflow (~88) for any max_len this compiler accepts,
and the softmax subtracts the row maximum (the picoGPT form of docs/format.md), so only the gap
matters. The float tolerances below are in units of u, the unit roundoff (precision.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..float_arrays import distinct_sorted, floats

# -- attention: how much a softmax may leak --------------------------------------------------

CATEGORICAL_LEAK = 1e-6
"""A categorical aggregate's one-hot may deviate this much from 0/1: downstream tables treat
anything within 0.5 of a one-hot as that one-hot, so this keeps a 5e5-fold margin."""

BOS_ISOLATION = 1e-15
"""The weight the BOS query may leave on other keys: its residual must be the same for every
input (assemble.py compensates for it by value), so the leak is held below float64 noise."""

MAX_AMPLIFICATION = 1e6
"""How far a head divides its tolerated leak for readers that magnify it (passes/amplification.py).
Beyond this spread float32 itself cannot hold the numbers to 1e-6 of their size, and the
sharpness it would take (S = 2 ln((n + 1) 1e6 / 1e-6), 64 at max_len 64) is as high as a score
should go for a forward pass that exponentiates raw scores to stay finite (exp(88.7))."""

# -- decoding numbers: how far a number may stray from its value ----------------------------

STEP_WINDOW = 1 / 8
"""A numerical value read by a step MLP must land within this fraction of the gap between its
neighbouring values (the steps are flat within 1/4 of a gap: half of that for safety; precision.py
gives the other half to float rounding)."""

INTERPOLATED_SCORE_ERROR = 1 / 16
"""What an interpolated decode (numeric_mlp.interpolation_mlp) may move a categorical
aggregate's scores by, in units of S: its selected keys lead the rest by S and BOS by S/2, so
1/16 of S leaves the selection and the default untouched with an 8-fold margin."""

POSITION_MATCH_ERROR = 1 / 16
"""What float32 may move a position-matched score by (passes/position_selects.py), in units of
S: 1/8 of the S/2 margin by which the selected index leads every other key and BOS."""

SCORE_ROUNDING_ERROR = 1 / 4
"""What float32's rounding of a position-matched score's own products and sums may take, in units
of S, charged as u times the score's magnitude (passes/digit_matches.score_magnitude: the sum over
head dimensions of the largest |query| times the largest |key|, 4 (max_len - 1)^2 for an
uncentred match). Those terms reach n^2 while their sum is 1 (or at most 0), so past max_len
1,024 their rounding alone outweighs the S/2 margin: measured 0.53 to 0.63 times the charge on
shift_by at 1,024 and 2,048 (tests/test_digit_matches.py). Half the S/2 margin: within it, every
position match the compiler built before digit matches existed (max_len 1,024) stays."""

SURE_MATCH_ERROR = 1.0
"""What the float32 rounding of a sure match's polyline (passes/position_selects.number_match) may
shift a query's scores by, in units of S: the match leads BOS by 2S (BOS scores -S), so half of
that. The shift is the same for every key of the query, so only BOS is met; past it (2.75 charged,
2.0 measured on reverse at max_len 2,048) the query reads BOS."""

SURE_ROUNDING_ERROR = 1 / 2
"""The float32 error a sure digit match's scores may take from key to key, in units of S
(passes/digit_matches.digit_number_match): BOS is no competitor there, so the match's margin is
the S by which it leads its neighbours, of which the leak needs S/2 (categorical_attn.py)."""

NUMBER_MATCH_ERROR = 1 / 8
"""How far a number-matched target may stray from its value (passes/position_selects.number_match), in
units of the index: the match then scores at least 7/8 S and its neighbours at most S/8."""

# -- float rounding: how many roundings a computation may meet -------------------------------

ROUNDINGS = 16
"""How many roundings of u times the carried magnitude a value may meet between decodes
(precision.py): a mean's weighted sum, its c_proj, the residual's additions, a fold's sum, with
room to spare."""

MEAN_ROUNDINGS_PER_KEY = 1 / 8
"""A mean over n + 1 keys (BOS included) meets (n + 1) / 8 roundings more of u times its largest
value (error_bounds.py): its weighted sum rounds once per key, and those errors partly cancel.
A float32 mean of 1,025 ones measured 45 u (tests/test_error_bounds.py), against 128 u charged;
a fixed count (ROUNDINGS alone) was broken by that measurement. A strictly sequential sum of
adversarial values could reach (n + 1) / 2: this count is a measured model, not a proof."""

NEAREST_VALUE_ROUNDINGS = 16
"""Roundings of A = max (c - c0)^2 / g^2 the difference of two nearest-value logits meets
(passes/number_readout.py): each logit's weight stored, multiplied, its bias stored and added,
8 u A, twice; kept while 16 u A stays below NEAREST_VALUE_ROUNDING_SHARE of the margin of 1."""

FOLD_TOLERANCE = 1e-6
"""The float32 error, relative to its largest value, a number may take folded onto the steps of
a categorical view (passes/fold_linear.py): a tenth of what a numerical answer is checked to."""

LINEAR_TOLERANCE = 1e-9
"""The relative error to which a map must agree with its linear form (lowering/linear.py) or its
affine pieces (passes/gated_maps.py) to be built as one: far below float32's u (6e-8), so a
fold is as exact as the values' own rounding, far above float64's (1e-16) so a line computed in
float64 is recognised."""

FLOAT32_U = 2.0**-24
"""float32's unit roundoff u: every float32 sum or product is exact to u of its result."""

STEP_ROUNDING = 4 * FLOAT32_U
"""The error of one exact step (primitives/numeric_mlp.step_error) per unit of its larger
pre-activation: the two units' pre-activations are rounded once each (u) and their difference once
more (u); 4u keeps a factor 4/3 to spare."""

STEP_OUTPUT_ROUNDING = FLOAT32_U
"""numeric_mlp.step_output_error counts every rounding of a step writing a number in its size
term (2 |x - t|/d + 2 + (|x| + |t|)/d: both units, their difference, the hidden layer's x/d - t/d),
so it multiplies that sum by u itself."""

POLYLINE_ROUNDING = 4 * FLOAT32_U
"""The error of an interpolating unit relu(±(x - p)) (numeric_mlp.interpolation_error) per unit of
|x| + |p|: about u for the subtraction; 4u leaves room for the output weight's product and sum."""

KINK_THRESHOLD = 1e-12
"""A change of slope below this share of a polyline's steepest slope is float64 noise from the
slopes' divisions, not a kink: it gets no hidden unit, and leaving it out moves the output by far
less than float32's u."""

# -- the read-out ---------------------------------------------------------------------------

OUTPUT_TOLERANCE = 1e-5
"""How close a numerical answer must be to the program's value, relative or absolute (1e-5
max(1, |v|)): what `rasp-run --accuracy` compares numbers with (docs/cli.md), and what
precision.py proves every numerical answer stays within."""

NONE_LOGIT = 0.5
"""The constant logit of a categorical answer's none column (ops.plain_readout): a value column
reads 1 (its one-hot) or at most CATEGORICAL_LEAK, so none wins by 1/2 exactly when no value does,
and loses by 1/2 otherwise."""

NEAREST_VALUE_ROUNDING_SHARE = 1 / 4
"""A nearest-value read-out wins by at least 1; float rounding of its logits may take this share
of that margin (passes/number_readout.py), the rest is left to the number's own error."""


READOUT_MARGIN = 0.5
"""By how much a linear read-out's right logit must lead every other (passes/linear_readout.py):
inputs within CATEGORICAL_LEAK of their one-hots move the logits by far less than 1/2."""


def bos_self_score(max_len: int) -> float:
    """The score BOS gets at the BOS query, every other key scoring 0 there."""
    return needed_gap(max_len + 1, BOS_ISOLATION)


def needed_gap(n_keys: int, tolerated_leak: float) -> float:
    """The score gap that leaves at most `tolerated_leak` of the weight off the intended keys."""
    return math.log(n_keys / tolerated_leak)


def smallest_gap(values: Iterable[Any]) -> float:
    """The smallest distance between two of the (numeric) values; 1 when there is one value."""
    ordered = distinct_sorted(values)
    with np.errstate(over="ignore"):  # inf, as Python's own subtraction of two huge floats gives
        return float(np.diff(ordered).min()) if len(ordered) > 1 else 1.0


def spread(values: Iterable[Any]) -> float:
    """The largest distance between two of the (numeric) values; 1 when they are all equal."""
    ordered = floats(values)
    with np.errstate(over="ignore"):  # inf, as Python's own subtraction of two huge floats gives
        return float(ordered.max() - ordered.min()) or 1.0
