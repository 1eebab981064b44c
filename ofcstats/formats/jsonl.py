"""The native ``ofc-hand/1`` JSON Lines format (docs/format.md), parsed column-wise.

A large batch first goes through the compiled reader (:mod:`ofcstats.formats.scan`),
which reads the lines of the usual shape several times faster and leaves the others.
Those, and every line of a small batch, go to Arrow's JSON reader in one call with the
format's schema, which is strict: ``"seat": 2.5`` or ``"fantasyland": "yes"`` fails the
read instead of being guessed. A batch that fails is split in halves until the good
parts read; the few lines left over go through DuckDB's JSON functions, which read any
JSON and say what is wrong with each line. All three ways yield the same frames.
"""

from __future__ import annotations

import functools
import json
import threading

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from ofcstats.formats import nested, nesting, scan
from ofcstats.formats.base import batch_by_batch
from ofcstats.formats.lines import Data, LineBatch
from ofcstats.records import (
    KIND_NAMES,
    RAW_CARDS_SCHEMA,
    RAW_HANDS_SCHEMA,
    RAW_SEATS_SCHEMA,
    REJECTS_SCHEMA,
    RawBatch,
    conform,
    empty,
)
from ofcstats.rows import ROW_NAMES

NAME = "ofc-hand"
STANDALONE_BATCHES = True  # one hand a line
FORMAT_TAG = "ofc-hand/1"
KNOWN_KEYS = ("format", "hand_id", "session_id", "played_at", "variant", "ruleset",
              "point_value", "button", "players")
_ROWS = ROW_NAMES
_SMALLEST_SPLIT = 16  # below this many lines a failing piece goes to the line-by-line reader
_BLOCK = 1 << 20  # bytes Arrow parses as one block
# When the compiled reader (and the checks' compiled twin, which go with it) is worth its
# start: loading them takes about half a second of one core. Measured on 2026-12-03
# (whole process, the two settings in turns): a street-form file of 20 MB or a
# final-rows file of 25 MB loads as fast either way, one of 70 MB in 1.7 s with them
# against 2.4 s without; a file of 250 hands (343 KB) is parsed and checked in 13.7 ms
# with them against 19.6 ms, one of 5 hands in 11.3 against 13.9 ms. Compiling them
# (once per install, kept in numba's cache) takes about 40 seconds.
SCAN_BYTES = 4 << 10  # a batch this large may go through the compiled reader...
SCAN_LOAD = 32 << 20  # ...of a load this large (files begun, or bytes read), if compiled;
COMPILE_AFTER = 1 << 30  # compiled if need be once this much has been read

_CARDS = pa.list_(pa.string())
_STREET = pa.struct([(kind, _CARDS) for kind in KIND_NAMES])
_PLAYER = pa.struct([
    ("seat", pa.int64()), ("name", pa.string()), ("fantasyland", pa.bool_()),
    ("timed_out", pa.bool_()), ("surrendered", pa.bool_()), ("reported_points", pa.float64()),
    ("unit", pa.float64()),
    *[(row, _CARDS) for row in _ROWS], ("streets", pa.list_(_STREET)),
])
SCHEMA = pa.schema([
    ("format", pa.string()), ("hand_id", pa.string()), ("session_id", pa.string()),
    ("played_at", pa.string()), ("variant", pa.string()), ("ruleset", pa.string()),
    ("point_value", pa.float64()), ("button", pa.int64()), ("players", pa.list_(_PLAYER)),
])
_PARSE = pajson.ParseOptions(explicit_schema=SCHEMA, unexpected_field_behavior="infer")


def sniff(head: bytes) -> bool:
    """True when the first non-blank line is a JSON object tagged ``ofc-hand/1``."""
    first = _first_object(head)
    return first is not None and first.get("format") == FORMAT_TAG


def _first_object(head: bytes) -> dict[str, object] | None:
    """The first line of ``head`` that holds something, read as JSON (None when it is not
    an object); a line nested too deep to read is passed over, as reading rejects it."""
    for line in head.removeprefix(b"\xef\xbb\xbf").splitlines():
        if line.strip() and not len(nesting.too_deep(line, np.array([0, len(line)]))[0]):
            try:
                first = json.loads(line)
            except ValueError:
                return None
            return first if isinstance(first, dict) else None
    return None


def _objects_only(data: Data) -> bool:
    """Whether every line of ``data`` that holds something opens a JSON object. Arrow's
    JSON reader must not see any other: a line such as ``null`` crashes it (the whole
    process, pyarrow 26), where it should fail like any bad line."""
    view = np.frombuffer(data, dtype=np.uint8)
    starts = np.flatnonzero(view[:-1] == 10) + 1 if len(view) else view.astype(np.int64)
    starts = np.concatenate([np.zeros(1 if len(view) else 0, dtype=np.int64), starts])
    for at in starts[view[starts] != ord("{")]:  # (rare) blank, or starting with spaces
        end = data.find(b"\n", int(at))
        text = data[int(at):end if end >= 0 else len(data)]
        if text.strip() and not text.lstrip(b" \t\r").startswith(b"{"):
            return False
    return True


