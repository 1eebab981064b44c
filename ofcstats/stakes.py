"""What a point may be worth: the ranges of the values money is made of.

A log's ``point_value`` (money per point) and each player's ``unit`` (a multiple of it),
and a ruleset's ``point_value`` and ``loss_cap``, come from files anyone may write; each
is held to a finite range where it comes in: a hand outside it is rejected
(:mod:`ofcstats.validate`), a ruleset file refused (:mod:`ofcstats.rules.model`). Within
them every money computation stays finite and exact: a point is worth at most
``1,000,000 * 1,000`` (the largest value at the largest unit), so even a hand at the most
a seat can win (2**15 points) moves under 10**14, the settlement's doubles stay far from
overflowing, and the money counted in millionths (:data:`MONEY_DECIMALS`) is summed in
128-bit integers (:mod:`ofcstats.store.money`): no number of hands overflows them. A
game's money is exact to the millionth below 10**8, to the cent below 10**12.

>>> POINT_VALUE.problem(0.5) is None, POINT_VALUE.problem(1e308)
(True, 'must be a number from 0.000001 to 1,000,000')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MONEY_DECIMALS = 6
"""Money is summed in millionths of a unit, as integers: the same bytes whatever the
order (or the number of threads) in which the games are added."""


@dataclass(frozen=True)
class Range:
    """The values a key may take: finite numbers from ``low`` to ``high``, both included."""

    key: str
    low: float
    high: float

    def holds(self, value: object) -> bool:
        """Whether ``value`` is a number (not a bool) in the range."""
        return (not isinstance(value, bool) and isinstance(value, int | float)
                and math.isfinite(value) and self.low <= value <= self.high)

    def problem(self, value: object) -> str | None:
        """Why ``value`` is not in the range, or None when it is."""
        return None if self.holds(value) else self.rule

    @property
    def rule(self) -> str:
        """What a value must be, as the messages say it."""
        return f"must be a number from {self.text}"

    @property
    def text(self) -> str:
        """The range as the messages and the docs write it: ``0.000001 to 1,000,000``."""
        return f"{_number(self.low)} to {_number(self.high)}"


def _number(value: float) -> str:
    """``1e-06`` -> ``0.000001``, ``1000000.0`` -> ``1,000,000``."""
    return f"{value:,.0f}" if value >= 1 else f"{value:.{MONEY_DECIMALS}f}".rstrip("0")


POINT_VALUE = Range("point_value", 10 ** -MONEY_DECIMALS, 1_000_000)
"""Money per point, logged or set by a ruleset: at least the millionth money is counted in
(a smaller one would settle to nothing), at most a million."""
UNIT = Range("unit", 0.001, 1_000)
"""A player's unit, in point values: a thousandth to a thousand (rules §5)."""
LOSS_CAP = Range("loss_cap", 1, 1_000_000)
"""The most a player loses in one game, in points (times the player's unit)."""
