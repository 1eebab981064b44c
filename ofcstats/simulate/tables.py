"""Lookup tables the bots share: partial rows as additive keys, their features, odds.

A row in the making (0 to 5 cards) is kept as two integers that grow by addition as
cards arrive, so every candidate placement of a street is one matrix product away:

- ``rank key``: ``n * STRIDE + sum(RANK_KEYS[rank])``, which names the multiset of
  ranks exactly (:data:`ofcstats.evaluate.RANK_KEYS` keeps sums of up to five ranks
  apart), and the number of cards ``n`` with it;
- ``suit word``: ``sum(8 ** suit)``, four 3-bit suit counters (five cards never carry).

Both fit one ``int64`` as ``rank_key << 12 | suit_word``. :func:`row_tables` maps a rank
key to a dense multiset id, and the id to features: made category, primary rank,
whether a straight is still possible, and the exact strength once the row is full.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from ofcstats import evaluate
from ofcstats.evaluate import RANK_KEYS, Category
from ofcstats.rows import TOP

STRIDE = 5 * RANK_KEYS[-1] + 1
SUIT_BITS = 12
SUIT_MASK = (1 << SUIT_BITS) - 1
EMPTY = 52  # the code of an empty slot in a board array
DISCARD = 3  # a placement code after the rows' own (TOP, MIDDLE, BOTTOM)
ROW_SIZES = (3, 5, 5)
ROW_START = (0, 3, 8)  # slots of a 13-slot board: top 0-2, middle 3-7, bottom 8-12


@dataclass(frozen=True)
class RowTables:
    """Features of every multiset of up to five ranks, indexed by dense id."""

    id_of_key: npt.NDArray[np.int16]  # rank key -> id (-1: no such multiset)
    size: npt.NDArray[np.int8]  # id -> cards
    made: npt.NDArray[np.int8]  # id -> Category made so far (pairs, trips, quads, full house)
    primary: npt.NDArray[np.int8]  # id -> rank that makes it (highest card for high card)
    made_index: npt.NDArray[np.int16]  # id -> made * 13 + primary, -1 for an empty row
    straight_ok: npt.NDArray[np.bool_]  # id -> distinct ranks that still fit in a straight
    full5: npt.NDArray[np.uint16]  # id (5 cards) -> strength, no flush
    full5_flush: npt.NDArray[np.uint16]  # id (5 distinct) -> strength as a flush
    full3: npt.NDArray[np.uint16]  # id (3 cards) -> strength of a top row
    singles: npt.NDArray[np.int8]  # id -> ranks held once
    pair_ranks: npt.NDArray[np.int8]  # id -> ranks held twice
    high_single: npt.NDArray[np.int8]  # id -> highest rank held once (-1 if none)
    made_of_key: npt.NDArray[np.int16]  # rank key -> made index, in one step
    suited: npt.NDArray[np.bool_]  # suit word -> every card of one suit (or no card)
    suit_of: npt.NDArray[np.int8]  # suit word -> that suit (-1 when none or mixed)


def card_keys() -> npt.NDArray[np.int64]:
    """The additive key of each card code 0..51 (and 0 for the empty slot 52)."""
    codes = np.arange(53)
    rank_part = STRIDE + np.asarray(RANK_KEYS, dtype=np.int64)[np.minimum(codes >> 2, 12)]
    keys = (rank_part << SUIT_BITS) + (8 ** (codes & 3))
    keys[EMPTY] = 0
    return keys.astype(np.int64)


def _multisets() -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    for size in range(6):
        for combo in itertools.combinations_with_replacement(range(13), size):
            if not combo or max(Counter(combo).values()) <= 4:
                out.append(combo)
    return out


def _made(ranks: tuple[int, ...]) -> tuple[int, int]:
    if not ranks:
        return Category.HIGH_CARD, -1
    counts = Counter(ranks)
    ordered = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    if shape[0] == 4:
        return Category.QUADS, ordered[0]
    if shape[:2] == [3, 2]:
        return Category.FULL_HOUSE, ordered[0]
    if shape[0] == 3:
        return Category.TRIPS, ordered[0]
    if shape[:2] == [2, 2]:
        return Category.TWO_PAIR, ordered[0]
    if shape[0] == 2:
        return Category.PAIR, ordered[0]
    return Category.HIGH_CARD, ordered[0]


def _straight_ok(ranks: tuple[int, ...]) -> bool:
    if len(set(ranks)) != len(ranks) or not ranks:
        return not ranks
    for low in range(-1, 9):  # -1: the wheel, ace playing low
        window = {(r % 13) for r in range(low, low + 5)}
        if set(ranks) <= window:
            return True
    return False


@cache
def row_tables() -> RowTables:
    """Build the tables once per process (about 50 ms)."""
    sets = _multisets()
    keys = np.asarray(RANK_KEYS, dtype=np.int64)
    count = len(sets)
    id_of_key = np.full(6 * STRIDE, -1, dtype=np.int16)
    size = np.zeros(count, dtype=np.int8)
    made = np.zeros(count, dtype=np.int8)
    primary = np.full(count, -1, dtype=np.int8)
    straight_ok = np.zeros(count, dtype=bool)
    singles = np.zeros(count, dtype=np.int8)
    pair_ranks = np.zeros(count, dtype=np.int8)
    high_single = np.full(count, -1, dtype=np.int8)
    five_rows, five_ids, three_rows, three_ids, flush_rows, flush_ids = [], [], [], [], [], []
    for index, ranks in enumerate(sets):
        id_of_key[len(ranks) * STRIDE + int(keys[list(ranks)].sum())] = index
        size[index] = len(ranks)
        made[index], primary[index] = _made(ranks)
        straight_ok[index] = _straight_ok(ranks)
        counts = Counter(ranks)
        once = [r for r, c in counts.items() if c == 1]
        singles[index] = len(once)
        pair_ranks[index] = sum(1 for c in counts.values() if c == 2)
        high_single[index] = max(once, default=-1)
        # Suits for a representative: spread so no flush, except where asked below.
        cards = [r * 4 + (i % 4) for i, r in enumerate(ranks)]
        if len(ranks) == 5:
            five_rows.append(cards)
            five_ids.append(index)
            if len(counts) == 5:
                flush_rows.append([r * 4 for r in ranks])
                flush_ids.append(index)
        elif len(ranks) == 3:
            three_rows.append(cards)
            three_ids.append(index)
    full5 = np.zeros(count, dtype=np.uint16)
    full5[five_ids] = evaluate.strength5(np.array(five_rows))
    full5_flush = np.zeros(count, dtype=np.uint16)
    full5_flush[flush_ids] = evaluate.strength5(np.array(flush_rows))
    full3 = np.zeros(count, dtype=np.uint16)
    full3[three_ids] = evaluate.strength3(np.array(three_rows))
    made_index = np.where(size == 0, -1, made.astype(np.int16) * 13 + primary).astype(np.int16)

    words = np.arange(1 << SUIT_BITS)
    fields = np.stack([(words >> (3 * s)) & 7 for s in range(4)], axis=1)
    nonzero = (fields > 0).sum(axis=1)
    suited = nonzero <= 1
    suit_of = np.where(nonzero == 1, fields.argmax(axis=1), -1).astype(np.int8)
    return RowTables(
        id_of_key=id_of_key, size=size, made=made, primary=primary, made_index=made_index,
        straight_ok=straight_ok, full5=full5, full5_flush=full5_flush, full3=full3,
        singles=singles, pair_ranks=pair_ranks, high_single=high_single,
        made_of_key=np.where(id_of_key >= 0, made_index[id_of_key], -1).astype(np.int16),
        suited=suited, suit_of=suit_of,
    )


def category_index(strength: npt.NDArray[np.integer]) -> npt.NDArray[np.int16]:
    """``category * 13 + primary rank`` of exact strengths: the scale of ``made_index``."""
    cat = evaluate.category(strength).astype(np.int16)
    cat = np.where(cat == Category.ROYAL_FLUSH, Category.STRAIGHT_FLUSH, cat)
    return (cat * 13 + evaluate.primary_rank(strength)).astype(np.int16)


@cache
def at_least_table() -> npt.NDArray[np.float32]:
    """``P[j, K, F, U]``: chance of at least ``j`` of ``K`` wanted cards among ``F`` drawn
    from ``U`` unseen (hypergeometric), for j <= 5, K <= 13, F <= 16, U <= 52."""
    table = np.zeros((6, 14, 17, 53), dtype=np.float32)
    for unseen in range(53):
        for wanted in range(min(13, unseen) + 1):
            for drawn in range(min(16, unseen) + 1):
                total = math.comb(unseen, drawn)
                pmf = [math.comb(wanted, x) * math.comb(unseen - wanted, drawn - x) / total
                       for x in range(min(wanted, drawn) + 1)]
                tail = np.cumsum(pmf[::-1])[::-1]
                for j in range(6):
                    table[j, wanted, drawn, unseen] = tail[j] if j < len(tail) else 0.0
    table[0] = 1.0
    return table


@cache
def patterns(cards: int, discards: int) -> npt.NDArray[np.int8]:
    """Every way to send ``cards`` dealt cards to top, middle, bottom or the discard,
    discarding exactly ``discards`` of them: shape (P, cards), values 0..3."""
    rows = []
    for combo in itertools.product(range(4), repeat=cards):
        if combo.count(DISCARD) == discards and combo.count(TOP) <= 3:
            rows.append(combo)
    return np.array(rows, dtype=np.int8).reshape(-1, cards)


@cache
def pattern_onehot(cards: int, discards: int) -> npt.NDArray[np.float64]:
    """``(cards, P * 3)`` one-hot: card i of pattern p goes to row r, for a matrix product."""
    pats = patterns(cards, discards)
    onehot = np.zeros((cards, pats.shape[0], 3))
    for r in range(3):
        onehot[:, :, r] = (pats == r).T
    return onehot.reshape(cards, -1)


@cache
def pattern_counts(cards: int, discards: int) -> npt.NDArray[np.int8]:
    """``(P, 3)`` cards each pattern adds to each row."""
    pats = patterns(cards, discards)
    return np.stack([(pats == r).sum(axis=1) for r in range(3)], axis=1).astype(np.int8)


@cache
def subset_matrix(cards: int) -> npt.NDArray[np.float64]:
    """``(cards, 2**cards)``: card i is in subset j when bit i of j is set."""
    j = np.arange(1 << cards)
    return ((j[None, :] >> np.arange(cards)[:, None]) & 1).astype(np.float64)


@cache
def pattern_subsets(cards: int, discards: int) -> npt.NDArray[np.intp]:
    """``(P, 3)``: for each pattern and row, the subset of dealt cards it sends there."""
    pats = patterns(cards, discards).astype(np.intp)
    bits = 1 << np.arange(cards)
    return np.stack([((pats == r) * bits).sum(axis=1) for r in range(3)], axis=1)


@cache
def transitions() -> tuple[npt.NDArray[np.int16], npt.NDArray[np.int16],
                           npt.NDArray[np.int16]]:
    """The rows' ranks as dense ids that grow card by card, small enough to stay in the
    processor's cache: ``(ids + 1, 13)`` the id after one more card of each rank (the
    last id: no such row, e.g. past five cards), each id's made index (-1 for the
    empty row and the last id: :attr:`RowTables.made_of_key` by id), and the made index
    after one more card of each rank, ``(ids + 1, 13)``."""
    t = row_tables()
    count = t.size.size
    key_of_id = np.zeros(count, dtype=np.int64)
    present = np.flatnonzero(t.id_of_key >= 0)
    key_of_id[t.id_of_key[present]] = present
    keys = key_of_id[:, None] + STRIDE + np.asarray(RANK_KEYS, dtype=np.int64)[None, :]
    inside = keys < t.id_of_key.size
    ids = np.where(inside, t.id_of_key[np.where(inside, keys, 0)], -1)
    after = np.full((count + 1, 13), count, dtype=np.int16)
    after[:count] = np.where(ids >= 0, ids, count)
    made = np.append(t.made_index, np.int16(-1)).astype(np.int16)
    return after, made, made[after]
