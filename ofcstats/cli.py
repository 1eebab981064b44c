"""The ``ofcstats`` command: thin commands over the library.

Each command parses its options, calls one library function, and turns the library's
errors into one line on stderr and an exit code: 0 when everything was done; 1 when
some input was skipped (each skip reported on stderr as ``FILE:LINE: reason``) or the
command failed; 2 for a usage error (a missing input, an unknown option or filter value,
an output that cannot be written), found before anything is created. ``--debug`` shows
the traceback of an unexpected error.
"""

from __future__ import annotations

import difflib
import importlib.metadata
import json
import os
import sys
import tempfile
import textwrap
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import asdict, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, ClassVar, TextIO

import duckdb
import polars as pl
import polars.selectors
import typer
import typer.core
import typer.main
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TimeElapsedColumn,
    TransferSpeedColumn,
)
from rich.status import Status
from rich.text import Text
from typer.exceptions import TyperException

from ofcstats import allocator, analysis, formats, pipeline, sanitize, stats
from ofcstats import engine as engines
from ofcstats import ingest as ingesting
from ofcstats.config import engine_config
from ofcstats.errors import DatabaseInUseError, OfcstatsError, StoreError, UsageError
from ofcstats.paths import (
    no_loop,
    replace_directory_files,
    writable_directory,
    writable_file,
    written_whole,
)
from ofcstats.records import REJECTS_SCHEMA
from ofcstats.rows import ROW_NAMES
from ofcstats.rules import (
    FantasylandPolicy,
    Ruleset,
    load_policy,
    load_ruleset,
    load_rulesets,
    policy_names,
    preset_names,
)
from ofcstats.score import ScoredBatch, score_files
from ofcstats.store import SHARD_HANDS, Store
from ofcstats.store.connect import interrupted, storage_full
from ofcstats.variants import VARIANT_NAMES, Variant


class _Settings:
    """Options of the ``ofcstats`` command itself, before the subcommand."""

    debug: bool = False
    command: ClassVar[list[str]] = []  # the command's words after the program: db, info


def exit_code(error: BaseException) -> int:
    """2 for a usage error, 1 for a failure (the store, the file system, anything else)."""
    return 1 if isinstance(error, StoreError | OSError) or not isinstance(
        error, OfcstatsError) else 2


def _one_line(error: BaseException) -> str:
    if isinstance(error, DatabaseInUseError):
        return error.advice(f"{_command_name()} --wait SECONDS")
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _command_name() -> str:
    """The command being run: ``ofcstats db info``."""
    return " ".join(["ofcstats", *_Settings.command])


def _damaged(error: BaseException) -> bool:
    """DuckDB finding the database file cut short or its blocks not what it wrote (its
    message names the file, or the block, and the cause)."""
    return isinstance(error, duckdb.Error) and (
        (isinstance(error, duckdb.IOException) and "Could not read enough bytes" in str(error))
        or "Corrupt database file" in str(error))


class _Group(typer.core.TyperGroup):
    """Every command's errors as one line and an exit code; a traceback only with --debug."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        _Settings.command.append(name or "")
        return name, command, rest

    def invoke(self, ctx: Any) -> Any:
        if ctx.parent is None:
            _Settings.command.clear()
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, TyperException, BrokenPipeError):
            raise  # typer's own handling: a closed pipe ends the command quietly
        except KeyboardInterrupt:
            typer.echo("ofcstats: interrupted", err=True)
            raise typer.Exit(130) from None
        except Exception as error:
            if interrupted(error):  # Ctrl-C while DuckDB ran a query
                typer.echo("ofcstats: interrupted", err=True)
                raise typer.Exit(130) from None
            if _Settings.debug:
                raise
            known = isinstance(error, OfcstatsError | OSError)
            hint = "" if known else \
                f" ({type(error).__name__}; run with --debug for the traceback)"
            if isinstance(error, duckdb.Error) and storage_full(error):
                # DuckDB names the file and the cause; the step it stopped was undone.
                hint = ("; free some space on that disk, then run this again (what was "
                        "stored before is kept)")
            if _damaged(error):
                hint = ("; the database file is damaged: use a copy of it, or load the "
                        "logs into a new one")
            typer.echo(f"ofcstats: {_one_line(error)}{hint}", err=True)
            raise typer.Exit(exit_code(error)) from None


app = typer.Typer(
    name="ofcstats",
    help="Hand-history analytics for Open Face Chinese poker and 13-card Chinese poker.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    cls=_Group,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ofcstats {importlib.metadata.version('ofcstats')}")
        raise typer.Exit


@app.callback()
def _main(
    debug: Annotated[bool, typer.Option(
        "--debug", help="Show the traceback of an unexpected error (or set "
        "$OFCSTATS_DEBUG).")] = False,
    version: Annotated[bool, typer.Option(
        "--version", help="Print the version and exit.", callback=_version,
        is_eager=True)] = False,
) -> None:
    """Hand-history analytics for Open Face Chinese poker and 13-card Chinese poker.

    Example: ofcstats ingest logs/ --db club.duckdb && ofcstats rescore --db club.duckdb
    """
    _Settings.debug = debug or bool(os.environ.get("OFCSTATS_DEBUG"))


rulesets_app = typer.Typer(
    help="List the built-in rulesets and fantasyland policies, or show one in full.\n\n"
    "Example: ofcstats rulesets show pokerstars",
    invoke_without_command=True,
    no_args_is_help=False,
    cls=_Group,
)


db_app = typer.Typer(
    help="Look into a hand database.\n\nExample: ofcstats db info --db club.duckdb",
    no_args_is_help=True,
    cls=_Group,
)


app.add_typer(rulesets_app, name="rulesets")
app.add_typer(db_app, name="db")


class OutputFormat(StrEnum):
    """How a command prints records: a stream of them may also be JSON Lines."""

    table = "table"
    csv = "csv"
    json = "json"
    jsonl = "jsonl"


class SummaryFormat(StrEnum):
    """How a command that changes things prints what it did."""

    table = "table"
    json = "json"


class TableFormat(StrEnum):
    """How an analysis command prints its table."""

    table = "table"
    csv = "csv"
    json = "json"


def split_list(values: list[str] | None) -> list[str] | None:
    """A repeatable option's values, each of which may itself be comma-separated.

    >>> split_list(["ann,bob", " cy ", "ann"])
    ['ann', 'bob', 'cy']
    """
    if values is None:
        return None
    found = [part.strip() for value in values for part in value.split(",")]
    return list(dict.fromkeys(part for part in found if part)) or None


DbOption = Annotated[Path | None, typer.Option(
    "--db", help="The database file. Default: $OFCSTATS_DB, else ./ofcstats.duckdb.",
    show_default=False)]


SessionOption = Annotated[list[str] | None, typer.Option(
    "--session", help="Only these sessions (repeat, or separate with commas).",
    show_default=False, callback=split_list, metavar="NAMES")]


SinceOption = Annotated[datetime | None, typer.Option(
    "--since", help="Only hands played at or after this time (ISO 8601).",
    show_default=False)]


UntilOption = Annotated[datetime | None, typer.Option(
    "--until", help="Only hands played before this time (ISO 8601).", show_default=False)]


VariantOption = Annotated[list[str] | None, typer.Option(
    "--variant", help=f"Only these variants: {', '.join(VARIANT_NAMES)} "
    "(repeat, or separate with commas).", show_default=False, callback=split_list,
    metavar="NAMES")]


PlayerOption = Annotated[list[str] | None, typer.Option(
    "--player", help="Only these players' rows (repeat, or separate with commas).",
    show_default=False, callback=split_list, metavar="NAMES")]


OutputPathOption = Annotated[Path | None, typer.Option(
    "--output", "-o", help="Write the table to this file. Default: stdout.",
    show_default=False)]


FormatOption = Annotated[TableFormat, typer.Option("--format", "-f", help="Output format.")]


QuietOption = Annotated[bool, typer.Option(
    "--quiet", "-q", help="No progress display (there is none outside a terminal either).")]


WaitOption = Annotated[float | None, typer.Option(
    "--wait", help="Seconds to wait for a database another program is writing to (or, "
    "to write, reading). Default: $OFCSTATS_LOCK_WAIT, else 10.", show_default=False,
    min=0, metavar="SECONDS")]


JsonFlag = Annotated[bool, typer.Option("--json", hidden=True,
                                        help="Deprecated: use --format json.")]


class EngineKind(StrEnum):
    """Where a sharded run goes."""

    local = "local"
    ray = "ray"


EngineOption = Annotated[EngineKind | None, typer.Option(
    "--engine", help="Work in shards of whole sessions: local (worker processes on this "
    "machine) or ray (a Ray cluster; pip install 'ofcstats[ray]'). Default: the config "
    "file's [engine] engine, else one process.", show_default=False)]


AddressOption = Annotated[str | None, typer.Option(
    "--address", help="With --engine ray: the Ray cluster to use (e.g. ray://head:10001). "
    "Default: the config file's, else a cluster started here.", show_default=False)]


FromOption = Annotated[Path | None, typer.Option(
    "--from", help="Read the hands from this Parquet export of the database (ofcstats "
    "export --parquet DIR): each worker reads its own shard there. Implies --engine local "
    "unless another is given.", show_default=False, metavar="DIR")]


ConfigOption = Annotated[Path | None, typer.Option(
    "--config", help="Configuration file (its [engine] table). Default: ./ofcstats.toml "
    "if there is one.", show_default=False)]


def engine_for(kind: EngineKind | None, jobs: int | None, address: str | None,
               source: Path | None, config: Path | None, *, jobs_shard: bool
               ) -> engines.Engine | None:
    """The engine the options (then the config file) ask for; None for the one-process
    path. ``jobs_shard``: --jobs alone asks for the local engine."""
    try:
        table = engine_config(config)
        chosen = kind.value if kind is not None else table.get("engine")
        if chosen is None and (source is not None or address is not None
                               or (jobs_shard and jobs is not None)):
            chosen = "ray" if address is not None else "local"
        if chosen is None:
            return None
        if source is not None:
            no_loop(source, "Parquet export")
            if not (source / "shards.parquet").is_file():
                raise UsageError(f"{source}: not a Parquet export of ofcstats (no "
                                 "shards.parquet): make one with ofcstats export --parquet DIR")
        if jobs is not None and jobs < 1:
            raise UsageError(f"--jobs must be at least 1, not {jobs}")
        return engines.Engine(
            kind=chosen, jobs=jobs or table.get("jobs", 0),
            address=address or table.get("address"), retries=table.get("retries", 3),
            shard_hands=table.get("shard_hands", SHARD_HANDS),
            review_shard_hands=table.get("review_shard_hands", engines.REVIEW_SHARD_HANDS),
            source=source)
    except OfcstatsError as error:
        raise fail_with(error) from None


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an error on stderr and return the exit to raise."""
    typer.echo(f"ofcstats: {message}", err=True)
    return typer.Exit(code)


