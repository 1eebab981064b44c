"""Scoring, one test per rule of docs/rules.md §2-§6, with the worked examples of the sources."""

from __future__ import annotations

from typing import Any

import pytest
from handgen import board_hand, seats_frame

from ofcstats.rules import load_ruleset
from ofcstats.score import score


def play(boards: list[tuple[str, str, str]], ruleset: str, variant: str = "ofc-classic",
         fantasyland: tuple[bool, ...] = (), surrendered: tuple[bool, ...] = ()
         ) -> dict[int, dict[str, Any]]:
    hand = board_hand("h1", boards, variant)
    for i, player in enumerate(hand["players"]):
        player["fantasyland"] = i < len(fantasyland) and fantasyland[i]
        player["surrendered"] = i < len(surrendered) and surrendered[i]
    results = score(seats_frame([hand]), [load_ruleset(ruleset)])
    return {row["seat"]: row for row in results.iter_rows(named=True)}


def points(boards: list[tuple[str, str, str]], ruleset: str, **kwargs: Any) -> list[int]:
    return [r["points"] for _, r in sorted(play(boards, ruleset, **kwargs).items())]


# Two plain boards without royalties: A wins top and middle, B wins the bottom.
A_TWO_ONE = ("Ah Kc 3d", "Qs Qd 9c 8c 2h", "Ts Td 4s 4h 3c")
B_TWO_ONE = ("Kd Jc 2s", "Js Jd Tc 6h 5d", "6s 6d 6c 7h 9d")
# A beats B in every row, no royalties either side.
A_SCOOP = ("Ah Kc 3d", "Qs Qd 9c 8c 2h", "Ts Td 4s 4h 3c")
B_SCOOPED = ("Kd Jc 2s", "Js Jd Tc 6h 5d", "9s 9d 5s 5h 2c")


# §2 Ordering and fouls -----------------------------------------------------------------

def test_middle_stronger_than_bottom_fouls() -> None:
    fouled = ("Ah Kc 3d", "Ts Td 4s 4h 3c", "Qs Qd 9c 8c 2h")
    result = play([fouled, B_SCOOPED], "american")
    assert result[1]["fouled"]
    assert not result[2]["fouled"]


def test_top_stronger_than_middle_fouls() -> None:
    assert play([("Ah As 3d", "Qs Qd 9c 8c 2h", "Ts Td 4s 4h 3c"), B_SCOOPED],
                "american")[1]["fouled"]


def test_equal_strength_between_rows_is_not_a_foul() -> None:
    # Kinesisk poker: "the hand is NOT fouled" when rows are equal in strength.
    equal = ("Ah Kc 3d", "9s 9d 5c 5h 2c", "9h 9c 5s 5d 2d")
    assert not play([equal, B_TWO_ONE], "american")[1]["fouled"]


def test_top_qq5_under_middle_qq532_is_legal_and_qq6_fouls() -> None:
    # docs/rules.md §2 decision: the top row's missing kickers count lower than any card.
    legal = ("Qs Qh 5d", "Qc Qd 5c 3s 2h", "Ks Kh Kd 7c 7d")
    foul = ("Qs Qh 6d", "Qc Qd 5c 3s 2h", "Ks Kh Kd 7c 7d")
    other = ("2c 3c 4d", "8s 8h 9c Tc Jd", "As Ah Ac 9d 9h")
    assert not play([legal, other], "american")[1]["fouled"]
    assert play([foul, other], "american")[1]["fouled"]


def test_fouled_hand_loses_all_rows_gets_no_royalties_and_pays_the_opponents() -> None:
    # The fouler would have 9 for aces on top; the other side has a bottom straight (2).
    fouled = ("Ah As 3d", "Qs Jd 9c 8c 2h", "Ts Td 4s 4h 3c")
    other = ("8d 4c 2s", "Js 7d Tc 6h 5d", "5s 6d 7c 8h 9d")
    result = play([fouled, other], "american")
    assert result[1]["royalties"] == 0
    assert result[2]["royalties"] == 2
    assert [result[1]["points"], result[2]["points"]] == [-8, 8]
    assert [result[1]["rows_top"], result[1]["rows_middle"], result[1]["rows_bottom"]] == \
        [-1, -1, -1]


