"""Going through the hands one by one: ``hands``, the hand list.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import polars as pl
import typer

from ofcstats import answers
from ofcstats.bounds import HAND_POINTS, ROWS
from ofcstats.cli.app import app
from ofcstats.cli.columns import columns_help
from ofcstats.cli.common import _filters, reading
from ofcstats.cli.options import (
    DbOption,
    FormatOption,
    OutputPathOption,
    PlayerOption,
    QuietOption,
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
    by_variant_text,
    emit,
    fail_with,
    output_file,
    terminal_width,
    to_terminal,
)
from ofcstats.errors import OfcstatsError


class HandSort(StrEnum):
    """The orders of the hand list (:data:`ofcstats.analysis.HAND_SORTS`)."""

    played = "played"
    points = "points"
    ev_loss = "ev_loss"


@app.command(epilog=columns_help("hands"))
def hands(
    db: DbOption = None,
    player: PlayerOption = None,
    session: SessionOption = None, since: SinceOption = None, until: UntilOption = None,
    variant: VariantOption = None,
    ruleset: Annotated[str | None, typer.Option(
        "--ruleset", "-r", help="The ruleset of the points and money. Default: per variant, "
        "the one most of its hands were played under.", show_default=False)] = None,
    fouled: Annotated[bool, typer.Option(
        "--fouled", help="Only seats that fouled.")] = False,
    fantasyland: Annotated[bool, typer.Option(
        "--fantasyland", help="Only seats that played in fantasyland or entered it.")]
        = False,
    mistakes: Annotated[bool, typer.Option(
        "--mistakes", help="Only reviewed seats with a mistake (ofcstats review).")] = False,
    min_points: Annotated[int | None, typer.Option(
        "--min-points", min=HAND_POINTS.low, max=HAND_POINTS.high,
        help="Only seats that scored at least this many points.",
        show_default=False)] = None,
    max_points: Annotated[int | None, typer.Option(
        "--max-points", min=HAND_POINTS.low, max=HAND_POINTS.high,
        help="Only seats that scored at most this many points (-10: lost 10 or more).",
        show_default=False)] = None,
    sort: Annotated[HandSort, typer.Option(
        "--sort", help="played: in play order; points: the biggest loss first; ev_loss: "
        "the costliest decisions first (seats not reviewed last).")] = HandSort.played,
    limit: Annotated[int | None, typer.Option(
        "--limit", "-n", min=ROWS.low, max=ROWS.high, help="At most this many rows.",
        show_default=False)] = None,
    per_player: Annotated[int | None, typer.Option(
        "--per-player", min=ROWS.low, max=ROWS.high,
        help="At most this many rows of each player (the first in the order asked: with "
        "--sort points, each player's worst hands).",
        show_default=False)] = None,
    output: FormatOption = TableFormat.table, wide: WideOption = False,
    output_path: OutputPathOption = None, quiet: QuietOption = False,
    wait: WaitOption = None,
) -> None:
    """The hand list: one row per hand and player, with the points and money of the seat,
    whether it fouled, its royalties, fantasyland (played in, entered) and, once the hand
    is reviewed, the seat's EV loss and mistakes (empty when not reviewed). Points and
    money under one ruleset per variant; money is the seat's points times the stake (a
    game's loss cap settles whole games, see players). Replay a hand with ofcstats replay
    HAND_ID, a whole session with ofcstats replay --session SESSION.

    Example: ofcstats hands --player alice --sort points --limit 10 --db club.duckdb
    """
    path = output_file(output_path, f"hands{SUFFIXES[output]}", "table")
    filters = _filters([ruleset] if ruleset else None, session, since, until, variant, player)
    with reading(db, filters, wait=wait, quiet=quiet) as store:
        try:
            frame = answers.hands(
                store, filters, ruleset, fouled=fouled or None,
                fantasyland=fantasyland or None, mistakes=mistakes or None,
                min_points=min_points, max_points=max_points, sort=sort.value, limit=limit,
                per_player=per_player, check=False)
        except OfcstatsError as error:
            raise fail_with(error) from None
    if output is TableFormat.table:
        if frame.is_empty():
            emit("no hands match the filters\n", path)
            return
        frame = _readable(frame)
    emit(by_variant_text(frame, output, "hands", terminal=to_terminal(path), wide=wide,
                         width=terminal_width(path)), path)


def _readable(frame: pl.DataFrame) -> pl.DataFrame:
    """The list as a table shows it: yes/no flags shown only when set, the time to the
    minute, the EV loss with its mistakes marked."""
    flags = ("fouled", "fantasyland", "fantasyland_entered", "timed_out")
    return frame.with_columns(
        *(pl.when(pl.col(c)).then(pl.lit("yes")).otherwise(pl.lit("")).alias(c) for c in flags),
        pl.col("played_at").dt.strftime("%Y-%m-%d %H:%M"),
        pl.col("ev_loss").map_elements(lambda v: f"{v:.2f}", return_dtype=pl.String))
