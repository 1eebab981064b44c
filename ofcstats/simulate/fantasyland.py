"""Setting 13 to 17 cards at once: fantasyland's best arrangement, exactly.

The value of a set is its royalties plus, when the seat may stay in fantasyland, a
bonus for staying (RULES.md §6). The search is exact but avoids the million sets of a
14-card hand by splitting them by where their value can come from:

1. a bottom that is worth something (a royalty or a stay) - every middle and top
   under it is tried;
2. any bottom with a middle worth something - every bottom and top around it is tried;
3. neither: only the top is worth anything; tops are tried from the most valuable
   down, and the first that has a legal middle and bottom under it wins (level 0 is
   the plain "strongest bottom, then strongest middle" set, always legal).

Every set is in one of the three cases and each case finds its best exactly, so the
best of the three is the best set; the strongest rows break ties (to win the rows).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from ofcstats import evaluate
from ofcstats.simulate.scoring import RulesetArrays
from ofcstats.simulate.tables import BOTTOM, DISCARD, MIDDLE, TOP

Ints = npt.NDArray[np.integer[Any]]
_PRIMARY = 1 << 16  # value units; strengths (below 2**14 each) add up below it as tie-break


@dataclass(frozen=True)
class _Layout:
    """Subsets of ``k`` card positions and the masks that name them."""

    k: int
    five: npt.NDArray[np.int8]  # (C(k,5), 5) positions
    three: npt.NDArray[np.int8]  # (C(k,3), 3)
    mask5: npt.NDArray[np.int32]
    mask3: npt.NDArray[np.int32]
    index5: npt.NDArray[np.int32]  # mask -> row of ``five`` (-1 when not 5 bits)
    index3: npt.NDArray[np.int32]
    apart5: npt.NDArray[np.int32]  # (C(k,5), C(k-5,5)): the fives sharing no card with each
    index_left: npt.NDArray[np.int32]  # mask of k-10 cards -> row of ``left_tops``
    left_tops: npt.NDArray[np.int32]  # (C(k,k-10), C(k-10,3)): the tops among them


@cache
def _layout(k: int) -> _Layout:
    five = np.array(list(itertools.combinations(range(k), 5)), dtype=np.int8)
    three = np.array(list(itertools.combinations(range(k), 3)), dtype=np.int8)
    mask5 = (1 << five.astype(np.int32)).sum(axis=1).astype(np.int32)
    mask3 = (1 << three.astype(np.int32)).sum(axis=1).astype(np.int32)
    index5 = np.full(1 << k, -1, dtype=np.int32)
    index5[mask5] = np.arange(len(mask5), dtype=np.int32)
    index3 = np.full(1 << k, -1, dtype=np.int32)
    index3[mask3] = np.arange(len(mask3), dtype=np.int32)
    apart5 = np.stack([np.flatnonzero((mask5 & m) == 0) for m in mask5]).astype(np.int32)
    left = np.array(list(itertools.combinations(range(k), k - 10)), dtype=np.int32)
    left_masks = (1 << left).sum(axis=1)
    index_left = np.full(1 << k, -1, dtype=np.int32)
    index_left[left_masks] = np.arange(len(left_masks), dtype=np.int32)
    left_tops = np.stack([np.flatnonzero((mask3 & ~m) == 0) for m in left_masks]).astype(np.int32)
    return _Layout(k, five, three, mask5, mask3, index5, index3, apart5, index_left, left_tops)


@cache
def _local(n: int, first: int, second: int) -> npt.NDArray[np.int8]:
    """Every way to take ``first`` then ``second`` of ``n`` positions: (L, first+second)."""
    rows = []
    for a in itertools.combinations(range(n), first):
        rest = [p for p in range(n) if p not in a]
        for b in itertools.combinations(rest, second):
            rows.append(a + b)
    return np.array(rows, dtype=np.int8).reshape(-1, first + second)


def _spread(layout: _Layout, used: npt.NDArray[np.int32], first: int,
            second: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """For each mask in ``used``, all (first-subset, second-subset) pairs of the cards
    outside it, as subset masks of shape (len(used), L)."""
    k = layout.k
    taken = ((used[:, None] >> np.arange(k)) & 1).astype(np.int8)
    rest = np.argsort(taken, axis=1, kind="stable")[:, : k - int(taken[0].sum())]
    local = _local(rest.shape[1], first, second)
    positions = rest[:, local]  # (q, L, first + second)
    bits = (1 << positions.astype(np.int32))
    return bits[..., :first].sum(axis=-1), bits[..., first:].sum(axis=-1)


def best_sets(cards: npt.NDArray[np.uint8], arrays: RulesetArrays,
              stay_bonus: npt.NDArray[np.float64] | float) -> npt.NDArray[np.int8]:
    """The best legal set of each row of ``cards`` (m, k), 13 <= k <= 17, as actions
    (0 top, 1 middle, 2 bottom, 3 discard) per card.

    ``stay_bonus`` (per seat) is what staying in fantasyland is worth in royalty points;
    give 0 where the seat may not stay (repeat limit reached) or the policy has no stay.
    """
    m, k = cards.shape
    bonus = np.broadcast_to(np.rint(np.asarray(stay_bonus, dtype=np.float64)), (m,))
    out = np.empty((m, k), dtype=np.int8)
    if not m:
        return out
    # Every subset's strength and value for all hands at once; the search is per hand.
    rows = _Rows.of(cards, arrays, bonus)
    for i in range(m):
        search = _Search(rows, i, float(bonus[i]))
        search.valued_pairs()
        search.top_only()
        actions = np.full(k, DISCARD, dtype=np.int8)
        for mask, row in zip(search.best, (TOP, MIDDLE, BOTTOM), strict=True):
            actions[(mask >> np.arange(k)) & 1 == 1] = row
        out[i] = actions
    return out


@dataclass(frozen=True)
class _Rows:
    """Every five and three of each hand: strength, royalty, stay, ``(m, subsets)``."""

    layout: _Layout
    s5: npt.NDArray[np.int64]
    s3: npt.NDArray[np.int64]
    vt: npt.NDArray[np.float64]  # royalty of each three as a top
    vm: npt.NDArray[np.float64]
    vb: npt.NDArray[np.float64]
    stay_t: npt.NDArray[np.bool_]  # would stay in fantasyland (never without a bonus)
    stay_m: npt.NDArray[np.bool_]
    stay_b: npt.NDArray[np.bool_]
    with_t: npt.NDArray[np.float64]  # a top's royalty and stay bonus
    best_left: npt.NDArray[np.float64]  # (m, C(k, k-10)) best top among each k-10 cards

    @classmethod
    def of(cls, cards: npt.NDArray[np.uint8], arrays: RulesetArrays,
           bonus: npt.NDArray[np.float64]) -> _Rows:
        """The rows of every hand of ``cards`` (m, k)."""
        m, k = cards.shape
        layout = _layout(k)
        s5 = evaluate.strength5(cards[:, layout.five].reshape(-1, 5)).astype(np.int64) \
            .reshape(m, -1)
        s3 = evaluate.strength3(cards[:, layout.three].reshape(-1, 3)).astype(np.int64) \
            .reshape(m, -1)
        vt, vm, vb = (arrays.royalty[row][s].astype(np.float64)
                      for row, s in ((TOP, s3), (MIDDLE, s5), (BOTTOM, s5)))
        stay_t, stay_m, stay_b = _stays(arrays, s3, s5, bonus[:, None] > 0)
        with_t = vt + bonus[:, None] * stay_t
        # A few hands at a time: with 17 cards a hand has 680,000 (leftovers, top) pairs.
        best_left = np.empty((m, layout.left_tops.shape[0]), dtype=np.float64)
        step = max(1, _GATHER_ELEMENTS // layout.left_tops.size)
        for start in range(0, m, step):
            part = slice(start, start + step)
            best_left[part] = with_t[part][:, layout.left_tops].max(axis=2)
        return cls(layout, s5, s3, vt, vm, vb, stay_t, stay_m, stay_b, with_t, best_left)


class _Search:
    """The best set of one hand: every subset's strength and value, the best so far."""

    def __init__(self, rows: _Rows, hand: int, bonus: float):
        self.layout = rows.layout
        self.s5, self.s3 = rows.s5[hand], rows.s3[hand]
        self.vt, self.vm, self.vb = rows.vt[hand], rows.vm[hand], rows.vb[hand]
        self.stay_t, self.stay_m, self.stay_b = (rows.stay_t[hand], rows.stay_m[hand],
                                                 rows.stay_b[hand])
        self.with_t, self.best_left = rows.with_t[hand], rows.best_left[hand]
        self.bonus = bonus
        self.best_score = -np.inf
        self.best: tuple[int, int, int] = (0, 0, 0)

    def best_value(self) -> float:
        """The value (royalties and stay) of the best set so far."""
        if self.best_score == -np.inf:
            return -np.inf
        return float(np.floor(self.best_score / _PRIMARY))

    def consider(self, ti: Ints, mi: Ints, bi: Ints) -> None:
        """Keep the best legal set among those given as indices of the threes and fives
        (top, middle, bottom: arrays that broadcast together, so that a pair of rows
        under several tops is looked up once)."""
        top, mid, bottom = self.s3[ti], self.s5[mi], self.s5[bi]
        if top.size == 0 or mid.size == 0 or bottom.size == 0:
            return  # nothing to consider (no argmax of an empty array)
        legal = (top <= mid) & (mid <= bottom)
        stays = self.stay_t[ti] | self.stay_m[mi] | self.stay_b[bi]
        primary = self.vt[ti] + self.vm[mi] + self.vb[bi] + self.bonus * stays
        score = np.where(legal, primary * _PRIMARY + top + mid + bottom, -np.inf)
        j = int(np.argmax(score))
        if score.flat[j] > self.best_score:
            self.best_score = float(score.flat[j])
            t, m, b = np.broadcast_arrays(ti, mi, bi)
            layout = self.layout
            self.best = (int(layout.mask3[t.flat[j]]), int(layout.mask5[m.flat[j]]),
                         int(layout.mask5[b.flat[j]]))

    def valued_pairs(self) -> None:
        """Cases 1 and 2: every (middle, bottom) pair with a row worth something, bounded
        by the best top of the cards left over; only pairs whose bound beats the best
        set so far get their tops tried."""
        layout, s5 = self.layout, self.s5
        worth_b = np.flatnonzero((self.vb > 0) | self.stay_b)
        worth_m = np.flatnonzero((self.vm > 0) | self.stay_m)
        width = layout.apart5.shape[1]
        pairs_b = np.concatenate([np.repeat(worth_b, width), layout.apart5[worth_m].ravel()])
        pairs_m = np.concatenate([layout.apart5[worth_b].ravel(), np.repeat(worth_m, width)])
        if not pairs_b.size:
            return
        keep = s5[pairs_m] <= s5[pairs_b]
        pairs_b, pairs_m = pairs_b[keep], pairs_m[keep]
        full = (1 << layout.k) - 1
        left = layout.index_left[full ^ layout.mask5[pairs_b] ^ layout.mask5[pairs_m]]
        stays = self.bonus * (self.stay_b[pairs_b] | self.stay_m[pairs_m])
        bound = self.vb[pairs_b] + self.vm[pairs_m] + stays + self.best_left[left]

        def try_pairs(chunk: npt.NDArray[np.intp]) -> None:
            self.consider(layout.left_tops[left[chunk]], pairs_m[chunk][:, None],
                          pairs_b[chunk][:, None])

        # The most promising pairs first; usually they settle it and the rest never
        # needs sorting. Ties on value are not chased: the first best set found stands.
        first = np.argpartition(-bound, _CHUNK)[:_CHUNK] if bound.size > _CHUNK \
            else np.arange(bound.size)
        try_pairs(first)
        bound[first] = -np.inf
        rest = np.flatnonzero(bound > self.best_value())
        order = rest[np.argsort(-bound[rest], kind="stable")]
        for start in range(0, order.size, _CHUNK):
            chunk = order[start:start + _CHUNK]
            if bound[chunk[0]] <= self.best_value():
                break
            try_pairs(chunk)

    def top_only(self) -> None:
        """Case 3: only the top is worth anything; most valuable tops first."""
        for level in np.unique(self.with_t)[::-1]:
            if level <= self.best_value():
                return
            if level <= 0:
                t, mid, b = _greedy(self.layout, self.s5, self.s3)
                self.consider(self.layout.index3[t], self.layout.index5[mid],
                              self.layout.index5[b])
                return
            tops = np.flatnonzero(self.with_t == level)
            before = self.best_score
            _top_level(self.layout, tops, self.s5, self.s3, self.consider)
            if self.best_score > before:
                return


