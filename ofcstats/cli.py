"""The ``ofcstats`` command: thin commands over the library.

Each command parses its options, calls one library function, and turns the library's
errors into a clean message and an exit code: 0 when everything was done, 1 when some
input was skipped (each skip reported on stderr as ``FILE:LINE: reason``), 2 for a
usage error or a failure that stopped the command.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import polars as pl
import polars.selectors
import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from ofcstats import formats, pipeline, stats
from ofcstats import ingest as ingesting
from ofcstats import session as session_logic
from ofcstats.errors import OfcstatsError
from ofcstats.rules import (
    FantasylandPolicy,
    Ruleset,
    load_policy,
    load_ruleset,
    load_rulesets,
    policy_names,
    preset_names,
)
from ofcstats.score import score_batch
from ofcstats.store import Store
from ofcstats.variants import Variant

app = typer.Typer(
    name="ofcstats",
    help="Hand-history analytics for Open Face Chinese poker and 13-card Chinese poker.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


rulesets_app = typer.Typer(
    help="List the built-in rulesets and fantasyland policies, or show one in full.\n\n"
    "Example: ofcstats rulesets show pokerstars",
    invoke_without_command=True,
    no_args_is_help=False,
)


db_app = typer.Typer(
    help="Look into a hand database.\n\nExample: ofcstats db info --db club.duckdb",
    no_args_is_help=True,
)


app.add_typer(rulesets_app, name="rulesets")
app.add_typer(db_app, name="db")


class OutputFormat(StrEnum):
    """How a command prints records."""

    table = "table"
    jsonl = "jsonl"
    csv = "csv"


class TableFormat(StrEnum):
    """How an analysis command prints its table."""

    table = "table"
    csv = "csv"
    json = "json"


DbOption = Annotated[Path | None, typer.Option(
    "--db", help="The database file. Default: $OFCSTATS_DB, else ./ofcstats.duckdb.",
    show_default=False)]


SessionOption = Annotated[list[str] | None, typer.Option(
    "--session", help="Only these sessions (repeat for several).", show_default=False)]


SinceOption = Annotated[datetime | None, typer.Option(
    "--since", help="Only hands played at or after this time (ISO 8601).",
    show_default=False)]


UntilOption = Annotated[datetime | None, typer.Option(
    "--until", help="Only hands played before this time (ISO 8601).", show_default=False)]


VariantOption = Annotated[list[str] | None, typer.Option(
    "--variant", help="Only these variants: chinese-13, ofc-classic, ofc-turbo, pineapple.",
    show_default=False)]


PlayerOption = Annotated[list[str] | None, typer.Option(
    "--player", help="Only these players' rows (repeat for several).", show_default=False)]


FormatOption = Annotated[TableFormat, typer.Option("--format", "-f", help="Output format.")]


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an error on stderr and return the exit to raise."""
    typer.echo(f"ofcstats: {message}", err=True)
    return typer.Exit(code)


def report_rejects(rejects: pl.DataFrame) -> None:
    """Each reject on stderr as ``FILE:LINE: reason``."""
    for source, line, reason in rejects.select("source", "line", "reason").iter_rows():
        where = f"{source}:{line}" if line is not None else str(source)
        typer.echo(f"{where}: {reason}", err=True)


def print_frame(frame: pl.DataFrame, output: OutputFormat) -> None:
    """Write records to stdout as an aligned table, JSON Lines or CSV."""
    if output is OutputFormat.jsonl:
        sys.stdout.write(frame.write_ndjson())
    elif output is OutputFormat.csv:
        sys.stdout.write(frame.write_csv())
    else:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True,
                       tbl_hide_column_data_types=True, tbl_formatting="ASCII_MARKDOWN",
                       tbl_width_chars=1000, fmt_str_lengths=100, float_precision=2):
            sys.stdout.write(f"{frame}\n")


