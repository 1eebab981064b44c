"""The commands that make and read a database as it is: ``simulate``, ``ingest``,
``db info``, ``sql``, ``export``.
"""

from __future__ import annotations

import json
from contextlib import closing
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import polars as pl
import typer
import typer.core
import typer.main

from ofcstats import analysis, answers, formats, pipeline
from ofcstats import ingest as ingesting
from ofcstats.answers import split_list
from ofcstats.bounds import CHANCE, HANDS, ROLLOUTS, SEED, SHARD_SIZE
from ofcstats.cli.app import _one_line, app, db_app
from ofcstats.cli.common import _large_frames_process, _open_existing, _WaitNote
from ofcstats.cli.options import (
    DbOption,
    JsonFlag,
    OutputFormat,
    QuietOption,
    SummaryFormat,
    SummaryFormatOption,
    WaitOption,
)
from ofcstats.cli.output import (
    SUFFIXES,
    _on_terminal,
    _print_summary,
    _rescore_text,
    _summary_format,
    fail_with,
    output_file,
    plural,
    print_frame,
    progress_bar,
    say,
    warn,
)
from ofcstats.errors import Interrupted, OfcstatsError, StoreError, UsageError
from ofcstats.paths import no_loop, replace_directory_files, writable_directory
from ofcstats.rules import Ruleset, load_ruleset, load_rulesets, presets_played_in
from ofcstats.store import SHARD_HANDS, Store
from ofcstats.store.results import RESCORE, UNCHECKED_SCHEMA, unchecked_text
from ofcstats.variants import VARIANT_NAMES, Variant


