"""The edges of the command line: numbers past their bounds, a database that cannot be
written, a write-ahead log a stopped writer left, a store not wholly scored, Ctrl-C.
Each ends in one line saying what happened and what to do, with the exit code the
README gives."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from handgen import scored_database
from test_cli_usage import one_line_error
from test_storage_faults import _tmpfs
from typer.testing import CliRunner

from ofcstats import bounds
from ofcstats.cli import app
from ofcstats.pipeline import update
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Player, Simulation, simulate
from ofcstats.store import Store
from ofcstats.variants import Variant

runner = CliRunner()


def _number_options() -> Iterator[tuple[list[str], Any]]:
    """(command words, option) of every option taking a number, of every command."""
    def walk(command: Any, words: list[str]) -> Iterator[tuple[list[str], Any]]:
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, [*words, name])
        for param in command.params:
            annotation = param.type_descriptor.annotation
            kinds = set(getattr(annotation, "__args__", ())) | {annotation}
            if kinds & {int, float} and not getattr(param, "is_flag", False):
                yield words, param
    yield from walk(typer.main.get_command(app), [])


NUMBER_OPTIONS = list(_number_options())
DECLARED = {(bound.low, bound.high) for bound in vars(bounds).values()
            if isinstance(bound, bounds.Bound)}


def test_the_walk_finds_the_count_options_the_issue_names() -> None:
    found = {(" ".join(words), param.opts[0]) for words, param in NUMBER_OPTIONS}
    assert {("review", "--rollouts"), ("simulate", "--hands"), ("compare", "--resamples"),
            ("rescore", "--jobs"), ("review", "--jobs"), ("export", "--shard-hands"),
            ("review", "--screen"), ("db info", "--wait")} <= found


@pytest.mark.parametrize(("words", "param"), NUMBER_OPTIONS,
                         ids=[f"{' '.join(w)} {p.opts[0]}" for w, p in NUMBER_OPTIONS])
def test_every_number_option_has_a_lower_and_an_upper_bound_declared_once(
        words: list[str], param: Any) -> None:
    assert param.min is not None, (words, param.opts)
    assert param.max is not None, (words, param.opts)
    assert (param.min, param.max) in DECLARED, "declare the bound in ofcstats/bounds.py"


_ARGUMENTS = {"simulate": ["-p", "a:safe,b:safe", "-o", "{tmp}/s.jsonl"],
              "export": ["--parquet", "{tmp}/pq"], "sql": ["SELECT 1"],
              "player": ["ann"], "replay": ["h1", "-o", "{tmp}/h.html"],
              "report": ["-o", "{tmp}/r.html"], "ingest": ["{tmp}/none.jsonl"],
              "score": ["{tmp}/none.jsonl"]}


@pytest.mark.parametrize(("words", "param"), NUMBER_OPTIONS,
                         ids=[f"{' '.join(w)} {p.opts[0]}" for w, p in NUMBER_OPTIONS])
def test_a_number_past_its_bound_is_a_one_line_usage_error_before_anything_is_made(
        words: list[str], param: Any, tmp_path: Path) -> None:
    over = param.max + 1 if isinstance(param.max, int) else param.max * 2 + 1
    given = f"{over}" if isinstance(over, int) else f"{over:g}"
    rest = [a.format(tmp=tmp_path) for a in _ARGUMENTS.get(words[-1], [])]
    command: Any = typer.main.get_command(app)
    for word in words:
        command = command.commands[word]
    takes_db = any("--db" in getattr(p, "opts", []) for p in command.params)
    db = ["--db", str(tmp_path / "club.duckdb")] if takes_db else []
    text = one_line_error(runner.invoke(app, [*words, *rest, param.opts[0], given, *db]), 2)
    low = f"{int(param.min):,}" if float(param.min).is_integer() else f"{param.min:g}"
    high = f"{int(param.max):,}" if float(param.max).is_integer() else f"{param.max:g}"
    assert text == (f"ofcstats: {param.opts[0]} {given}: must be from {low} to {high} "
                    f"(see ofcstats {' '.join(words)} --help)")
    assert not list(tmp_path.iterdir())


def test_review_rollouts_past_the_bound_stop_at_once_instead_of_filling_memory(
        tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "ofcstats", "review", "--rollouts",
                           "100000000", "--db", str(tmp_path / "club.duckdb")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("ofcstats: --rollouts 100000000: must be from 1 to 10,000 (see "
                           "ofcstats review --help)\n")


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=[Player("ann", "safe"), Player("bob", "aggressive")], hands=60,
                     seed=41)
    path = tmp_path_factory.mktemp("edges") / "hands.jsonl"
    path.write_text("".join(json.dumps(h) + "\n" for h in simulate(sim)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def database(log: Path) -> Path:
    return scored_database(log, ["american"])


@contextlib.contextmanager
def _read_only_copy(database: Path, folder: Path) -> Iterator[Path]:
    """A copy of ``database`` that cannot be written: on a read-only file system as root
    (whom file modes do not stop), else a file without write permission."""
    if os.geteuid() != 0:
        folder.mkdir()
        copy = folder / "club.duckdb"
        shutil.copyfile(database, copy)
        copy.chmod(0o444)
        yield copy
        return
    with _tmpfs(folder, "size=16m") as disk:
        shutil.copyfile(database, disk / "club.duckdb")
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        yield disk / "club.duckdb"


def _writers(db: Path, log: Path) -> list[list[str]]:
    """Every command that writes the database."""
    at = ["--db", str(db)]
    return [["ingest", str(log), *at], ["ingest", str(log), "--no-rescore", *at],
            ["rescore", *at], ["rescore", "-r", "american", *at],
            ["review", "--rollouts", "2", *at]]


def test_every_writer_refuses_a_read_only_database_in_the_same_one_line(
        database: Path, log: Path, tmp_path: Path) -> None:
    with _read_only_copy(database, tmp_path / "ro") as db:
        before = hashlib.sha256(db.read_bytes()).hexdigest()
        for command in _writers(db, log):
            text = one_line_error(runner.invoke(app, command), 2)
            assert text == (f"ofcstats: {db}: cannot write the database: the file is "
                            "read-only; give yourself write permission, or copy the file to "
                            "a place you can write and name the copy with --db"), command
        assert hashlib.sha256(db.read_bytes()).hexdigest() == before
        assert sorted(p.name for p in db.parent.iterdir()) == ["club.duckdb"]
        read = runner.invoke(app, ["players", "--db", str(db)])  # readers still read it
        assert read.exit_code == 0, read.output


def test_every_writer_refuses_a_database_whose_directory_cannot_be_written(
        database: Path, log: Path, tmp_path: Path) -> None:
    """DuckDB writes its log beside the file: a writable file in a read-only directory
    is refused before anything is written, as a read-only file is."""
    writable = tmp_path / "rw" / "club.duckdb"
    writable.parent.mkdir()
    shutil.copyfile(database, writable)
    with _read_only_copy(database, tmp_path / "ro") as db:
        if os.geteuid() == 0:  # the writable file put over the read-only one
            subprocess.run(["mount", "--bind", str(writable), str(db)], check=True)
        else:
            db.chmod(0o644)
            db.parent.chmod(0o555)
        try:
            for command in _writers(db, log):
                text = one_line_error(runner.invoke(app, command), 2)
                assert text == (f"ofcstats: {db}: cannot write the database: the directory "
                                f"{db.parent} is not writable (the database's log is written "
                                "beside it); give yourself write permission, or copy the file "
                                "to a place you can write and name the copy with --db"), command
        finally:
            if os.geteuid() == 0:
                subprocess.run(["umount", str(db)], check=False)
            else:
                db.parent.chmod(0o755)


_KILLED_WRITER = """
import os, signal, sys, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("UPDATE seats SET player = 'zed' WHERE player = 'ann'")  # committed
os.kill(os.getpid(), signal.SIGKILL)  # killed before any checkpoint
"""


def test_the_log_a_killed_writer_left_is_named_as_such_not_as_a_full_disk(
        database: Path, tmp_path: Path) -> None:
    db = tmp_path / "club.duckdb"
    shutil.copyfile(database, db)
    killed = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(db)], timeout=60,
                            check=False)
    assert killed.returncode == -signal.SIGKILL
    size = (tmp_path / "club.duckdb.wal").stat().st_size
    assert 0 < size < 1e6
    for command in (["player", "zed"], ["db", "info"], ["players"]):
        read = runner.invoke(app, [*command, "--db", str(db)])
        assert read.exit_code == 0, read.output
        assert read.stderr == (
            f"ofcstats: warning: {db}: club.duckdb.wal holds {round(size / 1e3):,} KB of "
            "changes a writer committed but had not moved into the database when it stopped "
            "(killed, say): they are read from there and nothing is lost; the next command "
            "that writes (ingest, rescore, review) moves them in\n")
    moved = runner.invoke(app, ["rescore", "-r", "american", "--db", str(db)])
    assert moved.exit_code == 0, moved.output
    assert not (tmp_path / "club.duckdb.wal").exists() or \
        (tmp_path / "club.duckdb.wal").stat().st_size == 0
    again = runner.invoke(app, ["player", "zed", "--db", str(db)])
    assert again.exit_code == 0, again.output
    assert again.stderr == ""


def _partly_scored(log: Path, folder: Path, batches: int) -> tuple[Path, int]:
    """A store of ``log`` whose scoring stopped (Ctrl-C) as ``batches`` batches of a few
    sessions each were scored (the last one being written is finished: each batch is one
    transaction); and how many hands those batches scored."""
    db = folder / "partly.duckdb"
    assert runner.invoke(app, ["ingest", str(log), "--no-rescore", "--db", str(db)]
                         ).exit_code == 0
    reached: list[int] = []

    def stop(done: int, total: int) -> None:
        reached.append(done)
        if len(reached) > batches:
            raise KeyboardInterrupt

    with Store(db) as store, pytest.raises(KeyboardInterrupt):
        update(store, progress=stop, batch_hands=12)
    return db, reached[-1]


def test_db_info_after_an_interrupted_scoring_says_how_many_hands_are_scored_and_exits_1(
        log: Path, tmp_path: Path) -> None:
    db, scored = _partly_scored(log, tmp_path, 2)
    hands = log.read_text(encoding="utf-8").count("\n")
    assert 0 < scored < hands
    shown = runner.invoke(app, ["db", "info", "--db", str(db)])
    assert shown.exit_code == 1, shown.output
    lines = shown.stdout.splitlines()
    at = lines.index(f"scoring: NOT COMPLETE: {scored:,} of {hands:,} hands scored under "
                     "every ruleset of their variant; run ofcstats rescore")
    assert lines[at + 1] == f"  pineapple: {scored:,} of {hands:,} hands scored under all 8 " \
        "of its rulesets"
    assert f"    american: {hands - scored:,} not scored" in lines
    assert "every one scored under 0" not in shown.stdout
    as_json = runner.invoke(app, ["db", "info", "--db", str(db), "-f", "json"])
    assert as_json.exit_code == 1
    info = json.loads(as_json.stdout)
    assert (info["scoring_complete"], info["whole_hands"]) == (False, {"pineapple": scored})
    assert runner.invoke(app, ["rescore", "--db", str(db), "-q"]).exit_code == 0
    done = runner.invoke(app, ["db", "info", "--db", str(db)])
    assert done.exit_code == 0, done.output
    assert "scoring: every stored hand scored under every ruleset of its variant" in done.stdout


# `ofcstats ARGS` with Ctrl-C as on a terminal, the work made small enough to stop in the
# middle (small batches), and a line on stderr as each batch is kept.
_STOPPABLE = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as on a terminal
import ofcstats.ingest, ofcstats.pipeline, ofcstats.simulate
from ofcstats.review import store as reviewing
from ofcstats.store import Store
def said(real, word):
    def wrapped(*args, **kwargs):
        out = real(*args, **kwargs)
        print(word, file=sys.stderr, flush=True)
        return out
    return wrapped
Store.add = said(Store.add, "kept")
ofcstats.ingest.APPEND_HANDS = 200
ofcstats.pipeline.write_batch = said(ofcstats.pipeline.write_batch, "scored")
rescore = ofcstats.pipeline.rescore
ofcstats.pipeline.rescore = lambda *a, **k: rescore(*a, **{**k, "batch_hands": 60})
reviewing.stored.replace_decisions = said(reviewing.stored.replace_decisions, "kept")
reviewing._HANDS_AT_ONCE = 4
ofcstats.simulate.FIRST_TABLES = 1
ofcstats.simulate.MAX_TABLES = 4
ofcstats.simulate.LineFormat.lines = said(ofcstats.simulate.LineFormat.lines, "kept")
from ofcstats.cli import main
sys.argv = ["ofcstats", *sys.argv[1:]]
main()
"""