def read_arrow(data: Data, parse: pajson.ParseOptions, expected_rows: int) -> pa.Table:
    """Read newline-delimited JSON with a schema; fail unless every line became a row.
    Blocks of 1 MB are parsed on Arrow's threads; a batch of one block (a small file) is
    read on this thread, which spares the threads' cost."""
    if not _objects_only(data):
        raise pa.ArrowInvalid("a line is not a JSON object")
    options = pajson.ReadOptions(block_size=_BLOCK, use_threads=len(data) > _BLOCK)
    table = pajson.read_json(pa.BufferReader(data), parse_options=parse, read_options=options)
    if table.num_rows != expected_rows:
        raise pa.ArrowInvalid(f"read {table.num_rows} rows from {expected_rows} lines")
    return table.combine_chunks()


def readable(batch: LineBatch) -> np.ndarray:
    """Indices of a batch's lines that hold something and are UTF-8."""
    keep = ~batch.blank
    keep[batch.not_utf8] = False
    return np.flatnonzero(keep)


def split_read(batch: LineBatch, parse: pajson.ParseOptions, indices: np.ndarray | None = None
               ) -> tuple[list[tuple[np.ndarray, pa.Table]], np.ndarray, pl.DataFrame]:
    """Read a batch's non-blank UTF-8 lines (or those of ``indices`` only) with Arrow,
    halving failing pieces.

    Returns the pieces that read (line indices, table), the indices of lines left for
    a line-by-line reader, and the lines refused unread (``line``, ``raw``,
    ``reason``): those that are not UTF-8, and those nested deeper than
    :data:`~ofcstats.formats.nesting.MAX_DEPTH`, which no reader may see.
    """
    bad = batch.not_utf8
    every = readable(batch)
    whole = len(bad) == 0 and (indices is None or len(indices) == len(every))
    indices = every if indices is None else indices
    deep, depth = _too_deep(batch, indices, whole)
    if len(deep):
        indices = np.setdiff1d(indices, deep)
        whole = False
    good: list[tuple[np.ndarray, pa.Table]] = []
    left: list[np.ndarray] = []
    stack = [indices]
    while stack:
        piece = stack.pop()
        if not len(piece):
            continue
        try:
            data = batch.data if whole and len(piece) == len(indices) else batch.select(piece)
            good.append((piece, read_arrow(data, parse, len(piece))))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            if len(piece) <= _SMALLEST_SPLIT:
                left.append(piece)
            else:
                half = len(piece) // 2
                stack += [piece[half:], piece[:half]]
    refused = pl.DataFrame({
        "line": np.concatenate([bad, deep]).astype(np.int64) + batch.first_line,
        "raw": batch.texts(bad) + batch.texts(deep),
        "reason": ["line is not UTF-8 text"] * len(bad) + [
            f"JSON nested {d:,} levels deep, more than the {nesting.MAX_DEPTH} a line may "
            "have: it was not read" for d in depth.tolist()],
    }, schema={"line": pl.Int64, "raw": pl.String, "reason": pl.String}).sort("line")
    rest = np.sort(np.concatenate(left)) if left else np.zeros(0, dtype=np.int64)
    return good, rest, refused


def _too_deep(batch: LineBatch, indices: np.ndarray, whole: bool
              ) -> tuple[np.ndarray, np.ndarray]:
    """The lines of ``indices`` nested too deep to read (:mod:`ofcstats.formats.nesting`),
    and their depths; ``whole``: they are every line of the batch that holds something."""
    if not len(indices):
        return indices, indices
    if whole:  # (one pass over the batch as it is: blank lines nest 0 deep)
        deep, depth = nesting.too_deep(batch.data, batch.starts)
        return deep, depth
    lengths = batch.starts[indices + 1] - batch.starts[indices]
    at, depth = nesting.too_deep(batch.select(indices),
                                 np.concatenate([[0], np.cumsum(lengths)]))
    return indices[at], depth


def parse_batch(batch: LineBatch, source: str, con: duckdb.DuckDBPyConnection) -> RawBatch:
    """Parse one batch of lines: every non-blank line becomes a hand or a reject.

    A large batch goes through the compiled reader first (:mod:`ofcstats.formats.scan`,
    see :func:`use_compiled`); the lines it leaves, and every line of the others, go to
    Arrow's reader.
    """
    indices = readable(batch)
    parts = []
    compiled = use_compiled(len(batch.data))
    if compiled:
        scanned, indices = scan_lines(batch, indices, con)
        parts.append(scanned)
    good, rest, refused = split_read(batch, _PARSE, indices)
    parts += [_from_arrow(table, batch.first_line + piece, batch, piece, con)
              for piece, table in good]
    rejects = [_rejects(source, refused, pl.col("reason"))]
    if len(rest):
        slow, slow_rejects = _from_duckdb(batch, rest, source, con)
        parts.append(slow)
        rejects.append(slow_rejects)
    hands, seats, cards = combine(parts)
    return RawBatch(source=source, lines=batch, hands=hands, seats=seats, cards=cards,
                    rejects=pl.concat(rejects), compiled=compiled)


