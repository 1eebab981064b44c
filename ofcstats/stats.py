"""Statistics over scored hands: per player, variant and ruleset; per variant and ruleset;
and log checks. No figure pools two variants.

Input is the *scored frame*: one row per ruleset, hand and seat, the result columns
of :mod:`ofcstats.score` after :func:`ofcstats.session.apply_repeat_limits`, with the
hand's ``session_id``, ``variant`` and ``n_seats`` and the seat's ``fantasyland``
flag. Everything is a Polars aggregation; the bootstrap resamples sessions with one
matrix product per player and variant.

Definitions (they are printed in the report's methodology section too):

- *SD* is the sample standard deviation of points per hand; the 95% interval of a
  player's mean points per hand resamples whole games, as every other interval (the
  hands of one game move together: fantasyland, the same opponents).
- *Hands for ±1*: how many hands the normal 95% interval needs to be ±1 point per
  hand wide: ``(1.96 SD)²``.
- *Fantasyland entry rate*: entries earned per hand played outside fantasyland in a
  variant that has it; *stay rate*: stays earned per hand played in fantasyland.
- *Scoop rate*: matchups (seat against one opponent) won 3-0, per matchup; *row win
  rate*: the same per row.
- *Royalty share*: of all points that changed hands, the part paid as royalties,
  ``Σ|royalty points| / (Σ|royalty points| + Σ|other points|)``.
- *Skill signal*: the spread (SD) of players' mean points per hand, less the part the
  players' luck puts in it, divided by the pooled SD within players: the square root of
  (the variance of the players' means minus the variance their means would have if no
  player were better, estimated from the same games), 0 where the luck explains it all.
  *Hands to tell players apart* ``= (1.96 / signal)²``: after that many hands, a player
  truly one spread better than the table's average has a 95% interval of their mean
  that excludes the average about half the time. A higher signal means skill shows in
  fewer hands. Rulesets are ranked within each variant by the signal rounded to nine
  decimals, ties broken by the ruleset's name.
- *Money*: settled per game (one orbit of the button plus its fantasyland hands; a
  timeout ends it early, and a change of variant or stakes starts a new game) and
  ruleset over every seat at the table: the loss cap limits what a player loses in the
  game, and what a capped loser does not pay is taken from the game's winners in
  proportion to their winnings. The point value is the ruleset's where its file sets
  one, else the one logged with the hand, else 1. Players of different units settle
  each pair at the smaller unit; a player's cap is the cap times its unit. Player,
  session and time filters pick from the settled games (a game belongs to the time it
  started).
- *What-if*: a ruleset applied to hands of a variant it is not played under, at the
  user's request; such rows are marked and never mixed with the others.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Protocol

import duckdb
import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa

from ofcstats.store import BATCH_ROWS
from ofcstats.variants import Variant

Z95 = 1.959963984540054
MIN_HANDS_FOR_SKILL = 30

KEYS = ("player", "variant", "ruleset")
"""A player's statistics are per variant and ruleset: no figure pools two variants."""
DECIMALS = 9
"""Statistics are rounded to this many decimals: the same bytes whatever the thread count
(sums of points are exact integers; only the last bits of a few float steps could vary)."""


