"""Statistics with their uncertainty: a seeded bootstrap over games, paired across rulesets.

Input is the *per-game frame* (:func:`game_sums`): one row per variant, ruleset, game
and player, with the integer sums every statistic of :mod:`ofcstats.stats` comes from.
Its sums over games are :func:`ofcstats.stats.sums`, so the point estimates here are
exactly the ones ``compare`` and ``players`` print; this module adds their intervals.
The commands never build that frame (:func:`compare_stored`,
:func:`player_intervals_stored`): DuckDB sums each variant's games one ruleset at a
time, keyed by integer codes, only the columns resampled, into the same arrays, so the
answer is the same bytes in a fraction of the memory.

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
- The resampled sums are matrix products ``W @ sums`` per player (a block of rulesets
  at a time); the weights and sums are whole numbers, exact in float64 in any order and
  any blocks, so the intervals are the same bytes whatever the thread count.
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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl
from threadpoolctl import threadpool_limits

from ofcstats import stats
from ofcstats.variants import Variant

RESAMPLES = 1000
"""Bootstrap resamples of every interval."""
SEED = 7
"""The bootstrap's default seed."""
LEVEL = 0.95
"""The coverage of every interval."""
CHUNK = 25
"""Resamples drawn and multiplied at a time: memory is ``CHUNK`` x games weights."""

SUM_COLUMNS = ("hands", "total", "squares", "abs_points", "abs_royalty", "abs_other",
               "fouls", "eligible", "entered", "stayed", "fantasyland_hands", "royalty_top",
               "royalty_middle", "royalty_bottom", "royalty_points", "opponents", "scoops",
               "scooped", "wins_top", "wins_middle", "wins_bottom")
"""The integer sums per game and player (:func:`game_sums`), named as in
:func:`ofcstats.stats.sums`."""

_SUM_SQL = {
    "hands": "count(*)",
    "total": "coalesce(sum(r.points), 0)::BIGINT",
    "squares": "coalesce(sum(r.points::BIGINT * r.points), 0)::BIGINT",
    "abs_points": "coalesce(sum(abs(r.points)), 0)::BIGINT",
    "abs_royalty": "coalesce(sum(abs(r.royalty_points)), 0)::BIGINT",
    "abs_other": "coalesce(sum(abs(r.points - r.royalty_points)), 0)::BIGINT",
    "fouls": "count(*) FILTER (r.fouled)",
    "eligible": "count(*) FILTER (NOT r.fantasyland AND r.variant::VARCHAR NOT IN ({thirteen}))",
    "entered": "count(*) FILTER (r.fantasyland_entered)",
    "stayed": "count(*) FILTER (r.fantasyland_stayed)",
    "fantasyland_hands": "count(*) FILTER (r.fantasyland)",
    "royalty_top": "coalesce(sum(r.royalty_top), 0)::BIGINT",
    "royalty_middle": "coalesce(sum(r.royalty_middle), 0)::BIGINT",
    "royalty_bottom": "coalesce(sum(r.royalty_bottom), 0)::BIGINT",
    "royalty_points": "coalesce(sum(r.royalty_points), 0)::BIGINT",
    "opponents": "coalesce(sum(r.n_seats - 1), 0)::BIGINT",
    "scoops": "coalesce(sum(r.scoops), 0)::BIGINT",
    "scooped": "coalesce(sum(r.scooped), 0)::BIGINT",
    "wins_top": "coalesce(sum(r.wins_top), 0)::BIGINT",
    "wins_middle": "coalesce(sum(r.wins_middle), 0)::BIGINT",
    "wins_bottom": "coalesce(sum(r.wins_bottom), 0)::BIGINT",
}
"""Each of :data:`SUM_COLUMNS` as DuckDB sums it over a group of rows ``r``."""


def _sums_sql(columns: Sequence[str]) -> str:
    thirteen = ", ".join(f"'{v.value}'" for v in Variant if v.thirteen_card)
    return ",\n       ".join(f"{_SUM_SQL[c].format(thirteen=thirteen)} AS {c}" for c in columns)


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


_BLOCK_VALUES = 4_000_000
"""Sums widened to float64 at a time for one product (32 MB): the sums are kept in the
narrowest integer type that holds them, and only a block of rulesets is widened."""

_NARROW = (np.int8, np.int16, np.int32, np.int64)


def _narrowest(values: npt.NDArray[np.int64]) -> type[np.signedinteger]:
    low = int(values.min()) if values.size else 0
    high = int(values.max()) if values.size else 0
    return next(t for t in _NARROW if np.iinfo(t).min <= low and high <= np.iinfo(t).max)


def _narrowed(values: npt.NDArray[np.int64]) -> npt.NDArray[np.signedinteger]:
    return values.astype(_narrowest(values))


