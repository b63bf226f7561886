"""Progress on stderr for work that takes a while: a spinner naming the work (`status`), or a
progress bar (`progress_bar`), shown only when stderr is a terminal and only once the work has run
for SHOWN_AFTER seconds, then erased. Never in `--json` (the callers pass `enabled=False`), never in
a pipe or a file: what a script reads stays exactly the report.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from collections.abc import Iterator

from ..safe_text import markup_safe

SHOWN_AFTER = 1.0
"""Seconds of work before anything is shown: shorter work would only flicker."""


def on_terminal(enabled: bool) -> bool:
    """Whether to show progress: asked for, and stderr is a terminal."""
    return enabled and sys.stderr is not None and sys.stderr.isatty()


@contextmanager
def shown_after(live, delay: float | None = None) -> Iterator[None]:
    """Start rich's `live` display (a Status or a Progress) once the block has run `delay` seconds
    (default SHOWN_AFTER), and stop it when the block ends, whichever thread gets there first."""
    lock, finished = threading.Lock(), [False]

    def start() -> None:
        with lock:
            if not finished[0]:
                live.start()

    timer = threading.Timer(SHOWN_AFTER if delay is None else delay, start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            finished[0] = True
            live.stop()  # a display never started stops as nothing


@contextmanager
def status(message: str, enabled: bool, delay: float | None = None) -> Iterator[None]:
    """A spinner with `message` (terminal-safe) on stderr while the block runs, if on_terminal."""
    if not on_terminal(enabled):
        yield
        return
    from rich.console import Console

    with shown_after(Console(stderr=True, emoji=False).status(markup_safe(message)), delay):
        yield


def progress_bar(enabled: bool):
    """A rich Progress on stderr, erased when done; disabled unless on_terminal(enabled). Run the
    work inside `shown_after(bar)` and advance its tasks."""
    from rich.console import Console
    from rich.progress import Progress

    return Progress(console=Console(stderr=True, emoji=False), transient=True, disable=not on_terminal(enabled))
