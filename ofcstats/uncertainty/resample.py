"""The seeded bootstrap over games, paired across rulesets: each variant's per-game sums
as blocks of whole numbers (:class:`_Layout`), the weights of each resample (how many
times it drew each game) and the resampled sums, exact, as matrix products."""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl
from threadpoolctl import threadpool_limits

from ofcstats.uncertainty.sums import _Scanned

RESAMPLES = 1000
"""Bootstrap resamples of every interval."""
SEED = 7
"""The bootstrap's default seed."""
LEVEL = 0.95
"""The coverage of every interval."""
CHUNK = 25
"""Resamples drawn and multiplied at a time: memory is ``CHUNK`` x games weights."""


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
    from ofcstats.uncertainty._kernel import counted  # noqa: PLC0415 - loads the compiler

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
        from ofcstats.uncertainty._kernel import weights  # noqa: PLC0415 - loads the compiler

        return weights(drawn, games)
    b = drawn.shape[0]
    drawn += (np.arange(b) * games)[:, None]
    return np.bincount(drawn.ravel(), minlength=b * games).reshape(b, games).astype(np.float64)
