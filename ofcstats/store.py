"""The DuckDB store: schema, migrations, and transactional, idempotent loading.

Tables (documented for users in ``docs/database.md``):

- ``hands``: one row per hand; ``hand_id`` is the user's id, ``hand_key`` an integer
  key the other tables use; ``fingerprint`` tells a repeat from a conflict.
- ``seats``: one row per seat; final rows as ``UTINYINT`` card-code arrays.
- ``placements``: one row per placed or discarded card, in playing order (a view over
  ``seat_placements``, which keeps a seat's placements as lists).
- ``ingested_files``: one row per file load (path, sha256, size, counts, times).
- ``rejects``: what was not loaded, with file, line, hand id, reason and raw text.
- ``cards``: the 52 card codes with their text, for joins.
- ``rulesets``, ``results``, ``showdowns`` and their progress tables (versions 2, 3): what
  ``ofcstats rescore`` writes; the ``results_named`` view puts them together by name.
- ``decisions`` (version 5): what ``ofcstats review`` writes, one row per logged street
  of a seat; the ``decisions_named`` view adds the hand's id, session and time.

Migrations are an ordered list of ``(version, step)``, a step being SQL or a function
of the connection; :meth:`Store.migrate` applies the missing ones in order, each in
its own transaction, and records it in ``schema_version``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from ofcstats.cards import RANKS, SUITS
from ofcstats.errors import StoreError
from ofcstats.records import REJECTS_SCHEMA, HandBatch

Step = str | Callable[[duckdb.DuckDBPyConnection], None]

SHARD_HANDS = 50_000
"""Hands per shard of whole sessions, in a Parquet export and in sharded runs."""
SHARDED_TABLES = ("hands", "seats", "seat_placements")
"""The tables a Parquet export writes in shards of whole sessions."""

_V1 = """
CREATE TYPE row_kind AS ENUM ('top', 'middle', 'bottom', 'discard');

CREATE TABLE cards (
    code UTINYINT NOT NULL,   -- rank * 4 + suit: 0 = 2c ... 51 = As
    card VARCHAR NOT NULL,    -- 'As'
    rank VARCHAR NOT NULL,    -- '2'..'9', 'T', 'J', 'Q', 'K', 'A'
    suit VARCHAR NOT NULL     -- 'c', 'd', 'h', 's'
);

CREATE TABLE ingested_files (
    file_id INTEGER NOT NULL,
    path VARCHAR NOT NULL,
    sha256 VARCHAR,
    size BIGINT,
    format VARCHAR,
    hands INTEGER NOT NULL DEFAULT 0,       -- hands added by this load
    duplicates INTEGER NOT NULL DEFAULT 0,  -- hands already stored (or repeated), skipped
    conflicts INTEGER NOT NULL DEFAULT 0,   -- a different hand under a stored id, rejected
    rejected INTEGER NOT NULL DEFAULT 0,    -- rows written to rejects (conflicts included)
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ
);

CREATE TABLE hands (
    hand_key BIGINT NOT NULL,      -- integer key used by seats and placements
    hand_id VARCHAR NOT NULL,      -- the id the log gives; unique in the store
    session_id VARCHAR NOT NULL,
    played_at TIMESTAMPTZ,
    variant VARCHAR NOT NULL,
    ruleset VARCHAR,
    point_value DOUBLE,
    button UTINYINT,
    n_seats UTINYINT NOT NULL,
    extra JSON,
    file_id INTEGER NOT NULL,
    line BIGINT NOT NULL,
    fingerprint VARCHAR NOT NULL
);

CREATE TABLE seats (
    hand_key BIGINT NOT NULL,
    seat UTINYINT NOT NULL,
    player VARCHAR NOT NULL,
    fantasyland BOOLEAN NOT NULL,
    timed_out BOOLEAN NOT NULL,
    surrendered BOOLEAN NOT NULL,
    reported_points DOUBLE,
    dealt UTINYINT NOT NULL,
    top UTINYINT[3] NOT NULL,
    middle UTINYINT[5] NOT NULL,
    bottom UTINYINT[5] NOT NULL
);

-- A seat's placements as three parallel lists (half the cost of a row per card to
-- load); the placements view below gives them a row per card.
CREATE TABLE seat_placements (
    hand_key BIGINT NOT NULL,
    seat UTINYINT NOT NULL,
    streets UTINYINT[] NOT NULL,
    cards UTINYINT[] NOT NULL,
    rows UTINYINT[] NOT NULL      -- 1 top, 2 middle, 3 bottom, 4 discard
);

CREATE VIEW placements AS
SELECT hand_key, seat, street, CAST("order" AS UTINYINT) AS "order", card,
       CAST(enum_range(NULL::row_kind)[r] AS row_kind) AS "row"
FROM (SELECT hand_key, seat, unnest(streets) AS street,
             unnest(range(1, len(cards) + 1)) AS "order", unnest(cards) AS card,
             unnest(rows) AS r
      FROM seat_placements);

CREATE TABLE rejects (
    file_id INTEGER,
    path VARCHAR NOT NULL,
    line BIGINT,
    hand_id VARCHAR,
    reason VARCHAR NOT NULL,
    raw VARCHAR
);

