"""Ingest: log files into the store, each file in one transaction.

Before a file is read its content is looked up: a file whose content (BLAKE3 hash,
whatever its name or path) is already loaded is skipped; a file loaded before at the
same path that has only grown (lines appended) loads its new lines only; one that has
changed otherwise is reported and not loaded. Parsing and checking run on worker
threads a few batches ahead of the inserts (Arrow, numpy, Polars and DuckDB release the
interpreter lock, so they overlap on two cores); the files of a directory or pattern
are read several at once on the same threads, while one of them is stored (one writer,
each file in its own transaction, in order; DuckDB works on the writer's thread alone
meanwhile, as its own threads would only compete with the parsing). The queues between
them hold a few batches, so the Python side's memory does not grow with the file. A
crash or kill mid-file leaves the database as before that file.

``-`` (standard input), ``/dev/stdin`` and FIFOs are read once, as a stream: the bytes
read to detect the format are replayed in front of the rest. A stream's content is not
known before it is read, so it is never skipped as already loaded; its hands already
stored are skipped by their ids as any file's are.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import mmap
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

import blake3
import duckdb
import polars as pl

from ofcstats import formats, reading
from ofcstats.errors import HandError, NothingLoadedError, OfcstatsError, StoreError, UsageError
from ofcstats.formats.lines import Tally, is_stream, open_stream
from ofcstats.paths import writable_database
from ofcstats.records import HandBatch, reject_rows
from ofcstats.store import DEFAULT_DB, FileLoad, Store, waiting_changes
from ofcstats.store.connect import interrupted, kept_on_interrupt, storage_full

LOG_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv")
COMPRESSED_SUFFIXES = (".gz", ".zst")
FIRST_REASONS = 10
BATCH_BYTES = 8 << 20  # lines parsed at once: their fixed costs vanish, both cores keep busy
LARGE_BATCH_BYTES = 16 << 20  # ...in a file of 16 such batches or more: less of every
# batch's fixed cost (a million street-form hands 0.5 s faster), 0.25 GB more memory
COMPRESSION = 4  # a compressed log's lines are at least this many times its size (5 to 7)
APPEND_HANDS = 40_000  # hands per insert: about one DuckDB row group of seats
PARSE_WORKERS = 2  # batches parsed at once; with the inserts, enough for two cores
FILES_AHEAD = 3  # files read (on the same threads) while one is stored
BATCHES_AHEAD = 6  # checked batches of a file waiting for its turn to be stored: enough
# to keep both cores parsing while a file's last hands are written and committed (half a
# second each, which left one core idle at every file of a directory)
_HASH_CHUNK = 64 << 20

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
    content_hash: str | None = None  # BLAKE3 of the file's bytes as on disk
    hands: int = 0
    duplicates: int = 0
    conflicts: int = 0
    updated: int = 0  # stored hands given this file's values of the non-card fields
    rejected: int = 0
    problem: str | None = None  # why the file as a whole was not (fully) read
    skipped: str | None = None  # why the file was not read at all: its content is loaded
    first_line: int = 1  # the first line read (after the lines of an earlier load)
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
    def updated(self) -> int:
        """Stored hands whose non-card fields took the values loaded (``update``)."""
        return sum(f.updated for f in self.files)

    @property
    def rejected(self) -> int:
        """Rejects written (conflicts and file-level problems included)."""
        return sum(f.rejected for f in self.files)

    @property
    def skipped(self) -> int:
        """Files not read because their content was already loaded."""
        return sum(f.skipped is not None for f in self.files)

    @property
    def clean(self) -> bool:
        """Nothing rejected and every file read."""
        return self.rejected == 0 and not any(f.problem for f in self.files)

    def to_dict(self) -> dict[str, object]:
        """The summary as plain data (for ``--json``)."""
        return {
            "database": self.database, "files": len(self.files), "hands": self.hands,
            "duplicates": self.duplicates, "conflicts": self.conflicts,
            "updated": self.updated, "rejected": self.rejected, "skipped": self.skipped,
            "seconds": round(self.seconds, 3),
            "per_file": [asdict(f) for f in self.files],
            "first_rejects": [asdict(r) for r in self.first_rejects],
        }


def default_database() -> Path:
    """``$OFCSTATS_DB`` when set, else ``./ofcstats.duckdb``."""
    return Path(os.environ.get("OFCSTATS_DB") or DEFAULT_DB)


def collect_paths(paths: Iterable[Path], warn: Callable[[str], None] | None = None
                  ) -> list[Path]:
    """Files named, and log files under directories named (recursively, in name order);
    each file once. A directory contributes files ending in .jsonl, .ndjson, .json or
    .csv, optionally followed by .gz or .zst; hidden files are skipped, and so is a
    symbolic link with such a name that loops back on itself (``warn`` is told). A name
    that is no file but a pattern (``logs/2026-*.jsonl.gz``, ``**`` for any depth)
    stands for what it matches, in name order."""
    found: list[Path] = []
    seen: set[Path] = set()
    expanded: list[Path] = []
    for path in paths:
        if is_pattern(path):
            expanded += sorted(Path(p) for p in glob.glob(str(path), recursive=True))
        else:
            expanded.append(path)
    for path in expanded:
        if is_stream(path):
            if path not in seen:
                seen.add(path)
                found.append(path)
            continue
        if path.is_dir():
            named = sorted(p for p in path.rglob("*") if _is_log(p) and not any(
                part.startswith(".") for part in p.relative_to(path).parts))
            inside = [p for p in named if p.is_file()]
            for p in named:
                if warn is not None and p.is_symlink() and _loops(p):
                    warn(f"{p}: skipped: a symbolic link that loops back on itself")
        else:
            inside = [path]
        for p in inside:
            key = p.resolve()
            if key not in seen:
                seen.add(key)
                found.append(p)
    return found


def _loops(path: Path) -> bool:
    try:
        os.stat(path)
    except OSError as error:
        return error.errno == errno.ELOOP
    return False


def is_pattern(path: Path) -> bool:
    """A name that is no file but a pattern such as ``logs/2026-*.jsonl``."""
    return not path.exists() and any(c in str(path) for c in "*?[")


def check_inputs(paths: list[Path], files: list[Path], database: Path) -> None:
    """Raise :class:`UsageError` for a missing input, a pattern or a directory holding no
    logs, or a database file that cannot be made where it is asked for."""
    for path in paths:
        if is_pattern(path):
            if not glob.glob(str(path), recursive=True):
                raise UsageError(f"{path}: no file matches this pattern")
            continue
        if is_stream(path):
            continue
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
        if path.is_dir() and not any(f.is_relative_to(path) for f in files):
            raise UsageError(f"{path}: no log files in this directory (looked for "
                             f"{', '.join(LOG_SUFFIXES)}, optionally .gz or .zst)")
    if not files:
        raise UsageError("no log files given")
    writable_database(database)


def _is_log(path: Path) -> bool:
    name = path.name.lower()
    for suffix in COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    return name.endswith(LOG_SUFFIXES)


HEADER_BYTES = 3 * 4096
"""A DuckDB file's headers, before its first block."""


