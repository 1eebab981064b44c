"""The README's tour, run as written: every command of its shell blocks, in order, in a
folder of its own that holds the project's data/ (the files the tour names), each of
which must succeed."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)


def tour_commands(text: str) -> list[str]:
    """The commands of the shell blocks of the README's tour (its "A tour" section, up
    to the next section of the same level), continuation lines joined, comments left
    out.

    >>> tour_commands("## A tour\\n```sh\\nofcstats a \\\\\\n  --b 1  # c\\n```\\n## Next\\n")
    ['ofcstats a --b 1']
    """
    tour = text.split("\n## A tour\n", 1)[1] if "\n## A tour\n" in text else \
        text.split("## A tour\n", 1)[1]
    tour = tour.split("\n## ", 1)[0]
    commands = []
    for block in FENCE.findall(tour):
        joined = re.sub(r"\\\n\s*", "", block)
        for line in joined.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(shlex.join(words))
    return commands


def test_tour_is_found() -> None:
    commands = tour_commands(README.read_text(encoding="utf-8"))
    assert len(commands) >= 10
    named = {command.split()[1] for command in commands if command.startswith("ofcstats ")}
    assert {"simulate", "ingest", "rescore", "compare", "players", "player", "report",
            "review", "replay", "sql"} <= named


def test_tour_has_no_placeholders() -> None:
    """A reader copies the tour: every name in it is a file or a value that exists."""
    for command in tour_commands(README.read_text(encoding="utf-8")):
        assert not re.search(r"\b[A-Z]{2,}(?:_[A-Z]+)*\b(?!\))", command.replace(
            "SELECT", "").replace("FROM", "").replace("GROUP BY", "").replace(
            "ORDER BY", "").replace("AS", "").replace("DESC", "")), command


@pytest.mark.slow
def test_readme_tour_runs_as_written(tmp_path: Path) -> None:
    """Each command of the tour, in order, exits 0 (the later ones read what the earlier
    ones wrote)."""
    (tmp_path / "data").symlink_to(ROOT / "data", target_is_directory=True)
    env = {**os.environ,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("OFCSTATS_DB", None)
    for command in tour_commands(README.read_text(encoding="utf-8")):
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, (
            f"README tour: {command}\nexit {done.returncode}\n{done.stdout[-2000:]}"
            f"\n{done.stderr[-2000:]}")
    assert (tmp_path / "report.html").is_file()
    assert (tmp_path / "hand.html").is_file()
