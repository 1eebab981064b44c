"""The pipeline agrees with the plain one-hand-at-a-time scorer on every preset."""

from __future__ import annotations

import random

import pytest
from handgen import random_hand, rich_board, seats_frame
from oracle import Seat, score_hand

from ofcstats.cards import parse_cards
from ofcstats.rules import load_ruleset, preset_names
from ofcstats.score import score


def mixed_hands(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    hands = []
    for i in range(n):
        variant = rng.choice(["pineapple", "ofc-classic", "ofc-turbo", "chinese-13"])
        players = rng.randint(2, 3 if variant == "pineapple" else 4)
        fl = tuple(rng.random() < 0.2 for _ in range(players)) if variant != "chinese-13" \
            else ()
        hand = random_hand(rng, f"h{i}", variant, players, streets=False, fantasyland=fl)
        if rng.random() < 0.7:
            for p in hand["players"]:
                p.update(rich_board(rng, arrange=rng.random() < 0.9))
        if variant == "chinese-13":
            for p in hand["players"]:
                p["surrendered"] = rng.random() < 0.1
        hands.append(hand)
    return hands


@pytest.mark.parametrize("name", preset_names())
def test_pipeline_matches_plain_scorer(name: str) -> None:
    hands = mixed_hands(1500, seed=hash(name) % 1000)
    ruleset = load_ruleset(name)
    results = score(seats_frame(hands), [ruleset])
    by_key = {(r["hand_id"], r["seat"]): r for r in results.iter_rows(named=True)}
    for hand in hands:
        seats = [Seat(p["seat"], parse_cards(p["top"]), parse_cards(p["middle"]),
                      parse_cards(p["bottom"]), p.get("fantasyland", False),
                      p.get("surrendered", False)) for p in hand["players"]]
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
