"""What only a session knows: hand order, fantasyland repeat limits, games and money.

A hand's points are fixed by its boards; three things need the hands around it:

- **Fantasyland repeats** (docs/rules.md §6): a seat that has already repeated
  ``repeat_limit`` times in the game (or, with ``repeat_scope = "streak"``, in a row)
  does not stay, whatever it set. The log says which seats played each hand in
  fantasyland; a run of consecutive such hands is a streak.
- **Games**: a game ("partie") is one orbit of the button, plus the fantasyland hands
  played in it, on which the button does not move, ended early by a timeout
  (:func:`game_ends`); a change of variant or of the logged stakes starts a new one
  (:data:`GAME_SPLIT`). Games are what happened at the table: the same games bound the
  fantasyland repeats and the loss cap, whatever a ruleset values a point at.
- **Money**: points times the point value, with the per-game loss cap: a player loses
  at most ``loss_cap`` points in one game. **Decision**: what a capped loser does not
  pay is taken from the winners of that game in proportion to their winnings, so money
  still sums to zero. With per-player units (:mod:`ofcstats.units`) money is settled on
  the unit-weighted points, and a player's cap is ``loss_cap`` times the player's unit.

Every function here is columnar: sorts, cumulative sums and window functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import polars as pl

from ofcstats.rules.model import Ruleset

GAME_SPLIT = ("variant", "stake")
"""The columns whose change starts a new game (:func:`hand_order`'s ``split_on``): the
variant, and the stake logged with the hand (``stake``: its ``point_value``, else 1). A
ruleset's own ``point_value`` values the points of a game; it does not make the games."""


def logged_stake(point_value: pl.Expr) -> pl.Expr:
    """A hand's logged stake, a :data:`GAME_SPLIT` column: its ``point_value``, else 1
    (the store's statements say the same: :data:`ofcstats.store.results.STAKE`)."""
    return point_value.cast(pl.Float64).fill_null(1.0)


def game_ends(orbit_done: Any, timed_out: Any, fantasyland_owed: Any) -> Any:
    """Whether a game ends right after a hand: the one definition of a game.

    A game ("partie") is one orbit of the button; the button does not move on a
    fantasyland hand, so every fantasyland lengthens the game by one hand. A timeout
    ends the game right after the hand in which a player timed out, unless a fantasyland
    is owed: then it goes on until every fantasyland is played (docs/rules-sources.md).

    ``orbit_done``: the button has gone round (this hand completes the orbit);
    ``timed_out``: some player timed out in this game; ``fantasyland_owed``: the next
    hand is played in fantasyland by someone. Works element by element on numpy arrays
    and on Polars expressions alike: :func:`hand_order` and the simulator both use it.
    """
    return ~fantasyland_owed & (orbit_done | timed_out)


def hand_order(hands: pl.DataFrame | pl.LazyFrame, split_on: Sequence[str] = (),
               also: dict[str, Sequence[str]] | None = None) -> pl.LazyFrame:
    """Add ``order`` (hands in play order within their session, from 0) and ``game``.

    Play order is ``played_at`` when given, else the order the hands were logged
    (``hand_key``, or ``source`` and ``line``). ``fantasyland_hand`` must say whether
    any seat played the hand in fantasyland, ``timed_out_hand`` (optional) whether any
    seat timed out in it. Games end where :func:`game_ends` says, and where any
    of the ``split_on`` columns (the variant, the stakes) changes. ``also`` adds a game
    column of each name, split on its own columns, from the same sort.
    """
    lf = hands.lazy()
    columns = lf.collect_schema().names()
    tie = ["hand_key"] if "hand_key" in columns else ["source", "line"]
    if "timed_out_hand" not in columns:
        lf = lf.with_columns(timed_out_hand=pl.lit(False))
    ordered = lf.sort(["session_id", "played_at", *tie], nulls_last=True).collect()
    first = np.ones(ordered.height, dtype=bool)  # a session's first hand
    sessions = ordered.get_column("session_id")
    if ordered.height > 1:
        first[1:] = (sessions.slice(1) != sessions.slice(0, ordered.height - 1)).to_numpy()
    index = np.arange(ordered.height)
    start = np.maximum.accumulate(np.where(first, index, 0))

    def games(split_on: Sequence[str]) -> pl.Series:
        split = np.zeros(ordered.height, dtype=bool)  # the variant or the stakes changed
        for column in split_on:
            values = ordered.get_column(column)
            if ordered.height > 1:
                split[1:] |= values.slice(1).ne_missing(values.slice(0, ordered.height - 1)
                                                        ).to_numpy()
        return pl.Series(_games(first, start, ordered.get_column("fantasyland_hand").to_numpy(),
                                ordered.get_column("timed_out_hand").to_numpy(),
                                ordered.get_column("n_seats").to_numpy(), split & ~first),
                         dtype=pl.Int64)

    return ordered.with_columns(order=pl.Series(index - start, dtype=pl.Int64),
                                game=games(split_on),
                                **{name: games(on) for name, on in (also or {}).items()}).lazy()


def _games(first: npt.NDArray[np.bool_], start: npt.NDArray[np.int64],
           fantasyland: npt.NDArray[np.bool_], timed_out: npt.NDArray[np.bool_],
           n_seats: npt.NDArray[np.integer], split: npt.NDArray[np.bool_] | None = None
           ) -> npt.NDArray[np.int64]:
    """Game numbers within sessions, hands in play order (``first``: a session's first
    hand, ``start``: where its session starts), cut by :func:`game_ends` and before each
    hand of ``split`` (a new stake or variant: a new game, its orbit counted afresh)."""
    session_first = first
    if split is not None:
        first = first | split
    n = len(first)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    index = np.arange(n)
    fantasyland = fantasyland.astype(bool)
    moves = ~fantasyland
    # The next hand is a fantasyland hand of the same session: a fantasyland is owed.
    owed = np.zeros(n, dtype=bool)
    owed[:-1] = fantasyland[1:] & ~first[1:]
    # Timed out in this game: since the last hand on which the button moved (a timeout
    # before it would have ended the game already).
    stretch = np.maximum.accumulate(np.where(first | moves, index, 0))
    last_timeout = np.maximum.accumulate(np.where(timed_out.astype(bool), index, -1))
    timed = last_timeout >= stretch
    # Timeouts cut a session into parts; in each, the button's orbits count from 0.
    cut = game_ends(np.zeros(n, dtype=bool), timed, owed)
    part = np.maximum.accumulate(np.where(first | np.concatenate([[False], cut[:-1]]),
                                          index, 0))
    counted = np.cumsum(moves)
    moved = counted - counted[part] + moves[part]
    orbit_done = (moved > 0) & (moved % n_seats.astype(np.int64) == 0)
    ends = game_ends(orbit_done, timed, owed)
    # A game starts after the hand that ended one, within the session.
    began = np.concatenate([[0], ends[:-1]]).astype(np.int64)
    began[first] = 1
    began[session_first] = 0
    total = np.cumsum(began)
    return total - total[start]


def fantasyland_streaks(seats: pl.DataFrame, order: pl.DataFrame) -> pl.DataFrame:
    """Add ``streak``: how many hands in a row, this one included, the player has played
    in fantasyland in this session (0 when not in fantasyland now); and ``repeats``: how
    many repeats (fantasyland hands right after the player's own fantasyland hand) the
    player has played in this game, this hand included.

    ``order`` gives each hand's ``session_id``, play ``order`` and ``game``
    (:func:`hand_order`).
    """
    frame = seats.join(order.select("hand_id", "session_id", "order", "game"), on="hand_id",
                       maintain_order="left")
    # Sessions and players as integer codes: the sort only needs each (session, player)
    # together and in play order, and sorting integers is several times faster.
    ranked = frame.select(
        "fantasyland", "game",
        session=pl.col("session_id").cast(pl.Categorical).to_physical(),
        player=pl.col("player").cast(pl.Categorical).to_physical(),
        order="order",
    ).with_row_index("_row").sort("session", "player", "order")
    in_fl = ranked.get_column("fantasyland").to_numpy().astype(bool)
    n = len(in_fl)
    frame = frame.drop("game")
    if n == 0:
        return frame.with_columns(streak=pl.lit(0, dtype=pl.Int16),
                                  repeats=pl.lit(0, dtype=pl.Int16))
    session = ranked.get_column("session")
    player = ranked.get_column("player")
    game = ranked.get_column("game").to_numpy()
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = ((session.slice(1) != session.slice(0, n - 1))
                     | (player.slice(1) != player.slice(0, n - 1))).to_numpy()
    index = np.arange(n)
    # A run of fantasyland hands starts after a hand out of it or at a new (session,
    # player); the streak is the count of fantasyland hands since that start.
    boundary = new_group | ~np.concatenate([[False], in_fl[:-1]])
    start = np.maximum.accumulate(np.where(boundary, index, 0))
    streak = np.where(in_fl, index - start + 1, 0).astype(np.int16)
    # Repeats: hands on the second or later place of a run, counted from the start of
    # the (session, player, game).
    repeat = (streak >= 2).astype(np.int64)
    game_start = new_group | np.concatenate([[True], game[1:] != game[:-1]])
    begin = np.maximum.accumulate(np.where(game_start, index, 0))
    counted = np.cumsum(repeat)
    repeats = (counted - counted[begin] + repeat[begin]).astype(np.int16)
    rows = ranked.get_column("_row").to_numpy()
    placed = np.empty((2, n), dtype=np.int16)
    placed[0, rows] = streak
    placed[1, rows] = repeats
    return frame.with_columns(streak=pl.Series(placed[0]), repeats=pl.Series(placed[1]))


def apply_repeat_limits(results: pl.DataFrame, streaks: pl.DataFrame,
                        rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """Cap stays by each ruleset's repeat limit; add ``fantasyland_earned`` (before the
    cap) and ``fantasyland_entered`` / ``fantasyland_stayed`` ("would have entered /
    stayed" under that ruleset).

    A seat in fantasyland may stay while the repeats it has played, in the game or in
    the current run by the policy's ``repeat_scope``, are fewer than ``repeat_limit``.
    ``results`` is laid out as :func:`ofcstats.score.score` returns it: one block per
    ruleset, in ``rulesets`` order, each block listing the same seats in the same order.
    """
    blocks = len(rulesets)
    per_block = results.height // blocks if blocks else 0
    if per_block * blocks != results.height:
        raise ValueError("results must hold one equal block of seats per ruleset")
    seats = results.slice(0, per_block).select("hand_id", "seat")
    aligned = streaks.select("hand_id", "seat", "fantasyland", "streak", "repeats")
    if not (aligned.height == per_block
            and aligned.select("hand_id", "seat").equals(seats)):  # usually the same seats
        aligned = seats.join(aligned, on=["hand_id", "seat"], how="left",
                             maintain_order="left")
    in_fl = np.tile(aligned.get_column("fantasyland").fill_null(False).to_numpy(), blocks)
    # A seat on its k-th hand in a row in fantasyland has repeated k - 1 times in a row.
    in_a_row = aligned.get_column("streak").fill_null(0).to_numpy().astype(np.int32) - 1
    in_game = aligned.get_column("repeats").fill_null(0).to_numpy().astype(np.int32)
    repeated = np.concatenate([in_game if r.fantasyland.repeat_scope == "game" else in_a_row
                               for r in rulesets]) if blocks else np.zeros(0, np.int32)
    no_limit = np.iinfo(np.int16).max
    limit = np.repeat(np.array([no_limit if r.fantasyland.repeat_limit is None
                                else r.fantasyland.repeat_limit for r in rulesets],
                               dtype=np.int32), per_block)
    earned = results.get_column("fantasyland_next").to_numpy().astype(bool)
    allowed = earned & ~(in_fl & (repeated >= limit))
    cards = np.where(allowed, results.get_column("fantasyland_cards").to_numpy(), 0)
    return results.with_columns(
        fantasyland_earned=pl.Series(earned),
        fantasyland_next=pl.Series(allowed),
        fantasyland_cards=pl.Series(cards.astype(np.int8)),
        fantasyland_entered=pl.Series(allowed & ~in_fl),
        fantasyland_stayed=pl.Series(allowed & in_fl),
    )


GAME = ("ruleset", "session_id", "game")
"""What identifies one game's settlement."""


def limit_repeats(results: pl.DataFrame, seats: pl.DataFrame, hands: pl.DataFrame,
                  rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """:func:`apply_repeat_limits` over whole sessions: play order and games from
    ``hands`` (as :func:`hand_order` wants them, with the :data:`GAME_SPLIT` columns),
    streaks and repeats from ``seats`` (``hand_id``, ``seat``, ``player``,
    ``fantasyland``). ``hands`` and ``seats`` hold every hand of the sessions, of every
    variant, even when ``results`` holds some of them only: a session's order, games
    and streaks are the whole table's."""
    order = hand_order(hands, split_on=GAME_SPLIT).collect()
    streaks = fantasyland_streaks(seats.select("hand_id", "seat", "player", "fantasyland"),
                                  order)
    return apply_repeat_limits(results, streaks, rulesets)


SETTLE_SQL = """
WITH t AS (
    SELECT *, CASE WHEN loss_cap IS NOT NULL AND unit_points < -loss_cap * unit
                   THEN -loss_cap * unit ELSE unit_points END::DOUBLE AS _capped
    FROM ({source})
), g AS (
    SELECT ruleset, session_id, game, sum(_capped - unit_points) AS _shortfall,
           sum(greatest(unit_points, 0)) AS _won
    FROM t GROUP BY ALL
), s AS (
    SELECT t.* EXCLUDE (_capped),
           CASE WHEN unit_points > 0
                THEN unit_points - g._shortfall * greatest(unit_points, 0) / g._won
                ELSE _capped END::DOUBLE AS settled_points,
           coalesce(loss_cap IS NOT NULL AND unit_points < -loss_cap * unit, false) AS capped
    FROM t JOIN g USING (ruleset, session_id, game)
)
SELECT *, settled_points * point_value AS money FROM s
"""
"""Settling as SQL over ``{source}`` (rows as :func:`settle` describes): DuckDB settles
the store's games without them leaving the database, and :func:`settle` a frame's, by
the same statement. It settles ``unit_points`` (the points weighted by the units the
player's pairs settle at; the points themselves where every unit is 1), capping a
player's loss at ``loss_cap`` times the player's own ``unit``."""


def settle(per_game: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Settle each game as the table did: add ``settled_points`` and ``money``.

    ``per_game`` has one row per ruleset, session, game and player, with the player's
    ``points`` in that game, the ruleset's ``loss_cap`` (points, or null) and the game's
    ``point_value``; with per-player units (docs/rules.md §5) also its ``unit_points``
    (default: the points) and its ``unit`` (default 1): money is then settled on the unit
    points, and the cap is ``loss_cap`` times the player's unit. Every seat of the game
    must be there: the cap is applied over the whole table, and what a capped loser does
    not pay is taken from the game's winners in proportion to their winnings, so each
    game's money sums to zero.
    """
    frame = per_game.lazy().collect().with_row_index("_row")
    if "unit_points" not in frame.columns:
        frame = frame.with_columns(unit_points=pl.col("points").cast(pl.Float64))
    if "unit" not in frame.columns:
        frame = frame.with_columns(unit=pl.lit(1.0))
    con = duckdb.connect()
    try:
        con.register("per_game", frame)
        settled = con.sql(SETTLE_SQL.format(source="SELECT * FROM per_game")
                          + " ORDER BY _row").pl()
    finally:
        con.close()
    return settled.drop("_row").lazy()


def stake(ruleset: Ruleset, logged: pl.Expr) -> pl.Expr:
    """Money per point for a hand under ``ruleset``: the ruleset's ``point_value`` where its
    file sets one, else the one logged with the hand, else 1."""
    if ruleset.point_value is not None:
        return pl.lit(float(ruleset.point_value), dtype=pl.Float64)
    return logged.cast(pl.Float64).fill_null(1.0)