def check_whole(store: Store) -> None:
    """Refuse to write into a database file cut short (a copy that stopped, a disk that
    filled): DuckDB opens it, but would read past its end later, and writing would grow
    it into a file no read can trust."""
    if store.path is None or not Path(store.path).is_file():
        return
    blocks, block_size = store.blocks()
    size = Path(store.path).stat().st_size
    if blocks and size < HEADER_BYTES + blocks * block_size and \
            size < HEADER_BYTES + (store.last_block() + 1) * block_size:
        raise StoreError(f"{store.path}: cannot open the database: the file ends at "
                         f"{size:,} bytes, before its last block; the database file is "
                         "damaged: use a copy of it, or load the logs into a new one")


def ingest(paths: Iterable[Path], database: Path | str | None = None,
           format_name: str | None = None, progress: Progress | None = None,
           batch_bytes: int | None = None, first_reasons: int = FIRST_REASONS, *,
           load_changed: bool = False, wait: float | None = None,
           on_wait: Callable[[str], None] | None = None, update: bool = False,
           warn: Callable[[str], None] | None = None) -> IngestSummary:
    """Load log files (and directories of them) into the store at ``database``;
    ``warn`` hears of what is skipped in a directory (:func:`collect_paths`).

    Inputs are checked before the database is opened: a path that does not exist, a
    directory without logs or a database that cannot be created is a
    :class:`~ofcstats.errors.UsageError`, and nothing is created. A database that did not
    exist is not left behind when every hand read is rejected
    (:class:`~ofcstats.errors.NothingLoadedError`, naming the first reject); one that existed
    keeps the rejects, as any load's. ``load_changed`` loads
    a file that changed since it was loaded at the same path (its hands then meet the
    stored ones as any file's do); by default it is only reported. ``update``: a stored
    hand loaded again with other values of the fields its fingerprint leaves out
    (:data:`~ofcstats.records.UPDATABLE`, ``reported_points`` say) takes the new values;
    by default it is a conflict. ``wait``: seconds to
    wait for a database another program holds (see :class:`~ofcstats.store.Store`;
    ``on_wait`` is told when the waiting starts). ``batch_bytes``: lines parsed at once;
    by default by each file's size (:func:`batch_bytes_for`).
    """
    started = time.perf_counter()
    if format_name is not None:
        formats.format_module(format_name)
    paths = list(paths)
    files = collect_paths(paths, warn)
    db = Path(database) if database is not None else default_database()
    check_inputs(paths, files, db)
    sizes = [_size(p) for p in files]
    summary = IngestSummary(database=str(db))
    report = _Progress(progress, sum(sizes))
    existed = db.exists()
    loading: list[Path] = []  # the file being stored, while it is
    with kept_on_interrupt(lambda: interrupted_load(summary, files, loading)), \
            Store(db, wait=wait, on_wait=on_wait) as store, contextlib.ExitStack() as readers:
        check_whole(store)
        # (:meth:`Store.bulk_loading`: DuckDB's threads and write buffer set for a load)
        readers.enter_context(store.bulk_loading())
        pool = readers.enter_context(ThreadPoolExecutor(
            max_workers=PARSE_WORKERS, thread_name_prefix="ofcstats-parse"))
        run = _Run(store, format_name, batch_bytes, load_changed, update, pool)
        in_flight: deque[_Job] = deque()  # files being read, in order; the first is stored
        for index, size in enumerate(sizes):
            # The next files start being read (on the same threads) while this one is
            # stored, unless one may have the same content as a file being read.
            while len(in_flight) <= FILES_AHEAD and index + len(in_flight) < len(files):
                later = index + len(in_flight)
                if in_flight and run.pending_like(sizes[later]):
                    break
                in_flight.append(run.job(files[later], sizes[later], report.part(later)))
                reader = in_flight[-1].reader
                if reader is not None:
                    readers.callback(reader.close)
            job = in_flight.popleft()
            loading[:] = [job.path]
            loads = store.count("ingested_files")
            try:
                summary.files.append(_do(store, job, db, summary, first_reasons))
            except KeyboardInterrupt:
                # Ctrl-C may come after the file's commit, before it is counted here.
                with contextlib.suppress(duckdb.Error):
                    if store.count("ingested_files") > loads:
                        summary.files.append(FileSummary(path=str(job.path)))
                        loading.clear()
                raise
            loading.clear()
            run.done(job, summary.files[-1])
            report.finish(index, size)
        readers.close()  # (the parsing is over: DuckDB may use every core again)
        if summary.hands:
            _guarded(store.compact, db, None)
    if not existed and _all_rejected(summary):
        # Nothing created on the way to an error: the new database holds only rejects.
        for made in (db, db.with_name(db.name + ".wal")):
            made.unlink(missing_ok=True)
        raise NothingLoadedError(_all_rejected_text(summary, db))
    summary.seconds = time.perf_counter() - started
    return summary


