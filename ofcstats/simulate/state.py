"""The state of many tables played in lockstep, and the view a bot gets of its turn.

Tables are independent; the simulator advances all of them one hand, one street, one
seat at a time, so every decision is made for a whole batch of tables at once.
Boards are ``(tables, seats, 13)`` card codes (slots: top 0-2, middle 3-7, bottom
8-12; :data:`~ofcstats.simulate.tables.EMPTY` for a free slot) with the additive row
keys of :mod:`ofcstats.simulate.tables` beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

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
        """Put ``cards[i, j]`` in row ``actions[i, j]`` (3: discard) on each listed board."""
        seats = np.broadcast_to(seat, tables.shape)
        for j in range(cards.shape[1]):
            row = actions[:, j].astype(np.intp)
            keep = row != DISCARD
            t, s, r, c = tables[keep], seats[keep], row[keep], cards[keep, j]
            slot = np.asarray(ROW_START)[r] + self.filled[t, s, r]
            self.cards[t, s, slot] = c
            self.filled[t, s, r] += 1
            self.keys[t, s, r] += CARD_KEYS[c]


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

    @property
    def size(self) -> int:
        """Tables in the batch."""
        return int(self.cards.shape[0])
