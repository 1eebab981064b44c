"""A compiled reader for JSON Lines of one fixed shape: objects of known keys whose values
are strings, whole numbers, numbers, booleans, lists of two-letter cards, and lists of
objects of the same kind (a hand's seats, a seat's streets).

It reads the lines in the shape every app and the simulator write, several times faster
than a general JSON reader, and gives up on a line at the first thing it is not sure of:
a key seen twice, a key it does not know inside a seat or a street, an escape in a known
string, a number where a string is due, a card that is not two letters, an unusual
number spelling, anything after the object. Those lines go on to the general reader,
which says what is wrong or reads what is unusual; a line read here gives the same
values that reader would give (tests/test_formats_scan.py holds the two to each other).
A hand's keys it does not know are read past (any JSON value) and flagged per line, for
the caller to keep.

The caller describes the shape (:class:`Shape`): for each level its keys and what each
holds. Values come back by key: per hand and per seat a state (missing, null, present)
and two numbers (a string's or a number's byte span, a whole number's value, a
boolean); per card its hand, seat, street, kind, position and code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ofcstats.compiled import buffer, cached, inputs
from ofcstats.formats.scan_codes import (
    CARDS,
    FLAG,
    MAX_KINDS,
    MAX_POS,
    MAX_SEATS,
    MAX_STREETS,
    MISSING,
    NULL,
    NUMBER,
    PRESENT,
    SEATS,
    STREETS,
    TEXT,
    WHOLE,
)

if TYPE_CHECKING:
    from ofcstats.formats.lines import Data

__all__ = ["CARDS", "FLAG", "MAX_KINDS", "MAX_POS", "MAX_SEATS", "MAX_STREETS", "MISSING",
           "NULL", "NUMBER", "PRESENT", "SEATS", "STREETS", "TEXT", "WHOLE", "Level",
           "Scanned", "Shape", "card_columns", "compiled", "gather", "scan"]

_MAX_SEATS_PER_LINE = 8  # room made per line of a batch (seats and cards): a batch that
_MAX_CARDS_PER_LINE = 256  # needs more has its last lines read by the general reader


@dataclass(frozen=True)
class Level:
    """The keys of one level of objects, what each holds, and for card lists their kind."""

    keys: tuple[str, ...]
    holds: tuple[int, ...]
    kinds: tuple[int, ...]

    def __post_init__(self) -> None:
        if max(self.kinds, default=0) >= MAX_KINDS:  # (-1: not a card list)
            raise ValueError(f"card list kinds must be below {MAX_KINDS}: {self.kinds}")

    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The keys as a padded byte table with lengths, what each holds, and kinds."""
        encoded = [key.encode() for key in self.keys]
        names = np.zeros((len(encoded), max(map(len, encoded))), dtype=np.uint8)
        for row, key in enumerate(encoded):
            names[row, :len(key)] = np.frombuffer(key, dtype=np.uint8)
        return (names, np.array([len(key) for key in encoded], dtype=np.int64),
                np.array(self.holds, dtype=np.int64), np.array(self.kinds, dtype=np.int64))


@dataclass(frozen=True)
class Shape:
    """A hand's keys, a seat's keys and a street's keys (every street key a card list)."""

    hand: Level
    seat: Level
    street: Level
    pair: np.ndarray  # card code of a two-byte text read as a little-endian number


@dataclass
class Scanned:
    """What the scan read. ``ok`` per line; for the lines read, rows per hand (in line
    order), per seat and per card (in reading order), each with its line's index."""

    ok: np.ndarray
    extra: np.ndarray  # per line: it has keys the shape does not know (read past)
    hand_state: np.ndarray  # (lines, hand keys): MISSING, NULL or PRESENT
    hand_a: np.ndarray  # a string's or number's first byte, a whole number, a boolean
    hand_b: np.ndarray  # a string's or number's end byte
    seat_line: np.ndarray
    seat_index: np.ndarray  # 1.. within its hand
    seat_state: np.ndarray
    seat_a: np.ndarray
    seat_b: np.ndarray
    seat_streets: np.ndarray  # length of the seat's list of streets
    card_line: np.ndarray
    card_seat: np.ndarray  # 1.. seat_index
    card_street: np.ndarray  # 1.., 0 for a list of the seat itself
    card_kind: np.ndarray
    card_pos: np.ndarray
    card_code: np.ndarray
    card_groups: np.ndarray  # cards of the lines read, by kind and street or not (2k + 1)


