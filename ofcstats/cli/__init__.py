"""The ``ofcstats`` command: thin commands over the library.

Each command parses its options, calls one library function, and turns the library's
errors into one line on stderr and an exit code: 0 when everything was done; 1 when
some input was skipped (each skip reported on stderr as ``FILE:LINE: reason``) or the
command failed; 2 for a usage error (a missing input, an unknown option or filter value,
an output that cannot be written), found before anything is created. ``--debug`` shows
the traceback of an unexpected error.
"""

from __future__ import annotations

# The commands' modules, imported in the order --help lists their commands (each
# registers its commands on ``app`` as it is imported).
# isort: off
from ofcstats.cli import loading, scoring, questions, walking, reference, reviewing
# isort: on
from ofcstats.cli.app import app, exit_code
from ofcstats.cli.reference import cli_reference

__all__ = ["app", "cli_reference", "exit_code", "loading", "main", "questions", "reference",
           "reviewing", "scoring", "walking"]


def main() -> None:
    """Console entry point."""
    app()
