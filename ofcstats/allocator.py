"""Keep freed memory for reuse while loading or scoring large frames.

Scoring a large frame makes thousands of numpy temporaries of a few megabytes each.
By default glibc's ``malloc`` serves each from a fresh ``mmap`` and hands it back to
the kernel on ``free``; the next temporary is then faulted in and zeroed page by page,
and with two scoring threads the faults also queue on the process's memory map. On a
million hands that costs about a quarter of the scoring time (bench/pipeline.py).

:func:`reuse_freed_memory` tells ``malloc`` to serve such blocks from its heap and keep
what is freed there, so the same pages are reused. The price is that the process keeps
its peak heap until it exits instead of returning it, which suits a scoring run. Other
C libraries (and platforms without glibc) are left alone.

Loading (``ingest``) is the same story: every batch's arrays are fresh memory, and a
million street-form hands faulted in about 450,000 pages (1.8 GB, each zeroed by the
kernel) without it and 300,000 with it; the load took 10.3 to 10.4 s with it against
10.5 to 11.5 s without (three runs each, in turns). There several threads each keep
their heap's peak: a single file peaks about 30 MB higher, a directory of eight files
(read three or four at a time) at 1.6 GB against 1.1 GB.

The setting is the process's, not the library's: importing or calling ofcstats never
applies it. The ``ofcstats`` commands that load or score (``ingest``, ``score``,
``rescore``) opt in as they start; a notebook or program scoring large frames may call
it itself.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

# mallopt parameters (glibc's malloc.h).
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3

_MMAP_THRESHOLD = 32 << 20  # blocks under 32 MiB (glibc's largest setting) come from the heap
_TRIM_THRESHOLD = (1 << 31) - 1  # never shrink the heap (the largest value mallopt takes)
_TOP_PAD = 64 << 20  # grow the heap 64 MiB at a time

_applied: bool | None = None


def reuse_freed_memory() -> bool:
    """Make glibc's ``malloc`` keep freed blocks for reuse, once per process.

    Returns True when the setting is in force (glibc), False where there is nothing to
    set. Later calls return the first call's answer.
    """
    global _applied  # noqa: PLW0603 - a process-wide setting, applied once
    if _applied is None:
        _applied = _set_glibc_options()
    return _applied


def _set_glibc_options() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and others have no mallopt
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return all(mallopt(option, value) == 1 for option, value in (
        (_M_MMAP_THRESHOLD, _MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, _TRIM_THRESHOLD),
        (_M_TOP_PAD, _TOP_PAD)))