def _stopped(args: list[str], after: int, word: str = "kept") -> tuple[int, str]:
    """Run ``ofcstats ARGS``, press Ctrl-C once ``after`` batches are kept (loaded,
    reviewed, written; ``scored``: scored): the exit code and the last line of stderr."""
    child = subprocess.Popen([sys.executable, "-c", _STOPPABLE, *args, "--quiet"],
                             stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert child.stderr is not None
    lines: list[str] = []
    with child.stderr:
        for line in child.stderr:
            lines.append(line.strip())
            if lines.count(word) == after:
                child.send_signal(signal.SIGINT)
                break
        lines += [line.strip() for line in child.stderr]
    child.wait(timeout=60)
    assert lines.count(word) >= after, lines
    return child.returncode, lines[-1]


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=[Player("cy", "safe"), Player("dee", "random")], hands=1500,
                     seed=42)
    path = tmp_path_factory.mktemp("edges-big") / "big.jsonl"
    path.write_text("".join(json.dumps(h) + "\n" for h in simulate(sim)), encoding="utf-8")
    return path


def test_ctrl_c_during_ingest_names_the_files_kept_the_one_rolled_back_and_what_to_run(
        log: Path, big_log: Path, tmp_path: Path) -> None:
    db = tmp_path / "club.duckdb"
    code, last = _stopped(["ingest", str(log), str(big_log), "--db", str(db)], after=3)
    assert code == 130
    assert last == (f"ofcstats: interrupted: 1 of 2 files loaded whole (hands.jsonl); "
                    f"{big_log} was rolled back, the database as it was before it; run the "
                    "same ofcstats ingest again to load the rest (what is loaded is skipped) "
                    "and score them")
    with Store(db, read_only=True) as store:
        assert store.count("hands") == 60
    again = runner.invoke(app, ["ingest", str(log), str(big_log), "--db", str(db), "-q"])
    assert again.exit_code == 0, again.output
    assert "1,500 hands loaded" in again.stdout


