"""No command depends on another having run: ``ingest`` scores what it loads, so every
command answers on a freshly loaded database; ``ingest --no-rescore`` leaves the scoring
for later, and until then no answer leaves hands out silently: the commands that answer
from the results name what is missing and the command that fixes it."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from ofcstats.cli import app
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Simulation, parse_players, simulate
from ofcstats.store import Store
from ofcstats.variants import Variant

runner = CliRunner()
PINEAPPLE_HANDS, CHINESE_HANDS = 30, 20
HOUSE = """
name = "house"
variants = ["pineapple"]
royalties = "american"
fantasyland = "standard"
[head_to_head]
row = 2
majority = 0
scoop = 0
"""


def _log(path: Path, variant: str, ruleset: str, hands: int, seed: int,
         session: str | None = None) -> Path:
    sim = Simulation(variant=Variant.parse(variant), ruleset=load_ruleset(ruleset),
                     players=parse_players("ann:aggressive,bob:balanced"), hands=hands,
                     seed=seed, prefix=path.stem)
    lines = []
    for hand in simulate(sim):
        if session is not None:
            hand["session_id"] = session
        lines.append(json.dumps(hand) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("logs")
    return {"pineapple": _log(folder / "pineapple.jsonl", "pineapple", "american",
                              PINEAPPLE_HANDS, 1),
            "chinese": _log(folder / "chinese.jsonl", "chinese-13", "russian",
                            CHINESE_HANDS, 2),
            "later": _log(folder / "later.jsonl", "pineapple", "american", 10, 3,
                          session="pineapple-00000")}


def _run(args: list[str], code: int = 0) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    return result.output


def _players(db: Path) -> dict[tuple[str, str], int]:
    rows = json.loads(_run(["players", "--db", str(db), "-f", "json"]))
    return {(row["variant"], row["player"]): row["hands"] for row in rows}


def test_every_command_answers_on_a_freshly_ingested_database(
        logs: dict[str, Path], tmp_path: Path) -> None:
    """Nothing run before but the load: each command does what it says, exit 0 (those
    that only read open the file read-only: checking the scoring writes nothing)."""
    db = tmp_path / "club.duckdb"
    at = ["--db", str(db)]
    out = _run(["ingest", str(logs["pineapple"]), str(logs["chinese"]), *at])
    # The presets played in the two variants (8 and 5), not those of the others.
    assert out.splitlines()[-1].startswith(
        f"scored: 13 rulesets: {PINEAPPLE_HANDS + CHINESE_HANDS:,} hands in ")
    assert _players(db) == {("pineapple", "ann"): PINEAPPLE_HANDS,
                            ("pineapple", "bob"): PINEAPPLE_HANDS,
                            ("chinese-13", "ann"): CHINESE_HANDS,
                            ("chinese-13", "bob"): CHINESE_HANDS}
    hands = {(r["variant"], r["ruleset"]): r["hands"]
             for r in json.loads(_run(["player", "ann", *at, "-f", "json"]))}
    assert len(hands) == 13
    assert set(hands.values()) == {PINEAPPLE_HANDS, CHINESE_HANDS}
    compared = json.loads(_run(["compare", *at, "-f", "json"]))
    assert {r["variant"] for r in compared} == {"pineapple", "chinese-13"}
    assert "2 variants" in _run(["report", *at, "-o", str(tmp_path / "r.html"), "-q"])
    info = json.loads(_run(["db", "info", *at, "-f", "json"]))
    assert info["scoring_complete"]
    exported = _run(["export", "--parquet", str(tmp_path / "pq"), *at, "-q"])
    assert "warning" not in exported
    assert pl.read_parquet(tmp_path / "pq" / "results_named.parquet").height > 0
    assert "| 4 " in _run(["sql", "SELECT count(DISTINCT player) + 2 AS n FROM seats", *at])
    _run(["score", str(logs["chinese"]), "-f", "csv", "-o", str(tmp_path / "s.csv")])
    _run(["rulesets", "-f", "json"])
    _run(["simulate", "-p", "a:safe,b:random", "-n", "5", "-o", str(tmp_path / "s.jsonl")])
    # Everything ran: a rescore adds nothing, the answers stay.
    assert "0 hands in 0 sessions scored" in _run(["rescore", *at])
    assert _players(db)[("pineapple", "ann")] == PINEAPPLE_HANDS


def test_ingest_no_rescore_leaves_the_answers_refusing_until_a_rescore(
        logs: dict[str, Path], tmp_path: Path) -> None:
    db = tmp_path / "club.duckdb"
    at = ["--db", str(db)]
    out = _run(["ingest", str(logs["pineapple"]), str(logs["chinese"]), *at,
                "--no-rescore"])
    assert "scored" not in out
    said = (f"ofcstats: not every hand is scored: all {CHINESE_HANDS} chinese-13 hands not "
            "under any ruleset (and 1 more: ofcstats db info lists them); run ofcstats "
            "rescore\n")
    for command in (["players"], ["player", "ann"], ["compare"],
                    ["report", "-o", str(tmp_path / "r.html")]):
        result = runner.invoke(app, [*command, *at])
        assert (result.exit_code, result.output) == (1, said), command
    assert not (tmp_path / "r.html").exists()
    exported = runner.invoke(app, ["export", "--parquet", str(tmp_path / "pq"), *at])
    assert exported.exit_code == 0
    assert "ofcstats: warning: the results exported leave hands out: not every hand" \
        in exported.output
    assert "NOT COMPLETE" in _run(["db", "info", *at], 1)
    _run(["rescore", *at, "-q"])
    assert _players(db)[("chinese-13", "bob")] == CHINESE_HANDS


def test_hands_loaded_after_the_last_rescore_are_never_silently_left_out(
        logs: dict[str, Path], tmp_path: Path) -> None:
    """Ten hands join a scored session: the answers refuse (naming the variant, the
    ruleset and the hands) until they are scored, then count them."""
    db = tmp_path / "club.duckdb"
    at = ["--db", str(db)]
    _run(["ingest", str(logs["pineapple"]), *at])
    _run(["ingest", str(logs["later"]), *at, "--no-rescore"])
    refused = runner.invoke(app, ["players", *at, "--ruleset", "american"])
    assert refused.exit_code == 1
    # The session they joined is out of date too (its games and repeats change).
    assert refused.output.startswith("ofcstats: not every hand is scored: ")
    assert " pineapple hands not under american" in refused.output
    assert refused.output.endswith("; run ofcstats rescore\n")
    assert len(refused.output.splitlines()) == 1
    # Another session alone, or another variant, is still answered.
    other = json.loads(_run(["players", *at, "--session", "pineapple-00003", "-f", "json"]))
    assert {row["hands"] for row in other} == {2}
    _run(["rescore", *at, "-q"])
    assert _players(db)[("pineapple", "ann")] == PINEAPPLE_HANDS + 10


def test_ingest_scores_new_hands_under_every_ruleset_the_database_holds(
        logs: dict[str, Path], tmp_path: Path) -> None:
    """A ruleset of the user's own and a what-if, scored once by name, are kept up to
    date by every later ingest, as they were defined then, never scored again whole."""
    db = tmp_path / "club.duckdb"
    at = ["--db", str(db)]
    house = tmp_path / "house.toml"
    house.write_text(HOUSE, encoding="utf-8")
    _run(["ingest", str(logs["pineapple"]), *at])
    _run(["rescore", "-r", str(house), "--what-if", "russian", *at, "-q"])
    house.unlink()  # the file is gone: its definition is the stored one
    summary = json.loads(_run(["ingest", str(logs["chinese"]), str(logs["later"]), *at,
                               "-f", "json"]))
    scored = summary["rescore"]
    assert scored["rebuilt"] == []
    assert {"house", "russian", "american", "one-six"} <= set(scored["rulesets"])
    info = json.loads(_run(["db", "info", *at, "-f", "json"]))
    assert info["scoring_complete"], info["scoring"]
    rows = {(r["variant"], r["ruleset"]): r for r in info["scoring"]}
    assert rows[("pineapple", "house")]["scored"] == PINEAPPLE_HANDS + 10
    assert rows[("pineapple", "russian")]["what_if"]
    assert rows[("pineapple", "russian")]["scored"] == PINEAPPLE_HANDS + 10
    # rescore with no --ruleset brings the held rulesets up to date too.
    _run(["ingest", str(_log(tmp_path / "more.jsonl", "pineapple", "american", 4, 9)), *at,
          "--no-rescore"])
    assert "house" in json.loads(_run(["rescore", *at, "-f", "json"]))["rulesets"]
    assert json.loads(_run(["db", "info", *at, "-f", "json"]))["scoring_complete"]


def test_a_scoring_that_fails_after_the_load_keeps_the_hands_and_says_so(
        logs: dict[str, Path], tmp_path: Path) -> None:
    db = tmp_path / "club.duckdb"
    _run(["ingest", str(logs["pineapple"]), "--db", str(db)])
    with Store(db) as store:  # a ruleset stored by a version that read other keys
        store.con.execute("""UPDATE rulesets SET definition = json_object('name', 'american',
                                                                     'colour', 'red')
                             WHERE name = 'american'""")
    result = runner.invoke(app, ["ingest", str(logs["chinese"]), "--db", str(db)])
    assert result.exit_code == 1
    last = result.output.splitlines()[-1]
    assert last.startswith("ofcstats: "), last
    assert "rescore --rebuild --ruleset" in last, last
    assert last.endswith("(the hands were loaded; they are not scored yet)"), last
    assert f"{CHINESE_HANDS} hands loaded" in result.output
    with Store(db, read_only=True) as store:
        assert store.count("hands") == PINEAPPLE_HANDS + CHINESE_HANDS