def fail_with(error: BaseException) -> typer.Exit:
    """An error of the library as one line, with its exit code (see :func:`exit_code`)."""
    return fail(_one_line(error), exit_code(error))


def report_rejects(rejects: pl.DataFrame) -> None:
    """Each reject on stderr as ``FILE:LINE: reason``."""
    for source, line, reason in rejects.select("source", "line", "reason").iter_rows():
        where = f"{source}:{line}" if line is not None else str(source)
        typer.echo(sanitize.visible(f"{where}: {reason}"), err=True)


def emit(text: str, path: Path | None = None) -> None:
    """Text to stdout, or to ``path`` whole (written beside it, then renamed)."""
    if path is None:
        sys.stdout.write(text)
        return
    with written_whole(path) as partial:
        partial.write_text(text, encoding="utf-8")


def _json(frame: pl.DataFrame) -> str:
    return json.dumps(frame.to_dicts(), indent=2, default=str) + "\n"


def to_terminal(out: Path | TextIO | None) -> bool:
    """Whether records go to a terminal: stdout (``None``) or a stream that is one."""
    stream = sys.stdout if out is None else out
    return not isinstance(stream, Path) and stream.isatty()


def frame_text(frame: pl.DataFrame, output: OutputFormat | TableFormat,
               columns: Sequence[str] | None = None, *, terminal: bool = False) -> str:
    """Records as an aligned table (of ``columns``, floats rounded), CSV, JSON or JSON
    Lines (every column), names made safe to show (:mod:`ofcstats.sanitize`): CSV for a
    ``terminal`` with control characters escaped as in a table."""
    if output == "jsonl":
        return sanitize.json_text(frame.write_ndjson())
    if output == "csv":
        nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
        if nested:
            raise UsageError(
                f"CSV cannot hold the lists in {', '.join(nested)}: use -f json or -f jsonl, "
                "or make them text in the query (cards_text(top), array_to_string(...))")
        return sanitize.csv_frame(frame, terminal=terminal).write_csv()
    if output == "json":
        return _json(frame)
    shown = sanitize.table_frame(frame if columns is None else frame.select(columns)
                                 ).with_columns(pl.selectors.float().round(3))
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True, tbl_formatting="ASCII_MARKDOWN",
                   tbl_width_chars=1000, fmt_str_lengths=100 if columns is None else 60,
                   float_precision=None if columns is not None else 2):
        return f"{shown}\n"


def print_frame(frame: pl.DataFrame, output: OutputFormat, path: Path | None = None) -> None:
    """Write records to stdout (or ``path``) as a table, CSV, JSON or JSON Lines."""
    emit(frame_text(frame, output, terminal=to_terminal(path)), path)


def _print_table(frame: pl.DataFrame, output: TableFormat, columns: list[str]) -> None:
    """Write a table: all columns as CSV or JSON, the chosen ones rounded as a table."""
    sys.stdout.write(frame_text(frame, output, columns, terminal=to_terminal(None)))


class _Count(ProgressColumn):
    """``1,234/5,000 hands``, or ``1,234 hands`` while the total is unknown."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        done = f"{int(task.completed):,}"
        total = f"/{int(task.total):,}" if task.total is not None else ""
        return Text(f"{done}{total} {self.unit}", style="progress.download")


class _Rate(ProgressColumn):
    """``12,345 hands/s`` (blank until there is a rate to show)."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed or (
            task.completed / task.elapsed if task.completed and task.elapsed else None)
        return Text("" if speed is None else f"{speed:,.0f} {self.unit}/s",
                    style="progress.data.speed")


Update = Callable[[int, int | None], None]
"""A progress callback: ``(done, total)``, the total ``None`` while unknown."""


def by_variant_text(frame: pl.DataFrame, output: TableFormat, columns: list[str],
                    hands: dict[str, int] | None = None, *, terminal: bool = False) -> str:
    """A table per variant (CSV and JSON: one table, every row naming its variant; CSV
    for a ``terminal`` as :func:`frame_text` writes it)."""
    if output is not TableFormat.table:
        return frame_text(frame, output, ["variant", *columns], terminal=terminal)
    if "money" in frame.columns:
        frame = frame.with_columns(pl.col("money").map_elements(
            analysis.money_text, return_dtype=pl.String))
    frame = analysis.labelled(frame)
    parts = []
    for (variant,), part in frame.group_by("variant", maintain_order=True):
        count = f": {hands[str(variant)]:,} hands" if hands and str(variant) in hands else ""
        parts.append(f"{variant}{count}\n" + frame_text(part, output, columns))
    return "\n".join(parts)


@contextmanager
def progress_bar(label: str, show: bool, *, unit: str = "hands", in_bytes: bool = False
                 ) -> Iterator[Update | None]:
    """A progress callback drawing a bar on stderr (counts, rate, time so far), or None
    when there is no bar to draw. Colours follow ``NO_COLOR`` and the terminal.

    The bar is drawn from the first report of work on: a command that stops at an error
    in its inputs (a missing file, say) shows the error alone. Reports may come from
    several threads."""
    if not show:
        yield None
        return
    amounts: tuple[ProgressColumn, ...] = (DownloadColumn(), TransferSpeedColumn()) \
        if in_bytes else (_Count(unit), _Rate(unit))
    lock = threading.Lock()
    with ExitStack() as stack:
        drawn: list[tuple[Progress, TaskID]] = []

        def update(done: int, total: int | None) -> None:
            with lock:
                if not drawn:
                    bar = stack.enter_context(Progress(
                        "[progress.description]{task.description}", BarColumn(), *amounts,
                        TimeElapsedColumn(), console=Console(stderr=True), transient=True))
                    drawn.append((bar, bar.add_task(label, total=None)))
                bar, task = drawn[0]
                bar.update(task, completed=done, total=total)

        yield update