def interrupted_load(summary: IngestSummary, files: list[Path], loading: list[Path]) -> str:
    """What a load stopped by Ctrl-C kept, and what to run next, in words: the files
    loaded whole (each is one transaction), the one being stored (rolled back)."""
    done = [f for f in summary.files if f.problem is None]  # (or loaded before)
    names = ", ".join(Path(f.path).name for f in done[:3]) + (
        f" and {len(done) - 3:,} more" if len(done) > 3 else "")
    kept = (f"{len(done):,} of {len(files):,} files loaded whole ({names})" if done
            else "no file loaded")
    if loading:
        kept += f"; {loading[0]} was rolled back, the database as it was before it"
    left = len(files) - len(summary.files)
    if not left and not loading:
        return f"{kept}, every file read; run ofcstats rescore to score what is not scored"
    return (f"{kept}; run the same ofcstats ingest again to load the rest (what is loaded is "
            "skipped) and score them")


def _all_rejected(summary: IngestSummary) -> bool:
    """Whether every hand the files held was rejected: some rejected, none stored."""
    return bool(summary.rejected and summary.first_rejects) and not (
        summary.hands or summary.duplicates or summary.updated)


def _all_rejected_text(summary: IngestSummary, db: Path) -> str:
    """``log.jsonl:1: <reason>; nothing loaded (2 rejected), x.duckdb not created: ...``."""
    first = summary.first_rejects[0]
    where = first.path if first.line is None else f"{first.path}:{first.line}"
    return (f"{where}: {first.reason}; nothing loaded ({summary.rejected:,} rejected), "
            f"{db} not created: fix the log (its format: docs/format.md) and load it again")