read_batches = batch_by_batch(parse_batch)
"""Parse a file's batches in order, each on its own."""


def combine(parts: list[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]]
            ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """One set of raw frames from several, hands renumbered in line order."""
    if not parts:
        return empty(RAW_HANDS_SCHEMA), empty(RAW_SEATS_SCHEMA), empty(RAW_CARDS_SCHEMA)
    if len(parts) == 1:
        return parts[0]
    hands, seats, cards, base = [], [], [], 0
    for h, s, c in parts:
        hands.append(h.with_columns(pl.col("hand") + base))
        seats.append(s.with_columns(pl.col("hand") + base))
        cards.append(c.with_columns(pl.col("hand") + base))
        base += h.height
    all_hands = pl.concat(hands).sort("line")
    order = all_hands.select(old="hand", new=pl.int_range(pl.len(), dtype=pl.Int64))
    renumber = {"hand": pl.col("hand").replace_strict(order["old"], order["new"])}
    return (
        all_hands.with_columns(hand=order["new"]),
        pl.concat(seats).with_columns(**renumber).sort("hand", "seat_index"),
        conform(pl.concat(cards).with_columns(**renumber), RAW_CARDS_SCHEMA).sort(*card_order()),
    )


def card_order() -> list[pl.Expr]:
    """The sort keys of the cards frame (see RAW_CARDS_SCHEMA)."""
    return [pl.col("kind"), pl.col("street") == 0, pl.col("hand"), pl.col("seat_index"),
            pl.col("street"), pl.col("pos")]