def _step(update: Update | None, done: int, total: int) -> None:
    if update is not None:
        update(done, total)


def _on_terminal(quiet: bool) -> bool:
    """Progress bars only for a person watching: not with --quiet, not into a pipe."""
    return not quiet and sys.stderr.isatty()


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


def _filters(rulesets: list[str] | None, session: list[str] | None, since: datetime | None,
             until: datetime | None, variant: list[str] | None, player: list[str] | None
             ) -> pipeline.Filters:
    return pipeline.Filters(rulesets=split_list(rulesets), sessions=split_list(session),
                            players=split_list(player), variants=split_list(variant),
                            since=_utc(since), until=_utc(until))


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


def check_filters(store: Store, filters: pipeline.Filters,
                  rulesets: Sequence[str] = ()) -> None:
    """Raise :class:`UsageError` for a filter value (or ruleset) the store does not hold,
    naming the values it does hold or the closest ones."""
    asked = {"player": filters.players, "session": filters.sessions,
             "variant": filters.variants,
             "ruleset": [*(filters.rulesets or []), *rulesets] or None}
    for kind, values in asked.items():
        if not values:
            continue
        known = store.known_values(kind)
        for value in values:
            if value in known:
                continue
            if kind == "ruleset":
                raise UsageError(unknown_value("ruleset", value, known, "scored rulesets")
                                 .replace("no ruleset named", "not scored under", 1)
                                 + f"; to score it: ofcstats rescore --ruleset {value}")
            if kind == "variant" and value not in VARIANT_NAMES:
                known = list(VARIANT_NAMES)
            raise UsageError(unknown_value(kind, value, known))


READ_MEMORY = "512MB"
"""What DuckDB may hold in memory for a read command; past it, it works from temporary
files (which are removed after): the statistics of millions of hands on a laptop."""


@contextmanager
def bounded_memory(store: Store) -> Iterator[None]:
    """Hold DuckDB to :data:`READ_MEMORY`, spilling to a temporary folder of its own."""
    with tempfile.TemporaryDirectory(prefix="ofcstats-") as spill:
        store.limit_memory(READ_MEMORY, spill)
        yield


@contextmanager
def reading(db: Path | None, filters: pipeline.Filters | None = None,
            rulesets: Sequence[str] = (), *, wait: float | None = None,
            quiet: bool = False) -> Iterator[Store]:
    """The database opened read-only (waiting up to ``wait`` seconds for a writer), with
    the filter values checked against it."""
    with _open_existing(db, wait=wait, quiet=quiet) as store, bounded_memory(store):
        if filters is not None or rulesets:
            try:
                check_filters(store, filters or pipeline.Filters(), rulesets)
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


def _player_table(store: Store, filters: pipeline.Filters, seed: int,
                  pairs: dict[str, str] | None = None) -> pl.DataFrame:
    try:
        return analysis.player_table(store, filters, seed=seed, pairs=pairs)
    except StoreError as error:
        raise fail(str(error), 1) from None
    except OfcstatsError as error:
        raise fail_with(error) from None


@app.command()
def simulate(
    players: Annotated[str, typer.Option(
        "--players", "-p", help="Seats in order as name:style, comma-separated; styles: "
        "random, safe, balanced, aggressive, montecarlo.", show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="The .jsonl file to write.",
                                         show_default=False)],
    variant: Annotated[str, typer.Option(
        "--variant", help=f"{', '.join(VARIANT_NAMES[:-1])} or {VARIANT_NAMES[-1]}.")
    ] = Variant.PINEAPPLE.value,
    hands: Annotated[int, typer.Option("--hands", "-n", help="Hands to play.")] = 1000,
    ruleset: Annotated[str, typer.Option(
        "--ruleset", "-r", help="A preset name or a TOML file: scoring and fantasyland.")]
        = "american",
    seed: Annotated[int, typer.Option("--seed", help="The same seed writes the same file.")]
        = 0,
    rollouts: Annotated[int, typer.Option(
        "--rollouts", help="Samples per decision of the montecarlo bot.")] = 100,
    timeout_rate: Annotated[float, typer.Option(
        "--timeout-rate", help="Chance that a seat runs out of time in a hand.")] = 0.0,
    prefix: Annotated[str | None, typer.Option(
        "--prefix", help="Hand and session ids start with it. Default: sim<seed>.")] = None,
    append: Annotated[bool, typer.Option(
        "--append", help="Resume a stopped run: give the options of the run that wrote the "
        "file; it becomes what an uninterrupted run writes.")] = False,
    quiet: QuietOption = False,
) -> None:
    """Play bots against each other and write the hands as an ofc-hand/1 log.

    Each hand carries its streets, fantasyland flags, button, a session per game (one
    orbit of the button) and reported_points under the ruleset played. Hands are
    written as they are played (a block of tables at a time), so a stopped run keeps
    what it played; --append then finishes it.

    Example: ofcstats simulate -p ann:aggressive,bob:safe,cy:montecarlo -n 10000 -o s.jsonl
    """
    # The simulator is imported only when it is used: it is the slowest import.
    from ofcstats.simulate import Simulation, parse_players, write_jsonl  # noqa: PLC0415

    try:
        sim = Simulation(variant=Variant.parse(variant), ruleset=load_ruleset(ruleset),
                         players=parse_players(players), hands=hands, seed=seed,
                         rollouts=rollouts, timeout_rate=timeout_rate, prefix=prefix)
        sim.check()
        writable_file(output, "hands")
        with progress_bar("simulate", _on_terminal(quiet)) as update:
            written = write_jsonl(sim, output, update, append=append)
    except (OfcstatsError, OSError) as error:
        raise fail_with(error) from None
    resumed = "" if written.resumed_after is None else \
        f" (resumed after {written.resumed_after:,})"
    typer.echo(f"{written.hands:,} hands of {sim.variant.value} under {sim.ruleset.name} "
               f"(seed {seed}){resumed} -> {output}")


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(
        help="Log files, directories to search for them (recursively), or patterns such "
        "as 'logs/**/*.jsonl.gz'; - reads standard input.",
        show_default=False)],
    db: DbOption = None,
    input_format: Annotated[str | None, typer.Option(
        "--input-format", help=f"The input format when not detected from content: "
        f"{', '.join(formats.format_names())}.", show_default=False)] = None,
    output: Annotated[str, typer.Option(
        "--format", "-f", help="How to print the summary: table or json.")] = "table",
    quiet: QuietOption = False,
    wait: WaitOption = None,
    as_json: JsonFlag = False,
    load_changed: Annotated[bool, typer.Option(
        "--load-changed", help="Load a file that changed since it was loaded (not just "
        "grew); by default it is reported and left out.")] = False,
    update_stored: Annotated[bool, typer.Option(
        "--update", help="A stored hand loaded again with the same cards but other "
        "reported_points, point_value, ruleset, button or played_at takes the new values "
        "(its session is scored again); by default it is rejected as a conflict.")] = False,
    no_rescore: Annotated[bool, typer.Option(
        "--no-rescore", help="Only load: leave the scoring to a later ofcstats rescore "
        "(for bulk loads; until then the commands that answer from the results say what "
        "is not scored).")] = False,
) -> None:
    """Load hand logs into the database, each file in one transaction, then score what
    is not scored yet, so that every command can answer.

    A file already loaded (same content, any name) is skipped; one that grew loads its
    new lines only; one that changed otherwise is reported and left out. Loading the same
    hands again adds nothing; a different hand under a stored id is rejected as a
    conflict, and so is the same hand with other non-card values (unless --update). Use
    - for standard input. Rejected hands are kept, with the reason, in the rejects
    table. Then, as ofcstats rescore would, the hands not yet scored (and the sessions
    that grew) are scored under every ruleset the database holds and every preset played
    under their variants, in batches each written in its own transaction (--no-rescore:
    load only). Exit code 1 when anything was rejected or left out, or the scoring
    failed; 2, with nothing created, when an input is missing.

    Example: ofcstats ingest logs/ --db club.duckdb
    """
    if output in formats.format_names():  # --format once named the input format
        input_format, output = output, "table"
    shown = _summary_format(output, as_json)
    database = db or ingesting.default_database()
    _large_frames_process()
    try:
        for path in [*paths, database]:
            no_loop(path, "log" if path in paths else "database")
        note = _WaitNote(quiet or shown is SummaryFormat.json)
        with progress_bar("ingest", _on_terminal(quiet or shown is SummaryFormat.json),
                          in_bytes=True) as update, closing(note):
            summary = ingesting.ingest(paths, database, input_format,
                                       progress=note.then(update), load_changed=load_changed,
                                       wait=wait, update=update_stored, on_wait=note, warn=warn)
    except OfcstatsError as error:
        raise fail_with(error) from None
    scored, problem = None, None
    if not no_rescore:
        scored, problem = _score_loaded(database, wait, quiet or shown is SummaryFormat.json)
    if shown is SummaryFormat.json:
        typer.echo(json.dumps({**summary.to_dict(), "rescore": None if scored is None
                               else asdict(scored)}, indent=2))
    else:
        _print_summary(summary)
        if scored is not None:
            typer.echo(f"scored: {_rescore_text(scored)}")
    if problem is not None:
        typer.echo(f"ofcstats: {problem}", err=True)
    if not summary.clean or problem is not None:
        raise typer.Exit(1)


