"""The one exception family of ofcstats: every message names what was wrong and where."""

from __future__ import annotations


class OfcstatsError(Exception):
    """Base class: the CLI turns these into a clean message and a non-zero exit code."""


class CardError(OfcstatsError, ValueError):
    """Text that is not a card, or cards that cannot form the requested set."""


class RulesetError(OfcstatsError, ValueError):
    """A ruleset or fantasyland policy with a bad key or value, or an unknown name."""


class HandError(OfcstatsError, ValueError):
    """A logged hand that breaks FORMAT.md; the message says which rule."""


class StoreError(OfcstatsError):
    """The database cannot be opened, is from a newer version, or an operation on it failed."""
