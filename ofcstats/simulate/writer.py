"""Played hands to ``ofc-hand/1`` records (FORMAT.md), scored by the ruleset played."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import polars as pl

from ofcstats.cards import format_card
from ofcstats.rules.model import Ruleset
from ofcstats.score import SEAT_SCHEMA, score
from ofcstats.simulate.game import HandRecord
from ofcstats.variants import Variant

_CARD = [format_card(c) for c in range(52)]
_ROWS = ("top", "middle", "bottom", "discard")
_ORDER = ("dealt", *_ROWS)
HAND_SECONDS = 75  # time stamps: one hand every 75 seconds


def reported_points(hands: list[HandRecord], variant: Variant, ruleset: Ruleset,
                    names: list[str]) -> np.ndarray:
    """Points of every seat of every hand under ``ruleset``, ``(hands, seats)``, from
    :func:`ofcstats.score.score` itself."""
    seats = len(names)
    if not hands:
        return np.zeros((0, seats), dtype=np.int64)
    boards = np.stack([hand.boards for hand in hands])
    flat = boards.reshape(-1, 13)
    n = len(hands)
    frame = pl.DataFrame({
        "hand_id": np.repeat(np.arange(n), seats).astype(str),
        "variant": [variant.value] * (n * seats),
        "seat": np.tile(np.arange(1, seats + 1), n).astype(np.int8),
        "player": names * n,
        "fantasyland": np.concatenate([h.fantasyland for h in hands]),
        "timed_out": np.concatenate([h.timed_out for h in hands]),
        "surrendered": [False] * (n * seats),
        "top": pl.Series(flat[:, 0:3]).cast(pl.Array(pl.UInt8, 3)),
        "middle": pl.Series(flat[:, 3:8]).cast(pl.Array(pl.UInt8, 5)),
        "bottom": pl.Series(flat[:, 8:13]).cast(pl.Array(pl.UInt8, 5)),
    }, schema=SEAT_SCHEMA)
    results = score(frame, [ruleset]).with_columns(pl.col("hand_id").cast(pl.Int64)).sort(
        "hand_id", "seat")
    return results["points"].to_numpy().reshape(n, seats)


def hand_record(hand: HandRecord, *, hand_id: str, session_id: str, played_at: datetime,
                variant: Variant, ruleset: Ruleset, names: list[str], styles: list[str],
                points: np.ndarray) -> dict[str, Any]:
    """One hand as an ``ofc-hand/1`` object."""
    players = []
    for index, name in enumerate(names):
        entry: dict[str, Any] = {"seat": index + 1, "name": name,
                                 "fantasyland": bool(hand.fantasyland[index])}
        if variant is Variant.CHINESE_13:
            board = [_CARD[c] for c in hand.boards[index].tolist()]
            entry["top"], entry["middle"], entry["bottom"] = board[0:3], board[3:8], board[8:13]
        else:
            streets = []
            for cards, rows in hand.log.streets(hand.row, index):
                texts = [_CARD[c] for c in cards]
                street: dict[str, list[str]] = {"dealt": texts}
                for text, row in zip(texts, rows, strict=True):
                    street.setdefault(_ROWS[row], []).append(text)
                # Keys in the order FORMAT.md shows them: dealt, top, middle, bottom, discard.
                streets.append({key: street[key] for key in _ORDER if key in street})
            entry["streets"] = streets
        if hand.timed_out[index]:
            entry["timed_out"] = True
        entry["reported_points"] = int(points[index])
        players.append(entry)
    return {
        "format": "ofc-hand/1",
        "hand_id": hand_id,
        "session_id": session_id,
        "played_at": played_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "variant": variant.value,
        "ruleset": ruleset.name,
        "point_value": ruleset.point_value,
        "button": hand.button + 1,
        "players": players,
        "bots": dict(zip(names, styles, strict=True)),
    }


class LineFormat:
    """:func:`hand_record` as compact JSON text, built directly: the parts that are the
    same for every hand of a run are encoded once, and the streets (most of a hand) come
    as text from the hand log without making objects first."""

    def __init__(self, variant: Variant, ruleset: Ruleset, names: list[str],
                 styles: list[str]):
        self.variant, self.ruleset, self.names, self.styles = variant, ruleset, names, styles
        self.middle = (f',"variant":"{variant.value}","ruleset":{_compact(ruleset.name)}'
                       f',"point_value":{json.dumps(ruleset.point_value)},"button":')
        self.seats = [f'{{"seat":{i + 1},"name":{_compact(name)},"fantasyland":'
                      for i, name in enumerate(names)]
        self.tail = '],"bots":' + _compact(dict(zip(names, styles, strict=True))) + "}"

    def line(self, hand: HandRecord, *, hand_id: str, session_id: str, played_at: datetime,
             points: np.ndarray) -> str:
        """One hand, without the newline."""
        if self.variant is Variant.CHINESE_13:
            return _compact(hand_record(hand, hand_id=hand_id, session_id=session_id,
                                        played_at=played_at, variant=self.variant,
                                        ruleset=self.ruleset, names=self.names,
                                        styles=self.styles, points=points))
        seats = []
        for index, start in enumerate(self.seats):
            timed = ',"timed_out":true' if hand.timed_out[index] else ""
            seats.append(f'{start}{"true" if hand.fantasyland[index] else "false"},"streets":'
                         f'{hand.log.streets_json(hand.row, index)}{timed},'
                         f'"reported_points":{int(points[index])}}}')
        return (f'{{"format":"ofc-hand/1","hand_id":{_compact(hand_id)},"session_id":'
                f'{_compact(session_id)},"played_at":"'
                f'{played_at.strftime("%Y-%m-%dT%H:%M:%SZ")}"{self.middle}{hand.button + 1}'
                f',"players":[' + ",".join(seats) + self.tail)


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def played_at(start: datetime, index: int) -> datetime:
    """The time stamp of the ``index``-th hand of a run."""
    return start + timedelta(seconds=HAND_SECONDS * index)
