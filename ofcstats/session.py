"""What only a session knows: hand order, fantasyland repeat limits, games and money.

A hand's points are fixed by its boards; three things need the hands around it:

- **Fantasyland repeats** (RULES.md §6): a seat that has already repeated
  ``repeat_limit`` times in the game (or, with ``repeat_scope = "streak"``, in a row)
  does not stay, whatever it set. The log says which seats played each hand in
  fantasyland; a run of consecutive such hands is a streak.
- **Games**: a game ("partie") is one orbit of the button, plus the fantasyland hands
  played in it, on which the button does not move, ended early by a timeout
  (:func:`game_ends`).
- **Money**: points times the point value, with the per-game loss cap: a player loses
  at most ``loss_cap`` points in one game. **Decision**: what a capped loser does not
  pay is taken from the winners of that game in proportion to their winnings, so money
  still sums to zero.

Every function here is columnar: sorts, cumulative sums and window functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from ofcstats.rules.model import Ruleset
from ofcstats.stats import as_text


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


def hand_order(hands: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Add ``order`` (hands in play order within their session, from 0) and ``game``.

    Play order is ``played_at`` when given, else the order the hands were logged
    (``hand_key``, or ``source`` and ``line``). ``fantasyland_hand`` must say whether
    any seat played the hand in fantasyland, ``timed_out_hand`` (optional) whether any
    seat timed out in it. Games end where :func:`game_ends` says.
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
    games = _games(first, start, ordered.get_column("fantasyland_hand").to_numpy(),
                   ordered.get_column("timed_out_hand").to_numpy(),
                   ordered.get_column("n_seats").to_numpy())
    return ordered.with_columns(order=pl.Series(index - start, dtype=pl.Int64),
                                game=pl.Series(games, dtype=pl.Int64)).lazy()


def _games(first: npt.NDArray[np.bool_], start: npt.NDArray[np.int64],
           fantasyland: npt.NDArray[np.bool_], timed_out: npt.NDArray[np.bool_],
           n_seats: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """Game numbers within sessions, hands in play order (``first``: a session's first
    hand, ``start``: where its session starts), cut by :func:`game_ends`."""
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
    began[first] = 0
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


def limit_repeats(results: pl.DataFrame, seats: pl.DataFrame, hands: pl.DataFrame,
                  rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """:func:`apply_repeat_limits` over whole sessions: play order and games from
    ``hands`` (as :func:`hand_order` wants them), streaks and repeats from ``seats``
    (``hand_id``, ``seat``, ``player``, ``fantasyland``)."""
    order = hand_order(hands).collect()
    streaks = fantasyland_streaks(seats.select("hand_id", "seat", "player", "fantasyland"),
                                  order)
    return apply_repeat_limits(results, streaks, rulesets)


def game_money(results: pl.LazyFrame, hands: pl.LazyFrame,
               rulesets: Sequence[Ruleset]) -> pl.LazyFrame:
    """Per ruleset, session, game and player: points, and money after the loss cap.

    ``hands`` needs ``hand_id``, ``session_id``, ``game`` and ``point_value`` (the
    hand's own, or null for the ruleset's).
    """
    terms = pl.DataFrame(
        {"ruleset": [r.name for r in rulesets],
         "ruleset_point_value": [float(r.point_value) for r in rulesets],
         "loss_cap": [None if r.loss_cap is None else float(r.loss_cap) for r in rulesets]},
        schema={"ruleset": pl.String, "ruleset_point_value": pl.Float64,
                "loss_cap": pl.Float64},
    ).lazy()
    per_game = results.with_columns(pl.col("ruleset").cast(pl.String)).join(
        hands.select("hand_id", "session_id", "game", "point_value"), on="hand_id",
    ).join(terms, on="ruleset").group_by("ruleset", "session_id", "game", "player").agg(
        points=pl.col("points").sum(),
        hands=pl.len(),
        # The hand's own point value when the log gives one, else the ruleset's.
        point_value=pl.col("point_value").fill_null(pl.col("ruleset_point_value")).mean(),
        loss_cap=pl.col("loss_cap").first(),
    )
    game = ["ruleset", "session_id", "game"]
    capped = pl.when(pl.col("loss_cap").is_not_null() & (pl.col("points") < -pl.col("loss_cap"))) \
        .then(-pl.col("loss_cap")).otherwise(pl.col("points"))
    shortfall = (capped - pl.col("points")).sum().over(game)
    winnings = pl.col("points").clip(lower_bound=0)
    won = winnings.sum().over(game)
    settled = pl.when(pl.col("points") > 0).then(
        pl.col("points") - shortfall * winnings / won).otherwise(capped)
    return per_game.with_columns(settled_points=settled.cast(pl.Float64)).with_columns(
        money=pl.col("settled_points") * pl.col("point_value"),
    ).sort([*game, "player"])


MONEY_COLUMNS = ("ruleset", "hand_key", "session_id", "game", "player", "points",
                 "point_value")
"""The columns :func:`money_by_player` reads."""


def money_by_player(scored: pl.DataFrame, rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """Money per player and ruleset over a scored frame (see :mod:`ofcstats.pipeline`):
    points times the point value, each game's loss capped (:func:`game_money`)."""
    hands = scored.select(pl.col("hand_key").alias("hand_id"), "session_id", "game",
                          "point_value").unique("hand_id")
    per_game = game_money(
        scored.select("ruleset", pl.col("hand_key").alias("hand_id"), "player",
                      "points").lazy(), hands.lazy(), rulesets)
    return as_text(per_game.group_by("player", "ruleset").agg(money=pl.col("money").sum())
                   .collect())
