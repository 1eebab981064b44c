"""Text from logs made safe to show: the one place every output that prints names passes.

A player name or a hand id is whatever a log said. Before it reaches a reader:

- in a terminal table or the HTML report, control characters (C0, DEL, C1: escape
  sequences, BEL, NUL, ...) and the bidirectional overrides and isolates (U+202A-U+202E,
  U+2066-U+2069) are shown escaped, as ``\\x1b`` or ``\\u202e``, so a name cannot colour,
  move or reorder what the terminal or the page shows; a ``|`` in a cell of a markdown
  table is written ``\\|``, so a name cannot add a column;
- in CSV, a text cell that a spreadsheet would read as a formula (it starts with ``=``,
  ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading ``'``, the OWASP rule
  against CSV injection; numbers, and text that is only a number (``-6``), are left as
  they are. CSV written to a terminal has its control and bidi characters (in cells and
  column names) escaped too, as a table's; to a file or a pipe, where a program reads
  it, the text is kept as logged;
- in JSON, the characters above that JSON allows raw (DEL, C1, bidi) are written as
  ``\\u`` escapes: the same string to any JSON reader, harmless on a terminal.

Columns are rewritten with Polars expressions (no Python loop per row); only text
columns (and lists of text) are touched.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import polars as pl

__all__ = ["UNSAFE", "csv_frame", "html_text", "json_text", "table_frame", "visible"]

_BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
#: Every character shown escaped: C0, DEL, C1, and the bidi overrides and isolates.
UNSAFE: tuple[str, ...] = (*(chr(c) for c in range(0x20)), chr(0x7F),
                           *(chr(c) for c in range(0x80, 0xA0)), *_BIDI)


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_VISIBLE = dict(zip(UNSAFE, map(_escaped, UNSAFE), strict=True))
_UNSAFE_RE = re.compile("[" + "".join(map(re.escape, UNSAFE)) + "]")
# Only the characters JSON lets through unescaped: C0 is escaped by every JSON writer.
_JSON_RE = re.compile("[\x7f-\x9f" + "".join(_BIDI) + "]")
_FORMULA = r"^[=+\-@\t\r]"
_NUMBER = r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$"


def visible(text: str) -> str:
    """``text`` with every control and bidi character written as an escape."""
    return _UNSAFE_RE.sub(lambda m: _VISIBLE[m.group()], text)


def html_text(value: object) -> str:
    """``value`` as HTML text: control and bidi characters escaped, then HTML-escaped."""
    return html.escape(visible(str(value)))


def json_text(text: str) -> str:
    """JSON text with DEL, C1 and bidi characters written as ``\\u`` escapes (the
    same JSON values)."""
    return _JSON_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _text_columns(frame: pl.DataFrame, rewrite: Callable[[pl.Expr], pl.Expr]
                  ) -> pl.DataFrame:
    """``frame`` with ``rewrite`` applied to every text column (categoricals read as
    text) and to the items of every list-of-text column."""
    changes = []
    for name, dtype in frame.schema.items():
        if dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum):
            changes.append(rewrite(pl.col(name).cast(pl.String)).alias(name))
        elif isinstance(dtype, pl.List) and dtype.inner == pl.String:
            changes.append(pl.col(name).list.eval(rewrite(pl.element())).alias(name))
    return frame.with_columns(changes) if changes else frame


def _visible(text: pl.Expr) -> pl.Expr:
    return text.str.replace_many(list(_VISIBLE), list(_VISIBLE.values()))


def _visible_names(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its column names (which a query may take from the data, ``PIVOT``)
    shown escaped."""
    return frame.rename(visible)


def table_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` ready for a markdown-style table: control and bidi characters escaped,
    ``|`` written ``\\|``."""
    return _visible_names(_text_columns(
        frame, lambda text: _visible(text).str.replace_all("|", "\\|", literal=True)))


def csv_frame(frame: pl.DataFrame, *, terminal: bool = False) -> pl.DataFrame:
    """``frame`` ready for CSV: a text cell a spreadsheet would run as a formula gets a
    leading ``'`` (text that is only a number is left alone); for a ``terminal``, control
    and bidi characters escaped too, in cells and column names, as in a table.

    >>> csv_frame(pl.DataFrame({"name": ["=1+1", "\\x1b[2Jbob"]}), terminal=True).rows()
    [("'=1+1",), ('\\\\x1b[2Jbob',)]
    """
    def guard(text: pl.Expr) -> pl.Expr:
        formula = text.str.contains(_FORMULA) & ~text.str.contains(_NUMBER)
        guarded = pl.when(formula).then(pl.lit("'") + text).otherwise(text)
        return _visible(guarded) if terminal else guarded
    frame = _text_columns(frame, guard)
    return _visible_names(frame) if terminal else frame
