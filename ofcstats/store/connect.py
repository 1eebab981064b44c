"""Opening the database file: waiting for another program that holds it, then saying
who does; and what every statement shares: a frame registered for a query
(:func:`registered`), Ctrl-C as DuckDB reports it (:func:`interrupted`), a write that
failed for lack of space (:func:`storage_full`)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from ofcstats.errors import DatabaseInUseError, Interrupted, StoreError, UsageError
from ofcstats.paths import FIX_DATABASE, writable_database
from ofcstats.sanitize import visible

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
        raise UsageError(f"OFCSTATS_LOCK_WAIT={text!r} is not a number of seconds: give "
                         "one, such as 30") from None


def _holder(error: duckdb.Error) -> str:
    """The program (its process id, and what it runs where the system says) that DuckDB's
    lock error names."""
    found = _LOCK_HOLDER.search(str(error))
    if not found:
        return "another program"
    pid = found.group("pid")
    program = Path(found.group("program")).name or found.group("program")
    if not pid:
        return program
    running = _command_of(int(pid))
    return f"{program} (PID {pid}{': ' + running if running else ''})"


def _command_of(pid: int) -> str | None:
    """The first words of a process's command line, files by their name (``python
    ofcstats ingest logs ...``), from Linux's /proc; None where there is none."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    shown: list[str] = []
    for word in (w.decode(errors="replace") for w in raw.split(b"\0") if w):
        if len(shown) == 4 or (shown and shown[-1] == "-c"):  # (not a program's text)
            shown.append("...")
            break
        shown.append(Path(word).name or word if "/" in word else word)
    return visible(" ".join(shown)) if shown else None


STORAGE_FULL = ("No space left on device", "Disk quota exceeded", "File too large")
"""How the system says a file could not grow (DuckDB passes its words on)."""


def storage_full(error: BaseException) -> bool:
    """Whether ``error`` is a write that failed for lack of space."""
    return any(cause in str(error) for cause in STORAGE_FULL)


_CANNOT_WRITE = ("Permission denied", "Read-only file system")
"""How the system says a file cannot be opened for writing (DuckDB passes its words on)."""


def _is_lock(error: duckdb.Error) -> bool:
    return "Could not set lock" in str(error) or "Conflicting lock" in str(error)


def connect(path: Path | str, *, read_only: bool, wait: float | None,
            on_wait: Callable[[str], None] | None) -> duckdb.DuckDBPyConnection:
    """A connection to the database file, waiting up to ``wait`` seconds (default
    :func:`lock_wait`) for a program that holds it; ``on_wait`` is told once, when the
    waiting starts."""
    if not read_only and str(path) != ":memory:":
        writable_database(Path(path))  # (every writer refused the same way, before DuckDB)
    patience = lock_wait(wait)
    deadline = time.monotonic() + patience
    pause = 0.05
    told = False
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
        except duckdb.Error as error:
            if "in-memory database in read-only mode" in str(error):
                raise _not_a_database(path) from None
            if not read_only and any(cause in str(error) for cause in _CANNOT_WRITE):
                # (a file system the permission bits do not tell of)
                raise UsageError(f"{path}: cannot write the database: the file is "
                                 f"read-only; {FIX_DATABASE}") from None
            if not _is_lock(error):
                raise StoreError(f"{path}: cannot open the database: "
                                 f"{str(error).splitlines()[0]}") from None
            if time.monotonic() >= deadline:
                raise DatabaseInUseError(str(path), _holder(error), patience) from None
            if on_wait is not None and not told:
                on_wait(f"waiting up to {patience:g} s for {path}, in use by {_holder(error)}")
                told = True
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 1.0)
            continue
        if str(path) != ":memory:" and con.execute(
                "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
                ).fetchone() == (None,):
            con.close()
            raise _not_a_database(path)
        return con


def _not_a_database(path: Path | str) -> StoreError:
    """A file DuckDB would open as a database in memory (a JSON file, whose writes would
    be lost), not as the database file given."""
    return StoreError(f"{path}: cannot open the database: the file is not a DuckDB "
                      "database file (--db names the database; the logs to load are the "
                      "arguments)")


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, name: str, data: Any) -> Iterator[None]:
    """``data`` (a frame, an Arrow table or stream) readable by queries as ``name`` for
    the block. When the block fails, its error is the one raised: after a query DuckDB
    interrupted (Ctrl-C) or refused, the transaction is aborted and unregistering fails
    too, which would hide the cause."""
    con.register(name, data)
    try:
        yield
    except BaseException:
        with suppress(duckdb.Error):
            con.unregister(name)
        raise
    con.unregister(name)


def fetch_frame(relation: duckdb.DuckDBPyRelation, rows: int,
                progress: Callable[[int, int | None], None] | None = None,
                shrink: Callable[[pl.DataFrame], pl.DataFrame] | None = None) -> pl.DataFrame:
    """The relation's rows as one frame, fetched ``rows`` at a time, each batch passed
    through ``shrink`` as it arrives (to hold less memory than the whole fetched as it
    is) and ``progress(rows fetched, None)`` called after it."""
    def same(part: pl.DataFrame) -> pl.DataFrame:
        return part

    shrink = shrink or same
    # DuckDB 2 renamed fetch_record_batch (kept, deprecated) to to_arrow_reader.
    reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_record_batch
    parts, fetched = [], 0
    for batch in reader(rows):
        parts.append(shrink(pl.DataFrame(batch)))
        fetched += batch.num_rows
        if progress is not None:
            progress(fetched, None)
    return pl.concat(parts) if parts else shrink(relation.limit(0).pl())


def interrupted(error: BaseException) -> bool:
    """Whether ``error`` is Ctrl-C: Python's, or DuckDB's word for a query it stopped
    (``InterruptException``, or a ``RuntimeError`` saying "Query interrupted"), or an
    insert whose Arrow stream of rows (read back in Python) was stopped by it: DuckDB
    then says reading the Arrow source failed, naming the interrupt."""
    return isinstance(error, KeyboardInterrupt | duckdb.InterruptException) or (
        isinstance(error, RuntimeError) and str(error).strip() == "Query interrupted") or (
        isinstance(error, duckdb.Error) and "the Arrow source" in str(error)
        and "KeyboardInterrupt" in str(error))


@contextmanager
def kept_on_interrupt(kept: Callable[[], str]) -> Iterator[None]:
    """Ctrl-C in the block, Python's or DuckDB's (:func:`interrupted`), raised as
    :class:`Interrupted` with ``kept()``'s words: what the work kept, what to run next.
    An :class:`Interrupted` from inside keeps its own words."""
    try:
        yield
    except Interrupted:
        raise
    except BaseException as error:
        if interrupted(error):
            raise Interrupted(kept()) from error
        raise
