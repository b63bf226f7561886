"""`collector_paused`: Python's cyclic garbage collector held off while a program is checked and
compiled.

At max_len 1,024 the value sets of running means hold hundreds of thousands of numbers, and the
passes build tuples and lists over them by the million: every so many allocations the collector
walks every object alive, and each of those walks finds nothing to free (the compiler's data
hold no cycles; reference counting frees them). dyck1, shuffle_dyck and shuffle_dyck2 spent about
a third of their compile time there. The collector is switched back on when the outermost
pause ends, however it ends; a caller who had switched it off finds it off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The block runs with the cyclic collector off, then it is as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
