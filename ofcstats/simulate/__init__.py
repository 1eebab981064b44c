"""Simulated play: a dealer for every variant, fantasyland included, and bots of distinct
styles, writing realistic ``ofc-hand/1`` logs whose ground truth (each bot's style) is known.

>>> from ofcstats.rules import load_ruleset
>>> sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
...                  players=parse_players("alice:safe,bob:balanced"), hands=4, seed=1)
>>> hands = list(simulate(sim))
>>> [h["hand_id"] for h in hands]
['sim1-00001-01', 'sim1-00001-02', 'sim1-00002-01', 'sim1-00002-02']
>>> sum(p["reported_points"] for p in hands[0]["players"])
0
"""

from __future__ import annotations

import contextlib
import json
import math
import mmap
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from ofcstats.errors import Interrupted, OfcstatsError
from ofcstats.rules.model import Ruleset
from ofcstats.simulate import heuristic
from ofcstats.simulate.bots import BOT_STYLES, Bot, HeuristicBot, RandomBot
from ofcstats.simulate.game import Dealer, HandRecord
from ofcstats.simulate.montecarlo import MonteCarloBot
from ofcstats.simulate.scoring import ruleset_arrays
from ofcstats.simulate.writer import LineFormat, hand_record, played_at, reported_points
from ofcstats.variants import MIN_PLAYERS, Variant

__all__ = ["BOT_STYLES", "Player", "Simulation", "SimulationError", "Written", "make_bot",
           "parse_players", "simulate", "write_jsonl"]

GAMES_PER_SERIES = 4  # games one table plays in a row before the next table's
# A run's tables are played in blocks, the tables of a block in lockstep (more at once:
# fewer, larger array steps). The first block is small, so that a run stopped early has
# written hands (128 three-seat Pineapple tables take well under a second with heuristic
# bots, and hold the runs of data/sample whole); each next block is twice as large.
FIRST_TABLES = 128
MAX_TABLES = 2048


def block_tables(block: int) -> int:
    """The tables of a run's block ``block`` (from 0), at most (a run's last blocks may
    have fewer): :data:`FIRST_TABLES`, twice as many at each next block, up to
    :data:`MAX_TABLES`. A function of the block's number alone, so that a resumed run
    plays each block as the uninterrupted run does.

    >>> [block_tables(block) for block in range(7)]
    [128, 256, 512, 1024, 2048, 2048, 2048]
    """
    return min(FIRST_TABLES << min(block, MAX_TABLES.bit_length()), MAX_TABLES)


def _tables_before(block: int) -> int:
    """The tables of the blocks before ``block``, each of :func:`block_tables` tables."""
    total = done = 0
    while done < block and block_tables(done) < MAX_TABLES:
        total += block_tables(done)
        done += 1
    return total + (block - done) * MAX_TABLES


def _block_of_table(table: int) -> int:
    """The block holding table ``table`` (from 0) when every block is whole."""
    block = before = 0
    while block_tables(block) < MAX_TABLES:
        if table < before + block_tables(block):
            return block
        before += block_tables(block)
        block += 1
    return block + (table - before) // MAX_TABLES


class SimulationError(OfcstatsError, ValueError):
    """A simulation that cannot be played as asked; the message says what to change."""


@dataclass(frozen=True)
class Player:
    """A seat at the simulated table: a name and a bot style."""

    name: str
    style: str


def parse_players(text: str) -> list[Player]:
    """Players from ``name:style,name:style``.

    >>> parse_players("alice:aggressive, bob:safe")
    [Player(name='alice', style='aggressive'), Player(name='bob', style='safe')]
    """
    players = []
    for part in text.split(","):
        name, sep, style = part.strip().partition(":")
        if not sep or not name.strip() or style.strip() not in BOT_STYLES:
            raise SimulationError(
                f"{part.strip()!r} is not a player: write name:style, the style one of "
                f"{', '.join(BOT_STYLES)} (for example alice:aggressive,bob:safe)")
        players.append(Player(name.strip(), style.strip()))
    return players


