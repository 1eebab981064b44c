"""What the commands print: tables, JSON and CSV, records, progress bars, warnings and
the one-line failures.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import textwrap
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TextIO, overload

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
from rich.text import Text

from ofcstats import analysis, pipeline, sanitize
from ofcstats import ingest as ingesting
from ofcstats.analysis import plural
from ofcstats.cli.app import _one_line, exit_code
from ofcstats.cli.columns import HEADERS, TABLES, legend
from ofcstats.cli.options import OutputFormat, SummaryFormat, TableFormat
from ofcstats.errors import UsageError
from ofcstats.logscore import ScoredBatch
from ofcstats.paths import writable_file, written_whole
from ofcstats.records import REJECTS_SCHEMA

_LIVE: list[Progress] = []  # the progress bars on the terminal now


def clear_progress() -> None:
    """Wipe the progress bars drawn (before an error, so that it stands on its own line)."""
    while _LIVE:
        _LIVE.pop().stop()


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an error on stderr (any progress bar wiped first) and return the exit to
    raise."""
    clear_progress()
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


SUFFIXES = {"table": ".txt", "csv": ".csv", "json": ".json", "jsonl": ".jsonl"}
"""The file name's ending of each output format, for an output named by its folder."""


def in_folder(given: str, name: str) -> Path:
    """The file an ``--output`` names: ``given``, or ``name`` in it when ``given`` names a
    folder (it ends in ``/`` or is an existing directory).

    >>> in_folder("out/", "report.html"), in_folder("out/mine.html", "report.html")
    (PosixPath('out/report.html'), PosixPath('out/mine.html'))
    """
    path = Path(given)
    folder = given.endswith(("/", os.sep)) or path.is_dir()
    return path / name if folder else path


@overload
def output_file(given: str, name: str, what: str) -> Path: ...
@overload
def output_file(given: str | None, name: str, what: str) -> Path | None: ...
def output_file(given: str | None, name: str, what: str) -> Path | None:
    """The file to write an output to (:func:`in_folder`; None for stdout), checked to be
    writable before anything is done (:func:`ofcstats.paths.writable_file`): nothing is
    created, its folders are made when it is written."""
    if given is None:
        return None
    path = in_folder(given, name)
    writable_file(path, what)
    return path


def _json(frame: pl.DataFrame) -> str:
    return json.dumps(frame.to_dicts(), indent=2, default=str) + "\n"


def to_terminal(out: Path | TextIO | None) -> bool:
    """Whether records go to a terminal: stdout (``None``) or a stream that is one."""
    stream = sys.stdout if out is None else out
    return not isinstance(stream, Path) and stream.isatty()


def _dashed(frame: pl.DataFrame) -> pl.DataFrame:
    """An empty value shown as ``-`` in a table (JSON keeps null, CSV an empty cell).

    >>> _dashed(pl.DataFrame({"rate": [0.5, None]}))["rate"].to_list()
    ['0.5', '-']
    """
    return frame.with_columns(
        pl.col(name).cast(pl.String).fill_null("-") for name, dtype in frame.schema.items()
        if not dtype.is_nested() and frame[name].null_count())


def _aligned_decimals(frame: pl.DataFrame) -> pl.DataFrame:
    """Each float column with one number of decimals (as many as its values need, 3 at
    most), right-aligned: ``0.180`` above ``0.398``, never ``0.18``.

    >>> _aligned_decimals(pl.DataFrame({"rate": [0.18, 0.398, None]}))["rate"].to_list()
    ['0.180', '0.398', '    -']
    """
    columns = []
    for name, dtype in frame.schema.items():
        if not dtype.is_float():
            continue
        values = frame[name].to_list()
        known = [v for v in values if v is not None and math.isfinite(v)]
        places = max((len(f"{v:.3f}".rstrip("0").split(".")[1]) for v in known), default=0)
        texts = ["-" if v is None else f"{v:.{places}f}" for v in values]
        wide = max(map(len, texts), default=0)
        columns.append(pl.Series(name, [t.rjust(wide) for t in texts], dtype=pl.String))
    return frame.with_columns(columns)


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
    shown = _dashed(shown if columns is None else _aligned_decimals(shown))
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True, tbl_formatting="ASCII_MARKDOWN",
                   tbl_width_chars=1000, fmt_str_lengths=100 if columns is None else 60,
                   float_precision=None if columns is not None else 2):
        return f"{shown}\n"


