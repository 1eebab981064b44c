"""What each logged placement cost: every legal alternative valued by rollouts.

A *decision* is one street of one seat as logged: the cards dealt, the board before
them, and where the player put each card (0 top, 1 middle, 2 bottom, 3 discard). Its
*candidates* are every way to send the dealt cards to the free slots, discarding as
many as the street discards. Each candidate is valued by Monte Carlo rollouts, each
rollout one deal of every card the player could not see:

- **the opponents** (``opponents="drawn"``, the default): the cards of theirs the player
  had seen at that moment stay where they are; their later cards are drawn from the
  cards the player could not see, and their later streets played by the rollout rule; a
  seat in fantasyland (its cards face down) gets its logged number of cards drawn, set
  by :func:`ofcstats.simulate.fantasyland.plain_strengths`. ``opponents="logged"``
  takes their final boards as logged instead (hindsight: what the player could not
  know), leaving their cards out of the player's draws;
- **the player's later cards** are drawn from the same unseen cards, and its later
  streets played by the rollout rule of the simulator's Monte Carlo bot
  (:func:`ofcstats.simulate.montecarlo.play_out`, compiled);
- the finished board is scored against each opponent's (rows, scoops, fouls,
  royalties; the table bonus and spade bonus are left out), plus ``fantasyland_value``
  points per opponent when it reaches fantasyland.

Every candidate of a decision sees the same rollouts (common random numbers). The
valuing is in steps (:class:`Plan`), the first three choosing the best candidate, the
last two measuring what the play made gave up:

1. every candidate on the first ``plan.first`` rollouts;
2. the ``plan.screen`` best of them, and the play made, up to ``rollouts``;
3. the ``LEADERS`` best of those, and the play made, race on ``rollouts`` at a time up
   to ``plan.selecting``, a contender dropping out once it trails the leader by more
   than ``RACE_Z`` standard errors of their paired difference (a decision is done when
   one is left); the best mean is the **best candidate**;
4. the best candidate and the play made on ``plan.measuring`` further rollouts that
   played no part in choosing it (double sampling): their mean difference is the **EV
   loss**, with its standard error from the paired differences. The best of many noisy
   means is flattered; a mean on fresh rollouts is not, so the loss is unbiased for the
   candidate chosen, and may come out below zero when the play made is as good;
5. a decision whose best led the play made by more than ``CONFIRM_ABOVE`` points on the
   selection rollouts (a likely costly mistake) has the two measured on
   ``plan.confirming`` more fresh rollouts, pooled with step 4's: the biggest losses
   get a smaller error. Chosen on the selection rollouts alone, it keeps the loss
   unbiased.

A decision with nothing left to draw is valued exactly (one deal). A decision is a
*mistake* only when its loss exceeds ``SE_MULTIPLE`` standard errors.

Candidates that leave boards the rest of the hand cannot tell apart are valued once
(:func:`_representatives`).

A fantasyland set (13 to 17 cards set at once) is solved exactly by :func:`solve_set`:
the best of every way to set 13 of the cards, priced against the opponents' boards
(rows, scoops, fouls, royalties and the stay): their logged final boards, or, drawn,
the boards of ``FANTASYLAND_DRAWS`` rollouts (the best set then measured on fresh ones).

All rollouts of a group of decisions (same variant and street) are array work over
``candidates x rollouts`` boards at once; the random draws are seeded per decision,
so a decision's numbers do not depend on what else is reviewed with it, nor on the
threads sharing the work; the rollouts' worlds are dealt only for the decisions and
rollouts a step asks for.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from ofcstats import evaluate
from ofcstats.rules.board import fouled, royalties
from ofcstats.rules.model import Ruleset
from ofcstats.simulate.fantasyland import Layout, layout_of, plain_strengths
from ofcstats.simulate.montecarlo import final_strengths, play_out
from ofcstats.simulate.scoring import RulesetArrays, board_strengths, ruleset_arrays
from ofcstats.simulate.state import CARD_KEYS
from ofcstats.simulate.tables import (
    SUIT_BITS,
    SUIT_MASK,
    pattern_counts,
    pattern_onehot,
    patterns,
    row_tables,
)
from ofcstats.variants import Variant

OPPONENTS = ("drawn", "logged")
"""How the opponents' cards are valued: drawn from what the player could not see (the
default), or their final boards as logged (hindsight)."""
DEFAULT_OPPONENTS = "drawn"
DEFAULT_ROLLOUTS = 256
"""Selection rollouts of a decision, and as many again to measure the loss."""
DEFAULT_SEED = 0
DEFAULT_SCREEN = 6
"""Candidates kept after the first step, besides the play made; 0 keeps every one."""
FIRST_SHARE = 8
MIN_FIRST = 16
"""The first step's rollouts: ``rollouts // FIRST_SHARE``, at least ``MIN_FIRST``."""
FANTASYLAND_DRAWS = 8
"""Drawn opponents' rollouts the exact fantasyland solver chooses the best set against."""
LEADERS = 2
LEADERS_SHARE = 4
"""Step 3: the ``LEADERS`` best after step 2, and the play made, go on to
``LEADERS_SHARE * rollouts`` selection rollouts, where the best is told from the next
best."""
RACE_Z = 3.0
"""Step 3 drops a contender once it trails the leader by more than this many standard
errors of their paired difference."""
MEASURE_SHARE = 2
"""The loss is measured on ``MEASURE_SHARE * rollouts`` further rollouts."""
CONFIRM_ABOVE = 2.0
CONFIRM_SHARE = 6
"""Step 5: a decision whose best candidate led the play made by more than
``CONFIRM_ABOVE`` points on the selection rollouts (a likely costly mistake) has its loss
measured on ``CONFIRM_SHARE * rollouts`` more rollouts, so that the biggest mistakes are
told apart. Chosen on the selection rollouts alone, the step leaves the loss unbiased."""
SE_MULTIPLE = 2.0
"""A decision is a mistake when its loss exceeds this many standard errors."""
METHOD = "double-sampling"
"""The valuing method, stored with each decision (``best-mean``: the one before, the best
candidate's mean on the rollouts that chose it)."""
FANTASYLAND_VALUE = 14.0
"""Points per opponent a board that reaches fantasyland is worth on top of its own
score: the mean points a seat wins from each opponent in its fantasyland hand, where a
seat in a normal hand wins none on average (measured by ``bench/fantasyland_value.py``
on simulated Pineapple hands under american; see ``docs/review.md``)."""

MISTAKES = ("foul", "fantasyland", "royalties", "discard", "rows")
"""Kinds of mistake, in the order they are tested: fouls risked, fantasyland chances
given up, royalties missed, the wrong card discarded, and otherwise row points."""

_SIZES = np.array([3, 5, 5])
_BOARDS_AT_ONCE = 60_000  # boards (candidates x rollouts) played out per array step
_MARGIN = 0.02  # rates within this of each other count as the same
_NO_CARD = 52


