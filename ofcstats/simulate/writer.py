"""Played hands to ``ofc-hand/1`` records (docs/format.md), scored by the ruleset played."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from ofcstats.cards import format_card
from ofcstats.records import SEAT_SCHEMA
from ofcstats.rows import ROW_NAMES
from ofcstats.rules.model import Ruleset
from ofcstats.score import score
from ofcstats.simulate.game import HandRecord, StepLog
from ofcstats.variants import Variant

_CARD = [format_card(c) for c in range(52)]
_ROWS = (*ROW_NAMES, "discard")
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
        if variant.thirteen_card:
            board = [_CARD[c] for c in hand.boards[index].tolist()]
            entry["top"], entry["middle"], entry["bottom"] = board[0:3], board[3:8], board[8:13]
        else:
            streets = []
            for cards, rows in hand.log.streets(hand.row, index):
                texts = [_CARD[c] for c in cards]
                street: dict[str, list[str]] = {"dealt": texts}
                for text, row in zip(texts, rows, strict=True):
                    street.setdefault(_ROWS[row], []).append(text)
                # Keys in the order docs/format.md shows them: dealt, top, middle, bottom, discard.
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
        "point_value": ruleset.point_value or 1.0,  # the stake played
        "button": hand.button + 1,
        "players": players,
        "bots": dict(zip(names, styles, strict=True)),
    }


class LineFormat:
    """:func:`hand_record` as compact JSON text, built for many hands at once.

    A line is a row of numbered byte strings (:class:`_Words`): the parts that are the
    same for every hand of a run, the numbers and time stamps of each hand, and the
    streets of each seat, whose words (a card with its comma or bracket, a row's name)
    come from one small table. The rows of a slice of hands become text in one pass.
    """

    def __init__(self, variant: Variant, ruleset: Ruleset, names: list[str],
                 styles: list[str], prefix: str, start: datetime):
        self.variant, self.ruleset, self.names, self.styles = variant, ruleset, names, styles
        self.prefix, self.start = prefix, start
        ids = _compact(prefix)[1:-1]  # the ids are prefix-games-number: digits need no escape
        self.words = _Words(_STREET_WORDS)
        (self.head, self.dash, self.session, self.played, self.middle, self.players,
         self.streets, self.points, self.close, self.tail) = self.words.add([
             f'{{"format":"ofc-hand/1","hand_id":"{ids}-', "-", f'","session_id":"{ids}-',
             '","played_at":"',
             f'Z","variant":"{variant.value}","ruleset":{_compact(ruleset.name)}'
             f',"point_value":{json.dumps(ruleset.point_value or 1.0)},"button":',
             ',"players":[', ',"streets":', ',"reported_points":', "}",
             '],"bots":' + _compact(dict(zip(names, styles, strict=True))) + "}\n"])
        self.seats = self.words.add([(("," if i else "") + f'{{"seat":{i + 1},"name":'
                                      f'{_compact(name)},"fantasyland":')
                                     for i, name in enumerate(names)])
        self.flags = np.concatenate(self.words.add(["false", "true"]))
        self.timed = np.concatenate([[_EMPTY], *self.words.add([',"timed_out":true'])])

    def lines(self, hands: list[HandRecord], games: npt.NDArray[np.int64],
              numbers: npt.NDArray[np.int64], first: int,
              points: npt.NDArray[np.int64]) -> bytes:
        """The lines of consecutive hands, each with its newline: game and hand numbers
        (for the ids), the run's index of the first hand (for the time stamps), points."""
        n = len(hands)
        if self.variant.thirteen_card:  # final rows only: few hands, made as objects
            return "".join(
                _compact(hand_record(
                    hand, hand_id=f"{self.prefix}-{g:05d}-{number:02d}",
                    session_id=f"{self.prefix}-{g:05d}", played_at=played_at(self.start, i),
                    variant=self.variant, ruleset=self.ruleset, names=self.names,
                    styles=self.styles, points=points[j])) + "\n"
                for j, (hand, g, number, i) in enumerate(zip(
                    hands, games.tolist(), numbers.tolist(), range(first, first + n),
                    strict=True))).encode()
        if not n:
            return b""
        words = _Words(self.words)

        def same(words: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
            return np.broadcast_to(words, (n, words.size))

        # The wall-clock time, as strftime shows it.
        times = np.datetime64(self.start.replace(tzinfo=None), "s") \
            + HAND_SECONDS * (first + np.arange(n))
        game = words.column(_digits(games, 5))
        parts = [same(self.head), game, same(self.dash), words.column(_digits(numbers, 2)),
                 same(self.session), game, same(self.played),
                 words.column(np.datetime_as_string(times, unit="s").astype("S19")),
                 same(self.middle),
                 words.column(_digits(np.array([h.button + 1 for h in hands]))),
                 same(self.players)]
        flags = np.stack([h.fantasyland for h in hands]).astype(np.intp)
        timed = np.stack([h.timed_out for h in hands]).astype(np.intp)
        streets = _block_streets(hands, len(self.names))
        for seat, start in enumerate(self.seats):
            parts += [same(start), self.flags[flags[:, seat]][:, None], same(self.streets),
                      streets[seat], self.timed[timed[:, seat]][:, None], same(self.points),
                      words.column(_digits(points[:, seat])), same(self.close)]
        parts.append(same(self.tail))
        return words.join(np.concatenate(parts, axis=1))


class _Words:
    """Byte strings of up to :data:`_WIDTH` bytes, numbered in the order they are added
    (number 0 is the empty one, which pads rows); :meth:`join` turns rows of numbers
    into text. Each word is kept NUL-padded: JSON text never holds a NUL byte, so the
    padding is simply dropped at the end."""

    def __init__(self, base: _Words | None = None):
        self.blocks: list[npt.NDArray[np.uint8]] = list(base.blocks) if base else []
        self.count: int = base.count if base else 0
        if base is None:
            self.add([""])

    def add(self, texts: list[str]) -> list[npt.NDArray[np.int32]]:
        """Number each text (as UTF-8, cut into as many words as it takes)."""
        pieces = [[t[i:i + _WIDTH] for i in range(0, max(len(t), 1), _WIDTH)]
                  for t in (text.encode() for text in texts)]
        ids = self._add(np.array([p for each in pieces for p in each], dtype=f"S{_WIDTH}"))
        ends = np.cumsum([len(each) for each in pieces])
        return np.split(ids, ends[:-1])

    def column(self, texts: npt.NDArray[np.bytes_]) -> npt.NDArray[np.int32]:
        """Number each of ``n`` short byte strings: an ``(n, 1)`` column."""
        return self._add(texts.astype(f"S{_WIDTH}"))[:, None]

    def _add(self, texts: npt.NDArray[np.bytes_]) -> npt.NDArray[np.int32]:
        self.blocks.append(texts.view(np.uint8).reshape(-1, _WIDTH))
        self.count += texts.shape[0]
        return np.arange(self.count - texts.shape[0], self.count, dtype=np.int32)

    def join(self, rows: npt.NDArray[np.int32]) -> bytes:
        """The words of each row, in order, as one text."""
        flat = rows.ravel()
        words = np.concatenate(self.blocks)[flat[flat != _EMPTY]]
        return words.tobytes().translate(None, b"\0")


_WIDTH = 20  # bytes in a word: a time stamp, a number, a card with its row's name


def _digits(values: npt.NDArray[np.integer[Any]], width: int = 0) -> npt.NDArray[np.bytes_]:
    """Integers in decimal, zero-padded to ``width`` (as ``f"{v:0{width}d}"``)."""
    text = np.asarray(values, dtype=np.int64).astype("S20")
    return np.strings.zfill(text, width) if width else text


# A street: {"dealt":[cards],"top":[cards],...} with only the rows it filled, in the
# order top, middle, bottom, discard. The dealt cards each end with "," or "]"; the
# placed ones, in row order, may open their row and end it ("]") or not (",").
_EMPTY = 0
_STREET_WORDS = _Words()
_QUOTED = [f'"{format_card(c)}"' for c in range(52)]


def _one_word_each(texts: list[str]) -> npt.NDArray[np.int32]:
    return np.concatenate(_STREET_WORDS.add(texts))


_OPEN = _one_word_each(['{"dealt":[', ',{"dealt":['])  # a seat's first street, a later one
_DEALT = _one_word_each([q + end for q in _QUOTED for end in ",]"]).reshape(52, 2)
_PLACED = _one_word_each([h + q + end for h in ["", *(f',"{r}":[' for r in _ROWS)]
                          for q in _QUOTED for end in ",]"]).reshape(5, 52, 2)
_CLOSE, _LIST_OPEN, _LIST_CLOSE = _one_word_each(["}", "[", "]"])


def _street(cards: npt.NDArray[np.uint8], rows: npt.NDArray[np.int8],
            later: npt.NDArray[np.bool_]) -> npt.NDArray[np.int32]:
    """One street per table as words ``(m, 2k + 2)``; ``later`` when a street of the
    seat came before it (it then opens with a comma)."""
    m, k = cards.shape
    card = cards.astype(np.intp)
    if k <= _SHAPE_CARDS:
        source, extra = (table[rows.astype(np.intp) @ (4 ** np.arange(k))]
                         for table in _shapes(k))
    else:  # a set of 13 cards or more: few tables
        source, extra = _placing(rows.astype(np.intp))
    by_row = card.ravel()[source + k * np.arange(m)[:, None]]
    last = np.arange(k) == k - 1
    return np.concatenate([_OPEN[later.astype(np.intp)][:, None], _DEALT.ravel()[card * 2 + last],
                           _PLACED.ravel()[extra + 2 * by_row],
                           np.full((m, 1), _CLOSE, dtype=np.int32)], axis=1)


_SHAPE_CARDS = 8  # streets of up to 8 cards look their shape up (4**8 shapes)


def _placing(rows: npt.NDArray[np.intp]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """For rows of cards ``(m, k)``: the card placed at each position (rows in order,
    dealt order within a row), and its word's offset in :data:`_PLACED` but for the
    card (row header or none, comma or bracket)."""
    source = np.argsort(rows, axis=1, kind="stable")
    row = np.take_along_axis(rows, source, axis=1)
    first = np.ones(row.shape, dtype=bool)
    first[:, 1:] = row[:, 1:] != row[:, :-1]
    end = np.ones(row.shape, dtype=np.intp)
    end[:, :-1] = row[:, :-1] != row[:, 1:]
    return source, np.where(first, row + 1, 0) * 104 + end


@cache
def _shapes(k: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """:func:`_placing` of every street of ``k`` cards, by its rows as a base-4 number."""
    codes = np.arange(4 ** k)
    return _placing((codes[:, None] // 4 ** np.arange(k)) % 4)


def _round_streets(log: StepLog, seat: int) -> npt.NDArray[np.int32]:
    """Every table's ``streets`` list of one seat in a round of hands, as words."""
    entries = [(tables, slot, cards, rows)
               for tables, at, slot, cards, rows in log.entries if at == seat]
    widths: dict[int, int] = {}
    for _, slot, cards, _ in entries:
        widths[slot] = max(widths.get(slot, 0), 2 * cards.shape[1] + 2)
    offsets, at = {}, 1
    for slot in sorted(widths):
        offsets[slot] = at
        at += widths[slot]
    out = np.full((log.tables, at + 1), _EMPTY, dtype=np.int32)
    out[:, 0], out[:, at] = _LIST_OPEN, _LIST_CLOSE
    seen = np.zeros(log.tables, dtype=bool)
    for tables, slot, cards, rows in entries:
        words = _street(cards, rows, seen[tables])
        out[tables, offsets[slot]:offsets[slot] + words.shape[1]] = words
        seen[tables] = True
    return out


def _block_streets(hands: list[HandRecord], seats: int) -> list[npt.NDArray[np.int32]]:
    """Per seat, the ``streets`` words of each hand, ``(hands, width)``."""
    rounds: dict[int, tuple[StepLog, list[int], list[int]]] = {}
    for i, hand in enumerate(hands):
        entry = rounds.get(id(hand.log))
        if entry is None:
            entry = rounds[id(hand.log)] = (hand.log, [], [])
        entry[1].append(i)
        entry[2].append(hand.row)
    out = []
    for seat in range(seats):
        texts = []
        for log, _, _ in rounds.values():
            if seat not in log.text:
                log.text[seat] = _round_streets(log, seat)
            texts.append(log.text[seat])
        block = np.full((len(hands), max(t.shape[1] for t in texts)), _EMPTY, dtype=np.int32)
        for text, (_, where, rows) in zip(texts, rounds.values(), strict=True):
            block[where, :text.shape[1]] = text[rows]
        out.append(block)
    return out


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def played_at(start: datetime, index: int) -> datetime:
    """The time stamp of the ``index``-th hand of a run."""
    return start + timedelta(seconds=HAND_SECONDS * index)
