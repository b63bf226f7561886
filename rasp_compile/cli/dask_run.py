"""`rasp-run --accuracy --all --dask ADDRESS`: the chunks of every input run as tasks on a Dask
distributed cluster. Dask schedules them; this module only connects, hands the model to the
workers once (`Client.scatter`, broadcast), and keeps a bounded number of chunk tasks submitted.
Needs the `[distributed]` extra (`dask[distributed]`), imported only in these functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..safe_text import terminal_safe
from ..tools.all_inputs import Chunk
from .common import CliError
from .comparison import Tally
from .executors import IN_FLIGHT, Payload, result_of, run_carried, take

DASK_TIMEOUT = 10
"""Seconds to reach the scheduler, and then to wait for a first worker, before giving up."""
DASK_INSTALL = "pip install 'rasp-compile[distributed]'"


def check_address(address: str) -> None:
    """CliError (one line) unless Dask's distributed is installed and `address` reads as a
    scheduler's, [PROTOCOL://]HOST:PORT: said before any work, not after compiling."""
    try:
        import distributed
    except ImportError:
        raise CliError(f"error: --dask needs Dask's distributed scheduler, not installed here: {DASK_INSTALL}") from None
    try:
        port = distributed.comm.parse_host_port(distributed.comm.parse_address(address)[1])[1]
    except ValueError:
        port = 0
    if not 1 <= port <= 65_535:
        raise CliError(f"error: --dask expects a scheduler's address, [tcp://]HOST:PORT as `dask scheduler` "
                       f"prints it, got {terminal_safe(repr(address))}")


def on_dask(carried: Payload, chunks: Iterable[Chunk], address: str) -> Iterator[tuple[Chunk, Tally]]:
    """The chunks run as tasks on the cluster whose scheduler is at `address`, as they finish."""
    from distributed import Client, as_completed

    shown = terminal_safe(address)
    _reach(address, shown)
    with Client(address, timeout=DASK_TIMEOUT, set_as_default=False) as client:
        try:
            client.wait_for_workers(1, timeout=DASK_TIMEOUT)
        except TimeoutError:
            raise CliError(f"error: the Dask scheduler at {shown} has no worker "
                           f"(waited {DASK_TIMEOUT} s for one)") from None
        shared = client.scatter(carried, broadcast=True)
        threads = sum(worker["nthreads"] for worker in client.scheduler_info()["workers"].values())
        chunks = iter(chunks)

        def submit(chunk: Chunk):
            return client.submit(run_carried, shared, chunk, pure=False)

        running = as_completed([submit(chunk) for chunk in take(chunks, IN_FLIGHT * max(1, threads))],
                               loop=client.loop)
        for future in running:
            yield result_of(future, f"the Dask cluster at {shown}")
            for chunk in take(chunks, 1):
                running.add(submit(chunk))


def _reach(address: str, shown: str) -> None:
    """CliError unless a Dask scheduler answers at `address` within DASK_TIMEOUT seconds. Tried on
    a connection of its own: a Client that fails to connect reports it again when collected."""
    import asyncio

    from distributed.comm import connect

    async def probe() -> None:
        comm = await connect(address, timeout=DASK_TIMEOUT)
        await comm.close()

    try:
        asyncio.run(probe())
    except Exception as error:  # noqa: BLE001  (refused, timed out, or something else answered)
        raise CliError(f"error: cannot reach a Dask scheduler at {shown}: "
                       f"{terminal_safe(str(error) or type(error).__name__)}") from None
