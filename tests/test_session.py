"""Session logic: play order, games, fantasyland repeat limits, money and the loss cap."""

from __future__ import annotations

import polars as pl
import pytest

from ofcstats import session
from ofcstats.rules import load_ruleset
from ofcstats.rules.model import Ruleset


def hands_frame(fantasyland_hands: list[bool], n_seats: int = 2,
                played_at: list[str | None] | None = None) -> pl.DataFrame:
    n = len(fantasyland_hands)
    return pl.DataFrame({
        "hand_id": [f"h{i}" for i in range(n)],
        "session_id": ["s1"] * n,
        "played_at": played_at or [None] * n,
        "source": ["log.jsonl"] * n,
        "line": list(range(1, n + 1)),
        "n_seats": [n_seats] * n,
        "fantasyland_hand": fantasyland_hands,
        "point_value": [None] * n,
    }, schema_overrides={"played_at": pl.String, "point_value": pl.Float64}).with_columns(
        pl.col("played_at").str.to_datetime(time_zone="UTC"))


def test_a_game_is_one_button_orbit_plus_its_fantasyland_hands() -> None:
    order = session.hand_order(hands_frame(
        [False, False, True, False, True, True, False, False])).collect()
    assert order["game"].to_list() == [0, 0, 0, 1, 1, 1, 1, 2]
    three = session.hand_order(hands_frame([False] * 7, n_seats=3)).collect()
    assert three["game"].to_list() == [0, 0, 0, 1, 1, 1, 2]


def test_play_order_follows_played_at_then_the_log() -> None:
    frame = hands_frame([False] * 3, played_at=["2026-01-01T10:02:00Z",
                                                 "2026-01-01T10:01:00Z", None])
    order = session.hand_order(frame).collect()
    assert order["hand_id"].to_list() == ["h1", "h0", "h2"]


def _streaks(flags: list[bool]) -> pl.DataFrame:
    hands = hands_frame(flags)
    seats = pl.DataFrame({"hand_id": hands["hand_id"], "seat": [1] * len(flags),
                          "player": ["ann"] * len(flags), "fantasyland": flags})
    order = session.hand_order(hands).collect()
    return session.fantasyland_streaks(seats, order).sort("order")


def test_fantasyland_streak_counts_hands_in_a_row_in_fantasyland() -> None:
    streaks = _streaks([False, True, True, True, False, True])
    assert streaks["streak"].to_list() == [0, 1, 2, 3, 0, 1]


@pytest.mark.parametrize(("ruleset", "kept"), [("american", [True, False, False]),
                                               ("mercier-deeb", [True, True, True])])
def test_standard_allows_one_repeat_in_a_row_unlimited_any(ruleset: str, kept: list[bool]
                                                           ) -> None:
    # Hand 0 earns entry; hands 1-3 are played in fantasyland and each earns a stay.
    streaks = _streaks([False, True, True, True])
    results = pl.DataFrame({
        "ruleset": [ruleset] * 4, "hand_id": streaks["hand_id"], "seat": [1] * 4,
        "fantasyland_next": [True] * 4, "fantasyland_cards": [13] * 4,
    }, schema_overrides={"fantasyland_cards": pl.Int8})
    capped = session.apply_repeat_limits(results, streaks, [load_ruleset(ruleset)]
                                         ).sort("hand_id")
    assert capped["fantasyland_entered"].to_list() == [True, False, False, False]
    # Hand 1 is the first fantasyland: staying makes hand 2 the one repeat standard
    # allows; hand 2 may not stay again. Unlimited keeps every stay.
    assert capped["fantasyland_stayed"].to_list()[1:] == kept
    assert capped.filter(~pl.col("fantasyland_next"))["fantasyland_cards"].to_list() == \
        [0] * kept.count(False)


def _money(points: dict[str, list[int]], ruleset: Ruleset) -> pl.DataFrame:
    n = len(next(iter(points.values())))
    hands = hands_frame([False] * n, n_seats=len(points))
    order = session.hand_order(hands).collect()
    results = pl.DataFrame([
        {"ruleset": ruleset.name, "hand_id": f"h{i}", "seat": s + 1, "player": player,
         "points": values[i]}
        for s, (player, values) in enumerate(points.items()) for i in range(n)
    ])
    return session.game_money(results.lazy(), order.lazy(), [ruleset]).collect()


def test_money_is_points_times_the_point_value() -> None:
    ruleset = Ruleset(**{**load_ruleset("american").__dict__, "point_value": 0.5})
    money = _money({"ann": [6, -2], "bob": [-6, 2]}, ruleset)
    assert money.sort("player")["money"].to_list() == [2.0, -2.0]


def test_the_loss_cap_limits_a_game_loss_and_winners_share_the_shortfall() -> None:
    ruleset = Ruleset(**{**load_ruleset("american").__dict__, "loss_cap": 10})
    # Three seats, one game of three hands: ann loses 30, bob wins 20, cat wins 10.
    money = _money({"ann": [-10, -10, -10], "bob": [8, 6, 6], "cat": [2, 4, 4]}, ruleset)
    by_player = dict(zip(money["player"], money["settled_points"], strict=True))
    assert by_player["ann"] == -10
    # ann's unpaid 20 comes off the winners in proportion to 20 : 10.
    assert by_player["bob"] == pytest.approx(20 - 20 * 20 / 30)
    assert by_player["cat"] == pytest.approx(10 - 20 * 10 / 30)
    assert sum(by_player.values()) == pytest.approx(0)
