"""The one canonical hand record, as columnar frames, and the frames the scorer takes and
gives.

Every source format is parsed into a :class:`RawBatch` (what the file says, card texts
already turned into codes where they are cards, nothing else checked);
:mod:`ofcstats.validate` turns it into a :class:`HandBatch` of checked hands plus the
rejects. Only a ``HandBatch`` reaches the store or the scorer. The scorer
(:mod:`ofcstats.score`) takes seats (:data:`SEAT_SCHEMA`) and gives results
(:data:`RESULT_SCHEMA`, :class:`Scored`), which the store keeps.

Frames refer to their hand by ``hand``, the hand's row number in the batch's
``hands`` frame: integer keys keep the per-card frames small and joins cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ofcstats.rows import ROW_NAMES

if TYPE_CHECKING:
    from ofcstats.formats.lines import LineBatch

KIND_NAMES = ("dealt", *ROW_NAMES, "discard")
"""``kind`` codes of :data:`RAW_CARDS_SCHEMA`: 0 dealt, 1 top, 2 middle, 3 bottom, 4 discard."""
DEALT, TOP, MIDDLE, BOTTOM, DISCARD = range(5)
NOT_A_CARD = 255
"""The code :mod:`ofcstats.formats.nested` gives a text that is not a card."""

RAW_HANDS_SCHEMA: dict[str, pl.DataType] = {
    "hand": pl.Int64(),  # row number in this frame
    "line": pl.Int64(),  # the hand's first line in its file
    "n_lines": pl.Int64(),  # lines the hand spans (1 for JSON Lines, a seat a line in CSV)
    "hand_id": pl.String(),
    "session_id": pl.String(),
    "played_at": pl.String(),
    "variant": pl.String(),
    "ruleset": pl.String(),
    "point_value": pl.Float64(),
    "button": pl.Int64(),
    "extra": pl.String(),  # keys the format does not know, as a JSON object
    "error": pl.String(),  # a problem the parser already found, or null
}
RAW_SEATS_SCHEMA: dict[str, pl.DataType] = {
    "hand": pl.Int64(),
    "seat_index": pl.Int64(),  # 1.. position in the hand's list of seats
    "seat": pl.Int64(),
    "player": pl.String(),
    "fantasyland": pl.Boolean(),
    "timed_out": pl.Boolean(),
    "surrendered": pl.Boolean(),
    "reported_points": pl.Float64(),
    "unit": pl.Float64(),  # what one point is worth to this player, times the point value
    "has_streets": pl.Boolean(),
    "n_streets": pl.Int64(),  # length of the seat's list of streets (0 without one)
    "has_rows": pl.Boolean(),  # final rows given (top, middle or bottom)
    "error": pl.String(),
}
RAW_CARDS_SCHEMA: dict[str, pl.DataType] = {
    "hand": pl.Int32(),
    "seat_index": pl.Int32(),
    "street": pl.Int32(),  # 1.. for streets; 0 for the final rows as given
    "kind": pl.UInt8(),  # see KIND_NAMES
    "pos": pl.Int32(),  # 0.. within its list
    "code": pl.UInt8(),  # the card, or null when the text is not a card
    "text": pl.String(),  # the text as written, kept only where it is not a card
}
"""One row per card mention. Rows come kind by kind (all dealt cards, then all top
cards, ...), and within a kind by hand, seat, street and position: a kind's cards for
one seat are a contiguous run in playing order."""

HANDS_SCHEMA: dict[str, pl.DataType] = {
    "hand_id": pl.String(),
    "session_id": pl.String(),
    "played_at": pl.Datetime("us", "UTC"),
    "variant": pl.String(),
    "ruleset": pl.String(),
    "point_value": pl.Float64(),
    "button": pl.Int8(),
    "n_seats": pl.Int8(),
    "extra": pl.String(),
    "source": pl.String(),
    "line": pl.Int64(),
    "fingerprint": pl.String(),  # md5 of who sat where with which cards: repeat or conflict
}
SEATS_SCHEMA: dict[str, pl.DataType] = {
    "hand": pl.UInt32(),
    "hand_id": pl.String(),
    "seat": pl.Int8(),
    "player": pl.String(),
    "fantasyland": pl.Boolean(),
    "timed_out": pl.Boolean(),
    "surrendered": pl.Boolean(),
    "reported_points": pl.Float64(),
    "unit": pl.Float64(),  # the player's unit (null: 1), docs/rules.md §5
    "dealt": pl.Int8(),  # cards this seat was dealt (13 in the final-rows form)
    "top": pl.Array(pl.UInt8, 3),
    "middle": pl.Array(pl.UInt8, 5),
    "bottom": pl.Array(pl.UInt8, 5),
}
STREET_STEP = 512
ROW_STEP = 64
"""A move, one placed or discarded card: ``street * STREET_STEP + row * ROW_STEP + card``
(row 1 top, 2 middle, 3 bottom, 4 discard: :data:`KIND_NAMES`); ``card < ROW_STEP`` (52
cards), ``row * ROW_STEP < STREET_STEP``. The store keeps a seat's moves as one list."""


