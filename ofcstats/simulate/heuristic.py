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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from ofcstats import evaluate
from ofcstats.evaluate import Category
from ofcstats.rows import BOTTOM
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
    margin: float = 0.0  # extra made-index margin demanded between rows in the making


# A margin is not caution: it holds cards back from the upper rows, which then have to
# take whatever comes at the end (in the variants without discards above all), so the
# safe style asks for none; measured, it fouls less so in every variant. Nor does it
# put a value on fantasyland: it takes a pair of queens on top for the royalty alone.
SAFE = Style("safe", foul_cost=30.0, fantasyland_value=0.0, royalty_weight=0.5,
             strength_weight=0.8, chase=0.0, margin=0.0)
BALANCED = Style("balanced", foul_cost=12.0, fantasyland_value=14.0, royalty_weight=1.0,
                 strength_weight=0.6, chase=1.0, margin=1.0)
AGGRESSIVE = Style("aggressive", foul_cost=7.0, fantasyland_value=22.0, royalty_weight=1.4,
                   strength_weight=0.4, chase=1.0, margin=0.0)
STYLES = {s.name: s for s in (SAFE, BALANCED, AGGRESSIVE)}


@dataclass(frozen=True)
class Weights:
    """Styles' weights as float32 columns ``(m, 1)``, a row per table, so that tables of
    several styles are valued in one pass. A float32 weight gives the same numbers as
    the style's own (a Python float meets float32 arrays as float32)."""

    foul_cost: npt.NDArray[np.float32]
    fantasyland_value: npt.NDArray[np.float32]
    royalty_weight: npt.NDArray[np.float32]
    strength: npt.NDArray[np.float32]  # strength_weight / 13
    chase: npt.NDArray[np.float32]  # chase * CHASE_SHARE
    margin: npt.NDArray[np.float32]

    @classmethod
    def of(cls, styles: Sequence[tuple[Style, int]]) -> Weights:
        """Each style for its count of tables, in order."""
        def column(value: Callable[[Style], float]) -> npt.NDArray[np.float32]:
            return np.repeat(np.array([value(st) for st, _ in styles], dtype=np.float32),
                             [n for _, n in styles])[:, None]

        return cls(foul_cost=column(lambda st: st.foul_cost),
                   fantasyland_value=column(lambda st: st.fantasyland_value),
                   royalty_weight=column(lambda st: st.royalty_weight),
                   strength=column(lambda st: st.strength_weight / 13.0),
                   chase=column(lambda st: st.chase * CHASE_SHARE),
                   margin=column(lambda st: st.margin))

    def __getitem__(self, part: slice) -> Weights:
        return Weights(*(getattr(self, name)[part] for name in _WEIGHT_FIELDS))


_WEIGHT_FIELDS = tuple(Weights.__annotations__)

Ints = npt.NDArray[np.integer[Any]]

# The hand-set numbers of the value, named. Changing one changes every bot's play (and
# the simulated logs a seed gives), so each is a choice, tuned by simulation.
STRAIGHT_DRAW_SHARE = 0.6
"""Share of a straight draw's odds that counts: the odds assume four outs for each open
slot, which only an open-ended draw has."""
EMPTY_ROW_IMPROVE = 0.12
"""An empty row's chance to improve, per card it may expect ..."""
EMPTY_ROW_CARDS = 5
"""... counting at most this many cards."""
IMPROVE_STEP = 9.0
"""Made-index steps (of 13 a category) the projected strength gains by a sure
improvement; a chance of one gains its share."""
FAR_IMPROVE_SHARE = 0.25
"""Share of the chance to improve that counts towards passing a row two or more
categories up (one category up counts it whole)."""
TOP_STRENGTH_WEIGHT = 0.5
"""Weight of the top row's projected strength against the middle's and bottom's (1)."""
LEVEL_RISK = 0.35
"""Share of the chance to miss counted as foul risk when two rows are level (ahead:
all of it; behind: none)."""
CHASE_SHARE = 0.5
"""Share of a style's ``chase`` given to each chance of pairing the top at entry rank."""
FUTURE_CARDS_CAP = 16
"""The most cards drawn the odds table covers (:func:`at_least_table`: F <= 16); more
to come are counted as this many."""
_FLUSH_INDEX = Category.FLUSH * 13
_STRAIGHT_INDEX = Category.STRAIGHT * 13
_SIZES_FIRST = np.array([3, 5, 5])[:, None, None]
_OPEN_SLOTS = np.arange(6)
_ROW_STEP = np.arange(3)[:, None, None]