def _from_arrow(table: pa.Table, lines: np.ndarray, batch: LineBatch, piece: np.ndarray,
                con: duckdb.DuckDBPyConnection
                ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    n = table.num_rows
    scalars = pl.from_arrow(table.select([k for k in KNOWN_KEYS if k != "players"]))
    assert isinstance(scalars, pl.DataFrame)
    players = nested.flatten(table.column("players"))
    extra_keys = [name for name in table.column_names if name not in KNOWN_KEYS]
    extra = _extra(batch.texts(piece), con) if extra_keys else \
        pl.Series("extra", [None] * n, dtype=pl.String)
    hands = scalars.with_columns(
        hand=pl.int_range(n, dtype=pl.Int64),
        line=pl.Series(lines, dtype=pl.Int64),
        n_lines=pl.lit(1, dtype=pl.Int64),
        extra=extra,
        error=hand_errors(pl.Series(players.valid)),
    )
    seat_structs = players.values
    seat_hand, seat_index = players.parent, players.pos + 1
    seats = seat_frame(seat_structs, seat_hand, seat_index)
    streets = nested.flatten(nested.field(seat_structs, "streets"))
    street_hand, street_seat = seat_hand[streets.parent], seat_index[streets.parent]
    street_no = streets.pos + 1
    zeros = np.zeros(len(seat_hand), dtype=np.int64)
    parts = []
    for kind, name in enumerate(KIND_NAMES):
        parts.append((kind, nested.card_list(nested.field(streets.values, name)),
                      street_hand, street_seat, street_no))
        if name in _ROWS:
            parts.append((kind, nested.card_list(nested.field(seat_structs, name)),
                          seat_hand, seat_index, zeros))
    return (conform(hands, RAW_HANDS_SCHEMA), seats, nested.cards_frame(parts))


class _Use:
    """What the process knows of the compiled reader (its parsing threads share it)."""

    lock = threading.Lock()
    read = 0  # bytes of large batches so far
    expected = 0  # bytes of the files begun so far, as on disk (:func:`expect`)
    compiled: bool | None = None  # None: not looked up yet


def expect(size: int) -> None:
    """A file of ``size`` bytes (as on disk) is about to be read: a large one goes
    through the compiled reader from its first large batch."""
    with _Use.lock:
        _Use.expected += size


def use_compiled(size: int) -> bool:
    """Whether a batch of ``size`` bytes goes through the compiled reader: not a small
    one, nor any of a load too small to pay for loading it (:data:`SCAN_LOAD`: the sizes
    of the files begun, or the bytes read, which a stream or a compressed file counts);
    then only if it is compiled already, unless so much has been read that compiling it
    pays."""
    if size < SCAN_BYTES:
        return False
    with _Use.lock:
        _Use.read += size
        if max(_Use.read, _Use.expected) < SCAN_LOAD:
            return False
        if _Use.compiled is None:
            _Use.compiled = scan.compiled() and _checks_compiled()
        return _Use.compiled or _Use.read >= COMPILE_AFTER


@functools.cache
def _shape() -> scan.Shape:
    """The format's schema as the compiled reader takes it."""
    def level(struct: pa.StructType | pa.Schema) -> scan.Level:
        fields = list(struct)
        return scan.Level(keys=tuple(f.name for f in fields),
                          holds=tuple(_HOLDS.get(f.type, -1) for f in fields),
                          kinds=tuple(KIND_NAMES.index(f.name) if f.type == _CARDS else -1
                                      for f in fields))

    return scan.Shape(hand=level(SCHEMA), seat=level(_PLAYER), street=level(_STREET),
                      pair=nested.PAIR)


_HOLDS = {pa.string(): scan.TEXT, pa.int64(): scan.WHOLE, pa.float64(): scan.NUMBER,
          pa.bool_(): scan.FLAG, _CARDS: scan.CARDS, pa.list_(_PLAYER): scan.SEATS,
          pa.list_(_STREET): scan.STREETS}


def scan_lines(batch: LineBatch, indices: np.ndarray, con: duckdb.DuckDBPyConnection
               ) -> tuple[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame], np.ndarray]:
    """Read the lines of ``indices`` with the compiled reader: the frames of the lines
    it read (hands numbered from 0) and the indices of those it left. Keys the format
    does not know are kept in ``extra`` as the other readers keep them."""
    shape = _shape()
    seen = scan.scan(batch.data, batch.starts[indices], batch.starts[indices + 1] - 1, shape)
    ok = seen.ok
    as_read = True  # every line the scan read is kept
    while True:
        hand_rows, seat_rows = np.flatnonzero(ok), np.flatnonzero(ok[seen.seat_line])
        hand = _values(batch.data, shape.hand, seen.hand_state[hand_rows],
                       seen.hand_a[hand_rows], seen.hand_b[hand_rows])
        seat = _values(batch.data, shape.seat, seen.seat_state[seat_rows],
                       seen.seat_a[seat_rows], seen.seat_b[seat_rows])
        # Arrow's JSON reader refuses a number too big for a double: so does this one.
        too_big = np.concatenate([hand_rows[_not_finite(hand)],
                                  seen.seat_line[seat_rows[_not_finite(seat)]]])
        if not len(too_big):
            break
        ok[too_big] = False
        as_read = False
    hand_of_line = np.cumsum(ok) - 1
    players = shape.hand.keys.index("players")
    hands = pl.DataFrame({name: hand[name] for name in KNOWN_KEYS if name != "players"}
                         ).with_columns(
        hand=pl.int_range(len(hand_rows), dtype=pl.Int64),
        line=pl.Series(indices[hand_rows] + batch.first_line, dtype=pl.Int64),
        n_lines=pl.lit(1, dtype=pl.Int64),
        extra=_extras(batch, indices[hand_rows], seen.extra[hand_rows], con),
        error=hand_errors(pl.Series(seen.hand_state[hand_rows, players] == scan.PRESENT)),
    )

    def given(name: str) -> np.ndarray:
        return seen.seat_state[seat_rows, shape.seat.keys.index(name)] == scan.PRESENT

    seats = finish_seats(pl.DataFrame({
        "hand": hand_of_line[seen.seat_line[seat_rows]],
        "seat_index": seen.seat_index[seat_rows],
        **{name: seat[key] for name, key in _SEAT_COLUMNS.items()},
        "has_streets": given("streets"),
        "n_streets": seen.seat_streets[seat_rows],
        "has_rows": given("top") | given("middle") | given("bottom"),
    }))
    columns = dict(zip(("hand", "seat_index", "street", "kind", "pos", "code"),
                       scan.card_columns(ok, hand_of_line, seen, len(KIND_NAMES),
                                         as_read=as_read), strict=True))
    cards = pl.DataFrame(columns).with_columns(text=pl.lit(None, dtype=pl.String))
    frames = (conform(hands, RAW_HANDS_SCHEMA), seats, conform(cards, RAW_CARDS_SCHEMA))
    return frames, indices[~ok]


def compile_reader() -> None:
    """Compile the compiled reader and the checks' compiled twin now (or load them from
    numba's cache): the first large file on a new install otherwise waits for them,
    about 40 seconds."""
    from ofcstats.validate import compile_checks  # noqa: PLC0415 (validate imports the store)

    batch = LineBatch(first_line=1, data=b'{"players": [{"top": ["Ah"], "name": "a"}]}\n')
    scan_lines(batch, readable(batch), duckdb.connect())
    compile_checks()


def _checks_compiled() -> bool:
    from ofcstats.validate import checks_compiled  # noqa: PLC0415 (validate imports the store)

    return checks_compiled()


