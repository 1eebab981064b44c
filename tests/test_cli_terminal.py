"""The command line as people run it: on a terminal (a pseudo-terminal here), in a pipe,
with --quiet and with NO_COLOR. Each command that shows progress runs for real, in a
process of its own."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_cli_usage import hold

from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.rules import load_ruleset, load_rulesets
from ofcstats.simulate import Simulation, parse_players, write_jsonl
from ofcstats.store import Store
from ofcstats.variants import Variant

ROOT = Path(__file__).parent.parent
SAMPLE = ROOT / "data" / "sample"
COLOUR = re.compile(rb"\x1b\[(?:[0-9;]*;)?(?:3[0-79]|9[0-7]|38)(?:;[0-9;]*)?m")
ESCAPE = re.compile(rb"\x1b\[")


def command() -> list[str]:
    return [sys.executable, "-m", "ofcstats"]


def run_on_terminal(args: list[str], cwd: Path, env: dict[str, str] | None = None,
                    timeout: float = 120, watch: Callable[[bytes], None] | None = None
                    ) -> tuple[int, bytes]:
    """Run ``ofcstats ARGS`` with stdin, stdout and stderr on a pseudo-terminal; the exit
    code and everything the terminal received (``watch`` sees it as it comes)."""
    primary, secondary = os.openpty()
    environment = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120",
                   "LINES": "40", **(env or {})}
    environment.pop("NO_COLOR", None) if env is None or "NO_COLOR" not in env else None
    process = subprocess.Popen([*command(), *args], cwd=cwd, env=environment,
                               stdin=secondary, stdout=secondary, stderr=secondary,
                               close_fds=True)
    os.close(secondary)
    received = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
            if not chunk:
                break
            received += chunk
            if watch is not None:
                watch(bytes(received))
        elif process.poll() is not None:
            break
    os.close(primary)
    try:
        code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail(f"ofcstats {' '.join(args)} did not finish in {timeout} s")
    return code, bytes(received)


def run_in_pipe(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return subprocess.run([*command(), *args], cwd=cwd, env=env, capture_output=True,
                          timeout=120, check=False)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a small log and a database holding it, scored under two rulesets."""
    folder = tmp_path_factory.mktemp("terminal")
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players("ann:safe,bob:balanced"), hands=200, seed=3)
    write_jsonl(sim, folder / "log.jsonl")
    ingest([folder / "log.jsonl", SAMPLE / "chinese-13-russian.jsonl"], folder / "club.duckdb")
    with Store(folder / "club.duckdb") as store:
        rescore(store, load_rulesets(["american", "russian"]))
    return folder


COMMANDS = {
    "simulate": ["simulate", "-p", "ann:safe,bob:random", "-n", "100", "-o", "sim.jsonl"],
    "ingest": ["ingest", "log.jsonl", "--db", "other.duckdb"],
    "rescore": ["rescore", "--db", "club.duckdb", "-r", "western", "--rebuild"],
    "compare": ["compare", "--db", "club.duckdb"],
    "players": ["players", "--db", "club.duckdb", "--ruleset", "american"],
    "player": ["player", "ann", "--db", "club.duckdb"],
    "report": ["report", "--db", "club.duckdb", "--ruleset", "american", "-o", "r.html"],
    "export": ["export", "--parquet", "parquet", "--db", "club.duckdb"],
    "score": ["score", "log.jsonl", "-f", "csv", "-o", "scored.csv"],
    "sql": ["sql", "SELECT player, count(*) AS seats FROM seats GROUP BY 1", "--db",
            "club.duckdb"],
    "review": ["review", "--db", "club.duckdb", "--player", "ann", "--rollouts", "10"],
}
UNITS = {"simulate": b"hands", "rescore": b"hands", "compare": b"steps",
         "players": b"steps", "player": b"steps", "report": b"steps", "export": b"tables",
         "sql": b"rows", "ingest": b"kB", "score": b"kB", "review": b"hands"}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_shows_progress_on_a_terminal(work: Path, name: str) -> None:
    code, shown = run_on_terminal(COMMANDS[name], work)
    assert code == 0, shown.decode(errors="replace")
    assert b"Traceback" not in shown
    assert UNITS[name] in shown, shown.decode(errors="replace")
    assert ESCAPE.search(shown), "no progress display drawn"


def test_ingest_shows_the_load_then_its_scoring_on_a_terminal(work: Path) -> None:
    code, shown = run_on_terminal(["ingest", "log.jsonl", "--db", "scored.duckdb"], work)
    assert code == 0, shown.decode(errors="replace")
    text = shown.decode(errors="replace")
    assert "kB" in text, text  # the two bars, by their labels
    assert "rescore" in text, text
    assert text.index("kB") < text.index("rescore")
    assert "scored: 8 rulesets: 200 hands in " in text, text


def test_report_progress_names_and_counts_its_charts_on_a_terminal(work: Path) -> None:
    code, shown = run_on_terminal(COMMANDS["report"], work)
    assert code == 0, shown.decode(errors="replace")
    text = shown.decode(errors="replace")
    counted = re.findall(r"chart (\d+) of (\d+)", text)
    assert len({done for done, _ in counted}) >= 2, text  # it moves, chart by chart
    assert len({total for _, total in counted}) == 1, text


