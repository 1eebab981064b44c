"""Scoring: final boards in, points under every ruleset out (docs/rules.md §2-§4, §6).

The work is split so that a ruleset costs almost nothing:

1. :func:`ofcstats.showdown.seat_table` evaluates every row once and lays each hand's
   seats side by side;
2. :func:`ofcstats.showdown.head_to_head` and :func:`~ofcstats.showdown.royalty_flows`
   compare every seat with every opponent once, keeping the counts the scoring formula
   is linear in (per natural mask, per distinct royalty table);
3. :func:`ruleset_results` turns the counts into each ruleset's points: head-to-head
   points once per distinct set of head-to-head values (:func:`head_to_head_points`),
   royalty flows once per distinct royalty table, fantasyland once per policy, so
   rulesets that differ in one value share everything else.

A large frame is cut between hands into one part per core, scored in threads.

Input is one row per seat (:data:`~ofcstats.records.SEAT_SCHEMA`), output one row per
hand, seat and ruleset (:data:`~ofcstats.records.RESULT_SCHEMA`). Per-ruleset frames share
their unchanged columns, so stacking thirteen rulesets copies no data.
"""

from __future__ import annotations

import functools
import operator
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt
import polars as pl

from ofcstats import criss_cross, evaluate, showdown, units
from ofcstats.errors import HandError
from ofcstats.records import RESULT_SCHEMA, Scored, hand_starts
from ofcstats.rows import ROWS
from ofcstats.rules import board
from ofcstats.rules.model import FantasylandPolicy, Naturals, RoyaltyTable, Ruleset
from ofcstats.showdown import Counts, RoyaltyFlows, SeatTable
from ofcstats.variants import Variant


def _head_to_head_key(ruleset: Ruleset) -> tuple[int, ...]:
    """What the ruleset's head-to-head points depend on; rulesets sharing it share the sum:
    the showdown key, one coefficient per term of :attr:`showdown.Counts.terms`, then the
    per-row misset penalty (:func:`showdown.foul_rows`)."""
    h = ruleset.head_to_head
    per_row = ruleset.misset == "per-row"
    return (showdown.showdown_key(ruleset), h.row, h.majority, h.scoop,
            ruleset.foul_points if ruleset.misset == "scoop" else 0, h.table_bonus,
            ruleset.surrender_points, ruleset.foul_points if per_row else 0)


def _royalty_key(ruleset: Ruleset) -> tuple[RoyaltyTable, bool, int] | None:
    if ruleset.royalties.is_empty:
        return None
    return ruleset.royalties, ruleset.spade_bonus, showdown.showdown_key(ruleset)


def head_to_head_points(counts: Counts, key: tuple[int, ...],
                        foul_rows: npt.NDArray[np.int16] | None = None
                        ) -> npt.NDArray[np.int16]:
    """Points from rows, majorities, scoops, fouls (per hand or per wrongly set row), table
    bonus and surrenders (§2, §3, §5).

    16 bits suffice: every ruleset value is at most 1000 and, with at most three
    opponents, the counts are at most 9 rows or 3 pairs.
    """
    points = np.zeros(counts.rows.shape, dtype=np.int16)
    scaled = np.empty_like(points)
    pairs = list(zip(key[1:-1], counts.terms, strict=True))
    if key[-1] and foul_rows is not None:
        pairs.append((key[-1], foul_rows))
    for coefficient, count in pairs:
        if coefficient == 1:
            points += count
        elif coefficient:
            np.multiply(count, np.int16(coefficient), out=scaled)
            points += scaled
    return points


def fantasyland_next(table: SeatTable, policy: FantasylandPolicy
                     ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int8]]:
    """Fantasyland earned for the next hand, and its cards, by the policy (docs/rules.md §6).

    Entry for a seat not in fantasyland, stay for one in it; the repeat limit needs the
    session and is applied there.
    """
    limits = policy.thresholds()
    if limits["entry"] is None:
        return np.zeros(table.seats, dtype=bool), np.zeros(table.seats, dtype=np.int8)
    top = table.strength[0]
    has_fantasyland = table.variant != showdown.VARIANT_CODES[Variant.CHINESE_13.value]
    alive = ~table.fouled & ~table.surrendered & has_fantasyland
    entry, stay = board.fantasyland_next(table.strength, table.fantasyland, alive,
                                         limits["entry"], [limits[f"stay_{row}"] for row in ROWS])
    pineapple = table.variant == showdown.VARIANT_CODES[Variant.PINEAPPLE.value]
    cards = np.where(stay, np.int8(13) + pineapple, np.int8(0)).astype(np.int8, copy=False)
    # Few seats enter: look their cards up by variant and top row where they do.
    entering = np.flatnonzero(entry)
    cards[entering] = _entry_cards(policy)[pineapple[entering].astype(np.intp),
                                           top[entering].astype(np.intp)]
    return entry | stay, cards


