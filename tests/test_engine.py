"""Sharded rescore and review (``--engine local|ray``): the rows of the one-process path,
from the store or a Parquet export; a dead worker's shard run again; an interrupted run
finished by the next without a partial shard."""

from __future__ import annotations

import gc
import os
import random
import shutil
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from handgen import random_hand, write_jsonl
from test_pipeline import random_log
from typer.testing import CliRunner

from ofcstats import engine, pipeline
from ofcstats.cli import app
from ofcstats.config import engine_config
from ofcstats.errors import UsageError
from ofcstats.ingest import ingest
from ofcstats.review.store import Selection, Settings, run
from ofcstats.rules import load_rulesets
from ofcstats.simulate import Player, Simulation
from ofcstats.simulate import write_jsonl as write_simulation
from ofcstats.store import Store
from ofcstats.variants import Variant

runner = CliRunner()
RULESETS = ["american", "western", "russian", "classic-kush", "finnish-spade", "pokerstars"]
SCORED_TABLES = ("results", "showdowns", "scored_sessions", "showdown_sessions")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of hands of every variant in 12 sessions, not yet scored."""
    folder = tmp_path_factory.mktemp("engine")
    db = folder / "club.duckdb"
    ingest([random_log(folder / "club.jsonl", 240, seed=5, sessions=12)], db)
    return db


@pytest.fixture(scope="module")
def reference(loaded: Path) -> dict[str, list[tuple[object, ...]]]:
    """The rows the one-process rescore writes."""
    copy = loaded.with_name("reference.duckdb")
    shutil.copy(loaded, copy)
    with Store(copy) as store:
        pipeline.rescore(store, load_rulesets(RULESETS))
    return _scored(copy)


def _scored(db: Path) -> dict[str, list[tuple[object, ...]]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {table: con.sql(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
                for table in SCORED_TABLES}
    finally:
        con.close()


def _whole_sessions(db: Path) -> int:
    """Sessions' variants marked scored (per ruleset), after checking that each has all
    its rows and that no other session has any."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.sql("""
            SELECT s.ruleset_id, s.session_id, s.variant, s.hands, count(DISTINCT r.hand_key)
            FROM scored_sessions s JOIN hands h USING (session_id, variant)
            LEFT JOIN results r ON r.hand_key = h.hand_key AND r.ruleset_id = s.ruleset_id
            GROUP BY ALL""").fetchall()
        stray = con.sql("""
            SELECT count(*) FROM results r JOIN hands h USING (hand_key)
            WHERE NOT EXISTS (SELECT 1 FROM scored_sessions s
                              WHERE s.ruleset_id = r.ruleset_id
                                AND s.session_id = h.session_id)""").fetchall()[0][0]
    finally:
        con.close()
    assert all(hands == found for _, _, _, hands, found in rows)
    assert stray == 0
    return len(rows)


def _copy(loaded: Path, tmp_path: Path) -> Path:
    db = tmp_path / "club.duckdb"
    shutil.copy(loaded, db)
    return db


def test_local_engine_writes_the_rows_of_one_process(
        loaded: Path, reference: dict[str, list[tuple[object, ...]]], tmp_path: Path) -> None:
    db = _copy(loaded, tmp_path)
    with Store(db) as store:
        summary = engine.rescore(store, load_rulesets(RULESETS),
                                 engine.Engine(jobs=2, shard_hands=50))
    assert summary.hands == 240
    assert _scored(db) == reference


def test_local_engine_reads_the_hands_from_a_parquet_export(
        loaded: Path, reference: dict[str, list[tuple[object, ...]]], tmp_path: Path) -> None:
    db = _copy(loaded, tmp_path)
    with Store(db) as store:
        store.export_parquet(tmp_path / "pq", shard_hands=70)
        engine.rescore(store, load_rulesets(RULESETS),
                       engine.Engine(jobs=1, source=tmp_path / "pq"))
    assert _scored(db) == reference


def test_an_export_older_than_the_store_is_refused(loaded: Path, tmp_path: Path) -> None:
    db = _copy(loaded, tmp_path)
    with Store(db) as store:
        store.export_parquet(tmp_path / "pq")
    ingest([write_jsonl(tmp_path / "more.jsonl", [random_hand(random.Random(1), "late")
                                                  | {"session_id": "club-s3"}])], db)
    with Store(db) as store, pytest.raises(UsageError,
                                           match=r"holds 20 hands of session club-s3 \(21 hands"):
        engine.rescore(store, load_rulesets(RULESETS), engine.Engine(source=tmp_path / "pq"))


@pytest.mark.slow
def test_a_worker_that_dies_has_its_shard_run_again(
        loaded: Path, reference: dict[str, list[tuple[object, ...]]], tmp_path: Path) -> None:
    db = _copy(loaded, tmp_path)
    marker = tmp_path / "died"
    with Store(db) as store:
        engine.rescore(store, load_rulesets(RULESETS),
                       engine.Engine(jobs=2, shard_hands=50, fault_marker=marker))
    assert marker.exists()  # a worker did die
    assert _scored(db) == reference


@pytest.mark.slow
def test_a_shard_that_keeps_killing_its_worker_writes_no_part_of_it(
        loaded: Path, reference: dict[str, list[tuple[object, ...]]], tmp_path: Path) -> None:
    db = _copy(loaded, tmp_path)
    with Store(db) as store, pytest.raises(engine.EngineError, match=r"died \(once, 0 retries\)"):
        engine.rescore(store, load_rulesets(RULESETS),
                       engine.Engine(jobs=2, retries=0, shard_hands=50,
                                     fault_marker=tmp_path / "died"))
    # Shards finished before the worker died may be written; never a part of one.
    assert _whole_sessions(db) < len(reference["scored_sessions"])


class _InterruptedError(Exception):
    pass


def test_an_interrupted_run_is_finished_by_the_next_without_a_partial_shard(
        loaded: Path, reference: dict[str, list[tuple[object, ...]]], tmp_path: Path) -> None:
    db = _copy(loaded, tmp_path)
    rulesets = load_rulesets(RULESETS)
    written: list[int] = []

    def stop_after_two(done: int, total: int) -> None:
        written.append(done)
        if len(written) == 2:
            raise _InterruptedError

    with Store(db) as store, pytest.raises(_InterruptedError):
        engine.rescore(store, rulesets, engine.Engine(jobs=2, shard_hands=50),
                       progress=stop_after_two)
    assert _whole_sessions(db)
    with Store(db) as store:
        rest = engine.rescore(store, rulesets, engine.Engine(jobs=2, shard_hands=50))
        whole = pipeline.plan(store, rulesets)
    assert 0 < rest.hands < written[-1] + rest.hands
    assert whole.groups == []  # nothing left to score
    assert _scored(db) == reference


def test_config_file_engine_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert engine_config() == {}
    Path("ofcstats.toml").write_text('[engine]\nengine = "ray"\njobs = 3\n', encoding="utf-8")
    assert engine_config() == {"engine": "ray", "jobs": 3}
    other = tmp_path / "other.toml"
    for text, message in (('[engine]\nengine = "spark"\n', "local or ray, not 'spark'"),
                          ("[engine]\njobs = 0\n", "jobs must be at least 1"),
                          ('[engine]\njobs = "2"\n', "jobs must be a int"),
                          ("[engine]\nworkers = 2\n", "no key 'workers'"),
                          ("[engine\n", "not valid TOML")):
        other.write_text(text, encoding="utf-8")
        with pytest.raises(UsageError, match=message):
            engine_config(other)
    with pytest.raises(UsageError, match="no such configuration file"):
        engine_config(tmp_path / "missing.toml")


def test_rescore_command_with_engine_and_parquet_export(
        loaded: Path, reference: dict[str, list[tuple[object, ...]]], tmp_path: Path) -> None:
    db = _copy(loaded, tmp_path)
    at = ["--db", str(db)]
    assert runner.invoke(app, ["export", "--parquet", str(tmp_path / "pq"), "--shard-hands",
                               "60", *at]).exit_code == 0
    config = tmp_path / "scale.toml"
    config.write_text("[engine]\nengine = \"local\"\njobs = 2\nshard_hands = 40\n",
                      encoding="utf-8")
    done = runner.invoke(app, ["rescore", "-r", ",".join(RULESETS), "--config", str(config),
                               "--from", str(tmp_path / "pq"), *at])
    assert done.exit_code == 0, done.output
    assert _scored(db) == reference
    for args, message in ((["--from", str(tmp_path)], "not a Parquet export"),
                          (["--engine", "spark"], "spark"),
                          (["--jobs", "0"], "--jobs 0: must be from 1 to 1,024"),
                          (["--config", str(tmp_path / "none.toml")], "no such configuration")):
        wrong = runner.invoke(app, ["rescore", *args, *at])
        assert wrong.exit_code == 2, args
        assert message in wrong.output



def test_engine_for_the_options_then_the_configuration(tmp_path: Path) -> None:
    config = tmp_path / "scale.toml"
    config.write_text("[engine]\njobs = 3\n", encoding="utf-8")
    assert engine.engine_for(None, None, None, None, config, jobs_shard=True) is None
    assert engine.engine_for(None, 2, None, None, config, jobs_shard=False) is None
    chosen = engine.engine_for(None, 2, None, None, config, jobs_shard=True)
    assert chosen is not None
    assert (chosen.kind, chosen.jobs) == ("local", 2)
    chosen = engine.engine_for("local", None, None, None, config, jobs_shard=False)
    assert chosen is not None
    assert chosen.jobs == 3
    chosen = engine.engine_for(None, None, "ray://head:10001", None, config, jobs_shard=False)
    assert chosen is not None
    assert chosen.kind == "ray"
    with pytest.raises(UsageError, match="not a Parquet export of ofcstats"):
        engine.engine_for(None, None, None, tmp_path, config, jobs_shard=False)
    with pytest.raises(UsageError, match="--jobs must be at least 1, not 0"):
        engine.engine_for("local", 0, None, None, config, jobs_shard=False)


# Review.


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Pineapple hands logged street by street, in four sessions."""
    folder = tmp_path_factory.mktemp("review-engine")
    logs = []
    for seed in range(4):
        sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_rulesets(["american"])[0],
                         hands=4, seed=seed, rollouts=10,
                         players=[Player("rand", "random"), Player("bal", "balanced")])
        logs.append(folder / f"sim{seed}.jsonl")
        write_simulation(sim, logs[-1])
    db = folder / "sim.duckdb"
    ingest(logs, db)
    return db


