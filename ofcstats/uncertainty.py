"""Statistics with their uncertainty: a seeded bootstrap over games, paired across rulesets.

Input is the *per-game frame* (:func:`game_sums`): one row per variant, ruleset, game
and player, with the integer sums every statistic of :mod:`ofcstats.stats` comes from.
Its sums over games are :func:`ofcstats.stats.sums`, so the point estimates here are
exactly the ones ``compare`` and ``players`` print; this module adds their intervals.
The commands never build that frame (:func:`compare_stored`,
:func:`player_intervals_stored`): one pass over the stored rows (:func:`_scan`) streams
each row's values with its game's code out of DuckDB, batch by batch, and the compiled
step (:mod:`ofcstats._bootstrap_kernel`) adds them into per-game sums (over every player
where only their total is resampled, per player where the skill signal or a player's
rate needs it), in 16 or 32 bits (64 should one not fit); the point estimates are
those sums added up. The answer is the same bytes as the frame's
(tests/test_uncertainty.py holds the two to each other), in a fraction of the time
and memory.

The method (docs/statistics.md says the same to users):

- **Resample unit: the game** (:data:`ofcstats.session.GAME_SPLIT`,
  :func:`ofcstats.session.game_ends`). A game never spans two sessions, and it ends only
  when no fantasyland is owed, so a fantasyland entry and its stays lie in one game;
  hands within a game are dependent, games are taken as independent. Every statistic
  is a function of sums over games, so resampling games is resampling those sums.
- **Paired**: per variant, one matrix of multinomial weights (resamples x games: each
  resample draws as many games as the variant has, with replacement) serves every
  ruleset and every player. Every hand is scored under every ruleset, so the rulesets'
  statistics move together from resample to resample, and the interval of a difference
  between two rulesets is far narrower than either's own.
- The resampled sums are matrix products ``W @ sums`` (a block of games at a time,
  the columns equal in every game or 0 in every game multiplied once or not at all);
  the weights and sums are whole numbers, so every product is exact: in float32 where
  every partial sum stays under 2**24, else in float64, in any order and any blocks,
  and the intervals are the same bytes whatever the thread count. The next resamples
  are drawn on a second thread while these are multiplied, always in the same order.
  :data:`RESAMPLES` resamples, seeded with the seed and the variant's name (:func:`_rng`).
- **Intervals**: 95% percentile intervals (the 2.5% and 97.5% quantiles of the
  resampled statistic, linear interpolation), as ``<stat>_ci_low`` / ``<stat>_ci_high``.
  A resample whose statistic is undefined (no eligible hand, fewer than two players
  with :data:`ofcstats.stats.MIN_HANDS_FOR_SKILL` hands) is left out of its quantiles.
- **Skill groups** (:func:`skill_groups`): within a variant, rulesets in rank order;
  the best starts group 1 and leads it; each next ruleset joins the current group when
  the 95% percentile interval of its paired difference to the group's leader
  (leader's signal minus its own, on the same resamples) covers 0, else it starts and
  leads the next group. Rulesets in one group cannot be ranked by these data.
- **Hands to tell the top two apart** (:func:`tell_apart`): with ``d`` the observed
  difference of the top two skill signals and ``s`` the bootstrap SD of the paired
  difference at ``n`` hands, the SD shrinks as ``1 / sqrt(hands)``, so the difference
  is told apart at 95% (``d = 1.96 s'``) after ``n (1.96 s / d)²`` hands.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa
from threadpoolctl import threadpool_limits

from ofcstats import stats

_T = TypeVar("_T")

RESAMPLES = 1000
"""Bootstrap resamples of every interval."""
SEED = 7
"""The bootstrap's default seed."""
LEVEL = 0.95
"""The coverage of every interval."""
CHUNK = 25
"""Resamples drawn and multiplied at a time: memory is ``CHUNK`` x games weights."""

SUM_COLUMNS = tuple(stats.ROW_VALUES)
"""The integer sums per game and player (:func:`game_sums`), named as in
:func:`ofcstats.stats.sums` (:data:`ofcstats.stats.ROW_VALUES`)."""


def _sums_sql(columns: Sequence[str]) -> str:
    return ",\n       ".join(f"coalesce(sum({stats.row_value(c, 'r')}), 0)::BIGINT AS {c}"
                             for c in columns)


_GAME_SUMS = """
SELECT r.variant::VARCHAR AS variant, r.ruleset::VARCHAR AS ruleset,
       r.session_id::VARCHAR AS session_id, g.game, r.player::VARCHAR AS player,
       {what_if}
       {sums}
FROM ({source}) r JOIN {games} g ON g.{hand} = r.{hand}
GROUP BY ALL
"""

_GAMES_TABLE = "uncertainty_games"


def game_sums(rows: stats.Rows, games: pl.DataFrame) -> pl.DataFrame:
    """Per variant, ruleset, game (``session_id``, ``game``) and player: the sums of
    :data:`SUM_COLUMNS` (a criss-cross player's two boards in a hand counted as one hand,
    as :func:`ofcstats.stats.per_player_hand` does), summed by DuckDB.

    ``games`` gives each hand's game: ``hand_key`` (or ``hand_id``, for rows without
    it) and ``game``, as :func:`ofcstats.session.hand_order` numbers them."""
    rows = stats.per_player_hand(rows)
    columns = rows.columns
    hand = "hand_key" if "hand_key" in columns else "hand_id"
    what_if = "bool_or(r.what_if) AS what_if," if "what_if" in columns else ""
    with rows.registered(_GAMES_TABLE, games.select(hand, "game")):
        found = rows.query(_GAME_SUMS, games=_GAMES_TABLE, hand=hand, what_if=what_if,
                           sums=_sums_sql(SUM_COLUMNS))
    return found.sort("variant", "ruleset", "session_id", "game", "player")


def totals(per_game: pl.DataFrame) -> pl.DataFrame:
    """The per-game frame summed over games: :func:`ofcstats.stats.sums`' frame."""
    what_if = [pl.col("what_if").any()] if "what_if" in per_game.columns else []
    return per_game.group_by(*stats.KEYS).agg(
        *what_if, *(pl.col(c).sum() for c in SUM_COLUMNS)).sort(*stats.KEYS)


def _rng(seed: int, variant: str) -> np.random.Generator:
    """The variant's own stream: its intervals do not depend on which other variants
    are in the data."""
    return np.random.default_rng([seed, zlib.crc32(variant.encode())])


_NARROW = (np.int8, np.int16, np.int32, np.int64)


def _narrowest(low: int, high: int) -> type[np.signedinteger]:
    return next(t for t in _NARROW if np.iinfo(t).min <= low and high <= np.iinfo(t).max)


