"""The commands of rulesets and scoring: ``score``, ``rulesets``, ``rescore``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import polars as pl
import typer
import typer.core
import typer.main

from ofcstats import answers
from ofcstats.answers import split_list
from ofcstats.bounds import JOBS
from ofcstats.cli.app import app, rulesets_app
from ofcstats.cli.columns import columns_help
from ofcstats.cli.common import _large_frames_process, _open_existing, engine_for
from ofcstats.cli.options import (
    AddressOption,
    ConfigOption,
    DbOption,
    EngineOption,
    FormatOption,
    FromOption,
    JsonFlag,
    OutputFormat,
    QuietOption,
    SummaryFormat,
    SummaryFormatOption,
    TableFormat,
    WaitOption,
    WideOption,
)
from ofcstats.cli.output import (
    SUFFIXES,
    _on_terminal,
    _print_table,
    _records_out,
    _rescore_text,
    fail,
    fail_with,
    output_file,
    progress_bar,
    report_rejects,
    say,
    warn,
    write_records,
)
from ofcstats.errors import OfcstatsError
from ofcstats.logscore import score_files
from ofcstats.paths import no_loop
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
from ofcstats.store.connect import kept_on_interrupt
from ofcstats.store.results import RESCORE


@app.command(epilog=columns_help("score"))
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
    output_path: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write the records to this file. Default: stdout.",
        show_default=False, metavar="<path>")] = None,
    format_name: Annotated[str | None, typer.Option(
        "--input-format", help="Input format, when detection from content is not wanted.")]
        = None,
    quiet: QuietOption = False,
    wide: WideOption = False,
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
    written = output_file(output_path, f"scores{SUFFIXES[output]}", "records")
    try:
        names = split_list(ruleset)
        chosen = load_rulesets(preset_names()) if all_rulesets else (
            load_rulesets(names) if names else None)
        # No bar while the records themselves go to the terminal: they show the
        # progress, and a bar would leave its text among them.
        shown = _on_terminal(quiet) and (written is not None or not sys.stdout.isatty())
        with progress_bar("read", shown, in_bytes=True) as update, \
                _records_out(written) as out:
            parts = score_files(files, chosen, own_variants=all_rulesets,
                                format_name=format_name, progress=update, warn=warn)
            rejects = write_records(parts, output, out, "score", wide=wide)
    except OfcstatsError as error:
        raise fail_with(error) from None
    report_rejects(rejects)
    if not rejects.is_empty():
        raise typer.Exit(1)


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
    # A line too wide for the terminal goes on under its text, past the names.
    for ruleset in presets:
        say(f"  {ruleset.name:<{width}}  "
            f"[{', '.join(v.value for v in ruleset.variants)}]  {ruleset.summary()}",
            indent=width + 4)
    typer.echo("\nFantasyland policies (docs/rules.md §6):")
    for name in policy_names():
        policy = load_policy(name)
        mark = "" if policy.in_sources else " [not in the sources]"
        say(f"  {name:<{width}}  {policy.description}{mark}", indent=width + 4)


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
            say(_policy_text(policy))
            return
        say(_ruleset_text(load_ruleset(name)))
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
        "file's, else every core.", show_default=False, min=JOBS.low, max=JOBS.high)
    ] = None,
    address: AddressOption = None,
    source: FromOption = None,
    config: ConfigOption = None,
    output: SummaryFormatOption = SummaryFormat.table,
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
        asked = answers.asked_rulesets(ruleset, what_if, all_rulesets=all_rulesets)
    except OfcstatsError as error:
        raise fail_with(error) from None
    sharded = engine_for(engine, jobs, address, source, config, jobs_shard=True)
    with kept_on_interrupt(lambda: "the batches scored are kept (each in one transaction); "
                           f"run {RESCORE} to score the rest"), \
            _open_existing(db, read_only=False, wait=wait, quiet=quiet) as store:
        try:
            with progress_bar("rescore", _on_terminal(quiet or as_json)) as update:
                summary = answers.rescore(store, asked, rebuild=rebuild, engine=sharded,
                                          progress=update)
        except OfcstatsError as error:
            raise fail_with(error) from None
    if as_json:
        typer.echo(json.dumps(asdict(summary), indent=2))
        return
    say(_rescore_text(summary))
