"""Vectorised row strength: one integer per 3-card or 5-card row, higher is stronger.

Every row, top or middle or bottom, maps onto one scale (``1 .. STRENGTH_COUNT``) on
which a 3-card top compares with a 5-card middle exactly as docs/rules.md §2 requires:
category first, then the ranks that make the category, then kickers in order, the
top row's missing kickers counting lower than any card. So ``QQ5`` on top is weaker
than ``QQ532`` in the middle, and ``QQ6`` is stronger (a foul).

>>> from ofcstats.cards import parse_cards
>>> top, middle = strength3([parse_cards("Qs Qh 5d")]), strength5([parse_cards("Qc Qd 5c 3s 2h")])
>>> bool(top[0] < middle[0])
True
>>> describe(strength5([parse_cards("Ah Kh Qh Jh Th")]))
['royal flush']

How it works. Each card carries an additive *rank key*; the keys are chosen so that
the sum over any five cards identifies the multiset of their ranks (and any three
cards likewise). A lookup table indexed by that sum gives the strength. Flushes are
detected from suit counts carried in the high bits of the same sum, and re-looked-up
in a flush table. The tables are built once per process from the ordering rules
below (about 20 ms) rather than shipped as binaries: the ordering is then readable
code, and the tests prove it against the exhaustive category counts and against an
independent evaluator.

For speed the five card codes of a row are read two at a time as 16-bit words
straight from the ``uint8`` array, so a 5-card row costs three small-table gathers,
a few integer operations and one final gather, in cache-sized chunks.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum
from functools import cache

import numpy as np
import numpy.typing as npt

from ofcstats.cards import RANKS
from ofcstats.errors import CardError


class Category(IntEnum):
    """Hand categories in strength order; a royal flush is the ace-high straight flush."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    TRIPS = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    QUADS = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9

    @property
    def label(self) -> str:
        """Lower-case words, as in a table header: ``full house``."""
        return self.name.lower().replace("_", " ")


# Additive rank keys, deuce to ace: the sums over any multiset of five ranks (each at
# most four times) are distinct, and so are those over three. Found by a greedy search
# (each key the smallest that keeps the sums distinct); ``tests/test_evaluate.py``
# re-proves the property.
RANK_KEYS = (0, 1, 5, 22, 94, 312, 992, 2422, 5624, 12522, 19998, 43258, 79415)
_RANK_BITS = 19  # 5 * max key < 2**19: the rank-key sum of five cards fits below bit 19
_RANK_MASK = (1 << _RANK_BITS) - 1
# Suit counts ride above the rank sum, one 3-bit field per suit; a field reaching 5
# (binary 101) means a flush. Five cards never carry out of a field.
_SUIT_LOW_BITS = 0b001_001_001_001 << _RANK_BITS
# A flush sets bit 19 of the final index: the five-card table holds the non-flush
# strengths below it and the flush strengths above.
_FLUSH_BIT = 1 << _RANK_BITS
_TOP_FIELD = 1 << (_RANK_BITS + 9)
_FLUSH_CARRY = _TOP_FIELD - _FLUSH_BIT
_CHUNK = 1 << 15  # rows per chunk: keeps every temporary inside the L2 cache

_RANK_NAMES = ("deuce", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
               "jack", "queen", "king", "ace")
_PLURAL = {"six": "sixes"}


def _plural(rank: int) -> str:
    name = _RANK_NAMES[rank]
    return _PLURAL.get(name, name + "s")


@dataclass(frozen=True)
class _Tables:
    """Everything the evaluator looks up, built once per process by :func:`_tables`."""

    five: npt.NDArray[np.uint16]  # rank-key sum (+ _FLUSH_BIT for a flush) -> strength
    three: npt.NDArray[np.uint16]  # rank-key sum -> strength, 3 cards
    pair_word: npt.NDArray[np.int32]  # little-endian 16-bit word of two codes -> keys + suits
    single: npt.NDArray[np.int32]  # one code -> key + suit count
    pair_rank: npt.NDArray[np.int32]  # 16-bit word of two codes -> rank keys only
    card_rank: npt.NDArray[np.int32]  # one code -> rank key only
    category: npt.NDArray[np.uint8]  # strength -> Category
    primary: npt.NDArray[np.int8]  # strength -> rank that makes the category (-1 for 0)
    size: npt.NDArray[np.uint8]  # strength -> 3 or 5 (cards in such a row)
    ordering: tuple[tuple[int, ...], ...]  # strength -> ordering key (index 0 unused)


