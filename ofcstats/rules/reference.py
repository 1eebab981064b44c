"""The reference scorer: one hand, one ruleset, the rules as docs/rules.md words them.

Written to be read side by side with docs/rules.md, not to be fast: every seat meets every
opponent in plain loops, pairs are settled with if-statements (§2, §3), royalties are read
straight from the ruleset's tables by the row's category or top pair (§4), naturals are
counted card by card (§4), and fantasyland is earned by comparing the rows with the
policy's thresholds (§6).

It shares nothing with the vectorised scorer (:mod:`ofcstats.score`), the simulator or
the rules on arrays (:mod:`ofcstats.rules.board`) but the row strengths, which are proven
separately against phevaluator and the exhaustive counts. The tests hold those to this
scorer, hand by hand.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from ofcstats import evaluate
from ofcstats.cards import RANKS, TWO_OF_SPADES
from ofcstats.evaluate import Category
from ofcstats.rows import ROWS, Row
from ofcstats.rules.model import RoyaltyPool, Ruleset
from ofcstats.variants import Variant


@dataclass
class Seat:
    """One seat's finished board, and how it played the hand."""

    seat: int
    top: list[int]
    middle: list[int]
    bottom: list[int]
    fantasyland: bool = False
    surrendered: bool = False
    player: str = ""  # criss-cross: the player whose board this is (two seats each)
    unit: float = 1.0  # what a point is worth to the player, in point values (§5)

    def strengths(self, wheel: bool = False) -> tuple[int, int, int]:
        """The strengths of the top, middle and bottom rows (§1); with ``wheel``, straights
        rank in the wheel order."""
        middle = int(evaluate.strength5(np.array([self.middle]))[0])
        bottom = int(evaluate.strength5(np.array([self.bottom]))[0])
        if wheel:
            middle, bottom = _wheel(self.middle, middle), _wheel(self.bottom, bottom)
        return int(evaluate.strength3(np.array([self.top]))[0]), middle, bottom


# The "wheel" of 13-card Chinese poker: 9-T-J-Q-K the highest straight, then A-2-3-4-5,
# then T-J-Q-K-A; the others as usual. Straights by their high card, weakest first.
WHEEL_ORDER = ["6", "7", "8", "9", "T", "J", "Q", "A", "5", "K"]


def _wheel(cards: list[int], strength: int) -> int:
    """A straight's strength when straights rank in the wheel order: the strength the
    usual order gives the straight in the same place."""
    if Category(int(evaluate.category([strength])[0])) != Category.STRAIGHT:
        return strength
    ranks = sorted({c >> 2 for c in cards})
    high = "5" if ranks == [0, 1, 2, 3, 12] else RANKS[ranks[-1]]
    everything = np.arange(evaluate.strength_count() + 1)
    straights = everything[evaluate.category(everything) == Category.STRAIGHT]
    return int(straights[WHEEL_ORDER.index(high)])


def _royalty(ruleset: Ruleset, row: Row, strength: int) -> int:
    """A row's royalty (§4): a top row is paid by its pair or trips, a 5-card row by its
    category."""
    cat = Category(int(evaluate.category([strength])[0]))
    table = getattr(ruleset.royalties, row)
    if row is Row.TOP:
        rank = RANKS[int(evaluate.primary_rank([strength])[0])]
        if cat == Category.PAIR:
            return table.get(rank * 2, 0)
        if cat == Category.TRIPS:
            return table.get(rank * 3, 0)
        return 0
    return table.get(cat.name.lower(), 0)


