"""Adding hands: a checked batch into ``hands``, ``seats`` and ``seat_placements``.

A hand id already stored is a repeat when it is the same hand (skipped) and a conflict
when it is not (returned as a reject); :class:`HandLoading` is the part of
:class:`~ofcstats.store.Store` that does it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from ofcstats.records import (
    REJECTS_SCHEMA,
    UPDATABLE_HAND_FIELDS,
    UPDATABLE_SEAT_FIELDS,
    HandBatch,
    IdHashes,
    id_hashes,
)
from ofcstats.store.connect import registered

_KNOWN: dict[str, pl.DataType] = {
    "hand_id": pl.String(), "same": pl.Boolean(), "line": pl.Int64(), "path": pl.String(),
    "hand_key": pl.Int64(), "session_id": pl.String(), "changed": pl.String()}
"""What :meth:`HandLoading._known` tells of each incoming hand already stored."""


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


def _seat_moves(moves: pl.DataFrame, base: int) -> pa.Table:
    """A batch's moves (:data:`~ofcstats.records.MOVES_SCHEMA`) as ``seat_placements``
    rows; ``base`` is the ``hand_key`` of hand 0."""
    return moves.select(hand_key=pl.col("hand").cast(pl.Int64) + base, seat=pl.col("seat"),
                        moves=pl.col("moves")).to_arrow()


def _conflict_rejects(batch: HandBatch, conflicts: pl.DataFrame) -> pl.DataFrame:
    """The rejects of the batch's hands that conflict with stored ones (``conflicts``:
    the stored hand's path and line, whether the hand is the ``same`` and what
    ``changed``), each reason naming the stored hand and what to do."""
    if conflicts.is_empty():
        return pl.DataFrame(schema=REJECTS_SCHEMA)
    reasons = pl.when(pl.col("same")).then(pl.format(
        "hand {}: the same hand as the one stored (from {} line {}) but another {}: "
        "to keep the new values, load it with --update", pl.col("hand_id"),
        pl.col("path"), pl.col("line_right"), pl.col("changed"))).otherwise(pl.format(
        "hand {}: a different hand with this id is already stored (from {} line {})",
        pl.col("hand_id"), pl.col("path"), pl.col("line_right")))
    rejects = batch.hands.join(conflicts, on="hand_id").select(
        pl.col("source"), "line",
        pl.col("hand_id"),
        reasons.alias("reason"),
    ).sort("line")
    # A loop, but over conflicts only. (A Polars UDF would keep the batch alive.)
    return rejects.with_columns(raw=pl.Series(
        [batch.raw_text(line) for line in rejects.get_column("line")], dtype=pl.String,
    )).cast(REJECTS_SCHEMA)  # type: ignore[arg-type]


def stored_ids(con: duckdb.DuckDBPyConnection, held: IdHashes) -> IdHashes:
    """The stored hands' ids' hashes, read from the database once, and the ``held`` ones
    (on their way in, not written yet). The caller keeps them up to date with the hands
    it adds, whether their transaction commits or not: a hash too many only costs a look
    in the database."""
    reader = con.sql("SELECT hand_id FROM hands").to_arrow_reader(1 << 20)
    return IdHashes(np.concatenate([*(id_hashes(pl.Series(part.column(0))) for part in reader),
                                    *held.runs, np.empty(0, dtype=np.uint64)]))


class HandLoading:
    """Adding a file's hands (call inside a transaction)."""

    con: duckdb.DuckDBPyConnection
    _next_key: int | None
    _appends: Appends
    _stored: IdHashes | None
    _asked: int  # batches added so far

    def add(self, batch: HandBatch, file_id: int, *, update: bool = False
            ) -> tuple[Added, pl.DataFrame]:
        """Store a batch's hands; a hand id already stored is skipped when it is the same
        hand and returned as a conflict reject when it is not. The same cards with other
        values of the fields the fingerprint leaves out
        (:data:`~ofcstats.records.UPDATABLE`) are a conflict too, or with ``update``
        replace the stored values."""
        hashes = id_hashes(batch.hands.get_column("hand_id"))
        if self._appends.holds_any(hashes):
            self._appends.write_all()  # a hand repeated from earlier in the file
        known = changed = pl.DataFrame(schema=_KNOWN)
        if self._may_be_stored(hashes):
            ids = batch.hands.select("hand_id", "fingerprint", *UPDATABLE_HAND_FIELDS)
            seats = batch.seats.select("hand_id", "seat", *UPDATABLE_SEAT_FIELDS)
            with registered(self.con, "incoming_ids", ids.to_arrow()):
                # Most batches hold new hands only: the join alone says so, in a fraction
                # of the time of the comparison in _known (which reads the stored seats).
                if self.con.execute("SELECT count(*) FROM incoming_ids i JOIN hands h "
                                    "ON h.hand_id = i.hand_id").fetchall()[0][0]:
                    with registered(self.con, "incoming_seats", seats.to_arrow()):
                        known = self._known()
                        changed = known.filter(pl.col("same") & (pl.col("changed") != ""))
                        if update and changed.height:
                            self._update(changed)
        conflicts = known  # (empty: most batches hold new hands only)
        if known.height:
            conflicts = known.filter(~pl.col("same") if update else
                                     ~pl.col("same") | (pl.col("changed") != ""))
        rejects = _conflict_rejects(batch, conflicts)
        if known.height:
            batch = batch.without(known.get_column("hand_id"))
            hashes = id_hashes(batch.hands.get_column("hand_id"))
        self._insert(batch, file_id)
        if self._stored is not None:
            self._stored.add(hashes)
        updated = changed.height if update else 0
        return Added(loaded=batch.hands.height,
                     duplicates=known.height - conflicts.height - updated,
                     conflicts=conflicts.height, updated=updated), rejects

    def _may_be_stored(self, hashes: np.ndarray) -> bool:
        """Whether any of these hand ids (:func:`~ofcstats.records.id_hashes`) may be
        stored already. The first batch asks the database; from the second on, the
        stored ids' hashes (:func:`stored_ids`), read then, answer (a load of many
        files would otherwise scan every stored id once a file)."""
        if self._stored is None:
            self._asked += 1
            if self._asked == 1:
                return True
            self._stored = stored_ids(self.con, self._appends.held_ids)
        return self._stored.may_hold_any(hashes)

    def _known(self) -> pl.DataFrame:
        """The incoming hands (``incoming_ids``, ``incoming_seats``) already stored
        (:data:`_KNOWN`): the same hand or not, and which fields the fingerprint leaves
        out differ, by name."""
        seat_changes = ", ".join(
            "CASE WHEN EXISTS (SELECT 1 FROM incoming_seats n JOIN seats s ON s.hand_key = "
            "h.hand_key AND s.seat = n.seat WHERE n.hand_id = i.hand_id AND "
            f"n.{c} IS DISTINCT FROM s.{c}) THEN '{c}' END" for c in UPDATABLE_SEAT_FIELDS)
        return self.con.sql(f"""
            SELECT i.hand_id, i.fingerprint = h.fingerprint AS same, h.line,
                   f.path, h.hand_key, h.session_id,
                   concat_ws(', ', {", ".join(
                       f"CASE WHEN i.{c} IS DISTINCT FROM h.{c} THEN '{c}' END"
                       for c in UPDATABLE_HAND_FIELDS)}, {seat_changes}) AS changed
            FROM incoming_ids i
            JOIN hands h ON h.hand_id = i.hand_id
            JOIN ingested_files f ON f.file_id = h.file_id
        """).pl().cast(_KNOWN)

    def _update(self, changed: pl.DataFrame) -> None:
        """Replace the stored values of :data:`~ofcstats.records.UPDATABLE` fields of the
        ``changed`` hands (from ``incoming_ids`` and ``incoming_seats``); their sessions are
        rescored."""
        with registered(self.con, "changed_ids",
                        changed.select("hand_id", "session_id").to_arrow()):
            self.con.execute(f"""
                UPDATE hands h SET {", ".join(f"{c} = i.{c}" for c in UPDATABLE_HAND_FIELDS)}
                FROM incoming_ids i
                WHERE i.hand_id = h.hand_id AND i.hand_id IN (SELECT hand_id FROM changed_ids)""")
            self.con.execute(f"""
                UPDATE seats s SET {", ".join(f"{c} = n.{c}" for c in UPDATABLE_SEAT_FIELDS)}
                FROM incoming_seats n JOIN hands h ON h.hand_id = n.hand_id
                WHERE s.hand_key = h.hand_key AND s.seat = n.seat
                  AND n.hand_id IN (SELECT hand_id FROM changed_ids)""")
            # A count no session has: the next rescore redoes these sessions whole.
            self.con.execute("UPDATE scored_sessions SET hands = -1 "
                             "WHERE session_id IN (SELECT session_id FROM changed_ids)")

    def _insert(self, batch: HandBatch, file_id: int) -> None:
        if not batch.hands.height:
            return
        if self._next_key is None:
            row = self.con.execute("SELECT coalesce(max(hand_key), 0) + 1 FROM hands").fetchall()[0]
            self._next_key = int(row[0]) if row else 1
        base = self._next_key
        self._next_key += batch.hands.height
        key = pl.col("hand").cast(pl.Int64) + base
        hands = batch.hands.with_columns(
            hand_key=pl.int_range(base, base + batch.hands.height, dtype=pl.Int64),
            file_id=pl.lit(file_id, dtype=pl.Int32))
        self._appends.add("hands", hands.to_arrow())
        self._appends.add("seats", batch.seats.with_columns(hand_key=key).to_arrow())
        self._appends.add("seat_placements", _seat_moves(batch.moves, base))
        if not self._appends.holding:
            self._appends.write_all()