class _Progress:
    """Bytes read of all files, summed over the files being read at once."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total = progress, total
        self.done: dict[int, int] = {}
        self.lock = threading.Lock()

    def part(self, index: int) -> Callable[[int], None]:
        def update(done: int) -> None:
            self.set(index, done)
        return update

    def set(self, index: int, done: int) -> None:
        if self.progress is None:
            return
        with self.lock:
            self.done[index] = max(done, self.done.get(index, 0))
            self.progress(sum(self.done.values()), self.total)

    def finish(self, index: int, size: int) -> None:
        self.set(index, size)


@dataclass
class _Job:
    """One file to do: load it (from a line on), skip it, or report it."""

    path: Path
    size: int
    format: str | None = None
    problem: str | None = None  # the file cannot be read (or changed): report, load nothing
    changed: bool = False  # it changed since it was loaded: reported, nothing recorded
    empty: bool = False
    skipped: str | None = None
    content_hash: str | None = None  # known before reading when the file was looked up
    start: int = 0
    first_line: int = 1
    continues: FileLoad | None = None
    reader: _Ahead[HandBatch] | None = None
    digest: blake3.blake3 | None = None
    stream: bool = False  # read once as it comes (standard input, a FIFO): no hash
    lines_size: int = 0  # bytes of lines expected (a compressed file's: COMPRESSION times)
    update: bool = False  # stored hands take this file's values of non-card fields
    tally: Tally = field(default_factory=Tally)


class _Run:
    """What an ingest run decides per file, and the contents loaded so far in the run."""

    def __init__(self, store: Store, format_name: str | None, batch_bytes: int | None,
                 load_changed: bool, update: bool = False, pool: Executor | None = None
                 ) -> None:
        self.store, self.format_name, self.batch_bytes = store, format_name, batch_bytes
        self.load_changed, self.update, self.pool = load_changed, update, pool
        self.sizes = store.loaded_sizes()
        self.paths = store.loaded_paths()
        self.hashes: dict[str, str] = {}  # content hash -> path, for files of this run
        self.pending: set[int] = set()  # sizes of files being read, hashes not yet known
        # The last file's reader, once it has read its file: the next one starts then.
        self.read_before: threading.Event | None = None

    def pending_like(self, size: int) -> bool:
        """Whether a file of this size must wait for the one being read (it may be the
        same content)."""
        return size in self.pending

    def job(self, path: Path, size: int, progress: Callable[[int], None]) -> _Job:
        job = _Job(path=path, size=size, update=self.update)
        stream = None
        try:
            if is_stream(path):
                job.stream = True
                stream, head = open_stream(path)
                job.format = self.format_name or formats.detect_head(head, path)
            else:
                self._look_up(job)
                if job.problem or job.skipped:
                    return job
                job.format = self.format_name or formats.detect(path)
                job.lines_size = size if _plain(path) else size * COMPRESSION
        except (HandError, OSError) as error:
            if stream is not None:
                stream.close()
            job.problem = _reason(error, path)
            job.empty = "the file is empty" in job.problem
            if job.empty:
                job.problem = None
            return job
        if job.content_hash is None and stream is None:
            job.digest = blake3.blake3()
            self.pending.add(size)
        # Two stages per batch, on the parsing threads: the format's, then validation.
        # A file's batches go to the shared threads once the file before has handed them
        # its last: the threads then parse the batches of the file being stored first,
        # not those of the files after it (which left it waiting, on average a second
        # per file of a directory of eight).
        read = threading.Event()
        job.reader = _ahead(formats.parse(
            path, reading.checked, job.format, progress,
            self.batch_bytes or batch_bytes_for(job.lines_size), job.digest,
            workers=PARSE_WORKERS, start=job.start, first_line=job.first_line,
            tally=job.tally, stream=stream, pool=self.pool, on_read=read.set),
            after=self.read_before, read=read)
        self.read_before = read
        return job

    def _look_up(self, job: _Job) -> None:
        """Skip a file whose content is loaded; continue one that grew; report one that
        changed. The file is hashed first only when one of these can be."""
        path, size = job.path, job.size
        names = {str(path), str(path.resolve())}
        last = self.store.last_load_of(sorted(names)) if names & self.paths else None
        if size not in self.sizes and last is None:
            return  # no load of this size, none at this path: nothing to look for
        grew = last is not None and 0 < last.size < size and _plain(path)
        content, prefix = _hash(path, last.size if grew and last else None)
        if content in self.hashes:
            job.skipped = f"the same content as {self.hashes[content]}, loaded just before"
            return
        found = self.store.load_with_content(content)
        if found is not None and self.update:
            job.content_hash = content  # read again: its hands may update stored ones
            return
        if found is not None:
            job.skipped = (f"already loaded (from {found.path}, "
                           f"{found.finished_at:%Y-%m-%d %H:%M})")
            return
        job.content_hash = content
        if last is None:
            return
        if grew and prefix == last.content_hash:
            job.start, job.first_line = _resume_point(path, last)
            job.continues = last
            return
        if not self.load_changed and last.lines > 0:  # (no lines then: nothing to merge)
            job.changed = True
            job.problem = (
                f"the file has changed since it was loaded ({last.finished_at:%Y-%m-%d %H:%M},"
                f" {last.size:,} bytes; now {size:,}), and not just by lines added at its end;"
                " nothing from it was loaded: to load it anyway use --load-changed (stored"
                " hands are skipped, different hands under stored ids are rejected)")

    def done(self, job: _Job, result: FileSummary) -> None:
        self.pending.discard(job.size)
        if job.content_hash is None and result.content_hash is not None:
            job.content_hash = result.content_hash
        if job.content_hash is not None and result.problem is None:
            self.hashes[job.content_hash] = str(job.path)
        self.sizes.add(job.size)
        self.paths.add(str(job.path))


def _do(store: Store, job: _Job, db: Path, summary: IngestSummary, first_reasons: int
        ) -> FileSummary:
    """Carry out one job and say what it did."""
    started = time.perf_counter()
    result = FileSummary(path=str(job.path), format=job.format, size=job.size,
                         first_line=job.first_line, skipped=job.skipped)
    if job.skipped:
        return result
    if job.changed:
        result.problem = job.problem
        if len(summary.first_rejects) < FIRST_REASONS:
            summary.first_rejects.append(Reject(str(job.path), None, None, result.problem or ""))
        return result
    if job.problem is not None or job.empty or job.reader is None:
        return _guarded(lambda: _file_problem(store, job.path, result, job.problem or "",
                                              summary, started, empty=job.empty),
                        db, job.path)
    return _guarded(lambda: _ingest_file(store, job, result, summary, first_reasons, started),
                    db, job.path)


def _guarded(action: Callable[[], T], db: Path, path: Path | None) -> T:
    """Run a database action; a failure to write (a full disk, say) becomes one clear
    error. DuckDB undoes the file's transaction, now or when the database next opens."""
    try:
        return action()
    except duckdb.Error as error:
        if interrupted(error):
            raise KeyboardInterrupt from error  # the file's transaction was undone
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        full = storage_full(error)
        what = f" while loading {path}" if path is not None else ""
        hint = "free some disk space, then run this again" if full else \
            "run this again (with --debug for details)"
        # A checkpoint that failed after a commit leaves the committed files in the log.
        waiting = waiting_changes(db) if full and "checkpoint" in first.lower() else None
        if waiting:
            raise StoreError(f"{db}: could not write to the database{what}: {first}; the "
                             f"files loaded are kept: {waiting}") from error
        raise StoreError(
            f"{db}: could not write to the database{what}: {first}; the database is as it "
            f"was before {'that file' if path is not None else 'this step'}: {hint}") from error


