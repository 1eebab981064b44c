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

import polars as pl
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
    assert re.search(rb"\| (\d\.\d{3}|none) \(\d\.\d{3}-\d\.\d{3}\) ", piped.stdout), piped.stdout
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


def on_screen(shown: bytes, columns: int = 80) -> list[str]:
    """What a terminal ``columns`` wide shows once a command is done (its lines, bars that
    wiped themselves gone), by a terminal emulator fed everything the command wrote."""
    pyte = pytest.importorskip("pyte")
    screen = pyte.HistoryScreen(columns, 50, history=1_000_000)
    pyte.ByteStream(screen).feed(shown)
    # The lines scrolled off the top, then those on the screen.
    scrolled = ["".join(line[x].data for x in range(columns)) for line in screen.history.top]
    lines = [line.rstrip() for line in [*scrolled, *screen.display]]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def printed_lines(shown: bytes) -> list[str]:
    """The lines a command printed, escape sequences left out (a line wider than the
    terminal shows here at its full length, not as the terminal wraps it)."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode(errors="replace"))
    return [line.split("\r")[-1] for line in text.replace("\r\n", "\n").split("\n")]


NARROW = {"COLUMNS": "80"}
BAR = re.compile(r"━|\d:\d\d:\d\d")


@pytest.mark.parametrize("args", [
    ["score", "log.jsonl"], ["score", "log.jsonl", "-f", "csv"],
    ["score", "log.jsonl", "-f", "jsonl"], ["compare", "--db", "club.duckdb"],
    ["players", "--db", "club.duckdb", "--ruleset", "american"],
    ["ingest", "log.jsonl", "--db", "screen.duckdb"],
    ["rescore", "--db", "club.duckdb", "-r", "western"],
], ids=lambda args: "-".join(args[:3]))
def test_no_progress_text_is_left_on_the_screen(work: Path, args: list[str]) -> None:
    code, shown = run_on_terminal(args, work, env=NARROW)
    assert code == 0, shown.decode(errors="replace")
    screen = on_screen(shown)
    assert screen, shown
    left = [line for line in screen if BAR.search(line)]
    assert not left, left


def test_the_screen_check_sees_a_bar_left_behind() -> None:
    assert BAR.search(on_screen(b"read \xe2\x94\x81\xe2\x94\x81 0:00:00| ruleset | hand_id\r\n")[0])
    assert on_screen(b"read 0:00:01\r\x1b[2K| ruleset |\r\n") == ["| ruleset |"]


@pytest.mark.parametrize("args", [
    ["ingest", "log.jsonl", "--db", "fits.duckdb", "--quiet"],
    ["db", "info", "--db", "club.duckdb"],
    ["rulesets"],
    ["rulesets", "show", "finnish-spade"],
    ["rulesets", "show", "russian"],
    ["rescore", "--db", "club.duckdb", "-r", "pokerstars", "--quiet"],
    ["hands", "--db", "club.duckdb", "--quiet"],
    ["compare", "--db", "club.duckdb", "--quiet"],
    ["players", "--db", "club.duckdb", "--quiet"],
    ["player", "ann", "--db", "club.duckdb", "--quiet"],
], ids=lambda args: "-".join(args[:3]))
def test_every_line_fits_80_columns(work: Path, args: list[str]) -> None:
    code, shown = run_on_terminal(args, work, env=NARROW)
    assert code == 0, shown.decode(errors="replace")
    lines = printed_lines(shown)
    wide = [line for line in lines if len(line) > 80]
    assert not wide, wide


def test_a_summary_too_wide_for_the_terminal_breaks_between_words(work: Path) -> None:
    code, shown = run_on_terminal(["ingest", "log.jsonl", "--db", "words.duckdb", "--quiet"],
                                  work, env={"COLUMNS": "40"})
    assert code == 0, shown.decode(errors="replace")
    lines = [line for line in printed_lines(shown) if line.strip()]
    assert len(lines) > 1
    assert all(len(line) <= 40 for line in lines), lines
    joined = " ".join(line.strip() for line in lines)
    assert "200 hands loaded, 0 duplicates skipped, 0 rejected in " in joined, joined


def test_a_table_on_a_terminal_says_what_its_short_headers_mean(work: Path) -> None:
    code, shown = run_on_terminal(["players", "--db", "club.duckdb", "--ruleset", "american",
                                   "--quiet"], work, env=NARROW)
    assert code == 0, shown.decode(errors="replace")
    lines = printed_lines(shown)
    (legend,) = [line for line in lines if "more: ofcstats players --help" in line]
    assert "fouls: share fouled" in legend
    assert len(legend) <= 80
    # Into a pipe, the table alone: the legend is for a person reading.
    piped = run_in_pipe(["players", "--db", "club.duckdb", "--ruleset", "american"], work)
    assert b"--help" not in piped.stdout


def test_compare_at_60_columns_keeps_the_columns_it_exists_for(work: Path) -> None:
    code, shown = run_on_terminal(["compare", "--db", "club.duckdb", "--quiet"], work,
                                  env={"COLUMNS": "60"})
    assert code == 0, shown.decode(errors="replace")
    header = next(line for line in printed_lines(shown) if line.startswith("| "))
    assert "skill (95%)" in header
    assert "hands_to_tell" in header
    assert "with --wide" in shown.decode(errors="replace")  # others were left out


def test_a_table_column_has_one_number_of_decimals(work: Path) -> None:
    code, shown = run_on_terminal(["players", "--db", "club.duckdb", "--ruleset", "american",
                                   "--quiet", "--wide"], work, env={"COLUMNS": "300"})
    assert code == 0, shown.decode(errors="replace")
    rows = [line.split("|")[1:-1] for line in printed_lines(shown)
            if line.startswith("| ") and not line.startswith("| player")]
    assert len(rows) >= 2
    for cells in zip(*rows, strict=True):
        places = {len(cell.strip().split(".")[1]) for cell in cells
                  if re.fullmatch(r"-?[\d,]+\.\d+", cell.strip())}
        assert len(places) <= 1, cells


def test_an_empty_database_sends_the_user_to_ingest_not_rescore(work: Path) -> None:
    empty = work / "nothing.duckdb"
    with Store(empty):
        pass
    run = run_in_pipe(["compare", "--db", str(empty)], work)
    assert run.returncode == 1
    message = run.stderr.decode()
    assert "load hands with ofcstats ingest" in message
    assert "rescore" not in message


def test_a_misspelled_ruleset_gets_the_nearest_name_not_a_command_that_fails(
        work: Path) -> None:
    run = run_in_pipe(["players", "--db", "club.duckdb", "--ruleset", "americn"], work)
    assert run.returncode == 2
    message = run.stderr.decode()
    assert "did you mean american?" in message
    assert "rescore" not in message


def test_review_by_situation_at_80_columns_keeps_the_comparison_with_the_table() -> None:
    """The view exists to set a player's loss beside the table's: those columns are the
    last a narrow terminal loses."""
    from ofcstats.cli.output import table_text  # noqa: PLC0415

    frame = pl.DataFrame({
        "player": ["carol"], "situation": ["chasing fantasyland"],
        "decisions": [1234], "mean_ev_loss": [0.25], "95% interval": ["0.201 to 0.299"],
        "table_mean_ev_loss": [0.2], "vs_table": [0.05]})
    text = table_text(frame, "situations", width=80)
    header = text.splitlines()[0]
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "table_ev_loss" in header
    assert "vs_table" in header
    assert "95% interval" not in header  # left out first
