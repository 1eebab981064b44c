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

Every statement the database runs is written in this package, in the module of the
concept it belongs to:

- :mod:`ofcstats.store.schema`: the tables and views, as migrations;
  :meth:`Store.migrate` applies the missing ones in order, each in its own transaction,
  and records it in ``schema_version``;
- :mod:`ofcstats.store.connect`: opening the file, waiting for a program that holds it;
- :mod:`ofcstats.store.files`: the record of file loads and their rejects;
- :mod:`ofcstats.store.hands`: adding a batch's hands, repeats and conflicts;
- :mod:`ofcstats.store.results`: what rescoring reads and writes, and what analysis reads;
- :mod:`ofcstats.store.money`: what the money and player questions read (games settled);
- :mod:`ofcstats.store.decisions`: what a review reads and writes (``decisions``);
- :mod:`ofcstats.store.shards`: the shards of a Parquet export read back.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa

from ofcstats.errors import RulesetError, StoreError
from ofcstats.records import UPDATABLE, IdHashes
from ofcstats.rules.load import ruleset_from
from ofcstats.rules.model import Ruleset
from ofcstats.store import results
from ofcstats.store.connect import (
    LOCK_WAIT,
    connect,
    fetch_frame,
    lock_wait,
    registered,
    storage_full,
)
from ofcstats.store.files import FileLoad, FileLoads
from ofcstats.store.hands import Added, Appends, HandLoading
from ofcstats.store.schema import MIGRATIONS, SCHEMA_VERSION, Step

__all__ = ["DEFAULT_DB", "HEADER_BYTES", "LOCK_WAIT", "MIGRATIONS", "SCHEMA_VERSION",
           "SHARDED_TABLES", "SHARD_HANDS", "UPDATABLE", "Added", "FileLoad", "Step", "Store",
           "lock_wait", "log_path", "log_size", "stale_log", "waiting_changes"]

DEFAULT_DB = "ofcstats.duckdb"
BATCH_ROWS = 1 << 17
"""Rows in a batch of a query read a batch at a time (:meth:`Store.batches`): a batch of
the statistics' stream is about 12 MB, and the next is read while one is added up. (At a
million rows a batch, 100 MB each, the read commands took a quarter more memory.)"""
SHARD_HANDS = 50_000
"""Hands per shard of whole sessions, in a Parquet export and in sharded runs."""
SHARDED_TABLES = ("hands", "seats", "seat_placements")
"""The tables a Parquet export writes in shards of whole sessions."""
HEADER_BYTES = 3 * 4096
"""The bytes of a DuckDB file before its first block: the file header and the two
database headers it writes in turn."""


def _megabytes(count: int) -> str:
    return f"{count / 1e6:.1f} MB"


def log_path(path: Path) -> Path:
    """DuckDB's write-ahead log beside the database file ``path``: committed changes not
    yet moved into the file (``FILE.wal``)."""
    return path.with_name(path.name + ".wal")


def log_size(path: Path) -> int:
    """Bytes of the write-ahead log beside ``path`` (0 when there is none)."""
    try:
        return log_path(path).stat().st_size
    except FileNotFoundError:
        return 0


def waiting_changes(path: Path) -> str | None:
    """What to do about changes a full disk kept in the write-ahead log beside ``path``
    (a checkpoint could not move them into the file), in words; None when none wait."""
    size = log_size(path)
    if not size:
        return None
    return (f"{_megabytes(size)} of changes are kept in {log_path(path).name} (and read "
            f"from there) until they can be moved into the database: free about "
            f"{_megabytes(size)} on that disk, then run a command that writes (ingest, "
            "rescore, review) to move them")


def _amount(count: int) -> str:
    """``56 KB`` under a megabyte (never ``0.0 MB``), else ``1.5 MB``."""
    return f"{max(1, round(count / 1e3)):,} KB" if count < 1e6 else _megabytes(count)


