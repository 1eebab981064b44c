"""Fantasyland setting is exact: the search agrees with brute force over every set."""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest

from ofcstats import evaluate
from ofcstats.rules import load_ruleset
from ofcstats.simulate.fantasyland import best_sets, plain_strengths
from ofcstats.simulate.scoring import board_strengths, fouled, ruleset_arrays
from ofcstats.variants import Variant


@cache
def all_sets(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every (bottom, middle, top) of k card positions, as position arrays."""
    fives = np.array(list(itertools.combinations(range(k), 5)))
    threes = np.array(list(itertools.combinations(range(k), 3)))
    mask5 = (1 << fives).sum(axis=1)
    mask3 = (1 << threes).sum(axis=1)
    bottoms, middles, tops = [], [], []
    for b, bm in enumerate(mask5):
        for m in np.flatnonzero((mask5 & bm) == 0):
            left = ((1 << k) - 1) ^ bm ^ mask5[m]
            for t in np.flatnonzero((mask3 & ~left) == 0):
                bottoms.append(b)
                middles.append(m)
                tops.append(t)
    return fives, threes, np.array(bottoms), np.array(middles), np.array(tops)


def brute_force(cards: np.ndarray, arrays, bonus: float) -> float:
    """Best royalties plus stay bonus over every legal set, by listing them all."""
    fives, threes, b, m, t = all_sets(len(cards))
    s5 = evaluate.strength5(cards[fives]).astype(int)
    s3 = evaluate.strength3(cards[threes]).astype(int)
    sb, sm, st = s5[b], s5[m], s3[t]
    legal = (st <= sm) & (sm <= sb)
    value = (arrays.royalty[0][st] + arrays.royalty[1][sm] + arrays.royalty[2][sb]).astype(float)
    stay = np.zeros(len(b), dtype=bool)
    for strengths, limit in zip((st, sm, sb), arrays.stay, strict=True):
        if limit is not None:
            stay |= strengths >= limit
    return float(np.max(np.where(legal, value + bonus * stay, -np.inf)))


def value_of(cards: np.ndarray, actions: np.ndarray, arrays, bonus: float) -> float:
    board = np.concatenate([cards[actions == row] for row in range(3)])
    strengths = board_strengths(board[None].astype(np.uint8))
    assert not fouled(strengths)[0]
    s = strengths[0]
    value = sum(float(arrays.royalty[r][s[r]]) for r in range(3))
    if any(limit is not None and s[r] >= limit for r, limit in enumerate(arrays.stay)):
        value += bonus
    return value


def rich_hands(rng: np.random.Generator, count: int, k: int) -> np.ndarray:
    """Hands drawn from small pools so that pairs, trips, flushes and straights abound."""
    hands = []
    for _ in range(count):
        kind = rng.integers(4)
        if kind == 0:
            ranks = rng.choice(13, size=6, replace=False)
            pool = np.array([r * 4 + s for r in ranks for s in range(4)])
        elif kind == 1:
            suits = rng.choice(4, size=2, replace=False)
            pool = np.array([r * 4 + s for r in range(13) for s in suits])
        elif kind == 2:
            start = rng.integers(0, 8)
            pool = np.array([r * 4 + s for r in range(start, start + 6) for s in range(4)])
        else:
            pool = np.arange(52)
        hands.append(rng.choice(pool, size=k, replace=False))
    return np.array(hands, dtype=np.uint8)


@pytest.mark.parametrize(("k", "count", "preset"), [
    (13, 60, "american"),
    pytest.param(14, 25, "american", marks=pytest.mark.slow),
    (14, 8, "pokerstars"),
    (13, 20, "western"),
])
def test_fantasyland_set_matches_brute_force(k: int, count: int, preset: str) -> None:
    arrays = ruleset_arrays(load_ruleset(preset), Variant.PINEAPPLE)
    rng = np.random.default_rng(k * 1000 + count)
    hands = rich_hands(rng, count, k)
    for bonus in (0.0, 10.0):
        actions = best_sets(hands, arrays, bonus)
        for cards, acts in zip(hands, actions, strict=True):
            assert (acts < 3).sum() == 13
            assert value_of(cards, acts, arrays, bonus) == brute_force(cards, arrays, bonus)


@pytest.mark.parametrize("k", [13, 14, 15, 17])
def test_plain_set_is_the_strongest_five_then_the_strongest_five_left_then_a_top(k: int) -> None:
    # The plain set of a fantasyland seat whose cards are not known, against its
    # definition read plainly: the strongest five at the bottom (the first of equals in
    # the order of the combinations), the strongest five of the rest in the middle, the
    # strongest three of the cards left that does not beat the middle on top.
    rng = np.random.default_rng(k)
    hands = np.stack([rng.permutation(52)[:k] for _ in range(40)]).astype(np.uint8)
    got = plain_strengths(hands)

    def strongest(cards: np.ndarray, pool: list[int], size: int,
                  limit: int | None = None) -> tuple[tuple[int, ...], int]:
        combos = list(itertools.combinations(pool, size))
        rate = evaluate.strength5 if size == 5 else evaluate.strength3
        strengths = rate(cards[np.array(combos)]).astype(int)
        if limit is not None:
            strengths[strengths > limit] = -1
        at = int(np.argmax(strengths))  # the first of equals
        return combos[at], int(strengths[at])

    for h, cards in enumerate(hands):
        bottom, s_bottom = strongest(cards, list(range(k)), 5)
        middle, s_middle = strongest(cards, [p for p in range(k) if p not in bottom], 5)
        _, s_top = strongest(cards, [p for p in range(k) if p not in bottom + middle], 3,
                             s_middle)
        assert got[:, h].tolist() == [s_top, s_middle, s_bottom]
