"""The one canonical hand record, as columnar frames.

Every source format is parsed into a :class:`RawBatch` (texts as found, nothing
checked but the shape of the file); :mod:`ofcstats.validate` turns it into a
:class:`HandBatch` of checked hands plus the rejects. Only a ``HandBatch`` reaches the
store or the scorer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

RAW_HANDS_SCHEMA: dict[str, pl.DataType] = {
    "key": pl.Int64(),  # unique within the batch: the hand's line in its file
    "line": pl.Int64(),
    "hand_id": pl.String(),
    "session_id": pl.String(),
    "played_at": pl.String(),
    "variant": pl.String(),
    "ruleset": pl.String(),
    "point_value": pl.Float64(),
    "button": pl.Int64(),
    "extra": pl.String(),  # unknown top-level keys, as a JSON object
    "raw": pl.String(),
    "error": pl.String(),  # a problem the parser already found, or null
}
RAW_SEATS_SCHEMA: dict[str, pl.DataType] = {
    "key": pl.Int64(),
    "seat_index": pl.Int64(),  # 1.. position in the hand's list of seats
    "seat": pl.Int64(),
    "player": pl.String(),
    "fantasyland": pl.Boolean(),
    "timed_out": pl.Boolean(),
    "surrendered": pl.Boolean(),
    "reported_points": pl.Float64(),
    "has_streets": pl.Boolean(),
    "has_rows": pl.Boolean(),
    "error": pl.String(),
}
RAW_CARDS_SCHEMA: dict[str, pl.DataType] = {
    "key": pl.Int64(),
    "seat_index": pl.Int64(),
    "street": pl.Int64(),  # 1.. for streets; 0 for the final-rows form
    "kind": pl.String(),  # dealt, top, middle, bottom, discard
    "pos": pl.Int64(),
    "text": pl.String(),
}

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
    "fingerprint": pl.String(),  # md5 of the hand's content, to tell repeats from conflicts
}
SEATS_SCHEMA: dict[str, pl.DataType] = {
    "hand_id": pl.String(),
    "seat": pl.Int8(),
    "player": pl.String(),
    "fantasyland": pl.Boolean(),
    "timed_out": pl.Boolean(),
    "surrendered": pl.Boolean(),
    "reported_points": pl.Float64(),
    "dealt": pl.Int8(),  # cards this seat was dealt (13 in the final-rows form)
    "top": pl.Array(pl.UInt8, 3),
    "middle": pl.Array(pl.UInt8, 5),
    "bottom": pl.Array(pl.UInt8, 5),
}
PLACEMENTS_SCHEMA: dict[str, pl.DataType] = {
    "hand_id": pl.String(),
    "seat": pl.Int8(),
    "street": pl.Int8(),
    "order": pl.Int16(),  # 1.. within the seat's hand, in the order the log lists them
    "card": pl.UInt8(),
    "row": pl.String(),  # top, middle, bottom or discard
}
REJECTS_SCHEMA: dict[str, pl.DataType] = {
    "source": pl.String(),
    "line": pl.Int64(),
    "hand_id": pl.String(),
    "reason": pl.String(),
    "raw": pl.String(),
}


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """A frame with no rows and the given schema."""
    return pl.DataFrame(schema=schema)


@dataclass
class RawBatch:
    """Hands as a parser found them, before any rule is checked."""

    source: str
    hands: pl.DataFrame = field(default_factory=lambda: empty(RAW_HANDS_SCHEMA))
    seats: pl.DataFrame = field(default_factory=lambda: empty(RAW_SEATS_SCHEMA))
    cards: pl.DataFrame = field(default_factory=lambda: empty(RAW_CARDS_SCHEMA))
    # Lines that are not hands at all (not JSON, not UTF-8, not a CSV row), as rejects.
    rejects: pl.DataFrame = field(default_factory=lambda: empty(REJECTS_SCHEMA))


@dataclass
class HandBatch:
    """Checked hands, ready for the store and the scorer, plus everything rejected."""

    hands: pl.DataFrame = field(default_factory=lambda: empty(HANDS_SCHEMA))
    seats: pl.DataFrame = field(default_factory=lambda: empty(SEATS_SCHEMA))
    placements: pl.DataFrame = field(default_factory=lambda: empty(PLACEMENTS_SCHEMA))
    rejects: pl.DataFrame = field(default_factory=lambda: empty(REJECTS_SCHEMA))
    duplicates: int = 0  # exact repeats of hands already in the batch, dropped

    def seats_for_scoring(self) -> pl.DataFrame:
        """The seats frame :func:`ofcstats.score.score` takes (variant joined in)."""
        return self.seats.join(self.hands.select("hand_id", "variant"), on="hand_id").select(
            "hand_id", "variant", "seat", "player", "fantasyland", "timed_out", "surrendered",
            "top", "middle", "bottom",
        )

    def without(self, hand_ids: pl.Series) -> HandBatch:
        """This batch less the hands with the given ids (rejects and counts kept)."""
        keep = self.hands.filter(~pl.col("hand_id").is_in(hand_ids.implode()))
        ids = keep.select("hand_id")
        return HandBatch(
            hands=keep,
            seats=self.seats.join(ids, on="hand_id", how="semi"),
            placements=self.placements.join(ids, on="hand_id", how="semi"),
            rejects=self.rejects,
            duplicates=self.duplicates,
        )

    @staticmethod
    def concat(batches: list[HandBatch]) -> HandBatch:
        """One batch holding all of ``batches``; their hand ids must already be distinct."""
        if not batches:
            return HandBatch()
        return HandBatch(
            hands=pl.concat([b.hands for b in batches]),
            seats=pl.concat([b.seats for b in batches]),
            placements=pl.concat([b.placements for b in batches]),
            rejects=pl.concat([b.rejects for b in batches]),
            duplicates=sum(b.duplicates for b in batches),
        )
