"""Row strength: exhaustive category counts, one comparable scale, agreement with phevaluator."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phevaluator import _pheval  # its C function, called once per hand

from ofcstats import evaluate
from ofcstats.cards import parse_cards
from ofcstats.errors import CardError
from ofcstats.evaluate import RANK_KEYS, Category


@pytest.fixture(scope="module")
def all_fives() -> np.ndarray:
    return np.array(list(itertools.combinations(range(52), 5)), dtype=np.uint8)


@pytest.fixture(scope="module")
def all_threes() -> np.ndarray:
    return np.array(list(itertools.combinations(range(52), 3)), dtype=np.uint8)


def s5(text: str) -> int:
    return int(evaluate.strength5([parse_cards(text)])[0])


def s3(text: str) -> int:
    return int(evaluate.strength3([parse_cards(text)])[0])


def test_rank_keys_give_every_rank_multiset_its_own_sum() -> None:
    for size, limit in ((5, 4), (3, 3)):
        sums = Counter(
            sum(RANK_KEYS[r] for r in combo)
            for combo in itertools.combinations_with_replacement(range(13), size)
            if max(Counter(combo).values()) <= limit
        )
        assert max(sums.values()) == 1


def test_five_card_category_counts_over_all_2598960_hands(all_fives: np.ndarray) -> None:
    counts = np.bincount(evaluate.category(evaluate.strength5(all_fives)), minlength=10)
    assert len(all_fives) == 2_598_960
    assert dict(zip(Category, counts.tolist(), strict=True)) == {
        Category.HIGH_CARD: 1_302_540, Category.PAIR: 1_098_240, Category.TWO_PAIR: 123_552,
        Category.TRIPS: 54_912, Category.STRAIGHT: 10_200, Category.FLUSH: 5_108,
        Category.FULL_HOUSE: 3_744, Category.QUADS: 624, Category.STRAIGHT_FLUSH: 36,
        Category.ROYAL_FLUSH: 4,
    }


def test_five_card_hands_take_7462_distinct_strengths(all_fives: np.ndarray) -> None:
    assert len(np.unique(evaluate.strength5(all_fives))) == 7462


def test_three_card_category_counts_over_all_22100_hands(all_threes: np.ndarray) -> None:
    strengths = evaluate.strength3(all_threes)
    counts = np.bincount(evaluate.category(strengths), minlength=10)
    assert len(all_threes) == 22_100
    assert counts[Category.TRIPS] == 52
    assert counts[Category.PAIR] == 3_744
    assert counts[Category.HIGH_CARD] == 18_304
    assert counts.sum() == counts[[Category.HIGH_CARD, Category.PAIR, Category.TRIPS]].sum()
    assert len(np.unique(strengths)) == 455


def test_three_and_five_card_strengths_never_coincide(all_fives: np.ndarray,
                                                      all_threes: np.ndarray) -> None:
    fives = set(np.unique(evaluate.strength5(all_fives)).tolist())
    threes = set(np.unique(evaluate.strength3(all_threes)).tolist())
    assert not fives & threes
    assert len(fives | threes) == evaluate.strength_count() == 7917


@pytest.mark.slow
def test_full_ordering_agrees_with_phevaluator_on_every_five_card_hand(
        all_fives: np.ndarray) -> None:
    ours = evaluate.strength5(all_fives)
    # phevaluator numbers cards rank*4 + suit with suits c, d, h, s, as we do.
    theirs = np.fromiter(
        itertools.starmap(_pheval.evaluate_5cards, all_fives.tolist()),
        dtype=np.int32, count=len(all_fives))
    # Theirs: 1 is the best hand. The two must be the same order, reversed, exactly.
    order = np.lexsort((ours,))
    assert np.all(np.diff(theirs[order].astype(np.int64)) <= 0)
    pairs = np.unique(np.stack([ours, theirs], axis=1), axis=0)
    assert len(pairs) == 7462 == len(np.unique(ours)) == len(np.unique(theirs))


def test_top_pair_with_missing_kicker_is_weaker_than_same_pair_with_more_kickers() -> None:
    # docs/rules.md §2 decision: QQ5 top under QQ532 middle is legal; QQ6 over it fouls.
    assert s3("Qs Qh 5d") < s5("Qc Qd 5c 3s 2h")
    assert s3("Qs Qh 6d") > s5("Qc Qd 5c 3s 2h")


def test_top_row_straights_and_flushes_do_not_count() -> None:
    assert evaluate.category([s3("Qh Kh Ah")])[0] == Category.HIGH_CARD
    assert s3("Qh Kh Ah") == s3("Qc Kh Ad")
    assert s3("2h 3h 4h") < s3("2c 2d 3s")


def test_ace_to_five_is_the_lowest_straight() -> None:
    assert s5("Ah 2c 3d 4s 5h") < s5("2h 3c 4d 5s 6h") < s5("Th Jc Qd Ks Ah")
    assert s5("Ah 2c 3d 4s 5h") > s5("Ah Ac Ad Ks Qh")


def test_royal_flush_is_the_ace_high_straight_flush() -> None:
    assert evaluate.category([s5("Th Jh Qh Kh Ah")])[0] == Category.ROYAL_FLUSH
    assert evaluate.category([s5("9h Th Jh Qh Kh")])[0] == Category.STRAIGHT_FLUSH
    assert s5("Th Jh Qh Kh Ah") == evaluate.strength_count()


def test_kickers_break_ties_and_equal_rows_tie() -> None:
    assert s5("Ah Ad Kc 9s 2h") > s5("As Ac Kd 9h 2c") - 1
    assert s5("Ah Ad Kc 9s 3h") > s5("As Ac Kd 9h 2c")
    assert s5("Ah Ad Kc 9s 2h") == s5("As Ac Kd 9h 2c")
    assert s3("3s 3h 6d") > s3("3c 3d 2h")  # Kinesisk poker: 3-3-6 beats 3-3-2 on the kicker


def test_no_suit_ranking() -> None:
    assert s5("2h 5h 7h 9h Jh") == s5("2s 5s 7s 9s Js")


def _independent_key(cards: list[int]) -> tuple[int, ...]:
    """Category and ranks by significance, written separately from the evaluator."""
    ranks = sorted((c >> 2 for c in cards), reverse=True)
    counts = Counter(ranks)
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = [n for _, n in groups]
    order = [r for r, _ in groups]
    padded = [r for r, n in groups for _ in range(n)]
    flush = len(cards) == 5 and len({c & 3 for c in cards}) == 1
    straight_high = None
    if len(cards) == 5 and len(counts) == 5:
        if ranks[0] - ranks[4] == 4:
            straight_high = ranks[0]
        elif ranks == [12, 3, 2, 1, 0]:
            straight_high = 3
    if straight_high is not None and flush:
        key = [8, straight_high]
    elif shape[0] == 4:
        key = [7, *order]
    elif shape[:2] == [3, 2]:
        key = [6, *order]
    elif flush:
        key = [5, *padded]
    elif straight_high is not None:
        key = [4, straight_high]
    elif shape[0] == 3:
        key = [3, *order]
    elif shape[:2] == [2, 2]:
        key = [2, *order]
    elif shape[0] == 2:
        key = [1, *order]
    else:
        key = [0, *padded]
    return tuple(key + [-1] * (6 - len(key)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 51), min_size=8, max_size=8, unique=True))
def test_top_against_middle_compares_category_then_ranks_then_kickers(cards: list[int]) -> None:
    top, middle = cards[:3], cards[3:]
    ours = np.sign(int(evaluate.strength3([top])[0]) - int(evaluate.strength5([middle])[0]))
    key_top, key_mid = _independent_key(top), _independent_key(middle)
    assert ours == (key_top > key_mid) - (key_top < key_mid)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 51), min_size=5, max_size=5, unique=True),
       st.lists(st.integers(0, 51), min_size=5, max_size=5, unique=True))
def test_five_card_rows_compare_by_the_poker_ranking(a: list[int], b: list[int]) -> None:
    ours = np.sign(int(evaluate.strength5([a])[0]) - int(evaluate.strength5([b])[0]))
    assert ours == (_independent_key(a) > _independent_key(b)) - (
        _independent_key(a) < _independent_key(b))


def test_any_integer_dtype_and_layout_gives_the_same_strengths(all_fives: np.ndarray) -> None:
    sample = all_fives[::997]
    expected = evaluate.strength5(sample)
    assert np.array_equal(evaluate.strength5(sample.astype(np.int64)), expected)
    assert np.array_equal(evaluate.strength5(np.asfortranarray(sample)), expected)
    assert np.array_equal(evaluate.strength5(sample[:, ::-1]), expected)  # order within a row
    assert evaluate.strength5(np.empty((0, 5), dtype=np.uint8)).shape == (0,)


def test_wrong_shape_or_codes_are_errors() -> None:
    with pytest.raises(CardError, match=r"shape \(N, 5\)"):
        evaluate.strength5(np.zeros((3, 4), dtype=np.uint8))
    with pytest.raises(CardError, match="card codes run from 0 to 51"):
        evaluate.strength5(np.full((1, 5), 52))


def test_weakest_names_thresholds() -> None:
    assert evaluate.describe([evaluate.weakest("KK")]) == ["pair of kings, deuce kicker"]
    assert evaluate.describe([evaluate.weakest("222")]) == ["three deuces"]
    assert evaluate.describe([evaluate.weakest("quads")]) == ["four deuces, three kicker"]
    with pytest.raises(CardError, match="'QJ' is not a hand threshold"):
        evaluate.weakest("QJ")
