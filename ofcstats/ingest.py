"""Ingest: log files into the store, each file in one transaction.

Parsing and checking run on worker threads a few batches ahead of the inserts (Arrow,
numpy, Polars and DuckDB release the interpreter lock, so they overlap on two cores);
the queues between them hold a few batches, so the Python side's memory does not grow
with the file. A crash or kill mid-file leaves the database as before that file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

import polars as pl

from ofcstats import formats
from ofcstats.errors import HandError, OfcstatsError, UsageError
from ofcstats.formats.lines import BATCH_BYTES
from ofcstats.paths import writable_file
from ofcstats.records import HandBatch, reject_rows
from ofcstats.store import DEFAULT_DB, Store

LOG_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv")
COMPRESSED_SUFFIXES = (".gz", ".zst")
FIRST_REASONS = 10
APPEND_HANDS = 40_000  # hands per insert: about one DuckDB row group of seats
PARSE_WORKERS = 2  # batches parsed at once; with the inserts, enough for two cores

Progress = Callable[[int, int], None]
"""Called with (bytes read so far, bytes in all files)."""


@dataclass
class Reject:
    """One thing not loaded, for the summary."""

    path: str
    line: int | None
    hand_id: str | None
    reason: str


@dataclass
class FileSummary:
    """What loading one file did."""

    path: str
    format: str | None = None
    size: int = 0
    sha256: str | None = None
    hands: int = 0
    duplicates: int = 0
    conflicts: int = 0
    rejected: int = 0
    problem: str | None = None  # why the file as a whole was not (fully) read
    seconds: float = 0.0


@dataclass
class IngestSummary:
    """What an ingest run did, file by file, with the first reasons for rejects."""

    database: str
    files: list[FileSummary] = field(default_factory=list)
    first_rejects: list[Reject] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def hands(self) -> int:
        """Hands added."""
        return sum(f.hands for f in self.files)

    @property
    def duplicates(self) -> int:
        """Hands skipped because the store (or the file) already had them."""
        return sum(f.duplicates for f in self.files)

    @property
    def conflicts(self) -> int:
        """Hands rejected because a different hand holds their id."""
        return sum(f.conflicts for f in self.files)

    @property
    def rejected(self) -> int:
        """Rejects written (conflicts and file-level problems included)."""
        return sum(f.rejected for f in self.files)

    @property
    def clean(self) -> bool:
        """Nothing rejected and every file read."""
        return self.rejected == 0 and not any(f.problem for f in self.files)

    def to_dict(self) -> dict[str, object]:
        """The summary as plain data (for ``--json``)."""
        return {
            "database": self.database, "files": len(self.files), "hands": self.hands,
            "duplicates": self.duplicates, "conflicts": self.conflicts,
            "rejected": self.rejected, "seconds": round(self.seconds, 3),
            "per_file": [asdict(f) for f in self.files],
            "first_rejects": [asdict(r) for r in self.first_rejects],
        }


def default_database() -> Path:
    """``$OFCSTATS_DB`` when set, else ``./ofcstats.duckdb``."""
    return Path(os.environ.get("OFCSTATS_DB") or DEFAULT_DB)


def collect_paths(paths: Iterable[Path]) -> list[Path]:
    """Files named, and log files under directories named (recursively, in name order);
    each file once. A directory contributes files ending in .jsonl, .ndjson, .json or
    .csv, optionally followed by .gz or .zst; hidden files are skipped."""
    found: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.is_file() and _is_log(p)
                            and not any(part.startswith(".") for part in p.relative_to(path).parts))
        else:
            inside = [path]
        for p in inside:
            key = p.resolve()
            if key not in seen:
                seen.add(key)
                found.append(p)
    return found


def check_inputs(paths: list[Path], files: list[Path], database: Path) -> None:
    """Raise :class:`UsageError` for a missing input, a directory holding no logs, or a
    database file that cannot be made where it is asked for."""
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
        if path.is_dir() and not any(f.is_relative_to(path) for f in files):
            raise UsageError(f"{path}: no log files in this directory (looked for "
                             f"{', '.join(LOG_SUFFIXES)}, optionally .gz or .zst)")
    if not files:
        raise UsageError("no log files given")
    writable_file(database, "database")


def _is_log(path: Path) -> bool:
    name = path.name.lower()
    for suffix in COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    return name.endswith(LOG_SUFFIXES)


def ingest(paths: Iterable[Path], database: Path | str | None = None,
           format_name: str | None = None, progress: Progress | None = None,
           batch_bytes: int = BATCH_BYTES, first_reasons: int = FIRST_REASONS,
           wait: float | None = None) -> IngestSummary:
    """Load log files (and directories of them) into the store at ``database``.

    Inputs are checked before the database is opened: a path that does not exist, a
    directory without logs or a database that cannot be created is a
    :class:`~ofcstats.errors.UsageError`, and nothing is created. ``wait``: seconds to
    wait for a database another program holds (see :class:`~ofcstats.store.Store`).
    """
    started = time.perf_counter()
    if format_name is not None:
        formats.format_module(format_name)
    paths = list(paths)
    files = collect_paths(paths)
    db = Path(database) if database is not None else default_database()
    check_inputs(paths, files, db)
    sizes = [_size(p) for p in files]
    total = sum(sizes)
    summary = IngestSummary(database=str(db))
    done_before = 0
    with Store(db, wait=wait) as store:
        for path, size in zip(files, sizes, strict=True):
            def file_progress(done: int, base: int = done_before) -> None:
                if progress is not None:
                    progress(base + done, total)

            result = _ingest_file(store, path, size, format_name, file_progress, batch_bytes,
                                  summary, first_reasons)
            summary.files.append(result)
            done_before += size
            if progress is not None:
                progress(done_before, total)
        if summary.hands:
            store.compact()
    summary.seconds = time.perf_counter() - started
    return summary


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _ingest_file(store: Store, path: Path, size: int, format_name: str | None,
                 progress: Callable[[int], None], batch_bytes: int, summary: IngestSummary,
                 first_reasons: int) -> FileSummary:
    started = time.perf_counter()
    result = FileSummary(path=str(path), size=size)
    try:
        result.format = format_name or formats.detect(path)
    except (HandError, OSError) as error:
        return _file_problem(store, path, result, _reason(error, path), summary, started,
                             empty="the file is empty" in str(error))
    digest = hashlib.sha256()
    try:
        with store.transaction():
            file_id = store.begin_file(str(path), result.format, size)
            batches = formats.read(path, result.format, progress, batch_bytes, digest,
                                   workers=PARSE_WORKERS)
            pending = HandBatch()
            for batch in _ahead(batches):
                # Appends of a few row groups each let DuckDB write them out before the
                # commit instead of keeping them in memory.
                pending = formats.merge(pending, batch)
                if pending.hands.height >= APPEND_HANDS:
                    _store(store, pending, file_id, result, summary, first_reasons)
                    pending = HandBatch()
            _store(store, pending, file_id, result, summary, first_reasons)
            result.sha256 = digest.hexdigest()
            store.forget_repeated_rejects(file_id, result.sha256)
            result.rejected = _rejects_of(store, file_id)
            store.finish_file(file_id, result.sha256, hands=result.hands,
                              duplicates=result.duplicates, conflicts=result.conflicts,
                              rejected=result.rejected)
    except (OfcstatsError, OSError) as error:
        result = FileSummary(path=str(path), size=size, format=result.format)
        return _file_problem(store, path, result,
                             f"{_reason(error, path)}; nothing from this file was loaded",
                             summary, started)
    result.seconds = time.perf_counter() - started
    return result


def _store(store: Store, batch: HandBatch, file_id: int, result: FileSummary,
           summary: IngestSummary, first_reasons: int) -> None:
    added, conflicts = store.add(batch, file_id)
    rejects = pl.concat([batch.rejects, conflicts])
    store.add_rejects(rejects, file_id)
    result.hands += added.loaded
    result.duplicates += added.duplicates + batch.duplicates
    result.conflicts += added.conflicts + _in_batch_conflicts(batch)
    _note(summary, rejects, first_reasons)


def _reason(error: BaseException, path: Path) -> str:
    return str(error).removeprefix(f"{path}: ")


def _in_batch_conflicts(batch: HandBatch) -> int:
    return batch.rejects.filter(
        pl.col("reason").str.contains("a different hand with this id", literal=True)).height


def _rejects_of(store: Store, file_id: int) -> int:
    row = store.con.execute("SELECT count(*) FROM rejects WHERE file_id = ?",
                            [file_id]).fetchall()[0]
    return int(row[0]) if row else 0


def _file_problem(store: Store, path: Path, result: FileSummary, reason: str,
                  summary: IngestSummary, started: float, *, empty: bool = False
                  ) -> FileSummary:
    """Record a file that could not be read: an empty file loads nothing and is no
    reject; any other problem is one reject for the whole file."""
    result.problem = None if empty else reason
    with store.transaction():
        file_id = store.begin_file(str(path), result.format, result.size)
        if not empty:
            store.add_rejects(reject_rows(str(path), [None], [reason]), file_id)
            result.rejected = 1
            if len(summary.first_rejects) < FIRST_REASONS:
                summary.first_rejects.append(Reject(str(path), None, None, reason))
        store.finish_file(file_id, _sha256(path), hands=0, duplicates=0, conflicts=0,
                          rejected=result.rejected)
    result.seconds = time.perf_counter() - started
    return result


def _sha256(path: Path) -> str | None:
    try:
        digest = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None


def _note(summary: IngestSummary, rejects: pl.DataFrame, limit: int) -> None:
    room = limit - len(summary.first_rejects)
    if room <= 0 or not rejects.height:
        return
    for source, line, hand_id, reason in rejects.head(room).select(
            "source", "line", "hand_id", "reason").iter_rows():
        summary.first_rejects.append(Reject(source, line, hand_id, reason))


T = TypeVar("T")
_DONE = object()


def _ahead(items: Iterator[T], depth: int = 2) -> Iterator[T]:
    """Run ``items`` on a worker thread, at most ``depth`` items ahead of the caller.

    An error in the worker is raised in the caller; when the caller stops early, the
    worker stops at its next item.
    """
    handoff: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def work() -> None:
        try:
            with contextlib.closing(items):  # type: ignore[type-var]
                for item in items:
                    while not stop.is_set():
                        try:
                            handoff.put(item, timeout=0.1)
                            break
                        except queue.Full:
                            continue
                    if stop.is_set():
                        return
            handoff.put(_DONE)
        except BaseException as error:  # handed to the caller, who raises it
            handoff.put(error)

    worker = threading.Thread(target=work, name="ofcstats-parse", daemon=True)
    worker.start()
    try:
        while True:
            item = handoff.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        while worker.is_alive():
            with contextlib.suppress(queue.Empty):
                handoff.get(timeout=0.1)
        worker.join()