def _score_loaded(database: Path, wait: float | None, quiet: bool
                  ) -> tuple[pipeline.RescoreSummary | None, str | None]:
    """After a load: score what the database has not scored (:func:`pipeline.update`),
    with a progress bar; what it did, or why it could not (one line, with the fix)."""
    note = _WaitNote(quiet)  # (another program may have taken the file after the load)
    try:
        with closing(note), Store(database, wait=wait, on_wait=note) as store, \
                progress_bar("rescore", _on_terminal(quiet)) as update:
            return pipeline.update(store, progress=note.then(update)), None
    except OfcstatsError as error:
        return None, f"{_one_line(error)} (the hands were loaded; they are not scored yet)"


def _summary_format(output: str, as_json: bool) -> SummaryFormat:
    """``--format`` of a command that prints a summary (``--json`` is the old spelling)."""
    if as_json:
        return SummaryFormat.json
    try:
        return SummaryFormat(output)
    except ValueError:
        raise fail(f"--format {output}: use one of "
                   f"{', '.join(f.value for f in SummaryFormat)}") from None


def _print_summary(summary: ingesting.IngestSummary) -> None:
    files = len(summary.files)
    conflicts = f" ({summary.conflicts} conflicts)" if summary.conflicts else ""
    skipped = f" ({summary.skipped} already loaded, skipped)" if summary.skipped else ""
    updated = f", {summary.updated:,} updated" if summary.updated else ""
    typer.echo(f"{files} file{'s' if files != 1 else ''}{skipped}: {summary.hands:,} hands "
               f"loaded{updated}, {summary.duplicates:,} duplicates skipped, {summary.rejected:,} "
               f"rejected{conflicts} in {summary.seconds:.1f}s -> {summary.database}")
    for reject in summary.first_rejects:
        where = reject.path if reject.line is None else f"{reject.path}:{reject.line}"
        typer.echo(f"{where}: {reject.reason}", err=True)
    if summary.rejected > len(summary.first_rejects):
        typer.echo(f"... and {summary.rejected - len(summary.first_rejects):,} more: "
                   f"SELECT * FROM rejects in {summary.database}", err=True)


@db_app.command("info")
def db_info(
    db: DbOption = None,
    output: Annotated[SummaryFormat, typer.Option(
        "--format", "-f", help="Output format.")] = SummaryFormat.table,
    wait: WaitOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show the database's tables with their row counts, sessions, players and dates,
    and check that every stored hand is scored under every ruleset of its variant
    (what-ifs included): per variant, the rulesets that hold all its hands, and what is
    missing from the others.

    Example: ofcstats db info --db club.duckdb
    """
    with _open_existing(db, wait=wait) as store:
        info = store.info()
    if as_json or output is SummaryFormat.json:
        typer.echo(json.dumps(info, indent=2))
        return
    typer.echo(f"database: {info['path']} (schema version {info['schema_version']})")
    typer.echo("tables:")
    tables = info["tables"]
    assert isinstance(tables, dict)
    for name, count in tables.items():
        typer.echo(f"  {name:<16} {count:>12,}")
    typer.echo(f"sessions: {info['sessions']:,}")
    typer.echo(f"players: {info['players']:,}")
    variants = info["variants"]
    assert isinstance(variants, dict)
    typer.echo("variants: " + (", ".join(f"{k} {v:,}" for k, v in variants.items()) or "none"))
    typer.echo(f"played: {info['first_played_at'] or '-'} to {info['last_played_at'] or '-'}")
    scoring = info["scoring"]
    assert isinstance(scoring, list)
    for line in _scoring_lines(scoring, bool(info["scoring_complete"])):
        typer.echo(line)


def _scoring_lines(rows: list[dict[str, Any]], complete: bool) -> list[str]:
    """``db info``'s check that every stored hand is scored: per variant, the rulesets
    that score all its hands, then each shortfall on a line of its own."""
    if not rows:
        return []
    lines = ["scoring: every stored hand scored under every ruleset of its variant" if complete
             else "scoring: NOT COMPLETE (run ofcstats rescore):"]
    for variant in dict.fromkeys(row["variant"] for row in rows):
        mine = [row for row in rows if row["variant"] == variant]
        hands = mine[0]["hands"]
        if mine[0]["ruleset"] is None:
            lines.append(f"  {variant}: {hands:,} hands, none scored: no ruleset is scored "
                         "over this variant")
            continue
        whole = [row for row in mine if row["scored"] == row["current"] == hands]
        names = ", ".join(row["ruleset"] + (" (what-if)" if row["what_if"] else "")
                          for row in whole)
        lines.append(f"  {variant}: {hands:,} hands, every one scored under {len(whole)} of "
                     f"{len(mine)} rulesets" + (f": {names}" if whole else ""))
        for row in mine:
            if row in whole:
                continue
            missing = hands - row["scored"]
            stale = row["scored"] - row["current"]
            parts = [f"{missing:,} not scored"] if missing > 0 else []
            if stale > 0:
                parts.append(f"{stale:,} scored before their session changed")
            lines.append(f"    {row['ruleset']}{' (what-if)' if row['what_if'] else ''}: "
                         + ", ".join(parts or [f"{row['current']:,} up to date"]))
    return lines


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="One SQL query (SELECT, WITH, DESCRIBE, ...).",
                                         show_default=False)],
    db: DbOption = None,
    output: Annotated[OutputFormat, typer.Option("--format", "-f",
                                                 help="Output format.")] = OutputFormat.table,
    output_path: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Write the rows to this file. Default: stdout.",
        show_default=False)] = None,
    quiet: QuietOption = False,
    wait: WaitOption = None,
) -> None:
    """Run a read-only SQL query on the database: the tables and views of
    docs/database.md (hands, seats, placements, boards, results_named, ...).

    The database is opened read-only and the query cannot read or write other files.

    Example: ofcstats sql "SELECT player, count(*) AS hands FROM seats GROUP BY 1 ORDER BY 2 DESC"
    """
    if output_path is not None:
        writable_file(output_path, "rows")
    with _open_existing(db, wait=wait, quiet=quiet) as store, \
            progress_bar("sql", _on_terminal(quiet), unit="rows") as update:
        frame = run_query(store, query, update)
    if frame is not None:
        print_frame(frame, output, output_path)


def run_query(store: Store, query: str, progress: Update | None = None) -> pl.DataFrame | None:
    """The rows of a query on a read-only store (None for a statement with no rows); a
    query DuckDB refuses is a :class:`UsageError` with DuckDB's reason."""
    try:
        # No file outside the database: a query cannot read or write the file system.
        store.con.execute("SET enable_external_access = false")
        relation = store.con.sql(query)
        if relation is None:
            return None
        reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_record_batch
        parts, rows = [], 0
        for batch in reader(1 << 16):
            parts.append(pl.DataFrame(batch))
            rows += batch.num_rows
            if progress is not None:
                progress(rows, None)
    except duckdb.Error as error:
        raise UsageError(f"the query failed: {str(error).splitlines()[0]}") from None
    return pl.concat(parts) if parts else relation.limit(0).pl()


@app.command()
def export(
    parquet: Annotated[Path, typer.Option("--parquet", "--output", "-o",
                                          help="Directory to write Parquet files into.",
                                          show_default=False)],
    db: DbOption = None,
    shard_hands: Annotated[int, typer.Option(
        "--shard-hands", help="Hands per shard of hands, seats and placements (whole "
        "sessions: a shard may hold more).", min=1)] = SHARD_HANDS,
    quiet: QuietOption = False,
    wait: WaitOption = None,
) -> None:
    """Write every table of the database (and its views) as Parquet files; hands, seats
    and placements (seat_placements) as folders of shards of whole sessions
    (DIR/hands/shard=K/), listed in DIR/shards.parquet, which rescore and review --from
    DIR read.

    Example: ofcstats export --parquet out/club --db club.duckdb
    """
    writable_directory(parquet, "Parquet files")
    with _open_existing(db, wait=wait, quiet=quiet) as store, \
            progress_bar("export", _on_terminal(quiet), unit="tables") as update:
        written = replace_directory_files(
            parquet, lambda folder: store.export_parquet(folder, progress=update,
                                                         shard_hands=shard_hands),
            "Parquet files")
        try:
            analysis.check_scored(store, pipeline.Filters())
        except StoreError as error:
            # The hands are all exported (a sharded rescore --from DIR reads them); the
            # results leave some out, which is said, never silently.
            warn(f"the results exported leave hands out: {error}")
    for path in written:
        typer.echo(str(path))


@app.command()
def score(
    files: Annotated[list[Path], typer.Argument(help="ofc-hand/1 logs (.jsonl, .jsonl.gz).",
                                                show_default=False)],
    ruleset: Annotated[list[str] | None, typer.Option(
        "--ruleset", "-r", help="A preset name or a TOML file; repeat, or separate with "
        "commas. Default: each hand's own ruleset, else american.")] = None,
    all_rulesets: Annotated[bool, typer.Option(
        "--all-rulesets", help="Score each hand under every built-in preset played in its "
        "variant.")] = False,
    output: Annotated[OutputFormat, typer.Option("--format", "-f",
                                                 help="Output format.")] = OutputFormat.table,
    output_path: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Write the records to this file. Default: stdout.",
        show_default=False)] = None,
    format_name: Annotated[str | None, typer.Option(
        "--input-format", help="Input format, when detection from content is not wanted.")]
        = None,
    quiet: QuietOption = False,
) -> None:
    """Score hands: one record per hand, seat and ruleset.

    A ruleset named with --ruleset scores every hand; what_if marks the rows of hands of a
    variant it is not played under.

    Example: ofcstats score session.jsonl --ruleset american --ruleset pokerstars
    """
    _large_frames_process()
    for path in files:
        no_loop(path, "log")
        if not path.exists():
            raise fail(f"{path}: no such file or directory")
    if output_path is not None:
        writable_file(output_path, "records")
    try:
        names = split_list(ruleset)
        chosen = load_rulesets(preset_names()) if all_rulesets else (
            load_rulesets(names) if names else None)
        with progress_bar("read", _on_terminal(quiet), in_bytes=True) as update, \
                _records_out(output_path) as out:
            parts = score_files(files, chosen, own_variants=all_rulesets,
                                format_name=format_name, progress=update, warn=warn)
            rejects = write_records(parts, output, out)
    except OfcstatsError as error:
        raise fail_with(error) from None
    report_rejects(rejects)
    if not rejects.is_empty():
        raise typer.Exit(1)


