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
from ofcstats.simulate.montecarlo import _final_strengths
from ofcstats.simulate.scoring import board_strengths, qualifies, ruleset_arrays
from ofcstats.simulate.state import CARD_KEYS

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
    assert (_final_strengths(keys) == expected).all()
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
