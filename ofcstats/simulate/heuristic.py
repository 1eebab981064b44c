"""A hand-made value of a board in the making, in rough points, with style weights.

For each row it projects the final hand from what is made and the draws still open
(pairs to improve, flush and straight draws, their odds from the cards still unseen),
then weighs expected royalties, the chance to reach fantasyland and the risk of a foul.
The three heuristic bots differ only in the weights of :class:`Style`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ofcstats.evaluate import Category
from ofcstats.simulate.scoring import RulesetArrays
from ofcstats.simulate.tables import (
    STRIDE,
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
    chase: float  # how much an unpaired queen-plus on top counts towards fantasyland
    margin: float = 0.0  # extra made-index margin demanded between rows (caution)


SAFE = Style("safe", foul_cost=30.0, fantasyland_value=3.0, royalty_weight=0.5,
             strength_weight=0.8, chase=0.0, margin=4.0)
BALANCED = Style("balanced", foul_cost=14.0, fantasyland_value=9.0, royalty_weight=1.0,
                 strength_weight=0.6, chase=0.4, margin=1.0)
AGGRESSIVE = Style("aggressive", foul_cost=7.0, fantasyland_value=22.0, royalty_weight=1.4,
                   strength_weight=0.4, chase=1.0, margin=0.0)
STYLES = {s.name: s for s in (SAFE, BALANCED, AGGRESSIVE)}

_FLUSH_INDEX = Category.FLUSH * 13
_STRAIGHT_INDEX = Category.STRAIGHT * 13


@dataclass
class Context:
    """What the value needs beyond the rows: per board, broadcastable to ``keys[..., 0]``."""

    future: npt.NDArray[np.int64]  # cards still to be dealt to the seat after this street
    unseen: npt.NDArray[np.int64]  # cards the seat has not seen
    live_suits: npt.NDArray[np.int64]  # (..., 4) unseen cards of each suit


def value(keys: npt.NDArray[np.int64], ctx: Context, style: Style,
          arrays: RulesetArrays) -> npt.NDArray[np.float32]:
    """Value of boards given as ``(..., 3)`` combined row keys (see :mod:`tables`)."""
    t = row_tables()
    odds = at_least_table()
    rank_key = keys >> SUIT_BITS
    ids = t.id_of_key[rank_key].astype(np.intp)
    suit_word = keys & SUIT_MASK
    n = rank_key // STRIDE
    open_slots = np.array([3, 5, 5]) - n
    total_open = np.maximum(open_slots.sum(axis=-1, keepdims=True), 1)
    future = np.broadcast_to(ctx.future, keys.shape[:-1])[..., None]
    unseen = np.broadcast_to(ctx.unseen, keys.shape[:-1])[..., None]
    # Future cards this row may expect: its share of what is still to come.
    share = np.minimum((future * open_slots + total_open - 1) // total_open, 16)
    made = t.made_index[ids].astype(np.float32)

    suited = t.suited[suit_word] & (n >= 2) & (open_slots > 0)
    suit = np.maximum(t.suit_of[suit_word], 0)
    live = np.take_along_axis(np.broadcast_to(ctx.live_suits, (*keys.shape[:-1], 4)),
                              suit[..., 1:].reshape(*keys.shape[:-1], 2), axis=-1)
    need = np.clip(open_slots, 0, 5)
    flush = np.zeros(keys.shape, dtype=np.float32)
    flush[..., 1:] = np.where(suited[..., 1:],
                              odds[need[..., 1:], np.minimum(live, 13), share[..., 1:],
                                   unseen], 0.0)
    straight = np.zeros(keys.shape, dtype=np.float32)
    draws = t.straight_ok[ids] & (n >= 3) & (open_slots > 0)
    straight[..., 1:] = np.where(
        draws[..., 1:], 0.6 * odds[need[..., 1:], np.minimum(4 * need[..., 1:], 13),
                                   share[..., 1:], unseen], 0.0)
    # Improving by pairing a card already there (a pair to trips or two pair, and so on).
    outs = np.minimum(3 * t.singles[ids] + 2 * t.pair_ranks[ids], 13)
    improve = np.where(open_slots > 0, odds[1, outs, share, unseen], 0.0)
    improve = np.where(n == 0, np.minimum(share, 5) * 0.12, improve)

    full = open_slots == 0
    full_index = made.copy()
    if full.any():
        full_strength = _full_strength(ids, suit_word, n)
        full_index = np.where(full, category_index(full_strength), made)
    projected = np.where(
        full, full_index,
        made + 9.0 * improve + flush * np.maximum(_FLUSH_INDEX - made, 0)
        + straight * np.maximum(_STRAIGHT_INDEX - made, 0))

    # Royalties: made, plus the draws' royalties weighted by their odds.
    roy_made = np.stack([arrays.royalty_made[r][np.clip(made[..., r], 0, None).astype(np.intp)]
                         for r in range(3)], axis=-1)
    if full.any():
        roy_full = np.stack([arrays.royalty[r][_full_strength(ids[..., r:r + 1],
                                                               suit_word[..., r:r + 1],
                                                               n[..., r:r + 1])[..., 0]]
                             for r in range(3)], axis=-1)
        roy_made = np.where(full, roy_full, roy_made)
    roy_flush = arrays.royalty_made[1:, _FLUSH_INDEX + 12]
    roy_straight = arrays.royalty_made[1:, _STRAIGHT_INDEX + 12]
    expected = roy_made.sum(axis=-1) + (flush[..., 1:] * roy_flush).sum(axis=-1) \
        + (straight[..., 1:] * roy_straight).sum(axis=-1)

    # Foul risk: a lower row made stronger than the upper row may become.
    risk = np.zeros(keys.shape[:-1], dtype=np.float32)
    keep = np.ones(keys.shape[:-1], dtype=np.float32)
    for low, high in ((0, 1), (1, 2)):
        gap = made[..., low] + style.margin - np.where(full[..., high], full_index[..., high],
                                                        made[..., high])
        catch = 1.0 - (1.0 - improve[..., high] * np.where(gap > 13, 0.25, 1.0)) \
            * (1.0 - flush[..., high]) * (1.0 - straight[..., high])
        catch = np.where(full[..., high], 0.0, catch)
        p = np.where(gap > 0, 1.0 - catch, np.where(gap == 0, 0.35 * (1.0 - catch), 0.0))
        if low == 1:
            # A full middle against a partial bottom: exact only when both are full.
            both = full[..., 1] & full[..., 2]
            p = np.where(both, (full_index[..., 1] > full_index[..., 2]), p)
        keep *= 1.0 - p
    risk = 1.0 - keep

    # Fantasyland: a made top at the entry threshold, or an unpaired card that may pair.
    fl = np.zeros(keys.shape[:-1], dtype=np.float32)
    if arrays.has_fantasyland:
        top_made = made[..., 0]
        fl = (top_made >= arrays.entry_index).astype(np.float32)
        entry_rank = arrays.entry_index % 13
        high = t.high_single[ids[..., 0]]
        can_pair = (high >= entry_rank) & (open_slots[..., 0] > 0) & (top_made < 13)
        fl = np.maximum(fl, np.where(can_pair, style.chase * odds[1, 3, share[..., 0],
                                                                  unseen[..., 0]], 0.0))
    safe = 1.0 - risk
    strength = (0.5 * projected[..., 0] + projected[..., 1] + projected[..., 2]) / 13.0
    return (style.royalty_weight * expected * safe + style.fantasyland_value * fl * safe
            - style.foul_cost * risk + style.strength_weight * strength).astype(np.float32)


def _full_strength(ids: npt.NDArray[np.intp], suit_word: npt.NDArray[np.int64],
                   n: npt.NDArray[np.int64]) -> npt.NDArray[np.int32]:
    """Exact strength of rows that are full (garbage for the others)."""
    t = row_tables()
    flush = t.suited[suit_word] & (n == 5)
    five = np.where(flush, t.full5_flush[ids], t.full5[ids])
    return np.where(n == 3, t.full3[ids], five).astype(np.int32)
