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

The schema and its migrations are in :mod:`ofcstats.store.schema`; what rescoring
reads and writes in :mod:`ofcstats.store.results`. :meth:`Store.migrate` applies the
missing migrations in order, each in its own transaction, and records it in
``schema_version``.
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

from ofcstats.errors import StoreError
from ofcstats.records import REJECTS_SCHEMA, HandBatch
from ofcstats.store.schema import MIGRATIONS, SCHEMA_VERSION, Step

__all__ = ["DEFAULT_DB", "LOCK_WAIT", "MIGRATIONS", "SCHEMA_VERSION", "UPDATABLE", "Added",
           "FileLoad", "Step", "Store", "lock_wait"]

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


_KNOWN = {
    "player": "SELECT DISTINCT player FROM seats ORDER BY 1",
    "session": "SELECT DISTINCT session_id FROM hands ORDER BY 1",
    "variant": "SELECT DISTINCT variant FROM hands ORDER BY 1",
    "ruleset": "SELECT name FROM rulesets ORDER BY 1",
}
"""What :meth:`Store.known_values` reads for each kind of filter."""

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

    def rejects_of(self, file_id: int) -> int:
        """Rejects stored for a file load."""
        row = self.con.execute("SELECT count(*) FROM rejects WHERE file_id = ?",
                               [file_id]).fetchall()[0]
        return int(row[0]) if row else 0

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

    def known_values(self, kind: str) -> list[str]:
        """The distinct values stored of a filter: ``player``, ``session``, ``variant``,
        or ``ruleset`` (those scored), in order."""
        return [str(v) for (v,) in self.con.execute(_KNOWN[kind]).fetchall()]

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
                       progress: Callable[[int, int | None], None] | None = None
                       ) -> list[Path]:
        """Every table, and the ``boards`` view, as ``DIR/<name>.parquet``;
        ``progress(tables written, tables)`` after each."""
        directory.mkdir(parents=True, exist_ok=True)
        names = [name for (name,) in self.con.execute("""
            SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'
            ORDER BY table_type, table_name
        """).fetchall()]
        written = []
        for name in names:
            target = directory / f"{name}.parquet"
            quoted = str(target).replace("'", "''")
            self.con.execute(f"COPY (SELECT * FROM \"{name}\") TO '{quoted}' (FORMAT parquet)")
            written.append(target)
            if progress is not None:
                progress(len(written), len(names))
        return written

