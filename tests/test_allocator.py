"""Keeping freed memory for reuse while scoring (ofcstats.allocator)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from ofcstats.allocator import reuse_freed_memory

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
