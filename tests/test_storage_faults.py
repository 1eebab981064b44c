"""Storage faults: a truncated or corrupt database, a symbolic link that loops, a read-only
directory, a full disk. Each ends in one line naming the path and the cause, exit code 1
(2 for a path that cannot be used at all), no traceback, and nothing left worse."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from handgen import scored_database
from typer.testing import CliRunner

from ofcstats.cli import app
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Player, Simulation, simulate
from ofcstats.store import Store
from ofcstats.variants import Variant

runner = CliRunner()


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=[Player("ann", "safe"), Player("bob", "aggressive")], hands=40,
                     seed=5)
    path = tmp_path_factory.mktemp("faults") / "hands.jsonl"
    path.write_text("".join(json.dumps(h) + "\n" for h in simulate(sim)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def database(log: Path) -> Path:
    return scored_database(log, ["american"])


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line_failure(result: object, path: Path, code: int, *causes: str) -> None:
    assert result.exit_code == code, result.output  # type: ignore[attr-defined]
    lines = result.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1, lines
    assert str(path) in lines[0] or path.name in lines[0], lines[0]
    assert any(cause in lines[0] for cause in causes), lines[0]
    assert "--debug" not in lines[0], lines[0]
    assert "Traceback" not in result.output  # type: ignore[attr-defined]


def _commands(db: Path, log: Path, out: Path) -> list[list[str]]:
    """Every command that opens a database, reading or writing."""
    at = ["--db", str(db)]
    return [["players", *at], ["player", "ann", *at], ["compare", *at],
            ["report", "-o", str(out / "r.html"), *at], ["sql", "SELECT 1", *at],
            ["export", "--parquet", str(out / "pq"), *at], ["db", "info", *at],
            ["rescore", "-r", "american", *at], ["ingest", str(log), *at],
            ["review", "--rollouts", "2", *at], ["replay", "sim5-00001-01", "-o",
                                                 str(out / "h.html"), *at]]


def _damaged(database: Path, folder: Path, damage: str) -> Path:
    data = database.read_bytes()
    broken = folder / f"{damage}.duckdb"
    if damage == "truncated":  # cut inside its first blocks, as by a copy that stopped
        broken.write_bytes(data[:20000])
    elif damage == "half":
        broken.write_bytes(data[:len(data) // 2])
    else:  # the file's header blocks overwritten, as by a failed disk
        broken.write_bytes(b"\0" * 12288 + data[12288:])
    return broken


@pytest.mark.parametrize("damage", ["truncated", "zeroed"])
def test_a_damaged_database_is_named_by_every_command_and_left_as_it_was(
        database: Path, log: Path, tmp_path: Path, damage: str) -> None:
    broken = _damaged(database, tmp_path, damage)
    before = _digest(broken)
    out = tmp_path / "out"
    out.mkdir()
    for command in _commands(broken, log, out):
        result = runner.invoke(app, command)
        _one_line_failure(result, broken, 1, "cannot open the database")
        assert _digest(broken) == before, command
    assert not list(out.iterdir())  # no report, page or Parquet file begun
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([broken.name, "out"])


def test_a_database_cut_in_half_fails_in_one_line_where_it_is_read(
        database: Path, log: Path, tmp_path: Path) -> None:
    """What lies in the first half still reads; whatever reaches past it fails by name,
    saying the file is damaged."""
    broken = _damaged(database, tmp_path, "half")
    before = _digest(broken)
    out = tmp_path / "out"
    out.mkdir()
    failed = 0
    for command in _commands(broken, log, out):
        result = runner.invoke(app, command)
        if result.exit_code != 0 or command[0] == "ingest":
            failed += 1
            _one_line_failure(result, broken, 1, "cannot open the database",
                              "the database file is damaged")
        assert _digest(broken) == before, command
    assert failed


@pytest.fixture
def loop(tmp_path: Path) -> Path:
    path = tmp_path / "loop"
    path.symlink_to(path.name)
    return path


def test_a_looping_symlink_named_as_an_input_or_output_is_a_usage_error(
        database: Path, log: Path, loop: Path, tmp_path: Path) -> None:
    at = ["--db", str(database)]
    for command in (["ingest", str(loop), "--db", str(tmp_path / "new.duckdb")],
                    ["ingest", str(log), "--db", str(loop)], ["score", str(loop)],
                    ["score", str(log), "-o", str(loop)], ["players", "--db", str(loop)],
                    ["report", "-o", str(loop), *at], ["sql", "SELECT 1", "-o", str(loop), *at],
                    ["export", "--parquet", str(loop), *at],
                    ["replay", "sim5-00001-01", "-o", str(loop), *at]):
        result = runner.invoke(app, command)
        _one_line_failure(result, loop, 2, "a symbolic link that loops back on itself")
        assert loop.is_symlink(), command
        assert os.readlink(loop) == "loop", command
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loop"]


def _mount(path: Path, options: str) -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a small tmpfs needs root and mount")
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


@contextlib.contextmanager
def _tmpfs(path: Path, options: str) -> Iterator[Path]:
    _mount(path, options)
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


@contextlib.contextmanager
def _read_only(path: Path) -> Iterator[Path]:
    """A directory nothing can be written into: a read-only tmpfs as root (whom file
    modes do not stop), else a directory without write permission."""
    if os.geteuid() == 0:
        with _tmpfs(path, "ro,size=64k"):
            yield path
        return
    path.mkdir()
    path.chmod(0o555)
    try:
        yield path
    finally:
        path.chmod(0o755)


def test_report_and_export_into_a_read_only_directory_say_so(
        database: Path, tmp_path: Path) -> None:
    with _read_only(tmp_path / "ro") as folder:
        at = ["--db", str(database)]
        for command, named in ((["report", "-o", str(folder / "r.html"), *at], folder),
                               (["export", "--parquet", str(folder), *at], folder),
                               (["export", "--parquet", str(folder / "pq"), *at], folder)):
            result = runner.invoke(app, command)
            _one_line_failure(result, named, 2, "not writable")
        assert not list(folder.iterdir())


def test_a_full_disk_is_named_and_leaves_no_partial_file(
        database: Path, log: Path, tmp_path: Path) -> None:
    with _tmpfs(tmp_path / "small", "size=48k") as disk:
        at = ["--db", str(database)]
        big = "SELECT range AS n, 'a longer text to fill the disk' AS t FROM range(20000)"
        for command, path in ((["report", "-o", str(disk / "r.html"), *at], disk / "r.html"),
                              (["sql", big, "-f", "csv", "-o", str(disk / "n.csv"), *at],
                               disk / "n.csv"),
                              (["score", str(log), "--all-rulesets", "-f", "jsonl", "-o",
                                str(disk / "s.jsonl")],
                               disk / "s.jsonl"),
                              (["export", "--parquet", str(disk / "pq"), *at], disk / "pq")):
            result = runner.invoke(app, command)
            _one_line_failure(result, path, 1, "No space left on device")
            assert not list(disk.iterdir()), command  # nothing half-written


def test_an_ingest_that_fills_the_disk_fails_in_one_line_and_keeps_the_database(
        database: Path, tmp_path: Path) -> None:
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=[Player("cy", "safe"), Player("dee", "safe")], hands=600,
                     seed=6)
    more = tmp_path / "more.jsonl"
    more.write_text("".join(json.dumps(h) + "\n" for h in simulate(sim)), encoding="utf-8")
    room = database.stat().st_size // 1024 + 64
    with _tmpfs(tmp_path / "small", f"size={room}k") as disk:
        db = disk / "club.duckdb"
        shutil.copyfile(database, db)
        with Store(db, read_only=True) as store:
            before = store.info()
        result = runner.invoke(app, ["ingest", str(more), "--db", str(db)])
        _one_line_failure(result, db, 1, "No space left on device")
        with Store(db, read_only=True) as store:
            assert store.info() == before  # nothing half-loaded, the hands all there


def test_ingest_refuses_a_database_cut_short_before_writing_a_byte(
        database: Path, tmp_path: Path) -> None:
    broken = _damaged(database, tmp_path, "half")
    before = _digest(broken)
    new_log = Path(__file__).resolve().parent.parent / "data" / "sample" / \
        "chinese-13-russian.jsonl"
    result = runner.invoke(app, ["ingest", str(new_log), "--db", str(broken)])
    _one_line_failure(result, broken, 1, "the database file is damaged")
    assert "before its last block" in result.stderr
    assert _digest(broken) == before  # not grown, not touched


def test_a_database_whose_free_blocks_at_its_end_were_cut_off_still_loads(
        log: Path, tmp_path: Path) -> None:
    """A checkpoint cuts free blocks off the end of the file, yet DuckDB still counts
    them when the file is opened again: that file is whole, not cut short."""
    db = tmp_path / "trimmed.duckdb"
    with Store(db) as store:
        store.con.execute("CHECKPOINT")
        store.con.execute("CREATE TABLE big AS SELECT range AS i, range::VARCHAR AS s "
                          "FROM range(2000000)")
        store.con.execute("CHECKPOINT")
        store.con.execute("DROP TABLE big")
        store.con.execute("CHECKPOINT")
    with Store(db, read_only=True) as store:
        blocks, block_size = store.blocks()
        assert db.stat().st_size < blocks * block_size  # what looked like a cut file
    result = runner.invoke(app, ["ingest", str(log), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "loaded" in result.output


def test_a_looping_symlink_inside_a_directory_is_skipped_with_a_warning(
        log: Path, tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(log.read_bytes())
    (folder / "loop.jsonl").symlink_to("loop.jsonl")
    result = runner.invoke(app, ["ingest", str(folder), "--db", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 0, result.output
    assert result.stderr.strip().splitlines() == [
        f"ofcstats: warning: {folder / 'loop.jsonl'}: skipped: a symbolic link that loops "
        "back on itself"]
    assert "1 file:" in result.stdout