def _ingest_file(store: Store, job: _Job, result: FileSummary, summary: IngestSummary,
                 first_reasons: int, started: float) -> FileSummary:
    path = job.path
    assert job.reader is not None
    try:
        with store.transaction():
            file_id = store.begin_file(str(path), job.format, job.size, job.first_line)
            if job.continues is not None:
                store.forget_rejects_from(job.continues.file_id, job.first_line)
            pending = reading.Gathered()
            for batch in job.reader:
                # Appends of a few row groups each let DuckDB write them out before the
                # commit instead of keeping them in memory.
                pending.add(batch)
                if pending.hands >= APPEND_HANDS:
                    _store(store, pending.take(), file_id, result, summary, first_reasons,
                           job.update)
            _store(store, pending.take(), file_id, result, summary, first_reasons, job.update)
            content = job.content_hash or (job.digest.hexdigest() if job.digest else None)
            result.content_hash = content
            store.finish_file(file_id, content, hands=result.hands,
                              duplicates=result.duplicates, conflicts=result.conflicts,
                              rejected=result.rejected, lines=job.tally.lines)
    except (OfcstatsError, OSError) as error:
        result = FileSummary(path=str(path), size=job.size, format=job.format,
                             first_line=job.first_line)
        # Not recorded as loaded: the next run reads the file again.
        return _file_problem(store, path, result,
                             f"{_reason(error, path)}; nothing from this file was loaded",
                             summary, started, loaded=False)
    result.seconds = time.perf_counter() - started
    return result


