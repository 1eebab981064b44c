"""Setting 13 cards at once in Chinese poker: every legal set, weighed by row win odds.

A row's worth is the share of rows it beats in a reference sample of hands set the
plain way (strongest five at the bottom, strongest five of the rest in the middle), so
the weighted sum is close to the rows a set can expect to win; royalties, where the
ruleset pays any, are added on top.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt

from ofcstats import evaluate
from ofcstats.rows import BOTTOM, MIDDLE, TOP
from ofcstats.rules import board
from ofcstats.simulate.fantasyland import _spread, layout_of
from ofcstats.simulate.scoring import RulesetArrays

WEIGHTS: dict[str, tuple[float, float, float, float]] = {
    # top, middle, bottom, royalties
    "random": (1.0, 1.0, 1.0, 0.0),
    "safe": (1.0, 1.0, 1.0, 0.05),
    "balanced": (1.0, 1.0, 1.0, 0.15),
    "aggressive": (0.8, 1.0, 1.3, 0.3),
}


@cache
def _sets() -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """Every (top, middle, bottom) of 13 positions as subset indices: 72,072 sets."""
    layout = layout_of(13)
    middle, top = _spread(layout, layout.mask5, 5, 3)
    bottom = np.broadcast_to(layout.mask5[:, None], middle.shape)
    return (layout.index3[top.ravel()], layout.index5[middle.ravel()],
            layout.index5[bottom.ravel()])


def greedy(cards: npt.NDArray[np.uint8], wheel: bool = False, low_middle: bool = False
           ) -> npt.NDArray[np.uint8]:
    """The plain set of each 13-card hand as a board: strongest five at the bottom,
    strongest five of the rest in the middle (the best deuce-to-seven low of the rest
    where the middle plays low), the last three on top (always legal); ``wheel``:
    straights ranked in the wheel order."""
    layout = layout_of(13)
    m = cards.shape[0]
    raw = evaluate.strength5(cards[:, layout.five].reshape(-1, 5))
    s5 = evaluate.wheel_order()[raw] if wheel else raw
    s5 = s5.reshape(m, -1).astype(np.int32)
    bottom = np.argmax(s5, axis=1)
    b_mask = layout.mask5[bottom]
    apart = (layout.mask5[None, :] & b_mask[:, None]) == 0
    worth = evaluate.low_order()[raw].reshape(m, -1).astype(np.int32) if low_middle else s5
    middle = np.argmax(np.where(apart, worth, -1), axis=1)
    used = b_mask | layout.mask5[middle]
    top_bits = ((~used[:, None] >> np.arange(13)) & 1).astype(bool)
    board = np.empty((m, 13), dtype=np.uint8)
    board[:, 0:3] = cards[top_bits].reshape(m, 3)
    board[:, 3:8] = np.take_along_axis(cards, layout.five[middle].astype(np.intp), axis=1)
    board[:, 8:13] = np.take_along_axis(cards, layout.five[bottom].astype(np.intp), axis=1)
    return board


@cache
def reference(wheel: bool = False, low_middle: bool = False
              ) -> tuple[npt.NDArray[np.float32], ...]:
    """Per row, the share of reference rows each strength beats (ties count half);
    ``wheel``: strengths with straights in the wheel order; ``low_middle``: the middle's
    by its worth as a deuce-to-seven low."""
    rng = np.random.default_rng(20261129)
    hands = np.argsort(rng.random((4000, 52)), axis=1)[:, :13].astype(np.uint8)
    boards = greedy(hands, wheel, low_middle)
    count = evaluate.strength_count() + 1
    rows = (evaluate.strength3(boards[:, 0:3]), evaluate.strength5(boards[:, 3:8]),
            evaluate.strength5(boards[:, 8:13]))
    if wheel:
        order = evaluate.wheel_order()
        rows = (rows[0], order[rows[1]], order[rows[2]])
    if low_middle:
        rows = (rows[0], evaluate.low_order()[evaluate.strength5(boards[:, 3:8])], rows[2])
    out = []
    for strengths in rows:
        ordered = np.sort(strengths)
        grid = np.arange(max(count, int(evaluate.low_order().max()) + 1) if low_middle
                         else count)
        below = np.searchsorted(ordered, grid, side="left")
        upto = np.searchsorted(ordered, grid, side="right")
        out.append(((below + upto) / (2.0 * len(ordered))).astype(np.float32))
    return tuple(out)


def scored_sets(cards: npt.NDArray[np.uint8], arrays: RulesetArrays,
                weights: tuple[float, float, float, float]) -> tuple[npt.NDArray[np.float32],
                                                                     npt.NDArray[np.int32]]:
    """Score of every set of one hand (``-inf`` when it fouls) and the sets' boards'
    subset indices: ``(72072,)`` and ``(3, 72072)``."""
    layout = layout_of(13)
    t, mid, b = _sets()
    raw = evaluate.strength5(cards[layout.five])
    s5 = arrays.five(raw).astype(np.intp)
    s3 = evaluate.strength3(cards[layout.three]).astype(np.intp)
    st, sm, sb = s3[t], arrays.middle(raw).astype(np.intp)[mid], s5[b]
    top_u, mid_u, bot_u = reference(arrays.wheel, arrays.low_middle)
    score = (weights[0] * top_u[st] + weights[1] * mid_u[sm] + weights[2] * bot_u[sb]
             + weights[3] * (arrays.royalty[TOP][st] + arrays.royalty[MIDDLE][sm]
                             + arrays.royalty[BOTTOM][sb]))
    # A low middle is out of the order (docs/rules.md §2): only the top under the bottom.
    legal = ~board.fouled(np.stack([st, sm, sb]), arrays.low_middle)
    return np.where(legal, score, -np.inf).astype(np.float32), np.stack([t, mid, b])


def actions_of(sets: npt.NDArray[np.int32]) -> npt.NDArray[np.int8]:
    """Rows per card (positions 0..12) of sets given as (top, middle, bottom) indices."""
    layout = layout_of(13)
    out = np.empty((sets.shape[-1], 13), dtype=np.int8)
    for row, subsets in ((TOP, layout.three), (MIDDLE, layout.five), (BOTTOM, layout.five)):
        positions = subsets[sets[row]].astype(np.intp)
        np.put_along_axis(out, positions, np.int8(row), axis=1)
    return out


def best_by_weights(cards: npt.NDArray[np.uint8], arrays: RulesetArrays,
                    weights: tuple[float, float, float, float]) -> npt.NDArray[np.int8]:
    """The best legal set of each 13-card hand under ``weights``, as row actions."""
    chosen = []
    for hand in cards:
        score, sets = scored_sets(hand, arrays, weights)
        chosen.append(sets[:, int(np.argmax(score))])
    return actions_of(np.stack(chosen, axis=1))
