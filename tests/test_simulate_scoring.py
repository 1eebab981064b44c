"""The simulator's own evaluator and scoring agree with the reference scorer.

The bots look ahead with row keys (:mod:`ofcstats.simulate.tables`) and the rules on
arrays (:mod:`ofcstats.rules.board` through :mod:`ofcstats.simulate.scoring`): here
both are held to :mod:`ofcstats.rules.reference`, board by board, on every preset.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from handgen import rich_board

from ofcstats.cards import parse_cards
from ofcstats.rules import load_ruleset, preset_names
from ofcstats.rules.board import fouled, pair_points, royalties
from ofcstats.rules.model import Naturals, Ruleset
from ofcstats.rules.reference import Seat, score_hand
from ofcstats.simulate.montecarlo import final_strengths
from ofcstats.simulate.scoring import board_strengths, qualifies, ruleset_arrays
from ofcstats.simulate.state import CARD_KEYS
from ofcstats.variants import Variant

BOARDS = 1200


def _boards(seed: int) -> tuple[np.ndarray, list[Seat]]:
    """Random 13-card boards, ``(n, 13)`` top, middle, bottom; most legal, many paid."""
    rng = random.Random(seed)
    boards = []
    for _ in range(BOARDS):
        rows = rich_board(rng, arrange=rng.random() < 0.85)
        boards.append([c for row in ("top", "middle", "bottom") for c in parse_cards(rows[row])])
    cards = np.array(boards, dtype=np.uint8)
    return cards, [Seat(0, list(b[:3]), list(b[3:8]), list(b[8:])) for b in cards.tolist()]


def test_simulator_evaluator_matches_reference_strengths() -> None:
    """The row keys the bots add card by card evaluate to the reference row strengths."""
    cards, seats = _boards(seed=1)
    keys = np.stack([CARD_KEYS[cards[:, rows]].sum(axis=1)
                     for rows in (slice(0, 3), slice(3, 8), slice(8, 13))]).astype(np.int64)
    expected = np.array([seat.strengths() for seat in seats]).T
    assert (final_strengths(keys) == expected).all()
    assert (board_strengths(cards) == expected.T).all()


def _pairwise_only(ruleset: Ruleset) -> Ruleset:
    """The ruleset without what the bots' pair points leave out: the table bonus, the 2♠
    bonus and naturals (none of which is a matter between two boards alone)."""
    return dataclasses.replace(
        ruleset, spade_bonus=False, naturals=Naturals(),
        head_to_head=dataclasses.replace(ruleset.head_to_head, table_bonus=0))


@pytest.mark.parametrize("name", preset_names())
def test_simulator_scoring_matches_reference_scorer(name: str) -> None:
    """Heads-up, board against board: the fouls, royalties, points and fantasyland the
    simulator computes on arrays are the reference scorer's, hand by hand."""
    ruleset = _pairwise_only(load_ruleset(name))
    variant = ruleset.variants[0].dealt_as  # criss-cross: its boards meet as 13-card hands
    arrays = ruleset_arrays(ruleset, variant)
    cards, seats = _boards(seed=len(name))
    strength = board_strengths(cards).T.astype(np.intp)  # rows first
    strength[1:] = arrays.five(strength[1:])
    foul = fouled(strength)
    roy = royalties([arrays.royalty], strength, ~foul, np.int32)[0]
    assert (royalties([arrays.royalty], strength, ~foul, np.int32, dense=True)[0] == roy).all()
    mine, theirs = np.arange(0, BOARDS, 2), np.arange(1, BOARDS, 2)
    points = pair_points(arrays, strength[:, mine], strength[:, theirs], foul[mine],
                         foul[theirs], roy[:, mine], roy[:, theirs])
    earned = {in_fl: qualifies(arrays, strength.T.astype(np.int32), foul, in_fl)
              for in_fl in (False, True)}
    for pair, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        hand = [dataclasses.replace(seats[a], seat=0), dataclasses.replace(seats[b], seat=1)]
        expected = score_hand(hand, ruleset, variant)
        context = f"{name}: {cards[a].tolist()} against {cards[b].tolist()}"
        assert points[pair] == expected[0]["points"], context
        for seat, board in ((0, a), (1, b)):
            assert foul[board] == expected[seat]["fouled"], context
            assert roy[:, board].tolist() == expected[seat]["royalty_rows"], context
        for in_fl in (False, True):
            hand = [dataclasses.replace(seats[a], fantasyland=in_fl)]
            reference = score_hand([*hand, dataclasses.replace(seats[b], seat=1)], ruleset,
                                   variant)
            assert earned[in_fl][a] == reference[0]["fantasyland_next"], context


def _keys(*rows: str) -> tuple[np.ndarray, np.ndarray]:
    """Row keys and card counts ``(3, 1)`` of one board in the making."""
    cards = [parse_cards(row) if row else [] for row in rows]
    keys = np.array([[CARD_KEYS[c].sum() if c else 0] for c in cards], dtype=np.int64)
    return keys, np.array([[len(c)] for c in cards], dtype=np.int8)


def test_rollout_rule_pairs_a_row_and_throws_the_worst_card_away() -> None:
    """The compiled rollout rule: a card that pairs a row goes there, and of a Pineapple
    street's three cards the one that helps no row is the one discarded."""
    from ofcstats.simulate.montecarlo import play_out  # noqa: PLC0415

    arrays = ruleset_arrays(load_ruleset("american"), Variant.PINEAPPLE)
    keys, filled = _keys("", "2c 7d", "Ah 9s")
    ace = np.array([parse_cards("Ad")], dtype=np.uint8)
    after = play_out(keys, filled, ace, [(1, 0)], arrays, 14.0, exact_last=False)
    assert (after[:, 0] == keys[:, 0] + [0, 0, CARD_KEYS[ace[0, 0]]]).all()
    dealt = np.array([parse_cards("Ad 9d 3h")], dtype=np.uint8)
    after = play_out(keys, filled, dealt, [(3, 1)], arrays, 14.0, exact_last=False)
    placed = int(after.sum() - keys.sum())
    assert placed == int(CARD_KEYS[dealt[0, :2]].sum())  # the three is thrown away


def test_rollout_last_street_is_played_exactly() -> None:
    """The last street is placed exactly: of the ways to finish the board it takes one
    that does not foul, with the most royalties, then the strongest rows."""
    from ofcstats.simulate.montecarlo import play_out  # noqa: PLC0415

    arrays = ruleset_arrays(load_ruleset("american"), Variant.PINEAPPLE)
    # One slot left in the top and one in the middle: the king in the middle makes
    # trips (a royalty); the nine or the deuce on top, the board is legal either way.
    keys, filled = _keys("Qs 4d", "Kh Kc 8s 5d", "Ac Ad As 7h 7c")
    dealt = np.array([parse_cards("Kd 2h 9c")], dtype=np.uint8)
    final = play_out(keys, filled, dealt, [(3, 1)], arrays, 14.0)
    strengths = final_strengths(final)
    assert not fouled(strengths)[0]
    # Trips of kings in the middle (royalties); on top the nine, not the deuce: the
    # royalties being equal, the strongest rows.
    assert final[1, 0] == keys[1, 0] + CARD_KEYS[dealt[0, 0]]
    assert final[0, 0] == keys[0, 0] + CARD_KEYS[dealt[0, 2]]
