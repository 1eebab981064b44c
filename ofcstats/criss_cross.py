"""Criss-cross (docs/rules.md §5): heads-up, each player sets two separate 13-card boards.

A criss-cross hand is logged as four seats, each player's name on two of them. The
boards meet heads-up, never a player's own two: with the ``both`` reading each board
plays both of the opponent's (four meetings), with ``matching`` a player's first board
(its lower seat) plays the opponent's first and the second the second (two meetings).

Each meeting is scored as the heads-up 13-card hand it is, by the scorer itself, and a
board's result is the sum of its meetings: so every rule of the ruleset (naturals,
surrender, royalties, the royalty pool, the table bonus) is settled meeting by meeting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt
import polars as pl

from ofcstats.records import RESULT_SCHEMA, Scored
from ofcstats.rules.model import Ruleset
from ofcstats.showdown import CRISS_CROSS_MATCHING, showdown_key
from ofcstats.variants import Variant

READING_PAIRS = {"both": ((0, 0), (0, 1), (1, 0), (1, 1)), "matching": ((0, 0), (1, 1))}
"""(first player's board, second player's board) of each meeting, by reading; a player's
first board is the one on its lower seat, the first player the one on the hand's
lowest seat."""


def crossed(seats: pl.DataFrame) -> pl.Series:
    """Per seat row, whether its hand is a criss-cross hand."""
    return seats.get_column("variant").cast(pl.String) == Variant.CRISS_CROSS.value


def meetings(seats: pl.DataFrame, reading: str) -> tuple[pl.DataFrame, npt.NDArray[np.intp]]:
    """The heads-up hands the boards of criss-cross ``seats`` play under ``reading``, as a
    seats frame (``hand_id`` the meeting's number, ``variant`` chinese-13), and for each of
    its rows the row of ``seats`` it is."""
    hand, player = pl.col("hand_id"), pl.col("player")
    sides = seats.select(hand, player, "seat").with_row_index("_row").with_columns(
        _side=(pl.col("seat").min().over(hand, player) != pl.col("seat").min().over(hand)),
        _board=(pl.col("seat") != pl.col("seat").min().over(hand, player)),
    ).select("_row", "hand_id", pl.col("_side").cast(pl.Int8), pl.col("_board").cast(pl.Int8))
    first = sides.filter(pl.col("_side") == 0)
    second = sides.filter(pl.col("_side") == 1)
    pairs = pl.DataFrame([{"_board": a, "_other": b} for a, b in READING_PAIRS[reading]],
                         schema={"_board": pl.Int8, "_other": pl.Int8})
    met = first.join(pairs, on="_board").join(
        second.select("hand_id", pl.col("_board").alias("_other"), pl.col("_row").alias("_them")),
        on=["hand_id", "_other"]).sort("_row", "_them")
    rows = np.stack([met.get_column("_row").to_numpy(), met.get_column("_them").to_numpy()],
                    axis=1).ravel().astype(np.intp)
    frame = seats[rows].with_columns(
        hand_id=pl.Series(np.repeat(np.arange(met.height, dtype=np.int64), 2)),
        variant=pl.lit(Variant.CHINESE_13.value, dtype=seats.schema["variant"]))
    return frame, rows


_SUMMED = ("points", "royalties", "royalty_top", "royalty_middle", "royalty_bottom",
           "royalty_points", "rows_top", "rows_middle", "rows_bottom", "wins_top",
           "wins_middle", "wins_bottom", "scoops", "scooped")
"""Result columns a board sums over its meetings; the others (``fouled``, fantasyland,
never earned in 13-card play) are the board's own."""


def _per_board(frame: pl.DataFrame, rows: npt.NDArray[np.intp], n: int) -> pl.DataFrame:
    """Meetings' rows summed per board (the ``n`` rows of the criss-cross seats), in the
    boards' order."""
    present = [c for c in _SUMMED if c in frame.columns]
    kept = [c for c in frame.columns if c not in present and c != "unit_points"]
    # A meeting of two boards at unit 1 has no unit points (its points are): a board
    # with unit points in any meeting sums the others' points with them.
    weighted = [pl.when(pl.col("unit_points").is_not_null().any()).then(
        pl.col("unit_points").fill_null(pl.col("points")).sum()).alias("unit_points")] \
        if "unit_points" in frame.columns else []
    summed = frame.with_columns(_row=pl.Series(rows, dtype=pl.Int64)).group_by("_row").agg(
        *[pl.col(c).sum().cast(frame.schema[c]) for c in present],
        *[pl.col(c).first() for c in kept], *weighted)
    # Every board meets at least one of the opponent's.
    return pl.DataFrame({"_row": np.arange(n, dtype=np.int64)}).join(
        summed, on="_row", how="left", maintain_order="left").select(frame.columns)


ScoreMeetings = Callable[[pl.DataFrame, Sequence[Ruleset]], Scored]


def score(seats: pl.DataFrame, rulesets: Sequence[Ruleset], score_meetings: ScoreMeetings
          ) -> Scored:
    """Criss-cross ``seats`` scored under every ruleset as :func:`ofcstats.score`'s parts
    are: one block per ruleset listing ``seats`` in their order, and the showdowns of
    every showdown key the rulesets play (with :data:`CRISS_CROSS_MATCHING`: the
    matching meetings; without: both). ``score_meetings`` scores the heads-up hands."""
    n = seats.height
    readings = {"both": [r for r in rulesets if r.criss_cross == "both"],
                "matching": [r for r in rulesets if r.criss_cross == "matching"]}
    if not readings["both"]:  # showdown key 0 (every seat's plain showdown) is always kept
        readings["both"] = [replace(rulesets[0], criss_cross="both")]
    blocks: dict[str, pl.DataFrame] = {}
    showdowns: dict[int, pl.DataFrame] = {}
    bits = np.zeros(n, dtype=np.uint8)
    for reading, played in readings.items():
        if not played:
            continue
        frame, rows = meetings(seats, reading)
        scored = score_meetings(frame, played)
        size = frame.height
        for index, ruleset in enumerate(played):
            if ruleset in rulesets and ruleset.criss_cross == reading:  # not a stand-in
                block = scored.results.slice(index * size, size)
                blocks[ruleset.name] = _per_board(block.drop("ruleset"), rows, n)
        for key, rows_of_key in scored.showdowns.items():
            if bool(key & CRISS_CROSS_MATCHING) == (reading == "matching"):
                showdowns[key] = _per_board(rows_of_key, rows, n)
        np.bitwise_or.at(bits, rows, scored.showdown_bits.to_numpy())
        if reading == "matching":
            bits |= np.uint8(CRISS_CROSS_MATCHING)
    names = pl.Enum([r.name for r in rulesets])
    originals = seats.select("hand_id", pl.col("seat").cast(pl.Int8), "player")
    frames = []
    for ruleset in rulesets:
        block = blocks[ruleset.name].with_columns(originals).with_columns(
            ruleset=pl.Series([ruleset.name], dtype=names).new_from_index(0, n))
        frames.append(block.select(list(RESULT_SCHEMA)))
    for key in {showdown_key(r) for r in rulesets} | {0}:
        showdowns[key] = showdowns[key].with_columns(originals.select("hand_id", "seat"))
    return Scored(results=pl.concat(frames, rechunk=False), showdowns=showdowns,
                  showdown_bits=pl.Series(bits))
