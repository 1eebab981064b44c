"""What the commands share around the store: opening it, the filters checked against
it, bounded memory for reads, the engine of a command.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.status import Status

from ofcstats import allocator, analysis, answers, sanitize
from ofcstats import engine as engines
from ofcstats.answers import check_filters
from ofcstats.cli.options import READ_MEMORY, EngineKind
from ofcstats.cli.output import Update, _on_terminal, _step, fail_with, progress_bar, warn
from ofcstats.errors import OfcstatsError
from ofcstats.store import Store


def engine_for(kind: EngineKind | None, jobs: int | None, address: str | None,
               source: Path | None, config: Path | None, *, jobs_shard: bool
               ) -> engines.Engine | None:
    """:func:`ofcstats.engine.engine_for` of the command's options, its errors the
    command's."""
    try:
        return engines.engine_for(None if kind is None else kind.value, jobs, address,
                                  source, config, jobs_shard=jobs_shard)
    except OfcstatsError as error:
        raise fail_with(error) from None


class _WaitNote:
    """What a command waits for while another program holds the database, shown on a
    terminal's stderr until the wait is over (then wiped: an error after it stands alone);
    nothing with --quiet or outside a terminal."""

    def __init__(self, quiet: bool) -> None:
        self.show = _on_terminal(quiet)
        self.status: Status | None = None
        self.lock = threading.Lock()  # (progress comes from several threads)

    def __call__(self, note: str) -> None:
        with self.lock:
            if self.show and self.status is None:
                self.status = Console(stderr=True).status(sanitize.visible(note))
                self.status.start()

    def close(self) -> None:
        """The wait is over: wipe the note."""
        with self.lock:
            if self.status is not None:
                self.status.stop()
                self.status = None

    def then(self, update: Update | None) -> Update | None:
        """``update``, wiping the note first: the work has begun."""
        if update is None or not self.show:
            return update

        def started(done: int, total: int | None) -> None:
            self.close()
            update(done, total)
        return started


def _open_existing(db: Path | None, *, read_only: bool = True, wait: float | None = None,
                   quiet: bool = False) -> Store:
    """The database, which must exist (:func:`ofcstats.answers.open_store`), its errors
    the command's; a wait for another program shown while it lasts."""
    note, failed = _WaitNote(quiet), None
    try:
        store = answers.open_store(db, read_only=read_only, wait=wait, on_wait=note)
    except OfcstatsError as error:
        failed = error
    finally:
        note.close()  # (wiped before an error is printed)
    if failed is not None:
        raise fail_with(failed) from None
    if read_only and (left := store.leftover_note()):  # (a writer gave it back on opening)
        warn(left)
    return store


def _filters(rulesets: list[str] | None, session: list[str] | None, since: datetime | None,
             until: datetime | None, variant: list[str] | None, player: list[str] | None
             ) -> analysis.Filters:
    try:
        return answers.filters(rulesets, session, since, until, variant, player)
    except OfcstatsError as error:
        raise fail_with(error) from None


@contextmanager
def bounded_memory(store: Store) -> Iterator[None]:
    """Hold DuckDB to :data:`READ_MEMORY`, spilling to a temporary folder of its own."""
    with tempfile.TemporaryDirectory(prefix="ofcstats-") as spill:
        store.limit_memory(READ_MEMORY, spill)
        yield


@contextmanager
def reading(db: Path | None, filters: analysis.Filters | None = None,
            rulesets: Sequence[str] = (), *, wait: float | None = None,
            quiet: bool = False) -> Iterator[Store]:
    """The database opened read-only (waiting up to ``wait`` seconds for a writer), with
    the filter values checked against it."""
    with _open_existing(db, wait=wait, quiet=quiet) as store, bounded_memory(store):
        if filters is not None or rulesets:
            try:
                check_filters(store, filters or analysis.Filters(), rulesets)
            except OfcstatsError as error:
                raise fail_with(error) from None
        yield store


@contextmanager
def _summing(quiet: bool) -> Iterator[None]:
    """A progress display while the database sums the results (one step)."""
    with progress_bar("summing results", _on_terminal(quiet), unit="steps") as update:
        _step(update, 0, 1)
        yield
        _step(update, 1, 1)


def _large_frames_process() -> None:
    """Opt in, for a command that loads or scores large frames, to ``malloc`` keeping
    freed memory for reuse (:mod:`ofcstats.allocator`): a quarter of the scoring time and
    a tenth of a large load's, at the price of keeping the peak heap until the command
    ends. The library never sets it itself."""
    allocator.reuse_freed_memory()