def _ordering_key(ranks: tuple[int, ...], flush: bool) -> tuple[int, ...]:
    """The lexicographic key of a row: category, then ranks by significance, -1 padded.

    Straights and flushes only count in five cards; in three cards the row is high
    card, pair or trips.
    """
    counts = Counter(ranks)
    # Ranks by significance: more copies first, then higher rank.
    ordered = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    expanded: list[int] = []
    for rank in ordered:
        expanded.extend([rank] * counts[rank])
    straight_high = -1
    if len(ranks) == 5 and len(counts) == 5:
        top = max(ranks)
        if top - min(ranks) == 4:
            straight_high = top
        elif set(ranks) == {12, 0, 1, 2, 3}:
            straight_high = 3  # A-2-3-4-5, the five-high wheel
    if straight_high >= 0 and flush:
        key = [Category.STRAIGHT_FLUSH, straight_high]
    elif shape[0] == 4:
        key = [Category.QUADS, ordered[0], ordered[1]]
    elif shape[:2] == [3, 2]:
        key = [Category.FULL_HOUSE, ordered[0], ordered[1]]
    elif flush:
        key = [Category.FLUSH, *expanded]
    elif straight_high >= 0:
        key = [Category.STRAIGHT, straight_high]
    elif shape[0] == 3:
        key = [Category.TRIPS, *ordered]
    elif shape[:2] == [2, 2]:
        key = [Category.TWO_PAIR, *ordered]
    elif shape[0] == 2:
        key = [Category.PAIR, *ordered]
    else:
        key = [Category.HIGH_CARD, *ordered]
    return tuple(int(k) for k in key) + (-1,) * (6 - len(key))


def _rank_multisets(size: int) -> list[tuple[int, ...]]:
    limit = min(size, 4)
    return [
        combo
        for combo in itertools.combinations_with_replacement(range(13), size)
        if max(Counter(combo).values()) <= limit
    ]


@cache
def _tables() -> _Tables:
    keys = np.array(RANK_KEYS, dtype=np.int64)
    five_ranks = _rank_multisets(5)
    three_ranks = _rank_multisets(3)
    flush_sets = [combo for combo in five_ranks if len(set(combo)) == 5]
    entries: list[tuple[tuple[int, ...], int, int, bool]] = []  # key, rank sum, size, flush
    entries += [(_ordering_key(c, False), int(keys[list(c)].sum()), 5, False)
                for c in five_ranks]
    entries += [(_ordering_key(c, True), int(keys[list(c)].sum()), 5, True) for c in flush_sets]
    entries += [(_ordering_key(c, False), int(keys[list(c)].sum()), 3, False)
                for c in three_ranks]
    ordering = sorted({entry[0] for entry in entries})
    strength_of = {key: index + 1 for index, key in enumerate(ordering)}  # 0 = no row

    max_sum = 5 * RANK_KEYS[-1]
    five = np.zeros(_FLUSH_BIT + max_sum + 1, dtype=np.uint16)
    three_table = np.zeros(3 * RANK_KEYS[-1] + 1, dtype=np.uint16)
    for key, rank_sum, size, flush in entries:
        if size == 3:
            table, index = three_table, rank_sum
        else:
            table, index = five, rank_sum + flush * _FLUSH_BIT
        if table[index]:
            raise AssertionError("rank keys collide")  # unreachable: keys are proven distinct
        table[index] = strength_of[key]

    codes = np.arange(256)
    valid = codes < 52
    rank_key = np.where(valid, keys[np.minimum(codes >> 2, 12)], 0)
    suit_field = np.where(valid, 1 << (_RANK_BITS + 3 * (codes & 3)), 0)
    single = (rank_key + suit_field).astype(np.int32)
    low, high = np.meshgrid(codes, codes, indexing="xy")
    word = (low | (high << 8)).ravel()
    pair_word = np.zeros(1 << 16, dtype=np.int32)
    pair_word[word] = single[low.ravel()] + single[high.ravel()]
    pair_rank = np.zeros(1 << 16, dtype=np.int32)
    pair_rank[word] = rank_key[low.ravel()] + rank_key[high.ravel()]

    count = len(ordering) + 1
    category = np.zeros(count, dtype=np.uint8)
    primary = np.full(count, -1, dtype=np.int8)
    size_of = np.zeros(count, dtype=np.uint8)
    for key, _, size, _ in entries:
        strength = strength_of[key]
        is_royal = key[0] == Category.STRAIGHT_FLUSH and key[1] == 12
        category[strength] = Category.ROYAL_FLUSH if is_royal else key[0]
        primary[strength] = key[1]
        size_of[strength] = size
    return _Tables(
        five=five,
        three=three_table,
        pair_word=pair_word,
        single=single,
        pair_rank=pair_rank,
        card_rank=rank_key.astype(np.int32),
        category=category,
        primary=primary,
        size=size_of,
        ordering=((), *ordering),
    )


