"""Loading rulesets, royalty tables and fantasyland policies from TOML (docs/rules.md §6, §7).

Built-in files live beside this module: ``presets/``, ``royalties/`` and
``fantasyland/``. Wherever a name is accepted, a path to a user's own TOML file works
too; a ruleset file may name a built-in royalty table or policy, or spell one inline.

>>> load_ruleset("american").head_to_head.scoop_value
6
>>> sorted(preset_names())[:3]
['american', 'classic-kush', 'criss-cross']
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from ofcstats.errors import RulesetError
from ofcstats.rows import ROW_NAMES
from ofcstats.rules.model import (
    POOL_SPLITS,
    FantasylandPolicy,
    HeadToHead,
    Naturals,
    RoyaltyPool,
    RoyaltyTable,
    Ruleset,
)
from ofcstats.variants import Variant

T = TypeVar("T")

_RULESET_KEYS = {
    "name", "description", "variant", "variants", "sources", "head_to_head", "royalties",
    "fantasyland",
    "foul_penalty", "surrender", "spade_bonus", "naturals", "point_value", "loss_cap",
    "misset", "wheel", "royalty_pool", "low_middle", "criss_cross",
}
_HEAD_TO_HEAD_REQUIRED = ("row", "majority", "scoop")
_HEAD_TO_HEAD_KEYS = {*_HEAD_TO_HEAD_REQUIRED, "table_bonus"}
_ROYALTY_KEYS = {"name", "description", *ROW_NAMES}
_POLICY_KEYS = {"name", "description", "entry", "stay", "repeat_limit", "repeat_scope",
                "entry_cards", "in_sources"}
_STAY_KEYS = set(ROW_NAMES)
_NATURAL_KEYS = {"three_straights", "three_flushes", "six_pairs", "dragon"}
_POOL_KEYS = {"stake", "split"}


def _folder(kind: str) -> Any:
    return resources.files("ofcstats.rules").joinpath(kind)


def _names(kind: str) -> list[str]:
    return sorted(p.name.removesuffix(".toml") for p in _folder(kind).iterdir()
                  if p.name.endswith(".toml"))


def preset_names() -> list[str]:
    """Names of the built-in rulesets (docs/rules.md §7)."""
    return _names("presets")


def presets_played_in(variant: Variant) -> list[str]:
    """Names of the built-in rulesets played under ``variant`` (their ``variants``).

    >>> presets_played_in(Variant.CRISS_CROSS)
    ['criss-cross']
    """
    return [name for name in preset_names() if variant in load_ruleset(name).variants]


def policy_names() -> list[str]:
    """Names of the built-in fantasyland policies (docs/rules.md §6)."""
    return _names("fantasyland")


def royalty_names() -> list[str]:
    """Names of the built-in royalty tables (docs/rules.md §4)."""
    return _names("royalties")


def _read(kind: str, name_or_path: str | Path, what: str) -> tuple[dict[str, Any], str]:
    text_name = str(name_or_path)
    path = Path(text_name)
    if text_name.endswith(".toml") or path.is_file():
        if not path.is_file():
            raise RulesetError(f"{text_name}: no such {what} file")
        source = text_name
        raw = path.read_bytes()
    else:
        if text_name not in _names(kind):
            known = ", ".join(_names(kind))
            raise RulesetError(f"unknown {what} {text_name!r}: use one of {known}, "
                               f"or the path of a .toml file")
        source = f"{kind}/{text_name}.toml"
        raw = _folder(kind).joinpath(f"{text_name}.toml").read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise RulesetError(f"{source}: not valid TOML: {error}") from None
    return data, source


def _check_keys(data: dict[str, Any], allowed: set[str], where: str) -> None:
    for key, value in data.items():
        if key not in allowed:
            raise RulesetError(f"{where}: {key} = {value!r}: unknown key; "
                               f"expected one of {', '.join(sorted(allowed))}")


def _require(data: dict[str, Any], keys: tuple[str, ...], where: str, why: str) -> None:
    """Every key of ``keys`` is in the table: a missing one would pay nothing silently."""
    missing = [key for key in keys if key not in data]
    if missing:
        named = " and ".join([", ".join(missing[:-1]), missing[-1]] if len(missing) > 1
                             else missing)
        raise RulesetError(f"{where}: {named} {'is' if len(missing) == 1 else 'are'} "
                           f"missing: {why}")


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise RulesetError(f"{where}: {key} = {value!r}: must be a table")
    return value


def royalty_table_from(data: dict[str, Any], where: str) -> RoyaltyTable:
    """A :class:`RoyaltyTable` from parsed TOML: every row's table given (empty pays
    nothing)."""
    _check_keys(data, _ROYALTY_KEYS, where)
    _require(data, ROW_NAMES, where, "give a table for each of top, middle and bottom "
             "(an empty one pays nothing)")
    return RoyaltyTable(
        name=str(data.get("name", "custom")),
        description=str(data.get("description", "")),
        top=_table(data, "top", where),
        middle=_table(data, "middle", where),
        bottom=_table(data, "bottom", where),
        where=where,
    )


def policy_from(data: dict[str, Any], where: str) -> FantasylandPolicy:
    """A :class:`FantasylandPolicy` from parsed TOML: a policy that enters gives its stay
    rules and repeat limit; one that does not (no fantasyland) gives neither."""
    _check_keys(data, _POLICY_KEYS, where)
    if "entry" in data:
        _require(data, ("stay", "repeat_limit"), where,
                 'give the hands that stay (an empty [stay] table: none stays) and the '
                 'repeats a seat may play (a whole number, or "none" for no limit)')
    else:
        for key in ("stay", "repeat_limit", "repeat_scope", "entry_cards"):
            if key in data:
                raise RulesetError(f"{where}: {key} = {data[key]!r}: a policy without entry "
                                   "has no fantasyland; give entry (the top hand that "
                                   "enters)")
    stay = _table(data, "stay", where)
    _check_keys(stay, _STAY_KEYS, f"{where}.stay")
    repeat = data.get("repeat_limit", "none")
    if repeat == "none":
        repeat = None
    elif isinstance(repeat, str):
        raise RulesetError(f"{where}: repeat_limit = {repeat!r}: a whole number or \"none\"")
    return FantasylandPolicy(
        name=str(data.get("name", "custom")),
        description=str(data.get("description", "")),
        entry=data.get("entry"),
        stay_top=stay.get("top"),
        stay_middle=stay.get("middle"),
        stay_bottom=stay.get("bottom"),
        repeat_limit=repeat,
        repeat_scope=data.get("repeat_scope", "game"),
        entry_cards=_table(data, "entry_cards", where),
        in_sources=bool(data.get("in_sources", True)),
        where=where,
    )


def _load(kind: str, name_or_path: str, what: str,
          build: Callable[[dict[str, Any], str], T]) -> T:
    """Read a built-in (by name) or a user's file (by path) and build it; a file without a
    ``name`` is named after itself."""
    data, source = _read(kind, name_or_path, what)
    data.setdefault("name", Path(source).stem)
    return build(data, source)


@cache
def load_royalty_table(name_or_path: str) -> RoyaltyTable:
    """A built-in royalty table by name, or one from a TOML file."""
    return _load("royalties", name_or_path, "royalty table", royalty_table_from)


@cache
def load_policy(name_or_path: str) -> FantasylandPolicy:
    """A built-in fantasyland policy by name, or one from a TOML file."""
    return _load("fantasyland", name_or_path, "fantasyland policy", policy_from)


def ruleset_from(data: dict[str, Any], where: str) -> Ruleset:
    """A :class:`Ruleset` from parsed TOML; every key checked, errors name key and value."""
    _check_keys(data, _RULESET_KEYS, where)
    h2h = _table(data, "head_to_head", where)
    if not h2h:
        raise RulesetError(f"{where}: head_to_head is missing: give row, majority and scoop")
    _check_keys(h2h, _HEAD_TO_HEAD_KEYS, f"{where}.head_to_head")
    _require(h2h, _HEAD_TO_HEAD_REQUIRED, f"{where}.head_to_head",
             "give each of row, majority and scoop (0 pays nothing)")
    head_to_head = HeadToHead(**h2h, where=f"{where}.head_to_head")

    royalties_spec = data.get("royalties", "none")
    if isinstance(royalties_spec, str):
        royalties = load_royalty_table(royalties_spec)
    elif isinstance(royalties_spec, dict):
        royalties = royalty_table_from(royalties_spec, f"{where}.royalties")
    else:
        raise RulesetError(f"{where}: royalties = {royalties_spec!r}: a table name or a table")

    policy_spec = data.get("fantasyland", "none")
    if isinstance(policy_spec, str):
        policy = load_policy(policy_spec)
    elif isinstance(policy_spec, dict):
        policy = policy_from(policy_spec, f"{where}.fantasyland")
    else:
        raise RulesetError(f"{where}: fantasyland = {policy_spec!r}: a policy name or a table")

    naturals_data = _table(data, "naturals", where)
    _check_keys(naturals_data, _NATURAL_KEYS, f"{where}.naturals")
    pool_data = _table(data, "royalty_pool", where)
    _check_keys(pool_data, _POOL_KEYS, f"{where}.royalty_pool")
    if "royalty_pool" in data:
        _require(pool_data, ("stake", "split"), f"{where}.royalty_pool",
                 "give the points each player pays into the pool (stake) and who takes it "
                 f"(split: {', '.join(POOL_SPLITS)})")
    variants = _variants(data, where)
    sources = data.get("sources", [])
    if not isinstance(sources, list):
        raise RulesetError(f"{where}: sources = {sources!r}: must be a list")
    return Ruleset(
        name=data.get("name", Path(where).stem),
        description=str(data.get("description", "")),
        variants=variants,
        sources=tuple(str(s) for s in sources),
        head_to_head=head_to_head,
        royalties=royalties,
        fantasyland=policy,
        foul_penalty=data.get("foul_penalty"),
        surrender=data.get("surrender"),
        misset=data.get("misset", "scoop"),
        wheel=data.get("wheel", False),
        low_middle=data.get("low_middle", False),
        criss_cross=data.get("criss_cross", "both"),
        spade_bonus=data.get("spade_bonus", False),
        naturals=Naturals(**naturals_data, where=f"{where}.naturals") if "naturals" in data
        else Naturals.default_for(variants, f"{where}.naturals"),
        royalty_pool=RoyaltyPool(**pool_data, where=f"{where}.royalty_pool"),
        point_value=data.get("point_value"),
        loss_cap=data.get("loss_cap"),
        path=where,
    )


def _variants(data: dict[str, Any], where: str) -> tuple[Variant, ...]:
    """The variants a ruleset is played under: ``variants = [...]``, or the older single
    ``variant = "..."``; a file with neither is a Pineapple ruleset."""
    if "variants" in data and "variant" in data:
        raise RulesetError(f"{where}: give variants or variant, not both")
    names = data.get("variants", [data.get("variant", Variant.PINEAPPLE.value)])
    key = "variants" if "variants" in data else "variant"
    if not isinstance(names, list) or not names:
        raise RulesetError(f"{where}: variants = {names!r}: must be a list of one or more "
                           f"of {', '.join(v.value for v in Variant)}")
    found = []
    for name in names:
        try:
            found.append(Variant(name))
        except ValueError:
            known = ", ".join(v.value for v in Variant)
            raise RulesetError(f"{where}: {key} = {name!r}: use one of {known}") from None
    if len(set(found)) != len(found):
        raise RulesetError(f"{where}: variants = {names!r}: names a variant twice")
    return tuple(found)


@cache
def load_ruleset(name_or_path: str) -> Ruleset:
    """A preset by name (docs/rules.md §7), or a ruleset from a user's TOML file."""
    return _load("presets", name_or_path, "ruleset", ruleset_from)


def load_rulesets(names: list[str] | tuple[str, ...]) -> list[Ruleset]:
    """Several rulesets, in order, without repeats; every preset when ``names`` is empty."""
    chosen = list(dict.fromkeys(names)) if names else preset_names()
    rulesets = [load_ruleset(name) for name in chosen]
    seen: dict[str, str] = {}
    for name, ruleset in zip(chosen, rulesets, strict=True):
        if ruleset.name in seen:
            raise RulesetError(f"{name} and {seen[ruleset.name]} both call themselves "
                               f"{ruleset.name!r}; give each ruleset its own name")
        seen[ruleset.name] = name
    return rulesets