def encode_moves(street: np.ndarray, row: np.ndarray, card: np.ndarray) -> np.ndarray:
    """The moves (see :data:`STREET_STEP`) of cards placed on ``street`` in ``row``."""
    return (street.astype(np.uint16) * STREET_STEP + row.astype(np.uint16) * ROW_STEP
            + card.astype(np.uint16))


MOVES_SCHEMA: dict[str, pl.DataType] = {
    "hand": pl.UInt32(),
    "seat": pl.Int8(),
    "moves": pl.List(pl.UInt16()),  # in playing order: by street, then top, middle, bottom, discard
}
"""One row per seat logged street by street: its placed and discarded cards as moves."""
REJECTS_SCHEMA: dict[str, pl.DataType] = {
    "source": pl.String(),
    "line": pl.Int64(),
    "hand_id": pl.String(),
    "reason": pl.String(),
    "raw": pl.String(),
}
UPDATABLE_HAND_FIELDS = ("played_at", "ruleset", "point_value", "button")
UPDATABLE_SEAT_FIELDS = ("reported_points", "unit")
UPDATABLE = (*UPDATABLE_HAND_FIELDS, *UPDATABLE_SEAT_FIELDS)
"""Fields the fingerprint of a hand leaves out: another value under a stored hand is a
conflict, or (``ingest --update``) replaces the stored one."""

SEAT_SCHEMA: dict[str, pl.DataType] = {
    "hand_id": pl.String(),
    "variant": pl.String(),
    "seat": pl.Int8(),
    "player": pl.String(),
    "fantasyland": pl.Boolean(),
    "timed_out": pl.Boolean(),
    "surrendered": pl.Boolean(),
    "top": pl.Array(pl.UInt8, 3),
    "middle": pl.Array(pl.UInt8, 5),
    "bottom": pl.Array(pl.UInt8, 5),
}
"""The seats frame the scorer takes: one row per seat of a hand, final rows as card codes
(and, optionally, the player's ``unit``)."""

RESULT_SCHEMA: dict[str, pl.DataType] = {
    "ruleset": pl.String(),  # score() returns an Enum of the rulesets scored, in order asked
    "hand_id": pl.String(),
    "seat": pl.Int8(),
    "player": pl.String(),
    "points": pl.Int32(),
    "royalties": pl.Int16(),  # collected from all opponents, after spade doubling; 0 if fouled
    "royalty_top": pl.Int16(),
    "royalty_middle": pl.Int16(),
    "royalty_bottom": pl.Int16(),
    "royalty_points": pl.Int16(),  # the royalties' part of points: collected minus paid
    "rows_top": pl.Int8(),  # rows won minus rows lost, summed over opponents
    "rows_middle": pl.Int8(),
    "rows_bottom": pl.Int8(),
    "wins_top": pl.Int8(),  # opponents beaten in the row (a fouled one included)
    "wins_middle": pl.Int8(),
    "wins_bottom": pl.Int8(),
    "fouled": pl.Boolean(),
    "scoops": pl.Int8(),  # opponents this seat beat in all three rows (a fouled one included)
    "scooped": pl.Int8(),  # opponents that beat this seat in all three rows
    "fantasyland_next": pl.Boolean(),
    "fantasyland_cards": pl.Int8(),
    # points weighted by the unit each opponent pair settles at (ofcstats.units); null
    # where every unit of the hand is 1 (then the points themselves)
    "unit_points": pl.Float64(),
}
"""The scorer's results: one row per hand, seat and ruleset."""

SHOWDOWN_COLUMNS = ("fouled", "rows_top", "rows_middle", "rows_bottom", "wins_top",
                    "wins_middle", "wins_bottom", "scoops", "scooped")
"""The result columns every ruleset with the same natural mask shares."""


@dataclass(frozen=True)
class Scored:
    """Results, and what they share.

    ``results`` holds one block of rows per ruleset, in the order asked, each block
    listing the same seats in the same order. ``showdowns`` maps each showdown key the
    rulesets play (:func:`ofcstats.showdown.showdown_key`; 0 always included) to that
    order's ``hand_id``, ``seat`` and :data:`SHOWDOWN_COLUMNS`; ``showdown_bits`` gives,
    in that order too, what may change each seat's showdown
    (:attr:`ofcstats.showdown.SeatTable.showdown_bits`): its naturals, a foul, a straight.
    """

    results: pl.DataFrame
    showdowns: dict[int, pl.DataFrame]
    showdown_bits: pl.Series


