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
