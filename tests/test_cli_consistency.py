"""The same mistake gets the same answer in every command, and tables fit the terminal:
usage errors in one line (exit 2), unknown values named with the known ones, a ruleset
not played in the hands' variants pointing at --what-if, output folders made, plurals,
"-" for an empty value, and the default columns of a table fitted to 80 columns (all of
them with --wide), on a terminal and in a pipe."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import typer.main
from test_cli_terminal import run_in_pipe, run_on_terminal
from test_cli_usage import one_line_error
from typer.testing import CliRunner

from ofcstats.cli import app
from ofcstats.cli.columns import TABLES
from ofcstats.cli.output import TableFormat, by_variant_text, plural
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.rules import load_rulesets
from ofcstats.store import Store

runner = CliRunner()
SAMPLE = Path(__file__).parent.parent / "data" / "sample"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Pineapple and 13-card hands, scored under the rulesets played in each."""
    folder = tmp_path_factory.mktemp("consistency")
    ingest([SAMPLE / "pineapple-american.jsonl", SAMPLE / "chinese-13-russian.jsonl"],
           folder / "club.duckdb")
    with Store(folder / "club.duckdb") as store:
        rescore(store, load_rulesets(["american", "pokerstars", "russian", "one-six"]))
    return folder


def screen_lines(shown: bytes) -> list[str]:
    """What a terminal shows, line by line: escapes removed, split at carriage returns."""
    text = ANSI.sub("", shown.decode(errors="replace"))
    return [line for part in text.split("\n") for line in part.split("\r")]


USAGE_ERRORS = {
    "a date": (["compare", "--since", "yesterday"],
               "ofcstats: --since yesterday: not a date: give one in ISO 8601, e.g. "
               "2026-01-31 or 2026-01-31T18:00 (see ofcstats compare --help)"),
    "a negative wait": (["players", "--wait", "-1"],
                        "ofcstats: --wait -1: must be from 0 to 86,400 (see ofcstats players "
                        "--help)"),
    "a format": (["player", "ann", "-f", "xml"],
                 "ofcstats: -f xml: use one of table, csv, json (see ofcstats player --help)"),
    "an option": (["compare", "--bogus"],
                  "ofcstats: no such option: --bogus (see ofcstats compare --help)"),
    "an argument": (["player"],
                    "ofcstats: missing argument 'name' (see ofcstats player --help)"),
}


@pytest.mark.parametrize("mistake", list(USAGE_ERRORS))
def test_every_usage_error_is_one_line_naming_the_option_and_value(mistake: str) -> None:
    args, expected = USAGE_ERRORS[mistake]
    assert one_line_error(runner.invoke(app, args), 2) == expected


def test_a_usage_error_is_one_line_on_a_terminal_too(work: Path) -> None:
    code, shown = run_on_terminal(["compare", "--since", "yesterday"], work)
    assert code == 2
    lines = [line for line in screen_lines(shown) if line.strip()]
    assert lines == [USAGE_ERRORS["a date"][1]], lines


@pytest.mark.parametrize("args", [
    ["compare"], ["players"], ["player", "alice"], ["report", "-o", "r.html"], ["review"]])
def test_since_after_until_is_a_usage_error_before_anything_is_written(
        work: Path, args: list[str]) -> None:
    args = [str(work / "dates.html") if arg == "r.html" else arg for arg in args]
    text = one_line_error(runner.invoke(app, [
        *args, "--since", "2026-02-01", "--until", "2026-01-01T12:00",
        "--db", str(work / "club.duckdb")]), 2)
    assert text == ("ofcstats: --since 2026-02-01T00:00 is after --until 2026-01-01T12:00: no "
                    "hand can match; give the earlier moment to --since")
    assert not (work / "dates.html").exists()


@pytest.mark.parametrize("args", [
    ["compare"], ["players"], ["player", "alice"], ["report", "-o", "r.html"], ["review"],
    ["replay", "h1", "-o", "r.html"],
    ["simulate", "--players", "a:safe,b:safe", "--hands", "2", "-o", "r.html"]])