@dataclass(frozen=True)
class _Block:
    """Sums resampled together. A row per game (``games``: its index among the
    variant's games, in order; None: every game); ``values``: the distinct columns of
    sums, in matrices of the narrowest integer type that holds each; ``where``
    (rulesets x the layout's columns): which of those columns (numbered across the
    matrices) holds each ruleset's sums of each column, -1 where they are 0 in every
    game. ``player``: whose sums they are (None: the game's, every player's, counted as
    the first player's: only sums over players are taken of them)."""

    games: npt.NDArray[np.int64] | None
    values: tuple[npt.NDArray[np.signedinteger], ...]
    where: npt.NDArray[np.int64]
    player: int | None

    @classmethod
    def of(cls, games: npt.NDArray[np.int64] | None,
           parts: Sequence[tuple[npt.NDArray[np.integer], Sequence[int]]], width: int,
           player: int | None) -> _Block:
        """The block of ``parts``: per part, sums (rows x rulesets x columns) and the
        place of each of its columns among the layout's ``width``. A column equal to one
        before it (a sum no ruleset changes, such as the hands played) or 0 in every row
        is held, and multiplied, once or not at all."""
        rulesets = parts[0][0].shape[1] if parts else 0
        rows = parts[0][0].shape[0] if parts else 0
        where = np.full((rulesets, width), -1, dtype=np.int64)
        kept: list[npt.NDArray[np.integer]] = []
        seen: dict[tuple[int, int, int], list[int]] = {}
        probe = np.random.default_rng(0).integers(-(2**20), 2**20, size=rows)
        for sums, places in parts:
            for c, place in enumerate(places):
                for r in range(rulesets):
                    column = sums[:, r, c]
                    low, high = (int(column.min()), int(column.max())) if rows else (0, 0)
                    if low == 0 == high:
                        continue
                    key = (low, high, int(probe @ column.astype(np.int64)))
                    twin = next((i for i in seen.get(key, ())
                                 if np.array_equal(kept[i], column)), None)
                    if twin is None:
                        twin = len(kept)
                        kept.append(column)
                        seen.setdefault(key, []).append(twin)
                    where[r, place] = twin
        # One matrix per integer type, in the order the columns were kept.
        kinds = [_narrowest(int(k.min()), int(k.max())) for k in kept]
        order = sorted(range(len(kept)), key=lambda i: _NARROW.index(kinds[i]))
        renumber = np.full(len(kept) + 1, -1, dtype=np.int64)
        renumber[order] = np.arange(len(kept))
        values = tuple(np.stack([kept[i] for i in order if kinds[i] is kind], axis=1)
                       .astype(kind) for kind in _NARROW if kind in kinds)
        return cls(games, values, renumber[where], player)

    @property
    def width(self) -> int:
        """How many distinct columns."""
        return sum(v.shape[1] for v in self.values)

    def total(self) -> npt.NDArray[np.int64]:
        """The sum over every game of each distinct column."""
        return np.concatenate([v.sum(axis=0, dtype=np.int64) for v in self.values]) \
            if self.values else np.zeros(0, dtype=np.int64)

_ROWS = 4_096
"""Games multiplied at a time: the weights and sums of a block stay in the caches, and
sums of counts and points over them mostly stay exact in float32."""


@dataclass(frozen=True)
class _Layout:
    """One variant's per-game sums as blocks: ``columns`` summed per game for every
    player (:class:`_Block`), per ruleset."""

    rulesets: list[str]
    players: list[str]
    games: int
    columns: tuple[str, ...]
    blocks: list[_Block]

    @classmethod
    def of(cls, frame: pl.DataFrame, columns: Sequence[str]) -> _Layout:
        """The layout of a per-game frame (:func:`game_sums`' rows of one variant): every
        column per player."""
        rulesets = sorted(frame.get_column("ruleset").unique().to_list())
        players = sorted(frame.get_column("player").unique().to_list())
        every = frame.select("session_id", "game").unique().sort("session_id", "game")
        keyed = frame.join(every.with_row_index("g"), on=["session_id", "game"]).with_columns(
            pl.col("g").cast(pl.Int64),
            r=pl.col("ruleset").replace_strict(rulesets, list(range(len(rulesets))),
                                               return_dtype=pl.Int64),
            p=pl.col("player").replace_strict(players, list(range(len(players))),
                                              return_dtype=pl.Int64),
        )
        blocks = []
        for index in range(len(players)):
            mine = keyed.filter(pl.col("p") == index)
            games, inverse = np.unique(mine.get_column("g").to_numpy(), return_inverse=True)
            ruleset = mine.get_column("r").to_numpy()
            sums = np.zeros((len(games), len(rulesets), len(columns)), dtype=np.int64)
            for c, column in enumerate(columns):
                sums[inverse, ruleset, c] = mine.get_column(column).to_numpy()
            blocks.append(_Block.of(games.astype(np.int64), [(sums, range(len(columns)))],
                                    len(columns), index))
        return cls(rulesets, players, every.height, tuple(columns), blocks)

    @classmethod
    def scanned(cls, scan: _Scanned, columns: Sequence[str],
                beside_columns: Sequence[str] = ()) -> _Layout:
        """The layout of a variant's pass (:func:`_scan`): its game sums as one block,
        each player's sums per game as a block."""
        place = {name: i for i, name in enumerate(columns)}
        blocks = []
        if scan.game_sums.small_columns or scan.game_sums.large_columns:
            blocks.append(_Block.of(None, scan.game_sums.parts(place), len(columns), None))
        order = np.lexsort((scan.pair_game, scan.pair_player))
        bounds = np.searchsorted(scan.pair_player[order], np.arange(len(scan.players) + 1))
        for index in range(len(scan.players)):
            mine = order[bounds[index]:bounds[index + 1]]
            parts = scan.pair_sums.rows(mine).parts(place)
            if scan.pair_beside is not None:
                parts.append((scan.pair_beside[mine], [place[c] for c in beside_columns]))
            blocks.append(_Block.of(scan.pair_game[mine], parts, len(columns), index))
        return cls(scan.rulesets, scan.players, scan.games, tuple(columns), blocks)

    def totals(self, variant: str, present: list[tuple[str, str]]) -> pl.DataFrame:
        """Per player and ruleset of ``present``: its sums over every game (of the
        blocks per player)."""
        r = {name: i for i, name in enumerate(self.rulesets)}
        found: dict[tuple[int, int], list[int]] = {}
        for block in self.blocks:
            if block.player is None:
                continue
            summed = np.append(block.total(), 0)
            for ruleset in range(len(self.rulesets)):
                found[ruleset, block.player] = summed[block.where[ruleset]].tolist()
        p = {name: i for i, name in enumerate(self.players)}
        rows = [found[r[ruleset], p[player]] for ruleset, player in present]
        return pl.DataFrame({
            "player": [player for _, player in present],
            "variant": [variant] * len(present),
            "ruleset": [ruleset for ruleset, _ in present],
            **{column: [row[c] for row in rows] for c, column in enumerate(self.columns)}},
            schema={"player": pl.String, "variant": pl.String, "ruleset": pl.String,
                    **dict.fromkeys(self.columns, pl.Int64)})

    def resampled(self, resamples: int, rng: np.random.Generator
                  ) -> Iterator[npt.NDArray[np.float64]]:
        """The sums of each resample, :data:`PRODUCT` resamples at a time: arrays of
        shape (resamples, rulesets, players, columns); a game block's sums at the first
        player. Each resample draws as many games as there are, with replacement,
        :data:`CHUNK` resamples to a draw of the generator. The next resamples are drawn
        on a second thread while these are multiplied (in order: the same draws
        whatever the timing); the products run on one thread each."""
        sizes = [min(PRODUCT, resamples - start) for start in range(0, resamples, PRODUCT)]
        plan = self._plan()
        with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(1) as drawing:
            coming = drawing.submit(_drawn_weights, sizes[0], self.games, rng) if sizes \
                else None
            for index in range(len(sizes)):
                assert coming is not None
                weights = coming.result()
                coming = drawing.submit(_drawn_weights, sizes[index + 1], self.games, rng) \
                    if index + 1 < len(sizes) else None
                yield self._summed(weights, plan)
                del weights

    def _plan(self) -> list[tuple[int, int, list[tuple[int, int, list[int]]]]]:
        """Per block of :data:`_ROWS` games (``start``, ``stop``): per block of sums, its
        rows there (``low``, ``high``) and per matrix the largest sum of a column's
        absolute values over those rows (a product by weights up to ``w`` is then exact
        in float32 when ``w`` times it is under 2**24)."""
        edges = np.arange(0, self.games + _ROWS, _ROWS).clip(max=self.games)
        bounds = [None if block.games is None else np.searchsorted(block.games, edges)
                  for block in self.blocks]
        plan = []
        for k in range(len(edges) - 1):
            start, stop = int(edges[k]), int(edges[k + 1])
            rows = []
            for block, bound in zip(self.blocks, bounds, strict=True):
                low, high = (start, stop) if bound is None else (int(bound[k]),
                                                                 int(bound[k + 1]))
                rows.append((low, high, [
                    int(np.abs(values[low:high], dtype=np.int64).sum(axis=0).max(initial=0))
                    for values in block.values]))
            plan.append((start, stop, rows))
        return plan

    def _summed(self, weights: npt.NDArray[np.uint8] | npt.NDArray[np.float64],
                plan: list[tuple[int, int, list[tuple[int, int, list[int]]]]]
                ) -> npt.NDArray[np.float64]:
        """The resamples of ``weights`` (resamples x games): their sums, exact. Weights
        and sums are whole numbers: a product whose every partial sum stays under 2**24
        (:meth:`_plan`) is exact in float32, and is taken there (twice as fast); the
        others in float64. Every product is then exact whatever the blocks or the order
        of the additions. :data:`_ROWS` games at a time, each block of weights widened
        once for every block of sums."""
        b = weights.shape[0]
        top = int(weights.max(initial=0))
        found = [np.zeros((b, block.width)) for block in self.blocks]
        for start, stop, rows in plan:
            if stop <= start:
                continue
            part = weights[:, start:stop]
            widened: dict[type, npt.NDArray[np.floating]] = {}
            for block, out, (low, high, limits) in zip(self.blocks, found, rows, strict=True):
                if high <= low:
                    continue
                column = 0
                for values, limit in zip(block.values, limits, strict=True):
                    kind = np.float32 if top * limit < _EXACT32 else np.float64
                    if kind not in widened:
                        widened[kind] = part.astype(kind)
                    mine = widened[kind] if high - low == stop - start else \
                        widened[kind][:, block.games[low:high] - start]  # type: ignore[index]
                    width = values.shape[1]
                    out[:, column:column + width] += mine @ values[low:high].astype(kind)
                    column += width
        out = np.zeros((b, len(self.rulesets), len(self.players), len(self.columns)))
        for block, sums in zip(self.blocks, found, strict=True):
            padded = np.concatenate([sums, np.zeros((b, 1))], axis=1)
            out[:, :, 0 if block.player is None else block.player, :] += padded[:, block.where]
        return out