@dataclass(frozen=True)
class Plan:
    """How a decision is valued: the settings its numbers depend on."""

    rollouts: int = DEFAULT_ROLLOUTS
    seed: int = DEFAULT_SEED
    screen: int = DEFAULT_SCREEN  # 0: every candidate on every selection rollout
    opponents: str = DEFAULT_OPPONENTS
    fantasyland_value: float = FANTASYLAND_VALUE

    def __post_init__(self) -> None:
        if self.rollouts < 1:
            raise ValueError(f"rollouts must be at least 1, not {self.rollouts}")
        if self.screen < 0:
            raise ValueError(f"screen must be 0 or more, not {self.screen}")
        if self.opponents not in OPPONENTS:
            raise ValueError(f"opponents must be one of {', '.join(OPPONENTS)}, "
                             f"not {self.opponents!r}")

    @property
    def first(self) -> int:
        """Rollouts of the first step (every candidate)."""
        return min(self.rollouts, max(MIN_FIRST, self.rollouts // FIRST_SHARE))

    @property
    def selecting(self) -> int:
        """Selection rollouts of the leaders (steps 1 to 3)."""
        return LEADERS_SHARE * self.rollouts

    @property
    def measuring(self) -> int:
        """Rollouts that measure the loss, after the selection ones."""
        return MEASURE_SHARE * self.rollouts

    @property
    def confirming(self) -> int:
        """Rollouts that measure the loss further (step 5), after the measuring ones."""
        return CONFIRM_SHARE * self.rollouts


@dataclass(frozen=True)
class Position:
    """One decision to review: what the player saw and what it did.

    The opponents' boards as the player saw them (``opponent_seen``, ``opponent_rows``,
    ``opponent_next``, ``opponent_dealt``) default to their final boards, every card
    seen and nothing to come."""

    hand_key: int
    hand_id: str
    seat: int
    player: str
    street: int  # the street number as logged
    index: int  # the street's place in the variant's streets (-1: a fantasyland set)
    variant: Variant
    ruleset: Ruleset
    dealt: npt.NDArray[np.uint8]  # (k,)
    chosen: npt.NDArray[np.int8]  # (k,) rows 0..3
    board: npt.NDArray[np.uint8]  # the cards placed on earlier streets
    board_rows: npt.NDArray[np.int8]  # row of each card of ``board``
    seen: npt.NDArray[np.bool_]  # (52,) the player's own cards so far, dealt ones included
    opponents: npt.NDArray[np.uint8]  # (O, 13) opponents' final boards as logged
    opponent_seen: npt.NDArray[np.uint8] | None = None  # (O, 13) their cards seen; 52: none
    opponent_rows: npt.NDArray[np.int8] | None = None  # (O, 13) rows of those, -1: none
    opponent_next: npt.NDArray[np.int8] | None = None  # (O,) street each plays next
    opponent_dealt: npt.NDArray[np.int8] | None = None  # (O,) cards of one in fantasyland

    @property
    def fantasyland(self) -> bool:
        """A fantasyland set: every card at once."""
        return self.index < 0

    @property
    def discards(self) -> int:
        """Cards this street throws away."""
        return int((self.chosen == 3).sum())

    def seen_of_opponents(self) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int8],
                                         npt.NDArray[np.int8], npt.NDArray[np.int8]]:
        """The opponents' cards seen (O, 13) and their rows, the street each plays next
        and the cards of those in fantasyland (0: not)."""
        count = self.opponents.shape[0]
        if self.opponent_seen is None:
            rows = np.repeat(np.arange(3, dtype=np.int8), _SIZES)
            return (self.opponents, np.broadcast_to(rows, (count, 13)),
                    np.full(count, len(self.variant.streets), dtype=np.int8),
                    np.zeros(count, dtype=np.int8))
        assert self.opponent_rows is not None
        assert self.opponent_next is not None
        assert self.opponent_dealt is not None
        return self.opponent_seen, self.opponent_rows, self.opponent_next, self.opponent_dealt

    def to_draw(self, opponents: str) -> list[int]:
        """Cards each opponent has still to be dealt, as the player sees it (``drawn``);
        none when their final boards are taken as logged."""
        if opponents == "logged":
            return [0] * self.opponents.shape[0]
        _, _, after, dealt = self.seen_of_opponents()
        streets = self.variant.streets
        return [int(d) if d else sum(s.dealt for s in streets[int(a):])
                for a, d in zip(after, dealt, strict=True)]

    def future(self) -> int:
        """The player's own cards still to come."""
        if self.fantasyland:
            return 0
        return sum(s.dealt for s in self.variant.streets[self.index + 1:])


@dataclass(frozen=True)
class Verdict:
    """The review of one :class:`Position`."""

    position: Position
    best: npt.NDArray[np.int8]  # (k,) rows of the best candidate
    ev_chosen: float
    ev_best: float
    ev_loss: float  # ev_best - ev_chosen on rollouts that did not choose the best
    ev_loss_se: float  # its standard error (0 when valued exactly)
    se_chosen: float  # standard error of ev_chosen (0 when valued exactly)
    candidates: int
    rollouts: int  # 0: valued exactly
    mistake: str | None  # one of MISTAKES when the loss exceeds SE_MULTIPLE errors


def is_mistake(loss: float, se: float) -> bool:
    """A loss above ``SE_MULTIPLE`` standard errors (above zero when valued exactly).

    >>> is_mistake(0.5, 0.2), is_mistake(0.3, 0.2), is_mistake(1e-3, 0.0)
    (True, False, True)
    """
    return loss > max(SE_MULTIPLE * se, 1e-9)


def decision_rng(seed: int, hand_id: str, seat: int, street: int) -> np.random.Generator:
    """The generator of one decision's draws: the same for the same seed and decision."""
    return np.random.default_rng([seed, zlib.crc32(hand_id.encode()), seat, street])


def review(positions: Sequence[Position], *, rollouts: int = DEFAULT_ROLLOUTS,
           seed: int = DEFAULT_SEED, fantasyland_value: float = FANTASYLAND_VALUE,
           screen: int = DEFAULT_SCREEN, opponents: str = DEFAULT_OPPONENTS,
           progress: Callable[[int], None] | None = None) -> list[Verdict]:
    """Review every position; verdicts in the positions' order.

    Positions are grouped by variant, street and ruleset, each group valued in array
    steps; ``progress(n)`` is told of each group's ``n`` positions once they are done.
    """
    plan = Plan(rollouts=rollouts, seed=seed, screen=screen, opponents=opponents,
                fantasyland_value=fantasyland_value)
    # A group shares its candidates: the same street of a variant, the same cards dealt
    # and discarded (a seat that timed out may have been placed otherwise), one ruleset;
    # and whether anything is left to draw.
    groups: dict[tuple[Variant, int, int, int, Ruleset, bool], list[int]] = {}
    for i, p in enumerate(positions):
        drawless = p.future() == 0 and not any(p.to_draw(opponents))
        groups.setdefault((p.variant, p.index, p.dealt.size, p.discards, p.ruleset,
                           drawless), []).append(i)
    out: list[Verdict | None] = [None] * len(positions)
    for (variant, index, _, _, ruleset, drawless), members in groups.items():
        arrays = ruleset_arrays(ruleset, variant)
        chosen = [positions[i] for i in members]
        if index < 0:
            verdicts = _fantasyland(chosen, arrays, plan, drawless)
        else:
            verdicts = _streets(chosen, arrays, plan, drawless)
        for i, verdict in zip(members, verdicts, strict=True):
            out[i] = verdict
        if progress is not None:
            progress(len(members))
    return [v for v in out if v is not None]


