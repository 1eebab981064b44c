"""Setting 13 to 17 cards at once: fantasyland's best arrangement, exactly.

The value of a set is its royalties plus, when the seat may stay in fantasyland, a
bonus for staying (docs/rules.md §6). The search is exact but avoids the million sets of a
14-card hand by splitting them by where their value can come from, and works on all
hands of a batch at once (flat arrays of candidates, each tagged with its hand):

0. the plain set (strongest bottom, strongest middle of the rest, weakest top of what
   is left: always legal) is the first best;
1. a bottom or a middle that is worth something (a royalty or a stay): every such
   (middle, bottom) pair gets a bound, its value with the best top of the cards left;
   the pairs whose bound beats the best so far are tried with every top left;
2. neither: only the top is worth anything; each top worth more than the best so far
   is tried with the strongest bottom and middle that avoid it, and, where that is not
   legal, with every pair of fives strong enough (rare).

Every set is in case 1 or 2 and each case finds what beats the best so far, so the
best set is found; the strongest rows break ties within a batch of candidates (to win
the rows).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from ofcstats import evaluate
from ofcstats.rows import BOTTOM, MIDDLE, TOP
from ofcstats.simulate.scoring import RulesetArrays
from ofcstats.simulate.state import CARD_KEYS
from ofcstats.simulate.tables import DISCARD, SUIT_MASK, row_tables, transitions

Ints = npt.NDArray[np.integer[Any]]
_PRIMARY = 1 << 16  # value units; strengths (below 2**14 each) add up below it as tie-break


@dataclass(frozen=True)
class Layout:
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
    apart_left: npt.NDArray[np.int32]  # like apart5: row of index_left of the cards left
    apart3: npt.NDArray[np.int32]  # (C(k,3), C(k-3,5)): the fives sharing no card with each


@cache
def layout_of(k: int) -> Layout:
    """The subsets of ``k`` card positions (13 to 17) a set is made of, built once per
    ``k``."""
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
    full = (1 << k) - 1
    apart_left = index_left[full ^ mask5[:, None] ^ mask5[apart5]]
    apart3 = np.stack([np.flatnonzero((mask5 & m) == 0) for m in mask3]).astype(np.int32)
    return Layout(k, five, three, mask5, mask3, index5, index3, apart5, index_left, left_tops,
                   apart_left, apart3)


@cache
def _local(n: int, first: int, second: int) -> npt.NDArray[np.int8]:
    """Every way to take ``first`` then ``second`` of ``n`` positions: (L, first+second)."""
    rows = []
    for a in itertools.combinations(range(n), first):
        rest = [p for p in range(n) if p not in a]
        for b in itertools.combinations(rest, second):
            rows.append(a + b)
    return np.array(rows, dtype=np.int8).reshape(-1, first + second)


def _spread(layout: Layout, used: npt.NDArray[np.int32], first: int,
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


def plain_strengths(cards: npt.NDArray[np.uint8]) -> npt.NDArray[np.int64]:
    """The plain set of each row of ``cards`` (m, k), 13 <= k <= 17, as row strengths
    ``(3, m)``: the strongest five at the bottom, the strongest five of the rest in the
    middle, and on top the strongest three of the cards left that does not beat the
    middle (the rest thrown away). Never fouled; a fast stand-in (compiled, some
    microseconds a hand) for a fantasyland seat whose cards are not known, where the
    exact set (:func:`best_sets`) would cost far more.

    >>> from ofcstats.cards import parse_cards
    >>> from ofcstats.evaluate import strength3, strength5
    >>> hand = np.array([parse_cards("As Ad Ah Kd Ks 2c 3c 4c 5c 7c Qh Qs Jd 9h")], np.uint8)
    >>> rows = [np.array([parse_cards(r)], np.uint8) for r in ("Qh Qs Jd", "2c 3c 4c 5c 7c")]
    >>> top, middle, _ = plain_strengths(hand)[:, 0]
    >>> int(top) == int(strength3(rows[0])[0]), int(middle) == int(strength5(rows[1])[0])
    (True, True)
    """
    m = cards.shape[0]
    t = row_tables()
    after = transitions()[0]
    out = np.empty((3, m), dtype=np.int64)
    _plain(np.ascontiguousarray(cards, dtype=np.uint8), CARD_KEYS, after, int(t.id_of_key[0]),
           t.suited, t.full5, t.full5_flush, t.full3, _five_bounds(), out)
    return out


@cache
def _five_bounds() -> npt.NDArray[np.int64]:
    """``(2, 3, ids + 1)``: the strongest five a row of 2, 3 or 4 cards (by its ranks'
    id, :func:`ofcstats.simulate.tables.transitions`) can grow into, its cards of more
    than one suit (``[0]``) or of one suit (``[1]``, a flush still possible); -1 for
    none."""
    t = row_tables()
    after = transitions()[0].astype(np.intp)
    plain = np.append(t.full5, -1).astype(np.int64)
    plain[:-1][t.size != 5] = -1
    flush = np.append(np.maximum(t.full5, t.full5_flush), -1).astype(np.int64)
    flush[:-1][t.size != 5] = -1
    out = np.empty((2, 3, after.shape[0]), dtype=np.int64)
    for suits, five in enumerate((plain, flush)):
        level = five
        for cards in (4, 3, 2):
            level = level[after].max(axis=1)
            level[-1] = -1
            out[suits, cards - 2] = level
    return out


@njit(nogil=True, cache=True)
def _strongest_five(ranks: Any, keys: Any, at: Any, after: Any, empty: int, suited: Any,
                    full5: Any, full5_flush: Any, bounds: Any) -> tuple[Any, int]:
    """The strongest five of the cards at positions ``at`` (ascending) and its position
    mask, the first of equals in the order of ``itertools.combinations``. Rows are built
    card by card (:func:`ofcstats.simulate.tables.transitions`); a row of 2 to 4 cards
    that cannot grow past the strongest found (``bounds``, :func:`_five_bounds`) is not
    grown, which leaves the first of equals the same."""
    n = at.size
    best, mask = np.int64(-1), 0
    for a0 in range(n - 4):
        c0 = at[a0]
        i0, u0 = after[empty, ranks[c0]], keys[c0]
        for a1 in range(a0 + 1, n - 3):
            c1 = at[a1]
            i1, u1 = after[i0, ranks[c1]], u0 + keys[c1]
            if bounds[np.int64(suited[u1 & SUIT_MASK]), 0, i1] <= best:
                continue
            for a2 in range(a1 + 1, n - 2):
                c2 = at[a2]
                i2, u2 = after[i1, ranks[c2]], u1 + keys[c2]
                if bounds[np.int64(suited[u2 & SUIT_MASK]), 1, i2] <= best:
                    continue
                for a3 in range(a2 + 1, n - 1):
                    c3 = at[a3]
                    i3, u3 = after[i2, ranks[c3]], u2 + keys[c3]
                    if bounds[np.int64(suited[u3 & SUIT_MASK]), 2, i3] <= best:
                        continue
                    for a4 in range(a3 + 1, n):
                        c4 = at[a4]
                        i4 = after[i3, ranks[c4]]
                        strength = np.int64(full5_flush[i4] if suited[(u3 + keys[c4]) & SUIT_MASK]
                                            else full5[i4])
                        if strength > best:
                            best = strength
                            mask = (1 << c0) | (1 << c1) | (1 << c2) | (1 << c3) | (1 << c4)
    return best, mask


@njit(nogil=True, cache=True)
def _plain(cards: Any, card_key: Any, after: Any, empty: int, suited: Any, full5: Any,
           full5_flush: Any, full3: Any, bounds: Any, out: Any) -> None:
    """:func:`plain_strengths`, hand by hand, into ``out``."""
    k = cards.shape[1]
    keys = np.empty(k, dtype=np.int64)
    ranks = np.empty(k, dtype=np.int64)
    every = np.arange(k)
    rest = np.empty(k - 5, dtype=np.int64)
    left = np.empty(k - 10, dtype=np.int64)
    for h in range(cards.shape[0]):
        for j in range(k):
            keys[j] = card_key[cards[h, j]]
            ranks[j] = cards[h, j] >> 2
        bottom, used = _strongest_five(ranks, keys, every, after, empty, suited, full5,
                                       full5_flush, bounds)
        n = 0
        for j in range(k):
            if not (used >> j) & 1:
                rest[n] = j
                n += 1
        middle, taken = _strongest_five(ranks, keys, rest, after, empty, suited, full5,
                                        full5_flush, bounds)
        used |= taken
        n = 0
        for j in range(k):
            if not (used >> j) & 1:
                left[n] = j
                n += 1
        top = np.int64(-1)
        for a0 in range(left.size - 2):
            i0 = after[empty, ranks[left[a0]]]
            for a1 in range(a0 + 1, left.size - 1):
                i1 = after[i0, ranks[left[a1]]]
                for a2 in range(a1 + 1, left.size):
                    strength = np.int64(full3[after[i1, ranks[left[a2]]]])
                    if top < strength <= middle:
                        top = strength
        out[0, h], out[1, h], out[2, h] = top, middle, bottom


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
    # Rows of the pair search grow as C(k, 5) * C(k - 5, 5): a few hands at a time.
    layout = layout_of(k)
    step = max(1, _PAIR_ELEMENTS // layout.apart5.size)
    bits = (1 << np.arange(k))[None, :]
    for start in range(0, m, step):
        part = slice(start, start + step)
        rows = _Rows.of(cards[part], arrays, bonus[part])
        best = _Best(rows)
        best.plain()
        best.valued_pairs()
        best.tops()
        actions = np.full((rows.m, k), DISCARD, dtype=np.int8)
        for masks, row in ((layout.mask3[best.t], TOP), (layout.mask5[best.mid], MIDDLE),
                           (layout.mask5[best.b], BOTTOM)):
            actions[(masks[:, None] & bits) != 0] = row
        out[part] = actions
    return out


_PAIR_ELEMENTS = 1 << 25  # (hands x fives x fives apart) per batch, at most; a few in
# a hundred fives are worth something, so the arrays made are far smaller


@dataclass(frozen=True)
class _Rows:
    """Every five and three of each hand: strength, royalty, stay, ``(m, subsets)``."""

    layout: Layout
    m: int
    bonus: npt.NDArray[np.float64]  # (m,)
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
        layout = layout_of(k)
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
        return cls(layout, m, np.asarray(bonus, dtype=np.float64), s5, s3, vt, vm, vb,
                   stay_t, stay_m, stay_b, with_t, best_left)


class _Best:
    """The best set found so far for each hand of a batch, and the searches that
    improve it. Candidates come as flat arrays: hand, top (index of a three), middle
    and bottom (indices of fives)."""

    def __init__(self, rows: _Rows):
        self.rows = rows
        m = rows.m
        self.score = np.full(m, -np.inf)
        self.t = np.zeros(m, dtype=np.intp)
        self.mid = np.zeros(m, dtype=np.intp)
        self.b = np.zeros(m, dtype=np.intp)
        self.f = rows.s5.shape[1]  # fives per hand, to index the flat arrays
        self.n3 = rows.s3.shape[1]

    def value(self) -> npt.NDArray[np.float64]:
        """Royalties and stay of each hand's best set so far."""
        return np.floor(self.score / _PRIMARY)

    def scores(self, h: Ints, t: Ints, mid: Ints, b: Ints) -> npt.NDArray[np.float64]:
        """Value (in ``_PRIMARY`` units) plus strengths of each candidate; ``-inf`` if
        the rows are out of order. The arrays broadcast together."""
        r = self.rows
        f5, f3 = h * self.f, h * self.n3
        top, middle, bottom = (r.s3.ravel()[f3 + t], r.s5.ravel()[f5 + mid],
                               r.s5.ravel()[f5 + b])
        legal = (top <= middle) & (middle <= bottom)
        stays = r.stay_t.ravel()[f3 + t] | r.stay_m.ravel()[f5 + mid] \
            | r.stay_b.ravel()[f5 + b]
        value = r.vt.ravel()[f3 + t] + r.vm.ravel()[f5 + mid] + r.vb.ravel()[f5 + b] \
            + r.bonus[h] * stays
        return np.where(legal, value * _PRIMARY + top + middle + bottom, -np.inf)

    def offer(self, h: Ints, t: Ints, mid: Ints, b: Ints,
              score: npt.NDArray[np.float64] | None = None) -> None:
        """Keep, per hand, the first best candidate where it beats the best so far."""
        if score is None:
            score = self.scores(h, t, mid, b)
        if not score.size:
            return
        top = np.full(self.rows.m, -np.inf)
        np.maximum.at(top, h, score)
        hit = np.flatnonzero((score == top[h]) & (score > self.score[h]))
        if not hit.size:
            return
        hands, first = np.unique(h[hit], return_index=True)
        pick = hit[first]
        self.score[hands] = score[pick]
        self.t[hands], self.mid[hands], self.b[hands] = t[pick], mid[pick], b[pick]

    def plain(self) -> None:
        """Case 0: strongest bottom, strongest middle of the rest, weakest top left
        (legal: the middle is the best five of its cards, so above any three of them)."""
        r, layout = self.rows, self.rows.layout
        hands = np.arange(r.m)
        b = np.argmax(r.s5, axis=1)
        apart = layout.apart5[b]
        j = np.argmax(np.take_along_axis(r.s5, apart, axis=1), axis=1)
        mid = apart[hands, j]
        tops = layout.left_tops[layout.apart_left[b, j]]
        t = tops[hands, np.argmin(np.take_along_axis(r.s3, tops, axis=1), axis=1)]
        self.offer(hands, t, mid, b)

    def valued_pairs(self) -> None:
        """Case 1: every (middle, bottom) pair with a row worth something, bounded by
        the best top of the cards left over; the pair of best bound is tried first,
        then every pair whose bound still beats the best set, each with every top."""
        r, layout = self.rows, self.rows.layout
        worth_b = (r.vb > 0) | r.stay_b
        worth_m = self._under_plain_bottoms(((r.vm > 0) | r.stay_m) & ~worth_b, ~worth_b)
        # A pair's own value, a stay counted in both rows: a bound all the same.
        val_b = r.vb + r.bonus[:, None] * r.stay_b
        val_m = r.vm + r.bonus[:, None] * r.stay_m
        groups = []
        for worth, bottom_first in ((worth_b, True), (worth_m, False)):
            h, five = np.nonzero(worth)
            if not h.size:
                continue
            # (pairs of one five, every five apart from it): a dense block each.
            other = layout.apart5[five]
            flat = h[:, None] * self.f + other
            s_other, s_five = r.s5.ravel()[flat], r.s5[h, five][:, None]
            if bottom_first:
                ok = s_other <= s_five
                bound = val_b[h, five][:, None] + val_m.ravel()[flat]
            else:  # worth nothing at the bottom: its own value is 0
                ok = (s_other >= s_five) & ~worth_b.ravel()[flat]
                bound = np.broadcast_to(val_m[h, five][:, None], flat.shape)
            left = layout.apart_left[five]
            bound = np.where(ok, bound + r.best_left.ravel()[
                h[:, None] * r.best_left.shape[1] + left], -np.inf)
            groups.append((h, five, other, left, bound, bottom_first))
        if not groups:
            return
        # The pair of best bound of each hand first: usually it settles the hand.
        top_bound = np.full(r.m, -np.inf)
        for h, *_, bound, _ in groups:
            np.maximum.at(top_bound, h, bound.max(axis=1))
        for only_best in (True, False):
            for h, five, other, left, bound, bottom_first in groups:
                if only_best:
                    rows = np.flatnonzero(bound.max(axis=1) == top_bound[h])
                    rows = rows[np.unique(h[rows], return_index=True)[1]]
                    i, j = rows, np.argmax(bound[rows], axis=1)
                else:
                    i, j = np.nonzero(bound > self.value()[h][:, None])
                mids, bottoms = (other[i, j], five[i]) if bottom_first else (five[i], other[i, j])
                self._try_pairs(h[i], mids, bottoms, left[i, j])

    def _under_plain_bottoms(self, middles: npt.NDArray[np.bool_],
                             plain: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """The ``middles`` that may sit under one of the ``plain`` fives (a bottom worth
        nothing): not stronger than the strongest of those, and not in a hand where
        every such pair shares a card (say its only trips)."""
        r, layout = self.rows, self.rows.layout
        strongest = np.where(plain, r.s5, -1).max(axis=1)
        middles = middles & (r.s5 <= strongest[:, None])
        weakest = np.where(middles, r.s5, np.iinfo(np.int64).max).min(axis=1)
        bottoms = plain & (r.s5 >= weakest[:, None])
        full = (1 << layout.k) - 1
        shared = np.bitwise_and.reduce(np.where(middles, layout.mask5, full), axis=1) \
            & np.bitwise_and.reduce(np.where(bottoms, layout.mask5, full), axis=1)
        return middles & (shared == 0)[:, None]

    def _try_pairs(self, h: Ints, mid: Ints, b: Ints, left: Ints) -> None:
        """The listed pairs, each with every top of its cards left over."""
        if not h.size:
            return
        tops = self.rows.layout.left_tops[left]  # (n, C)
        score = self.scores(h[:, None], tops, mid[:, None], b[:, None])
        j = np.argmax(score, axis=1)
        rows = np.arange(h.size)
        self.offer(h, tops[rows, j], mid, b, score[rows, j])

    def tops(self) -> None:
        """Case 2: every top worth more than the best so far, with the strongest bottom
        and middle that avoid it; where those are out of order, every pair of fives."""
        r, layout = self.rows, self.rows.layout
        h, t = np.nonzero(r.with_t > self.value()[:, None])
        if not h.size:
            return
        f5 = h[:, None] * self.f
        apart = layout.apart3[t]  # (n, A) fives that avoid the top
        s_apart = r.s5.ravel()[f5 + apart]
        b = apart[np.arange(h.size), np.argmax(s_apart, axis=1)]
        others = layout.apart5[b]
        free = (layout.mask5[others] & layout.mask3[t][:, None]) == 0
        mid = others[np.arange(h.size),
                     np.argmax(np.where(free, r.s5.ravel()[f5 + others], -1), axis=1)]
        score = self.scores(h, t, mid, b)
        self.offer(h, t, mid, b, score)
        failed = np.flatnonzero(score == -np.inf)
        # A top needs two fives above it that share no card: not so when fewer than two
        # are strong enough, or when all of those share a card.
        strong = s_apart[failed] >= r.s3[h[failed], t[failed]][:, None]
        shared = np.bitwise_and.reduce(np.where(strong, layout.mask5[apart[failed]],
                                                (1 << layout.k) - 1), axis=1)
        failed = failed[(strong.sum(axis=1) >= 2) & (shared == 0)]
        # The rest one top at a time, most valuable first, while they can still win.
        order = failed[np.lexsort((-r.with_t[h[failed], t[failed]], h[failed]))]
        for i in order.tolist():
            hand, top = int(h[i]), int(t[i])
            if r.with_t[hand, top] > np.floor(self.score[hand] / _PRIMARY):
                self._every_pair(hand, top)

    def _every_pair(self, hand: int, top: int) -> None:
        """Every legal (middle, bottom) under one top of one hand."""
        r, layout = self.rows, self.rows.layout
        s5 = r.s5[hand]
        good = layout.apart3[top]
        good = good[s5[good] >= r.s3[hand, top]]
        if good.size < 2:
            return
        g = layout.mask5[good]
        i, j = np.nonzero(np.triu((g[:, None] & g[None, :]) == 0, 1))
        if not i.size:
            return
        low = np.where(s5[good[i]] <= s5[good[j]], good[i], good[j])
        high = np.where(s5[good[i]] <= s5[good[j]], good[j], good[i])
        self.offer(np.full(low.shape, hand), np.full(low.shape, top), low, high)


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
