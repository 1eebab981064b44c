"""Criss-cross, a heads-up 13-card variant in which each player sets two separate boards
("Китайский покер - правила и особенности": «“Крис Кросс“ – хедс-ап вариант, когда
игрокам сдается 26 карт, вернее два раза по 13, поскольку менять карты из одной дюжины
в другую нельзя»). One test per rule, both readings of how the boards meet ("both":
each board plays both of the opponent's; "matching": first against first, second
against second)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pytest
from handgen import board_hand, seats_frame

from ofcstats.errors import RulesetError
from ofcstats.formats import jsonl
from ofcstats.formats.lines import LineBatch
from ofcstats.rules import load_ruleset
from ofcstats.rules.load import ruleset_from
from ofcstats.rules.model import Ruleset
from ofcstats.score import score
from ofcstats.validate import validate

BOTH = load_ruleset("criss-cross")  # 2-4, no royalties, naturals paid
MATCHING = replace(BOTH, name="criss-cross-matching", criss_cross="matching")

Board = tuple[str, str, str]
# 52 distinct cards. Ann's first board is strong, her second weak; Bob's first is
# middling, his second weak in the middle.
ANN_1: Board = ("Ac Kd 2c", "Qs Qh 9h 8c 5s", "7s 7h 7d 4c 3s")  # A high, QQ, trips
ANN_2: Board = ("Jc 9d 3h", "Ts Td 8h 6c 2s", "Js Jh 5d 4d 2d")  # J high, TT, JJ
BOB_1: Board = ("Qd 8s 4h", "Ks Kc 9c 7c 6d", "Ad Ah 6s 5c 3d")  # Q high, KK, AA
BOB_2: Board = ("Jd 4s 2h", "As Kh Qc 8d 6h", "Tc Th 9s 5h 3c")  # J high, A high, TT
# Under 2-4 (a unit a row, one more for two or three rows): Ann 1 beats Bob 1 2-1 (+2)
# and Bob 2 3-0 (+4); Ann 2 loses 0-3 to Bob 1 (-4) and beats Bob 2 3-0 (+4).


def crossed(boards: list[Board], names: str, hand_id: str = "h1") -> dict[str, Any]:
    """A criss-cross hand: the boards on seats 1 to 4, each seat's player by ``names``."""
    hand = board_hand(hand_id, boards, "criss-cross")
    for player, name in zip(hand["players"], names, strict=True):
        player["name"] = {"a": "ann", "b": "bob"}[name]
    return hand


def play(hand: dict[str, Any], ruleset: Ruleset) -> dict[int, dict[str, Any]]:
    results = score(seats_frame([hand]), [ruleset])
    return {row["seat"]: row for row in results.iter_rows(named=True)}


def test_criss_cross_both_each_board_plays_both_of_the_opponents() -> None:
    result = play(crossed([ANN_1, BOB_1, ANN_2, BOB_2], "abab"), BOTH)
    assert {seat: r["points"] for seat, r in result.items()} == {1: 6, 2: 2, 3: 0, 4: -8}
    assert {seat: r["wins_top"] for seat, r in result.items()} == {1: 2, 2: 1, 3: 1, 4: 0}
    assert {seat: r["scoops"] for seat, r in result.items()} == {1: 1, 2: 1, 3: 1, 4: 0}


def test_criss_cross_matching_first_board_plays_first_second_plays_second() -> None:
    result = play(crossed([ANN_1, BOB_1, ANN_2, BOB_2], "abab"), MATCHING)
    assert {seat: r["points"] for seat, r in result.items()} == {1: 2, 2: -2, 3: 4, 4: -4}
    assert {seat: r["wins_top"] for seat, r in result.items()} == {1: 1, 2: 0, 3: 1, 4: 0}