@dataclass(frozen=True)
class _Opponents:
    """Opponents' finished boards, padded to the most opponents, for each of ``M``
    worlds (a decision, or a decision's rollout): strengths and royalties ``(3, M, O)``,
    fouls and presence ``(M, O)``."""

    strength: npt.NDArray[np.intp]
    foul: npt.NDArray[np.bool_]
    royalty: npt.NDArray[np.int32]
    present: npt.NDArray[np.bool_]

    @classmethod
    def of(cls, positions: Sequence[Position], arrays: RulesetArrays) -> _Opponents:
        """The final boards as logged, one world per position."""
        most = max(p.opponents.shape[0] for p in positions)
        boards = np.zeros((len(positions), most, 13), dtype=np.uint8)
        present = np.zeros((len(positions), most), dtype=bool)
        for d, p in enumerate(positions):
            boards[d, :p.opponents.shape[0]] = p.opponents
            present[d, :p.opponents.shape[0]] = True
        strength = np.moveaxis(board_strengths(boards), -1, 0).astype(np.intp)
        return cls.of_strengths(strength, present, arrays)

    @classmethod
    def of_strengths(cls, strength: npt.NDArray[np.intp], present: npt.NDArray[np.bool_],
                     arrays: RulesetArrays) -> _Opponents:
        foul = fouled(strength)
        royalty = royalties([arrays.royalty], strength, ~foul, np.int32, dense=True)[0]
        return cls(strength, foul, royalty, present)

    def pooled(self, worlds: slice) -> _Opponents:
        """These worlds' opponents as the opponents of one world (for a set valued
        against all of them at once: its points summed over them)."""
        def flat(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
            return a[..., worlds, :].reshape(*a.shape[:-2], 1, -1)
        return _Opponents(flat(self.strength), flat(self.foul), flat(self.royalty),
                          flat(self.present))


def _score(arrays: RulesetArrays, strength: npt.NDArray[np.intp], world: npt.NDArray[np.intp],
           opp: _Opponents, fantasyland_value: float, in_fantasyland: bool
           ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_],
                      npt.NDArray[np.int32]]:
    """Points of finished boards (strengths ``(3, ...)``) against their world's
    opponents, the fantasyland value included; and whether each fouled, whether it
    reaches fantasyland (enters it, or ``in_fantasyland`` stays), and its royalties.
    ``world`` broadcasts against the boards: one per board, or ``(C, 1)`` for boards
    ``(3, C, n)``, n boards of each of C candidates. Compiled, board by board
    (:func:`_board_points`): the rules of :mod:`ofcstats.rules.board`, which the tests
    hold it to."""
    shape = np.broadcast_shapes(strength.shape[1:], world.shape)
    rows = np.ascontiguousarray(np.broadcast_to(strength, (3, *shape)).reshape(3, -1),
                                dtype=np.int64)
    points, foul, reach, roy = _outputs(rows.shape[1])
    args: list[Any] = [rows, np.ascontiguousarray(np.broadcast_to(world, shape).ravel(),
                                                  dtype=np.intp),
                       *_scoring(arrays, opp, fantasyland_value, in_fantasyland),
                       points, foul, reach, roy]
    _score_rows(*args)
    return points.reshape(shape), foul.reshape(shape), reach.reshape(shape), roy.reshape(shape)


def _score_keys(arrays: RulesetArrays, keys: npt.NDArray[np.int64], world: npt.NDArray[np.intp],
                opp: _Opponents, fantasyland_value: float
                ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_],
                           npt.NDArray[np.int32]]:
    """:func:`_score` of finished boards of a normal hand given as row keys ``(3, B)``,
    each against the opponents of its ``world`` ``(B,)``: points, fouls, fantasyland
    reached and royalties ``(B,)``."""
    t = row_tables()
    out = _outputs(keys.shape[1])
    args: list[Any] = [np.ascontiguousarray(keys, dtype=np.int64),
                       np.ascontiguousarray(world, dtype=np.intp), t.id_of_key, t.suited,
                       t.full3, t.full5, t.full5_flush,
                       *_scoring(arrays, opp, fantasyland_value, False), *out]
    _score_keyed(*args)
    return out


def _outputs(count: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_],
                                  npt.NDArray[np.bool_], npt.NDArray[np.int32]]:
    return (np.empty(count, dtype=np.float64), np.empty(count, dtype=np.bool_),
            np.empty(count, dtype=np.bool_), np.empty(count, dtype=np.int32))


def _scoring(arrays: RulesetArrays, opp: _Opponents, fantasyland_value: float,
             in_fantasyland: bool) -> tuple[Any, ...]:
    """The arguments the compiled scoring takes after the boards: the opponents, the
    royalties, what a pair of boards pays, and fantasyland."""
    stay = np.array([-1 if x is None else x for x in arrays.stay], dtype=np.int64)
    return (np.ascontiguousarray(opp.strength, dtype=np.int64), np.ascontiguousarray(opp.foul),
            np.ascontiguousarray(opp.royalty, dtype=np.int32), np.ascontiguousarray(opp.present),
            tuple(r.astype(np.int32) for r in arrays.royalty),
            np.array([arrays.row, arrays.majority, arrays.scoop, arrays.foul_points],
                     dtype=np.int64),
            -1 if arrays.entry is None else arrays.entry, stay, in_fantasyland,
            float(fantasyland_value))


@njit(inline="always")
def _board_points(s0: Any, s1: Any, s2: Any, w: Any, opp_strength: Any, opp_foul: Any,
                  opp_royalty: Any, present: Any, royalty: Any, pays: Any, entry: int,
                  stay: Any, in_fantasyland: bool, fl_value: float) -> tuple[Any, ...]:
    """One board's points against the opponents of world ``w`` (rows, majority, scoop,
    fouls, royalties netted: :func:`ofcstats.rules.board.pair_points`), fantasyland's
    value included; whether it fouled, reached fantasyland, and its royalties."""
    fouled_here = s0 > s1 or s1 > s2
    mine = np.int64(0)
    if not fouled_here:
        mine = np.int64(royalty[0][s0]) + np.int64(royalty[1][s1]) + np.int64(royalty[2][s2])
    total = 0.0
    seats = 0
    for o in range(present.shape[1]):
        if not present[w, o]:
            continue
        seats += 1
        theirs = np.int64(opp_royalty[0, w, o]) + np.int64(opp_royalty[1, w, o]) \
            + np.int64(opp_royalty[2, w, o])
        if not fouled_here and not opp_foul[w, o]:
            t0, t1, t2 = opp_strength[0, w, o], opp_strength[1, w, o], opp_strength[2, w, o]
            wins = np.int64(s0 > t0) + np.int64(s1 > t1) + np.int64(s2 > t2)
            losses = np.int64(s0 < t0) + np.int64(s1 < t1) + np.int64(s2 < t2)
            pair = pays[0] * (wins - losses) \
                + pays[1] * (np.int64(wins >= 2) - np.int64(losses >= 2)) \
                + pays[2] * (np.int64(wins == 3) - np.int64(losses == 3))
        else:
            pair = pays[3] * (np.int64(opp_foul[w, o]) - np.int64(fouled_here))
        total += pair + mine - theirs
    reached = False
    if entry >= 0 and not fouled_here:
        if in_fantasyland:
            reached = (stay[0] >= 0 and s0 >= stay[0]) or (stay[1] >= 0 and s1 >= stay[1]) \
                or (stay[2] >= 0 and s2 >= stay[2])
        else:
            reached = s0 >= entry
    if reached:
        total += fl_value * seats
    return total, fouled_here, reached, mine


@njit(nogil=True, cache=True)
def _score_rows(strength: Any, world: Any, opp_strength: Any, opp_foul: Any, opp_royalty: Any,
                present: Any, royalty: Any, pays: Any, entry: int, stay: Any,
                in_fantasyland: bool, fl_value: float, points: Any, foul: Any, reach: Any,
                roy: Any) -> None:
    """:func:`_score` on boards ``(3, B)``, into ``points``, ``foul``, ``reach``, ``roy``."""
    for b in range(strength.shape[1]):
        points[b], foul[b], reach[b], roy[b] = _board_points(
            strength[0, b], strength[1, b], strength[2, b], world[b], opp_strength, opp_foul,
            opp_royalty, present, royalty, pays, entry, stay, in_fantasyland, fl_value)


