"""The Chipzen OFC hand record, schema version 1 (docs/format.md).

One JSON object per line; the hand sits under ``variant``, discriminated by
``variant.game_type == "ofc"``. A record of another ``schema_version`` is rejected,
never guessed at. Seats are 0-based in the record and become 1-based seats named
``seat 1``, ``seat 2`` ... (the record names no players); ``pull`` is what a street
dealt, ``placements`` what it placed, ``discarded`` what it threw away. The platform's
own scoring (row royalties, royalties, fouled, net chips, fantasyland next, settlement)
is kept in the hand's ``extra`` object under ``chipzen``, to compare with re-scoring.
"""

from __future__ import annotations

import json

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from ofcstats.formats import nested
from ofcstats.formats.base import batch_by_batch, nothing_expected
from ofcstats.formats.jsonl import (
    _first_object,
    _json_problem,
    combine,
    join_errors,
    read_arrow,
    split_read,
)
from ofcstats.formats.lines import LineBatch
from ofcstats.records import (
    DEALT,
    DISCARD,
    RAW_HANDS_SCHEMA,
    RAW_SEATS_SCHEMA,
    RawBatch,
    conform,
    reject_rows,
    session_default,
)
from ofcstats.variants import Variant

NAME = "chipzen"
STANDALONE_BATCHES = True  # one hand a line
expect = nothing_expected
SCHEMA_VERSION = 1
_ROW_KINDS = {"top": 1, "middle": 2, "bottom": 3}

_CARDS = pa.list_(pa.string())
_ROWS = pa.struct([(row, _CARDS) for row in _ROW_KINDS])
_ROW_NUMBERS = pa.struct([(row, pa.int64()) for row in _ROW_KINDS])
_STREET = pa.struct([
    ("phase", pa.string()), ("pull", _CARDS),
    ("placements", pa.list_(pa.struct([("card", pa.string()), ("row", pa.string())]))),
    ("discarded", _CARDS),
])
_SEAT = pa.struct([
    ("seat", pa.int64()), ("rows", _ROWS), ("streets", pa.list_(_STREET)),
    ("discarded", _CARDS), ("placed", pa.int64()), ("complete", pa.bool_()),
    ("row_royalties", _ROW_NUMBERS), ("royalties", pa.int64()), ("fouled", pa.bool_()),
    ("points", pa.float64()), ("net_chips", pa.int64()),
    ("fantasy_land_in", pa.bool_()), ("fantasy_land_next", pa.bool_()),
])
_VARIANT = pa.struct([
    ("game_type", pa.string()), ("schema_version", pa.int64()), ("point_value", pa.float64()),
    ("seats", pa.list_(_SEAT)),
    ("settlement", pa.struct([("net_points", pa.list_(pa.float64())),
                              ("chip_deltas", pa.list_(pa.int64())),
                              ("transferred", pa.int64())])),
])
SCHEMA = pa.schema([
    ("hand_id", pa.string()), ("match_id", pa.string()), ("hand_number", pa.int64()),
    ("dealer_seat", pa.int64()), ("variant", _VARIANT),
])
_PARSE = pajson.ParseOptions(explicit_schema=SCHEMA, unexpected_field_behavior="infer")
_REPORTED = ("seat", "placed", "complete", "row_royalties", "royalties", "fouled",
             "net_chips", "fantasy_land_next")


def sniff(head: bytes) -> bool:
    """True when the first non-blank line is an object whose ``variant`` is an object
    with a ``game_type``."""
    first = _first_object(head)
    variant = first.get("variant") if first else None
    return isinstance(variant, dict) and "game_type" in variant


def parse_batch(batch: LineBatch, source: str, con: duckdb.DuckDBPyConnection) -> RawBatch:
    """Parse one batch of lines: every non-blank line becomes a hand or a reject."""
    good, rest, refused = split_read(batch, _PARSE)
    parts = [_from_arrow(table, batch.first_line + piece, source) for piece, table in good]
    rejects = [reject_rows(source, refused.get_column("line").to_list(),
                           refused.get_column("reason").to_list(),
                           refused.get_column("raw").to_list())]
    lines, reasons, raws = [], [], []
    # Rare path: lines Arrow would not read, one at a time, to say what is wrong.
    for index in rest:
        text = batch.line(int(index))
        line = batch.first_line + int(index)
        try:
            parts.append(_from_arrow(read_arrow(text.encode() + b"\n", _PARSE, 1),
                                     np.array([line]), source))
            continue
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
            reason = _line_problem(text, str(error))
        lines.append(line)
        reasons.append(reason)
        raws.append(text)
    rejects.append(reject_rows(source, lines, reasons, raws))
    hands, seats, cards = combine(parts)
    return RawBatch(source=source, lines=batch, hands=hands, seats=seats, cards=cards,
                    rejects=pl.concat(rejects))


