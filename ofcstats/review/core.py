"""What each logged placement cost: every legal alternative valued by rollouts.

A *decision* is one street of one seat as logged: the cards dealt, the board before
them, and where the player put each card (0 top, 1 middle, 2 bottom, 3 discard). Its
*candidates* are every way to send the dealt cards to the free slots, discarding as
many as the street discards. Each candidate is valued by Monte Carlo rollouts:

- the player's later cards are drawn from the cards neither visible to the player at
  that moment (its own board, discards and dealt cards so far) nor on an opponent's
  final board;
- the later streets are played by the quick rule of the simulator's Monte Carlo bot
  (:func:`ofcstats.simulate.montecarlo.play_out`: each card to the row where it helps
  most, the worst cards discarded, the last street exactly);
- the finished board is scored against each opponent's final board as logged (rows,
  scoops, fouls, royalties; the table bonus and spade bonus are left out), plus
  ``fantasyland_value`` points per opponent when it reaches fantasyland.

Every candidate of a decision sees the same samples (common random numbers), so the
differences between candidates are far sharper than their spread. A street with no
cards to come is valued exactly (one deal). The EV loss is the best candidate's mean
minus the chosen one's: never negative, since the chosen placement is a candidate.

Candidates that leave boards the rest of the hand cannot tell apart are valued once
(:func:`_representatives`); every other candidate gets every rollout unless screening
is asked for.

A fantasyland set (13 to 17 cards set at once) is solved exactly by :func:`solve_set`:
the best of every way to set 13 of the cards, priced against the opponents' boards
(rows, scoops, fouls, royalties and the stay).

All rollouts of a group of decisions (same variant and street) are array work over
``candidates x rollouts`` boards at once; the random draws are seeded per decision,
so a decision's numbers do not depend on what else is reviewed with it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from ofcstats import evaluate
from ofcstats.rules.board import fouled, pair_points, royalties
from ofcstats.rules.model import Ruleset
from ofcstats.simulate.fantasyland import Layout, layout_of
from ofcstats.simulate.montecarlo import final_strengths, play_out
from ofcstats.simulate.scoring import RulesetArrays, board_strengths, qualifies, ruleset_arrays
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

DEFAULT_ROLLOUTS = 100
DEFAULT_SEED = 0
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
SCREEN_ROLLOUTS = 12
"""Rollouts every candidate gets when screening (the first of the decision's draws)."""
DEFAULT_SCREEN = 0
"""Candidates kept after screening, besides the play made; 0 (or None) values every
candidate on every rollout, the default."""


@dataclass(frozen=True)
class Position:
    """One decision to review: what the player saw and what it did."""

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

    @property
    def fantasyland(self) -> bool:
        """A fantasyland set: every card at once."""
        return self.index < 0

    @property
    def discards(self) -> int:
        """Cards this street throws away."""
        return int((self.chosen == 3).sum())


@dataclass(frozen=True)
class Verdict:
    """The review of one :class:`Position`."""

    position: Position
    best: npt.NDArray[np.int8]  # (k,) rows of the best candidate
    ev_chosen: float
    ev_best: float
    se_chosen: float  # standard error of ev_chosen (0 when valued exactly)
    candidates: int
    rollouts: int  # 0: valued exactly
    mistake: str | None  # one of MISTAKES when the loss is above zero

    @property
    def ev_loss(self) -> float:
        """Best minus chosen, in points."""
        return max(0.0, self.ev_best - self.ev_chosen)


def decision_rng(seed: int, hand_id: str, seat: int, street: int) -> np.random.Generator:
    """The generator of one decision's draws: the same for the same seed and decision."""
    return np.random.default_rng([seed, zlib.crc32(hand_id.encode()), seat, street])


def review(positions: Sequence[Position], *, rollouts: int = DEFAULT_ROLLOUTS,
           seed: int = DEFAULT_SEED, fantasyland_value: float = FANTASYLAND_VALUE,
           screen: int | None = DEFAULT_SCREEN,
           progress: Callable[[int], None] | None = None) -> list[Verdict]:
    """Review every position; verdicts in the positions' order.

    Positions are grouped by variant, street and ruleset, each group valued in array
    steps; ``progress(n)`` is told of each group's ``n`` positions once they are done.
    """
    if rollouts < 1:
        raise ValueError(f"rollouts must be at least 1, not {rollouts}")
    # A group shares its candidates: the same street of a variant, the same cards dealt
    # and discarded (a seat that timed out may have been placed otherwise), one ruleset.
    groups: dict[tuple[Variant, int, int, int, Ruleset], list[int]] = {}
    for i, p in enumerate(positions):
        groups.setdefault((p.variant, p.index, p.dealt.size, p.discards, p.ruleset),
                          []).append(i)
    out: list[Verdict | None] = [None] * len(positions)
    for (variant, index, _, _, ruleset), members in groups.items():
        arrays = ruleset_arrays(ruleset, variant)
        chosen = [positions[i] for i in members]
        if index < 0:
            verdicts = _fantasyland(chosen, arrays, fantasyland_value)
        else:
            verdicts = _streets(chosen, arrays, rollouts, seed, fantasyland_value, screen)
        for i, verdict in zip(members, verdicts, strict=True):
            out[i] = verdict
        if progress is not None:
            progress(len(members))
    return [v for v in out if v is not None]


@dataclass(frozen=True)
class _Opponents:
    """Opponents' final boards of each position, padded to the most opponents:
    strengths and royalties ``(3, D, O)``, fouls and presence ``(D, O)``."""

    strength: npt.NDArray[np.intp]
    foul: npt.NDArray[np.bool_]
    royalty: npt.NDArray[np.int32]
    present: npt.NDArray[np.bool_]

    @classmethod
    def of(cls, positions: Sequence[Position], arrays: RulesetArrays) -> _Opponents:
        most = max(p.opponents.shape[0] for p in positions)
        boards = np.zeros((len(positions), most, 13), dtype=np.uint8)
        present = np.zeros((len(positions), most), dtype=bool)
        for d, p in enumerate(positions):
            boards[d, :p.opponents.shape[0]] = p.opponents
            present[d, :p.opponents.shape[0]] = True
        strength = np.moveaxis(board_strengths(boards), -1, 0).astype(np.intp)
        foul = fouled(strength)
        royalty = royalties([arrays.royalty], strength, ~foul, np.int32, dense=True)[0]
        return cls(strength, foul, royalty, present)


def _score(arrays: RulesetArrays, strength: npt.NDArray[np.intp], foul: npt.NDArray[np.bool_],
           decision: npt.NDArray[np.intp], opp: _Opponents, fantasyland_value: float,
           in_fantasyland: bool) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_],
                                          npt.NDArray[np.int32]]:
    """Points of finished boards (strengths ``(3, ...)``) against their decision's
    opponents, the fantasyland value included; and whether each reaches fantasyland,
    and its royalties. ``decision`` broadcasts against the boards: one per board, or
    ``(C, 1)`` for boards ``(3, C, n)``, n boards of each of C candidates."""
    roy = royalties([arrays.royalty], strength, ~foul, np.int32, dense=True)[0]
    total = np.zeros(strength.shape[1:], dtype=np.float64)
    for o in range(opp.present.shape[1]):
        points = pair_points(arrays, strength, opp.strength[:, decision, o], foul,
                             opp.foul[decision, o], roy, opp.royalty[:, decision, o])
        total += np.where(opp.present[decision, o], points, 0)
    reach = qualifies(arrays, np.moveaxis(strength, 0, -1).astype(np.int32), foul,
                      in_fantasyland)
    opponents = opp.present[decision].sum(axis=-1)
    return total + fantasyland_value * opponents * reach, reach, roy.sum(axis=0)