@njit(nogil=True, cache=True)
def _score_keyed(keys: Any, world: Any, id_of_key: Any, suited: Any, full3: Any, full5: Any,
                 full5_flush: Any, opp_strength: Any, opp_foul: Any, opp_royalty: Any,
                 present: Any, royalty: Any, pays: Any, entry: int, stay: Any,
                 in_fantasyland: bool, fl_value: float, points: Any, foul: Any, reach: Any,
                 roy: Any) -> None:
    """:func:`_score_keys`: the rows' strengths from their keys, then :func:`_score_rows`."""
    for b in range(keys.shape[1]):
        key0, key1, key2 = keys[0, b], keys[1, b], keys[2, b]
        s0 = np.int64(full3[id_of_key[key0 >> SUIT_BITS]])
        id1, id2 = id_of_key[key1 >> SUIT_BITS], id_of_key[key2 >> SUIT_BITS]
        s1 = np.int64(full5_flush[id1] if suited[key1 & SUIT_MASK] else full5[id1])
        s2 = np.int64(full5_flush[id2] if suited[key2 & SUIT_MASK] else full5[id2])
        points[b], foul[b], reach[b], roy[b] = _board_points(
            s0, s1, s2, world[b], opp_strength, opp_foul, opp_royalty, present, royalty, pays,
            entry, stay, in_fantasyland, fl_value)


@cache
def _pattern_index(k: int, discards: int) -> dict[int, int]:
    """Pattern number of each placement, by its rows read as a base-4 number."""
    codes = patterns(k, discards).astype(np.int64) @ (4 ** np.arange(k))
    return {int(c): i for i, c in enumerate(codes)}


def _pattern_of(rows: npt.NDArray[np.int8]) -> int:
    return _pattern_index(rows.size, int((rows == 3).sum()))[
        int(rows.astype(np.int64) @ (4 ** np.arange(rows.size)))]


@dataclass(frozen=True)
class _World:
    """The rollouts of a group of decisions: the player's later cards ``(D, N, future)``
    and the opponents' finished boards, one world per decision (``per_decision`` 1: as
    logged) or per decision and rollout (``per_decision`` N: drawn)."""

    draws: npt.NDArray[np.uint8]
    opp: _Opponents
    per_decision: int

    def index(self, d: npt.NDArray[np.intp], r0: int, r1: int) -> npt.NDArray[np.intp]:
        """The worlds of decisions ``d`` (C,) in rollouts ``r0:r1``: ``(C, n)`` or
        ``(C, 1)`` when the opponents are the same in every rollout."""
        if self.per_decision == 1:
            return d[:, None]
        return d[:, None] * self.per_decision + np.arange(r0, r1)[None, :]


def _world(positions: Sequence[Position], arrays: RulesetArrays, upto: int,
           plan: Plan, skip: int = 0) -> _World:
    """Rollouts ``skip:upto`` of each decision (numbered from 0 in the world): the
    player's later cards, drawn from the cards it could not see (and, opponents as
    logged, not on their final boards); drawn opponents' later cards from the same, in
    the same permutation after the player's. A decision's rollouts are the same whatever
    ``skip``: a later step's are its own, none of them seen by the earlier steps."""
    future = positions[0].future()
    n = upto - skip
    if plan.opponents == "logged":
        draws = np.zeros((len(positions), n, future), dtype=np.uint8)
        if future:
            for d, p in enumerate(positions):
                hidden = p.seen.copy()
                hidden[p.opponents.ravel()] = True
                draws[d] = _permuted(p, hidden, upto, future, plan.seed, skip)
        return _World(draws, _Opponents.of(positions, arrays), 1)
    most = max(p.opponents.shape[0] for p in positions)
    worlds = len(positions) * n
    strength = np.zeros((3, worlds, most), dtype=np.intp)
    present = np.zeros((worlds, most), dtype=bool)
    draws = np.zeros((len(positions), n, future), dtype=np.uint8)
    # Opponents by what is left for them to play: (streets to come, fantasyland cards)
    # -> (decision, opponent, where its cards start in the decision's permutation).
    plans: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    cards: list[npt.NDArray[np.uint8]] = []
    keys = np.zeros((len(positions), most, 3), dtype=np.int64)
    filled = np.zeros((len(positions), most, 3), dtype=np.int8)
    for d, p in enumerate(positions):
        seen, rows, after, dealt = p.seen_of_opponents()
        hidden = p.seen.copy()
        hidden[seen[seen < _NO_CARD]] = True
        counts = p.to_draw("drawn")
        order = _permuted(p, hidden, upto, future + sum(counts), plan.seed, skip)
        cards.append(order)
        draws[d] = order[:, :future]
        start = future
        for o in range(p.opponents.shape[0]):
            placed = rows[o] >= 0
            np.add.at(keys[d, o], rows[o][placed], CARD_KEYS[seen[o][placed]])
            filled[d, o] = np.bincount(rows[o][placed], minlength=3)[:3]
            plans.setdefault((int(after[o]), int(dealt[o])), []).append((d, o, start))
            start += counts[o]
        present[d * n:(d + 1) * n, :p.opponents.shape[0]] = True
    streets = [(s.dealt, s.discard) for s in positions[0].variant.streets]
    for (next_street, in_fantasyland), members in plans.items():
        decs = np.array([m[0] for m in members])
        opps = np.array([m[1] for m in members])
        world = (decs[:, None] * n + np.arange(n)[None, :]).ravel()  # (m * n,)
        width = in_fantasyland or sum(x for x, _ in streets[next_street:])
        if in_fantasyland:
            # A seat in fantasyland: its cards face down, set by the plain rule.
            got = np.concatenate([cards[dd][:, start:start + width]
                                  for dd, _, start in members])
            strength[:, world, np.repeat(opps, n)] = plain_strengths(got)
            continue
        board_keys = np.repeat(keys[decs, opps].T, n, axis=1)
        if width:
            got = np.concatenate([cards[dd][:, start:start + width]
                                  for dd, _, start in members])
            # Their last street by the quick rule too: a drawn opponent is a model of
            # what the player could expect, the exact last street is kept for the player.
            board_keys = play_out(board_keys, np.repeat(filled[decs, opps].T, n, axis=1), got,
                                  streets[next_street:], arrays, plan.fantasyland_value,
                                  exact_last=False)
        strength[:, world, np.repeat(opps, n)] = final_strengths(board_keys)
    return _World(draws, _Opponents.of_strengths(strength, present, arrays), n)


def _permuted(p: Position, hidden: npt.NDArray[np.bool_], n: int, count: int,
              seed: int, skip: int = 0) -> npt.NDArray[np.uint8]:
    """``(n - skip, count)``: the first ``count`` cards of shuffles ``skip:n`` of the
    cards not ``hidden``, from the decision's own generator."""
    deck = np.flatnonzero(~hidden).astype(np.uint8)
    if count > deck.size:
        raise ValueError(f"hand {p.hand_id} seat {p.seat} street {p.street}: {count} cards "
                         f"to draw from {deck.size} unseen")
    rng = decision_rng(seed, p.hand_id, p.seat, p.street)
    bits = rng.bit_generator
    assert isinstance(bits, np.random.PCG64)
    bits.advance(skip * count)  # one number per card of each row skipped, none drawn
    out = np.empty((n - skip, count), dtype=np.uint8)
    _deal(deck, rng.random((n - skip, count)), out)
    return out


@njit(nogil=True, cache=True)
def _deal(deck: Any, uniform: Any, out: Any) -> None:
    """Each row of ``out``: the first cards of a shuffle of ``deck`` (Fisher-Yates, the
    card at each place chosen evenly among those not yet dealt by that row of
    ``uniform``, numbers in [0, 1))."""
    cards = deck.copy()
    size = deck.size
    for r in range(out.shape[0]):
        cards[:] = deck
        for i in range(out.shape[1]):
            j = min(i + np.int64(uniform[r, i] * (size - i)), size - 1)
            cards[i], cards[j] = cards[j], cards[i]
            out[r, i] = cards[i]


@dataclass(frozen=True)
class _Block:
    """The world of rollouts ``r0:r1`` of some decisions of a street: ``local`` maps a
    decision of the street to its number in ``world`` (-1: not in it)."""

    r0: int
    r1: int
    local: npt.NDArray[np.intp]
    world: _World