def test_ctrl_c_during_rescore_says_how_far_it_scored_and_db_info_agrees(
        big_log: Path, tmp_path: Path) -> None:
    db = tmp_path / "club.duckdb"
    assert runner.invoke(app, ["ingest", str(big_log), "--db", str(db), "--no-rescore"]
                         ).exit_code == 0
    code, last = _stopped(["rescore", "--db", str(db)], after=2, word="scored")
    assert code == 130
    found = re.fullmatch(r"ofcstats: interrupted: ([\d,]+) of 1,500 hands scored, each batch "
                         r"kept whole; run ofcstats rescore to score the rest", last)
    assert found, last
    scored = found.group(1)
    info = runner.invoke(app, ["db", "info", "--db", str(db)])
    assert info.exit_code == 1
    assert (f"scoring: NOT COMPLETE: {scored} of 1,500 hands scored under every ruleset of "
            "their variant; run ofcstats rescore") in info.stdout
    assert runner.invoke(app, ["rescore", "--db", str(db), "-q"]).exit_code == 0
    assert runner.invoke(app, ["db", "info", "--db", str(db)]).exit_code == 0


def test_ctrl_c_during_review_says_how_many_hands_are_kept_and_that_it_resumes(
        database: Path, tmp_path: Path) -> None:
    db = tmp_path / "club.duckdb"
    shutil.copyfile(database, db)
    code, last = _stopped(["review", "--rollouts", "2", "-j", "1", "--db", str(db)], after=2)
    assert code == 130
    found = re.fullmatch(r"ofcstats: interrupted: ([\d,]+) of ([\d,]+) hands reviewed, kept "
                         r"in the decisions table; run the same ofcstats review again to "
                         r"review the rest \(what is reviewed is not reviewed again\)", last)
    assert found, last
    with Store(db, read_only=True) as store:
        kept = store.query("SELECT count(DISTINCT hand_key) AS n FROM decisions")["n"][0]
    assert f"{kept:,}" == found.group(1)


