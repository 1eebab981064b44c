"""What the Python API costs: ``import ofcstats`` in a fresh process beside the bare
interpreter and the command line's import (the baselines, in the same run), and a
question asked of an open handle beside the same command run as a process."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ofcstats

ROOT = Path(__file__).parent.parent


def _best(action: Callable[[], Any], times: int) -> float:
    best = float("inf")
    for _ in range(times):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def _process(code: str) -> float:
    return _best(lambda: subprocess.run([sys.executable, "-c", code], check=True,
                                        cwd=ROOT), 5)


def run(quick: bool = False) -> None:
    """Print the best of five (imports) or three (questions) timings."""
    print(f"{'import, in a fresh process':<44} {'seconds':>8}")
    for label, code in (("python -c pass (baseline)", "pass"),
                        ("import ofcstats", "import ofcstats"),
                        ("import ofcstats.cli (the commands)", "import ofcstats.cli"),
                        ("import ofcstats; ofcstats.api loaded", "import ofcstats.api")):
        print(f"{label:<44} {_process(code):>8.3f}")
    club = ofcstats.sample()
    times = 1 if quick else 3
    print(f"\n{'players on the sample (3,250 hands)':<44} {'seconds':>8}")
    print(f"{'club.players() on an open handle':<44} "
          f"{_best(club.players, times):>8.3f}")
    command = [sys.executable, "-m", "ofcstats", "players", "--db", str(club.path), "-f", "json"]
    print(f"{'ofcstats players -f json (a process)':<44} "
          f"{_best(lambda: subprocess.run(command, check=True, capture_output=True), times):>8.3f}")
