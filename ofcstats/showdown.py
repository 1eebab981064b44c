"""The showdown: every seat against every opponent, once, for all rulesets at once.

Scoring is pairwise (docs/rules.md §3), so its natural layout is one row per hand and one
column per seat. :func:`seat_table` evaluates every row once and lays the seats of
each hand side by side, grouping hands by their number of seats (2, 3 or 4), so each
pairwise comparison is one numpy operation over all hands of a group.

What a ruleset needs from the showdown is linear in its parameters: the points of
docs/rules.md §3 are ``row * (rows won - lost) + majority * (...) + scoop * (...)``, a foul
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

import dataclasses
import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from ofcstats import evaluate
from ofcstats.cards import TWO_OF_SPADES
from ofcstats.errors import HandError
from ofcstats.evaluate import Category
from ofcstats.records import hand_starts
from ofcstats.rows import ROWS
from ofcstats.rules import board
from ofcstats.rules.model import Naturals, RoyaltyPool, RoyaltyTable, Ruleset
from ofcstats.variants import Variant

VARIANT_CODES = {v.value: i for i, v in enumerate(Variant)}

# Natural bits (docs/rules.md §4, 13-card Chinese poker).
THREE_STRAIGHTS, THREE_FLUSHES, SIX_PAIRS, DRAGON = 1, 2, 4, 8
# A showdown key is the natural bits a ruleset pays plus the bits of the rules that
# change who wins a row or who is out of order; rulesets sharing a key share a showdown.
# A seat's showdown bits say which of these can change its showdown: the naturals it
# holds, MISSES_NOT_COUNTED when it is fouled, WHEEL when it holds a plain straight.
MISSES_NOT_COUNTED = 16
WHEEL = 32
LOW_MIDDLE = 64  # the middle plays as a deuce-to-seven low: every seat's showdown changes
# Criss-cross boards meet only the opponent's matching board (ofcstats.criss_cross): every
# criss-cross seat's showdown changes; no other seat's.
CRISS_CROSS_MATCHING = 128

Int = npt.NDArray[np.int32]
Small = npt.NDArray[np.int16]
Tiny = npt.NDArray[np.int8]
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
    misset_rows: Tiny  # rows set above the row below them (top over middle, middle over
    # bottom): 0 for a hand in order
    seat: Tiny  # the seat number (the odd points of a shared royalty pool go by it)

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

    def for_key(self, key: int) -> SeatTable:
        """The table a showdown key plays: straights in the wheel order, and with misses
        not counted nobody fouled; with the middle played low, its deuce-to-seven worth
        in the middle's place (and only the top and the bottom in order)."""
        table = self
        if key & (WHEEL | LOW_MIDDLE):
            strength = table.strength.copy()
            if key & WHEEL:
                strength[1:] = evaluate.wheel_order()[strength[1:]]
            if key & LOW_MIDDLE:
                strength[1] = evaluate.low_order()[self.strength[1]]
            fouled, misset_rows = board.missets(strength, bool(key & LOW_MIDDLE))
            table = dataclasses.replace(table, strength=strength, fouled=fouled,
                                        misset_rows=misset_rows)
        if key & MISSES_NOT_COUNTED:
            table = dataclasses.replace(table, fouled=np.zeros_like(table.fouled),
                                        misset_rows=np.zeros_like(table.misset_rows))
        return table

    def showdown_bits(self, keys: int) -> npt.NDArray[np.uint8]:
        """Per seat, the bits of ``keys`` (showdown keys or-ed together) that may change
        its showdown: the naturals it holds, a foul, a 5-card straight (see WHEEL)."""
        bits = self.natural_bits & np.uint8(keys)
        if keys & LOW_MIDDLE:  # every middle is compared otherwise
            bits = bits | np.uint8(LOW_MIDDLE)
        if keys & MISSES_NOT_COUNTED:
            bits = bits | (self.fouled.view(np.uint8) * np.uint8(MISSES_NOT_COUNTED))
        if keys & WHEEL:  # only plain straights change places (straight flushes do not)
            straight = (evaluate.category(self.strength[1]) == Category.STRAIGHT) \
                | (evaluate.category(self.strength[2]) == Category.STRAIGHT)
            bits = bits | (straight.view(np.uint8) * np.uint8(WHEEL))
        return bits

    def hands_with(self, flagged: Bool) -> tuple[SeatTable, npt.NDArray[np.intp]]:
        """The table of only the hands where some seat is ``flagged``, and where its seats
        sit in this table."""
        parts, blocks, at = [], {}, 0
        for n, block in self.blocks.items():
            hands = np.flatnonzero(self.wide(flagged, n).any(axis=1))
            if hands.size:
                parts.append((block.start + hands[:, None] * n + np.arange(n)).ravel())
                blocks[n] = slice(at, at + hands.size * n)
                at += hands.size * n
        where = np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)
        per_seat = {f.name: np.take(getattr(self, f.name), where, axis=-1)
                    for f in dataclasses.fields(self) if f.name != "blocks"}
        return SeatTable(blocks=blocks, **per_seat), where


