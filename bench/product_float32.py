"""How exactly float32 MLPs compute x * n, a running mean x of +1 / -1 times its count n.

    python bench/product_float32.py [--max-len 1024]

In a causal program `balance * length` (programs/paren_depth.rasp) is a running sum: at length n
the mean x is s / n for a whole number s in -n..n, and x * n = s. Two MLP constructions of it from
the residual, with O(max_len) or O(log max_len) hidden units instead of one unit per length:

  relu pairs   n a residual coordinate, for m = 1..L: relu(x + n - m) - relu(-x + n - m) is 2x for
               m < n, x for m = n, 0 for m > n; so x * n = (x + sum of the pairs) / 2 (2L units)
  bits         n's binary digits bit_b as residual coordinates (the position embedding can hold
               them in a causal program): x * bit = relu(x + 2 bit - 1) - bit for |x| <= 1, so
               x * n = sum_b 2^b (relu(x + 2 bit_b - 1) - bit_b) (two units per digit)

Each is built as a float32 MLP (hidden = relu(residual @ w_in), out = hidden @ w_out) and run on
every (s / n, n), n = 1..max_len; printed: the largest |out - s|. A reader rounding to the nearest
whole number needs it below 1/2 (an exact step MLP, below 1/4 of the gap).
"""

from __future__ import annotations

import argparse

import numpy as np


def running_sums(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(s, s / n in float32) for every sum s of n steps of +1 / -1."""
    sums = np.arange(-n, n + 1, 2)
    return sums, (sums / n).astype(np.float32)


def relu_pairs_error(max_len: int) -> float:
    """Largest error of the relu-pairs construction; residual [x, n, 1], units +, -, +, - ..."""
    steps = np.arange(1, max_len + 1, dtype=np.float32)
    w_in = np.zeros((3, 2 * max_len), np.float32)  # [residual, unit]
    w_in[0, 0::2], w_in[1, 0::2], w_in[2, 0::2] = 1, 1, -steps  # relu(x + n - m)
    w_in[0, 1::2], w_in[1, 1::2], w_in[2, 1::2] = -1, 1, -steps  # relu(-x + n - m)
    w_out = np.tile(np.array([0.5, -0.5], np.float32), max_len)  # [unit]
    worst = 0.0
    for n in range(1, max_len + 1):
        sums, x = running_sums(n)
        residual = np.stack([x, np.full_like(x, n), np.ones_like(x)], axis=1)  # [point, 3]
        out = np.maximum(residual @ w_in, 0) @ w_out + np.float32(0.5) * x  # [point]
        worst = max(worst, float(np.max(np.abs(out.astype(np.float64) - sums))))
    return worst


def bits_error(max_len: int) -> float:
    """Largest error of the binary-digits construction; residual [x, bit_0 .. bit_B-1, 1]."""
    digits = max_len.bit_length()
    w_in = np.zeros((digits + 2, 2 * digits), np.float32)  # [residual, unit]
    w_out = np.zeros(2 * digits, np.float32)  # [unit]
    for b in range(digits):
        w_in[0, b], w_in[1 + b, b], w_in[-1, b] = 1, 2, -1  # relu(x + 2 bit - 1)
        w_in[1 + b, digits + b] = 1  # relu(bit) = bit
        w_out[b], w_out[digits + b] = 2.0**b, -(2.0**b)
    worst = 0.0
    for n in range(1, max_len + 1):
        sums, x = running_sums(n)
        bits = np.array([(n >> b) & 1 for b in range(digits)], np.float32)
        residual = np.concatenate([x[:, None], np.tile(bits, (len(x), 1)), np.ones((len(x), 1), np.float32)], axis=1)
        out = np.maximum(residual @ w_in, 0) @ w_out  # [point]
        worst = max(worst, float(np.max(np.abs(out.astype(np.float64) - sums))))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-len", type=int, default=1024)
    max_len = parser.parse_args().max_len
    print(f"relu pairs ({2 * max_len} units): largest |x * n - s| = {relu_pairs_error(max_len):.3g}")
    print(f"bits ({2 * max_len.bit_length()} units): largest |x * n - s| = {bits_error(max_len):.3g}")


if __name__ == "__main__":
    main()
