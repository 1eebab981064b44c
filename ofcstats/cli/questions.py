"""The commands that answer questions of the scored hands: ``compare``, ``players``,
``player``, ``report``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import polars as pl
import typer
import typer.core
import typer.main

from ofcstats import analysis, answers, uncertainty
from ofcstats.bounds import SEED
from ofcstats.cli.app import app
from ofcstats.cli.columns import columns_help
from ofcstats.cli.common import _filters, _summing, reading
from ofcstats.cli.options import (
    DbOption,
    FormatOption,
    OutputPathOption,
    PlayerOption,
    QuietOption,
    ResamplesOption,
    RulesetsOption,
    SeedOption,
    SessionOption,
    SinceOption,
    TableFormat,
    UntilOption,
    VariantOption,
    WaitOption,
    WideOption,
)
from ofcstats.cli.output import (
    SUFFIXES,
    _on_terminal,
    by_variant_text,
    emit,
    fail,
    fail_with,
    frame_text,
    output_file,
    plural,
    steps_bar,
    terminal_width,
    to_terminal,
    warn,
)
from ofcstats.errors import OfcstatsError
from ofcstats.rules import Ruleset
from ofcstats.store import Store

_SEED_HELP = "Seed of the bootstrap over games: the same seed, the same intervals."


@app.command(epilog=columns_help("compare"))
def compare(
    db: DbOption = None,
    ruleset: RulesetsOption = None,
    output: FormatOption = TableFormat.table, wide: WideOption = False,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    variant: VariantOption = None, player: PlayerOption = None, quiet: QuietOption = False,
    output_path: OutputPathOption = None, wait: WaitOption = None,
    seed: SeedOption = uncertainty.SEED, resamples: ResamplesOption = uncertainty.RESAMPLES,
) -> None:
    """Compare scoring systems side by side, one table per variant: volatility, royalties,
    fouls, fantasyland, and how fast skill shows (rulesets ranked by the skill signal),
    each with its 95% interval (a bootstrap over games, paired across rulesets).

    The skill signal is the spread of the players' mean points per hand, less what their
    luck puts in it, over the SD per hand; where its interval reaches 0, these hands show
    no skill difference, and the table says so. Hands to tell apart: after that many
    hands, a player truly one spread better than the table's average (a typical gap
    between players) has a 95% interval of their mean that excludes the average about
    half the time.

    Rulesets the data cannot rank share a skill group; under each table, whether the top
    two can be told apart, or about how many more hands it would take. The table shows
    the skill signal's interval; CSV and JSON carry every interval (<stat>_ci_low,
    <stat>_ci_high). A ruleset scored on hands of a variant it is not played under
    (rescore --what-if) is marked "(what-if)".

    Example: ofcstats compare --db club.duckdb --variant pineapple
    """
    path = output_file(output_path, f"compare{SUFFIXES[output]}", "table")
    filters = _filters(ruleset, session, since, until, variant, player)
    with reading(db, filters, wait=wait, quiet=quiet) as store, _summing(quiet):
        try:
            found = answers.comparison(store, filters, resamples=resamples, seed=seed,
                                       check=False)
            scored = _scored(store, found.table)
        except OfcstatsError as error:
            raise fail_with(error) from None
    table = found.frame()
    hands = dict(table.group_by("variant").agg(pl.col("hands").max()).iter_rows())
    what_if = table.filter(pl.col("what_if")) if "what_if" in table.columns else table.clear()
    apart = {str(row["variant"]): row for row in found.tell_apart.iter_rows(named=True)}
    notes = {}
    for name in sorted(hands):
        mine = found.table.filter(pl.col("variant") == name)
        marked = what_if.filter(pl.col("variant") == name).get_column("ruleset").to_list()
        words = [*analysis.skill_notes(mine, apart.get(name), marked),
                 analysis.no_fantasyland_text(mine, scored)]
        notes[name] = "\n".join(filter(None, words))
    if output is TableFormat.table:
        table = table.with_columns(analysis.with_interval(table, "skill_signal", "skill_shown"),
                                   pl.col("skill_group").cast(pl.String).fill_null("-"))
    emit(by_variant_text(table, output, "compare", hands, terminal=to_terminal(path),
                         wide=wide, width=terminal_width(path), notes=notes),
         path)


def _scored(store: Store, table: pl.DataFrame) -> list[Ruleset]:
    """The rulesets a table's rows name, as they were scored (for the notes that say a
    rate is impossible under one: no fantasyland under it)."""
    if table.is_empty():
        return []
    return store.scored_rulesets(sorted(set(table.get_column("ruleset").to_list())))


@app.command(epilog=columns_help("players"))
def players(
    db: DbOption = None,
    ruleset: Annotated[str | None, typer.Option(
        "--ruleset", "-r", help="The ruleset to report. Default: per variant, the one most "
        "of its hands were played under.", show_default=False)] = None,
    output: FormatOption = TableFormat.table, wide: WideOption = False,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    variant: VariantOption = None, player: PlayerOption = None,
    quiet: QuietOption = False, output_path: OutputPathOption = None,
    seed: Annotated[int, typer.Option("--seed", min=SEED.low, max=SEED.high,
                                        help=_SEED_HELP)] = 7,
    wait: WaitOption = None,
) -> None:
    """Every player's results under one ruleset per variant: points, spread, 95%
    intervals, money as the table settled it, fouls, fantasyland, scoops.

    Example: ofcstats players --ruleset pokerstars --db club.duckdb
    """
    path = output_file(output_path, f"players{SUFFIXES[output]}", "table")
    filters = _filters([ruleset] if ruleset else None, session, since, until, variant, player)
    with reading(db, filters, wait=wait, quiet=quiet) as store, _summing(quiet):
        try:
            table = answers.players(store, filters, ruleset, seed=seed, check=False)
        except OfcstatsError as error:
            raise fail_with(error) from None
        scored = _scored(store, table)
    notes = {str(name): analysis.no_fantasyland_text(mine, scored)
             for (name,), mine in table.group_by("variant")}
    emit(by_variant_text(table, output, "players", terminal=to_terminal(path), wide=wide,
                         width=terminal_width(path), notes=notes), path)


@app.command(epilog=columns_help("player"))
def player(
    name: Annotated[str, typer.Argument(help="The player's name.", show_default=False)],
    db: DbOption = None,
    ruleset: RulesetsOption = None,
    output: FormatOption = TableFormat.table, wide: WideOption = False,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    variant: VariantOption = None, quiet: QuietOption = False,
    output_path: OutputPathOption = None,
    seed: Annotated[int, typer.Option("--seed", min=SEED.low, max=SEED.high,
                                        help=_SEED_HELP)] = 7,
    wait: WaitOption = None,
) -> None:
    """One player under every scored ruleset, per variant: results, money as the table
    settled it (each game's loss cap over the whole table), style; then the hands whose
    logged points differ from the re-score, and those no re-score checks (logged under a
    ruleset the database does not know).

    Example: ofcstats player alice --db club.duckdb
    """
    path = output_file(output_path, f"player{SUFFIXES[output]}", "table")
    filters = _filters(ruleset, session, since, until, variant, [name])
    with reading(db, filters, wait=wait, quiet=quiet) as store, _summing(quiet):
        try:
            found = answers.player(store, name, filters, seed=seed, check=False)
        except OfcstatsError as error:
            raise fail_with(error) from None
        scored = _scored(store, found.table)
    differences, unchecked = found.differences, found.unchecked
    notes = {str(name): analysis.no_fantasyland_text(mine, scored)
             for (name,), mine in found.table.group_by("variant")}
    text = by_variant_text(found.table, output, "player", terminal=to_terminal(path),
                           wide=wide, width=terminal_width(path), notes=notes)
    if output is TableFormat.table and not differences.is_empty():
        text += (f"\n{plural(differences.height, 'seat')} where the logged points differ from the "
                 "re-score under the ruleset played:\n"
                 + frame_text(differences, output, differences.columns))
    if output is TableFormat.table and unchecked is not None:
        text += f"\n{unchecked}\n"
    emit(text, path)
    if output is not TableFormat.table and unchecked is not None:
        warn(unchecked)


@app.command()
def report(
    output: Annotated[str, typer.Option("--output", "-o", help="The HTML file to write.",
                                        metavar="<path>")] = "report.html",
    db: DbOption = None,
    ruleset: Annotated[str | None, typer.Option(
        "--ruleset", "-r", help="The ruleset of the summary and style charts. Default: the "
        "one most hands were played under.", show_default=False)] = None,
    pdf: Annotated[str | None, typer.Option(
        "--pdf", help="Also write the charts as a multi-page PDF.", show_default=False,
        metavar="<path>")] = None,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    variant: VariantOption = None, player: PlayerOption = None,
    seed: Annotated[int, typer.Option("--seed", min=SEED.low, max=SEED.high,
                                        help=_SEED_HELP)] = 7,
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
    if Path(output).suffix.lower() == ".pdf":
        raise fail(f"{output}: -o writes the HTML report; write the PDF with --pdf {output}", 2)
    html = output_file(output, "report.html", "report")
    charts = output_file(pdf, "report.pdf", "PDF")
    with steps_bar("report", _on_terminal(quiet)) as update, \
            reading(db, filters, [ruleset] if ruleset else [], wait=wait, quiet=quiet) as store:
        if update is not None:
            update("reading the database", 0, 1)
        try:
            data = reporting.collect(store, filters, ruleset, seed=seed)
        except OfcstatsError as error:
            raise fail_with(error) from None
        # Then a step a chart, counted and named as it is drawn, and a step a file.
        written = reporting.write_report(data, html, charts, progress=update)
    typer.echo(f"report ({plural(written.charts, 'chart')}, "
               f"{plural(len(data.variants), 'variant')}) -> "
               f"{written.html.resolve()}")
    if written.pdf is not None:
        typer.echo(f"charts -> {written.pdf.resolve()}")