def _values(data: Data, level: scan.Level, state: np.ndarray, first: np.ndarray,
            end: np.ndarray) -> dict[str, pa.Array]:
    """The strings, numbers and booleans of one level's rows, by key."""
    out = {}
    for k, (key, holds) in enumerate(zip(level.keys, level.holds, strict=True)):
        if holds in (scan.TEXT, scan.NUMBER):
            texts = _texts(data, state[:, k], first[:, k], end[:, k])
            out[key] = texts.cast(pa.float64()) if holds == scan.NUMBER else texts
        elif holds in (scan.WHOLE, scan.FLAG):
            values = first[:, k].astype(bool) if holds == scan.FLAG else first[:, k]
            out[key] = pa.array(values, mask=state[:, k] != scan.PRESENT)
    return out


def _not_finite(values: dict[str, pa.Array]) -> np.ndarray:
    """Rows with a number that is not finite (too big for a double)."""
    rows = np.zeros(len(next(iter(values.values()))), dtype=bool)
    for array in values.values():
        if pa.types.is_floating(array.type):
            rows |= ~np.isfinite(array.fill_null(0).to_numpy())
    return rows


def _extras(batch: LineBatch, lines: np.ndarray, has_extra: np.ndarray,
            con: duckdb.DuckDBPyConnection) -> pl.Series:
    """The ``extra`` object of each line: null unless it has keys the format does not
    know."""
    if not has_extra.any():
        return pl.Series("extra", [None] * len(lines), dtype=pl.String)
    some = np.flatnonzero(has_extra)
    found = _extra(batch.texts(lines[some]), con)
    at = pl.Series(np.full(len(lines), -1, dtype=np.int64)).scatter(some, np.arange(len(some)))
    return found.gather(at.to_numpy()).set(at == -1, None) if len(some) < len(lines) \
        else found


_SEAT_COLUMNS = {"seat": "seat", "player": "name", "fantasyland": "fantasyland",
                 "timed_out": "timed_out", "surrendered": "surrendered",
                 "reported_points": "reported_points", "unit": "unit"}


def _texts(data: Data, state: np.ndarray, first: np.ndarray, end: np.ndarray
           ) -> pa.LargeStringArray:
    """Strings (or numbers' texts) from byte spans of ``data``; null unless present."""
    present = state == scan.PRESENT
    offsets, chars = scan.gather(data, np.where(present, first, 0), np.where(present, end, 0))
    return pa.LargeStringArray.from_buffers(
        len(state), pa.py_buffer(offsets), pa.py_buffer(chars),
        pa.py_buffer(np.packbits(present, bitorder="little")))


def hand_errors(has_players: pl.Series) -> pl.Expr:
    """What a hand read by Arrow can still lack (types were checked by the read)."""
    checks: list[tuple[pl.Expr, str | pl.Expr]] = [
        (pl.col("format").is_null(),
         'format is missing: every line starts with "format": "ofc-hand/1"'),
        (pl.col("format").is_not_null() & (pl.col("format") != FORMAT_TAG),
         pl.format('format is "{}", expected "ofc-hand/1"', pl.col("format"))),
        (pl.col("hand_id").fill_null("") == "", "hand_id is missing or not a string"),
        (pl.col("variant").is_null(), "variant is missing or not a string"),
        (~pl.lit(has_players), "players is missing or not a list of seats"),
    ]
    return join_errors(checks)


def join_errors(checks: list[tuple[pl.Expr, str | pl.Expr]]) -> pl.Expr:
    """Every message whose condition holds, joined by '; ', or null."""
    messages = [pl.when(cond).then(msg if isinstance(msg, pl.Expr) else pl.lit(msg))
                for cond, msg in checks]
    joined = pl.concat_str(messages, separator="; ", ignore_nulls=True)
    return pl.when(joined != "").then(joined)


def seat_frame(seat_structs: pa.Array, seat_hand: np.ndarray, seat_index: np.ndarray,
               seat_offset: int = 0) -> pl.DataFrame:
    """The seats frame from an Arrow array of ofc-hand/1 player objects."""
    def col(name: str) -> pa.Array:
        return nested.field(seat_structs, name)

    streets = col("streets")
    return finish_seats(pl.DataFrame({
        "hand": seat_hand, "seat_index": seat_index,
        **{name: nested.series(col(key)) for name, key in _SEAT_COLUMNS.items()},
        "has_streets": streets.is_valid().to_numpy(zero_copy_only=False),
        "n_streets": nested.series(pc.list_value_length(streets)),
        "has_rows": (nested.series(col("top")).is_not_null()
                     | nested.series(col("middle")).is_not_null()
                     | nested.series(col("bottom")).is_not_null()),
    }), seat_offset)


def finish_seats(frame: pl.DataFrame, seat_offset: int = 0) -> pl.DataFrame:
    """The seats frame from a seat's values as read: defaults filled, errors found."""
    frame = frame.with_columns(
        pl.col("seat") + seat_offset,
        pl.col("fantasyland", "timed_out", "surrendered").fill_null(False),
        pl.col("n_streets").fill_null(0),
        error=seat_errors(),
    )
    return conform(frame, RAW_SEATS_SCHEMA)