_CHUNK = 64
_GATHER_ELEMENTS = 1 << 18


def _stays(arrays: RulesetArrays, s3: npt.NDArray[np.int64], s5: npt.NDArray[np.int64],
           bonus: npt.NDArray[np.bool_]) -> tuple[npt.NDArray[np.bool_], ...]:
    """Which tops, middles and bottoms would stay in fantasyland (none where ``bonus``,
    a flag that broadcasts against the strengths, is false)."""
    out = []
    for s, limit in zip((s3, s5, s5), arrays.stay, strict=True):
        stays = (s >= limit) & bonus if limit is not None else np.zeros(s.shape, bool)
        out.append(stays)
    return tuple(out)


def _top_level(layout: _Layout, tops: npt.NDArray[np.intp], s5: npt.NDArray[np.int64],
               s3: npt.NDArray[np.int64], consider: Callable[..., None]) -> None:
    """Legal middles and bottoms under tops of one value: the strongest bottom and
    middle first; where that fails, every pair of disjoint fives strong enough."""
    t_masks = layout.mask3[tops]
    apart = (layout.mask5[None, :] & t_masks[:, None]) == 0
    b_pick = np.argmax(np.where(apart, s5[None, :], -1), axis=1)
    b_masks = layout.mask5[b_pick]
    apart_m = apart & ((layout.mask5[None, :] & b_masks[:, None]) == 0)
    m_pick = np.argmax(np.where(apart_m, s5[None, :], -1), axis=1)
    greedy_ok = s5[m_pick] >= s3[tops]
    if greedy_ok.any():
        consider(tops[greedy_ok], m_pick[greedy_ok], b_pick[greedy_ok])
        return
    for top, t_mask, t_strength in zip(tops, t_masks, s3[tops], strict=True):
        good = np.flatnonzero(((layout.mask5 & t_mask) == 0) & (s5 >= t_strength))
        if good.size < 2:
            continue
        g = layout.mask5[good]
        i, j = np.nonzero(np.triu((g[:, None] & g[None, :]) == 0, 1))
        if not i.size:
            continue
        low = np.where(s5[good[i]] <= s5[good[j]], good[i], good[j])
        high = np.where(s5[good[i]] <= s5[good[j]], good[j], good[i])
        consider(np.full(low.shape, top), low, high)


def _greedy(layout: _Layout, s5: npt.NDArray[np.int64],
            s3: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int32], ...]:
    """Strongest bottom, strongest middle of the rest, weakest top of what is left: legal.

    The middle is the best five of the cards left, so it is at least as strong as any
    three of them (a top's missing kickers rank below any card).
    """
    full = (1 << layout.k) - 1
    b = layout.mask5[int(np.argmax(s5))]
    free = full ^ b
    fits = (layout.mask5 & ~free) == 0
    mid = layout.mask5[fits][int(np.argmax(np.where(fits, s5, -1)[fits]))]
    free ^= mid
    tops = (layout.mask3 & ~free) == 0
    t = layout.mask3[tops][int(np.argmin(s3[tops]))]
    return (np.array([t], dtype=np.int32), np.array([mid], dtype=np.int32),
            np.array([b], dtype=np.int32))

