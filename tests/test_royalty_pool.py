"""The royalty pool of 13-card Chinese poker, one test per rule and per reading, on
hand-built boards ("Китайский покер - правила и особенности": «Назначается определенная
сумма с каждого игрока, которая потом делится между победителем или победителями
роялти»). Each test compares the points with and without the pool, so it sees the pool
alone; the reference scorer must agree on the same hands."""

from __future__ import annotations

from typing import Any

import pytest
from handgen import board_hand, seats_frame

from ofcstats.cards import parse_cards
from ofcstats.errors import RulesetError
from ofcstats.rules.load import ruleset_from
from ofcstats.rules.model import Ruleset
from ofcstats.rules.reference import Seat, score_hand
from ofcstats.score import score

Board = tuple[str, str, str]
QUADS_SIXES: Board = ("Qh Jh 3c", "Ks Kc 9c 8c 7d", "6s 6h 6d 6c Ad")
QUADS_FIVES: Board = ("Kh Jc 2d", "As Tc 9d 4c 4h", "5s 5h 5d 5c 3s")
STRAIGHT_FLUSH: Board = ("7c 4d 2c", "5h 5d Tc 3d 2s", "9d Td Jd Qd Kd")
NOTHING: Board = ("Js 8d 2h", "Qs Qc 7s 4s 3h", "Ah Ac Th 9h 8h")
# A full house in the bottom is no royalty hand for the pool (the source names quads,
# straight flushes, a middle full house and trips in front).
BOTTOM_FULL_HOUSE: Board = ("Kh Jc 2d", "As Tc 9d 4c 4h", "5s 5h 5d 3s 3d")
MIDDLE_FULL_HOUSE: Board = ("Kh Kd Ks", "Tc Td Ts 4c 4h", "Jc Jd Jh 5c 5d")
# The sixes set in the middle over a pair of kings: a misset hand, dead.
QUADS_MISSET: Board = ("Qh Jh 3c", "6s 6h 6d 6c Ad", "Ks Kc 9c 8c 7d")


def ruleset(split: str | None, stake: int = 1) -> Ruleset:
    data: dict[str, Any] = {"name": f"pool-{split}", "variant": "chinese-13",
                            "royalties": "chinese-bonus",
                            "head_to_head": {"row": 1, "majority": 0, "scoop": 3}}
    if split is not None:
        data["royalty_pool"] = {"stake": stake, "split": split}
    return ruleset_from(data, "house.toml")


def pool(boards: list[Board], split: str, stake: int = 1) -> list[int]:
    """What the pool adds to each seat's points, by the scorer and by the reference."""
    seats = seats_frame([board_hand("h1", boards, "chinese-13")])
    with_pool, without = (score(seats, [r]).get_column("points").to_list()
                          for r in (ruleset(split, stake), ruleset(None)))
    added = [a - b for a, b in zip(with_pool, without, strict=True)]
    hand = [Seat(i + 1, *(parse_cards(row) for row in board)) for i, board in enumerate(boards)]
    reference = [score_hand(hand, ruleset(split, stake), "chinese-13")[i + 1]["points"]
                 - score_hand(hand, ruleset(None), "chinese-13")[i + 1]["points"]
                 for i in range(len(boards))]
    assert added == reference
    return added


def test_royalty_pool_best_hand_takes_it_higher_quads_beat_lower_quads() -> None:
    """The source's example: sixes against fives, the sixes take the pool of three."""
    assert pool([QUADS_SIXES, QUADS_FIVES, NOTHING], "best") == [2, -1, -1]
    assert pool([QUADS_FIVES, QUADS_SIXES, NOTHING], "best", stake=2) == [-2, 4, -2]


def test_royalty_pool_best_straight_flush_beats_quads() -> None:
    assert pool([QUADS_SIXES, STRAIGHT_FLUSH, NOTHING], "best") == [-1, 2, -1]


def test_royalty_pool_share_straight_flushes_and_quads_share_it() -> None:
    """By agreement every royalty hand shares the pool: 6 among two takers is 3 each;
    3 among two is 2 and 1, the odd point to the lower seat number."""
    assert pool([QUADS_SIXES, STRAIGHT_FLUSH, NOTHING], "share", stake=2) == [1, 1, -2]
    assert pool([QUADS_SIXES, QUADS_FIVES, NOTHING], "share") == [1, 0, -1]
    assert pool([NOTHING, QUADS_FIVES, QUADS_SIXES], "share") == [-1, 1, 0]


def test_royalty_pool_each_royalty_hand_takes_a_stake_from_every_other_player() -> None:
    """By agreement each royalty hand takes one unit (the stake) from each other player;
    two royalty hands net out between them."""
    assert pool([QUADS_SIXES, QUADS_FIVES, NOTHING], "each") == [1, 1, -2]
    assert pool([QUADS_SIXES, NOTHING, NOTHING], "each", stake=3) == [6, -3, -3]


@pytest.mark.parametrize("split", ["best", "share", "each"])
def test_royalty_pool_without_a_royalty_hand_nobody_pays(split: str) -> None:
    assert pool([NOTHING, BOTTOM_FULL_HOUSE], split) == [0, 0]


@pytest.mark.parametrize("split", ["best", "share", "each"])
def test_royalty_pool_middle_full_house_is_a_royalty_hand(split: str) -> None:
    assert pool([MIDDLE_FULL_HOUSE, NOTHING], split) == [1, -1]


def test_royalty_pool_misset_hand_takes_no_share_but_pays_in() -> None:
    """A dead hand earns no royalties (§2): its quads do not count, it still pays in."""
    assert pool([QUADS_MISSET, QUADS_FIVES, NOTHING], "best") == [-1, 2, -1]
    assert pool([QUADS_MISSET, NOTHING], "best") == [0, 0]


@pytest.mark.parametrize(("table", "message"), [
    ({"stake": 1, "split": "winner"}, r"royalty_pool: split = 'winner'.*best, share, each"),
    ({"stake": "one", "split": "best"}, r"royalty_pool: stake = 'one'.*whole number"),
    ({"stake": -1, "split": "best"}, r"royalty_pool: stake = -1.*at least 0"),
    ({"split": "best"}, r"house.toml.royalty_pool: stake is missing: give the points each "
                        r"player pays into the pool \(stake\) and who takes it \(split: best, "
                        r"share, each\)"),
    ({"stake": 1}, r"house.toml.royalty_pool: split is missing"),
    ({}, r"house.toml.royalty_pool: stake and split are missing"),
    ({"stake": 1, "pot": 3}, r"royalty_pool.*pot"),
])
def test_royalty_pool_is_validated_naming_key_and_value(table: dict[str, Any],
                                                        message: str) -> None:
    with pytest.raises(RulesetError, match=message):
        ruleset_from({"head_to_head": {"row": 1, "majority": 0, "scoop": 0},
                      "royalty_pool": table}, "house.toml")
