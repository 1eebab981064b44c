"""A session that mixes variants: every hand of every variant reaches every answer,
however its files were loaded (at once, in turn with a rescore between, a session
growing by a file of another variant, ``--rebuild``, the local engine, a database of
schema version 9 upgraded), and ``db info`` says so, or says what is missing."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from handgen import write_jsonl
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

from ofcstats import reading
from ofcstats.analysis import Filters
from ofcstats.cli import app
from ofcstats.logscore import score_batch
from ofcstats.rules import load_ruleset, load_rulesets, preset_names
from ofcstats.simulate import Simulation, parse_players, simulate
from ofcstats.store import MIGRATIONS, Store
from ofcstats.variants import Variant

runner = CliRunner()

SESSION = "night1"
HANDS = 16  # per variant and block
PLAYED = {"pineapple": "american", "chinese-13": "russian", "ofc-classic": "american",
          "ofc-turbo": "american"}
"""The four variants of the session, in the order the table played them, and the ruleset
each was played under."""
COMPARED = ["ruleset", "hand_id", "seat", "player", "variant", "points", "royalties",
            "fouled", "scoops", "scooped", "fantasyland_earned", "fantasyland_next",
            "fantasyland_cards"]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One session of a club night, a file per variant: the table played a block of each
    variant in turn, then each again (the second Pineapple block at another stake)."""
    folder = tmp_path_factory.mktemp("night")
    start = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
    files = {}
    for k, (variant, ruleset) in enumerate(PLAYED.items()):
        sim = Simulation(variant=Variant.parse(variant), ruleset=load_ruleset(ruleset),
                         players=parse_players("ann:aggressive,bob:balanced"),
                         hands=2 * HANDS, seed=k, prefix=variant)
        hands = []
        for i, hand in enumerate(simulate(sim)):
            block = i // HANDS
            at = start + timedelta(hours=4 * block + k, minutes=i % HANDS)
            hand.update(session_id=SESSION, played_at=at.strftime("%Y-%m-%dT%H:%M:%SZ"))
            if variant == "pineapple":
                hand["point_value"] = 0.5 if block else 1.0
            hands.append(hand)
        files[variant] = write_jsonl(folder / f"{variant}.jsonl", hands)
    return files


def _expected(files: list[Path]) -> pl.DataFrame:
    """What ``ofcstats score`` gives for the hands of ``files`` read as one log, under
    every preset played in each hand's variant: the rows the store must answer with."""
    text = "".join(path.read_text(encoding="utf-8") for path in files)
    combined = files[0].with_name("combined-" + "-".join(p.stem for p in files) + ".jsonl")
    combined.write_text(text, encoding="utf-8")
    batch = reading.read_all([combined])
    scored = score_batch(batch, load_rulesets(preset_names()), own_variants=True).results
    variants = batch.hands.select("hand_id", "variant")
    return scored.join(variants, on="hand_id").select(_cast(COMPARED)).sort(COMPARED[:3])


def _cast(columns: list[str]) -> list[pl.Expr]:
    return [pl.col(c).cast(pl.String) if c in ("ruleset", "hand_id", "player", "variant")
            else pl.col(c).cast(pl.Int64) if c not in ("fouled", "fantasyland_earned",
                                                       "fantasyland_next")
            else pl.col(c) for c in columns]


def _answers(db: Path) -> pl.DataFrame:
    """Every row of ``results_named``, as :func:`_expected` gives them."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        frame = con.sql(f"SELECT {', '.join(COMPARED)} FROM results_named").pl()
    finally:
        con.close()
    return frame.select(_cast(COMPARED)).sort(COMPARED[:3])


def _hands_per_answer(db: Path) -> dict[tuple[str, str], int]:
    """Hands ``results_named`` holds, per variant and ruleset."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.sql("SELECT variant, ruleset, count(DISTINCT hand_id) FROM results_named "
                       "GROUP BY ALL").fetchall()
    finally:
        con.close()
    return {(v, r): n for v, r, n in rows}


def _every_ruleset_of(variants: list[str], hands: int = 2 * HANDS
                      ) -> dict[tuple[str, str], int]:
    """Each variant's hands under every preset played in it."""
    return {(v, r.name): hands for r in load_rulesets(preset_names()) for v in variants
            if v in {x.value for x in r.variants}}


def _ok(args: list[str]) -> str:
    return _run(args, 0)


def _run(args: list[str], code: int) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    return result.stdout


def _not_complete(args: list[str]) -> str:
    """``db info`` on a store not complete: exit code 1, what it printed."""
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    return result.stdout