SETTINGS = Settings(rollouts=8, seed=3)
DECISION = "SELECT * EXCLUDE (player) FROM decisions ORDER BY hand_key, seat, street"


def _decisions(db: Path) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.sql(DECISION).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def reviewed(simulated: Path) -> list[tuple[object, ...]]:
    copy = simulated.with_name("reviewed.duckdb")
    shutil.copy(simulated, copy)
    with Store(copy) as store:
        run(store, Selection(), SETTINGS)
    return _decisions(copy)


def test_review_on_the_local_engine_gives_the_same_decisions(
        simulated: Path, reviewed: list[tuple[object, ...]], tmp_path: Path) -> None:
    db = _copy(simulated, tmp_path)
    with Store(db) as store:
        summary = engine.review(store, Selection(), SETTINGS,
                                engine.Engine(jobs=2, review_shard_hands=4))
    assert len(summary.shards) == 4  # one per session
    assert summary.decisions == len(reviewed)
    assert _decisions(db) == reviewed


@pytest.mark.slow
def test_review_from_a_parquet_export_after_a_dead_worker(
        simulated: Path, reviewed: list[tuple[object, ...]], tmp_path: Path) -> None:
    db = _copy(simulated, tmp_path)
    with Store(db) as store:
        store.export_parquet(tmp_path / "pq", shard_hands=8)
        engine.review(store, Selection(), SETTINGS, engine.Engine(
            jobs=2, source=tmp_path / "pq", review_shard_hands=4,
            fault_marker=tmp_path / "died"))
    assert (tmp_path / "died").exists()
    assert _decisions(db) == reviewed


