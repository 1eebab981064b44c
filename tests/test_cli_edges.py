"""The edges of the command line: numbers past their bounds, a database that cannot be
written, a write-ahead log a stopped writer left, a store not wholly scored, Ctrl-C.
Each ends in one line saying what happened and what to do, with the exit code the
README gives."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
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

from ofcstats.cli import app, options
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Player, Simulation, simulate
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
DECLARED = {(bound.low, bound.high) for bound in vars(options).values()
            if isinstance(bound, options.Bound)}


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
    assert (param.min, param.max) in DECLARED, "declare the bound in ofcstats/cli/options.py"


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
