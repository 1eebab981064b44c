"""Per-player units (docs/rules.md §5): players may play for different units, and a pair
of players settles at the smaller of their two.

A seat's ``unit`` (the seats frame's optional column; null: 1) is what a point is worth to
its player, in point values. Its **unit points** are its points weighted pair by pair:
``sum over opponents j of points(i against j) * min(unit i, unit j)``. Every rule but two
is already a pair's own business (rows, scoops, fouls, surrender, naturals, royalties and
the 2♠ bonus), so those points come from scoring each pair of the hand as a heads-up hand.
The two others are settled as docs/rules.md words them for the full table: the table
bonus is paid by each showdown opponent to a seat for every row that beats the whole
table, a pair flow settled at the pair's unit; the royalty pool is one pot, played at the
smallest unit at the table.

Unit points are filled only in hands where some unit is not 1 (elsewhere they are the
points themselves).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt
import polars as pl

from ofcstats import showdown
from ofcstats.records import Scored, hand_starts
from ofcstats.rules.model import RoyaltyPool, Ruleset


def weighted(seats: pl.DataFrame) -> npt.NDArray[np.bool_]:
    """Per seat row, whether its hand has a unit other than 1 (its unit points count)."""
    none = np.zeros(seats.height, dtype=bool)
    if "unit" not in seats.columns or seats.get_column("unit").null_count() == seats.height:
        return none
    other = seats.get_column("unit").fill_null(1.0).to_numpy() != 1.0
    if not other.any():
        return none
    starts = hand_starts(seats.get_column("hand_id"))
    if starts is None:  # a hand's seats apart
        by_hand = pl.DataFrame({"hand": seats.get_column("hand_id"), "other": other})
        return by_hand.select(pl.col("other").any().over("hand")).to_series().to_numpy()
    return np.repeat(np.logical_or.reduceat(other, starts),
                     np.diff(np.append(starts, seats.height)))


def pairs_of(seats: pl.DataFrame) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Every pair of seats of each hand, as two arrays of rows of ``seats`` (a hand's
    seats adjacent or not)."""
    starts = hand_starts(seats.get_column("hand_id"))
    if starts is not None:  # adjacent: by arithmetic
        sizes = np.diff(np.append(starts, seats.height))
        firsts = [(starts[sizes == n], i, j) for n in (2, 3, 4)
                  for i, j in itertools.combinations(range(n), 2)]
        return (np.concatenate([first + i for first, i, _ in firsts]).astype(np.intp),
                np.concatenate([first + j for first, _, j in firsts]).astype(np.intp))
    rows = seats.select("hand_id").with_row_index("_row")
    met = rows.join(rows.rename({"_row": "_them"}), on="hand_id").filter(
        pl.col("_row") < pl.col("_them")).sort("_row", "_them")
    return (met.get_column("_row").to_numpy().astype(np.intp),
            met.get_column("_them").to_numpy().astype(np.intp))


def pairwise_rules(ruleset: Ruleset) -> Ruleset:
    """The ruleset without its two rules that are not a pair's own business."""
    return replace(ruleset, head_to_head=replace(ruleset.head_to_head, table_bonus=0),
                   royalty_pool=RoyaltyPool())


def with_unit_points(seats: pl.DataFrame, order: npt.NDArray[np.int64], scored: Scored,
                     rulesets: Sequence[Ruleset],
                     score_part: Callable[[pl.DataFrame, Sequence[Ruleset]], Scored]
                     ) -> Scored:
    """``scored`` (the results of ``seats``, each ruleset's block listing the seats in
    ``order``) with ``unit_points`` filled in the hands where some unit is not 1.
    ``score_part`` scores the hands' pairs as heads-up hands."""
    flagged = weighted(seats)
    where = np.flatnonzero(flagged)  # rows of ``seats`` that ``sub`` holds
    sub = seats.filter(pl.Series(flagged)).with_columns(pl.col("unit").fill_null(1.0))
    unit = sub.get_column("unit").to_numpy()
    a, b = pairs_of(sub)
    pair_seats = sub.drop("unit")[np.stack([a, b], axis=1).ravel()].with_columns(
        hand_id=pl.Series(np.repeat(np.arange(len(a), dtype=np.int64), 2)))
    heads_up = score_part(pair_seats, [pairwise_rules(r) for r in rulesets])
    size = pair_seats.height
    at = np.minimum(unit[a], unit[b])  # the unit each pair settles at
    table = showdown.seat_table(sub)
    placed = table.order  # table position -> row of ``sub``
    smallest = sub.select(pl.col("unit").min().over("hand_id")).to_series().to_numpy()
    n = seats.height
    column = np.empty(len(rulesets) * n, dtype=np.float64)
    for index, ruleset in enumerate(rulesets):
        block = heads_up.results.slice(index * size, size).select(
            "hand_id", "seat", "points")
        # Pairs keep their order (two seats each): rows 2k and 2k + 1 are pair k's.
        points = block.get_column("points").to_numpy().astype(np.float64).reshape(-1, 2)
        total = np.bincount(a, points[:, 0] * at, minlength=sub.height) \
            + np.bincount(b, points[:, 1] * at, minlength=sub.height)
        mask = showdown.showdown_key(ruleset)
        bonus = ruleset.head_to_head.table_bonus
        if bonus:
            keyed = table.for_key(mask)
            show = np.empty(sub.height, dtype=bool)
            show[placed] = ~showdown.out_of_showdown(keyed, mask)
            beating = np.empty(sub.height, dtype=np.float64)
            beating[placed] = showdown.head_to_head(table, mask).table_rows
            flow = bonus * (beating[a] - beating[b]) * show[a] * show[b] * at
            total += np.bincount(a, flow, minlength=sub.height) \
                - np.bincount(b, flow, minlength=sub.height)
        if ruleset.royalty_pool.played:
            pool = np.empty(sub.height, dtype=np.float64)
            pool[placed] = showdown.pool_points(table, ruleset.royalty_pool, mask)
            total += pool * smallest
        by_row = np.full(n, np.nan)
        by_row[where] = total
        column[index * n:(index + 1) * n] = by_row[order]
    results = scored.results.with_columns(unit_points=pl.Series(column).fill_nan(None))
    return Scored(results=results, showdowns=scored.showdowns,
                  showdown_bits=scored.showdown_bits)