_EXACT32 = 2**24
"""Whole numbers below this are exact in float32, and so is every sum of them that stays
below it."""

PRODUCT = 50
"""Resamples multiplied at a time: memory is ``PRODUCT`` x games bytes of weights, twice
(those multiplied and those drawn meanwhile)."""


def _drawn_weights(b: int, games: int, rng: np.random.Generator
                   ) -> npt.NDArray[np.uint8] | npt.NDArray[np.float64]:
    """``b`` resamples' weights (how many times each drew each game), drawn
    :data:`CHUNK` resamples at a time: bytes, or float64 should a count pass 255."""
    if games < _COMPILED_FROM:
        return np.concatenate([_weights(rng.integers(0, games, size=(min(CHUNK, b - s),
                                                                    games)), games)
                               for s in range(0, b, CHUNK)])
    # int32 draws are the int64 draws, in half the memory.
    from ofcstats._bootstrap_kernel import counted  # noqa: PLC0415 - loads the compiler

    out = np.empty((b, games), dtype=np.uint8)
    wide: dict[int, npt.NDArray[np.float64]] = {}
    for start in range(0, b, CHUNK):
        drawn = rng.integers(0, games, size=(min(CHUNK, b - start), games),
                             dtype=np.int32 if games < 2**31 else np.int64)
        if counted(drawn, out, start) > 255:
            wide[start] = _weights(drawn.astype(np.int64), games)
    if not wide:
        return out
    exact = out.astype(np.float64)
    for start, counts in wide.items():
        exact[start:start + len(counts)] = counts
    return exact


_COMPILED_FROM = 20_000
"""Games from which the weights are counted by the compiled step (the same counts)."""


def _weights(drawn: npt.NDArray[np.int64], games: int) -> npt.NDArray[np.float64]:
    """Per resample (a row of ``drawn``): how many times it drew each game."""
    if games >= _COMPILED_FROM:
        from ofcstats._bootstrap_kernel import weights  # noqa: PLC0415 - loads the compiler

        return weights(drawn, games)
    b = drawn.shape[0]
    drawn += (np.arange(b) * games)[:, None]
    return np.bincount(drawn.ravel(), minlength=b * games).reshape(b, games).astype(np.float64)


_CODES_TABLE = "uncertainty_codes"

_HANDS_SEEN = """
SELECT DISTINCT r.{hand}, r.session_id::VARCHAR AS session_id, r.variant::VARCHAR AS variant
FROM ({source}) r
"""

_NAMES = """
SELECT variant::VARCHAR AS variant, ruleset::VARCHAR AS ruleset, player::VARCHAR AS player,
       count(*) AS n
FROM ({source})
GROUP BY ALL
"""

_STREAM = """
SELECT c.v, c.g, c.h,
       (coalesce(list_position([{rulesets}], r.ruleset::VARCHAR), 0) - 1)::INTEGER AS r,
       (coalesce(list_position([{players}], r.player::VARCHAR), 0) - 1)::INTEGER AS p,
       {flag} AS flag,
       {values}
FROM ({source}) r JOIN {codes} c ON c.{hand} = r.{hand}
"""


def _listed(names: Sequence[str]) -> str:
    return ", ".join("'" + name.replace("'", "''") + "'" for name in names)


_SMALL = frozenset({"hands", "fouls", "eligible", "entered", "stayed", "fantasyland_hands",
                    "opponents", "scoops", "scooped", "wins_top", "wins_middle",
                    "wins_bottom"})
"""Sums that are counts of a game's hands: a pass holds them in 16 bits (sums of points
in 32), and sums again in 64 should one not fit."""


_SMALL_HIGH = int(np.iinfo(np.int16).max)
"""The largest sum a pass holds in 16 bits."""


class _TooWideError(Exception):
    """A per-game sum that does not fit its type: sum again in 64 bits."""


class _UnnamedError(Exception):
    """A row whose ruleset or player the database did not foretell: name them from the
    rows."""


@dataclass
class _Sums:
    """Per-game sums of some columns, split by the type that holds them: ``small``
    (rows x rulesets x ``small_columns``) and ``large`` (of ``large_columns``)."""

    small: npt.NDArray[np.signedinteger]
    small_columns: tuple[str, ...]
    large: npt.NDArray[np.signedinteger]
    large_columns: tuple[str, ...]

    @classmethod
    def zeros(cls, rows: int, rulesets: int, columns: Sequence[str], wide: bool) -> _Sums:
        small = tuple(c for c in columns if c in _SMALL and not wide)
        large = tuple(c for c in columns if c not in small)
        return cls(np.zeros((rows, rulesets, len(small)), dtype=np.int16),
                   small, np.zeros((rows, rulesets, len(large)),
                                   dtype=np.int64 if wide else np.int32), large)

    def rows(self, kept: npt.NDArray[np.bool_] | npt.NDArray[np.int64] | slice) -> _Sums:
        """These sums of the rows ``kept``."""
        return _Sums(self.small[kept], self.small_columns, self.large[kept],
                     self.large_columns)

    def rulesets(self, kept: npt.NDArray[np.bool_]) -> _Sums:
        """These sums of the rulesets ``kept``."""
        return _Sums(self.small[:, kept], self.small_columns, self.large[:, kept],
                     self.large_columns)

    def grown(self, rows: int) -> _Sums:
        """These sums with room for ``rows`` rows."""
        def grow(old: npt.NDArray[np.signedinteger]) -> npt.NDArray[np.signedinteger]:
            new = np.zeros((rows, *old.shape[1:]), dtype=old.dtype)
            new[:len(old)] = old
            return new
        return _Sums(grow(self.small), self.small_columns, grow(self.large),
                     self.large_columns)

    def parts(self, place: dict[str, int]
              ) -> list[tuple[npt.NDArray[np.signedinteger], list[int]]]:
        """As :meth:`_Block.of` takes them: each array with its columns' places."""
        return [(self.small, [place[c] for c in self.small_columns]),
                (self.large, [place[c] for c in self.large_columns])]