def print_frame(frame: pl.DataFrame, output: OutputFormat, path: Path | None = None) -> None:
    """Write records to stdout (or ``path``) as a table, CSV, JSON or JSON Lines."""
    emit(frame_text(frame, output, terminal=to_terminal(path)), path)


NOT_COUNTS = frozenset({"skill_rank", "seat", "street", "total", "points", "royalties",
                        "royalty_top", "royalty_middle", "royalty_bottom", "royalty_points",
                        "rows_top", "rows_middle", "rows_bottom", "fantasyland_cards"})
"""Whole-number columns of a table that count nothing (a rank, a seat, a street, points,
cards dealt).
Every other whole-number column of a :data:`TABLES` table is a count (hands, seats, games,
players, decisions, ...), shown with thousands separators: ``1,000,000`` (CSV and JSON
keep the number)."""


def counts_separated(frame: pl.DataFrame) -> pl.DataFrame:
    """The counts of a table (:data:`NOT_COUNTS`) with thousands separators.

    >>> counts_separated(pl.DataFrame({"hands": [1_000_000], "seat": [1234]})).row(0)
    ('1,000,000', 1234)
    """
    return frame.with_columns(
        pl.col(name).map_elements(lambda n: f"{n:,}", return_dtype=pl.String)
        for name, dtype in frame.schema.items() if dtype.is_integer() and name not in NOT_COUNTS)


def terminal_width(path: Path | None = None) -> int | None:
    """The columns of the terminal a table goes to, or None (a file, a pipe)."""
    return shutil.get_terminal_size().columns if path is None and sys.stdout.isatty() \
        else None


def _shown(frame: pl.DataFrame, table: str, wide: bool) -> pl.DataFrame:
    """A command's table (:data:`TABLES`) as shown: its counts separated, the default
    columns under short headers (with ``wide``, every column under its name)."""
    declared = TABLES[table]
    frame = frame.drop([c for c in declared.when_any
                        if c in frame.columns and frame[c].null_count() == frame.height])
    columns = declared.shown(frame.columns, wide)
    frame = counts_separated(frame).select(columns)
    return frame if wide else frame.rename({c: HEADERS[c] for c in columns if c in HEADERS})


def _fitted(shown: pl.DataFrame, width: int | None, kept: Sequence[str] = ()
            ) -> tuple[str, list[str]]:
    """A table of the columns ``shown``, columns left out while a line is wider than
    ``width`` (the last first, those ``kept``, by their short headers, last of all); the
    text and the columns kept."""
    names = shown.columns
    text = frame_text(shown, TableFormat.table, names)
    while width is not None and len(names) > 2 and \
            max(len(line) for line in text.splitlines()) > width:
        spare = [n for n in names if n not in kept] or names
        names = [n for n in names if n != spare[-1]]
        text = frame_text(shown, TableFormat.table, names)
    return text, names


def _kept_headers(table: str, wide: bool) -> list[str]:
    return [c if wide else HEADERS.get(c, c) for c in TABLES[table].kept]


LEGEND_COMMAND = {"situations": "review", "mistakes": "review"}
"""The command whose ``--help`` explains a table's columns, where it is not the table's
name."""


def _left_out(shown: pl.DataFrame, names: list[str]) -> str:
    """``(2 more columns with --wide)`` after a table that left columns out."""
    left = shown.width - len(names)
    return f"({plural(left, 'more column')} with --wide)\n" if left else ""


def table_text(frame: pl.DataFrame, table: str, *, wide: bool = False,
               width: int | None = None) -> str:
    """A command's table (:data:`TABLES`): the default columns under short headers, the
    last ones left out while a line is wider than ``width`` (saying so); with ``wide``
    every column under its name."""
    shown = _shown(frame, table, wide)
    if wide:
        return frame_text(shown, TableFormat.table, shown.columns)
    text, names = _fitted(shown, width, _kept_headers(table, wide))
    explained = legend(names, width, LEGEND_COMMAND.get(table, table),
                       TABLES[table].kept) if width else ""
    return text + _left_out(shown, names) + explained


