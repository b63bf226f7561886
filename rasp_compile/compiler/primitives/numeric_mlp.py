"""numeric_mlp: any function of one numerical input, exact on every value it can take.

(Linear functions need no MLP at all: see passes/fold_linear.py.) Sort the
input's values p_0 < p_1 < ... < p_m. For each neighbouring pair put a threshold t halfway and a
ramp of half-width d = (p_i - p_(i-1)) / 2:

    G_i(x) = relu((x - t)/d + 1/2) - relu((x - t)/d - 1/2)

G_i is 0 for x <= t - d/2 and 1 for x >= t + d/2: exactly 0 at p_(i-1) and below, exactly 1
at p_i and above, and flat for a quarter gap around every value, so inputs that carry attention
leak or float32 rounding land on the right step. Then

    f(x) = enc(f(p_0)) + sum_i (enc(f(p_i)) - enc(f(p_(i-1)))) G_i(x)

telescopes to enc(f(p_j)) at x = p_j. Two hidden units per step where the output changes, none
where it does not. The slope 1/d is the price of a small gap: 2/gap (8,000 for the means of a
64-position selector). tracr's numerical MLP uses a fixed hidden size and discretisation
instead, and is exact only where its grid happens to fall.

float32. Where both units are active their pre-activations are large (slope times the distance
to t) and G is their difference, rounded: an error of about |pre-activation| * 2^-24. Where
both are 0, G is exactly 0. So each step is written the way that is exact on the longer side of
its threshold: as above when most values lie below t, else as the mirror image

    G_i(x) = 1 - relu(-(x - t)/d + 1/2) + relu(-(x - t)/d - 1/2)

(exactly 1 above t + d/2, where both units are 0). The steps with the steepest slopes sit where
values are dense, near one end of the range, so their error side is short: reading 1/(w + 1)
(BOS's share of a width head, as it once was) at max_len 64 each step is then good to about 1e-5
instead of 1e-3.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..layout import Layout
from ..ops import NumericMLP
from ..tolerances import KINK_THRESHOLD, POLYLINE_ROUNDING, STEP_OUTPUT_ROUNDING, STEP_ROUNDING
from .pieces import MLP


def step_mlp(op: NumericMLP, layout: Layout) -> MLP:
    points = op.input.values
    answers = op.answers
    vectors = {a: layout.vector(op.out.encode(a)) for a in dict.fromkeys(answers)}  # often few, for many points
    encoded = [vectors[a] for a in answers]
    x_dim = layout.dims(op.input)[0]
    columns_in, biases, rows_out = [], [], []
    constant = encoded[0].copy()
    for i in range(1, len(points)):
        if encoded[i] is encoded[i - 1]:
            continue  # the same answer
        change = encoded[i] - encoded[i - 1]
        if not change.any():
            continue
        half_width = (points[i] - points[i - 1]) / 2
        threshold = (points[i] + points[i - 1]) / 2
        # +1: G = relu(u + 1/2) - relu(u - 1/2), exact below; -1: G = 1 - relu(-u + 1/2) +
        # relu(-u - 1/2), exact above; u = (x - t)/d. Exact on the longer side (docstring).
        side = 1.0 if exact_below(points, threshold) else -1.0
        if side < 0:
            constant += change
        for offset, sign in ((0.5, 1.0), (-0.5, -1.0)):
            columns_in.append(side / half_width)
            biases.append(-side * threshold / half_width + offset)
            rows_out.append(side * sign * change)
    w_in = np.zeros((layout.d_model, len(biases)))
    w_in[x_dim, :] = columns_in
    w_out = np.array(rows_out).reshape(len(biases), layout.d_model)
    return MLP(w_in=w_in, b_in=np.array(biases), w_out=w_out, b_out=constant)


def exact_below(points: tuple[float, ...], threshold: Any) -> Any:
    """step_mlp's side for a step at `threshold` (a number or an array of them): exact below it
    when more of the values' range lies below, else mirrored, exact above."""
    return threshold - points[0] > points[-1] - threshold


