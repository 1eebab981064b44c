"""The four deals (docs/rules.md §5): how many cards each street brings and how many are kept.

>>> [(s.dealt, s.discard) for s in Variant("pineapple").streets]
[(5, 0), (3, 1), (3, 1), (3, 1), (3, 1)]
>>> Variant.OFC_TURBO.max_players, Variant.PINEAPPLE.max_players
(4, 3)
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from ofcstats.errors import HandError


class Street(NamedTuple):
    """Cards one street deals to a seat, and how many of them are discarded."""

    dealt: int
    discard: int


class Variant(StrEnum):
    """A game's deal. Values are the names used in logs and on the command line."""

    CHINESE_13 = "chinese-13"
    CRISS_CROSS = "criss-cross"
    OFC_CLASSIC = "ofc-classic"
    OFC_TURBO = "ofc-turbo"
    PINEAPPLE = "pineapple"

    @classmethod
    def parse(cls, text: object) -> Variant:
        """The variant named by ``text``, or an error listing the names."""
        try:
            return cls(str(text))
        except ValueError:
            names = ", ".join(VARIANT_NAMES)
            raise HandError(f"unknown variant {text!r}: use one of {names}") from None

    @property
    def streets(self) -> tuple[Street, ...]:
        """The streets of a seat that is not in fantasyland."""
        return _STREETS[self]

    @property
    def max_players(self) -> int:
        """Seats a hand may have: Pineapple deals 17 cards a seat, so at most three seats
        fit one deck; criss-cross seats each of its two players twice."""
        return 3 if self is Variant.PINEAPPLE else 4

    @property
    def boards_per_player(self) -> int:
        """Criss-cross deals each of its two players two separate 13-card boards, each
        logged as a seat of its own under the player's name; other variants one."""
        return 2 if self is Variant.CRISS_CROSS else 1

    @property
    def dealt_as(self) -> Variant:
        """The variant each board is dealt and set as: a criss-cross board is a 13-card
        Chinese poker board."""
        return Variant.CHINESE_13 if self is Variant.CRISS_CROSS else self

    @property
    def thirteen_card(self) -> bool:
        """13-card Chinese poker and its criss-cross: 13 cards at once, final rows only,
        naturals and surrender, no fantasyland."""
        return self.dealt_as is Variant.CHINESE_13

    @property
    def fantasyland_base_cards(self) -> int:
        """Fantasyland cards under a flat policy: 13, or 14 (one discarded) in Pineapple."""
        return 14 if self is Variant.PINEAPPLE else 13

    @property
    def has_fantasyland(self) -> bool:
        """13-card Chinese poker deals every seat 13 cards anyway."""
        return not self.thirteen_card


VARIANT_NAMES: tuple[str, ...] = tuple(v.value for v in Variant)
"""Every variant's name, in the order of :class:`Variant`: for help texts and messages."""

MIN_PLAYERS = 2
FANTASYLAND_MAX_CARDS = 17

_STREETS: dict[Variant, tuple[Street, ...]] = {
    Variant.CHINESE_13: (Street(13, 0),),
    Variant.CRISS_CROSS: (Street(13, 0),),
    Variant.OFC_CLASSIC: (Street(5, 0),) + (Street(1, 0),) * 8,
    Variant.OFC_TURBO: (Street(5, 0), Street(4, 0), Street(4, 0)),
    Variant.PINEAPPLE: (Street(5, 0),) + (Street(3, 1),) * 4,
}
