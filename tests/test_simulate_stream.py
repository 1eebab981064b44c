"""simulate writes hands as it plays them, and --append finishes a stopped run: the file
then holds, to the byte, what an uninterrupted run writes."""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import ofcstats.simulate as simulating
from ofcstats import reading
from ofcstats.cli import app
from ofcstats.errors import Interrupted
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Simulation, SimulationError, parse_players, write_jsonl
from ofcstats.variants import Variant


def sim_of(hands: int, seed: int = 5, players: str = "ann:safe,bob:random",
           prefix: str | None = None, timeout_rate: float = 0.0) -> Simulation:
    return Simulation(variant=Variant.OFC_TURBO, ruleset=load_ruleset("american"),
                      players=parse_players(players), hands=hands, seed=seed, prefix=prefix,
                      timeout_rate=timeout_rate)


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 1 table, then 2, then 4 each, so a short run has many of them."""
    monkeypatch.setattr(simulating, "FIRST_TABLES", 1)
    monkeypatch.setattr(simulating, "MAX_TABLES", 4)


def block_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The tables of each block the dealer is asked to play from now on, in order."""
    sizes: list[int] = []
    play = simulating.Dealer.play

    def watched(dealer: simulating.Dealer, tables: int, *args: Any) -> Any:
        sizes.append(tables)
        return play(dealer, tables, *args)

    monkeypatch.setattr(simulating.Dealer, "play", watched)
    return sizes


def game_of(line: bytes) -> int:
    """The game (session) number of a written hand, from its id."""
    return int(json.loads(line)["session_id"].rsplit("-", 1)[1])


