"""The decision review's commands: ``review``, ``replay``.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import polars as pl
import typer
import typer.core
import typer.main

from ofcstats import answers
from ofcstats.bounds import JOBS, POINTS, ROLLOUTS, SCREEN, SEED
from ofcstats.cli.app import app
from ofcstats.cli.columns import columns_help
from ofcstats.cli.common import _open_existing, engine_for
from ofcstats.cli.options import (
    AddressOption,
    ConfigOption,
    DbOption,
    EngineOption,
    FormatOption,
    FromOption,
    PlayerOption,
    QuietOption,
    SessionOption,
    SinceOption,
    TableFormat,
    UntilOption,
    WaitOption,
    WideOption,
)
from ofcstats.cli.output import (
    _on_terminal,
    _print_table,
    fail_with,
    frame_text,
    output_file,
    progress_bar,
    to_terminal,
)
from ofcstats.errors import OfcstatsError
from ofcstats.paths import written_whole
from ofcstats.store.connect import kept_on_interrupt

if TYPE_CHECKING:
    from ofcstats.review.store import Settings

RolloutsOption = Annotated[int, typer.Option(
    "--rollouts", help="Selection rollouts of a decision (the first step's are an eighth, at "
    "least 16; the two leaders get four times as many), and twice as many that measure "
    "the loss of the play made.", min=ROLLOUTS.low, max=ROLLOUTS.high)]


ReviewSeedOption = Annotated[int, typer.Option(
    "--seed", min=SEED.low, max=SEED.high,
    help="Seed of the rollouts: the same seed gives the same numbers.")]


ReviewRulesetOption = Annotated[str | None, typer.Option(
    "--ruleset", "-r", help="Score candidates under this preset or TOML file. Default: the "
    "ruleset each hand was played under if it is played under the hand's variant, else "
    "american.", show_default=False)]


FantasylandValueOption = Annotated[float, typer.Option(
    "--fantasyland-value", help="Points per opponent a board reaching fantasyland is worth "
    "on top of its score.", min=POINTS.low, max=POINTS.high)]


# The review's defaults are written out here (its modules load the simulator, a slow
# import); a test checks they are those of ofcstats.review.core.
ScreenOption = Annotated[int, typer.Option(
    "--screen", help="Candidates the first step keeps (the best on its rollouts), besides "
    "the play made, for the rest of the selection rollouts; 0: every candidate on every "
    "rollout.", min=SCREEN.low, max=SCREEN.high)]


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
                     screen: int, opponents: OpponentsMode) -> Settings:
    try:
        return answers.review_settings(ruleset, rollouts, seed, fantasyland_value, screen,
                                       opponents.value)
    except OfcstatsError as error:
        raise fail_with(error) from None


@app.command(epilog=columns_help("review", "situations", "mistakes"))
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
    wide: WideOption = False,
    mistakes: Annotated[bool, typer.Option(
        "--mistakes", help="CSV: print the biggest mistakes instead of the summary.")]
        = False,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", help="Threads sharing the rollouts (the numbers do not change); "
        "with --engine, its workers. Default: one per core, at most 2, when there are "
        "more than 100 hands to review, else 1; with --engine, the config file's, else "
        "every core.", show_default=False, min=JOBS.low, max=JOBS.high)] = None,
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
    from ofcstats.review import summary  # noqa: PLC0415

    settings = _review_settings(ruleset, rollouts, seed, fantasyland_value, screen, opponents)
    try:
        selection = answers.selection(player, session, since, until)
    except OfcstatsError as error:
        raise fail_with(error) from None
    sharded = engine_for(engine, jobs, address, source, config, jobs_shard=False)
    # Written to: the decisions table keeps what was reviewed.
    with kept_on_interrupt(lambda: "the hands reviewed are kept in the decisions table; run "
                           "the same ofcstats review again to review the rest"), \
            _open_existing(db, read_only=False, wait=wait, quiet=quiet) as store:
        try:
            with progress_bar("review", _on_terminal(quiet or output is not TableFormat.table)
                              ) as update:
                found = answers.review(store, selection, settings, run=True, progress=update,
                                       jobs=jobs or 0, engine=sharded)
        except OfcstatsError as error:
            raise fail_with(error) from None
    left_out = found.skipped
    if output is TableFormat.json:
        typer.echo(json.dumps(found.to_dict(by.value), indent=2, default=str))
        return
    if by is ReviewBy.situation:
        _print_situations(found.situations, output, summary.skipped_text(left_out),
                          wide=wide)
        return
    _print_review(found.players, found.mistakes, output, mistakes,
                  summary.skipped_text(left_out), wide=wide)


def _print_situations(table: pl.DataFrame, output: TableFormat, not_reviewed: str, *,
                      wide: bool = False) -> None:
    """The loss per player and situation beside the table's, per variant (a table), or as
    CSV."""
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
        _print_table(part, output, "situations", wide=wide)
    typer.echo("\nEV loss in points per decision; the table: every reviewed player.")
    if not_reviewed:
        typer.echo("\n" + not_reviewed)


def _print_review(players: pl.DataFrame, biggest: pl.DataFrame, output: TableFormat,
                  mistakes: bool, not_reviewed: str, *, wide: bool = False) -> None:
    """The review's summary per player and its biggest mistakes, per variant (a table),
    or either (CSV); and what was not reviewed."""
    if output is TableFormat.csv:
        sys.stdout.write(frame_text(biggest if mistakes else players, output,
                                    terminal=to_terminal(None)))
        if not_reviewed:
            typer.echo(not_reviewed, err=True)
    else:
        for index, ((variant,), part) in enumerate(players.group_by("variant",
                                                                    maintain_order=True)):
            shown = part.select([c for c in part.columns if not part[c].is_null().all()])
            typer.echo(("\n" if index else "") + str(variant))
            _print_table(shown.drop("variant", "ci_low", "ci_high", "mistakes", strict=False),
                         output, "review", wide=wide)
            typer.echo("\nBiggest mistakes (replay one with ofcstats replay HAND_ID):")
            _print_table(biggest.filter(pl.col("variant") == variant), output, "mistakes",
                         wide=wide)
        if not_reviewed:
            typer.echo("\n" + not_reviewed)


@app.command()
def replay(
    hand_ids: Annotated[list[str] | None, typer.Argument(
        help="The hands' ids (one: the hand's page; several: one page of them).",
        show_default=False)] = None,
    output: Annotated[str, typer.Option("--output", "-o", help="The HTML file to write.",
                                        metavar="<path>")] = "hand.html",
    session: Annotated[str | None, typer.Option(
        "--session", help="Every hand of this session on one page.", show_default=False)]
        = None,
    player: Annotated[str | None, typer.Option(
        "--player", help="With --session or several hands: only the hands this player sat "
        "in, their seat first and on its streets.", show_default=False)] = None,
    db: DbOption = None,
    ruleset: ReviewRulesetOption = None,
    opponents: OpponentsOption = OpponentsMode.drawn,
    rollouts: RolloutsOption = 256,
    seed: ReviewSeedOption = 0,
    fantasyland_value: FantasylandValueOption = 14.0,
    screen: ScreenOption = 6,
    wait: WaitOption = None,
    quiet: QuietOption = False,
) -> None:
    """Write hands as an HTML page (self-contained, no network). One hand: each street of
    each seat on its board, the play made and the best candidate with their expected
    points; streets not reviewed under these settings are valued for the page alone (the
    database is only read, so any stored hand replays, reviewed or not).

    A session (--session) or several hands: one page with the list of the hands on top
    (points per player, fouls, fantasyland, EV loss; it sorts and filters in the page),
    then each hand street by street, previous and next by button or by the arrow keys,
    and each player's running total; EV loss where the seat was reviewed (ofcstats
    review), the play made alone elsewhere. On a narrow screen the board played stands
    above the best one.

    Example: ofcstats replay --session club7-2026-11-29 -o night.html --db club.duckdb
    """
    settings = _review_settings(ruleset, rollouts, seed, fantasyland_value, screen, opponents)
    try:
        ids = answers.replay_ids(hand_ids, session, player)
    except OfcstatsError as error:
        raise fail_with(error) from None
    path = output_file(output, "hand.html" if len(ids) == 1 else "session.html", "page")
    with _open_existing(db, wait=wait, quiet=quiet) as store:
        try:
            page = answers.replay(store, ids, session, player, settings)
        except OfcstatsError as error:
            raise fail_with(error) from None
    text, what = page.html, page.what
    with written_whole(path) as partial:
        partial.write_text(text, encoding="utf-8")
    typer.echo(f"{what} -> {path.resolve()}")