@app.command()
def simulate(
    players: Annotated[str, typer.Option(
        "--players", "-p", help="Seats in order as name:style, comma-separated; styles: "
        "random, safe, balanced, aggressive, montecarlo.", show_default=False)],
    output: Annotated[str, typer.Option("--output", "-o", help="The .jsonl file to write.",
                                        show_default=False, metavar="<path>")],
    variant: Annotated[str, typer.Option(
        "--variant", help=f"{', '.join(VARIANT_NAMES[:-1])} or {VARIANT_NAMES[-1]}.")
    ] = Variant.PINEAPPLE.value,
    hands: Annotated[int, typer.Option("--hands", "-n", help="Hands to play.", min=HANDS.low,
                                       max=HANDS.high)] = 1000,
    ruleset: Annotated[str | None, typer.Option(
        "--ruleset", "-r", help="A preset name or a TOML file (played under the variant): "
        "scoring and fantasyland. Default: american, or for a variant it is not played "
        "under, the first preset played under it.", show_default=False)] = None,
    seed: Annotated[int, typer.Option(
        "--seed", min=SEED.low, max=SEED.high, help="The same seed writes the same file.")]
        = 0,
    rollouts: Annotated[int, typer.Option(
        "--rollouts", help="Samples per decision of the montecarlo bot.", min=ROLLOUTS.low,
        max=ROLLOUTS.high)] = 100,
    timeout_rate: Annotated[float, typer.Option(
        "--timeout-rate", help="Chance that a seat runs out of time in a hand.",
        min=CHANCE.low, max=CHANCE.high)] = 0.0,
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
    written as they are played, a block of tables at a time (the first block small,
    each next one twice as large): a run stopped with Ctrl-C keeps every hand of the
    blocks it finished and says how many; --append then finishes it.

    Example: ofcstats simulate -p ann:aggressive,bob:safe,cy:montecarlo -n 10000 -o s.jsonl
    """
    # The simulator is imported only when it is used: it is the slowest import.
    from ofcstats.simulate import Simulation, parse_players, write_jsonl  # noqa: PLC0415

    try:
        sim = Simulation(variant=Variant.parse(variant), ruleset=_played_ruleset(
                             Variant.parse(variant), ruleset),
                         players=parse_players(players), hands=hands, seed=seed,
                         rollouts=rollouts, timeout_rate=timeout_rate, prefix=prefix)
        sim.check()
        path = output_file(output, "hands.jsonl", "hands")
        with progress_bar("simulate", _on_terminal(quiet)) as update:
            written = write_jsonl(sim, path, update, append=append)
    except (OfcstatsError, OSError) as error:
        raise fail_with(error) from None
    resumed = "" if written.resumed_after is None else \
        f" (resumed after {written.resumed_after:,})"
    typer.echo(f"{plural(written.hands, 'hand')} of {sim.variant.value} under {sim.ruleset.name} "
               f"(seed {seed}){resumed} -> {path}")


def _played_ruleset(variant: Variant, name: str | None) -> Ruleset:
    """The ruleset to simulate ``variant`` under: ``name``, which must be played under it
    (a :class:`UsageError` lists those that are), else american or, where american is not
    played, the first preset that is."""
    played = presets_played_in(variant)
    ruleset = load_ruleset(name or ("american" if "american" in played else played[0]))
    if variant not in ruleset.variants:
        raise UsageError(
            f"--ruleset {name}: not played under {variant.value} (only under "
            f"{', '.join(v.value for v in ruleset.variants)}); rulesets played under "
            f"{variant.value}: {', '.join(played)}")
    return ruleset


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
    ruleset: Annotated[list[str] | None, typer.Option(
        "--ruleset", "-r", help="A ruleset the logs name that is no preset (a house "
        "ruleset): its TOML file; repeat, or separate with commas. The database holds it "
        "from this load on, so the hands logged under it are scored under it and their "
        "logged points checked at once.", show_default=False)] = None,
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
    load only). Hands logged under a ruleset the database does not know (a house
    ruleset's name) are counted and named, with how to supply it: -r FILE, here or with
    rescore. Exit code 1 when anything was rejected or left out, hands are left not
    checked, or the scoring failed (when every hand is rejected, a database that did not
    exist is not created); 2, with nothing created, when an input is missing.

    Example: ofcstats ingest logs/ --db club.duckdb
    """
    if output in formats.format_names():  # --format once named the input format
        input_format, output = output, "table"
    shown = _summary_format(output, as_json)
    database = db or ingesting.default_database()
    _large_frames_process()
    try:
        named = split_list(ruleset) or []
        rulesets = load_rulesets(named) if named else []
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
    try:
        scored, problem, unchecked = _score_loaded(
            database, wait, quiet or shown is SummaryFormat.json, rulesets,
            score=not no_rescore)
    except Interrupted as error:
        raise Interrupted(f"every file loaded ({plural(summary.hands, 'new hand')}), then "
                          f"the scoring stopped: {error.kept}") from None
    if shown is SummaryFormat.json:
        typer.echo(json.dumps({**summary.to_dict(), "rescore": None if scored is None
                               else asdict(scored),
                               "unchecked": unchecked.to_dicts()}, indent=2))
    else:
        _print_summary(summary)
        if scored is not None:
            say(f"scored: {_rescore_text(scored)}")
    if problem is not None:
        typer.echo(f"ofcstats: {problem}", err=True)
    if not unchecked.is_empty():
        typer.echo(f"ofcstats: {unchecked_text(unchecked)}", err=True)
    if not summary.clean or problem is not None or not unchecked.is_empty():
        raise typer.Exit(1)


def _score_loaded(database: Path, wait: float | None, quiet: bool,
                  rulesets: list[Ruleset], *, score: bool
                  ) -> tuple[pipeline.RescoreSummary | None, str | None, pl.DataFrame]:
    """After a load, :func:`ofcstats.answers.after_load` with a progress bar: what it
    scored, or why it could not (one line, with the fix), and the hands no re-score
    checks."""
    note = _WaitNote(quiet)  # (another program may have taken the file after the load)
    try:
        with closing(note), Store(database, read_only=not score and not rulesets, wait=wait,
                                  on_wait=note) as store, \
                progress_bar("rescore", _on_terminal(quiet) and score) as update:
            scored, unchecked = answers.after_load(store, rulesets, score=score,
                                                   progress=note.then(update))
    except OfcstatsError as error:
        fix = ("they are not scored yet" if score else "the rulesets are not registered"
               if rulesets else "their rulesets are not checked")
        return None, f"{_one_line(error)} (the hands were loaded; {fix})", pl.DataFrame(
            schema=UNCHECKED_SCHEMA)
    return scored, None, unchecked


@db_app.command("info")
def db_info(
    db: DbOption = None,
    output: SummaryFormatOption = SummaryFormat.table,
    wait: WaitOption = None,
    as_json: JsonFlag = False,
    quiet: QuietOption = False,
) -> None:
    """Show the database's tables with their row counts, sessions, players and dates,
    and check that every stored hand is scored under every ruleset of its variant
    (what-ifs included): per variant, the rulesets that hold all its hands, and what is
    missing from the others; and that no hand was logged under a ruleset the database
    does not score it under (its logged points would go unchecked).

    Exit code 1 when the store is not complete: a hand not scored under a ruleset of its
    variant, or scored before its session changed (run ofcstats rescore), or logged under
    a ruleset the database does not score it under (supply its file).

    Example: ofcstats db info --db club.duckdb
    """
    with _open_existing(db, wait=wait, quiet=quiet) as store:
        info = store.info()
    if as_json or output is SummaryFormat.json:
        say(json.dumps(info, indent=2))  # (JSON: as it is)
        _complete_or_exit(info)
        return
    say(f"database: {info['path']} (schema version {info['schema_version']})")
    say("tables:")
    tables = info["tables"]
    assert isinstance(tables, dict)
    for name, count in tables.items():
        say(f"  {name:<16} {count:>12,}")
    say(f"sessions: {info['sessions']:,}")
    say(f"players: {info['players']:,}")
    variants = info["variants"]
    assert isinstance(variants, dict)
    say("variants: " + (", ".join(f"{k} {v:,}" for k, v in variants.items()) or "none"))
    say(f"played: {info['first_played_at'] or '-'} to {info['last_played_at'] or '-'}")
    scoring = info["scoring"]
    assert isinstance(scoring, list)
    unchecked = info["unchecked_text"]
    assert unchecked is None or isinstance(unchecked, str)
    whole_hands = info["whole_hands"]
    assert isinstance(whole_hands, dict)
    for line in _scoring_lines(scoring, bool(info["scoring_complete"]), whole_hands,
                               unchecked):
        say(line)
    _complete_or_exit(info)


def _complete_or_exit(info: dict[str, object]) -> None:
    """Exit code 1 when ``db info`` found the store not complete (hands not scored, or
    logged under a ruleset no re-score checks)."""
    if not info["scoring_complete"]:
        raise typer.Exit(1)


def _scoring_lines(rows: list[dict[str, Any]], complete: bool,
                   whole_hands: dict[str, int], unchecked: str | None = None) -> list[str]:
    """``db info``'s check that every stored hand is scored: per variant, the rulesets
    that score all its hands (or, when none does, how many hands all of them score),
    then each shortfall on a line of its own; ``unchecked``: the hands logged under a
    ruleset not scored over their variant (their logged points checked by nothing), in
    one line."""
    if not rows:
        return []
    stored = {row["variant"]: row["hands"] for row in rows}
    done, total = sum(whole_hands.get(v, 0) for v in stored), sum(stored.values())
    scored = done == total
    lines = ["scoring: every stored hand scored under every ruleset of its variant"
             if complete else f"scoring: NOT COMPLETE: {unchecked}" if scored
             else f"scoring: NOT COMPLETE: {done:,} of {plural(total, 'hand')} scored under "
             f"every ruleset of their variant; run {RESCORE}"]
    for variant in dict.fromkeys(row["variant"] for row in rows):
        mine = [row for row in rows if row["variant"] == variant]
        hands = mine[0]["hands"]
        if mine[0]["ruleset"] is None:
            lines.append(f"  {variant}: {plural(hands, 'hand')}, none scored: no ruleset is scored "
                         "over this variant")
            continue
        whole = [row for row in mine if row["scored"] == row["current"] == hands]
        names = ", ".join(row["ruleset"] + (" (what-if)" if row["what_if"] else "")
                          for row in whole)
        if whole:
            lines.append(f"  {variant}: {plural(hands, 'hand')}, every one scored under "
                         f"{len(whole)} of {plural(len(mine), 'ruleset')}: {names}")
        else:
            every = "its ruleset" if len(mine) == 1 else f"all {len(mine)} of its rulesets"
            lines.append(f"  {variant}: {whole_hands.get(variant, 0):,} of "
                         f"{plural(hands, 'hand')} scored under {every}")
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
    if unchecked is not None and not scored:
        lines.append(f"  {unchecked}")
    return lines


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="One SQL query (SELECT, WITH, DESCRIBE, ...).",
                                         show_default=False)],
    db: DbOption = None,
    output: Annotated[OutputFormat, typer.Option("--format", "-f",
                                                 help="Output format.")] = OutputFormat.table,
    output_path: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write the rows to this file. Default: stdout.",
        show_default=False, metavar="<path>")] = None,
    quiet: QuietOption = False,
    wait: WaitOption = None,
) -> None:
    """Run a read-only SQL query on the database: the tables and views of
    docs/database.md (hands, seats, placements, boards, results_named, ...).

    The database is opened read-only and the query cannot read or write other files.

    Example: ofcstats sql "SELECT player, count(*) AS hands FROM seats GROUP BY 1 ORDER BY 2 DESC"
    """
    path = output_file(output_path, f"query{SUFFIXES[output]}", "rows")
    with _open_existing(db, wait=wait, quiet=quiet) as store, \
            progress_bar("sql", _on_terminal(quiet), unit="rows") as update:
        try:
            frame = answers.sql(store, query, update)
        except OfcstatsError as error:
            raise fail_with(error) from None
    if frame is not None:
        print_frame(frame, output, path)


@app.command()
def export(
    parquet: Annotated[Path, typer.Option("--parquet", "--output", "-o",
                                          help="Directory to write Parquet files into.",
                                          show_default=False)],
    db: DbOption = None,
    shard_hands: Annotated[int, typer.Option(
        "--shard-hands", help="Hands per shard of hands, seats and placements (whole "
        "sessions: a shard may hold more).", min=SHARD_SIZE.low, max=SHARD_SIZE.high)
    ] = SHARD_HANDS,
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
            store.require_scored(filters=analysis.Filters())
        except StoreError as error:
            # The hands are all exported (a sharded rescore --from DIR reads them); the
            # results leave some out, which is said, never silently.
            warn(f"the results exported leave hands out: {error}")
    for path in written:
        typer.echo(str(path))