def _rate(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    return pl.when(denominator > 0).then(numerator / denominator).otherwise(None)


def _stable(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.col(pl.Float64).round(DECIMALS))


# Every statistic comes from exact integer sums per player, variant and ruleset (and per
# session for the bootstrap): DuckDB adds them up over the store's rows, or over a frame,
# and the few rows that come back are all the memory a statistic needs.
_THIRTEEN = ", ".join(f"'{v.value}'" for v in Variant if v.thirteen_card)

ROW_VALUES = {
    "hands": "1",
    "total": "{r}points",
    "squares": "{r}points::BIGINT * {r}points",
    "abs_points": "abs({r}points)",
    "abs_royalty": "abs({r}royalty_points)",
    "abs_other": "abs({r}points - {r}royalty_points)",
    "fouls": "({r}fouled IS TRUE)::INTEGER",
    "eligible": f"((NOT {{r}}fantasyland AND {{r}}variant::VARCHAR NOT IN ({_THIRTEEN}))"
                " IS TRUE)::INTEGER",
    "entered": "({r}fantasyland_entered IS TRUE)::INTEGER",
    "stayed": "({r}fantasyland_stayed IS TRUE)::INTEGER",
    "fantasyland_hands": "({r}fantasyland IS TRUE)::INTEGER",
    "royalty_top": "coalesce({r}royalty_top, 0)",
    "royalty_middle": "coalesce({r}royalty_middle, 0)",
    "royalty_bottom": "coalesce({r}royalty_bottom, 0)",
    "royalty_points": "coalesce({r}royalty_points, 0)",
    "opponents": "coalesce({r}n_seats - 1, 0)",
    "scoops": "coalesce({r}scoops, 0)",
    "scooped": "coalesce({r}scooped, 0)",
    "wins_top": "coalesce({r}wins_top, 0)",
    "wins_middle": "coalesce({r}wins_middle, 0)",
    "wins_bottom": "coalesce({r}wins_bottom, 0)",
}
"""What each row adds to each sum every statistic comes from, as DuckDB reads it off a
scored row (``{r}``: the rows' name and a dot, or nothing): the one definition of the
sums (:func:`sums`, and the per-game sums of :mod:`ofcstats.uncertainty`)."""


def row_value(name: str, alias: str = "") -> str:
    """:data:`ROW_VALUES`' ``name`` off the rows called ``alias`` (none: unqualified)."""
    return ROW_VALUES[name].format(r=f"{alias}." if alias else "")


def sums_sql(alias: str = "") -> str:
    """Every sum of :data:`ROW_VALUES` over a group of rows (called ``alias``), as
    ``<expression> AS <name>`` lines of a SELECT."""
    return ",\n       ".join(f"coalesce(sum({row_value(name, alias)}), 0)::BIGINT AS {name}"
                              for name in ROW_VALUES)


_SUMS = """
SELECT player::VARCHAR AS player, variant::VARCHAR AS variant, ruleset::VARCHAR AS ruleset,
       {what_if}
       {sums}
FROM ({source})
GROUP BY ALL
"""
_SESSIONS = """
SELECT player::VARCHAR AS player, variant::VARCHAR AS variant, ruleset::VARCHAR AS ruleset,
       (count(DISTINCT session_id) + bool_or(session_id IS NULL)::INTEGER)::UINTEGER
           AS sessions
FROM ({source})
GROUP BY ALL
"""
_HANDS = """
SELECT variant::VARCHAR AS variant, ruleset::VARCHAR AS ruleset,
       count(DISTINCT {hand}) AS hands
FROM ({source})
GROUP BY ALL
"""


class Database(Protocol):
    """What :class:`Rows` reads through: SQL text in, frames out (a
    :class:`~ofcstats.store.Store`, or a frame's own in-memory DuckDB)."""

    def query(self, sql: str, params: Sequence[object] = ()) -> pl.DataFrame: ...

    def registered(self, name: str, data: object
                   ) -> AbstractContextManager[None]: ...

    def batches(self, sql: str, params: Sequence[object] = (), rows: int = BATCH_ROWS
                ) -> Iterator[pa.RecordBatch]: ...

    def scored_names(self) -> pl.DataFrame | None: ...


@dataclass(frozen=True)
class Rows:
    """Scored rows to aggregate, as DuckDB reads them: ``source`` is a query (a view
    with its filters, or a registered frame) on ``db``, ``params`` its parameters."""

    db: Database
    source: str
    params: Sequence[object] = ()

    @property
    def columns(self) -> list[str]:
        """The columns the rows have."""
        return self.db.query(f"SELECT * FROM ({self.source}) LIMIT 0", self.params).columns

    def query(self, template: str, **fields: str) -> pl.DataFrame:
        """``template`` filled with the source (and ``fields``), run, as a frame."""
        return self.db.query(template.format(source=self.source, **fields), self.params)

    def registered(self, name: str, data: object) -> AbstractContextManager[None]:
        """``data`` (a frame) readable by queries as ``name`` beside the rows, for the block."""
        return self.db.registered(name, data)

    def scored_names(self) -> pl.DataFrame | None:
        """Every ``variant``, ``ruleset`` and ``player`` the rows can have, as the database
        knows them without reading the rows (a superset of theirs), or None."""
        return self.db.scored_names()

    def batches(self, template: str, rows: int = BATCH_ROWS, **fields: str
                ) -> Iterator[pa.RecordBatch]:
        """``template`` filled as :meth:`query` fills it, its rows as Arrow batches of
        ``rows`` rows, one at a time: rows too many to hold at once."""
        return self.db.batches(template.format(source=self.source, **fields), self.params,
                               rows)


class _InMemory:
    """A frame's own DuckDB in memory, as :class:`Database`."""

    def __init__(self) -> None:
        self.con = duckdb.connect()

    def query(self, sql: str, params: Sequence[object] = ()) -> pl.DataFrame:
        return self.con.sql(sql, params=list(params)).pl()

    def batches(self, sql: str, params: Sequence[object] = (), rows: int = BATCH_ROWS
                ) -> Iterator[pa.RecordBatch]:
        yield from self.con.sql(sql, params=list(params)).to_arrow_reader(rows)

    def scored_names(self) -> pl.DataFrame | None:
        return None

    @contextmanager
    def registered(self, name: str, data: object) -> Iterator[None]:
        self.con.register(name, data)
        try:
            yield
        finally:
            self.con.unregister(name)


@contextmanager
def frame_rows(scored: pl.LazyFrame | pl.DataFrame) -> Iterator[Rows]:
    """A scored frame as :class:`Rows`, for the same queries as the store's rows."""
    db = _InMemory()
    try:
        db.con.register("scored_rows", scored.lazy().collect())
        yield Rows(db, "SELECT * FROM scored_rows")
    finally:
        db.con.close()


# A criss-cross player holds two boards (two rows) in a hand: per hand, their sums. Its
# matchups depend on how the ruleset has the boards meet, so rates per matchup are not
# given for it (no opponents counted).
_PER_PLAYER = """
SELECT * FROM ({source}) WHERE variant::VARCHAR <> '{criss_cross}'
UNION ALL BY NAME
SELECT player, variant, ruleset, session_id, {hand}, {what_if}
       sum(points) AS points, sum(royalty_points) AS royalty_points,
       bool_or(fouled) AS fouled, bool_or(fantasyland) AS fantasyland,
       bool_or(fantasyland_entered) AS fantasyland_entered,
       bool_or(fantasyland_stayed) AS fantasyland_stayed,
       sum(royalty_top) AS royalty_top, sum(royalty_middle) AS royalty_middle,
       sum(royalty_bottom) AS royalty_bottom, NULL::INTEGER AS n_seats,
       sum(scoops) AS scoops, sum(scooped) AS scooped, sum(wins_top) AS wins_top,
       sum(wins_middle) AS wins_middle, sum(wins_bottom) AS wins_bottom
FROM ({source}) WHERE variant::VARCHAR = '{criss_cross}'
GROUP BY ruleset, variant, player, session_id, {hand}
"""


def per_player_hand(rows: Rows) -> Rows:
    """``rows`` with a criss-cross player's two boards in a hand as one row (their sums;
    fouled when either board is): statistics count a hand once per player."""
    found = rows.db.query(f"SELECT 1 FROM ({rows.source}) WHERE variant::VARCHAR = "
                          f"'{Variant.CRISS_CROSS.value}' LIMIT 1", rows.params)
    if found.is_empty():
        return rows
    columns = rows.columns
    hand = "hand_key" if "hand_key" in columns else "hand_id"
    what_if = "bool_or(what_if) AS what_if," if "what_if" in columns else ""
    source = _PER_PLAYER.format(source=rows.source, criss_cross=Variant.CRISS_CROSS.value,
                                what_if=what_if, hand=hand)
    return Rows(rows.db, source, [*rows.params, *rows.params])


def sums(rows: Rows) -> pl.DataFrame:
    """Per player, variant and ruleset: the integer sums every statistic comes from."""
    rows = per_player_hand(rows)
    what_if = "bool_or(what_if) AS what_if," if "what_if" in rows.columns else ""
    return rows.query(_SUMS, what_if=what_if, sums=sums_sql()).sort(*KEYS)


def session_counts(rows: Rows) -> pl.DataFrame:
    """Per player, variant and ruleset: the sessions played (hands logged with no session
    are one session), counted in the database: a hundred thousand sittings of three hands
    are never held a row each."""
    return per_player_hand(rows).query(_SESSIONS).sort(*KEYS)


def hands_per_ruleset(rows: Rows) -> pl.DataFrame:
    """Per variant and ruleset: how many hands (not seats) were scored."""
    hand = "hand_key" if "hand_key" in rows.columns else "hand_id"
    return rows.query(_HANDS, hand=hand)


def _mean_of(column: str) -> pl.Expr:
    """The mean per hand of a column summed in :func:`sums`."""
    return pl.col(column) / pl.col("hands")


def _sd_of(n: pl.Expr, total: pl.Expr, squares: pl.Expr) -> pl.Expr:
    """Sample SD from exact integer sums (null for a single value)."""
    n = n.cast(pl.Float64)
    total = total.cast(pl.Float64)
    variance = (squares.cast(pl.Float64) - total * total / n) / (n - 1)
    return pl.when(n > 1).then(variance.clip(lower_bound=0).sqrt()).otherwise(None)


def player_stats(scored: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """Per player, variant and ruleset: results, spread, a normal interval of the mean
    (hands taken as independent: the commands give the games' bootstrap instead,
    :func:`ofcstats.uncertainty.player_intervals`), rates and style."""
    with frame_rows(scored) as rows:
        return player_stats_of(rows)


def player_stats_of(rows: Rows) -> pl.DataFrame:
    """:func:`player_stats` of :class:`Rows` (the store's, or a frame's)."""
    return player_table(sums(rows), session_counts(rows))


def player_table(summed: pl.DataFrame, sessions: pl.DataFrame) -> pl.DataFrame:
    """:func:`player_stats` from :func:`sums` and :func:`session_counts`."""
    opponents = pl.col("opponents")
    table = summed.join(sessions, on=list(KEYS), how="left").select(
        *KEYS,
        *(["what_if"] if "what_if" in summed.columns else []),
        pl.col("hands").cast(pl.UInt32),
        pl.col("sessions").cast(pl.UInt32),
        pl.col("total"),
        mean=_mean_of("total"),
        sd=_sd_of(pl.col("hands"), pl.col("total"), pl.col("squares")),
        foul_rate=_mean_of("fouls"),
        fantasyland_entry_rate=_rate(pl.col("entered"), pl.col("eligible")),
        fantasyland_stay_rate=_rate(pl.col("stayed"), pl.col("fantasyland_hands")),
        fantasyland_hands=pl.col("fantasyland_hands").cast(pl.UInt32),
        royalties_top=_mean_of("royalty_top"),
        royalties_middle=_mean_of("royalty_middle"),
        royalties_bottom=_mean_of("royalty_bottom"),
        royalty_points=_mean_of("royalty_points"),
        scoop_rate=_rate(pl.col("scoops"), opponents),
        scooped_rate=_rate(pl.col("scooped"), opponents),
        win_rate_top=_rate(pl.col("wins_top"), opponents),
        win_rate_middle=_rate(pl.col("wins_middle"), opponents),
        win_rate_bottom=_rate(pl.col("wins_bottom"), opponents),
    ).with_columns(
        ci_low=pl.col("mean") - Z95 * pl.col("sd") / pl.col("hands").sqrt(),
        ci_high=pl.col("mean") + Z95 * pl.col("sd") / pl.col("hands").sqrt(),
        hands_for_1=(Z95 * pl.col("sd")).pow(2).ceil().cast(pl.Int64),
    )
    return _stable(table.sort(*KEYS))


def ruleset_stats(scored: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """Per variant and ruleset: volatility, royalty share, foul and fantasyland rates, and
    the skill signal, ranked within each variant (``skill_rank``: highest signal first,
    rounded to :data:`DECIMALS`, ties by ruleset name)."""
    with frame_rows(scored) as rows:
        return ruleset_stats_of(rows)


def ruleset_stats_of(rows: Rows) -> pl.DataFrame:
    """:func:`ruleset_stats` of :class:`Rows` (the store's, or a frame's). Without the
    games, the noise in the spread of the players' means (:func:`skill_noise`) is taken
    with each hand as its own game."""
    rows = per_player_hand(rows)
    hand = "hand_key" if "hand_key" in rows.columns else "hand_id"
    per_hand = rows.query(_PER_HAND, hand=hand)
    return ruleset_table(sums(rows), hands_per_ruleset(rows),
                         skill_noise_of(per_hand, (hand,)))


_PER_HAND = """
SELECT variant::VARCHAR AS variant, ruleset::VARCHAR AS ruleset, {hand},
       player::VARCHAR AS player, count(*)::BIGINT AS hands,
       coalesce(sum(points), 0)::BIGINT AS total
FROM ({source})
GROUP BY ALL
"""


def skill_noise(game: npt.NDArray[np.int64], player: npt.NDArray[np.int64],
                hands: npt.NDArray[np.integer], total: npt.NDArray[np.integer]
                ) -> npt.NDArray[np.float64]:
    """How much the players' luck adds to the spread of their means, per ruleset: the
    expected sample variance of the players' mean points per hand when every player's
    true mean is the same, estimated from the games themselves.

    The rows are pairs of a game and a player (``game``, ``player``: codes from 0) with
    that player's ``hands`` and ``total`` points in that game, per ruleset (pairs x
    rulesets). Only players with :data:`MIN_HANDS_FOR_SKILL` hands count, as in the
    skill signal. With ``N_i`` a player's hands, ``m_i`` their mean and
    ``u_ig = (total_ig - m_i hands_ig) / N_i`` (a game's part in the error of their
    mean), the variance of player ``i``'s mean is ``Σ_g u_ig²`` and the covariance of two
    players' means ``Σ_g u_ig u_jg`` (the hands of one game move together; players at
    one table win what the others lose): the noise in the sample variance of ``k``
    means is ``(Σ_i Σ_g u_ig² - Σ_g (Σ_i u_ig)² / k) / (k - 1)``.

    That times ``G / (G - 1)`` for ``G`` games (the usual correction of a variance
    estimated by clusters) is the noise; NaN where fewer than two players count."""
    rulesets = hands.shape[1] if hands.ndim == 2 else 0
    estimate = np.full(rulesets, np.nan)
    if not len(player):
        return estimate
    # In one order (by game, then player), whatever order the pairs came in: the same sums.
    order = np.lexsort((player, game))
    game, player, hands, total = game[order], player[order], hands[order], total[order]
    players = int(player.max()) + 1
    games = int(game.max()) + 1
    for r in range(rulesets):
        h = hands[:, r].astype(np.float64)
        t = total[:, r].astype(np.float64)
        n = np.bincount(player, h, minlength=players)
        kept = n >= MIN_HANDS_FOR_SKILL
        k = int(kept.sum())
        mine = kept[player] & (h > 0)
        counted = np.unique(game[mine]).size
        if k < 2 or counted < 2:
            continue
        mean = np.bincount(player, t, minlength=players) / np.where(kept, n, 1)
        u = (t[mine] - mean[player[mine]] * h[mine]) / n[player[mine]]
        within = float(np.sum(u * u))
        across = float(np.sum(np.bincount(game[mine], u, minlength=games) ** 2))
        estimate[r] = max(0.0, (within - across / k) / (k - 1)) * counted / (counted - 1)
    return estimate


def skill_noise_of(per_game: pl.DataFrame, game: Sequence[str]) -> pl.DataFrame:
    """:func:`skill_noise` of a frame with a row per variant, ruleset, game (the columns
    ``game``) and player, with its ``hands`` and ``total``: per variant and ruleset, the
    ``noise``."""
    found: list[pl.DataFrame] = []
    for (variant,), mine in per_game.sort("variant").group_by("variant", maintain_order=True):
        rulesets = sorted(mine.get_column("ruleset").unique().to_list())
        games = mine.select(*game).unique().sort(*game).with_row_index("g")
        players = mine.select("player").unique().sort("player").with_row_index("p")
        keyed = mine.join(games, on=list(game)).join(players, on="player").with_columns(
            pl.col("g", "p").cast(pl.Int64))
        pairs = keyed.select("g", "p").unique().sort("g", "p").with_row_index("pair")
        keyed = keyed.join(pairs, on=["g", "p"])
        sums = {c: np.zeros((pairs.height, len(rulesets)), dtype=np.int64)
                for c in ("hands", "total")}
        at = keyed.get_column("pair").to_numpy()
        column = keyed.get_column("ruleset").replace_strict(
            rulesets, list(range(len(rulesets))), return_dtype=pl.Int64).to_numpy()
        for c, values in sums.items():
            values[at, column] = keyed.get_column(c).to_numpy()
        estimate = skill_noise(pairs.get_column("g").to_numpy(),
                               pairs.get_column("p").to_numpy(), sums["hands"], sums["total"])
        found.append(pl.DataFrame({"variant": [str(variant)] * len(rulesets),
                                   "ruleset": rulesets, "noise": estimate}))
    return pl.concat(found) if found else pl.DataFrame(schema={
        "variant": pl.String, "ruleset": pl.String, "noise": pl.Float64})


def ruleset_table(summed: pl.DataFrame, hands: pl.DataFrame, noise: pl.DataFrame
                  ) -> pl.DataFrame:
    """:func:`ruleset_stats` from :func:`sums`, :func:`hands_per_ruleset` and the noise in
    the spread of the players' means (:func:`skill_noise_of`)."""
    added = [pl.col(c).sum() for c in (
        "hands", "total", "squares", "abs_points", "abs_royalty", "abs_other", "fouls",
        "eligible", "entered")]
    overall = summed.group_by("variant", "ruleset").agg(
        *([pl.col("what_if").any()] if "what_if" in summed.columns else []), *added,
    ).join(hands.rename({"hands": "distinct_hands"}), on=["variant", "ruleset"]).select(
        "variant", "ruleset",
        *(["what_if"] if "what_if" in summed.columns else []),
        hands=pl.col("distinct_hands").cast(pl.UInt32),
        seat_hands=pl.col("hands").cast(pl.UInt32),
        sd=_sd_of(pl.col("hands"), pl.col("total"), pl.col("squares")),
        mean_abs_points=_mean_of("abs_points"),
        royalty_share=_rate(pl.col("abs_royalty"),
                            pl.col("abs_royalty") + pl.col("abs_other")),
        foul_rate=_mean_of("fouls"),
        fantasyland_entry_rate=_rate(pl.col("entered"), pl.col("eligible")),
    )
    # Player means from exact sums, in a fixed order: the spread and the pooled SD are
    # then the same whatever the thread count.
    players = summed.select(
        "variant", "ruleset", "player",
        n=pl.col("hands"), mean=_mean_of("total"),
        within=(pl.col("squares").cast(pl.Float64)
                - pl.col("total").cast(pl.Float64).pow(2) / pl.col("hands")),
    ).filter(pl.col("n") >= MIN_HANDS_FOR_SKILL).sort("variant", "ruleset", "player")
    skill = players.group_by("variant", "ruleset", maintain_order=True).agg(
        players=pl.len(),
        spread=pl.col("mean").std(),
        pooled_sd=(pl.col("within").sum() / (pl.col("n") - 1).sum()).sqrt(),
    ).join(noise.select("variant", "ruleset", "noise"), on=["variant", "ruleset"],
           how="left").with_columns(
        # The spread of the means less what the players' luck puts in it, floored at 0.
        skill_signal=_rate((pl.col("spread").pow(2) - pl.col("noise").fill_nan(None)
                            .fill_null(0.0)).clip(lower_bound=0).sqrt(),
                           pl.col("pooled_sd")),
    ).drop("noise").with_columns(
        # No signal at all (every player's mean equal): never told apart.
        hands_to_tell_apart=pl.when(pl.col("skill_signal") > 0).then(
            (Z95 / pl.col("skill_signal")).pow(2).ceil()).cast(pl.Int64),
    )
    joined = _stable(overall.join(skill, on=["variant", "ruleset"], how="left"))
    ranked = joined.sort(["variant", "skill_signal", "ruleset"],
                         descending=[False, True, False], nulls_last=True)
    return ranked.with_columns(
        skill_rank=pl.when(pl.col("skill_signal").is_not_null())
        .then(pl.int_range(1, pl.len() + 1).over("variant")).cast(pl.Int32),
    ).select("variant", "skill_rank", pl.exclude("variant", "skill_rank"))


_DIFFERENCES = """
SELECT hand_id::VARCHAR AS hand_id, session_id::VARCHAR AS session_id,
       variant::VARCHAR AS variant, seat, player::VARCHAR AS player,
       ruleset::VARCHAR AS ruleset, reported_points AS reported, points AS rescored,
       points - reported_points AS difference
FROM ({source})
WHERE reported_points IS NOT NULL AND ruleset::VARCHAR = played_ruleset::VARCHAR
  AND reported_points <> points
ORDER BY session_id, hand_id, seat
"""


def reported_differences(scored: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """Seats whose logged ``reported_points`` differ from the re-score under the played
    ruleset: a site's scoring quirk, or a logging error."""
    with frame_rows(scored) as rows:
        return reported_differences_of(rows)


def reported_differences_of(rows: Rows) -> pl.DataFrame:
    """:func:`reported_differences` of :class:`Rows` (the store's, or a frame's)."""
    return rows.query(_DIFFERENCES)