def step_error(points: tuple[float, ...]) -> float:
    """A bound on the float32 error of one step of `step_mlp` over these sorted input values:
    the larger pre-activation on a step's inexact side, slope * distance, times STEP_ROUNDING (4u)."""
    worst = 0.0
    for low, high in zip(points, points[1:]):
        threshold, slope = (low + high) / 2, 2 / (high - low)
        worst = max(worst, 1 + slope * min(threshold - points[0], points[-1] - threshold))
    return worst * STEP_ROUNDING


def step_output_error(points: tuple[float, ...], answers: list[float]) -> float:
    """A bound on the float32 error of `step_mlp` writing a number: `answers[i]` at `points[i]`.

    Every step on its inexact side (numeric_mlp docstring) has two units of about |x - t|/d each,
    whose difference is 1: the output sums them, weighted by the step's change, and the hidden
    layer rounds x/d - t/d. Over hundreds of steps (the fraction of a 64-position mean) this
    reaches 1e-4, which a numerical answer shows; summed here at every input value."""
    return float(np.max(step_output_errors(points, answers), initial=0.0))


def step_output_errors(points: tuple[float, ...], answers: list[float], input_errors: Any = None,
                       dtype: Any = None) -> np.ndarray:
    """step_output_error at each input value: [len(points)]. With `input_errors` (how far the input
    may be off, at each value or one for all) and the model's `dtype`, a step whose two units are
    exact partners there (exact_partners) is not charged the hidden layer's roundings (its units
    differ by exactly 1), but still its output's: the two units' magnitudes, 2 |x - t|/d, which
    c_proj adds with every other unit's in whatever order its matmul takes (a sum that adds each
    pair's units in turn would cancel them exactly; BLAS kernels need not, and a model that
    counted on it answered wrong at max_len 2,048), plus 2 for the output's bias and the
    residual's addition, plus 2 |x - t|/d when its change is no power of 2 (the two products
    then round)."""
    x = np.asarray(points, dtype=float)
    change, threshold, half_width, inexact, distance = _steps(points, answers)
    size = 2 * distance + 2 + (np.abs(x)[:, None] + np.abs(threshold)[None, :]) / half_width
    if input_errors is not None:
        exact = exact_partners(points, threshold, half_width, input_errors, dtype)
        products = np.where(np.frexp(change.astype(dtype))[0] == 0.5, 0.0, 2 * distance)
        size = np.where(exact, np.minimum(size, 2 * distance + 2 + products), size)
    return np.sum(np.where(inexact, change * size, 0.0), axis=1) * STEP_OUTPUT_ROUNDING


def _steps(points: tuple[float, ...], answers: list[float]) -> tuple[np.ndarray, ...]:
    """The steps of `step_mlp` writing answers[i] at points[i] (one where the answer changes):
    |change|, threshold t and half-width d [step]; whether each input value lies on the step's
    inexact side (both units firing) and its distance |x - t| / d [input value, step]."""
    x = np.asarray(points, dtype=float)
    changes = np.array([a != b for a, b in zip(answers, answers[1:])], dtype=bool)
    low, high = x[:-1][changes], x[1:][changes]
    change = np.abs(np.subtract(answers[1:], answers[:-1], dtype=float))[changes]
    threshold, half_width = (low + high) / 2, (high - low) / 2
    inexact = (x[:, None] > threshold[None, :]) == exact_below(points, threshold)[None, :]
    distance = np.abs(x[:, None] - threshold[None, :]) / half_width
    return change, threshold, half_width, inexact, distance


def summed_step_errors(points: tuple[float, ...], answers: list[float], dtype: Any = np.float32) -> np.ndarray:
    """A bound on the error of `step_mlp` writing a number (answers[i] at points[i]), however the
    matmul orders its sums, at each input value: [len(points)].

    On a step's inexact side its units are A = fl(p + b1) and B = fl(p + b2), p = fl(x w) the one
    product both read: p's rounding moves A and B alike (the ramp, not the flat step), the two
    sums round by u (|A| + |B|) <= u (2 |x - t|/d + 1), and the stored biases differ from 1 by
    |fl(b1) - fl(b2) - 1| (nothing, for most steps). c_proj adds change A and -change B into the
    output with every other step's units; in whatever order, that is charged u per unit of the
    terms' magnitudes, as STEP_OUTPUT_ROUNDING charges every size term: u |change| (|A| + |B|);
    2 u |change| more for the output's bias and the residual's addition: u |change| (4 |x - t|/d + 4)
    in all.
    With the units shuffled, a width's Gray bit at max_len 64 rounds by 2.3e-5, which this bound
    puts at 1.7e-4 (tests/test_gray_matches.py)."""
    u = float(np.finfo(dtype).eps) / 2
    change, threshold, half_width, inexact, distance = _steps(points, answers)
    side = np.where(exact_below(points, threshold), 1.0, -1.0)
    b1, b2 = ((-side * threshold / half_width + offset).astype(dtype).astype(float) for offset in (0.5, -0.5))
    size = u * (4 * distance + 4) + np.abs(b1 - b2 - 1.0)[None, :]
    return np.sum(np.where(inexact, change * size, 0.0), axis=1)


