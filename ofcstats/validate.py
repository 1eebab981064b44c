"""Checking parsed hands against docs/format.md, column-wise: a :class:`RawBatch` in, a
:class:`HandBatch` of valid hands and reasoned rejects out.

A hand is valid when it has 2 to 4 seats (3 in Pineapple), every seat ends with
3/5/5 placed cards, no card appears twice anywhere in the hand, each street places
exactly its dealt cards less the discards, and the street sizes fit the variant
(fantasyland seats: one street of 13 to 17 cards, 13 placed). A fouled hand is valid:
fouls are data, not errors.

Checking runs in two passes. :func:`suspects` tests every rule with a few numpy
passes over integer arrays and marks the hands that may break one; only those go to
:func:`explain`, which finds the rules they break and words the reasons, naming the
seat and street at fault, e.g. ``Qs appears twice (seat 1 street 3, seat 2 street 1)``.
A hand that :func:`explain` finds nothing wrong with is valid.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from ofcstats.cards import RANKS, SUITS
from ofcstats.compiled import buffer, cached, inputs
from ofcstats.records import (
    BOTTOM,
    DEALT,
    DISCARD,
    HANDS_SCHEMA,
    KIND_NAMES,
    MOVES_SCHEMA,
    NOT_A_CARD,
    REJECTS_SCHEMA,
    SEATS_SCHEMA,
    TOP,
    UPDATABLE,
    HandBatch,
    RawBatch,
    encode_moves,
    exclusive_cumsum,
    session_default,
)
from ofcstats.rows import ROW_NAMES
from ofcstats.stakes import POINT_VALUE, UNIT, Range
from ofcstats.variants import FANTASYLAND_MAX_CARDS, MIN_PLAYERS, Variant

ROWS = ROW_NAMES
ROW_SIZES = {"top": 3, "middle": 5, "bottom": 5}
MAX_SEAT = 99
_VARIANTS = list(Variant)
_VARIANT_NAMES = [v.value for v in _VARIANTS]
_MAX_PLAYERS = np.array([v.max_players for v in _VARIANTS], dtype=np.int64)
_PLAN_LEN = np.array([len(v.streets) for v in _VARIANTS], dtype=np.int64)
_MAX_STREETS = int(_PLAN_LEN.max())
_PLAN_DEALT = np.array([[s.dealt for s in v.streets] + [0] * (_MAX_STREETS - len(v.streets))
                        for v in _VARIANTS], dtype=np.int64)
_PLAN_DISCARD = np.array([[s.discard for s in v.streets]
                          + [0] * (_MAX_STREETS - len(v.streets)) for v in _VARIANTS],
                         dtype=np.int64)
_THIRTEEN = np.array([v.thirteen_card for v in _VARIANTS])
_CRISS_CROSS = _VARIANTS.index(Variant.CRISS_CROSS)
_THIRTEEN_NAMES = [v.value for v in _VARIANTS if v.thirteen_card]
_CRISS_SEATS = 2 * Variant.CRISS_CROSS.boards_per_player  # two players, two boards each
_CARD_NAMES = [RANKS[c >> 2] + SUITS[c & 3] for c in range(52)]
_TIMES = {1: "", 2: "twice", 3: "three times", 4: "four times"}


def validate(raw: RawBatch, con: duckdb.DuckDBPyConnection, *,
             explain_all: bool = False, compiled: bool | None = None) -> HandBatch:
    """Split a parsed batch into valid hands and rejects, with a reason for each reject.

    A hand id repeated within the batch keeps its first hand: an exact repeat is
    counted in ``duplicates``, a different hand under the same id is rejected.
    ``explain_all`` sends every hand through the slow, wording pass (for tests).
    ``compiled``: use the compiled twin of the fast pass (:mod:`ofcstats._validate_kernel`);
    by default, when the batch came through the compiled reader (a large load: the
    compiler is loaded already).
    """
    n = raw.hands.height
    index = Index.of(raw)
    index.compiled = raw.compiled if compiled is None else compiled
    suspect = np.ones(n, dtype=bool) if explain_all else suspects(raw, index)
    reasons = explain(_subset(raw, suspect)) if suspect.any() else \
        pl.DataFrame(schema={"hand": pl.Int64, "reason": pl.String})
    valid = np.ones(n, dtype=bool)
    valid[reasons.get_column("hand").to_numpy()] = False
    batch = build(raw, valid, con, index)
    if reasons.height or batch.rejects.height:  # (joins over every hand: only when needed)
        rejected = raw.hands.join(reasons, on="hand").select(
            "line", "n_lines", "hand_id",
            pl.when(pl.col("hand_id").is_not_null() & (pl.col("hand_id") != ""))
            .then(pl.format("hand {}: {}", pl.col("hand_id"), pl.col("reason")))
            .otherwise(pl.col("reason")).alias("reason"),
        )
        conflicts = batch.rejects.join(raw.hands.select("line", "n_lines"), on="line").select(
            "line", "n_lines", "hand_id", "reason")
        found = _with_raw(raw, pl.concat([rejected, conflicts])).cast(REJECTS_SCHEMA)  # type: ignore[arg-type]
        batch.rejects = pl.concat([raw.rejects, found]).sort("line", maintain_order=True)
    else:
        batch.rejects = raw.rejects.sort("line", maintain_order=True) \
            if raw.rejects.height else raw.rejects
    batch.lines = (raw.lines,)
    return batch


def _with_raw(raw: RawBatch, rejected: pl.DataFrame) -> pl.DataFrame:
    """Rejects with the hand's text from its file (only rejects pay for decoding)."""
    texts = []
    for line, n_lines in rejected.select("line", "n_lines").iter_rows():
        first = line - raw.lines.first_line
        texts.append("\n".join(raw.lines.texts(list(range(first, first + n_lines)))))
    return rejected.select(
        pl.lit(raw.source).alias("source"), "line", "hand_id", "reason",
        pl.Series("raw", texts, dtype=pl.String))


# The fast pass: every rule as integer arithmetic over the whole batch.

def _np(frame: pl.DataFrame, name: str, fill: float | bool = 0) -> np.ndarray:
    column = frame.get_column(name)
    if column.null_count():
        column = column.fill_null(fill)
    return column.to_numpy()