def test_when_both_hands_of_a_pair_foul_nothing_changes_hands_between_them() -> None:
    fouled_a = ("Ah As 3d", "Qs Jd 9c 8c 2h", "Ts Td 4s 4h 3c")
    fouled_b = ("Kh Kd 2s", "Js 7d Tc 6h 5d", "5s 6d 7c 8h 9d")
    alive = ("2c 3c 4d", "8s 8h 9h Tc Jd", "Ac Ad Qc Qd Qh")
    assert points([fouled_a, fouled_b], "american") == [0, 0]
    # With a third, live hand, each fouler pays only the live one.
    three = play([fouled_a, fouled_b, alive], "american")
    assert three[1]["points"] == three[2]["points"] == -(6 + 6)  # scoop value + bottom FH 6


def test_when_every_hand_fouls_nobody_pays() -> None:
    fouled = [("Ah As 3d", "Qs Jd 9c 8c 2h", "Ts Td 4s 4h 3c"),
              ("Kh Kd 2s", "Js 7d Tc 6h 5d", "5s 6d 7c 8h 9d"),
              ("Qc Qd 2c", "3s 4h 6c 8d Td", "2d 3d 4c 5c 7s")]
    assert points(fouled, "pokerdom") == [0, 0, 0]


def test_foul_penalty_is_six_even_where_a_scoop_pays_less() -> None:
    # Pokerdom (How to play OFC): a scoop pays 4, a foul 6.
    fouled = ("Ah As 3d", "Qs Jd 9c 8c 2h", "Ts Td 4s 4h 3c")
    assert points([fouled, B_SCOOPED], "pokerdom") == [-6, 6]
    assert points([A_SCOOP, B_SCOOPED], "pokerdom") == [4, -4]
    assert points([fouled, B_SCOOPED], "two-four") == [-4, 4]  # default: the scoop's value


# §3 Head-to-head points ------------------------------------------------------------------

@pytest.mark.parametrize(
    ("ruleset", "two_one", "scoop"),
    [("one-six", 1, 6), ("american", 1, 6), ("two-four", 2, 4), ("two-four-scoop", 1, 4),
     ("foreign", 2, 4), ("classic-kush", 2, 6), ("pokerstars-win2", 2, 6), ("pokerdom", 2, 4)],
)
def test_two_one_and_scoop_pay_as_the_rules_table_says(ruleset: str, two_one: int,
                                                       scoop: int) -> None:
    assert points([A_TWO_ONE, B_TWO_ONE], ruleset) == [two_one, -two_one]
    assert points([A_SCOOP, B_SCOOPED], ruleset) == [scoop, -scoop]


def test_two_four_pays_two_plus_one_when_one_row_ties() -> None:
    # Rules and features: "2+1 when one row ties"; the tops tie (A K 3 against A K 3).
    a = ("Ah Kc 3d", "Qs Qd 9c 8c 2h", "Ts Td 4s 4h 3c")
    b = ("Ad Kh 3s", "Js Jd Tc 6h 5d", "9s 9d 5s 5h 2c")
    assert points([a, b], "two-four") == [3, -3]
    assert points([a, b], "one-six") == [2, -2]


def test_pokerdom_worked_example_pays_three_minus_one_is_two() -> None:
    # How to play OFC: player 1 wins top and bottom (2 + 1 bonus), player 2 the middle (1).
    p1 = ("Ah Kc 3d", "Js Jd Tc 6h 5d", "Ts Td 4s 4h 3c")
    p2 = ("Kd Jc 2s", "Qs Qd 9c 8c 2h", "9s 9d 5s 5h 2c")
    assert points([p1, p2], "pokerdom") == [2, -2]


