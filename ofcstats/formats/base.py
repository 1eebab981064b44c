"""What a log format is: the :class:`Format` protocol every format module implements.

A format turns batches of a file's lines (:class:`~ofcstats.formats.lines.LineBatch`)
into the canonical raw frames (:class:`~ofcstats.records.RawBatch`): hands, seats and
cards as the file gives them, and a reject for each line it cannot read. It knows
nothing of the rules: whether a hand is legal is the validation stage's question
(:mod:`ofcstats.validate`), asked of every format's batches alike by the reader
(:mod:`ofcstats.reading`).

A format is a module with these names; :data:`ofcstats.formats.FORMATS` is the one
table that lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

import duckdb

from ofcstats.formats.lines import LineBatch
from ofcstats.records import RawBatch

Parse = Callable[[LineBatch, str, duckdb.DuckDBPyConnection], RawBatch]
"""Parse one batch: ``(batch, source, con) -> RawBatch``."""
ReadBatches = Callable[[Iterable[LineBatch], str, duckdb.DuckDBPyConnection],
                       Iterator[RawBatch]]
"""Parse a file's batches in order: ``(batches, source, con) -> RawBatches``."""


class Format(Protocol):
    """A log format: its name, how to recognise it, how to parse it."""

    NAME: str
    """The name ``--format`` takes (``ofc-hand``, ``chipzen``, ``boards-csv``)."""

    STANDALONE_BATCHES: bool
    """True when every batch parses on its own (one hand a line), so batches may be
    parsed at once on threads; False when a hand may straddle two batches, so a file's
    batches are parsed in order by :meth:`read_batches`."""

    def sniff(self, head: bytes) -> bool:
        """True when a file whose first (decompressed) bytes are ``head`` is this format."""

    def parse_batch(self, batch: LineBatch, source: str,
                    con: duckdb.DuckDBPyConnection) -> RawBatch:
        """Parse one batch: every non-blank line becomes part of a hand or a reject.
        ``con`` is an in-memory DuckDB connection the format may use as a scratch pad."""

    def read_batches(self, batches: Iterable[LineBatch], source: str,
                     con: duckdb.DuckDBPyConnection) -> Iterator[RawBatch]:
        """Parse a file's batches in order."""

    def expect(self, size: int) -> None:
        """A file of ``size`` bytes (as on disk) is about to be read: a format with a
        reader for large loads (loaded at a cost) may choose it now."""


def nothing_expected(size: int) -> None:
    """:meth:`Format.expect` of a format that reads every load alike."""


def batch_by_batch(parse: Parse) -> ReadBatches:
    """:meth:`Format.read_batches` of a format whose batches stand alone: each batch
    parsed by ``parse`` in turn."""
    def read_batches(batches: Iterable[LineBatch], source: str,
                     con: duckdb.DuckDBPyConnection) -> Iterator[RawBatch]:
        return (parse(batch, source, con) for batch in batches)

    return read_batches
