"""The three rows of a board (docs/rules.md §1)."""

from __future__ import annotations

from enum import StrEnum


class Row(StrEnum):
    """A row of an OFC or Chinese poker board, weakest first.

    >>> [(row.value, row.size) for row in Row]
    [('top', 3), ('middle', 5), ('bottom', 5)]
    """

    TOP = "top"
    MIDDLE = "middle"
    BOTTOM = "bottom"

    @property
    def size(self) -> int:
        """Cards the row holds when complete."""
        return 3 if self is Row.TOP else 5


ROWS: tuple[Row, Row, Row] = (Row.TOP, Row.MIDDLE, Row.BOTTOM)
"""The rows in board order (top, middle, bottom): the order of strengths, royalties and
result columns everywhere, and the index a row has in arrays laid out rows first."""

ROW_NAMES: tuple[str, str, str] = (Row.TOP.value, Row.MIDDLE.value, Row.BOTTOM.value)
"""The same names as plain strings, for schemas, SQL and file formats."""

TOP, MIDDLE, BOTTOM = range(3)
"""Each row's index in arrays laid out rows first (and in placement codes, where 3 is a
discard)."""