def test_russian_worked_example_b_nets_three_and_foreign_two() -> None:
    # Rules and features: A wins only the back, B the front and middle. The source prints the
    # middles with four cards; a low fifth card is added to each without changing them.
    a = ("A♠ K♥ J♦", "5♥ 5♦ 4♣ 4♦ 3♣", "6♠ 7♠ 8♣ 9♦ T♣")
    b = ("A♣ A♥ T♠", "Q♣ Q♠ J♣ J♥ 9♠", "2♠ 3♠ 4♥ 5♣ 6♥")
    assert points([a, b], "russian") == [-3, 3]
    assert points([a, b], "foreign") == [-2, 2]


def test_russian_table_bonus_is_collected_from_each_opponent() -> None:
    # A beats the whole table on the bottom; B on the top and the middle; C nowhere.
    a = ("2c 3c 5d", "7s 7h 8c 9d Tc", "As Ah Ad Kc Kd")
    b = ("Ac Kh 4d", "8s 8h 2d 3s 4h", "5s 5h 5c 6d 6h")
    c = ("Ad Qc 4s", "6s 6h 2h 3d 4c", "Js Jh Jc 6c 6d")
    result = play([a, b, c], "russian")
    foreign = play([a, b, c], "foreign")
    bonus = [result[s]["points"] - foreign[s]["points"] for s in (1, 2, 3)]
    # A: +1 from B and +1 from C, pays B 2; B: +2 from each, pays A 1; C pays 1 + 2.
    assert bonus == [2 - 2, 4 - 1, -1 - 2]


# §4 Royalties --------------------------------------------------------------------------

SCOOP_QUADS = ("Ah Kc 3d", "Qs Qd 9c 8c 2h", "7c 7d 7h 7s 4c")
FLUSH_BOTTOM = ("Kd Jc 2s", "Js Jd Tc 6h 5d", "3h 5h 8h Th Kh")


@pytest.mark.parametrize("ruleset", ["pokerstars", "american"])
def test_scoop_with_bottom_quads_against_bottom_flush_pays_12(ruleset: str) -> None:
    # Kinesisk poker: A scoops (6), quads in the bottom (10); B has a bottom flush (4): 12.
    assert points([SCOOP_QUADS, FLUSH_BOTTOM], ruleset) == [12, -12]


def test_royalties_are_netted_pairwise() -> None:
    result = play([SCOOP_QUADS, FLUSH_BOTTOM], "american")
    assert (result[1]["royalties"], result[2]["royalties"]) == (10, 4)


@pytest.mark.parametrize(
    ("top", "value"),
    [("5s 5h Ad", 0), ("6s 6h Ad", 1), ("9s 9h Ad", 4), ("Qs Qh Ad", 7), ("As Ah Kd", 9),
     ("2s 2h 2d", 10), ("7s 7h 7d", 15), ("As Ah Ad", 22), ("As Kh Qd", 0)],
)
def test_top_royalties_66_pays_1_to_aaa_pays_22(top: str, value: int) -> None:
    board = (top, "3h 4h 5c 6c 7c", "9c Tc Jc Qc 2c")  # a straight under a flush
    other = ("4c 5d 8s", "6c 6d 9h 9c 2c", "3h 3s 4h 4s Jh")
    result = play([board, other], "american")
    assert result[1]["royalty_top"] == value