def test_review_command_from_an_export_again_with_nothing_left_to_review(
        simulated: Path, tmp_path: Path) -> None:
    """The second run finds every decision stored: it checks the export, reviews nothing
    and prints the same summary (the check's query once stayed open and broke the
    summary's)."""
    db = _copy(simulated, tmp_path)
    at = ["--db", str(db), "--from", str(tmp_path / "pq"), "--rollouts", "8", "-f", "csv"]
    assert runner.invoke(app, ["export", "--parquet", str(tmp_path / "pq"), "--db",
                               str(db)]).exit_code == 0
    first = runner.invoke(app, ["review", *at])
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, ["review", *at])
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout
    assert first.stdout.startswith("variant,player,decisions")


# Ray: the same, on a Ray cluster started here (slow to start; skipped without Ray).


# Ray's processes' handles may reach the collector during these tests.
RAY_LEFTOVERS = pytest.mark.filterwarnings("ignore::ResourceWarning",
                                           "ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    os.environ.setdefault("RAY_DISABLE_IMPORT_WARNING", "1")
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    failed = None
    with warnings.catch_warnings():  # a failed start drops its processes' handles
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                     _system_config=engine.RAY_SYSTEM_CONFIG)
        except Exception as error:  # Ray raises bare Exceptions when it cannot start
            failed = str(error).splitlines()[0]
    if failed is not None:
        _shut_down(ray)
        # Its agents can miss Ray's own start-up deadline on a very busy machine.
        pytest.skip(f"Ray could not start a local cluster here: {failed}")
    try:
        yield
    finally:
        _shut_down(ray)


