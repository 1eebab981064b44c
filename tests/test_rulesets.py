"""Rulesets as data (docs/rules.md §3, §4, §6, §7): presets, tables, policies, user files."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ofcstats.cli import app
from ofcstats.errors import RulesetError
from ofcstats.rules import (
    load_policy,
    load_royalty_table,
    load_ruleset,
    load_rulesets,
    policy_names,
    preset_names,
    royalty_names,
)

ROOT = Path(__file__).resolve().parent.parent

PRESETS = {  # docs/rules.md §7: name -> (2-1 pays, 3-0 pays, royalty table, foul, fantasyland)
    "american": (1, 6, "american", 6, "standard"),
    "pokerstars": (1, 6, "pokerstars", 6, "none"),
    "pokerstars-win2": (2, 6, "pokerstars", 6, "none"),
    "western": (1, 6, "western", 6, "standard"),
    "classic-kush": (2, 6, "classic-kush", 6, "standard"),
    "pokerdom": (2, 4, "american", 6, "unlimited"),
    "finnish-spade": (1, 6, "american", 6, "standard"),
    "mercier-deeb": (1, 6, "american", 6, "unlimited"),
    "one-six": (1, 6, "none", 6, "none"),
    "two-four": (2, 4, "none", 4, "none"),
    "two-four-scoop": (1, 4, "none", 4, "none"),
    "foreign": (2, 4, "none", 4, "none"),
    "russian": (2, 4, "none", 4, "none"),
    "criss-cross": (2, 4, "none", 4, "none"),
}


def test_the_built_in_presets_are_exactly_those_of_rules_section_7() -> None:
    assert set(preset_names()) == set(PRESETS)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_pays_as_the_rules_table_says(name: str) -> None:
    ruleset = load_ruleset(name)
    two_one, scoop, royalties, foul, policy = PRESETS[name]
    assert ruleset.name == name
    assert ruleset.head_to_head.two_one_value == two_one
    assert ruleset.head_to_head.scoop_value == scoop
    assert ruleset.royalties.name == royalties
    assert ruleset.foul_points == foul
    assert ruleset.fantasyland.name == policy


def test_only_finnish_spade_doubles_and_only_russian_has_a_table_bonus() -> None:
    assert [n for n in preset_names() if load_ruleset(n).spade_bonus] == ["finnish-spade"]
    assert [n for n in preset_names() if load_ruleset(n).head_to_head.table_bonus] == ["russian"]


ROYALTIES = {  # rules §4: (trips, straight, flush, full house, quads, straight flush, royal)
    "american": ((2, 4, 8, 12, 20, 30, 50), (0, 2, 4, 6, 10, 15, 25)),
    "classic-kush": ((2, 4, 8, 12, 16, 20, 50), (0, 2, 4, 6, 8, 10, 25)),
    "pokerstars": ((0, 4, 8, 12, 20, 30, 50), (0, 2, 4, 6, 10, 15, 25)),
    "western": ((2, 4, 8, 12, 16, 20, 30), (0, 2, 4, 6, 8, 10, 15)),
}
CATEGORIES = ("trips", "straight", "flush", "full_house", "quads", "straight_flush",
              "royal_flush")


@pytest.mark.parametrize("name", sorted(ROYALTIES))
def test_royalty_table_matches_rules_section_4(name: str) -> None:
    table = load_royalty_table(name)
    middle, bottom = ROYALTIES[name]
    assert [table.middle.get(c, 0) for c in CATEGORIES] == list(middle)
    assert [table.bottom.get(c, 0) for c in CATEGORIES] == list(bottom)
    pairs = {r * 2: i + 1 for i, r in enumerate("6789TJQKA")}
    trips = {r * 3: 10 + i for i, r in enumerate("23456789TJQKA")}
    assert dict(table.top) == pairs | trips


def test_no_royalties_table_pays_nothing() -> None:
    assert load_royalty_table("none").is_empty
    assert {"american", "chinese-bonus", "none"} <= set(royalty_names())


def test_classic_chinese_bonuses_are_an_optional_table() -> None:
    table = load_royalty_table("chinese-bonus")
    assert table.top["QQQ"] == 2
    assert table.middle["full_house"] == 1
    assert table.bottom["quads"] == 3
    assert table.bottom["straight_flush"] == 4


def test_fantasyland_policies_of_section_6_including_progressive() -> None:
    assert set(policy_names()) == {"standard", "standard-streak", "unlimited",
                                   "bottom-top-only", "none", "progressive"}
    standard = load_policy("standard")
    assert (standard.entry, standard.stay_top, standard.stay_middle, standard.stay_bottom,
            standard.repeat_limit, standard.repeat_scope) == ("QQ", "222", "full_house",
                                                              "quads", 1, "game")
    assert load_policy("unlimited").repeat_limit is None
    assert load_policy("bottom-top-only").stay_middle is None
    assert not load_policy("none").enters
    progressive = load_policy("progressive")
    assert dict(progressive.entry_cards) == {"QQ": 14, "KK": 15, "AA": 16, "222": 17}
    assert not progressive.in_sources  # clearly marked as not in the sources


def test_a_users_own_toml_file_works_wherever_a_preset_name_does(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text(
        'name = "house"\nroyalties = "western"\nfantasyland = "progressive"\n'
        'foul_penalty = 5\n\n[head_to_head]\nrow = 1\nmajority = 0\nscoop = 3\n', encoding="utf-8")
    ruleset = load_ruleset(str(path))
    assert (ruleset.name, ruleset.foul_points, ruleset.royalties.name,
            ruleset.fantasyland.name) == ("house", 5, "western", "progressive")
    assert [r.name for r in load_rulesets(["american", str(path)])] == ["american", "house"]


H2H = "[head_to_head]\nrow = 1\nmajority = 0\nscoop = 0\n"


def test_an_inline_royalty_table_and_policy_work(tmp_path: Path) -> None:
    path = tmp_path / "inline.toml"
    path.write_text(
        '[head_to_head]\nrow = 2\nmajority = 0\nscoop = 0\n\n[royalties]\nname = "mine"\n'
        'middle = {}\n[royalties.top]\n"AA" = 5\n[royalties.bottom]\nquads = 7\n\n'
        '[fantasyland]\nentry = "KK"\nrepeat_limit = "none"\n[fantasyland.stay]\n'
        'top = "222"\n', encoding="utf-8")
    ruleset = load_ruleset(str(path))
    assert ruleset.name == "inline"
    assert ruleset.royalties.top["AA"] == 5
    assert not ruleset.royalties.middle
    assert ruleset.royalties.bottom["quads"] == 7
    assert ruleset.fantasyland.entry == "KK"
    assert ruleset.fantasyland.repeat_limit is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (H2H.replace("row = 1", "row = -1"), "bad.toml.head_to_head: row = -1: must be at least 0"),
        (H2H.replace("row = 1", "row = 1.5"),
         "bad.toml.head_to_head: row = 1.5: must be a whole number"),
        ("colour = 3\n" + H2H, "bad.toml: colour = 3: unknown key"),
        ('royalties = "gold"\n' + H2H, "unknown royalty table 'gold'"),
        ('fantasyland = "forever"\n' + H2H,
         "unknown fantasyland policy 'forever'"),
        (H2H + "[royalties]\ntop = {}\nbottom = {}\n[royalties.middle]\nquints = 3\n",
         "bad.toml.royalties.middle: quints = 3: not a category"),
        (H2H + '[royalties]\nmiddle = {}\nbottom = {}\n[royalties.top]\n"AK" = 3\n',
         "bad.toml.royalties.top: AK = 3: keys of the top table are pairs"),
        (H2H + '[fantasyland]\nentry = "full_house"\nrepeat_limit = 1\nstay = {}\n',
         "bad.toml.fantasyland: entry = 'full_house': must be a top hand"),
        ('variant = "holdem"\n' + H2H,
         "bad.toml: variant = 'holdem': use one of chinese-13"),
        ("spade_bonus = 1\n" + H2H,
         "spade_bonus = 1: must be true or false"),
        ("name = 'x'\n", "bad.toml: head_to_head is missing"),
        ("[head_to_head\n", "bad.toml: not valid TOML"),
    ],
)
def test_a_bad_ruleset_file_gets_an_error_naming_key_and_value(
        tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RulesetError) as error:
        load_ruleset(str(path))
    assert message in str(error.value).replace(str(tmp_path) + "/", "")


def test_an_unknown_preset_name_lists_the_known_ones() -> None:
    with pytest.raises(RulesetError, match="unknown ruleset 'amercan': use one of american,"):
        load_ruleset("amercan")


def test_two_rulesets_with_one_name_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('name = "american"\n' + H2H, encoding="utf-8")
    with pytest.raises(RulesetError, match="both call themselves 'american'"):
        load_rulesets(["american", str(path)])


@pytest.mark.parametrize(("variant", "expected"), [
    ("chinese-13", (3, 3, 3, 13)),
    ("pineapple", (0, 0, 0, 0)),
])
def test_naturals_default_for_a_chinese_13_file_without_a_naturals_table(
        tmp_path: Path, variant: str, expected: tuple[int, ...]) -> None:
    """A decision (the source names no amount): 3 units for each natural, 13 for a
    dragon, in a 13-card ruleset that does not say; an open-face ruleset pays none; a
    table given wins."""
    body = f'variant = "{variant}"\n[head_to_head]\nrow = 1\nmajority = 0\nscoop = 3\n'
    plain = tmp_path / f"{variant}.toml"
    plain.write_text(body, encoding="utf-8")
    n = load_ruleset(str(plain)).naturals
    assert (n.three_straights, n.three_flushes, n.six_pairs, n.dragon) == expected
    stated = tmp_path / f"{variant}-none.toml"
    stated.write_text(body + "[naturals]\ndragon = 0\n", encoding="utf-8")
    assert not load_ruleset(str(stated)).naturals.played


ROWS: dict[str, dict[str, int]] = {"top": {}, "middle": {}, "bottom": {}}
"""An inline royalty table that pays nothing (each row's table must be given)."""
POLICY = {"entry": "QQ", "stay": {}, "repeat_limit": 1}
"""An inline fantasyland policy: entry, stay rules and repeat limit (each must be given)."""


def _house(**keys: object) -> dict[str, object]:
    return {"name": "house", "head_to_head": {"row": 1, "majority": 0, "scoop": 3}, **keys}


# Each derived value at the most accepted, then one past it: refused at load, by key.
@pytest.mark.parametrize(("accepted", "refused", "message"), [
    (_house(head_to_head={"row": 1, "majority": 0, "scoop": 3, "table_bonus": 331}),
     _house(head_to_head={"row": 1, "majority": 0, "scoop": 3, "table_bonus": 332}),
     r"table_bonus = 332: a scoop beating the whole table would pay .* = 1002, more than "
     r"1000"),
    (_house(foul_penalty=997, head_to_head={"row": 1, "majority": 0, "scoop": 0, "table_bonus": 1}),
     _house(foul_penalty=998, head_to_head={"row": 1, "majority": 0, "scoop": 0, "table_bonus": 1}),
     r"foul_penalty = 998: a foul would pay foul_penalty \+ 3\*table_bonus = 1001, more "
     r"than 1000"),
    (_house(misset="per-row", foul_penalty=500),
     _house(misset="per-row", foul_penalty=501),
     r"foul_penalty = 501: a misset with both rows set wrong would pay 2\*foul_penalty "
     r"\+ 3\*table_bonus = 1002, more than 1000"),
    (_house(spade_bonus=True, royalties={**ROWS, "bottom": {"royal_flush": 500}}),
     _house(spade_bonus=True, royalties={**ROWS, "bottom": {"royal_flush": 501}}),
     r"royalties.bottom: royal_flush = 501: doubled by spade_bonus it would pay 1002, more "
     r"than 1000"),
    (_house(spade_bonus=True, royalties={**ROWS, "top": {"AAA": 500}}),
     _house(spade_bonus=True, royalties={**ROWS, "top": {"AAA": 501}}),
     r"royalties.top: AAA = 501: doubled by spade_bonus"),
    (_house(head_to_head={"row": 333, "majority": 0, "scoop": 1}),
     _house(head_to_head={"row": 333, "majority": 0, "scoop": 2}),
     r"row = 333: a scoop would pay 3\*row \+ majority \+ scoop = 1001, more than 1000"),
    (_house(surrender=1000), _house(surrender=1001), r"surrender = 1001: must be at most 1000"),
    (_house(foul_penalty=1000), _house(foul_penalty=1001),
     r"foul_penalty = 1001: must be at most 1000"),
    (_house(naturals={"dragon": 1000}), _house(naturals={"dragon": 1001}),
     r"naturals: dragon = 1001: must be at most 1000"),
    (_house(royalties={**ROWS, "middle": {"quads": 1000}}),
     _house(royalties={**ROWS, "middle": {"quads": 1001}}),
     r"royalties.middle: quads = 1001: must be at most 1000"),
    (_house(fantasyland={**POLICY, "entry_cards": {"QQ": 17}}),
     _house(fantasyland={**POLICY, "entry_cards": {"QQ": 18}}),
     r"fantasyland.entry_cards: QQ = 18: must be at most 17"),
    (_house(fantasyland={**POLICY, "entry_cards": {"QQ": 14}}),
     _house(fantasyland={**POLICY, "entry_cards": {"QQ": 13}}),
     r"fantasyland.entry_cards: QQ = 13: must be at least 14"),
    (_house(fantasyland={**POLICY, "repeat_limit": 1000}),
     _house(fantasyland={**POLICY, "repeat_limit": 1001}),
     r"repeat_limit = 1001: must be at most 1000"),
    (_house(point_value=0.25), _house(point_value=float("-inf")),
     r"point_value = -inf: must be a number from 0.000001 to 1,000,000"),
    (_house(loss_cap=50), _house(loss_cap=float("nan")),
     r"loss_cap = nan: must be a number from 1 to 1,000,000"),
    (_house(point_value=1_000_000), _house(point_value=1e308),
     r"house.toml: point_value = 1e\+308: must be a number from 0.000001 to 1,000,000$"),
    (_house(point_value=0.000001), _house(point_value=0.0000009),
     r"point_value = 9e-07: must be a number from 0.000001 to 1,000,000"),
    (_house(loss_cap=1_000_000), _house(loss_cap=1_000_000.5),
     r"house.toml: loss_cap = 1000000.5: must be a number from 1 to 1,000,000$"),
    (_house(loss_cap=1), _house(loss_cap=0.5),
     r"house.toml: loss_cap = 0.5: must be a number from 1 to 1,000,000$"),
])
def test_every_derived_value_is_checked_when_the_ruleset_loads(
        accepted: dict[str, object], refused: dict[str, object], message: str) -> None:
    from ofcstats.rules.load import ruleset_from  # noqa: PLC0415

    ruleset_from(accepted, "house.toml")
    with pytest.raises(RulesetError, match=message):
        ruleset_from(refused, "house.toml")


def test_every_accepted_ruleset_keeps_a_seats_points_within_16_bits() -> None:
    """The most a seat can win or lose in a hand against three opponents, from the
    values the scorer derives, fits the 16-bit counts; presets and the largest values
    accepted alike."""
    from ofcstats.rules.load import ruleset_from  # noqa: PLC0415
    from ofcstats.rules.model import MAX_VALUE  # noqa: PLC0415

    largest = ruleset_from(_house(
        head_to_head={"row": 333, "majority": 0, "scoop": 1, "table_bonus": 0}, spade_bonus=True,
        misset="per-row", foul_penalty=500, naturals={"dragon": 1000},
        royalties={"top": {"AAA": 500}, "middle": {"straight_flush": 500},
                   "bottom": {"royal_flush": 500}}), "house.toml")
    for ruleset in [*load_rulesets(preset_names()), largest]:
        h = ruleset.head_to_head
        per_opponent = max(h.scoop_value + 3 * h.table_bonus, ruleset.surrender_points,
                           2 * ruleset.foul_points + 3 * h.table_bonus,
                           ruleset.naturals.dragon)
        royalties = sum(max(t.values(), default=0) for t in (
            ruleset.royalties.top, ruleset.royalties.middle, ruleset.royalties.bottom))
        royalties *= 2 if ruleset.spade_bonus else 1
        assert per_opponent <= MAX_VALUE, ruleset.name
        assert 3 * (per_opponent + royalties) < 2 ** 15, ruleset.name


@pytest.mark.parametrize(("given", "missing"), [
    ("row = 1\n", "majority and scoop are missing"),
    ("row = 1\nscoop = 3\n", "majority is missing"),
    ("majority = 1\n", "row and scoop are missing"),
    ("table_bonus = 1\n", "row, majority and scoop are missing"),
])
def test_head_to_head_requires_row_majority_and_scoop(tmp_path: Path, given: str,
                                                       missing: str) -> None:
    """A missing one would pay 0 without a word (a scoop worth no more than its rows):
    the file is refused, naming them, in one line and with exit status 2."""
    path = tmp_path / "house.toml"
    path.write_text(f'name = "house"\n[head_to_head]\n{given}', encoding="utf-8")
    message = (f"{path}.head_to_head: {missing}: give each of row, majority and scoop (0 pays "
               "nothing)")
    with pytest.raises(RulesetError) as error:
        load_ruleset(str(path))
    assert str(error.value) == message
    done = CliRunner().invoke(app, ["rulesets", "show", str(path)])
    assert done.exit_code == 2
    assert done.stderr == f"ofcstats: {message}\n"


@pytest.mark.parametrize(("royalties", "missing"), [
    ({"top": {"AA": 9}, "bottom": {"quads": 10}}, "middle is missing"),
    ({"middle": {"flush": 8}}, "top and bottom are missing"),
    ({"name": "mine"}, "top, middle and bottom are missing"),
])
def test_a_royalty_table_gives_every_row(royalties: dict[str, object], missing: str) -> None:
    """A row left out would pay no royalty without a word: an empty row table pays none."""
    from ofcstats.rules.load import ruleset_from  # noqa: PLC0415

    with pytest.raises(RulesetError, match=rf"^house\.toml\.royalties: {missing}: give a table "
                       r"for each of top, middle and bottom \(an empty one pays nothing\)$"):
        ruleset_from(_house(royalties=royalties), "house.toml")
    given = ruleset_from(_house(royalties={"top": {"AA": 9}, "middle": {},
                                           "bottom": {"quads": 10}}), "house.toml").royalties
    assert (dict(given.top), dict(given.middle)) == ({"AA": 9}, {})


@pytest.mark.parametrize(("policy", "message"), [
    ({"entry": "QQ", "stay": {"top": "222"}}, "fantasyland: repeat_limit is missing"),
    ({"entry": "QQ", "repeat_limit": 1}, "fantasyland: stay is missing"),
    ({"entry": "QQ"}, "fantasyland: stay and repeat_limit are missing: give the hands that "
                      "stay (an empty [stay] table: none stays) and the repeats a seat may "
                      'play (a whole number, or "none" for no limit)'),
    ({"repeat_limit": 1}, "fantasyland: repeat_limit = 1: a policy without entry has no "
                          "fantasyland; give entry (the top hand that enters)"),
    ({"entry_cards": {"QQ": 14}}, "fantasyland: entry_cards = {'QQ': 14}: a policy without "
                                  "entry has no fantasyland"),
])
def test_a_fantasyland_policy_that_enters_gives_its_stay_rules_and_repeat_limit(
        policy: dict[str, object], message: str) -> None:
    """Left out, they would mean no stay, or no limit on repeats, without a word; a policy
    without entry is no fantasyland, and a rule given with it would be ignored."""
    from ofcstats.rules.load import ruleset_from  # noqa: PLC0415

    with pytest.raises(RulesetError) as error:
        ruleset_from(_house(fantasyland=policy), "house.toml")
    assert str(error.value).startswith(f"house.toml.{message}")
    unlimited = ruleset_from(_house(fantasyland={**POLICY, "repeat_limit": "none"}),
                             "house.toml")
    assert unlimited.fantasyland.repeat_limit is None
    assert not ruleset_from(_house(fantasyland={"name": "off"}), "house.toml").fantasyland.enters


def test_every_shipped_ruleset_policy_and_royalty_table_loads() -> None:
    """The presets, the sample data's and the tests' ruleset files, and every built-in
    policy and royalty table give every key that is required."""
    from ofcstats.rules.load import ruleset_from  # noqa: PLC0415

    files = sorted(str(p) for folder in ("data/rulesets", "tests/rulesets")
                   for p in (ROOT / folder).glob("*.toml"))
    rulesets = load_rulesets([*preset_names(), *files])
    assert len(rulesets) == len(preset_names()) + len(files)
    # As the database keeps them (a rescore reads them back): every key given too.
    assert all(ruleset_from(r.to_dict(), "stored").to_dict() == r.to_dict() for r in rulesets)
    assert all(load_policy(name).name == name for name in policy_names())
    assert all(load_royalty_table(name).name == name for name in royalty_names())


@pytest.mark.parametrize(("line", "message"), [
    ("point_value = 1e308", "point_value = 1e+308: must be a number from 0.000001 to "
                            "1,000,000"),
    ("point_value = 0", "point_value = 0: must be a number from 0.000001 to 1,000,000"),
    ("loss_cap = 1e7", "loss_cap = 10000000.0: must be a number from 1 to 1,000,000"),
    ("loss_cap = -5", "loss_cap = -5: must be a number from 1 to 1,000,000"),
])
def test_a_rulesets_point_value_or_loss_cap_outside_its_range_exits_2_naming_the_key(
        tmp_path: Path, line: str, message: str) -> None:
    """The ranges a log's values keep (ofcstats.stakes), for a ruleset's own: one line,
    exit status 2, before anything is scored."""
    path = tmp_path / "house.toml"
    path.write_text(f'name = "house"\n{line}\n' + H2H, encoding="utf-8")
    done = CliRunner().invoke(app, ["rulesets", "show", str(path)])
    assert done.exit_code == 2
    assert done.stderr == f"ofcstats: {path}: {message}\n"