def _print_table(frame: pl.DataFrame, output: TableFormat, columns: list[str] | str,
                 *, wide: bool = False) -> None:
    """Write a table: all columns as CSV or JSON, the chosen ones rounded as a table (a
    name of :data:`TABLES`: its columns, fitted to the terminal unless ``wide``)."""
    if isinstance(columns, str) and output is TableFormat.table:
        sys.stdout.write(table_text(frame, columns, wide=wide, width=terminal_width()))
        return
    sys.stdout.write(frame_text(frame, output, None if isinstance(columns, str) else columns,
                                terminal=to_terminal(None)))


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


def by_variant_text(frame: pl.DataFrame, output: TableFormat, table: str,
                    hands: dict[str, int] | None = None, *, terminal: bool = False,
                    wide: bool = False, width: int | None = None,
                    notes: dict[str, str] | None = None) -> str:
    """A table per variant (:func:`table_text`; the ruleset in its title when it shows
    one, not as a column), or, as CSV and JSON, one table of every column, each row
    naming its variant (CSV for a ``terminal`` as :func:`frame_text` writes it); in a
    table, each variant's table followed by its line of ``notes``, if any."""
    if output is not TableFormat.table:
        return frame_text(frame, output, terminal=terminal)
    if "money" in frame.columns:
        frame = frame.with_columns(pl.col("money").map_elements(
            analysis.money_text, return_dtype=pl.String))
    frame = analysis.labelled(frame)
    parts = []
    for (variant,), part in frame.group_by("variant", maintain_order=True):
        count = f": {plural(hands[str(variant)], 'hand')}" \
            if hands and str(variant) in hands else ""
        under = ""
        if "ruleset" in part.columns and "ruleset" not in TABLES[table].shown(
                part.columns, wide) and part["ruleset"].n_unique() == 1:
            under = f" under {part['ruleset'][0]}"
        note = notes.get(str(variant), "") if notes else ""
        if note:  # a note as wide as the terminal, at most (as the table, unless wide)
            note = "\n".join(textwrap.fill(line, width) if width and not wide else line
                             for line in note.splitlines()) + "\n"
        parts.append(f"{variant}{count}{under}\n"
                     + table_text(part, table, wide=wide, width=width) + note)
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
                    _LIVE.append(bar)
                bar, task = drawn[0]
                bar.update(task, completed=done, total=total)

        try:
            yield update
        finally:
            if drawn and drawn[0][0] in _LIVE:
                _LIVE.remove(drawn[0][0])


Steps = Callable[[str, int, int], None]
"""A progress callback for named steps: ``(what, done, total)``."""


@contextmanager
def steps_bar(label: str, show: bool) -> Iterator[Steps | None]:
    """A progress bar of named steps on stderr ("report: chart 3 of 28: pineapple:
    styles", the count and time so far), or None when there is no bar to draw. As
    :func:`progress_bar`: not in a pipe, not with --quiet, drawn from the first step on
    (an error before it shows alone)."""
    if not show:
        yield None
        return
    with ExitStack() as stack:
        drawn: list[tuple[Progress, TaskID]] = []

        def update(what: str, done: int, total: int) -> None:
            if not drawn:
                bar = stack.enter_context(Progress(
                    "[progress.description]{task.description}", BarColumn(), _Count("steps"),
                    TimeElapsedColumn(), console=Console(stderr=True), transient=True))
                drawn.append((bar, bar.add_task(label, total=None)))
                _LIVE.append(bar)
            bar, task = drawn[0]
            bar.update(task, description=f"{label}: {what}", completed=done, total=total)

        try:
            yield update
        finally:
            if drawn and drawn[0][0] in _LIVE:
                _LIVE.remove(drawn[0][0])


def _step(update: Update | None, done: int, total: int) -> None:
    if update is not None:
        update(done, total)