def seat_errors() -> pl.Expr:
    """What a seat read by Arrow can still lack."""
    return join_errors([
        (pl.col("seat").is_null(),
         pl.format("seat number missing for player {} of the list", pl.col("seat_index"))),
        (pl.col("player").fill_null("") == "",
         "a seat has no name (or a name that is not a string)"),
        (~pl.col("has_streets") & ~pl.col("has_rows"),
         "a seat has neither streets nor final rows (top, middle, bottom)"),
    ])


# The line-by-line reader: DuckDB's JSON functions, for lines Arrow would not read.

_INT = ("UBIGINT", "BIGINT")
_NUMBER = ("UBIGINT", "BIGINT", "DOUBLE")
_BOOL = ("BOOLEAN",)
_TEXT = ("VARCHAR",)
_LIST = ("ARRAY",)
_PLAYER_KEYS = ("seat", "name", "fantasyland", "timed_out", "surrendered", "reported_points",
                "unit",
                *_ROWS, "streets")
_HAND = json.dumps({
    **{key: "JSON" for key in KNOWN_KEYS if key != "players"},
    "players": [dict.fromkeys(_PLAYER_KEYS, "JSON")],
})
_STREETS = json.dumps([dict.fromkeys(KIND_NAMES, "JSON")])


def _types(json_types: tuple[str, ...]) -> str:
    return ", ".join(f"'{t}'" for t in json_types)


def _value(leaf: str, sql_type: str, json_types: tuple[str, ...]) -> str:
    """SQL: a JSON leaf as ``sql_type`` when it has one of ``json_types``, else null."""
    if sql_type == "VARCHAR":
        return f"CASE WHEN json_type({leaf}) = 'VARCHAR' THEN {leaf} ->> '$' END"
    return (f"CASE WHEN json_type({leaf}) IN ({_types(json_types)}) "
            f"THEN TRY_CAST(CAST({leaf} AS VARCHAR) AS {sql_type}) END")


def _present(leaf: str) -> str:
    return f"coalesce(json_type({leaf}), 'NULL') <> 'NULL'"


def _wrong(leaf: str, json_types: tuple[str, ...]) -> str:
    """SQL: the leaf is present, not null, and of none of ``json_types``."""
    return f"coalesce(json_type({leaf}) NOT IN ({_types(json_types)}, 'NULL'), false)"


def _errors(problems: list[tuple[str, str]]) -> str:
    """SQL: every message whose condition holds, joined by '; ', or null."""
    cases = ", ".join(f"CASE WHEN {cond} THEN {msg} END" for cond, msg in problems)
    return f"nullif(concat_ws('; ', {cases}), '')"


def _hands_sql() -> str:
    hand_id = (f"CASE WHEN json_type(h.hand_id) = 'VARCHAR' THEN h.hand_id ->> '$' "
               f"WHEN json_type(h.hand_id) IN ({_types(_INT)}) "
               f"THEN CAST(h.hand_id AS VARCHAR) END")
    error = _errors([
        (f"NOT {_present('h.format')}",
         "'format is missing: every line starts with \"format\": \"ofc-hand/1\"'"),
        (f"{_present('h.format')} AND coalesce({_value('h.format', 'VARCHAR', _TEXT)}, '') "
         f"<> 'ofc-hand/1'",
         "'format is ' || CAST(h.format AS VARCHAR) || ', expected \"ofc-hand/1\"'"),
        (f"coalesce({hand_id}, '') = ''", "'hand_id is missing or not a string'"),
        (f"{_value('h.variant', 'VARCHAR', _TEXT)} IS NULL",
         "'variant is missing or not a string'"),
        ("coalesce(json_type(h.players), '') <> 'ARRAY'",
         "'players is missing or not a list of seats'"),
        (_wrong("h.point_value", _NUMBER), "'point_value must be a number'"),
        (_wrong("h.button", _INT) + f" OR ({_present('h.button')} AND "
         f"{_value('h.button', 'BIGINT', _INT)} IS NULL)", "'button must be a seat number'"),
        (_wrong("h.session_id", _TEXT), "'session_id must be a string'"),
        (_wrong("h.played_at", _TEXT), "'played_at must be an ISO 8601 text'"),
        (_wrong("h.ruleset", _TEXT), "'ruleset must be a string'"),
    ])
    return f"""
        SELECT key AS line, {hand_id} AS hand_id,
               {_value('h.session_id', 'VARCHAR', _TEXT)} AS session_id,
               {_value('h.played_at', 'VARCHAR', _TEXT)} AS played_at,
               {_value('h.variant', 'VARCHAR', _TEXT)} AS variant,
               {_value('h.ruleset', 'VARCHAR', _TEXT)} AS ruleset,
               {_value('h.point_value', 'DOUBLE', _NUMBER)} AS point_value,
               {_value('h.button', 'BIGINT', _INT)} AS button,
               {_extra_expr()} AS extra, {error} AS error
        FROM parsed
    """