@dataclass
class _Scanned:
    """One variant's rows after one pass (:func:`_scan`): ``game_sums`` per game with
    rows, in order; per pair of a game and a player (``pair_game``, ``pair_player``),
    ``pair_sums`` and ``pair_beside`` (the columns beside, or None); per ruleset and
    player, ``totals`` of every column streamed and whether any row was flagged
    (``what_if``); per ruleset, its distinct ``hands``."""

    rulesets: list[str]
    players: list[str]
    games: int
    game_sums: _Sums
    pair_game: npt.NDArray[np.int64]
    pair_player: npt.NDArray[np.int64]
    pair_sums: _Sums
    pair_beside: npt.NDArray[np.int64] | None
    totals: npt.NDArray[np.int64]
    what_if: npt.NDArray[np.bool_]
    hands: npt.NDArray[np.int64]


class _Pass:
    """What one pass over the rows adds up for a variant (:func:`_scan`)."""

    def __init__(self, index: int, names: tuple[list[str], list[str]],
                 codes: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
                 every: pl.DataFrame, hands: int, pairs: int,
                 columns: tuple[Sequence[str], Sequence[str], Sequence[str]],
                 wide: bool) -> None:
        """The variant numbered ``index`` in the stream, its rulesets and players
        (``names``) and where each code of the stream's is among them (``codes``); its
        games (``every``, with their ``seats``), ``hands``, room for ``pairs`` to start
        with, the ``columns`` summed per game and per pair among those ``streamed``."""
        game_columns, pair_columns, streamed = columns
        self.index, self.codes, self.streamed = index, codes, streamed
        rulesets, players = names
        self.rulesets, self.players, self.every = rulesets, players, every.select(
            "session_id", "game")
        self.high = (_SMALL_HIGH, int(np.iinfo(np.int64 if wide else np.int32).max) - 1)
        self.games = _Sums.zeros(every.height, len(rulesets), game_columns, wide)
        self.game_seen = np.zeros(every.height, dtype=np.uint8)
        capacity = np.minimum(every.get_column("seats").to_numpy(), len(players))
        self.slot_start = np.zeros(every.height + 1, dtype=np.int64)
        np.cumsum(capacity, out=self.slot_start[1:])
        self.slot_used = np.zeros(every.height, dtype=np.int64)
        self.slot_player = np.zeros(int(self.slot_start[-1]), dtype=np.int64)
        self.slot_pair = np.zeros(int(self.slot_start[-1]), dtype=np.int64)
        self.pairs = _Sums.zeros(pairs, len(rulesets), pair_columns, wide)
        self.where = tuple(np.array([streamed.index(c) for c in chosen], dtype=np.int64)
                           for chosen in (self.games.small_columns, self.games.large_columns,
                                          self.pairs.small_columns, self.pairs.large_columns))
        self.pair_game = np.zeros(pairs, dtype=np.int64)
        self.pair_player = np.zeros(pairs, dtype=np.int64)
        self.used = np.zeros(1, dtype=np.int64)
        self.totals = np.zeros((len(rulesets), len(players), len(streamed)), dtype=np.int64)
        self.flagged = np.zeros((len(rulesets), len(players)), dtype=np.uint8)
        self.seen = np.zeros((len(rulesets), hands), dtype=np.uint8)
        self.hands = np.zeros(len(rulesets), dtype=np.int64)

    def add(self, batch: tuple[npt.NDArray[Any], ...]) -> None:
        """The batch's rows of the variant added up (:func:`_bootstrap_kernel.scatter`)."""
        from ofcstats._bootstrap_kernel import scatter  # noqa: PLC0415 - loads the compiler

        rows = len(batch[0])
        done = 0
        while done < rows:
            done = scatter(  # type: ignore[call-arg]
                done, *batch[:6], batch[6:], self.index, *self.codes, self.games.small,
                self.where[0], self.games.large, self.where[1], self.game_seen,
                self.slot_start, self.slot_used, self.slot_player, self.slot_pair,
                self.pairs.small, self.where[2], self.pairs.large, self.where[3],
                self.pair_game, self.pair_player, self.used, self.totals, self.flagged,
                self.seen, self.hands, *self.high)
            if done < -rows:
                raise _UnnamedError
            if done < 0:
                raise _TooWideError
            if done < rows:  # more pairs than the rows' counts foretold
                size = max(len(self.pair_game) * 3 // 2, int(self.used[0]) + rows - done)
                self.pairs = self.pairs.grown(size)
                self.pair_game = np.resize(self.pair_game, size)
                self.pair_player = np.resize(self.pair_player, size)

    def scanned(self, beside: npt.NDArray[np.int64] | None) -> _Scanned | None:
        """What the pass found: the games, rulesets and players with rows (None: no
        row)."""
        used = int(self.used[0])
        hands = self.totals[:, :, self.streamed.index("hands")] > 0
        rulesets: npt.NDArray[np.bool_] = np.asarray(hands.any(axis=1))
        players: npt.NDArray[np.bool_] = np.asarray(hands.any(axis=0))
        if not rulesets.any():
            return None
        seen = self.game_seen.astype(bool)
        compact = np.cumsum(seen) - 1
        games = self.games if seen.all() else self.games.rows(seen)
        pairs = self.pairs.rows(slice(0, used))
        player = np.cumsum(players) - 1
        if not rulesets.all():
            games = games.rulesets(rulesets)
            pairs = pairs.rulesets(rulesets)
            beside = None if beside is None else beside[:, rulesets]
        return _Scanned([name for name, kept in zip(self.rulesets, rulesets, strict=True)
                         if kept],
                        [name for name, kept in zip(self.players, players, strict=True)
                         if kept],
                        int(seen.sum()), games, compact[self.pair_game[:used]],
                        player[self.pair_player[:used]], pairs, beside,
                        self.totals[rulesets][:, players],
                        self.flagged[rulesets][:, players].astype(bool), self.hands[rulesets])


def _scan(rows: stats.Rows, games: pl.DataFrame, game_columns: Sequence[str],
          pair_columns: Sequence[str], beside: pl.DataFrame | None = None,
          beside_columns: Sequence[str] = ()) -> dict[str, _Scanned]:
    """Every variant's per-game sums from one pass over the rows (per player hand,
    :func:`ofcstats.stats.per_player_hand`): DuckDB reads each row's values
    (:data:`ofcstats.stats.ROW_VALUES`) with its game's code, batch by batch, and the
    compiled step adds them up (:func:`ofcstats._bootstrap_kernel.scatter`): the sums of
    :func:`game_sums`, without a query grouping millions of games. ``game_columns`` are
    summed per game over every player, ``pair_columns`` per game and player.

    ``beside`` (optional): more per-game sums of a ruleset and player (``variant``,
    ``ruleset``, ``session_id``, ``game``, ``player`` and ``beside_columns``), added to
    the pairs' where that ruleset has rows of that player in that game (a left join of
    the rows to it)."""
    wide, named = False, True
    while True:
        try:
            return _scan_into(rows, games, (game_columns, pair_columns), beside,
                              beside_columns, wide=wide, named=named)
        except _TooWideError:
            wide = True
        except _UnnamedError:
            named = False


def _scan_into(rows: stats.Rows, games: pl.DataFrame,
               columns: tuple[Sequence[str], Sequence[str]], beside: pl.DataFrame | None,
               beside_columns: Sequence[str], *, wide: bool, named: bool
               ) -> dict[str, _Scanned]:
    present = rows.columns
    hand = "hand_key" if "hand_key" in present else "hand_id"
    # The names the rows can have (the database says, without reading them), else those
    # they have, with how many rows (the most pairs of a game and a player there can be).
    names = rows.scored_names() if named else None
    counted = names is None
    if names is None:
        names = rows.query(_NAMES)
    variants = sorted(names.get_column("variant").unique().to_list())
    rulesets = sorted(names.get_column("ruleset").unique().to_list())
    players = sorted(names.get_column("player").unique().to_list())
    if not {"session_id", "variant"} <= set(games.columns):
        games = games.select(hand, "game").join(rows.query(_HANDS_SEEN, hand=hand), on=hand)
    games = games.with_columns(pl.col("session_id", "variant").cast(pl.String))
    game_columns, pair_columns = columns
    streamed = [c for c in SUM_COLUMNS if c in {*game_columns, *pair_columns}]
    passes: dict[str, _Pass] = {}
    codes = []
    for v, variant in enumerate(variants):
        mine = names.filter(pl.col("variant") == variant)
        local_r = sorted(mine.get_column("ruleset").unique().to_list())
        local_p = sorted(mine.get_column("player").unique().to_list())
        hands = games.filter(pl.col("variant") == variant)
        every = hands.group_by("session_id", "game").agg(
            seats=pl.col("n_seats").cast(pl.Int64).sum() if "n_seats" in hands.columns
            else pl.lit(len(local_p), dtype=pl.Int64)).sort("session_id", "game")
        codes.append(hands.join(every.select("session_id", "game").with_row_index("g"),
                                on=["session_id", "game"]).select(
            hand, v=pl.lit(v, dtype=pl.Int32), g=pl.col("g").cast(pl.Int32),
            h=pl.int_range(pl.len(), dtype=pl.Int32)))
        # Pairs of a game and a player: at most the rows of the ruleset with most; not
        # counted, a pair a game to start with, and more as they come.
        pairs = max(1, every.height)
        if counted:
            most = mine.group_by("ruleset").agg(pl.col("n").sum()).get_column("n").max()
            pairs = int(most or 1)  # type: ignore[arg-type]
        passes[variant] = _Pass(v, (local_r, local_p),
                                (_places(rulesets, local_r), _places(players, local_p)),
                                every, hands.height, pairs,
                                (game_columns, pair_columns, streamed), wide)
    del games
    coded = pl.concat(codes) if codes else pl.DataFrame(
        schema={hand: pl.Int64, "v": pl.Int32, "g": pl.Int32, "h": pl.Int32})
    del codes
    flag = "r.what_if" if "what_if" in present else "false"
    values = ",\n       ".join(f"coalesce(({stats.row_value(c, 'r')})::BIGINT, 0) AS {c}"
                               for c in streamed)
    with rows.registered(_CODES_TABLE, coded):
        batches = rows.batches(_STREAM, codes=_CODES_TABLE, hand=hand,
                               rulesets=_listed(rulesets), players=_listed(players),
                               flag=flag, values=values)
        for arrays in _ahead(batches, _arrays):
            for each in passes.values():
                each.add(arrays)
            del arrays
    found = {}
    for variant in variants:
        done = passes.pop(variant)
        added = _beside(done, variant, beside, beside_columns) \
            if beside is not None and beside_columns else None
        scanned = done.scanned(added)
        if scanned is not None:
            found[variant] = scanned
    return found


def _arrays(batch: pa.RecordBatch) -> tuple[npt.NDArray[Any], ...]:
    return tuple(batch.column(i).to_numpy(zero_copy_only=False)
                 for i in range(batch.num_columns))


def _ahead(batches: Iterator[pa.RecordBatch], convert: Callable[[pa.RecordBatch], _T]
           ) -> Iterator[_T]:
    """Each batch converted, the next read and converted on a second thread while this
    one is used (DuckDB and the compiled step each leave the other a processor)."""
    done = object()
    with ThreadPoolExecutor(1) as reading:
        def fetch() -> object:
            batch = next(batches, done)
            return done if batch is done else convert(batch)

        coming = reading.submit(fetch)
        try:
            while (item := coming.result()) is not done:
                coming = reading.submit(fetch)
                yield item  # type: ignore[misc]
        finally:
            with suppress(BaseException):
                coming.result()
            close = getattr(batches, "close", None)
            if close is not None:
                close()


def _places(every: list[str], mine: list[str]) -> npt.NDArray[np.int64]:
    """For each name of ``every``, its place in ``mine`` (-1: not there)."""
    out = np.full(len(every), -1, dtype=np.int64)
    out[[every.index(name) for name in mine]] = np.arange(len(mine))
    return out


def _codes_of(column: pl.Series, names: Sequence[str]) -> npt.NDArray[np.int64]:
    """Each value's place in ``names`` (-1: not there), through the column's categories:
    millions of rows are never spelled out as text."""
    if column.dtype != pl.Categorical and not isinstance(column.dtype, pl.Enum):
        column = column.cast(pl.String).cast(pl.Categorical)
    distinct = column.unique()
    codes = distinct.to_physical().cast(pl.Int64).to_numpy()
    place = {name: i for i, name in enumerate(names)}
    lookup = np.full(int(codes.max(initial=-1)) + 1, -1, dtype=np.int64)
    lookup[codes] = [place.get(name, -1) for name in distinct.cast(pl.String).to_list()]
    physical = column.to_physical().to_numpy()
    return lookup[physical] if physical.size else np.zeros(0, dtype=np.int64)


def _beside(done: _Pass, variant: str, beside: pl.DataFrame, columns: Sequence[str]
            ) -> npt.NDArray[np.int64]:
    """``beside``'s ``columns`` of the variant per pair, ruleset and column, where that
    ruleset has rows of that player in that game (the pair's ``hands`` sum is over 0),
    :data:`_BESIDE_ROWS` rows at a time."""
    out = np.zeros((int(done.used[0]), len(done.rulesets), len(columns)), dtype=np.int64)
    sessions = sorted(done.every.get_column("session_id").unique().to_list())
    every_game = done.every.get_column("game").cast(pl.Int64).to_numpy()
    scale = int(max(every_game.max(initial=0),
                    beside.get_column("game").max() or 0)) + 1
    keys = _codes_of(done.every.get_column("session_id"), sessions) * scale + every_game
    small = "hands" in done.pairs.small_columns
    hands = (done.pairs.small if small else done.pairs.large)[
        ..., (done.pairs.small_columns if small else done.pairs.large_columns).index("hands")]
    for start in range(0, beside.height, _BESIDE_ROWS):
        part = beside.slice(start, _BESIDE_ROWS)
        part = part.filter(pl.Series(_codes_of(part.get_column("variant"), [variant]) == 0))
        if part.is_empty():
            continue
        key = _codes_of(part.get_column("session_id"), sessions) * scale + part.get_column(
            "game").cast(pl.Int64).to_numpy()
        at = np.minimum(np.searchsorted(keys, key), max(0, len(keys) - 1))
        g = np.where((key >= 0) & (keys[at] == key), at, -1) if len(keys) else \
            np.full(len(key), -1)
        r = _codes_of(part.get_column("ruleset"), done.rulesets)
        p = _codes_of(part.get_column("player"), done.players)
        pair = np.full(len(g), -1, dtype=np.int64)
        ok = (g >= 0) & (r >= 0) & (p >= 0)
        pair[ok] = _pairs_of(done, g[ok], p[ok])
        ok = pair >= 0
        ok[ok] = hands[pair[ok], r[ok]] > 0
        for c, column in enumerate(columns):
            np.add.at(out, (pair[ok], r[ok], c),  # type: ignore[arg-type]
                      part.get_column(column).to_numpy()[ok].astype(np.int64))
    return out


_BESIDE_ROWS = 1 << 20
"""Rows of the sums beside taken at a time: the codes of a part stay small."""


def _pairs_of(done: _Pass, games: npt.NDArray[np.int64], players: npt.NDArray[np.int64]
              ) -> npt.NDArray[np.int64]:
    from ofcstats._bootstrap_kernel import pairs_of  # noqa: PLC0415 - loads the compiler

    return pairs_of(games, players, done.slot_start, done.slot_used, done.slot_player,
                    done.slot_pair)


def _ratio(numerator: npt.NDArray[np.float64], denominator: npt.NDArray[np.float64]
           ) -> npt.NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1),
                        np.nan)


