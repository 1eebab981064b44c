"""Properties every ruleset's scoring must have, on many random hands."""

from __future__ import annotations

import random

import polars as pl
from handgen import random_hand, rich_board, seats_frame
from hypothesis import given, settings
from hypothesis import strategies as st

from ofcstats import evaluate
from ofcstats.rules import load_ruleset, preset_names
from ofcstats.score import score

SETTINGS = settings(max_examples=25, deadline=None)


def hands_from(seed: int, n: int = 60) -> list[dict]:
    rng = random.Random(seed)
    hands = []
    for i in range(n):
        variant = rng.choice(["pineapple", "ofc-classic", "ofc-turbo", "chinese-13"])
        players = rng.randint(2, 3 if variant == "pineapple" else 4)
        hand = random_hand(rng, f"h{i}", variant, players, streets=False)
        for p in hand["players"]:
            p.update(rich_board(rng, arrange=rng.random() < 0.85))
            p["fantasyland"] = variant != "chinese-13" and rng.random() < 0.2
        hands.append(hand)
    return hands


@SETTINGS
@given(st.integers(0, 10**9), st.sampled_from(preset_names()))
def test_points_sum_to_zero_in_every_hand(seed: int, name: str) -> None:
    results = score(seats_frame(hands_from(seed)), [load_ruleset(name)])
    totals = results.group_by("hand_id").agg(pl.col("points").sum())
    assert totals["points"].abs().max() == 0


@SETTINGS
@given(st.integers(0, 10**9), st.sampled_from(preset_names()), st.randoms())
def test_results_do_not_depend_on_seat_order(seed: int, name: str, rnd: random.Random) -> None:
    hands = hands_from(seed, 30)
    shuffled = []
    for hand in hands:
        players = [dict(p) for p in hand["players"]]
        numbers = [p["seat"] for p in players]
        rnd.shuffle(numbers)
        for p, number in zip(players, numbers, strict=True):
            p["seat"] = number
        shuffled.append({**hand, "players": players})
    ruleset = [load_ruleset(name)]
    columns = ["hand_id", "player", "points", "royalties", "fouled", "fantasyland_next"]
    before = score(seats_frame(hands), ruleset).select(columns).sort("hand_id", "player")
    after = score(seats_frame(shuffled), ruleset).select(columns).sort("hand_id", "player")
    assert before.equals(after)


@SETTINGS
@given(st.integers(0, 10**9), st.sampled_from(preset_names()))
def test_a_fouled_seat_never_collects_royalties(seed: int, name: str) -> None:
    results = score(seats_frame(hands_from(seed)), [load_ruleset(name)])
    fouled = results.filter(pl.col("fouled"))
    assert not fouled.is_empty()
    assert fouled.select(pl.col("royalties", "royalty_top", "royalty_middle",
                                "royalty_bottom").abs().max()).row(0) == (0, 0, 0, 0)


@SETTINGS
@given(st.integers(0, 10**9))
def test_without_fouls_one_six_pays_the_row_and_scoop_formula(seed: int) -> None:
    rng = random.Random(seed)
    hands = []
    for i in range(40):
        hand = random_hand(rng, f"h{i}", "ofc-classic", rng.randint(2, 4), streets=False)
        for p in hand["players"]:
            p.update(rich_board(rng))
        hands.append(hand)
    results = score(seats_frame(hands), [load_ruleset("one-six")])
    clean = results.group_by("hand_id").agg(pl.col("fouled").any()).filter(~pl.col("fouled"))
    assert clean.height > 0
    frame = seats_frame(hands).join(clean.select("hand_id"), on="hand_id")
    strengths = frame.with_columns(
        s_top=pl.Series(evaluate.strength3(frame["top"].to_numpy())),
        s_middle=pl.Series(evaluate.strength5(frame["middle"].to_numpy())),
        s_bottom=pl.Series(evaluate.strength5(frame["bottom"].to_numpy())))
    expected: dict[tuple[str, int], int] = {}
    for (hand_id,), group in strengths.group_by("hand_id"):
        rows = group.select("seat", "s_top", "s_middle", "s_bottom").rows()
        for me in rows:
            total = 0
            for them in rows:
                if me[0] == them[0]:
                    continue
                w = sum(me[i] > them[i] for i in (1, 2, 3))
                lost = sum(me[i] < them[i] for i in (1, 2, 3))
                total += (w - lost) + 3 * ((w == 3) - (lost == 3))
            expected[(str(hand_id), me[0])] = total
    got = {(r["hand_id"], r["seat"]): r["points"]
           for r in results.join(clean.select("hand_id"), on="hand_id").iter_rows(named=True)}
    assert got == expected