def scan(data: Data, starts: np.ndarray, ends: np.ndarray, shape: Shape) -> Scanned:
    """Read the lines ``data[starts[i]:ends[i]]`` (each followed by a newline in
    ``data``)."""
    buf = buffer(data)
    n = len(starts)
    hand, seat, street = shape.hand.tables(), shape.seat.tables(), shape.street.tables()
    from ofcstats.formats._scan_kernel import scan_lines  # noqa: PLC0415 (numba: loaded when first needed)

    out = scan_lines(  # type: ignore[call-arg]  # (numba's stub takes one argument)
        buf, *inputs(np.int64, starts, ends),
        *inputs(None, shape.pair, *hand[:3], *seat, *street[:2], street[3]),
        min(_MAX_SEATS_PER_LINE * n, len(data) // 2 + 1),
        min(_MAX_CARDS_PER_LINE * n, len(data) // 4 + 1))
    (ok, extra, h_state, h_a, h_b, n_seats, s_line, s_index, s_state, s_a, s_b, s_streets,
     n_cards, c_line, c_seat, c_street, c_kind, c_pos, c_code, c_groups) = out
    return Scanned(
        ok=ok, extra=extra, hand_state=h_state, hand_a=h_a, hand_b=h_b,
        seat_line=s_line[:n_seats], seat_index=s_index[:n_seats],
        seat_state=s_state[:n_seats], seat_a=s_a[:n_seats], seat_b=s_b[:n_seats],
        seat_streets=s_streets[:n_seats],
        card_line=c_line[:n_cards], card_seat=c_seat[:n_cards],
        card_street=c_street[:n_cards], card_kind=c_kind[:n_cards],
        card_pos=c_pos[:n_cards], card_code=c_code[:n_cards], card_groups=c_groups,
    )


def compiled() -> bool:
    """Whether numba's cache holds the compiled reader for this source (loading it then
    takes a fraction of a second; compiling it, about half a minute)."""
    from ofcstats.formats import _scan_kernel as kernel  # noqa: PLC0415

    return cached(kernel.scan_lines, kernel.gather_spans, kernel.card_columns)


def card_columns(kept: np.ndarray, hand_of_line: np.ndarray, seen: Scanned, n_kinds: int,
                 *, as_read: bool) -> tuple[np.ndarray, ...]:
    """The cards of the ``kept`` lines, in the order of the cards frame (kind by kind,
    street cards before final-row cards, then as read): hand (by ``hand_of_line``),
    seat index, street, kind, position, code. ``as_read``: the kept lines are those the
    scan read (its counts of each kind's cards hold, saving a pass over the cards)."""
    from ofcstats.formats._scan_kernel import card_columns as ordered  # noqa: PLC0415

    return ordered(  # type: ignore[call-arg]  # (numba's stub takes one argument)
        *inputs(None, kept, hand_of_line, seen.card_line, seen.card_seat, seen.card_street,
                seen.card_kind, seen.card_pos, seen.card_code,
                seen.card_groups if as_read else seen.card_groups[:0]), n_kinds)


def gather(data: Data, first: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The byte spans ``data[first[i]:end[i]]`` one after another: (offsets, bytes)."""
    from ofcstats.formats._scan_kernel import gather_spans  # noqa: PLC0415

    return gather_spans(buffer(data), *inputs(np.int64, first, end))