def _quantiles(values: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64],
                                                         npt.NDArray[np.float64]]:
    """The percentile interval along the first axis, NaN where no resample is defined."""
    tail = (1 - LEVEL) / 2
    defined = np.isfinite(values)
    low = np.full(values.shape[1:], np.nan)
    high = np.full(values.shape[1:], np.nan)
    for index in np.ndindex(values.shape[1:]):
        column = values[(slice(None), *index)][defined[(slice(None), *index)]]
        if column.size:
            low[index], high[index] = np.quantile(column, [tail, 1 - tail])
    return low, high


_COMPARE_COLUMNS = ("hands", "total", "squares", "abs_points", "abs_royalty", "abs_other",
                    "fouls", "eligible", "entered")

COMPARE_STATS = ("sd", "mean_abs_points", "royalty_share", "foul_rate",
                 "fantasyland_entry_rate", "skill_signal")
"""The statistics of ``compare`` resampled directly; ``hands_to_tell_apart`` follows from
``skill_signal``."""


def _compare_replicates(summed: npt.NDArray[np.float64]) -> dict[str, npt.NDArray[np.float64]]:
    """Per resample and ruleset, :data:`COMPARE_STATS` from the resampled sums
    (resamples, rulesets, players, :data:`_COMPARE_COLUMNS`), as
    :func:`ofcstats.stats.ruleset_table` computes them."""
    column = {name: summed[..., i] for i, name in enumerate(_COMPARE_COLUMNS)}
    every = {name: value.sum(axis=-1) for name, value in column.items()}
    n, total, squares = every["hands"], every["total"], every["squares"]
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = (squares - total * total / n) / (n - 1)
        sd = np.where(n > 1, np.sqrt(np.clip(variance, 0, None)), np.nan)
        # The skill signal: players with enough hands in this resample.
        hands = column["hands"]
        kept = hands >= stats.MIN_HANDS_FOR_SKILL
        counted = kept.sum(axis=-1)
        means = np.where(kept, column["total"] / np.where(kept, hands, 1), 0.0)
        centre = means.sum(axis=-1) / counted
        deviations = np.where(kept, means - centre[..., None], 0.0)
        spread = np.sqrt((deviations ** 2).sum(axis=-1) / (counted - 1))
        within = np.where(kept, column["squares"] - column["total"] ** 2
                          / np.where(kept, hands, 1), 0.0).sum(axis=-1)
        pooled = np.sqrt(within / np.where(kept, hands - 1, 0).sum(axis=-1))
        signal = np.where((counted >= 2) & (pooled > 0), spread / pooled, np.nan)
    return {
        "sd": sd,
        "mean_abs_points": _ratio(every["abs_points"], n),
        "royalty_share": _ratio(every["abs_royalty"], every["abs_royalty"] + every["abs_other"]),
        "foul_rate": _ratio(every["fouls"], n),
        "fantasyland_entry_rate": _ratio(every["entered"], every["eligible"]),
        "skill_signal": signal,
    }


