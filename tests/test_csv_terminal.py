"""CSV as a person sees it and as a program reads it: written to a terminal, the names
that come from logs (players, sessions, rulesets) are shown escaped, as a table shows
them; into a pipe (as into a file) they are kept as logged, with the guard against
spreadsheet formulas. Every command that writes CSV, each run for real both ways."""

from __future__ import annotations

import csv
import io
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from handgen import scored_database
from test_sanitize import FORMULA, RAW, RED, _log

from ofcstats import sanitize

ROOT = Path(__file__).parent.parent
HOUSE = "\u202ehouse\x1b]0;owned\x07"
"""A ruleset's name, from a user's file: a bidi override and a terminal title sequence."""

COMMANDS = {
    "players": ["players", "--db", "club.duckdb", "-r", "american", "-f", "csv", "-q"],
    "player": ["player", RED, "--db", "club.duckdb", "-f", "csv", "-q"],
    "compare": ["compare", "--db", "club.duckdb", "-f", "csv", "-q"],
    "sql": ["sql", "SELECT DISTINCT h.session_id, s.player FROM seats s JOIN hands h "
            "USING (hand_key) ORDER BY ALL", "--db", "club.duckdb", "-f", "csv", "-q"],
    "score": ["score", "hostile.jsonl", "-f", "csv", "-q"],
    "rulesets": ["rulesets", "-f", "csv"],
    "review": ["review", "--db", "club.duckdb", "--player", RED, "--rollouts", "2", "-f",
               "csv", "-q"],
}
FROM_LOGS = {"players", "player", "compare", "sql", "score", "review"}
"""The commands whose CSV holds text from logs or a user's ruleset file."""


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile log, scored under american and a ruleset whose name is hostile too."""
    folder = tmp_path_factory.mktemp("csv")
    log = _log(folder / "hostile.jsonl")
    text = (ROOT / "ofcstats" / "rules" / "presets" / "american.toml").read_text()
    house = folder / "house.toml"
    house.write_text(text.replace('name = "american"', 'name = "\\u202ehouse\\u001b]0;owned'
                                  '\\u0007"', 1), encoding="utf-8")
    scored_database(log, ["american", str(house)])
    return folder


def _command() -> list[str]:
    return [sys.executable, "-m", "ofcstats"]


def _environment() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k != "NO_COLOR"},
            "TERM": "xterm-256color", "COLUMNS": "120"}


def on_terminal(args: list[str], cwd: Path, timeout: float = 120) -> tuple[int, str, str]:
    """``ofcstats ARGS`` with its stdout on a pseudo-terminal (stderr a pipe): the exit
    code, what the terminal received (its line ends as written) and stderr."""
    primary, secondary = os.openpty()
    process = subprocess.Popen([*_command(), *args], cwd=cwd, env=_environment(),
                               stdin=subprocess.DEVNULL, stdout=secondary,
                               stderr=subprocess.PIPE, close_fds=True)
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
        elif process.poll() is not None:
            break
    os.close(primary)
    assert process.stderr is not None
    try:
        stderr = process.communicate(timeout=max(1.0, deadline - time.monotonic()))[1]
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail(f"ofcstats {' '.join(args)} did not finish in {timeout} s")
    return process.returncode, received.decode().replace("\r\n", "\n"), stderr.decode()


def in_pipe(args: list[str], cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run([*_command(), *args], cwd=cwd, env=_environment(),
                          capture_output=True, timeout=120, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("name", list(COMMANDS))
def test_csv_on_a_terminal_shows_names_escaped_and_into_a_pipe_as_logged(
        work: Path, name: str) -> None:
    code, piped, errors = in_pipe(COMMANDS[name], work)
    assert code == 0, errors
    as_logged = _rows(piped)
    cells = {cell for row in as_logged[1:] for cell in row}
    if name in FROM_LOGS:
        assert any(char in cell for cell in cells for char in RAW), cells  # kept as logged
    if name in {"sql", "score"}:
        assert "'" + FORMULA in cells  # the formula guard, as before
        assert not any(cell.startswith("=") for cell in cells)

    code, shown, errors = on_terminal(COMMANDS[name], work)
    assert code == 0, errors
    for char in RAW:
        assert char not in shown, repr(char)
    # The same CSV, every cell escaped as a table escapes it.
    assert _rows(shown) == [[sanitize.visible(cell) for cell in row] for row in as_logged]


def test_csv_into_a_file_keeps_the_names_as_logged_whatever_the_terminal(work: Path) -> None:
    out = work / "players.csv"
    code, shown, errors = on_terminal([*COMMANDS["players"], "-o", out.name], work)
    assert (code, shown) == (0, ""), errors
    code, piped, errors = in_pipe(COMMANDS["players"], work)
    assert out.read_text(encoding="utf-8") == piped
    assert RED in piped
