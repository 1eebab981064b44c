"""What only a session knows: hand order, fantasyland repeat limits, games and money.

A hand's points are fixed by its boards; three things need the hands around it:

- **Fantasyland repeats** (RULES.md §6): a seat that has already repeated
  ``repeat_limit`` times in a row does not stay, whatever it set. The log says which
  seats played each hand in fantasyland; a run of consecutive such hands is a streak.
- **Games**: a game ("partie") is one orbit of the button, plus the fantasyland hands
  played in it, on which the button does not move (RULES.md §5, §6).
- **Money**: points times the point value, with the per-game loss cap: a player loses
  at most ``loss_cap`` points in one game. **Decision**: what a capped loser does not
  pay is taken from the winners of that game in proportion to their winnings, so money
  still sums to zero.

Every function here is columnar: window functions over (session, player) in hand order.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ofcstats.rules.model import Ruleset


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


def fantasyland_streaks(seats: pl.LazyFrame, order: pl.LazyFrame) -> pl.LazyFrame:
    """Add ``streak``: how many hands in a row, this one included, the player has played
    in fantasyland in this session (0 when not in fantasyland now)."""
    with_order = seats.join(order.select("hand_id", "session_id", "order"), on="hand_id")
    in_fl = pl.col("fantasyland").cast(pl.Int64)
    # Each break (a hand out of fantasyland) starts a new run; count within the run.
    run = (1 - in_fl).cum_sum().over("session_id", "player", order_by="order")
    return with_order.with_columns(
        streak=pl.when(pl.col("fantasyland"))
        .then(in_fl.cum_sum().over("session_id", "player", run, order_by="order"))
        .otherwise(0).cast(pl.Int16),
    )


def apply_repeat_limits(results: pl.LazyFrame, streaks: pl.LazyFrame,
                        rulesets: Sequence[Ruleset]) -> pl.LazyFrame:
    """Cap stays by each ruleset's repeat limit; add ``fantasyland_entered`` and
    ``fantasyland_stayed`` ("would have entered / stayed" under that ruleset)."""
    limits = pl.DataFrame(
        {"ruleset": [r.name for r in rulesets],
         "repeat_limit": [r.fantasyland.repeat_limit for r in rulesets]},
        schema={"ruleset": pl.String, "repeat_limit": pl.Int16},
    ).lazy()
    joined = results.with_columns(pl.col("ruleset").cast(pl.String)).join(
        streaks.select("hand_id", "seat", "fantasyland", "streak"), on=["hand_id", "seat"],
    ).join(limits, on="ruleset", how="left")
    # A seat on its k-th hand in a row in fantasyland has repeated k - 1 times.
    over_limit = pl.col("repeat_limit").is_not_null() & (
        pl.col("streak") - 1 >= pl.col("repeat_limit"))
    earned = pl.col("fantasyland_next") & ~(pl.col("fantasyland") & over_limit)
    return joined.with_columns(
        fantasyland_next=earned,
        fantasyland_cards=pl.when(earned).then(pl.col("fantasyland_cards")).otherwise(0)
        .cast(pl.Int8),
        fantasyland_entered=earned & ~pl.col("fantasyland"),
        fantasyland_stayed=earned & pl.col("fantasyland"),
    ).drop("repeat_limit", "streak")


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