@pytest.mark.parametrize("ruleset", [BOTH, MATCHING], ids=["both", "matching"])
def test_criss_cross_a_players_own_boards_never_meet(ruleset: Ruleset) -> None:
    """Ann's strong board would beat her weak one in every row: it never plays it, so
    the boards' results are those of the meetings with Bob's boards alone, and each
    board's rows count only Bob's boards (two or one)."""
    met = 2 if ruleset.criss_cross == "both" else 1
    result = play(crossed([ANN_1, BOB_1, ANN_2, BOB_2], "abab"), ruleset)
    for r in result.values():
        assert r["wins_top"] + r["wins_middle"] + r["wins_bottom"] <= 3 * met
        assert abs(r["rows_top"]) <= met
    # Had Ann's boards met, her first board would hold 4 more and her second 4 fewer.
    ann = {seat: r["points"] for seat, r in result.items() if r["player"] == "ann"}
    assert ann == ({1: 6, 3: 0} if ruleset.criss_cross == "both" else {1: 2, 3: 4})


def test_criss_cross_first_board_is_the_one_on_the_players_lower_seat() -> None:
    """The players' boards may sit in any order: a player's first board is on its lower
    seat, whoever sits first."""
    for names, boards in (("aabb", [ANN_1, ANN_2, BOB_1, BOB_2]),
                          ("abba", [ANN_1, BOB_1, BOB_2, ANN_2])):
        by_board = {}
        for seat, r in play(crossed(boards, names), MATCHING).items():
            by_board[boards[seat - 1]] = r["points"]
        assert by_board == {ANN_1: 2, BOB_1: -2, ANN_2: 4, BOB_2: -4}, names


@pytest.mark.parametrize("ruleset", [BOTH, MATCHING], ids=["both", "matching"])
def test_criss_cross_is_the_sum_of_its_heads_up_meetings(ruleset: Ruleset) -> None:
    """Each meeting is a heads-up 13-card hand: naturals, royalties and the royalty pool
    are settled meeting by meeting."""
    pool = replace(ruleset, royalties=load_ruleset("one-six").royalties,
                   royalty_pool=replace(ruleset.royalty_pool, stake=2))
    boards = [ANN_1, BOB_1, ANN_2, BOB_2]
    pairs = [(0, 1), (0, 3), (2, 1), (2, 3)] if ruleset.criss_cross == "both" else \
        [(0, 1), (2, 3)]
    expected = dict.fromkeys(range(1, 5), 0)
    for a, b in pairs:
        heads_up = score(seats_frame([board_hand("m", [boards[a], boards[b]], "chinese-13")]),
                         [pool]).get_column("points").to_list()
        expected[a + 1] += heads_up[0]
        expected[b + 1] += heads_up[1]
    got = play(crossed(boards, "abab"), pool)
    assert {seat: r["points"] for seat, r in got.items()} == expected


def test_criss_cross_reading_is_validated_naming_key_and_value() -> None:
    with pytest.raises(RulesetError, match=r"criss_cross = 'cross': use one of both, matching"):
        ruleset_from({"head_to_head": {"row": 1, "majority": 0, "scoop": 0},
                      "variants": ["criss-cross"], "criss_cross": "cross"}, "house.toml")
    assert ruleset_from({"head_to_head": {"row": 1, "majority": 0, "scoop": 0},
                         "variants": ["criss-cross"]}, "house.toml").criss_cross == "both"


def _reasons(hand: dict[str, Any], slow: bool) -> list[str]:
    lines = LineBatch(first_line=1, data=(json.dumps(hand) + "\n").encode())
    con = duckdb.connect()
    batch = validate(jsonl.parse_batch(lines, "t.jsonl", con), con, explain_all=slow)
    return batch.rejects.get_column("reason").to_list()


@pytest.mark.parametrize(("change", "message"), [
    (lambda h: h["players"].pop(), "criss-cross has 4 seats, two boards for each of its "
                                   "two players (the player's name on both); this hand has 3"),
    (lambda h: h["players"][1].update(name="ann"), "criss-cross seats each of its two players "
                                                   "on two seats, one for each board; this "
                                                   "hand has ann in seats 1 and 2 and 3; "
                                                   "bob in seat 4"),
    (lambda h: h["players"][3].update(name="cy"), "this hand has bob in seat 2; cy in seat 4"),
    (lambda h: h["players"][0].update(fantasyland=True),
     "seat 1: fantasyland is not part of criss-cross"),
    (lambda h: h["players"][3].update(top=["Ac", "4s", "2h"]), "Ac appears twice"),
])
def test_criss_cross_is_validated_two_players_two_boards_each_52_cards(change: Any,
                                                                       message: str) -> None:
    good = crossed([ANN_1, BOB_1, ANN_2, BOB_2], "abab")
    assert _reasons(good, slow=False) == [] == _reasons(good, slow=True)
    bad = json.loads(json.dumps(good))
    change(bad)
    fast, slow = _reasons(bad, slow=False), _reasons(bad, slow=True)
    assert fast == slow
    assert len(fast) == 1, fast
    assert message in fast[0]


