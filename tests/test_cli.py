"""The command line: score, rulesets, and help everywhere."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import typer.main
from handgen import board_hand, random_hand, write_jsonl
from typer.testing import CliRunner

from ofcstats.cli import app
from ofcstats.rules import load_ruleset, preset_names

runner = CliRunner()
REQUIRED = {"hand_id", "seat", "player", "ruleset", "points", "royalties", "fouled",
            "fantasyland_next"}


@pytest.fixture
def log(tmp_path: Path) -> Path:
    rng = random.Random(3)
    hands = [random_hand(rng, f"h{i}", "pineapple", 3) for i in range(4)]
    hands.append(board_hand("b1", [("Ah Kc 3d", "Qs Qd 9c 8c 2h", "7c 7d 7h 7s 4c"),
                                   ("Kd Jc 2s", "Js Jd Tc 6h 5d", "3h 5h 8h Th Kh")],
                            ruleset="pokerstars"))
    return write_jsonl(tmp_path / "session.jsonl", hands)


def records(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def test_score_prints_one_record_per_hand_seat_and_ruleset(log: Path) -> None:
    result = runner.invoke(app, ["score", str(log), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    rows = records(result.stdout)
    assert len(rows) == 4 * 3 + 2
    assert set(rows[0]) >= REQUIRED


def test_score_defaults_to_each_hands_own_ruleset_else_american(log: Path) -> None:
    rows = records(runner.invoke(app, ["score", str(log), "-f", "jsonl"]).stdout)
    assert {r["ruleset"] for r in rows if r["hand_id"] == "b1"} == {"pokerstars"}
    assert {r["ruleset"] for r in rows if r["hand_id"] != "b1"} == {"american"}
    b1 = {r["seat"]: r["points"] for r in rows if r["hand_id"] == "b1"}
    assert b1 == {1: 12, 2: -12}


def test_score_under_named_rulesets_and_all_of_them(log: Path) -> None:
    named = records(runner.invoke(
        app, ["score", str(log), "-r", "russian", "-r", "western", "-f", "jsonl"]).stdout)
    assert {r["ruleset"] for r in named} == {"russian", "western"}
    assert {r["ruleset"] for r in named if r["what_if"]} == {"russian"}  # OFC hands only
    every = records(runner.invoke(app, ["score", str(log), "--all-rulesets", "-f", "jsonl"])
                    .stdout)
    # Each of the 14 seats under every preset played in its variant (all of them OFC).
    ofc = [n for n in preset_names() if load_ruleset(n).plays("pineapple")]
    assert len(every) == 14 * len(ofc)
    assert not any(r["what_if"] for r in every)


def test_score_writes_csv_and_a_table(log: Path) -> None:
    csv = runner.invoke(app, ["score", str(log), "-f", "csv"]).stdout.splitlines()
    assert set(csv[0].split(",")) >= REQUIRED
    assert len(csv) == 15
    table = runner.invoke(app, ["score", str(log)]).stdout.splitlines()
    assert "hand_id" in table[0]
    assert len(table) == 2 + 14  # header, rule, one line per record


def test_score_skips_malformed_hands_reports_file_and_line_and_exits_1(
        tmp_path: Path, log: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines()
    lines.insert(1, "{not json")
    broken = json.loads(lines[3])
    broken["players"][0]["streets"][0]["dealt"][0] = "Zz"
    lines[3] = json.dumps(broken)
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["score", str(bad), "-f", "jsonl"])
    assert result.exit_code == 1
    assert f"{bad}:2: not valid JSON" in result.stderr
    assert f"{bad}:4: hand h2: seat 1 street 1: 'Zz' is not a card" in result.stderr
    assert len(records(result.stdout)) == 3 * 3 + 2


def test_score_reports_a_hand_with_an_unknown_ruleset(tmp_path: Path) -> None:
    hand = board_hand("x1", [("Ah Kc 3d", "Qs Qd 9c 8c 2h", "7c 7d 7h 7s 4c"),
                             ("Kd Jc 2s", "Js Jd Tc 6h 5d", "3h 5h 8h Th Kh")],
                      ruleset="vegas")
    path = write_jsonl(tmp_path / "x.jsonl", [hand])
    result = runner.invoke(app, ["score", str(path)])
    assert result.exit_code == 1
    assert "hand x1: unknown ruleset 'vegas'" in result.stderr
    assert runner.invoke(app, ["score", str(path), "-r", "american"]).exit_code == 0


def test_score_of_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["score", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2
    assert "nope.jsonl" in result.stderr


def test_a_bad_ruleset_name_is_a_usage_error(log: Path) -> None:
    result = runner.invoke(app, ["score", str(log), "-r", "vegas"])
    assert result.exit_code == 2
    assert "unknown ruleset 'vegas'" in result.stderr


def test_rulesets_lists_every_preset_and_policy_one_line_each() -> None:
    result = runner.invoke(app, ["rulesets"])
    assert result.exit_code == 0
    for name in preset_names():
        assert sum(line.split()[0] == name for line in result.stdout.splitlines()
                   if line.strip()) == 1
    assert "progressive" in result.stdout
    assert "[not in the sources]" in result.stdout


def test_rulesets_show_prints_one_in_full() -> None:
    result = runner.invoke(app, ["rulesets", "show", "finnish-spade"])
    assert result.exit_code == 0
    assert "spade_bonus: True" in result.stdout
    assert "bottom: trips 0, straight 2, flush 4" in result.stdout
    policy = runner.invoke(app, ["rulesets", "show", "progressive"])
    assert "cards on entry" in policy.stdout
    missing = runner.invoke(app, ["rulesets", "show", "nope"])
    assert missing.exit_code == 2


def _commands(group: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    click_group = typer.main.get_command(app) if group is None else group
    found = []
    for name, command in getattr(click_group, "commands", {}).items():
        found.append((*prefix, name))
        found.extend(_commands(command, (*prefix, name)))
    return found


@pytest.mark.parametrize("command", _commands(None))
def test_every_command_has_help_with_an_example(command: tuple[str, ...]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.stdout, command


@pytest.mark.parametrize("where", ["pipe", "terminal"])
def test_ingest_of_only_rejected_hands_is_one_line_exit_1_and_no_database(
        tmp_path: Path, where: str) -> None:
    from test_cli_consistency import screen_lines  # noqa: PLC0415
    from test_cli_terminal import run_in_pipe, run_on_terminal  # noqa: PLC0415

    (tmp_path / "bad.jsonl").write_text("garbage\nmore garbage\n", encoding="utf-8")
    args = ["ingest", "bad.jsonl", "--db", "new.duckdb"]
    if where == "pipe":
        done = run_in_pipe(args, tmp_path)
        code, lines = done.returncode, done.stderr.decode().splitlines()
        assert done.stdout == b""
    else:
        code, shown = run_on_terminal(args, tmp_path)
        lines = [line for line in screen_lines(shown) if "ofcstats" in line]  # (no bar)
    assert code == 1
    assert lines == [
        "ofcstats: bad.jsonl: cannot tell the format from the first line; name it with "
        "--input-format (ofc-hand, chipzen, boards-csv); nothing loaded (1 rejected), "
        "new.duckdb not created: fix the log (its format: docs/format.md) and load it again"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]
