"""Statistics, each checked on a small case computed by hand."""

from __future__ import annotations

import math

import polars as pl
import pytest

from ofcstats import stats


def scored(rows: list[dict]) -> pl.DataFrame:
    defaults = {
        "ruleset": "american", "session_id": "s1", "variant": "pineapple", "n_seats": 2,
        "fantasyland": False, "fouled": False, "fantasyland_entered": False,
        "fantasyland_stayed": False, "royalty_top": 0, "royalty_middle": 0,
        "royalty_bottom": 0, "royalty_points": 0, "scoops": 0, "scooped": 0,
        "wins_top": 0, "wins_middle": 0, "wins_bottom": 0, "reported_points": None,
        "played_ruleset": "american", "seat": 1,
    }
    return pl.DataFrame([{**defaults, **row} for row in rows])


def ann_and_bob() -> pl.DataFrame:
    ann = [3, -1, 2, 0]
    rows = []
    for i, points in enumerate(ann):
        rows.append({"hand_id": f"h{i}", "player": "ann", "points": points, "seat": 1,
                     "session_id": f"s{i // 2}"})
        rows.append({"hand_id": f"h{i}", "player": "bob", "points": -points, "seat": 2,
                     "session_id": f"s{i // 2}"})
    return scored(rows)


def test_mean_sd_interval_and_hands_for_one_point() -> None:
    table = stats.player_stats(ann_and_bob())
    ann = table.filter(pl.col("player") == "ann").row(0, named=True)
    sd = math.sqrt(10 / 3)  # deviations 2, -2, 1, -1 around a mean of 1
    assert (ann["hands"], ann["total"], ann["mean"]) == (4, 4, 1.0)
    assert ann["sd"] == pytest.approx(sd)
    assert ann["ci_low"] == pytest.approx(1 - 1.959964 * sd / 2, abs=1e-5)
    assert ann["ci_high"] == pytest.approx(1 + 1.959964 * sd / 2, abs=1e-5)
    assert ann["hands_for_1"] == math.ceil((1.959964 * sd) ** 2) == 13


def test_sessions_are_counted_per_player_variant_and_ruleset() -> None:
    frame = ann_and_bob()
    table = stats.player_stats(frame)
    assert table.get_column("sessions").to_list() == [2, 2]
    one = stats.player_stats(frame.with_columns(session_id=pl.lit("only")))
    assert one.get_column("sessions").to_list() == [1, 1]


def test_rates_per_hand_per_eligible_hand_and_per_matchup() -> None:
    rows = [
        {"hand_id": "h0", "player": "ann", "points": 6, "scoops": 1, "wins_top": 1,
         "wins_middle": 1, "wins_bottom": 1, "fantasyland_entered": True},
        {"hand_id": "h1", "player": "ann", "points": -6, "fouled": True, "fantasyland": True,
         "scooped": 1},
        {"hand_id": "h2", "player": "ann", "points": 1, "wins_top": 1, "wins_bottom": 1,
         "royalty_top": 7, "fantasyland": True, "fantasyland_stayed": True},
        {"hand_id": "h3", "player": "ann", "points": 0, "variant": "chinese-13"},
    ]
    table = stats.player_stats(scored(rows))
    # No figure pools two variants: the 13-card hand has a row of its own.
    assert table["variant"].to_list() == ["chinese-13", "pineapple"]
    assert table["hands"].to_list() == [1, 3]
    assert table.row(0, named=True)["fantasyland_entry_rate"] is None
    ann = table.row(1, named=True)
    assert ann["foul_rate"] == pytest.approx(1 / 3)
    # Eligible for entry: hands outside fantasyland in a variant that has it (h0 only).
    assert ann["fantasyland_entry_rate"] == 1.0
    assert ann["fantasyland_stay_rate"] == 0.5
    assert ann["scoop_rate"] == pytest.approx(1 / 3)
    assert ann["scooped_rate"] == pytest.approx(1 / 3)
    assert (ann["win_rate_top"], ann["win_rate_middle"], ann["win_rate_bottom"]) == \
        pytest.approx((2 / 3, 1 / 3, 2 / 3))
    assert ann["royalties_top"] == pytest.approx(7 / 3)


def test_ruleset_volatility_royalty_share_and_skill_signal() -> None:
    rows = []
    # Ann wins 2 a hand and bob loses 2 under "wide"; both break even under "flat".
    for i in range(40):
        swing = 3 if i % 2 else 1
        for ruleset, ann in (("wide", swing), ("flat", swing - 2)):
            rows.append({"ruleset": ruleset, "hand_id": f"h{i}", "player": "ann",
                         "points": ann, "royalty_points": 1 if ann > 0 else 0})
            rows.append({"ruleset": ruleset, "hand_id": f"h{i}", "player": "bob",
                         "points": -ann, "royalty_points": -1 if ann > 0 else 0, "seat": 2})
    table = stats.ruleset_stats(scored(rows))
    wide = table.filter(pl.col("ruleset") == "wide").row(0, named=True)
    flat = table.filter(pl.col("ruleset") == "flat").row(0, named=True)
    # Within-player SD is 1 (values 1 and 3, or -1 and 1); player means 2 and -2.
    within = math.sqrt(40 / 39)
    assert wide["pooled_sd"] == pytest.approx(within)
    assert wide["spread"] == pytest.approx(math.sqrt(8))
    # Each hand moves a player's mean by (points - mean) / 40 = ±1/40, ann's and bob's
    # in opposite directions (their sum, 0): the noise in the variance of the two means is
    # 2 players x 40 hands x (1/40)² over 1 degree of freedom, times 40/39 for estimating
    # it from the same 40 hands.
    noise = 2 * 40 * (1 / 40) ** 2 * 40 / 39
    assert wide["skill_signal"] == pytest.approx(math.sqrt(8 - noise) / within)
    assert flat["skill_signal"] == pytest.approx(0)
    assert (wide["skill_rank"], flat["skill_rank"]) == (1, 2)
    # Royalties move 1 point each way every hand (80 in all); the rest moves 2 in the
    # hands where ann wins 3 and 0 where she wins 1, each way (80 in all).
    assert wide["royalty_share"] == pytest.approx(80 / (80 + 80))
    assert wide["sd"] == pytest.approx(pl.Series([1, 3, -1, -3] * 20).std())


def test_reported_points_that_differ_from_the_rescore_are_listed() -> None:
    rows = [
        {"hand_id": "h0", "player": "ann", "points": 6, "reported_points": 6.0},
        {"hand_id": "h1", "player": "ann", "points": 4, "reported_points": 7.0},
        {"hand_id": "h1", "player": "ann", "points": 9, "reported_points": 7.0,
         "ruleset": "pokerstars"},
        {"hand_id": "h2", "player": "ann", "points": 1},
    ]
    diff = stats.reported_differences(scored(rows))
    assert diff.select("hand_id", "reported", "rescored", "difference").rows() == \
        [("h1", 7.0, 4, -3.0)]
