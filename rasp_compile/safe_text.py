"""Text from outside (a program's source, vocab tokens, names, labels, a weights file's meta) made safe
to print on a terminal: the one place that decides what a terminal may be shown.

A string in a program or a file can hold ESC sequences that set the window title, move the cursor or
clear the screen, BEL, line separators or bidirectional overrides that reorder what a line appears to
say. Every such character is written as Python writes it in a string literal (`\\x1b`, `\\n`,
`\\u202e`), so the text stays one line, every character stays visible and nothing acts on the terminal.
"""

from __future__ import annotations


def terminal_safe(text: str) -> str:
    """`text` with each character a terminal would not print as it is (controls, separators, format
    characters such as bidirectional overrides) written as its escape: `\\x1b`, `\\n`, `\\u202e`."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
