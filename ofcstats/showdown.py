"""The showdown: every seat against every opponent, once, for all rulesets at once.

Scoring is pairwise (RULES.md §3), so its natural layout is one row per hand and one
column per seat. :func:`seat_table` evaluates every row once and lays the seats of
each hand side by side, grouping hands by their number of seats (2, 3 or 4), so each
pairwise comparison is one numpy operation over all hands of a group.

What a ruleset needs from the showdown is linear in its parameters: the points of
RULES.md §3 are ``row * (rows won - lost) + majority * (...) + scoop * (...)``, a foul
costs ``foul_penalty`` per live opponent, and so on. :func:`head_to_head` therefore
keeps, per seat, the ruleset-independent counts (summed over opponents) that the
formula multiplies; :func:`royalty_flows` does the same for each distinct royalty
table. Scoring thirteen rulesets then costs thirteen small dot products
(:mod:`ofcstats.score`).

A seat that surrendered, or holds a natural the ruleset pays, takes no part in the
showdown: the counts come per *natural mask* (which naturals the ruleset pays; 0 for
none), and pairs involving such a seat are left out.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from ofcstats import evaluate
from ofcstats.cards import TWO_OF_SPADES
from ofcstats.errors import HandError
from ofcstats.evaluate import Category
from ofcstats.rules.model import Naturals, RoyaltyTable
from ofcstats.variants import Variant

ROWS = ("top", "middle", "bottom")
VARIANT_CODES = {v.value: i for i, v in enumerate(Variant)}

# Natural bits (RULES.md §4, 13-card Chinese poker).
THREE_STRAIGHTS, THREE_FLUSHES, SIX_PAIRS, DRAGON = 1, 2, 4, 8

Int = npt.NDArray[np.int32]
Small = npt.NDArray[np.int16]
Bool = npt.NDArray[np.bool_]



@dataclass
class SeatTable:
    """Every seat of every hand, hands grouped by their number of seats.

    Per-seat arrays hold the seats reordered by ``order`` (positions in the input), so
    that the hands with n seats fill the contiguous block ``blocks[n]``: reshaped to
    ``(hands, n)``, each hand's seats sit side by side without any copying.
    """

    order: npt.NDArray[np.int64]
    blocks: dict[int, slice]
    strength: npt.NDArray[np.uint16]  # (3, seats): top, middle, bottom
    fouled: Bool
    surrendered: Bool
    fantasyland: Bool
    variant: npt.NDArray[np.int8]
    natural_bits: npt.NDArray[np.uint8]
    spade_row: npt.NDArray[np.int8]  # 0: no 2 of spades; 1, 2, 3: top, middle, bottom

    @property
    def seats(self) -> int:
        """How many seats the table holds."""
        return int(self.fouled.shape[0])

    @property
    def reordered(self) -> bool:
        """True when ``order`` is not the input order."""
        return len(self.blocks) > 1

    def wide(self, values: np.ndarray, n: int) -> np.ndarray:
        """The block of hands with ``n`` seats as ``(..., hands, n)``: a view, not a copy."""
        block = values[..., self.blocks[n]]
        return block.reshape(*values.shape[:-1], -1, n)


def _rows(frame: pl.DataFrame, column: str, width: int) -> npt.NDArray[np.uint8]:
    array = frame.get_column(column).to_numpy()
    return np.ascontiguousarray(array.reshape(-1, width), dtype=np.uint8)


def hand_starts(hand_ids: pl.Series) -> npt.NDArray[np.intp] | None:
    """Where each hand's seats begin, or None when some hand's seats are not adjacent."""
    change = (hand_ids.slice(1) != hand_ids.slice(0, hand_ids.len() - 1)).to_numpy()
    starts = np.flatnonzero(np.concatenate([[True], change]))
    return starts if len(starts) == hand_ids.gather(starts).n_unique() else None


def hand_layout(hand_ids: pl.Series) -> tuple[npt.NDArray[np.int64], dict[int, slice]]:
    """The seat order that groups hands by seat count, and each group's block in it.

    The seats of each hand must be adjacent in ``hand_ids``; a hand seats 2 to 4.
    """
    n_rows = hand_ids.len()
    if n_rows == 0:
        return np.zeros(0, dtype=np.int64), {}
    starts = hand_starts(hand_ids)
    if starts is None:
        raise HandError("the seats of each hand must be adjacent (sort them by hand first)")
    sizes = np.diff(np.append(starts, n_rows))
    wrong = np.flatnonzero((sizes < 2) | (sizes > 4))
    if wrong.size:
        first = hand_ids[int(starts[wrong[0]])]
        raise HandError(f"hand {first} has {int(sizes[wrong[0]])} seats; a hand seats 2 to 4")
    if (sizes == sizes[0]).all():
        return np.arange(n_rows), {int(sizes[0]): slice(0, n_rows)}
    parts, blocks, at = [], {}, 0
    for n in (2, 3, 4):
        first = starts[sizes == n]
        if first.size:
            parts.append((first[:, None] + np.arange(n)[None, :]).ravel())
            blocks[n] = slice(at, at + first.size * n)
            at += first.size * n
    return np.concatenate(parts), blocks


def _variant_codes(names: pl.Series) -> npt.NDArray[np.int8]:
    codes = np.full(names.len(), -1, dtype=np.int8)
    for name in names.unique().to_list():
        if name not in VARIANT_CODES:
            raise HandError(f"unknown variant {name!r}")
        codes[(names == name).to_numpy()] = VARIANT_CODES[name]
    return codes


def seat_table(seats: pl.DataFrame) -> SeatTable:
    """Evaluate every row once and lay the hands out (a hand's seats adjacent in input)."""
    order, blocks = hand_layout(seats.get_column("hand_id"))

    def take(array: np.ndarray) -> np.ndarray:
        return array[order] if len(blocks) > 1 else array

    top, middle, bottom = (take(_rows(seats, name, width)) for name, width in
                           (("top", 3), ("middle", 5), ("bottom", 5)))
    strength = np.stack([evaluate.strength3(top), evaluate.strength5(middle),
                         evaluate.strength5(bottom)])
    fouled = (strength[0] > strength[1]) | (strength[1] > strength[2])
    spade_row = np.zeros(len(fouled), dtype=np.int8)
    for index, row in enumerate((top, middle, bottom)):
        # Few rows hold the 2 of spades: find them through the flat array.
        spade_row[np.flatnonzero(row.ravel() == TWO_OF_SPADES) // row.shape[1]] = index + 1
    variant = take(_variant_codes(seats.get_column("variant")))
    natural_bits = np.zeros(len(fouled), dtype=np.uint8)
    chinese = np.flatnonzero(variant == VARIANT_CODES[Variant.CHINESE_13.value])
    if chinese.size:
        natural_bits[chinese] = naturals(top[chinese], middle[chinese], bottom[chinese],
                                         strength[1, chinese], strength[2, chinese])
    return SeatTable(
        order=order,
        blocks=blocks,
        strength=strength,
        fouled=fouled,
        surrendered=take(seats.get_column("surrendered").to_numpy().astype(bool)),
        fantasyland=take(seats.get_column("fantasyland").to_numpy().astype(bool)),
        variant=variant,
        natural_bits=natural_bits,
        spade_row=spade_row,
    )


def naturals(top: np.ndarray, middle: np.ndarray, bottom: np.ndarray,
             s_middle: np.ndarray, s_bottom: np.ndarray) -> npt.NDArray[np.uint8]:
    """Bits of the naturals each board holds: three straights or flushes, six pairs, dragon."""
    cat_mid, cat_bot = evaluate.category(s_middle), evaluate.category(s_bottom)
    straights = (Category.STRAIGHT, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH)
    flushes = (Category.FLUSH, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH)
    ranks = np.sort(top >> 2, axis=1).astype(np.int16)
    distinct = (ranks[:, 0] != ranks[:, 1]) & (ranks[:, 1] != ranks[:, 2])
    run = distinct & (ranks[:, 2] - ranks[:, 0] == 2)
    wheel = (ranks[:, 0] == 0) & (ranks[:, 1] == 1) & (ranks[:, 2] == 12)  # A-2-3
    suits = top & 3
    top_flush = (suits[:, 0] == suits[:, 1]) & (suits[:, 1] == suits[:, 2])
    three_straights = (run | wheel) & np.isin(cat_mid, straights) & np.isin(cat_bot, straights)
    three_flushes = top_flush & np.isin(cat_mid, flushes) & np.isin(cat_bot, flushes)
    all_ranks = np.concatenate([top, middle, bottom], axis=1) >> 2
    counts = np.stack([(all_ranks == r).sum(axis=1) for r in range(13)], axis=1)
    six_pairs = (counts // 2).sum(axis=1) >= 6
    dragon = (counts == 1).all(axis=1)
    return (three_straights * THREE_STRAIGHTS + three_flushes * THREE_FLUSHES
            + six_pairs * SIX_PAIRS + dragon * DRAGON).astype(np.uint8)


def natural_mask(rule: Naturals) -> int:
    """The natural bits a ruleset pays."""
    return ((rule.three_straights > 0) * THREE_STRAIGHTS + (rule.three_flushes > 0)
            * THREE_FLUSHES + (rule.six_pairs > 0) * SIX_PAIRS + (rule.dragon > 0) * DRAGON)


def out_of_showdown(table: SeatTable, mask: int) -> Bool:
    """Seats that surrendered or hold a natural the ruleset pays."""
    return table.surrendered | ((table.natural_bits & mask) != 0)


@dataclass
class Counts:
    """Per-seat sums over the opponents a seat shows down with (one natural mask)."""

    rows: Small  # rows won minus rows lost, live hands only
    majority: Small  # [won >= 2] - [lost >= 2]
    scoop: Small  # [won 3] - [lost 3]
    foul: Small  # opponents' fouls against live self, minus own foul against live opponents
    table_bonus: Small  # rows beating every opponent, collected from each, less those paid
    surrender: Small  # surrender payments received minus paid (all seats take part)
    row_sign: Small  # (3, seats): per row, wins minus losses (a fouled hand loses all)
    row_wins: Small  # (3, seats): per row, opponents beaten
    scoops: Small  # opponents beaten 3-0 (a fouled opponent included)
    scooped: Small



def head_to_head(table: SeatTable, mask: int) -> Counts:
    """The ruleset-independent counts every ruleset paying naturals ``mask`` needs."""
    n_seats = table.seats

    def zeros() -> Small:
        return np.zeros(n_seats, dtype=np.int16)

    counts = Counts(rows=zeros(), majority=zeros(), scoop=zeros(), foul=zeros(),
                    table_bonus=zeros(), surrender=zeros(),
                    row_sign=np.zeros((3, n_seats), dtype=np.int16),
                    row_wins=np.zeros((3, n_seats), dtype=np.int16), scoops=zeros(),
                    scooped=zeros())
    out = out_of_showdown(table, mask)
    strength = table.strength.astype(np.int16)
    opponents_all = zeros()
    for n in table.blocks:
        s = table.wide(strength, n)  # (3, hands, n)
        live = table.wide(~table.fouled, n)
        showing = table.wide(~out, n)
        surr = table.wide(table.surrendered, n).astype(np.int8)
        rows, majority, scoop, foul = (table.wide(a, n) for a in (
            counts.rows, counts.majority, counts.scoop, counts.foul))
        scoops, scooped, surrender = (table.wide(a, n) for a in (
            counts.scoops, counts.scooped, counts.surrender))
        opponents = table.wide(opponents_all, n)
        signs = table.wide(counts.row_sign, n)
        row_wins = table.wide(counts.row_wins, n)
        beats_table = np.broadcast_to(showing & live, (3, *showing.shape)).copy()
        for a, b in itertools.combinations(range(n), 2):
            both_show = showing[:, a] & showing[:, b]
            both_live = live[:, a] & live[:, b]
            # Row signs: live against live compares; a live hand wins every row against
            # a fouled one; two fouled hands exchange nothing (RULES.md §2).
            fallback = live[:, a].astype(np.int8) - live[:, b]
            row = np.where(both_live, np.sign(s[:, :, a] - s[:, :, b]).astype(np.int8),
                           fallback) * both_show
            won_rows, lost_rows = row > 0, row < 0
            w = won_rows[0].astype(np.int8) + won_rows[1] + won_rows[2]
            lost = lost_rows[0].astype(np.int8) + lost_rows[1] + lost_rows[2]
            for target, value in (
                (rows, (w - lost) * both_live),
                (majority, ((w >= 2).astype(np.int8) - (lost >= 2)) * both_live),
                (scoop, ((w == 3).astype(np.int8) - (lost == 3)) * both_live),
                (foul, fallback * both_show),
            ):
                target[:, a] += value
                target[:, b] -= value
            scoops[:, a] += w == 3
            scoops[:, b] += lost == 3
            scooped[:, a] += lost == 3
            scooped[:, b] += w == 3
            signs[:, :, a] += row
            signs[:, :, b] -= row
            row_wins[:, :, a] += won_rows
            row_wins[:, :, b] += lost_rows
            opponents[:, a] += both_show
            opponents[:, b] += both_show
            beats_table[:, :, a] &= ~both_show | won_rows
            beats_table[:, :, b] &= ~both_show | lost_rows
            # A surrendered seat pays every opponent that did not surrender (§5).
            give = surr[:, a] - surr[:, b]
            surrender[:, a] -= give
            surrender[:, b] += give
        # Table bonus: each row beating every showdown opponent is collected from each of
        # them; in turn a seat pays each showdown opponent's such rows.
        beating = (beats_table[0].astype(np.int16) + beats_table[1] + beats_table[2]) \
            * (opponents > 0)
        paid = np.zeros_like(beating)
        for a, b in itertools.permutations(range(n), 2):
            paid[:, a] += beating[:, b] * (showing[:, a] & showing[:, b])
        table.wide(counts.table_bonus, n)[...] = beating * opponents - paid
    return counts


@dataclass
class RoyaltyFlows:
    """Per seat, royalties collected from all showdown opponents (per row), and the net."""

    collected: npt.NDArray[np.int16]  # (3, seats)
    net: npt.NDArray[np.int16]  # collected minus paid, all rows
    own: npt.NDArray[np.int16]  # (3, seats): each seat's own royalties (0 when fouled)



def _hand_total(wide: np.ndarray) -> np.ndarray:
    """Sum over a hand's seats (the last axis), by adding columns: numpy reduces tiny
    trailing axes slowly."""
    total = wide[..., 0].copy()
    for j in range(1, wide.shape[-1]):
        total += wide[..., j]
    return total[..., None]


def royalty_flows(table: SeatTable, royalties: RoyaltyTable, spade_bonus: bool,
                  mask: int, plain: RoyaltyFlows | None = None) -> RoyaltyFlows:
    """Royalties netted pairwise (RULES.md §4); the 2♠ row of either seat counts double.

    ``plain``, the same table's flows without the spade bonus, saves redoing them: the
    bonus only adds a second exchange of the 2♠ row.
    """
    if plain is None:
        plain = _plain_flows(table, royalties, mask)
    if not spade_bonus:
        return plain
    own, collected, net = plain.own, plain.collected.copy(), plain.net.copy()
    showing = ~out_of_showdown(table, mask)
    for n in table.blocks:
        show = table.wide(showing, n)
        mine = table.wide(own, n)  # (3, hands, n)
        got = table.wide(collected, n)
        balance = table.wide(net, n)
        spade = table.wide(table.spade_row, n)
        for a, b in itertools.combinations(range(n), 2):
            pair = show[:, a] & show[:, b]
            for r in range(3):
                # The pair exchanges the 2-of-spades row a second time.
                twice = pair & ((spade[:, a] == r + 1) | (spade[:, b] == r + 1))
                got[r, :, a] += mine[r, :, a] * twice
                got[r, :, b] += mine[r, :, b] * twice
                flow = (mine[r, :, a] - mine[r, :, b]) * twice
                balance[:, a] += flow
                balance[:, b] -= flow
    return RoyaltyFlows(collected=collected, net=net, own=own)


def _plain_flows(table: SeatTable, royalties: RoyaltyTable, mask: int) -> RoyaltyFlows:
    values = royalties.values()
    showing = ~out_of_showdown(table, mask)
    own = np.stack([np.take(values[r], table.strength[r], mode="clip") for r in range(3)])
    own *= ~table.fouled & showing  # a fouled hand has no royalties
    own_total = own[0] + own[1] + own[2]
    collected = np.empty((3, table.seats), dtype=np.int16)
    net = np.empty(table.seats, dtype=np.int16)
    for n in table.blocks:
        show = table.wide(showing, n).astype(np.int16)
        opponents = (_hand_total(show) - show) * show
        mine = table.wide(own, n)  # (3, hands, n)
        total = table.wide(own_total, n)
        # Every showdown pair exchanges R(a) - R(b): a seat collects its royalties from
        # each showdown opponent and pays each of theirs (non-showing seats have none).
        np.multiply(mine, opponents, out=table.wide(collected, n))
        balance = table.wide(net, n)
        np.multiply(total, opponents, out=balance)
        balance -= (_hand_total(total) - total) * show
    return RoyaltyFlows(collected=collected, net=net, own=own)


def natural_values(table: SeatTable, rule: Naturals) -> Int:
    """What each seat's best natural is worth under a ruleset (0: none)."""
    bits = table.natural_bits
    value = np.zeros(table.seats, dtype=np.int32)
    if not bits.any():
        return value
    for flag, worth in ((THREE_STRAIGHTS, rule.three_straights),
                        (THREE_FLUSHES, rule.three_flushes), (SIX_PAIRS, rule.six_pairs),
                        (DRAGON, rule.dragon)):
        value = np.maximum(value, np.where((bits & flag) != 0, worth, 0))
    return value


def natural_points(table: SeatTable, rule: Naturals) -> Int:
    """Naturals are paid by every opponent at once; two naturals net (RULES.md §4)."""
    value = natural_values(table, rule)
    points = np.zeros(table.seats, dtype=np.int32)
    if not value.any():
        return points
    for n in table.blocks:
        mine = table.wide(value, n)
        table.wide(points, n)[...] = n * mine - mine.sum(axis=1, keepdims=True)
    return points
