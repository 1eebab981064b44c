"""Bot players: each a policy with its own seeded random generator.

Every bot decides for a whole batch of tables at once (a :class:`Turn`): it returns, for
each table, the row of each dealt card (0 top, 1 middle, 2 bottom, 3 discard). Placing
13 to 17 cards at once (fantasyland, 13-card Chinese poker) has its own methods.

- ``random``: a uniformly random legal placement.
- ``safe``, ``balanced``, ``aggressive``: the best placement by the board value of
  :mod:`ofcstats.simulate.heuristic`, with the style's weights.
- ``montecarlo``: see :mod:`ofcstats.simulate.montecarlo`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, cast, overload

import numpy as np
import numpy.typing as npt

from ofcstats.simulate import chinese, heuristic
from ofcstats.simulate.fantasyland import best_sets
from ofcstats.simulate.scoring import RulesetArrays
from ofcstats.simulate.state import CARD_KEYS, TURN_ARRAYS, Turn
from ofcstats.simulate.tables import pattern_counts, pattern_subsets, patterns, subset_matrix

BOT_STYLES = ("random", "safe", "balanced", "aggressive", "montecarlo")
DEFAULT_STAY_BONUS = 10
"""Points a fantasyland set that stays in fantasyland is taken to be worth on top of its
royalties, when the bot sets its 13 to 17 cards."""
TIE_NOISE = 1e-3
"""Size of the random noise added to candidate values so that equal ones are picked
at random (from the bot's own generator), far below any difference in value."""


def candidates(turn: Turn) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.bool_]]:
    """Every pattern for the turn's street and which fit the free slots: ``(P, k)``,
    ``(m, P)``."""
    k = turn.cards.shape[1]
    # Which patterns fit depends only on the cards already in each row: looked up.
    filled = turn.filled.astype(np.intp)
    code = (filled[:, 0] * 6 + filled[:, 1]) * 6 + filled[:, 2]
    return patterns(k, turn.discards), _fitting(k, turn.discards)[code]


@cache
def _fitting(cards: int, discards: int) -> npt.NDArray[np.bool_]:
    """``(4 * 6 * 6, P)``: the patterns that fit, by the cards in each row (top 0 to 3,
    middle and bottom 0 to 5, as ``(top * 6 + middle) * 6 + bottom``)."""
    counts = pattern_counts(cards, discards)
    filled = np.stack(np.meshgrid(np.arange(4), np.arange(6), np.arange(6), indexing="ij"),
                      axis=-1).reshape(-1, 3)
    room = np.array([3, 5, 5]) - filled
    return np.asarray((counts[None, :, :] <= room[:, None, :]).all(axis=2), dtype=bool)


