"""The Monte Carlo bot's opponents, played out by the rule, are the boards they always were.

An opponent's play-out takes every street by the quick rule, the last one included, so
no list of ways to place the last street is built for it (for a seat in fantasyland,
setting 13 cards in one street, that list has 514,048 rows picked from 67 million, and
took seconds to build). Here the play-outs, and whole seeded runs, are held to the
compiled kernel fed the full list, as it was.
"""

from __future__ import annotations

from functools import cache
from math import comb
from typing import Any

import numpy as np
import pytest

from ofcstats.rules import load_ruleset
from ofcstats.simulate import Simulation, montecarlo, parse_players, simulate
from ofcstats.simulate.scoring import ruleset_arrays
from ofcstats.simulate.tables import (
    DISCARD,
    TOP,
    pattern_counts,
    patterns,
)
from ofcstats.variants import Variant


@cache
def every_placement(cards: int, discards: int) -> tuple[np.ndarray, np.ndarray]:
    """Every way to place a street, in the order of :func:`patterns`, and its row counts.

    A street of 13 cards is listed with arrays (every base-4 code with no discard, a top
    of three cards at most, in increasing order: the order of ``itertools.product``);
    a short street is :func:`patterns` itself."""
    if cards < 13:
        return patterns(cards, discards), pattern_counts(cards, discards)
    assert discards == 0
    digits = np.indices((3,) * cards, dtype=np.int8).reshape(cards, -1).T  # base 3, in order
    pats = digits[((digits == TOP).sum(axis=1) <= 3) & ((digits == DISCARD).sum(axis=1) == 0)]
    counts = np.stack([(pats == r).sum(axis=1) for r in range(3)], axis=1).astype(np.int8)
    return np.ascontiguousarray(pats), counts


_PLAY_OUT = montecarlo.play_out


def listed_play_out(keys: np.ndarray, filled: np.ndarray, cards: np.ndarray,
                    streets: list[tuple[int, int]], arrays: Any, fl_value: float,
                    exact_last: bool = True) -> np.ndarray:
    """:func:`montecarlo.play_out` as it was: the compiled kernel given every way to
    place the last street, whether it plays that street exactly or by the rule."""
    listed = every_placement(*streets[-1]) if streets else None
    return _PLAY_OUT(keys, filled, cards, streets, arrays, fl_value, exact_last, listed)


def test_the_listed_placements_are_the_patterns() -> None:
    """The reference's own list of placements is :func:`patterns`' list, row for row."""
    for cards in (5, 7):
        digits = np.indices((3,) * cards, dtype=np.int8).reshape(cards, -1).T
        listed = digits[(digits == TOP).sum(axis=1) <= 3]
        assert np.array_equal(listed, patterns(cards, 0))
    # Thirteen cards: t on top (three at most), each other card in the middle or bottom.
    count = sum(comb(13, t) * 2 ** (13 - t) for t in range(4))
    assert every_placement(13, 0)[0].shape == (count, 13)


@pytest.mark.parametrize("preset", ["american", "pokerstars"])
def test_fantasyland_opponent_set_by_the_rule_is_the_one_the_full_list_gave(
        preset: str) -> None:
    """A seat in fantasyland, set by the rule in one street of 13 cards, and seats part
    way through a Pineapple hand: the same final boards as with every placement listed."""
    arrays = ruleset_arrays(load_ruleset(preset), Variant.PINEAPPLE)
    rng = np.random.default_rng(5)
    cards = np.argsort(rng.random((400, 52)), axis=1)[:, :13].astype(np.uint8)
    empty, none = np.zeros((3, 400), dtype=np.int64), np.zeros((3, 400), dtype=np.int8)
    fast = montecarlo.play_out(empty, none, cards, [(13, 0)], arrays, 8.0, exact_last=False)
    assert np.array_equal(fast, listed_play_out(empty, none, cards, [(13, 0)], arrays, 8.0,
                                                exact_last=False))
    assert (fast != 0).all()  # every row was given cards
    first = montecarlo.play_out(empty, none, cards[:, :5], [(5, 0)], arrays, 8.0,
                                exact_last=False)
    filled = np.array([[1], [2], [2]], dtype=np.int8).repeat(400, axis=1)
    later = [(3, 1)] * 3
    assert np.array_equal(
        montecarlo.play_out(first, filled, cards[:, 4:13], later, arrays, 8.0,
                            exact_last=False),
        listed_play_out(first, filled, cards[:, 4:13], later, arrays, 8.0, exact_last=False))


@pytest.mark.parametrize(("variant", "players", "seed"), [
    (Variant.PINEAPPLE, "a:aggressive,b:montecarlo", 7),
    (Variant.OFC_CLASSIC, "a:montecarlo,b:aggressive,c:balanced", 2),
])
def test_simulate_against_a_fantasyland_opponent_plays_the_hands_of_the_full_list(
        monkeypatch: pytest.MonkeyPatch, variant: Variant, players: str, seed: int) -> None:
    """A seeded run where the Monte Carlo bot meets opponents in fantasyland writes the
    same hands as with every play-out given the full list of placements."""
    def run() -> list[dict[str, Any]]:
        sim = Simulation(variant=variant, ruleset=load_ruleset("american"),
                         players=parse_players(players), hands=60, seed=seed, rollouts=20)
        return list(simulate(sim))

    fast = run()
    streets_seen: list[list[tuple[int, int]]] = []

    def slow(*args: Any, **kwargs: Any) -> np.ndarray:
        streets_seen.append(list(args[3]))
        return listed_play_out(*args, **kwargs)

    monkeypatch.setattr(montecarlo, "play_out", slow)
    slow_hands = run()
    assert [(13, 0)] in streets_seen  # an opponent in fantasyland was played out
    assert any(p["fantasyland"] for h in fast for p in h["players"])
    assert fast == slow_hands