def test_a_negative_seed_is_a_usage_error_before_anything_is_written(
        work: Path, args: list[str]) -> None:
    at = ["--db", str(work / "club.duckdb")] if args[0] != "simulate" else []
    args = [str(work / "seed.html") if arg == "r.html" else arg for arg in args]
    text = one_line_error(runner.invoke(app, [*args, "--seed", "-1", *at]), 2)
    assert text == (f"ofcstats: --seed -1: must be from 0 to 9,223,372,036,854,775,807 (see "
                    f"ofcstats {args[0]} --help)")
    assert not (work / "seed.html").exists()


@pytest.mark.parametrize("args", [
    ["players"], ["compare"], ["player", "alice"], ["report", "-o", "r.html"],
    ["review", "--rollouts", "4"]])
def test_unknown_player_is_the_same_usage_error_everywhere(work: Path, args: list[str]
                                                           ) -> None:
    result = runner.invoke(app, [*args, "--player", "zed", "--db", str(work / "club.duckdb")]
                           if args[0] != "player" else
                           ["player", "zed", "--db", str(work / "club.duckdb")])
    text = one_line_error(result, 2)
    assert text.startswith("ofcstats: no player named zed; known players: "), text
    assert not (work / "r.html").exists()


def test_review_of_an_unknown_session_names_the_known_ones(work: Path) -> None:
    text = one_line_error(runner.invoke(app, [
        "review", "--session", "nope", "--db", str(work / "club.duckdb")]), 2)
    assert text.startswith("ofcstats: no session named nope; "), text


@pytest.mark.parametrize("args", [["players", "--ruleset", "russian"],
                                  ["compare", "--ruleset", "russian"],
                                  ["player", "alice", "--ruleset", "russian"]])
def test_a_ruleset_not_played_in_the_variant_points_at_what_if(work: Path, args: list[str]
                                                               ) -> None:
    text = one_line_error(runner.invoke(app, [*args, "--variant", "pineapple", "--db",
                                              str(work / "club.duckdb")]), 2)
    assert text == ("ofcstats: russian is not played in pineapple (only in chinese-13): to "
                    "score those hands under it anyway, ofcstats rescore --what-if russian")


def test_an_error_under_a_progress_bar_stands_on_its_own_line(work: Path) -> None:
    code, shown = run_on_terminal(["players", "--ruleset", "russian", "--variant", "pineapple",
                                   "--db", "club.duckdb"], work)
    assert code == 2
    errors = [line for line in screen_lines(shown) if "ofcstats:" in line]
    assert errors, screen_lines(shown)
    assert all(line.startswith("ofcstats: russian is not played") for line in errors), errors


def test_every_output_makes_its_missing_folders(work: Path) -> None:
    db = str(work / "club.duckdb")
    outputs = {
        "replay": ["replay", "pineapple-american-00001-01", "--rollouts", "4", "-o",
                   "new1/deeper/hand.html", "--db", db],
        "compare": ["compare", "-o", "new2/compare.txt", "--db", db],
        "simulate": ["simulate", "-p", "a:safe,b:safe", "-n", "4", "-o", "new3/s.jsonl"],
        "score": ["score", str(SAMPLE / "criss-cross.jsonl"), "-o", "new4/s.csv", "-f", "csv"],
    }
    for name, args in outputs.items():
        done = run_in_pipe(args, work)
        assert done.returncode == 0, (name, done.stderr)
    for path in ("new1/deeper/hand.html", "new2/compare.txt", "new3/s.jsonl", "new4/s.csv"):
        assert (work / path).is_file(), path


