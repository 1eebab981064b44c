"""The ruleset model: frozen, self-validating dataclasses loaded from TOML (docs/rules.md §3-§7).

Rulesets differ only in numbers: head-to-head unit values, the foul penalty, royalty
tables, switches such as the Finnish spade bonus, and the fantasyland policy. Nothing
in the scoring code asks which preset it is scoring.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from ofcstats import evaluate
from ofcstats.cards import RANKS
from ofcstats.errors import CardError, RulesetError
from ofcstats.evaluate import Category
from ofcstats.stakes import LOSS_CAP, POINT_VALUE
from ofcstats.variants import Variant

FIVE_CARD_ROYALTY_KEYS = (
    "trips", "straight", "flush", "full_house", "quads", "straight_flush", "royal_flush",
)
_FIVE_CARD_CATEGORIES = {name: Category[name.upper()] for name in FIVE_CARD_ROYALTY_KEYS}


def _fail(where: str, key: str, value: object, why: str) -> RulesetError:
    return RulesetError(f"{where}: {key} = {value!r}: {why}")


# Scoring keeps per-seat counts in 16-bit integers; with every value at most this, no
# hand of up to four seats can overflow them.
MAX_VALUE = 1000


def _check_int(where: str, key: str, value: object, *, minimum: int = 0,
               maximum: int = MAX_VALUE) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, key, value, "must be a whole number")
    if value < minimum:
        raise _fail(where, key, value, f"must be at least {minimum}")
    if value > maximum:
        raise _fail(where, key, value, f"must be at most {maximum}")
    return value


def _top_hand(text: str) -> tuple[Category, int]:
    """``"QQ"`` -> (PAIR, rank of queen); ``"AAA"`` -> (TRIPS, rank of ace)."""
    upper = text.upper().replace("10", "T")
    if len(upper) in (2, 3) and len(set(upper)) == 1 and upper[0] in RANKS:
        return (Category.PAIR if len(upper) == 2 else Category.TRIPS), RANKS.index(upper[0])
    raise ValueError(text)


@dataclass(frozen=True)
class HeadToHead:
    """Unit values of a pairwise settlement (docs/rules.md §3).

    ``points(A) = row*(w-l) + majority*([w>=2]-[l>=2]) + scoop*([w=3]-[l=3])``, plus
    ``table_bonus`` for every row in which a seat beats every opponent, collected from
    each opponent (the Russian system).

    >>> HeadToHead(row=1, majority=0, scoop=3).scoop_value
    6
    """

    row: int
    majority: int = 0
    scoop: int = 0
    table_bonus: int = 0
    where: str = field(default="head_to_head", repr=False, compare=False)

    def __post_init__(self) -> None:
        for key in ("row", "majority", "scoop", "table_bonus"):
            _check_int(self.where, key, getattr(self, key))
        if self.row + self.majority + self.scoop == 0:
            raise _fail(self.where, "row", self.row, "row, majority and scoop are all 0")
        if self.scoop_value > MAX_VALUE:
            raise _fail(self.where, "row", self.row,
                        f"a scoop would pay 3*row + majority + scoop = {self.scoop_value}, "
                        f"more than {MAX_VALUE}")

    @property
    def scoop_value(self) -> int:
        """What winning all three rows pays, table bonus apart."""
        return 3 * self.row + self.majority + self.scoop

    @property
    def two_one_value(self) -> int:
        """What winning two rows and losing one pays."""
        return self.row + self.majority


@dataclass(frozen=True)
class RoyaltyTable:
    """Royalties by row (docs/rules.md §4): top by pair or trips rank, 5-card rows by category.

    >>> table = RoyaltyTable("demo", top={"QQ": 7}, middle={"flush": 8}, bottom={})
    >>> from ofcstats.cards import parse_cards
    >>> int(table.values()[0][evaluate.strength3([parse_cards("Qs Qh 2c")])[0]])
    7
    """

    name: str
    top: Mapping[str, int]
    middle: Mapping[str, int]
    bottom: Mapping[str, int]
    description: str = ""
    where: str = field(default="royalties", repr=False, compare=False)

    def __post_init__(self) -> None:
        for key, value in self.top.items():
            try:
                _top_hand(key)
            except ValueError:
                raise _fail(
                    f"{self.where}.top", key, value,
                    "keys of the top table are pairs like \"66\" or trips like \"AAA\"",
                ) from None
            _check_int(f"{self.where}.top", key, value)
        for row in ("middle", "bottom"):
            for key, value in getattr(self, row).items():
                if key not in _FIVE_CARD_CATEGORIES:
                    raise _fail(
                        f"{self.where}.{row}", key, value,
                        f"not a category; use one of {', '.join(FIVE_CARD_ROYALTY_KEYS)}",
                    )
                _check_int(f"{self.where}.{row}", key, value)
        object.__setattr__(self, "top", MappingProxyType(dict(self.top)))
        object.__setattr__(self, "middle", MappingProxyType(dict(self.middle)))
        object.__setattr__(self, "bottom", MappingProxyType(dict(self.bottom)))

    def __hash__(self) -> int:
        return hash((self.name, tuple(self.top.items()), tuple(self.middle.items()),
                     tuple(self.bottom.items())))

    def values(self) -> tuple[npt.NDArray[np.int16], npt.NDArray[np.int16], npt.NDArray[np.int16]]:
        """Royalty of every strength, one array per row, indexed by strength."""
        return self._values

    @cached_property
    def _values(self) -> tuple[npt.NDArray[np.int16], npt.NDArray[np.int16],
                               npt.NDArray[np.int16]]:
        count = evaluate.strength_count() + 1
        strengths = np.arange(count)
        cats = evaluate.category(strengths)
        primary = evaluate.primary_rank(strengths)
        sizes = evaluate.row_size(strengths)
        top = np.zeros(count, dtype=np.int16)
        for key, value in self.top.items():
            cat, rank = _top_hand(key)
            top[(sizes == 3) & (cats == cat) & (primary == rank)] = value
        rows = [top]
        for table in (self.middle, self.bottom):
            values = np.zeros(count, dtype=np.int16)
            for key, value in table.items():
                values[(sizes == 5) & (cats == _FIVE_CARD_CATEGORIES[key])] = value
            rows.append(values)
        for values in rows:
            values.flags.writeable = False
        return rows[0], rows[1], rows[2]

    @property
    def is_empty(self) -> bool:
        """True when no row pays anything."""
        return not any(v for t in (self.top, self.middle, self.bottom) for v in t.values())


REPEAT_SCOPES = ("game", "streak")
"""What a fantasyland repeat limit counts over (see :class:`FantasylandPolicy`)."""


@dataclass(frozen=True)
class FantasylandPolicy:
    """When a seat enters and stays in fantasyland, and how many cards it gets (docs/rules.md §6).

    Thresholds are hands (see :func:`ofcstats.evaluate.weakest`): ``entry = "QQ"`` means a
    pair of queens or better on top. ``entry_cards`` (the ``progressive`` policy) maps the
    top hand that earned entry to the cards dealt, counted as in Pineapple; in classic and
    turbo a seat gets one card fewer, having no discard. A policy without it deals the
    variant's flat count (13, or 14 in Pineapple). ``repeat_limit`` is how many repeats
    (a fantasyland hand right after the same seat's fantasyland hand) a seat may play
    (``None``: no limit), counted over ``repeat_scope``: ``"game"``, every repeat in one
    game counts, however the seat got back into fantasyland (the sources: one repeat per
    game); ``"streak"``, only the repeats of the current run of fantasyland hands count,
    so a seat that leaves and re-enters may repeat again in the same game.
    """

    name: str
    description: str = ""
    entry: str | None = None
    stay_top: str | None = None
    stay_middle: str | None = None
    stay_bottom: str | None = None
    repeat_limit: int | None = None
    entry_cards: Mapping[str, int] = field(default_factory=dict)
    repeat_scope: str = "game"
    in_sources: bool = True
    where: str = field(default="fantasyland", repr=False, compare=False)

    def __post_init__(self) -> None:
        checks = (
            ("entry", self.entry, "top"),
            ("stay.top", self.stay_top, "top"),
            ("stay.middle", self.stay_middle, "five"),
            ("stay.bottom", self.stay_bottom, "five"),
        )
        for key, spec, row in checks:
            if spec is None:
                continue
            if not isinstance(spec, str):
                raise _fail(self.where, key, spec, "must be a hand such as \"QQ\" or \"quads\"")
            try:
                strength = evaluate.weakest(spec)
            except CardError as error:
                raise _fail(self.where, key, spec, str(error)) from None
            if (evaluate.row_size([strength])[0] == 3) != (row == "top"):
                want = "a top hand like \"QQ\" or \"222\"" if row == "top" else "a category name"
                raise _fail(self.where, key, spec, f"must be {want}")
        if self.entry is None and (self.stay_top or self.stay_middle or self.stay_bottom):
            raise _fail(self.where, "stay", "...", "a policy without entry cannot have stay rules")
        if self.repeat_limit is not None:
            _check_int(self.where, "repeat_limit", self.repeat_limit)
        if self.repeat_scope not in REPEAT_SCOPES:
            raise _fail(self.where, "repeat_scope", self.repeat_scope,
                        f"use one of {', '.join(REPEAT_SCOPES)}")
        for key, value in self.entry_cards.items():
            try:
                _top_hand(key)
            except ValueError:
                raise _fail(f"{self.where}.entry_cards", key, value,
                            "keys are top hands like \"QQ\" or \"222\"") from None
            _check_int(f"{self.where}.entry_cards", key, value, minimum=14, maximum=17)
        object.__setattr__(self, "entry_cards", MappingProxyType(dict(self.entry_cards)))

    def __hash__(self) -> int:
        return hash((self.name, self.entry, self.stay_top, self.stay_middle, self.stay_bottom,
                     self.repeat_limit, tuple(self.entry_cards.items()), self.repeat_scope))

    @property
    def enters(self) -> bool:
        """False for the ``none`` policy."""
        return self.entry is not None

    def thresholds(self) -> dict[str, int | None]:
        """Weakest qualifying strength for entry and for each stay row (None: never)."""
        return {
            key: None if spec is None else evaluate.weakest(spec)
            for key, spec in (("entry", self.entry), ("stay_top", self.stay_top),
                              ("stay_middle", self.stay_middle),
                              ("stay_bottom", self.stay_bottom))
        }

    def entry_card_steps(self, variant: Variant) -> list[tuple[int, int]]:
        """(weakest top strength, cards dealt) pairs, weakest first, for this variant."""
        discount = 0 if variant is Variant.PINEAPPLE else 1
        steps = [(evaluate.weakest(k), v - discount) for k, v in self.entry_cards.items()]
        return sorted(steps)


@dataclass(frozen=True)
class Naturals:
    """Hands paid before the showdown in 13-card Chinese poker (docs/rules.md §4); 0: not paid."""

    three_straights: int = 0
    three_flushes: int = 0
    six_pairs: int = 0
    dragon: int = 0
    where: str = field(default="naturals", repr=False, compare=False)

    def __post_init__(self) -> None:
        for key in ("three_straights", "three_flushes", "six_pairs", "dragon"):
            _check_int(self.where, key, getattr(self, key))

    @property
    def played(self) -> bool:
        """True when any natural pays."""
        return any((self.three_straights, self.three_flushes, self.six_pairs, self.dragon))

    @classmethod
    def default_for(cls, variants: Variant | tuple[Variant, ...], where: str = "naturals"
                    ) -> Naturals:
        """What a ruleset file without a ``[naturals]`` table pays (a decision, the
        source naming no amount): 3 units for each natural and 13 for a dragon when it is
        played under 13-card Chinese poker, where naturals are played; nothing otherwise."""
        played = variants if isinstance(variants, tuple) else (variants,)
        if any(v.thirteen_card for v in played):
            return cls(three_straights=3, three_flushes=3, six_pairs=3, dragon=13, where=where)
        return cls(where=where)


POOL_SPLITS = ("best", "share", "each")
"""Who takes the royalty pool (docs/rules.md §4): ``best``, the best royalty hand (equal
best hands share it); ``share``, every royalty hand shares it equally; ``each``, every
royalty hand takes one stake from each other player."""


@dataclass(frozen=True)
class RoyaltyPool:
    """The royalty pool of 13-card Chinese poker (docs/rules.md §4): each player in the
    showdown pays ``stake`` into a pool that the royalty hands take as ``split`` says;
    with no royalty hand at the table nobody pays. ``stake`` 0: no pool."""

    stake: int = 0
    split: str = "best"
    where: str = field(default="royalty_pool", repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_int(self.where, "stake", self.stake)
        if self.split not in POOL_SPLITS:
            raise _fail(self.where, "split", self.split, f"use one of {', '.join(POOL_SPLITS)}")

    @property
    def played(self) -> bool:
        """True when the ruleset plays a pool."""
        return self.stake > 0


MISSET_RULES = ("scoop", "per-row", "not-counted")
"""What a misset (fouled) hand costs: ``scoop``, it loses every row and pays
``foul_penalty`` to each live opponent; ``per-row``, it pays ``foul_penalty`` for each
wrongly set row (a row above the one below it: top over middle, middle over bottom);
``not-counted``, misses are not counted and the hand plays its rows as set."""


CRISS_CROSS_READINGS = ("both", "matching")
"""How the boards of a criss-cross hand meet (docs/rules.md §5): ``both``, each of a
player's two boards plays both of the opponent's (four heads-up meetings; a player's own
boards never meet); ``matching``, the first board plays the opponent's first and the
second the second (two meetings)."""


@dataclass(frozen=True)
class Ruleset:
    """Everything that turns the final boards of a hand into points (docs/rules.md §7)."""

    name: str
    head_to_head: HeadToHead
    royalties: RoyaltyTable
    fantasyland: FantasylandPolicy
    description: str = ""
    variants: tuple[Variant, ...] = (Variant.PINEAPPLE,)
    sources: tuple[str, ...] = ()
    foul_penalty: int | None = None
    surrender: int | None = None
    spade_bonus: bool = False
    naturals: Naturals = field(default_factory=Naturals)
    point_value: float | None = None
    loss_cap: float | None = None
    path: str | None = field(default=None, compare=False)
    misset: str = "scoop"
    wheel: bool = False
    royalty_pool: RoyaltyPool = field(default_factory=RoyaltyPool)
    low_middle: bool = False
    criss_cross: str = "both"

    def __post_init__(self) -> None:
        where = self.path or self.name
        if not isinstance(self.name, str) or not self.name:
            raise _fail(where, "name", self.name, "must be a non-empty string")
        if not self.variants or not all(isinstance(v, Variant) for v in self.variants):
            raise _fail(where, "variants", [str(v) for v in self.variants],
                        f"name one or more of {', '.join(v.value for v in Variant)}")
        if len(set(self.variants)) != len(self.variants):
            raise _fail(where, "variants", [v.value for v in self.variants],
                        "names a variant twice")
        if self.foul_penalty is not None:
            _check_int(where, "foul_penalty", self.foul_penalty)
        if self.surrender is not None:
            _check_int(where, "surrender", self.surrender)
        if not isinstance(self.wheel, bool):
            raise _fail(where, "wheel", self.wheel, "must be true or false")
        self._check_low_middle(where)
        if self.criss_cross not in CRISS_CROSS_READINGS:
            raise _fail(where, "criss_cross", self.criss_cross,
                        f"use one of {', '.join(CRISS_CROSS_READINGS)}")
        if self.misset not in MISSET_RULES:
            raise _fail(where, "misset", self.misset, f"use one of {', '.join(MISSET_RULES)}")
        if self.misset == "per-row" and self.foul_penalty is None:
            raise _fail(where, "misset", self.misset,
                        "needs foul_penalty: the points each wrongly set row costs")
        if not isinstance(self.spade_bonus, bool):
            raise _fail(where, "spade_bonus", self.spade_bonus, "must be true or false")
        for stake in (POINT_VALUE, LOSS_CAP):  # (money stays finite and exact within them)
            value = getattr(self, stake.key)
            if value is not None and (why := stake.problem(value)) is not None:
                raise _fail(where, stake.key, value, why)
        self._check_derived(where)

    def _check_low_middle(self, where: str) -> None:
        """Low in the middle is a 13-card agreement: no open-face deal, no fantasyland."""
        if not isinstance(self.low_middle, bool):
            raise _fail(where, "low_middle", self.low_middle, "must be true or false")
        if self.low_middle and not all(v.thirteen_card for v in self.variants):
            raise _fail(where, "low_middle", self.low_middle,
                        "is a 13-card agreement: play it under variants = [\"chinese-13\"] "
                        "(or \"criss-cross\") only")
        if self.low_middle and self.fantasyland.entry is not None:
            raise _fail(where, "low_middle", self.low_middle,
                        "is a 13-card agreement: it takes fantasyland = \"none\"")

    def _check_derived(self, where: str) -> None:
        """Every value the scorer derives is at most :data:`MAX_VALUE`, as the values
        given are: what a hand can pay one opponent in each way it can end, and a
        royalty doubled by the spade bonus (a surrender pays one less than a scoop, or
        ``surrender``, both already at most it). With that, a seat's points against three
        opponents stay well within the 16-bit counts of :mod:`ofcstats.score`."""
        h = self.head_to_head
        bonus = 3 * h.table_bonus  # every row beating the whole table
        ways: list[tuple[str, int | None, int, str]] = [
            ("table_bonus", h.table_bonus, h.scoop_value + bonus,
             "a scoop beating the whole table would pay 3*row + majority + scoop "
             "+ 3*table_bonus"),
        ]
        if self.misset == "scoop":
            ways.append(("foul_penalty", self.foul_penalty, self.foul_points + bonus,
                         "a foul would pay foul_penalty + 3*table_bonus"))
        elif self.misset == "per-row":
            ways.append(("foul_penalty", self.foul_penalty, 2 * self.foul_points + bonus,
                         "a misset with both rows set wrong would pay 2*foul_penalty "
                         "+ 3*table_bonus"))
        for key, value, paid, how in ways:
            if paid > MAX_VALUE:
                raise _fail(where, key, value, f"{how} = {paid}, more than {MAX_VALUE}")
        if self.spade_bonus:
            r = self.royalties
            for row, table in (("top", r.top), ("middle", r.middle), ("bottom", r.bottom)):
                for hand, royalty in table.items():
                    if 2 * royalty > MAX_VALUE:
                        raise _fail(f"{r.where}.{row}", hand, royalty,
                                    f"doubled by spade_bonus it would pay {2 * royalty}, "
                                    f"more than {MAX_VALUE}")


    def plays(self, variant: Variant | str) -> bool:
        """True when the ruleset is played under ``variant`` (its ``variants``)."""
        return Variant(variant) in self.variants

    @property
    def foul_points(self) -> int:
        """What a fouled seat pays each live opponent (default: the value of a scoop); with
        ``misset = "per-row"``, what it pays for each wrongly set row."""
        if self.foul_penalty is None:
            return self.head_to_head.scoop_value
        return self.foul_penalty

    @property
    def surrender_points(self) -> int:
        """What a surrendering seat pays each opponent (default: one less than a scoop)."""
        if self.surrender is None:
            return max(self.head_to_head.scoop_value - 1, 0)
        return self.surrender

    def summary(self) -> str:
        """One line: head to head, royalties, extras, fantasyland."""
        h = self.head_to_head
        parts = [f"2-1 pays {h.two_one_value}, 3-0 pays {h.scoop_value}"]
        if h.table_bonus:
            parts.append(f"table bonus {h.table_bonus} a row")
        parts.append(f"royalties {self.royalties.name}")
        if self.foul_penalty is not None:
            parts.append(f"foul {self.foul_penalty}")
        if self.spade_bonus:
            parts.append("2♠ doubles its row's royalties")
        if self.naturals.played:
            parts.append("naturals paid")
        if self.misset == "per-row":
            parts.append(f"misset {self.foul_points} a wrong row")
        elif self.misset == "not-counted":
            parts.append("misses not counted")
        if self.wheel:
            parts.append("straights in the wheel order")
        if self.low_middle:
            parts.append("the middle played as a 2-7 low")
        if Variant.CRISS_CROSS in self.variants:
            parts.append("criss-cross boards meet "
                         + ("both of the opponent's" if self.criss_cross == "both"
                            else "the opponent's matching board"))
        if self.royalty_pool.played:
            parts.append(f"royalty pool {self.royalty_pool.stake} a player "
                         f"({self.royalty_pool.split})")
        parts.append(f"fantasyland {self.fantasyland.name}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """A plain dictionary in the TOML layout, with tables inlined (for ``show`` and JSON)."""
        h = self.head_to_head
        data: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "variants": [v.value for v in self.variants],
            "sources": list(self.sources),
            "foul_penalty": self.foul_points,
            "misset": self.misset,
            "wheel": self.wheel,
            "surrender": self.surrender_points,
            "spade_bonus": self.spade_bonus,
        }
        if self.point_value is not None:
            data["point_value"] = self.point_value
        if self.loss_cap is not None:
            data["loss_cap"] = self.loss_cap
        data["head_to_head"] = {"row": h.row, "majority": h.majority, "scoop": h.scoop,
                                "table_bonus": h.table_bonus}
        r = self.royalties
        data["royalties"] = {"name": r.name, "top": dict(r.top), "middle": dict(r.middle),
                             "bottom": dict(r.bottom)}
        f = self.fantasyland
        policy: dict[str, Any] = {"name": f.name, "description": f.description}
        if f.entry is not None:
            policy["entry"] = f.entry
            policy["stay"] = {k: v for k, v in (("top", f.stay_top), ("middle", f.stay_middle),
                                                ("bottom", f.stay_bottom)) if v is not None}
            policy["repeat_limit"] = "none" if f.repeat_limit is None else f.repeat_limit
            policy["repeat_scope"] = f.repeat_scope
            if f.entry_cards:
                policy["entry_cards"] = dict(f.entry_cards)
        data["fantasyland"] = policy
        n = self.naturals
        data["naturals"] = {"three_straights": n.three_straights,
                            "three_flushes": n.three_flushes, "six_pairs": n.six_pairs,
                            "dragon": n.dragon}
        if self.low_middle:
            data["low_middle"] = True
        if self.criss_cross != "both":
            data["criss_cross"] = self.criss_cross
        if self.royalty_pool.played:
            data["royalty_pool"] = {"stake": self.royalty_pool.stake,
                                    "split": self.royalty_pool.split}
        return data
