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

Input is one row per seat (:data:`SEAT_SCHEMA`), output one row per hand, seat and
ruleset (:data:`RESULT_SCHEMA`). Per-ruleset frames share their unchanged columns, so
stacking thirteen rulesets copies no data.
"""

from __future__ import annotations

import functools
import operator
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path

import numpy as np
import numpy.typing as npt
import polars as pl

from ofcstats import criss_cross, evaluate, session, showdown, units
from ofcstats.errors import HandError, RulesetError
from ofcstats.records import REJECTS_SCHEMA, HandBatch
from ofcstats.rows import ROWS
from ofcstats.rules import board
from ofcstats.rules.load import load_ruleset
from ofcstats.rules.model import FantasylandPolicy, Naturals, RoyaltyTable, Ruleset
from ofcstats.showdown import Counts, RoyaltyFlows, SeatTable
from ofcstats.variants import Variant

SEAT_SCHEMA: dict[str, pl.DataType] = {
    "hand_id": pl.String(),
    "variant": pl.String(),
    "seat": pl.Int8(),
    "player": pl.String(),
    "fantasyland": pl.Boolean(),
    "timed_out": pl.Boolean(),
    "surrendered": pl.Boolean(),
    "top": pl.Array(pl.UInt8, 3),
    "middle": pl.Array(pl.UInt8, 5),
    "bottom": pl.Array(pl.UInt8, 5),
}
"""The seats frame: one row per seat of a hand, final rows as card codes."""

RESULT_SCHEMA: dict[str, pl.DataType] = {
    "ruleset": pl.String(),  # score() returns an Enum of the rulesets scored, in order asked
    "hand_id": pl.String(),
    "seat": pl.Int8(),
    "player": pl.String(),
    "points": pl.Int32(),
    "royalties": pl.Int16(),  # collected from all opponents, after spade doubling; 0 if fouled
    "royalty_top": pl.Int16(),
    "royalty_middle": pl.Int16(),
    "royalty_bottom": pl.Int16(),
    "royalty_points": pl.Int16(),  # the royalties' part of points: collected minus paid
    "rows_top": pl.Int8(),  # rows won minus rows lost, summed over opponents
    "rows_middle": pl.Int8(),
    "rows_bottom": pl.Int8(),
    "wins_top": pl.Int8(),  # opponents beaten in the row (a fouled one included)
    "wins_middle": pl.Int8(),
    "wins_bottom": pl.Int8(),
    "fouled": pl.Boolean(),
    "scoops": pl.Int8(),  # opponents this seat beat in all three rows (a fouled one included)
    "scooped": pl.Int8(),  # opponents that beat this seat in all three rows
    "fantasyland_next": pl.Boolean(),
    "fantasyland_cards": pl.Int8(),
    # points weighted by the unit each opponent pair settles at (ofcstats.units); null
    # where every unit of the hand is 1 (then the points themselves)
    "unit_points": pl.Float64(),
}
"""One row per hand, seat and ruleset."""


def row_strengths(seats: pl.LazyFrame) -> pl.LazyFrame:
    """Add ``s_top``, ``s_middle``, ``s_bottom``: one comparable strength per row."""
    def strength(column: str, width: int) -> pl.Expr:
        fn = evaluate.strength3 if width == 3 else evaluate.strength5
        return pl.col(column).map_batches(
            lambda s: pl.Series(fn(s.to_numpy()), dtype=pl.UInt16), return_dtype=pl.UInt16)

    return seats.with_columns(**{f"s_{row}": strength(row, row.size) for row in ROWS})


def fouls(seats: pl.LazyFrame) -> pl.LazyFrame:
    """Add ``fouled``: bottom weaker than middle or middle weaker than top (docs/rules.md §2).

    Equal rows are legal; the strength scale already ranks a top row's missing kickers
    below any card, so ``QQ5`` under ``QQ532`` is legal and ``QQ6`` over it fouls.
    """
    return seats.with_columns(fouled=pl.struct("s_top", "s_middle", "s_bottom").map_batches(
        lambda rows: pl.Series(board.fouled(np.stack(
            [rows.struct.field(f"s_{row}").to_numpy() for row in ROWS]))),
        return_dtype=pl.Boolean))


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


SHOWDOWN_COLUMNS = ("fouled", "rows_top", "rows_middle", "rows_bottom", "wins_top",
                    "wins_middle", "wins_bottom", "scoops", "scooped")
"""The result columns every ruleset with the same natural mask shares."""


@dataclass(frozen=True)
class Scored:
    """Results, and what they share.

    ``results`` holds one block of rows per ruleset, in the order asked, each block
    listing the same seats in the same order. ``showdowns`` maps each showdown key the
    rulesets play (:func:`showdown.showdown_key`; 0 always included) to that order's
    ``hand_id``, ``seat`` and :data:`SHOWDOWN_COLUMNS`; ``showdown_bits`` gives, in that
    order too, what may change each seat's showdown
    (:attr:`showdown.SeatTable.showdown_bits`): its naturals, a foul, a straight.
    """

    results: pl.DataFrame
    showdowns: dict[int, pl.DataFrame]
    showdown_bits: pl.Series


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
    starts = showdown.hand_starts(frame.get_column("hand_id"))
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


DEFAULT_RULESET = "american"


def score_batch(batch: HandBatch, rulesets: Sequence[Ruleset] | None = None, *,
                own_variants: bool = False) -> ScoredBatch:
    """Score checked hands: under ``rulesets`` when given, else each hand under its own
    ``ruleset`` field (``american`` when it has none). Fantasyland repeat limits are
    applied over the batch's sessions and games, as ``rescore`` applies them.

    ``what_if`` marks a ruleset applied to a hand of a variant it is not played under;
    ``own_variants`` leaves such rows out. A hand naming a ruleset that does not exist is
    not scored; it comes back among ``rejects`` with the reason.
    """
    seats = batch.seats_for_scoring()
    hands = _session_hands(batch)
    if rulesets is not None:
        results = session.limit_repeats(score(seats, rulesets), seats, hands, rulesets)
        results = results.with_columns(pl.col("ruleset").cast(pl.String))
        marked = _mark_what_ifs(_in_log_order(results, batch, rulesets), batch, rulesets)
        return ScoredBatch(results=marked.filter(~pl.col("what_if")) if own_variants
                           else marked, rejects=_no_rejects())
    own = batch.hands.select("hand_id", "source", "line",
                             pl.col("ruleset").fill_null(DEFAULT_RULESET))
    frames, rejects = [], []
    for (name,), group in own.group_by("ruleset", maintain_order=True):
        try:
            ruleset = load_ruleset(str(name))
        except RulesetError as error:
            rejects.append(group.select(
                "source", "line", "hand_id",
                pl.format("hand {}: {}; score it with --ruleset NAME", pl.col("hand_id"),
                          pl.lit(str(error))).alias("reason"),
                pl.lit(None, dtype=pl.String).alias("raw"),
            ))
            continue
        own_seats = seats.join(group.select("hand_id"), on="hand_id", how="semi")
        # Play order, games and streaks over every hand, as rescore takes them.
        scored = session.limit_repeats(score(own_seats, [ruleset]), seats, hands, [ruleset])
        frames.append(scored.with_columns(pl.col("ruleset").cast(pl.String)))
    results = pl.concat(frames) if frames else session.limit_repeats(
        score(seats.clear(), []), seats.clear(), hands.clear(), [])
    used = [load_ruleset(str(name)) for name in results.get_column("ruleset").unique()]
    return ScoredBatch(
        results=_mark_what_ifs(_in_log_order(results, batch, []), batch, used),
        rejects=pl.concat(rejects).cast(REJECTS_SCHEMA) if rejects else _no_rejects(),  # type: ignore[arg-type]
    )


def _session_hands(batch: HandBatch) -> pl.DataFrame:
    """The batch's hands with what play order and games need (:func:`session.hand_order`):
    the variant and logged stake, whether any seat played in fantasyland, whether any
    timed out."""
    flags = batch.seats.group_by("hand_id").agg(
        fantasyland_hand=pl.col("fantasyland").any(), timed_out_hand=pl.col("timed_out").any())
    return batch.hands.select(
        "hand_id", "session_id", "played_at", "n_seats", "source", "line", "variant",
        stake=session.logged_stake(pl.col("point_value")),
    ).join(flags, on="hand_id", how="left")


def _in_log_order(results: pl.DataFrame, batch: HandBatch,
                  rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """Hands in the order the logs list them, rulesets in the order asked, then seats."""
    order = batch.hands.select("hand_id", _hand=pl.int_range(pl.len()))
    ranks = {r.name: i for i, r in enumerate(rulesets)}
    return results.join(order, on="hand_id", how="left").with_columns(
        _ruleset=pl.col("ruleset").replace_strict(ranks, default=0, return_dtype=pl.Int32),
    ).sort("_hand", "_ruleset", "seat").drop("_hand", "_ruleset")


def _mark_what_ifs(results: pl.DataFrame, batch: HandBatch, rulesets: Sequence[Ruleset]
                   ) -> pl.DataFrame:
    """Add ``what_if``: the ruleset is not played under the hand's variant."""
    played = pl.DataFrame(
        [(r.name, v.value) for r in rulesets for v in r.variants],
        schema={"ruleset": pl.String, "variant": pl.String}, orient="row",
    ).with_columns(what_if=pl.lit(False))
    variants = batch.hands.select("hand_id", pl.col("variant").cast(pl.String))
    return results.join(variants, on="hand_id", how="left", maintain_order="left").join(
        played, on=["ruleset", "variant"], how="left", maintain_order="left",
    ).with_columns(pl.col("what_if").fill_null(True)).drop("variant")