def session_default(source: str) -> str:
    """The session of hands that name none: the file name without its suffixes."""
    name = Path(source).name
    for suffix in (".gz", ".zst", ".jsonl", ".json", ".ndjson", ".csv", ".txt"):
        name = name.removesuffix(suffix)
    return name or source


def id_hashes(hand_ids: pl.Series) -> np.ndarray:
    """Hand ids as 64-bit hashes (``uint64``; this process's only: never stored), to
    tell cheaply that two sets of hands share no id: equal ids hash alike, and a rare
    equal hash of two ids only sends the caller to its exact comparison."""
    return hand_ids.hash(seed=0).to_numpy()


class IdHashes:
    """A set of hand ids' hashes (:func:`id_hashes`) kept as sorted runs, a run merged
    into the one before it while that one is at most twice as long (so there are few of
    them). Whether any of a batch's ids may be among them is a look-up of the batch's
    sorted hashes in each run: a fraction of a millisecond where the database scans every
    stored id (about 30 ms a million hands), and a tenth of the time of unsorted ones or
    of a Python set."""

    def __init__(self, hashes: np.ndarray | None = None) -> None:
        self.runs: list[np.ndarray] = []
        if hashes is not None:
            self.add(hashes)

    def add(self, hashes: np.ndarray) -> None:
        """Hashes added."""
        if not len(hashes):
            return
        run = np.sort(hashes)
        while self.runs and len(self.runs[-1]) <= 2 * len(run):
            run = np.sort(np.concatenate([self.runs.pop(), run]))
        self.runs.append(run)

    def may_hold_any(self, hashes: np.ndarray) -> bool:
        """Whether any of these hashes may be held (no: none is)."""
        if not self.runs or not len(hashes):
            return False
        needles = np.sort(hashes)
        for run in self.runs:
            at = np.minimum(np.searchsorted(run, needles), len(run) - 1)
            if np.any(run[at] == needles):
                return True
        return False


def hand_starts(hand_ids: pl.Series) -> np.ndarray | None:
    """Where each hand's seats begin, or None when some hand's seats are not adjacent."""
    change = (hand_ids.slice(1) != hand_ids.slice(0, hand_ids.len() - 1)).to_numpy()
    starts = np.flatnonzero(np.concatenate([[True], change]))
    # No hand may start twice. Distinct hashes prove it several times faster than
    # comparing the ids; only a collision (or a real repeat) needs the exact count.
    first = hand_ids.gather(starts)
    unique = first.hash().n_unique() == len(starts) or first.n_unique() == len(starts)
    return starts if unique else None


def hands_of(seats: pl.DataFrame, columns: Sequence[str] = ()) -> pl.DataFrame:
    """One row per hand of a seats frame, in the order of their first seats: ``hand_id``,
    the ``columns`` (a hand's own, read from its first seat) and what play order and
    games need of its seats (:func:`ofcstats.session.hand_order`): ``fantasyland_hand``,
    whether any seat played the hand in fantasyland, and ``timed_out_hand``, whether any
    seat timed out in it."""
    if seats.is_empty():
        return seats.select("hand_id", *columns).with_columns(
            fantasyland_hand=pl.lit(False), timed_out_hand=pl.lit(False))
    starts = hand_starts(seats.get_column("hand_id"))
    if starts is None:  # a hand's seats apart
        return seats.group_by("hand_id", maintain_order=True).agg(
            *(pl.col(column).first() for column in columns),
            fantasyland_hand=pl.col("fantasyland").any(),
            timed_out_hand=pl.col("timed_out").any())

    def any_seat(column: str) -> pl.Series:
        flags = seats.get_column(column).fill_null(False).to_numpy()
        return pl.Series(np.logical_or.reduceat(flags, starts))

    return seats.select("hand_id", *columns)[starts].with_columns(
        fantasyland_hand=any_seat("fantasyland"), timed_out_hand=any_seat("timed_out"))


def exclusive_cumsum(counts: np.ndarray) -> np.ndarray:
    """Start offset of each run given run lengths.

    >>> exclusive_cumsum(np.array([2, 0, 3])).tolist()
    [0, 2, 2]
    """
    out = np.zeros(len(counts), dtype=np.int64)
    if len(counts) > 1:
        np.cumsum(counts[:-1], out=out[1:])
    return out


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """A frame with no rows and the given schema."""
    return pl.DataFrame(schema=schema)