def warn(message: str) -> None:
    """A warning on stderr, one line."""
    typer.echo(f"ofcstats: warning: {message}", err=True)


@contextmanager
def _records_out(path: Path | None) -> Iterator[TextIO]:
    """Where records go: stdout, or ``path`` written whole (beside it, then renamed)."""
    if path is None:
        yield sys.stdout
        return
    with written_whole(path) as partial, partial.open("w", encoding="utf-8") as out:
        yield out


def write_records(parts: Iterable[ScoredBatch], output: OutputFormat, out: TextIO
                  ) -> pl.DataFrame:
    """Write scored records a part at a time, the bytes :func:`frame_text` gives for them
    all (a table's header is written once, its rows part by part); give back the parts'
    rejects."""
    rejects, written, last = [], 0, None
    terminal = to_terminal(out)
    for part in parts:
        rejects.append(part.rejects)
        frame = last = part.results
        if frame.is_empty():
            continue
        if output == "csv":
            out.write(sanitize.csv_frame(frame, terminal=terminal).write_csv(
                include_header=not written))
        elif output == "json":
            out.write("[\n" if not written else ",\n")
            out.write(",\n".join(textwrap.indent(json.dumps(row, indent=2, default=str), "  ")
                                  for row in frame.to_dicts()))
        elif output == "table" and written:
            # One table: a later part's rows go under the first part's header (a Markdown
            # table's columns need not line up to read as one).
            out.write(frame_text(frame, output).split("\n", 2)[2])
        else:
            out.write(frame_text(frame, output))
        written += frame.height
    if output == "json" and written:
        out.write("\n]\n")
    elif not written and last is not None:
        # No records: the empty table, the header, or [].
        out.write(frame_text(last, output, terminal=terminal))
    return pl.concat(rejects) if rejects else pl.DataFrame(schema=REJECTS_SCHEMA)


@rulesets_app.callback()
def rulesets(
    context: typer.Context,
    output: FormatOption = TableFormat.table,
) -> None:
    """List every built-in ruleset (with the variants it is played under) and fantasyland
    policy.

    Example: ofcstats rulesets --format csv
    """
    if context.invoked_subcommand is not None:
        return
    presets = [load_ruleset(name) for name in preset_names()]
    table = pl.DataFrame({
        "name": [r.name for r in presets],
        "variants": [",".join(v.value for v in r.variants) for r in presets],
        "description": [r.description for r in presets],
        "scoring": [r.summary() for r in presets],
    })
    if output is not TableFormat.table:
        if output is TableFormat.json:
            table = table.with_columns(pl.col("variants").str.split(","))
        _print_table(table, output, table.columns)
        return
    names = preset_names()
    width = max(len(n) for n in names + policy_names())
    typer.echo("Rulesets (name, variants it is played under, scoring):")
    for ruleset in presets:
        typer.echo(f"  {ruleset.name:<{width}}  "
                   f"[{', '.join(v.value for v in ruleset.variants)}]  {ruleset.summary()}")
    typer.echo("\nFantasyland policies (docs/rules.md §6):")
    for name in policy_names():
        policy = load_policy(name)
        mark = "" if policy.in_sources else " [not in the sources]"
        typer.echo(f"  {name:<{width}}  {policy.description}{mark}")


@rulesets_app.command("show")
def rulesets_show(
    name: Annotated[str, typer.Argument(help="A preset or policy name, or a TOML file.")],
) -> None:
    """Print one ruleset (or fantasyland policy) in full.

    Example: ofcstats rulesets show finnish-spade
    """
    try:
        if name in policy_names() and name not in preset_names():
            policy = load_policy(name)
            typer.echo(_policy_text(policy))
            return
        typer.echo(_ruleset_text(load_ruleset(name)))
    except OfcstatsError as error:
        raise fail_with(error) from None


def _ruleset_text(ruleset: Ruleset) -> str:
    data = ruleset.to_dict()
    lines = [f"{ruleset.name}: {ruleset.description}"]
    for key in ("variants", "sources", "foul_penalty", "misset", "wheel", "surrender",
                "spade_bonus", "point_value", "loss_cap"):
        if key in data:
            value = data[key]
            text = ", ".join(map(str, value)) if isinstance(value, list) else value
            lines.append(f"  {key}: {text}")
    h = data["head_to_head"]
    lines.append(f"  head to head: row {h['row']}, majority {h['majority']}, scoop {h['scoop']}"
                 f", table bonus {h['table_bonus']}  (2-1 pays "
                 f"{ruleset.head_to_head.two_one_value}, 3-0 pays "
                 f"{ruleset.head_to_head.scoop_value})")
    r = data["royalties"]
    lines.append(f"  royalties: {r['name']}")
    for row in ROW_NAMES:
        table = r[row]
        text = ", ".join(f"{k} {v}" for k, v in table.items()) if table else "none"
        lines.append(f"    {row}: {text}")
    lines.append(f"  fantasyland: {_policy_text(ruleset.fantasyland, indent='    ')}")
    n = data["naturals"]
    if any(n.values()):
        lines.append("  naturals: " + ", ".join(f"{k} {v}" for k, v in n.items()))
    if "royalty_pool" in data:
        pool = data["royalty_pool"]
        lines.append(f"  royalty pool: {pool['stake']} a player, split {pool['split']}")
    return "\n".join(lines)


