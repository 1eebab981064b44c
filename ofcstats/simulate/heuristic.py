"""A hand-made value of a board in the making, in rough points, with style weights.

For each row it projects the final hand from what is made and the draws still open
(pairs to improve, flush and straight draws, their odds from the cards still unseen),
then weighs expected royalties, the chance to reach fantasyland and the risk of a foul.
The three heuristic bots differ only in the weights of :class:`Style`.

The work splits in two so that a street's candidates cost little: :func:`row_features`
looks at each distinct row once (a street of ``k`` cards makes at most ``2**k``
different versions of a row), :func:`combine` weighs whole boards from those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ofcstats.evaluate import Category
from ofcstats.simulate.scoring import RulesetArrays
from ofcstats.simulate.tables import (
    SUIT_BITS,
    SUIT_MASK,
    at_least_table,
    category_index,
    row_tables,
)


@dataclass(frozen=True)
class Style:
    """Weights of the board value: how much a style cares for what."""

    name: str
    foul_cost: float  # points a foul is taken to cost
    fantasyland_value: float  # points reaching fantasyland is taken to be worth
    royalty_weight: float  # weight of expected royalties
    strength_weight: float  # weight of projected row strength (winning rows)
    chase: float  # how much an unpaired card of entry rank on top counts towards fantasyland
    margin: float = 0.0  # extra made-index margin demanded between rows (caution)


SAFE = Style("safe", foul_cost=30.0, fantasyland_value=3.0, royalty_weight=0.5,
             strength_weight=0.8, chase=0.0, margin=4.0)
BALANCED = Style("balanced", foul_cost=12.0, fantasyland_value=12.0, royalty_weight=1.0,
                 strength_weight=0.6, chase=1.0, margin=1.0)
AGGRESSIVE = Style("aggressive", foul_cost=7.0, fantasyland_value=22.0, royalty_weight=1.4,
                   strength_weight=0.4, chase=1.0, margin=0.0)
STYLES = {s.name: s for s in (SAFE, BALANCED, AGGRESSIVE)}

Ints = npt.NDArray[np.integer[Any]]
_FLUSH_INDEX = Category.FLUSH * 13
_STRAIGHT_INDEX = Category.STRAIGHT * 13
_SIZES_FIRST = np.array([3, 5, 5])[:, None, None]


@dataclass
class Context:
    """What the value needs beyond the rows, per table (shape ``(m, 1)``, suits ``(m, 1, 4)``)."""

    future: npt.NDArray[np.int64]  # cards still to be dealt to the seat after this street
    unseen: npt.NDArray[np.int64]  # cards the seat has not seen
    live_suits: npt.NDArray[np.int64]  # unseen cards of each suit
    forced: bool = False  # every card to come must be placed (no discards left)


Rows = npt.NDArray[np.float32] | tuple[npt.NDArray[np.float32], ...]


@dataclass
class RowFeatures:
    """Per-row summaries for boards, row first: ``(3, m, n)`` (row, table, version of
    the row), or three ``(m, n)`` arrays."""

    made: Rows  # made index so far (exact category index when full)
    catch: Rows  # chance to improve past a row one category up (0 if full)
    catch_far: Rows  # the same past a row two or more categories up
    royalty: Rows  # expected royalty: made, plus draws by their odds
    strength: Rows  # style-weighted projected strength
    fantasyland: Rows  # top row only: chance it qualifies (style-weighted)
    exact: Rows  # exact strength of a full row, -1 for a row in the making
    rise: Rows  # chance the row pairs up from the cards it will have to take


FIELDS = tuple(RowFeatures.__annotations__)


def row_features(keys: npt.NDArray[np.int64], future_total: npt.NDArray[np.int64],
                 ctx: Context, arrays: RulesetArrays, style: Style) -> RowFeatures:
    """Summaries of each row of ``(3, m, n)`` keys (rows first, so that every array
    operation runs along long rows of memory); ``future_total`` is ``(m, 1)`` open slots
    of the whole board, to share the cards to come among its rows."""
    t = row_tables()
    ids = t.id_of_key[keys >> SUIT_BITS].astype(np.intp)
    suit_word = keys & SUIT_MASK
    n = t.size[ids].astype(np.intp)
    open_slots = _SIZES_FIRST - n
    # Future cards this row may expect: its share of what is still to come (rounded up).
    per_slot = (ctx.future / np.maximum(future_total, 1)).astype(np.float32)
    share = np.minimum(np.ceil(open_slots * per_slot - 1e-4), 16).astype(np.intp)
    made = t.made_index[ids].astype(np.float32)

    flush = np.zeros(keys.shape, dtype=np.float32)
    suited = t.suited[suit_word[1:]] & (n[1:] >= 2) & (open_slots[1:] > 0)
    if suited.any():
        suit = np.maximum(t.suit_of[suit_word[1:]], 0)
        m = keys.shape[1]
        live = np.take(ctx.live_suits.reshape(-1), np.arange(m)[:, None] * 4 + suit)
        flush[1:] = np.where(suited, _odds(open_slots[1:], np.minimum(live, 13), share[1:],
                                           ctx.unseen), 0.0)
    straight = np.zeros(keys.shape, dtype=np.float32)
    draws = t.straight_ok[ids[1:]] & (n[1:] >= 3) & (open_slots[1:] > 0)
    if draws.any():
        need = open_slots[1:]
        straight[1:] = np.where(draws, 0.6 * _odds(need, np.minimum(4 * need, 13), share[1:],
                                                   ctx.unseen), 0.0)
    outs = np.minimum(3 * t.singles[ids] + 2 * t.pair_ranks[ids], 13)
    improve = np.where(open_slots > 0, _odds(1, outs, share, ctx.unseen), 0.0)
    improve = np.where(n == 0, np.minimum(share, 5) * 0.12, improve).astype(np.float32)

    full = open_slots == 0
    exact_strength = np.full(keys.shape, -1.0, dtype=np.float32)
    made_index = np.maximum(made, 0).astype(np.intp)
    royalty = np.stack([arrays.royalty_made[r][made_index[r]] for r in range(3)])
    if full.any():
        strength = _full_strength(ids, suit_word, n)
        made = np.where(full, category_index(strength), made).astype(np.float32)
        exact_strength = np.where(full, strength, -1).astype(np.float32)
        exact = np.stack([arrays.royalty[r][strength[r]] for r in range(3)])
        royalty = np.where(full, exact, royalty)
    roy_flush = arrays.royalty_made[:, _FLUSH_INDEX + 12][:, None, None]
    roy_straight = arrays.royalty_made[:, _STRAIGHT_INDEX + 12][:, None, None]
    royalty = royalty + flush * roy_flush + straight * roy_straight

    projected = np.where(
        full, made,
        made + 9.0 * improve + flush * np.maximum(_FLUSH_INDEX - made, 0)
        + straight * np.maximum(_STRAIGHT_INDEX - made, 0))
    miss = (1.0 - flush) * (1.0 - straight)
    catch = np.where(full, 0.0, 1.0 - (1.0 - improve) * miss)
    catch_far = np.where(full, 0.0, 1.0 - (1.0 - 0.25 * improve) * miss)

    fantasyland = np.zeros(keys.shape, dtype=np.float32)
    if arrays.has_fantasyland:
        top = made[0]
        entry_rank = arrays.entry_index % 13
        can_pair = (t.high_single[ids[0]] >= entry_rank) & (open_slots[0] > 0) & (top < 13)
        chance = _odds(1, 3, np.minimum(ctx.future, 16), ctx.unseen)
        fantasyland[0] = np.maximum((top >= arrays.entry_index).astype(np.float32),
                                    np.where(can_pair, style.chase * 0.5 * chance, 0.0))
    weight = np.array([0.5, 1.0, 1.0], dtype=np.float32)[:, None, None] \
        * (style.strength_weight / 13.0)
    return RowFeatures(made=made, catch=catch.astype(np.float32),
                       catch_far=catch_far.astype(np.float32),
                       royalty=royalty.astype(np.float32),
                       strength=(projected * weight).astype(np.float32),
                       fantasyland=fantasyland, exact=exact_strength,
                       rise=improve if ctx.forced else np.zeros_like(improve))


def combine(f: RowFeatures, style: Style, forced: bool = False) -> npt.NDArray[np.float32]:
    """Value of boards from their rows' summaries (each field indexed by row first: an
    array ``(3, ...)`` or three arrays)."""
    made = f.made
    keep = np.ones(np.shape(made[0]), dtype=np.float32)
    for low, high in ((0, 1), (1, 2)):
        # Foul risk: a lower row already made stronger than the upper row may become.
        # A complete upper row is known: no margin, only the lower row's made hand counts
        # (and both complete: the exact order).
        high_full = f.exact[high] >= 0
        gap = made[low] + np.where(high_full, 0.0, style.margin) - made[high]
        miss = 1.0 - np.where(gap > 13, f.catch_far[high], f.catch[high])
        p = np.where(gap > 0, miss, np.where(gap == 0, 0.35 * miss, 0.0))
        both = high_full & (f.exact[low] >= 0)
        if both.any():
            p = np.where(both, f.exact[low] > f.exact[high], p)
        if forced:
            # With no discards left the lower row must take its share of what comes; a
            # pair there overtakes an upper row that is not a category ahead.
            overtaken = made[high] < made[low] + 13
            p = p + (1.0 - p) * f.rise[low] * np.where(overtaken, miss, 0.0)
        keep *= 1.0 - p
    risk = 1.0 - keep
    gain = style.royalty_weight * (f.royalty[0] + f.royalty[1] + f.royalty[2]) \
        + style.fantasyland_value * f.fantasyland[0]
    strength = f.strength[0] + f.strength[1] + f.strength[2]
    return (gain * keep - style.foul_cost * risk + strength).astype(np.float32)


def _odds(need: Ints | int, wanted: Ints | int, drawn: Ints | int,
          unseen: Ints | int) -> npt.NDArray[np.float32]:
    """``at_least_table()[need, wanted, drawn, unseen]`` through one flat gather."""
    flat = ((np.asarray(need, dtype=np.intp) * 14 + wanted) * 17 + drawn) * 53 + unseen
    return np.asarray(np.take(at_least_table().ravel(), flat), dtype=np.float32)


def _full_strength(ids: npt.NDArray[np.intp], suit_word: npt.NDArray[np.int64],
                   n: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
    """Exact strength of rows that are full (meaningless for the others)."""
    t = row_tables()
    flush = t.suited[suit_word] & (n == 5)
    five = np.where(flush, t.full5_flush[ids], t.full5[ids])
    return np.where(n == 3, t.full3[ids], five).astype(np.intp)