def batch_bytes_for(size: int) -> int:
    """The lines parsed at once in a file of ``size`` bytes of lines (a compressed file's
    are taken as :data:`COMPRESSION` times its size): larger batches for a large file,
    where two of them in flight are a small part of it."""
    return LARGE_BATCH_BYTES if size >= 16 * LARGE_BATCH_BYTES else BATCH_BYTES


def _plain(path: Path) -> bool:
    """A file that is not compressed (only those are continued from where a load ended)."""
    with path.open("rb") as f:
        magic = f.read(4)
    return magic[:2] != b"\x1f\x8b" and magic != b"\x28\xb5\x2f\xfd"


def _hash(path: Path, prefix: int | None) -> tuple[str, str | None]:
    """The BLAKE3 hash of the file's bytes, and of its first ``prefix`` bytes (None when the
    file is shorter): mapped a window at a time (no copy into Python, memory flat), each
    window hashed on all cores; about three times faster than reading into a buffer.
    Hashing comes before anything of the file is stored, so a file cut short under it
    (which ends the process) leaves the database as it was."""
    digest = blake3.blake3(max_threads=blake3.blake3.AUTO)
    head = None
    with path.open("rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        if prefix == 0:
            head = digest.copy().hexdigest()
        done = 0
        while done < size:
            end = min(size, done + _HASH_CHUNK)
            if prefix is not None and done < prefix < end:
                end = prefix  # the head's hash is taken where it ends
            start = done - done % mmap.ALLOCATIONGRANULARITY  # a window starts aligned
            with mmap.mmap(f.fileno(), end - start, offset=start,
                           access=mmap.ACCESS_READ) as window, memoryview(window) as view:
                digest.update(view[done - start:])
            done = end
            if prefix is not None and done == prefix:
                head = digest.copy().hexdigest()
    return digest.hexdigest(), head


def _resume_point(path: Path, last: FileLoad) -> tuple[int, int]:
    """Where a grown file's new lines start: after the last newline of what was loaded
    (a last line cut short then is read again, whole), and that line's number."""
    end = last.size
    with path.open("rb") as f:
        while end > 0:
            begin = max(0, end - (1 << 20))
            f.seek(begin)
            block = f.read(end - begin)
            cut = block.rfind(b"\n")
            if cut >= 0:
                return begin + cut + 1, last.lines + 1
            end = begin
    return 0, 1


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _store(store: Store, batch: HandBatch, file_id: int, result: FileSummary,
           summary: IngestSummary, first_reasons: int, update: bool = False) -> None:
    added, conflicts = store.add(batch, file_id, update=True) if update else \
        store.add(batch, file_id)
    rejects = pl.concat([batch.rejects, conflicts]) if conflicts.height else batch.rejects
    store.add_rejects(rejects, file_id)
    result.rejected += rejects.height
    result.hands += added.loaded
    result.duplicates += added.duplicates + batch.duplicates
    result.conflicts += added.conflicts + _in_batch_conflicts(batch)
    result.updated += added.updated
    _note(summary, rejects, first_reasons)


def _reason(error: BaseException, path: Path) -> str:
    return str(error).removeprefix(f"{path}: ")


def _in_batch_conflicts(batch: HandBatch) -> int:
    if not batch.rejects.height:
        return 0
    return batch.rejects.filter(
        pl.col("reason").str.contains("a different hand with this id", literal=True)).height


def _file_problem(store: Store, path: Path, result: FileSummary, reason: str,
                  summary: IngestSummary, started: float, *, empty: bool = False,
                  loaded: bool = True) -> FileSummary:
    """Record a file that could not be read: an empty file loads nothing and is no
    reject; any other problem is one reject for the whole file. With ``loaded`` its
    content counts as loaded (a later run skips it); a failure mid-file does not."""
    result.problem = None if empty else reason
    with store.transaction():
        file_id = store.begin_file(str(path), result.format, result.size)
        if not empty:
            store.add_rejects(reject_rows(str(path), [None], [reason]), file_id)
            result.rejected = 1
            if len(summary.first_rejects) < FIRST_REASONS:
                summary.first_rejects.append(Reject(str(path), None, None, reason))
        store.finish_file(file_id, _content_hash(path) if loaded else None, hands=0,
                          duplicates=0, conflicts=0, rejected=result.rejected)
    result.seconds = time.perf_counter() - started
    return result


def _content_hash(path: Path) -> str | None:
    if is_stream(path):
        return None  # read once, already: never skipped as loaded
    try:
        return _hash(path, None)[0]
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


class _Ahead(Iterator[T]):
    """Run ``items`` on a worker thread, started at once, at most ``depth`` items ahead
    of the caller; with ``after``, its first item waits for that event. ``read`` (an
    event of its own by default) is set once the worker stops, if not before.

    An error in the worker is raised in the caller; :meth:`close` (also when the caller
    stops early) stops the worker at its next item.
    """

    def __init__(self, items: Iterator[T], depth: int = 2,
                 after: threading.Event | None = None,
                 read: threading.Event | None = None) -> None:
        self.items = items
        self.handoff: queue.Queue[object] = queue.Queue(maxsize=depth)
        self.stop = threading.Event()
        self.read = read or threading.Event()
        self.after = after
        self.finished = False
        self.worker = threading.Thread(target=self._work, name="ofcstats-parse", daemon=True)
        self.worker.start()

    def _work(self) -> None:
        try:
            self._take_all()
        finally:
            self.read.set()

    def _take_all(self) -> None:
        while self.after is not None and not self.after.wait(0.1):
            if self.stop.is_set():
                self.items.close()  # type: ignore[attr-defined]  # (a generator)
                return
        try:
            with contextlib.closing(self.items):  # type: ignore[type-var]
                for item in self.items:
                    while not self.stop.is_set():
                        try:
                            self.handoff.put(item, timeout=0.1)
                            break
                        except queue.Full:
                            continue
                    if self.stop.is_set():
                        return
            self.handoff.put(_DONE)
        except BaseException as error:  # handed to the caller, who raises it
            self.handoff.put(error)

    def __next__(self) -> T:
        if self.finished:
            raise StopIteration
        item = self.handoff.get()
        if item is _DONE:
            self.close()
            raise StopIteration
        if isinstance(item, BaseException):
            self.close()
            raise item
        return item  # type: ignore[return-value]

    def close(self) -> None:
        """Stop the worker and wait for it."""
        self.finished = True
        self.stop.set()
        while self.worker.is_alive():
            with contextlib.suppress(queue.Empty):
                self.handoff.get(timeout=0.1)
        self.worker.join()


def _ahead(items: Iterator[T], depth: int = BATCHES_AHEAD,
           after: threading.Event | None = None,
           read: threading.Event | None = None) -> _Ahead[T]:
    """See :class:`_Ahead`."""
    return _Ahead(items, depth, after, read)