@dataclass(frozen=True)
class Comparison:
    """``compare``'s answer: ``table`` (:func:`ofcstats.stats.ruleset_table` with every
    statistic's interval and ``skill_group``) and ``tell_apart`` (per variant, the top
    two rulesets and the hands needed to tell them apart)."""

    table: pl.DataFrame
    tell_apart: pl.DataFrame

    def frame(self) -> pl.DataFrame:
        """``table`` with its variant's ``tell_apart`` beside every row, as ``top_two_*``
        columns (``top_two_first``, ``top_two_more_hands``, ...): one flat frame for CSV
        and JSON."""
        apart = self.tell_apart.rename(
            {c: f"top_two_{c}" for c in self.tell_apart.columns if c != "variant"})
        return self.table.join(apart, on="variant", how="left", maintain_order="left")


def compare(per_game: pl.DataFrame, hands: pl.DataFrame, *, resamples: int = RESAMPLES,
            seed: int = SEED) -> Comparison:
    """Per variant and ruleset: :func:`ofcstats.stats.ruleset_table` of the per-game
    frame's totals (``hands``: :func:`ofcstats.stats.hands_per_ruleset`), with
    ``<stat>_ci_low`` / ``<stat>_ci_high`` for every statistic, ``skill_group``
    (:func:`skill_groups`) and, per variant, :func:`tell_apart`."""
    table = stats.ruleset_table(totals(per_game), hands)
    layouts = ((variant, _Layout.of(per_game.filter(pl.col("variant") == variant),
                                    _COMPARE_COLUMNS))
               for variant in sorted(table.get_column("variant").unique().to_list()))
    return _compared(table, layouts, resamples, seed)


_GAME_COMPARE = ("abs_points", "abs_royalty", "abs_other", "fouls", "eligible", "entered")
"""``compare``'s sums taken over every player only: summed per game."""
_PLAYER_COMPARE = ("hands", "total", "squares")
"""``compare``'s sums taken per player (the skill signal): summed per game and player."""


def compare_stored(rows: stats.Rows, games: pl.DataFrame, *, resamples: int = RESAMPLES,
                   seed: int = SEED) -> Comparison:
    """:func:`compare` of ``game_sums(rows, games)``, the same bytes, without the per-game
    frame: one pass over the rows (:func:`_scan`) sums each game (and each player's sums
    per game where the skill signal needs them), and the point estimates are those sums
    added up (memory: per variant, games x rulesets x the columns resampled, in the
    narrowest integer type, rather than every sum of every row of the per-game frame)."""
    per_hand = stats.per_player_hand(rows)
    scanned = _scan(per_hand, games, _GAME_COMPARE, _PLAYER_COMPARE)
    what_if = "what_if" in per_hand.columns
    summed, hands = _point_sums(scanned, _COMPARE_COLUMNS, what_if)
    table = stats.ruleset_table(summed, hands)

    def layouts() -> Iterator[tuple[str, _Layout]]:
        for variant in sorted(table.get_column("variant").unique().to_list()):
            scan = scanned.pop(variant)
            yield variant, _Layout.scanned(scan, _COMPARE_COLUMNS)
            del scan

    return _compared(table, layouts(), resamples, seed)


