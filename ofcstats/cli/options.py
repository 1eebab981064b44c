"""The options the commands share: output formats, filters, the database, the engine,
each number held to its bound (:mod:`ofcstats.bounds`).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
import typer.core
import typer.main

from ofcstats.answers import split_list
from ofcstats.bounds import (
    RESAMPLES,
    SEED,
    WAIT,
)
from ofcstats.variants import VARIANT_NAMES


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


OutputPathOption = Annotated[str | None, typer.Option(
    "--output", "-o", help="Write the table to this file. Default: stdout.",
    show_default=False, metavar="<path>")]


FormatOption = Annotated[TableFormat, typer.Option("--format", "-f", help="Output format.")]
SummaryFormatOption = Annotated[SummaryFormat, typer.Option(
    "--format", "-f", help="Output format: a table to read, or JSON.")]
RulesetsOption = Annotated[list[str] | None, typer.Option(
    "--ruleset", "-r", help="Only these rulesets (repeat). Default: all scored.",
    show_default=False)]


WideOption = Annotated[bool, typer.Option(
    "--wide", help="A table with every column, under its full name (by default: the main "
    "ones, under short headers, fitted to the terminal). CSV and JSON always have every "
    "column.")]


QuietOption = Annotated[bool, typer.Option(
    "--quiet", "-q", help="No progress display (there is none outside a terminal either).")]


WaitOption = Annotated[float | None, typer.Option(
    "--wait", help="Seconds to wait for a database another program is writing to (or, "
    "to write, reading). Default: $OFCSTATS_LOCK_WAIT, else 10.", show_default=False,
    min=WAIT.low, max=WAIT.high, metavar="SECONDS")]


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


READ_MEMORY = "256MB"
"""What DuckDB may hold in memory for a read command; past it, it works from temporary
files (which are removed after): the statistics of millions of hands on a laptop. (At
512 MB, the read commands on 300,000 hands peaked 70 to 80 MB higher, in about the same
time.)"""

SeedOption = Annotated[int, typer.Option(
    "--seed", min=SEED.low, max=SEED.high,
    help="Seed of the bootstrap: the same seed, the same intervals.")]
ResamplesOption = Annotated[int, typer.Option(
    "--resamples", min=RESAMPLES.low, max=RESAMPLES.high,
    help="Bootstrap resamples of every interval (more: steadier interval ends, slower).")]
