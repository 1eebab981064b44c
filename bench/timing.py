"""Timing a command in a child process: wall time and that child's own peak memory."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Linux counts the memory a process had before it called exec in its peak, and a child
# spawned from this (large) process starts out sharing it. So the command is started
# from a small Python process instead, which reports the command's own peak.
_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as report:
    report.write(f"{usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def timed_child(command: list[str]) -> tuple[float, int, str]:
    """Run ``command``; its wall time, its own peak RSS in KB and its standard output."""
    seconds, _, peak_kb, out = measured_child(command)
    return seconds, peak_kb, out


def measured_child(command: list[str]) -> tuple[float, float, int, str]:
    """Run ``command``; its wall time, its processor time (user and system: less moved
    by other programs on a busy machine), its own peak RSS in KB and its output."""
    with tempfile.TemporaryDirectory() as scratch:
        peak, out, err = (Path(scratch) / name for name in ("peak", "out", "err"))
        with out.open("wb") as stdout, err.open("wb") as stderr:
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", _LAUNCHER, str(peak), *command],
                                  stdout=stdout, stderr=stderr, check=False)
            seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{os.path.basename(command[0])} {command[1]} failed: "
                             f"{err.read_text()[-2000:]}")
        peak_kb, cpu = peak.read_text().split()
        return seconds, float(cpu), int(peak_kb), out.read_text()
