"""No hand unchecked in silence: hands logged under a ruleset the database does not
know are counted and named by ingest, db info, player and the report, never counted as
agreeing with the logs; ``ingest -r FILE`` registers the ruleset with the load, so they
are scored under it and their logged points checked at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from ofcstats import analysis
from ofcstats.cli import app
from ofcstats.store import Store

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "data" / "sample" / "pineapple-progressive.jsonl"
RULESET = str(ROOT / "data" / "rulesets" / "pineapple-progressive.toml")
NOT_CHECKED = ("700 hands not checked: ruleset pineapple-progressive unknown; supply its "
               "file: ofcstats ingest -r FILE or ofcstats rescore -r FILE")


@pytest.fixture(scope="module")
def raised(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The house-ruleset sample log with one logged result raised by 50 points: the log,
    and the hand and player whose result it is."""
    folder = tmp_path_factory.mktemp("house")
    lines = LOG.read_text(encoding="utf-8").splitlines()
    hand = json.loads(lines[123])
    seat = hand["players"][1]
    seat["reported_points"] += 50
    lines[123] = json.dumps(hand)
    log = folder / "house.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log, hand["hand_id"], seat["name"]


def _db(folder: Path, log: Path, *more: str) -> tuple[Path, Result]:
    db = folder / "club.duckdb"
    result = runner.invoke(app, ["ingest", str(log), "--db", str(db), "--quiet", *more])
    return db, result


def test_ingest_names_the_unknown_ruleset_and_how_to_supply_it(
        raised: tuple[Path, str, str], tmp_path: Path) -> None:
    db, result = _db(tmp_path, raised[0])
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [f"ofcstats: {NOT_CHECKED}"]
    with Store(db, read_only=True) as store:
        assert store.count("hands") == 700, "the hands are loaded all the same"


