"""Every input of every length up to max_len, numbered, and cut into chunks.

Input number i of length n (0 <= i < V**n, V the vocab size) is i written in base V with n digits,
most significant first, each digit an index into `input_vocab(model)`: the order of
`itertools.product`, length after length. A chunk is a range of these numbers within one length,
so the inputs of a chunk are computed from two integers: no process ever holds the whole list,
and a chunk sent to another process or machine is three numbers.

Chunks are cut to cost about the same: the interpreter's work on an input grows with the square
of its length, so a chunk holds about CHUNK_PAIRS query-key pairs (at most MAX_CHUNK inputs, at
least one). Progress counted in chunks done therefore measures the time remaining.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterator

import numpy as np

MAX_INPUTS = 10**18
"""The most inputs `--accuracy --all` compares: every input number then fits an int64 (at a
million inputs a second, 10**18 of them take 30,000 years: a larger count is a mistake)."""
CHUNK_PAIRS = 1 << 22
"""Query-key pairs (input length squared, summed) per chunk: about a second of work."""
MAX_CHUNK = 1 << 16
"""The most inputs in one chunk (short inputs: 65,536 of length 8 are already a few seconds)."""


@dataclass(frozen=True, order=True)
class Chunk:
    """The inputs of length `length` numbered `start` to `start + count - 1`. Chunks sort in input order."""

    length: int
    start: int
    count: int


def count_inputs(vocab_size: int, max_len: int) -> int:
    """How many inputs there are of lengths 1..max_len (a Python int: any size)."""
    return sum(vocab_size ** n for n in range(1, max_len + 1))


def chunk_size(length: int) -> int:
    """The inputs per chunk at `length` (CHUNK_PAIRS / length**2, between 1 and MAX_CHUNK)."""
    return max(1, min(MAX_CHUNK, CHUNK_PAIRS // length ** 2))


def count_chunks(vocab_size: int, max_len: int) -> int:
    """How many chunks `chunks(vocab_size, max_len)` yields."""
    return sum(-(-vocab_size ** n // chunk_size(n)) for n in range(1, max_len + 1))


def chunks(vocab_size: int, max_len: int) -> Iterator[Chunk]:
    """Every input of lengths 1..max_len, as chunks in input order (lazily: there may be billions)."""
    for n in range(1, max_len + 1):
        total, size = vocab_size ** n, chunk_size(n)
        for start in range(0, total, size):
            yield Chunk(n, start, min(size, total - start))


def chunk_inputs(chunk: Chunk, vocab_size: int) -> np.ndarray:
    """The inputs of `chunk`, [count, length] int64 indices into the vocab, in input order."""
    numbers = np.arange(chunk.start, chunk.start + chunk.count, dtype=np.int64)
    digits = np.empty((chunk.count, chunk.length), dtype=np.int64)
    for column in range(chunk.length - 1, -1, -1):
        numbers, digits[:, column] = np.divmod(numbers, vocab_size)
    return digits