@dataclass(frozen=True)
class Simulation:
    """What to play: variant, ruleset, seats (in seat order), how many hands, the seed."""

    variant: Variant
    ruleset: Ruleset
    players: list[Player]
    hands: int
    seed: int = 0
    rollouts: int = 100  # montecarlo completions sampled per decision
    timeout_rate: float = 0.0  # chance a seat runs out of time in a hand
    prefix: str | None = None  # hand and session ids start with it (default sim<seed>)
    start: datetime = datetime(2026, 1, 5, 18, 0, tzinfo=UTC)

    @property
    def seated(self) -> list[Player]:
        """The player at each seat: in criss-cross each player sits twice, one seat for
        each board: the players' first boards on seats 1 and 2, their second on 3 and 4."""
        return self.players * self.variant.boards_per_player

    def check(self) -> None:
        """Raise :class:`SimulationError` for anything that cannot be dealt."""
        seats = len(self.players)
        if self.variant is Variant.CRISS_CROSS and seats != MIN_PLAYERS:
            raise SimulationError(f"criss-cross is heads-up: give 2 players, not {seats}")
        if not MIN_PLAYERS <= seats <= self.variant.max_players:
            raise SimulationError(
                f"{self.variant.value} seats {MIN_PLAYERS} to {self.variant.max_players} "
                f"players; {seats} given")
        names = [p.name for p in self.players]
        if len(set(names)) != len(names):
            raise SimulationError(f"player names must differ: {', '.join(names)}")
        if self.hands < 0:
            raise SimulationError(f"--hands must be 0 or more, not {self.hands}")
        if self.rollouts < 1:
            raise SimulationError(f"--rollouts must be at least 1, not {self.rollouts}")
        if not 0 <= self.timeout_rate <= 1:
            raise SimulationError(f"--timeout-rate is a chance between 0 and 1, "
                                  f"not {self.timeout_rate}")
        if self.ruleset.wheel and not self.variant.thirteen_card:
            raise SimulationError(
                f"ruleset {self.ruleset.name}: the wheel order of straights is played in "
                f"chinese-13; simulate {self.variant.value} under a ruleset without it")
        if self.ruleset.low_middle and not self.variant.thirteen_card:
            raise SimulationError(
                f"ruleset {self.ruleset.name}: low in the middle is played in chinese-13; "
                f"simulate {self.variant.value} under a ruleset without it")
        policy = self.ruleset.fantasyland
        if self.variant.has_fantasyland and policy.enters:
            most = max([self.variant.fantasyland_base_cards,
                        *(c for _, c in policy.entry_card_steps(self.variant))])
            regular = sum(st.dealt for st in self.variant.streets)
            if most + (seats - 1) * regular > 52:
                raise SimulationError(
                    f"fantasyland policy {policy.name} deals up to {most} cards in "
                    f"{self.variant.value}; with {seats} seats the deck runs out: "
                    f"play with {seats - 1} seats or another policy")


def make_bot(style: str, rng: np.random.Generator, rollouts: int = 100) -> Bot:
    """A bot of the named style (see :data:`BOT_STYLES`) with its own generator."""
    if style == "random":
        return RandomBot(rng)
    if style in heuristic.STYLES:
        return HeuristicBot(rng, heuristic.STYLES[style])
    if style == "montecarlo":
        return MonteCarloBot(rng, rollouts=rollouts)
    raise SimulationError(f"unknown bot style {style!r}: use one of {', '.join(BOT_STYLES)}")


def _bots(sim: Simulation, block: int) -> list[Bot]:
    return [make_bot(p.style, np.random.default_rng([sim.seed, block, 1 + i]), sim.rollouts)
            for i, p in enumerate(sim.seated)]


@dataclass(frozen=True)
class _Block:
    """Consecutive hands of a run with their places in it, scored."""

    hands: list[HandRecord]
    games: npt.NDArray[np.int64]  # game number of each hand in the run, from 1
    numbers: npt.NDArray[np.int64]  # its number in its game, from 1
    first: int  # the run's index of the first hand
    points: npt.NDArray[np.int64]  # (hands, seats)


