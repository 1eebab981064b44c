"""Storage faults: a truncated or corrupt database, a symbolic link that loops, a read-only
directory, a full disk. Each ends in one line naming the path and the cause, exit code 1
(2 for a path that cannot be used at all), no traceback, and nothing left worse."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from handgen import scored_database
from typer.testing import CliRunner

from ofcstats.cli import app
from ofcstats.pipeline import update
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Player, Simulation, simulate
from ofcstats.store import HEADER_BYTES, Store, log_size
from ofcstats.variants import Variant

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent


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


@pytest.fixture(scope="module")
def answerable(database: Path) -> Path:
    """The log as ``ofcstats ingest`` leaves it: loaded and scored (under american, then
    the other presets of its variant), so that loading it again has nothing to write."""
    db = database.with_name("answerable.duckdb")
    shutil.copyfile(database, db)
    with Store(db) as store:
        update(store)
    return db


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


# `ofcstats ARGS` with another program filling the disk at a chosen moment: all of it but
# ROOM bytes, in FILLER. `commit`: once a load's rows are all written and before its
# transaction commits (the blocks DuckDB wrote early stay in the file); `checkpoint`: once
# the load is committed to the write-ahead log, before DuckDB moves it into the file.
_FILLED = """
import os, sys
from pathlib import Path
from ofcstats.cli import main
from ofcstats.store import Store
from ofcstats.store.hands import Appends

moment, filler, room = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])

def fill():
    stat = os.statvfs(filler.parent)
    with filler.open("ab") as out:
        out.write(bytes(max(0, stat.f_bavail * stat.f_frsize - room)))

write_all, compact = Appends.write_all, Store.compact

def before_commit(self):
    rows = any(self.held.values())
    write_all(self)
    if rows and moment == "commit":
        fill()

def before_checkpoint(self):
    if moment == "checkpoint":
        fill()
    compact(self)

