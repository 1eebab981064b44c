"""The rules a finished board is judged by, on arrays: each written once, here.

* :func:`fouled` and :func:`missets`: rows out of order (docs/rules.md §2);
* :func:`pair_points`: what one board wins from another (§2, §3, the royalties of §4
  netted), the table bonus and the 2♠ bonus apart;
* :func:`royalties`: each row's royalty, none for a board that is not paid (§4);
* :func:`pool_hand`: the royalty hand a board brings to the royalty pool (§4);
* :func:`fantasyland_next` and :func:`entry_cards`: fantasyland earned, and the cards it
  deals (§6).

Everything takes row strengths (:mod:`ofcstats.evaluate`) laid out rows first, shape
``(3, ...)``, so the same function serves one seat, the seats of a million hands
(:mod:`ofcstats.showdown`, :mod:`ofcstats.score`) and the boards a bot plays out
(:mod:`ofcstats.simulate`, :mod:`ofcstats.review`). The readable one-hand version of the
same rules is :mod:`ofcstats.rules.reference`, which the tests hold these to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from ofcstats import evaluate
from ofcstats.evaluate import Category
from ofcstats.rows import BOTTOM, MIDDLE, TOP

Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.integer[Any]]


def _over(strength: npt.NDArray[Any], low_middle: bool) -> tuple[Bools, ...]:
    """The rows set above the row below them: the top over the middle and the middle
    over the bottom; with the middle played low, only the top over the bottom."""
    if low_middle:
        return (strength[TOP] > strength[BOTTOM],)
    return strength[TOP] > strength[MIDDLE], strength[MIDDLE] > strength[BOTTOM]


def fouled(strength: npt.NDArray[Any], low_middle: bool = False) -> Bools:
    """Boards whose rows are out of order: the top stronger than the middle or the middle
    stronger than the bottom (§2). Equal rows are legal; the strength scale already ranks
    a top row's missing kickers below any card. A middle played as a deuce-to-seven low
    (``low_middle``) is out of the order: the top must not be stronger than the bottom."""
    over = _over(strength, low_middle)
    return over[0] | over[1] if len(over) == 2 else over[0]


def missets(strength: npt.NDArray[Any], low_middle: bool = False
            ) -> tuple[Bools, npt.NDArray[np.int8]]:
    """:func:`fouled`, and how many rows are set above the row below them (0 to 2: what a
    per-row misset penalty counts)."""
    over = _over(strength, low_middle)
    if len(over) == 1:
        return over[0], over[0].view(np.int8).copy()
    return over[0] | over[1], over[0].view(np.int8) + over[1].view(np.int8)


class Coefficients(Protocol):
    """What a ruleset pays between two boards (§3): per row won, for the majority of
    rows, for a scoop, and what a foul costs."""

    @property
    def row(self) -> int: ...
    @property
    def majority(self) -> int: ...
    @property
    def scoop(self) -> int: ...
    @property
    def foul_points(self) -> int: ...


class Unit(NamedTuple):
    """Coefficients for one term alone: the term's count is then the points."""

    row: int = 0
    majority: int = 0
    scoop: int = 0
    foul_points: int = 0


TERMS = (Unit(row=1), Unit(majority=1), Unit(scoop=1), Unit(foul_points=1))
"""The terms points are linear in, one at a time: rows won minus lost, majority, scoop,
fouls."""


def pair_points(pays: Coefficients, mine: npt.NDArray[Any], theirs: npt.NDArray[Any],
                my_foul: Bools, their_foul: Bools, my_roy: Ints | None = None,
                their_roy: Ints | None = None) -> npt.NDArray[np.int32]:
    """Points the first board wins from the second (§2, §3): two live boards compare row
    by row and pay per row, for the majority and for a scoop; a fouled board pays the foul
    to a live one; two fouled boards exchange nothing. Royalties, when given (rows first,
    0 for a fouled board), are netted: each board collects its own from the other (§4).
    The table bonus and the 2♠ bonus are not pairwise and are left out.

    Strengths are rows first, ``(3, ...)``; all arguments broadcast together.
    """
    wins = (mine[TOP] > theirs[TOP]).astype(np.int32) + (mine[MIDDLE] > theirs[MIDDLE]) \
        + (mine[BOTTOM] > theirs[BOTTOM])
    losses = (mine[TOP] < theirs[TOP]).astype(np.int32) + (mine[MIDDLE] < theirs[MIDDLE]) \
        + (mine[BOTTOM] < theirs[BOTTOM])
    live = pays.row * (wins - losses)
    if pays.majority:
        live = live + pays.majority * ((wins >= 2).astype(np.int32) - (losses >= 2))
    if pays.scoop:
        live = live + pays.scoop * ((wins == 3).astype(np.int32) - (losses == 3))
    foul = pays.foul_points * (their_foul.astype(np.int32) - my_foul)
    points = np.where(~my_foul & ~their_foul, live, foul)
    if my_roy is not None and their_roy is not None:
        points = points + ((my_roy[TOP] - their_roy[TOP]) + (my_roy[MIDDLE] - their_roy[MIDDLE])
                           + (my_roy[BOTTOM] - their_roy[BOTTOM]))
    return points.astype(np.int32)


RoyaltyValues = Sequence[npt.NDArray[np.int16]]
"""A royalty table as :meth:`ofcstats.rules.model.RoyaltyTable.values` gives it: per row,
the royalty by strength."""


