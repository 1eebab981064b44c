"""Reading logs: parse a file in its format, then check each batch against the rules.

Two stages, batch by batch: the format turns lines into raw frames
(:func:`ofcstats.formats.parse`), and validation (:func:`ofcstats.validate.validate`)
turns those into checked hands and rejects, on the same thread, so that with several
workers both run in parallel. Formats never import the validation; this module is
where the two meet, for ``ingest`` and ``score`` alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import polars as pl

from ofcstats import formats
from ofcstats.errors import HandError
from ofcstats.formats.lines import BATCH_BYTES
from ofcstats.records import (
    REJECTS_SCHEMA,
    HandBatch,
    IdHashes,
    RawBatch,
    id_hashes,
    reject_rows,
)
from ofcstats.validate import validate


def checked(raw: RawBatch, con: duckdb.DuckDBPyConnection) -> HandBatch:
    """The validation stage: a parsed batch's hands checked, with its rejects, its lines
    that cannot be read (too long, not text, or cut short by a break in the compressed
    data: whatever the format, they reach it as blank lines), and a problem with the
    file's lines (the compressed data breaking off between two lines) as one more
    reject."""
    batch = validate(raw, con)
    if raw.lines.long_lines:
        long = raw.lines.long_lines
        batch.rejects = pl.concat([batch.rejects, reject_rows(
            raw.source, [x.line for x in long], [x.reason for x in long],
            [x.raw for x in long])]).sort("line", nulls_last=True, maintain_order=True)
    if raw.lines.problem:
        batch.rejects = pl.concat([batch.rejects, reject_rows(
            raw.source, [None], [raw.lines.problem])])
    return batch


def read(path: Path, format_name: str | None = None,
         progress: Callable[[int], None] | None = None, batch_bytes: int = BATCH_BYTES
         ) -> Iterator[HandBatch]:
    """Parse and validate a file batch by batch, in order; rejects travel inside each
    batch. ``progress`` gets the bytes of the file read so far."""
    return formats.parse(path, checked, format_name, progress, batch_bytes)


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


class Gathered:
    """Batches gathered to be stored at once, each less the hands of the ones before
    (see :func:`fresh`): what :func:`merge` makes of them one by one, without copying
    the gathered hands again for every batch. A batch is compared with the ones before
    only when one of its hand ids may be among theirs (:func:`id_hashes`): in most files
    no id comes twice, and a set of hashes says so in a fraction of a join's time."""

    def __init__(self) -> None:
        self.batches: list[HandBatch] = []
        self.ids = IdHashes()
        self.hands = 0

    def add(self, batch: HandBatch) -> None:
        """Gather one more batch."""
        ids = id_hashes(batch.hands.get_column("hand_id"))
        if self.ids.may_hold_any(ids):
            batch = fresh(pl.concat([b.hands.select(SEEN_COLUMNS) for b in self.batches]),
                          batch)
        self.batches.append(batch)
        self.ids.add(ids)
        self.hands += batch.hands.height

    def take(self) -> HandBatch:
        """The gathered batches as one, and start again."""
        taken = HandBatch.concat(self.batches)
        self.batches, self.ids, self.hands = [], IdHashes(), 0
        return taken


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
