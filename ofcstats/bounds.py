"""The bounds of every number a command or a method takes (:class:`Bound`), declared
here once: the command line's options and the Python API's arguments hold to them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ofcstats.errors import UsageError


@dataclass(frozen=True)
class Bound:
    """The values a number option may take, both ends included: past them the command
    stops at once with a one-line usage error (exit code 2) naming the option, the value
    and the range, before any work (or memory) is spent on it.

    >>> ROLLOUTS.low, ROLLOUTS.high
    (1, 10000)
    """

    low: int | float
    high: int | float

    def check(self, name: str, value: float) -> None:
        """Raise :class:`UsageError` for a ``value`` of ``name`` past the bound.

        >>> ROLLOUTS.check("rollouts", 10**8)
        Traceback (most recent call last):
        ofcstats.errors.UsageError: rollouts 100000000: must be from 1 to 10,000
        """
        if not self.low <= value <= self.high:
            raise UsageError(f"{name} {value}: must be from {self.low:,} to {self.high:,}")


HANDS = Bound(0, 100_000_000)
"""Hands a simulation plays (a log of 10**8 hands is about 100 GB)."""
ROLLOUTS = Bound(1, 10_000)
"""Rollouts per decision, of the review and of the montecarlo bot: memory and time grow
with them (the review takes fewer hands at once as they grow, and keeps its memory near
the default's); 10,000 measure a decision's loss to about a hundredth of its spread."""
SEED = Bound(0, 2**63 - 1)
"""A seed: any number a database's BIGINT holds."""
JOBS = Bound(1, 1024)
"""Worker processes or threads."""
SCREEN = Bound(0, 1_000)
"""Candidates the review's first step keeps (a street has fewer than 1,000)."""
SHARD_SIZE = Bound(1, 100_000_000)
"""Hands per shard of an export."""
RESAMPLES = Bound(100, 100_000)
"""Bootstrap resamples of an interval."""
CHANCE = Bound(0.0, 1.0)
"""A probability."""
POINTS = Bound(0.0, 1_000.0)
"""Points a value in points may be worth (as a ruleset's values: 0 to 1,000)."""
WAIT = Bound(0.0, 86_400.0)
"""Seconds to wait for a database another program holds: up to a day."""
ROWS = Bound(0, 1_000_000_000)
"""Rows a listing shows (``hands --limit``): more than any database holds."""
HAND_POINTS = Bound(-1_000_000, 1_000_000)
"""Points a seat wins or loses in one hand (a ruleset pays at most 1,000 points an
opponent; far fewer than 1,000 opponents share a table)."""
