"""What the commands share around the store: opening it, the filters checked against
it, bounded memory for reads, the engine of a command.
"""

from __future__ import annotations

import difflib
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.status import Status

from ofcstats import allocator, analysis, sanitize
from ofcstats import engine as engines
from ofcstats import ingest as ingesting
from ofcstats.cli.options import READ_MEMORY, EngineKind, split_list
from ofcstats.cli.output import Update, _on_terminal, _step, fail, fail_with, progress_bar, warn
from ofcstats.errors import OfcstatsError, StoreError, UsageError
from ofcstats.paths import no_loop
from ofcstats.rules import load_ruleset, preset_names
from ofcstats.store import Store
from ofcstats.store import money as stored
from ofcstats.store.results import rescore_command
from ofcstats.variants import VARIANT_NAMES


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
    """The database, which must exist: read-only unless asked otherwise, so readers never
    stop each other or a notebook holding it open for reading. A program writing to it is
    waited for up to ``wait`` seconds (a writer waits for readers too)."""
    database = db or ingesting.default_database()
    try:
        no_loop(database, "database")
    except UsageError as error:
        raise fail_with(error) from None
    if not database.exists():
        raise fail(f"{database}: no such database; load hands with ofcstats ingest")
    if database.is_dir():
        raise fail(f"{database}: is a directory, not a database file")
    note, failed = _WaitNote(quiet), None
    try:
        store = Store(database, read_only=read_only, wait=wait, on_wait=note)
    except OfcstatsError as error:
        failed = error
    finally:
        note.close()  # (wiped before an error is printed)
    if failed is not None:
        raise fail_with(failed) from None
    if read_only and (left := store.leftover_note()):  # (a writer gave it back on opening)
        warn(left)
    return store


def _utc(moment: datetime | None) -> datetime | None:
    return moment if moment is None or moment.tzinfo else moment.replace(tzinfo=UTC)


def dates(since: datetime | None, until: datetime | None
          ) -> tuple[datetime | None, datetime | None]:
    """``--since`` and ``--until`` in UTC (a time without a zone is UTC); a usage error
    when the first comes after the second, as no hand could match."""
    since, until = _utc(since), _utc(until)
    if since is not None and until is not None and since > until:
        raise UsageError(f"--since {since:%Y-%m-%dT%H:%M} is after --until "
                         f"{until:%Y-%m-%dT%H:%M}: no hand can match; give the earlier "
                         "moment to --since")
    return since, until


def _filters(rulesets: list[str] | None, session: list[str] | None, since: datetime | None,
             until: datetime | None, variant: list[str] | None, player: list[str] | None
             ) -> analysis.Filters:
    since, until = dates(since, until)
    return analysis.Filters(rulesets=split_list(rulesets), sessions=split_list(session),
                            players=split_list(player), variants=split_list(variant),
                            since=since, until=until)


def unknown_value(kind: str, value: str, known: Sequence[str], plural: str = "") -> str:
    """``no player named nobody; known players: ann, bob`` (the closest few of a long list).

    >>> unknown_value("player", "alce", ["alice", "bob"])
    'no player named alce (did you mean alice?); known players: alice, bob'
    """
    plural = plural or f"{kind}s"
    close = difflib.get_close_matches(value, known, n=3, cutoff=0.6)
    guess = f" (did you mean {' or '.join(close)}?)" if close else ""
    if not known:
        listing = f"no {plural} are stored"
    elif len(known) <= 20:
        listing = f"known {plural}: {', '.join(known)}"
    else:
        listing = f"{len(known):,} known {plural}, e.g. {', '.join(known[:5])}"
    return f"no {kind} named {value}{guess}; {listing}"


def not_played_text(ruleset: str, played_in: Sequence[str], variants: Sequence[str]) -> str:
    """A ruleset asked of hands of variants it is not played in, with the way to ask anyway.

    >>> print(not_played_text("russian", ["chinese-13"], ["pineapple"]))
    russian is not played in pineapple (only in chinese-13): to score those hands under it
    anyway, ofcstats rescore --what-if russian
    """
    return (f"{ruleset} is not played in {', '.join(variants)} (only in "
            f"{', '.join(played_in)}): to score those hands under it anyway, ofcstats "
            f"rescore --what-if {ruleset}")