def _complete(db: Path) -> list[dict[str, Any]]:
    """``db info``'s scoring check, asserted complete."""
    info = json.loads(_ok(["db", "info", "--db", str(db), "-f", "json"]))
    assert info["scoring_complete"], info["scoring"]
    assert all(row["scored"] == row["current"] == row["hands"] for row in info["scoring"])
    return info["scoring"]


@pytest.fixture(scope="module")
def at_once(night: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The night's four files loaded by one ingest (which scores them)."""
    db = tmp_path_factory.mktemp("at-once") / "club.duckdb"
    _ok(["ingest", *map(str, night.values()), "--db", str(db), "-q"])
    return db


def test_a_session_of_four_variants_loaded_at_once_reaches_every_answer(
        night: dict[str, Path], at_once: Path) -> None:
    assert _hands_per_answer(at_once) == _every_ruleset_of(list(PLAYED))
    assert_frame_equal(_answers(at_once), _expected(list(night.values())))
    scoring = _complete(at_once)
    assert {(row["variant"], row["ruleset"]) for row in scoring} == set(
        _every_ruleset_of(list(PLAYED)))


def test_one_session_in_two_files_of_two_variants_loaded_in_turn_with_a_rescore_between(
        night: dict[str, Path], tmp_path: Path) -> None:
    db = str(tmp_path / "club.duckdb")
    for variant in ("pineapple", "chinese-13"):
        _ok(["ingest", str(night[variant]), "--db", db, "--no-rescore", "-q"])
        _ok(["rescore", "--db", db, "-q"])
    files = [night["pineapple"], night["chinese-13"]]
    assert _hands_per_answer(Path(db)) == _every_ruleset_of(["pineapple", "chinese-13"])
    assert_frame_equal(_answers(Path(db)), _expected(files))
    _complete(Path(db))
    # Scored again from scratch, the same rows.
    _ok(["rescore", "--rebuild", "--db", db, "-q"])
    assert_frame_equal(_answers(Path(db)), _expected(files))
    _complete(Path(db))


def test_a_session_that_grows_by_a_file_of_another_variant_is_scored_again_whole(
        night: dict[str, Path], tmp_path: Path) -> None:
    db = str(tmp_path / "club.duckdb")
    _ok(["ingest", str(night["ofc-turbo"]), "--db", db, "-q"])
    assert_frame_equal(_answers(Path(db)), _expected([night["ofc-turbo"]]))
    # The 13-card hands came first that night: the Turbo games change with them.
    _ok(["ingest", str(night["chinese-13"]), "--db", db, "-q"])
    files = [night["ofc-turbo"], night["chinese-13"]]
    assert _hands_per_answer(Path(db)) == _every_ruleset_of(["ofc-turbo", "chinese-13"])
    assert_frame_equal(_answers(Path(db)), _expected(files))
    _complete(Path(db))


@pytest.mark.slow  # worker processes started for each rescore
def test_the_local_engine_scores_every_variant_of_a_mixed_session(
        night: dict[str, Path], tmp_path: Path) -> None:
    db = str(tmp_path / "club.duckdb")
    for variant in ("pineapple", "ofc-classic"):
        _ok(["ingest", str(night[variant]), "--db", db, "--no-rescore", "-q"])
        _ok(["rescore", "--db", db, "--engine", "local", "--jobs", "2", "-q"])
    _ok(["ingest", str(night["chinese-13"]), "--db", db, "--no-rescore", "-q"])
    _ok(["rescore", "--db", db, "--engine", "local", "--jobs", "1", "-q"])
    files = [night["pineapple"], night["ofc-classic"], night["chinese-13"]]
    assert_frame_equal(_answers(Path(db)), _expected(files))
    _complete(Path(db))


def _as_version_9_wrote_it(db: Path, *, lost: bool = True) -> None:
    """Turn a scored store into what version 9 of the schema (and the code of its time)
    left: the progress marked per session; with ``lost``, as it was left after loading
    the night's files one by one with a rescore after each: the showdowns of every
    variant but the last scored gone, so that the view lost those variants' results."""
    con = duckdb.connect(str(db))
    try:
        last = con.sql("SELECT variant FROM hands ORDER BY hand_key DESC LIMIT 1").fetchall()
        if lost:
            con.execute("""
                DELETE FROM showdowns WHERE hand_key IN (
                    SELECT hand_key FROM hands WHERE variant <> $last)""",
                        {"last": last[0][0]})
        for table, key, scope in (
                ("scored_sessions", "ruleset_id SMALLINT", "hands"),
                ("showdown_sessions", "natural_mask UTINYINT", "hands")):
            con.execute(f"CREATE TABLE old_{table} ({key} NOT NULL, session_id VARCHAR "
                        f"NOT NULL, {scope} INTEGER NOT NULL)")
            con.execute(f"INSERT INTO old_{table} SELECT {key.split()[0]}, session_id, "
                        f"max({scope}) FROM {table} GROUP BY ALL")
            con.execute(f"DROP TABLE {table}")
            con.execute(f"ALTER TABLE old_{table} RENAME TO {table}")
        con.execute("DELETE FROM schema_version WHERE version > 9")
    finally:
        con.close()


def test_a_database_that_lost_variants_under_version_9_comes_right_after_upgrade_and_rescore(
        night: dict[str, Path], at_once: Path, tmp_path: Path) -> None:
    db = tmp_path / "club.duckdb"
    shutil.copy(at_once, db)
    _as_version_9_wrote_it(db)
    assert MIGRATIONS[8][0] == 9
    lost = _hands_per_answer(db)
    assert len({variant for variant, _ in lost}) == 1  # as version 9 left it
    # Upgraded on opening: the session's results and marks are dropped, the answers
    # refuse to leave its hands out, and a rescore brings every variant back.
    with Store(db):
        pass
    assert _hands_per_answer(db) == {}
    refused = runner.invoke(app, ["players", "--db", str(db)])
    assert refused.exit_code == 1
    assert "not every hand is scored" in refused.output
    assert "run ofcstats rescore" in refused.output
    _ok(["rescore", "--db", str(db), "-q"])
    assert_frame_equal(_answers(db), _expected(list(night.values())))
    _complete(db)


def test_version_10_keeps_the_scoring_of_sessions_of_one_variant_and_one_stake(
        night: dict[str, Path], tmp_path: Path) -> None:
    """Upgrading keeps what version 9 scored right: a session of one variant at one stake
    is not scored again; one at two stakes is (its games, and so its fantasyland
    repeats, now change with the logged stake)."""
    for variant, again in (("ofc-turbo", 0), ("pineapple", 2 * HANDS)):
        db = tmp_path / f"{variant}.duckdb"
        _ok(["ingest", str(night[variant]), "--db", str(db), "-q"])
        before = _answers(db)
        _as_version_9_wrote_it(db, lost=False)
        summary = json.loads(_ok(["rescore", "--db", str(db), "-f", "json"]))
        assert summary["hands"] == again, variant
        assert_frame_equal(_answers(db), before)
        _complete(db)


def test_db_info_says_which_variants_and_rulesets_miss_hands(
        night: dict[str, Path], tmp_path: Path) -> None:
    db = str(tmp_path / "club.duckdb")
    _ok(["ingest", str(night["pineapple"]), "--db", db, "-q"])
    _ok(["ingest", str(night["chinese-13"]), "--db", db, "--no-rescore", "-q"])
    text = _not_complete(["db", "info", "--db", db])
    assert (f"scoring: NOT COMPLETE: 0 of {4 * HANDS:,} hands scored under every ruleset of "
            "their variant; run ofcstats rescore") in text
    # No ruleset of 13-card poker is held yet: said so, whatever the rest.
    assert f"  chinese-13: {2 * HANDS} hands, none scored: no ruleset is scored over this " \
        "variant" in text
    assert f"  pineapple: 0 of {2 * HANDS} hands scored under all 8 of its rulesets\n" in text
    assert f"    american: {2 * HANDS} scored before their session changed" in text
    # A ruleset that scores every variant (a what-if) misses the 13-card hands.
    _ok(["rescore", "--ruleset", "american", "--what-if", "one-six", "--db", db, "-q"])
    info = json.loads(_not_complete(["db", "info", "--db", db, "-f", "json"]))
    rows = {(r["variant"], r["ruleset"]): r for r in info["scoring"]}
    assert rows[("chinese-13", "one-six")]["what_if"] is False
    assert rows[("pineapple", "one-six")]["what_if"] is True
    assert rows[("pineapple", "pokerdom")]["scored"] == 2 * HANDS
    assert rows[("pineapple", "pokerdom")]["current"] == 0
    assert rows[("pineapple", "american")]["current"] == 2 * HANDS
    assert not info["scoring_complete"]
    _ok(["rescore", "--db", db, "-q"])
    _complete(Path(db))
    # Rows lost behind the marks' back (as version 8 lost them): counted from the rows.
    con = duckdb.connect(db)
    con.execute("""DELETE FROM showdowns WHERE hand_key IN (
        SELECT hand_key FROM hands WHERE variant = 'chinese-13' ORDER BY hand_key LIMIT 5)""")
    con.close()
    info = json.loads(_not_complete(["db", "info", "--db", db, "-f", "json"]))
    assert not info["scoring_complete"]
    assert {r["ruleset"]: r["scored"] for r in info["scoring"]
            if r["variant"] == "chinese-13"} == dict.fromkeys(
        ["foreign", "one-six", "russian", "two-four", "two-four-scoop"], 2 * HANDS - 5)
    assert "    russian: 5 not scored\n" in _not_complete(["db", "info", "--db", db])


def test_every_answer_holds_every_hand_of_every_variant(
        night: dict[str, Path], at_once: Path, tmp_path: Path) -> None:
    """players, player, compare, the report's tables and the export, on the mixed
    session: each variant's hands, all of them, under each ruleset the answer shows."""
    db = ["--db", str(at_once)]
    hands = 2 * HANDS
    players = json.loads(_ok(["players", *db, "-f", "json"]))
    assert {(r["variant"], r["ruleset"], r["player"]): r["hands"] for r in players} == {
        (v, ruleset, p): hands for v, ruleset in PLAYED.items() for p in ("ann", "bob")}
    one = json.loads(_ok(["player", "ann", *db, "-f", "json"]))
    assert {(r["variant"], r["ruleset"]): r["hands"] for r in one} == \
        _every_ruleset_of(list(PLAYED), hands)
    compared = json.loads(_ok(["compare", *db, "-f", "json"]))
    assert {(r["variant"], r["ruleset"]): r["hands"] for r in compared} == \
        _every_ruleset_of(list(PLAYED), hands)
    from ofcstats import report  # noqa: PLC0415 - matplotlib, for this test alone

    with Store(at_once, read_only=True) as store:
        data = report.collect(store, Filters())
    assert data.counts == {**dict.fromkeys(PLAYED, (hands, 1)), None: (4 * hands, 1)}
    assert {(r["variant"], r["ruleset"]): r["hands"]
            for r in data.players.filter(pl.col("player") == "ann").to_dicts()} == \
        _every_ruleset_of(list(PLAYED), hands)
    assert set(data.rulesets_shown.items()) == set(PLAYED.items())
    _ok(["export", "--parquet", str(tmp_path / "pq"), *db, "-q"])
    exported = pl.read_parquet(tmp_path / "pq" / "results_named.parquet")
    assert {(v, r): n for v, r, n in exported.group_by("variant", "ruleset").agg(
        pl.col("hand_id").n_unique()).iter_rows()} == _every_ruleset_of(list(PLAYED), hands)


ENTRY = {"ann": ("Qc Qd 2h", "Kc Kd 3h 4s 5s", "Ac Ad 7c 8h 9s"),  # queens on top
         "bob": ("3c 4d 6h", "7d 7s 8c 9c Tc", "Jh Jd Js 2s 2c")}
STAY = {"ann": ("2c 2d 2h", "3c 3d 3h 4s 5s", "Ac Kc Qc Jc 9c"),  # trips on top
        "bob": ("4c 5d 6h", "7d 7s 8h 9h Th", "Jh Jd Js Ks Kd")}


def _hand(hand_id: str, variant: str, minute: int, boards: dict[str, tuple[str, str, str]],
          in_fantasyland: bool) -> dict[str, Any]:
    return {"format": "ofc-hand/1", "hand_id": hand_id, "session_id": SESSION,
            "played_at": f"2026-11-29T18:{minute:02d}:00Z", "variant": variant,
            "players": [{"seat": seat, "name": name, "top": rows[0].split(),
                         "middle": rows[1].split(), "bottom": rows[2].split(),
                         "fantasyland": in_fantasyland and name == "ann"}
                        for seat, (name, rows) in enumerate(boards.items(), start=1)]}


def test_a_rulesets_play_order_and_games_are_the_whole_tables_of_every_variant(
        tmp_path: Path) -> None:
    """American scores the Pineapple hands alone, in the order and games of the whole
    night: the 13-card hand between two fantasylands ends the game and the run, so the
    second one is not a repeat and may stay (read without it, it would be the game's
    second repeat: one per game, docs/rules.md §6)."""
    pineapple = write_jsonl(tmp_path / "pineapple.jsonl", [
        _hand("p1", "pineapple", 0, ENTRY, False), _hand("p2", "pineapple", 1, STAY, True),
        _hand("p3", "pineapple", 3, STAY, True), _hand("p4", "pineapple", 4, STAY, True)])
    chinese = write_jsonl(tmp_path / "chinese.jsonl", [_hand("c1", "chinese-13", 2, STAY,
                                                             False)])
    db = tmp_path / "club.duckdb"
    _ok(["ingest", str(pineapple), "--db", str(db), "-q"])
    _ok(["ingest", str(chinese), "--db", str(db), "-q"])
    answers = _answers(db)
    assert_frame_equal(answers, _expected([pineapple, chinese]))
    stays = answers.filter((pl.col("ruleset") == "american") & (pl.col("player") == "ann"))
    assert dict(zip(stays["hand_id"], stays["fantasyland_next"], strict=True)) == {
        "p1": True, "p2": True, "p3": True, "p4": False}