def _no_rejects() -> pl.DataFrame:
    return pl.DataFrame(schema=REJECTS_SCHEMA)


@dataclass(frozen=True)
class ScoredBatch:
    """Results, one row per hand, seat and ruleset; and the hands that could not be scored."""

    results: pl.DataFrame
    rejects: pl.DataFrame


def score_files(paths: Sequence[Path], rulesets: Sequence[Ruleset] | None = None, *,
                own_variants: bool = False, format_name: str | None = None,
                progress: Callable[[int, int], None] | None = None,
                warn: Callable[[str], None] | None = None,
                batch_bytes: int | None = None) -> Iterator[ScoredBatch]:
    """:func:`score_batch` over logs read as a stream: a part at a time, each part the
    sessions of a file that have ended (none of their hands in the batch just read), so
    that memory holds a few batches of hands, not the logs. A file's sessions are scored
    whole (repeat limits, games); a hand id seen before, in any file, is dropped when the
    hand is the same and rejected as a conflict when it is not (:func:`reading.fresh`).

    Results come session by session as the sessions end, in log order within a part:
    the logs' order when their sessions follow one another. ``warn`` hears of a session
    that comes back after it was scored (its later hands are scored as a new piece).
    ``progress(bytes read, bytes in all files)`` as :func:`reading.read_all` calls it;
    ``batch_bytes`` is the size of a batch read (default: :func:`reading.read`'s).
    """
    from ofcstats import reading  # noqa: PLC0415 - reading validates with rulesets; keep import light
    from ofcstats.formats.lines import BATCH_BYTES  # noqa: PLC0415

    seen = pl.DataFrame(schema={"hand_id": pl.String, "fingerprint": pl.String,
                                "source": pl.String, "line": pl.Int64})
    sizes = [path.stat().st_size if path.is_file() else 0 for path in paths]
    total, before = sum(sizes), 0

    def scored(part: HandBatch) -> ScoredBatch:
        result = score_batch(part, rulesets, own_variants=own_variants)
        return ScoredBatch(results=result.results,
                           rejects=pl.concat([part.rejects, result.rejects]))

    for path, size in zip(paths, sizes, strict=True):
        def file_progress(done: int, base: int = before) -> None:
            if progress is not None:
                progress(base + done, total)

        before += size
        pending, ended = HandBatch(), set[str]()
        try:
            for batch in reading.read(path, format_name, file_progress,
                                      batch_bytes or BATCH_BYTES):
                new = reading.fresh(seen, batch)
                seen = pl.concat([seen, new.hands.select(reading.SEEN_COLUMNS)],
                                 how="vertical_relaxed")
                sessions = new.hands.get_column("session_id").unique()
                back = sorted(set(sessions.to_list()) & ended)
                if back and warn is not None:
                    warn(f"{path}: session {back[0]} comes back after its hands were "
                         "scored: its later hands are scored as a new piece of it")
                pending = HandBatch.concat([pending, replace(new, lines=())])
                done = ~pending.hands.get_column("session_id").is_in(sessions.implode())
                if done.any():
                    part = pending.select(done)
                    ended.update(part.hands.get_column("session_id").to_list())
                    pending = replace(pending.select(~done), rejects=pending.rejects.clear(),
                                      duplicates=0)
                    yield scored(part)
        except (HandError, OSError) as error:
            reason = str(error).removeprefix(f"{path}: ")
            pending.rejects = pl.concat([pending.rejects, pl.DataFrame(
                [{"source": str(path), "line": None, "hand_id": None, "reason": reason,
                  "raw": None}], schema=REJECTS_SCHEMA)])
        yield scored(pending)