read_batches = batch_by_batch(parse_batch)
"""Parse a file's batches in order, each on its own."""


def _line_problem(text: str, arrow_message: str) -> str:
    try:
        record = json.loads(text)
    except json.JSONDecodeError:
        return _json_problem(text)
    if not isinstance(record, dict):
        return "a hand record is a JSON object ({...}); this line is not"
    variant = record.get("variant")
    if not isinstance(variant, dict):
        return "variant is missing or not an object: not a Chipzen hand record"
    detail = arrow_message.rsplit("JSON parse error: ", 1)[-1].replace(" in row 0", "")
    return f"does not fit the Chipzen OFC hand record v1: {detail}"


def _from_arrow(table: pa.Table, lines: np.ndarray, source: str
                ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The raw hands, seats and cards of a batch of records as Arrow read them."""
    variant = table.column("variant").combine_chunks()
    seats_level = nested.flatten(nested.field(variant, "seats"))
    seat_structs = seats_level.values
    seat_hand, seat_index = seats_level.parent, seats_level.pos + 1
    hands = _hands(table, variant, seats_level, lines, source)

    streets = nested.flatten(nested.field(seat_structs, "streets"))
    street_hand, street_seat = seat_hand[streets.parent], seat_index[streets.parent]
    street_no = streets.pos + 1
    rows = nested.field(seat_structs, "rows")
    placements = nested.flatten(nested.field(streets.values, "placements"))
    row_names = nested.field(placements.values, "row")
    kinds = pc.index_in(row_names, value_set=pa.array(list(_ROW_KINDS))).to_numpy(
        zero_copy_only=False)
    bad_row = np.isnan(kinds) if kinds.dtype.kind == "f" else np.zeros(len(kinds), dtype=bool)
    kind = np.where(bad_row, 0, np.nan_to_num(kinds) + 1).astype(np.int64)
    placed = _placed_by_kind(placements, kind, bad_row)
    seat_bad_row = np.bincount(streets.parent[placements.parent[bad_row]],
                               minlength=len(seat_hand)) > 0
    seats = _seats(seat_structs, seat_hand, seat_index, seat_bad_row)

    zeros = np.zeros(len(seat_hand), dtype=np.int64)
    parts = [(DEALT, nested.card_list(nested.field(streets.values, "pull")),
              street_hand, street_seat, street_no)]
    for row, row_kind in _ROW_KINDS.items():
        parts.append((row_kind, placed[row_kind], street_hand, street_seat, street_no))
        parts.append((row_kind, nested.card_list(nested.field(rows, row)),
                      seat_hand, seat_index, zeros))
    parts.append((DISCARD, nested.card_list(nested.field(streets.values, "discarded")),
                  street_hand, street_seat, street_no))
    return (conform(hands, RAW_HANDS_SCHEMA), conform(seats, RAW_SEATS_SCHEMA),
            nested.cards_frame(parts))


def _hands(table: pa.Table, variant: pa.Array, seats_level: nested.Level, lines: np.ndarray,
           source: str) -> pl.DataFrame:
    """One row per record: its ids, button and what it reported, with the reasons a record
    is not a Chipzen OFC hand record v1."""
    n = table.num_rows
    top = pl.from_arrow(table.select(["hand_id", "match_id", "hand_number", "dealer_seat"]))
    assert isinstance(top, pl.DataFrame)
    reported = pl.from_arrow(pa.table({"seats": nested.field(variant, "seats"),
                                       "settlement": nested.field(variant, "settlement")}))
    assert isinstance(reported, pl.DataFrame)
    extra = reported.select(pl.struct(chipzen=pl.struct(
        seats=pl.col("seats").list.eval(pl.struct(
            [pl.element().struct.field(f) for f in _REPORTED])),
        settlement=pl.col("settlement"),
    )).struct.json_encode().alias("extra"))
    game_type = nested.series(nested.field(variant, "game_type"))
    version = nested.series(nested.field(variant, "schema_version"))
    hands = top.with_columns(
        hand=pl.int_range(n, dtype=pl.Int64),
        line=pl.Series(lines, dtype=pl.Int64),
        n_lines=pl.lit(1, dtype=pl.Int64),
        game_type=game_type, schema_version=version,
        point_value=nested.series(nested.field(variant, "point_value")),
        has_seats=pl.Series(seats_level.valid),
        extra=extra.get_column("extra"),
    )
    return hands.with_columns(
        hand_id=pl.coalesce(
            "hand_id",
            pl.format("{}-h{}", pl.col("match_id"), pl.col("hand_number")),
            pl.format("{}:{}", pl.lit(session_default(source)), pl.col("line"))),
        session_id=pl.col("match_id"),
        played_at=pl.lit(None, dtype=pl.String),
        variant=pl.lit(Variant.PINEAPPLE.value),
        ruleset=pl.lit(None, dtype=pl.String),
        button=pl.col("dealer_seat") + 1,
        error=join_errors([
            (pl.col("game_type").is_null(),
             "variant.game_type is missing: not a Chipzen OFC hand record"),
            (pl.col("game_type").is_not_null() & (pl.col("game_type") != "ofc"),
             pl.format("variant.game_type is '{}', not 'ofc'", pl.col("game_type"))),
            (pl.col("schema_version").fill_null(-1) != SCHEMA_VERSION,
             pl.format("schema_version {} is not one this reader knows (1); the record is "
                       "not read rather than guessed at",
                       pl.col("schema_version").cast(pl.String).fill_null("missing"))),
            (~pl.col("has_seats"), "variant.seats is missing or not a list of seats"),
        ]),
    )


def _seats(seat_structs: pa.Array, seat_hand: np.ndarray, seat_index: np.ndarray,
           bad_row: np.ndarray) -> pl.DataFrame:
    """One row per seat of every record, with the reasons a seat cannot be read."""
    rows = nested.field(seat_structs, "rows")
    return pl.DataFrame({
        "hand": seat_hand, "seat_index": seat_index,
        "seat": pl.from_arrow(nested.field(seat_structs, "seat")),
        "fantasyland": pl.from_arrow(nested.field(seat_structs, "fantasy_land_in")),
        "reported_points": pl.from_arrow(nested.field(seat_structs, "points")),
        "has_streets": nested.field(seat_structs, "streets").is_valid().to_numpy(
            zero_copy_only=False),
        "n_streets": pl.from_arrow(pc.list_value_length(nested.field(seat_structs, "streets"))),
        "has_rows": rows.is_valid().to_numpy(zero_copy_only=False),
        "bad_row": bad_row,
    }).with_columns(
        player=pl.format("seat {}", pl.col("seat") + 1),
        seat=pl.col("seat") + 1,
        fantasyland=pl.col("fantasyland").fill_null(False),
        timed_out=pl.lit(False), surrendered=pl.lit(False), unit=pl.lit(None, dtype=pl.Float64),
        n_streets=pl.col("n_streets").fill_null(0),
    ).with_columns(error=join_errors([
        (pl.col("seat").is_null(),
         pl.format("seat number missing for seat {} of the list", pl.col("seat_index"))),
        (~pl.col("has_streets") & ~pl.col("has_rows"),
         "a seat has neither streets nor rows"),
        (pl.col("bad_row"), "a placement's row is not top, middle or bottom"),
    ]))


def _placed_by_kind(placements: nested.Level, kind: np.ndarray, bad_row: np.ndarray
                    ) -> dict[int, nested.CardList]:
    """The placements of each row kind as card lists owned by their street, positions
    counted within the street and row."""
    cards = nested.field(placements.values, "card")
    codes = nested.card_codes(cards)
    out = {}
    for row_kind in _ROW_KINDS.values():
        pick = np.flatnonzero((kind == row_kind) & ~bad_row)
        owner = placements.parent[pick]
        run_start = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(pick) else \
            np.zeros(0, dtype=np.int64)
        pos = np.arange(len(pick)) - np.repeat(run_start, np.diff(np.r_[run_start, len(pick)]))
        out[row_kind] = nested.CardList(owner=owner, pos=pos, codes=codes[pick],
                                        texts=cards.take(pa.array(pick, pa.int64())))
    return out