def _shut_down(ray: Any) -> None:
    ray.shutdown()
    with warnings.catch_warnings():  # Ray leaves its processes' handles to the collector
        warnings.simplefilter("ignore", ResourceWarning)
        # A failed start leaves the processes it started running: end them, by handle.
        for found in gc.get_objects():
            if isinstance(found, subprocess.Popen) and found.poll() is None \
                    and "ray" in str(found.args):
                found.kill()
                found.wait(10)
        gc.collect()


@pytest.mark.slow
@RAY_LEFTOVERS
def test_ray_engine_rescores_and_reviews_as_one_process(
        ray_cluster: None, loaded: Path, reference: dict[str, list[tuple[object, ...]]],
        simulated: Path, reviewed: list[tuple[object, ...]], tmp_path: Path) -> None:
    db = _copy(loaded, tmp_path)
    with Store(db) as store:
        engine.rescore(store, load_rulesets(RULESETS),
                       engine.Engine(kind="ray", jobs=2, shard_hands=50))
    assert _scored(db) == reference
    local = tmp_path / "local.duckdb"
    shutil.copy(loaded, local)
    with Store(local) as store:
        engine.rescore(store, load_rulesets(RULESETS), engine.Engine(jobs=2, shard_hands=50))
    assert _scored(local) == _scored(db)
    sim = tmp_path / "sim.duckdb"
    shutil.copy(simulated, sim)
    with Store(sim) as store:
        store.export_parquet(tmp_path / "pq", shard_hands=8)
        engine.review(store, Selection(), SETTINGS, engine.Engine(
            kind="ray", jobs=2, source=tmp_path / "pq", review_shard_hands=4))
    assert _decisions(sim) == reviewed


@pytest.mark.slow
@RAY_LEFTOVERS
def test_ray_runs_again_the_shard_of_a_killed_worker(
        ray_cluster: None, loaded: Path, reference: dict[str, list[tuple[object, ...]]],
        tmp_path: Path) -> None:
    db = _copy(loaded, tmp_path)
    marker = tmp_path / "died"
    with Store(db) as store:
        engine.rescore(store, load_rulesets(RULESETS),
                       engine.Engine(kind="ray", jobs=2, shard_hands=50, fault_marker=marker))
    assert marker.exists()
    assert _scored(db) == reference
