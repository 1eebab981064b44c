"""What the money and player questions read: hands by game, games settled, players' hands.

The SQL of :mod:`ofcstats.analysis` lives here; analysis hands over filters and frames
and gets frames back. The settlement itself (the loss cap over the table) is
:data:`ofcstats.session.SETTLE_SQL`, applied to the games summed here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import polars as pl

from ofcstats import session
from ofcstats.store.results import STAKE, Filters

if TYPE_CHECKING:
    from ofcstats.store import Store

PER_GAME = """
WITH games AS (
    -- Each game as the table played it (a change of variant or logged stake starts one).
    SELECT session_id, game, any_value(variant) AS variant,
           any_value(point_value) AS logged_value, bool_and(point_value IS NOT NULL) AS logged,
           bool_and(point_value IS NULL) AS unlogged, min(played_at) AS started_at
    FROM money_hands
    GROUP BY ALL
), points AS (
    -- Summed by DuckDB: a row per ruleset, game and player.
    SELECT r.name AS ruleset, g.session_id, g.game, s.player,
           sum(x.points)::BIGINT AS points, count(*)::BIGINT AS hands,
           -- per-player units: the points weighted by the unit of each pair (null: the
           -- points), and the player's unit (null: 1), its largest in the game
           sum(coalesce(x.unit_points, x.points))::DOUBLE AS unit_points,
           max(coalesce(s.unit, 1.0))::DOUBLE AS unit
    FROM results x
    JOIN rulesets r USING (ruleset_id)
    JOIN money_rulesets m ON m.ruleset = r.name
    JOIN money_hands g USING (hand_key)
    JOIN seats s USING (hand_key, seat)
    GROUP BY ALL
)
SELECT p.session_id, p.game, p.player, p.points, p.unit_points, p.unit, p.hands, g.variant,
       -- the stake (docs/rules.md §5): the ruleset's, else the logged one, else 1
       coalesce(m.stake, g.logged_value, 1.0)::DOUBLE AS point_value, g.started_at,
       NOT list_contains(m.variants, g.variant) AS what_if, p.ruleset, m.loss_cap,
       CASE WHEN m.fixed THEN 'ruleset' WHEN g.logged THEN 'logged'
            WHEN g.unlogged THEN 'default' ELSE 'logged, else default' END AS stake_source
