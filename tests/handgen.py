"""Random but valid hands in the ofc-hand/1 layout, for tests (not the simulator)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ofcstats import evaluate
from ofcstats.cards import format_card, parse_cards
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.rules import load_rulesets
from ofcstats.store import Store
from ofcstats.variants import Variant

ROWS = ("top", "middle", "bottom")
SIZES = {"top": 3, "middle": 5, "bottom": 5}


def random_hand(rng: random.Random, hand_id: str, variant: str = "pineapple",
                players: int = 3, *, streets: bool = True,
                fantasyland: tuple[bool, ...] = (), ruleset: str | None = None,
                fantasyland_cards: int | None = None) -> dict[str, Any]:
    """A legal hand: cards dealt from one deck, placed at random (fouls and all)."""
    v = Variant(variant)
    deck = list(range(52))
    rng.shuffle(deck)
    seats = []
    for seat in range(1, players + 1):
        in_fl = seat <= len(fantasyland) and fantasyland[seat - 1]
        rows: dict[str, list[int]] = {r: [] for r in ROWS}
        plan = [(fantasyland_cards or v.fantasyland_base_cards,
                 (fantasyland_cards or v.fantasyland_base_cards) - 13)] if in_fl else \
            [(s.dealt, s.discard) for s in v.streets]
        street_list = []
        for dealt_n, discard_n in plan:
            dealt = [deck.pop() for _ in range(dealt_n)]
            keep = dealt[:]
            rng.shuffle(keep)
            discard = keep[:discard_n]
            keep = keep[discard_n:]
            street: dict[str, list[str]] = {"dealt": [format_card(c) for c in dealt]}
            for card in keep:
                open_rows = [r for r in ROWS if len(rows[r]) < SIZES[r]]
                row = rng.choice(open_rows)
                rows[row].append(card)
                street.setdefault(row, []).append(format_card(card))
            if discard:
                street["discard"] = [format_card(c) for c in discard]
            street_list.append(street)
        entry: dict[str, Any] = {"seat": seat, "name": f"p{seat}"}
        if in_fl:
            entry["fantasyland"] = True
        if streets and v is not Variant.CHINESE_13:
            entry["streets"] = street_list
        else:
            entry.update({r: [format_card(c) for c in rows[r]] for r in ROWS})
        seats.append(entry)
    hand: dict[str, Any] = {"format": "ofc-hand/1", "hand_id": hand_id, "variant": variant,
                            "button": players, "players": seats}
    if ruleset:
        hand["ruleset"] = ruleset
    return hand


def board_hand(hand_id: str, boards: list[tuple[str, str, str]], variant: str = "ofc-classic",
               ruleset: str | None = None) -> dict[str, Any]:
    """A final-rows hand from card texts, one (top, middle, bottom) per seat."""
    hand: dict[str, Any] = {
        "format": "ofc-hand/1", "hand_id": hand_id, "variant": variant,
        "players": [
            {"seat": i + 1, "name": "AB"[i] if len(boards) == 2 else f"p{i + 1}",
             "top": top.split(), "middle": middle.split(), "bottom": bottom.split()}
            for i, (top, middle, bottom) in enumerate(boards)
        ],
    }
    if ruleset:
        hand["ruleset"] = ruleset
    return hand


def write_jsonl(path: Path, hands: list[dict[str, Any]]) -> Path:
    """Write hands one per line."""
    path.write_text("".join(json.dumps(h) + "\n" for h in hands), encoding="utf-8")
    return path


def rich_board(rng: random.Random, *, arrange: bool = True) -> dict[str, list[str]]:
    """13 distinct cards drawn to make pairs, trips, quads, flushes and straights common.

    With ``arrange`` the two 5-card groups go strongest to the bottom, so most boards
    are legal and royalties frequent. Boards from this helper may share cards with
    other seats' boards: for scoring arithmetic, not for validation.
    """
    profile = rng.random()
    if profile < 0.3:
        ranks = rng.sample(range(13), rng.randint(4, 6))
        pool = [r * 4 + s for r in ranks for s in range(4)]
    elif profile < 0.5:
        suits = rng.sample(range(4), rng.randint(1, 2))
        pool = [r * 4 + s for r in range(13) for s in suits]
    elif profile < 0.7:
        start = rng.randint(0, 7)
        pool = [r * 4 + s for r in range(start, start + 6) for s in range(4)]
    else:
        pool = list(range(52))
    cards = rng.sample(pool, 13)
    top, a, b = cards[:3], cards[3:8], cards[8:]
    if arrange:
        sa, sb = evaluate.strength5(np.array([a, b]))
        if sa > sb:
            a, b = b, a
    return {"top": [format_card(c) for c in top], "middle": [format_card(c) for c in a],
            "bottom": [format_card(c) for c in b]}


def seats_frame(hands: list[dict[str, Any]]) -> pl.DataFrame:
    """The seats frame the scorer takes, from final-rows hands."""
    rows = []
    for hand in hands:
        for p in hand["players"]:
            rows.append({
                "hand_id": hand["hand_id"], "variant": hand["variant"], "seat": p["seat"],
                "player": p["name"], "fantasyland": p.get("fantasyland", False),
                "timed_out": False, "surrendered": p.get("surrendered", False),
                "top": parse_cards(p["top"]), "middle": parse_cards(p["middle"]),
                "bottom": parse_cards(p["bottom"]), "unit": p.get("unit"),
            })
    frame = pl.DataFrame(rows, schema_overrides={"unit": pl.Float64})
    return frame.with_columns(
        pl.col("seat").cast(pl.Int8),
        pl.col("top").list.to_array(3).cast(pl.Array(pl.UInt8, 3)),
        pl.col("middle").list.to_array(5).cast(pl.Array(pl.UInt8, 5)),
        pl.col("bottom").list.to_array(5).cast(pl.Array(pl.UInt8, 5)),
    )


def scored_database(log: Path, rulesets: list[str]) -> Path:
    """``club.duckdb`` beside ``log``: the log loaded and rescored under ``rulesets``."""
    db = log.with_name("club.duckdb")
    ingest([log], db)
    with Store(db) as store:
        rescore(store, load_rulesets(rulesets))
    return db