@dataclass(frozen=True)
class _Start:
    """Where a run begins: its first block, and the hands and games before it."""

    block: int = 0
    hands: int = 0
    games: int = 0


def _play(sim: Simulation, progress: Callable[[int, int], None] | None,
          start: _Start = _Start()) -> Iterator[_Block]:
    """The hands of a run, numbered and scored, block by block (from ``start.block``:
    each block deals from generators seeded by the seed and the block's number alone,
    so a run can begin at any block)."""
    sim.check()
    arrays = ruleset_arrays(sim.ruleset, sim.variant.dealt_as)
    names = [p.name for p in sim.seated]
    seats = len(names)
    series = _tables_for(sim.hands, seats)
    written, games, block = start.hands, start.games, start.block
    while written < sim.hands:
        # Timeouts end games early, so the tables first planned may fall short: then as
        # many more as the hands still wanted would need at full length. Either way a
        # block's tables depend on its number, the tables planned and the hands before
        # it alone, which a resumed run knows (_resume_point).
        planned = series - _tables_before(block)
        tables = min(block_tables(block), planned if planned > 0 else
                     _tables_for(sim.hands - written, seats))
        dealer = Dealer(sim.variant.dealt_as, sim.ruleset, arrays, _bots(sim, block),
                        np.random.default_rng([sim.seed, block, 0]), sim.timeout_rate)

        def step(done: int, base: int = written) -> None:
            if progress is not None:
                progress(min(base + done, sim.hands), sim.hands)

        records = dealer.play(tables, GAMES_PER_SERIES, step)
        block += 1
        hands = [hand for table in records for hand in table][: sim.hands - written]
        # Every table's hands start a game, so a block's first hand does too.
        first = np.array([hand.first for hand in hands], dtype=bool)
        index = np.arange(len(hands))
        numbers = index - np.maximum.accumulate(np.where(first, index, 0)) + 1
        yield _Block(hands, games + np.cumsum(first), numbers, written,
                     reported_points(hands, sim.variant, sim.ruleset, names))
        games += int(first.sum())
        written += len(hands)
        if progress is not None:
            progress(written, sim.hands)


def _tables_for(hands: int, seats: int) -> int:
    """The tables that play ``hands`` hands when every game is one orbit of the button."""
    return math.ceil(hands / (GAMES_PER_SERIES * seats))


def simulate(sim: Simulation,
             progress: Callable[[int, int], None] | None = None) -> Iterator[dict[str, Any]]:
    """Play ``sim.hands`` hands; yield them as ``ofc-hand/1`` objects, in order.

    Tables are played a block at a time; each table plays whole games, and the run
    stops after exactly ``sim.hands`` hands (so only the very last game may be cut
    short). ``progress(done, total)`` is called as hands are played. The same
    simulation gives the same hands, to the byte.
    """
    names = [p.name for p in sim.seated]
    styles = [p.style for p in sim.seated]
    prefix = sim.prefix or f"sim{sim.seed}"
    for played in _play(sim, progress):
        for i, (hand, game, number) in enumerate(zip(
                played.hands, played.games.tolist(), played.numbers.tolist(), strict=True)):
            yield hand_record(hand, hand_id=f"{prefix}-{game:05d}-{number:02d}",
                              session_id=f"{prefix}-{game:05d}",
                              played_at=played_at(sim.start, played.first + i),
                              variant=sim.variant, ruleset=sim.ruleset, names=names,
                              styles=styles, points=played.points[i])