def _policy_text(policy: FantasylandPolicy, indent: str = "  ") -> str:
    lines = [f"{policy.name}: {policy.description}"]
    if policy.entry is None:
        return lines[0]
    lines.append(f"{indent}entry: {policy.entry} or better on top, not fouled")
    stays = [f"{row} {spec}" for row, spec in (("top", policy.stay_top),
                                               ("middle", policy.stay_middle),
                                               ("bottom", policy.stay_bottom)) if spec]
    lines.append(f"{indent}stay: {' or '.join(stays)} (or better), not fouled")
    limit = "no limit" if policy.repeat_limit is None else str(policy.repeat_limit)
    per = "per game" if policy.repeat_scope == "game" else "in a row"
    lines.append(f"{indent}repeats {per}: {limit}")
    if policy.entry_cards:
        cards = ", ".join(f"{k} {v}" for k, v in policy.entry_cards.items())
        lines.append(f"{indent}cards on entry (Pineapple; one fewer in classic and turbo): "
                     f"{cards}")
    return "\n".join(lines)


@app.command()
def rescore(
    ruleset: Annotated[list[str] | None, typer.Option(
        "--ruleset", "-r", help="A preset name or a TOML file; repeat, or separate with "
        "commas. Default: every preset, and every other ruleset the database holds.",
        show_default=False)] = None,
    all_rulesets: Annotated[bool, typer.Option(
        "--all-rulesets", help="Every built-in preset and every other ruleset the database "
        "holds (the default), with any --ruleset given too.")] = False,
    what_if: Annotated[list[str] | None, typer.Option(
        "--what-if", help="Also score the hands of variants this ruleset is not played "
        "under (a preset name or a TOML file; repeat); such rows are marked what-if.",
        show_default=False)] = None,
    rebuild: Annotated[bool, typer.Option(
        "--rebuild", help="Score every hand again, not only those not yet scored.")] = False,
    db: DbOption = None,
    engine: EngineOption = None,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", help="Worker processes of the local engine (or CPUs of a Ray "
        "cluster started here); alone, asks for --engine local. Default: the config "
        "file's, else every core.", show_default=False)] = None,
    address: AddressOption = None,
    source: FromOption = None,
    config: ConfigOption = None,
    output: Annotated[SummaryFormat, typer.Option(
        "--format", "-f", help="How to print the summary.")] = SummaryFormat.table,
    quiet: QuietOption = False,
    wait: WaitOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Score the stored hands under rulesets, into the results table.

    Each ruleset scores the hands of the variants it is played under (its `variants`);
    --what-if NAME scores every hand under NAME, marking the rows of other variants.
    Only hands not yet scored under a ruleset are scored (their whole session, of every
    variant: play order, games and fantasyland repeat limits are the table's); a ruleset
    whose definition changed is scored again. ingest already scores what it loads: run
    rescore for another ruleset, a what-if, an edited ruleset, or after ingest
    --no-rescore. --engine local|ray scores shards of whole sessions in worker processes
    or on a Ray cluster and writes the same rows (docs/scale.md).

    Example: ofcstats rescore --all-rulesets --db club.duckdb
    """
    _large_frames_process()
    as_json = as_json or output is SummaryFormat.json
    try:
        named = split_list(ruleset) or []
        asked = [*named, *(split_list(what_if) or [])]
        every = all_rulesets or not asked
        names = [*(preset_names() if every else []), *asked]
        chosen = load_rulesets(names)
        what_ifs = [load_ruleset(name).name for name in split_list(what_if) or []]
    except OfcstatsError as error:
        raise fail_with(error) from None
    sharded = engine_for(engine, jobs, address, source, config, jobs_shard=True)
    with _open_existing(db, read_only=False, wait=wait, quiet=quiet) as store:
        try:
            if every:
                # Every preset, and the other rulesets the database holds.
                have = {r.name for r in chosen}
                chosen += [r for r in pipeline.default_rulesets(store, as_stored=False)
                           if r.name not in have]
            with progress_bar("rescore", _on_terminal(quiet or as_json)) as update:
                if sharded is None:
                    summary = pipeline.rescore(store, chosen, rebuild=rebuild,
                                               what_if=what_ifs, progress=update)
                else:
                    summary = engines.rescore(store, chosen, sharded, rebuild=rebuild,
                                              what_if=what_ifs, progress=update)
        except OfcstatsError as error:
            raise fail_with(error) from None
    if as_json:
        typer.echo(json.dumps(asdict(summary), indent=2))
        return
    typer.echo(_rescore_text(summary))


def _rescore_text(summary: pipeline.RescoreSummary) -> str:
    again = f"; scored again from scratch: {', '.join(summary.rebuilt)}" if summary.rebuilt \
        else ""
    return (f"{len(summary.rulesets)} rulesets: {summary.hands:,} hands in "
            f"{summary.sessions:,} sessions scored, {summary.rows:,} result rows in "
            f"{summary.seconds:.1f}s{again}")


@app.command()
def compare(
    db: DbOption = None,
    ruleset: Annotated[list[str] | None, typer.Option(
        "--ruleset", "-r", help="Only these rulesets (repeat). Default: all scored.",
        show_default=False)] = None,
    output: FormatOption = TableFormat.table,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    variant: VariantOption = None, player: PlayerOption = None, quiet: QuietOption = False,
    output_path: OutputPathOption = None, wait: WaitOption = None,
) -> None:
    """Compare scoring systems side by side, one table per variant: volatility, royalties,
    fouls, fantasyland, and how fast skill shows (rulesets ranked by the skill signal).

    A ruleset scored on hands of a variant it is not played under (rescore --what-if) is
    marked "(what-if)".

    Example: ofcstats compare --db club.duckdb --variant pineapple
    """
    if output_path is not None:
        writable_file(output_path, "table")
    filters = _filters(ruleset, session, since, until, variant, player)
    with reading(db, filters, wait=wait, quiet=quiet) as store, _summing(quiet):
        try:
            table = stats.ruleset_stats_of(analysis.stored_rows(store, filters))
        except OfcstatsError as error:
            raise fail_with(error) from None
    if table.is_empty():
        raise fail(analysis.NOTHING_SCORED, 1)
    hands = dict(table.group_by("variant").agg(pl.col("hands").max()).iter_rows())
    emit(by_variant_text(table, output, [
        "skill_rank", "ruleset", "hands", "sd", "mean_abs_points", "royalty_share",
        "foul_rate", "fantasyland_entry_rate", "skill_signal", "hands_to_tell_apart"], hands,
        terminal=to_terminal(output_path)), output_path)


@app.command()
def players(
    db: DbOption = None,
    ruleset: Annotated[str | None, typer.Option(
        "--ruleset", "-r", help="The ruleset to report. Default: per variant, the one most "
        "of its hands were played under.", show_default=False)] = None,
    output: FormatOption = TableFormat.table,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    variant: VariantOption = None, player: PlayerOption = None,
    quiet: QuietOption = False, output_path: OutputPathOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the session bootstrap.")] = 7,
    wait: WaitOption = None,
) -> None:
    """Every player's results under one ruleset per variant: points, spread, 95%
    intervals, money as the table settled it, fouls, fantasyland, scoops.

    Example: ofcstats players --ruleset pokerstars --db club.duckdb
    """
    if output_path is not None:
        writable_file(output_path, "table")
    filters = _filters([ruleset] if ruleset else None, session, since, until, variant, player)
    with reading(db, filters, wait=wait, quiet=quiet) as store, _summing(quiet):
        # Only the rulesets shown are read: one per variant.
        shown = analysis.shown_rulesets(store, filters, ruleset)
        try:
            analysis.check_scored(store, filters, shown)
        except StoreError as error:
            raise fail(str(error), 1) from None
        if shown:
            filters = replace(filters, rulesets=sorted(set(shown.values())))
        table = _player_table(store, filters, seed, shown)
    emit(by_variant_text(
        table.sort(["variant", "total", "player"], descending=[False, True, False]), output, [
            "player", "ruleset", "hands", "total", "mean", "sd", "ci_low", "ci_high",
            "boot_low", "boot_high", "money", "foul_rate", "fantasyland_entry_rate",
            "fantasyland_stay_rate", "scoop_rate", "hands_for_1"],
        terminal=to_terminal(output_path)), output_path)


@app.command()
def player(
    name: Annotated[str, typer.Argument(help="The player's name.", show_default=False)],
    db: DbOption = None,
    ruleset: Annotated[list[str] | None, typer.Option(
        "--ruleset", "-r", help="Only these rulesets (repeat). Default: all scored.",
        show_default=False)] = None,
    output: FormatOption = TableFormat.table,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    variant: VariantOption = None, quiet: QuietOption = False,
    output_path: OutputPathOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the session bootstrap.")] = 7,
    wait: WaitOption = None,
) -> None:
    """One player under every scored ruleset, per variant: results, money as the table
    settled it (each game's loss cap over the whole table), style; then the hands whose
    logged points differ from the re-score.

    Example: ofcstats player alice --db club.duckdb
    """
    if output_path is not None:
        writable_file(output_path, "table")
    filters = _filters(ruleset, session, since, until, variant, [name])
    with reading(db, filters, wait=wait, quiet=quiet) as store, _summing(quiet):
        table = _player_table(store, filters, seed)
        differences = stats.reported_differences_of(analysis.stored_rows(store, filters))
    text = by_variant_text(
        table.sort(["variant", "mean", "ruleset"], descending=[False, True, False]), output, [
            "ruleset", "hands", "total", "mean", "sd", "ci_low", "ci_high", "money",
            "foul_rate", "fantasyland_entry_rate", "fantasyland_stay_rate", "royalties_top",
            "royalties_middle", "royalties_bottom", "scoop_rate"],
        terminal=to_terminal(output_path))
    if output is TableFormat.table and not differences.is_empty():
        text += (f"\n{differences.height} seat(s) where the logged points differ from the "
                 "re-score under the ruleset played:\n"
                 + frame_text(differences, output, differences.columns))
    emit(text, output_path)


@app.command()
def report(
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")]
        = Path("report.html"),
    db: DbOption = None,
    ruleset: Annotated[str | None, typer.Option(
        "--ruleset", "-r", help="The ruleset of the summary and style charts. Default: the "
        "one most hands were played under.", show_default=False)] = None,
    pdf: Annotated[Path | None, typer.Option(
        "--pdf", help="Also write the charts as a multi-page PDF.", show_default=False)] = None,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    variant: VariantOption = None, player: PlayerOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the session bootstrap.")] = 7,
    quiet: QuietOption = False,
    wait: WaitOption = None,
) -> None:
    """Write a self-contained HTML report (charts embedded, no network): the summary, the
    scoring systems compared, player styles, a section per player, checks, methodology.

    Example: ofcstats report --db club.duckdb --ruleset american -o report.html --pdf charts.pdf
    """
    # Imported here: matplotlib takes about a second to load, which no other command needs.
    from ofcstats import report as reporting  # noqa: PLC0415

    filters = _filters(None, session, since, until, variant, player)
    if output.suffix.lower() == ".pdf":
        raise fail(f"{output}: -o writes the HTML report; write the PDF with --pdf {output}", 2)
    for path, what in ((output, "report"), (pdf, "PDF")):
        if path is not None:
            writable_file(path, what, make_parents=True)
    with progress_bar("report", _on_terminal(quiet), unit="steps") as update, \
            reading(db, filters, [ruleset] if ruleset else [], wait=wait, quiet=quiet) as store:
        _step(update, 0, 2)  # reading and computing, then drawing and writing
        try:
            data = reporting.collect(store, filters, ruleset, seed=seed)
        except OfcstatsError as error:
            raise fail_with(error) from None
        _step(update, 1, 2)
        written = reporting.write_report(data, output, pdf)
        _step(update, 2, 2)
    typer.echo(f"report ({written.charts} charts, {len(data.variants)} variants) -> "
               f"{written.html.resolve()}")
    if written.pdf is not None:
        typer.echo(f"charts -> {written.pdf.resolve()}")


REFERENCE_WIDTH = 92  # columns of the help text in docs/cli.md


def cli_reference() -> str:
    """docs/cli.md: every command's help, as ``ofcstats COMMAND --help`` prints it."""
    root = typer.main.get_command(app)
    parts = ["# Command line reference", "",
             "Every command of `ofcstats` with its options, as `--help` prints them. This "
             "page is generated from the commands themselves (`make docs` writes it; a test "
             "checks that it is current). Exit codes: 0 done; 1 some input skipped (each "
             "skip on stderr as `FILE:LINE: reason`) or the command failed; 2 a usage error "
             "(a missing input, an unknown option or filter value, an output that cannot be "
             "written), found before anything is created.", ""]

    def add(command: Any, name: str, parent: Any = None) -> None:
        ctx = command.context_class(command, parent=parent, info_name=name,
                                    terminal_width=REFERENCE_WIDTH,
                                    max_content_width=REFERENCE_WIDTH)
        parts.extend([f"## {ctx.command_path}", "", "```text", command.get_help(ctx).rstrip(),
                      "```", ""])
        for sub_name, sub in getattr(command, "commands", {}).items():
            if not sub.hidden:
                add(sub, sub_name, ctx)

    add(root, "ofcstats")
    return "\n".join(parts)


@app.command("cli-reference", hidden=True)
def cli_reference_command(
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Write it to this file. Default: stdout.")] = None,
) -> None:
    """Print docs/cli.md, the reference of every command, from the commands themselves.

    Example: ofcstats cli-reference -o docs/cli.md
    """
    if output is not None:
        writable_file(output, "reference")
    emit(cli_reference(), output)


def main() -> None:
    """Console entry point."""
    app()


def _large_frames_process() -> None:
    """Opt in, for a command that loads or scores large frames, to ``malloc`` keeping
    freed memory for reuse (:mod:`ofcstats.allocator`): a quarter of the scoring time and
    a tenth of a large load's, at the price of keeping the peak heap until the command
    ends. The library never sets it itself."""
    allocator.reuse_freed_memory()


RolloutsOption = Annotated[int, typer.Option(
    "--rollouts", help="Selection rollouts of a decision (the first step's are an eighth, at "
    "least 16; the two leaders get four times as many), and twice as many that measure "
    "the loss of the play made.")]
ReviewSeedOption = Annotated[int, typer.Option(
    "--seed", help="Seed of the rollouts: the same seed gives the same numbers.")]
ReviewRulesetOption = Annotated[str | None, typer.Option(
    "--ruleset", "-r", help="Score candidates under this preset or TOML file. Default: the "
    "ruleset each hand was played under if it is played under the hand's variant, else "
    "american.", show_default=False)]
FantasylandValueOption = Annotated[float, typer.Option(
    "--fantasyland-value", help="Points per opponent a board reaching fantasyland is worth "
    "on top of its score.")]
# The review's defaults are written out here (its modules load the simulator, a slow
# import); a test checks they are those of ofcstats.review.core.
ScreenOption = Annotated[int, typer.Option(
    "--screen", help="Candidates the first step keeps (the best on its rollouts), besides "
    "the play made, for the rest of the selection rollouts; 0: every candidate on every "
    "rollout.")]


class OpponentsMode(StrEnum):
    """How the review values the opponents' cards."""

    drawn = "drawn"
    logged = "logged"


OpponentsOption = Annotated[OpponentsMode, typer.Option(
    "--opponents", help="drawn: the opponents' cards the player had not seen are drawn and "
    "their later streets played by the rollout rule (what the player could know); logged: "
    "their final boards as logged (hindsight).")]


class ReviewBy(StrEnum):
    """What the review's summary is grouped by."""

    player = "player"
    situation = "situation"


def _review_settings(ruleset: str | None, rollouts: int, seed: int, fantasyland_value: float,
                     screen: int, opponents: OpponentsMode) -> object:
    from ofcstats.review.store import Settings  # noqa: PLC0415

    if rollouts < 1:
        raise fail(f"--rollouts must be at least 1, not {rollouts}")
    if screen < 0:
        raise fail(f"--screen must be 0 or more, not {screen}")
    return Settings(ruleset=ruleset, rollouts=rollouts, seed=seed,
                    fantasyland_value=fantasyland_value, screen=screen,
                    opponents=opponents.value)


@app.command()
def review(
    db: DbOption = None,
    player: PlayerOption = None,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    ruleset: ReviewRulesetOption = None,
    opponents: OpponentsOption = OpponentsMode.drawn,
    rollouts: RolloutsOption = 256,
    seed: ReviewSeedOption = 0,
    fantasyland_value: FantasylandValueOption = 14.0,
    screen: ScreenOption = 6,
    by: Annotated[ReviewBy, typer.Option(
        "--by", help="player: the loss per player and street with the biggest mistakes; "
        "situation: per player and situation, beside the table's average.")]
        = ReviewBy.player,
    output: FormatOption = TableFormat.table,
    mistakes: Annotated[bool, typer.Option(
        "--mistakes", help="CSV: print the biggest mistakes instead of the summary.")]
        = False,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", help="Threads sharing the rollouts (the numbers do not change); "
        "with --engine, its workers. Default: one per core, at most 2, when there are "
        "more than 100 hands to review, else 1; with --engine, the config file's, else "
        "every core.", show_default=False)] = None,
    engine: EngineOption = None,
    address: AddressOption = None,
    source: FromOption = None,
    config: ConfigOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    wait: WaitOption = None,
) -> None:
    """What each logged placement cost: every legal alternative of each street valued by
    rollouts against what the player could know, the EV loss of the play made with its
    standard error, per variant and player with the ten biggest mistakes (losses above two
    standard errors), or per situation (--by situation) beside the table's average. Seats
    that timed out (placed for the player), 13-card hands and seats logged with their
    final rows only are not reviewed; the output counts them.

    Decisions go to the decisions table; hands already reviewed under the same settings
    are not reviewed again, so an interrupted review resumes. --engine local|ray
    reviews shards of whole sessions in worker processes or on a Ray cluster, with the
    same numbers (docs/scale.md).

    Example: ofcstats review --player alice --db club.duckdb
    """
    from ofcstats.review import store as reviewing  # noqa: PLC0415
    from ofcstats.review import summary  # noqa: PLC0415

    settings = _review_settings(ruleset, rollouts, seed, fantasyland_value, screen, opponents)
    assert isinstance(settings, reviewing.Settings)
    selection = reviewing.Selection(players=player or None, sessions=session or None,
                                    since=_utc(since), until=_utc(until))
    sharded = engine_for(engine, jobs, address, source, config, jobs_shard=False)
    # Written to: the decisions table keeps what was reviewed.
    with _open_existing(db, read_only=False, wait=wait, quiet=quiet) as store:
        try:
            with progress_bar("review", _on_terminal(quiet or output is not TableFormat.table)
                              ) as update:
                if sharded is None:
                    reviewing.run(store, selection, settings, update, jobs=jobs or 0)
                else:
                    engines.review(store, selection, settings, sharded, update)
            frame = summary.decisions_frame(store, selection, settings)
            left_out = reviewing.skipped(store, selection)
            shown = settings.as_dict(reviewing.reviewed_as(settings))
        except OfcstatsError as error:
            raise fail_with(error) from None
    if frame.is_empty():
        raise fail("no decisions to review: no hands with logged streets match the filters", 1)
    if by is ReviewBy.situation:
        _print_situations(summary.situation_summary(frame), output, left_out,
                          summary.skipped_text(left_out), shown)
        return
    _print_review(summary.player_summary(frame), summary.biggest_mistakes(frame), output,
                  mistakes, left_out, summary.skipped_text(left_out), shown)