@dataclass(frozen=True)
class _Street:
    """What the candidates of one group of positions are valued against. The rollouts'
    worlds (the player's later cards, the opponents' finished boards) are built when a
    step first asks for them, for the decisions and rollouts it asks for: those a step
    leaves out cost nothing."""

    later: list[tuple[int, int]]  # the streets still to come: (dealt, discards)
    keys: npt.NDArray[np.int64]  # (D, 3) boards before the street
    filled: npt.NDArray[np.int8]  # (D, 3)
    added: npt.NDArray[np.int64]  # (D, P, 3) what each pattern adds to each row
    counts: npt.NDArray[np.int8]  # (P, 3)
    positions: Sequence[Position]
    plan: Plan
    arrays: RulesetArrays
    fantasyland_value: float
    blocks: list[_Block]

    def block(self, dec: npt.NDArray[np.intp], r0: int, r1: int) -> _Block:
        """A world holding rollouts ``r0:r1`` of decisions ``dec``, built if none does."""
        for block in self.blocks:
            if block.r0 <= r0 and r1 <= block.r1 and (block.local[dec] >= 0).all():
                return block
        members = np.unique(dec)
        local = np.full(len(self.positions), -1, dtype=np.intp)
        local[members] = np.arange(members.size)
        world = _world([self.positions[i] for i in members], self.arrays, r1, self.plan,
                       skip=r0)
        self.blocks.append(_Block(r0, r1, local, world))
        return self.blocks[-1]

    def value(self, dec: npt.NDArray[np.intp], pat: npt.NDArray[np.intp], r0: int, r1: int,
              raw: bool = False) -> tuple[npt.NDArray[np.float64],
                                          npt.NDArray[np.float64] | None]:
        """Candidates (decision, pattern) over rollouts ``r0:r1``: ``(4, C)`` mean points,
        foul rate, fantasyland rate and mean royalties; and, if ``raw``, the points of
        each rollout ``(C, n)``."""
        n = r1 - r0
        out = np.empty((4, dec.size))
        points_of = np.empty((dec.size, n)) if raw else None
        block = self.block(dec, r0, r1)
        draws, skip = block.world.draws, block.r0
        future = draws.shape[2]
        step = max(1, _BOARDS_AT_ONCE // n)
        for start in range(0, dec.size, step):
            part = slice(start, start + step)
            d, pp = dec[part], pat[part]
            c, here = d.size, block.local[dec[part]]
            board_keys = np.repeat((self.keys[d] + self.added[d, pp]).T, n, axis=1)
            if self.later:
                board_filled = np.repeat((self.filled[d] + self.counts[pp]).T.astype(np.int8),
                                         n, axis=1)
                final = play_out(board_keys, board_filled,
                                 draws[here, r0 - skip:r1 - skip].reshape(c * n, future),
                                 self.later,
                                 self.arrays, self.fantasyland_value)
            else:
                final = board_keys
            world = np.broadcast_to(block.world.index(here, r0 - skip, r1 - skip),
                                    (c, n)).ravel()
            flat = _score_keys(self.arrays, final, world, block.world.opp,
                               self.fantasyland_value)
            points, foul, reach, roy = (a.reshape(c, n) for a in flat)
            out[0, part] = points.mean(axis=1)
            out[1, part] = foul.mean(axis=1)
            out[2, part] = reach.mean(axis=1)
            out[3, part] = roy.mean(axis=1)
            if points_of is not None:
                points_of[part] = points
        return out, points_of


def _boards(positions: Sequence[Position]) -> tuple[npt.NDArray[np.int64],
                                                     npt.NDArray[np.int8]]:
    """Row keys and card counts ``(D, 3)`` of the boards before the street."""
    keys = np.zeros((len(positions), 3), dtype=np.int64)
    filled = np.zeros((len(positions), 3), dtype=np.int8)
    for d, p in enumerate(positions):
        np.add.at(keys[d], p.board_rows, CARD_KEYS[p.board])
        filled[d] = np.bincount(p.board_rows, minlength=3)[:3]
    return keys, filled


def _streets(positions: Sequence[Position], arrays: RulesetArrays, plan: Plan,
             drawless: bool) -> list[Verdict]:
    """Positions of one variant street: every fitting candidate, rolled out."""
    first = positions[0]
    k, discards = first.dealt.size, first.discards
    later = [(s.dealt, s.discard) for s in first.variant.streets[first.index + 1:]]
    pats = patterns(k, discards)
    counts = pattern_counts(k, discards)
    onehot = pattern_onehot(k, discards).reshape(k, -1, 3)
    d_count = len(positions)

    keys, filled = _boards(positions)
    fits = np.asarray(((filled[:, None, :] + counts[None]) <= _SIZES).all(axis=2),
                      dtype=bool)  # (D, P)
    chosen = np.array([_pattern_of(p.chosen) for p in positions])
    if not fits[np.arange(d_count), chosen].all():
        bad = positions[int(np.flatnonzero(~fits[np.arange(d_count), chosen])[0])]
        raise ValueError(f"hand {bad.hand_id} seat {bad.seat} street {bad.street}: the "
                         "logged placement does not fit the board")
    selecting = 1 if drawless else plan.selecting
    measuring = 0 if drawless else plan.measuring
    added = np.einsum("dk,kpr->dpr", CARD_KEYS[np.stack([p.dealt for p in positions])]
                      .astype(np.float64), onehot).astype(np.int64)
    street = _Street(later, keys, filled, added, counts, positions, plan, arrays,
                     plan.fantasyland_value, [])
    dec, pat = np.nonzero(fits)  # every fitting candidate, decision by decision
    total = np.bincount(dec, minlength=d_count)
    # Candidates that leave the same board, as far as the rest of the hand can tell, are
    # valued once: only the first of each class is rolled out and stands for the others.
    rep = _representatives(dec, pat, keys, added, fits.shape)
    lead = rep[dec, pat] == pat
    dec, pat = dec[lead], pat[lead]
    mine_rep = rep[np.arange(d_count), chosen]
    bounds = np.searchsorted(dec, np.arange(d_count + 1))
    mine = np.array([bounds[d] + int(np.flatnonzero(pat[bounds[d]:bounds[d + 1]]
                                                    == mine_rep[d])[0])
                     for d in range(d_count)])
    stats, top, lead = _select(street, dec, pat, bounds, mine, selecting, plan)
    if drawless:  # one deal, every candidate valued on it: exact
        ev_mine, ev_top = stats[0, mine], stats[0, top]
        loss, se, se_mine = ev_top - ev_mine, np.zeros(d_count), np.zeros(d_count)
        rates = stats[1:, mine], stats[1:, top]
    else:
        # Step 4: the play made and the best on rollouts that did not choose it.
        points, (ev_mine, ev_top), rates = _measure(street, dec, pat, mine, top, selecting,
                                                    measuring)
        loss, se, se_mine = _paired(points[:d_count], points[d_count:])
        # Step 5: the likely costly mistakes measured on more rollouts, chosen by the
        # selection rollouts' lead alone (not by the loss measured), so still unbiased.
        sure = np.flatnonzero((top != mine) & (lead > CONFIRM_ABOVE))
        if sure.size and plan.confirming:
            _confirm(street, positions, plan, sure, selecting + measuring,
                     dec[np.concatenate([mine[sure], top[sure]])],
                     pat[np.concatenate([mine[sure], top[sure]])],
                     points, (loss, se, se_mine, ev_mine, ev_top), rates)
    verdicts = []
    for d, p in enumerate(positions):
        same = top[d] == mine[d]
        best = p.chosen if same else pats[pat[top[d]]]
        kind = None
        if not same and is_mistake(float(loss[d]), float(se[d])):
            pair = [np.array([mine_r[d], top_r[d]]) for mine_r, top_r in
                    zip(rates[0], rates[1], strict=True)]
            kind = _mistake(pair[0], pair[1], pair[2], p.chosen, best, p.dealt)
        verdicts.append(Verdict(
            position=p, best=best.astype(np.int8), ev_chosen=float(ev_mine[d]),
            ev_best=float(ev_mine[d] if same else ev_top[d]),
            ev_loss=0.0 if same else float(loss[d]),
            ev_loss_se=0.0 if same else float(se[d]), se_chosen=float(se_mine[d]),
            candidates=int(total[d]), rollouts=0 if drawless else plan.rollouts,
            mistake=kind))
    return verdicts


def _measure(street: _Street, dec: npt.NDArray[np.intp], pat: npt.NDArray[np.intp],
             mine: npt.NDArray[np.intp], top: npt.NDArray[np.intp], start: int, count: int
             ) -> tuple[npt.NDArray[np.float64], tuple[npt.NDArray[np.float64], ...],
                        tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]:
    """Step 4: the play made and the best (``mine``, ``top``: one of each decision) on
    rollouts ``start:start + count``, the play made valued once where it is the best:
    their points ``(2D, n)`` (the play made's, then the best's), their means and their
    rates (foul, fantasyland, royalties; the play made's, then the best's)."""
    d_count = mine.size
    differ = np.flatnonzero(top != mine)
    both = np.concatenate([mine, top[differ]])
    stats, raw = street.value(dec[both], pat[both], start, start + count, raw=True)
    assert raw is not None
    points = np.concatenate([raw[:d_count], raw[:d_count]])
    points[d_count + differ] = raw[d_count:]
    ev_mine, ev_top = stats[0, :d_count].copy(), stats[0, :d_count].copy()
    ev_top[differ] = stats[0, d_count:]
    rates = stats[1:, :d_count].copy(), stats[1:, :d_count].copy()
    rates[1][:, differ] = stats[1:, d_count:]
    return points, (ev_mine, ev_top), rates


def _confirm(street: _Street, positions: Sequence[Position], plan: Plan,
             sure: npt.NDArray[np.intp], start: int, dec: npt.NDArray[np.intp],
             pat: npt.NDArray[np.intp], points: npt.NDArray[np.float64],
             measured: tuple[npt.NDArray[np.float64], ...],
             rates: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]) -> None:
    """Step 5: decisions ``sure`` measured on ``plan.confirming`` more rollouts (from
    ``start``), their play made and best (``dec``, ``pat``: those of ``sure``, then those
    of the best) pooled with the measuring rollouts' ``points``; ``measured`` (loss, its
    error, the error of the play made, the two EVs) and ``rates`` updated in place."""
    d_count = len(positions)
    stats, added = street.value(dec, pat, start, start + plan.confirming, raw=True)
    assert added is not None
    both = [np.concatenate([points[rows], added[i * sure.size:(i + 1) * sure.size]], axis=1)
            for i, rows in enumerate((sure, d_count + sure))]
    loss, se, se_mine, ev_mine, ev_top = measured
    loss[sure], se[sure], se_mine[sure] = _paired(both[0], both[1])
    ev_mine[sure], ev_top[sure] = both[0].mean(axis=1), both[1].mean(axis=1)
    share = (points.shape[1]) / (points.shape[1] + plan.confirming)
    for i, was in enumerate(rates):
        was[:, sure] = share * was[:, sure] \
            + (1 - share) * stats[1:, i * sure.size:(i + 1) * sure.size]