def ruleset_variants(store: Store, name: str) -> list[str] | None:
    """The variants a ruleset is played in: the store's, else its preset's or file's
    (None when it is neither)."""
    for stored_name, variants, _ in stored.defined_rulesets(store):
        if stored_name == name and variants:
            return [str(v) for v in variants]
    try:
        return [v.value for v in load_ruleset(name).variants]
    except (OfcstatsError, OSError):
        return None


def check_played(store: Store, filters: analysis.Filters, ruleset: str) -> None:
    """Raise :class:`UsageError` when none of the hands the filters keep is of a variant
    ``ruleset`` is played in (or scored over, by a what-if)."""
    hands = sorted({str(v) for v, _, _ in stored.played_rulesets(store, filters)})
    scored = {str(v) for name, _, scope in stored.defined_rulesets(store)
              if name == ruleset for v in (scope or [])}
    played_in = ruleset_variants(store, ruleset)
    if hands and played_in is not None and not (set(hands) & (set(played_in) | scored)):
        raise UsageError(not_played_text(ruleset, played_in, hands))


LOAD_HANDS = "load hands with ofcstats ingest LOGS"
"""The hint for a database that holds no hands (not "rescore": nothing to score)."""


def _loadable(ruleset: str) -> bool:
    """Whether ``rescore --ruleset`` could load ``ruleset``: a preset, or a file."""
    return ruleset in preset_names() or Path(ruleset).is_file()


def check_filters(store: Store, filters: analysis.Filters,
                  rulesets: Sequence[str] = ()) -> None:
    """Raise :class:`UsageError` for a filter value (or ruleset) the store does not hold,
    naming the values it does hold or the closest ones."""
    asked = {"player": filters.players, "session": filters.sessions,
             "variant": filters.variants,
             "ruleset": [*(filters.rulesets or []), *rulesets] or None}
    not_played: list[UsageError] = []
    for kind, values in asked.items():
        if not values:
            continue
        known = store.known_values(kind)
        for value in values:
            if value in known:
                if kind == "ruleset":
                    try:
                        check_played(store, filters, value)
                    except UsageError as error:
                        not_played.append(error)
                continue
            if kind == "ruleset" and not _loadable(value):
                # A name rescore could not load either: the nearest names, no command.
                raise UsageError(unknown_value("ruleset", value, sorted(
                    {*known, *preset_names()}), "rulesets (scored, or built in)"))
            if kind == "ruleset":
                check_played(store, filters, value)
                raise UsageError(unknown_value("ruleset", value, known, "scored rulesets")
                                 .replace("no ruleset named", "not scored under", 1)
                                 + f"; to score it: {rescore_command(value)}")
            if kind == "variant" and value not in VARIANT_NAMES:
                known = list(VARIANT_NAMES)
            raise UsageError(unknown_value(kind, value, known))
    if not_played and len(not_played) == len(asked["ruleset"] or []):
        raise not_played[0]  # (one ruleset played in the hands' variants answers)


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
            if store.query("SELECT 1 AS held FROM hands LIMIT 1").is_empty():
                # Not "run rescore": with no hands there is nothing to score.
                raise fail(f"{store.path}: no hands stored yet: {LOAD_HANDS} "
                           f"--db {store.path}", 1)
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


def _player_table(store: Store, filters: analysis.Filters, seed: int,
                  pairs: dict[str, str] | None = None) -> pl.DataFrame:
    try:
        return analysis.player_table(store, filters, seed=seed, pairs=pairs)
    except StoreError as error:
        raise fail(str(error), 1) from None
    except OfcstatsError as error:
        raise fail_with(error) from None


def _large_frames_process() -> None:
    """Opt in, for a command that loads or scores large frames, to ``malloc`` keeping
    freed memory for reuse (:mod:`ofcstats.allocator`): a quarter of the scoring time and
    a tenth of a large load's, at the price of keeping the peak heap until the command
    ends. The library never sets it itself."""
    allocator.reuse_freed_memory()