def conform(frame: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """``frame``'s columns in ``schema``'s order and types."""
    return frame.select([pl.col(name).cast(dtype) for name, dtype in schema.items()])


def reject_rows(source: str, lines: Sequence[int | None], reasons: Sequence[str],
                raws: Sequence[str | None] | None = None,
                hand_ids: Sequence[str | None] | None = None) -> pl.DataFrame:
    """Rejects from plain lists (for the few rejects found outside a frame)."""
    n = len(reasons)
    return pl.DataFrame({
        "source": [source] * n, "line": list(lines),
        "hand_id": list(hand_ids) if hand_ids is not None else [None] * n,
        "reason": list(reasons), "raw": list(raws) if raws is not None else [None] * n,
    }, schema=REJECTS_SCHEMA)


@dataclass
class RawBatch:
    """Hands as a parser found them, before any rule is checked."""

    source: str
    lines: LineBatch  # the text the hands came from, for the raw text of rejects
    hands: pl.DataFrame = field(default_factory=lambda: empty(RAW_HANDS_SCHEMA))
    seats: pl.DataFrame = field(default_factory=lambda: empty(RAW_SEATS_SCHEMA))
    cards: pl.DataFrame = field(default_factory=lambda: empty(RAW_CARDS_SCHEMA))
    # Lines that are not hands at all (not JSON, not UTF-8, not a CSV row), as rejects.
    rejects: pl.DataFrame = field(default_factory=lambda: empty(REJECTS_SCHEMA))
    # Read by the compiled reader (a large load): the checks use their compiled twin too.
    compiled: bool = False


@dataclass
class HandBatch:
    """Checked hands, ready for the store and the scorer, plus everything rejected.

    ``seats`` and ``moves`` name their hand by ``hand``, its row in ``hands``.
    """

    hands: pl.DataFrame = field(default_factory=lambda: empty(HANDS_SCHEMA))
    seats: pl.DataFrame = field(default_factory=lambda: empty(SEATS_SCHEMA))
    moves: pl.DataFrame = field(default_factory=lambda: empty(MOVES_SCHEMA))
    rejects: pl.DataFrame = field(default_factory=lambda: empty(REJECTS_SCHEMA))
    duplicates: int = 0  # exact repeats of hands already in the batch, dropped
    lines: tuple[LineBatch, ...] = ()  # the text the hands came from, for later rejects

    def raw_text(self, line: int) -> str | None:
        """The text of one of the batch's lines (by its number in the file), if kept."""
        for kept in self.lines:
            if 0 <= line - kept.first_line < len(kept):
                return kept.line(line - kept.first_line)
        return None

    def seats_for_scoring(self) -> pl.DataFrame:
        """The seats frame :func:`ofcstats.score.score` takes (variant joined in)."""
        variant = self.hands.get_column("variant").gather(self.seats.get_column("hand"))
        return self.seats.with_columns(variant=variant).select(
            "hand_id", "variant", "seat", "player", "fantasyland", "timed_out", "surrendered",
            *ROW_NAMES, "unit",
        )

    def without(self, hand_ids: pl.Series) -> HandBatch:
        """This batch less the hands with the given ids (rejects and counts kept)."""
        keep = ~self.hands.get_column("hand_id").is_in(hand_ids.implode())
        return self.select(keep)

    def select(self, keep: pl.Series) -> HandBatch:
        """The hands where ``keep`` (one boolean per hand) is true, renumbered."""
        new_index = (keep.cast(pl.UInt32).cum_sum() - 1).cast(pl.UInt32)
        by_hand = pl.DataFrame({"_keep": keep, "_new": new_index})

        def follow(frame: pl.DataFrame) -> pl.DataFrame:
            picked = by_hand.gather(frame.get_column("hand"))
            return frame.filter(picked.get_column("_keep")).with_columns(
                hand=picked.get_column("_new").filter(picked.get_column("_keep")))

        return HandBatch(
            hands=self.hands.filter(keep),
            seats=follow(self.seats),
            moves=follow(self.moves),
            rejects=self.rejects,
            duplicates=self.duplicates,
            lines=self.lines,
        )

    @staticmethod
    def concat(batches: list[HandBatch]) -> HandBatch:
        """One batch holding all of ``batches``; their hand ids must already be distinct."""
        if not batches:
            return HandBatch()
        seats, moves, base = [], [], 0
        for b in batches:
            seats.append(b.seats.with_columns(pl.col("hand") + base))
            moves.append(b.moves.with_columns(pl.col("hand") + base))
            base += b.hands.height
        return HandBatch(
            hands=pl.concat([b.hands for b in batches]),
            seats=pl.concat(seats),
            moves=pl.concat(moves),
            rejects=pl.concat([b.rejects for b in batches]),
            duplicates=sum(b.duplicates for b in batches),
            lines=tuple(kept for b in batches for kept in b.lines),
        )