FROM points p
JOIN money_rulesets m USING (ruleset)
JOIN games g ON g.session_id = p.session_id AND g.game = p.game
"""
"""Per ruleset, game and player of the registered ``money_hands`` (hands by game) and
``money_rulesets`` (each ruleset's stake, loss cap and variants): points, hands, stake."""

_MONEY = """
SELECT variant, ruleset, player,
       -- in 128-bit integers: no sum of games at the largest stakes (ofcstats.stakes) overflows
       sum(round_even(money * {scale}, 0)::HUGEINT) / {scale} AS money,
       count(*)::UINTEGER AS games, count(*) FILTER (capped) AS capped_games,
       string_agg(DISTINCT stake_source, '; ' ORDER BY stake_source) AS stake
FROM settled
GROUP BY ALL
ORDER BY variant, ruleset, player
"""


def game_hands(store: Store, filters: Filters) -> pl.DataFrame:
    """Every hand of the sessions the filters keep (whole sessions, every variant: play
    order and games are the whole table's; players, variants and times are picked
    afterwards), with its logged point value and stake (:data:`STAKE`) and whether a
    seat played it in fantasyland or timed out."""
    where, params = filters.sql({"session_id": "h.session_id"}, times=None)
    return store.con.sql(f"""
        SELECT h.hand_key, h.session_id, h.played_at, h.n_seats, h.variant, h.point_value,
               {STAKE},
               bool_or(s.fantasyland) AS fantasyland_hand,
               bool_or(coalesce(s.timed_out, false)) AS timed_out_hand
        FROM hands h JOIN seats s USING (hand_key)
        WHERE {where}
        GROUP BY ALL
    """, params=params).pl()


@contextmanager
def settled_games(store: Store, hands: pl.DataFrame, terms: pl.DataFrame, after: Filters
                  ) -> Iterator[tuple[str, list[object]]]:
    """A query of the settled games and its parameters, while ``hands`` (hand, session,
    time, variant, logged stake, its games) and ``terms`` (each ruleset's stake, loss cap
    and variants) are registered with the store's connection; ``after`` picks from the
    settled games: players, variants, rulesets, and the games that started in the
    window."""
    con = store.con
    con.register("money_hands", hands)
    con.register("money_rulesets", terms)
    try:
        settled = session.SETTLE_SQL.format(source=PER_GAME)
        where, params = after.sql({"player": "player", "ruleset": "ruleset",
                                   "variant": "variant"}, times="started_at")
        yield f"SELECT * FROM ({settled}) WHERE {where}", params
    finally:
        con.unregister("money_hands")
        con.unregister("money_rulesets")


def game_rows(store: Store, query: str, params: list[object]) -> pl.DataFrame:
    """The settled games of ``query`` in variant, ruleset, session, game, player order."""
    return store.con.sql(f"SELECT * FROM ({query}) ORDER BY variant, ruleset, "
                         "session_id, game, player", params=params).pl()


def money_rows(store: Store, query: str, params: list[object], decimals: int
               ) -> pl.DataFrame:
    """The settled games of ``query`` summed per variant, ruleset and player, money in
    whole units of ``10 ** -decimals``."""
    return store.con.sql(f"WITH settled AS ({query}) "
                         + _MONEY.format(scale=10 ** decimals), params=params).pl()


_BATCH = 1_000_000
"""Settled games read at a time by :func:`money_and_games`."""


def money_and_games(store: Store, query: str, params: list[object], decimals: int,
                    columns: Sequence[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`money_rows` and ``columns`` of the settled games of ``query`` (unsorted,
    text as categoricals: millions of rows at a million hands), settled once: the games
    are read a batch at a time, and summed from what was read."""
    text = ("variant", "ruleset", "session_id", "player", "stake_source")
    reader = store.con.sql(f"SELECT {', '.join(columns)}, capped, stake_source "
                           f"FROM ({query})", params=params).to_arrow_reader(_BATCH)
    parts = [pl.DataFrame(batch).with_columns(pl.col(*text).cast(pl.Categorical))
             for batch in reader]
    games = pl.concat(parts) if parts else pl.DataFrame(schema={
        **dict.fromkeys(text, pl.Categorical), "game": pl.Int64, "money": pl.Float64,
        "capped": pl.Boolean})
    del parts
    store.con.register("money_settled", games)
    try:
        summed = store.con.sql(
            "WITH settled AS (SELECT variant::VARCHAR AS variant, ruleset::VARCHAR AS ruleset, "
            "player::VARCHAR AS player, money, capped, stake_source::VARCHAR AS stake_source "
            "FROM money_settled) " + _MONEY.format(scale=10 ** decimals)).pl()
    finally:
        store.con.unregister("money_settled")
    return summed, games.drop("capped", "stake_source")


def seated_players(store: Store, filters: Filters) -> pl.DataFrame:
    """(hand key, player, variant) of every seat the filters keep."""
    where, params = filters.sql({"session_id": "h.session_id", "variant": "h.variant",
                                 "player": "s.player"}, times="h.played_at")
    return store.con.sql(f"""
        SELECT s.hand_key, s.player, h.variant FROM seats s JOIN hands h USING (hand_key)
        WHERE {where}""", params=params).pl()


def played_rulesets(store: Store, filters: Filters) -> list[tuple[str, str | None, int]]:
    """(variant, ruleset played, hands) of the hands the filters keep."""
    where, params = filters.sql({"session_id": "h.session_id", "variant": "h.variant",
                                 "player": "s.player"}, times="h.played_at")
    return store.con.execute(f"""
        SELECT h.variant, h.ruleset, count(DISTINCT h.hand_key) AS hands
        FROM hands h JOIN seats s USING (hand_key) WHERE {where}
        GROUP BY ALL ORDER BY ALL
    """, params).fetchall()


def defined_rulesets(store: Store) -> list[tuple[str, list[str] | None, list[str] | None]]:
    """(name, variants it is played under, variants it is scored over) of every ruleset
    the store has."""
    return store.con.execute("SELECT name, variants, scope FROM rulesets").fetchall()
