"""The ``ofcstats`` command's entry point: the command line is imported with Python's
cyclic garbage collector paused (its passes over the objects the imports make are about
a tenth of the command's start-up), and those objects are then set aside from the
collector's later passes (:func:`gc.freeze`)."""

from __future__ import annotations

import gc


def main() -> None:
    """Start the ``ofcstats`` command."""
    gc.disable()
    try:
        from ofcstats.cli import main as command  # noqa: PLC0415 - imported with gc paused
    finally:
        gc.freeze()
        gc.enable()
    command()