CREATE MACRO card_text(code) AS
    substr('23456789TJQKA', (code // 4) + 1, 1) || substr('cdhs', (code % 4) + 1, 1);
CREATE MACRO cards_text(codes) AS
    array_to_string(list_transform(codes, lambda c: card_text(c)), ' ');

CREATE VIEW boards AS
SELECT h.hand_id, h.session_id, h.played_at, h.variant, s.seat, s.player, s.fantasyland,
       cards_text(s.top) AS top, cards_text(s.middle) AS middle,
       cards_text(s.bottom) AS bottom, s.reported_points
FROM hands h JOIN seats s USING (hand_key);
"""


def _fill_cards(con: duckdb.DuckDBPyConnection) -> None:
    codes = list(range(52))
    frame = pl.DataFrame({
        "code": pl.Series(codes, dtype=pl.UInt8),
        "card": [RANKS[c >> 2] + SUITS[c & 3] for c in codes],
        "rank": [RANKS[c >> 2] for c in codes],
        "suit": [SUITS[c & 3] for c in codes],
    })
    con.register("card_rows", frame)
    con.execute("INSERT INTO cards SELECT * FROM card_rows")
    con.unregister("card_rows")


_V2 = """
CREATE TABLE rulesets (
    ruleset_id SMALLINT NOT NULL,   -- the key results use
    name VARCHAR NOT NULL,          -- preset name, or the name a user's TOML file gives
    description VARCHAR,
    natural_mask UTINYINT NOT NULL, -- which 13-card naturals it pays (picks the showdown)
    fingerprint VARCHAR NOT NULL,   -- md5 of the definition: an edit means a rescore
    definition JSON NOT NULL,       -- everything the ruleset says, as JSON
    scored_at TIMESTAMPTZ
);

CREATE TABLE scored_sessions (      -- how far rescoring got, per ruleset and session
    ruleset_id SMALLINT NOT NULL,
    session_id VARCHAR NOT NULL,
    hands INTEGER NOT NULL
);

CREATE TABLE showdown_sessions (    -- the same for showdowns, per natural mask
    natural_mask UTINYINT NOT NULL,
    session_id VARCHAR NOT NULL,
    hands INTEGER NOT NULL
);

-- What every ruleset shares: each seat against each opponent, once. A ruleset that pays
-- 13-card naturals leaves out the pairs with a natural: for such a natural mask, the
-- hands it changes have rows of their own; the others use mask 0's.
CREATE TABLE showdowns (
    hand_key BIGINT NOT NULL,
    seat UTINYINT NOT NULL,
    natural_mask UTINYINT NOT NULL,
    fouled BOOLEAN NOT NULL,
    rows_top TINYINT NOT NULL,      -- rows won minus rows lost, over all opponents
    rows_middle TINYINT NOT NULL,
    rows_bottom TINYINT NOT NULL,
    wins_top TINYINT NOT NULL,      -- opponents beaten in the row (a fouled one included)
    wins_middle TINYINT NOT NULL,
    wins_bottom TINYINT NOT NULL,
    scoops TINYINT NOT NULL,        -- opponents beaten in all three rows
    scooped TINYINT NOT NULL        -- opponents that beat this seat in all three rows
);

-- What each ruleset adds: one row per ruleset, hand and seat.
CREATE TABLE results (
    ruleset_id SMALLINT NOT NULL,   -- rulesets.ruleset_id
    hand_key BIGINT NOT NULL,       -- hands.hand_key
    seat UTINYINT NOT NULL,         -- seats.seat
    points INTEGER NOT NULL,        -- net points of the seat (each hand sums to zero)
    royalty_top SMALLINT NOT NULL,  -- royalties collected from all opponents; 0 if fouled
    royalty_middle SMALLINT NOT NULL,
    royalty_bottom SMALLINT NOT NULL,
    royalty_points SMALLINT NOT NULL,     -- the royalties' part of points (collected - paid)
    fantasyland_earned BOOLEAN NOT NULL,  -- the boards earn entry or stay, by the policy
    fantasyland_next BOOLEAN NOT NULL,    -- ... and the session's repeat limit allows it
    fantasyland_cards TINYINT NOT NULL    -- cards the next hand deals in fantasyland
);

-- Everything about a seat's result in one place, by name.
CREATE VIEW results_named AS
SELECT r.name AS ruleset, h.hand_id, h.session_id, h.played_at, h.variant, x.seat,
       s.player, x.points,
       (x.royalty_top + x.royalty_middle + x.royalty_bottom)::SMALLINT AS royalties,
       x.royalty_top, x.royalty_middle, x.royalty_bottom, x.royalty_points,
       coalesce(m.rows_top, z.rows_top) AS rows_top,
       coalesce(m.rows_middle, z.rows_middle) AS rows_middle,
       coalesce(m.rows_bottom, z.rows_bottom) AS rows_bottom,
       coalesce(m.wins_top, z.wins_top) AS wins_top,
       coalesce(m.wins_middle, z.wins_middle) AS wins_middle,
       coalesce(m.wins_bottom, z.wins_bottom) AS wins_bottom,
       coalesce(m.fouled, z.fouled) AS fouled, coalesce(m.scoops, z.scoops) AS scoops,
       coalesce(m.scooped, z.scooped) AS scooped, x.fantasyland_earned, x.fantasyland_next,
       x.fantasyland_cards,
       x.fantasyland_next AND NOT s.fantasyland AS fantasyland_entered,
       x.fantasyland_next AND s.fantasyland AS fantasyland_stayed,
       -- what analysis needs besides: the seat, the hand, and the ruleset the log names
       s.fantasyland, s.reported_points, h.hand_key, h.n_seats, h.point_value,
       h.ruleset AS played_ruleset, h.file_id, h.line
FROM results x
JOIN rulesets r USING (ruleset_id)
JOIN hands h USING (hand_key)
JOIN seats s USING (hand_key, seat)
JOIN showdowns z ON z.hand_key = x.hand_key AND z.seat = x.seat AND z.natural_mask = 0
LEFT JOIN showdowns m ON m.hand_key = x.hand_key AND m.seat = x.seat
                      AND m.natural_mask = r.natural_mask AND r.natural_mask <> 0;
"""


# Version 3: the same results, written a third faster. DuckDB 2.0 appends and bit-packs
# SMALLINT and TINYINT columns markedly slower than INTEGER ones (measured: 9.75 million
# result rows took 2.25 s in the version 2 layout and 1.7 s in this one; the file is the
# same size, since bit-packing stores only the bits used), so the counts become INTEGER.
# ``fantasyland_next`` is not stored: it holds exactly when ``fantasyland_cards`` > 0.
# The view keeps every column's name; its counts are INTEGER now.
_V3 = """
DROP VIEW results_named;
ALTER TABLE results ALTER royalty_top TYPE INTEGER;
ALTER TABLE results ALTER royalty_middle TYPE INTEGER;
ALTER TABLE results ALTER royalty_bottom TYPE INTEGER;
ALTER TABLE results ALTER royalty_points TYPE INTEGER;
ALTER TABLE results ALTER fantasyland_cards TYPE INTEGER;
ALTER TABLE results DROP COLUMN fantasyland_next;
ALTER TABLE showdowns ALTER rows_top TYPE INTEGER;
ALTER TABLE showdowns ALTER rows_middle TYPE INTEGER;
ALTER TABLE showdowns ALTER rows_bottom TYPE INTEGER;
ALTER TABLE showdowns ALTER wins_top TYPE INTEGER;
ALTER TABLE showdowns ALTER wins_middle TYPE INTEGER;
ALTER TABLE showdowns ALTER wins_bottom TYPE INTEGER;
ALTER TABLE showdowns ALTER scoops TYPE INTEGER;
ALTER TABLE showdowns ALTER scooped TYPE INTEGER;

CREATE VIEW results_named AS
SELECT r.name AS ruleset, h.hand_id, h.session_id, h.played_at, h.variant, x.seat,
       s.player, x.points, x.royalty_top + x.royalty_middle + x.royalty_bottom AS royalties,
       x.royalty_top, x.royalty_middle, x.royalty_bottom, x.royalty_points,
       coalesce(m.rows_top, z.rows_top) AS rows_top,
       coalesce(m.rows_middle, z.rows_middle) AS rows_middle,
       coalesce(m.rows_bottom, z.rows_bottom) AS rows_bottom,
       coalesce(m.wins_top, z.wins_top) AS wins_top,
       coalesce(m.wins_middle, z.wins_middle) AS wins_middle,
       coalesce(m.wins_bottom, z.wins_bottom) AS wins_bottom,
       coalesce(m.fouled, z.fouled) AS fouled, coalesce(m.scoops, z.scoops) AS scoops,
       coalesce(m.scooped, z.scooped) AS scooped, x.fantasyland_earned,
       x.fantasyland_cards > 0 AS fantasyland_next, x.fantasyland_cards,
       x.fantasyland_cards > 0 AND NOT s.fantasyland AS fantasyland_entered,
       x.fantasyland_cards > 0 AND s.fantasyland AS fantasyland_stayed,
       -- what analysis needs besides: the seat, the hand, and the ruleset the log names
       s.fantasyland, s.reported_points, h.hand_key, h.n_seats, h.point_value,
       h.ruleset AS played_ruleset, h.file_id, h.line
FROM results x
JOIN rulesets r USING (ruleset_id)
JOIN hands h USING (hand_key)
JOIN seats s USING (hand_key, seat)
JOIN showdowns z ON z.hand_key = x.hand_key AND z.seat = x.seat AND z.natural_mask = 0
-- The CASE and not "AND r.natural_mask <> 0": with that condition, when the statistics
-- show no stored showdown can match, DuckDB 2.0.1 misjudges the join's row count and an
-- aggregate over the view sorted afterwards (GROUP BY ruleset ORDER BY 1) fails with
-- "Type INT128 with value ... can't be cast ... INT8".
LEFT JOIN showdowns m ON m.hand_key = x.hand_key AND m.seat = x.seat
    AND m.natural_mask = CASE WHEN r.natural_mask <> 0 THEN r.natural_mask END;
"""


# Version 4: rulesets are played under variants. ``variants`` is what the ruleset
# declares; ``scope`` the variants whose hands are scored under it here (its own, or
# every variant when a what-if was asked for by name). Rows of a hand whose variant the
# ruleset is not played under are what-ifs, and the view says so. Rulesets scored before
# were scored over every variant.
_V4 = """
ALTER TABLE rulesets ADD COLUMN variants VARCHAR[];
ALTER TABLE rulesets ADD COLUMN scope VARCHAR[];
UPDATE rulesets SET
    variants = coalesce(CAST(json_extract(definition, '$.variants') AS VARCHAR[]),
                        [json_extract_string(definition, '$.variant')]),
    scope = ['chinese-13', 'ofc-classic', 'ofc-turbo', 'pineapple'];
DROP VIEW results_named;
CREATE VIEW results_named AS
SELECT r.name AS ruleset, h.hand_id, h.session_id, h.played_at, h.variant, x.seat,
       s.player, x.points, x.royalty_top + x.royalty_middle + x.royalty_bottom AS royalties,
       x.royalty_top, x.royalty_middle, x.royalty_bottom, x.royalty_points,
       coalesce(m.rows_top, z.rows_top) AS rows_top,
       coalesce(m.rows_middle, z.rows_middle) AS rows_middle,
       coalesce(m.rows_bottom, z.rows_bottom) AS rows_bottom,
       coalesce(m.wins_top, z.wins_top) AS wins_top,
       coalesce(m.wins_middle, z.wins_middle) AS wins_middle,
       coalesce(m.wins_bottom, z.wins_bottom) AS wins_bottom,
       coalesce(m.fouled, z.fouled) AS fouled, coalesce(m.scoops, z.scoops) AS scoops,
       coalesce(m.scooped, z.scooped) AS scooped, x.fantasyland_earned,
       x.fantasyland_cards > 0 AS fantasyland_next, x.fantasyland_cards,
       x.fantasyland_cards > 0 AND NOT s.fantasyland AS fantasyland_entered,
       x.fantasyland_cards > 0 AND s.fantasyland AS fantasyland_stayed,
       -- what analysis needs besides: the seat, the hand, and the ruleset the log names
       s.fantasyland, s.reported_points, h.hand_key, h.n_seats, h.point_value,
       h.ruleset AS played_ruleset, h.file_id, h.line,
       -- a ruleset applied to a hand of a variant it is not played under
       NOT list_contains(r.variants, h.variant) AS what_if
FROM results x
JOIN rulesets r USING (ruleset_id)
JOIN hands h USING (hand_key)
JOIN seats s USING (hand_key, seat)
JOIN showdowns z ON z.hand_key = x.hand_key AND z.seat = x.seat AND z.natural_mask = 0
-- The CASE: see version 3.
LEFT JOIN showdowns m ON m.hand_key = x.hand_key AND m.seat = x.seat
    AND m.natural_mask = CASE WHEN r.natural_mask <> 0 THEN r.natural_mask END;
"""


_V5 = """
-- What each logged placement cost (ofcstats review): one row per street of a seat and
-- review settings. Rows are 0 top, 1 middle, 2 bottom, 3 discard, one per dealt card.
CREATE TABLE decisions (
    hand_key BIGINT NOT NULL,
    seat UTINYINT NOT NULL,
    player VARCHAR NOT NULL,
    street UTINYINT NOT NULL,        -- the street number as logged
    fantasyland BOOLEAN NOT NULL,    -- a fantasyland set (every card at once)
    ruleset VARCHAR NOT NULL,        -- the ruleset the candidates were scored under
    reviewed_as VARCHAR NOT NULL,    -- the --ruleset asked for; '' for each hand's own
    dealt UTINYINT[] NOT NULL,
    chosen UTINYINT[] NOT NULL,      -- the row of each dealt card, as played
    best UTINYINT[] NOT NULL,        -- ... in the best candidate
    ev_chosen DOUBLE NOT NULL,       -- expected points of the play made
    ev_best DOUBLE NOT NULL,
    ev_loss DOUBLE NOT NULL,         -- ev_best - ev_chosen, never negative
    se_chosen DOUBLE NOT NULL,       -- standard error of ev_chosen (0: valued exactly)
    candidates INTEGER NOT NULL,     -- legal placements compared
    mistake VARCHAR,                 -- foul, fantasyland, royalties, discard, rows; NULL: none
    exact BOOLEAN NOT NULL,          -- valued without sampling (nothing left to deal)
    rollouts INTEGER NOT NULL,       -- rollouts per candidate asked for
    screen INTEGER NOT NULL,         -- candidates kept after screening; 0: no screening
    seed BIGINT NOT NULL,
    fantasyland_value DOUBLE NOT NULL
);

CREATE VIEW decisions_named AS
SELECT h.hand_id, h.session_id, h.played_at, h.variant, d.*
FROM decisions d JOIN hands h USING (hand_key);
"""


# Version 6: what loading needs to skip a file already loaded, continue a file that has
# grown and notice one that has changed. The content hash is BLAKE3 (several times
# faster than SHA-256, so a file already loaded is recognised in well under a second per
# million hands); ``sha256`` stays for the loads made before.
_V6 = """
ALTER TABLE ingested_files ADD COLUMN content_hash VARCHAR;
ALTER TABLE ingested_files ADD COLUMN lines BIGINT;
ALTER TABLE ingested_files ADD COLUMN first_line BIGINT;
"""


MIGRATIONS: list[tuple[int, str, Sequence[Step]]] = [
    (1, "hands, seats, placements, ingested files, rejects", (_V1, _fill_cards)),
    (2, "rulesets, scored sessions and results of rescoring", (_V2,)),
    (3, "results and showdowns in INTEGER columns, for faster writes", (_V3,)),
    (4, "rulesets know their variants; results say which rows are what-ifs", (_V4,)),
    (5, "decisions: what each logged placement cost, from ofcstats review", (_V5,)),
    (6, "content hash, lines and first line of each file load", (_V6,)),
]
"""``(version, description, steps)`` in order; a later stage appends, never edits."""

SCHEMA_VERSION = MIGRATIONS[-1][0]
DEFAULT_DB = "ofcstats.duckdb"


@dataclass(frozen=True)
class FileLoad:
    """A finished load of a file, as ``ingested_files`` records it."""

    file_id: int
    path: str
    size: int
    content_hash: str
    lines: int  # complete lines the file had (a last line without a newline not counted)
    first_line: int
    finished_at: datetime


_HAND_FIELDS = ("played_at", "ruleset", "point_value", "button")
_SEAT_FIELDS = ("reported_points",)
UPDATABLE = (*_HAND_FIELDS, *_SEAT_FIELDS)
"""Fields the fingerprint of a hand leaves out: another value under a stored hand is a
conflict, or (``ingest --update``) replaces the stored one."""


@dataclass(frozen=True)
class Added:
    """What one batch did to the store."""

    loaded: int
    duplicates: int
    conflicts: int
    updated: int = 0


def _stream(frame: pl.DataFrame | pa.Table) -> pa.RecordBatchReader:
    """A frame as a one-pass Arrow stream. DuckDB keeps a registered table alive until the
    transaction ends, so a file's batches would all stay in memory; a stream's batches
    are let go as they are read."""
    table = frame.to_arrow() if isinstance(frame, pl.DataFrame) else frame
    batches = table.to_batches()
    schema = table.schema
    del table

    def handed_over() -> Iterator[pa.RecordBatch]:
        while batches:
            yield batches.pop(0)

    return pa.RecordBatchReader.from_batches(schema, handed_over())


def _per_seat(placements: pl.DataFrame) -> pa.Table:
    """Placements (in seat order) as one row per seat with lists: offsets, no grouping."""
    hand = placements.get_column("hand").to_numpy()
    seat = placements.get_column("seat").to_numpy()
    first = np.flatnonzero(np.r_[True, (hand[1:] != hand[:-1]) | (seat[1:] != seat[:-1])]) \
        if len(hand) else np.zeros(0, dtype=np.int64)
    offsets = pa.array(np.r_[first, len(hand)].astype(np.int32))

    def lists(name: str) -> pa.ListArray:
        values = pa.array(placements.get_column(name).to_numpy().astype(np.uint8))
        return pa.ListArray.from_arrays(offsets, values)

    return pa.table({"hand": hand[first], "seat": seat[first], "streets": lists("street"),
                     "cards": lists("card"), "rows": lists("row")})


LOCK_WAIT = 10.0
"""Seconds to wait for a database another program holds, unless told otherwise."""

_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.*?)(?: \(PID (?P<pid>\d+)\))?"
                          r"(?: by user \S+)?\.?(?: See also|$)")


def lock_wait(seconds: float | None = None) -> float:
    """``seconds`` when given, else ``$OFCSTATS_LOCK_WAIT``, else :data:`LOCK_WAIT`."""
    if seconds is not None:
        return max(0.0, seconds)
    text = os.environ.get("OFCSTATS_LOCK_WAIT", "").strip()
    try:
        return max(0.0, float(text)) if text else LOCK_WAIT
    except ValueError:
        raise StoreError(f"OFCSTATS_LOCK_WAIT={text!r} is not a number of seconds") from None


def _holder(error: duckdb.Error) -> str:
    """The program (and process id) DuckDB's lock error names."""
    found = _LOCK_HOLDER.search(str(error))
    if not found:
        return "another program"
    pid = found.group("pid")
    return f"{found.group('program')} (PID {pid})" if pid else found.group("program")


def _locked_message(path: Path, error: duckdb.Error, waited: float) -> str:
    """The lock error in a line: who holds the database and what to do."""
    return (f"{path}: the database is in use by {_holder(error)}; waited {waited:g} s. "
            f"Close that "
            f"program or its connection (a notebook: con.close()), or wait longer with "
            f"--wait SECONDS or $OFCSTATS_LOCK_WAIT")


def _is_lock(error: duckdb.Error) -> bool:
    return "Could not set lock" in str(error) or "Conflicting lock" in str(error)


class Store:
    """A DuckDB database file holding hands; opening it brings its schema up to date.

    ``read_only`` opens it for reading alone: any number of readers may share it, and a
    reader never changes it (an out-of-date schema is then an error naming the command
    that upgrades it). When another program holds the file, opening waits up to ``wait``
    seconds (default :func:`lock_wait`) for it (``on_wait`` is told once, when the
    waiting starts), then says who holds it.
    """

    def __init__(self, path: Path | str, *, read_only: bool = False,
                 wait: float | None = None,
                 on_wait: Callable[[str], None] | None = None) -> None:
        self.path = Path(path)
        patience = lock_wait(wait)
        deadline = time.monotonic() + patience
        pause = 0.05
        told = False
        while True:
            try:
                self.con = duckdb.connect(str(path), read_only=read_only)
                break
            except duckdb.Error as error:
                if not _is_lock(error):
                    raise StoreError(f"{path}: cannot open the database: "
                                     f"{str(error).splitlines()[0]}") from None
                if time.monotonic() >= deadline:
                    raise StoreError(_locked_message(self.path, error, patience)) from None
                if on_wait is not None and not told:
                    on_wait(f"{path}: the database is in use by {_holder(error)}; waiting "
                            f"up to {patience:g} s for it")
                    told = True
                time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
                pause = min(pause * 2, 1.0)
        if read_only:
            current = self.version()
            if current != SCHEMA_VERSION:
                self.con.close()
                raise StoreError(
                    f"{path}: the database has schema version {current}, this ofcstats "
                    f"reads version {SCHEMA_VERSION}: "
                    + ("upgrade ofcstats" if current > SCHEMA_VERSION else
                       "run ofcstats rescore (or ingest) on it once to bring it up to date"))
        else:
            self.migrate()
        self._next_key: int | None = None

    def close(self) -> None:
        """Close the connection (uncommitted work is rolled back)."""
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def compact(self) -> None:
        """Write everything to the file and merge the partly filled row groups a load
        leaves behind.

        DuckDB merges row groups only in a checkpoint that finds them already written, so
        without this the next command to change anything (a rescore, say) pays for it: a
        few seconds per million hands. The second checkpoint needs a change to act on,
        hence the table made and dropped in between.
        """
        self.con.execute("CHECKPOINT")
        self.con.execute("CREATE TABLE _compact_marker (a INTEGER)")
        self.con.execute("DROP TABLE _compact_marker")
        self.con.execute("CHECKPOINT")

    def version(self) -> int:
        """The schema version of the database (0 for a new, empty one)."""
        exists = self.con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version'"
        ).fetchall()[0]
        if not exists or not exists[0]:
            return 0
        row = self.con.execute("SELECT max(version) FROM schema_version").fetchall()[0]
        return int(row[0]) if row and row[0] is not None else 0

    def migrate(self, migrations: Sequence[tuple[int, str, Sequence[Step]]] = MIGRATIONS
                ) -> None:
        """Apply the migrations the database lacks, in order, each in one transaction."""
        self.con.execute("""
            CREATE TABLE IF NOT EXISTS schema_version (
                version INTEGER NOT NULL, description VARCHAR,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp)
        """)
        current = self.version()
        newest = migrations[-1][0] if migrations else 0
        if current > newest:
            raise StoreError(f"{self.path}: the database has schema version {current}, newer "
                             f"than this ofcstats knows ({newest}); upgrade ofcstats")
        for version, description, steps in migrations:
            if version <= current:
                continue
            with self.transaction():
                for step in steps:
                    if isinstance(step, str):
                        self.con.execute(step)
                    else:
                        step(self.con)
                self.con.execute("INSERT INTO schema_version (version, description) "
                                 "VALUES (?, ?)", [version, description])

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction: committed when the block ends, rolled back if it raises."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            # After a failed write (a full disk, say) DuckDB may refuse even this; the
            # transaction is then undone when the database is next opened.
            with suppress(duckdb.Error):
                self.con.execute("ROLLBACK")
            self._next_key = None
            raise
        self.con.execute("COMMIT")

    # Loading (call inside a transaction).

    def begin_file(self, path: str, fmt: str | None, size: int | None,
                   first_line: int = 1) -> int:
        """Record the start of a file load; returns its ``file_id``."""
        row = self.con.execute(
            "SELECT coalesce(max(file_id), 0) + 1 FROM ingested_files").fetchall()[0]
        file_id = int(row[0]) if row else 1
        self.con.execute(
            "INSERT INTO ingested_files (file_id, path, format, size, first_line, started_at) "
            "VALUES (?, ?, ?, ?, ?, current_timestamp)", [file_id, path, fmt, size, first_line])
        return file_id

    def finish_file(self, file_id: int, content_hash: str | None, *, hands: int,
                    duplicates: int, conflicts: int, rejected: int,
                    lines: int | None = None) -> None:
        """Record the counts of a file load."""
        self.con.execute(
            "UPDATE ingested_files SET content_hash = ?, lines = ?, hands = ?, duplicates = ?, "
            "conflicts = ?, rejected = ?, finished_at = current_timestamp WHERE file_id = ?",
            [content_hash, lines, hands, duplicates, conflicts, rejected, file_id])

    def load_with_content(self, content_hash: str) -> FileLoad | None:
        """The earliest finished load of a file with this content, if any."""
        return self._load("content_hash = ?", [content_hash], "file_id")

    def last_load_of(self, paths: Sequence[str]) -> FileLoad | None:
        """The latest finished load of a file at any of these paths, if any."""
        return self._load("path IN (SELECT unnest(?))", [list(paths)], "file_id DESC")

    def _load(self, where: str, params: list[object], order: str) -> FileLoad | None:
        row = self.con.execute(f"""
            SELECT file_id, path, size, content_hash, coalesce(lines, 0),
                   coalesce(first_line, 1), finished_at
            FROM ingested_files
            WHERE finished_at IS NOT NULL AND content_hash IS NOT NULL AND {where}
            ORDER BY {order} LIMIT 1""", params).fetchall()
        if not row:
            return None
        file_id, path, size, content_hash, lines, first_line, finished = row[0]
        return FileLoad(file_id=int(file_id), path=str(path), size=int(size or 0),
                        content_hash=str(content_hash), lines=int(lines),
                        first_line=int(first_line), finished_at=finished)

    def loaded_sizes(self) -> set[int]:
        """Sizes of the files loaded so far (only a file of one of these sizes can have
        been loaded before with the same content)."""
        return {int(size) for (size,) in self.con.execute(
            "SELECT DISTINCT size FROM ingested_files WHERE content_hash IS NOT NULL "
            "AND finished_at IS NOT NULL AND size IS NOT NULL").fetchall()}

    def forget_rejects_from(self, file_id: int, line: int) -> None:
        """Drop a load's rejects from ``line`` on (a last line cut short, read again now
        that the file has grown)."""
        self.con.execute("DELETE FROM rejects WHERE file_id = ? AND line >= ?",
                         [file_id, line])

    def add(self, batch: HandBatch, file_id: int, *, update: bool = False
            ) -> tuple[Added, pl.DataFrame]:
        """Store a batch's hands; a hand id already stored is skipped when it is the same
        hand and returned as a conflict reject when it is not. The same cards with other
        values of the fields the fingerprint leaves out (:data:`UPDATABLE`) are a conflict
        too, or with ``update`` replace the stored values."""
        ids = batch.hands.select("hand_id", "fingerprint", *_HAND_FIELDS)
        seats = batch.seats.select("hand_id", "seat", *_SEAT_FIELDS)
        # Tables, not streams: with ``update`` they are read more than once.
        self.con.register("incoming_ids", ids.to_arrow())
        self.con.register("incoming_seats", seats.to_arrow())
        try:
            known = self.con.sql(f"""
                SELECT i.hand_id, i.fingerprint = h.fingerprint AS same, h.line,
                       f.path, h.hand_key, h.session_id,
                       concat_ws(', ', {", ".join(
                           f"CASE WHEN i.{c} IS DISTINCT FROM h.{c} THEN '{c}' END"
                           for c in _HAND_FIELDS)},
                           CASE WHEN EXISTS (
                               SELECT 1 FROM incoming_seats n JOIN seats s
                                 ON s.hand_key = h.hand_key AND s.seat = n.seat
                               WHERE n.hand_id = i.hand_id AND ({" OR ".join(
                                   f"n.{c} IS DISTINCT FROM s.{c}" for c in _SEAT_FIELDS)}))
                           THEN '{"/".join(_SEAT_FIELDS)}' END) AS changed
                FROM incoming_ids i
                JOIN hands h ON h.hand_id = i.hand_id
                JOIN ingested_files f ON f.file_id = h.file_id
            """).pl()
            changed = known.filter(pl.col("same") & (pl.col("changed") != ""))
            if update and changed.height:
                self._update(changed)
        finally:
            self.con.unregister("incoming_ids")
            self.con.unregister("incoming_seats")
        conflicts = known.filter(~pl.col("same"))
        reasons = pl.when(pl.col("same")).then(pl.format(
            "hand {}: the same hand as the one stored (from {} line {}) but another {}: "
            "to keep the new values, load it with --update", pl.col("hand_id"),
            pl.col("path"), pl.col("line_right"), pl.col("changed"))).otherwise(pl.format(
            "hand {}: a different hand with this id is already stored (from {} line {})",
            pl.col("hand_id"), pl.col("path"), pl.col("line_right")))
        if not update:
            conflicts = known.filter(~pl.col("same") | (pl.col("changed") != ""))
        rejects = batch.hands.join(conflicts, on="hand_id").select(
            pl.col("source"), "line",
            pl.col("hand_id"),
            reasons.alias("reason"),
        ).sort("line")
        # A loop, but over conflicts only. (A Polars UDF would keep the batch alive.)
        rejects = rejects.with_columns(raw=pl.Series(
            [batch.raw_text(line) for line in rejects.get_column("line")], dtype=pl.String,
        )).cast(REJECTS_SCHEMA)  # type: ignore[arg-type]
        if known.height:
            batch = batch.without(known.get_column("hand_id"))
        self._insert(batch, file_id)
        updated = changed.height if update else 0
        return Added(loaded=batch.hands.height,
                     duplicates=known.height - conflicts.height - updated,
                     conflicts=conflicts.height, updated=updated), rejects

    def _update(self, changed: pl.DataFrame) -> None:
        """Replace the stored values of :data:`UPDATABLE` fields of the ``changed`` hands
        (from ``incoming_ids`` and ``incoming_seats``); their sessions are rescored."""
        self.con.register("changed_ids", changed.select("hand_id", "session_id").to_arrow())
        try:
            self.con.execute(f"""
                UPDATE hands h SET {", ".join(f"{c} = i.{c}" for c in _HAND_FIELDS)}
                FROM incoming_ids i
                WHERE i.hand_id = h.hand_id AND i.hand_id IN (SELECT hand_id FROM changed_ids)""")
            self.con.execute(f"""
                UPDATE seats s SET {", ".join(f"{c} = n.{c}" for c in _SEAT_FIELDS)}
                FROM incoming_seats n JOIN hands h ON h.hand_id = n.hand_id
                WHERE s.hand_key = h.hand_key AND s.seat = n.seat
                  AND n.hand_id IN (SELECT hand_id FROM changed_ids)""")
            # A count no session has: the next rescore redoes these sessions whole.
            self.con.execute("UPDATE scored_sessions SET hands = -1 "
                             "WHERE session_id IN (SELECT session_id FROM changed_ids)")
        finally:
            self.con.unregister("changed_ids")

    def _insert(self, batch: HandBatch, file_id: int) -> None:
        if not batch.hands.height:
            return
        if self._next_key is None:
            row = self.con.execute("SELECT coalesce(max(hand_key), 0) + 1 FROM hands").fetchall()[0]
            self._next_key = int(row[0]) if row else 1
        base = self._next_key
        self._next_key += batch.hands.height
        hands = batch.hands.with_columns(
            hand_key=pl.int_range(base, base + batch.hands.height, dtype=pl.Int64))
        con = self.con
        con.register("new_hands", _stream(hands))
        con.register("new_seats", _stream(batch.seats))
        con.register("new_placements", _stream(_per_seat(batch.placements)))
        try:
            con.execute(f"""
                INSERT INTO hands SELECT hand_key, hand_id, session_id, played_at, variant,
                    ruleset, point_value, button, n_seats, extra, {file_id}, line, fingerprint
                FROM new_hands""")
            con.execute(f"""
                INSERT INTO seats SELECT {base} + hand, seat, player, fantasyland, timed_out,
                    surrendered, reported_points, dealt, top, middle, bottom
                FROM new_seats""")
            con.execute(f"""
                INSERT INTO seat_placements SELECT {base} + hand, seat, streets, cards, rows
                FROM new_placements""")
        finally:
            for name in ("new_hands", "new_seats", "new_placements"):
                con.unregister(name)

    def add_rejects(self, rejects: pl.DataFrame, file_id: int) -> None:
        """Store rejects of the file being loaded."""
        if not rejects.height:
            return
        self.con.register("new_rejects", _stream(rejects))
        try:
            self.con.execute("""
                INSERT INTO rejects
                SELECT ?, source, line, hand_id, reason, raw FROM new_rejects
            """, [file_id])
        finally:
            self.con.unregister("new_rejects")

    def count(self, table: str) -> int:
        """Rows in a table."""
        row = self.con.execute(f'SELECT count(*) FROM "{table}"').fetchall()[0]
        return int(row[0]) if row else 0

    # Reading.

    def seats_frame(self, *, hand_ids: Sequence[str] | None = None,
                    sessions: Sequence[str] | None = None,
                    players: Sequence[str] | None = None,
                    variants: Sequence[str] | None = None,
                    since: datetime | None = None, until: datetime | None = None
                    ) -> pl.DataFrame:
        """The seats frame :func:`ofcstats.score.score` takes, for the hands that pass
        every given filter (a player filter keeps whole hands the player sat in)."""
        where: list[str] = ["true"]
        params: list[object] = []
        for column, values in (("h.hand_id", hand_ids), ("h.session_id", sessions),
                               ("h.variant", variants)):
            if values is not None:
                where.append(f"{column} IN (SELECT unnest(?))")
                params.append(list(values))
        if players is not None:
            where.append("h.hand_key IN (SELECT hand_key FROM seats WHERE player IN "
                         "(SELECT unnest(?)))")
            params.append(list(players))
        if since is not None:
            where.append("h.played_at >= ?")
            params.append(since)
        if until is not None:
            where.append("h.played_at < ?")
            params.append(until)
        frame = self.con.sql(f"""
            SELECT h.hand_id, h.variant, s.seat, s.player, s.fantasyland, s.timed_out,
                   s.surrendered, s.top, s.middle, s.bottom
            FROM hands h JOIN seats s USING (hand_key)
            WHERE {' AND '.join(where)}
            ORDER BY h.hand_key, s.seat
        """, params=params).pl()
        return frame.cast({"seat": pl.Int8, "top": pl.Array(pl.UInt8, 3),
                           "middle": pl.Array(pl.UInt8, 5), "bottom": pl.Array(pl.UInt8, 5)})

    def info(self) -> dict[str, object]:
        """Tables and their row counts, sessions, players, variants and the date range."""
        tables = self.con.execute("""
            SELECT table_name FROM information_schema.tables
            WHERE table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name
        """).fetchall()
        counts = {name: self.count(name) for (name,) in tables}
        row = self.con.execute("""
            SELECT count(DISTINCT session_id), min(played_at), max(played_at) FROM hands
        """).fetchall()[0]
        players = self.con.execute("SELECT count(DISTINCT player) FROM seats").fetchall()[0]
        variants = dict(self.con.execute(
            "SELECT variant, count(*) FROM hands GROUP BY variant ORDER BY variant").fetchall())
        return {
            "path": str(self.path),
            "schema_version": self.version(),
            "tables": counts,
            "sessions": int(row[0]) if row else 0,
            "players": int(players[0]) if players else 0,
            "first_played_at": row[1].isoformat() if row and row[1] else None,
            "last_played_at": row[2].isoformat() if row and row[2] else None,
            "variants": variants,
        }

    def export_parquet(self, directory: Path,
                       progress: Callable[[int, int | None], None] | None = None,
                       shard_hands: int = SHARD_HANDS) -> list[Path]:
        """Every table, and the views, as ``DIR/<name>.parquet``, except the hands, seats
        and placements (``seat_placements``): those go to ``DIR/<name>/shard=K/`` in
        shards of whole sessions of about ``shard_hands`` hands, which
        ``DIR/shards.parquet`` lists (shard, session_id, hands); ``progress(written,
        to write)`` after each."""
        directory.mkdir(parents=True, exist_ok=True)
        names = [name for (name,) in self.con.execute("""
            SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'
            ORDER BY table_type, table_name
        """).fetchall()]
        shards = self.session_shards(shard_hands)
        written = []
        self.con.register("export_shards", shards)
        try:
            for name in [*names, "shards"]:
                target = directory / (name if name in SHARDED_TABLES else f"{name}.parquet")
                quoted = str(target).replace("'", "''")
                if name == "shards":
                    shards.write_parquet(target)
                elif name in SHARDED_TABLES:
                    join = "" if name == "hands" else "JOIN hands h USING (hand_key)"
                    self.con.execute(f"""
                        COPY (SELECT t.*, m.shard FROM "{name}" t {join}
                              JOIN export_shards m USING (session_id) ORDER BY t.hand_key)
                        TO '{quoted}' (FORMAT parquet, PARTITION_BY (shard))""")
                else:
                    self.con.execute(f"COPY (SELECT * FROM \"{name}\") TO '{quoted}' "
                                     "(FORMAT parquet)")
                written.append(target)
                if progress is not None:
                    progress(len(written), len(names) + 1)
        finally:
            self.con.unregister("export_shards")
        return written

    def session_shards(self, shard_hands: int = SHARD_HANDS) -> pl.DataFrame:
        """Every session with its hand count and shard: consecutive sessions (by id)
        grouped into shards of about ``shard_hands`` hands, a session never split."""
        return self.con.sql("""
            SELECT ((sum(hands) OVER (ORDER BY session_id ROWS UNBOUNDED PRECEDING) - hands)
                    // $limit)::INTEGER AS shard, session_id, hands
            FROM (SELECT session_id, count(*)::INTEGER AS hands FROM hands
                  GROUP BY session_id)
            ORDER BY session_id
        """, params={"limit": max(1, shard_hands)}).pl()
