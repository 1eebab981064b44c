"""What the bots know of a ruleset, as arrays: royalties, fantasyland thresholds, points.

The simulator's own reported points come from :func:`ofcstats.score.score`; this module
is what the bots use to look ahead (thousands of boards per decision), so it works on
plain arrays of card codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from ofcstats import evaluate
from ofcstats.rows import ROWS
from ofcstats.rules import board
from ofcstats.rules.model import Ruleset
from ofcstats.simulate.tables import category_index
from ofcstats.variants import Variant

Ints = npt.NDArray[np.integer[Any]]
Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class RulesetArrays:
    """A ruleset's numbers in the shapes the bots need."""

    royalty: tuple[npt.NDArray[np.int16], npt.NDArray[np.int16], npt.NDArray[np.int16]]
    royalty_made: npt.NDArray[np.float32]  # (3, 9 * 13 + 13): royalty by row and made index
    entry: int | None  # weakest top strength that enters fantasyland
    entry_index: int  # the same as a made index (category * 13 + rank); large if none
    stay: tuple[int | None, int | None, int | None]  # weakest stay strength per row
    row: int
    majority: int
    scoop: int
    table_bonus: int
    foul_points: int
    spade_bonus: bool
    has_fantasyland: bool
    wheel: bool = False  # straights rank in the wheel order (13-card Chinese poker)
    low_middle: bool = False  # the middle plays as a deuce-to-seven low (13-card)

    def five(self, strengths: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """5-card row strengths as this ruleset ranks them (the wheel order of straights
        reorders them; the scorer does the same, :func:`ofcstats.evaluate.wheel_order`)."""
        return evaluate.wheel_order()[strengths] if self.wheel else strengths

    def middle(self, strengths: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """5-card strengths as this ruleset ranks them in the middle: their worth as a
        deuce-to-seven low where the middle plays low (:func:`ofcstats.evaluate.low_order`),
        else as :meth:`five`."""
        return evaluate.low_order()[strengths] if self.low_middle else self.five(strengths)


@cache
def ruleset_arrays(ruleset: Ruleset, variant: Variant) -> RulesetArrays:
    """Arrays for ``ruleset`` played as ``variant`` (cached per pair)."""
    values = ruleset.royalties.values()
    if ruleset.low_middle:  # a low middle earns no royalty (indexed by its low worth)
        values = (values[0], np.zeros(evaluate.low_order().max() + 1, dtype=np.int16),
                  values[2])
    strengths = np.arange(1, evaluate.strength_count() + 1)
    index = category_index(strengths)
    sizes = evaluate.row_size(strengths)
    made = np.zeros((3, 9 * 13 + 13), dtype=np.float32)
    for row in range(3):
        want = 3 if row == 0 else 5
        mask = sizes == want
        np.maximum.at(made[row], index[mask], values[row][strengths[mask]].astype(np.float32))
    limits = ruleset.fantasyland.thresholds()
    has_fl = variant.has_fantasyland and limits["entry"] is not None
    entry = limits["entry"] if has_fl else None
    entry_index = int(category_index(np.array([entry]))[0]) if entry is not None else 10_000
    stay = tuple(limits[f"stay_{r}"] if has_fl else None for r in ROWS)
    h = ruleset.head_to_head
    return RulesetArrays(
        royalty=values, royalty_made=made, entry=entry, entry_index=entry_index,
        stay=stay,  # type: ignore[arg-type]
        row=h.row, majority=h.majority, scoop=h.scoop, table_bonus=h.table_bonus,
        foul_points=ruleset.foul_points, spade_bonus=ruleset.spade_bonus,
        has_fantasyland=has_fl, wheel=ruleset.wheel, low_middle=ruleset.low_middle,
    )


def board_strengths(boards: npt.NDArray[np.uint8]) -> npt.NDArray[np.int32]:
    """``(..., 13)`` complete boards -> ``(..., 3)`` row strengths (top, middle, bottom)."""
    flat = boards.reshape(-1, 13)
    out = np.empty((flat.shape[0], 3), dtype=np.int32)
    out[:, 0] = evaluate.strength3(flat[:, 0:3])
    out[:, 1] = evaluate.strength5(flat[:, 3:8])
    out[:, 2] = evaluate.strength5(flat[:, 8:13])
    return out.reshape(*boards.shape[:-1], 3)


def fouled(strengths: npt.NDArray[np.int32]) -> npt.NDArray[np.bool_]:
    """:func:`ofcstats.rules.board.fouled` for strengths laid out ``(..., 3)``, as
    :func:`board_strengths` gives them."""
    return board.fouled(np.moveaxis(strengths, -1, 0))


def qualifies(arrays: RulesetArrays, strengths: npt.NDArray[np.int32],
              foul: npt.NDArray[np.bool_], in_fantasyland: npt.NDArray[np.bool_] | bool,
              may_stay: npt.NDArray[np.bool_] | bool = True) -> npt.NDArray[np.bool_]:
    """Fantasyland next hand (:func:`ofcstats.rules.board.fantasyland_next`) for
    strengths laid out ``(..., 3)``: entry from a normal hand, stay from a fantasyland one
    where ``may_stay`` (the repeat limit), never after a foul."""
    entering, staying = board.fantasyland_next(
        np.moveaxis(strengths, -1, 0), in_fantasyland, ~foul, arrays.entry, arrays.stay)
    return entering | (staying & may_stay)

