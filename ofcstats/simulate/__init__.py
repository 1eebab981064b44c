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

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ofcstats.errors import OfcstatsError
from ofcstats.rules.model import Ruleset
from ofcstats.simulate import heuristic
from ofcstats.simulate.bots import BOT_STYLES, Bot, HeuristicBot, RandomBot
from ofcstats.simulate.game import Dealer, HandRecord
from ofcstats.simulate.montecarlo import MonteCarloBot
from ofcstats.simulate.scoring import ruleset_arrays
from ofcstats.simulate.writer import LineFormat, hand_record, played_at, reported_points
from ofcstats.variants import MIN_PLAYERS, Variant

__all__ = ["BOT_STYLES", "Player", "Simulation", "SimulationError", "make_bot",
           "parse_players", "simulate", "write_jsonl"]

GAMES_PER_SERIES = 4  # games one table plays in a row before the next table's
MAX_TABLES = 2048  # tables played in lockstep at most (more: fewer, larger array steps)


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

    def check(self) -> None:
        """Raise :class:`SimulationError` for anything that cannot be dealt."""
        seats = len(self.players)
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
        if self.ruleset.wheel and self.variant is not Variant.CHINESE_13:
            raise SimulationError(
                f"ruleset {self.ruleset.name}: the wheel order of straights is played in "
                f"chinese-13; simulate {self.variant.value} under a ruleset without it")
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
            for i, p in enumerate(sim.players)]


@dataclass(frozen=True)
class _Block:
    """Consecutive hands of a run with their places in it, scored."""

    hands: list[HandRecord]
    games: npt.NDArray[np.int64]  # game number of each hand in the run, from 1
    numbers: npt.NDArray[np.int64]  # its number in its game, from 1
    first: int  # the run's index of the first hand
    points: npt.NDArray[np.int64]  # (hands, seats)


def _play(sim: Simulation, progress: Callable[[int, int], None] | None) -> Iterator[_Block]:
    """The hands of a run, numbered and scored, block by block."""
    sim.check()
    arrays = ruleset_arrays(sim.ruleset, sim.variant)
    names = [p.name for p in sim.players]
    seats = len(sim.players)
    series = math.ceil(sim.hands / (GAMES_PER_SERIES * seats))
    written = games = 0
    block = 0
    while written < sim.hands:
        # Timeouts end games early, so the tables first planned may fall short: then as
        # many more as the hands still wanted would need at full length.
        planned = series - block * MAX_TABLES
        tables = min(MAX_TABLES, planned if planned > 0 else
                     math.ceil((sim.hands - written) / (GAMES_PER_SERIES * seats)))
        dealer = Dealer(sim.variant, sim.ruleset, arrays, _bots(sim, block),
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


def simulate(sim: Simulation,
             progress: Callable[[int, int], None] | None = None) -> Iterator[dict[str, Any]]:
    """Play ``sim.hands`` hands; yield them as ``ofc-hand/1`` objects, in order.

    Tables are played a block at a time; each table plays whole games, and the run
    stops after exactly ``sim.hands`` hands (so only the very last game may be cut
    short). ``progress(done, total)`` is called as hands are played. The same
    simulation gives the same hands, to the byte.
    """
    names = [p.name for p in sim.players]
    styles = [p.style for p in sim.players]
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
                progress: Callable[[int, int], None] | None = None) -> int:
    """Write the simulated hands to ``path`` as JSON Lines (compact, one hand a line);
    return how many.

    The file is written whole or not at all: hands go to a temporary file beside it,
    renamed into place at the end.
    """
    lines = LineFormat(sim.variant, sim.ruleset, [p.name for p in sim.players],
                       [p.style for p in sim.players], sim.prefix or f"sim{sim.seed}",
                       sim.start)
    temporary = path.with_name(path.name + ".partial")
    count = 0
    try:
        with temporary.open("wb") as out:
            for played in _play(sim, progress):
                # A slice of hands at a time keeps the text arrays small.
                for start in range(0, len(played.hands), _LINES_AT_ONCE):
                    part = slice(start, start + _LINES_AT_ONCE)
                    out.write(lines.lines(played.hands[part], played.games[part],
                                          played.numbers[part], played.first + start,
                                          played.points[part]))
                count += len(played.hands)
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)
    return count


_LINES_AT_ONCE = 2048