def write_jsonl(sim: Simulation, path: Path,
                progress: Callable[[int, int], None] | None = None, *,
                append: bool = False) -> Written:
    """Write the simulated hands to ``path`` as JSON Lines (compact, one hand a line) as
    they are played.

    Hands are played a block of tables at a time (:func:`block_tables`: the first
    block small, each next one twice as large); each block's lines are written and
    flushed as soon as it is played. A run stopped by Ctrl-C raises
    :class:`Interrupted`, which says how many hands the file keeps: every hand of the
    blocks played whole, each line whole (a run killed outright may leave part of a
    last line).

    ``append`` resumes such a run: given the same options, the file becomes, to the
    byte, what an uninterrupted run writes. The hands of the finished blocks are kept;
    the last block the file reaches into is played again (its hands in the file must
    be those this run plays, else :class:`SimulationError`), and play goes on from
    there. Without ``append`` the file is written anew.
    """
    lines = LineFormat(sim.variant, sim.ruleset, [p.name for p in sim.seated],
                       [p.style for p in sim.seated], sim.prefix or f"sim{sim.seed}",
                       sim.start)
    sim.check()
    found = _resume_point(sim, path) if append and path.exists() else None
    start, keep, expected = found if found is not None else (_Start(), 0, b"")
    kept = start.hands + expected.count(b"\n")
    if kept > sim.hands:
        raise SimulationError(f"{path}: holds {kept:,} hands of this simulation, more than "
                              f"the {sim.hands:,} asked for")
    if found is not None and kept == sim.hands and path.stat().st_size == keep + len(expected):
        return Written(hands=sim.hands, resumed_after=kept)
    if progress is not None:
        progress(start.hands, sim.hands)
    path.parent.mkdir(parents=True, exist_ok=True)
    in_file = _InFile((kept, keep + len(expected)))
    try:
        with path.open("r+b" if found is not None else "wb") as out:
            _write_run(sim, path, out, lines, progress, start, keep, expected, in_file)
    except KeyboardInterrupt:
        hands, size = in_file.whole
        # A write cut short may have left part of a line: the file ends at a whole one.
        with contextlib.suppress(FileNotFoundError):
            os.truncate(path, size)
        raise Interrupted(
            f"{hands:,} of {sim.hands:,} hands kept in {path}, every hand of the blocks of "
            "tables played whole (the block being played is not written); run the same "
            "command with --append to finish it") from None
    return Written(hands=sim.hands, resumed_after=kept if found is not None else None)


@dataclass
class _InFile:
    """The hands whole in the file being written and the bytes they fill, updated
    together (one assignment) as lines are flushed; read if Ctrl-C stops the run."""

    whole: tuple[int, int]


def _write_run(sim: Simulation, path: Path, out: BinaryIO, lines: LineFormat,
               progress: Callable[[int, int], None] | None, start: _Start, keep: int,
               expected: bytes, in_file: _InFile) -> None:
    """The hands of a run from ``start`` written to ``out`` from byte ``keep`` on (the
    first bytes checked against ``expected``, those the file holds there); the hands
    whole in the file and their bytes kept in ``in_file`` as they are written."""
    out.seek(keep)
    checked = not expected
    for played in _play(sim, progress, start):
        # A slice of hands at a time keeps the text arrays small.
        for first in range(0, len(played.hands), _LINES_AT_ONCE):
            part = slice(first, first + _LINES_AT_ONCE)
            text = lines.lines(played.hands[part], played.games[part],
                               played.numbers[part], played.first + first,
                               played.points[part])
            if not checked:
                size = min(len(expected), len(text))
                if text[:size] != expected[:size]:
                    raise SimulationError(
                        f"{path}: its hands are not those this simulation plays (another "
                        "seed, players, ruleset or --hands?): repeat the options of the "
                        "run that wrote it, or write to another file")
                expected = expected[size:]  # the same bytes: rewriting them is safe
                checked = not expected
            out.write(text)
            out.flush()
            hands, size = in_file.whole
            in_file.whole = (max(hands, played.first + first + len(played.hands[part])),
                           max(size, out.tell()))
    out.truncate()


@dataclass(frozen=True)
class Written:
    """What :func:`write_jsonl` did: the hands now in the file, and how many were there
    already when it resumed a run (None when it wrote the file anew)."""

    hands: int
    resumed_after: int | None = None