def test_a_raised_result_is_reported_as_not_checked_when_the_ruleset_is_not_supplied(
        raised: tuple[Path, str, str], tmp_path: Path) -> None:
    log, _, player = raised
    db, _ = _db(tmp_path, log)
    shown = runner.invoke(app, ["player", player, "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert NOT_CHECKED in shown.stdout
    assert "differ from the re-score" not in shown.stdout
    as_csv = runner.invoke(app, ["player", player, "--db", str(db), "-f", "csv"])
    assert as_csv.exit_code == 0, as_csv.output
    assert as_csv.stderr == f"ofcstats: warning: {NOT_CHECKED}\n", "said beside the rows"
    assert "not checked" not in as_csv.stdout
    info = runner.invoke(app, ["db", "info", "--db", str(db)])
    assert info.exit_code == 1, "the store is not complete"
    assert f"scoring: NOT COMPLETE: {NOT_CHECKED}" in info.stdout
    assert "every stored hand scored" not in info.stdout
    data = json.loads(runner.invoke(app, ["db", "info", "--db", str(db), "-f", "json"]).stdout)
    assert not data["scoring_complete"]
    assert data["unchecked"] == [{"ruleset": "pineapple-progressive", "variant": "pineapple",
                                  "hands": 700, "reported": 700, "why": "unknown"}]
    html = tmp_path / "report.html"
    made = runner.invoke(app, ["report", "--db", str(db), "-o", str(html), "--quiet"])
    assert made.exit_code == 0, made.output
    text = html.read_text(encoding="utf-8")
    assert NOT_CHECKED in text
    assert "Every logged <code>reported_points</code> agrees" not in text


def test_a_raised_result_is_caught_once_the_ruleset_is_supplied_to_ingest(
        raised: tuple[Path, str, str], tmp_path: Path) -> None:
    log, hand_id, player = raised
    db, result = _db(tmp_path, log, "-r", RULESET)
    assert result.exit_code == 0, result.output
    assert "not checked" not in result.output
    _caught(db, hand_id, player, tmp_path)
    info = runner.invoke(app, ["db", "info", "--db", str(db)])
    assert info.exit_code == 0, info.output
    assert "scoring: every stored hand scored under every ruleset of its variant" in info.stdout


def test_rescore_with_the_ruleset_file_checks_what_ingest_could_not(
        raised: tuple[Path, str, str], tmp_path: Path) -> None:
    log, hand_id, player = raised
    db, _ = _db(tmp_path, log)
    done = runner.invoke(app, ["rescore", "-r", RULESET, "--db", str(db), "--quiet"])
    assert done.exit_code == 0, done.output
    _caught(db, hand_id, player, tmp_path)


def test_ingest_without_scoring_registers_the_ruleset_for_the_next_rescore(
        raised: tuple[Path, str, str], tmp_path: Path) -> None:
    log, hand_id, player = raised
    db, result = _db(tmp_path, log, "-r", RULESET, "--no-rescore")
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["rescore", "--db", str(db), "--quiet"]).exit_code == 0
    _caught(db, hand_id, player, tmp_path)


def _caught(db: Path, hand_id: str, player: str, folder: Path) -> None:
    """The raised result is the one seat whose logged points differ, by 50, in
    ``player`` and in the report, and no hand is left not checked."""
    shown = runner.invoke(app, ["player", player, "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert "1 seat where the logged points differ from the re-score" in shown.stdout
    assert hand_id in shown.stdout
    assert "not checked" not in shown.output
    with Store(db, read_only=True) as store:
        assert analysis.not_checked(store, analysis.Filters()) is None
        rows = store.query("""
            SELECT hand_id, player, points - reported_points AS difference
            FROM results_named WHERE ruleset = played_ruleset AND reported_points <> points
        """).rows()
    assert rows == [(hand_id, player, -50.0)]
    html = folder / "caught.html"
    made = runner.invoke(app, ["report", "--db", str(db), "-o", str(html), "--quiet"])
    assert made.exit_code == 0, made.output
    text = html.read_text(encoding="utf-8")
    assert "1 seat results differ from the points the log reported" in text
    assert "not checked" not in text


def test_a_preset_logged_under_a_variant_it_is_not_played_under_says_so(
        tmp_path: Path) -> None:
    """Not only unknown names: a ruleset the database holds but does not score over the
    hand's variant checks nothing either, and the fix is a what-if."""
    lines = LOG.read_text(encoding="utf-8").splitlines()[:40]
    log = tmp_path / "mislabelled.jsonl"
    log.write_text("\n".join(line.replace('"ruleset":"pineapple-progressive"',
                                          '"ruleset":"russian"') for line in lines) + "\n",
                   encoding="utf-8")
    db, result = _db(tmp_path, log)
    assert result.exit_code == 1
    assert ("40 hands not checked: ruleset russian not played under pineapple; score it "
            "as a what-if: ofcstats rescore --what-if russian") in result.stderr
    done = runner.invoke(app, ["rescore", "--what-if", "russian", "--db", str(db), "--quiet"])
    assert done.exit_code == 0, done.output
    assert runner.invoke(app, ["db", "info", "--db", str(db)]).exit_code == 0


def test_the_check_counts_only_the_players_hands(raised: tuple[Path, str, str],
                                                tmp_path: Path) -> None:
    log, _, player = raised
    # 40 more hands in which the player does not sit (another name in the seat).
    lines = log.read_text(encoding="utf-8").splitlines()
    others = [json.loads(line) for line in lines[:40]]
    for hand in others:
        hand["hand_id"] += "-other"
        for seat in hand["players"]:
            if seat["name"] == player:
                seat["name"] = "zoe"
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join([*lines, *map(json.dumps, others)]) + "\n", encoding="utf-8")
    db, _ = _db(tmp_path, mixed)
    with Store(db, read_only=True) as store:
        everyone = store.unchecked()
        theirs = store.unchecked(analysis.Filters(players=[player]))
        seated = store.query("SELECT count(DISTINCT hand_key) FROM seats WHERE player = ?",
                             [player]).item()
    assert everyone.get_column("hands").to_list() == [740]
    assert theirs.get_column("hands").to_list() == [seated] == [700]