def _print_table(frame: pl.DataFrame, output: TableFormat, columns: list[str]) -> None:
    """Write a table: all columns as CSV or JSON, the chosen ones rounded as a table."""
    if output is TableFormat.csv:
        sys.stdout.write(frame.write_csv())
    elif output is TableFormat.json:
        sys.stdout.write(json.dumps(frame.to_dicts(), indent=2, default=str) + "\n")
    else:
        shown = frame.select(columns).with_columns(pl.selectors.float().round(3))
        with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True,
                       tbl_hide_column_data_types=True, tbl_formatting="ASCII_MARKDOWN",
                       tbl_width_chars=1000, fmt_str_lengths=60):
            sys.stdout.write(f"{shown}\n")


@contextmanager
def progress_bar(label: str, show: bool, *, in_bytes: bool = False
                 ) -> Iterator[Callable[[int, int], None] | None]:
    """A progress callback drawing a bar on stderr, or None when there is no bar to draw."""
    if not show:
        yield None
        return
    amounts = (DownloadColumn(), TransferSpeedColumn()) if in_bytes else \
        ("{task.completed:,}/{task.total:,} hands",)
    with Progress("[progress.description]{task.description}", BarColumn(), *amounts,
                  TimeRemainingColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _on_terminal(quiet: bool) -> bool:
    """Progress bars only for a person watching: not with --quiet, not into a pipe."""
    return not quiet and sys.stderr.isatty()


def _open_existing(db: Path | None) -> Store:
    database = db or ingesting.default_database()
    if not database.exists():
        raise fail(f"{database}: no such database; load hands with ofcstats ingest")
    try:
        return Store(database)
    except OfcstatsError as error:
        raise fail(str(error)) from None


def _utc(moment: datetime | None) -> datetime | None:
    return moment if moment is None or moment.tzinfo else moment.replace(tzinfo=UTC)


def _filters(rulesets: list[str] | None, session: list[str] | None, since: datetime | None,
             until: datetime | None, variant: list[str] | None, player: list[str] | None
             ) -> pipeline.Filters:
    return pipeline.Filters(rulesets=rulesets or None, sessions=session or None,
                            players=player or None, variants=variant or None,
                            since=_utc(since), until=_utc(until))


def _analysed(db: Path | None, filters: pipeline.Filters,
              columns: Sequence[str] | None = None) -> pl.DataFrame:
    with _open_existing(db) as store:
        try:
            # Repeated strings as categories: a fraction of the memory on large stores.
            frame = pipeline.scored_frame(store, filters, columns, categorical=True)
        except OfcstatsError as error:
            raise fail(str(error)) from None
    if frame.is_empty():
        raise fail("no scored hands match: run ofcstats rescore, or loosen the filters", 1)
    return frame


@app.command()
def simulate(
    players: Annotated[str, typer.Option(
        "--players", "-p", help="Seats in order as name:style, comma-separated; styles: "
        "random, safe, balanced, aggressive, montecarlo.", show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="The .jsonl file to write.",
                                         show_default=False)],
    variant: Annotated[str, typer.Option(
        "--variant", help="chinese-13, ofc-classic, ofc-turbo or pineapple.")] = "pineapple",
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
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Play bots against each other and write the hands as an ofc-hand/1 log.

    Each hand carries its streets, fantasyland flags, button, a session per game (one
    orbit of the button) and reported_points under the ruleset played.

    Example: ofcstats simulate -p ann:aggressive,bob:safe,cy:montecarlo -n 10000 -o s.jsonl
    """
    # The simulator is imported only when it is used: it is the slowest import.
    from ofcstats.simulate import Simulation, parse_players, write_jsonl  # noqa: PLC0415

    try:
        sim = Simulation(variant=Variant.parse(variant), ruleset=load_ruleset(ruleset),
                         players=parse_players(players), hands=hands, seed=seed,
                         rollouts=rollouts, timeout_rate=timeout_rate, prefix=prefix)
        sim.check()
        with progress_bar("simulate", _on_terminal(quiet)) as update:
            written = write_jsonl(sim, output, update)
    except (OfcstatsError, OSError) as error:
        raise fail(str(error)) from None
    typer.echo(f"{written:,} hands of {sim.variant.value} under {sim.ruleset.name} "
               f"(seed {seed}) -> {output}")


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(
        help="Log files, directories to search for them (recursively), or patterns such "
        "as 'logs/**/*.jsonl.gz'.",
        show_default=False)],
    db: DbOption = None,
    format_name: Annotated[str | None, typer.Option(
        "--format", help=f"The input format when not detected from content: "
        f"{', '.join(formats.format_names())}.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")]
        = False,
    load_changed: Annotated[bool, typer.Option(
        "--load-changed", help="Load a file that changed since it was loaded (not just "
        "grew); by default it is reported and left out.")] = False,
) -> None:
    """Load hand logs into the database, each file in one transaction.

    A file already loaded (same content, any name) is skipped; one that grew loads its
    new lines only; one that changed otherwise is reported and left out. Loading the same
    hands again adds nothing; a different hand under a stored id is rejected as a
    conflict. Rejected hands are kept, with the reason, in the rejects table. Exit code 1
    when anything was rejected or left out.

    Example: ofcstats ingest logs/ --db club.duckdb
    """
    database = db or ingesting.default_database()
    try:
        with progress_bar("ingest", _on_terminal(quiet or as_json), in_bytes=True) as update:
            summary = ingesting.ingest(paths, database, format_name, progress=update,
                                       load_changed=load_changed,
                                       on_wait=lambda note: typer.echo(note, err=True))
    except OfcstatsError as error:
        raise fail(str(error)) from None
    if as_json:
        typer.echo(json.dumps(summary.to_dict(), indent=2))
    else:
        _print_summary(summary)
    if not summary.clean:
        raise typer.Exit(1)


def _print_summary(summary: ingesting.IngestSummary) -> None:
    files = len(summary.files)
    conflicts = f" ({summary.conflicts} conflicts)" if summary.conflicts else ""
    skipped = f" ({summary.skipped} already loaded, skipped)" if summary.skipped else ""
    typer.echo(f"{files} file{'s' if files != 1 else ''}{skipped}: {summary.hands:,} hands "
               f"loaded, {summary.duplicates:,} duplicates skipped, {summary.rejected:,} "
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
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Show the database's tables with their row counts, sessions, players and dates.

    Example: ofcstats db info --db club.duckdb
    """
    with _open_existing(db) as store:
        info = store.info()
    if as_json:
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


@app.command()
def export(
    parquet: Annotated[Path, typer.Option("--parquet", help="Directory to write into.",
                                          show_default=False)],
    db: DbOption = None,
) -> None:
    """Write every table of the database (and the boards view) as Parquet files.

    Example: ofcstats export --parquet out/club --db club.duckdb
    """
    with _open_existing(db) as store:
        written = store.export_parquet(parquet)
    for path in written:
        typer.echo(str(path))


@app.command()
def score(
    files: Annotated[list[Path], typer.Argument(help="ofc-hand/1 logs (.jsonl, .jsonl.gz).",
                                                show_default=False)],
    ruleset: Annotated[list[str] | None, typer.Option(
        "--ruleset", "-r", help="A preset name or a TOML file; repeat for several. "
        "Default: each hand's own ruleset, else american.")] = None,
    all_rulesets: Annotated[bool, typer.Option(
        "--all-rulesets", help="Score under every built-in preset.")] = False,
    output: Annotated[OutputFormat, typer.Option("--format", "-f",
                                                 help="Output format.")] = OutputFormat.table,
    format_name: Annotated[str | None, typer.Option(
        "--input-format", help="Input format, when detection from content is not wanted.")]
        = None,
) -> None:
    """Score hands: one record per hand, seat and ruleset.

    Example: ofcstats score session.jsonl --ruleset american --ruleset pokerstars
    """
    try:
        chosen = load_rulesets(preset_names()) if all_rulesets else (
            load_rulesets(ruleset) if ruleset else None)
        batch = formats.read_all(files, format_name)
        scored = score_batch(batch, chosen)
    except OfcstatsError as error:
        raise fail(str(error)) from None
    rejects = pl.concat([batch.rejects, scored.rejects])
    report_rejects(rejects)
    print_frame(scored.results, output)
    if not rejects.is_empty():
        raise typer.Exit(1)


@rulesets_app.callback()
def rulesets(context: typer.Context) -> None:
    """List every built-in ruleset and fantasyland policy, one line each.

    Example: ofcstats rulesets
    """
    if context.invoked_subcommand is not None:
        return
    names = preset_names()
    width = max(len(n) for n in names + policy_names())
    typer.echo("Rulesets (RULES.md §7):")
    for name in names:
        typer.echo(f"  {name:<{width}}  {load_ruleset(name).summary()}")
    typer.echo("\nFantasyland policies (RULES.md §6):")
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
        raise fail(str(error)) from None


def _ruleset_text(ruleset: Ruleset) -> str:
    data = ruleset.to_dict()
    lines = [f"{ruleset.name}: {ruleset.description}"]
    for key in ("variant", "sources", "foul_penalty", "surrender", "spade_bonus",
                "point_value", "loss_cap"):
        if key in data:
            lines.append(f"  {key}: {data[key]}")
    h = data["head_to_head"]
    lines.append(f"  head to head: row {h['row']}, majority {h['majority']}, scoop {h['scoop']}"
                 f", table bonus {h['table_bonus']}  (2-1 pays "
                 f"{ruleset.head_to_head.two_one_value}, 3-0 pays "
                 f"{ruleset.head_to_head.scoop_value})")
    r = data["royalties"]
    lines.append(f"  royalties: {r['name']}")
    for row in ("top", "middle", "bottom"):
        table = r[row]
        text = ", ".join(f"{k} {v}" for k, v in table.items()) if table else "none"
        lines.append(f"    {row}: {text}")
    lines.append(f"  fantasyland: {_policy_text(ruleset.fantasyland, indent='    ')}")
    n = data["naturals"]
    if any(n.values()):
        lines.append("  naturals: " + ", ".join(f"{k} {v}" for k, v in n.items()))
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
    lines.append(f"{indent}repeats in a row: {limit}")
    if policy.entry_cards:
        cards = ", ".join(f"{k} {v}" for k, v in policy.entry_cards.items())
        lines.append(f"{indent}cards on entry (Pineapple; one fewer in classic and turbo): "
                     f"{cards}")
    return "\n".join(lines)


@app.command()
def rescore(
    ruleset: Annotated[list[str] | None, typer.Option(
        "--ruleset", "-r", help="A preset name or a TOML file; repeat for several. "
        "Default: every preset.", show_default=False)] = None,
    all_rulesets: Annotated[bool, typer.Option(
        "--all-rulesets", help="Every built-in preset (the default), with any --ruleset "
        "given too.")] = False,
    rebuild: Annotated[bool, typer.Option(
        "--rebuild", help="Score every hand again, not only those not yet scored.")] = False,
    db: DbOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")]
        = False,
) -> None:
    """Score the stored hands under rulesets, into the results table.

    Only hands not yet scored under a ruleset are scored (their whole session, for the
    fantasyland repeat limits); a ruleset whose definition changed is scored again.

    Example: ofcstats rescore --all-rulesets --db club.duckdb
    """
    try:
        names = [*(preset_names() if all_rulesets or not ruleset else []), *(ruleset or [])]
        chosen = load_rulesets(names)
    except OfcstatsError as error:
        raise fail(str(error)) from None
    with _open_existing(db) as store:
        try:
            with progress_bar("rescore", _on_terminal(quiet or as_json)) as update:
                summary = pipeline.rescore(store, chosen, rebuild=rebuild, progress=update)
        except OfcstatsError as error:
            raise fail(str(error)) from None
    if as_json:
        typer.echo(json.dumps(asdict(summary), indent=2))
        return
    again = f"; scored again from scratch: {', '.join(summary.rebuilt)}" if summary.rebuilt \
        else ""
    typer.echo(f"{len(summary.rulesets)} rulesets: {summary.hands:,} hands in "
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
    variant: VariantOption = None, player: PlayerOption = None,
) -> None:
    """Compare scoring systems side by side: volatility, royalties, fouls, fantasyland,
    and how fast skill shows (rulesets ranked by the skill signal).

    Example: ofcstats compare --db club.duckdb --variant pineapple
    """
    frame = _analysed(db, _filters(ruleset, session, since, until, variant, player),
                      stats.RULESET_COLUMNS)
    table = stats.ruleset_stats(frame)
    _print_table(table, output, [
        "skill_rank", "ruleset", "hands", "sd", "mean_abs_points", "royalty_share",
        "foul_rate", "fantasyland_entry_rate", "skill_signal", "hands_to_tell_apart"])


@app.command()
def players(
    db: DbOption = None,
    ruleset: Annotated[str, typer.Option("--ruleset", "-r", help="The ruleset to report.")]
        = "american",
    output: FormatOption = TableFormat.table,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    variant: VariantOption = None, player: PlayerOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the session bootstrap.")] = 7,
) -> None:
    """Every player's results under one ruleset: points, spread, 95% intervals, fouls,
    fantasyland, scoops.

    Example: ofcstats players --ruleset pokerstars --db club.duckdb
    """
    frame = _analysed(db, _filters([ruleset], session, since, until, variant, player),
                      stats.PLAYER_COLUMNS)
    table = stats.player_stats(frame, seed=seed).sort("total", descending=True)
    _print_table(table, output, [
        "player", "hands", "total", "mean", "sd", "ci_low", "ci_high", "boot_low",
        "boot_high", "foul_rate", "fantasyland_entry_rate", "fantasyland_stay_rate",
        "scoop_rate", "hands_for_1"])


@app.command()
def player(
    name: Annotated[str, typer.Argument(help="The player's name.", show_default=False)],
    db: DbOption = None,
    ruleset: Annotated[list[str] | None, typer.Option(
        "--ruleset", "-r", help="Only these rulesets (repeat). Default: all scored.",
        show_default=False)] = None,
    output: FormatOption = TableFormat.table,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    variant: VariantOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the session bootstrap.")] = 7,
) -> None:
    """One player under every scored ruleset: results, money after the per-game loss cap,
    style; then the hands whose logged points differ from the re-score.

    Example: ofcstats player alice --db club.duckdb
    """
    frame = _analysed(db, _filters(ruleset, session, since, until, variant, [name]),
                      list(dict.fromkeys([*stats.PLAYER_COLUMNS, *session_logic.MONEY_COLUMNS,
                                          *stats.DIFFERENCE_COLUMNS])))
    with _open_existing(db) as store:
        known = pipeline.stored_rulesets(
            store, sorted(frame.get_column("ruleset").unique().to_list()))
    money = session_logic.money_by_player(frame, known)
    table = stats.player_stats(frame, seed=seed).join(money, on=["player", "ruleset"],
                                                      how="left")
    _print_table(table.sort("mean", descending=True), output, [
        "ruleset", "hands", "total", "mean", "sd", "ci_low", "ci_high", "money",
        "foul_rate", "fantasyland_entry_rate", "fantasyland_stay_rate", "royalties_top",
        "royalties_middle", "royalties_bottom", "scoop_rate"])
    differences = stats.reported_differences(frame)
    if output is TableFormat.table and not differences.is_empty():
        typer.echo(f"\n{differences.height} seat(s) where the logged points differ from the "
                   "re-score under the ruleset played:")
        _print_table(differences, output, differences.columns)


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
) -> None:
    """Write a self-contained HTML report (charts embedded, no network): the summary, the
    scoring systems compared, player styles, a section per player, checks, methodology.

    Example: ofcstats report --db club.duckdb --ruleset american -o report.html --pdf charts.pdf
    """
    # Imported here: matplotlib takes about a second to load, which no other command needs.
    from ofcstats import report as reporting  # noqa: PLC0415

    filters = _filters(None, session, since, until, variant, player)
    with _open_existing(db) as store:
        try:
            data = reporting.collect(store, filters, ruleset, seed=seed)
        except OfcstatsError as error:
            raise fail(str(error)) from None
    written = reporting.write_report(data, output, pdf)
    typer.echo(f"report ({written.charts} charts, {data.ruleset}) -> {written.html.resolve()}")
    if written.pdf is not None:
        typer.echo(f"charts -> {written.pdf.resolve()}")


def main() -> None:
    """Console entry point."""
    app()