@dataclass
class Index:
    """The batch as integer arrays: per seat row, per card row, per street row."""

    n: int
    variant: np.ndarray  # per hand: index into Variant, -1 when unknown
    s_hand: np.ndarray
    s_seat: np.ndarray  # -1 when missing
    s_fl: np.ndarray
    s_streets: np.ndarray
    n_streets: np.ndarray
    per_hand: np.ndarray  # seats per hand
    c_hand: np.ndarray
    c_seat: np.ndarray  # the card's seat row
    c_street: np.ndarray
    c_kind: np.ndarray
    c_pos: np.ndarray
    c_code: np.ndarray  # NOT_A_CARD where the text is not a card
    street_start: np.ndarray  # per seat row: its first street row
    played: pl.Series | None = None  # played_at of every hand as a time, once parsed
    compiled: bool = False  # the card rules and the frames by the compiled twin

    @cached_property
    def on_street(self) -> np.ndarray:
        return self.c_street > 0

    @cached_property
    def form_ok(self) -> np.ndarray:
        """A street card of a seat with streets, or a row card of one without."""
        return self.on_street == self.s_streets[self.c_seat]

    @cached_property
    def c_t(self) -> np.ndarray:
        """Per card: its street row (-1 for final-row cards)."""
        return np.where(self.on_street, self.street_start[self.c_seat] + self.c_street - 1, -1)

    @cached_property
    def kind_at(self) -> np.ndarray:
        """The first card row of each kind, and the end (cards come by kind)."""
        return np.searchsorted(self.c_kind, np.arange(len(KIND_NAMES) + 1))

    def of_kind(self, kind: int) -> slice:
        """The card rows of one kind."""
        return slice(int(self.kind_at[kind]), int(self.kind_at[kind + 1]))

    @staticmethod
    def of(raw: RawBatch) -> Index:
        """Index a raw batch (no copies where Polars can lend its buffers)."""
        hands, seats, cards = raw.hands, raw.seats, raw.cards
        n = hands.height
        variant = hands.get_column("variant").replace_strict(
            _VARIANT_NAMES, list(range(len(_VARIANTS))), default=-1, return_dtype=pl.Int64,
        ).to_numpy()
        s_hand = _np(seats, "hand")
        s_streets = _np(seats, "has_streets", fill=False)
        n_streets = _np(seats, "n_streets")
        per_hand = np.bincount(s_hand, minlength=n)
        c_hand = _np(cards, "hand")
        # Each card's seat row: its hand's first seat row, plus its seat index less one
        # (two passes over the cards, in place).
        c_seat = (exclusive_cumsum(per_hand) - 1).astype(np.int32)[c_hand]
        c_seat += _np(cards, "seat_index")
        return Index(
            n=n, variant=variant, s_hand=s_hand, s_seat=_np(seats, "seat", -1),
            s_fl=_np(seats, "fantasyland", fill=False), s_streets=s_streets,
            n_streets=n_streets, per_hand=per_hand, c_hand=c_hand, c_seat=c_seat,
            c_street=_np(cards, "street"), c_kind=_np(cards, "kind"), c_pos=_np(cards, "pos"),
            c_code=_np(cards, "code", NOT_A_CARD), street_start=exclusive_cumsum(n_streets),
        )


def suspects(raw: RawBatch, index: Index | None = None) -> np.ndarray:
    """A boolean per hand: it may break a rule (it certainly does not when false)."""
    ix = index or Index.of(raw)
    bad = raw.hands.get_column("error").is_not_null().to_numpy().copy()
    bad |= ix.variant < 0
    played = raw.hands.get_column("played_at")
    if played.null_count() < ix.n:
        ix.played = _played_at(played)
        bad |= (played.is_not_null() & ix.played.is_null()).to_numpy()
    bad |= ~_in_range(raw.hands.get_column("point_value"), POINT_VALUE)
    s_bad = _seat_suspects(raw, ix, bad)
    if ix.compiled:
        card_bad, street_bad = _compiled_card_rules(ix)
        bad |= card_bad
        s_bad |= street_bad
    else:
        s_bad |= _street_suspects(ix)
        bad |= _card_suspects(ix)
        for kind, want in ((TOP, 3), (TOP + 1, 5), (BOTTOM, 5)):
            in_row = ix.of_kind(kind)
            s_bad |= np.bincount(ix.c_seat[in_row][ix.form_ok[in_row]],
                                 minlength=len(ix.s_hand)) != want
    bad |= np.bincount(ix.s_hand[s_bad], minlength=ix.n) > 0
    return bad


def _in_range(values: pl.Series, stake: Range) -> np.ndarray:
    """Per row, whether the value is missing (its default is in range) or in ``stake``'s
    range (a NaN is not)."""
    if values.null_count() == len(values):
        return np.ones(len(values), dtype=bool)
    v = values.to_numpy()
    return values.is_null().to_numpy() | ((v >= stake.low) & (v <= stake.high))


def _out_of_range(column: str, stake: Range) -> pl.Expr:
    """The rows whose ``column`` is given and outside ``stake``'s range."""
    return pl.col(column).is_not_null() & ~pl.col(column).is_between(stake.low, stake.high)


def _seat_suspects(raw: RawBatch, ix: Index, bad: np.ndarray) -> np.ndarray:
    """Seats: count, numbers, names, button, flags; marks bad hands in place and
    returns the bad seat rows."""
    seats = raw.seats
    v = np.maximum(ix.variant, 0)
    s_rows = _np(seats, "has_rows", fill=False)
    s_bad = seats.get_column("error").is_not_null().to_numpy() \
        | (ix.s_seat < 0) | (ix.s_seat > MAX_SEAT) | (ix.s_streets & s_rows) \
        | (ix.s_fl & _THIRTEEN[v[ix.s_hand]]) \
        | (_np(seats, "surrendered", fill=False) & ~_THIRTEEN[v[ix.s_hand]])
    s_bad |= ~_in_range(seats.get_column("unit"), UNIT)
    s_bad |= ix.s_streets & np.where(ix.s_fl, ix.n_streets != 1,
                                     ix.n_streets != _PLAN_LEN[v[ix.s_hand]])
    bad |= (ix.per_hand < MIN_PLAYERS) | (ix.per_hand > _MAX_PLAYERS[v])
    bad |= _repeats(ix.s_hand, ix.s_seat, ix.n)
    names = seats.get_column("player").fill_null("").hash().to_numpy()
    crossed = v == _CRISS_CROSS
    bad |= _repeats(ix.s_hand, names, ix.n) & ~crossed
    if crossed.any():
        bad |= crossed & ((ix.per_hand != _CRISS_SEATS) | ~_twice_each(ix.s_hand, names, ix.n))
    button = raw.hands.get_column("button")
    if button.null_count() < ix.n:
        b = button.fill_null(-1).to_numpy()
        seated = np.bincount(ix.s_hand, weights=(ix.s_seat == b[ix.s_hand]), minlength=ix.n)
        bad |= ((b >= 0) & (seated == 0)) | (button.is_not_null().to_numpy() & (b < 0))
    return s_bad