@functools.lru_cache(maxsize=32)
def _entry_cards(policy: FantasylandPolicy) -> npt.NDArray[np.int8]:
    """Cards dealt on entering fantasyland, by top-row strength: row 0 for OFC classic
    and Turbo, row 1 for Pineapple (a strength too weak to enter gets the base count)."""
    strengths = np.arange(evaluate.strength_count() + 1)
    return np.stack([board.entry_cards(strengths, policy.entry_card_steps(variant),
                                       variant.fantasyland_base_cards)
                     for variant in (Variant.OFC_CLASSIC, Variant.PINEAPPLE)])


def _laid_out(seats: pl.DataFrame) -> tuple[pl.DataFrame, SeatTable]:
    """The seat table, sorting the seats by hand first only when a hand's are apart."""
    try:
        return seats, showdown.seat_table(seats)
    except HandError as error:
        if "adjacent" not in str(error):
            raise
    seats = seats.sort("hand_id", "seat")
    return seats, showdown.seat_table(seats)


def ruleset_results(seats: pl.DataFrame, table: SeatTable, rulesets: Sequence[Ruleset]
                    ) -> Scored:
    """One frame per ruleset, stacked; unchanged columns are shared, not copied."""
    counts = _showdown_counts(table, rulesets)
    columns = _Columns.of(seats, table, counts, _royalty_flows(table, rulesets, counts))
    frames = _ruleset_frames(table, rulesets, counts, columns)
    showdowns = {
        mask: pl.DataFrame({"hand_id": columns.shared["hand_id"],
                            "seat": columns.shared["seat"],
                            "fouled": columns.fouled[mask], **per_mask})
        for mask, per_mask in columns.per_mask.items()
    }
    played = functools.reduce(operator.or_, counts, 0)  # every showdown key bit in play
    return Scored(results=pl.concat(frames, how="vertical", rechunk=False),
                  showdowns=showdowns, showdown_bits=pl.Series(table.showdown_bits(played)))


def _showdown_counts(table: SeatTable, rulesets: Sequence[Ruleset]) -> dict[int, Counts]:
    """The head-to-head counts of every natural mask the rulesets need, mask 0's too."""
    masks = {showdown.showdown_key(r) for r in rulesets} | {0}
    counts = {0: showdown.head_to_head(table, 0)}
    for mask in masks - {0}:
        # Only hands holding a natural the ruleset pays differ from mask 0's counts; with
        # none, the counts are mask 0's own.
        counts[mask] = showdown.head_to_head(table, mask, without=counts[0])
    return counts


RoyaltyKey = tuple[RoyaltyTable, bool, int]
"""A ruleset's royalties: its table, whether it pays the spade bonus, its natural mask."""


def _royalty_flows(table: SeatTable, rulesets: Sequence[Ruleset], counts: dict[int, Counts]
                   ) -> dict[RoyaltyKey, RoyaltyFlows]:
    """The royalty flows of every royalty key the rulesets need, each computed once."""
    flows: dict[RoyaltyKey, RoyaltyFlows] = {}
    keys = {key: (key[0], key[1], key[2] if counts[key[2]] is not counts[0] else 0)
            for key in filter(None, map(_royalty_key, rulesets))}
    # With no natural that changes a showdown, mask 0's flows serve every mask. The plain
    # flows (no spade bonus) of a table serve its spade version too.
    plain_keys = dict.fromkeys((royalties, mask) for royalties, _, mask in keys.values())
    for mask in dict.fromkeys(m for _, m in plain_keys):
        tables = [royalties for royalties, m in plain_keys if m == mask]
        for royalties, computed in zip(tables, showdown.royalty_flows(table, tables, mask),
                                       strict=True):
            flows[royalties, False, mask] = computed
    for asked, (royalties, spade, mask) in keys.items():
        plain = flows[royalties, False, mask]
        flows[asked] = showdown.with_spade_bonus(table, plain, mask) if spade else plain
    return flows


