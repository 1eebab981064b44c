"""The one exception family of ofcstats: every message names what was wrong and where."""

from __future__ import annotations


class OfcstatsError(Exception):
    """Base class: the CLI turns these into a clean message and a non-zero exit code."""


class CardError(OfcstatsError, ValueError):
    """Text that is not a card, or cards that cannot form the requested set."""


class RulesetError(OfcstatsError, ValueError):
    """A ruleset or fantasyland policy with a bad key or value, or an unknown name."""


class HandError(OfcstatsError, ValueError):
    """A logged hand that breaks the log format (docs/format.md); the message says which rule."""


class UsageError(OfcstatsError, ValueError):
    """Something the user named that is missing or unknown: a file, a filter value, a place
    to write. The command stops before creating anything (exit code 2)."""


class StoreError(OfcstatsError):
    """The database cannot be opened, is from a newer version, or an operation on it failed."""


class NothingLoadedError(StoreError):
    """Every hand an ingest read into a new database was rejected: the database is not
    created (one that existed keeps the rejects, in its rejects table)."""


class DatabaseInUseError(StoreError):
    """Another program held the database for longer than the wait allowed. The message
    names the program; :meth:`advice` words it for the way a longer wait is asked for (a
    function's argument, a command's option)."""

    def __init__(self, path: str, holder: str, waited: float) -> None:
        self.path, self.holder, self.waited = path, holder, waited
        super().__init__(self.advice("wait=SECONDS"))

    def advice(self, longer: str) -> str:
        """The message, its last words saying to wait longer with ``longer``."""
        return (f"{self.path}: the database is in use by {self.holder}; waited "
                f"{self.waited:g} s. Close that program or its connection (a notebook: "
                f"con.close()), or wait longer: {longer} (or $OFCSTATS_LOCK_WAIT)")


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, with what the work kept and what to run next, in words (``12,000 of 30,000
    hands scored, each batch kept whole; run ofcstats rescore to score the rest``). A
    :class:`KeyboardInterrupt` still, so that whatever stops on Ctrl-C stops on it."""

    def __init__(self, kept: str) -> None:
        super().__init__(kept)
        self.kept = kept
