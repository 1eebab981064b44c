"""The native ``ofc-hand/1`` JSON Lines format (FORMAT.md), parsed column-wise by DuckDB.

A batch of lines goes to DuckDB as one column; ``from_json`` turns each line into
nested lists, which are unnested into the hands, seats and cards frames of a
:class:`~ofcstats.records.RawBatch`. Scalars are read as JSON and cast strictly, so
``"seat": 2.5`` or ``"fantasyland": "yes"`` is an error rather than a guess.
"""

from __future__ import annotations

import json

import duckdb
import polars as pl

from ofcstats.formats.lines import LineBatch
from ofcstats.records import (
    RAW_CARDS_SCHEMA,
    RAW_HANDS_SCHEMA,
    RAW_SEATS_SCHEMA,
    REJECTS_SCHEMA,
    RawBatch,
)

NAME = "ofc-hand"
FORMAT_TAG = "ofc-hand/1"
KNOWN_KEYS = ("format", "hand_id", "session_id", "played_at", "variant", "ruleset",
              "point_value", "button", "players")
_KINDS = ("dealt", "top", "middle", "bottom", "discard")
_ROWS = ("top", "middle", "bottom")
_HAND = json.dumps({
    **{key: "JSON" for key in KNOWN_KEYS if key != "players"},
    "players": [{key: "JSON" for key in (
        "seat", "name", "fantasyland", "timed_out", "surrendered", "reported_points",
        "top", "middle", "bottom", "streets")}],
})
_STREETS = json.dumps([{kind: "JSON" for kind in _KINDS}])
_INT = ("UBIGINT", "BIGINT")
_NUMBER = ("UBIGINT", "BIGINT", "DOUBLE")
_BOOL = ("BOOLEAN",)
_TEXT = ("VARCHAR",)
_LIST = ("ARRAY",)


def sniff(head: bytes) -> bool:
    """True when the first non-blank line is a JSON object tagged ``ofc-hand/1``."""
    for line in head.splitlines():
        if line.strip():
            try:
                first = json.loads(line)
            except ValueError:
                return False
            return isinstance(first, dict) and first.get("format") == FORMAT_TAG
    return False


def _types(json_types: tuple[str, ...]) -> str:
    return ", ".join(f"'{t}'" for t in json_types)


def _value(leaf: str, sql_type: str, json_types: tuple[str, ...]) -> str:
    """SQL: a JSON leaf as ``sql_type`` when it has one of ``json_types``, else null."""
    if sql_type == "VARCHAR":
        return f"CASE WHEN json_type({leaf}) = 'VARCHAR' THEN {leaf} ->> '$' END"
    return (f"CASE WHEN json_type({leaf}) IN ({_types(json_types)}) "
            f"THEN CAST(CAST({leaf} AS VARCHAR) AS {sql_type}) END")


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
        ("h.format IS NULL",
         "'format is missing: every line starts with \"format\": \"ofc-hand/1\"'"),
        (f"h.format IS NOT NULL AND coalesce({_value('h.format', 'VARCHAR', _TEXT)}, '') "
         f"<> 'ofc-hand/1'",
         "'format is ' || CAST(h.format AS VARCHAR) || ', expected \"ofc-hand/1\"'"),
        (f"coalesce({hand_id}, '') = ''", "'hand_id is missing or not a string'"),
        (f"{_value('h.variant', 'VARCHAR', _TEXT)} IS NULL",
         "'variant is missing or not a string'"),
        (f"coalesce(json_type(h.players), '') <> 'ARRAY'",
         "'players is missing or not a list of seats'"),
        (_wrong("h.point_value", _NUMBER), "'point_value must be a number'"),
        (_wrong("h.button", _INT), "'button must be a seat number'"),
        (_wrong("h.session_id", _TEXT), "'session_id must be a string'"),
        (_wrong("h.played_at", _TEXT), "'played_at must be an ISO 8601 text'"),
        (_wrong("h.ruleset", _TEXT), "'ruleset must be a string'"),
    ])
    # Unknown top-level keys are kept as a JSON object, never an error (FORMAT.md);
    # JSON pointers address them whatever characters the keys hold.
    pointer = "'/' || replace(replace(k, '~', '~0'), '/', '~1')"
    extra = (
        "CASE WHEN len(unknown) > 0 THEN '{' || array_to_string(list_transform(unknown, "
        f"lambda k: to_json(k) || ':' || CAST(json_extract(raw, {pointer}) AS VARCHAR)), ',') "
        "|| '}' END"
    )
    return f"""
        SELECT key, key AS line, {hand_id} AS hand_id,
               {_value('h.session_id', 'VARCHAR', _TEXT)} AS session_id,
               {_value('h.played_at', 'VARCHAR', _TEXT)} AS played_at,
               {_value('h.variant', 'VARCHAR', _TEXT)} AS variant,
               {_value('h.ruleset', 'VARCHAR', _TEXT)} AS ruleset,
               {_value('h.point_value', 'DOUBLE', _NUMBER)} AS point_value,
               {_value('h.button', 'BIGINT', _INT)} AS button,
               {extra} AS extra, raw, {error} AS error
        FROM parsed
    """