def _extra_expr() -> str:
    # Unknown top-level keys are kept as a JSON object, never an error (docs/format.md);
    # JSON pointers address them whatever characters the keys hold.
    pointer = "'/' || replace(replace(k, '~', '~0'), '/', '~1')"
    return (
        "CASE WHEN len(unknown) > 0 THEN '{' || array_to_string(list_transform(unknown, "
        f"lambda k: to_json(k) || ':' || CAST(json_extract(raw, {pointer}) AS VARCHAR)), ',') "
        "|| '}' END"
    )


def _unknown_keys() -> str:
    known = ", ".join(f"'{k}'" for k in KNOWN_KEYS)
    return f"list_filter(json_keys(raw), lambda k: k NOT IN ({known}))"


def _extra(texts: list[str], con: duckdb.DuckDBPyConnection) -> pl.Series:
    """The ``extra`` object of each line (all of them JSON objects), in order."""
    lines = pl.DataFrame({"i": pl.int_range(len(texts), eager=True), "raw": texts})
    con.register("extra_lines", lines)
    try:
        out = con.sql(f"""
            SELECT i, {_extra_expr()} AS extra
            FROM (SELECT i, raw, {_unknown_keys()} AS unknown FROM extra_lines) ORDER BY i
        """).pl()
    finally:
        con.unregister("extra_lines")
    return out.get_column("extra").cast(pl.String)


def _seats_sql() -> str:
    name = _value("p.name", "VARCHAR", _TEXT)
    has_rows = " OR ".join(_present(f"p.{row}") for row in _ROWS)
    error = _errors([
        (f"NOT {_present('p.seat')}",
         "'seat number missing for player ' || seat_index || ' of the list'"),
        (_wrong("p.seat", _INT) + f" OR ({_present('p.seat')} AND "
         f"{_value('p.seat', 'BIGINT', _INT)} IS NULL)",
         "'seat ' || CAST(p.seat AS VARCHAR) || ' is not a whole number'"),
        (f"coalesce({name}, '') = ''", "'a seat has no name (or a name that is not a string)'"),
        (_wrong("p.fantasyland", _BOOL), "'fantasyland must be true or false'"),
        (_wrong("p.timed_out", _BOOL), "'timed_out must be true or false'"),
        (_wrong("p.surrendered", _BOOL), "'surrendered must be true or false'"),
        (_wrong("p.reported_points", _NUMBER), "'reported_points must be a number'"),
        (_wrong("p.unit", _NUMBER), "'unit must be a number'"),
        (_wrong("p.streets", _LIST), "'streets must be a list of streets'"),
        *[(_wrong(f"p.{row}", _LIST), f"'{row} must be a list of cards'") for row in _ROWS],
        (f"NOT {_present('p.streets')} AND NOT ({has_rows})",
         "'a seat has neither streets nor final rows (top, middle, bottom)'"),
    ])
    return f"""
        SELECT key AS line, seat_index, {_value('p.seat', 'BIGINT', _INT)} AS seat,
               {name} AS player,
               coalesce({_value('p.fantasyland', 'BOOLEAN', _BOOL)}, false) AS fantasyland,
               coalesce({_value('p.timed_out', 'BOOLEAN', _BOOL)}, false) AS timed_out,
               coalesce({_value('p.surrendered', 'BOOLEAN', _BOOL)}, false) AS surrendered,
               {_value('p.reported_points', 'DOUBLE', _NUMBER)} AS reported_points,
               {_value('p.unit', 'DOUBLE', _NUMBER)} AS unit,
               coalesce(json_type(p.streets) = 'ARRAY', false) AS has_streets,
               CASE WHEN json_type(p.streets) = 'ARRAY' THEN json_array_length(p.streets)
                    ELSE 0 END AS n_streets,
               ({has_rows}) AS has_rows,
               {error} AS error
        FROM players
    """


def _cards_sql() -> str:
    def listed(source: str, street: str, kind: int, column: str) -> str:
        street_col = "street," if street == "street" else ""
        return f"""
            SELECT key AS line, seat_index, {street} AS street, {kind} AS kind,
                   generate_subscripts(c, 1) - 1 AS pos, unnest(c) AS text
            FROM (SELECT key, seat_index, {street_col}
                         from_json({column}, '["JSON"]') AS c
                  FROM {source} WHERE json_type({column}) = 'ARRAY')
        """

    parts = [listed("streets", "street", kind, f"s.{name}")
             for kind, name in enumerate(KIND_NAMES)]
    parts += [listed("players", "0", KIND_NAMES.index(row), f"p.{row}") for row in _ROWS]
    return f"""
        WITH streets AS (
            SELECT key, seat_index, unnest(s) AS s, generate_subscripts(s, 1) AS street
            FROM (SELECT key, seat_index, from_json(p.streets, '{_STREETS}') AS s
                  FROM players WHERE json_type(p.streets) = 'ARRAY')
        )
        SELECT line, seat_index, street, kind, pos,
               CASE WHEN json_type(text) = 'VARCHAR' THEN text ->> '$'
                    ELSE CAST(text AS VARCHAR) END AS text
        FROM ({" UNION ALL ".join(parts)})
    """