def _point_sums(scanned: dict[str, _Scanned], columns: Sequence[str], what_if: bool
                ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`ofcstats.stats.sums`' frame (of ``columns``, as streamed: in the order of
    :data:`SUM_COLUMNS`) and :func:`ofcstats.stats.hands_per_ruleset`'s, from the
    passes' totals."""
    streamed = [c for c in SUM_COLUMNS if c in columns]
    summed = []
    for variant, scan in scanned.items():
        r, p = np.nonzero(scan.totals[:, :, streamed.index("hands")] > 0)
        summed.append(pl.DataFrame({
            "player": [scan.players[i] for i in p], "variant": [variant] * len(r),
            "ruleset": [scan.rulesets[i] for i in r],
            **({"what_if": scan.what_if[r, p]} if what_if else {}),
            **{c: scan.totals[r, p, streamed.index(c)] for c in streamed}},
            schema={"player": pl.String, "variant": pl.String, "ruleset": pl.String,
                    **({"what_if": pl.Boolean} if what_if else {}),
                    **dict.fromkeys(streamed, pl.Int64)}))
    hands = pl.DataFrame({
        "variant": [v for v, scan in scanned.items() for _ in scan.rulesets],
        "ruleset": [r for scan in scanned.values() for r in scan.rulesets],
        "hands": [int(h) for scan in scanned.values() for h in scan.hands]},
        schema={"variant": pl.String, "ruleset": pl.String, "hands": pl.Int64})
    empty = pl.DataFrame(schema={"player": pl.String, "variant": pl.String,
                                 "ruleset": pl.String,
                                 **({"what_if": pl.Boolean} if what_if else {}),
                                 **dict.fromkeys(streamed, pl.Int64)})
    return (pl.concat(summed).sort(*stats.KEYS) if summed else empty), hands


def _compared(table: pl.DataFrame, layouts: Iterable[tuple[str, _Layout]], resamples: int,
              seed: int) -> Comparison:
    """:func:`compare`'s answer from the point estimates (``table``) and each variant's
    layout, one variant at a time."""
    intervals: list[pl.DataFrame] = []
    apart: list[pl.DataFrame] = []
    for variant, layout in layouts:
        parts = [_compare_replicates(chunk)
                 for chunk in layout.resampled(resamples, _rng(seed, variant))]
        replicates = {name: np.concatenate([part[name] for part in parts])
                      for name in COMPARE_STATS}
        mine = table.filter(pl.col("variant") == variant)
        frame = pl.DataFrame({"variant": [variant] * len(layout.rulesets),
                              "ruleset": layout.rulesets})
        for name in COMPARE_STATS:
            low, high = _quantiles(replicates[name])
            frame = frame.with_columns(pl.Series(f"{name}_ci_low", low),
                                       pl.Series(f"{name}_ci_high", high))
        signal = replicates["skill_signal"]
        ranked = mine.filter(pl.col("skill_rank").is_not_null()).sort("skill_rank").get_column(
            "ruleset").to_list()
        order = [layout.rulesets.index(name) for name in ranked]
        groups = skill_groups(signal[:, order])
        frame = frame.join(pl.DataFrame({"ruleset": ranked, "skill_group": groups},
                                        schema={"ruleset": pl.String,
                                                "skill_group": pl.Int32}),
                           on="ruleset", how="left")
        intervals.append(frame.with_columns(pl.col(pl.Float64).fill_nan(None)))
        apart.append(tell_apart(variant, ranked, signal[:, order], mine))
        del layout, parts, replicates
    ci = pl.concat(intervals) if intervals else pl.DataFrame()
    joined = table.join(ci, on=["variant", "ruleset"], how="left") if intervals else table
    joined = joined.with_columns(
        # A monotone function of the signal: its interval maps over, ends swapped.
        hands_to_tell_apart_ci_low=_hands_for(pl.col("skill_signal_ci_high")),
        hands_to_tell_apart_ci_high=_hands_for(pl.col("skill_signal_ci_low")),
    ) if intervals else joined
    # The observed statistic undefined: no interval either.
    joined = joined.with_columns(
        pl.when(pl.col(stat).is_not_null()).then(pl.col(f"{stat}_ci_{end}")).alias(
            f"{stat}_ci_{end}")
        for stat in (*COMPARE_STATS, "hands_to_tell_apart") for end in ("low", "high")
    ) if intervals else joined
    return Comparison(stats._stable(joined), stats._stable(
        pl.concat(apart) if apart else _tell_apart_frame([])))


def _hands_for(signal: pl.Expr) -> pl.Expr:
    return pl.when(signal > 0).then((stats.Z95 / signal).pow(2).ceil()).cast(pl.Int64)


def _difference_interval(first: npt.NDArray[np.float64], second: npt.NDArray[np.float64]
                         ) -> tuple[float, float, float]:
    """The percentile interval and the SD of the paired difference ``first - second``
    over the resamples where both are defined (NaN when none is)."""
    difference = first - second
    difference = difference[np.isfinite(difference)]
    if difference.size == 0:
        return math.nan, math.nan, math.nan
    tail = (1 - LEVEL) / 2
    low, high = np.quantile(difference, [tail, 1 - tail])
    sd = float(difference.std(ddof=1)) if difference.size > 1 else math.nan
    return float(low), float(high), sd


def skill_groups(signals: npt.NDArray[np.float64]) -> list[int]:
    """Groups of rulesets the data cannot rank: ``signals`` is (resamples, rulesets) with
    the rulesets in rank order (best first). The best starts group 1 and leads it; each
    next ruleset joins the current group when the percentile interval of the paired
    difference (leader minus it) covers 0, else starts and leads the next group."""
    groups: list[int] = []
    leader = 0
    for index in range(signals.shape[1]):
        if index > 0:
            low, high, _ = _difference_interval(signals[:, leader], signals[:, index])
            if not (low <= 0 <= high):
                leader = index
        groups.append(groups[leader] if leader < index else len(set(groups)) + 1)
    return groups


def _tell_apart_frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={
        "variant": pl.String, "first": pl.String, "second": pl.String,
        "difference": pl.Float64, "difference_ci_low": pl.Float64,
        "difference_ci_high": pl.Float64, "told_apart": pl.Boolean, "hands": pl.Int64,
        "hands_needed": pl.Int64, "more_hands": pl.Int64})


def tell_apart(variant: str, ranked: Sequence[str], signals: npt.NDArray[np.float64],
               table: pl.DataFrame) -> pl.DataFrame:
    """For the top two rulesets of a variant (``ranked``, ``signals`` in that order,
    ``table`` the variant's rows of :func:`ofcstats.stats.ruleset_table`): the observed
    difference of their skill signals, its paired 95% interval, whether it excludes 0
    (``told_apart``), the hands played, and ``hands_needed``: the hands at which the
    difference would be told apart at its observed size, ``hands * (1.96 SD / d)²`` with
    SD the bootstrap SD of the paired difference (``more_hands``: how many beyond those
    played). No row with fewer than two ranked rulesets; ``hands_needed`` null when the
    observed difference is 0 (never told apart)."""
    if len(ranked) < 2:
        return _tell_apart_frame([])
    signal = dict(table.select("ruleset", "skill_signal").iter_rows())
    difference = float(signal[ranked[0]]) - float(signal[ranked[1]])
    low, high, sd = _difference_interval(signals[:, 0], signals[:, 1])
    hands = int(table.get_column("hands").max())  # type: ignore[arg-type]
    needed: int | None = None
    if difference > 0 and math.isfinite(sd):
        needed = max(1, math.ceil(hands * (stats.Z95 * sd / difference) ** 2))
    return _tell_apart_frame([{
        "variant": variant, "first": ranked[0], "second": ranked[1],
        "difference": difference,
        "difference_ci_low": None if math.isnan(low) else low,
        "difference_ci_high": None if math.isnan(high) else high,
        "told_apart": None if math.isnan(low) else not (low <= 0 <= high),
        "hands": hands, "hands_needed": needed,
        "more_hands": None if needed is None else max(0, needed - hands)}])


