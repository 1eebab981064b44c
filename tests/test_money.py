"""Money as the table settled it: per game and ruleset over every seat, the loss cap over
the whole table, a change of stakes starting a new game, filters applied afterwards."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ofcstats import analysis, session
from ofcstats.analysis import Filters, scored_frame
from ofcstats.cli import app
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.rules import load_ruleset
from ofcstats.stakes import LOSS_CAP, POINT_VALUE, UNIT
from ofcstats.store import Store

# Heads-up boards: WINNER beats LOSER in all three rows (a scoop: 6 under 1-6 scoring);
# FOULED_A and FOULED_B are dead hands (a pair of aces or queens over a high-card middle).
WINNER = ("Kc Kd 2h", "5c 5d 5h 8s 9c", "Tc Jc Qc Kh Ac")
LOSER = ("3c 4d 6h", "7c 7d 2s 3s 4s", "8c 8d 9h 9s Js")
FOULED_A = ("Qc Qd 2h", "3c 5d 7h 9s Jc", "4c 6d 8h Ts Kc")
FOULED_B = ("Ac Ad Kh", "2s 3s 4d 6h 8c", "Ks Qs 9d 7d 3h")
GOOD = ("2c 3d 4h", "5c 5d 7h 8s 9c", "Tc Td Th Jd Qc")
FOULED_C = ("Ad Ah 2c", "3d 5s 7h 9d Jd", "4c 6c 8h Ts Qs")  # dead, beside WINNER and LOSER


def _hand(hand_id: str, seats: list[tuple[str, tuple[str, str, str]]], *,
          point_value: float | None = None, session_id: str = "night",
          variant: str = "ofc-classic") -> dict[str, Any]:
    hand: dict[str, Any] = {
        "format": "ofc-hand/1", "hand_id": hand_id, "session_id": session_id,
        "variant": variant,
        "players": [{"seat": i + 1, "name": name, "top": rows[0].split(),
                     "middle": rows[1].split(), "bottom": rows[2].split()}
                    for i, (name, rows) in enumerate(seats)]}
    if point_value is not None:
        hand["point_value"] = point_value
    return hand


def _store(tmp_path: Path, hands: list[dict[str, Any]], ruleset_toml: str) -> Path:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(h) + "\n" for h in hands), encoding="utf-8")
    rules = tmp_path / "house.toml"
    rules.write_text(ruleset_toml, encoding="utf-8")
    db = tmp_path / "club.duckdb"
    assert ingest([log], db).rejected == 0
    with Store(db) as store:
        rescore(store, [load_ruleset(str(rules))])
    return db


HOUSE = """
name = "house"
variants = ["ofc-classic"]
royalties = "none"
fantasyland = "none"
foul_penalty = 29
{extra}
[head_to_head]
row = 1
majority = 0
scoop = 3
"""


@pytest.fixture
def capped(tmp_path: Path) -> Path:
    """ann +29, bob -29 in one heads-up game (two hands), with a loss cap of 10."""
    return _store(tmp_path, [
        _hand("h1", [("ann", GOOD), ("bob", FOULED_B)]),
        _hand("h2", [("ann", FOULED_A), ("bob", FOULED_B)]),
    ], HOUSE.format(extra="loss_cap = 10"))


def _money(db: Path, filters: Filters | None = None) -> dict[str, float]:
    with Store(db, read_only=True) as store:
        table = analysis.money(store, filters or Filters(), store.scored_rulesets())
    return dict(zip(table["player"], table["money"], strict=True))


def test_loss_cap_limits_the_loser_and_the_winner_collects_only_what_is_paid(capped: Path
                                                                             ) -> None:
    assert _money(capped) == {"ann": 10.0, "bob": -10.0}


def test_a_player_filter_keeps_the_table_settlement(capped: Path) -> None:
    # The winner alone: still +10, not the +29 of her own rows.
    assert _money(capped, Filters(players=["ann"])) == {"ann": 10.0}
    assert _money(capped, Filters(players=["bob"])) == {"bob": -10.0}


def test_player_players_and_report_show_the_same_money(capped: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    players = runner.invoke(app, ["players", "--db", str(capped), "-f", "json"])
    assert players.exit_code == 0, players.output
    one = runner.invoke(app, ["player", "ann", "--db", str(capped), "-f", "json"])
    assert one.exit_code == 0, one.output
    by_player = {row["player"]: row["money"] for row in json.loads(players.stdout)}
    assert by_player == {"ann": 10.0, "bob": -10.0}
    assert [row["money"] for row in json.loads(one.stdout)] == [10.0]
    page = tmp_path / "r.html"
    report = runner.invoke(app, ["report", "--db", str(capped), "--player", "ann", "-o",
                                 str(page)])
    assert report.exit_code == 0, report.output
    assert "<td>+10.00</td>" in page.read_text(encoding="utf-8")


def test_a_capped_losers_shortfall_comes_off_the_games_winners_pro_rata(tmp_path: Path
                                                                         ) -> None:
    # Three seats, so a game is three hands; in each, ann fouls (-29 to each of the
    # others) and bob scoops cat (6): ann -174, bob +105, cat +69 over the game.
    db = _store(tmp_path, [_hand(f"h{i}", [("ann", FOULED_C), ("bob", WINNER),
                                            ("cat", LOSER)]) for i in range(3)],
                HOUSE.format(extra="loss_cap = 10"))
    money = _money(db)
    assert money["ann"] == -10
    # ann's unpaid 164 comes off the winners in proportion to 105 : 69.
    assert money["bob"] == pytest.approx(105 - 164 * 105 / 174, abs=0.01)
    assert money["cat"] == pytest.approx(69 - 164 * 69 / 174, abs=0.01)
    assert sum(money.values()) == pytest.approx(0, abs=0.01)


def test_a_timeout_ends_the_game_for_the_loss_cap(tmp_path: Path) -> None:
    # Heads-up, a game is two hands; bob times out in h1, so h1 is a game of its own and
    # h2-h3 the next: the cap of 10 applies to each (-20), not to h1 and h2 together.
    h1 = _hand("h1", [("ann", GOOD), ("bob", FOULED_B)])
    h1["players"][1]["timed_out"] = True
    db = _store(tmp_path, [
        h1,
        _hand("h2", [("ann", GOOD), ("bob", FOULED_B)]),
        _hand("h3", [("ann", FOULED_A), ("bob", FOULED_B)]),
    ], HOUSE.format(extra="loss_cap = 10"))
    assert _money(db) == {"ann": 20.0, "bob": -20.0}
    with Store(db, read_only=True) as store:
        games = analysis.game_results(store, Filters(), store.scored_rulesets())
        frame = scored_frame(store)
    assert games.filter(pl.col("player") == "bob")["game"].to_list() == [0, 1]
    # The scored frame (notebooks, frame-level money) has the same games.
    assert frame.filter(pl.col("player") == "bob").sort("order")["game"].to_list() == [0, 1, 1]


def test_a_change_of_stakes_starts_a_new_game(tmp_path: Path) -> None:
    # ann wins 6 at 1 a point, then loses 6 at 3 a point: she is 12 down, not even.
    db = _store(tmp_path, [
        _hand("h1", [("ann", WINNER), ("bob", LOSER)], point_value=1),
        _hand("h2", [("ann", LOSER), ("bob", WINNER)], point_value=3),
    ], HOUSE.format(extra=""))
    assert _money(db) == {"ann": -12.0, "bob": 12.0}
    with Store(db, read_only=True) as store:
        games = analysis.game_results(store, Filters(), store.scored_rulesets())
    assert games.filter(pl.col("player") == "ann")["game"].to_list() == [0, 1]
    assert set(games["stake_source"]) == {"logged"}


def test_the_rulesets_point_value_comes_before_the_logged_one(tmp_path: Path) -> None:
    db = _store(tmp_path, [
        _hand("h1", [("ann", WINNER), ("bob", LOSER)], point_value=1),
        _hand("h2", [("ann", LOSER), ("bob", WINNER)], point_value=3),
        _hand("h3", [("ann", WINNER), ("bob", LOSER)]),
    ], HOUSE.format(extra="point_value = 0.5"))
    assert _money(db) == {"ann": 3.0, "bob": -3.0}
    with Store(db, read_only=True) as store:
        games = analysis.game_results(store, Filters(), store.scored_rulesets())
    assert set(games["stake_source"]) == {"ruleset"}


def test_a_change_of_logged_stakes_starts_a_new_game_under_a_rulesets_own_point_value(
        tmp_path: Path) -> None:
    """Games are what happened at the table: the logged stakes change after h1, so h1 and
    h2 are two games, each under the loss cap of 10, whatever the ruleset values a point
    at (0.5). Read as one game, bob would lose 10 points in all (5.00), not 20 (10.00)."""
    db = _store(tmp_path, [
        _hand("h1", [("ann", GOOD), ("bob", FOULED_B)], point_value=1),
        _hand("h2", [("ann", GOOD), ("bob", FOULED_B)], point_value=3),
    ], HOUSE.format(extra="point_value = 0.5\nloss_cap = 10"))
    assert _money(db) == {"ann": 10.0, "bob": -10.0}
    with Store(db, read_only=True) as store:
        rulesets = store.scored_rulesets()
        games = analysis.game_results(store, Filters(), rulesets)
        frame = scored_frame(store)
    bob = games.filter(pl.col("player") == "bob")
    assert bob["game"].to_list() == [0, 1]
    assert bob["settled_points"].to_list() == [-10.0, -10.0]
    assert bob["capped"].to_list() == [True, True]
    assert set(games["stake_source"]) == {"ruleset"}
    # The frame the notebooks read has the same games.
    mine = frame.filter((pl.col("player") == "bob") & (pl.col("ruleset") == "house"))
    assert mine.sort("hand_id")["game"].to_list() == [0, 1]


def test_without_any_point_value_a_point_is_worth_one(tmp_path: Path) -> None:
    db = _store(tmp_path, [_hand("h1", [("ann", WINNER), ("bob", LOSER)])],
                HOUSE.format(extra=""))
    assert _money(db) == {"ann": 6.0, "bob": -6.0}
    with Store(db, read_only=True) as store:
        money = analysis.money(store, Filters(), store.scored_rulesets())
    assert set(money["stake"]) == {"default"}


def _settle(points: dict[str, int], loss_cap: float | None) -> dict[str, float]:
    frame = pl.DataFrame({
        "ruleset": "house", "session_id": "s", "game": 0, "player": list(points),
        "points": list(points.values()), "loss_cap": loss_cap, "point_value": 1.0,
    }, schema_overrides={"loss_cap": pl.Float64})
    settled = session.settle(frame).collect()
    return dict(zip(settled["player"], settled["settled_points"], strict=True))


def test_two_capped_losers_each_pay_the_cap() -> None:
    assert _settle({"ann": -30, "bob": -20, "cat": 50}, 10) == \
        {"ann": -10, "bob": -10, "cat": 20}


def test_winners_share_a_capped_losers_shortfall_pro_rata() -> None:
    settled = _settle({"ann": -30, "bob": 20, "cat": 10}, 10)
    assert settled["ann"] == -10
    assert settled["bob"] == pytest.approx(20 - 20 * 20 / 30)
    assert settled["cat"] == pytest.approx(10 - 20 * 10 / 30)


def test_a_loss_within_the_cap_is_paid_in_full() -> None:
    assert _settle({"ann": -8, "bob": 8}, 10) == {"ann": -8, "bob": 8}
    assert _settle({"ann": -80, "bob": 80}, None) == {"ann": -80, "bob": 80}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-200, 200), min_size=2, max_size=4),
       st.one_of(st.none(), st.integers(1, 150)), st.sampled_from([0.5, 1.0, 3.0]))
def test_money_sums_to_zero_per_game_and_ruleset(raw: list[int], cap: int | None,
                                                 value: float) -> None:
    points = [*raw[:-1], -sum(raw[:-1])]  # a game's points sum to zero
    frame = pl.DataFrame({
        "ruleset": "house", "session_id": "s", "game": 0,
        "player": [f"p{i}" for i in range(len(points))], "points": points,
        "loss_cap": None if cap is None else float(cap), "point_value": value,
    }, schema_overrides={"loss_cap": pl.Float64})
    settled = session.settle(frame).collect()
    assert settled["money"].sum() == pytest.approx(0, abs=1e-9)
    if cap is not None:
        assert settled["settled_points"].min() >= -cap - 1e-9
    # Nobody wins more than they won at the table, nor loses more.
    for before, after in zip(points, settled["settled_points"], strict=True):
        assert (after <= before + 1e-9) if before > 0 else (after >= before - 1e-9)


def test_players_since_keeps_the_games_that_started_in_the_window(tmp_path: Path) -> None:
    early = _hand("h1", [("ann", WINNER), ("bob", LOSER)], session_id="jan")
    early["played_at"] = "2026-01-01T20:00:00Z"
    late = _hand("h2", [("ann", LOSER), ("bob", WINNER)], session_id="mar")
    late["played_at"] = "2026-03-01T20:00:00+01:00"
    db = _store(tmp_path, [early, late], HOUSE.format(extra=""))
    runner = CliRunner()
    result = runner.invoke(app, ["players", "--db", str(db), "--since", "2026-02-01",
                                 "-f", "json"])
    assert result.exit_code == 0, result.output
    rows = {row["player"]: (row["hands"], row["money"]) for row in json.loads(result.stdout)}
    assert rows == {"ann": (1, -6.0), "bob": (1, 6.0)}


LARGEST = """
name = "{name}"
variants = ["ofc-classic"]
royalties = "none"
fantasyland = "none"
foul_penalty = 1000
{extra}
[head_to_head]
row = 333
majority = 0
scoop = 1
"""
"""A ruleset at the largest values: a scoop and a foul each pay 1,000 points a pair."""


def test_money_at_the_largest_point_value_units_and_loss_cap_is_exact(tmp_path: Path) -> None:
    """Hands logged at the largest point value, players at the largest and the smallest
    unit, rulesets paying the most a pair can win and one at the largest point value and
    loss cap (ofcstats.stakes): players, player, report and compare answer (a point value
    of 1e308 once failed them with a DOUBLE to INT64 conversion; a sum past 2**63
    millionths would have too), and the money is what exact arithmetic gives."""
    top, small = UNIT.high, UNIT.low
    hands = []
    for i in range(10):  # ten sessions: ten games, summed
        hand = _hand(f"h{i}", [("ann", WINNER), ("bob", LOSER), ("cy", FOULED_C)],
                     point_value=POINT_VALUE.high, session_id=f"s{i}")
        for player, unit in zip(hand["players"], (top, top, small), strict=True):
            player["unit"] = unit
        hands.append(hand)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(h) + "\n" for h in hands), encoding="utf-8")
    db = tmp_path / "club.duckdb"
    assert ingest([log], db).rejected == 0
    logged, fixed = tmp_path / "house.toml", tmp_path / "house-max.toml"
    logged.write_text(LARGEST.format(name="house", extra=""), encoding="utf-8")
    fixed.write_text(LARGEST.format(name="house-max", extra=(
        f"point_value = {POINT_VALUE.high}\nloss_cap = {LOSS_CAP.high}")), encoding="utf-8")
    with Store(db) as store:
        rescore(store, [load_ruleset(str(logged)), load_ruleset(str(fixed))])
    # Each hand: ann scoops bob (1,000 a pair at 1,000), cy fouled pays 1,000 to each (at
    # 0.001); exact arithmetic says what that is worth.
    value, a_lot, little = (Fraction(str(x)) for x in (POINT_VALUE.high, top, small))
    per_hand = {"ann": 1000 * a_lot + 1000 * little, "bob": -1000 * a_lot + 1000 * little,
                "cy": -2000 * little}
    expected = {name: float(10 * value * points) for name, points in per_hand.items()}
    assert expected == {"ann": 10_000_010_000_000.0, "bob": -9_999_990_000_000.0,
                        "cy": -20_000_000.0}
    runner = CliRunner()
    for ruleset in ("house", "house-max"):  # the stake logged, and the ruleset's own
        players = runner.invoke(app, ["players", "--db", str(db), "-r", ruleset, "-f", "json"])
        assert players.exit_code == 0, players.output
        assert {r["player"]: r["money"] for r in json.loads(players.stdout)} == expected
    for name, money in expected.items():
        one = runner.invoke(app, ["player", name, "--db", str(db), "-f", "json"])
        assert one.exit_code == 0, one.output
        assert [row["money"] for row in json.loads(one.stdout)] == [money, money]
    table = runner.invoke(app, ["players", "--db", str(db), "-r", "house-max"])
    assert "+10,000,010,000,000.00" in table.stdout
    assert "-9,999,990,000,000.00" in table.stdout
    page = tmp_path / "r.html"
    report = runner.invoke(app, ["report", "--db", str(db), "-r", "house-max", "-o",
                                 str(page)])
    assert report.exit_code == 0, report.output
    assert "<td>+10,000,010,000,000.00</td>" in page.read_text(encoding="utf-8")
    compare = runner.invoke(app, ["compare", "--db", str(db), "-f", "json"])
    assert compare.exit_code == 0, compare.output
    with Store(db, read_only=True) as store:
        games = analysis.game_results(store, Filters(), store.scored_rulesets())
    assert games.get_column("money").sum() == 0
    assert not games.get_column("capped").any()