def test_criss_cross_plays_in_the_simulator() -> None:
    """The simulator deals each of two players two boards from one deck; every hand is
    valid and scores as reported, under either reading."""
    from ofcstats.simulate import Simulation, SimulationError, parse_players  # noqa: PLC0415
    from ofcstats.simulate import simulate as run  # noqa: PLC0415
    from ofcstats.variants import Variant  # noqa: PLC0415

    for ruleset in (BOTH, MATCHING):
        sim = Simulation(variant=Variant.CRISS_CROSS, ruleset=ruleset, hands=12, seed=4,
                         players=parse_players("ann:balanced,bob:safe"))
        hands = list(run(sim))
        assert len(hands) == 12
        for hand in hands:
            assert [p["name"] for p in hand["players"]] == ["ann", "bob", "ann", "bob"]
            assert _reasons(hand, slow=False) == []
            result = play(hand, ruleset)
            assert [result[p["seat"]]["points"] for p in hand["players"]] == \
                [p["reported_points"] for p in hand["players"]]
    three = Simulation(variant=Variant.CRISS_CROSS, ruleset=BOTH, hands=4,
                       players=parse_players("a:safe,b:safe,c:safe"))
    with pytest.raises(SimulationError, match="criss-cross is heads-up: give 2 players, not 3"):
        three.check()



# Ann's second board set wrong: jacks on top over tens in the middle.
ANN_FOULED: Board = ("Js Jh 9d", "Ts Td 8h 6c 2s", "Jc 3h 5d 4d 2d")


def test_criss_cross_counts_a_hand_once_per_player_in_statistics(tmp_path: Path) -> None:
    """Two boards, one hand: a player's hands, total and foul rate count the hand once
    (fouled when either board is), under either reading."""
    from typer.testing import CliRunner  # noqa: PLC0415

    from ofcstats.cli import app  # noqa: PLC0415
    from ofcstats.ingest import ingest  # noqa: PLC0415
    from ofcstats.pipeline import rescore  # noqa: PLC0415
    from ofcstats.store import Store  # noqa: PLC0415

    hands = [crossed([ANN_1, BOB_1, ANN_2, BOB_2], "abab", "h1"),
             crossed([ANN_FOULED, BOB_1, ANN_1, BOB_2], "abab", "h2")]
    log = tmp_path / "cc.jsonl"
    log.write_text("".join(json.dumps(h) + "\n" for h in hands), encoding="utf-8")
    db = tmp_path / "cc.duckdb"
    assert ingest([log], db).rejected == 0
    matching = tmp_path / "matching.toml"
    matching.write_text('name = "cc-matching"\nvariants = ["criss-cross"]\n'
                        'criss_cross = "matching"\n[head_to_head]\nrow = 1\nmajority = 1\n'
                        'scoop = 0\n',
                        encoding="utf-8")
    with Store(db) as store:
        rescore(store, [BOTH, load_ruleset(str(matching))])
    runner = CliRunner()
    # h2, both: the misset board pays 4 to each of Bob's (-8), the other wins 2 + 4.
    # h2, matching: the misset board pays 4 to Bob's first, the other wins 4 from his second.
    for name, ann_total in (("criss-cross", 6 - 8 + 6), ("cc-matching", 6 - 4 + 4)):
        out = runner.invoke(app, ["players", "--db", str(db), "--ruleset", name, "-f", "json"])
        assert out.exit_code == 0, out.output
        rows = {r["player"]: r for r in json.loads(out.stdout)}
        assert {p: r["hands"] for p, r in rows.items()} == {"ann": 2, "bob": 2}
        assert rows["ann"]["total"] == ann_total
        assert rows["bob"]["total"] == -ann_total
        assert {p: r["foul_rate"] for p, r in rows.items()} == {"ann": 0.5, "bob": 0.0}
