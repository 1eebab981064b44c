"""Names from logs made safe on the way out: no formula in CSV, no escape sequence or bidi
override on the terminal or in the report, no extra column in a table."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import polars as pl
import pytest
from handgen import scored_database
from typer.testing import CliRunner

from ofcstats import sanitize
from ofcstats.cli import app
from ofcstats.report import collect, write_report
from ofcstats.review import replay
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Player, Simulation, simulate
from ofcstats.store import Store
from ofcstats.variants import Variant

runner = CliRunner()
FORMULA = '=HYPERLINK("http://evil.example","click")'
RED = "\x1b[31mred"
EVIL = "\u202eevil"
PIPE = "a|b"
BELL = "bell\x07nul\x00c1\x9b"
NAMES = [FORMULA, RED, EVIL, PIPE, BELL, "+1+cmd", "@sum"]
#: What no output may carry raw: ESC, BEL, NUL, CSI (C1) and the bidi override.
RAW = ["\x1b", "\x07", "\x00", "\x9b", "\u202e"]


def _log(path: Path) -> Path:
    lines = []
    for seed, names in ((3, NAMES[:3]), (4, NAMES[3:6]), (5, [NAMES[6], "plain", "-6"])):
        sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                         players=[Player(n, "safe") for n in names], hands=12, seed=seed)
        lines += [json.dumps(h) + "\n" for h in simulate(sim)]
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _log(tmp_path_factory.mktemp("hostile") / "hostile.jsonl")


@pytest.fixture(scope="module")
def database(log: Path) -> Path:
    return scored_database(log, ["american"])


def _no_raw(text: str) -> None:
    for char in RAW:
        assert char not in text, repr(char)


def _table_rows(text: str) -> list[list[str]]:
    """The cells of a markdown-style table, split at unescaped ``|``."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|-"):
            cells = line.replace("\\|", "\0").strip("|").split("|")
            rows.append([c.strip().replace("\0", "|") for c in cells])
    return rows


def test_visible_escapes_control_and_bidi_characters() -> None:
    assert sanitize.visible(RED) == "\\x1b[31mred"
    assert sanitize.visible(EVIL) == "\\u202eevil"
    assert sanitize.visible(BELL) == "bell\\x07nul\\x00c1\\x9b"
    assert sanitize.visible("\u2066x\u2069\x7f") == "\\u2066x\\u2069\\x7f"
    assert sanitize.visible("O'Brien 🂡 é") == "O'Brien 🂡 é"  # printable text untouched


def test_csv_cells_that_start_a_formula_are_prefixed_and_numbers_are_not() -> None:
    frame = pl.DataFrame({"name": [FORMULA, "+1+cmd", "-2+3", "@sum", "\tx", "\rx", "-6",
                                   "+1.5", "plain", None], "points": list(range(-6, 4))})
    rows = list(csv.reader(io.StringIO(sanitize.csv_frame(frame).write_csv())))[1:]
    assert [r[0] for r in rows] == ["'" + FORMULA, "'+1+cmd", "'-2+3", "'@sum", "'\tx",
                                    "'\rx", "-6", "+1.5", "plain", ""]
    assert [r[1] for r in rows] == [str(n) for n in range(-6, 4)]  # numbers stay numbers


def test_json_output_is_the_same_data_with_c1_and_bidi_escaped() -> None:
    text = sanitize.json_text(pl.DataFrame({"name": [BELL, EVIL]}).write_ndjson())
    _no_raw(text)
    assert [json.loads(line)["name"] for line in text.splitlines()] == [BELL, EVIL]


def test_players_table_escapes_control_bidi_and_separators(database: Path) -> None:
    result = runner.invoke(app, ["players", "--db", str(database)])
    assert result.exit_code == 0, result.output
    _no_raw(result.stdout)
    rows = _table_rows(result.stdout)
    header = rows[0]
    assert all(len(r) == len(header) for r in rows)  # a | in a name adds no column
    shown = {r[header.index("player")] for r in rows[1:]}
    assert {"\\x1b[31mred", "\\u202eevil", "a|b", "bell\\x07nul\\x00c1\\x9b",
            FORMULA} <= shown


def test_players_csv_prefixes_formulas(database: Path) -> None:
    result = runner.invoke(app, ["players", "--db", str(database), "-f", "csv"])
    assert result.exit_code == 0, result.output
    players = {r["player"] for r in csv.DictReader(io.StringIO(result.stdout))}
    assert {"'" + FORMULA, "'+1+cmd", "'@sum", "-6", PIPE, "plain"} <= players
    assert FORMULA not in players


def test_sql_output_is_sanitised_in_every_format(database: Path) -> None:
    query = "SELECT DISTINCT player, -6 AS n FROM seats ORDER BY player"
    table = runner.invoke(app, ["sql", query, "--db", str(database)])
    assert table.exit_code == 0, table.output
    _no_raw(table.stdout)
    rows = _table_rows(table.stdout)
    assert all(len(r) == 2 for r in rows)
    assert "\\u202eevil" in {r[0] for r in rows}
    rows_csv = list(csv.DictReader(io.StringIO(runner.invoke(
        app, ["sql", query, "--db", str(database), "-f", "csv"]).stdout)))
    assert {"'" + FORMULA, "'@sum"} <= {r["player"] for r in rows_csv}
    assert {r["n"] for r in rows_csv} == {"-6"}
    lines = runner.invoke(app, ["sql", query, "--db", str(database), "-f", "jsonl"]).stdout
    _no_raw(lines)
    assert set(NAMES) <= {json.loads(line)["player"] for line in lines.splitlines()}
    whole = runner.invoke(app, ["sql", query, "--db", str(database), "-f", "json"]).stdout
    _no_raw(whole)
    assert set(NAMES) <= {r["player"] for r in json.loads(whole)}


def test_score_csv_prefixes_formulas_and_keeps_negative_points(log: Path) -> None:
    result = runner.invoke(app, ["score", str(log), "-f", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    players = {r["player"] for r in rows}
    assert {"'" + FORMULA, "'+1+cmd", "'@sum", "-6"} <= players
    assert not players & {FORMULA, "+1+cmd", "@sum"}
    assert any(r["points"].startswith("-") for r in rows)  # numbers are not prefixed
    table = runner.invoke(app, ["score", str(log)]).stdout
    _no_raw(table)


def test_report_shows_control_and_bidi_characters_escaped(database: Path,
                                                          tmp_path: Path) -> None:
    with Store(database) as store:
        data = collect(store)
    page = write_report(data, tmp_path / "report.html").html.read_text(encoding="utf-8")
    _no_raw(page)
    assert "\\x1b[31mred" in page
    assert "\\u202eevil" in page
    assert "bell\\x07nul\\x00c1\\x9b" in page


def test_replay_page_shows_control_and_bidi_characters_escaped() -> None:
    hand = {"hand_id": "h\u202e1", "session_id": "s\x1b", "variant": "pineapple",
            "played_at": None, "ruleset": "american"}
    seats = pl.DataFrame({"seat": [1], "player": [RED], "fantasyland": [False],
                          "streets": [None], "cards": [None], "rows": [None]})
    page = replay.render(hand, seats, pl.DataFrame({"seat": [], "street": []}))
    _no_raw(page)
    assert "Hand h\\u202e1" in page
    assert "\\x1b[31mred" in page
