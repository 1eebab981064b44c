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


def hand_order(hands: pl.DataFrame | pl.LazyFrame, split_on: Sequence[str] = ()
               ) -> pl.LazyFrame:
    """Add ``order`` (hands in play order within their session, from 0) and ``game``.

    Play order is ``played_at`` when given, else the order the hands were logged
    (``hand_key``, or ``source`` and ``line``). ``fantasyland_hand`` must say whether
    any seat played the hand in fantasyland. A change in any of the ``split_on``
    columns (the variant, the stakes) ends a game and starts the next orbit afresh.
    """
    lf = hands.lazy()
    columns = lf.collect_schema().names()
    tie = ["hand_key"] if "hand_key" in columns else ["source", "line"]
    ordered = lf.sort(["session_id", "played_at", *tie], nulls_last=True).with_columns(
        order=pl.int_range(pl.len(), dtype=pl.Int64).over("session_id"),
    )
    stretch = ["session_id"]
    if split_on:
        changed = pl.any_horizontal(
            pl.col(c).ne_missing(pl.col(c).shift(1)).over("session_id") for c in split_on)
        ordered = ordered.with_columns(
            _stretch=(changed & (pl.col("order") > 0)).cast(pl.Int64).cum_sum()
            .over("session_id"))
        stretch.append("_stretch")
    # A game is one orbit of the button: n_seats hands on which it moves. Fantasyland
    # hands do not move it, so they belong to the game of the hand before them.
    moves = (~pl.col("fantasyland_hand")).cast(pl.Int64)
    moved_before = moves.cum_sum().over(stretch) - moves
    orbit = pl.when(pl.col("fantasyland_hand")).then((moved_before - 1).clip(lower_bound=0)) \
        .otherwise(moved_before) // pl.col("n_seats").cast(pl.Int64)
    if not split_on:
        return ordered.with_columns(game=orbit.cast(pl.Int64))
    # Games numbered from 0 through the session, stretch after stretch.
    return ordered.with_columns(_orbit=orbit).with_columns(
        game=(pl.struct("_stretch", "_orbit").rank("dense").over("session_id") - 1)
        .cast(pl.Int64)).drop("_stretch", "_orbit")


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


GAME = ("ruleset", "session_id", "game")
"""What identifies one game's settlement."""


def settle(per_game: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Settle each game as the table did: add ``settled_points`` and ``money``.

    ``per_game`` has one row per ruleset, session, game and player, with the player's
    ``points`` in that game, the ruleset's ``loss_cap`` (points, or null) and the game's
    ``point_value``. Every seat of the game must be there: the cap is applied over the
    whole table, and what a capped loser does not pay is taken from the game's winners
    in proportion to their winnings, so each game's money sums to zero.
    """
    game = list(GAME)
    capped = pl.when(pl.col("loss_cap").is_not_null()
                     & (pl.col("points") < -pl.col("loss_cap"))) \
        .then(-pl.col("loss_cap")).otherwise(pl.col("points"))
    shortfall = (capped - pl.col("points")).sum().over(game)
    winnings = pl.col("points").clip(lower_bound=0)
    won = winnings.sum().over(game)
    settled = pl.when(pl.col("points") > 0).then(
        pl.col("points") - shortfall * winnings / won).otherwise(capped)
    return per_game.lazy().with_columns(
        settled_points=settled.cast(pl.Float64),
        capped=pl.col("loss_cap").is_not_null() & (pl.col("points") < -pl.col("loss_cap")),
    ).with_columns(money=pl.col("settled_points") * pl.col("point_value"))


def stake(ruleset: Ruleset, logged: pl.Expr) -> pl.Expr:
    """Money per point for a hand under ``ruleset``: the ruleset's ``point_value`` where its
    file sets one, else the one logged with the hand, else 1."""
    if ruleset.point_value is not None:
        return pl.lit(float(ruleset.point_value), dtype=pl.Float64)
    return logged.cast(pl.Float64).fill_null(1.0)


def game_money(results: pl.LazyFrame, hands: pl.LazyFrame,
               rulesets: Sequence[Ruleset]) -> pl.LazyFrame:
    """Per ruleset, session, game and player: points, and money after the loss cap.

    ``results`` holds every seat of the games (``ruleset``, ``hand_id``, ``player``,
    ``points``); ``hands`` gives ``hand_id``, ``session_id``, ``game`` and the logged
    ``point_value`` (or null). A game has one stake: a change of stakes starts a new game
    (:func:`hand_order` with ``split_on``).
    """
    frames = []
    for ruleset in rulesets:
        frames.append(results.filter(pl.col("ruleset").cast(pl.String) == ruleset.name)
                      .with_columns(pl.col("ruleset").cast(pl.String)).join(
            hands.select("hand_id", "session_id", "game",
                         stake(ruleset, pl.col("point_value")).alias("point_value")),
            on="hand_id").with_columns(
            loss_cap=pl.lit(None if ruleset.loss_cap is None else float(ruleset.loss_cap),
                            dtype=pl.Float64)))
    if not frames:
        return pl.LazyFrame(schema={"ruleset": pl.String, "session_id": pl.String,
                                    "game": pl.Int64, "player": pl.String})
    per_game = pl.concat(frames).group_by(*GAME, "player").agg(
        points=pl.col("points").sum(),
        hands=pl.len(),
        stakes=pl.col("point_value").n_unique(),
        point_value=pl.col("point_value").first(),
        loss_cap=pl.col("loss_cap").first(),
    )
    collected = per_game.collect()
    if collected.height and collected.get_column("stakes").max() > 1:  # type: ignore[operator]
        raise ValueError("a game holds hands at two stakes: split games on the stakes")
    return settle(collected.drop("stakes")).sort([*GAME, "player"])
