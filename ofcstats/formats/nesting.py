"""How deep a line of JSON nests, found before any JSON reader sees the line.

Arrow's JSON reader descends into nested values on the stack: a line of ten thousand
``[`` or ``{`` one inside the other overflows it and ends the process (Python's reader
raises instead). A line nested deeper than :data:`MAX_DEPTH` is therefore rejected
before any reader sees it, by two columnar passes over a batch: a line with no more
than :data:`MAX_DEPTH` opening brackets in all cannot nest deeper (every hand of the
formats has well under that many: about 130 at most), so only the lines with more are
measured, counting the brackets outside strings.

>>> import numpy as np
>>> data = b'{"a": [[1]], "b": "[[[["}\\n[]\\n'
>>> depths(data, np.array([0, 26, 29]))
array([3, 1])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ofcstats.formats.lines import Data

MAX_DEPTH = 256
"""The deepest a line of JSON may nest: objects and lists one inside the other, the line's
own object counted (a hand of the native format nests 6 deep, a Chipzen record 8; keys a
source adds have room to spare). Arrow's reader overflows its stack somewhere beyond ten
thousand levels; this keeps far below it (docs/format.md)."""

_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_STEP = np.zeros(256, dtype=np.int8)  # what a byte does to the depth, outside strings
_STEP[[ord("{"), ord("[")]] = 1
_STEP[[ord("}"), ord("]")]] = -1


def too_deep(data: Data, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lines of ``data`` (line ``i`` from ``starts[i]`` to ``starts[i + 1]``) that nest
    deeper than :data:`MAX_DEPTH`: their indices and their depths."""
    view = np.frombuffer(data, dtype=np.uint8)
    opens = view == ord("{")
    opens |= view == ord("[")
    counts = np.diff(np.searchsorted(np.flatnonzero(opens), starts))
    many = np.flatnonzero(counts > MAX_DEPTH)
    if not len(many):  # (the usual case)
        return many, many
    lengths = starts[many + 1] - starts[many]
    picked = b"".join(bytes(data[int(a):int(b)]) for a, b in
                      zip(starts[many], starts[many + 1], strict=True))
    found = depths(picked, np.concatenate([[0], np.cumsum(lengths)]))
    deep = found > MAX_DEPTH
    return many[deep], found[deep]


def depths(data: Data, starts: np.ndarray) -> np.ndarray:
    """How deep each line of ``data`` nests (line ``i`` from ``starts[i]`` to
    ``starts[i + 1]``): the most brackets open at once, those inside strings apart. A
    line that is not JSON gets a number all the same (its brackets counted as they
    come): it cannot be read deeper than that."""
    n = len(starts) - 1
    view = np.frombuffer(data, dtype=np.uint8)
    marks = np.flatnonzero((_STEP[view] != 0) | (view == _QUOTE))
    quote = view[marks] == _QUOTE
    escaped = quote & (view[np.maximum(marks - 1, 0)] == _BACKSLASH) & (marks > 0)
    if escaped.any():  # (rare) a quote after backslashes: escaped when they are odd
        quote[np.flatnonzero(escaped)[_odd_backslashes(view, marks[escaped])]] = False
    line = np.searchsorted(starts, marks, side="right") - 1
    first = np.searchsorted(line, np.arange(n))  # each line's first mark
    # Quotes before each mark in its line: odd, it is inside a string.
    quotes = np.cumsum(quote) - quote
    inside = (quotes - np.concatenate([quotes, [0]])[first][line]) & 1
    step = np.where(quote | (inside == 1), 0, _STEP[view[marks]]).astype(np.int64)
    level = np.cumsum(step)
    level -= np.concatenate([[0], level])[first][line]  # each line from 0
    out = np.zeros(n, dtype=np.int64)
    has = np.flatnonzero(np.bincount(line, minlength=n) > 0)
    if len(has):
        out[has] = np.maximum.reduceat(level, first[has])
    return np.maximum(out, 0)


def _odd_backslashes(view: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each position of ``at``, whether an odd run of backslashes ends just before it."""
    odd = np.zeros(len(at), dtype=bool)
    for k, position in enumerate(at):  # (only quotes right after a backslash)
        run = 0
        while position - run - 1 >= 0 and view[position - run - 1] == _BACKSLASH:
            run += 1
        odd[k] = run % 2 == 1
    return odd