def _on_terminal(quiet: bool) -> bool:
    """Progress bars only for a person watching: not with --quiet, not into a pipe."""
    return not quiet and sys.stderr.isatty()


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
    say(f"{plural(files, 'file')}{skipped}: {plural(summary.hands, 'hand')} "
        f"loaded{updated}, {plural(summary.duplicates, 'duplicate')} skipped, "
        f"{summary.rejected:,} rejected{conflicts} in {summary.seconds:.1f}s -> "
        f"{summary.database}")
    for reject in summary.first_rejects:
        where = reject.path if reject.line is None else f"{reject.path}:{reject.line}"
        typer.echo(f"{where}: {reject.reason}", err=True)
    if summary.rejected > len(summary.first_rejects):
        typer.echo(f"... and {summary.rejected - len(summary.first_rejects):,} more: "
                   f"SELECT * FROM rejects in {summary.database}", err=True)


def fitted(text: str, width: int | None, indent: int | None = None) -> str:
    """``text`` with each line wider than ``width`` broken at word boundaries, its next
    lines indented past the line's own indent (by ``indent`` columns in all, when given;
    else 4 more); unchanged for no ``width`` (a file, a pipe: one record a line).

    >>> print(fitted("1 file: 3,250 hands loaded, 0 rejected in 2.5s -> club.duckdb", 30))
    1 file: 3,250 hands loaded, 0
        rejected in 2.5s ->
        club.duckdb
    """
    if not width:
        return text
    lines = []
    for line in text.split("\n"):
        own = len(line) - len(line.lstrip(" "))
        lines.append(textwrap.fill(line.lstrip(" "), width, initial_indent=" " * own,
                                   subsequent_indent=" " * (own + 4 if indent is None
                                                            else indent),
                                   break_long_words=False, break_on_hyphens=False)
                     if len(line) > width else line)
    return "\n".join(lines)


def say(text: str, *, indent: int | None = None) -> None:
    """A line (or lines) on stdout, fitted to the terminal's width (:func:`fitted`)."""
    typer.echo(fitted(text, terminal_width(), indent))


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


def write_records(parts: Iterable[ScoredBatch], output: OutputFormat, out: TextIO,
                  table: str | None = None, *, wide: bool = False) -> pl.DataFrame:
    """Write scored records a part at a time, the bytes :func:`frame_text` gives for them
    all (a table's header is written once, its rows part by part); give back the parts'
    rejects. A table to a terminal is a command's ``table`` (:data:`TABLES`): its default
    columns, as many as the terminal's width holds (every column with ``wide``)."""
    rejects, written, last = [], 0, None
    terminal = to_terminal(out)
    fitted = table is not None and output == "table" and terminal
    kept: list[str] | None = None
    left_out = ""
    for part in parts:
        rejects.append(part.rejects)
        frame = last = part.results
        if frame.is_empty():
            continue
        if fitted:
            assert table is not None
            shown = _shown(frame, table, wide)
            if kept is None:  # the first part's columns, for every part after it
                columns = shutil.get_terminal_size().columns
                text, kept = _fitted(shown, None if wide else columns,
                                     _kept_headers(table, wide))
                out.write(text)
                left_out = _left_out(shown, kept) + (
                    "" if wide else legend(kept, columns, "score"))
            else:
                out.write(frame_text(shown, output, kept).split("\n", 2)[2])
        elif output == "csv":
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
    if kept is not None:
        out.write(left_out)
    elif output == "json" and written:
        out.write("\n]\n")
    elif not written and last is not None:
        # No records: the empty table, the header, or [].
        out.write(frame_text(last, output, terminal=terminal))
    return pl.concat(rejects) if rejects else pl.DataFrame(schema=REJECTS_SCHEMA)


def _rescore_text(summary: pipeline.RescoreSummary) -> str:
    again = f"; scored again from scratch: {', '.join(summary.rebuilt)}" if summary.rebuilt \
        else ""
    return (f"{plural(len(summary.rulesets), 'ruleset')}: {plural(summary.hands, 'hand')} "
            f"in {plural(summary.sessions, 'session')} scored, "
            f"{plural(summary.rows, 'result row')} in "
            f"{summary.seconds:.1f}s{again}")