def _resume_point(sim: Simulation, path: Path) -> tuple[_Start, int, bytes] | None:
    """Where to resume writing ``path``: the start of the block its last whole line
    belongs to, the file's bytes before that block, and its whole lines of that block
    (to check against the block played again). None for a file with no whole line.
    The file is mapped, not read: only its first line and last blocks are looked at
    (and its lines before them counted)."""
    if path.stat().st_size == 0:
        return None
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        end = data.rfind(b"\n") + 1
        if not end:
            return None
        prefix = sim.prefix or f"sim{sim.seed}"
        first_line = data[:data.find(b"\n")]
        last_line = data[data.rfind(b"\n", 0, end - 1) + 1:end - 1]
        try:
            first, last = json.loads(first_line), json.loads(last_line)
            game = int(last["hand_id"].removeprefix(f"{prefix}-").split("-")[0]) \
                if str(last["hand_id"]).startswith(f"{prefix}-") else 0
        except (ValueError, KeyError, TypeError, AttributeError):
            raise SimulationError(f"{path}: not a log this simulation wrote (its first or last "
                                  "line is not one of its hands); write to another file"
                                  ) from None
        for hand in (first, last):
            _same_run(sim, hand, prefix, path)

        def line_of(games: int, after: int) -> int:
            """Where the line of game ``games + 1``'s first hand begins (it begins a
            block), looked for from the end of the file back to byte ``after``."""
            if not games:
                return 0
            at = data.rfind(f'"hand_id":"{prefix}-{games + 1:05d}-01"'.encode(), after, end)
            if at < 0:
                raise SimulationError(f"{path}: hands are missing before hand {prefix}-"
                                      f"{game:05d}: write to another file")
            return data.rfind(b"\n", 0, at) + 1

        # The blocks of the tables planned are whole, each of block_tables(block) tables.
        seats = len(sim.seated)
        series = _tables_for(sim.hands, seats)
        block = _block_of_table(max(0, min((game - 1) // GAMES_PER_SERIES, series - 1)))
        games = _tables_before(block) * GAMES_PER_SERIES
        keep = line_of(games, 0)
        before = _lines(data, 0, keep)
        if series and game > series * GAMES_PER_SERIES:
            # Past them (timeouts ended games early) each block has the tables the hands
            # still wanted need, as _play plays it: the blocks are found one by one.
            block, games = _block_of_table(series - 1) + 1, series * GAMES_PER_SERIES
            while True:
                at = line_of(games, keep)
                before += _lines(data, keep, at)
                keep = at
                tables = min(block_tables(block), _tables_for(sim.hands - before, seats))
                if tables <= 0 or games + tables * GAMES_PER_SERIES >= game:
                    break
                block += 1
                games += tables * GAMES_PER_SERIES
        return _Start(block=block, hands=before, games=games), keep, data[keep:end]


def _lines(data: mmap.mmap, start: int, end: int) -> int:
    """The lines that end in ``data[start:end]``, counted a slice at a time."""
    return sum(data[i:min(i + _COUNT_BYTES, end)].count(b"\n")
               for i in range(start, end, _COUNT_BYTES))


_COUNT_BYTES = 1 << 26  # newlines are counted 64 MiB at a time


def _same_run(sim: Simulation, hand: dict[str, Any], prefix: str, path: Path) -> None:
    """Raise :class:`SimulationError` unless a logged hand could be one of ``sim``'s."""
    wanted = {"variant": sim.variant.value, "ruleset": sim.ruleset.name,
              "bots": {p.name: p.style for p in sim.players}}
    for key, value in wanted.items():
        if hand.get(key) != value:
            raise SimulationError(f"{path}: its hands have {key} {hand.get(key)!r}, this "
                                  f"simulation {value!r}: repeat the options of the run that "
                                  "wrote it, or write to another file")
    if not str(hand.get("hand_id", "")).startswith(f"{prefix}-"):
        raise SimulationError(f"{path}: its hand ids do not start with {prefix}- (another "
                              "--seed or --prefix?): repeat the options of the run that "
                              "wrote it, or write to another file")


_LINES_AT_ONCE = 2048