_COLUMNS = {
    "hands": ("hand_key", "hand_id", "session_id", "played_at", "variant", "ruleset",
              "point_value", "button", "n_seats", "extra", "file_id", "line", "fingerprint"),
    "seats": ("hand_key", "seat", "player", "fantasyland", "timed_out", "surrendered",
              "reported_points", "dealt", "top", "middle", "bottom", "unit"),
    "seat_placements": ("hand_key", "seat", "moves"),
}
"""The columns of each table :class:`Appends` writes, in the table's order."""
ROW_GROUP_ROWS = 122_880
"""DuckDB's rows per row group."""


class Appends:
    """Rows on their way into ``hands``, ``seats`` and ``seat_placements``, written a
    whole number of row groups at a time while ``holding`` (inside a transaction).

    DuckDB writes each full row group of a large append straight to the file, but a
    partly filled one stays behind for the checkpoint to merge: appends of any size
    left a load's final checkpoint rewriting most of what it had just written. What is
    held is less than a row group per table, and is written before the transaction
    commits (:meth:`write_all`) or dropped with it (:meth:`drop`).
    """

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.holding = False
        self.held: dict[str, list[pa.Table]] = {name: [] for name in _COLUMNS}
        self.held_ids = IdHashes()  # of the held hands

    def add(self, table: str, rows: pa.Table) -> None:
        """Rows for ``table`` (its :data:`_COLUMNS` by name, any order, more allowed)."""
        if not rows.num_rows:
            return
        self.held[table].append(rows)
        if table == "hands":
            self.held_ids.add(id_hashes(pl.Series(rows.column("hand_id"))))
        whole = sum(t.num_rows for t in self.held[table]) // ROW_GROUP_ROWS * ROW_GROUP_ROWS
        if whole:
            self._write(table, whole)

    def holds_any(self, hashes: np.ndarray) -> bool:
        """Whether any of these hand ids (:func:`~ofcstats.records.id_hashes`) may be
        among the hands held: a rare false yes only writes what is held a little early."""
        return self.held_ids.may_hold_any(hashes)

    def write_all(self) -> None:
        """Write everything held."""
        for table, parts in self.held.items():
            if parts:
                self._write(table, sum(t.num_rows for t in parts))

    def drop(self) -> None:
        """Forget everything held (its transaction was rolled back)."""
        self.held = {name: [] for name in _COLUMNS}
        self.held_ids = IdHashes()

    def _write(self, table: str, count: int) -> None:
        rows = pa.concat_tables(self.held[table]) if len(self.held[table]) > 1 \
            else self.held[table][0]
        rest = rows.slice(count)
        self.held[table] = [rest] if rest.num_rows else []
        if table == "hands":
            self.held_ids = IdHashes(id_hashes(pl.Series(rest.column("hand_id")))
                                     if rest.num_rows else None)
        # Straight from Arrow (half the fixed cost of a registered view, which counts
        # when many small files are loaded).
        self.con.from_arrow(_stream(rows.slice(0, count).select(list(_COLUMNS[table])))
                            ).insert_into(table)