def _street_suspects(ix: Index) -> np.ndarray:
    """Street sizes per variant and fantasyland; returns the bad seat rows."""
    n_seat_rows = len(ix.s_hand)
    n_street_rows = int(ix.n_streets.sum())
    t = ix.c_t[ix.on_street]
    t_kind = ix.c_kind[ix.on_street]
    n_dealt = np.bincount(t[t_kind == DEALT], minlength=n_street_rows)
    n_discard = np.bincount(t[t_kind == DISCARD], minlength=n_street_rows)
    n_used = np.bincount(t, minlength=n_street_rows) - n_dealt
    t_seat = np.repeat(np.arange(n_seat_rows), ix.n_streets)
    t_no = np.arange(n_street_rows) - ix.street_start[t_seat]
    t_v = np.maximum(ix.variant, 0)[ix.s_hand[t_seat]]
    t_fl = ix.s_fl[t_seat]
    in_plan = t_no < _PLAN_LEN[t_v]
    j = np.minimum(t_no, _MAX_STREETS - 1)
    t_bad = n_used != n_dealt
    t_bad |= ~t_fl & in_plan & ((n_dealt != _PLAN_DEALT[t_v, j])
                                | (n_discard != _PLAN_DISCARD[t_v, j]))
    t_bad |= t_fl & ((n_dealt < 13) | (n_dealt > FANTASYLAND_MAX_CARDS)
                     | (n_discard != n_dealt - 13))
    return np.bincount(t_seat[t_bad], minlength=n_seat_rows) > 0


def _card_suspects(ix: Index) -> np.ndarray:
    """Card texts, and each card once per hand: the dealt cards and the final rows given
    without streets are what a hand holds; each placed or discarded card must be dealt
    on its own street. Returns the bad hands."""
    n = ix.n
    bad_card = ix.c_code == NOT_A_CARD
    bad = np.bincount(ix.c_hand[bad_card], minlength=n) > 0
    key = ix.c_hand * 52 + np.where(bad_card, 0, ix.c_code)
    dealt = ix.on_street & (ix.c_kind == DEALT)
    holds = dealt | (~ix.on_street & ix.form_ok)
    bad |= _counted_twice(key[holds], ix.c_hand[holds], n)
    owner = np.full(n * 52, -1, dtype=np.int64)
    owner[key[dealt]] = ix.c_t[dealt]
    used = ix.on_street & (ix.c_kind != DEALT)
    bad |= _counted_twice(key[used], ix.c_hand[used], n)
    bad |= np.bincount(ix.c_hand[used][owner[key[used]] != ix.c_t[used]], minlength=n) > 0
    # A list position out of step would break the placement order: trust none.
    bad |= np.bincount(ix.c_hand[ix.c_pos < 0], minlength=n) > 0
    return bad