@pytest.mark.parametrize(
    ("middle", "bottom", "royalties"),
    [
        ("2c 2d 2h 5s 7d", "Ac Ad Ah As 3c", {"american": (2, 10), "pokerstars": (0, 10),
                                              "classic-kush": (2, 8), "western": (2, 8)}),
        ("3c 4d 5h 6s 7d", "4c 5c 6c 7c 8c", {"american": (4, 15), "pokerstars": (4, 15),
                                              "classic-kush": (4, 10), "western": (4, 10)}),
        ("2h 5h 8h Jh Kh", "Ts Js Qs Ks As", {"american": (8, 25), "pokerstars": (8, 25),
                                              "classic-kush": (8, 25), "western": (8, 15)}),
        ("9c 9d 9h 4s 4d", "9s Ts Js Qs Ks", {"american": (12, 15), "pokerstars": (12, 15),
                                              "classic-kush": (12, 10), "western": (12, 10)}),
        ("9c 9d 9h 9s 4h", "Jc Jd Jh Js Tc", {"american": (20, 10), "pokerstars": (20, 10),
                                              "classic-kush": (16, 8), "western": (16, 8)}),
    ],
)
def test_middle_and_bottom_royalties_by_table(middle: str, bottom: str,
                                              royalties: dict[str, tuple[int, int]]) -> None:
    board = ("2s 3s 6d", middle, bottom)
    other = ("4c 5d 8s", "6c 6d 9h Tc 2d", "3h 3s 4h 4s Jh")
    for ruleset, (mid, bot) in royalties.items():
        result = play([board, other], ruleset)
        assert not result[1]["fouled"], middle
        assert (result[1]["royalty_middle"], result[1]["royalty_bottom"]) == (mid, bot), ruleset


def test_finnish_spade_flush_with_the_deuce_in_the_bottom_earns_8() -> None:
    # Kinesisk poker: a bottom spade flush holding the 2 of spades earns 8 instead of 4.
    spade_flush = ("Ah Kc 3d", "Qh Qd 9c 8c 2h", "2s 5s 8s Ts Ks")
    other = ("Kd Jc 4h", "Js Jd Tc 6h 5d", "9h 9d 5c 5h 3c")
    assert play([spade_flush, other], "finnish-spade")[1]["royalty_bottom"] == 8
    assert play([spade_flush, other], "american")[1]["royalty_bottom"] == 4


def test_finnish_bottom_pair_with_the_deuce_pays_double_a_full_house_12() -> None:
    # Kinesisk poker: your bottom pair holds the 2 of spades; the opponent's full house costs 12.
    pair_bottom = ("4c 3d 5h", "Js Jd Tc 6h 5d", "2s 2d Ac Kh Qh")
    full_house = ("Kd Jc 7h", "8s 8d 9c 9h 3c", "Th Td Ts 6c 6d")
    result = play([pair_bottom, full_house], "finnish-spade")
    assert result[2]["royalty_bottom"] == 12
    american = play([pair_bottom, full_house], "american")
    assert result[2]["points"] - american[2]["points"] == 6


def test_finnish_doubling_applies_when_the_holder_of_the_deuce_fouled() -> None:
    # docs/rules.md §4 decision: the opponent's royalty in that row is still paid double.
    fouled_with_deuce = ("Ah As 3d", "Qs Jd 9c 8c 4h", "2s Td 4s 5h 3c")
    full_house = ("Kd Jc 7h", "8s 8d 9c 9h 3d", "Th Tc Ts 6c 6d")
    result = play([fouled_with_deuce, full_house], "finnish-spade")
    assert result[1]["fouled"]
    assert result[2]["royalty_bottom"] == 12
    assert result[2]["points"] == 6 + 12


def test_a_fouled_seat_never_collects_royalties_even_with_the_deuce() -> None:
    fouled = ("Ah As 2s", "Qs Jd 9c 8c 4h", "Kc Td 4s 5h 3c")
    other = ("Kd Jc 7h", "8s 8d 9c 9h 3d", "Th Tc Ts 6c 6d")
    assert play([fouled, other], "finnish-spade")[1]["royalties"] == 0


# Classic 13-card Chinese poker: naturals, surrender --------------------------------------

