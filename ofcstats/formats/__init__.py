"""Log formats: one module per source format, each yielding the canonical raw frames.

Each format implements :class:`~ofcstats.formats.base.Format` (``NAME``, ``sniff``,
``parse_batch``, ``read_batches``) and is listed once, in :data:`FORMATS`.
:func:`parse` detects a file's format from its content (or takes it from the caller)
and parses it in batches, handing each to the caller's next stage on the same thread.
Formats know nothing of the rules: :mod:`ofcstats.reading` adds the validation stage,
so every format reaches the store through the same checks.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TypeVar

import duckdb

from ofcstats.errors import HandError
from ofcstats.formats import boards_csv, chipzen, jsonl
from ofcstats.formats.base import Format
from ofcstats.formats.lines import (
    BATCH_BYTES,
    MAX_LINE_BYTES,
    Digest,
    Head,
    LineBatch,
    Replay,
    Tally,
    read_head,
    read_line_batches,
)
from ofcstats.records import RawBatch

_REGISTERED: tuple[Format, ...] = (jsonl, chipzen, boards_csv)
FORMATS: dict[str, Format] = {fmt.NAME: fmt for fmt in _REGISTERED}
"""Every format by its name, in the order detection tries them."""

T = TypeVar("T")
Stage = Callable[[RawBatch, duckdb.DuckDBPyConnection], T]
"""What is done with each parsed batch, on the thread that parsed it."""


_SCRATCH: list[duckdb.DuckDBPyConnection] = []  # the process's scratch database, once made
_SCRATCH_LOCK = threading.Lock()
_THREAD = threading.local()


def scratch() -> duckdb.DuckDBPyConnection:
    """This thread's connection to the process's scratch database (in memory), where
    parsing runs its queries. The database is made once (about 15 ms), then each thread
    gets a cursor of its own (under 1 ms): a directory of small files no longer pays for a
    new database per file. A cursor's temporary tables and registered frames are its own.
    Its queries (a batch's worth each) run on the calling thread alone: the batches are
    parsed on threads of their own already, which DuckDB's threads would only compete
    with (a load of a million hands took about 5 % less processor time so).
    """
    con = getattr(_THREAD, "con", None)
    if con is None:
        with _SCRATCH_LOCK:
            if not _SCRATCH:
                _SCRATCH.append(duckdb.connect(config={"threads": 1}))
            con = _THREAD.con = _SCRATCH[0].cursor()
    return con


def format_names() -> list[str]:
    """The names ``--format`` accepts."""
    return list(FORMATS)


def detect(path: Path) -> str:
    """The format of a file, from its first bytes; an error says why none fits."""
    return detect_head(read_head(path), path)


def detect_head(head: Head, path: Path) -> str:
    """The format of the file ``path`` whose first lines (decompressed, lines too long to
    read or not text passed over) are ``head``; a file most of whose first lines are not
    text is binary (:attr:`Head.binary`)."""
    text = head.data
    if head.binary:
        raise HandError(f"{path}: a binary file, not a hand log")
    if not text.strip() and head.long_lines:
        raise HandError(
            f"{path}: cannot tell the format: its first lines are all longer than the "
            f"{MAX_LINE_BYTES:,} bytes a line may have; name it with --input-format "
            f"({', '.join(FORMATS)}) to have each rejected")
    if not text.strip() and head.broken:
        raise HandError(f"{path}: the compressed data breaks off before its first line "
                        f"({head.broken})")
    if not text.strip():
        raise HandError(f"{path}: the file is empty")
    for name, module in FORMATS.items():
        if module.sniff(text):
            return name
    raise HandError(
        f"{path}: cannot tell the format from the first line; "
        f"name it with --input-format ({', '.join(FORMATS)})"
    )


def format_module(name: str) -> Format:
    """The format of a name, or an error listing the names."""
    if name not in FORMATS:
        raise HandError(f"unknown format {name!r}: use one of {', '.join(FORMATS)}")
    return FORMATS[name]


def parse(
    path: Path,
    stage: Stage[T],
    format_name: str | None = None,
    progress: Callable[[int], None] | None = None,
    batch_bytes: int = BATCH_BYTES,
    digest: Digest | None = None,
    workers: int = 1,
    *,
    start: int = 0,
    first_line: int = 1,
    tally: Tally | None = None,
    stream: Replay | None = None,
    pool: Executor | None = None,
    on_read: Callable[[], None] | None = None,
) -> Iterator[T]:
    """Parse a file batch by batch, in order, and give each batch to ``stage``; yield
    what it returns.

    ``progress`` gets the bytes of the file read so far; ``digest`` is fed the file's
    bytes as they are read. With ``workers`` > 1, that many batches are parsed (and
    staged) at once on threads (Arrow, numpy and Polars release the interpreter lock
    while they work), when the format's batches stand alone. ``start``, ``first_line``,
    ``tally`` and ``stream`` are as :func:`read_line_batches` takes them (a stream
    needs ``format_name``). ``pool``: threads to parse on, shared with other files read
    at the same time (by default the file gets ``workers`` threads of its own). The
    format is told the file's size first (:meth:`~ofcstats.formats.base.Format.expect`).
    ``on_read`` is called once every batch of the file has been read and handed to the
    threads (or the parsing stopped; at once when the batches are parsed here).
    """
    fmt = format_module(format_name or detect(path))
    if stream is None:
        fmt.expect(max(0, path.stat().st_size - start))
    source = str(path)
    lines = read_line_batches(path, progress, batch_bytes, digest, start=start,
                              first_line=first_line, tally=tally, stream=stream)
    if not fmt.STANDALONE_BATCHES or workers <= 1:
        if on_read is not None:
            on_read()  # (parsed on this thread: it takes nothing from the shared threads)
        con = scratch()
        for raw in fmt.read_batches(lines, source, con):
            yield stage(raw, con)
        return
    yield from _in_parallel(fmt, stage, lines, source, workers, pool, on_read)


def _in_parallel(fmt: Format, stage: Stage[T], lines: Iterator[LineBatch], source: str,
                 workers: int, shared: Executor | None = None,
                 on_read: Callable[[], None] | None = None) -> Iterator[T]:
    """Parse and stage batches on ``workers`` threads (of ``shared``, or of a pool of the
    file's own), yielding results in file order; at most ``workers + 1`` of the file's
    batches are in flight, so memory stays bounded. ``on_read``: called once the last
    batch is handed to the threads."""
    def work(batch: LineBatch) -> T:
        con = scratch()
        return stage(fmt.parse_batch(batch, source, con), con)

    pool = shared or ThreadPoolExecutor(max_workers=workers,
                                        thread_name_prefix="ofcstats-parse")
    pending: deque[Future[T]] = deque()
    try:
        for batch in lines:
            pending.append(pool.submit(work, batch))
            if len(pending) > workers:
                yield pending.popleft().result()
        if on_read is not None:
            on_read()
            on_read = None
        while pending:
            yield pending.popleft().result()
    finally:
        if on_read is not None:
            on_read()
        for future in pending:
            future.cancel()
        if shared is None:
            pool.shutdown(wait=True)
        else:
            wait(pending)  # (a shared pool goes on: only this file's batches are waited for)

