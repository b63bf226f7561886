"""Text from outside (a program's source, vocab tokens, names, labels, a weights file's meta, file
names) made safe to print on a terminal: the one place that decides what a terminal may be shown.

A string in a program or a file can hold ESC sequences that set the window title, move the cursor or
clear the screen, BEL, line separators or bidirectional overrides that reorder what a line appears to
say. Every such character is written as Python writes it in a string literal (`\\x1b`, `\\n`,
`\\u202e`), so the text stays one line, every character stays visible and nothing acts on the terminal.
rich reads `[bold]` in a string as markup: `markup_safe` escapes that too, for text printed by rich.
A quote of outside text in a message is cut to a readable length by `shortened`.
"""

from __future__ import annotations

SHOWN_QUOTE = 100
"""The longest quote of outside text (a lambda, a value) a message shows whole."""

SHOWN_REASON = 400
"""The longest reason a failing function gives (its exception's message) that a message shows whole:
room for a sentence of advice at its end, still well within one line of SHOWN_LINE."""


def terminal_safe(text: str) -> str:
    """`text` with each character a terminal would not print as it is (controls, separators, format
    characters such as bidirectional overrides) written as its escape: `\\x1b`, `\\n`, `\\u202e`."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


SHOWN_LINE = 1_000
"""The longest line of a message printed whole (`terminal_safe_lines`)."""


def terminal_safe_lines(text: str) -> str:
    """`terminal_safe` on each line of `text`, the line breaks kept (a multi-line message), and any
    line longer than SHOWN_LINE `shortened`: whatever an error quotes, it stays readable."""
    return "\n".join(shortened(terminal_safe(line), SHOWN_LINE) for line in text.split("\n"))


def markup_safe(text: str) -> str:
    """`terminal_safe(text)` with rich's markup escaped (`[bold]` shown as written), for text that
    rich prints: table cells, titles, `console.print` strings."""
    from rich.markup import escape  # rich is imported only where tables are printed

    return escape(terminal_safe(text))


def shortened(text: str, limit: int = SHOWN_QUOTE) -> str:
    """`text` whole when at most `limit` characters, else its start and end around
    `... (N characters) ...`: a lambda of 200,000 characters quoted in an error stays one
    readable line that still shows how it begins and ends."""
    if len(text) <= limit:
        return text
    head = (limit * 2) // 3
    tail = limit - head
    return f"{text[:head]} ... ({len(text):,} characters) ... {text[-tail:]}"


def shown(text: str, limit: int = SHOWN_QUOTE) -> str:
    """Outside text as a one-line `repr` may show it: `terminal_safe`, then `shortened` to `limit`
    characters (a name of 100,000 characters keeps a repr short)."""
    return shortened(terminal_safe(text), limit)


def counted(n: int, noun: str) -> str:
    """`1 layer`, `3 layers`, `1,000 tokens`: a count with its noun, in the plural unless n is 1."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
