"""The ``ofcstats`` command's entry point.

- The command line is imported with Python's cyclic garbage collector paused (its
  passes over the objects the imports make are about a tenth of the command's start-up),
  and those objects are then set aside from the collector's later passes
  (:func:`gc.freeze`).
- OpenBLAS (numpy's linear algebra) lets its idle threads sleep at once instead of
  spinning for a tenth of a second first: at numpy's import alone that spinning took a
  quarter of the start-up's processor time, and in a load it takes a core from the
  parsing. A value the user set is kept.
"""

from __future__ import annotations

import gc
import os


def main() -> None:
    """Start the ``ofcstats`` command."""
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # (its least: 2**4 cycles)
    gc.disable()
    try:
        from ofcstats.cli import main as command  # noqa: PLC0415 - imported with gc paused
    finally:
        gc.freeze()
        gc.enable()
    command()
