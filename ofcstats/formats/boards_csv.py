"""A CSV of final boards typed by hand: one row per seat.

Columns (the header row names them, in any order; ``,``, ``;`` or tab separated):
``hand_id, seat, player, top, middle, bottom`` with the cards of a row separated by
spaces (``Ah Kd 7c``), and optionally ``points`` (the score the source recorded),
``variant`` (default ``ofc-classic``) and ``session_id``. The rows of one hand follow
each other; other columns are ignored.

A hand's rows can straddle two batches of lines, so this format reads batches in a
stream and holds back the last hand of a batch until the next one shows it is
complete.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from ofcstats.errors import HandError
from ofcstats.formats import nested
from ofcstats.formats.base import nothing_expected
from ofcstats.formats.jsonl import join_errors
from ofcstats.formats.lines import DamagedLine, LineBatch, Unread
from ofcstats.records import (
    BOTTOM,
    MIDDLE,
    RAW_HANDS_SCHEMA,
    RAW_SEATS_SCHEMA,
    TOP,
    RawBatch,
    conform,
    empty,
    reject_rows,
)
from ofcstats.rows import ROW_NAMES
from ofcstats.variants import Variant

NAME = "boards-csv"
STANDALONE_BATCHES = False  # a hand's rows may straddle two batches
expect = nothing_expected
REQUIRED = ("hand_id", "seat", "player", *ROW_NAMES)
OPTIONAL = ("points", "variant", "session_id")
DEFAULT_VARIANT = Variant.OFC_CLASSIC.value
_SEPARATORS = (",", ";", "\t")


def _header(line: bytes) -> tuple[str, list[str]] | None:
    """The separator and the lower-cased column names, if this is our header row."""
    text = line.decode("utf-8", errors="replace").removeprefix("\ufeff").strip()
    for sep in _SEPARATORS:
        names = [n.strip().strip('"').lower() for n in text.split(sep)]
        if set(REQUIRED) <= set(names):
            return sep, names
    return None


def sniff(head: bytes) -> bool:
    """True when the first non-blank line is a header naming the required columns."""
    for line in head.splitlines():
        if line.strip():
            return _header(line) is not None
    return False


def parse_batch(batch: LineBatch, source: str, con: duckdb.DuckDBPyConnection) -> RawBatch:
    """Parse one self-contained batch (its first non-blank line is the header)."""
    return next(read_batches([batch], source, con))


def read_batches(batches: Iterable[LineBatch], source: str,
                 con: duckdb.DuckDBPyConnection) -> Iterator[RawBatch]:
    """Parse a file's batches; a hand's rows are never split between two results."""
    header: tuple[str, list[str]] | None = None
    carry = b""
    carry_line = 1
    carry_long: tuple[Unread, ...] = ()  # long lines among those carried (blank in carry)
    pending = iter(batches)
    current = next(pending, None)
    while current is not None:
        following = next(pending, None)
        data = carry + current.data
        first_line = carry_line if carry else current.first_line
        lines = LineBatch(first_line=first_line, data=data, problem=current.problem,
                          long_lines=carry_long + current.long_lines)
        skip = np.zeros(len(lines), dtype=bool)
        if header is None:
            body = np.flatnonzero(~lines.blank)
            if not len(body):
                current = following
                carry, carry_line, carry_long = b"", first_line + len(lines), lines.long_lines
                continue
            found = _header(bytes(lines.data[int(lines.starts[body[0]]):
                                             int(lines.starts[body[0] + 1])]))
            if found is None:
                raise HandError(f"{source}: the first line is not a header naming "
                                f"{', '.join(REQUIRED)}")
            header = found
            skip[body[0]] = True
        raw, held = _parse(lines, skip, header, source, last=following is None)
        if held is not None:
            carry = bytes(lines.data[int(lines.starts[held]):])
            carry_line = first_line + held
            carry_long = tuple(x for x in lines.long_lines if x.line >= carry_line)
        else:
            carry, carry_long = b"", ()
        yield raw
        current = following
    if carry_long:  # lines too long to read, and no header after them
        yield RawBatch(source=source, lines=LineBatch(first_line=carry_line, data=b"",
                                                      long_lines=carry_long))


def _rows(lines: LineBatch, keep: np.ndarray, sep: str, names: list[str]
          ) -> tuple[pl.DataFrame, np.ndarray, pl.DataFrame]:
    """The rows of the kept lines as text columns, the line index of each row, and the
    lines that are not rows of the table (as rejects' line and raw)."""
    data = lines.select(keep)
    try:
        table = pl.read_csv(io.BytesIO(data), has_header=False, new_columns=names,
                            separator=sep, infer_schema=False, quote_char='"')
        if table.height == len(keep) and table.width == len(names):
            return table, keep, pl.DataFrame(schema={"line": pl.Int64, "raw": pl.String})
    except pl.exceptions.PolarsError:
        pass
    # Rare path: a row with the wrong number of fields; read line by line to name it.
    good, at, bad_lines, bad_raw = [], [], [], []
    for index in keep:
        text = lines.line(int(index))
        try:
            fields = next(csv.reader([text], delimiter=sep), [])
        except csv.Error:  # a bare carriage return in a field, say: not a row
            fields = []
        if len(fields) == len(names):
            good.append(fields)
            at.append(index)
        else:
            bad_lines.append(lines.first_line + int(index))
            bad_raw.append(text)
    table = pl.DataFrame(good, schema=dict.fromkeys(names, pl.String), orient="row")
    bad = pl.DataFrame({"line": bad_lines, "raw": bad_raw},
                       schema={"line": pl.Int64, "raw": pl.String})
    return table, np.array(at, dtype=np.int64), bad


def _parse(lines: LineBatch, skip: np.ndarray, header: tuple[str, list[str]], source: str,
           *, last: bool) -> tuple[RawBatch, int | None]:
    """Parse a batch; unless ``last``, hold back the final hand (its line index)."""
    sep, names = header
    bad_utf8 = lines.not_utf8
    keep = ~lines.blank & ~skip
    keep[bad_utf8] = False
    table, at, wrong = _rows(lines, np.flatnonzero(keep), sep, names)
    rejects = [
        reject_rows(source, (bad_utf8 + lines.first_line).tolist(),
                    ["line is not UTF-8 text"] * len(bad_utf8), lines.texts(bad_utf8)),
        reject_rows(source, wrong.get_column("line").to_list(),
                    [f"a row has {len(names)} fields ({', '.join(names)}); this one has "
                     "another number"] * wrong.height, wrong.get_column("raw").to_list()),
    ]
    for column in OPTIONAL:
        if column not in table.columns:
            table = table.with_columns(pl.lit(None, dtype=pl.String).alias(column))
    table = table.with_columns(
        pl.col(*REQUIRED, *OPTIONAL).str.strip_chars(),
        index=pl.Series(at, dtype=pl.Int64),
    ).with_columns(
        # Consecutive rows with the same id are one hand; a row without an id stands alone.
        new_hand=(pl.col("hand_id") != pl.col("hand_id").shift(1)).fill_null(True)
        | (pl.col("hand_id") == ""),
    ).with_columns(hand=pl.col("new_hand").cum_sum().cast(pl.Int64) - 1)
    unread = _unread_rows(lines, bad_utf8, wrong, sep, names)
    table = _without_unread_rows(table, unread, lines.first_line)
    held = None
    if not last and table.height:
        last_hand = table.get_column("hand")[-1]
        held_rows = table.filter(pl.col("hand") == last_hand)
        held = int(held_rows.get_column("index")[0])
        # Lines that could not be read just before the held hand go with it: they may
        # be rows of it.
        before = table.filter(pl.col("hand") != last_hand).get_column("index")
        after = int(before[-1]) if len(before) else -1
        held = min([held, *(i for i, _ in unread if after < i < held)])
        table = table.filter(pl.col("hand") != last_hand)
        # Lines from the held hand on are read again with the next batch.
        rejects = [r.filter(pl.col("line") < lines.first_line + held) for r in rejects]
    hands, seats, cards = _frames(table, lines.first_line, source)
    raw_lines = lines if held is None else LineBatch(
        first_line=lines.first_line, data=lines.data[: int(lines.starts[held])],
        long_lines=tuple(x for x in lines.long_lines if x.line < lines.first_line + held))
    return RawBatch(source=source, lines=raw_lines, hands=hands, seats=seats, cards=cards,
                    rejects=pl.concat(rejects)), held


def _unread_rows(lines: LineBatch, bad_utf8: np.ndarray, wrong: pl.DataFrame, sep: str,
                 names: list[str]) -> list[tuple[int, str | None]]:
    """The lines of the batch that are no row that can be read (too long, not text, not
    UTF-8, or with another number of fields), in order: each line's index, and the hand
    id it names where that can be read whole (else None)."""
    pos = names.index("hand_id")
    found: list[tuple[int, str, bool]] = []  # index, text, whether the text is whole
    for x in lines.long_lines:
        whole = isinstance(x, DamagedLine)
        data = x.data if isinstance(x, DamagedLine) else x.start
        found.append((x.line - lines.first_line, data.decode("utf-8", "replace"), whole))
    found += [(int(i), bytes(lines.data[int(lines.starts[i]):int(lines.starts[i + 1]) - 1])
               .decode("utf-8", "replace"), True) for i in bad_utf8]
    found += [(line - lines.first_line, raw, True)
              for line, raw in wrong.select("line", "raw").rows()]
    named = []
    for index, text, whole in sorted(found):
        try:
            fields = next(csv.reader([text], delimiter=sep), [])
        except csv.Error:
            fields = []
        hand_id = fields[pos].strip() if len(fields) > pos + (0 if whole else 1) else ""
        named.append((index, hand_id if hand_id.isprintable() and hand_id
                      and "\ufffd" not in hand_id else None))
    return named


def _without_unread_rows(table: pl.DataFrame, unread: list[tuple[int, str | None]],
                         first_line: int) -> pl.DataFrame:
    """``table`` with an ``unread`` column: why a hand is rejected when a line beside its
    rows could not be read and may be one of them (a hand's rows follow each other):
    the line names the hand, or it lies between two of the hand's rows. (A line that
    names no hand between two hands leaves both: each is whole as far as can be told.)"""
    marks: dict[int, str] = {}
    if unread and table.height:
        index = table.get_column("index").to_numpy()
        ids = table.get_column("hand_id").to_list()
        hand = table.get_column("hand").to_numpy()
        for i, named in unread:  # (a loop over the lines that could not be read)
            k = int(np.searchsorted(index, i))
            line = first_line + i
            if named is not None:
                for row in (k - 1, k):
                    if 0 <= row < len(index) and ids[row] == named:
                        marks.setdefault(int(hand[row]), f"line {line}, one of its rows, "
                                         "could not be read")
            elif 0 < k < len(index) and hand[k - 1] == hand[k]:
                marks.setdefault(int(hand[k]), f"line {line}, between two of its rows, could "
                                 "not be read")
    return table.with_columns(unread=pl.col("hand").replace_strict(
        marks, default=None, return_dtype=pl.String) if marks else pl.lit(None, pl.String))


def _frames(table: pl.DataFrame, first_line: int, source: str
            ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    if not table.height:
        return empty(RAW_HANDS_SCHEMA), empty(RAW_SEATS_SCHEMA), nested.cards_frame([])
    table = table.with_columns(
        line=pl.col("index") + first_line,
        seat_index=pl.int_range(1, pl.len() + 1).over("hand"),
        seat_number=pl.col("seat").str.to_integer(strict=False),
        points_number=pl.col("points").replace("", None).cast(pl.Float64, strict=False),
    )
    hands = table.group_by("hand", maintain_order=True).agg(
        line=pl.col("line").first(),
        n_lines=pl.col("line").last() - pl.col("line").first() + 1,
        hand_id=pl.col("hand_id").first(),
        session_id=pl.col("session_id").replace("", None).drop_nulls().first(),
        sessions=pl.col("session_id").replace("", None).drop_nulls().n_unique(),
        variant=pl.col("variant").replace("", None).drop_nulls().first(),
        variants=pl.col("variant").replace("", None).drop_nulls().n_unique(),
        unread=pl.col("unread").first(),
    ).with_columns(
        played_at=pl.lit(None, dtype=pl.String), ruleset=pl.lit(None, dtype=pl.String),
        point_value=pl.lit(None, dtype=pl.Float64), button=pl.lit(None, dtype=pl.Int64),
        extra=pl.lit(None, dtype=pl.String),
        variant=pl.col("variant").fill_null(DEFAULT_VARIANT),
        hand_id=pl.col("hand_id").replace("", None),
        error=join_errors([
            (pl.col("hand_id").replace("", None).is_null(), "hand_id is missing"),
            (pl.col("variants") > 1, "the rows of this hand name different variants"),
            (pl.col("sessions") > 1, "the rows of this hand name different sessions"),
            (pl.col("unread").is_not_null(), pl.col("unread")),
        ]),
    )
    seats = table.select(
        "hand", "seat_index",
        seat=pl.col("seat_number"),
        player=pl.col("player").replace("", None),
        fantasyland=pl.lit(False), timed_out=pl.lit(False), surrendered=pl.lit(False),
        reported_points=pl.col("points_number"), unit=pl.lit(None, dtype=pl.Float64),
        has_streets=pl.lit(False), n_streets=pl.lit(0, dtype=pl.Int64), has_rows=pl.lit(True),
        error=join_errors([
            (pl.col("seat_number").is_null() & (pl.col("seat") != ""),
             pl.format("seat '{}' is not a whole number", pl.col("seat"))),
            (pl.col("seat") == "", "seat number missing for a row"),
            (pl.col("player") == "", "a seat has no name"),
            (pl.col("points_number").is_null() & (pl.col("points").fill_null("") != ""),
             pl.format("points '{}' is not a number", pl.col("points"))),
        ]),
    )
    hand = table.get_column("hand").to_numpy()
    seat_index = table.get_column("seat_index").to_numpy()
    zeros = np.zeros(table.height, dtype=np.int64)
    parts = []
    for kind, column in ((TOP, "top"), (MIDDLE, "middle"), (BOTTOM, "bottom")):
        texts = table.get_column(column).fill_null("").str.extract_all(r"\S+").to_arrow()
        parts.append((kind, nested.card_list(pa.array(texts)), hand, seat_index, zeros))
    return (conform(hands, RAW_HANDS_SCHEMA), conform(seats, RAW_SEATS_SCHEMA),
            nested.cards_frame(parts))