def _as_rows(cards: npt.ArrayLike, width: int) -> npt.NDArray[np.uint8]:
    array = np.asarray(cards)
    if array.ndim != 2 or array.shape[1] != width:
        raise CardError(f"expected an array of shape (N, {width}) of card codes, got {array.shape}")
    if array.size and (array.min() < 0 or array.max() >= 52):
        raise CardError("card codes run from 0 to 51; the array holds values outside that range")
    return np.ascontiguousarray(array, dtype=np.uint8)


def _words(rows: npt.NDArray[np.uint8], column: int) -> npt.NDArray[np.uint16]:
    """Columns ``column`` and ``column + 1`` of a C-contiguous uint8 array as one 16-bit word."""
    return np.ndarray(
        shape=(rows.shape[0],),
        dtype="<u2",
        buffer=rows,
        offset=column,
        strides=(rows.strides[0],),
    )


def _chunks(rows: npt.NDArray[np.uint8], out: npt.NDArray[np.uint16]) -> Iterator[
        tuple[npt.NDArray[np.uint8], npt.NDArray[np.int32], npt.NDArray[np.int32],
              npt.NDArray[np.uint16]]]:
    """Cache-sized pieces of ``rows``, each with two scratch arrays and its part of ``out``."""
    total = np.empty(min(rows.shape[0], _CHUNK), dtype=np.int32)
    part = np.empty_like(total)
    for start in range(0, rows.shape[0], _CHUNK):
        chunk = rows[start : start + _CHUNK]
        m = chunk.shape[0]
        yield chunk, total[:m], part[:m], out[start : start + m]


def strength5(cards: npt.ArrayLike) -> npt.NDArray[np.uint16]:
    """Strength of each 5-card row of an ``(N, 5)`` array of card codes.

    Rows must hold five different cards (hand validation guarantees it).
    """
    rows = _as_rows(cards, 5)
    tables = _tables()
    out = np.empty(rows.shape[0], dtype=np.uint16)
    for chunk, s, p, target in _chunks(rows, out):
        # mode="clip" skips numpy's per-element bounds error path; indices are in range
        # by construction (two codes < 52 make a word < 2**16).
        np.take(tables.pair_word, _words(chunk, 0), out=s, mode="clip")
        np.take(tables.pair_word, _words(chunk, 2), out=p, mode="clip")
        np.add(s, p, out=s)
        np.take(tables.single, chunk[:, 4], out=p, mode="clip")
        np.add(s, p, out=s)
        # A suit field holding 5 (binary 101) is a flush: AND the fields with themselves
        # shifted by two and keep their low bits, leaving 0 or a single field's low bit.
        # Adding _FLUSH_CARRY carries any such bit into bit 28 (and leaves it clear for
        # 0); shifting by 9 moves bit 28 to _FLUSH_BIT.
        np.right_shift(s, 2, out=p)
        np.bitwise_and(p, s, out=p)
        np.bitwise_and(p, _SUIT_LOW_BITS, out=p)
        np.add(p, _FLUSH_CARRY, out=p)
        np.right_shift(p, 9, out=p)
        np.bitwise_and(p, _FLUSH_BIT, out=p)
        np.bitwise_and(s, _RANK_MASK, out=s)
        np.bitwise_or(s, p, out=s)
        np.take(tables.five, s, out=target, mode="clip")
    return out


