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

A fantasyland set (13 to 17 cards set at once) is solved by the exact search of
:func:`ofcstats.simulate.fantasyland.best_sets` (royalties, fouls and the stay), and
both the solver's set and the chosen one are priced against the opponents' boards.

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

from ofcstats.rules.board import fouled, pair_points, royalties
from ofcstats.rules.model import Ruleset
from ofcstats.simulate.fantasyland import best_sets
from ofcstats.simulate.montecarlo import _final_strengths, play_out
from ofcstats.simulate.scoring import RulesetArrays, board_strengths, qualifies, ruleset_arrays
from ofcstats.simulate.state import CARD_KEYS
from ofcstats.simulate.tables import pattern_counts, pattern_onehot, patterns
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
DEFAULT_SCREEN = 6
"""Candidates kept after screening, besides the play made; None values every candidate
on every rollout."""


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
    """Points of finished boards (strengths ``(3, B)``) against their decision's
    opponents, the fantasyland value included; and whether each reaches fantasyland,
    and its royalties."""
    roy = royalties([arrays.royalty], strength, ~foul, np.int32, dense=True)[0]
    total = np.zeros(strength.shape[1], dtype=np.float64)
    for o in range(opp.present.shape[1]):
        points = pair_points(arrays, strength, opp.strength[:, decision, o], foul,
                             opp.foul[decision, o], roy, opp.royalty[:, decision, o])
        total += np.where(opp.present[decision, o], points, 0)
    reach = qualifies(arrays, strength.T.astype(np.int32), foul, in_fantasyland)
    opponents = opp.present[decision].sum(axis=1)
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
            strength = _final_strengths(final)
            foul = fouled(strength)
            points, reach, roy = _score(self.arrays, strength, foul, np.repeat(d, n),
                                        self.opp, self.fantasyland_value, False)
            points = points.reshape(c, n)
            out[0, part] = points.mean(axis=1)
            out[1, part] = points.var(axis=1, ddof=1) if n > 1 else 0.0
            out[2, part] = foul.reshape(c, n).mean(axis=1)
            out[3, part] = reach.reshape(c, n).mean(axis=1)
            out[4, part] = roy.reshape(c, n).mean(axis=1)
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
    if screen is not None and n > SCREEN_ROLLOUTS and total.max() > screen:
        # Screening: every candidate on the first rollouts; the best few, and the play
        # made, go on to the full count.
        quick = street.value(dec, pat, SCREEN_ROLLOUTS)[0]
        bounds = np.searchsorted(dec, np.arange(d_count + 1))
        keep = np.zeros(dec.size, dtype=bool)
        for d in range(d_count):
            lo, hi = bounds[d], bounds[d + 1]
            keep[lo + np.argsort(-quick[lo:hi], kind="stable")[:screen]] = True
            keep[lo:hi] |= pat[lo:hi] == chosen[d]
        dec, pat = dec[keep], pat[keep]
    stats = street.value(dec, pat, n)
    mean = stats[0]
    verdicts = []
    bounds = np.searchsorted(dec, np.arange(d_count + 1))
    for d, p in enumerate(positions):
        lo, hi = bounds[d], bounds[d + 1]
        mine = lo + int(np.flatnonzero(pat[lo:hi] == chosen[d])[0])
        top = lo + int(np.argmax(mean[lo:hi]))
        if mean[top] <= mean[mine]:
            top = mine  # a tie goes to the play made
        best = pats[pat[top]]
        kind = None
        if mean[top] > mean[mine]:
            kind = _mistake(stats[2, [mine, top]], stats[3, [mine, top]], stats[4, [mine, top]],
                            p.chosen, best, p.dealt)
        verdicts.append(Verdict(
            position=p, best=best.astype(np.int8), ev_chosen=float(mean[mine]),
            ev_best=float(mean[top]), se_chosen=float(np.sqrt(stats[1, mine] / n)),
            candidates=int(total[d]), rollouts=n if future else 0, mistake=kind))
    return verdicts


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
    """Fantasyland sets: the exact best set by royalties and the stay, and the chosen
    one, priced against the opponents' final boards (the better of the two is best)."""
    by_size: dict[int, list[int]] = {}
    for i, p in enumerate(positions):
        by_size.setdefault(p.dealt.size, []).append(i)
    done: dict[int, Verdict] = {}
    for members in by_size.values():
        group = [positions[i] for i in members]
        cards = np.stack([p.dealt for p in group])
        # Royalties and the stay are both worth their value from each opponent.
        solved = best_sets(cards, arrays, fantasyland_value)
        chosen = np.stack([p.chosen for p in group])
        opp = _Opponents.of(group, arrays)
        values = []
        for actions in (chosen, solved):
            boards = _board_of(cards, actions)
            strength = np.moveaxis(board_strengths(boards), -1, 0).astype(np.intp)
            foul = fouled(strength)
            points, reach, roy = _score(arrays, strength, foul, np.arange(len(group)), opp,
                                        fantasyland_value, True)
            values.append((points, foul, reach, roy))
        for j, p in enumerate(group):
            mine, theirs = values[0][0][j], values[1][0][j]
            better = theirs > mine
            best = solved[j] if better else chosen[j]
            kind = None
            if better:
                pair = [np.array([values[0][x][j], values[1][x][j]], dtype=float)
                        for x in (1, 2, 3)]
                kind = _mistake(pair[0], pair[1], pair[2], chosen[j], solved[j], p.dealt)
            done[members[j]] = Verdict(
                position=p, best=best.astype(np.int8), ev_chosen=float(mine),
                ev_best=float(max(mine, theirs)), se_chosen=0.0, candidates=2, rollouts=0,
                mistake=kind)
    return [done[i] for i in range(len(positions))]


def _board_of(cards: npt.NDArray[np.uint8], actions: npt.NDArray[np.int8]
              ) -> npt.NDArray[np.uint8]:
    """``(m, 13)`` boards (top, middle, bottom) from cards and their rows."""
    out = np.empty((cards.shape[0], 13), dtype=np.uint8)
    for i in range(cards.shape[0]):
        out[i] = np.concatenate([cards[i][actions[i] == r] for r in range(3)])
    return out

