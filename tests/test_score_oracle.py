"""The pipeline agrees with the plain one-hand-at-a-time scorer on every preset."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from handgen import random_hand, rich_board, seats_frame

from ofcstats.cards import parse_cards
from ofcstats.rules import load_ruleset, preset_names
from ofcstats.rules.reference import Seat, score_hand
from ofcstats.score import score


def mixed_hands(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    hands = []
    for i in range(n):
        variant = rng.choice(["pineapple", "ofc-classic", "ofc-turbo", "chinese-13",
                              "criss-cross"])
        players = 4 if variant == "criss-cross" else \
            rng.randint(2, 3 if variant == "pineapple" else 4)
        thirteen = variant in ("chinese-13", "criss-cross")
        fl = tuple(rng.random() < 0.2 for _ in range(players)) if not thirteen else ()
        hand = random_hand(rng, f"h{i}", "chinese-13" if thirteen else variant, players,
                           streets=False, fantasyland=fl)
        if variant == "criss-cross":  # each player's name on two seats, in any order
            hand["variant"] = variant
            names = rng.choice(["xxyy", "xyxy", "xyyx"])
            for p, name in zip(hand["players"], names, strict=True):
                p["name"] = name
        if rng.random() < 0.7:
            for p in hand["players"]:
                p.update(rich_board(rng, arrange=rng.random() < 0.9))
        if rng.random() < 0.3:  # per-player units: some players at other stakes
            for p in hand["players"]:
                p["unit"] = rng.choice([1.0, 1.0, 2.0, 10.0, 0.5])
        if thirteen:
            for p in hand["players"]:
                p["surrendered"] = rng.random() < 0.1
        hands.append(hand)
    return hands


RULESETS = Path(__file__).resolve().parent / "rulesets"
EXTRA = sorted(str(p) for p in RULESETS.glob("*.toml"))
"""Rulesets with the agreements no preset plays (misses, repeat scope, ...)."""


@pytest.mark.parametrize("name", [*preset_names(), *EXTRA])
def test_pipeline_matches_plain_scorer(name: str) -> None:
    # The extra rulesets each change one or two rules: fewer hands meet them often enough.
    hands = mixed_hands(1500 if name in preset_names() else 600, seed=hash(name) % 1000)
    ruleset = load_ruleset(name)
    results = score(seats_frame(hands), [ruleset])
    by_key = {(r["hand_id"], r["seat"]): r for r in results.iter_rows(named=True)}
    for hand in hands:
        seats = [Seat(p["seat"], parse_cards(p["top"]), parse_cards(p["middle"]),
                      parse_cards(p["bottom"]), p.get("fantasyland", False),
                      p.get("surrendered", False), p["name"], p.get("unit", 1.0))
                 for p in hand["players"]]
        expected = score_hand(seats, ruleset, hand["variant"])
        for seat, facts in expected.items():
            got = by_key[(hand["hand_id"], seat)]
            context = f"{name} {hand}"
            assert got["points"] == facts["points"], context
            assert got["royalties"] == facts["royalties"], context
            assert [got["royalty_top"], got["royalty_middle"], got["royalty_bottom"]] == \
                facts["royalty_rows"], context
            assert [got["rows_top"], got["rows_middle"], got["rows_bottom"]] == facts["rows"], \
                context
            assert [got["wins_top"], got["wins_middle"], got["wins_bottom"]] == facts["wins"], \
                context
            assert got["fouled"] == facts["fouled"], context
            assert got["scoops"] == facts["scoops"], context
            assert got["scooped"] == facts["scooped"], context
            assert got["fantasyland_next"] == facts["fantasyland_next"], context
            weighted = got["points"] if got["unit_points"] is None else got["unit_points"]
            assert weighted == pytest.approx(facts["unit_points"], abs=1e-9), context


def test_scoring_split_between_cores_equals_scoring_at_once(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """Large frames are cut between hands and scored in threads: the results, showdowns
    and natural bits must be those of one call, whatever the order of the seats (here
    shuffled, so hands are not adjacent) and the seat counts; and the stacked results keep
    the layout one call gives, every ruleset's block listing the same seats in the same
    order as the showdowns and natural bits."""
    from ofcstats import score as scoring  # noqa: PLC0415

    seats = seats_frame(mixed_hands(900, seed=5)).sample(fraction=1.0, shuffle=True, seed=1)
    rulesets = [load_ruleset(name) for name in [*preset_names(), *EXTRA]]
    keys = ["ruleset", "hand_id", "seat"]
    monkeypatch.setattr(scoring, "PARALLEL_FROM", 10**9)
    whole = scoring.score_with_showdowns(seats, rulesets)
    for cores in (2, 3):
        monkeypatch.setattr(scoring, "PARALLEL_FROM", 1)
        monkeypatch.setattr(scoring, "available_cores", lambda cores=cores: cores)
        split = scoring.score_with_showdowns(seats, rulesets)
        assert split.results.sort(keys).equals(whole.results.sort(keys))
        order = split.showdowns[0].select("hand_id", "seat")
        for block in split.results.partition_by("ruleset", maintain_order=True):
            assert block.select("hand_id", "seat").equals(order)
        assert split.showdowns.keys() == whole.showdowns.keys()
        for mask, frame in whole.showdowns.items():
            assert split.showdowns[mask].select("hand_id", "seat").equals(order)
            assert split.showdowns[mask].sort("hand_id", "seat").equals(
                frame.sort("hand_id", "seat")), mask
        bits = order.with_columns(bits=split.showdown_bits).sort("hand_id", "seat")
        expected = whole.showdowns[0].select("hand_id", "seat").with_columns(
            bits=whole.showdown_bits).sort("hand_id", "seat")
        assert bits.equals(expected)