def _natural(ruleset: Ruleset, seat: Seat, variant: str) -> int:
    """What the seat's best natural is worth (§4, 13-card Chinese poker only); 0: none."""
    if variant != Variant.CHINESE_13 or not ruleset.naturals.played:
        return 0
    n = ruleset.naturals
    cards = seat.top + seat.middle + seat.bottom
    counts = Counter(c >> 2 for c in cards)
    values = []
    if len(counts) == 13:
        values.append(n.dragon)
    if sum(v // 2 for v in counts.values()) >= 6:
        values.append(n.six_pairs)
    _, s_mid, s_bot = seat.strengths()
    cat_mid = Category(int(evaluate.category([s_mid])[0]))
    cat_bot = Category(int(evaluate.category([s_bot])[0]))
    top_ranks = sorted(c >> 2 for c in seat.top)
    top_straight = len(set(top_ranks)) == 3 and (
        top_ranks[2] - top_ranks[0] == 2 or top_ranks == [0, 1, 12])
    straights = {Category.STRAIGHT, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH}
    flushes = {Category.FLUSH, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH}
    if top_straight and cat_mid in straights and cat_bot in straights:
        values.append(n.three_straights)
    if len({c & 3 for c in seat.top}) == 1 and cat_mid in flushes and cat_bot in flushes:
        values.append(n.three_flushes)
    return max(values, default=0)


@dataclass
class _Facts:
    """What the settlement needs of one seat's board (§2, §4)."""

    strengths: tuple[int, int, int]
    wrong_rows: int  # rows set above the row below them; 0 when misses are not counted
    natural: int  # what its best natural is worth; 0: none
    out_of_showdown: bool  # surrendered, or holds a natural the ruleset pays
    royalties: list[int]  # per row; none when fouled or out of the showdown
    spade_row: int | None  # the row holding the 2 of spades
    pool_hand: int  # strength of its best royalty hand for the royalty pool; 0: none

    @property
    def fouled(self) -> bool:
        return self.wrong_rows > 0


def _low(cards: list[int]) -> int:
    """A five-card row's worth as a deuce-to-seven low (§4, low in the middle): the
    usual poker order turned round, aces always high, so A-2-3-4-5 is no straight and
    7-5-4-3-2 of mixed suits is the best low. Higher is better, as for strengths."""
    counts = Counter(c >> 2 for c in cards)
    flush = len({c & 3 for c in cards}) == 1
    straight = len(counts) == 5 and max(counts) - min(counts) == 4
    shape = sorted(counts.values(), reverse=True)
    category = (8 if straight and flush else 7 if shape[0] == 4 else 6 if shape == [3, 2]
                else 5 if flush else 4 if straight else 3 if shape[0] == 3
                else 2 if shape == [2, 2, 1] else 1 if shape[0] == 2 else 0)
    ranks = sorted(counts, key=lambda rank: (counts[rank], rank), reverse=True)
    high = category
    for rank in ranks + [0] * (5 - len(ranks)):
        high = high * 13 + rank
    return -high


def _facts(seat: Seat, ruleset: Ruleset, variant: str) -> _Facts:
    strengths = seat.strengths(ruleset.wheel)
    # Wrongly set rows: the top over the middle, the middle over the bottom (§2).
    wrong_rows = (strengths[0] > strengths[1]) + (strengths[1] > strengths[2])
    if ruleset.low_middle:
        # Low in the middle: the middle is compared as a low, only the top and the
        # bottom must be in order.
        strengths = (strengths[0], _low(seat.middle), strengths[2])
        wrong_rows = int(strengths[0] > strengths[2])
    if ruleset.misset == "not-counted":  # misses not counted: rows play as set
        wrong_rows = 0
    natural = _natural(ruleset, seat, variant)
    out = seat.surrendered or natural > 0
    royalties = [0, 0, 0] if wrong_rows or out else \
        [0 if ruleset.low_middle and row is Row.MIDDLE  # a low middle earns no royalty
         else _royalty(ruleset, row, strengths[i]) for i, row in enumerate(ROWS)]
    spade_row = next((i for i, row in enumerate((seat.top, seat.middle, seat.bottom))
                      if TWO_OF_SPADES in row), None)
    pool_hand = 0 if wrong_rows or out else _pool_hand(strengths, ruleset.low_middle)
    return _Facts(strengths, wrong_rows, natural, out, royalties, spade_row, pool_hand)


def _pool_hand(strengths: tuple[int, int, int], low_middle: bool) -> int:
    """The board's best royalty hand for the pool (§4): trips in the top, a full house or
    better in the middle (not when it plays low), quads or better in the bottom; 0 for
    none."""
    held = []
    for row, (strength, weakest) in enumerate(zip(strengths, (
            Category.TRIPS, Category.FULL_HOUSE, Category.QUADS), strict=True)):
        if low_middle and row == 1:
            continue
        if Category(int(evaluate.category([strength])[0])) >= weakest:
            held.append(strength)
    return max(held, default=0)


def _royalty_pool(facts: dict[int, _Facts], result: dict[int, dict[str, Any]],
                  pool: RoyaltyPool) -> None:
    """The royalty pool (§4). Only the showdown plays it, and only when some showdown
    seat holds a royalty hand: ``each`` royalty hand takes the stake from every other
    showdown seat; otherwise each showdown seat pays the stake in and the pool goes to
    the ``best`` royalty hand or is ``share``d by all of them, in equal parts, the odd
    points one each to the takers with the lowest seat numbers."""
    showing = sorted(seat for seat, f in facts.items() if not f.out_of_showdown)
    held = {seat: facts[seat].pool_hand for seat in showing if facts[seat].pool_hand}
    if not held:
        return
    if pool.split == "each":
        for taker in held:
            for other in showing:
                if other != taker:
                    result[taker]["points"] += pool.stake
                    result[other]["points"] -= pool.stake
        return
    best = max(held.values())
    takers = sorted(held) if pool.split == "share" else \
        sorted(seat for seat, hand in held.items() if hand == best)
    for seat in showing:
        result[seat]["points"] -= pool.stake
    pot = pool.stake * len(showing)
    for place, seat in enumerate(takers):
        result[seat]["points"] += pot // len(takers) + (place < pot % len(takers))


def _beats(a: _Facts, b: _Facts, i: int) -> int:
    """+1 if a wins row i against b, -1 if it loses, 0 on a tie or both fouled (§2)."""
    if a.fouled and b.fouled:
        return 0
    if b.fouled:
        return 1
    if a.fouled:
        return -1
    return (a.strengths[i] > b.strengths[i]) - (a.strengths[i] < b.strengths[i])


def _settle(res: dict[str, Any], me: Seat, them: Seat, a: _Facts, b: _Facts,
            ruleset: Ruleset) -> None:
    """What ``me`` wins from ``them``, added to ``res`` (§3-§5)."""
    h = ruleset.head_to_head
    # Surrender: paid to every opponent that did not surrender (§5).
    if me.surrendered and not them.surrendered:
        res["points"] -= ruleset.surrender_points
    if them.surrendered and not me.surrendered:
        res["points"] += ruleset.surrender_points
    # Naturals: paid by every opponent, netted (§4).
    if a.natural or b.natural:
        res["points"] += a.natural - b.natural
    if a.out_of_showdown or b.out_of_showdown:
        return
    signs = [_beats(a, b, i) for i in range(3)]
    for i in range(3):
        res["rows"][i] += signs[i]
        res["wins"][i] += signs[i] == 1
    w, lo = signs.count(1), signs.count(-1)
    res["scoops"] += w == 3
    res["scooped"] += lo == 3
    if a.fouled and b.fouled:
        pass  # two fouled hands exchange nothing (§2)
    elif b.fouled:
        res["points"] += ruleset.foul_points * (
            b.wrong_rows if ruleset.misset == "per-row" else 1)
    elif a.fouled:
        res["points"] -= ruleset.foul_points * (
            a.wrong_rows if ruleset.misset == "per-row" else 1)
    else:
        res["points"] += (h.row * (w - lo) + h.majority * ((w >= 2) - (lo >= 2))
                          + h.scoop * ((w == 3) - (lo == 3)))
    # Royalties: each collects its own from the other; the 2-of-spades row twice (§4).
    for i in range(3):
        factor = 2 if ruleset.spade_bonus and i in (a.spade_row, b.spade_row) else 1
        res["points"] += (a.royalties[i] - b.royalties[i]) * factor
        res["royalty_rows"][i] += a.royalties[i] * factor


def _table_bonus(facts: dict[int, _Facts], result: dict[int, dict[str, Any]],
                 bonus: int, units: dict[int, float]) -> None:
    """Each row that beats every showdown opponent is paid ``bonus`` by each of them (§3);
    between players of different units, at the smaller (§5)."""
    showing = [seat for seat, f in facts.items() if not f.out_of_showdown]
    rows_beating_table = {}
    for me in showing:
        others = [them for them in showing if them != me]
        rows_beating_table[me] = 0 if facts[me].fouled else sum(
            all(_beats(facts[me], facts[them], i) == 1 for them in others) for i in range(3))
    for me in showing:
        for them in showing:
            if me != them:
                paid = bonus * (rows_beating_table[me] - rows_beating_table[them])
                result[me]["points"] += paid
                result[me]["unit_points"] += paid * min(units[me], units[them])


def _criss_cross(seats: list[Seat], ruleset: Ruleset) -> dict[int, dict[str, Any]]:
    """A criss-cross hand (§5): each meeting of two boards of different players is a
    heads-up 13-card hand; a board's result is the sum of its meetings. With
    ``criss_cross = "both"`` every board meets both of the opponent's; with
    ``"matching"`` the boards on the players' lower seats meet, and those on the higher."""
    players: dict[str, list[Seat]] = {}
    for seat in sorted(seats, key=lambda s: s.seat):
        players.setdefault(seat.player, []).append(seat)
    first, second = players.values()
    total: dict[int, dict[str, Any]] = {}
    for i, mine in enumerate(first):
        for j, theirs in enumerate(second):
            if ruleset.criss_cross == "matching" and i != j:
                continue
            met = score_hand([mine, theirs], ruleset, Variant.CHINESE_13)
            for number, result in met.items():
                if number not in total:
                    total[number] = result
                    continue
                kept = total[number]
                for key in ("points", "royalties", "scoops", "scooped", "unit_points"):
                    kept[key] += result[key]
                for key in ("royalty_rows", "rows", "wins"):
                    kept[key] = [a + b for a, b in zip(kept[key], result[key], strict=True)]
    return total


def score_hand(seats: list[Seat], ruleset: Ruleset, variant: str = Variant.PINEAPPLE
               ) -> dict[int, dict[str, Any]]:
    """Points and facts per seat number under one ruleset: ``points``, ``royalties`` (and
    per row, ``royalty_rows``), per row the sum of wins and losses (``rows``) and the wins
    (``wins``), ``fouled``, ``scoops``, ``scooped`` and ``fantasyland_next``."""
    if variant == Variant.CRISS_CROSS:
        return _criss_cross(seats, ruleset)
    facts = {s.seat: _facts(s, ruleset, variant) for s in seats}
    result: dict[int, dict[str, Any]] = {
        s.seat: {"points": 0, "royalties": 0, "royalty_rows": [0, 0, 0], "rows": [0, 0, 0],
                 "wins": [0, 0, 0], "fouled": facts[s.seat].fouled, "scoops": 0, "scooped": 0,
                 "unit_points": 0.0}
        for s in seats}
    for me in seats:
        for them in seats:
            if me.seat != them.seat:
                before = result[me.seat]["points"]
                _settle(result[me.seat], me, them, facts[me.seat], facts[them.seat], ruleset)
                # Per-player units (§5): a pair settles at the smaller of its two units.
                result[me.seat]["unit_points"] += (result[me.seat]["points"] - before) \
                    * min(me.unit, them.unit)
    if ruleset.head_to_head.table_bonus:
        _table_bonus(facts, result, ruleset.head_to_head.table_bonus,
                     {s.seat: s.unit for s in seats})
    if ruleset.royalty_pool.played:
        before_pool = {s.seat: result[s.seat]["points"] for s in seats}
        _royalty_pool(facts, result, ruleset.royalty_pool)
        # The pool is one pot: played at the smallest unit at the table (§5).
        smallest = min(s.unit for s in seats)
        for s in seats:
            result[s.seat]["unit_points"] += \
                (result[s.seat]["points"] - before_pool[s.seat]) * smallest
    for s in seats:
        result[s.seat]["royalties"] = sum(result[s.seat]["royalty_rows"])
        result[s.seat]["fantasyland_next"] = _fantasyland_next(
            ruleset, s, facts[s.seat].strengths, facts[s.seat].fouled, variant)
    return result


def _fantasyland_next(ruleset: Ruleset, seat: Seat, strengths: tuple[int, int, int],
                      fouled: bool, variant: str) -> bool:
    """Fantasyland earned (§6): entry by the top row from a normal hand, stay by any row
    meeting its threshold from a fantasyland hand; never after a foul or a surrender, never
    in 13-card Chinese poker. The repeat limit needs the session: it is not applied here."""
    policy = ruleset.fantasyland
    if policy.entry is None or fouled or seat.surrendered or variant == Variant.CHINESE_13:
        return False
    if not seat.fantasyland:
        return strengths[0] >= evaluate.weakest(policy.entry)
    stays = [(policy.stay_top, 0), (policy.stay_middle, 1), (policy.stay_bottom, 2)]
    return any(spec is not None and strengths[i] >= evaluate.weakest(spec) for spec, i in stays)