@cache
def _pattern_index(k: int, discards: int) -> dict[int, int]:
    """Pattern number of each placement, by its rows read as a base-4 number."""
    codes = patterns(k, discards).astype(np.int64) @ (4 ** np.arange(k))
    return {int(c): i for i, c in enumerate(codes)}


def _pattern_of(rows: npt.NDArray[np.int8]) -> int:
    return _pattern_index(rows.size, int((rows == 3).sum()))[
        int(rows.astype(np.int64) @ (4 ** np.arange(rows.size)))]


@dataclass(frozen=True)
class _Street:
    """What the candidates of one group of positions are valued against."""

    later: list[tuple[int, int]]  # the streets still to come: (dealt, discards)
    keys: npt.NDArray[np.int64]  # (D, 3) boards before the street
    filled: npt.NDArray[np.int8]  # (D, 3)
    added: npt.NDArray[np.int64]  # (D, P, 3) what each pattern adds to each row
    counts: npt.NDArray[np.int8]  # (P, 3)
    draws: npt.NDArray[np.uint8]  # (D, n, future) the later cards of each rollout
    opp: _Opponents
    arrays: RulesetArrays
    fantasyland_value: float

    def value(self, dec: npt.NDArray[np.intp], pat: npt.NDArray[np.intp],
              n: int) -> npt.NDArray[np.float64]:
        """Candidates (decision, pattern) over the first ``n`` rollouts: ``(5, C)`` mean
        points, their variance, foul rate, fantasyland rate and mean royalties."""
        out = np.empty((5, dec.size))
        future = self.draws.shape[2]
        step = max(1, _BOARDS_AT_ONCE // n)
        for start in range(0, dec.size, step):
            part = slice(start, start + step)
            d, pp = dec[part], pat[part]
            c = d.size
            board_keys = np.repeat((self.keys[d] + self.added[d, pp]).T, n, axis=1)
            board_filled = np.repeat((self.filled[d] + self.counts[pp]).T.astype(np.int8), n,
                                     axis=1)
            if self.later:
                final = play_out(board_keys, board_filled,
                                 self.draws[d, :n].reshape(c * n, future), self.later,
                                 self.arrays, self.fantasyland_value)
            else:
                final = board_keys
            strength = final_strengths(final).reshape(3, c, n)
            foul = fouled(strength)
            points, reach, roy = _score(self.arrays, strength, foul, d[:, None], self.opp,
                                        self.fantasyland_value, False)
            out[0, part] = points.mean(axis=1)
            out[1, part] = points.var(axis=1, ddof=1) if n > 1 else 0.0
            out[2, part] = foul.mean(axis=1)
            out[3, part] = reach.mean(axis=1)
            out[4, part] = roy.mean(axis=1)
        return out


def _boards(positions: Sequence[Position]) -> tuple[npt.NDArray[np.int64],
                                                     npt.NDArray[np.int8]]:
    """Row keys and card counts ``(D, 3)`` of the boards before the street."""
    keys = np.zeros((len(positions), 3), dtype=np.int64)
    filled = np.zeros((len(positions), 3), dtype=np.int8)
    for d, p in enumerate(positions):
        np.add.at(keys[d], p.board_rows, CARD_KEYS[p.board])
        filled[d] = np.bincount(p.board_rows, minlength=3)[:3]
    return keys, filled


def _draws(positions: Sequence[Position], n: int, future: int,
           seed: int) -> npt.NDArray[np.uint8]:
    """``(D, n, future)``: each decision's later cards in ``n`` rollouts, drawn from the
    cards neither seen by the player nor on an opponent's final board."""
    draws = np.zeros((len(positions), n, future), dtype=np.uint8)
    if future:
        for d, p in enumerate(positions):
            hidden = p.seen.copy()
            hidden[p.opponents.ravel()] = True
            deck = np.flatnonzero(~hidden).astype(np.uint8)
            rng = decision_rng(seed, p.hand_id, p.seat, p.street)
            order = np.argsort(rng.random((n, deck.size)), axis=1)[:, :future]
            draws[d] = deck[order]
    return draws


def _streets(positions: Sequence[Position], arrays: RulesetArrays, rollouts: int, seed: int,
             fantasyland_value: float, screen: int | None) -> list[Verdict]:
    """Positions of one variant street: every fitting candidate, rolled out."""
    first = positions[0]
    k, discards = first.dealt.size, first.discards
    later = [(s.dealt, s.discard) for s in first.variant.streets[first.index + 1:]]
    future = sum(d for d, _ in later)
    n = rollouts if future else 1
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
    draws = _draws(positions, n, future, seed)
    added = np.einsum("dk,kpr->dpr", CARD_KEYS[np.stack([p.dealt for p in positions])]
                      .astype(np.float64), onehot).astype(np.int64)
    street = _Street(later, keys, filled, added, counts, draws, _Opponents.of(positions, arrays),
                     arrays, fantasyland_value)
    dec, pat = np.nonzero(fits)  # every fitting candidate, decision by decision
    total = np.bincount(dec, minlength=d_count)
    # Candidates that leave the same board, as far as the rest of the hand can tell, are
    # valued once: only the first of each class is rolled out and stands for the others.
    rep = _representatives(dec, pat, keys, added, fits.shape)
    lead = rep[dec, pat] == pat
    dec, pat = dec[lead], pat[lead]
    mine_rep = rep[np.arange(d_count), chosen]
    if screen and n > SCREEN_ROLLOUTS and total.max() > screen:
        # Screening: every candidate on the first rollouts; the best few, and the play
        # made, go on to the full count.
        quick = street.value(dec, pat, SCREEN_ROLLOUTS)[0]
        bounds = np.searchsorted(dec, np.arange(d_count + 1))
        keep = np.zeros(dec.size, dtype=bool)
        for d in range(d_count):
            lo, hi = bounds[d], bounds[d + 1]
            keep[lo + np.argsort(-quick[lo:hi], kind="stable")[:screen]] = True
            keep[lo:hi] |= pat[lo:hi] == mine_rep[d]
        dec, pat = dec[keep], pat[keep]
    stats = street.value(dec, pat, n)
    mean = stats[0]
    verdicts = []
    bounds = np.searchsorted(dec, np.arange(d_count + 1))
    for d, p in enumerate(positions):
        lo, hi = bounds[d], bounds[d + 1]
        # The play made is valued as the first candidate of its class.
        mine = lo + int(np.flatnonzero(pat[lo:hi] == mine_rep[d])[0])
        top = lo + int(np.argmax(mean[lo:hi]))
        if mean[top] <= mean[mine]:
            top = mine  # a tie goes to the play made
        best = p.chosen if top == mine else pats[pat[top]]
        kind = None
        if mean[top] > mean[mine]:
            kind = _mistake(stats[2, [mine, top]], stats[3, [mine, top]], stats[4, [mine, top]],
                            p.chosen, best, p.dealt)
        verdicts.append(Verdict(
            position=p, best=best.astype(np.int8), ev_chosen=float(mean[mine]),
            ev_best=float(mean[top]), se_chosen=float(np.sqrt(stats[1, mine] / n)),
            candidates=int(total[d]), rollouts=n if future else 0, mistake=kind))
    return verdicts


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


def _fantasyland(positions: Sequence[Position], arrays: RulesetArrays,
                 fantasyland_value: float) -> list[Verdict]:
    """Fantasyland sets: every way to set 13 of the cards, priced against the opponents'
    final boards (:func:`solve_set`); the play made against the best of them."""
    out = []
    for p in positions:
        opp = _Opponents.of([p], arrays)
        best, ev_best, count = solve_set(p.dealt, arrays, opp, fantasyland_value)
        points, foul, reach, roy = _set_values(p.dealt[None], p.chosen[None], arrays, opp,
                                               fantasyland_value)
        ev_chosen = float(points[0])
        kind = None
        if ev_best > ev_chosen:
            other = _set_values(p.dealt[None], best[None], arrays, opp, fantasyland_value)
            pair = [np.array([mine[0], theirs[0]], dtype=float)
                    for mine, theirs in zip((foul, reach, roy), other[1:], strict=True)]
            kind = _mistake(pair[0], pair[1], pair[2], p.chosen, best, p.dealt)
        else:
            best, ev_best = p.chosen, ev_chosen  # a tie goes to the play made
        out.append(Verdict(position=p, best=best.astype(np.int8), ev_chosen=ev_chosen,
                           ev_best=ev_best, se_chosen=0.0, candidates=count, rollouts=0,
                           mistake=kind))
    return out


def _set_values(cards: npt.NDArray[np.uint8], actions: npt.NDArray[np.int8],
                arrays: RulesetArrays, opp: _Opponents, fantasyland_value: float
                ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_],
                           npt.NDArray[np.bool_], npt.NDArray[np.int32]]:
    """Points of sets ``(m, k)`` of one seat in fantasyland against its opponents (the
    stay included); and their fouls, stays and royalties."""
    boards = _board_of(cards, actions)
    strength = np.moveaxis(board_strengths(boards), -1, 0).astype(np.intp)
    foul = fouled(strength)
    points, reach, roy = _score(arrays, strength, foul, np.zeros(len(boards), dtype=np.intp),
                                opp, fantasyland_value, True)
    return points, foul, reach, roy


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
    foul_points = float(_score(arrays, any_foul, np.ones(1, dtype=bool), np.zeros(1, np.intp),
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
        return _score(self.arrays, strength, np.zeros(pairs.size, dtype=bool),
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