@dataclass(frozen=True)
class _Layout:
    """One variant's per-game sums as arrays: per player, the games it played (indices
    into the variant's games, sorted) and, per column, its sums there (games x rulesets)
    in the narrowest integer type that holds them."""

    rulesets: list[str]
    players: list[str]
    games: int
    columns: tuple[str, ...]
    played: list[tuple[npt.NDArray[np.int64], list[npt.NDArray[np.signedinteger]]]]

    @classmethod
    def of(cls, frame: pl.DataFrame, columns: Sequence[str]) -> _Layout:
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
        played = []
        for index in range(len(players)):
            mine = keyed.filter(pl.col("p") == index)
            games, inverse = np.unique(mine.get_column("g").to_numpy(), return_inverse=True)
            ruleset = mine.get_column("r").to_numpy()
            sums = []
            for column in columns:
                values = mine.get_column(column).to_numpy().astype(np.int64)
                array = np.zeros((len(games), len(rulesets)), dtype=_narrowest(values))
                array[inverse, ruleset] = values
                sums.append(array)
            played.append((games.astype(np.int64), sums))
        return cls(rulesets, players, every.height, tuple(columns), played)

    @classmethod
    def stored(cls, rows: stats.Rows, coded: _Coded, variant: str, columns: Sequence[str],
               beside: pl.DataFrame | None = None) -> tuple[_Layout, list[tuple[str, str]]]:
        """The variant's layout summed by DuckDB a few rulesets at a time, keyed by
        integer codes (:class:`_Coded`): only ``columns`` leave it; and the (ruleset,
        player) pairs with rows. Columns not among :data:`SUM_COLUMNS` come from
        ``beside`` (keyed by ``ruleset``, ``g`` and ``p``, joined to the rows' games as a
        left join: 0 where it has no row)."""
        rulesets = coded.named(variant, "ruleset")
        players = coded.named(variant, "player")
        summed = [c for c in columns if c in SUM_COLUMNS]
        step = max(1, _GROUPS // max(1, coded.every[variant].height * len(players)))
        parts: list[list[npt.NDArray[np.signedinteger]]] = []
        for start in range(0, len(rulesets), step):
            found = coded.sums(rows, variant, rulesets[start:start + step], players, summed)
            found = found.with_columns(pl.col("r") + start)
            parts.append([_narrowed(found.get_column(c).to_numpy())
                          for c in ("r", "g", "p", *summed)])
            del found
        joined = [np.concatenate([part[i] for part in parts]) if parts else
                  np.zeros(0, dtype=np.int8) for i in range(3 + len(summed))]
        del parts
        r, g, p = joined[0], joined[1], joined[2]
        found_columns = dict(zip(summed, joined[3:], strict=True))
        del joined
        if beside is not None:
            found_columns.update(_beside(beside, rulesets, r, g, p,
                                         [c for c in columns if c not in SUM_COLUMNS]))
        values = [found_columns[c] for c in columns]
        every = np.unique(g)
        g = np.searchsorted(every, g)
        present = sorted({(rulesets[i], players[j]) for i, j in
                          np.unique(np.stack([r, p]), axis=1).T.tolist()})
        played = []
        for index in range(len(players)):
            mine = p == index
            games, inverse = np.unique(g[mine], return_inverse=True)
            sums = []
            for column in values:
                array = np.zeros((len(games), len(rulesets)), dtype=column.dtype)
                array[inverse, r[mine]] = column[mine]
                sums.append(array)
            played.append((games.astype(np.int64), sums))
        return cls(rulesets, players, len(every), tuple(columns), played), present

    def totals(self, variant: str, present: list[tuple[str, str]]) -> pl.DataFrame:
        """Per player and ruleset of ``present``: its sums over every game."""
        r = {name: i for i, name in enumerate(self.rulesets)}
        p = {name: i for i, name in enumerate(self.players)}
        return pl.DataFrame({
            "player": [player for _, player in present],
            "variant": [variant] * len(present),
            "ruleset": [ruleset for ruleset, _ in present],
            **{column: [int(self.played[p[player]][1][c][:, r[ruleset]].sum(dtype=np.int64))
                        for ruleset, player in present]
               for c, column in enumerate(self.columns)}},
            schema={"player": pl.String, "variant": pl.String, "ruleset": pl.String,
                    **dict.fromkeys(self.columns, pl.Int64)})

    def resampled(self, resamples: int, rng: np.random.Generator
                  ) -> Iterator[npt.NDArray[np.float64]]:
        """The sums of each resample, :data:`CHUNK` resamples at a time: arrays of shape
        (resamples, rulesets, players, columns). The products run on one thread: they are
        many and small, and a shared machine makes threads wait on each other."""
        with threadpool_limits(limits=1, user_api="blas"):
            for start in range(0, resamples, CHUNK):
                yield self._chunk(min(CHUNK, resamples - start), rng)

    def _chunk(self, b: int, rng: np.random.Generator) -> npt.NDArray[np.float64]:
        """``b`` resamples: each draws as many games as there are, with replacement.
        Weights and sums are whole numbers, so every product is exact whatever the
        blocks or the order of the additions."""
        g = self.games
        weights = _weights(rng.integers(0, g, size=(b, g)), g)
        width = len(self.columns)
        out = np.empty((b, len(self.rulesets), len(self.players), width))
        for index, (games, sums) in enumerate(self.played):
            mine = weights if games.size == g else weights[:, games]
            step = max(1, _BLOCK_VALUES // max(1, games.size * width))
            for start in range(0, len(self.rulesets), step):
                stop = min(len(self.rulesets), start + step)
                block = np.empty((games.size, stop - start, width))
                for c, column in enumerate(sums):
                    block[:, :, c] = column[:, start:stop]
                out[:, start:stop, index, :] = (mine @ block.reshape(games.size, -1)).reshape(
                    b, stop - start, width)
        return out


def _beside(beside: pl.DataFrame, rulesets: list[str], r: npt.NDArray[np.signedinteger],
            g: npt.NDArray[np.signedinteger], p: npt.NDArray[np.signedinteger],
            columns: Sequence[str]) -> dict[str, npt.NDArray[np.signedinteger]]:
    """``columns`` of ``beside`` (keyed by ``ruleset``, ``g`` and ``p``) at the keys
    (``r``, ``g``, ``p``) of the summed rows, 0 where it has no row: a left join of the
    rows to it, on sorted integer keys."""
    codes = beside.select(
        r=pl.col("ruleset").cast(pl.String).replace_strict(
            rulesets, list(range(len(rulesets))), default=-1, return_dtype=pl.Int64),
        g=pl.col("g").cast(pl.Int64), p=pl.col("p").cast(pl.Int64))
    keep = ((codes.get_column("r") >= 0) & (codes.get_column("p") >= 0)).to_numpy()
    games = int(max(g.max(initial=0), codes.get_column("g").max() or 0)) + 1
    people = int(max(p.max(initial=0), codes.get_column("p").max() or 0)) + 1

    def key(rr: npt.NDArray[np.integer], gg: npt.NDArray[np.integer],
            pp: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
        return (rr.astype(np.int64) * games + gg) * people + pp

    theirs = key(*(codes.get_column(c).to_numpy()[keep] for c in ("r", "g", "p")))
    order = np.argsort(theirs, kind="stable")
    theirs = theirs[order]
    mine = key(r, g, p)
    at = np.minimum(np.searchsorted(theirs, mine), max(0, theirs.size - 1))
    found = (theirs[at] == mine) if theirs.size else np.zeros(mine.size, dtype=bool)
    out = {}
    for column in columns:
        values = beside.get_column(column).to_numpy()[keep][order]
        out[column] = _narrowed(np.where(found, values[at] if values.size else 0, 0)
                                .astype(np.int64))
    return out


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
_GROUPS = 2_000_000
"""Games x players x rulesets summed by one query at most: DuckDB holds its groups within
the memory the commands allow it."""

_HANDS_SEEN = """
SELECT DISTINCT r.{hand}, r.session_id::VARCHAR AS session_id, r.variant::VARCHAR AS variant
FROM ({source}) r
"""

_NAMES = """
SELECT DISTINCT variant::VARCHAR AS variant, ruleset::VARCHAR AS ruleset,
       player::VARCHAR AS player
FROM ({source})
"""

_CODED_SUMS = """
SELECT (list_position([{rulesets}], r.ruleset::VARCHAR) - 1)::BIGINT AS r, c.g,
       (list_position([{players}], r.player::VARCHAR) - 1)::BIGINT AS p,
       {sums}
FROM ({source}) r JOIN {codes} c ON c.{hand} = r.{hand}
WHERE r.variant::VARCHAR = '{variant}' AND r.ruleset::VARCHAR IN ({rulesets})
GROUP BY ALL
"""


def _listed(names: Sequence[str]) -> str:
    return ", ".join("'" + name.replace("'", "''") + "'" for name in names)


@dataclass(frozen=True)
class _Coded:
    """The rows' games as integer codes: ``codes`` gives every hand its game's code
    ``g``, per variant the games of ``games`` numbered by session and game (as
    :meth:`_Layout.of` numbers a per-game frame's, among which are the games with rows);
    ``names`` the variant, ruleset and player of every group of rows."""

    hand: str
    codes: pl.DataFrame
    every: dict[str, pl.DataFrame]
    names: pl.DataFrame

    @classmethod
    def of(cls, rows: stats.Rows, games: pl.DataFrame) -> _Coded:
        hand = "hand_key" if "hand_key" in rows.columns else "hand_id"
        if not {"session_id", "variant"} <= set(games.columns):
            games = games.select(hand, "game").join(rows.query(_HANDS_SEEN, hand=hand), on=hand)
        games = games.with_columns(pl.col("session_id", "variant").cast(pl.String))
        names = rows.query(_NAMES)
        every: dict[str, pl.DataFrame] = {}
        codes: list[pl.DataFrame] = []
        for variant in sorted(names.get_column("variant").unique().to_list()):
            mine = games.filter(pl.col("variant") == variant)
            every[variant] = mine.select("session_id", "game").unique().sort(
                "session_id", "game").with_row_index("g").with_columns(pl.col("g").cast(pl.Int64))
            codes.append(mine.join(every[variant], on=["session_id", "game"]).select(hand, "g"))
        return cls(hand, pl.concat(codes) if codes else games.select(
            hand, g=pl.lit(0, pl.Int64)), every, names)

    def named(self, variant: str, key: str) -> list[str]:
        """The variant's rulesets or players (``key``), in order."""
        return sorted(self.names.filter(pl.col("variant") == variant).get_column(
            key).unique().to_list())

    def coded(self, variant: str, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame``'s rows of ``variant`` keyed by game and player code (``g``, ``p``)
        instead of ``session_id``, ``game`` and ``player``."""
        players = self.named(variant, "player")
        every = self.every[variant].with_columns(
            pl.col("session_id").cast(frame.schema["session_id"]))
        return frame.lazy().filter(pl.col("variant") == variant).join(
            every.lazy(), on=["session_id", "game"]).with_columns(
            p=pl.col("player").cast(pl.String).replace_strict(
                players, list(range(len(players))), default=-1, return_dtype=pl.Int64)).drop(
            "session_id", "game", "player", "variant").collect()

    def sums(self, rows: stats.Rows, variant: str, rulesets: Sequence[str],
             players: Sequence[str], columns: Sequence[str]) -> pl.DataFrame:
        """Per ruleset, game and player code (``r``, ``g``, ``p``: places in ``rulesets``,
        codes, places in ``players``): ``columns`` summed over the rows."""
        with rows.registered(_CODES_TABLE, self.codes):
            return rows.query(_CODED_SUMS, codes=_CODES_TABLE, hand=self.hand,
                              variant=variant.replace("'", "''"),
                              rulesets=_listed(rulesets), players=_listed(players),
                              sums=_sums_sql(columns))


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


def compare_stored(rows: stats.Rows, games: pl.DataFrame, *, resamples: int = RESAMPLES,
                   seed: int = SEED) -> Comparison:
    """:func:`compare` of ``game_sums(rows, games)``, the same bytes, without the per-game
    frame: the point estimates from :func:`ofcstats.stats.sums`, and each variant's
    arrays summed by DuckDB one ruleset at a time, keyed by integer codes, holding only
    the columns ``compare`` resamples (memory: per variant, games x players x rulesets x
    those columns, in the narrowest integer type, rather than every sum of every row of
    the per-game frame)."""
    summed = stats.sums(rows)
    what_if = ["what_if"] if "what_if" in summed.columns else []
    table = stats.ruleset_table(summed.select(*stats.KEYS, *what_if, *SUM_COLUMNS),
                                stats.hands_per_ruleset(rows))
    per_hand = stats.per_player_hand(rows)
    coded = _Coded.of(per_hand, games)
    layouts = ((variant, _Layout.stored(per_hand, coded, variant, _COMPARE_COLUMNS)[0])
               for variant in sorted(table.get_column("variant").unique().to_list()))
    return _compared(table, layouts, resamples, seed)


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
    per-game frame (as :func:`compare_stored` does for :func:`compare`)."""
    per_hand = stats.per_player_hand(rows)
    coded = _Coded.of(per_hand, games)
    if money is not None:
        money = money.select(
            "variant", "ruleset", "session_id", "game", "player",
            money_millionths=(pl.col("money") * _MONEY_SCALE).round(0).cast(pl.Int64),
            games=pl.lit(1, dtype=pl.Int8))
    observed: list[pl.DataFrame] = []

    def layouts() -> Iterator[tuple[str, _Layout]]:
        for variant in sorted(coded.every):
            beside = coded.coded(variant, money) if money is not None else pl.DataFrame(
                schema={"ruleset": pl.String, "g": pl.Int64, "p": pl.Int64,
                        "money_millionths": pl.Int64, "games": pl.Int64})
            layout, present = _Layout.stored(per_hand, coded, variant, _PLAYER_COLUMNS,
                                             beside)
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