@pytest.mark.parametrize("name", ["simulate", "compare", "report"])
def test_no_progress_into_a_pipe(work: Path, name: str) -> None:
    run = run_in_pipe(COMMANDS[name], work)
    assert run.returncode == 0, run.stderr
    assert not ESCAPE.search(run.stderr + run.stdout)
    assert b"Traceback" not in run.stderr


def test_compare_on_a_terminal_and_in_a_pipe_shows_the_intervals_alike(work: Path) -> None:
    code, short = run_on_terminal([*COMMANDS["compare"], "--quiet"], work)
    assert code == 0, short.decode(errors="replace")
    assert re.search(rb"\| group \| ruleset +\| skill \(95%\) +\|", short), short
    # Every column (--wide): the same bytes on a terminal and into a pipe.
    code, shown = run_on_terminal([*COMMANDS["compare"], "--quiet", "--wide"], work)
    assert code == 0, shown.decode(errors="replace")
    piped = run_in_pipe([*COMMANDS["compare"], "--quiet", "--wide"], work)
    assert piped.returncode == 0, piped.stderr
    assert shown.replace(b"\r\n", b"\n") == piped.stdout
    assert re.search(rb"\| \d\.\d{3} \(\d\.\d{3}-\d\.\d{3}\) ", piped.stdout), piped.stdout
    assert b"| skill_group |" in piped.stdout
    csv = run_in_pipe(["compare", "--db", "club.duckdb", "-f", "csv"], work)
    assert b"skill_signal_ci_low,skill_signal_ci_high,skill_group" in csv.stdout


@pytest.mark.parametrize("name", ["rescore"])
def test_quiet_on_a_terminal_draws_nothing(work: Path, name: str) -> None:
    code, shown = run_on_terminal([*COMMANDS[name], "--quiet"], work)
    assert code == 0, shown.decode(errors="replace")
    assert not ESCAPE.search(shown), shown


def test_no_color_keeps_progress_but_drops_colour(work: Path) -> None:
    code, coloured = run_on_terminal(COMMANDS["sql"], work)
    assert code == 0
    assert COLOUR.search(coloured)
    code, plain = run_on_terminal(COMMANDS["sql"], work, env={"NO_COLOR": "1"})
    assert code == 0, plain.decode(errors="replace")
    assert b"rows" in plain
    assert ESCAPE.search(plain), "no progress display drawn"
    assert not COLOUR.search(plain), plain


def test_a_usage_error_on_a_terminal_is_one_line(work: Path) -> None:
    code, shown = run_on_terminal(["players", "--db", "club.duckdb", "--player", "nobody"],
                                  work)
    assert code == 2
    text = shown.decode().strip()
    assert text.startswith("ofcstats: no player named nobody; known players: ann, bob"), text
    assert len(text.splitlines()) == 1


@pytest.mark.parametrize("args", [["ingest", "missing.jsonl", "--db", "new.duckdb"],
                                  ["score", "missing.jsonl", "-o", "missing.csv"]])
def test_a_missing_input_on_a_terminal_is_the_error_alone(work: Path, args: list[str]) -> None:
    """No progress bar is drawn (and wiped) before the error: it starts with the work."""
    code, shown = run_on_terminal(args, work)
    assert code == 2, shown.decode(errors="replace")
    assert not ESCAPE.search(shown), shown
    text = shown.decode().strip()
    assert text == "ofcstats: missing.jsonl: no such file or directory", text
    assert not (work / "new.duckdb").exists()
    assert not (work / "missing.csv").exists()


@pytest.mark.parametrize("args", [["players", "--db", "club.duckdb", "-r", "american"],
                                  ["ingest", "log.jsonl", "--db", "club.duckdb"]])
def test_a_command_on_a_terminal_says_what_it_waits_for_then_goes_on(
        work: Path, args: list[str]) -> None:
    with hold(work / "club.duckdb", "write") as holder:
        def let_go(shown: bytes) -> None:  # once it says it waits
            if b"waiting up to" in shown and holder.poll() is None:
                holder.kill()
                holder.wait()
        code, shown = run_on_terminal([*args, "--wait", "60"], work, watch=let_go)
    assert code == 0, shown.decode(errors="replace")
    assert b"waiting up to 60 s for club.duckdb, in use by " in shown
    assert f"(PID {holder.pid}: ".encode() in shown
    after = shown.rsplit(b"\x1b[2K", 1)[-1]  # what stays once the note is wiped
    assert (b"| player " if args[0] == "players" else b"already loaded") in after


def test_a_reader_on_a_terminal_gives_up_after_its_wait_in_one_line(work: Path) -> None:
    with hold(work / "club.duckdb", "write") as holder:
        code, shown = run_on_terminal(["players", "--db", "club.duckdb", "--wait", "1"], work)
    assert code == 1, shown.decode(errors="replace")
    assert b"waiting up to 1 s for club.duckdb" in shown  # shown while it waited, then wiped
    lasting = shown.rsplit(b"\x1b[2K", 1)[-1].decode()
    assert lasting.strip().splitlines() == [
        f"ofcstats: club.duckdb: the database is in use by {holder_name(holder)}; waited 1 s. "
        "Close that program or its connection (a notebook: con.close()), or wait longer: "
        "ofcstats players --wait SECONDS (or $OFCSTATS_LOCK_WAIT)"]


def holder_name(holder: subprocess.Popen[str]) -> str:
    """How the lock message names the test's holding process."""
    return f"{Path(sys.executable).resolve().name} (PID {holder.pid}: python -c ...)"
