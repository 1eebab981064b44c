"""The same hands in every input format, for tests: ofc-hand/1 dicts (from handgen)
turned into Chipzen hand records and into rows of the boards CSV."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

ROWS = ("top", "middle", "bottom")


def to_chipzen(hand: dict[str, Any], *, with_id: bool = True) -> dict[str, Any]:
    """A Chipzen OFC hand record v1 for a Pineapple hand logged with streets."""
    seats = []
    for player in hand["players"]:
        streets, dead = [], []
        rows: dict[str, list[str]] = {r: [] for r in ROWS}
        for number, street in enumerate(player["streets"]):
            placements = [{"card": c, "row": r} for r in ROWS for c in street.get(r, [])]
            for r in ROWS:
                rows[r] += street.get(r, [])
            dead += street.get("discard", [])
            streets.append({"phase": "deal1" if number == 0 else f"street{number + 1}",
                            "pull": street["dealt"], "placements": placements,
                            "discarded": street.get("discard", [])})
        seat: dict[str, Any] = {
            "seat": player["seat"] - 1, "rows": rows, "streets": streets, "discarded": dead,
            "placed": 13, "complete": True,
            "row_royalties": {"top": 0, "middle": 0, "bottom": 0}, "royalties": 0,
            "fouled": False, "points": player.get("reported_points", 0), "net_chips": 0,
            "fantasy_land_in": player.get("fantasyland", False), "fantasy_land_next": False,
        }
        seats.append(seat)
    record: dict[str, Any] = {"variant": {
        "game_type": "ofc", "schema_version": 1, "point_value": hand.get("point_value", 50),
        "seats": seats,
        "settlement": {"net_points": [0] * len(seats), "chip_deltas": [0] * len(seats),
                       "transferred": 0}}}
    if with_id:
        record = {"hand_id": hand["hand_id"], **record}
    if "session_id" in hand:
        record["match_id"] = hand["session_id"]
    if "button" in hand:
        record["dealer_seat"] = hand["button"] - 1
    return record


def chipzen_ready(hand: dict[str, Any]) -> dict[str, Any]:
    """The ofc-hand/1 hand as it reads back from a Chipzen record: seats named by
    number, the point value, the match as the session."""
    out = json.loads(json.dumps(hand))
    out.setdefault("point_value", 50)
    for player in out["players"]:
        player["name"] = f"seat {player['seat']}"
        player.setdefault("reported_points", 0)
    return out


def final_rows(hand: dict[str, Any]) -> dict[str, Any]:
    """The hand with each seat's streets replaced by its final rows."""
    out = json.loads(json.dumps(hand))
    for player in out["players"]:
        streets = player.pop("streets", None)
        if streets is not None:
            for r in ROWS:
                player[r] = [c for s in streets for c in s.get(r, [])]
    return out


def to_csv(hands: list[dict[str, Any]], *, separator: str = ",") -> str:
    """The hands (final rows) as the boards CSV, a row per seat."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=separator, lineterminator="\n")
    writer.writerow(["hand_id", "seat", "player", "top", "middle", "bottom", "points",
                     "variant", "session_id"])
    for hand in hands:
        for p in final_rows(hand)["players"]:
            writer.writerow([hand["hand_id"], p["seat"], p["name"], *(" ".join(p[r]) for r in ROWS),
                             p.get("reported_points", ""), hand["variant"],
                             hand.get("session_id", "")])
    return out.getvalue()


def write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    """One JSON object per line."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path