@dataclass
class Context:
    """What the value needs beyond the rows, per table (shape ``(m, 1)``, suits ``(m, 1, 4)``)."""

    future: npt.NDArray[np.int64]  # cards still to be dealt to the seat after this street
    unseen: npt.NDArray[np.int64]  # cards the seat has not seen
    live_suits: npt.NDArray[np.int64]  # unseen cards of each suit
    forced: bool = False  # every card to come must be placed (no discards left)


Rows = npt.NDArray[np.float32] | Sequence[npt.NDArray[np.float32]]


@dataclass
class RowFeatures:
    """Per-row summaries for boards, row first: ``(3, m, n)`` (row, table, version of
    the row), or three ``(m, n)`` arrays."""

    made: Rows  # made index so far (exact category index when full)
    guard: Rows  # made index less the style's margin, unless full: what a row under it
    # may reach before it is counted at risk
    miss: Rows  # chance not to improve past a row one category up (1 if full)
    miss_far: Rows  # the same past a row two or more categories up
    royalty: Rows  # expected royalty: made, plus draws by their odds
    strength: Rows  # style-weighted projected strength
    fantasyland: Rows  # top row only: chance it qualifies (style-weighted)
    exact: Rows  # exact strength of a full row, -1 for a row in the making
    rise: Rows  # chance the row pairs up from the cards it will have to take


FIELDS = tuple(RowFeatures.__annotations__)


def row_features(keys: npt.NDArray[np.int64], future_total: npt.NDArray[np.int64],
                 ctx: Context, arrays: RulesetArrays, style: Style | Weights) -> RowFeatures:
    """Summaries of each row of ``(3, m, n)`` keys (rows first, so that every array
    operation runs along long rows of memory); ``future_total`` is ``(m, 1)`` open slots
    of the whole board, to share the cards to come among its rows.

    Keys ``(2, m, n)`` stand for a bottom row the same as the middle (both empty, as on
    a first street): the middle's summaries serve the bottom too, but for its royalty.
    """
    rows = keys.shape[0]
    weights = _weights(style, keys.shape[1])
    t = row_tables()
    by_id = _id_tables()
    m = keys.shape[1]
    ids = t.id_of_key[keys >> SUIT_BITS].astype(np.intp)
    suit_word = keys & SUIT_MASK
    open_slots = _SIZES_FIRST[:rows] - by_id.size[ids]
    # The odds of every draw depend on the table and the row's open slots through the
    # cards the row may expect and the unseen ones: ``tail`` (m, 6) is that part of an
    # index into the odds table, ``slot`` says where each row reads it.
    share, tail = _shares(ctx, future_total)
    slot = open_slots + np.arange(m)[:, None] * 6
    made = by_id.made[ids]
    flush, straight = _draws(ids, suit_word, open_slots, slot, tail, ctx)
    # No open slot: nothing drawn (share 0), so no chance, as it should be. The empty
    # row (id 0) is a guess from its share of the cards alone.
    improve = np.where(ids == 0, (np.minimum(share, EMPTY_ROW_CARDS) * EMPTY_ROW_IMPROVE)
                       .astype(np.float32).ravel()[slot],
                       _at_least(by_id.improve_index[ids] + tail.ravel()[slot]))

    full = open_slots == 0
    exact_strength = np.full(keys.shape, -1.0, dtype=np.float32)
    royalty = np.take(_royalty_by_id(arrays), ids + _ROW_STEP[:rows] * t.size.size)
    if full.any():
        _complete_rows(full, ids, suit_word, arrays, made, exact_strength, royalty)
    roy_flush = arrays.royalty_made[:, _FLUSH_INDEX + 12][:, None, None]
    roy_straight = arrays.royalty_made[:, _STRAIGHT_INDEX + 12][:, None, None]
    royalty = royalty + flush * roy_flush[:rows] + straight * roy_straight[:rows]

    projected = np.where(full, made, made + IMPROVE_STEP * improve + flush * by_id.below_flush[ids]
                         + straight * by_id.below_straight[ids])
    miss = (1.0 - flush) * (1.0 - straight)
    catch = np.where(full, 0.0, 1.0 - (1.0 - improve) * miss)
    catch_far = np.where(full, 0.0, 1.0 - (1.0 - FAR_IMPROVE_SHARE * improve) * miss)

    fantasyland = _fantasyland_chance(made, ids, open_slots, ctx, arrays, weights)
    weight = np.array([TOP_STRENGTH_WEIGHT, 1.0, 1.0],
                      dtype=np.float32)[:rows, None, None] * weights.strength
    # Made indices and margins are whole numbers: the guard is exact in float32.
    guard = made - np.where(full, np.float32(0.0), weights.margin)
    out = RowFeatures(made=made, guard=guard,
                      miss=(1.0 - catch).astype(np.float32, copy=False),
                      miss_far=(1.0 - catch_far).astype(np.float32, copy=False),
                      royalty=royalty.astype(np.float32, copy=False),
                      strength=(projected * weight).astype(np.float32, copy=False),
                      fantasyland=fantasyland, exact=exact_strength,
                      rise=improve if ctx.forced else np.zeros_like(improve))
    if rows == 3:
        return out
    return _bottom_as_middle(out, ids[1], full[1], (flush[1] * roy_flush[BOTTOM],
                                                    straight[1] * roy_straight[BOTTOM]), arrays)


