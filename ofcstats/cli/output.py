"""What the commands print: tables, JSON and CSV, records, progress bars, warnings and
the one-line failures.
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TextIO

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
from ofcstats.cli.app import _one_line, exit_code
from ofcstats.cli.options import OutputFormat, SummaryFormat, TableFormat
from ofcstats.errors import UsageError
from ofcstats.logscore import ScoredBatch
from ofcstats.paths import written_whole
from ofcstats.records import REJECTS_SCHEMA


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
                    hands: dict[str, int] | None = None, *, terminal: bool = False,
                    notes: dict[str, str] | None = None) -> str:
    """A table per variant (CSV and JSON: one table, every row naming its variant; CSV
    for a ``terminal`` as :func:`frame_text` writes it), each followed by its variant's
    line of ``notes``, if any."""
    if output is not TableFormat.table:
        return frame_text(frame, output, ["variant", *columns], terminal=terminal)
    if "money" in frame.columns:
        frame = frame.with_columns(pl.col("money").map_elements(
            analysis.money_text, return_dtype=pl.String))
    frame = analysis.labelled(frame)
    parts = []
    for (variant,), part in frame.group_by("variant", maintain_order=True):
        count = f": {hands[str(variant)]:,} hands" if hands and str(variant) in hands else ""
        note = f"{notes[str(variant)]}\n" if notes and str(variant) in notes else ""
        parts.append(f"{variant}{count}\n" + frame_text(part, output, columns) + note)
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


def _rescore_text(summary: pipeline.RescoreSummary) -> str:
    again = f"; scored again from scratch: {', '.join(summary.rebuilt)}" if summary.rebuilt \
        else ""
    return (f"{len(summary.rulesets)} rulesets: {summary.hands:,} hands in "
            f"{summary.sessions:,} sessions scored, {summary.rows:,} result rows in "
            f"{summary.seconds:.1f}s{again}")