@dataclass(frozen=True)
class _Columns:
    """The result columns rulesets share, as series made once."""

    shared: dict[str, pl.Series]  # hand_id, seat, player
    fouled: dict[int, pl.Series]  # by natural mask
    per_mask: dict[int, dict[str, pl.Series]]  # showdown counts by natural mask
    per_key: dict[RoyaltyKey, dict[str, pl.Series]]  # royalties by royalty key
    flows: dict[RoyaltyKey, RoyaltyFlows]

    @classmethod
    def of(cls, seats: pl.DataFrame, table: SeatTable, counts: dict[int, Counts],
           flows: dict[RoyaltyKey, RoyaltyFlows]) -> _Columns:
        """The columns of the seats in ``table``'s order."""
        ordered = seats.select("hand_id", "seat", "player")  # reorder only what results show
        if table.reordered:
            ordered = ordered[table.order]
        shared = {name: ordered.get_column(name) for name in ("hand_id", "seat", "player")}
        shared["seat"] = shared["seat"].cast(pl.Int8)
        fouled = {mask: pl.Series("fouled", table.for_key(mask).fouled) for mask in counts}
        per_mask = {
            mask: {
                **{f"rows_{r}": pl.Series(c.row_sign[i]) for i, r in enumerate(ROWS)},
                **{f"wins_{r}": pl.Series(c.row_wins[i]) for i, r in enumerate(ROWS)},
                "scoops": pl.Series(c.scoops),
                "scooped": pl.Series(c.scooped),
            }
            for mask, c in counts.items()
        }
        per_key = {
            key: {
                "royalties": pl.Series(f.collected_total),
                **{f"royalty_{r}": pl.Series(f.collected[i]) for i, r in enumerate(ROWS)},
                "royalty_points": pl.Series(f.net),
            }
            for key, f in flows.items()
        }
        return cls(shared, fouled, per_mask, per_key, flows)


def _ruleset_frames(table: SeatTable, rulesets: Sequence[Ruleset], counts: dict[int, Counts],
                    columns: _Columns) -> list[pl.DataFrame]:
    """Each ruleset's results; what rulesets share (head-to-head points, natural points,
    fantasyland by policy) is computed once for all that share it."""
    h2h: dict[tuple[int, ...], npt.NDArray[np.int16]] = {}
    naturals: dict[Naturals, npt.NDArray[np.int32]] = {}
    n = table.seats
    zeros16 = pl.Series(np.zeros(n, dtype=np.int16))
    no_royalties = dict.fromkeys(
        ("royalties", "royalty_top", "royalty_middle", "royalty_bottom", "royalty_points"),
        zeros16)
    per_policy: dict[tuple[FantasylandPolicy, bool], dict[str, pl.Series]] = {}
    no_units = pl.Series(values=[None], dtype=pl.Float64).new_from_index(0, n)
    names = pl.Enum([r.name for r in rulesets])
    frames = []
    for ruleset in rulesets:
        mask = showdown.showdown_key(ruleset)
        key = _royalty_key(ruleset)
        h2h_key = _head_to_head_key(ruleset)
        if h2h_key not in h2h:
            per_row = showdown.foul_rows(table, mask) if h2h_key[-1] else None
            h2h[h2h_key] = head_to_head_points(counts[mask], h2h_key, per_row)
        points = (h2h[h2h_key].astype(np.int32) if key is None
                  else np.add(h2h[h2h_key], columns.flows[key].net, dtype=np.int32))
        if ruleset.naturals.played:
            if ruleset.naturals not in naturals:
                naturals[ruleset.naturals] = showdown.natural_points(table, ruleset.naturals)
            points += naturals[ruleset.naturals]
        if ruleset.royalty_pool.played:
            points += showdown.pool_points(table, ruleset.royalty_pool, mask)
        counted = not mask & showdown.MISSES_NOT_COUNTED
        if (ruleset.fantasyland, counted) not in per_policy:
            earned, cards = fantasyland_next(table.for_key(mask), ruleset.fantasyland)
            per_policy[ruleset.fantasyland, counted] = {
                "fantasyland_next": pl.Series(earned), "fantasyland_cards": pl.Series(cards)}
        result = {
            "ruleset": pl.Series([ruleset.name], dtype=names).new_from_index(0, n),
            **columns.shared,
            "points": pl.Series(points),
            **(columns.per_key[key] if key is not None else no_royalties),
            **columns.per_mask[mask],
            "fouled": columns.fouled[mask],
            **per_policy[ruleset.fantasyland, counted],
            "unit_points": no_units,
        }
        frames.append(pl.DataFrame({name: result[name].alias(name) for name in RESULT_SCHEMA}))
    return frames