def royalties(tables: Sequence[RoyaltyValues], strength: npt.NDArray[Any],
              paid: Bools | np.bool_, dtype: type[np.integer[Any]] = np.int16, *,
              dense: bool = False) -> list[npt.NDArray[Any]]:
    """Each row's royalty under each table (§4), rows first like ``strength``; 0 where
    ``paid`` is false (a fouled board, or one out of the showdown).

    Most rows of real hands earn nothing (a top row needs a pair of sixes in most
    tables), so only the rows at least as strong as the weakest one any table pays are
    looked up, once for all the tables. ``dense`` looks every row up instead: quicker
    for the bots' boards, which are built to earn royalties.
    """
    if dense:
        out = []
        for values in tables:
            own = np.stack([values[r][strength[r]] for r in range(3)]).astype(dtype)
            own[:, ~np.asarray(paid)] = 0
            out.append(own)
        return out
    rows = strength.reshape(3, -1)
    flat_paid = np.broadcast_to(paid, strength.shape[1:]).reshape(-1)
    found = []
    for r in range(3):
        weakest = min((int(np.argmax(values[r] != 0)) for values in tables if values[r].any()),
                      default=None)
        at = np.flatnonzero(flat_paid & (rows[r] >= weakest)) if weakest is not None \
            else np.zeros(0, dtype=np.intp)
        found.append((at, rows[r][at].astype(np.intp)))
    out = []
    for values in tables:
        own = np.zeros(rows.shape, dtype=dtype)
        for r, (at, row_strength) in enumerate(found):
            own[r][at] = values[r].take(row_strength)
        out.append(own.reshape(strength.shape))
    return out


POOL_HANDS = (Category.TRIPS, Category.FULL_HOUSE, Category.QUADS)
"""The weakest category that is a royalty hand for the pool, per row (§4): trips in the
top, a full house in the middle, quads in the bottom (a straight flush is above quads)."""


def pool_hand(strength: npt.NDArray[Any], paid: Bools, low_middle: bool = False
              ) -> npt.NDArray[np.int64]:
    """The strength of each board's best royalty hand for the royalty pool (§4), 0 for
    none: its strongest row among trips in the top, a full house or better in the middle,
    quads or better in the bottom. Rows compare on one scale, so higher quads beat lower
    quads and a straight flush beats both. A board that is not ``paid`` (fouled, or out
    of the showdown) has none, nor has a middle played low (``low_middle``)."""
    best = np.zeros(strength.shape[1:], dtype=np.int64)
    for r, weakest in enumerate(POOL_HANDS):
        if low_middle and r == MIDDLE:
            continue
        row = strength[r].astype(np.int64)
        best = np.where(evaluate.category(row) >= weakest, np.maximum(best, row), best)
    return np.where(paid, best, 0)


def fantasyland_next(strength: npt.NDArray[Any], in_fantasyland: Bools | bool, eligible: Bools,
                     entry: int | None, stay: Sequence[int | None]) -> tuple[Bools, Bools]:
    """Seats entering fantasyland, and seats staying in it, for the next hand (§6).

    A seat not in fantasyland enters with a top row at least ``entry`` (the weakest
    strength that qualifies; None: the policy has no fantasyland); a seat in it stays
    with any row at least that row's ``stay`` strength. Only ``eligible`` seats qualify
    (not fouled; the callers also leave out a surrender and 13-card Chinese poker). The
    repeat limit needs the session and is applied there (:mod:`ofcstats.session`).
    """
    shape = np.broadcast_shapes(strength.shape[1:], np.shape(eligible))
    if entry is None:
        return np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)
    in_fl = np.asarray(in_fantasyland, dtype=bool)
    return enters(strength, eligible & ~in_fl, entry), stays(strength, eligible & in_fl, stay)


def enters(strength: npt.NDArray[Any], eligible: Bools | np.bool_, entry: int) -> Bools:
    """Boards whose top row enters fantasyland: at least ``entry``, the weakest top that
    qualifies (§6), where ``eligible``."""
    return eligible & (strength[TOP] >= entry)


def stays(strength: npt.NDArray[Any], eligible: Bools, stay: Sequence[int | None]) -> Bools:
    """Boards that stay in fantasyland: some row at least its ``stay`` strength (None: that
    row cannot), where ``eligible`` (§6)."""
    rows = [strength[r] >= limit for r, limit in enumerate(stay) if limit is not None]
    if not rows:
        return np.zeros(np.broadcast_shapes(strength.shape[1:], np.shape(eligible)), dtype=bool)
    return eligible & np.logical_or.reduce(rows)


def entry_cards(top: npt.NDArray[Any], steps: Sequence[tuple[int, int]], base: int,
                dtype: type[np.integer[Any]] = np.int8) -> npt.NDArray[Any]:
    """Cards dealt on entering fantasyland by the top row's strength (§6): ``steps`` are
    (weakest top strength, cards) pairs, weakest first
    (:meth:`ofcstats.rules.model.FantasylandPolicy.entry_card_steps`); a top below every
    step gets ``base`` (:attr:`ofcstats.variants.Variant.fantasyland_base_cards`)."""
    cards = np.full(np.shape(top), base, dtype=dtype)
    for threshold, dealt in steps:
        cards[top >= threshold] = dealt
    return cards