def _print_situations(table: pl.DataFrame, output: TableFormat, left_out: dict[str, int],
                      not_reviewed: str, settings: dict[str, object]) -> None:
    """The loss per player and situation beside the table's, per variant (a table), as
    CSV, or as JSON with the settings."""
    if output is TableFormat.json:
        typer.echo(json.dumps({"settings": settings, "situations": table.to_dicts(),
                               "skipped": left_out}, indent=2, default=str))
        return
    if output is TableFormat.csv:
        sys.stdout.write(frame_text(table, output))
        if not_reviewed:
            typer.echo(not_reviewed, err=True)
        return
    shown = table.with_columns(
        pl.format("{} to {}", pl.col("ci_low").round(2), pl.col("ci_high").round(2))
        .alias("95% interval"))
    for index, ((variant,), part) in enumerate(shown.group_by("variant", maintain_order=True)):
        typer.echo(("\n" if index else "") + str(variant))
        _print_table(part, output, ["player", "situation", "decisions", "mean_ev_loss",
                                    "95% interval", "table_mean_ev_loss", "vs_table"])
    typer.echo("\nEV loss in points per decision; the table: every reviewed player.")
    if not_reviewed:
        typer.echo("\n" + not_reviewed)


def _print_review(players: pl.DataFrame, biggest: pl.DataFrame, output: TableFormat,
                  mistakes: bool, left_out: dict[str, int], not_reviewed: str,
                  settings: dict[str, object]) -> None:
    """The review's summary per player and its biggest mistakes, per variant (a table),
    or either (CSV), or both (JSON, with the settings); and what was not reviewed."""
    if output is TableFormat.json:
        typer.echo(json.dumps({"settings": settings, "players": players.to_dicts(),
                               "mistakes": biggest.to_dicts(), "skipped": left_out},
                              indent=2, default=str))
    elif output is TableFormat.csv:
        sys.stdout.write(frame_text(biggest if mistakes else players, output,
                                    terminal=to_terminal(None)))
        if not_reviewed:
            typer.echo(not_reviewed, err=True)
    else:
        for index, ((variant,), part) in enumerate(players.group_by("variant",
                                                                    maintain_order=True)):
            shown = part.select([c for c in part.columns if not part[c].is_null().all()])
            typer.echo(("\n" if index else "") + str(variant))
            _print_table(shown, output, [c for c in shown.columns if c not in (
                "variant", "ci_low", "ci_high", "mistakes")])
            typer.echo("\nBiggest mistakes (replay one with ofcstats replay HAND_ID):")
            _print_table(biggest.filter(pl.col("variant") == variant), output, [
                "player", "hand_id", "seat", "street", "mistake", "ev_loss", "ev_loss_se",
                "chosen", "best"])
        if not_reviewed:
            typer.echo("\n" + not_reviewed)