IN_FOLDER = {  # each command writing a file: its arguments, and its file's name in a folder
    "report": (["report", "-o", "{out}"], "report.html"),
    "report --pdf": (["report", "-o", "{out}", "--pdf", "{out}"], "report.html report.pdf"),
    "replay": (["replay", "pineapple-american-00001-01", "--rollouts", "4", "-o", "{out}"],
               "hand.html"),
    "compare": (["compare", "-o", "{out}"], "compare.txt"),
    "players": (["players", "-f", "csv", "-o", "{out}"], "players.csv"),
    "player": (["player", "alice", "-f", "json", "-o", "{out}"], "player.json"),
    "sql": (["sql", "SELECT 1 AS one", "-f", "jsonl", "-o", "{out}"], "query.jsonl"),
    "simulate": (["simulate", "-p", "a:safe,b:safe", "-n", "4", "-o", "{out}"], "hands.jsonl"),
    "score": (["score", str(SAMPLE / "criss-cross.jsonl"), "-o", "{out}"], "scores.txt"),
}


@pytest.mark.parametrize("name", list(IN_FOLDER))
@pytest.mark.parametrize("given", ["a path ending in a slash", "an existing folder"])
def test_an_output_naming_a_folder_is_written_in_it_under_the_commands_name(
        work: Path, name: str, given: str) -> None:
    args, file_name = IN_FOLDER[name]
    folder = work / f"in-{name.replace(' ', '')}-{given.split()[1]}"
    if given == "an existing folder":
        folder.mkdir()
    out = f"{folder}/" if given == "a path ending in a slash" else str(folder)
    db = [] if name in ("simulate", "score") else ["--db", str(work / "club.duckdb")]
    done = run_in_pipe([*(arg.replace("{out}", out) for arg in args), *db], work)
    assert done.returncode == 0, done.stderr
    assert folder.is_dir()
    assert sorted(p.name for p in folder.iterdir()) == file_name.split()
    assert all((folder / each).stat().st_size > 0 for each in file_name.split())
    if name in ("report", "replay", "simulate"):  # the file written is named as usual
        assert str((folder / file_name).resolve()) in done.stdout.decode() \
            or str(folder / file_name) in done.stdout.decode(), done.stdout


def test_a_report_into_a_folder_on_a_terminal_names_the_file_written(work: Path) -> None:
    code, shown = run_on_terminal(["report", "-o", "tty-report/", "--db", "club.duckdb"],
                                  work)
    assert code == 0
    assert (work / "tty-report" / "report.html").is_file()
    lines = [line for line in screen_lines(shown) if line.startswith("report (")]
    assert lines, screen_lines(shown)
    assert lines[-1].endswith(f"-> {(work / 'tty-report' / 'report.html').resolve()}"), lines


def test_an_output_folder_is_not_made_on_the_way_to_an_error(work: Path) -> None:
    result = runner.invoke(app, ["replay", "no-such-hand", "-o", str(work / "new5/h.html"),
                                 "--db", str(work / "club.duckdb")])
    assert result.exit_code == 2
    assert not (work / "new5").exists()


def test_counts_take_the_plural_they_need() -> None:
    assert [plural(n, "ruleset") for n in (0, 1, 2)] == ["0 rulesets", "1 ruleset",
                                                         "2 rulesets"]
    assert plural(1, "variant") == "1 variant"
    assert plural(2_500, "hand") == "2,500 hands"


def test_one_ruleset_rescored_says_one_ruleset(work: Path) -> None:
    result = runner.invoke(app, ["rescore", "-r", "american", "--db",
                                 str(work / "club.duckdb")])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("1 ruleset: "), result.stdout


def test_an_empty_value_is_a_dash_in_a_table_and_null_in_json(work: Path) -> None:
    db = str(work / "club.duckdb")
    table = runner.invoke(app, ["compare", "--variant", "chinese-13", "--db", db])
    assert table.exit_code == 0, table.output
    assert "null" not in table.stdout
    rows = [line for line in table.stdout.splitlines() if "russian" in line]
    assert rows, table.stdout
    assert "| -" in rows[0], table.stdout
    as_json = runner.invoke(app, ["compare", "--variant", "chinese-13", "-f", "json",
                                  "--db", db])
    assert {row["fantasyland_entry_rate"] for row in json.loads(as_json.stdout)} == {None}


