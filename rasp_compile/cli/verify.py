"""`rasp-run --accuracy --all [--workers N | --dask ADDRESS]`: every input of every length up to
max_len compared, however many, chunk by chunk (tools/all_inputs.py), in this process, in N local
processes or on a Dask cluster (executors.py, dask_run.py), with the same tally in every case.

The flags: `--all` applies only with `--accuracy` and excludes `--samples` and `--seed` (nothing
is drawn); `--workers` and `--dask` apply only with `--all`, and exclude each other (a cluster's
workers are its own). A misused flag is one line and exit status 2, as every other flag.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..runtime.prediction import input_vocab
from ..tools.all_inputs import MAX_INPUTS, chunks, count_chunks, count_inputs
from .common import CliError, Parser, whole_number
from .comparison import Subject, Tally
from .dask_run import check_address, on_dask
from .executors import in_process, in_processes, payload
from .progress import progress_bar, shown_after

MAX_WORKERS = 256


@dataclass(frozen=True)
class Spread:
    """Where the chunks run: here (workers 1), in `workers` local processes, or on the Dask
    cluster whose scheduler is at `dask`."""

    workers: int = 1
    dask: str | None = None


def add_flags(parser: Parser) -> None:
    """--all, --workers N, --dask ADDRESS (their defaults None: given or not is what counts)."""
    parser.add_argument("--all", action="store_true", default=None,
                        help="with --accuracy: compare every input up to max_len, however many (in chunks)")
    parser.add_argument("--workers", type=whole_number(MAX_WORKERS), metavar="N",
                        help="with --all: spread the chunks over N local processes (default 1)")
    parser.add_argument("--dask", metavar="ADDRESS",
                        help="with --all: run the chunks on the Dask cluster at ADDRESS "
                             "(needs the [distributed] extra)")


def spread_of(args) -> Spread | None:
    """The Spread the flags ask for (None without --all); CliError for a flag where it does nothing."""
    if args.all and not args.accuracy:
        raise CliError("rasp-run: error: --all applies only with --accuracy (see --help)")
    for flag in ("--workers", "--dask"):
        if getattr(args, flag[2:]) is not None and not args.all:
            raise CliError(f"rasp-run: error: {flag} applies only with --accuracy --all (see --help)")
    if not args.all:
        return None
    for flag in ("--samples", "--seed"):
        if getattr(args, flag[2:]) is not None:
            raise CliError(f"rasp-run: error: {flag} does not apply with --all, which compares every input, "
                           "drawing none (see --help)")
    if args.workers is not None and args.dask is not None:
        raise CliError("rasp-run: error: --workers and --dask exclude each other: the cluster's "
                       "workers run the chunks (see --help)")
    if args.dask is not None:
        check_address(args.dask)
    return Spread(args.workers or 1, args.dask)


def compare_every(subject: Subject, name: str, spread: Spread, progress: bool) -> Tally:
    """The tally of every input of lengths 1..max_len; `name` the weights' file (for workers' messages).
    A progress bar counts chunks done (they cost about the same): its time remaining is measured."""
    vocab_size, max_len = len(input_vocab(subject.model)), subject.model.meta["max_len"]
    total = count_inputs(vocab_size, max_len)
    if total > MAX_INPUTS:
        raise CliError(f"error: --all would compare {_count_text(total)} inputs (vocab of {vocab_size} "
                       f"tokens, lengths 1 to {max_len:,}); it compares at most 10**18: "
                       "compare a sample (--accuracy without --all) or compile at a smaller --max-len")
    tally, done = Tally(), 0
    bar = progress_bar(progress)
    with shown_after(bar):
        task = bar.add_task("comparing every input", total=count_chunks(vocab_size, max_len))
        for chunk, part in _runs(subject, name, spread):
            tally.merge(part)
            done += chunk.count
            bar.update(task, advance=1, description=f"compared {done:,} of {total:,} inputs")
    return tally


def _runs(subject: Subject, name: str, spread: Spread):
    every = chunks(len(input_vocab(subject.model)), subject.model.meta["max_len"])
    if spread.dask is not None:
        return on_dask(payload(subject.model, name), every, spread.dask)
    if spread.workers > 1:
        return in_processes(payload(subject.model, name), every, spread.workers)
    return in_process(subject, every)


def _count_text(count: int) -> str:
    """A count too large to write out: about 10**k."""
    return f"{count:,}" if count < 10 ** 30 else f"about 10**{len(str(count)) - 1}"
