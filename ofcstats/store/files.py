"""File loads: what ``ingested_files`` and ``rejects`` record of each file loaded.

:class:`FileLoads` is the part of :class:`~ofcstats.store.Store` that records a load
and finds an earlier load of the same content or path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import duckdb
import polars as pl

from ofcstats.store.connect import registered
from ofcstats.store.hands import _stream


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


class FileLoads:
    """The record of file loads (call inside a transaction)."""

    con: duckdb.DuckDBPyConnection

    def begin_file(self, path: str, fmt: str | None, size: int | None,
                   first_line: int = 1) -> int:
        """Record the start of a file load; returns its ``file_id``."""
        row = self.con.execute(
            "INSERT INTO ingested_files (file_id, path, format, size, first_line, started_at) "
            "SELECT coalesce(max(file_id), 0) + 1, ?, ?, ?, ?, current_timestamp "
            "FROM ingested_files RETURNING file_id", [path, fmt, size, first_line]).fetchall()
        return int(row[0][0])

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

    def loaded_paths(self) -> set[str]:
        """Paths of the files loaded so far (only a file at one of these paths has a last
        load to continue or to have changed since)."""
        return {str(path) for (path,) in self.con.execute(
            "SELECT DISTINCT path FROM ingested_files WHERE content_hash IS NOT NULL "
            "AND finished_at IS NOT NULL").fetchall()}

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

    def add_rejects(self, rejects: pl.DataFrame, file_id: int) -> None:
        """Store rejects of the file being loaded."""
        if not rejects.height:
            return
        with registered(self.con, "new_rejects", _stream(rejects)):
            self.con.execute("""
                INSERT INTO rejects
                SELECT ?, source, line, hand_id, reason, raw FROM new_rejects
            """, [file_id])
