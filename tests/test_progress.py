"""Progress on stderr: shown on a terminal once work has run a while, never in a pipe, never when
the caller turns it off (`--json`)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import sys, time
from rasp_compile.cli.progress import status, progress_bar, shown_after
with status("compiling \\x1b]0;title\\x07 [bold]x", {enabled}, delay={delay}):
    time.sleep(0.8)
bar = progress_bar({enabled})
with shown_after(bar, delay={delay}):
    task = bar.add_task("comparing", total=4)
    for _ in range(4):
        time.sleep(0.2)
        bar.advance(task)
print("done", file=sys.stderr)
"""


def stderr_on_a_terminal(enabled: bool, delay: float, script: str = SCRIPT) -> str:
    """What the script writes to stderr when stderr is a pseudo-terminal."""
    main, secondary = pty.openpty()
    done = subprocess.run([sys.executable, "-c", script.format(enabled=enabled, delay=delay)],
                          stderr=secondary, stdout=subprocess.DEVNULL, timeout=60, env={**os.environ, "TERM": "xterm"})
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert done.returncode == 0
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_shows_on_a_terminal_after_the_delay_with_the_message_made_safe():
    shown = stderr_on_a_terminal(enabled=True, delay=0.1)
    assert "compiling \\x1b]0;title\\x07 [bold]x" in shown and "comparing" in shown
    assert "\x07" not in shown and shown.rstrip().endswith("done")


@pytest.mark.slow
def test_no_progress_for_short_work_or_when_turned_off():
    assert stderr_on_a_terminal(enabled=True, delay=30).strip() == "done"
    assert stderr_on_a_terminal(enabled=False, delay=0.1).strip() == "done"


@pytest.mark.slow
def test_no_progress_in_a_pipe():
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(enabled=True, delay=0.1)],
                          capture_output=True, text=True, timeout=60)
    assert done.stderr == "done\n"


COMMAND = """
import sys
from rasp_compile.cli import progress, run_cmd
progress.SHOWN_AFTER = {delay}  # at once: the test's work is short
run_cmd.main(["{program}", "--accuracy"] + {extra})
print("done", file=sys.stderr)
"""


@pytest.mark.slow
def test_the_commands_show_progress_on_a_terminal_but_never_with_json():
    program = Path(__file__).resolve().parent.parent / "programs" / "aab.rasp"
    shown = stderr_on_a_terminal(True, 0, COMMAND.replace("{program}", str(program)).replace("{extra}", "[]"))
    assert "compiling" in shown or "comparing" in shown
    quiet = stderr_on_a_terminal(True, 0, COMMAND.replace("{program}", str(program)).replace("{extra}", '["--json"]'))
    assert quiet.strip() == "done"


@pytest.mark.slow
def test_all_shows_the_inputs_compared_and_the_time_remaining_on_a_terminal():
    program = Path(__file__).resolve().parent.parent / "programs" / "aab.rasp"
    script = COMMAND.replace("{program}", str(program)).replace("{extra}", '["--all"]')
    shown = stderr_on_a_terminal(True, 0, script)
    assert "compared 62 of 62 inputs" in shown and "0:00:00" in shown  # rich's time remaining, h:mm:ss
    quiet = stderr_on_a_terminal(True, 0, script.replace('["--all"]', '["--all", "--json"]'))
    assert quiet.strip() == "done"