TABLE_COMMANDS = {
    "compare": ["compare", "--db", "club.duckdb"],
    "players": ["players", "--db", "club.duckdb"],
    "player": ["player", "alice", "--db", "club.duckdb"],
}


@pytest.mark.parametrize("name", list(TABLE_COMMANDS))
def test_tables_fit_an_80_column_terminal(work: Path, name: str) -> None:
    code, shown = run_on_terminal(TABLE_COMMANDS[name], work, env={"COLUMNS": "80"})
    assert code == 0, shown.decode(errors="replace")
    lines = screen_lines(shown)
    assert any(line.startswith("|") for line in lines)
    too_long = [line for line in lines if len(line) > 80]
    assert not too_long, too_long


@pytest.mark.parametrize("name", list(TABLE_COMMANDS))
def test_wide_shows_every_column_under_its_name(work: Path, name: str) -> None:
    code, shown = run_on_terminal([*TABLE_COMMANDS[name], "--wide"], work,
                                  env={"COLUMNS": "80"})
    assert code == 0, shown.decode(errors="replace")
    header = next(line for line in screen_lines(shown) if line.startswith("| "))
    for column in TABLES[name].columns:
        assert f" {column} " in header, (column, header)


@pytest.mark.parametrize("name", list(TABLE_COMMANDS))
def test_csv_keeps_every_column_in_a_pipe(work: Path, name: str) -> None:
    done = run_in_pipe([*TABLE_COMMANDS[name], "-f", "csv"], work)
    assert done.returncode == 0, done.stderr
    header = done.stdout.decode().splitlines()[0].split(",")
    assert set(TABLES[name].columns) <= set(header), header


def test_a_narrow_terminal_leaves_out_trailing_columns_and_says_so(work: Path) -> None:
    code, shown = run_on_terminal(["compare", "--db", "club.duckdb"], work,
                                  env={"COLUMNS": "40"})
    assert code == 0
    lines = screen_lines(shown)
    assert any("more column" in line and "--wide" in line for line in lines), lines
    assert all(len(line) <= 40 for line in lines if line.startswith("|")), lines


def test_the_review_table_shows_every_street_a_variant_has_and_no_other() -> None:
    streets = {f"street_{n}": [1.5, None] if n <= 5 else [0.25 * n, None]
               for n in range(1, 10)}
    frame = pl.DataFrame({"variant": ["ofc-classic", "pineapple"], "player": ["ann", "bob"],
                          "decisions": [9, 5], "mean_ev_loss": [1.0, 2.0], **streets,
                          "fantasyland_set": [None, None], "total_ev_loss": [9.0, 10.0]})
    frame = frame.with_columns(*(pl.when(pl.col("variant") == "pineapple").then(2.0)
                                 .otherwise(pl.col(f"street_{n}")).alias(f"street_{n}")
                                 for n in range(1, 6)))
    classic, pineapple = by_variant_text(frame, TableFormat.table, "review").split("\n\n")
    assert [cell.strip() for cell in classic.splitlines()[1].split("|")[4:14]] == [
        f"st{n}" for n in range(1, 10)] + ["fl_set"], classic
    assert "st6" not in pineapple, pineapple
    assert "st5" in pineapple, pineapple
    wide = by_variant_text(frame, TableFormat.table, "review", wide=True)
    assert wide.splitlines()[1].index("street_9") < wide.splitlines()[1].index("total_ev_loss")


def test_every_command_on_a_database_takes_quiet() -> None:
    # --quiet means the same everywhere (README): every command that opens a database
    # may wait for a writer, and the note it draws then is what --quiet silences.
    command = typer.main.get_command(app)

    def commands(group: Any, name: str = "") -> Iterator[tuple[str, Any]]:
        for sub_name, sub in getattr(group, "commands", {}).items():
            yield from commands(sub, f"{name} {sub_name}".strip())
        if not hasattr(group, "commands"):
            yield name, group

    options = {name: {o for p in c.params for o in getattr(p, "opts", [])}
               for name, c in commands(command)}
    with_db = [name for name, opts in options.items() if "--db" in opts]
    assert {"ingest", "review", "replay", "db info"} <= set(with_db)
    assert [name for name in with_db if "--quiet" not in options[name]] == []


