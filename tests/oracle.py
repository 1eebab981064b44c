"""A deliberately plain scorer for tests: one hand at a time, the rules as docs/rules.md words them.

It shares nothing with the pipeline but the row strengths (proven separately against
phevaluator and the exhaustive counts): pairs are settled with if-statements, royalties
are read straight from the ruleset's TOML-level tables.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ofcstats import evaluate
from ofcstats.cards import RANKS, TWO_OF_SPADES
from ofcstats.evaluate import Category
from ofcstats.rules.model import Ruleset

ROWS = ("top", "middle", "bottom")


@dataclass
class Seat:
    seat: int
    top: list[int]
    middle: list[int]
    bottom: list[int]
    fantasyland: bool = False
    surrendered: bool = False

    def strengths(self, wheel: bool = False) -> tuple[int, int, int]:
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


def _royalty(ruleset: Ruleset, row: str, strength: int) -> int:
    cat = Category(int(evaluate.category([strength])[0]))
    table = getattr(ruleset.royalties, row)
    if row == "top":
        rank = RANKS[int(evaluate.primary_rank([strength])[0])]
        if cat == Category.PAIR:
            return table.get(rank * 2, 0)
        if cat == Category.TRIPS:
            return table.get(rank * 3, 0)
        return 0
    return table.get(cat.name.lower(), 0)


def _natural(ruleset: Ruleset, seat: Seat, variant: str) -> int:
    if variant != "chinese-13" or not ruleset.naturals.played:
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


def score_hand(seats: list[Seat], ruleset: Ruleset, variant: str = "pineapple") -> dict[int, dict]:
    """Points and facts per seat number under one ruleset."""
    h = ruleset.head_to_head
    strengths = {s.seat: s.strengths(ruleset.wheel) for s in seats}
    # Wrongly set rows: the top over the middle, the middle over the bottom.
    wrong_rows = {s.seat: (strengths[s.seat][0] > strengths[s.seat][1])
                  + (strengths[s.seat][1] > strengths[s.seat][2]) for s in seats}
    if ruleset.misset == "not-counted":  # misses not counted: rows play as set
        wrong_rows = dict.fromkeys(wrong_rows, 0)
    fouled = {seat: wrong > 0 for seat, wrong in wrong_rows.items()}
    natural = {s.seat: _natural(ruleset, s, variant) for s in seats}
    out_of_showdown = {s.seat: s.surrendered or natural[s.seat] > 0 for s in seats}
    royalties = {
        s.seat: [0, 0, 0] if fouled[s.seat] or out_of_showdown[s.seat] else
        [_royalty(ruleset, row, strengths[s.seat][i]) for i, row in enumerate(ROWS)]
        for s in seats
    }
    spade_row = {s.seat: next((i for i, row in enumerate((s.top, s.middle, s.bottom))
                               if TWO_OF_SPADES in row), None) for s in seats}
    result = {s.seat: {"points": 0, "royalties": 0, "royalty_rows": [0, 0, 0],
                       "rows": [0, 0, 0], "wins": [0, 0, 0], "fouled": fouled[s.seat],
                       "scoops": 0, "scooped": 0}
              for s in seats}

    def beats(a: int, b: int, i: int) -> int:
        """+1 if a wins row i against b, -1 if it loses, 0 on a tie or both fouled."""
        if fouled[a] and fouled[b]:
            return 0
        if fouled[b]:
            return 1
        if fouled[a]:
            return -1
        return (strengths[a][i] > strengths[b][i]) - (strengths[a][i] < strengths[b][i])

    for a in seats:
        for b in seats:
            if a.seat == b.seat:
                continue
            me, them = a.seat, b.seat
            res = result[me]
            # Surrender: paid to every opponent that did not surrender.
            if a.surrendered and not b.surrendered:
                res["points"] -= ruleset.surrender_points
            if b.surrendered and not a.surrendered:
                res["points"] += ruleset.surrender_points
            # Naturals: paid by every opponent, netted.
            if natural[me] or natural[them]:
                res["points"] += natural[me] - natural[them]
            if out_of_showdown[me] or out_of_showdown[them]:
                continue
            signs = [beats(me, them, i) for i in range(3)]
            for i in range(3):
                res["rows"][i] += signs[i]
                res["wins"][i] += signs[i] == 1
            w, lo = signs.count(1), signs.count(-1)
            res["scoops"] += w == 3
            res["scooped"] += lo == 3
            if fouled[me] and fouled[them]:
                pass
            elif fouled[them]:
                res["points"] += ruleset.foul_points * (
                    wrong_rows[them] if ruleset.misset == "per-row" else 1)
            elif fouled[me]:
                res["points"] -= ruleset.foul_points * (
                    wrong_rows[me] if ruleset.misset == "per-row" else 1)
            else:
                res["points"] += (h.row * (w - lo) + h.majority * ((w >= 2) - (lo >= 2))
                                  + h.scoop * ((w == 3) - (lo == 3)))
            for i in range(3):
                factor = 2 if ruleset.spade_bonus and i in (spade_row[me], spade_row[them]) else 1
                res["points"] += (royalties[me][i] - royalties[them][i]) * factor
                res["royalty_rows"][i] += royalties[me][i] * factor
    if h.table_bonus:
        showing = [s.seat for s in seats if not out_of_showdown[s.seat]]
        rows_beating_table = {}
        for me in showing:
            others = [them for them in showing if them != me]
            rows_beating_table[me] = 0 if fouled[me] else sum(
                all(beats(me, them, i) == 1 for them in others) for i in range(3))
        for me in showing:
            for them in showing:
                if me != them:
                    result[me]["points"] += h.table_bonus * (
                        rows_beating_table[me] - rows_beating_table[them])
    for s in seats:
        result[s.seat]["royalties"] = sum(result[s.seat]["royalty_rows"])
        result[s.seat]["fantasyland_next"] = _fantasyland_next(
            ruleset, s, strengths[s.seat], fouled[s.seat], variant)
    return result


def _fantasyland_next(ruleset: Ruleset, seat: Seat, strengths: tuple[int, int, int],
                      fouled: bool, variant: str) -> bool:
    policy = ruleset.fantasyland
    if policy.entry is None or fouled or seat.surrendered or variant == "chinese-13":
        return False
    if not seat.fantasyland:
        return strengths[0] >= evaluate.weakest(policy.entry)
    stays = [(policy.stay_top, 0), (policy.stay_middle, 1), (policy.stay_bottom, 2)]
    return any(spec is not None and strengths[i] >= evaluate.weakest(spec) for spec, i in stays)