def _compiled_card_rules(ix: Index) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_card_suspects`, :func:`_street_suspects` and the row sizes, compiled: (bad
    hands, bad seat rows)."""
    from ofcstats import _validate_kernel as kernel  # noqa: PLC0415 (numba: when needed)

    return kernel.card_rules(  # type: ignore[call-arg]  # (numba's stub takes one argument)
        ix.n, *_ints(ix.s_hand), *_flags(ix.s_streets, ix.s_fl), *_ints(
            ix.n_streets, ix.street_start, np.maximum(ix.variant, 0)[ix.s_hand]),
        *_card_ints(ix.c_hand, ix.c_seat, ix.c_street), *_bytes(ix.c_kind),
        *_card_ints(ix.c_pos), *_bytes(ix.c_code),
        *_ints(_PLAN_LEN, _PLAN_DEALT, _PLAN_DISCARD), FANTASYLAND_MAX_CARDS)


def _ints(*arrays: np.ndarray) -> list[np.ndarray]:
    """Arrays as the compiled steps take them (one type each, so one compilation)."""
    return inputs(np.int64, *arrays)


def _card_ints(*arrays: np.ndarray) -> list[np.ndarray]:
    """The cards frame's whole numbers (:data:`~ofcstats.records.RAW_CARDS_SCHEMA`) as
    the compiled steps take them."""
    return inputs(np.int32, *arrays)


def _flags(*arrays: np.ndarray) -> list[np.ndarray]:
    return inputs(np.bool_, *arrays)


def _bytes(*arrays: np.ndarray) -> list[np.ndarray]:
    return inputs(np.uint8, *arrays)


def _repeats(group: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per group (hand), whether any value occurs twice in it."""
    if len(group) and (group[1:] >= group[:-1]).all():
        # Rows in group order (a hand's seats together, as every reader gives them):
        # each row against the few before it, no sort.
        most = int(np.bincount(group).max())
        if most <= _FEW:
            twice = np.zeros(len(group), dtype=bool)
            for k in range(1, most):
                twice[k:] |= (group[k:] == group[:-k]) & (values[k:] == values[:-k])
            return np.bincount(group[twice], minlength=n) > 0
    order = np.lexsort((values, group))
    g, val = group[order], values[order]
    same = (g[1:] == g[:-1]) & (val[1:] == val[:-1])
    return np.bincount(g[1:][same], minlength=n) > 0


_FEW = 8  # seats of a hand that :func:`_repeats` compares pairwise (more: it sorts)


def _twice_each(group: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per group (hand), whether every value in it occurs exactly twice."""
    _, inverse, counts = np.unique(np.stack([group, values.astype(np.int64, copy=False)
                                             .view(np.int64)]), axis=1,
                                   return_inverse=True, return_counts=True)
    odd = counts[inverse.ravel()] != 2
    return np.bincount(group[odd], minlength=n) == 0


def _counted_twice(keys: np.ndarray, hands: np.ndarray, n: int) -> np.ndarray:
    if not len(keys):
        return np.zeros(n, dtype=bool)
    counts = np.bincount(keys, minlength=n * 52)
    return np.bincount(hands[counts[keys] > 1], minlength=n) > 0


def _played_at(text: pl.Series) -> pl.Series:
    """Times of play (ISO 8601) as UTC times; null where not a time. Read first as the
    shape apps write (three times quicker than working the shape out), then, should any
    differ, as Polars works out the shape from the first."""
    usual = text.str.to_datetime(_USUAL_TIME, time_zone="UTC", strict=False, time_unit="us")
    if usual.null_count() == text.null_count():
        return usual
    return text.str.to_datetime(time_zone="UTC", strict=False, time_unit="us")


_USUAL_TIME = "%Y-%m-%dT%H:%M:%SZ"


# The slow pass: the rules again, as joins, worded for people.

def _subset(raw: RawBatch, keep: np.ndarray) -> RawBatch:
    """The hands where ``keep``, with their original ``hand`` numbers."""
    ids = pl.Series("hand", np.flatnonzero(keep), dtype=pl.Int64)
    return RawBatch(
        source=raw.source, lines=raw.lines,
        hands=raw.hands.filter(pl.col("hand").is_in(ids.implode())),
        seats=raw.seats.filter(pl.col("hand").is_in(ids.implode())),
        cards=raw.cards.filter(pl.col("hand").is_in(ids.implode())),
    )


def _seat_label() -> pl.Expr:
    return pl.when(pl.col("seat").is_not_null()).then(pl.format("seat {}", pl.col("seat"))) \
        .otherwise(pl.format("player {} of the list", pl.col("seat_index")))


def _card_name(code: pl.Expr) -> pl.Expr:
    return code.cast(pl.Int64).replace_strict(list(range(52)), _CARD_NAMES,
                                              return_dtype=pl.String)


def _kind_name(kind: pl.Expr) -> pl.Expr:
    return kind.cast(pl.Int64).replace_strict(list(range(len(KIND_NAMES))), list(KIND_NAMES),
                                              return_dtype=pl.String)


def _problems(frame: pl.DataFrame, message: pl.Expr, rank: int) -> pl.DataFrame:
    return frame.select(pl.col("hand"), pl.lit(rank).alias("rank"),
                        message.cast(pl.String).alias("message"))


def _plans() -> pl.DataFrame:
    """Expected streets per variant for a seat not in fantasyland."""
    rows = [
        {"variant": v.value, "street": i + 1, "want_dealt": s.dealt, "want_discard": s.discard,
         "want_streets": len(v.streets)}
        for v in Variant for i, s in enumerate(v.streets)
    ]
    return pl.DataFrame(rows, schema={"variant": pl.String, "street": pl.Int64,
                                      "want_dealt": pl.Int64, "want_discard": pl.Int64,
                                      "want_streets": pl.Int64})


def explain(raw: RawBatch) -> pl.DataFrame:
    """Every broken rule of every hand in ``raw``, worded: one row per rejected hand
    (``hand``, ``reason``); hands breaking no rule are absent."""
    hands, seats, cards = _labelled(raw)
    problems: list[pl.DataFrame] = []
    add = problems.append
    _check_hand(hands, seats, add)
    _check_seats(hands, seats, add)
    _check_card_texts(cards, add)
    known = cards.filter(pl.col("code").is_not_null())
    street_cards = known.filter(pl.col("street") > 0)
    _check_streets(street_cards, cards.filter(pl.col("street") > 0), seats, add)
    _check_final_rows(cards, seats, add)
    _check_no_card_twice(street_cards, known, add)
    # Reasons in a fixed order (by rule, then alphabetically), whichever pass found them.
    found = pl.concat(problems).unique().sort("hand", "rank", "message")
    return found.group_by("hand", maintain_order=True).agg(
        reason=pl.col("message").str.join("; "))


Add = Callable[[pl.DataFrame], None]
"""Where a check puts the problems it finds (``hand``, ``rank``, ``message``)."""


def _labelled(raw: RawBatch) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The batch's hands, seats and cards, each with what the reasons name: a seat's
    label and its hand's variant; a card's seat, fantasyland flag and kind."""
    hands = raw.hands.with_columns(
        variant_ok=pl.col("variant").is_in(_VARIANT_NAMES),
    )
    seats = raw.seats.join(hands.select("hand", "variant"), on="hand", how="left").with_columns(
        label=_seat_label()
    )
    cards = raw.cards.with_columns(
        pl.col("hand", "seat_index").cast(pl.Int64),
    ).join(
        seats.select("hand", "seat_index", "seat", "label", "variant", "fantasyland",
                     "has_streets"),
        on=["hand", "seat_index"], how="left",
    ).with_columns(kind_name=_kind_name(pl.col("kind")))
    return hands, seats, cards


def _check_hand(hands: pl.DataFrame, seats: pl.DataFrame, add: Add) -> None:
    """The hand as a whole: what the parser found, its variant and time; a seat's own
    parse error."""
    add(_problems(hands.filter(pl.col("error").is_not_null()), pl.col("error"), 0))
    add(_problems(
        hands.filter(pl.col("variant").is_not_null() & ~pl.col("variant_ok")),
        pl.format("unknown variant '{}': use one of {}", pl.col("variant"),
                  pl.lit(", ".join(_VARIANT_NAMES))), 1))
    add(_problems(
        hands.filter(pl.col("played_at").is_not_null()
                     & _played_at(hands.get_column("played_at")).is_null()),
        pl.format("played_at '{}' is not an ISO 8601 time such as 2026-11-29T18:03:11Z",
                  pl.col("played_at")), 1))
    add(_problems(
        hands.filter(_out_of_range("point_value", POINT_VALUE)),
        pl.format("point_value = {}: {} (money per point)", pl.col("point_value"),
                  pl.lit(POINT_VALUE.rule)), 1))
    add(_problems(seats.filter(pl.col("error").is_not_null()),
                  pl.format("{}: {}", pl.col("label"), pl.col("error")), 2))


def _check_seats(hands: pl.DataFrame, seats: pl.DataFrame, add: Add) -> None:
    """Seats: how many, numbered once each, named once each, the button among them, and
    the options of the variant (fantasyland, surrender)."""
    max_players = pl.col("variant").replace_strict(
        _VARIANT_NAMES, [v.max_players for v in _VARIANTS], default=4, return_dtype=pl.Int64)
    counts = seats.group_by("hand").agg(n=pl.len(), variant=pl.col("variant").first())
    add(_problems(
        counts.filter((pl.col("n") < MIN_PLAYERS) | (pl.col("n") > max_players)),
        pl.format("{} seats {} to {} players, this hand has {}", pl.col("variant"),
                  pl.lit(MIN_PLAYERS), max_players, pl.col("n")), 3))
    add(_problems(
        counts.filter((pl.col("variant") == Variant.CRISS_CROSS.value)
                      & pl.col("n").is_between(MIN_PLAYERS, _CRISS_SEATS - 1)),
        pl.format("criss-cross has {} seats, two boards for each of its two players (the "
                  "player's name on both); this hand has {}", pl.lit(_CRISS_SEATS),
                  pl.col("n")), 3))
    no_players = hands.join(counts, on="hand", how="anti").filter(pl.col("error").is_null())
    add(_problems(no_players, pl.lit("players is an empty list"), 3))
    add(_problems(
        seats.filter((pl.col("seat") < 0) | (pl.col("seat") > MAX_SEAT)),
        pl.format("seat {} is out of range: seats are numbered 0 to {}", pl.col("seat"),
                  pl.lit(MAX_SEAT)), 4))
    doubled_seats = seats.filter(pl.col("seat").is_not_null()).group_by("hand", "seat").agg(
        n=pl.len()).filter(pl.col("n") > 1)
    add(_problems(doubled_seats, pl.format("seat {} appears {} times", pl.col("seat"),
                                           pl.col("n")), 4))
    named = seats.filter(pl.col("player").fill_null("") != "").group_by(
        "hand", "player").agg(
        where=pl.col("seat").sort().cast(pl.String).str.join(" and "), n=pl.len(),
        variant=pl.col("variant").first())
    crossed = pl.col("variant") == Variant.CRISS_CROSS.value
    add(_problems(named.filter(~crossed & (pl.col("n") > 1)), pl.format(
        "player {} sits in seats {}", pl.col("player"), pl.col("where")), 4))
    add(_problems(
        counts.filter(crossed & (pl.col("n") == _CRISS_SEATS)).join(
            named.filter(crossed & (pl.col("n") != 2)).group_by("hand").agg(
                pl.format("{} in {} {}", pl.col("player"),
                          pl.when(pl.col("n") == 1).then(pl.lit("seat"))
                          .otherwise(pl.lit("seats")), pl.col("where")).sort()
                .str.join("; ").alias("found")), on="hand"),
        pl.format("criss-cross seats each of its two players on two seats, one for each "
                  "board; this hand has {}", pl.col("found")), 4))
    add(_problems(
        seats.filter(_out_of_range("unit", UNIT)),
        pl.format("{}: unit = {}: {}: a player's unit is what a point is worth to the "
                  "player, in point values (default 1)", pl.col("label"), pl.col("unit"),
                  pl.lit(UNIT.rule)), 5))
    seat_lists = seats.group_by("hand").agg(pl.col("seat"))
    button = hands.filter(pl.col("button").is_not_null()).join(seat_lists, on="hand")
    add(_problems(
        button.filter(~pl.col("seat").list.contains(pl.col("button"))),
        pl.format("button is seat {}, which is not at the table", pl.col("button")), 5))
    add(_problems(
        seats.filter(pl.col("fantasyland") & pl.col("variant").is_in(_THIRTEEN_NAMES)),
        pl.format("{}: fantasyland is not part of {}", pl.col("label"), pl.col("variant")), 5))
    add(_problems(
        seats.filter(pl.col("surrendered") & pl.col("variant").is_in(_VARIANT_NAMES)
                     & ~pl.col("variant").is_in(_THIRTEEN_NAMES)),
        pl.format("{}: surrender is a chinese-13 option, not part of {}: an open-face hand "
                  "is played out (drop \"surrendered\")", pl.col("label"),
                  pl.col("variant")), 5))


def _check_card_texts(cards: pl.DataFrame, add: Add) -> None:
    """Every card text names a card."""
    add(_problems(cards.filter(pl.col("code").is_null()), pl.format(
        "{}{}: '{}' is not a card (a rank 2-9, T, J, Q, K, A and a suit s, h, d, c)",
        pl.col("label"), _where(), pl.col("text")), 6))


def _check_no_card_twice(street_cards: pl.DataFrame, cards: pl.DataFrame, add: Add) -> None:
    """No card twice in a hand: dealt to two seats, dealt twice, or written twice."""
    occurrences = pl.concat([
        street_cards.filter(pl.col("kind") == DEALT),
        cards.filter((pl.col("street") == 0) & ~pl.col("has_streets")),
    ]).with_columns(place=pl.format("{}{}", pl.col("label"), _where()))
    doubled = occurrences.group_by("hand", "code").agg(
        n=pl.len(), places=pl.col("place").sort().str.join(", "))
    add(_problems(doubled.filter(pl.col("n") > 1), pl.format(
        "{} appears {} ({})", _card_name(pl.col("code")),
        pl.col("n").replace_strict(list(_TIMES), list(_TIMES.values()), default="many times",
                                   return_dtype=pl.String),
        pl.col("places")), 10))


def _where() -> pl.Expr:
    return pl.when(pl.col("street") > 0).then(pl.format(" street {}", pl.col("street"))) \
        .otherwise(pl.format(" {}", pl.col("kind_name")))


def _check_streets(street_cards: pl.DataFrame, every_card: pl.DataFrame, seats: pl.DataFrame,
                   append: Callable[[pl.DataFrame], None]) -> None:
    """Street sizes against the variant (a text that is no card still counts), and each
    street's dealt cards all accounted for."""
    per_street = _per_street(every_card, seats)
    _check_street_sizes(per_street, seats, append)
    _check_fantasyland_street(per_street, seats, append)
    _check_accounting(street_cards, append)


def _per_street(every_card: pl.DataFrame, seats: pl.DataFrame) -> pl.DataFrame:
    """Cards dealt and discarded on each street of each seat, streets with no cards at
    all included."""
    per_street = every_card.group_by("hand", "seat_index", "street").agg(
        dealt=(pl.col("kind") == DEALT).sum(),
        discard=(pl.col("kind") == DISCARD).sum(),
    )
    # Streets with no cards at all still count as streets of their seat.
    all_streets = seats.filter(pl.col("n_streets") > 0).select(
        "hand", "seat_index", "label", "variant", "fantasyland",
        street=pl.int_ranges(1, pl.col("n_streets") + 1)).explode("street")
    return all_streets.join(per_street, on=["hand", "seat_index", "street"],
                            how="left").with_columns(pl.col("dealt", "discard").fill_null(0))


def _check_street_sizes(per_street: pl.DataFrame, seats: pl.DataFrame,
                        append: Callable[[pl.DataFrame], None]) -> None:
    """Outside fantasyland: the variant's number of streets, and its cards dealt and
    discarded on each."""
    regular = seats.filter(pl.col("has_streets")).filter(
        ~pl.col("fantasyland") & pl.col("variant").is_in(_VARIANT_NAMES))
    plans = _plans()
    want = plans.group_by("variant").agg(want_streets=pl.col("want_streets").first())
    wrong_count = regular.join(want, on="variant").filter(
        pl.col("n_streets") != pl.col("want_streets"))
    append(_problems(wrong_count, pl.format(
        "{} has {} streets; {} deals {}", pl.col("label"), pl.col("n_streets"),
        pl.col("variant"), pl.col("want_streets")), 7))
    sized = per_street.filter(~pl.col("fantasyland")).join(
        plans, on=["variant", "street"], how="inner")
    append(_problems(sized.filter(pl.col("dealt") != pl.col("want_dealt")), pl.format(
        "{} street {}: {} cards dealt; {} deals {} on that street", pl.col("label"),
        pl.col("street"), pl.col("dealt"), pl.col("variant"), pl.col("want_dealt")), 7))
    append(_problems(
        sized.filter((pl.col("dealt") == pl.col("want_dealt"))
                     & (pl.col("discard") != pl.col("want_discard"))),
        pl.format("{} street {}: {} discarded; {} discards {} on that street", pl.col("label"),
                  pl.col("street"), pl.col("discard"), pl.col("variant"),
                  pl.col("want_discard")), 7))


def _check_fantasyland_street(per_street: pl.DataFrame, seats: pl.DataFrame,
                              append: Callable[[pl.DataFrame], None]) -> None:
    """In fantasyland: one street, 13 cards or more dealt, all but 13 discarded."""
    fantasy = seats.filter(pl.col("has_streets") & pl.col("fantasyland"))
    append(_problems(fantasy.filter(pl.col("n_streets") != 1), pl.format(
        "{} plays fantasyland, so sets all its cards on one street; the log has {}",
        pl.col("label"), pl.col("n_streets")), 7))
    fl_street = per_street.filter(pl.col("fantasyland") & (pl.col("street") == 1))
    append(_problems(
        fl_street.filter((pl.col("dealt") < 13) | (pl.col("dealt") > FANTASYLAND_MAX_CARDS)),
        pl.format("{} plays fantasyland with {} cards dealt; fantasyland deals 13 to {}",
                  pl.col("label"), pl.col("dealt"), pl.lit(FANTASYLAND_MAX_CARDS)), 7))
    append(_problems(
        fl_street.filter(pl.col("dealt").is_between(13, FANTASYLAND_MAX_CARDS)
                         & (pl.col("discard") != pl.col("dealt") - 13)),
        pl.format("{} plays fantasyland with {} cards: it places 13 and discards {}, "
                  "the log discards {}", pl.col("label"), pl.col("dealt"),
                  pl.col("dealt") - 13, pl.col("discard")), 7))


def _check_accounting(street_cards: pl.DataFrame,
                      append: Callable[[pl.DataFrame], None]) -> None:
    """Each street's dealt cards, each placed or discarded exactly once."""
    tally = street_cards.group_by("hand", "seat_index", "street", "code").agg(
        dealt=(pl.col("kind") == DEALT).sum(),
        used=(pl.col("kind") != DEALT).sum(),
        kinds=pl.col("kind_name").filter(pl.col("kind") != DEALT).str.join(" and "),
        label=pl.col("label").first(),
    ).filter(pl.col("dealt") != pl.col("used"))
    where = pl.format("{} street {}: {}", pl.col("label"), pl.col("street"),
                      _card_name(pl.col("code")))
    append(_problems(tally.filter(pl.col("dealt") == 0), pl.format(
        "{} is put in {} but was not dealt on that street", where, pl.col("kinds")), 8))
    append(_problems(tally.filter(pl.col("used") == 0), pl.format(
        "{} was dealt but neither placed nor discarded", where), 8))
    append(_problems(
        tally.filter((pl.col("dealt") > 0) & (pl.col("used") > 0)),
        pl.format("{} is dealt {} times and put down {} times ({})", where, pl.col("dealt"),
                  pl.col("used"), pl.col("kinds")), 8))


def _check_final_rows(cards: pl.DataFrame, seats: pl.DataFrame,
                      append: Callable[[pl.DataFrame], None]) -> None:
    """Each seat's final rows (from its streets, else as given) hold 3/5/5 cards, and
    rows given beside streets agree with them."""
    rows = cards.filter(pl.col("kind").is_between(TOP, BOTTOM))
    placed = rows.filter(pl.col("street") > 0).group_by("hand", "seat_index", "kind").agg(
        codes=pl.col("code"))
    given = rows.filter(pl.col("street") == 0).group_by("hand", "seat_index", "kind").agg(
        given=pl.col("code"))
    base = seats.select("hand", "seat_index", "label", "has_streets").join(
        pl.DataFrame({"kind": [TOP, TOP + 1, BOTTOM], "want": [3, 5, 5]},
                     schema={"kind": pl.UInt8, "want": pl.Int64}), how="cross")
    final = base.join(placed, on=["hand", "seat_index", "kind"], how="left").join(
        given, on=["hand", "seat_index", "kind"], how="left",
    ).with_columns(
        codes=pl.when(pl.col("has_streets")).then(pl.col("codes")).otherwise(pl.col("given")),
        kind_name=_kind_name(pl.col("kind")),
    ).with_columns(n=pl.col("codes").list.len().fill_null(0))
    append(_problems(final.filter(pl.col("n") != pl.col("want")), pl.format(
        "{} ends with {} {} in the {} row, not {}", pl.col("label"), pl.col("n"),
        pl.when(pl.col("n") == 1).then(pl.lit("card")).otherwise(pl.lit("cards")),
        pl.col("kind_name"), pl.col("want")), 9))
    names = pl.col("codes").list.eval(_card_name(pl.element())).list.join(" ")
    given_names = pl.col("given").list.eval(_card_name(pl.element())).list.join(" ")
    disagree = final.filter(
        pl.col("has_streets") & pl.col("given").is_not_null()
        & ~pl.col("given").list.contains(None, nulls_equal=True)
        & ~pl.col("codes").list.contains(None, nulls_equal=True).fill_null(False)
        & (pl.col("given").list.sort() != pl.col("codes").list.sort()).fill_null(True)
    ).with_columns(placed=names.fill_null(""), given=given_names)
    append(_problems(disagree, pl.format(
        "{}: the final {} row given ({}) is not what its streets placed ({})", pl.col("label"),
        pl.col("kind_name"), pl.col("given"), pl.col("placed")), 9))


# Building the canonical frames of the valid hands, with numpy scatters, no sorting.

def build(raw: RawBatch, valid: np.ndarray, con: duckdb.DuckDBPyConnection,
          index: Index | None = None) -> HandBatch:
    """The canonical frames of the hands where ``valid`` (all their rules checked)."""
    ix = index or Index.of(raw)
    hands, seats = raw.hands, raw.seats
    s_valid = valid[ix.s_hand]
    seat_new = np.cumsum(s_valid) - 1
    hand_new = np.cumsum(valid) - 1
    # Per card, whether its seat is valid (None: all are, the usual case).
    card_ok = None if s_valid.all() else s_valid[ix.c_seat]
    if ix.compiled:
        rows, dealt, moves = _compiled_columns(ix, s_valid, seat_new, hand_new,
                                               _np(seats, "seat"))
    else:
        rows = _final_rows(ix, card_ok, seat_new, int(s_valid.sum()))
        dealt_cards = ix.of_kind(DEALT)
        dealt = np.where(ix.s_streets, np.bincount(
            ix.c_seat[dealt_cards][ix.on_street[dealt_cards]], minlength=len(s_valid)), 13)
        moves = _moves(ix, card_ok, hand_new, _np(seats, "seat"))

    every = bool(valid.all())  # (the usual case) nothing to filter
    good_hands = hands if every else hands.filter(pl.Series(valid))
    good_seats = (seats if card_ok is None else seats.filter(pl.Series(s_valid))).with_columns(
        hand=pl.Series(hand_new[ix.s_hand[s_valid]], dtype=pl.UInt32),
        dealt=pl.Series(dealt[s_valid], dtype=pl.Int8),
        top=pl.Series(rows["top"], dtype=pl.Array(pl.UInt8, 3)),
        middle=pl.Series(rows["middle"], dtype=pl.Array(pl.UInt8, 5)),
        bottom=pl.Series(rows["bottom"], dtype=pl.Array(pl.UInt8, 5)),
    )
    good_seats = good_seats.with_columns(
        hand_id=good_hands.get_column("hand_id").gather(good_seats.get_column("hand")))
    out_hands = good_hands.select(
        "hand_id",
        pl.col("session_id").fill_null(session_default(raw.source)),
        (ix.played if every and ix.played is not None else
         _played_at(good_hands.get_column("played_at"))).alias("played_at"),
        "variant", "ruleset", "point_value", "button",
        pl.Series("n_seats", ix.per_hand[valid]),
        "extra",
        pl.lit(raw.source).alias("source"),
        "line",
        _fingerprints(good_hands, good_seats, rows, con, ix.compiled).alias("fingerprint"),
    ).cast(HANDS_SCHEMA)  # type: ignore[arg-type]
    batch = HandBatch(
        hands=out_hands,
        seats=good_seats.select(list(SEATS_SCHEMA)).cast(SEATS_SCHEMA),  # type: ignore[arg-type]
        moves=moves,
    )
    return _first_of_each_id(batch, raw.source)


def _final_rows(ix: Index, card_ok: np.ndarray | None, seat_new: np.ndarray,
                n_valid_seats: int) -> dict[str, np.ndarray]:
    """Per valid seat, its row cards in playing order (from streets, else as given);
    ``card_ok``: per card, whether its seat is valid (None: every seat is)."""
    rows: dict[str, np.ndarray] = {}
    for kind, name in zip((TOP, TOP + 1, BOTTOM), ROWS, strict=True):
        in_row = ix.of_kind(kind)
        keep = ix.form_ok[in_row] if card_ok is None else ix.form_ok[in_row] & card_ok[in_row]
        pick = in_row.start + np.flatnonzero(keep)
        owner = ix.c_seat[pick]
        # A seat's cards of one row are one run; a card's rank in its run is its place.
        rank = np.arange(len(pick)) - np.repeat(
            *_runs(owner)) if len(pick) else np.zeros(0, dtype=np.int64)
        out = np.zeros((n_valid_seats, ROW_SIZES[name]), dtype=np.uint8)
        out[seat_new[owner], rank] = ix.c_code[pick]
        rows[name] = out
    return rows


def _runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start index of each run of equal neighbours, and each run's length."""
    start = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    return start, np.diff(np.r_[start, len(values)])


def _moves(ix: Index, card_ok: np.ndarray | None, hand_new: np.ndarray,
           seat_numbers: np.ndarray) -> pl.DataFrame:
    """Placed and discarded cards of valid seats (``card_ok`` as :func:`_final_rows`
    takes it), in order, as moves per seat (:data:`MOVES_SCHEMA`). A card's slot in its
    seat's list is its street's first slot, plus the cards of the kinds before it in
    that street, plus its position in its own list: a scatter, no sort."""
    placed = slice(int(ix.kind_at[TOP]), len(ix.c_kind))  # every kind after the dealt
    keep = ix.on_street[placed] if card_ok is None else ix.on_street[placed] & card_ok[placed]
    used = placed.start + np.flatnonzero(keep)
    kind = ix.c_kind[used]
    key = ix.c_t[used] * 4 + (kind - TOP)
    n_street_rows = int(ix.n_streets.sum())
    # The cards before each (street row, kind), in that order: each one's first slot.
    slot = exclusive_cumsum(np.bincount(key, minlength=n_street_rows * 4))
    dest = slot[key] + ix.c_pos[used]
    moves = np.empty(len(used), dtype=np.uint16)
    moves[dest] = encode_moves(ix.c_street[used], kind, ix.c_code[used])
    per_seat = np.bincount(ix.c_seat[used], minlength=len(ix.s_hand))
    return _per_seat(per_seat, moves, hand_new[ix.s_hand], seat_numbers)


def _per_seat(per_seat: np.ndarray, moves: np.ndarray, hand: np.ndarray,
              seat_numbers: np.ndarray) -> pl.DataFrame:
    """Moves in seat order, ``per_seat`` of them for each seat row, as a row per seat
    that has any (:data:`MOVES_SCHEMA`); ``hand``, ``seat_numbers``: per seat row."""
    some = np.flatnonzero(per_seat)
    offsets = np.zeros(len(some) + 1, dtype=np.int32)
    np.cumsum(per_seat[some], out=offsets[1:])
    return pl.DataFrame([
        pl.Series("hand", hand[some].astype(np.uint32)),
        pl.Series("seat", seat_numbers[some].astype(np.int8)),
        pl.Series("moves", pa.ListArray.from_arrays(pa.array(offsets), pa.array(moves))),
    ], schema=MOVES_SCHEMA)


def _compiled_columns(ix: Index, s_valid: np.ndarray, seat_new: np.ndarray,
                      hand_new: np.ndarray, seat_numbers: np.ndarray
                      ) -> tuple[dict[str, np.ndarray], np.ndarray, pl.DataFrame]:
    """:func:`_final_rows`, the dealt counts and :func:`_moves`, compiled."""
    from ofcstats import _validate_kernel as kernel  # noqa: PLC0415 (numba: when needed)

    top, middle, bottom, dealt, per_seat, street, card, row = kernel.hand_columns(
        *_flags(s_valid), *_ints(seat_new), *_flags(ix.s_streets), *_ints(
            ix.n_streets, ix.street_start), *_card_ints(ix.c_seat, ix.c_street),
        *_bytes(ix.c_kind), *_card_ints(ix.c_pos), *_bytes(ix.c_code))
    moves = _per_seat(per_seat, encode_moves(street, row, card), hand_new[ix.s_hand],
                      seat_numbers)
    return dict(zip(ROWS, (top, middle, bottom), strict=True)), dealt, moves


def compile_checks() -> None:
    """Compile the compiled twin of the fast pass now (or load it from numba's cache),
    with the argument types it is always given (:mod:`ofcstats.compiled`)."""
    from ofcstats import _validate_kernel as kernel  # noqa: PLC0415

    (ints,), (flags,), (codes,) = _ints(np.zeros(0)), _flags(np.zeros(0)), _bytes(np.zeros(0))
    (cards,) = _card_ints(np.zeros(0))
    kernel.card_rules(0, ints, flags, flags, ints, ints, ints, cards, cards,  # type: ignore[call-arg]
                      cards, codes, cards, codes, *_ints(_PLAN_LEN, _PLAN_DEALT, _PLAN_DISCARD),
                      FANTASYLAND_MAX_CARDS)
    kernel.hand_columns(flags, ints, flags, ints, ints, cards, cards, codes, cards, codes)
    offsets, texts = _text_buffers(pl.Series([], dtype=pl.String))
    kernel.fingerprint_texts(offsets, texts, ints, ints, offsets, texts,
                             *_bytes(np.zeros((0, 17))))


def checks_compiled() -> bool:
    """Whether numba's cache holds the compiled twin (see :func:`ofcstats.compiled.cached`)."""
    from ofcstats import _validate_kernel as kernel  # noqa: PLC0415

    return cached(kernel.card_rules, kernel.hand_columns, kernel.fingerprint_texts)


def _fingerprints(hands: pl.DataFrame, seats: pl.DataFrame, rows: dict[str, np.ndarray],
                  con: duckdb.DuckDBPyConnection, compiled: bool = False) -> pl.Series:
    """An md5 per hand of who sat where with which cards: the variant, then per seat in
    seat order its number, player, flags and the cards of each row (as sets).
    ``compiled``: the texts written by the compiled twin (the same bytes)."""
    if not hands.height:
        return pl.Series("fingerprint", [], dtype=pl.String)
    # Per seat, after its number and player: its three flags as digits, then "|" and
    # its rows' cards as sets (sorted), one byte each (the code + 48): fixed-width bytes.
    flags = np.stack([_np(seats, c, fill=False).astype(np.uint8) + 48
                      for c in ("fantasyland", "timed_out", "surrendered")], axis=1)
    tail = np.concatenate([flags, np.full((len(flags), 1), ord("|"), dtype=np.uint8),
                           *(_sorted_rows(rows[r]) + 48 for r in ROWS)], axis=1)
    text = _compiled_fingerprint_texts(hands, seats, tail) if compiled else \
        _fingerprint_texts(hands, seats, tail)
    con.register("fingerprint_text", pa.table({"text": text}))
    try:
        return con.sql("SELECT md5(text) AS fingerprint FROM fingerprint_text").pl() \
            .get_column("fingerprint")
    finally:
        con.unregister("fingerprint_text")


def _fingerprint_texts(hands: pl.DataFrame, seats: pl.DataFrame, tail: np.ndarray
                       ) -> pa.Array:
    """The texts :func:`_fingerprints` hashes, a hand each."""
    seat_text = seats.select(
        "hand", "seat",
        pl.concat_str([pl.col("seat").cast(pl.String), pl.col("player"),
                       pl.Series(np.ascontiguousarray(tail).view(f"S{tail.shape[1]}").ravel())
                       .cast(pl.String)], separator="|").alias("text"),
    ).sort("hand", "seat").get_column("text").to_arrow().cast(pa.string())
    # Seats are grouped by hand: offsets make each hand's list of seat texts.
    counts = np.bincount(seats.get_column("hand").to_numpy(), minlength=hands.height)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    per_hand = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), seat_text), "\n")
    variant = hands.get_column("variant").to_arrow().cast(pa.string())
    return pc.binary_join_element_wise(variant, per_hand, "\n")


def _compiled_fingerprint_texts(hands: pl.DataFrame, seats: pl.DataFrame, tail: np.ndarray
                                ) -> pa.Array:
    """:func:`_fingerprint_texts`, compiled."""
    from ofcstats import _validate_kernel as kernel  # noqa: PLC0415 (numba: when needed)

    offsets, data = kernel.fingerprint_texts(  # type: ignore[call-arg]  # (numba's stub)
        *_text_buffers(hands.get_column("variant")),
        *_ints(seats.get_column("hand").to_numpy(), seats.get_column("seat").to_numpy()),
        *_text_buffers(seats.get_column("player")), *_bytes(tail))
    return pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets),
                                            pa.py_buffer(data))


def _text_buffers(texts: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """A column of texts as the compiled steps take it: offsets, then the bytes."""
    array = texts.to_arrow().cast(pa.large_string())
    _, offsets, data = array.buffers()
    (offsets_in,) = inputs(np.int64, np.frombuffer(offsets, dtype=np.int64)[
        array.offset:array.offset + len(array) + 1])
    return offsets_in, buffer(data if data is not None else b"")


def _sorted_rows(rows: np.ndarray) -> np.ndarray:
    """Each row's cards in ascending order: odd-even transposition over the columns (a
    row has 3 or 5 cards; ``np.sort`` along rows costs ten times as much here)."""
    columns = [rows[:, i] for i in range(rows.shape[1])]
    for step in range(len(columns)):
        for i in range(step % 2, len(columns) - 1, 2):
            columns[i], columns[i + 1] = (np.minimum(columns[i], columns[i + 1]),
                                          np.maximum(columns[i], columns[i + 1]))
    return np.stack(columns, axis=1) if columns else rows


def _first_of_each_id(batch: HandBatch, source: str) -> HandBatch:
    """The same id twice in one batch: the first stands; an exact repeat is dropped and
    counted, a different hand is a conflict."""
    ids = batch.hands.get_column("hand_id")
    if not ids.is_duplicated().any():
        return batch
    # The fields the fingerprint leaves out (the store's UPDATABLE) must agree too: the
    # same hand with another point value is a conflict here as it is against the store.
    hand_fields = [c for c in UPDATABLE if c in batch.hands.columns]
    seat_fields = [c for c in UPDATABLE if c in batch.seats.columns and c not in hand_fields]
    per_seat = batch.seats.sort("hand", "seat").group_by("hand", maintain_order=True).agg(
        _seats=pl.struct("seat", *seat_fields).hash().implode())
    marked = batch.hands.with_row_index("hand").join(
        per_seat, on="hand", how="left", maintain_order="left").with_columns(
        values=pl.struct(*hand_fields, "_seats").hash()).with_columns(
        first=ids.is_first_distinct(),
        first_line=pl.col("line").first().over("hand_id"),
        first_print=pl.col("fingerprint").first().over("hand_id"),
        first_values=pl.col("values").first().over("hand_id"),
    )
    repeats = marked.filter(~pl.col("first"))
    conflicts = repeats.filter((pl.col("fingerprint") != pl.col("first_print"))
                               | (pl.col("values") != pl.col("first_values"))).select(
        pl.lit(source).alias("source"), "line", "hand_id",
        pl.when(pl.col("fingerprint") != pl.col("first_print")).then(
            pl.format("hand {}: a different hand with this id is at line {}",
                      pl.col("hand_id"), pl.col("first_line"))).otherwise(
            pl.format("hand {}: the same hand as at line {} but with other values of "
                      f"{', '.join(UPDATABLE)}", pl.col("hand_id"), pl.col("first_line")))
        .alias("reason"),
        pl.lit(None, dtype=pl.String).alias("raw"),
    )
    kept = batch.select(marked.get_column("first"))
    kept.rejects = pl.concat([kept.rejects, conflicts.cast(REJECTS_SCHEMA)])  # type: ignore[arg-type]
    kept.duplicates += repeats.height - conflicts.height
    return kept