def test_a_dragon_is_paid_13_by_each_opponent_before_the_showdown() -> None:
    dragon = ("2c 3d 4h", "5s 6c 7d 8h 9s", "Tc Jd Qh Ks Ac")
    other = ("2d 2h 4c", "5c 5d 7c 8c 9c", "Td Th Qc Qd Ad")
    third = ("3c 3h 4d", "6d 6h 7h 8d 9d", "Jc Jh Kc Kd Ah")
    result = play([dragon, other, third], "one-six", variant="chinese-13")
    assert result[1]["points"] == 26
    assert result[2]["points"] + result[3]["points"] == -26


def test_three_flushes_six_pairs_and_three_straights_are_naturals() -> None:
    three_flushes = ("2h 5h 9h", "3d 6d 8d Td Qd", "4c 7c 9c Jc Kc")
    six_pairs = ("2s 2d 3h", "3c 4s 4h 5c 5d", "6c 6s 7c 7s 8d")
    three_straights = ("Ah 2d 3s", "4c 5s 6h 7d 8c", "4h 5d 6c 7s 8d")
    plain = ("Kd Jc 7h", "8s 8h 9s 9d 3c", "Th Tc As 6d Ad")
    for natural in (three_flushes, six_pairs, three_straights):
        assert points([natural, plain], "two-four", variant="chinese-13") == [3, -3]


def test_naturals_belong_to_thirteen_card_poker_only() -> None:
    dragon = ("2c 3d 4h", "5s 6c 7d 8h 9s", "Tc Jd Qh Ks Ac")
    plain = ("2d 2h 4c", "5c 5d 7c 8c 9c", "Td Th Qc Qd Ad")
    assert points([dragon, plain], "one-six", variant="chinese-13") == [13, -13]
    assert points([dragon, plain], "one-six", variant="ofc-classic") == [1, -1]


def test_two_naturals_net_against_each_other() -> None:
    dragon = ("2c 3d 4h", "5s 6c 7d 8h 9s", "Tc Jd Qh Ks Ac")
    six_pairs = ("2s 2d 3h", "3c 4s 4h 5c 5d", "6h 6s 7c 7s 8d")
    assert points([dragon, six_pairs], "foreign", variant="chinese-13") == [10, -10]


def test_surrender_pays_more_than_two_rows_and_less_than_a_scoop() -> None:
    result = points([A_SCOOP, B_SCOOPED], "one-six", variant="chinese-13",
                    surrendered=(False, True))
    one_six = load_ruleset("one-six").head_to_head
    assert result == [5, -5]
    # Losing two rows (one tied) costs 2; a scoop costs 6 (docs/rules.md §5).
    assert 2 * one_six.row < result[0] < one_six.scoop_value


def test_a_surrender_pays_no_royalties() -> None:
    result = play([SCOOP_QUADS, FLUSH_BOTTOM], "american", variant="chinese-13",
                  surrendered=(False, True))
    assert result[1]["royalties"] == 0
    assert result[1]["points"] == 5


# §6 Fantasyland ------------------------------------------------------------------------

OTHER = ("2c 3c 4d", "8s 8h 9h Tc Jd", "Ac Ad Kc Kd Kh")


@pytest.mark.parametrize(("top", "enters"), [("Qs Qh 2d", True), ("Js Jh Ad", False),
                                             ("As Ah 2d", True), ("5s 5h 5d", True)])
def test_queens_or_better_on_top_enter_fantasyland(top: str, enters: bool) -> None:
    board = (top, "6c 6d 6h 7c 7d", "9c 9d 9h 9s 3s")
    assert play([board, OTHER], "american")[1]["fantasyland_next"] is enters


def test_a_fouled_hand_never_enters_fantasyland() -> None:
    fouled = ("Qs Qh 2d", "6c 6d 3h 7c 4d", "9c Td 5h 8s 3s")
    result = play([fouled, OTHER], "american")
    assert result[1]["fouled"]
    assert not result[1]["fantasyland_next"]