PLAYER_RATES = {
    "foul_rate": ("fouls", "hands"),
    "fantasyland_entry_rate": ("entered", "eligible"),
    "fantasyland_stay_rate": ("stayed", "fantasyland_hands"),
    "scoop_rate": ("scoops", "opponents"),
    "scooped_rate": ("scooped", "opponents"),
    "win_rate_top": ("wins_top", "opponents"),
    "win_rate_middle": ("wins_middle", "opponents"),
    "win_rate_bottom": ("wins_bottom", "opponents"),
    "money_per_game": ("money_millionths", "games"),
}
"""A player's rates as numerator and denominator sums (money in whole millionths, so that
its sums are exact too)."""
_MONEY_SCALE = 1_000_000


def player_intervals(per_game: pl.DataFrame, money: pl.DataFrame | None = None, *,
                     resamples: int = RESAMPLES, seed: int = SEED) -> pl.DataFrame:
    """Per player, variant and ruleset: every rate of :data:`PLAYER_RATES` (the rates of
    :func:`ofcstats.stats.player_table`, and ``money_per_game``: settled money per game
    played) with its 95% interval as ``<rate>_ci_low`` / ``<rate>_ci_high``.

    ``money`` (optional) is :func:`ofcstats.analysis.game_results`' frame: per variant,
    ruleset, session, game and player, the settled ``money``. The intervals come from
    the same game bootstrap as :func:`compare` (games resampled whole: fantasyland
    entries and stays are dependent within a game, so no per-hand formula applies)."""
    frame = per_game
    if money is not None:
        frame = frame.join(money.select(
            "variant", "ruleset", "session_id", "game", "player",
            money_millionths=(pl.col("money") * _MONEY_SCALE).round(0).cast(pl.Int64),
            games=pl.lit(1, dtype=pl.Int64)),
            on=["variant", "ruleset", "session_id", "game", "player"], how="left")
    else:
        frame = frame.with_columns(money_millionths=pl.lit(0, dtype=pl.Int64),
                                   games=pl.lit(0, dtype=pl.Int64))
    frame = frame.with_columns(pl.col("money_millionths", "games").fill_null(0))
    observed = frame.group_by(*stats.KEYS).agg(pl.col(c).sum() for c in _PLAYER_COLUMNS)
    layouts = ((variant, _Layout.of(frame.filter(pl.col("variant") == variant),
                                    _PLAYER_COLUMNS))
               for variant in sorted(frame.get_column("variant").unique().to_list()))
    return _player_table(observed, layouts, money is None, resamples, seed)


_PLAYER_COLUMNS = sorted({c for pair in PLAYER_RATES.values() for c in pair})


def player_intervals_stored(rows: stats.Rows, games: pl.DataFrame,
                            money: pl.DataFrame | None = None, *,
                            resamples: int = RESAMPLES, seed: int = SEED) -> pl.DataFrame:
    """:func:`player_intervals` of ``game_sums(rows, games)``, the same bytes, without the
    per-game frame: one pass over the rows (:func:`_scan`) sums each player's games."""
    per_hand = stats.per_player_hand(rows)
    streamed = tuple(c for c in SUM_COLUMNS if c in _PLAYER_COLUMNS)
    beside_columns = ("money_millionths", "games")
    beside = None if money is None else money.select(
        "variant", "ruleset", "session_id", "game", "player",
        money_millionths=(pl.col("money") * _MONEY_SCALE).round(0).cast(pl.Int64),
        games=pl.lit(1, dtype=pl.Int8))
    scanned = _scan(per_hand, games, (), streamed, beside, beside_columns)
    observed: list[pl.DataFrame] = []

    def layouts() -> Iterator[tuple[str, _Layout]]:
        for variant in sorted(scanned):
            scan = scanned.pop(variant)
            hands = streamed.index("hands")
            r, p = np.nonzero(scan.totals[:, :, hands] > 0)
            present = sorted((scan.rulesets[i], scan.players[j]) for i, j in zip(r, p,
                                                                                strict=True))
            layout = _Layout.scanned(scan, _PLAYER_COLUMNS, beside_columns)
            del scan
            observed.append(layout.totals(variant, present))
            yield variant, layout

    return _player_table(None, layouts(), money is None, resamples, seed, observed)


def _player_table(observed: pl.DataFrame | None, layouts: Iterable[tuple[str, _Layout]],
                  no_money: bool, resamples: int, seed: int,
                  observed_parts: list[pl.DataFrame] | None = None) -> pl.DataFrame:
    """:func:`player_intervals`' answer from the sums over games (``observed``, or the
    parts gathered while ``layouts`` run) and each variant's layout."""
    columns = _PLAYER_COLUMNS
    where = {name: i for i, name in enumerate(columns)}
    parts: list[pl.DataFrame] = []
    for variant, layout in layouts:
        chunks = []
        for summed in layout.resampled(resamples, _rng(seed, variant)):
            chunks.append(np.stack([
                _ratio(summed[..., where[top]], summed[..., where[bottom]])
                for top, bottom in PLAYER_RATES.values()], axis=-1))
        replicates = np.concatenate(chunks)  # resamples, rulesets, players, rates
        low, high = _quantiles(replicates)
        keys = [(r, p) for r in layout.rulesets for p in layout.players]
        frame_v = pl.DataFrame({
            "player": [p for _, p in keys], "variant": [variant] * len(keys),
            "ruleset": [r for r, _ in keys],
            **{f"{name}_ci_{end}": bound[:, :, i].ravel()
               for i, name in enumerate(PLAYER_RATES)
               for end, bound in (("low", low), ("high", high))}})
        parts.append(frame_v)
        del layout, chunks, replicates
    if observed is None:
        observed = pl.concat(observed_parts) if observed_parts else pl.DataFrame(
            schema={**dict.fromkeys(stats.KEYS, pl.String), **dict.fromkeys(columns, pl.Int64)})
    rates = observed.select(*stats.KEYS, *(
        pl.when(pl.col(bottom) > 0).then(
            pl.col(top) / pl.col(bottom) / (_MONEY_SCALE if top == "money_millionths" else 1))
        .alias(name) for name, (top, bottom) in PLAYER_RATES.items()))
    table = rates.join(pl.concat(parts), on=list(stats.KEYS), how="inner") if parts else rates
    table = table.with_columns(
        (pl.col(f"money_per_game_ci_{end}") / _MONEY_SCALE) for end in ("low", "high")
    ) if parts else table
    if no_money:
        table = table.drop(c for c in table.columns if c.startswith("money_per_game"))
    table = table.with_columns(pl.col(pl.Float64).fill_nan(None)).with_columns(
        pl.when(pl.col(name).is_not_null()).then(pl.col(f"{name}_ci_{end}")).alias(
            f"{name}_ci_{end}")
        for name in PLAYER_RATES if name in table.columns for end in ("low", "high"))
    ordered = [*stats.KEYS, *(c for name in PLAYER_RATES if name in table.columns
                              for c in (name, f"{name}_ci_low", f"{name}_ci_high"))]
    return stats._stable(table.select(ordered).sort(*stats.KEYS))
