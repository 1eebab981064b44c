"""simulate writes hands as it plays them, and --append finishes a stopped run: the file
then holds, to the byte, what an uninterrupted run writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ofcstats.simulate as simulating
from ofcstats import reading
from ofcstats.cli import app
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Simulation, SimulationError, parse_players, write_jsonl
from ofcstats.variants import Variant


def sim_of(hands: int, seed: int = 5, players: str = "ann:safe,bob:random",
           prefix: str | None = None) -> Simulation:
    return Simulation(variant=Variant.OFC_TURBO, ruleset=load_ruleset("american"),
                      players=parse_players(players), hands=hands, seed=seed, prefix=prefix)


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of three tables, so a short run has many of them."""
    monkeypatch.setattr(simulating, "MAX_TABLES", 3)


def cut_points(data: bytes) -> list[int]:
    """Places a run may stop at: nowhere, inside a line, at the end of lines in the first,
    middle and last blocks, and after the last line."""
    ends = [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    return [0, 10, ends[0], ends[0] + 7, ends[len(ends) // 3], ends[len(ends) // 2] - 3,
            ends[-2], ends[-2] + 5, len(data)]


@pytest.mark.usefixtures("small_blocks")
def test_append_finishes_a_stopped_run_to_the_byte(tmp_path: Path) -> None:
    sim = sim_of(120)
    whole = tmp_path / "whole.jsonl"
    assert write_jsonl(sim, whole).hands == 120
    data = whole.read_bytes()
    assert data.count(b"\n") == 120
    for cut in cut_points(data):
        stopped = tmp_path / f"stopped-{cut}.jsonl"
        stopped.write_bytes(data[:cut])
        written = write_jsonl(sim, stopped, append=True)
        assert stopped.read_bytes() == data, cut
        kept = data[:cut].count(b"\n")
        assert written.resumed_after == (kept if kept else None)


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
ofcstats.simulate.MAX_TABLES = 4  # blocks of 4 tables: the file grows while the run plays
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
    monkeypatch.setattr(simulating, "MAX_TABLES", 4)
    fresh = tmp_path / "fresh.jsonl"
    write_jsonl(Simulation(variant=Variant.OFC_TURBO, ruleset=load_ruleset("american"),
                           players=parse_players("ann:safe,bob:random"), hands=800, seed=4),
                fresh)
    assert out.read_bytes() == fresh.read_bytes()
