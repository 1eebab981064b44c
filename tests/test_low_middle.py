"""Low in the middle, a 13-card agreement: the middle row plays as a deuce-to-seven low
("Китайский покер - правила и особенности": «“лоу в миддле”, когда миддл хэнд также может
квалифицироваться как лоу-комбинация из 2-7 лоу покера»). One test per rule, both
readings (the middle played high, as usual, and low)."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from handgen import board_hand, seats_frame

from ofcstats import evaluate
from ofcstats.cards import parse_cards
from ofcstats.errors import RulesetError
from ofcstats.rules import load_ruleset
from ofcstats.rules.load import ruleset_from
from ofcstats.rules.model import Ruleset
from ofcstats.rules.reference import _low
from ofcstats.score import score

RULESETS = Path(__file__).resolve().parent / "rulesets"
LOW = str(RULESETS / "two-four-low-middle.toml")
# The same ruleset with the middle played high, as usual.
HIGH = ruleset_from({k: v for k, v in tomllib.loads(Path(LOW).read_text()).items()
                     if k not in ("low_middle", "name")} | {"name": "two-four-high-middle"},
                    "two-four-high-middle.toml")

Board = tuple[str, str, str]
# Middles 7-5-4-3-2 against 8-6-4-3-2: the seven is the better low, the eight the
# better high.
SEVEN_LOW: Board = ("6h 4c 2d", "7s 5h 4d 3c 2s", "As Ah Ad 8c 8d")
EIGHT_LOW: Board = ("5c 3h 2h", "8s 6d 4s 3d 2c", "Ks Kd Kc 9s 9d")
# A-2-3-4-5 in the middle: a straight played high, an ace-high hand played low (worse
# than K-Q-J-T-8).
WHEEL_MIDDLE: Board = ("Qh Jd 4h", "Ac 2h 3d 4c 5s", "Kh Th 8h 7h 6h")
KING_LOW: Board = ("Qs Js 8d", "Ks Qc Jh Tc 8s", "9s 9d 9h 7c 7d")
# A pair of queens in the middle over a pair of jacks at the bottom.
MIDDLE_OVER_BOTTOM: Board = ("Kh 7c 2d", "Qs Qh 9h 8c 5s", "Js Jd Ah 6c 3s")
# Aces on top over a king-high bottom.
TOP_OVER_BOTTOM: Board = ("Ac Ad 5d", "7s 6s 4d 3c 2s", "Kh Qd 9c 8d 6h")
# Tens full in the middle: a royalty of the chinese-bonus table played high.
MIDDLE_FULL_HOUSE: Board = ("2s 3c 4h", "Ts Th Tc 5h 5s", "As Ah Ad Qc Qd")


def play(boards: list[Board], ruleset: str | Ruleset) -> dict[int, dict[str, Any]]:
    results = score(seats_frame([board_hand("h1", boards, "chinese-13")]),
                    [load_ruleset(ruleset) if isinstance(ruleset, str) else ruleset])
    return {row["seat"]: row for row in results.iter_rows(named=True)}


def test_low_middle_ranks_five_card_hands_as_deuce_to_seven_lowball() -> None:
    """The scorer's deuce-to-seven worth orders random five-card rows as the plain
    reading of the rule does (aces high, straights and flushes count against)."""
    rng = random.Random(7)
    rows = [rng.sample(range(52), 5) for _ in range(4000)]
    rows += [[48, 1, 5, 9, 13], [48, 0, 4, 8, 12], [20, 13, 9, 5, 1]]  # suited, 7-2
    worth = evaluate.low_order()[evaluate.strength5(np.array(rows, dtype=np.uint8))]
    plain = np.array([_low(row) for row in rows])
    assert (np.sign(worth[:, None].astype(int) - worth[None, :])
            == np.sign(plain[:, None] - plain[None, :])).all()


@pytest.mark.parametrize(("ruleset", "seven_wins_middle"), [(LOW, 1), (HIGH, -1)])
def test_low_middle_the_better_deuce_to_seven_low_wins_the_middle(
        ruleset: str | Ruleset, seven_wins_middle: int) -> None:
    result = play([SEVEN_LOW, EIGHT_LOW], ruleset)
    assert result[1]["rows_middle"] == seven_wins_middle
    assert [result[1]["rows_top"], result[1]["rows_bottom"]] == [1, 1]


@pytest.mark.parametrize(("ruleset", "wheel_wins_middle"), [(LOW, -1), (HIGH, 1)])
def test_low_middle_ace_to_five_is_an_ace_high_hand_not_a_straight(
        ruleset: str | Ruleset, wheel_wins_middle: int) -> None:
    assert play([WHEEL_MIDDLE, KING_LOW], ruleset)[1]["rows_middle"] == wheel_wins_middle


@pytest.mark.parametrize(("ruleset", "fouled"), [(LOW, False), (HIGH, True)])
def test_low_middle_only_the_top_and_the_bottom_must_be_in_order(ruleset: str | Ruleset,
                                                                 fouled: bool) -> None:
    assert play([MIDDLE_OVER_BOTTOM, EIGHT_LOW], ruleset)[1]["fouled"] is fouled
    assert play([TOP_OVER_BOTTOM, EIGHT_LOW], ruleset)[1]["fouled"]


@pytest.mark.parametrize(("ruleset", "royalty"), [(LOW, 0), (HIGH, 1)])
def test_low_middle_earns_no_middle_royalty(ruleset: str | Ruleset, royalty: int) -> None:
    """chinese-bonus pays 1 for a full house in the middle, played high."""
    assert play([MIDDLE_FULL_HOUSE, EIGHT_LOW], ruleset)[1]["royalty_middle"] == royalty


@pytest.mark.parametrize(("data", "message"), [
    ({"variant": "chinese-13", "low_middle": "yes"}, r"low_middle = 'yes': must be true or"),
    ({"variant": "pineapple", "low_middle": True}, r"low_middle = True: .*chinese-13"),
    ({"variant": "chinese-13", "fantasyland": "standard", "low_middle": True},
     r"low_middle = True: .*fantasyland"),
])
def test_low_middle_is_validated_naming_key_and_value(data: dict[str, Any],
                                                      message: str) -> None:
    with pytest.raises(RulesetError, match=message):
        ruleset_from({"head_to_head": {"row": 1, "majority": 0, "scoop": 0}, **data}, "house.toml")


def test_low_middle_plays_in_the_simulator_and_sets_a_low_middle() -> None:
    """The 13-card bots set a low middle where it plays low: none of their sets fouls,
    the middles are far better lows than when the middle plays high, and every hand
    scores as reported."""
    from ofcstats.simulate import Simulation, SimulationError, parse_players  # noqa: PLC0415
    from ofcstats.simulate import simulate as run  # noqa: PLC0415
    from ofcstats.variants import Variant  # noqa: PLC0415

    middles = {}
    for name, rules in ((LOW, load_ruleset(LOW)), ("high", HIGH)):
        sim = Simulation(variant=Variant.CHINESE_13, ruleset=rules, hands=40,
                         seed=3, players=parse_players("a:balanced,b:safe,c:montecarlo"),
                         rollouts=8)
        worth = []
        for hand in run(sim):
            boards = [tuple(" ".join(p[row]) for row in ("top", "middle", "bottom"))
                      for p in hand["players"]]
            result = play(boards, rules)  # type: ignore[arg-type]
            assert not any(result[p["seat"]]["fouled"] for p in hand["players"])
            assert [result[p["seat"]]["points"] for p in hand["players"]] == \
                [p["reported_points"] for p in hand["players"]]
            for p in hand["players"]:
                worth.append(_low(parse_cards(p["middle"])))
        middles[name] = np.mean(worth)
    assert middles[LOW] > middles["high"]
    pineapple = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset(LOW), hands=5,
                           players=parse_players("a:safe,b:safe"))
    with pytest.raises(SimulationError, match="low in the middle is played in chinese-13"):
        pineapple.check()