@pytest.mark.parametrize(
    ("board", "stays"),
    [
        (("5s 5h 5d", "2c 3d 4h 5c 6d", "9c 9d 9h Ts Tc"), True),  # trips on top
        (("5s 4h 2d", "6c 6d 6h 7c 7d", "9c 9d 9h Ts Tc"), True),  # middle full house
        (("5s 4h 2d", "6c 6d 7h 7c Jd", "9c 9d 9h 9s 3c"), True),  # bottom quads
        (("Qs Qh 2d", "6c 6d 7h 7c Jd", "9c 9d 9h Ts Tc"), False),  # QQ does not stay
    ],
)
def test_staying_in_fantasyland_under_standard_and_unlimited(board: tuple[str, str, str],
                                                             stays: bool) -> None:
    assert play([board, OTHER], "american", fantasyland=(True,))[1]["fantasyland_next"] is stays
    assert play([board, OTHER], "pokerdom", fantasyland=(True,))[1]["fantasyland_next"] is stays


def test_bottom_top_only_policy_does_not_stay_on_a_middle_full_house(tmp_path: Any) -> None:
    path = tmp_path / "btop.toml"
    path.write_text('fantasyland = "bottom-top-only"\nroyalties = "american"\n'
                    '[head_to_head]\nrow = 1\nmajority = 0\nscoop = 3\n', encoding="utf-8")
    board = ("5s 4h 2d", "6c 6d 6h 7c 7d", "9c 9d 9h Ts Tc")
    assert not play([board, OTHER], str(path), fantasyland=(True,))[1]["fantasyland_next"]
    quads = ("5s 4h 2d", "6c 6d 7h 7c Jd", "9c 9d 9h 9s 3c")
    assert play([quads, OTHER], str(path), fantasyland=(True,))[1]["fantasyland_next"]


def test_no_fantasyland_under_policy_none() -> None:
    board = ("As Ah Ad", "6c 6d 6h 7c 7d", "9c 9d 9h 9s 3s")
    assert not play([board, OTHER], "pokerstars")[1]["fantasyland_next"]


@pytest.mark.parametrize(("top", "pineapple", "classic"),
                         [("Qs Qh 2d", 14, 13), ("Ks Kh 2d", 15, 14), ("As Ah 2d", 16, 15),
                          ("3s 3h 3d", 17, 16)])
def test_progressive_fantasyland_cards_by_the_top_that_earned_it(
        tmp_path: Any, top: str, pineapple: int, classic: int) -> None:
    path = tmp_path / "prog.toml"
    path.write_text('fantasyland = "progressive"\nroyalties = "american"\n'
                    '[head_to_head]\nrow = 1\nmajority = 0\nscoop = 3\n', encoding="utf-8")
    board = (top, "6c 6d 6h 7c 7d", "9c 9d 9h 9s 4s")
    assert play([board, OTHER], str(path), variant="pineapple")[1]["fantasyland_cards"] == \
        pineapple
    assert play([board, OTHER], str(path), variant="ofc-classic")[1]["fantasyland_cards"] == \
        classic
    # A stay deals the flat count.
    stay = play([board, OTHER], str(path), variant="pineapple", fantasyland=(True,))
    assert stay[1]["fantasyland_cards"] == 14


def test_standard_fantasyland_deals_13_or_14_in_pineapple() -> None:
    board = ("Qs Qh 2d", "6c 6d 6h 7c 7d", "9c 9d 9h 9s 3s")
    assert play([board, OTHER], "american", variant="pineapple")[1]["fantasyland_cards"] == 14
    assert play([board, OTHER], "american", variant="ofc-turbo")[1]["fantasyland_cards"] == 13
    assert play([board, OTHER], "american")[2]["fantasyland_cards"] == 0


def test_thirteen_card_chinese_poker_has_no_fantasyland() -> None:
    board = ("Qs Qh 2d", "6c 6d 6h 7c 7d", "9c 9d 9h 9s 3s")
    assert not play([board, OTHER], "american", variant="chinese-13")[1]["fantasyland_next"]