PARALLEL_FROM = 200_000
"""Seats from which scoring splits the hands between the machine's cores."""


def available_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _hand_parts(frame: pl.DataFrame, parts: int) -> list[pl.DataFrame]:
    """``frame`` cut into ``parts`` slices of about equal size, never inside a hand.

    The cuts fall where ``hand_id`` changes; when a hand's seats are not adjacent the
    frame is sorted by hand first (as :func:`_laid_out` would).
    """
    starts = hand_starts(frame.get_column("hand_id"))
    if starts is None:
        return _hand_parts(frame.sort("hand_id", "seat"), parts)
    wanted = np.arange(1, parts) * (frame.height // parts)
    cuts = np.unique(np.concatenate([[0], starts[np.searchsorted(starts, wanted)
                                                   .clip(max=len(starts) - 1)],
                                     [frame.height]]))
    return [frame.slice(int(a), int(b - a)) for a, b in pairwise(cuts)]


def _stacked(parts: Sequence[Scored], rulesets: int) -> Scored:
    """The parts' results as if scored together: ruleset blocks stay whole and in order."""
    sizes = [part.showdown_bits.len() for part in parts]
    blocks = [part.results.slice(r * size, size)
              for r in range(rulesets) for part, size in zip(parts, sizes, strict=True)]
    showdowns = {mask: pl.concat([part.showdowns[mask] for part in parts], rechunk=False)
                 for mask in parts[0].showdowns}
    return Scored(results=pl.concat(blocks, rechunk=False), showdowns=showdowns,
                  showdown_bits=pl.concat([part.showdown_bits for part in parts]))


def _score_part(frame: pl.DataFrame, rulesets: Sequence[Ruleset]) -> Scored:
    """One part's hands scored; criss-cross hands as the heads-up meetings of their
    boards (:mod:`ofcstats.criss_cross`), after the others."""
    crossed = criss_cross.crossed(frame)
    if crossed.any():
        parts = [criss_cross.score(frame.filter(crossed), rulesets, _score_part)]
        if not crossed.all():
            parts.insert(0, _score_part(frame.filter(~crossed), rulesets))
        return _stacked(parts, len(rulesets))
    frame, table = _laid_out(frame)
    scored = ruleset_results(frame, table, rulesets)
    if units.weighted(frame).any():
        return units.with_unit_points(frame, table.order, scored, rulesets, _score_part)
    return scored


def score_with_showdowns(seats: pl.LazyFrame | pl.DataFrame, rulesets: Sequence[Ruleset],
                         *, cores: int | None = None) -> Scored:
    """Score every hand in ``seats`` under every ruleset; keep the shared showdowns apart.

    A large frame is cut between hands into one part per core (``cores``, by default all
    this process may use), scored in threads (numpy releases the GIL in its loops), and
    stacked back in the order one call would give. A program scoring large frames runs
    faster once ``malloc`` keeps freed memory for reuse: the ``ofcstats`` command opts
    in (:func:`ofcstats.allocator.reuse_freed_memory`); a library caller may too.
    """
    frame = seats.collect() if isinstance(seats, pl.LazyFrame) else seats
    if not rulesets or frame.is_empty():
        empty = pl.DataFrame(schema=RESULT_SCHEMA)
        return Scored(results=empty, showdowns={}, showdown_bits=pl.Series([], dtype=pl.UInt8))
    cores = available_cores() if cores is None else cores
    if cores < 2 or frame.height < PARALLEL_FROM:
        return _score_part(frame, rulesets)
    parts = _hand_parts(frame, cores)
    with ThreadPoolExecutor(max_workers=len(parts)) as pool:
        scored = list(pool.map(lambda part: _score_part(part, rulesets), parts))
    return _stacked(scored, len(rulesets))


def score(seats: pl.LazyFrame | pl.DataFrame, rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """Score every hand in ``seats`` under every ruleset: one block of rows per ruleset,
    in the order asked, each listing the same seats in the same order."""
    return score_with_showdowns(seats, rulesets).results
