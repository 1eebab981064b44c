"""Per-game sums: the integer sums of every statistic per variant, ruleset, game and
player, as a frame (:func:`game_sums`, the readable twin) or from one pass over the
stored rows (:func:`_scan`: DuckDB streams each row's values with its game's code, the
compiled step adds them up)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa

from ofcstats import stats

_T = TypeVar("_T")

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

    def column(self, name: str) -> npt.NDArray[np.signedinteger]:
        """One column's sums (rows x rulesets)."""
        if name in self.small_columns:
            return self.small[..., self.small_columns.index(name)]
        return self.large[..., self.large_columns.index(name)]

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
        # A game holds at most its slots' pairs: no more room than that is ever needed.
        pairs = max(1, min(pairs, int(self.slot_start[-1])))
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
        """The batch's rows of the variant added up (the compiled step, ``_kernel.scatter``)."""
        from ofcstats.uncertainty._kernel import scatter  # noqa: PLC0415 - loads the compiler

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
    compiled step adds them up (:func:`ofcstats.uncertainty._kernel.scatter`): the sums of
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
        # Pairs of a game and a player: at most the rows of the ruleset with most, and at
        # most the games' slots (:class:`_Pass`).
        pairs = hands.height * len(local_p)
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


_BESIDE_ROWS = 1 << 18
"""Rows of the sums beside taken at a time: the codes of a part stay small."""


def _pairs_of(done: _Pass, games: npt.NDArray[np.int64], players: npt.NDArray[np.int64]
              ) -> npt.NDArray[np.int64]:
    from ofcstats.uncertainty._kernel import pairs_of  # noqa: PLC0415 - loads the compiler

    return pairs_of(games, players, done.slot_start, done.slot_used, done.slot_player,
                    done.slot_pair)