def _from_duckdb(batch: LineBatch, indices: np.ndarray, source: str,
                 con: duckdb.DuckDBPyConnection
                 ) -> tuple[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame], pl.DataFrame]:
    """Parse lines one by one with DuckDB: slower, but says what is wrong with each."""
    lines = pl.DataFrame({"key": (indices + batch.first_line).astype(np.int64),
                          "raw": batch.texts(indices)})
    con.register("batch_lines", lines)
    try:
        con.execute("""
            CREATE OR REPLACE TEMP TABLE checked AS
            SELECT key, raw, json_valid(raw) AS ok FROM batch_lines
        """)
    finally:
        con.unregister("batch_lines")
    bad_json = con.sql("SELECT key, raw FROM checked WHERE NOT ok ORDER BY key").pl()
    con.execute("""
        CREATE OR REPLACE TEMP TABLE typed AS
        SELECT key, raw, json_type(raw) AS t FROM checked WHERE ok
    """)
    not_objects = con.sql("SELECT key, raw FROM typed WHERE t <> 'OBJECT' ORDER BY key").pl()
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE parsed AS
        SELECT key, raw, from_json(raw, '{_HAND}') AS h, {_unknown_keys()} AS unknown
        FROM typed WHERE t = 'OBJECT'
    """)
    hands = con.sql(_hands_sql()).pl()
    con.execute("""
        CREATE OR REPLACE TEMP TABLE players AS
        SELECT key, unnest(players) AS p, generate_subscripts(players, 1) AS seat_index
        FROM (SELECT key, from_json(h.players, '["JSON"]') AS players FROM parsed
              WHERE json_type(h.players) = 'ARRAY')
    """)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE players AS
        SELECT key, seat_index, from_json(p, '{json.dumps(json.loads(_HAND)["players"][0])}') AS p
        FROM players
    """)
    seats = con.sql(_seats_sql()).pl()
    cards = con.sql(_cards_sql()).pl()
    for table in ("checked", "typed", "parsed", "players"):
        con.execute(f"DROP TABLE IF EXISTS {table}")

    hands = hands.sort("line").with_columns(hand=pl.int_range(pl.len(), dtype=pl.Int64),
                                            n_lines=pl.lit(1, dtype=pl.Int64))
    number = hands.select("line", "hand")
    seats = seats.join(number, on="line").drop("line")
    cards = cards.join(number, on="line").drop("line") if cards.height else \
        cards.drop("line").with_columns(hand=pl.lit(0, dtype=pl.Int64))
    codes = nested.card_codes(cards.get_column("text").to_arrow())
    cards = cards.with_columns(code=pl.Series(codes)).with_columns(
        code=pl.when(pl.col("code") == nested.NOT_A_CARD).then(None).otherwise(pl.col("code")),
        text=pl.when(pl.col("code") == nested.NOT_A_CARD)
        .then(pl.col("text").fill_null("null")),
    )
    rejects = pl.concat([
        _rejects(source, bad_json,
                 pl.col("raw").map_elements(_json_problem, return_dtype=pl.String)),
        _rejects(source, not_objects, pl.lit("a hand is a JSON object ({...}); this line is not")),
    ])
    frames = (conform(hands, RAW_HANDS_SCHEMA),
              conform(seats, RAW_SEATS_SCHEMA).sort("hand", "seat_index"),
              conform(cards, RAW_CARDS_SCHEMA).sort(*card_order()))
    return frames, rejects


def _json_problem(raw: str) -> str:
    """Python's parser says what is wrong; it runs only on lines DuckDB already rejected."""
    try:
        json.loads(raw)
    except json.JSONDecodeError as error:
        cut_short = error.pos >= len(raw.rstrip()) - 1
        hint = "; the line looks cut short" if cut_short else ""
        return f"not valid JSON: {error.msg} at column {error.colno}{hint}"
    return "not valid JSON"


def _rejects(source: str, frame: pl.DataFrame, reason: pl.Expr) -> pl.DataFrame:
    if "line" not in frame.columns:
        frame = frame.rename({"key": "line"})
    return frame.select(
        pl.lit(source).alias("source"),
        pl.col("line"),
        pl.lit(None, dtype=pl.String).alias("hand_id"),
        reason.alias("reason"),
        pl.col("raw"),
    ).pipe(conform, REJECTS_SCHEMA)