@pytest.mark.parametrize("table", list(TABLES))
def test_every_count_in_a_table_has_thousands_separators_and_csv_json_keep_the_number(
        table: str) -> None:
    declared = TABLES[table].columns
    frame = pl.DataFrame({"variant": ["pineapple"], **{
        name: [1_000_000] if name in ("hands", "decisions", "seat", "street", "skill_rank")
        else ["x"] if name in ("ruleset", "player", "hand_id") else [False]
        if name == "what_if" else [0.5] for name in declared}, "games": [2_500]})
    text = by_variant_text(frame, TableFormat.table, table, wide=True)
    row = [cell.strip() for cell in text.splitlines()[3].strip("|").split("|")]
    cells = dict(zip([c.strip() for c in text.splitlines()[1].strip("|").split("|")], row,
                     strict=True))
    for name in ("hands", "decisions", "games"):  # counts, a new one (games) as well
        if name in cells:
            assert cells[name] == ("2,500" if name == "games" else "1,000,000"), cells
    for name in ("seat", "street", "skill_rank"):  # numbers that count nothing
        if name in cells:
            assert cells[name] == "1000000", cells
    assert by_variant_text(frame, TableFormat.csv, table) == frame.write_csv()
    assert json.loads(by_variant_text(frame, TableFormat.json, table)) == frame.to_dicts()


@pytest.mark.parametrize("where", ["pipe", "terminal"])
def test_a_players_table_shows_its_hands_with_separators(work: Path, where: str) -> None:
    args = ["players", "--variant", "pineapple", "--db", "club.duckdb"]
    if where == "pipe":
        done = run_in_pipe(args, work)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.decode().splitlines()
    else:
        code, shown = run_on_terminal(args, work)
        assert code == 0
        lines = screen_lines(shown)
    rows = [line for line in lines if line.startswith("| ") and "player" not in line]
    assert rows, lines
    assert all(row.split("|")[2].strip() == "1,000" for row in rows), rows
    csv = run_in_pipe([*args, "-f", "csv"], work).stdout.decode().splitlines()
    assert all(",1000," in line for line in csv[1:]), csv


SCORED = ["score", str(SAMPLE / "pineapple-american.jsonl"), "-r", "american,russian"]


def test_score_on_a_terminal_fits_its_main_columns_and_says_what_is_left_out(
        work: Path) -> None:
    code, shown = run_on_terminal(SCORED, work, env={"COLUMNS": "80"})
    assert code == 0
    lines = [line[line.index("|"):] if "|" in line else line for line in screen_lines(shown)
             if "|" in line or line.startswith("(")]  # (after the progress bar, if any)
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[:6] == ["ruleset", "hand_id", "seat", "player", "points", "royalties"]
    assert all(len(line) <= 80 for line in lines), max(len(line) for line in lines)
    left = len(TABLES["score"].columns) - len(TABLES["score"].wide_only) - len(header)
    assert left > 0
    assert lines[-1] == f"({plural(left, 'more column')} with --wide)"
    assert sum("| russian" in line for line in lines) == 3_000  # every seat of every hand


def test_score_wide_on_a_terminal_has_every_column(work: Path) -> None:
    code, shown = run_on_terminal([*SCORED, "--wide"], work)
    assert code == 0
    lines = [line[line.index("|"):] for line in screen_lines(shown) if "|" in line]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == list(TABLES["score"].columns)


def test_score_in_a_pipe_is_the_whole_table_as_before(work: Path) -> None:
    done = run_in_pipe([*SCORED, "--wide"], work)
    plain = run_in_pipe(SCORED, work)
    assert done.returncode == plain.returncode == 0
    assert done.stdout == plain.stdout  # (--wide changes nothing outside a terminal)
    header = [c.strip() for c in plain.stdout.decode().splitlines()[0].strip("|").split("|")]
    assert header == list(TABLES["score"].columns)
    assert "more column" not in plain.stdout.decode()