def _seats_sql() -> str:
    name = _value("p.name", "VARCHAR", _TEXT)
    error = _errors([
        ("p.seat IS NULL", "'seat number missing for player ' || seat_index || ' of the list'"),
        (_wrong("p.seat", _INT), "'seat ' || CAST(p.seat AS VARCHAR) || ' is not a whole number'"),
        (f"coalesce({name}, '') = ''", "'a seat has no name (or a name that is not a string)'"),
        (_wrong("p.fantasyland", _BOOL), "'fantasyland must be true or false'"),
        (_wrong("p.timed_out", _BOOL), "'timed_out must be true or false'"),
        (_wrong("p.surrendered", _BOOL), "'surrendered must be true or false'"),
        (_wrong("p.reported_points", _NUMBER), "'reported_points must be a number'"),
        (_wrong("p.streets", _LIST), "'streets must be a list of streets'"),
        *[(_wrong(f"p.{row}", _LIST), f"'{row} must be a list of cards'") for row in _ROWS],
        ("p.streets IS NULL AND p.top IS NULL AND p.middle IS NULL AND p.bottom IS NULL",
         "'a seat has neither streets nor final rows (top, middle, bottom)'"),
    ])
    return f"""
        SELECT key, seat_index, {_value('p.seat', 'BIGINT', _INT)} AS seat, {name} AS player,
               coalesce({_value('p.fantasyland', 'BOOLEAN', _BOOL)}, false) AS fantasyland,
               coalesce({_value('p.timed_out', 'BOOLEAN', _BOOL)}, false) AS timed_out,
               coalesce({_value('p.surrendered', 'BOOLEAN', _BOOL)}, false) AS surrendered,
               {_value('p.reported_points', 'DOUBLE', _NUMBER)} AS reported_points,
               coalesce(json_type(p.streets) = 'ARRAY', false) AS has_streets,
               (p.top IS NOT NULL OR p.middle IS NOT NULL OR p.bottom IS NOT NULL) AS has_rows,
               {error} AS error
        FROM players
    """


def _cards_sql() -> str:
    def listed(source: str, street: str, kind: str, column: str) -> str:
        return f"""
            SELECT key, seat_index, {street} AS street, '{kind}' AS kind,
                   generate_subscripts(c, 1) AS pos, unnest(c) AS text
            FROM (SELECT key, seat_index, {street_col(street)}
                         from_json({column}, '["VARCHAR"]') AS c
                  FROM {source} WHERE json_type({column}) = 'ARRAY')
        """

    def street_col(street: str) -> str:
        return "street," if street == "street" else ""

    parts = [listed("streets", "street", kind, f"s.{kind}") for kind in _KINDS]
    parts += [listed("seat_rows", "0", row, f"p.{row}") for row in _ROWS]
    return f"""
        WITH seat_rows AS (
            SELECT key, seat_index, p FROM players
        ),
        streets AS (
            SELECT key, seat_index, unnest(s) AS s, generate_subscripts(s, 1) AS street
            FROM (SELECT key, seat_index, from_json(p.streets, '{_STREETS}') AS s
                  FROM seat_rows WHERE json_type(p.streets) = 'ARRAY')
        )
        {" UNION ALL ".join(parts)}
    """


def parse_batch(batch: LineBatch, source: str, con: duckdb.DuckDBPyConnection) -> RawBatch:
    """Parse one batch of lines: every non-blank line becomes a hand or a reject."""
    lines = pl.DataFrame({
        "key": pl.int_range(batch.first_line, batch.first_line + len(batch.texts), eager=True),
        "raw": pl.Series(batch.texts, dtype=pl.String).str.strip_chars_end("\r"),
    })
    if batch.not_utf8:
        bad = pl.Series(batch.not_utf8, dtype=pl.Int64) + batch.first_line
        not_utf8 = lines.filter(pl.col("key").is_in(bad.implode()))
        lines = lines.filter(~pl.col("key").is_in(bad.implode()))
    else:
        not_utf8 = lines.clear()
    lines = lines.filter(pl.col("raw").str.strip_chars() != "")
    con.register("batch_lines", lines)
    con.execute("""
        CREATE OR REPLACE TEMP TABLE checked AS
        SELECT key, raw, json_valid(raw) AS ok FROM batch_lines
    """)
    con.unregister("batch_lines")
    bad_json = con.sql("SELECT key, raw FROM checked WHERE NOT ok").pl()
    con.execute("""
        CREATE OR REPLACE TEMP TABLE typed AS
        SELECT key, raw, json_type(raw) AS t FROM checked WHERE ok
    """)
    not_objects = con.sql("SELECT key, raw FROM typed WHERE t <> 'OBJECT'").pl()
    known = ", ".join(f"'{k}'" for k in KNOWN_KEYS)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE parsed AS
        SELECT key, raw, from_json(raw, '{_HAND}') AS h,
               list_filter(json_keys(raw), lambda k: k NOT IN ({known})) AS unknown
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

    rejects = pl.concat([
        _rejects(source, not_utf8, pl.lit("line is not UTF-8 text")),
        _rejects(source, bad_json,
                 pl.col("raw").map_elements(_json_problem, return_dtype=pl.String)),
        _rejects(source, not_objects, pl.lit("a hand is a JSON object ({...}); this line is not")),
    ])
    return RawBatch(
        source=source,
        hands=_conform(hands, RAW_HANDS_SCHEMA),
        seats=_conform(seats, RAW_SEATS_SCHEMA),
        cards=_conform(cards, RAW_CARDS_SCHEMA),
        rejects=rejects,
    )


def _conform(frame: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return frame.select([pl.col(name).cast(dtype) for name, dtype in schema.items()])


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
    return frame.select(
        pl.lit(source).alias("source"),
        pl.col("key").alias("line"),
        pl.lit(None, dtype=pl.String).alias("hand_id"),
        reason.alias("reason"),
        pl.col("raw"),
    ).pipe(_conform, REJECTS_SCHEMA)
