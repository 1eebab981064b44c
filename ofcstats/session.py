"""What only a session knows: hand order, fantasyland repeat limits, games and money.

A hand's points are fixed by its boards; three things need the hands around it:

- **Fantasyland repeats** (docs/rules.md §6): a seat that has already repeated
  ``repeat_limit`` times in a row does not stay, whatever it set. The log says which
  seats played each hand in fantasyland; a run of consecutive such hands is a streak.
- **Games**: a game ("partie") is one orbit of the button, plus the fantasyland hands
  played in it, on which the button does not move (docs/rules.md §5, §6).
- **Money**: points times the point value, with the per-game loss cap: a player loses
  at most ``loss_cap`` points in one game. **Decision**: what a capped loser does not
  pay is taken from the winners of that game in proportion to their winnings, so money
  still sums to zero.

Every function here is columnar: sorts, cumulative sums and window functions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from ofcstats.rules.model import Ruleset
from ofcstats.stats import as_text


def hand_order(hands: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Add ``order`` (hands in play order within their session, from 0) and ``game``.

    Play order is ``played_at`` when given, else the order the hands were logged
    (``hand_key``, or ``source`` and ``line``). ``fantasyland_hand`` must say whether
    any seat played the hand in fantasyland.
    """
    lf = hands.lazy()
    columns = lf.collect_schema().names()
    tie = ["hand_key"] if "hand_key" in columns else ["source", "line"]
    ordered = lf.sort(["session_id", "played_at", *tie], nulls_last=True).with_columns(
        order=pl.int_range(pl.len(), dtype=pl.Int64).over("session_id"),
    )
    # A game is one orbit of the button: n_seats hands on which it moves. Fantasyland
    # hands do not move it, so they belong to the game of the hand before them.
    moved_before = (~pl.col("fantasyland_hand")).cast(pl.Int64).cum_sum().over("session_id") \
        - (~pl.col("fantasyland_hand")).cast(pl.Int64)
    game = pl.when(pl.col("fantasyland_hand")).then((moved_before - 1).clip(lower_bound=0)) \
        .otherwise(moved_before) // pl.col("n_seats").cast(pl.Int64)
    return ordered.with_columns(game=game.cast(pl.Int64))


def fantasyland_streaks(seats: pl.DataFrame, order: pl.DataFrame) -> pl.DataFrame:
    """Add ``streak``: how many hands in a row, this one included, the player has played
    in fantasyland in this session (0 when not in fantasyland now).

    ``order`` gives each hand's ``session_id`` and play ``order`` (:func:`hand_order`).
    """
    frame = seats.join(order.select("hand_id", "session_id", "order"), on="hand_id",
                       maintain_order="left")
    # Sessions and players as integer codes: the sort only needs each (session, player)
    # together and in play order, and sorting integers is several times faster.
    ranked = frame.select(
        "fantasyland",
        session=pl.col("session_id").cast(pl.Categorical).to_physical(),
        player=pl.col("player").cast(pl.Categorical).to_physical(),
        order="order",
    ).with_row_index("_row").sort("session", "player", "order")
    in_fl = ranked.get_column("fantasyland").to_numpy().astype(bool)
    n = len(in_fl)
    if n == 0:
        return frame.with_columns(streak=pl.lit(0, dtype=pl.Int16))
    session = ranked.get_column("session")
    player = ranked.get_column("player")
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = ((session.slice(1) != session.slice(0, n - 1))
                     | (player.slice(1) != player.slice(0, n - 1))).to_numpy()
    # A run of fantasyland hands starts after a hand out of it or at a new (session,
    # player); the streak is the count of fantasyland hands since that start.
    boundary = new_group | ~np.concatenate([[False], in_fl[:-1]])
    start = np.maximum.accumulate(np.where(boundary, np.arange(n), 0))
    streak = np.where(in_fl, np.arange(n) - start + 1, 0).astype(np.int16)
    placed = np.empty(n, dtype=np.int16)
    placed[ranked.get_column("_row").to_numpy()] = streak
    return frame.with_columns(streak=pl.Series(placed))


def apply_repeat_limits(results: pl.DataFrame, streaks: pl.DataFrame,
                        rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """Cap stays by each ruleset's repeat limit; add ``fantasyland_earned`` (before the
    cap) and ``fantasyland_entered`` / ``fantasyland_stayed`` ("would have entered /
    stayed" under that ruleset).

    ``results`` is laid out as :func:`ofcstats.score.score` returns it: one block per
    ruleset, in ``rulesets`` order, each block listing the same seats in the same order.
    """
    blocks = len(rulesets)
    per_block = results.height // blocks if blocks else 0
    if per_block * blocks != results.height:
        raise ValueError("results must hold one equal block of seats per ruleset")
    seats = results.slice(0, per_block).select("hand_id", "seat")
    aligned = streaks.select("hand_id", "seat", "fantasyland", "streak")
    if not (aligned.height == per_block
            and aligned.select("hand_id", "seat").equals(seats)):  # usually the same seats
        aligned = seats.join(aligned, on=["hand_id", "seat"], how="left",
                             maintain_order="left")
    in_fl = np.tile(aligned.get_column("fantasyland").fill_null(False).to_numpy(), blocks)
    streak = np.tile(aligned.get_column("streak").fill_null(0).to_numpy(), blocks)
    no_limit = np.iinfo(np.int16).max
    limit = np.repeat(np.array([no_limit if r.fantasyland.repeat_limit is None
                                else r.fantasyland.repeat_limit for r in rulesets],
                               dtype=np.int32), per_block)
    earned = results.get_column("fantasyland_next").to_numpy().astype(bool)
    # A seat on its k-th hand in a row in fantasyland has repeated k - 1 times.
    allowed = earned & ~(in_fl & (streak.astype(np.int32) - 1 >= limit))
    cards = np.where(allowed, results.get_column("fantasyland_cards").to_numpy(), 0)
    return results.with_columns(
        fantasyland_earned=pl.Series(earned),
        fantasyland_next=pl.Series(allowed),
        fantasyland_cards=pl.Series(cards.astype(np.int8)),
        fantasyland_entered=pl.Series(allowed & ~in_fl),
        fantasyland_stayed=pl.Series(allowed & in_fl),
    )


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