def strength3(cards: npt.ArrayLike) -> npt.NDArray[np.uint16]:
    """Strength of each 3-card (top) row of an ``(N, 3)`` array, on the 5-card scale."""
    rows = _as_rows(cards, 3)
    tables = _tables()
    out = np.empty(rows.shape[0], dtype=np.uint16)
    for chunk, s, p, target in _chunks(rows, out):
        np.take(tables.pair_rank, _words(chunk, 0), out=s, mode="clip")
        np.take(tables.card_rank, chunk[:, 2], out=p, mode="clip")
        np.add(s, p, out=s)
        np.take(tables.three, s, out=target, mode="clip")
    return out


def category(strength: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """The :class:`Category` of each strength (royal flush apart from straight flush)."""
    return _tables().category[np.asarray(strength, dtype=np.intp)]


def primary_rank(strength: npt.ArrayLike) -> npt.NDArray[np.int8]:
    """The rank that makes each strength's category: the pair's, the trips', the high card's."""
    return _tables().primary[np.asarray(strength, dtype=np.intp)]


def strength_count() -> int:
    """How many distinct strengths exist (3-card and 5-card together); they run 1..count."""
    return len(_tables().ordering) - 1


def row_size(strength: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """3 for a strength only a top row can have, 5 for one only a 5-card row can have."""
    return _tables().size[np.asarray(strength, dtype=np.intp)]


def describe(strength: npt.ArrayLike) -> list[str]:
    """Plain-English names, e.g. ``pair of queens, king kicker``.

    >>> from ofcstats.cards import parse_cards
    >>> describe(strength3([parse_cards("Qs Qh Kd")]))
    ['pair of queens, king kicker']
    """
    names = []
    for value in np.atleast_1d(np.asarray(strength)):
        key = _tables().ordering[int(value)]
        names.append(_describe_key(key) if key else "no row")
    return names


def _describe_key(key: tuple[int, ...]) -> str:
    cat, ranks = Category(key[0]), [r for r in key[1:] if r >= 0]
    if cat == Category.STRAIGHT_FLUSH and ranks[0] == 12:
        return Category.ROYAL_FLUSH.label
    if cat in (Category.STRAIGHT, Category.STRAIGHT_FLUSH):
        return f"{_RANK_NAMES[ranks[0]]}-high {cat.label}"
    if cat in (Category.HIGH_CARD, Category.FLUSH):
        return f"{_RANK_NAMES[ranks[0]]}-high {cat.label}: " + "".join(RANKS[r] for r in ranks)
    if cat == Category.PAIR:
        text = f"pair of {_plural(ranks[0])}"
    elif cat == Category.TWO_PAIR:
        text = f"two pair, {_plural(ranks[0])} and {_plural(ranks[1])}"
        ranks = ranks[1:]
    elif cat == Category.TRIPS:
        text = f"three {_plural(ranks[0])}"
    elif cat == Category.FULL_HOUSE:
        return f"full house, {_plural(ranks[0])} full of {_plural(ranks[1])}"
    else:
        text = f"four {_plural(ranks[0])}"
    kickers = ranks[1:]
    if kickers:
        text += ", " + "".join(RANKS[r] for r in kickers) + (" kicker" if len(kickers) == 1 else
                                                              " kickers")
    if len(kickers) == 1:
        text = text.replace(f"{RANKS[kickers[0]]} kicker", f"{_RANK_NAMES[kickers[0]]} kicker")
    return text


WHEEL_STRAIGHTS = (4, 5, 6, 7, 8, 9, 10, 12, 3, 11)
"""Straights by the rank of their high card, weakest first, in the "wheel" order of
13-card Chinese poker: the usual order up to the queen-high straight, then T-J-Q-K-A,
then A-2-3-4-5, and 9-T-J-Q-K highest."""


@cache
def wheel_order() -> npt.NDArray[np.uint16]:
    """A lookup from every strength to its strength when straights rank in the wheel
    order (:data:`WHEEL_STRAIGHTS`); every other strength, straight flushes included,
    keeps its own. Each straight takes the place of another, so the categories stay.

    >>> from ofcstats.cards import parse_cards
    >>> wheel, broadway, nine = strength5([parse_cards("As 2h 3d 4c 5s"),
    ...     parse_cards("Ts Jh Qd Kc Ad"), parse_cards("9s Th Jd Qc Kd")])
    >>> bool(wheel_order()[nine] > wheel_order()[wheel] > wheel_order()[broadway])
    True
    """
    strengths = np.arange(strength_count() + 1)
    order = strengths.astype(np.uint16)
    straights = strengths[(category(strengths) == Category.STRAIGHT) & (row_size(strengths) == 5)]
    by_high = dict(zip(primary_rank(straights).tolist(), straights.tolist(), strict=True))
    for place, high in zip(straights.tolist(), WHEEL_STRAIGHTS, strict=True):
        order[by_high[high]] = place
    order.flags.writeable = False
    return order


@cache
def low_order() -> npt.NDArray[np.uint16]:
    """A lookup from every 5-card strength to its worth as a deuce-to-seven low: the
    higher, the better the low (7-5-4-3-2 of mixed suits the best, a royal flush the
    worst). Lowball turns the usual order round, with aces always high: A-2-3-4-5 is no
    straight but an ace-high hand (a flush when suited), between K-Q-J-T-8 and A-6-4-3-2.

    >>> from ofcstats.cards import parse_cards
    >>> seven, eight, ace, king = strength5([parse_cards("7s 5h 4d 3c 2s"),
    ...     parse_cards("8s 5h 4d 3c 2s"), parse_cards("As 2h 3d 4c 5s"),
    ...     parse_cards("Ks Qh Jd Tc 8s")])
    >>> order = low_order()
    >>> bool(order[seven] > order[eight] > order[king] > order[ace])
    True
    """
    top = strength_count() + 1
    strengths = np.arange(top)
    order = (2 * (top - strengths)).astype(np.uint16)
    order[row_size(strengths) != 5] = 0
    ace_high, ace_flush, wheel, steel = strength5(np.array([
        [48, 17, 9, 5, 1], [48, 16, 8, 4, 0], [48, 1, 5, 9, 13], [48, 0, 4, 8, 12]],
        dtype=np.uint8))  # A-6-4-3-2, suited A-6-4-3-2, A-2-3-4-5, suited A-2-3-4-5
    order[wheel] = 2 * (top - int(ace_high)) + 1
    order[steel] = 2 * (top - int(ace_flush)) + 1
    order.flags.writeable = False
    return order


def weakest(spec: str) -> int:
    """The weakest strength a threshold names, for fantasyland and royalty rules.

    ``QQ`` is the weakest pair of queens on top (``QQ2``), ``222`` the weakest trips
    on top, and a category name (``full_house``, ``quads``) the weakest 5-card row of it.

    >>> describe([weakest("QQ")]), describe([weakest("full_house")])
    (['pair of queens, deuce kicker'], ['full house, deuces full of threes'])
    """
    text = spec.strip()
    upper = text.upper().replace("10", "T")
    if upper and len(set(upper)) == 1 and upper[0] in RANKS and len(upper) in (2, 3):
        rank = RANKS.index(upper[0])
        if len(upper) == 3:
            key = (Category.TRIPS, rank, -1, -1, -1, -1)
        else:
            kicker = 1 if rank == 0 else 0
            key = (Category.PAIR, rank, kicker, -1, -1, -1)
        return _tables().ordering.index(tuple(int(k) for k in key))
    names = {c.name.lower(): c for c in Category}
    if text.lower() in names:
        wanted = names[text.lower()]
        cats = _tables().category
        sizes = _tables().size
        hits = np.flatnonzero((cats == wanted) & (sizes == 5))
        return int(hits.min())
    raise CardError(
        f"{spec!r} is not a hand threshold: use a top pair like 'QQ', top trips like '222', "
        f"or a category name ({', '.join(names)})"
    )
