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
        ruleset_from({"head_to_head": {"row": 1}, **data}, "house.toml")