Appends.write_all, Store.compact = before_commit, before_checkpoint
sys.argv = ["ofcstats", *sys.argv[4:]]
main()
"""


def _filled(moment: str, filler: Path, room: int, *args: str
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _FILLED, moment, str(filler), str(room),
                           *args], capture_output=True, text=True, timeout=300, check=False)


def _one_line(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in done.stderr
    return lines[0]


def _free(disk: Path) -> int:
    stat = os.statvfs(disk)
    return stat.f_bavail * stat.f_frsize


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Pineapple hands enough for DuckDB to write a load's seats into the database file
    before the commit (more than one row group of them: 122,880 rows)."""
    path = tmp_path_factory.mktemp("big") / "big.jsonl"
    spec = importlib.util.spec_from_file_location("bench_ingest", ROOT / "bench" / "ingest.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_pineapple_file(path, 42_000)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("room", [0, 3 << 20])
def test_the_space_a_load_the_disk_could_not_hold_took_is_given_back(
        answerable: Path, log: Path, big_log: Path, tmp_path: Path, room: int) -> None:
    """A load the disk cannot hold fails and is undone, but the blocks DuckDB wrote into
    the file before the commit stay in it. With room left once the commit failed (3 MB:
    more than the commit writes into the file, less than its write-ahead log) the failing
    command gives them back at once; with none, a reading command says so, a writing one
    says how to make room, and the first one to run once there is room gives them back."""
    with _tmpfs(tmp_path / "small", "size=40m") as disk:
        db, other = disk / "club.duckdb", disk / "other.bin"
        shutil.copyfile(answerable, db)
        size = db.stat().st_size
        with Store(db, read_only=True) as store:
            before = store.info()
        message = _one_line(_filled("commit", other, room, "ingest", str(big_log), "--db",
                                    str(db)), 1)
        assert message.startswith(f"ofcstats: {db}: could not write to the database while "
                                  f"loading {big_log}: "), message
        assert "No space left on device" in message
        with Store(db, read_only=True) as store:
            assert store.info() == before  # nothing half-loaded
        if room:
            assert 'Could not write file "' + str(db) + '.wal"' in message
            assert db.stat().st_size == size  # given back at once
            return
        grown = db.stat().st_size - size
        assert grown > 1 << 20  # what DuckDB leaves: the file as it grew
        read = subprocess.run([sys.executable, "-m", "ofcstats", "db", "info", "--db", str(db)],
                              capture_output=True, text=True, timeout=120, check=False)
        assert read.returncode == 0, read.stderr
        assert read.stderr.strip().splitlines() == [
            f"ofcstats: warning: {db}: the database file holds {grown / 1e6:.1f} MB a failed "
            "write left behind: the next command that writes (ingest, rescore, review) "
            "gives it back"]
        again = ["-m", "ofcstats", "ingest", str(log), "--db", str(db)]  # loads nothing
        message = _one_line(subprocess.run([sys.executable, *again], capture_output=True,
                                           text=True, timeout=120, check=False), 1)
        assert message == (
            f"ofcstats: {db}: the disk is full: the database file holds {grown / 1e6:.1f} MB "
            "a failed write left behind; free a little space on that disk, then run a "
            "command that writes (ingest, rescore, review) to give it back")
        free = _free(disk)
        other.unlink()  # space freed elsewhere
        done = subprocess.run([sys.executable, *again], capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        assert db.stat().st_size == size
        assert _free(disk) >= free + grown


@pytest.mark.slow
def test_a_load_committed_but_not_moved_into_the_file_is_kept_and_moved_once_there_is_room(
        database: Path, tmp_path: Path) -> None:
    """The disk fills between a load's commit (to DuckDB's write-ahead log) and the
    checkpoint that moves it into the file: the hands are loaded and read from the log;
    every command says how much to free; the first writer once there is room moves them."""
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=[Player("cy", "safe"), Player("dee", "safe")], hands=300, seed=8)
    more = tmp_path / "more.jsonl"
    more.write_text("".join(json.dumps(h) + "\n" for h in simulate(sim)), encoding="utf-8")
    with _tmpfs(tmp_path / "small", "size=32m") as disk:
        db, other = disk / "club.duckdb", disk / "other.bin"
        shutil.copyfile(database, db)
        with Store(db, read_only=True) as store:
            hands = store.count("hands")
        message = _one_line(_filled("checkpoint", other, 0, "ingest", str(more), "--db",
                                    str(db)), 1)
        waiting = log_size(db)
        assert waiting > 0
        advice = (f"{waiting / 1e6:.1f} MB of changes are kept in club.duckdb.wal (and read "
                  f"from there) until they can be moved into the database: free about "
                  f"{waiting / 1e6:.1f} MB on that disk, then run a command that writes "
                  "(ingest, rescore, review) to move them")
        assert message.startswith(f"ofcstats: {db}: could not write to the database: ")
        assert "No space left on device" in message
        assert message.endswith(f"; the files loaded are kept: {advice}"), message
        read = subprocess.run([sys.executable, "-m", "ofcstats", "db", "info", "-f", "json",
                               "--db", str(db)], capture_output=True, text=True, timeout=120,
                              check=False)
        assert read.returncode == 1, read.stderr  # (loaded, not yet scored: not complete)
        assert json.loads(read.stdout)["tables"]["hands"] == hands + 300  # nothing lost
        assert read.stderr.strip().splitlines() == [f"ofcstats: warning: {db}: {advice}"]
        rescore = ["-m", "ofcstats", "rescore", "-r", "american", "--db", str(db)]
        message = _one_line(subprocess.run([sys.executable, *rescore], capture_output=True,
                                           text=True, timeout=120, check=False), 1)
        assert message == f"ofcstats: {db}: the disk is full: {advice}"
        other.unlink()  # space freed elsewhere
        done = subprocess.run([sys.executable, *rescore], capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert log_size(db) == 0
        with Store(db, read_only=True) as store:
            assert store.count("hands") == hands + 300
            assert store.leftover() == 0


def test_a_database_file_grown_past_its_blocks_is_cut_back_by_the_next_writer(
        answerable: Path, log: Path, tmp_path: Path) -> None:
    """Without a small disk to fill: the bytes a failed write leaves past the file's last
    block, as DuckDB leaves them (here written by the test), said by a reader and given
    back by the next writer, even one with nothing to load."""
    db = tmp_path / "club.duckdb"
    shutil.copyfile(answerable, db)
    size = db.stat().st_size
    with Store(db, read_only=True) as store:
        blocks, block_size = store.blocks()
        assert size == HEADER_BYTES + blocks * block_size  # the file layout counted on
        before = store.info()
    with db.open("ab") as out:
        out.write(bytes(3 * block_size))
    read = runner.invoke(app, ["players", "--db", str(db), "-f", "csv"])
    assert read.exit_code == 0, read.output
    assert read.stderr.strip().splitlines() == [
        f"ofcstats: warning: {db}: the database file holds {3 * block_size / 1e6:.1f} MB a "
        "failed write left behind: the next command that writes (ingest, rescore, review) "
        "gives it back"]
    done = runner.invoke(app, ["ingest", str(log), "--db", str(db)])
    assert done.exit_code == 0, done.output
    assert "already loaded" in done.stdout
    assert db.stat().st_size == size
    with Store(db, read_only=True) as store:
        assert store.info() == before
    assert runner.invoke(app, ["players", "--db", str(db)]).stderr == ""


def test_changes_a_stopped_writer_left_in_the_log_are_moved_by_the_next_writer(
        database: Path, tmp_path: Path) -> None:
    db = tmp_path / "club.duckdb"
    shutil.copyfile(database, db)
    stopped = ("import os, sys, duckdb\ncon = duckdb.connect(sys.argv[1])\n"
               "con.execute(\"UPDATE seats SET player = 'zed' WHERE player = 'ann'\")\n"
               "os._exit(0)  # stopped after the commit, before any checkpoint\n")
    subprocess.run([sys.executable, "-c", stopped, str(db)], check=True, timeout=60)
    assert log_size(db) > 0
    read = runner.invoke(app, ["player", "zed", "--db", str(db)])
    assert read.exit_code == 0, read.output
    assert "club.duckdb.wal holds" in read.stderr
    done = runner.invoke(app, ["rescore", "-r", "american", "--db", str(db)])
    assert done.exit_code == 0, done.output
    assert log_size(db) == 0
    assert runner.invoke(app, ["player", "zed", "--db", str(db)]).stderr == ""


# `ofcstats ARGS` unable to make any file larger than the database's size plus ROOM bytes
# (the system's limit on a process's file size): where no small disk can be mounted, a
# write past the limit fails as on a full disk ("File too large").
_LIMITED = """
import resource, signal, sys
from pathlib import Path
from ofcstats.cli import main
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = Path(sys.argv[1]).stat().st_size + int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.argv = ["ofcstats", *sys.argv[3:]]
main()
"""


@pytest.mark.slow
def test_the_blocks_a_load_stopped_by_a_file_size_limit_wrote_are_given_back_by_the_next_writer(
        answerable: Path, log: Path, big_log: Path, tmp_path: Path) -> None:
    """The same without mounting a small disk: the load stops mid-file, and the blocks it
    wrote stay in the file, counted but free at its end, until a writer's checkpoint."""
    db = tmp_path / "club.duckdb"
    shutil.copyfile(answerable, db)
    size = db.stat().st_size
    with Store(db, read_only=True) as store:
        before = store.info()
    done = subprocess.run([sys.executable, "-c", _LIMITED, str(db), str(2 << 20), "ingest",
                           str(big_log), "--db", str(db)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert _one_line(done, 1).endswith("File too large; the database is as it was before "
                                       "that file: free some disk space, then run this again")
    assert db.stat().st_size > size + (1 << 20)  # as DuckDB leaves it
    with Store(db, read_only=True) as store:
        assert store.info() == before
        assert store.leftover() == db.stat().st_size - size
    read = runner.invoke(app, ["db", "info", "--db", str(db)])
    assert read.exit_code == 0, read.output
    assert "a failed write left behind: the next command that writes" in read.stderr
    again = runner.invoke(app, ["ingest", str(log), "--db", str(db)])  # loads nothing
    assert again.exit_code == 0, again.output
    assert db.stat().st_size == size