def test_ctrl_c_during_simulate_says_how_many_hands_the_file_keeps_and_append_finishes_it(
        tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    args = ["simulate", "-p", "ann:safe,bob:random", "-n", "400", "--seed", "4", "-o", str(out)]
    code, last = _stopped(args, after=3)
    assert code == 130
    found = re.fullmatch(r"ofcstats: interrupted: ([\d,]+) of 400 hands kept in (.*), every "
                         r"hand of the blocks of tables played whole \(the block being played is "
                         r"not written\); run the same command with --append to finish it", last)
    assert found, last
    assert found.group(2) == str(out)
    assert out.read_bytes().count(b"\n") == int(found.group(1).replace(",", ""))
    resumed = subprocess.run([sys.executable, "-c", _STOPPABLE, *args, "--append", "-q"],
                             capture_output=True, text=True, timeout=120, check=False)
    assert resumed.returncode == 0, resumed.stderr
    fresh = tmp_path / "fresh.jsonl"
    whole = subprocess.run([sys.executable, "-c", _STOPPABLE, *args[:-1], str(fresh), "-q"],
                           capture_output=True, text=True, timeout=120, check=False)
    assert whole.returncode == 0, whole.stderr
    assert out.read_bytes() == fresh.read_bytes()


def test_ctrl_c_in_a_command_that_keeps_nothing_says_nothing_was_changed(
        database: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ofcstats import analysis  # noqa: PLC0415

    def stopped(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(analysis, "player_table", stopped)
    result = runner.invoke(app, ["players", "--db", str(database)])
    assert result.exit_code == 130
    assert result.stderr == ("ofcstats: interrupted: nothing was stored or written to a "
                             "file; run the command again\n")


def test_ctrl_c_while_ingest_scores_says_every_file_is_loaded_and_how_far_it_scored(
        big_log: Path, tmp_path: Path) -> None:
    db = tmp_path / "club.duckdb"
    code, last = _stopped(["ingest", str(big_log), "--db", str(db)], after=1, word="scored")
    assert code == 130
    found = re.fullmatch(r"ofcstats: interrupted: every file loaded \(1,500 new hands\), then "
                         r"the scoring stopped: ([\d,]+) of 1,500 hands scored, each batch "
                         r"kept whole; run ofcstats rescore to score the rest", last)
    assert found, last
    info = runner.invoke(app, ["db", "info", "--db", str(db)])
    assert info.exit_code == 1
    assert f"NOT COMPLETE: {found.group(1)} of 1,500 hands scored" in info.stdout