def _bottom_as_middle(out: RowFeatures, ids: npt.NDArray[np.intp], full: npt.NDArray[np.bool_],
                      drawn: tuple[npt.NDArray[Any], npt.NDArray[Any]], arrays: RulesetArrays
                      ) -> RowFeatures:
    """The features of two rows (top, middle) as three, the bottom the same as the middle
    but for its royalty (the same steps as :func:`row_features`; ``drawn``: the middle's
    flush and straight draws, each valued at the bottom's royalty)."""
    bottom = np.take(_royalty_by_id(arrays), ids + 2 * row_tables().size.size)
    at = np.flatnonzero(full)
    bottom.ravel()[at] = _royalty_by_strength(arrays)[BOTTOM][
        out.exact[1].ravel()[at].astype(np.intp)]
    bottom = bottom + drawn[0] + drawn[1]
    parts = {name: [value[0], value[1], value[1]] for name, value in vars(out).items()}
    parts["royalty"][2] = bottom.astype(np.float32, copy=False)
    return RowFeatures(**parts)


def _draws(ids: npt.NDArray[np.intp], suit_word: npt.NDArray[np.int64],
           open_slots: npt.NDArray[np.int64], slot: npt.NDArray[np.int64],
           tail: npt.NDArray[np.int64], ctx: Context
           ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The chance each row completes a flush and a straight (none for the top row).

    Draws in the five-card rows: their odds depend only on the table, the row's open
    slots (and the suit), so they are worked out per table and looked up.
    """
    t = row_tables()
    by_id = _id_tables()
    m = ids.shape[1]
    straight_odds = STRAIGHT_DRAW_SHARE * _odds(_OPEN_SLOTS, np.minimum(4 * _OPEN_SLOTS, 13),
                                                0, 0, tail)
    # (suit, open slots, table): the tables last, for long loops.
    flush_odds = _odds(_OPEN_SLOTS[:, None], np.minimum(ctx.live_suits.reshape(m, 4).T, 13)
                       [:, None, :], 0, 0, tail.T)
    flush = np.zeros(ids.shape, dtype=np.float32)
    suits = t.suit_of[suit_word[1:]]
    flush[1:] = np.where(t.suited[suit_word[1:]] & by_id.flush_draw[ids[1:]],
                         flush_odds.ravel()[(np.maximum(suits, 0) * 6 + open_slots[1:]) * m
                                            + np.arange(m)[:, None]], 0)
    straight = np.zeros(ids.shape, dtype=np.float32)
    straight[1:] = np.where(by_id.straight_draw[ids[1:]], straight_odds.ravel()[slot[1:]], 0)
    return flush, straight


def _fantasyland_chance(made: npt.NDArray[np.float32], ids: npt.NDArray[np.intp],
                        open_slots: npt.NDArray[np.int64], ctx: Context,
                        arrays: RulesetArrays, weights: Weights) -> npt.NDArray[np.float32]:
    """Top row only: the chance it qualifies for fantasyland, a pair still to come
    weighed by the style's ``chase``; zero in the other rows."""
    fantasyland = np.zeros(ids.shape, dtype=np.float32)
    if arrays.has_fantasyland:
        by_id = _id_tables()
        top = made[0]
        entry_rank = arrays.entry_index % 13
        can_pair = (by_id.high_single[ids[0]] >= entry_rank) & (open_slots[0] > 0) & (top < 13)
        chance = _odds(1, 3, np.minimum(ctx.future, FUTURE_CARDS_CAP), ctx.unseen)
        fantasyland[0] = np.maximum((top >= arrays.entry_index).astype(np.float32),
                                    np.where(can_pair, weights.chase * chance, 0.0))
    return fantasyland


def _complete_rows(full: npt.NDArray[np.bool_], ids: npt.NDArray[np.intp],
                   suit_word: npt.NDArray[np.int64], arrays: RulesetArrays,
                   made: npt.NDArray[np.float32], exact: npt.NDArray[np.float32],
                   royalty: npt.NDArray[np.float32]) -> None:
    """Fill in the exact strength of the full rows, and the made index and royalty of it
    (only the full rows are looked at: most rows of a street are in the making)."""
    at = np.flatnonzero(full)
    row = at // (full.size // full.shape[0])
    suited = row_tables().suited[suit_word.ravel()[at]]
    strength = _full_strength()[(row * _id_count() + ids.ravel()[at]) * 2 + suited]
    made.ravel()[at] = _category_of_strength()[strength]
    exact.ravel()[at] = strength
    royalty.ravel()[at] = _royalty_by_strength(arrays).ravel()[
        row * _category_of_strength().size + strength]


@cache
def _id_count() -> int:
    return int(row_tables().size.size)


@cache
def _full_strength() -> npt.NDArray[np.intp]:
    """``(3, ids, 2)`` flat: the exact strength of a full row by row, multiset id and
    whether its cards share a suit (only five-card rows make flushes)."""
    t = row_tables()
    top = np.stack([t.full3, t.full3], axis=1)
    five = np.stack([t.full5, t.full5_flush], axis=1)
    return np.stack([top, five, five]).astype(np.intp).ravel()


def _shares(ctx: Context, future_total: npt.NDArray[np.int64]) -> tuple[
        npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """By table and open slots of a row, ``(m, 6)``: the future cards the row may expect
    (its share of what is still to come, rounded up), and the part of an index into the
    odds table that they and the unseen cards make."""
    per_slot = (ctx.future / np.maximum(future_total, 1)).astype(np.float32)
    share = np.minimum(np.ceil(_OPEN_SLOTS * per_slot - 1e-4), FUTURE_CARDS_CAP).astype(np.intp)
    return share, share * 53 + ctx.unseen


def combine(f: RowFeatures, style: Style | Weights, forced: bool = False,
            complete: Sequence[bool] = (True, True, True)) -> npt.NDArray[np.float32]:
    """Value of boards from their rows' summaries (each field indexed by row first: an
    array ``(3, ...)`` or three arrays; weights by table, ``(m, 1)``). ``complete[r]``
    is false when no board has row ``r`` full (a shortcut, never a change of value)."""
    weights = _weights(style, np.shape(f.made[0])[0])
    made = f.made
    kept = []  # chance each pair of rows stays in order
    for low, high in ((0, 1), (1, 2)):
        # Foul risk: a lower row already made stronger than the upper row may become.
        # A complete upper row is known: no margin, only the lower row's made hand counts
        # (and both complete: the exact order). Made indices and margins are whole
        # numbers, so the gap is exact in float32.
        gap = made[low] - f.guard[high]
        miss = np.where(gap > 13, f.miss_far[high], f.miss[high])
        # At risk by the miss when ahead, by LEVEL_RISK of it when level, not when behind.
        p = miss * np.clip(gap + np.float32(LEVEL_RISK), 0.0, 1.0)
        if complete[low] and complete[high]:
            both = (f.exact[high] >= 0) & (f.exact[low] >= 0)
            if both.any():
                p = np.where(both, f.exact[low] > f.exact[high], p)
        if forced:
            # With no discards left the lower row must take its share of what comes; a
            # pair there overtakes an upper row that is not a category ahead.
            overtaken = made[high] < made[low] + 13
            p = p + (1.0 - p) * f.rise[low] * np.where(overtaken, miss, 0.0)
        kept.append(1.0 - p)
    keep = kept[0] * kept[1]
    risk = 1.0 - keep
    gain = weights.royalty_weight * (f.royalty[0] + f.royalty[1] + f.royalty[2]) \
        + weights.fantasyland_value * f.fantasyland[0]
    strength = f.strength[0] + f.strength[1] + f.strength[2]
    return (gain * keep - weights.foul_cost * risk + strength).astype(np.float32, copy=False)


def _weights(style: Style | Weights, tables: int) -> Weights:
    return style if isinstance(style, Weights) else Weights.of([(style, tables)])


def _odds(need: Ints | int, wanted: Ints | int, drawn: Ints | int,
          unseen: Ints | int, tail: Ints | int = 0) -> npt.NDArray[np.float32]:
    """``at_least_table()[need, wanted, drawn, unseen]`` through one flat gather;
    ``tail`` may bring ``drawn * 53 + unseen`` ready made."""
    return _at_least(_odds_index(need, wanted, drawn, unseen) + tail)


def _odds_index(need: Ints | int, wanted: Ints | int, drawn: Ints | int,
                unseen: Ints | int) -> npt.NDArray[np.intp]:
    """The flat index of ``at_least_table()[need, wanted, drawn, unseen]``."""
    return (np.asarray(need, dtype=np.intp) * 14 + wanted) * (17 * 53) + drawn * 53 + unseen


def _at_least(flat: Ints) -> npt.NDArray[np.float32]:
    return np.asarray(np.take(at_least_table().ravel(), flat), dtype=np.float32)


@dataclass(frozen=True)
class _IdTables:
    """What :func:`row_features` reads of a row by its multiset id alone."""

    size: npt.NDArray[np.intp]  # cards in the row
    made: npt.NDArray[np.float32]  # made index (-1 for an empty row)
    improve_index: npt.NDArray[np.intp]  # odds index of one of its outs, before the draw
    flush_draw: npt.NDArray[np.bool_]  # 2 to 4 cards: a flush draw if they share a suit
    straight_draw: npt.NDArray[np.bool_]  # 3 to 4 distinct ranks that fit a straight
    high_single: npt.NDArray[np.int8]
    below_flush: npt.NDArray[np.float32]  # made indices short of a flush (0 if past it)
    below_straight: npt.NDArray[np.float32]


@cache
def _id_tables() -> _IdTables:
    t = row_tables()
    size = t.size.astype(np.intp)
    outs = np.minimum(3 * t.singles.astype(np.intp) + 2 * t.pair_ranks, 13)
    # Flush and straight draws only count in the five-card rows, so a size of 2 to 4
    # there is the same as "at least 2 (or 3) cards and a slot open".
    made = t.made_index.astype(np.float32)
    return _IdTables(size=size, made=made, improve_index=_odds_index(1, outs, 0, 0),
                     flush_draw=(size >= 2) & (size <= 4),
                     straight_draw=t.straight_ok & (size >= 3) & (size <= 4),
                     high_single=t.high_single,
                     below_flush=np.maximum(_FLUSH_INDEX - made, 0),
                     below_straight=np.maximum(_STRAIGHT_INDEX - made, 0))


@cache
def _category_of_strength() -> npt.NDArray[np.float32]:
    """:func:`category_index` of every strength, for a full row's made index."""
    return category_index(np.arange(evaluate.strength_count() + 1)).astype(np.float32)


_ROYALTY_BY_ID: dict[int, tuple[RulesetArrays, npt.NDArray[np.float32]]] = {}
_ROYALTY_BY_STRENGTH: dict[int, tuple[RulesetArrays, npt.NDArray[np.int16]]] = {}


def _royalty_by_strength(arrays: RulesetArrays) -> npt.NDArray[np.int16]:
    """``(3, strengths)``: the royalty of each row by exact strength (cached per ruleset,
    as :func:`_royalty_by_id`)."""
    cached = _ROYALTY_BY_STRENGTH.get(id(arrays))
    if cached is None or cached[0] is not arrays:
        cached = _ROYALTY_BY_STRENGTH[id(arrays)] = (arrays, np.stack(arrays.royalty))
    return cached[1]


def _royalty_by_id(arrays: RulesetArrays) -> npt.NDArray[np.float32]:
    """``(3 * ids,)``: the made royalty of each row by multiset id, rows one after another
    (cached per ruleset; the arrays are kept so that their id stays theirs)."""
    cached = _ROYALTY_BY_ID.get(id(arrays))
    if cached is None or cached[0] is not arrays:
        made_index = np.maximum(row_tables().made_index, 0).astype(np.intp)
        table = np.concatenate([arrays.royalty_made[r][made_index] for r in range(3)])
        cached = _ROYALTY_BY_ID[id(arrays)] = (arrays, table)
    return cached[1]