def _rows(frame: pl.DataFrame, column: str, width: int) -> npt.NDArray[np.uint8]:
    array = frame.get_column(column).to_numpy()
    return np.ascontiguousarray(array.reshape(-1, width), dtype=np.uint8)


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
    if names.len() > 1 and names.null_count() == 0 and (names == names[0]).all():
        # One variant throughout, the usual case: look it up once.
        return np.full(names.len(), _variant_codes(names.head(1))[0], dtype=np.int8)
    codes = np.full(names.len(), -1, dtype=np.int8)
    for name in names.unique().to_list():
        if name not in VARIANT_CODES:
            raise HandError(f"unknown variant {name!r}")
        codes[(names == name).to_numpy()] = VARIANT_CODES[name]
    return codes


def seat_table(seats: pl.DataFrame) -> SeatTable:
    """Evaluate every row once and lay the hands out (a hand's seats adjacent in input)."""
    order, blocks = hand_layout(seats.get_column("hand_id"))
    # Everything is computed in input order; only the per-seat results are then put in
    # the table's order (cheaper than moving the rows of cards).
    top, middle, bottom = (_rows(seats, row, row.size) for row in ROWS)
    strength = np.stack([evaluate.strength3(top), evaluate.strength5(middle),
                         evaluate.strength5(bottom)])
    spade_row = np.zeros(len(top), dtype=np.int8)
    for index, row in enumerate((top, middle, bottom)):
        # Few rows hold the 2 of spades: find them through the flat array.
        spade_row[np.flatnonzero(row.ravel() == TWO_OF_SPADES) // row.shape[1]] = index + 1
    variant = _variant_codes(seats.get_column("variant"))
    natural_bits = np.zeros(len(top), dtype=np.uint8)
    chinese = np.flatnonzero(variant == VARIANT_CODES[Variant.CHINESE_13.value])
    if chinese.size:
        natural_bits[chinese] = naturals(top[chinese], middle[chinese], bottom[chinese],
                                         strength[1, chinese], strength[2, chinese])
    surrendered = seats.get_column("surrendered").to_numpy().astype(bool)
    fantasyland = seats.get_column("fantasyland").to_numpy().astype(bool)
    seat = seats.get_column("seat").to_numpy().astype(np.int8)
    if len(blocks) > 1:
        strength = np.take(strength, order, axis=1)  # C-ordered, unlike strength[:, order]
        spade_row, variant, natural_bits = spade_row[order], variant[order], natural_bits[order]
        surrendered, fantasyland, seat = surrendered[order], fantasyland[order], seat[order]
    fouled, misset_rows = board.missets(strength)
    return SeatTable(
        order=order,
        blocks=blocks,
        strength=strength,
        fouled=fouled,
        misset_rows=misset_rows,
        surrendered=surrendered,
        fantasyland=fantasyland,
        variant=variant,
        natural_bits=natural_bits,
        spade_row=spade_row,
        seat=seat,
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
    # How many cards of each rank each board holds: one count over (board, rank) slots.
    all_ranks = np.concatenate([top, middle, bottom], axis=1) >> 2
    slots = all_ranks + 13 * np.arange(len(top), dtype=np.intp)[:, None]
    counts = np.bincount(slots.ravel(), minlength=13 * len(top)).reshape(-1, 13)
    six_pairs = (counts // 2).sum(axis=1) >= 6
    dragon = (counts == 1).all(axis=1)
    return (three_straights * THREE_STRAIGHTS + three_flushes * THREE_FLUSHES
            + six_pairs * SIX_PAIRS + dragon * DRAGON).astype(np.uint8)


def natural_mask(rule: Naturals) -> int:
    """The natural bits a ruleset pays."""
    return ((rule.three_straights > 0) * THREE_STRAIGHTS + (rule.three_flushes > 0)
            * THREE_FLUSHES + (rule.six_pairs > 0) * SIX_PAIRS + (rule.dragon > 0) * DRAGON)


def showdown_key(ruleset: Ruleset) -> int:
    """Which showdown a ruleset plays: the naturals it pays, whether misses count, the
    order of straights, the middle played low, and which criss-cross boards meet."""
    return (natural_mask(ruleset.naturals)
            | (MISSES_NOT_COUNTED if ruleset.misset == "not-counted" else 0)
            | (WHEEL if ruleset.wheel else 0)
            | (LOW_MIDDLE if ruleset.low_middle else 0)
            | (CRISS_CROSS_MATCHING if ruleset.criss_cross == "matching" else 0))


def differs(showdown_bits: npt.NDArray[np.uint8], key: int) -> Bool:
    """Seats whose hand may show down otherwise under ``key`` than under key 0 (by their
    :attr:`SeatTable.showdown_bits`)."""
    return (showdown_bits & key) != 0


def out_of_showdown(table: SeatTable, mask: int) -> Bool:
    """Seats that surrendered or hold a natural the ruleset pays."""
    return table.surrendered | ((table.natural_bits & mask) != 0)


@dataclass
class Counts:
    """Per-seat sums over the opponents a seat shows down with (one natural mask)."""

    rows: Tiny  # rows won minus rows lost, live hands only
    majority: Tiny  # [won >= 2] - [lost >= 2]
    scoop: Tiny  # [won 3] - [lost 3]
    foul: Tiny  # opponents' fouls against live self, minus own foul against live opponents
    table_bonus: Tiny  # rows beating every opponent, collected from each, less those paid
    table_rows: Tiny  # rows beating every showdown opponent (0: fouled, out, or alone)
    surrender: Tiny  # surrender payments received minus paid (all seats take part)
    row_sign: Tiny  # (3, seats): per row, wins minus losses (a fouled hand loses all)
    row_wins: Tiny  # (3, seats): per row, opponents beaten
    scoops: Tiny  # opponents beaten 3-0 (a fouled opponent included)
    scooped: Tiny

    @functools.cached_property
    def terms(self) -> tuple[Small, Small, Small, Small, Small, Small]:
        """rows, majority, scoop, foul, table_bonus and surrender in int16, the type the
        points formula computes in (numpy is several times slower on mixed types)."""
        return tuple(a.astype(np.int16) for a in (  # type: ignore[return-value]
            self.rows, self.majority, self.scoop, self.foul, self.table_bonus, self.surrender))


# What one pair's showdown adds to each seat's counts depends only on the pair's code:
# the three row comparisons, which of the two fouled, and whether both show down (216
# codes). head_to_head looks the additions up instead of recomputing them per hand.
# They come packed one count per byte, so that one uint64 addition updates eight counts;
# each byte holds its value plus _BIAS (values lie in -3..3), so a seat's sum over at
# most three opponents stays within 0..255 and never carries into the next byte.
_PAIR_FIELDS = ("rows", "majority", "scoop", "foul", "scoops", "scooped", "opponents",
                *(f"{count}_{row}" for count in ("sign", "wins", "clear") for row in ROWS))
_BIAS = 8
_PAIR_CODES = 216


_TERMS = ("rows", "majority", "scoop", "foul")  # the settlement terms, as board.TERMS


@functools.cache
def _settlement_terms() -> tuple[dict[str, npt.NDArray[np.int32]], ...]:
    """Per side of the pair, each settlement term by pair code: the points
    :func:`ofcstats.rules.board.pair_points` gives a pair with this code under
    coefficients paying that term alone (points are linear in the terms)."""
    code = np.arange(_PAIR_CODES)
    digits = np.stack([code % 3, code // 3 % 3, code // 9 % 3])  # row by row, a - b + 1
    level = np.ones_like(digits)
    foul_a, foul_b = (code // 27 & 1) == 0, (code // 54 & 1) == 0
    both_show = code // 108
    return tuple({term: board.pair_points(unit, mine, theirs, my_foul, their_foul) * both_show
                  for term, unit in zip(_TERMS, board.TERMS, strict=True)}
                 for mine, theirs, my_foul, their_foul in ((digits, level, foul_a, foul_b),
                                                           (level, digits, foul_b, foul_a)))


def _pair_additions(code: int) -> tuple[dict[str, int], dict[str, int]]:
    """What a pair with this code adds to the first seat's counts and to the second's:
    the settlement terms (:func:`_settlement_terms`), and the facts the results report."""
    digits, flags = (code % 3, code // 3 % 3, code // 9 % 3), code // 27
    live_a, live_b, both_show = flags & 1, flags >> 1 & 1, flags >> 2
    both_live = live_a & live_b
    # In the results a live hand wins every row against a fouled one; two fouled hands
    # win none (docs/rules.md §2). Seats not both showing: nothing.
    fallback = live_a - live_b
    signs = [(d - 1 if both_live else fallback) * both_show for d in digits]
    won, lost = sum(x > 0 for x in signs), sum(x < 0 for x in signs)
    terms = _settlement_terms()
    first = {term: int(terms[0][term][code]) for term in _TERMS} | {
        "scoops": int(won == 3), "scooped": int(lost == 3), "opponents": both_show}
    second = {term: int(terms[1][term][code]) for term in _TERMS} | {
        "scoops": int(lost == 3), "scooped": int(won == 3), "opponents": both_show}
    for row, sign in zip(ROWS, signs, strict=True):
        # "clear": this opponent does not stop the row from beating the whole table.
        first |= {f"sign_{row}": sign, f"wins_{row}": int(sign > 0),
                  f"clear_{row}": int(not both_show or sign > 0)}
        second |= {f"sign_{row}": -sign, f"wins_{row}": int(sign < 0),
                   f"clear_{row}": int(not both_show or sign < 0)}
    return first, second


@functools.cache
def _pair_tables() -> tuple[tuple[npt.NDArray[np.uint64], ...], ...]:
    """Per side of the pair (first, second), per word: the packed additions by code."""
    packed = np.zeros((2, _PAIR_CODES, len(_PAIR_FIELDS)), dtype=np.uint8)
    for code in range(_PAIR_CODES):
        for side, additions in enumerate(_pair_additions(code)):
            packed[side, code] = [additions[f] + _BIAS for f in _PAIR_FIELDS]
    words = packed.view(np.uint64)  # (2, codes, 2), in the byte order unpacking reads
    return tuple(tuple(np.ascontiguousarray(words[side, :, w]) for w in range(2))
                 for side in range(2))


def _pair_codes(s: np.ndarray, live: Bool, showing: Bool, a: int, b: int
                ) -> npt.NDArray[np.uint8]:
    """Each hand's code for the pair of seats ``a`` and ``b`` (see _pair_additions)."""
    ahead = s[:, :, a] > s[:, :, b]
    level = s[:, :, a] >= s[:, :, b]
    digit = ahead.view(np.uint8) + level.view(np.uint8)  # sign of a - b, plus one
    code = digit[0] + 3 * digit[1]
    code += 9 * digit[2]
    code += 27 * live[:, a].view(np.uint8)
    code += 54 * live[:, b].view(np.uint8)
    code += 108 * (showing[:, a] & showing[:, b]).view(np.uint8)
    return code


def head_to_head(table: SeatTable, mask: int, without: Counts | None = None) -> Counts:
    """The ruleset-independent counts every ruleset paying naturals ``mask`` needs.

    ``without``, the counts under mask 0, saves most of the work: they differ only in
    the hands where some seat holds a natural the mask pays, so only those are redone.
    """
    if mask and without is not None:
        return _redone_for_naturals(table, mask, without)
    table = table.for_key(mask)
    n_seats = table.seats
    row_sign, row_wins = np.empty((2, 3, n_seats), dtype=np.int8)
    fields = {name: np.empty(n_seats, dtype=np.int8) for name in _PAIR_FIELDS
              if not name.startswith("clear_")}
    for index, row in enumerate(ROWS):
        fields[f"sign_{row}"], fields[f"wins_{row}"] = row_sign[index], row_wins[index]
    showing = ~out_of_showdown(table, mask)
    live = ~table.fouled
    packed = np.zeros((2, n_seats), dtype=np.uint64)
    lookup = _pair_tables()
    as_bytes = packed.view(np.uint8).reshape(2, n_seats, 8)
    table_bonus, table_rows = np.empty((2, n_seats), dtype=np.int8)
    for n in table.blocks:
        s = table.wide(table.strength, n)  # (3, hands, n)
        show, alive = table.wide(showing, n), table.wide(live, n)
        words = table.wide(packed, n)  # (2, hands, n)
        for a, b in itertools.combinations(range(n), 2):
            # take() gathers several times faster with native-width indices.
            code = _pair_codes(s, alive, show, a, b).astype(np.intp)
            for w in range(2):
                words[w, :, a] += lookup[0][w].take(code)
                words[w, :, b] += lookup[1][w].take(code)
        block = table.blocks[n]
        raw = {name: as_bytes[index // 8, block, index % 8]
               for index, name in enumerate(_PAIR_FIELDS)}
        for name in fields:
            # Each seat met n - 1 opponents, each adding _BIAS; the wrap to int8 is exact.
            np.subtract(raw[name], _BIAS * (n - 1), out=fields[name][block], casting="unsafe")
        table.wide(table_rows, n)[...] = _table_rows(
            raw, table.wide(fields["opponents"], n), show, alive)
        table.wide(table_bonus, n)[...] = _table_bonus(
            table.wide(table_rows, n), table.wide(fields["opponents"], n), show)
    return Counts(
        rows=fields["rows"], majority=fields["majority"], scoop=fields["scoop"],
        foul=fields["foul"], table_bonus=table_bonus, table_rows=table_rows,
        surrender=_surrender(table),
        row_sign=row_sign, row_wins=row_wins,
        scoops=fields["scoops"], scooped=fields["scooped"])


def _redone_for_naturals(table: SeatTable, mask: int, without: Counts) -> Counts:
    """``without`` (the counts under mask 0) with the hands where some seat holds a
    natural ``mask`` pays counted again."""
    part, where = table.hands_with(differs(table.showdown_bits(mask), mask))
    if not where.size:
        return without
    redone = head_to_head(part, mask)
    fields = {}
    for field in dataclasses.fields(Counts):
        fields[field.name] = getattr(without, field.name).copy()
        fields[field.name][..., where] = getattr(redone, field.name)
    return Counts(**fields)


def _table_rows(raw: dict[str, np.ndarray], opponents: np.ndarray, show: Bool,
                alive: Bool) -> np.ndarray:
    """A block's seats' rows, ``(hands, n)``, that beat every showdown opponent (no
    opponent stopped them); none for a seat out of the showdown, fouled, or without a
    showdown opponent. ``raw``: the block's biased pair sums by field."""
    n = opponents.shape[1]
    everyone = (_BIAS + 1) * (n - 1)
    beating = np.zeros(opponents.shape, dtype=np.int8)
    for row in ROWS:
        beating += raw[f"clear_{row}"].reshape(-1, n) == everyone
    beating *= show & alive & (opponents > 0)
    return beating


def _table_bonus(beating: np.ndarray, opponents: np.ndarray, show: Bool) -> np.ndarray:
    """The table bonus count of a block's seats, ``(hands, n)``: each row beating the
    whole table (``beating``) is collected from each showdown opponent; in turn a seat
    pays each showdown opponent's such rows."""
    paid = _others(beating) * show
    return beating * opponents - paid


def _surrender(table: SeatTable) -> Tiny:
    """A surrendered seat pays every opponent that did not surrender (docs/rules.md §5)."""
    surrender = np.zeros(table.seats, dtype=np.int8)
    if table.surrendered.any():
        for n in table.blocks:
            gave = table.wide(table.surrendered, n).astype(np.int8)
            table.wide(surrender, n)[...] = _hand_total(gave) - n * gave
    return surrender


def foul_rows(table: SeatTable, mask: int) -> Small:
    """The count a per-row misset penalty multiplies (``misset = "per-row"``): a live seat
    collects each fouled showdown opponent's wrongly set rows, a fouled seat pays its own
    to each live showdown opponent; two fouled seats exchange nothing."""
    table = table.for_key(mask)
    counted = np.zeros(table.seats, dtype=np.int16)
    if not table.fouled.any():
        return counted
    showing = ~out_of_showdown(table, mask)
    for n in table.blocks:
        show = table.wide(showing, n).astype(np.int16)
        alive = table.wide(~table.fouled, n).astype(np.int16) * show
        wrong = table.wide(table.misset_rows, n).astype(np.int16) * show
        table.wide(counted, n)[...] = alive * _others(wrong) - wrong * _others(alive)
    return counted


@dataclass
class RoyaltyFlows:
    """Per seat, royalties collected from all showdown opponents (per row), and the net."""

    collected: npt.NDArray[np.int16]  # (3, seats)
    collected_total: npt.NDArray[np.int16]  # the three rows together
    net: npt.NDArray[np.int16]  # collected minus paid, all rows
    own: npt.NDArray[np.int16]  # (3, seats): each seat's own royalties (0 when fouled)


def _hand_total(wide: np.ndarray) -> np.ndarray:
    """Sum over a hand's seats (the last axis), by adding columns: numpy reduces tiny
    trailing axes slowly."""
    total = wide[..., 0].copy()
    for j in range(1, wide.shape[-1]):
        total += wide[..., j]
    return total[..., None]


def _others(wide: np.ndarray) -> np.ndarray:
    """For each seat, the sum over the other seats of its hand (the last axis), column by
    column: numpy broadcasts over a tiny trailing axis several times more slowly."""
    total = _hand_total(wide)[..., 0]
    others = np.empty_like(wide)
    for j in range(wide.shape[-1]):
        np.subtract(total, wide[..., j], out=others[..., j])
    return others


def royalty_flows(table: SeatTable, tables: Sequence[RoyaltyTable], mask: int
                  ) -> list[RoyaltyFlows]:
    """Royalties netted pairwise (docs/rules.md §4), for several royalty tables at once.

    Every showdown pair exchanges R(a) - R(b): a seat collects its royalties from each
    showdown opponent and pays each of theirs; a fouled seat, or one out of the showdown,
    has none. The 2♠ bonus is :func:`with_spade_bonus`, over these flows.
    """
    # Everything the tables share is computed once, as int16 (numpy is slow on mixed types).
    table = table.for_key(mask)
    showing = ~out_of_showdown(table, mask)
    show = showing.astype(np.int16)
    opponents = np.empty(table.seats, dtype=np.int16)
    for n in table.blocks:
        wide = table.wide(show, n)
        table.wide(opponents, n)[...] = _others(wide) * wide
    # A seat collects only where it shows down and is not fouled.
    values = [t.values() for t in tables]
    if mask & LOW_MIDDLE:  # a low middle earns no royalty
        values = [(top, np.zeros(evaluate.low_order().max() + 1, dtype=np.int16), bottom)
                  for top, _, bottom in values]
    owned = board.royalties(values, table.strength, showing & ~table.fouled)
    flows = []
    for own in owned:
        total = own[0] + own[1]
        total += own[2]
        # A showing seat's net: the sum over its showing opponents of total - theirs.
        net = total * opponents
        for n in table.blocks:
            table.wide(net, n)[...] -= _others(table.wide(total, n)) * table.wide(show, n)
        flows.append(RoyaltyFlows(collected=own * opponents, collected_total=total * opponents,
                                  net=net, own=own))
    return flows


def with_spade_bonus(table: SeatTable, plain: RoyaltyFlows, mask: int) -> RoyaltyFlows:
    """The flows with the 2♠ bonus: the row holding the 2♠ is exchanged a second time
    between its seat and each showdown opponent (docs/rules.md §4)."""
    own, collected, net = plain.own, plain.collected.copy(), plain.net.copy()
    table = table.for_key(mask)
    showing = ~out_of_showdown(table, mask)
    for n in table.blocks:
        show = table.wide(showing, n)
        mine = table.wide(own, n)  # (3, hands, n)
        got = table.wide(collected, n)
        balance = table.wide(net, n)
        # holds[r]: 1 where the seat's row r holds the 2♠ (int16, like the royalties).
        holds = table.wide(np.stack([(table.spade_row == r + 1).astype(np.int16)
                                     for r in range(3)]), n)
        for a, b in itertools.combinations(range(n), 2):
            pair = (show[:, a] & show[:, b]).astype(np.int16)
            for r in range(3):
                # The pair exchanges the 2-of-spades row a second time.
                twice = np.maximum(holds[r, :, a], holds[r, :, b])
                twice *= pair
                extra_a, extra_b = mine[r, :, a] * twice, mine[r, :, b] * twice
                got[r, :, a] += extra_a
                got[r, :, b] += extra_b
                flow = extra_a - extra_b
                balance[:, a] += flow
                balance[:, b] -= flow
    return RoyaltyFlows(collected=collected, collected_total=collected[0] + collected[1]
                        + collected[2], net=net, own=own)


def pool_points(table: SeatTable, pool: RoyaltyPool, mask: int) -> Int:
    """The royalty pool (docs/rules.md §4), per seat: stake paid in, share taken out.

    Every showdown seat of a hand with a royalty hand (:func:`board.pool_hand`) pays
    ``stake``; ``best`` gives the pool to the best royalty hand, ``share`` to every royalty
    hand, in equal parts (points that do not divide go one each to the takers with the
    lowest seat numbers); ``each`` has every royalty hand take one stake from each other
    showdown seat. A seat out of the showdown, or fouled, takes no part or no share.
    """
    table = table.for_key(mask)
    showing = ~out_of_showdown(table, mask)
    hand = board.pool_hand(table.strength, showing & ~table.fouled, bool(mask & LOW_MIDDLE))
    points = np.zeros(table.seats, dtype=np.int32)
    for n in table.blocks:
        best, show = table.wide(hand, n), table.wide(showing, n).astype(np.int32)
        players = show.sum(axis=1, keepdims=True)
        if pool.split == "each":
            held = (best > 0).astype(np.int32)
            table.wide(points, n)[...] = pool.stake * show * (
                held * players - held.sum(axis=1, keepdims=True))
            continue
        takes = best > 0
        if pool.split == "best":
            takes &= best == best.max(axis=1, keepdims=True)
        takers = takes.sum(axis=1, keepdims=True)
        pot = pool.stake * players * (takers > 0)
        part, odd = np.divmod(pot, np.maximum(takers, 1))
        seat = table.wide(table.seat, n)
        # Each taker's place among the takers of its hand, by seat number.
        place = sum((takes[:, [j]] & (seat[:, [j]] < seat)).astype(np.int32) for j in range(n))
        table.wide(points, n)[...] = takes * (part + (place < odd)) \
            - pool.stake * show * (takers > 0)
    return points


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
    """Naturals are paid by every opponent at once; two naturals net (docs/rules.md §4)."""
    value = natural_values(table, rule)
    points = np.zeros(table.seats, dtype=np.int32)
    if not value.any():
        return points
    for n in table.blocks:
        mine = table.wide(value, n)
        table.wide(points, n)[...] = n * mine - mine.sum(axis=1, keepdims=True)
    return points
