"""The state of many tables played in lockstep, and the view a bot gets of its turn.

Tables are independent; the simulator advances all of them one hand, one street, one
seat at a time, so every decision is made for a whole batch of tables at once.
Boards are ``(tables, seats, 13)`` card codes (slots: top 0-2, middle 3-7, bottom
8-12; :data:`~ofcstats.simulate.tables.EMPTY` for a free slot) with the additive row
keys of :mod:`ofcstats.simulate.tables` beside them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import numpy as np
import numpy.typing as npt

from ofcstats.simulate.scoring import RulesetArrays
from ofcstats.simulate.tables import DISCARD, EMPTY, ROW_START, card_keys
from ofcstats.variants import Variant

CARD_KEYS = card_keys()


@dataclass
class Boards:
    """Boards of ``(tables, seats)`` and the keys and counts that go with them."""

    cards: npt.NDArray[np.uint8]  # (T, S, 13)
    keys: npt.NDArray[np.int64]  # (T, S, 3)
    filled: npt.NDArray[np.int8]  # (T, S, 3)

    @classmethod
    def empty(cls, tables: int, seats: int) -> Boards:
        """Boards with no card placed."""
        return cls(np.full((tables, seats, 13), EMPTY, dtype=np.uint8),
                   np.zeros((tables, seats, 3), dtype=np.int64),
                   np.zeros((tables, seats, 3), dtype=np.int8))

    def place(self, tables: npt.NDArray[np.intp], seat: int | npt.NDArray[np.intp],
              cards: npt.NDArray[np.uint8], actions: npt.NDArray[np.int8]) -> None:
        """Put ``cards[i, j]`` in row ``actions[i, j]`` (3: discard) on each listed board
        (each board listed once)."""
        board = tables * self.cards.shape[1] + np.broadcast_to(seat, tables.shape)
        row = actions.astype(np.intp)
        keep = row != DISCARD
        # A card's slot: its row's first, past the cards already there and those of
        # this street placed before it.
        start = _ROW_START[row] + self.filled.reshape(-1)[board[:, None] * 3 + np.minimum(row, 2)]
        slot = board[:, None] * 13 + start + _earlier_in_row(row)
        self.cards.reshape(-1)[slot[keep]] = cards[keep]
        # Each row's new cards and their keys, added up by board and row in one pass.
        at = (board[:, None] * 3 + row)[keep]
        size = self.filled.size
        self.filled.reshape(-1)[:] += np.bincount(at, minlength=size).astype(np.int8)
        self.keys.reshape(-1)[:] += np.bincount(
            at, weights=CARD_KEYS[cards[keep]].astype(np.float64), minlength=size
        ).astype(np.int64)  # sums of keys below 2**53: exact in float64


_ROW_START = np.array([*ROW_START, 0])  # a discard's "row" starts nowhere


def _earlier_in_row(rows: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
    """For each card, how many cards before it in its row of ``rows`` go to the same row."""
    k = rows.shape[1]
    if k <= _SHAPE_CARDS:
        return _earlier_by_shape(k)[rows @ (4 ** np.arange(k))]
    out = np.zeros(rows.shape, dtype=np.intp)
    for j in range(1, k):
        out[:, j] = (rows[:, :j] == rows[:, j:j + 1]).sum(axis=1)
    return out


_SHAPE_CARDS = 8  # streets of up to 8 cards look their shape up (4**8 shapes)


@cache
def _earlier_by_shape(k: int) -> npt.NDArray[np.intp]:
    """:func:`_earlier_in_row` of every street of ``k`` cards, by its rows in base 4."""
    rows = (np.arange(4 ** k)[:, None] // 4 ** np.arange(k)) % 4
    return np.tril(rows[:, :, None] == rows[:, None, :], -1).sum(axis=2)


@dataclass
class Turn:
    """One seat's decision on a batch of tables: what the bot may look at.

    ``seen`` marks every card the seat knows of: its own (dealt, placed, discarded) and
    the cards its opponents have placed face up so far. Opponents in fantasyland set
    face down, so their cards are not in it.
    """

    variant: Variant
    arrays: RulesetArrays
    seat: int
    street: int  # 0-based street of the variant
    cards: npt.NDArray[np.uint8]  # (m, k) dealt now
    discards: int  # how many of them to throw away
    board: npt.NDArray[np.uint8]  # (m, 13)
    keys: npt.NDArray[np.int64]  # (m, 3)
    filled: npt.NDArray[np.int8]  # (m, 3)
    future: npt.NDArray[np.int64]  # (m,) cards still to come to this seat after this street
    seen: npt.NDArray[np.bool_]  # (m, 52)
    opponents: npt.NDArray[np.uint8]  # (m, S-1, 13) opponents' boards as far as visible
    opponent_filled: npt.NDArray[np.int8]  # (m, S-1, 3)
    opponent_keys: npt.NDArray[np.int64]  # (m, S-1, 3)
    opponent_hidden: npt.NDArray[np.bool_]  # (m, S-1) opponent sets face down (fantasyland)
    opponent_future: npt.NDArray[np.int64]  # (m, S-1) cards still to come to each opponent
    # Set on a part of a larger turn (several seats' tables at once): that turn, and the
    # first and last rows (past the end) of the part.
    within: tuple[Turn, int, int] | None = None

    def part(self, start: int, stop: int, seat: int) -> Turn:
        """Rows ``start`` to ``stop`` of this turn as one seat's turn (views, not copies)."""
        rows = slice(start, stop)
        return replace(self, seat=seat, within=(self, start, stop),
                       **{name: getattr(self, name)[rows] for name in TURN_ARRAYS})

    @property
    def size(self) -> int:
        """Tables in the batch."""
        return int(self.cards.shape[0])


TURN_ARRAYS = ("cards", "board", "keys", "filled", "future", "seen", "opponents",
               "opponent_filled", "opponent_keys", "opponent_hidden", "opponent_future")
