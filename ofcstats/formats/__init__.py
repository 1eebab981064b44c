"""Log formats: one module per source format, each yielding the canonical record.

Every format module has ``NAME``, ``sniff(head: bytes) -> bool`` and
``parse_batch(batch, source, con) -> RawBatch``. :func:`read` detects the format
from the file's content (or takes it from the caller), parses it in batches and
validates each batch, so every format reaches the store through the same checks.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import duckdb
import polars as pl

from ofcstats.errors import HandError
from ofcstats.formats import boards_csv, chipzen, ofc_hand
from ofcstats.formats.lines import (
    BATCH_BYTES,
    Digest,
    LineBatch,
    Replay,
    Tally,
    read_head,
    read_line_batches,
)
from ofcstats.records import REJECTS_SCHEMA, HandBatch, RawBatch, reject_rows
from ofcstats.validate import validate

FORMATS: dict[str, ModuleType] = {module.NAME: module for module in (ofc_hand, chipzen, boards_csv)}


def format_names() -> list[str]:
    """The names ``--format`` accepts."""
    return list(FORMATS)


def detect(path: Path) -> str:
    """The format of a file, from its first bytes; an error says why none fits."""
    return detect_head(read_head(path), path)


def detect_head(head: bytes, path: Path) -> str:
    """The format of the file ``path`` whose first (decompressed) bytes are ``head``."""
    if not head.strip():
        raise HandError(f"{path}: the file is empty")
    if b"\x00" in head:
        raise HandError(f"{path}: a binary file, not a hand log")
    for name, module in FORMATS.items():
        if module.sniff(head):
            return name
    raise HandError(
        f"{path}: cannot tell the format from the first line; "
        f"name it with --format ({', '.join(FORMATS)})"
    )


def format_module(name: str) -> ModuleType:
    """The module of a format name, or an error listing the names."""
    if name not in FORMATS:
        raise HandError(f"unknown format {name!r}: use one of {', '.join(FORMATS)}")
    return FORMATS[name]


def read(
    path: Path,
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
) -> Iterator[HandBatch]:
    """Parse and validate a file batch by batch, in order; rejects travel inside each
    batch.

    ``progress`` gets the bytes of the file read so far; ``digest`` is fed the file's
    bytes as they are read. With ``workers`` > 1, that many batches are parsed at once
    on threads (Arrow, numpy and Polars release the interpreter lock while they work).
    ``start``, ``first_line``, ``tally`` and ``stream`` are as
    :func:`read_line_batches` takes them (a stream needs ``format_name``).
    """
    module = format_module(format_name or detect(path))
    source = str(path)
    lines = read_line_batches(path, progress, batch_bytes, digest, start=start,
                              first_line=first_line, tally=tally, stream=stream)
    if hasattr(module, "read_batches") or workers <= 1:
        con = duckdb.connect()
        try:
            raws = module.read_batches(lines, source, con) \
                if hasattr(module, "read_batches") else \
                (module.parse_batch(batch, source, con) for batch in lines)
            for raw in raws:
                yield _checked(raw, con)
        finally:
            con.close()
        return
    yield from _in_parallel(module, lines, source, workers)


def _checked(raw: RawBatch, con: duckdb.DuckDBPyConnection) -> HandBatch:
    batch = validate(raw, con)
    if raw.lines.problem:
        batch.rejects = pl.concat([batch.rejects, reject_rows(
            raw.source, [None], [raw.lines.problem])])
    return batch


def _in_parallel(module: ModuleType, lines: Iterator[LineBatch], source: str,
                 workers: int) -> Iterator[HandBatch]:
    """Parse and check batches on ``workers`` threads, yielding results in file order;
    at most ``workers + 1`` batches are in flight, so memory stays bounded."""
    local = threading.local()
    connections: list[duckdb.DuckDBPyConnection] = []

    def work(batch: LineBatch) -> HandBatch:
        if not hasattr(local, "con"):
            local.con = duckdb.connect()
            connections.append(local.con)
        return _checked(module.parse_batch(batch, source, local.con), local.con)

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ofcstats-parse")
    pending: deque[Future[HandBatch]] = deque()
    try:
        for batch in lines:
            pending.append(pool.submit(work, batch))
            if len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True)
        for con in connections:
            con.close()


def read_all(paths: list[Path], format_name: str | None = None,
             progress: Callable[[int, int], None] | None = None) -> HandBatch:
    """Every hand of every file in one batch. A file that cannot be read becomes a
    reject; a hand id seen before keeps its first hand (see :func:`merge`).
    ``progress(bytes read, bytes in all files)`` is called as the files are read."""
    merged = HandBatch()
    sizes = [path.stat().st_size if path.is_file() else 0 for path in paths]
    total, before = sum(sizes), 0
    for path, size in zip(paths, sizes, strict=True):
        def file_progress(done: int, base: int = before) -> None:
            if progress is not None:
                progress(base + done, total)

        before += size
        try:
            for batch in read(path, format_name, file_progress):
                merged = merge(merged, batch)
        except (HandError, OSError) as error:
            reason = str(error).removeprefix(f"{path}: ")
            merged.rejects = pl.concat([merged.rejects, pl.DataFrame(
                [{"source": str(path), "line": None, "hand_id": None, "reason": reason,
                  "raw": None}], schema=REJECTS_SCHEMA)])
    return merged


def merge(seen: HandBatch, batch: HandBatch) -> HandBatch:
    """Add ``batch`` to ``seen``: a hand id already there is dropped when the hand is the
    same (counted in ``duplicates``) and rejected as a conflict when it is not."""
    return HandBatch.concat([seen, fresh(seen.hands, batch)])


SEEN_COLUMNS = ("hand_id", "fingerprint", "source", "line")
"""What :func:`fresh` needs of the hands seen before."""


def fresh(seen: pl.DataFrame, batch: HandBatch) -> HandBatch:
    """``batch`` less the hands whose id is among ``seen`` (hands, of which
    :data:`SEEN_COLUMNS` are read): dropped when the hand is the same (counted in
    ``duplicates``), rejected as a conflict when it is not."""
    again = batch.hands.select("hand_id", "fingerprint", "source", "line").join(
        seen.select("hand_id", pl.col("fingerprint").alias("was"),
                    pl.col("source").alias("was_source"), pl.col("line").alias("was_line")),
        on="hand_id",
    )
    if again.is_empty():
        return batch
    conflicts = again.filter(pl.col("fingerprint") != pl.col("was")).select(
        "source", "line", "hand_id",
        pl.when(pl.col("source") == pl.col("was_source"))
        .then(pl.format("hand {}: a different hand with this id is at line {}",
                        pl.col("hand_id"), pl.col("was_line")))
        .otherwise(pl.format("hand {}: a different hand with this id is at {}:{}",
                             pl.col("hand_id"), pl.col("was_source"), pl.col("was_line")))
        .alias("reason"),
    )
    # A loop, but over conflicts only. (A Polars UDF would keep the batch alive.)
    conflicts = conflicts.with_columns(raw=pl.Series(
        [batch.raw_text(line) for line in conflicts.get_column("line")], dtype=pl.String))
    kept = batch.without(again["hand_id"])
    kept.rejects = pl.concat([kept.rejects, conflicts.cast(REJECTS_SCHEMA)])  # type: ignore[arg-type]
    kept.duplicates += again.height - conflicts.height
    return kept