def pattern_values(turn: Turn, style: heuristic.Style | heuristic.Weights) -> npt.NDArray[
        np.float32]:
    """The style's value of the board after each pattern, ``(m, P)`` (or each table's
    style's, given :class:`~heuristic.Weights`); each distinct version of a row (a subset
    of the dealt cards added to it) is looked at once."""
    weights = style if isinstance(style, heuristic.Weights) \
        else heuristic.Weights.of([(style, turn.size)])
    k = turn.cards.shape[1]
    sub = pattern_subsets(k, turn.discards)
    out = np.empty((turn.size, sub.shape[0]), dtype=np.float32)
    ctx = context(turn)
    sizes = subset_matrix(k).sum(axis=0).astype(np.int8)
    sums = (CARD_KEYS[turn.cards].astype(np.float64) @ subset_matrix(k)).astype(np.int64)
    base = np.ascontiguousarray(turn.keys.T)[:, :, None]
    fits = (np.ascontiguousarray(turn.filled.T)[:, :, None] + sizes) <= _ROW_SIZES
    keys = np.where(fits, base + sums[None], base)  # (3, m, 2**k): row, table, subset added
    open_after = (13 - turn.filled.sum(axis=1) - (k - turn.discards))[:, None]
    # Middle and bottom both empty (a first street): the same versions, looked at once.
    same = not turn.filled[:, 1:].any()
    rows = heuristic.row_features(keys[:2] if same else keys, open_after, ctx, turn.arrays,
                                  weights)
    complete = [bool((rows.exact[r] >= 0).any()) for r in range(3)]
    # A slice of tables at a time keeps the (tables, patterns) arrays in cache.
    step = max(_SLICE_TABLES, _CACHE_ELEMENTS // (3 * sub.shape[0]))
    for start in range(0, turn.size, step):
        part = slice(start, start + step)
        per_pattern = heuristic.RowFeatures(**{
            name: _Gathered(getattr(rows, name), part, sub) for name in heuristic.FIELDS})
        out[part] = heuristic.combine(per_pattern, weights[part], ctx.forced, complete)
    return out


_CACHE_ELEMENTS = 60_000  # (rows x tables x patterns) per slice
_SLICE_TABLES = 16  # tables per slice at least, however many patterns
_ROW_SIZES = np.array([3, 5, 5])[:, None, None]


class _Gathered(Sequence[npt.NDArray[np.float32]]):
    """One field of the rows by pattern, ``(tables, patterns)`` per row: a row is
    gathered when first read, so what the board value does not look at costs nothing."""

    def __init__(self, rows: heuristic.Rows, part: slice, sub: npt.NDArray[np.intp]):
        self.rows, self.part, self.sub = rows, part, sub
        self.got: list[npt.NDArray[np.float32] | None] = [None, None, None]

    def __len__(self) -> int:
        return 3

    @overload
    def __getitem__(self, row: int) -> npt.NDArray[np.float32]: ...

    @overload
    def __getitem__(self, row: slice) -> Sequence[npt.NDArray[np.float32]]: ...

    def __getitem__(self, row: int | slice) -> Any:
        if isinstance(row, slice):
            return [self[r] for r in range(3)[row]]
        got = self.got[row]
        if got is None:
            # Indexing, not np.take(axis=1): twice as fast on these short rows.
            got = self.got[row] = self.rows[row][self.part][:, self.sub[:, row]]
        return got


def context(turn: Turn) -> heuristic.Context:
    """Unseen cards and live suits from the seat's point of view."""
    by_rank = (~turn.seen).view(np.uint8).reshape(turn.size, 13, 4)
    live = by_rank[:, 0].astype(np.int64)
    for rank in range(1, 13):  # (a sum along so short a middle axis is slower)
        live += by_rank[:, rank]
    later = turn.variant.streets[turn.street + 1:]
    return heuristic.Context(future=turn.future[:, None], unseen=live.sum(axis=1)[:, None],
                             live_suits=live[:, None, :],
                             forced=all(street.discard == 0 for street in later))


class Bot:
    """Base class: a named policy with its own random generator."""

    style = "base"
    needs_opponents = False  # whether place() reads the opponents' boards

    def __init__(self, rng: np.random.Generator, stay_bonus: float = DEFAULT_STAY_BONUS):
        self.rng = rng
        self.stay_bonus = stay_bonus

    def place(self, turn: Turn) -> npt.NDArray[np.int8]:
        """Rows for the dealt cards, ``(m, k)``."""
        raise NotImplementedError

    def set_fantasyland(self, cards: npt.NDArray[np.uint8], arrays: RulesetArrays,
                        may_stay: npt.NDArray[np.bool_]) -> npt.NDArray[np.int8]:
        """The best legal set of 13 to 17 cards by royalties plus the chance to stay."""
        return best_sets(cards, arrays, np.where(may_stay, self.stay_bonus, 0))

    def set_thirteen(self, cards: npt.NDArray[np.uint8], arrays: RulesetArrays,
                     seen: npt.NDArray[np.bool_], opponents: int) -> npt.NDArray[np.int8]:
        """Rows for 13 cards of Chinese poker, ``(m, 13)``."""
        return chinese.best_by_weights(cards, arrays, chinese.WEIGHTS["balanced"])

    def _pick(self, score: npt.NDArray[np.float32], fits: npt.NDArray[np.bool_]) -> npt.NDArray[
            np.intp]:
        # A whisker of noise breaks ties at random, from the bot's own generator.
        noise = self.rng.random(score.shape, dtype=np.float32) * TIE_NOISE
        return np.argmax(np.where(fits, score + noise, -np.inf), axis=1)


class RandomBot(Bot):
    """Uniformly random legal placements."""

    style = "random"

    def place(self, turn: Turn) -> npt.NDArray[np.int8]:
        """A pattern drawn uniformly among those that fit."""
        pats, fits = candidates(turn)
        choice = self._pick(np.zeros(fits.shape, dtype=np.float32), fits)
        return pats[choice]

    def set_thirteen(self, cards: npt.NDArray[np.uint8], arrays: RulesetArrays,
                     seen: npt.NDArray[np.bool_], opponents: int) -> npt.NDArray[np.int8]:
        """Cards dealt out to the rows in a random order (fouls included)."""
        order = np.argsort(self.rng.random(cards.shape), axis=1)
        rows = np.repeat(np.array([0, 1, 2], dtype=np.int8), [3, 5, 5])
        out = np.empty(cards.shape, dtype=np.int8)
        np.put_along_axis(out, order, rows[None, :].repeat(cards.shape[0], axis=0), axis=1)
        return out


class HeuristicBot(Bot):
    """The best placement by a weighted board value (see :mod:`heuristic`)."""

    def __init__(self, rng: np.random.Generator, style: heuristic.Style,
                 stay_bonus: float = DEFAULT_STAY_BONUS):
        super().__init__(rng, stay_bonus)
        self.weights = style
        self.style = style.name

    def place(self, turn: Turn) -> npt.NDArray[np.int8]:
        """The pattern of highest value among those that fit."""
        pats, fits = candidates(turn)
        return pats[self._pick(pattern_values(turn, self.weights), fits)]

    def set_thirteen(self, cards: npt.NDArray[np.uint8], arrays: RulesetArrays,
                     seen: npt.NDArray[np.bool_], opponents: int) -> npt.NDArray[np.int8]:
        """The legal set that maximises the style's weighted row strengths."""
        return chinese.best_by_weights(cards, arrays, chinese.WEIGHTS[self.style])


def place_all(bots: Sequence[Bot], turns: Sequence[Turn]) -> list[npt.NDArray[np.int8]]:
    """Each bot's rows for its own turn, the same as ``bot.place(turn)`` one by one; the
    heuristic bots' boards are valued in one pass over all their tables (the turns are
    one street at disjoint tables), which costs far fewer array operations."""
    out: list[npt.NDArray[np.int8] | None] = [None] * len(bots)
    together = [i for i, bot in enumerate(bots)
                if isinstance(bot, HeuristicBot) and turns[i].size]
    if len(together) > 1:
        joined = _joined([turns[i] for i in together])
        weights = heuristic.Weights.of([(cast(HeuristicBot, bots[i]).weights, turns[i].size)
                                        for i in together])
        values = pattern_values(joined, weights)
        pats, fits = candidates(joined)
        start = 0
        for i in together:
            part = slice(start, start + turns[i].size)
            out[i] = pats[bots[i]._pick(values[part], fits[part])]
            start = part.stop
    for i, bot in enumerate(bots):
        if out[i] is None:
            out[i] = bot.place(turns[i])
    return [rows for rows in out if rows is not None]


def _joined(turns: Sequence[Turn]) -> Turn:
    """One turn of the tables of several (the same street, seat apart): their common
    turn's rows when they are its consecutive parts, else their arrays end to end."""
    first = turns[0]
    common = _common_part(turns)
    if common is not None:
        parent, start, stop = common
        return parent.part(start, stop, first.seat)
    arrays: dict[str, Any] = {name: np.concatenate([getattr(turn, name) for turn in turns])
                              for name in TURN_ARRAYS}
    return Turn(variant=first.variant, arrays=first.arrays, seat=first.seat,
                street=first.street, discards=first.discards, **arrays)


def _common_part(turns: Sequence[Turn]) -> tuple[Turn, int, int] | None:
    """The turn the given turns are consecutive parts of, and the rows they span."""
    if turns[0].within is None:
        return None
    parent, start, stop = turns[0].within
    for turn in turns[1:]:
        if turn.within is None or turn.within[0] is not parent or turn.within[1] != stop:
            return None
        stop = turn.within[2]
    return parent, start, stop