@app.command()
def replay(
    hand_id: Annotated[str, typer.Argument(help="The hand's id.", show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")]
        = Path("hand.html"),
    db: DbOption = None,
    ruleset: ReviewRulesetOption = None,
    opponents: OpponentsOption = OpponentsMode.drawn,
    rollouts: RolloutsOption = 256,
    seed: ReviewSeedOption = 0,
    fantasyland_value: FantasylandValueOption = 14.0,
    screen: ScreenOption = 6,
    wait: WaitOption = None,
) -> None:
    """Write one hand as an HTML page: each street of each seat on its board, the play
    made and the best candidate side by side with their expected points. Streets not
    reviewed under these settings are valued for the page alone: the database is only
    read, so any stored hand replays, reviewed or not.

    Example: ofcstats replay sim0-00001-01 -o hand.html --db club.duckdb
    """
    from ofcstats.review import replay as replaying  # noqa: PLC0415

    settings = _review_settings(ruleset, rollouts, seed, fantasyland_value, screen, opponents)
    writable_file(output, "page")
    with _open_existing(db, wait=wait) as store:
        try:
            text = replaying.page(store, hand_id, settings)  # type: ignore[arg-type]
        except OfcstatsError as error:
            raise fail_with(error) from None
    with written_whole(output) as partial:
        partial.write_text(text, encoding="utf-8")
    typer.echo(f"hand {hand_id} -> {output.resolve()}")