def exact_partners(points: tuple[float, ...], threshold: np.ndarray, half_width: np.ndarray, input_errors: Any,
                   dtype: Any) -> np.ndarray:
    """[input value, step]: whether the step's two units, both firing there, differ by exactly 1.

    Both units read the same product p = fl(x w) (one weight w = side/d, the other inputs' weights
    0), a float of `dtype`, and add their biases b1 = b2 + 1 (checked in `dtype` itself), each sum
    rounded once: fl(p + b_i). Their difference is exactly 1 when either
      - both sums are exact: p lies in one binade [2^E, 2^(E+1)) (in magnitude), so it is a multiple
        of its spacing 2^(E - m) (m = finfo.nmant), b_i is one too, and |p + b_i| < 2^(E+1), where
        the spacing is no coarser; or
      - both sums p + b_i lie in one binade [2^e, 2^(e+1)) with e < m: its spacing divides 1 an even
        number of times, so rounding to nearest even commutes with adding 1 there.
    Checked over every x within `input_errors` of each value, and p's own rounding."""
    x = np.asarray(points, dtype=float)[:, None]
    errors = np.broadcast_to(np.asarray(input_errors, dtype=float), (len(points),))[:, None]
    side = np.where(exact_below(points, threshold), 1.0, -1.0)
    w = (side / half_width).astype(dtype).astype(float)
    biases = [(-side * threshold / half_width + offset).astype(dtype).astype(float) for offset in (0.5, -0.5)]
    ends = np.stack([(x - errors) * w, (x + errors) * w])
    spare = 2 * float(np.finfo(dtype).eps) * np.abs(ends).max(axis=0)  # p's rounding (u), and this sum's
    p_low, p_high = ends.min(axis=0) - spare, ends.max(axis=0) + spare
    binade = np.frexp(np.minimum(np.abs(p_low), np.abs(p_high)))[1]  # |p| in [2^(E-1), 2^E): exact, as log2 is not
    one_binade = (np.sign(p_low) == np.sign(p_high)) & (binade == np.frexp(np.maximum(np.abs(p_low), np.abs(p_high)))[1])
    spacing = np.ldexp(1.0, binade - 1 - np.finfo(dtype).nmant)
    sums_exact = one_binade
    for b in biases:
        largest = np.maximum(np.abs(p_low + b), np.abs(p_high + b))
        sums_exact = sums_exact & (np.fmod(b, spacing) == 0) & (largest < np.ldexp(1.0, binade))
    lowest, highest = p_low + biases[1], p_high + biases[0]
    sum_binade = np.frexp(lowest)[1]
    translated = (lowest > 0) & (sum_binade == np.frexp(highest)[1]) & (sum_binade - 1 < np.finfo(dtype).nmant)
    return (sums_exact | translated) & (biases[0] - biases[1] == 1.0)


