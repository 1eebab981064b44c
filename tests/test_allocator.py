"""Keeping freed memory for reuse while loading or scoring (ofcstats.allocator)."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ofcstats import allocator
from ofcstats.allocator import reuse_freed_memory
from ofcstats.cli import app

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

# In a fresh process: how many bytes malloc holds in mmapped blocks while a 16 MiB numpy
# array lives (glibc's mallinfo2: hblkhd).
_PROBE = """
import ctypes, sys
import numpy as np
from ofcstats.allocator import reuse_freed_memory
class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2
if sys.argv[1] == "on":
    assert reuse_freed_memory()
before = libc.mallinfo2().hblkhd
block = np.ones(16 << 20, dtype=np.uint8)
print(libc.mallinfo2().hblkhd - before)
"""


def _mmapped_bytes_for_a_large_array(setting: str) -> int:
    done = subprocess.run([sys.executable, "-c", _PROBE, setting], capture_output=True,
                          text=True, check=True)
    return int(done.stdout)


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's")
def test_large_blocks_come_from_the_heap_once_freed_memory_is_kept() -> None:
    assert _mmapped_bytes_for_a_large_array("off") >= 16 << 20  # glibc's default: mmap
    assert _mmapped_bytes_for_a_large_array("on") == 0


def test_reuse_freed_memory_answers_the_same_every_time() -> None:
    first = reuse_freed_memory()
    assert reuse_freed_memory() is first
    assert first is GLIBC


# The library alone, in a fresh process: a frame large enough to be scored in parts (the
# size from which scoring once applied the setting itself), then whether it was applied.
_LIBRARY_PROBE = """
import sys
from pathlib import Path
import polars as pl
from ofcstats import allocator, reading
from ofcstats.rules import load_rulesets
from ofcstats.score import PARALLEL_FROM, score
seats = reading.read_all([Path(sys.argv[1])]).seats_for_scoring()
copies = PARALLEL_FROM // seats.height + 1
frame = pl.concat([seats.with_columns(hand_id=pl.col("hand_id") + f"-{n}")
                   for n in range(copies)])
assert frame.height >= PARALLEL_FROM
score(frame, load_rulesets(["american"]))
print(allocator._applied)
"""


def test_scoring_a_large_frame_from_the_library_leaves_malloc_alone() -> None:
    sample = Path(__file__).parent.parent / "data" / "sample" / "pineapple-american.jsonl"
    done = subprocess.run([sys.executable, "-c", _LIBRARY_PROBE, str(sample)],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "None"  # never asked for, so never set


@pytest.mark.parametrize("command", ["ingest", "score", "rescore"])
def test_the_commands_of_large_frames_opt_in_as_they_start(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bool] = []
    monkeypatch.setattr(allocator, "reuse_freed_memory", lambda: calls.append(True) or True)
    sample = Path(__file__).parent.parent / "data" / "sample" / "pineapple-american.jsonl"
    database = tmp_path / "club.duckdb"
    if command == "rescore":
        assert CliRunner().invoke(app, ["ingest", str(sample), "--db", str(database),
                                        "--quiet"]).exit_code == 0
        calls.clear()
    args = {"ingest": [str(sample), "--db", str(database)],
            "score": [str(sample), "-r", "american"],
            "rescore": ["--db", str(database)]}[command]
    result = CliRunner().invoke(app, [command, *args, "--quiet"])
    assert result.exit_code == 0, result.output
    assert calls == [True]
