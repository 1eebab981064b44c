"""The rules of 13-card Chinese poker that are agreements between players, one test per
rule and per reading, on hand-built boards (the Russian article on 13-card Chinese poker,
"Китайский покер - правила и особенности")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from handgen import board_hand, seats_frame

from ofcstats.errors import RulesetError
from ofcstats.rules import load_ruleset
from ofcstats.rules.load import ruleset_from
from ofcstats.score import score

RULESETS = Path(__file__).resolve().parent / "rulesets"
PER_ROW = str(RULESETS / "two-four-misset-per-row.toml")
NOT_COUNTED = str(RULESETS / "two-four-misses-not-counted.toml")
OFC_NOT_COUNTED = str(RULESETS / "american-misses-not-counted.toml")

# A sets its top over its middle (one wrongly set row); as set, it wins the top (QQ
# against ace high) and the bottom (a full house against two pair), and loses the middle.
A_ONE_WRONG = ("Qs Qh 2d", "9s 9d 5c 4h 3c", "Ks Kh Kd 7c 7d")
# Top over middle over bottom: two wrongly set rows; as set it wins the top and the
# middle, and loses the bottom.
A_TWO_WRONG = ("Qs Qh Qd", "9s 9d 5c 5h 3c", "Ks Kh 7d 4h 2d")
B = ("Ac Jc 3d", "Ts Td 8c 6h 2h", "As Ad 8s 8d 4s")


def play(boards: list[tuple[str, str, str]], ruleset: str, variant: str = "chinese-13"
         ) -> dict[int, dict[str, Any]]:
    results = score(seats_frame([board_hand("h1", boards, variant)]), [load_ruleset(ruleset)])
    return {row["seat"]: row for row in results.iter_rows(named=True)}


def points(boards: list[tuple[str, str, str]], ruleset: str, variant: str = "chinese-13"
           ) -> list[int]:
    return [r["points"] for _, r in sorted(play(boards, ruleset, variant).items())]


# Misses counted or not ("По договоренности, ошибки могут не учитываться") -------------

def test_misset_counted_pays_a_scoop_to_each_opponent() -> None:
    """The default reading: the misset hand pays "the loss of three hands" (2-4: 4)."""
    assert points([A_ONE_WRONG, B], "two-four") == [-4, 4]
    assert play([A_ONE_WRONG, B], "two-four")[1]["fouled"]


def test_misses_not_counted_play_the_rows_as_set() -> None:
    """By agreement misses are not counted: A wins top and bottom, B the middle: 2-4
    pays 2 (a row net plus the overall unit)."""
    result = play([A_ONE_WRONG, B], NOT_COUNTED)
    assert [result[1]["points"], result[2]["points"]] == [2, -2]
    assert not result[1]["fouled"]
    assert [result[1]["rows_top"], result[1]["rows_middle"], result[1]["rows_bottom"]] == \
        [1, -1, 1]


def test_misses_not_counted_keep_royalties_and_fantasyland_in_open_face() -> None:
    """With the agreement in an open-face ruleset, the misset hand collects its QQ on top
    (7) and bottom full house (6), wins 2-1 (1) and earns fantasyland; counted, it pays
    the foul (6) and earns nothing."""
    result = play([A_ONE_WRONG, B], OFC_NOT_COUNTED, "ofc-classic")
    assert [result[1]["points"], result[2]["points"]] == [14, -14]
    assert result[1]["royalties"] == 13
    assert result[1]["fantasyland_next"]
    counted = play([A_ONE_WRONG, B], "american", "ofc-classic")
    assert [counted[1]["points"], counted[2]["points"]] == [-6, 6]
    assert not counted[1]["fantasyland_next"]


# Per-row misset penalty ("платить штраф, за каждую неправильно составленную
# комбинацию") ------------------------------------------------------------------------

@pytest.mark.parametrize(("board", "paid"), [(A_ONE_WRONG, 2), (A_TWO_WRONG, 4)])
def test_misset_per_row_pays_the_penalty_for_each_wrongly_set_row(
        board: tuple[str, str, str], paid: int) -> None:
    assert points([board, B], PER_ROW) == [-paid, paid]


def test_misset_per_row_both_fouled_exchange_nothing() -> None:
    """As with a whole-hand foul, two misset hands exchange nothing between them; each
    pays the live third hand for its own wrong rows."""
    third = ("2c 3s 5s", "6s 6c 7s Jh Kc", "Th Tc 9h 9c Jd")
    a_two_wrong = ("Qs Qh Qd", "9s 9d 5c 5h 3c", "Ks Kh 7d 4h 2d")
    b_one_wrong = ("As Ad 3d", "Ts Td 8c 6h 2h", "8s 8d 4s 4c Ac")
    assert points([a_two_wrong, b_one_wrong, third], PER_ROW) == [-4, -2, 6]


@pytest.mark.parametrize(("data", "message"), [
    ({"misset": "half"}, "misset = 'half': use one of scoop, per-row, not-counted"),
    ({"misset": "per-row"}, "misset = 'per-row': needs foul_penalty"),
])
def test_misset_rule_is_validated_naming_key_and_value(data: dict[str, Any],
                                                        message: str) -> None:
    with pytest.raises(RulesetError, match=message):
        ruleset_from({"head_to_head": {"row": 1, "majority": 0, "scoop": 0}, **data}, "house.toml")


# The wheel ("Колесо"): 9-T-J-Q-K highest, then A-2-3-4-5, then T-J-Q-K-A ----------------

WHEEL = str(RULESETS / "two-four-wheel.toml")
NINE_HIGH_BOTTOM = ("4c 5c Qs", "6c 6d 7c 8c 2d", "9s Th Jd Qc Kd")
WHEEL_BOTTOM = ("3c 4h 6h", "7d 7h 8d 9c 2h", "Ah 2s 3h 4s 5d")
BROADWAY_BOTTOM = ("5s 6s Ks", "8h 8s 9d Jc 3s", "Ts Jh Qd Kc As")


@pytest.mark.parametrize(("ruleset", "bottom_wins"), [
    (WHEEL, [2, 1, 0]),  # 9-T-J-Q-K > A-2-3-4-5 > T-J-Q-K-A
    ("two-four", [1, 0, 2]),  # the usual order: T-J-Q-K-A > 9-T-J-Q-K > A-2-3-4-5
])
def test_wheel_order_ranks_nine_to_king_then_ace_to_five_then_ten_to_ace(
        ruleset: str, bottom_wins: list[int]) -> None:
    result = play([NINE_HIGH_BOTTOM, WHEEL_BOTTOM, BROADWAY_BOTTOM], ruleset)
    assert [result[seat]["wins_bottom"] for seat in (1, 2, 3)] == bottom_wins


def test_wheel_order_decides_whether_a_hand_is_set_in_order() -> None:
    """T-J-Q-K-A in the middle under 9-T-J-Q-K at the bottom: a misset in the usual order
    (A pays 2-4's 4), in order under the wheel (A wins all three rows: 4)."""
    a = ("2c 3c 7s", "Ts Jh Qd Kc Ad", "9s Th Jd Qc Kd")
    b = ("2h 3h 5c", "6c 6d 7c 8c 2d", "Ah As 7d 8d 9c")
    assert points([a, b], "two-four") == [-4, 4]
    assert play([a, b], "two-four")[1]["fouled"]
    assert points([a, b], WHEEL) == [4, -4]
    assert not play([a, b], WHEEL)[1]["fouled"]


def test_wheel_order_is_validated() -> None:
    with pytest.raises(RulesetError, match=r"house\.toml: wheel = 'yes': must be true or false"):
        ruleset_from({"head_to_head": {"row": 1, "majority": 0, "scoop": 0}, "wheel": "yes"},
                     "house.toml")


def test_wheel_order_plays_in_the_simulator_and_sets_in_its_order() -> None:
    """The 13-card bots set their hands in the ruleset's order of straights: none of the
    balanced or safe sets fouls under the wheel, and every hand scores as reported."""
    from ofcstats.simulate import Simulation, SimulationError, parse_players  # noqa: PLC0415
    from ofcstats.simulate import simulate as run  # noqa: PLC0415
    from ofcstats.variants import Variant  # noqa: PLC0415

    ruleset = load_ruleset(WHEEL)
    sim = Simulation(variant=Variant.CHINESE_13, ruleset=ruleset, hands=40, seed=3,
                     players=parse_players("a:balanced,b:safe,c:montecarlo"), rollouts=8)
    hands = list(run(sim))
    for hand in hands:
        boards = [tuple(" ".join(p[row]) for row in ("top", "middle", "bottom"))
                  for p in hand["players"]] if "top" in hand["players"][0] else [
            tuple(" ".join(c for s in p["streets"] for c in s.get(row, []))
                  for row in ("top", "middle", "bottom")) for p in hand["players"]]
        result = play(boards, WHEEL)
        assert not any(result[seat]["fouled"] for seat in (1, 2, 3))
        assert [result[p["seat"]]["points"] for p in hand["players"]] == \
            [p["reported_points"] for p in hand["players"]]
    pineapple = Simulation(variant=Variant.PINEAPPLE, ruleset=ruleset, hands=5,
                           players=parse_players("a:safe,b:safe"))
    with pytest.raises(SimulationError, match="wheel order of straights is played in "
                                              "chinese-13"):
        pineapple.check()