def stale_log(path: Path) -> str | None:
    """What a write-ahead log beside ``path`` is, in words, when the disk has room to move
    it into the database: changes a writer committed and had not yet moved into the file
    when it stopped (killed, say), read from the log until a writer moves them. None when
    there is no log, or when the disk lacks the room (then :func:`waiting_changes` says how
    much to free)."""
    size = log_size(path)
    if not size:
        return None
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return None
    if free < 2 * size + (1 << 20):
        return None
    return (f"{log_path(path).name} holds {_amount(size)} of changes a writer committed but "
            "had not moved into the database when it stopped (killed, say): they are read "
            "from there and nothing is lost; the next command that writes (ingest, rescore, "
            "review) moves them in")


_KNOWN = {
    "player": "SELECT DISTINCT player FROM seats ORDER BY 1",
    "session": "SELECT DISTINCT session_id FROM hands ORDER BY 1",
    "variant": "SELECT DISTINCT variant FROM hands ORDER BY 1",
    "ruleset": "SELECT name FROM rulesets ORDER BY 1",
}
"""What :meth:`Store.known_values` reads for each kind of filter."""


class Store(FileLoads, HandLoading):
    """A DuckDB database file holding hands; opening it brings its schema up to date.

    ``read_only`` opens it for reading alone: any number of readers may share it, and a
    reader never changes it (an out-of-date schema is then an error naming the command
    that upgrades it). When another program holds the file, opening waits up to ``wait``
    seconds (default :func:`lock_wait`) for it (``on_wait`` is told once, when the
    waiting starts), then says who holds it.

    Opened for writing, it first gives back the space a write that failed left behind
    (:meth:`reclaim`), and a transaction that fails for lack of space gives back what it
    can at once.
    """

    def __init__(self, path: Path | str, *, read_only: bool = False,
                 wait: float | None = None,
                 on_wait: Callable[[str], None] | None = None) -> None:
        self.path = Path(path)
        self.con = connect(path, read_only=read_only, wait=wait, on_wait=on_wait)
        self._appends = Appends(self.con)
        self._stored: IdHashes | None = None
        self._asked = 0
        if read_only:
            current = self.version()
            if current != SCHEMA_VERSION:
                self.con.close()
                raise StoreError(
                    f"{path}: the database has schema version {current}, this ofcstats "
                    f"reads version {SCHEMA_VERSION}: "
                    + ("upgrade ofcstats" if current > SCHEMA_VERSION else
                       f"run {results.RESCORE} (or ingest) on it once to bring it up to date"))
        else:
            self.reclaim()
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

    def leftover(self) -> int:
        """Bytes a write that failed (for lack of space, or stopped) left behind, as the
        file was opened: the file past its last block in use (blocks a load wrote, then
        undone: past the blocks the file's header counts, or counted but free at its end,
        which a checkpoint cuts off), and a write-ahead log DuckDB has not yet moved into
        the file (committed changes, read from the log until then). The tables' blocks
        are looked at only when the file has free blocks."""
        row = self.con.execute(
            "SELECT total_blocks, free_blocks, block_size FROM pragma_database_size() "
            "WHERE database_name = current_database()").fetchall()
        total, free, block_size = (int(v) for v in row[0]) if row else (0, 0, 0)
        if not block_size:
            return 0
        size = self.path.stat().st_size
        end = HEADER_BYTES + total * block_size
        if free and size > HEADER_BYTES + (total - free) * block_size:
            end = min(end, HEADER_BYTES + (self.last_block() + 1) * block_size)
        return max(0, size - end) + log_size(self.path)

    def leftover_note(self) -> str | None:
        """What a failed write left behind (:meth:`leftover`) and what gives it back, in
        words; None when it left nothing."""
        left = self.leftover()
        if not left:
            return None
        return f"{self.path}: " + (stale_log(self.path) or waiting_changes(self.path) or (
            f"the database file holds {_megabytes(left)} a failed write left behind: the "
            "next command that writes (ingest, rescore, review) gives it back"))

    def reclaim(self) -> int:
        """Give back what a failed write left behind (:meth:`leftover`), as bytes: a
        checkpoint moves the write-ahead log into the file and cuts the file to its
        blocks (only a checkpoint with a change to write does, hence :meth:`compact`).
        It needs room for the log's changes in the file: when the disk has none, a
        :class:`StoreError` says how much to free."""
        left = self.leftover()
        if not left:
            return 0
        waiting = waiting_changes(self.path)
        try:
            self.compact()
        except duckdb.Error as error:
            if not storage_full(error):
                raise
            raise StoreError(f"{self.path}: the disk is full: " + (waiting or (
                f"the database file holds {_megabytes(left)} a failed write left behind; "
                "free a little space on that disk, then run a command that writes "
                "(ingest, rescore, review) to give it back"))) from None
        return max(0, left - self.leftover())

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
        """One transaction: committed when the block ends, rolled back if it raises.
        Hands added in it are written a row group at a time, the rest before the commit.
        One that fails for lack of space gives back the blocks it wrote (:meth:`reclaim`)
        where the disk leaves room to."""
        self.con.execute("BEGIN TRANSACTION")
        self._appends.holding = True
        try:
            yield
            self._appends.write_all()
        except BaseException as error:
            self._appends.drop()
            # After a failed write (a full disk, say) DuckDB may refuse even this; the
            # transaction is then undone when the database is next opened.
            with suppress(duckdb.Error):
                self.con.execute("ROLLBACK")
            self._next_key = None
            self._after_failure(error)
            raise
        finally:
            self._appends.holding = False
        try:
            self.con.execute("COMMIT")
        except duckdb.Error as error:  # (DuckDB has undone the transaction)
            self._next_key = None
            self._after_failure(error)
            raise

    def _after_failure(self, error: BaseException) -> None:
        """After a write that failed for lack of space, give back the blocks it wrote (a
        checkpoint cuts the file's free blocks off its end), if the disk has room to;
        else the next command that writes does (:meth:`reclaim`)."""
        if storage_full(error):
            with suppress(duckdb.Error):
                self.compact()

    def count(self, table: str) -> int:
        """Rows in a table."""
        row = self.con.execute(f'SELECT count(*) FROM "{table}"').fetchall()[0]
        return int(row[0]) if row else 0

    def blocks(self) -> tuple[int, int]:
        """The database file's blocks as DuckDB counts them, and their size in bytes."""
        row = self.con.execute(
            "SELECT total_blocks, block_size FROM pragma_database_size() "
            "WHERE database_name = current_database()").fetchall()
        return (int(row[0][0]), int(row[0][1])) if row else (0, 0)

    def last_block(self) -> int:
        """The highest block in use (-1 for none): the tables' data and the metadata.
        (A file's free blocks at its end are cut off at a checkpoint, but ``blocks``
        still counts them once the file is opened again.)"""
        tables = [name for (name,) in self.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
        ).fetchall()]
        parts = ["SELECT max(block_id) AS b FROM pragma_metadata_info()", *(
            f"SELECT max(block_id) FROM pragma_storage_info('{name}')" for name in tables)]
        row = self.con.execute(f"SELECT max(b) FROM ({' UNION ALL '.join(parts)})").fetchall()
        return int(row[0][0]) if row and row[0][0] is not None else -1

    @contextmanager
    def bulk_loading(self) -> Iterator[None]:
        """DuckDB set for a long load (``ofcstats ingest``) for the block, and set back after
        it (after a failed write the connection may refuse: it is closed next anyway)."""
        # The inserts run on this thread alone while the parsing keeps both cores busy:
        # DuckDB's own threads would only compete with it (about 10 % less processor
        # time on a million hands). The final compaction has the cores to itself again.
        self.con.execute("SET threads = 1")
        # Each full row group is compressed and written as soon as the next one starts,
        # on this thread while the parsing goes on. By default DuckDB holds five per table
        # in memory and compresses what it still holds in the commit, alone at the end of
        # the file: 0.8 s of a million street-form hands' 12 s (now 0.2 s), 0.5 s of a
        # 200,000-hand file's 3 s.
        self.con.execute("SET write_buffer_row_group_count = 1")
        try:
            yield
        finally:
            with suppress(duckdb.Error):
                self.con.execute("RESET threads")
                self.con.execute("RESET write_buffer_row_group_count")

    def limit_memory(self, limit: str, spill: str) -> None:
        """Hold DuckDB to ``limit`` (``"256MB"``), working from files in ``spill`` past it."""
        self.con.execute(f"SET memory_limit = '{limit}'")
        self.con.execute("SET temp_directory = ?", [spill])

    # Reading: SQL text in, frames out (the connection stays the store's).

    def query(self, sql: str, params: Sequence[object] = ()) -> pl.DataFrame:
        """The rows of a query (``params``: its parameters) as a frame."""
        return self.con.sql(sql, params=list(params)).pl()

    def batches(self, sql: str, params: Sequence[object] = (), rows: int = BATCH_ROWS
                ) -> Iterator[pa.RecordBatch]:
        """The rows of a query as Arrow batches of ``rows`` rows, one at a time."""
        yield from self.con.sql(sql, params=list(params)).to_arrow_reader(rows)

    def scored_names(self) -> pl.DataFrame:
        """Every ``variant``, ``ruleset`` and ``player`` a scored row can have: the
        rulesets each variant was scored under, and the players seated in its hands,
        read from the small tables (:func:`results.scored_names`), not the results."""
        return results.scored_names(self.con)

    def fetch(self, sql: str, params: Sequence[object] = (), *, rows: int = 1 << 16,
              progress: Callable[[int, int | None], None] | None = None,
              shrink: Callable[[pl.DataFrame], pl.DataFrame] | None = None) -> pl.DataFrame:
        """The rows of a query as one frame, fetched ``rows`` at a time, each part passed
        through ``shrink`` and counted to ``progress`` as it arrives (:func:`fetch_frame`)."""
        return fetch_frame(self.con.sql(sql, params=list(params)), rows, progress, shrink)

    def user_query(self, sql: str, rows: int,
                   progress: Callable[[int, int | None], None] | None = None, *,
                   contained: bool = True) -> pl.DataFrame | None:
        """The rows of a query a person wrote (None for a statement with no rows), fetched
        as :meth:`fetch` does. ``contained``: the query can read or write no file outside
        the database, from then on (DuckDB cannot undo it while the file is open in the
        process: a Python caller, who can read files anyway, passes False)."""
        if contained:
            self.con.execute("SET enable_external_access = false")
        relation = self.con.sql(sql)
        return None if relation is None else fetch_frame(relation, rows, progress)

    @contextmanager
    def registered(self, name: str, data: object) -> Iterator[None]:
        """``data`` (a frame, an Arrow table) readable by queries as ``name`` for the
        block (:func:`registered`)."""
        with registered(self.con, name, data):
            yield

    def session_hands(self, session_ids: pl.DataFrame) -> pl.DataFrame:
        """Every hand of the sessions in ``session_ids`` with what play order and games
        need (:func:`results.session_hands`)."""
        return results.session_hands(self.con, session_ids)

    # Rescoring: the SQL is results.py's; writes from another thread go through
    # :meth:`writer`.

    def register_ruleset(self, row: results.RulesetRow, rebuild: bool
                         ) -> tuple[int, bool, tuple[str, ...]]:
        """:func:`results.register_ruleset` on this store."""
        return results.register_ruleset(self.con, row, rebuild)

    def sessions_to_score(self, ruleset_id: int) -> pl.DataFrame:
        """:func:`results.sessions_to_score` on this store."""
        return results.sessions_to_score(self.con, ruleset_id)

    def session_seats(self, session_ids: Sequence[str]) -> pl.DataFrame:
        """:func:`results.session_seats` on this store."""
        return results.session_seats(self.con, session_ids)

    def write_scored(self, ruleset_ids: list[int], sessions: pl.DataFrame,
                     scored: pl.DataFrame, rows: pl.DataFrame,
                     showdowns: Mapping[int, pl.DataFrame]) -> None:
        """:func:`results.write_scored` on this store."""
        results.Writer(self.con).write_scored(ruleset_ids, sessions, scored, rows, showdowns)

    @contextmanager
    def writer(self) -> Iterator[results.Writer]:
        """A second connection to the same database for the block, to write scored batches
        on another thread while this one reads and scores the next."""
        cursor = self.con.cursor()
        try:
            yield results.Writer(cursor)
        finally:
            cursor.close()

    def mark_rulesets_scored(self, ruleset_ids: Collection[int]) -> None:
        """:func:`results.mark_rulesets_scored` on this store."""
        results.mark_rulesets_scored(self.con, ruleset_ids)

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
                   s.surrendered, s.top, s.middle, s.bottom, s.unit
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

    def require_scored(self, names: Sequence[str] = (), known: Collection[str] | None = None,
                       *, filters: results.Filters | None = None,
                       pairs: Mapping[str, str] | None = None) -> None:
        """The one check that a question can be answered from what is scored: raise
        :class:`StoreError` (one line: what is missing and the command that fixes it,
        :func:`results.not_scored_text`, :func:`results.unscored_text`)

        - naming those of ``names`` not among ``known`` (by default the rulesets this
          store has scored);
        - with ``filters``, when an answer for them would leave out stored hands: hands of
          its sessions and variants that a ruleset it answers for (``filters.rulesets``,
          else every ruleset stored, or ``pairs``: variant to ruleset) has not scored, or
          scored before their session grew; and, when no ruleset is named, hands of a
          variant no ruleset is scored over. Read from the progress marks: a grouped
          count of hands."""
        if names:
            have = results.scored_ruleset_names(self.con) if known is None else known
            missing = [name for name in names if name not in have]
            if missing:
                raise StoreError(results.not_scored_text(missing))
        if filters is not None:
            unscored = results.unscored(self.con, filters, pairs)
            if not unscored.is_empty():
                raise StoreError(results.unscored_text(unscored))

    def scored_rulesets(self, names: Sequence[str] | None = None) -> list[Ruleset]:
        """The rulesets this store has scored (or those named), as they were when scored."""
        found = {}
        for name, definition in results.ruleset_definitions(self.con):
            try:
                found[name] = ruleset_from(json.loads(definition),
                                           f"the stored ruleset {name}")
            except RulesetError as error:
                raise StoreError(f"{error}; it was scored by another version of ofcstats: "
                                 f"score it again with {results.RESCORE} --rebuild --ruleset "
                                 f"NAME_OR_FILE") from None
        if names is None:
            return list(found.values())
        self.require_scored(names, found)
        return [found[name] for name in names]

    def unchecked(self, filters: results.Filters | None = None) -> pl.DataFrame:
        """Hands logged under a ruleset this store does not score over their variant,
        whose logged points no re-score checks, per ruleset and variant, with why
        (:func:`results.unchecked`; :func:`results.unchecked_text` words it)."""
        return results.unchecked(self.con, filters)

    def info(self) -> dict[str, object]:
        """Tables and their row counts, sessions, players, variants and the date range, and
        per variant and ruleset how many hands are scored (:func:`results.scoring_check`)."""
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
        check = results.scoring_check(self.con)
        scoring = check.to_dicts()
        whole = results.whole_hands(self.con, check)
        unchecked = self.unchecked()
        return {
            "path": str(self.path),
            "schema_version": self.version(),
            "tables": counts,
            "sessions": int(row[0]) if row else 0,
            "players": int(players[0]) if players else 0,
            "first_played_at": row[1].isoformat() if row and row[1] else None,
            "last_played_at": row[2].isoformat() if row and row[2] else None,
            "variants": variants,
            # Per variant and ruleset scored over it: the hands stored, those the results
            # hold rows of, and those the progress marks say are up to date.
            "scoring": scoring,
            # Per variant: the hands scored, and up to date, under every ruleset of it.
            "whole_hands": whole,
            # Complete: every hand scored under every ruleset held over its variant, and
            # under the ruleset it was logged under (else its logged points go unchecked).
            "scoring_complete": unchecked.is_empty() and all(
                row["ruleset"] is not None and row["scored"] == row["current"] == row["hands"]
                for row in scoring),
            "unchecked": unchecked.to_dicts(),
            "unchecked_text": results.unchecked_text(unchecked) if unchecked.height else None,
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