def _paired(mine: npt.NDArray[np.float64], best: npt.NDArray[np.float64]
            ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64],
                       npt.NDArray[np.float64]]:
    """From the points of the play made and of the best on the same rollouts ``(D, n)``:
    the mean loss, its standard error from the paired differences, and the standard error
    of the play made's mean."""
    n = mine.shape[1]
    diff = best - mine
    if n < 2:
        return diff.mean(axis=1), np.zeros(len(mine)), np.zeros(len(mine))
    return (diff.mean(axis=1), diff.std(axis=1, ddof=1) / np.sqrt(n),
            mine.std(axis=1, ddof=1) / np.sqrt(n))


def _select(street: _Street, dec: npt.NDArray[np.intp], pat: npt.NDArray[np.intp],
            bounds: npt.NDArray[np.intp], mine: npt.NDArray[np.intp], selecting: int,
            plan: Plan) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.intp],
                                 npt.NDArray[np.float64]]:
    """The best candidate of each decision over its selection rollouts, a tie going to
    the play made (``mine``), every candidate's numbers on the first step's, and by how
    much the best led the play made on the selection rollouts."""
    d_count = mine.size

    def best_of(mean: npt.NDArray[np.float64], count: int) -> npt.NDArray[np.bool_]:
        """The ``count`` best of each decision (0: all), and the play made."""
        keep = np.zeros(dec.size, dtype=bool)
        keep[mine] = True
        for d in range(d_count):
            lo, hi = bounds[d], bounds[d + 1]
            if count and hi - lo > count:
                keep[lo + np.argsort(-mean[lo:hi], kind="stable")[:count]] = True
            else:
                keep[lo:hi] = True
        return keep & np.isfinite(mean)

    # Step 1: every candidate on the first rollouts; step 2: the best few, and the play
    # made, on the rest of the rollouts.
    done = min(plan.first, selecting)
    street.block(np.arange(d_count), 0, min(plan.rollouts, selecting))  # both steps' world
    stats, raw = street.value(dec, pat, 0, done, raw=True)
    assert raw is not None
    mean = stats[0]
    upto = min(plan.rollouts, selecting)
    if upto > done:
        kept = np.flatnonzero(best_of(mean, plan.screen))
        more, more_raw = street.value(dec[kept], pat[kept], done, upto, raw=True)
        assert more_raw is not None
        total = np.full(dec.size, -np.inf)
        total[kept] = (mean[kept] * done + more[0] * (upto - done)) / upto
        raw = np.concatenate([raw[kept], more_raw], axis=1)
        mean, done, index = total, upto, kept
    else:
        index = np.arange(dec.size)
    best = _race_leaders(street, dec, pat, mine, mean, best_of(mean, LEADERS), index, raw,
                         done, selecting, plan.rollouts)
    return stats, best, mean[best] - mean[mine]


def _race_leaders(street: _Street, dec: npt.NDArray[np.intp], pat: npt.NDArray[np.intp],
                  mine: npt.NDArray[np.intp], mean: npt.NDArray[np.float64],
                  contending: npt.NDArray[np.bool_], index: npt.NDArray[np.intp],
                  raw: npt.NDArray[np.float64], done: int, selecting: int, step: int
                  ) -> npt.NDArray[np.intp]:
    """Step 3: the best candidate of each decision among those ``contending``, raced on
    from their points on the first ``done`` rollouts (``raw``, rows those of the
    candidates ``index``); ``mean`` updated in place with their means.

    The contenders race on, ``step`` more rollouts at a time, up to ``selecting``; one
    drops out once it trails the leader by more than ``RACE_Z`` errors of their paired
    difference (:func:`_race`), a decision once one is left."""
    contenders = np.flatnonzero(contending)
    d_count = mine.size
    points = np.zeros((contenders.size, max(selecting, done)))
    points[:, :done] = raw[np.searchsorted(index, contenders)]
    alive = np.ones(contenders.size, dtype=bool)
    owner = dec[contenders]
    edges = np.searchsorted(owner, np.arange(d_count + 1))
    active = np.ones(d_count, dtype=bool)
    while True:
        for d in np.flatnonzero(active).tolist():
            live = edges[d] + np.flatnonzero(alive[edges[d]:edges[d + 1]])
            if live.size > 1:
                alive[live] = _race(points[live, :done], contenders[live] == mine[d])
            active[d] = alive[edges[d]:edges[d + 1]].sum() > 1
        if done >= selecting or not active.any():
            break
        racing = np.flatnonzero(alive & active[owner])
        upto = min(selecting, done + step)
        more_raw = street.value(dec[contenders[racing]], pat[contenders[racing]], done, upto,
                                raw=True)[1]
        assert more_raw is not None
        points[racing, done:upto] = more_raw
        mean[contenders[racing]] = points[racing, :upto].mean(axis=1)
        done = upto
    best = np.empty(d_count, dtype=np.intp)
    for d in range(d_count):
        live = contenders[edges[d]:edges[d + 1]][alive[edges[d]:edges[d + 1]]]
        top = live[int(np.argmax(mean[live]))]
        best[d] = mine[d] if mine[d] in live and mean[mine[d]] >= mean[top] else top
    return best


