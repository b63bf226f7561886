"""Where the chunks of `rasp-run --accuracy --all` run: in this process, in N local processes
(`--workers N`), or on a Dask distributed cluster (`--dask ADDRESS`). Each yields (chunk, Tally)
pairs as chunks finish, in any order; the caller merges them (Tally.merge gives the same result in
any order).

A worker gets the model once, as the bytes of an `.npz` weights file (`Payload`: the model the
command loaded, written again, so a `.rasp` compiled on the fly travels the same way), and loads
it with the weights-file reader (allow_pickle=False), then the program from its meta.source.
Per chunk only the chunk (three numbers) goes out, and its tally comes back. At most IN_FLIGHT
chunks per worker are queued at a time: a run of billions of chunks never lists them all.
"""

from __future__ import annotations

import hashlib
import os
import signal
import tempfile
import threading
from typing import Any
from dataclasses import dataclass
from collections.abc import Iterable, Iterator

from ..errors import WeightsError
from ..runtime.prediction import input_vocab
from ..runtime.model import Model
from ..runtime.weights_file import load, save
from ..safe_text import terminal_safe
from ..tools.all_inputs import Chunk, chunk_inputs
from .common import CliError
from .comparison import Subject, Tally, compare
from .reference import reference_program

IN_FLIGHT = 4
"""Chunks queued per worker (or per thread of a Dask cluster) at a time."""


@dataclass(frozen=True)
class Payload:
    """A model as the bytes of an `.npz` weights file, `name` the file it came from (for messages),
    `digest` the bytes' SHA-256 (a worker that holds this model already keeps it)."""

    name: str
    data: bytes
    digest: str


def payload(model: Model, name: str) -> Payload:
    """`model` written as an `.npz` weights file, read back as bytes."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "model.npz")
        save(model, path)
        with open(path, "rb") as f:
            data = f.read()
    return Payload(name, data, hashlib.sha256(data).hexdigest())


def run_chunk(subject: Subject, chunk: Chunk) -> tuple[Chunk, Tally]:
    """Compare the model with the interpreter on every input of `chunk`."""
    return chunk, compare(subject, chunk_inputs(chunk, len(input_vocab(subject.model))), chunk.start)


_loaded = threading.local()  # a Dask worker runs tasks in threads: each keeps its own memo


def loaded(carried: Payload) -> Subject:
    """The Subject of `carried`, loaded once per process (per thread) and kept."""
    if getattr(_loaded, "digest", None) != carried.digest:
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "model.npz")
            with open(path, "wb") as f:
                f.write(carried.data)
            model = load(path)
        program = reference_program(model, carried.name)
        assert program is not None  # the sender's model has its meta.source (accuracy.py checked)
        _loaded.subject = Subject(model, program)
        _loaded.digest = carried.digest
    return _loaded.subject


def run_carried(carried: Payload, chunk: Chunk) -> tuple[Chunk, Tally]:
    """run_chunk on the Subject of `carried` (a Dask task)."""
    return run_chunk(loaded(carried), chunk)


def _start_worker(carried: Payload) -> None:
    """A local worker's start: Ctrl-C is the parent's to handle; load the model now."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    loaded(carried)


def _run_in_worker(chunk: Chunk) -> tuple[Chunk, Tally]:
    return run_chunk(_loaded.subject, chunk)


def in_process(subject: Subject, chunks: Iterable[Chunk]) -> Iterator[tuple[Chunk, Tally]]:
    """Every chunk, one after the other, here."""
    for chunk in chunks:
        yield run_chunk(subject, chunk)


def in_processes(carried: Payload, chunks: Iterable[Chunk], workers: int) -> Iterator[tuple[Chunk, Tally]]:
    """The chunks spread over `workers` new local processes (spawned: no thread of this one is copied)."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait  # here: a cold start needs neither
    from multiprocessing import get_context

    pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_start_worker,
                               initargs=(carried,))
    try:
        pending: set[Any] = set()
        chunks = iter(chunks)
        while True:
            pending |= {pool.submit(_run_in_worker, chunk) for chunk in take(chunks, IN_FLIGHT * workers - len(pending))}
            if not pending:
                return
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield result_of(future, "a worker process")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def take(items: Iterator, n: int) -> list:
    """The next `n` items (fewer at the end)."""
    return [item for _, item in zip(range(n), items)]


def result_of(future, where: str):
    """The future's result; a worker's failure as one line (a WeightsError or CliError as itself)."""
    try:
        return future.result()
    except (CliError, WeightsError):
        raise
    except Exception as error:  # noqa: BLE001  (whatever broke over there, said in one line)
        raise CliError(f"error: {where} failed: {type(error).__name__}: {terminal_safe(str(error))}") from None
