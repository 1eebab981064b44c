"""The questions the commands and the report answer, each in one function, so that
``players``, ``player`` and ``report`` cannot disagree.

Every answer is per variant: a row carries ``variant``, and no figure pools two
variants. Money is settled as the table settled it (:func:`money`): per game and
ruleset over every seat, the loss cap applied to the whole table, and only then are
players, times or sessions filtered.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ofcstats import pipeline, session, stats
from ofcstats.rules.model import Ruleset
from ofcstats.store import Store

PLAYER_COLUMNS = tuple(dict.fromkeys([*stats.PLAYER_COLUMNS, "hand_key", "played_ruleset"]))
"""What :func:`player_table` and :func:`played_rulesets` read of the scored frame."""
MONEY_DECIMALS = 6
"""Money is summed in millionths of a unit, as integers: the same bytes whatever the
order (or the number of threads) in which the games are added."""


def _games(store: Store, filters: pipeline.Filters) -> pl.DataFrame:
    """Every hand of the sessions the filters keep, with its game under each kind of
    stake: ``game_fixed`` (the ruleset sets the stake: only a change of variant ends a
    game early) and ``game_logged`` (a change of the logged stake does too)."""
    # Whole sessions: players and times are picked after the games are settled.
    where, params = filters.sql({"session_id": "h.session_id", "variant": "h.variant"},
                                times=None)
    hands = store.con.sql(f"""
        SELECT h.hand_key, h.session_id, h.played_at, h.n_seats, h.variant, h.point_value,
               bool_or(s.fantasyland) AS fantasyland_hand
        FROM hands h JOIN seats s USING (hand_key)
        WHERE {where}
        GROUP BY ALL
    """, params=params).pl().with_columns(
        logged_stake=pl.col("point_value").fill_null(1.0))
    fixed = session.hand_order(hands, split_on=["variant"]).select(
        "hand_key", game_fixed="game")
    logged = session.hand_order(hands, split_on=["variant", "logged_stake"]).select(
        "hand_key", game_logged="game")
    return hands.lazy().join(fixed, on="hand_key").join(logged, on="hand_key").collect()


def game_results(store: Store, filters: pipeline.Filters,
                 rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """Per ruleset, session, game and player: points, hands, money after the table's
    loss cap, the stake and where it came from, when the game started and its variant.

    Whole games are settled; ``filters.players``, ``since`` and ``until`` then keep the
    rows of those players and the games that started in the window.
    """
    hands = _games(store, filters)
    if hands.is_empty() or not rulesets:
        return _empty_games()
    terms = pl.DataFrame({
        "ruleset": [r.name for r in rulesets],
        "fixed": [r.point_value is not None for r in rulesets],
    })
    con = store.con
    con.register("money_hands", hands.select("hand_key", "session_id", "game_fixed",
                                             "game_logged"))
    con.register("money_rulesets", terms)
    try:
        # Summed by DuckDB: a row per ruleset, game and player leaves the database.
        points = con.sql("""
            SELECT r.name AS ruleset, g.session_id,
                   CASE WHEN m.fixed THEN g.game_fixed ELSE g.game_logged END AS game,
                   s.player, sum(x.points)::BIGINT AS points, count(*)::BIGINT AS hands
            FROM results x
            JOIN rulesets r USING (ruleset_id)
            JOIN money_rulesets m ON m.ruleset = r.name
            JOIN money_hands g USING (hand_key)
            JOIN seats s USING (hand_key, seat)
            GROUP BY ALL
        """).pl()
    finally:
        con.unregister("money_hands")
        con.unregister("money_rulesets")
    frames = []
    for ruleset in rulesets:
        game = "game_fixed" if ruleset.point_value is not None else "game_logged"
        per_hand = hands.select(
            "hand_key", "session_id", "played_at", "variant",
            pl.col(game).alias("game"),
            session.stake(ruleset, pl.col("point_value")).alias("point_value"),
            pl.col("point_value").is_not_null().alias("logged"),
            pl.col("variant").is_in([v.value for v in ruleset.variants]).not_()
            .alias("what_if"))
        games = per_hand.group_by("session_id", "game").agg(
            variant=pl.col("variant").first(),
            point_value=pl.col("point_value").first(),
            logged=pl.col("logged").all(),
            unlogged=(~pl.col("logged")).all(),
            started_at=pl.col("played_at").min(),
            what_if=pl.col("what_if").first(),
        ).with_columns(
            ruleset=pl.lit(ruleset.name),
            loss_cap=pl.lit(None if ruleset.loss_cap is None else float(ruleset.loss_cap),
                            dtype=pl.Float64),
            stake_source=pl.lit("ruleset") if ruleset.point_value is not None else
            pl.when(pl.col("logged")).then(pl.lit("logged"))
            .when(pl.col("unlogged")).then(pl.lit("default"))
            .otherwise(pl.lit("logged, else default")),
        ).drop("logged", "unlogged")
        per_player = points.filter(pl.col("ruleset") == ruleset.name).drop("ruleset")
        frames.append(per_player.join(games, on=["session_id", "game"]))
    settled = session.settle(pl.concat(frames, how="diagonal_relaxed")).collect()
    return _after_settling(settled, filters).sort(
        "variant", "ruleset", "session_id", "game", "player")


def _after_settling(games: pl.DataFrame, filters: pipeline.Filters) -> pl.DataFrame:
    keep = pl.lit(True)
    if filters.players is not None:
        keep &= pl.col("player").is_in(list(filters.players))
    if filters.rulesets is not None:
        keep &= pl.col("ruleset").is_in(list(filters.rulesets))
    if filters.since is not None:
        keep &= pl.col("started_at") >= filters.since
    if filters.until is not None:
        keep &= pl.col("started_at") < filters.until
    return games.filter(keep)


def _empty_games() -> pl.DataFrame:
    return pl.DataFrame(schema={
        "session_id": pl.String, "game": pl.Int64, "player": pl.String, "points": pl.Int64,
        "hands": pl.Int64, "variant": pl.String, "point_value": pl.Float64,
        "started_at": pl.Datetime("us", "UTC"), "what_if": pl.Boolean, "ruleset": pl.String,
        "loss_cap": pl.Float64, "stake_source": pl.String, "settled_points": pl.Float64,
        "capped": pl.Boolean, "money": pl.Float64})


def money(store: Store, filters: pipeline.Filters, rulesets: Sequence[Ruleset]
          ) -> pl.DataFrame:
    """Per variant, ruleset and player: ``money`` (settled, in the table's stake units),
    ``games``, ``capped_games`` (games in which the loss cap limited the player's loss)
    and ``stake`` (where the point value came from: ``ruleset``, ``logged``,
    ``default`` (1 a point), or a mixture)."""
    games = game_results(store, filters, rulesets)
    scale = 10 ** MONEY_DECIMALS
    return games.group_by("variant", "ruleset", "player").agg(
        money=(pl.col("money") * scale).round().cast(pl.Int64).sum() / scale,
        games=pl.len(),
        capped_games=pl.col("capped").sum().cast(pl.Int64),
        stake=pl.col("stake_source").unique().sort().str.join("; "),
    ).sort("variant", "ruleset", "player")


def money_text(value: float | None) -> str:
    """Money as tables show it: a sign, thousands separators, two decimals.

    >>> money_text(1234.5), money_text(-6), money_text(0.001)
    ('+1,234.50', '-6.00', '0.00')
    """
    if value is None:
        return "-"
    text = f"{value:+,.2f}"
    return text[1:] if text in ("+0.00", "-0.00") else text


WHAT_IF = " (what-if)"
"""How a table names a ruleset applied to a variant it is not played under."""


def labelled(frame: pl.DataFrame) -> pl.DataFrame:
    """``ruleset`` marked :data:`WHAT_IF` on what-if rows, for tables people read."""
    if "what_if" not in frame.columns or "ruleset" not in frame.columns:
        return frame
    return frame.with_columns(pl.when(pl.col("what_if")).then(pl.col("ruleset") + WHAT_IF)
                              .otherwise(pl.col("ruleset")).alias("ruleset"))


def rulesets_for(store: Store, scored: pl.DataFrame) -> list[Ruleset]:
    """The stored definitions of the rulesets a scored frame holds."""
    names = sorted(scored.get_column("ruleset").cast(pl.String).unique().to_list())
    return pipeline.stored_rulesets(store, names)


def player_table(store: Store, scored: pl.DataFrame, filters: pipeline.Filters, *,
                 seed: int = 7) -> pl.DataFrame:
    """Per player, variant and ruleset: :func:`ofcstats.stats.player_stats` with the
    settled ``money`` beside it (the games of the filtered hands, settled whole)."""
    table = stats.player_stats(scored, seed=seed)
    settled = money(store, filters, rulesets_for(store, scored))
    return table.join(settled, on=["player", "variant", "ruleset"], how="left").sort(
        "variant", "ruleset", "player")


def _choose(scored: list[str], own: list[str], played: list[tuple[str, int]],
            chosen: str | None) -> str:
    """The ruleset a variant's tables show first: ``chosen`` where it was scored for the
    variant, else the one most of its hands were played under (``played``: name and
    hands), else the first of its own, else the first scored."""
    if chosen is not None and chosen in scored:
        return chosen
    counts = sorted((-hands, name) for name, hands in played if name in scored)
    if counts:
        return counts[0][1]
    return sorted(own or scored)[0]


def played_rulesets(scored: pl.DataFrame, chosen: str | None = None) -> dict[str, str]:
    """For each variant in a scored frame, the ruleset its tables show first
    (:func:`_choose`)."""
    found: dict[str, str] = {}
    frame = scored.select(
        pl.col("variant").cast(pl.String), pl.col("ruleset").cast(pl.String),
        pl.col("played_ruleset").cast(pl.String), "hand_key", "what_if")
    for (variant,), rows in frame.sort("variant").group_by("variant", maintain_order=True):
        played = rows.group_by("played_ruleset").agg(hands=pl.col("hand_key").n_unique())
        found[str(variant)] = _choose(
            sorted(rows.get_column("ruleset").unique().to_list()),
            sorted(rows.filter(~pl.col("what_if")).get_column("ruleset").unique().to_list()),
            [(str(n), int(h)) for n, h in played.iter_rows() if n is not None], chosen)
    return found


def shown_rulesets(store: Store, filters: pipeline.Filters, chosen: str | None = None
                   ) -> dict[str, str]:
    """:func:`played_rulesets` from the store's tables, before any result is read: the
    hands the filters keep, by variant and the ruleset they were played under. With
    ``chosen``, only the variants scored under it."""
    where, params = filters.sql({"session_id": "h.session_id", "variant": "h.variant",
                                 "player": "s.player"}, times="h.played_at")
    con = store.con
    played = con.execute(f"""
        SELECT h.variant, h.ruleset, count(DISTINCT h.hand_key) AS hands
        FROM hands h JOIN seats s USING (hand_key) WHERE {where}
        GROUP BY ALL ORDER BY ALL
    """, params).fetchall()
    defined = con.execute("SELECT name, variants, scope FROM rulesets").fetchall()
    found: dict[str, str] = {}
    for variant in sorted({str(v) for v, _, _ in played}):
        scored = [n for n, _, scope in defined if variant in (scope or [])]
        own = [n for n, variants, _ in defined if variant in (variants or [])]
        if scored and (chosen is None or chosen in scored):
            found[variant] = _choose(sorted(scored), sorted(own), [
                (str(r), int(h)) for v, r, h in played if v == variant and r is not None],
                chosen)
    return found