def interpolation_mlp(op: NumericMLP, layout: Layout) -> MLP:
    """The same function as `step_mlp` at every input value, with one hidden unit per value
    instead of two per step, but not flat between values: the line through neighbouring values.

    For sorted values p_0 < ... < p_m with encodings e_i and slopes s_i = (e_i - e_(i-1)) /
    (p_i - p_(i-1)) (s_0 = s_(m+1) = 0), the interpolating polyline is

        rising:   f(x) = e_0 + sum_i (s_(i+1) - s_i) relu(x - p_i)     exact where few units fire: low x
        falling:  f(x) = e_m + sum_i (s_(i+1) - s_i) relu(p_i - x)     exact at high x

    A kink that does not change the slope needs no unit. An input off its value by d moves the
    output by (slope) * d, so this is used only where the readers tolerate it (interpolated_steps.py
    picks the orientation with the smaller float32 error and bounds both)."""
    points, encoded, x_dim = _samples(op, layout)
    both = {rising: _kinks(points, encoded, rising) for rising in (True, False)}
    rising = _rounding(points, both[True], True) <= _rounding(points, both[False], False)
    at, weights = both[rising]
    w_in = np.zeros((layout.d_model, len(at)))
    w_in[x_dim, :] = 1.0 if rising else -1.0
    b_in = -at if rising else at
    w_out = weights.reshape(len(at), layout.d_model)
    return MLP(w_in=w_in, b_in=b_in, w_out=w_out, b_out=encoded[0] if rising else encoded[-1])


def interpolation_error(points: tuple[float, ...], encoded: list[np.ndarray], rising: bool) -> float:
    """A bound on the float32 error of `interpolation_mlp` at any of its input values, per output
    coordinate: every firing unit's value relu(±(x - p)) carries a rounding of about
    (|x| + |p|) u, multiplied by its output weight; POLYLINE_ROUNDING (4u) for margin."""
    return _rounding(points, _kinks(points, encoded, rising), rising)


def interpolation_errors(points: tuple[float, ...], encoded: list[np.ndarray]) -> np.ndarray:
    """interpolation_error at each input value, for the orientation interpolation_mlp builds:
    [len(points), output coordinates]."""
    both = {rising: _kinks(points, encoded, rising) for rising in (True, False)}
    rising = _rounding(points, both[True], True) <= _rounding(points, both[False], False)
    return _roundings(points, both[rising], rising)


def _rounding(points: tuple[float, ...], kinks: tuple[np.ndarray, np.ndarray], rising: bool) -> float:
    """interpolation_error for kinks already computed."""
    return float(np.max(_roundings(points, kinks, rising), initial=0.0))


def _roundings(points: tuple[float, ...], kinks: tuple[np.ndarray, np.ndarray], rising: bool) -> np.ndarray:
    """_rounding at each input value and output coordinate."""
    at, weights = kinks
    if not len(at):
        return np.zeros((len(points), 1))
    x = np.asarray(points, dtype=float)[:, None]
    firing = (x > at[None, :]) if rising else (x < at[None, :])  # [input value, kink]
    return (np.where(firing, np.abs(x) + np.abs(at[None, :]), 0.0) @ np.abs(weights)) * POLYLINE_ROUNDING


def _samples(op: NumericMLP, layout: Layout) -> tuple[tuple[float, ...], list[np.ndarray], int]:
    """The input values, the residual vector each must produce, and the input's dimension."""
    points = op.input.values
    return points, [layout.vector(op.out.encode(a)) for a in op.answers], layout.dims(op.input)[0]


def _kinks(points: tuple[float, ...], encoded: list[np.ndarray], rising: bool) -> tuple[np.ndarray, np.ndarray]:
    """Every unit of the polyline, for one orientation: its p_i [unit] and its output weight
    [unit, output coordinate]."""
    values = np.asarray(encoded)  # [input value, output coordinate]
    flat = np.zeros_like(values[:1])
    slopes = np.concatenate([flat, np.diff(values, axis=0) / np.diff(np.asarray(points, dtype=float))[:, None], flat])
    # The unit at p_i turns the slope s_i into s_(i+1) (rising: units at p_0..p_(m-1)), or,
    # walking down from p_m, s_(i+1) into s_i (falling: units at p_1..p_m); its weight is the same.
    changes = np.diff(slopes, axis=0)  # [input value, output coordinate]: s_(i+1) - s_i at p_i
    at = np.asarray(points, dtype=float)
    at, changes = (at[:-1], changes[:-1]) if rising else (at[1:], changes[1:])
    kept = np.max(np.abs(changes), axis=1, initial=0.0) > KINK_THRESHOLD * np.max(np.abs(slopes), initial=0.0)
    return at[kept], changes[kept]