def _race(points: npt.NDArray[np.float64], mine: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Which of a decision's contenders race on, from their points on the same rollouts
    ``(L, n)``: the leader (the best mean, a tie going to the play made, ``mine``), and
    those whose paired difference to it is not yet resolved: a mean difference within
    ``RACE_Z`` standard errors of it."""
    mean = points.mean(axis=1)
    lead = int(np.argmax(mean))
    if mine.any() and mean[int(mine.argmax())] >= mean[lead]:
        lead = int(mine.argmax())
    diff = points[lead] - points
    gap = diff.mean(axis=1)
    n = points.shape[1]
    se = diff.std(axis=1, ddof=1) / np.sqrt(n) if n > 1 else np.full(gap.size, np.inf)
    keep = ~((gap > RACE_Z * se) | ((se == 0) & (gap >= 0)))
    keep[lead] = True
    return keep


def _representatives(dec: npt.NDArray[np.intp], pat: npt.NDArray[np.intp],
                     keys: npt.NDArray[np.int64], added: npt.NDArray[np.int64],
                     shape: tuple[int, int]) -> npt.NDArray[np.intp]:
    """``(D, P)``: the first pattern of each fitting candidate's class (-1: no fit).

    Two candidates are one class when they leave boards the rest of the hand cannot tell
    apart. A row is its ranks, plus, for the middle and bottom, its suits while they are
    all one suit (a flush draw). The top row's suits count for nothing (three cards make
    no flush), nor do those of a row holding two suits already (it can never be a flush),
    nor where the discards went. So a pair dealt in Pineapple, one card on top and the
    other thrown away, is one class either way round, and so is a pair split between two
    rows that cannot be flushes. The rollouts see the same draws for every candidate, and
    the rule and the scoring see only this much of a board, so the candidates of a class
    have the same value on every rollout: valuing one of them is exact.
    """
    rep = np.full(shape, -1, dtype=np.intp)
    if not dec.size:
        return rep
    rows = keys[dec] + added[dec, pat]  # (C, 3) the boards after the street
    ranks = rows >> SUIT_BITS
    suits = rows & SUIT_MASK
    suits = np.where(row_tables().suited[suits], suits, SUIT_MASK)  # mixed: all alike
    code = np.stack([dec, ranks[:, 0], ranks[:, 1], suits[:, 1], ranks[:, 2], suits[:, 2]],
                    axis=1)
    _, first, inverse = np.unique(code, axis=0, return_index=True, return_inverse=True)
    rep[dec, pat] = pat[first[inverse.ravel()]]
    return rep


def _mistake(foul: npt.NDArray[np.float64], reach: npt.NDArray[np.float64],
             royalty: npt.NDArray[np.float64], chosen: npt.NDArray[np.int8],
             best: npt.NDArray[np.int8], dealt: npt.NDArray[np.uint8]) -> str:
    """What the chosen play (index 0) gave up against the best (index 1)."""
    if foul[0] > foul[1] + _MARGIN:
        return "foul"
    if reach[0] + _MARGIN < reach[1]:
        return "fantasyland"
    if royalty[0] + 0.5 < royalty[1]:
        return "royalties"
    if set(dealt[chosen == 3].tolist()) != set(dealt[best == 3].tolist()):
        return "discard"
    return "rows"


def _fantasyland(positions: Sequence[Position], arrays: RulesetArrays, plan: Plan,
                 drawless: bool) -> list[Verdict]:
    """Fantasyland sets: every way to set 13 of the cards (:func:`solve_set`), priced
    against the opponents' final boards (exact), or against drawn opponents: the best
    set chosen against ``FANTASYLAND_DRAWS`` rollouts, it and the play made measured on
    ``plan.measuring`` others."""
    out = []
    value = plan.fantasyland_value
    for p in positions:
        if drawless:
            opp = _Opponents.of([p], arrays)
            chooser, worlds, n = opp, np.zeros((1, 1), dtype=np.intp), 0
        else:
            n = plan.measuring
            world = _world([p], arrays, FANTASYLAND_DRAWS + n, plan)
            opp, chooser = world.opp, world.opp.pooled(slice(0, FANTASYLAND_DRAWS))
            worlds = np.arange(FANTASYLAND_DRAWS, FANTASYLAND_DRAWS + n)[None, :]
        best, _, count = solve_set(p.dealt, arrays, chooser, value)
        points, foul, reach, roy = _set_values(np.stack([p.dealt, p.dealt]),
                                               np.stack([p.chosen, best]), arrays, opp,
                                               value, worlds)
        ev_mine, ev_best = float(points[0].mean()), float(points[1].mean())
        diff = points[1] - points[0]
        se = float(diff.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
        se_mine = float(points[0].std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
        loss = float(diff.mean())
        kind = None
        if drawless and loss <= 0:
            best, ev_best, loss = p.chosen, ev_mine, 0.0  # a tie goes to the play made
        elif is_mistake(loss, se):
            rates = [r.mean(axis=1).astype(float) for r in (foul, reach, roy)]
            kind = _mistake(rates[0], rates[1], rates[2], p.chosen, best, p.dealt)
        out.append(Verdict(position=p, best=best.astype(np.int8), ev_chosen=ev_mine,
                           ev_best=ev_best, ev_loss=loss, ev_loss_se=se, se_chosen=se_mine,
                           candidates=count, rollouts=n, mistake=kind))
    return out


def _set_values(cards: npt.NDArray[np.uint8], actions: npt.NDArray[np.int8],
                arrays: RulesetArrays, opp: _Opponents, fantasyland_value: float,
                worlds: npt.NDArray[np.intp] | None = None
                ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_],
                           npt.NDArray[np.bool_], npt.NDArray[np.int32]]:
    """Points ``(m, n)`` of sets ``(m, k)`` of one seat in fantasyland against the
    opponents of each of its ``worlds`` ``(1, n)`` (default: the first world alone), the
    stay included; and their fouls, stays and royalties."""
    if worlds is None:
        worlds = np.zeros((1, 1), dtype=np.intp)
    boards = _board_of(cards, actions)
    strength = np.moveaxis(board_strengths(boards), -1, 0).astype(np.intp)[:, :, None]
    points, foul, reach, roy = _score(arrays, strength, worlds, opp, fantasyland_value, True)
    shape = points.shape
    return (points, np.broadcast_to(foul, shape), np.broadcast_to(reach, shape),
            np.broadcast_to(roy, shape))


_SET_ELEMENTS = 1 << 22  # (middle, bottom, top) triples valued per array step


def solve_set(cards: npt.NDArray[np.uint8], arrays: RulesetArrays, opp: _Opponents,
              fantasyland_value: float) -> tuple[npt.NDArray[np.int8], float, int]:
    """The best way to set 13 of a fantasyland seat's ``cards`` (13 to 17), exactly:
    its rows (0 top, 1 middle, 2 bottom, 3 discard per card), its points against the
    opponents' final boards in ``opp`` (one decision's) with the stay worth
    ``fantasyland_value`` per opponent, and how many sets there are.

    Every (bottom, middle) pair of fives is tried (6188 x 792 with 17 cards). A set's
    points grow with each row's strength (row wins, royalties and the stay all do, under
    every ruleset whose royalties grow with the hand), so for a pair that does not foul
    the best top is the strongest three of the cards left that does not beat the middle;
    the pairs are tried in the order of a bound (the strongest top of all the cards that
    does not beat the middle), until no bound is above the best found. Should the
    royalties not grow with the hand, every top of every pair is tried. A fouled set is
    worth the same whatever its cards, so one value stands for all of them.
    """
    search = _SetSearch.of(cards, arrays, opp, fantasyland_value)
    layout = search.layout
    best_value, best = search.best()
    any_foul = np.array([[1], [0], [0]], dtype=np.intp)  # any fouled board: the same points
    foul_points = float(_score(arrays, any_foul, np.zeros(1, np.intp),
                               opp, fantasyland_value, True)[0][0])
    s5 = search.s5
    if foul_points > best_value:
        # Fouling pays more (a ruleset with a mild foul): the weakest five at the bottom
        # under the strongest middle left fouls, unless every five is as strong.
        b5 = int(np.argmin(s5))
        a = int(np.argmax(s5[layout.apart5[b5]]))
        if s5[layout.apart5[b5, a]] > s5[b5]:
            t3 = int(layout.left_tops[layout.apart_left[b5, a]][0])
            best, best_value = (t3, int(layout.apart5[b5, a]), b5), foul_points
    bits = 1 << np.arange(cards.size)
    actions = np.full(cards.size, 3, dtype=np.int8)
    for mask, row in ((layout.mask3[best[0]], 0), (layout.mask5[best[1]], 1),
                      (layout.mask5[best[2]], 2)):
        actions[(mask & bits) != 0] = row
    return actions, best_value, layout.apart5.size * layout.left_tops.shape[1]


@dataclass(frozen=True)
class _SetSearch:
    """The legal (bottom, middle) pairs of one fantasyland hand and how to value sets."""

    layout: Layout
    s5: npt.NDArray[np.intp]  # strength of each five
    s3: npt.NDArray[np.intp]  # of each three
    b: npt.NDArray[np.intp]  # the pairs whose middle does not beat the bottom
    a: npt.NDArray[np.intp]  # the middle's place in layout.apart5[b]
    m: npt.NDArray[np.intp]
    arrays: RulesetArrays
    opp: _Opponents
    fantasyland_value: float

    @classmethod
    def of(cls, cards: npt.NDArray[np.uint8], arrays: RulesetArrays, opp: _Opponents,
           fantasyland_value: float) -> _SetSearch:
        layout = layout_of(cards.size)
        s5 = evaluate.strength5(cards[layout.five]).astype(np.intp)
        s3 = evaluate.strength3(cards[layout.three]).astype(np.intp)
        b, a = np.nonzero(s5[layout.apart5] <= s5[:, None])
        return cls(layout, s5, s3, b, a, layout.apart5[b, a].astype(np.intp), arrays, opp,
                   fantasyland_value)

    def value(self, top: npt.NDArray[np.intp], pairs: npt.NDArray[np.intp]
              ) -> npt.NDArray[np.float64]:
        """Points of legal sets: top strengths and the pairs' rows."""
        strength = np.stack([top, self.s5[self.m[pairs]], self.s5[self.b[pairs]]])
        return _score(self.arrays, strength,
                      np.zeros(pairs.size, dtype=np.intp), self.opp, self.fantasyland_value,
                      True)[0]

    def best(self) -> tuple[float, tuple[int, int, int]]:
        """The best legal set's points and (top, middle, bottom); -inf when none."""
        monotone = all(bool((np.diff(self.arrays.royalty[r][np.sort(s)]) >= 0).all())
                       for r, s in ((0, self.s3), (1, self.s5), (2, self.s5)))
        step = max(1, _SET_ELEMENTS // (8 * self.layout.left_tops.shape[1]))
        best_value, best = -np.inf, (-1, -1, -1)
        if not monotone:
            for start in range(0, self.m.size, step):
                best_value, best = self._try(np.arange(start, min(start + step, self.m.size)),
                                             False, best_value, best)
            return best_value, best
        # The strongest top of all the cards under each middle bounds the pair's sets.
        ordered = np.sort(self.s3)
        below = (np.searchsorted(ordered, self.s5, side="right") - 1)[self.m]
        some = np.flatnonzero(below >= 0)
        if not some.size:
            return best_value, best
        # First a looser bound, one number per row added up, tried best first: the pairs
        # it leaves at or under the best set found among its best are out at once.
        rows = self._loose(ordered)
        loose = rows[0][below[some]] + rows[1][self.m[some]] + rows[2][self.b[some]]
        lead = np.argpartition(-loose, min(step, loose.size) - 1)[:step]
        best_value, best = self._try(some[lead[np.argsort(-loose[lead], kind="stable")]], True,
                                     best_value, best)
        some = some[loose > best_value]
        bound = self.value(ordered[below[some]], some)
        order = np.argsort(-bound, kind="stable")
        for start in range(0, order.size, step):
            part = order[start:start + step]
            if not bound[part[0]] > best_value:
                break
            best_value, best = self._try(some[part], True, best_value, best)
        return best_value, best

    def _loose(self, tops: npt.NDArray[np.intp]) -> list[npt.NDArray[np.float64]]:
        """A bound on the points of a set, above :meth:`value`, as one number per row
        added up: each row's wins, royalties and stay counted on its own (the majority and
        scoop bonuses counted as won, in the top's). The top's for the strengths
        ``tops``, the middle's and bottom's for every five."""
        a, opp = self.arrays, self.opp
        present = opp.present[0]
        count = int(present.sum())
        live = present & ~opp.foul[0]
        fixed = float(((a.majority + a.scoop) * live).sum()
                      - (opp.royalty[:, 0, :] * live).sum()
                      + (a.foul_points * (present & opp.foul[0])).sum())
        out = []
        for row, strength in ((0, tops), (1, self.s5), (2, self.s5)):
            theirs = opp.strength[row, 0, :][live]
            total = a.row * np.sign(strength[:, None] - theirs[None, :]).sum(axis=1) \
                + count * a.royalty[row][strength].astype(np.float64)
            limit = a.stay[row]
            if limit is not None:
                total += self.fantasyland_value * count * (strength >= limit)
            out.append(total + (fixed if row == 0 else 0.0))
        return out

    def _try(self, part: npt.NDArray[np.intp], monotone: bool, best_value: float,
             best: tuple[int, int, int]) -> tuple[float, tuple[int, int, int]]:
        """The best so far after the sets of these pairs: with the strongest legal top
        of each pair (``monotone``), or with every legal top."""
        if not part.size:
            return best_value, best
        tops = self.layout.left_tops[self.layout.apart_left[self.b[part], self.a[part]]]
        legal = self.s3[tops] <= self.s5[self.m[part]][:, None]  # (q, L)
        if monotone:
            pick = np.argmax(np.where(legal, self.s3[tops], -1), axis=1)
            q = np.flatnonzero(legal[np.arange(part.size), pick])
            t = tops[q, pick[q]]
        else:
            q, ll = np.nonzero(legal)
            t = tops[q, ll]
        if q.size:
            points = self.value(self.s3[t], part[q])
            i = int(np.argmax(points))
            if points[i] > best_value:
                pair = part[q[i]]
                return float(points[i]), (int(t[i]), int(self.m[pair]), int(self.b[pair]))
        return best_value, best


def _board_of(cards: npt.NDArray[np.uint8], actions: npt.NDArray[np.int8]
              ) -> npt.NDArray[np.uint8]:
    """``(m, 13)`` boards (top, middle, bottom) from cards and their rows."""
    out = np.empty((cards.shape[0], 13), dtype=np.uint8)
    for i in range(cards.shape[0]):
        out[i] = np.concatenate([cards[i][actions[i] == r] for r in range(3)])
    return out

