"""Per-player units ("Китайский покер - правила и особенности": «Юниты, по договоренности,
могут быть разного достоинства – например игрок 1 и игрок 2 имеют юниты по $10,
остальные играют по $1»): a pair of players settles at the smaller of their two units.
One test per rule; both readings of the table (every unit 1, units that differ)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ofcstats import analysis, session
from ofcstats.analysis import Filters
from ofcstats.cli import app
from ofcstats.formats import ofc_hand
from ofcstats.formats.lines import LineBatch
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.rules import load_ruleset
from ofcstats.score import score
from ofcstats.store import Store
from ofcstats.validate import validate

ONE_SIX = load_ruleset("one-six")  # a unit a row, three more for a scoop; no royalties

Board = tuple[str, str, str]
STRONG: Board = ("Ac Kd 2c", "Qs Qh 9h 8c 5s", "7s 7h 7d 4c 3s")  # A high, QQ, trips
MIDDLE: Board = ("Qd 8s 4h", "Ks Kc 9c 7c 6d", "Ad Ah 6s 5c 3d")  # Q high, KK, AA
WEAK: Board = ("Jd 4s 2h", "As Kh Qc 8d 6h", "Tc Th 9s 5h 3c")  # J high, A high, TT
# Under 1-6: STRONG beats MIDDLE 2-1 (+1) and WEAK 3-0 (+6); MIDDLE beats WEAK 3-0 (+6).


def _hand(hand_id: str, units: list[float | None], boards: list[Board] | None = None,
          session_id: str = "night") -> dict[str, Any]:
    players = []
    for i, (board, unit) in enumerate(zip(boards or [STRONG, MIDDLE, WEAK], units,
                                          strict=True)):
        player: dict[str, Any] = {"seat": i + 1, "name": "abc"[i], "top": board[0].split(),
                                  "middle": board[1].split(), "bottom": board[2].split()}
        if unit is not None:
            player["unit"] = unit
        players.append(player)
    return {"format": "ofc-hand/1", "hand_id": hand_id, "session_id": session_id,
            "variant": "chinese-13", "players": players}


def _frame(hands: list[dict[str, Any]]) -> pl.DataFrame:
    con = duckdb.connect()
    lines = LineBatch(first_line=1, data="".join(json.dumps(h) + "\n" for h in hands).encode())
    batch = validate(ofc_hand.parse_batch(lines, "t.jsonl", con), con)
    assert batch.rejects.is_empty(), batch.rejects
    return batch.seats_for_scoring()


def _scored(units: list[float | None]) -> dict[int, tuple[int, float | None]]:
    results = score(_frame([_hand("h1", units)]), [ONE_SIX])
    return {r["seat"]: (r["points"], r["unit_points"]) for r in results.iter_rows(named=True)}


def test_per_player_units_a_pair_settles_at_the_smaller_unit() -> None:
    """Players 1 and 2 at $10, player 3 at $1: 1 and 2 settle at 10, each of them with
    3 at 1. Points stay points; the unit points weigh each pair."""
    assert _scored([10, 10, 1]) == {1: (7, 1 * 10 + 6 * 1.0), 2: (5, -1 * 10 + 6 * 1.0),
                                    3: (-12, -6 * 1 - 6 * 1.0)}
    # Units that are not whole numbers: a pair at 2 and 0.5 settles at 0.5.
    assert _scored([2, 0.5, 2]) == {1: (7, 1 * 0.5 + 6 * 2.0), 2: (5, -1 * 0.5 + 6 * 0.5),
                                    3: (-12, -6 * 2 - 6 * 0.5)}


def test_per_player_units_of_one_leave_the_points_as_they_are() -> None:
    """Without units, or with every unit 1, nothing is weighted (no unit points are
    kept); with every unit the same, the unit points are the points times it."""
    assert _scored([None, None, None]) == {1: (7, None), 2: (5, None), 3: (-12, None)}
    assert _scored([1, 1, 1]) == {1: (7, None), 2: (5, None), 3: (-12, None)}
    assert _scored([5, 5, 5]) == {1: (7, 35.0), 2: (5, 25.0), 3: (-12, -60.0)}


@pytest.mark.parametrize(("unit", "message"), [
    (0, "seat 1: unit = 0.0: must be a number from 0.001 to 1,000: a player's unit is what a "
        "point is worth to the player, in point values (default 1)"),
    (-2, "seat 1: unit = -2.0: must be a number from 0.001 to 1,000"),
    (0.0009, "seat 1: unit = 0.0009: must be a number from 0.001 to 1,000"),
    (1000.5, "seat 1: unit = 1000.5: must be a number from 0.001 to 1,000"),
    (1e308, "seat 1: unit = 1e+308: must be a number from 0.001 to 1,000"),
    ("ten", "unit must be a number"),
])
def test_per_player_units_are_validated(unit: object, message: str) -> None:
    """A unit is bounded (ofcstats.stakes.UNIT) so that money stays finite and exact."""
    hand = _hand("h1", [None, None, None])
    hand["players"][0]["unit"] = unit
    for slow in (False, True):
        con = duckdb.connect()
        lines = LineBatch(first_line=1, data=(json.dumps(hand) + "\n").encode())
        batch = validate(ofc_hand.parse_batch(lines, "t.jsonl", con), con, explain_all=slow)
        reasons = batch.rejects.get_column("reason").to_list()
        assert len(reasons) == 1, reasons
        assert message in reasons[0]


def _settle(rows: list[tuple[str, int, float, float]], loss_cap: float | None
            ) -> dict[str, float]:
    frame = pl.DataFrame({
        "ruleset": "house", "session_id": "s", "game": 0,
        "player": [r[0] for r in rows], "points": [r[1] for r in rows],
        "unit_points": [r[2] for r in rows], "unit": [r[3] for r in rows],
        "loss_cap": loss_cap, "point_value": 0.5,
    }, schema_overrides={"loss_cap": pl.Float64})
    settled = session.settle(frame).collect()
    return dict(zip(settled["player"], settled["money"], strict=True))


def test_per_player_units_cap_a_loss_at_the_cap_times_the_players_unit() -> None:
    """A loss cap of 20 points: the $10 player loses at most 200 of the unit, the
    shortfall taken from the winners in proportion, at 0.5 a point."""
    money = _settle([("a", -50, -500.0, 10.0), ("b", 45, 450.0, 10.0), ("c", 5, 50.0, 1.0)], 20)
    assert money["a"] == pytest.approx(-100)
    assert money["b"] == pytest.approx((450 - 300 * 450 / 500) * 0.5)
    assert money["c"] == pytest.approx((50 - 300 * 50 / 500) * 0.5)
    # The $1 player's cap is 20: a loss of 30 is capped, a loss of 15 is not.
    assert _settle([("a", 30, 300.0, 10.0), ("c", -30, -30.0, 1.0)], 20)["c"] == -10
    assert _settle([("a", 15, 150.0, 10.0), ("c", -15, -15.0, 1.0)], 20)["c"] == -7.5


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-200, 200), st.sampled_from([0.5, 1.0, 2.0, 10.0])),
                min_size=2, max_size=4),
       st.one_of(st.none(), st.integers(1, 150)))
def test_per_player_units_money_sums_to_zero_per_game(raw: list[tuple[int, float]],
                                                      cap: int | None) -> None:
    weighted = [points * unit for points, unit in raw]
    weighted[-1] -= sum(weighted)  # a game's unit points sum to zero
    rows = [(f"p{i}", 0, w, unit) for i, (w, (_, unit)) in enumerate(zip(weighted, raw,
                                                                         strict=True))]
    money = _settle(rows, None if cap is None else float(cap))
    assert sum(money.values()) == pytest.approx(0, abs=1e-6)
    if cap is not None:
        for (player, _, _, unit) in rows:
            assert money[player] >= -cap * unit * 0.5 - 1e-9


def test_per_player_units_reach_the_store_money_and_the_score_command(tmp_path: Path
                                                                      ) -> None:
    """Loaded and rescored, the money of each game is the unit points at the stake; the
    points statistics stay in points; ``score`` writes the unit points per seat."""
    log = tmp_path / "log.jsonl"
    hands = [_hand("h1", [10, 10, 1]), _hand("h2", [10, 10, 1], [WEAK, STRONG, MIDDLE])]
    log.write_text("".join(json.dumps(h) + "\n" for h in hands), encoding="utf-8")
    db = tmp_path / "club.duckdb"
    assert ingest([log], db).rejected == 0
    with Store(db) as store:
        rescore(store, [ONE_SIX])
    with Store(db, read_only=True) as store:
        money = analysis.money(store, Filters(), store.scored_rulesets())
    # h1: a +16, b -4, c -12. h2 (a WEAK, b STRONG, c MIDDLE): b beats a 3-0 at 10
    # (+60) and c 2-1 at 1 (+1); c beats a 3-0 at 1 (+6).
    by_player = dict(zip(money["player"], money["money"], strict=True))
    assert sum(by_player.values()) == pytest.approx(0)
    assert by_player == {"a": 16 - 60 - 6, "b": -4 + 60 + 1, "c": -12 - 1 + 6}
    runner = CliRunner()
    players = runner.invoke(app, ["players", "--db", str(db), "-f", "json"])
    assert players.exit_code == 0, players.output
    totals = {row["player"]: (row["total"], row["money"]) for row in json.loads(players.stdout)}
    assert totals == {"a": (7 - 12, -50.0), "b": (5 + 7, 57.0), "c": (-12 + 5, -7.0)}
    out = runner.invoke(app, ["score", str(log), "--ruleset", "one-six", "-f", "json"])
    assert out.exit_code == 0, out.output
    weighted = {(r["hand_id"], r["seat"]): r["unit_points"] for r in json.loads(out.stdout)}
    assert weighted[("h1", 1)] == 16.0
    assert weighted[("h2", 2)] == 61.0


def test_per_player_units_logged_again_otherwise_are_a_conflict_or_an_update(tmp_path: Path
                                                                             ) -> None:
    """A stored hand logged again with another unit is not the same hand's repeat: a
    conflict naming the unit, or with ``--update`` the new unit, rescored."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(json.dumps(_hand("h1", [10, 10, 1])) + "\n", encoding="utf-8")
    second.write_text(json.dumps(_hand("h1", [1, 10, 1])) + "\n", encoding="utf-8")
    db = tmp_path / "club.duckdb"
    ingest([first], db)
    summary = ingest([second], db)
    assert summary.rejected == 1
    assert "but another unit" in summary.first_rejects[0].reason
    assert ingest([second], db, update=True).rejected == 0
    with Store(db) as store:
        rescore(store, [ONE_SIX])
        money = analysis.money(store, Filters(), store.scored_rulesets())
    # a (now at 1) beats b 2-1 at 1 and c 3-0 at 1; b (10) beats c 3-0 at 1.
    assert dict(zip(money["player"], money["money"], strict=True)) == \
        {"a": 7.0, "b": 5.0, "c": -12.0}
