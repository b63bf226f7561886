"""The pieces every HTML view shares: the page around a body (with a Content-Security-Policy that
lets nothing be fetched and no script run), tables, a numbered source listing, values as text.
Every string from a program or a file goes through `html.escape` here."""

from __future__ import annotations

import html

from ..element_fn import unpacked
from .decode import AMBIGUOUS

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; margin-bottom: 0.3em; }
pre.source { background: #f6f6f6; padding: 0.6em; overflow-x: auto; }
table.rc { border-collapse: collapse; font-family: monospace; font-size: 12px; margin: 0.4em 0 1em; }
table.rc td, table.rc th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; white-space: nowrap; }
table.wrap td { white-space: normal; max-width: 45em; } table.rc th { background: #f0f0f0; }
tr.written td { font-weight: bold; background: #eef5ff; }
figure { margin: 0.5em 1.5em 1.2em 0; max-width: 100%; overflow-x: auto; }
.scroll { max-width: 100%; overflow-x: auto; } p.input, h1 { overflow-wrap: anywhere; } figcaption { font-size: 12px; color: #555; max-width: 40em; }
figure .title { font-family: monospace; font-size: 12px; font-weight: bold; max-width: 40em; margin-bottom: 4px; }
.figures { display: flex; flex-wrap: wrap; align-items: flex-start; }
.note { color: #555; font-size: 0.9em; }
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'"  # nothing may be fetched, no script may run


def esc(value) -> str:
    return html.escape(str(value))


def page(title: str, body: str) -> str:
    """A whole HTML document around `body`."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")


def table(header: list, rows: list[list], written: list[bool] | None = None, wrap: bool = False) -> str:
    """An HTML table; rows marked in `written` are highlighted; with `wrap`, long cells wrap; a
    table wider than the page scrolls within its own box."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(f'<tr{" class=written" if written and written[i] else ""}>'
                   + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for i, row in enumerate(rows))
    return f'<div class="scroll"><table class="rc{" wrap" if wrap else ""}"><tr>{head}</tr>{body}</table></div>'


def value_text(value) -> str:
    """A decoded value as a report shows it: none for None, numbers as they mean."""
    if value is None:
        return "none"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, tuple):  # a pack of an n-ary sequence_map, shown by its items (ir.unpacked)
        return "(" + ", ".join(map(value_text, unpacked(value))) + ")"
    return "(ambiguous)" if value == AMBIGUOUS else str(value)


def source_html(source: str) -> str:
    lines = source.rstrip("\n").split("\n") if source else []
    numbered = "\n".join(f"{i + 1:>3}  {line}" for i, line in enumerate(lines))
    return f'<pre class="source">{esc(numbered)}</pre>' if lines else '<p class="note">(no source recorded)</p>'