def cut_points(data: bytes, block_ends: list[int]) -> list[int]:
    """Places a run may stop at: nowhere, inside a line, at the end of lines in the first,
    middle and last blocks, after the last line, and at, just before and just after the
    end of every block (``block_ends``: the lines written when each block ends)."""
    ends = [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    around = {ends[e - 1 + step] for e in block_ends[:-1] for step in (-1, 0, 1)}
    return sorted({0, 10, ends[0], ends[0] + 7, ends[len(ends) // 3],
                   ends[len(ends) // 2] - 3, ends[-2], ends[-2] + 5, len(data), *around})


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("timeout_rate", [0.0, 1.0])
def test_append_finishes_a_stopped_run_to_the_byte(
        timeout_rate: float, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Also where timeouts end every game after its first hand, so the run plays many
    blocks past the tables it planned, each as large as the hands still wanted need."""
    sim = sim_of(120, timeout_rate=timeout_rate)
    whole = tmp_path / "whole.jsonl"
    sizes = block_sizes(monkeypatch)
    assert write_jsonl(sim, whole).hands == 120
    data = whole.read_bytes()
    assert data.count(b"\n") == 120
    planned = math.ceil(120 / (simulating.GAMES_PER_SERIES * 2))
    assert (sum(sizes) > planned) if timeout_rate else (sum(sizes) == planned)
    lines = data.splitlines()
    games = [game_of(line) for line in lines]
    block_ends = [sum(g <= simulating.GAMES_PER_SERIES * sum(sizes[:k + 1]) for g in games)
                  for k in range(len(sizes))]
    for cut in cut_points(data, block_ends):
        stopped = tmp_path / f"stopped-{cut}.jsonl"
        stopped.write_bytes(data[:cut])
        written = write_jsonl(sim, stopped, append=True)
        assert stopped.read_bytes() == data, cut
        kept = data[:cut].count(b"\n")
        assert written.resumed_after == (kept if kept else None)


def test_blocks_double_from_the_first_to_the_most_tables(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each block plays twice the tables of the one before, from FIRST_TABLES up to
    MAX_TABLES; the last block of a run plays the tables left of those planned."""
    monkeypatch.setattr(simulating, "FIRST_TABLES", 1)
    monkeypatch.setattr(simulating, "MAX_TABLES", 4)
    sizes = block_sizes(monkeypatch)
    write_jsonl(sim_of(120), tmp_path / "run.jsonl")
    planned = math.ceil(120 / (simulating.GAMES_PER_SERIES * 2))  # 2 seats, 4 games a table
    expected, size = [], 1
    while sum(expected) < planned:
        expected.append(min(size, planned - sum(expected)))
        size = min(2 * size, 4)
    assert sizes == expected == [1, 2, 4, 4, 4]
    monkeypatch.undo()
    shipped = [simulating.block_tables(block) for block in range(8)]
    assert shipped[0] == simulating.FIRST_TABLES == 128
    assert all(after == min(2 * size, 2048) for size, after in itertools.pairwise(shipped))
    assert shipped[-1] == simulating.MAX_TABLES == 2048


@pytest.mark.usefixtures("small_blocks")
def test_a_longer_run_begins_with_the_blocks_of_a_shorter_one(tmp_path: Path) -> None:
    """A block's tables depend on its number, not on the run's length: a run of whole
    first blocks (1 and 2 tables, 24 hands) is the start of any longer run's file."""
    short, long = tmp_path / "short.jsonl", tmp_path / "long.jsonl"
    write_jsonl(sim_of(24), short)
    write_jsonl(sim_of(120), long)
    assert short.read_bytes().count(b"\n") == 24
    assert long.read_bytes().startswith(short.read_bytes())


def test_ctrl_c_after_the_first_block_keeps_its_hands_and_append_finishes_the_run(
        tmp_path: Path) -> None:
    """At the block sizes a user gets: Ctrl-C as the second block plays keeps every hand
    of the first block's tables (FIRST_TABLES tables, GAMES_PER_SERIES games each), whole
    lines that begin the uninterrupted run's file; --append then finishes it."""
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players("ann:safe,bob:balanced,cy:aggressive"),
                     hands=2000, seed=3)
    whole = tmp_path / "whole.jsonl"
    write_jsonl(sim, whole)
    data = whole.read_bytes()
    first_block = sum(game_of(line) <= simulating.FIRST_TABLES * simulating.GAMES_PER_SERIES
                      for line in data.splitlines())
    assert 0 < first_block < 2000
    out = tmp_path / "stopped.jsonl"

    def ctrl_c_once_written(done: int, total: int) -> None:
        if out.exists() and out.stat().st_size:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as stopped:
        write_jsonl(sim, out, ctrl_c_once_written)
    assert str(stopped.value).startswith(f"{first_block:,} of 2,000 hands kept in {out}, ")
    assert str(stopped.value).endswith("run the same command with --append to finish it")
    assert out.read_bytes() == data[:len(out.read_bytes())]
    assert out.read_bytes().count(b"\n") == first_block
    assert out.read_bytes().endswith(b"\n")
    assert write_jsonl(sim, out, append=True).resumed_after == first_block
    assert out.read_bytes() == data


class _CutShort:
    """A file whose ``cut_at``-th write stops halfway, as Ctrl-C during a write may."""

    def __init__(self, real: Any, cut_at: int) -> None:
        self.real, self.writes, self.cut_at = real, 0, cut_at

    def __enter__(self) -> _CutShort:
        return self

    def __exit__(self, *exc: object) -> None:
        self.real.close()

    def write(self, data: bytes) -> int:
        self.writes += 1
        if self.writes == self.cut_at:
            self.real.write(data[: len(data) // 2])
            raise KeyboardInterrupt
        return int(self.real.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("append", [False, True])
def test_ctrl_c_during_a_write_leaves_whole_lines_and_says_how_many(
        append: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing half-written: the file ends at the last whole line written (when resuming,
    at least at the lines it held), and holds the hands the message counts."""
    monkeypatch.setattr(simulating, "_LINES_AT_ONCE", 5)
    sim = sim_of(120)
    whole = tmp_path / "whole.jsonl"
    write_jsonl(sim, whole)
    data = whole.read_bytes()
    out = tmp_path / "run.jsonl"
    held = data[: data.index(b"\n", len(data) // 2) + 12] if append else b""
    out.write_bytes(held)
    real_open = Path.open

    def opened(path: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        file = real_open(path, mode, *args, **kwargs)
        return _CutShort(file, cut_at=4) if path == out and "b" in mode and mode != "rb" \
            else file

    monkeypatch.setattr(Path, "open", opened)
    with pytest.raises(Interrupted) as stopped:
        write_jsonl(sim, out, append=append)
    kept = out.read_bytes()
    assert kept == data[:len(kept)]
    assert kept.endswith(b"\n")
    assert len(kept) >= held.rfind(b"\n") + 1
    lines = kept.count(b"\n")
    assert str(stopped.value).startswith(f"{lines} of 120 hands kept in {out}, ")
    monkeypatch.setattr(Path, "open", real_open)
    write_jsonl(sim, out, append=True)
    assert out.read_bytes() == data


@pytest.mark.usefixtures("small_blocks")
def test_append_refuses_a_file_of_another_run_and_leaves_it_alone(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    write_jsonl(sim_of(60, seed=5, prefix="club"), path)
    data = path.read_bytes()[:-200]
    path.write_bytes(data)
    with pytest.raises(SimulationError, match="not those this simulation plays"):
        write_jsonl(sim_of(60, seed=6, prefix="club"), path, append=True)
    with pytest.raises(SimulationError, match="bots"):
        write_jsonl(sim_of(60, seed=5, prefix="club", players="ann:safe,cy:random"), path,
                    append=True)
    with pytest.raises(SimulationError, match="do not start with sim5-"):
        write_jsonl(sim_of(60, seed=5), path, append=True)
    with pytest.raises(SimulationError, match="more than the 10 asked for"):
        write_jsonl(sim_of(10, seed=5, prefix="club"), path, append=True)
    assert path.read_bytes() == data


def test_append_on_the_command_line_says_where_it_resumed(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    args = ["simulate", "-q", "-p", "ann:safe,bob:random", "--variant", "ofc-turbo", "-n",
            "30", "--seed", "5", "-o", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    whole = out.read_bytes()
    out.write_bytes(whole[: whole.index(b"\n") + 1])
    result = CliRunner().invoke(app, [*args, "--append"])
    assert result.exit_code == 0, result.output
    assert "30 hands of ofc-turbo under american (seed 5) (resumed after 1)" in result.stdout
    assert out.read_bytes() == whole
    other = CliRunner().invoke(app, [*args[:-4], "--seed", "9", "-o", str(out), "--append"])
    assert other.exit_code == 2
    assert "do not start with sim9-" in other.stderr


LAUNCH = """
import sys
import ofcstats.simulate
ofcstats.simulate.FIRST_TABLES = 4  # blocks of 4 tables: the file grows while the run plays
ofcstats.simulate.MAX_TABLES = 4
from ofcstats.cli import main
sys.argv[0] = "ofcstats"
main()
"""


@pytest.mark.slow
def test_a_killed_run_leaves_every_finished_hand_readable_and_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "killed.jsonl"
    args = [sys.executable, "-c", LAUNCH, "simulate", "-q", "-p", "ann:safe,bob:random",
            "--variant", "ofc-turbo", "-n", "800", "--seed", "4", "-o", str(out)]
    with subprocess.Popen(args) as run:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") >= 60:
                break
            time.sleep(0.02)
        assert run.poll() is None, "the run ended before it could be stopped"
        os.kill(run.pid, signal.SIGKILL)
    stopped = out.read_bytes()
    lines = stopped.count(b"\n")
    assert 60 <= lines < 800
    whole_lines = stopped[: stopped.rfind(b"\n") + 1]
    (tmp_path / "finished.jsonl").write_bytes(whole_lines)
    batch = reading.read_all([tmp_path / "finished.jsonl"])
    assert batch.rejects.is_empty(), batch.rejects
    assert batch.hands.height == lines
    assert all(json.loads(line)["format"] == "ofc-hand/1" for line in whole_lines.splitlines())
    resumed = subprocess.run([*args, "--append"], capture_output=True, text=True, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert f"(resumed after {lines:,})" in resumed.stdout
    monkeypatch.setattr(simulating, "FIRST_TABLES", 4)
    monkeypatch.setattr(simulating, "MAX_TABLES", 4)
    fresh = tmp_path / "fresh.jsonl"
    write_jsonl(Simulation(variant=Variant.OFC_TURBO, ruleset=load_ruleset("american"),
                           players=parse_players("ann:safe,bob:random"), hands=800, seed=4),
                fresh)
    assert out.read_bytes() == fresh.read_bytes()


CTRL_C = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as on a terminal
from ofcstats.cli import main
sys.argv[0] = "ofcstats"
main()
"""


@pytest.mark.slow
def test_ctrl_c_on_the_command_line_soon_after_the_start_keeps_the_first_block(
        tmp_path: Path) -> None:
    """The block sizes a user gets: Ctrl-C as soon as the first lines are written (the
    first block, FIRST_TABLES tables) says how many hands the file keeps, all whole, and
    --append finishes the run to the byte."""
    out = tmp_path / "stopped.jsonl"
    options = ["simulate", "-q", "-p", "ann:safe,bob:balanced,cy:aggressive", "-n", "6000",
               "--seed", "2", "-o", str(out)]
    with subprocess.Popen([sys.executable, "-c", CTRL_C, *options], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True) as run:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run.poll() is None:
            if out.exists() and out.stat().st_size:
                break
            time.sleep(0.01)
        assert run.poll() is None, "the run ended before it could be stopped"
        run.send_signal(signal.SIGINT)
        _, error = run.communicate(timeout=60)
    assert run.returncode == 130
    kept = out.read_bytes()
    lines = kept.count(b"\n")
    assert lines > 0
    assert kept.endswith(b"\n")
    assert error.splitlines()[-1] == (
        f"ofcstats: interrupted: {lines:,} of 6,000 hands kept in {out}, every hand of the "
        "blocks of tables played whole (the block being played is not written); run the "
        "same command with --append to finish it")
    # The hands of whole blocks: of games up to the last of a block's last table.
    games, blocks = game_of(kept.splitlines()[-1]), [simulating.block_tables(0)]
    while simulating.GAMES_PER_SERIES * sum(blocks) < games:
        blocks.append(simulating.block_tables(len(blocks)))
    assert games == simulating.GAMES_PER_SERIES * sum(blocks)
    resumed = subprocess.run([sys.executable, "-c", CTRL_C, *options, "--append"],
                             capture_output=True, text=True, check=False)
    assert resumed.returncode == 0, resumed.stderr
    fresh = tmp_path / "fresh.jsonl"
    write_jsonl(Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                           players=parse_players("ann:safe,bob:balanced,cy:aggressive"),
                           hands=6000, seed=2), fresh)
    assert out.read_bytes() == fresh.read_bytes()
