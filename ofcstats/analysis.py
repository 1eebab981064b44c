"""The questions the commands and the report answer, each in one function, so that
``players``, ``player`` and ``report`` cannot disagree.

Every answer is per variant: a row carries ``variant``, and no figure pools two
variants. Money is settled as the table settled it (:func:`money`): per game and
ruleset over every seat, the loss cap applied to the whole table, and only then are
players, times or sessions filtered.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

import polars as pl

from ofcstats import session, stats, uncertainty
from ofcstats.errors import StoreError, UsageError
from ofcstats.review.session_page import Replayed
from ofcstats.rules.model import Ruleset
from ofcstats.stakes import MONEY_DECIMALS
from ofcstats.store import Store
from ofcstats.store import decisions as stored_decisions
from ofcstats.store import handlist as stored_hands
from ofcstats.store import money as stored
from ofcstats.store import results as stored_results
from ofcstats.store.results import Filters


def hand_games(store: Store, filters: Filters) -> pl.DataFrame:
    """Every hand of the sessions the filters keep, with its play order and its game: a
    change of variant or of the logged stake starts a new one, whatever a ruleset values
    a point at (:data:`ofcstats.session.GAME_SPLIT`)."""
    # Whole sessions: players, variants and times are picked after the games are settled.
    hands = stored.game_hands(store, filters)
    return session.hand_order(hands, split_on=session.GAME_SPLIT).collect()


@contextmanager
def _settled(store: Store, filters: Filters, rulesets: Sequence[Ruleset],
             hands: pl.DataFrame | None = None
             ) -> Iterator[tuple[str, list[object]] | None]:
    """A query of the settled games (:func:`game_results`' rows, unsorted) and its
    parameters, while the games (``hands``: :func:`hand_games`, when already read) are
    registered with the store's connection; None when there are none."""
    if hands is None:
        hands = hand_games(store, filters)
    if hands.is_empty() or not rulesets:
        yield None
        return
    terms = pl.DataFrame({
        "ruleset": [r.name for r in rulesets],
        "fixed": [r.point_value is not None for r in rulesets],
        "stake": [None if r.point_value is None else float(r.point_value) for r in rulesets],
        "loss_cap": [None if r.loss_cap is None else float(r.loss_cap) for r in rulesets],
        "variants": [[v.value for v in r.variants] for r in rulesets],
    }, schema_overrides={"stake": pl.Float64, "loss_cap": pl.Float64})
    with stored.settled_games(store, hands.select(
            "hand_key", "session_id", "played_at", "variant", "point_value", "game"),
            terms, replace(filters, sessions=None)) as settled:
        yield settled


def game_results(store: Store, filters: Filters,
                 rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """Per ruleset, session, game and player: points (and, with per-player units, the unit
    points and the player's unit), hands, money after the table's loss cap, the stake
    and where it came from, when the game started and its variant.

    Whole games are settled; ``filters.players``, ``since`` and ``until`` then keep the
    rows of those players and the games that started in the window.
    """
    with _settled(store, filters, rulesets) as settled:
        if settled is None:
            return _empty_games()
        return stored.game_rows(store, *settled)


def _empty_games() -> pl.DataFrame:
    return pl.DataFrame(schema={
        "session_id": pl.String, "game": pl.Int64, "player": pl.String, "points": pl.Int64,
        "unit_points": pl.Float64, "unit": pl.Float64, "hands": pl.Int64,
        "variant": pl.String, "point_value": pl.Float64,
        "started_at": pl.Datetime("us", "UTC"), "what_if": pl.Boolean, "ruleset": pl.String,
        "loss_cap": pl.Float64, "stake_source": pl.String, "settled_points": pl.Float64,
        "capped": pl.Boolean, "money": pl.Float64})


_EMPTY_MONEY = {"variant": pl.String, "ruleset": pl.String, "player": pl.String,
                "money": pl.Float64, "games": pl.UInt32, "capped_games": pl.Int64,
                "stake": pl.String}
_GAME_MONEY = ("variant", "ruleset", "session_id", "game", "player", "money")
"""The columns of :func:`game_results` the money intervals resample."""


def money_and_games(store: Store, filters: Filters, rulesets: Sequence[Ruleset],
                    hands: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`money` and :func:`game_results`' :data:`_GAME_MONEY` columns (unsorted) from
    one settling of the games; ``hands`` is :func:`hand_games`."""
    with _settled(store, filters, rulesets, hands) as settled:
        if settled is None:
            return (pl.DataFrame(schema=_EMPTY_MONEY),
                    _empty_games().select(_GAME_MONEY))
        return stored.money_and_games(store, *settled, MONEY_DECIMALS, _GAME_MONEY)


def money(store: Store, filters: Filters, rulesets: Sequence[Ruleset],
          hands: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per variant, ruleset and player: ``money`` (settled, in the table's stake units),
    ``games``, ``capped_games`` (games in which the loss cap limited the player's loss)
    and ``stake`` (where the point value came from: ``ruleset``, ``logged``,
    ``default`` (1 a point), or a mixture). Summed in the database, in whole millionths;
    ``hands``: :func:`hand_games`, when already read."""
    with _settled(store, filters, rulesets, hands) as settled:
        if settled is None:
            return pl.DataFrame(schema=_EMPTY_MONEY)
        return stored.money_rows(store, *settled, MONEY_DECIMALS)


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 ruleset``, ``2 rulesets``, ``1,234 hands`` (``words``: an irregular plural).

    >>> plural(1, "variant"), plural(0, "ruleset"), plural(1200, "hand")
    ('1 variant', '0 rulesets', '1,200 hands')
    """
    return f"{count:,} {word if count == 1 else words or f'{word}s'}"


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


MEANINGS = {
    "skill_rank": "the ruleset's place by how fast skill shows in its results (1: fastest)",
    "skill_group": "rulesets that share a group cannot be told apart by these hands",
    "skill_signal": "how much of a player's result per hand is the player, not the cards, "
                    "the players' luck taken out (0, none in a table: no skill "
                    "difference shows, its interval reaches 0; higher: skill shows sooner)",
    "skill_shown": "whether these hands show any skill difference at all (its interval "
                   "stays above 0)",
    "hands_to_tell_apart": "hands after which a player one spread better than the table "
                           "is told apart from it about half the time",
    "sd": "how far a seat's points per hand swing (standard deviation)",
    "mean_abs_points": "points changing hands per seat and hand, won or lost",
    "royalty_share": "share of the points moved by royalties (bonuses for strong rows)",
    "foul_rate": "share of hands fouled (rows set out of order)",
    "fantasyland_entry_rate": "share of hands that earn fantasyland",
    "fantasyland_stay_rate": "share of fantasyland hands that earn another",
    "scoop_rate": "share of hands that win all three rows against someone",
    "total": "points won in all",
    "mean": "points won per hand",
    "ci_low": "with the high end: where the player's true points per hand lie, 95% sure "
              "(whole games resampled: a game's hands move together)",
    "ci_high": "the high end of that range",
    "money": "money won, settled as the table settles it",
    "hands_for_1": "hands it takes for the interval to narrow to 1 point either side",
    "mean_ev_loss": "points given up per decision, against the best play found",
    "total_ev_loss": "points given up in all",
    "table_mean_ev_loss": "points the whole table gave up per decision here",
    "vs_table": "this player's loss minus the table's (below 0: better than the table)",
    "ev_loss": "points this decision gave up, against the best play found",
    "ev_loss_se": "the error of that loss (its standard error)",
    "fantasyland_set": "points given up per fantasyland set",
    "fantasyland_next": "the hand puts the seat into fantasyland next",
    "royalties": "royalty points collected from all opponents",
    "points": "points the seat won in the hand, against every opponent",
    "fouled": "the board was fouled (its rows out of order)",
    "scoops": "opponents the seat beat in all three rows",
    "fantasyland": "the seat played this hand in fantasyland",
    "fantasyland_entered": "the hand earned the seat fantasyland",
    "mistakes": "the review's mistakes in the hand (empty: not reviewed)",
    "timed_out": "the player ran out of time in this hand",
    **{f"street_{n}": f"points given up per decision on street {n}" for n in range(1, 10)},
}
"""What each column of the commands' tables means, in a player's words: the commands'
``--help``, the line under a table on a terminal (``ofcstats.cli.output.legend``), the
report's tables and docs/command-line.md."""

NOTHING_SCORED = stored_results.NOTHING_SCORED


def stored_rows(store: Store, filters: Filters,
                pairs: dict[str, str] | None = None) -> stats.Rows:
    """The scored rows the filters keep, as :class:`ofcstats.stats.Rows`: statistics are
    summed in the database and never leave it row by row. ``pairs`` (variant to ruleset)
    keeps only those rulesets of those variants. Hands not yet scored are an error
    (:meth:`Store.require_scored`), never a silent gap."""
    store.require_scored(filters.rulesets or (), filters=filters, pairs=pairs)
    where, params = filters.sql()
    if pairs is not None:
        where += " AND (" + (" OR ".join(["(variant = ? AND ruleset = ?)"] * len(pairs))
                             or "false") + ")"
        params += [value for pair in sorted(pairs.items()) for value in pair]
    return stats.Rows(store, f"SELECT * FROM results_named WHERE {where}", params)


def not_checked(store: Store, filters: Filters) -> str | None:
    """The check against the logs' own points, its other half (the first:
    :func:`stats.reported_differences_of`): the hands with logged points that no re-score
    checks, logged under a ruleset the store does not score them under, in one line with
    the fix (``N hands not checked: ruleset X unknown; ...``); None when there are none.
    Such hands are never counted as agreeing."""
    found = store.unchecked(filters)
    if found.is_empty() or not found.get_column("reported").sum():
        return None
    return stored_results.unchecked_text(found, "reported")


def player_table(store: Store, filters: Filters, *, seed: int = 7,
                 pairs: dict[str, str] | None = None, rows: stats.Rows | None = None,
                 summed: tuple[pl.DataFrame, pl.DataFrame] | None = None,
                 intervals: dict[str, str] | None = None) -> pl.DataFrame:
    """Per player, variant and ruleset: :func:`ofcstats.stats.player_stats` with the
    settled ``money`` beside it (the games of the filtered hands, settled whole), and
    every rate and the money per game with its 95% interval
    (:func:`ofcstats.uncertainty.player_intervals`, seeded with ``seed``). ``pairs`` as
    for :func:`stored_rows`; ``rows`` (those rows) and ``summed``
    (:func:`ofcstats.stats.sums` and :func:`ofcstats.stats.session_counts` of them) when
    already read; ``intervals`` (variant to ruleset, as ``pairs``): only those rulesets'
    rows get intervals (the others' are null), where only they are shown."""
    if rows is None:
        rows = stored_rows(store, filters, pairs)
    if summed is None:
        summed = stats.sums(rows), stats.session_counts(rows)
    if summed[0].is_empty():
        raise StoreError(NOTHING_SCORED)
    table = stats.player_table(*summed)
    names = sorted(table.get_column("ruleset").unique().to_list())
    rulesets = store.scored_rulesets(names)
    hands = hand_games(store, filters)
    if intervals is None:
        settled, games = money_and_games(store, filters, rulesets, hands)
    else:
        # The money of every ruleset summed in the database; per game only the shown.
        settled = money(store, filters, rulesets, hands)
        shown = sorted(set(intervals.values()) & set(names))
        rows = stored_rows(store, filters, {v: r for v, r in intervals.items() if r in shown})
        _, games = money_and_games(store, filters, store.scored_rulesets(shown), hands)
    result = uncertainty.player_intervals_stored(rows, hands, games, seed=seed)
    del hands, games
    shared = [c for c in result.columns if c in table.columns and c not in stats.KEYS]
    result = without_fantasyland(result, rulesets)
    table = without_fantasyland(table, rulesets)
    # The mean's one interval: the bootstrap over games, as every other interval here
    # (the hands of one game move together), in the place of the normal interval.
    mean = result.select(*stats.KEYS, ci_low="mean_ci_low", ci_high="mean_ci_high")
    table = table.drop("ci_low", "ci_high").join(
        mean, on=list(stats.KEYS), how="left").select(table.columns)
    return table.join(settled, on=["player", "variant", "ruleset"], how="left").join(
        result.drop(*shared, "mean_ci_low", "mean_ci_high"), on=list(stats.KEYS),
        how="left").sort("variant", "ruleset", "player")


def comparison(store: Store, filters: Filters, rows: stats.Rows | None = None, *,
               resamples: int = uncertainty.RESAMPLES, seed: int = uncertainty.SEED
               ) -> uncertainty.Comparison:
    """``compare``'s answer: per variant and ruleset, :func:`ofcstats.stats.ruleset_table`
    with every statistic's 95% interval and the skill groups, and the hands needed to
    tell the top two apart (:func:`ofcstats.uncertainty.compare`: a bootstrap over the
    games of the filtered hands, paired across rulesets)."""
    if rows is None:
        rows = stored_rows(store, filters)
    found = uncertainty.compare_stored(rows, hand_games(store, filters),
                                       resamples=resamples, seed=seed)
    names = sorted(found.table.get_column("ruleset").unique().to_list()) \
        if not found.table.is_empty() else []
    return replace(found, table=without_fantasyland(found.table,
                                                    store.scored_rulesets(names)))


FANTASYLAND_RATES = ("fantasyland_entry_rate", "fantasyland_stay_rate")
"""The rates a ruleset without fantasyland makes impossible."""


def no_fantasyland(rulesets: Sequence[Ruleset]) -> list[str]:
    """The names of the rulesets without fantasyland, in order."""
    return sorted(r.name for r in rulesets if r.fantasyland.entry is None)


def without_fantasyland(frame: pl.DataFrame, rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """``frame`` with its fantasyland rates and their intervals null (not 0, not [0, 0])
    on the rows of a ruleset without fantasyland: not a rate these hands measured as 0,
    but one the ruleset makes impossible."""
    names = no_fantasyland(rulesets)
    columns = [c for rate in FANTASYLAND_RATES for c in (rate, f"{rate}_ci_low",
                                                         f"{rate}_ci_high")
               if c in frame.columns]
    if not names or not columns:
        return frame
    return frame.with_columns(pl.when(pl.col("ruleset").is_in(names)).then(None)
                              .otherwise(pl.col(c)).alias(c) for c in columns)


def no_fantasyland_text(frame: pl.DataFrame, rulesets: Sequence[Ruleset]) -> str:
    """One line saying which rulesets of a table have no fantasyland (their fantasyland
    rates shown as nothing); empty when none of them.

    >>> from ofcstats.rules import load_rulesets
    >>> print(no_fantasyland_text(pl.DataFrame({"ruleset": ["american", "pokerstars"]}),
    ...                           load_rulesets(["american", "pokerstars"])))
    Fantasyland rates n/a under pokerstars: no fantasyland under this ruleset
    """
    names = [n for n in no_fantasyland(rulesets)
             if n in set(frame.get_column("ruleset").to_list())]
    if not names:
        return ""
    return (f"Fantasyland rates n/a under {', '.join(names)}: no fantasyland under "
            f"{'this ruleset' if len(names) == 1 else 'these rulesets'}")


def tell_apart_text(row: dict[str, object], what_if: Collection[str] = ()) -> str:
    """One line on whether the top two rulesets of a variant can be told apart (a row of
    :attr:`ofcstats.uncertainty.Comparison.tell_apart`), those of ``what_if`` marked so.

    >>> print(tell_apart_text({"first": "a", "second": "b", "told_apart": False,
    ...     "difference": 0.008, "hands_needed": 5200, "more_hands": 4800}))
    a and b cannot be told apart yet: about 4,800 more hands at the observed difference (0.008)
    >>> print(tell_apart_text({"first": "a", "second": "b", "told_apart": True,
    ...     "difference": 0.03, "difference_ci_low": 0.01, "difference_ci_high": 0.05}))
    a ranks above b at 95%: skill signal 0.030 higher (0.010 to 0.050)
    >>> print(tell_apart_text({"first": "a", "second": "b", "told_apart": False,
    ...     "difference": 0.02, "hands_needed": 380, "more_hands": 0}))
    a and b cannot be told apart yet, though only just (difference 0.020)
    >>> print(tell_apart_text({"first": "a", "second": "b", "told_apart": False,
    ...     "difference": 0.02, "hands_needed": 380, "more_hands": 0}, what_if={"a"}))
    a (what-if) and b cannot be told apart yet, though only just (difference 0.020)
    """
    first, second = (f"{row[key]}{WHAT_IF if row[key] in what_if else ''}"
                     for key in ("first", "second"))
    if row["told_apart"]:
        return (f"{first} ranks above {second} at 95%: skill signal {row['difference']:.3f}"
                f" higher ({row['difference_ci_low']:.3f} to {row['difference_ci_high']:.3f})")
    more = row.get("more_hands")
    if not isinstance(more, int):
        return (f"{first} and {second} cannot be told apart: their skill signals do not "
                "differ in these hands")
    if more == 0:  # the percentile interval is skewed: its normal approximation excludes 0
        return (f"{first} and {second} cannot be told apart yet, though only just "
                f"(difference {row['difference']:.3f})")
    return (f"{first} and {second} cannot be told apart yet: about {more:,} more hands at "
            f"the observed difference ({row['difference']:.3f})")


TELL_APART_MEANING = (
    "Hands to tell apart: after that many hands, a player truly one spread better than the "
    "table's average (a typical gap between players) has a 95% interval of their mean that "
    "excludes the average about half the time.")
"""What ``hands_to_tell_apart`` means, in the words ``compare``'s help, the report and
docs/statistics.md use (tests/test_uncertainty.py checks it by simulation)."""


def no_skill_text(table: pl.DataFrame) -> str:
    """One line naming the rulesets of a variant's ``compare`` table (with
    ``skill_shown``) under which these hands show no skill difference between the
    players at all, with the fewest hands it could take to show one where that is more
    than the hands seen (a smaller bound says nothing these hands have not); empty when
    there are none.

    >>> print(no_skill_text(pl.DataFrame({"ruleset": ["a", "b", "c", "d"],
    ...     "hands": [600, 600, 600, 600], "skill_shown": [False, True, False, False],
    ...     "hands_to_tell_apart_ci_low": [2300, 400, None, 34]})))  # doctest: +ELLIPSIS
    No skill difference between these players shows under a, c, d: the skill signal's ...
    ... (to tell players apart would take at least 2,300 hands under a)
    """
    if "skill_shown" not in table.columns:
        return ""
    rows = labelled(table).filter(pl.col("skill_shown").not_()).sort("ruleset")
    if rows.is_empty():
        return ""
    names = rows.get_column("ruleset").to_list()
    seen = rows.get_column("hands").to_list() if "hands" in rows.columns else [0] * rows.height
    bounds = [f"{n:,} hands under {name}" for (name, n), hands in zip(rows.select(
        "ruleset", "hands_to_tell_apart_ci_low").iter_rows(), seen, strict=True)
        if n is not None and n > hands]
    return (f"No skill difference between these players shows under {', '.join(names)}: "
            "the skill signal's 95% interval reaches 0"
            + (f" (to tell players apart would take at least {', '.join(bounds)})"
               if bounds else ""))


def with_interval(frame: pl.DataFrame, stat: str, shown: str) -> pl.Series:
    """A statistic with its 95% interval, as a table shows it: ``0.090 (0.071-0.108)``,
    and ``none (0.000-0.105)`` where the column ``shown`` is false (nothing shows).

    >>> with_interval(pl.DataFrame({"s": [0.09, 0.0], "s_ci_low": [0.071, 0.0],
    ...     "s_ci_high": [0.108, 0.105], "ok": [True, False]}), "s", "ok").to_list()
    ['0.090 (0.071-0.108)', 'none (0.000-0.105)']
    """
    return pl.Series(stat, [
        "-" if value is None else f"{value:.3f}" if low is None
        else f"{'none' if flag is False else f'{value:.3f}'} ({low:.3f}-{high:.3f})"
        for value, low, high, flag in frame.select(
            stat, f"{stat}_ci_low", f"{stat}_ci_high", shown).iter_rows()], dtype=pl.String)


def skill_notes(table: pl.DataFrame, apart: dict[str, object] | None,
                what_if: Collection[str] = ()) -> list[str]:
    """The lines under a variant's ``compare`` table on skill: whether its top two
    rulesets can be told apart (:func:`tell_apart_text` of ``apart``, a row of
    :attr:`ofcstats.uncertainty.Comparison.tell_apart`) and under which rulesets no skill
    shows (:func:`no_skill_text`). Where no skill shows under any ruleset, the rulesets
    have no order to tell apart: the second line alone says so.

    >>> apart = {"first": "a", "second": "b", "told_apart": False, "difference": 0.0,
    ...          "hands_needed": 410_000, "more_hands": 408_000}
    >>> table = pl.DataFrame({"ruleset": ["a", "b"], "hands": [600, 600],
    ...     "skill_shown": [False, False], "hands_to_tell_apart_ci_low": [None, None]})
    >>> for line in skill_notes(table, apart): print(line)  # doctest: +ELLIPSIS
    No skill difference between these players shows under a, b: the skill signal's 95% ...
    """
    quiet = no_skill_text(table)
    shown = "skill_shown" not in table.columns or table.get_column("skill_shown").any()
    ranked = tell_apart_text(apart, what_if) if apart is not None and shown else ""
    return [line for line in (ranked, quiet) if line]


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


def played_rulesets(rows: stats.Rows, chosen: str | None = None) -> dict[str, str]:
    """For each variant in the rows, the ruleset its tables show first (:func:`_choose`)."""
    scored = rows.query("""
        SELECT DISTINCT variant::VARCHAR AS variant, ruleset::VARCHAR AS ruleset, what_if
        FROM ({source}) ORDER BY ALL""")
    played = rows.query("""
        SELECT variant::VARCHAR AS variant, played_ruleset::VARCHAR AS played_ruleset,
               count(DISTINCT hand_key) AS hands
        FROM ({source}) WHERE played_ruleset IS NOT NULL GROUP BY ALL ORDER BY ALL""")
    found: dict[str, str] = {}
    for variant in sorted(set(scored.get_column("variant").to_list())):
        mine = scored.filter(pl.col("variant") == variant)
        found[variant] = _choose(
            sorted(set(mine.get_column("ruleset").to_list())),
            sorted(set(mine.filter(~pl.col("what_if")).get_column("ruleset").to_list())),
            [(str(n), int(h)) for _, n, h in played.filter(
                pl.col("variant") == variant).iter_rows()], chosen)
    return found


def hand_counts(rows: stats.Rows) -> dict[str | None, tuple[int, int]]:
    """Hands and sessions the rows hold, per variant and (under None) in all."""
    counted = rows.query("""
        SELECT variant::VARCHAR AS variant, count(DISTINCT hand_key) AS hands,
               count(DISTINCT session_id) AS sessions
        FROM ({source}) GROUP BY GROUPING SETS ((variant), ())""")
    return {variant: (int(hands), int(sessions))
            for variant, hands, sessions in counted.iter_rows()}


def points_histogram(rows: stats.Rows) -> pl.DataFrame:
    """Per variant and ruleset, how many seats scored each number of points: every
    quantile of the points per hand, in a few rows."""
    return rows.query("""
        SELECT variant::VARCHAR AS variant, ruleset::VARCHAR AS ruleset, points,
               count(*) AS seats
        FROM ({source}) GROUP BY ALL ORDER BY ALL""")


CURVE_POINTS = 2000
"""A running-total curve has at most this many points: past it, a point stands for a
run of consecutive hands (a chart never needs a million points)."""


def running_totals(store: Store, filters: Filters, rows: stats.Rows
                   ) -> pl.DataFrame:
    """Per variant, ruleset and player, the running total of points over the player's
    hands in play order: ``hands`` (played so far) and ``points`` (won so far), at the
    end of each run of hands (one hand, up to :data:`CURVE_POINTS` hands a player)."""
    places = hand_games(store, filters).select("hand_key", "session_id", "order").sort(
        "session_id", "order").with_columns(place=pl.int_range(pl.len(), dtype=pl.Int64))
    seated = stored.seated_players(store, filters)
    runs = seated.join(places.select("hand_key", "place"), on="hand_key").sort(
        "variant", "player", "place").with_columns(
        index=pl.int_range(pl.len(), dtype=pl.Int64).over("variant", "player"),
        step=((pl.len().over("variant", "player") + CURVE_POINTS - 1) // CURVE_POINTS)
        .cast(pl.Int64))
    runs = runs.select("hand_key", "player", run=pl.col("index") // pl.col("step"))
    with rows.registered("curve_runs", runs):
        summed = rows.query("""
            SELECT variant::VARCHAR AS variant, ruleset::VARCHAR AS ruleset,
                   player::VARCHAR AS player, c.run, count(*) AS hands,
                   sum(points)::BIGINT AS points
            FROM ({source}) JOIN curve_runs c USING (hand_key, player)
            GROUP BY ALL ORDER BY ALL""")
    curve = ["variant", "ruleset", "player"]
    return summed.select(*curve, pl.col("hands").cum_sum().over(curve),
                         pl.col("points").cum_sum().over(curve))


def shown_rulesets(store: Store, filters: Filters, chosen: str | None = None
                   ) -> dict[str, str]:
    """:func:`played_rulesets` from the store's tables, before any result is read: the
    hands the filters keep, by variant and the ruleset they were played under. With
    ``chosen``, only the variants scored under it."""
    played = stored.played_rulesets(store, filters)
    defined = stored.defined_rulesets(store)
    found: dict[str, str] = {}
    for variant in sorted({str(v) for v, _, _ in played}):
        scored = [n for n, _, scope in defined if variant in (scope or [])]
        own = [n for n, variants, _ in defined if variant in (variants or [])]
        if scored and (chosen is None or chosen in scored):
            found[variant] = _choose(sorted(scored), sorted(own), [
                (str(r), int(h)) for v, r, h in played if v == variant and r is not None],
                chosen)
    return found


REPEATED_COLUMNS = ("ruleset", "player", "session_id", "variant", "played_ruleset")
"""Columns of ``results_named`` whose few distinct strings repeat on every row."""


def _categorical_frame(store: Store, sql: str, params: Sequence[object] = (),
                       rows: int = 1 << 20,
                       progress: Callable[[int, int | None], None] | None = None
                       ) -> pl.DataFrame:
    """The query's rows, fetched a million at a time with :data:`REPEATED_COLUMNS` made
    categorical as they arrive: as plain strings, tens of millions of rows take several
    times the memory."""
    def shrunk(part: pl.DataFrame) -> pl.DataFrame:
        return part.with_columns(pl.col(c).cast(pl.Categorical) for c in REPEATED_COLUMNS
                                 if c in part.columns)

    return store.fetch(sql, params, rows=rows, progress=progress, shrink=shrunk)


def scored_frame(store: Store, filters: Filters = Filters(),  # noqa: B008 - frozen
                 columns: Sequence[str] | None = None, *, categorical: bool = False,
                 progress: Callable[[int, int | None], None] | None = None
                 ) -> pl.DataFrame:
    """Results with what analysis needs: session, game, play order, variant, table size,
    the seat's fantasyland flag and reported points, and the ruleset the hand was played
    under. A player filter keeps that player's rows only.

    ``columns`` keeps only those columns of ``results_named`` (plus ``order`` and
    ``game`` when named): tens of millions of rows then fit in little memory. Rows come
    in play order (ruleset, session, order, seat) when ``order`` or ``game`` is among
    them or ``columns`` is None, in no particular order otherwise.

    ``categorical`` gives :data:`REPEATED_COLUMNS` as ``pl.Categorical`` rather than
    strings, fetching the rows in parts: a fraction of the memory for large stores;
    ``progress(rows, None)`` is then called as the parts arrive.
    """
    store.require_scored(filters.rulesets or ())
    in_order = columns is None or "order" in columns or "game" in columns
    wanted = None if columns is None else list(dict.fromkeys(
        [*(c for c in columns if c not in ("order", "game")),
         *(("hand_key", "session_id") if in_order else ())]))
    sql, params = stored_results.results_query(filters, wanted)
    frame = _categorical_frame(store, sql, params, progress=progress) if categorical \
        else store.query(sql, params)
    if frame.is_empty() or not in_order:
        return frame
    ordered = _in_play_order(frame, _places(store, frame))
    return ordered if columns is None else ordered.select(*dict.fromkeys(columns))


def _places(store: Store, frame: pl.DataFrame) -> pl.DataFrame:
    """Each hand of the frame's sessions with its ``order`` and ``game`` and its place
    in play order (session, then order in it) as one integer, ``_place``."""
    # Games and play order come from whole sessions, whichever rows were asked for.
    hands = store.session_hands(frame.select(pl.col("session_id").unique()))
    # Its game as the log's stakes make it (the money in :mod:`ofcstats.analysis`).
    return session.hand_order(hands, split_on=session.GAME_SPLIT).select(
        "hand_key", "session_id", "order", "game").sort("session_id", "order").with_columns(
        _place=pl.int_range(pl.len(), dtype=pl.UInt32)).drop("session_id").collect()


def _in_play_order(frame: pl.DataFrame, places: pl.DataFrame) -> pl.DataFrame:
    """The frame's rows by ruleset (by name), place and seat, with ``order`` and ``game``."""
    # Sort integer keys alone, then move every column once: joining and sorting the
    # whole frame would copy its wide columns twice.
    key_columns = [pl.col("hand_key")]
    sort_by = ["_place"]
    if "ruleset" in frame.columns:
        names = pl.Enum(sorted(frame.get_column("ruleset").unique().to_list()))
        key_columns.append(pl.col("ruleset").cast(names).to_physical().alias("_ruleset"))
        sort_by.insert(0, "_ruleset")
    if "seat" in frame.columns:
        key_columns.append(pl.col("seat"))
        sort_by.append("seat")
    keys = frame.select(key_columns).with_row_index("_row").join(
        places, on="hand_key").sort(sort_by)
    return frame[keys.get_column("_row")].with_columns(keys.get_column("order"),
                                                       keys.get_column("game"))


HAND_SORTS = tuple(stored_hands.SORTS)
"""The orders :func:`hands` can give: ``played``, ``points``, ``ev_loss``."""


def hands(store: Store, filters: Filters = Filters(),  # noqa: B008 - frozen
          *, ruleset: str | None = None, fouled: bool | None = None,
          fantasyland: bool | None = None, mistakes: bool | None = None,
          min_points: int | None = None, max_points: int | None = None,
          sort: str = "played", limit: int | None = None,
          per_player: int | None = None) -> pl.DataFrame:
    """The hand list: one row per hand and seat the filters keep (``filters.players``: those
    players' seats), under one ruleset per variant (``ruleset`` where it was scored for
    the variant, else the one most of its hands were played under: :func:`shown_rulesets`).

    Columns: ``hand_id``, ``session_id``, ``played_at``, ``variant``, ``ruleset``,
    ``player``, ``seat``, ``points``, ``money`` (the seat's unit-weighted points times
    the stake; a game's loss cap settles whole games, so a capped game's hands can add
    up to more than it paid), ``fouled``, ``royalties``, ``fantasyland`` (played in it),
    ``fantasyland_entered``, ``timed_out``, and from the seat's review ``ev_loss`` (summed
    over its streets) and ``mistakes``, both null when the seat was not reviewed;
    ``hand_key`` last.

    ``fouled``, ``fantasyland`` (played in or entered), ``mistakes`` (one or more):
    True keeps the seats that did, False those that did not; ``min_points`` and
    ``max_points`` bound the points. ``sort``: ``played`` (play order), ``points`` (the
    largest loss first) or ``ev_loss`` (the largest first, seats not reviewed last);
    ``limit``: at most so many rows; ``per_player``: at most so many of each player (in
    each variant), the first in that order. Hands not scored under the ruleset shown are
    an error (:meth:`Store.require_scored`).

    >>> import ofcstats
    >>> with ofcstats.Store("club.duckdb", read_only=True) as store:  # doctest: +SKIP
    ...     worst = hands(store, Filters(players=["alice"]), sort="points", limit=10)
    """
    if ruleset is None and filters.rulesets:
        ruleset = filters.rulesets[0]
    if sort not in stored_hands.SORTS:
        raise UsageError(f"sort by {sort!r}? choose one of {', '.join(HAND_SORTS)}")
    for name, value in (("limit", limit), ("per_player", per_player)):
        if value is not None and value < 0:
            raise UsageError(f"{name} must be 0 or more, not {value}")
    shown = shown_rulesets(store, filters, ruleset)
    store.require_scored(filters=filters, pairs=shown)
    stakes = {r.name: None if r.point_value is None else float(r.point_value)
              for r in store.scored_rulesets(sorted(set(shown.values())))}
    own = stored_hands.HandFilters(fouled=fouled, fantasyland=fantasyland, mistakes=mistakes,
                                   min_points=min_points, max_points=max_points)
    return stored_hands.hand_rows(store, filters, shown, stakes, own, sort=sort, limit=limit,
                                  per_player=per_player)


def replayed(store: Store, *, session: str | None = None,
             hand_ids: Sequence[str] | None = None,
             player: str | None = None, ruleset: str | None = None) -> Replayed:
    """What the replay page of a session (or of the hands named, in play order) shows
    (:class:`ofcstats.review.session_page.Replayed`): the hands, their seats, each seat's
    line of the hand list (:func:`hands`, under ``ruleset`` or the one played) and the
    decisions of its review as stored. ``player``: only the hands that player sat in,
    followed. Draw it with :func:`ofcstats.review.session_page.render`.

    >>> with ofcstats.Store("club.duckdb", read_only=True) as store:  # doctest: +SKIP
    ...     night = replayed(store, session="club7-2026-11-29")
    """
    if (session is None) == (hand_ids is None):
        raise UsageError("give hand ids or --session SESSION, one or the other")
    chosen = stored_decisions.replay_hands(store, hand_ids=hand_ids,
                                           sessions=None if session is None else [session])
    if hand_ids is not None:
        missing = sorted(set(hand_ids) - set(chosen["hand_id"].to_list()))
        if missing:
            raise UsageError(f"no hand {missing[0]!r} in {store.path}: list the hands with "
                             "ofcstats hands")
    if chosen.is_empty():
        raise UsageError(f"no hands in session {session!r}: list the sessions with "
                         "ofcstats hands")
    sessions = sorted(set(chosen["session_id"].to_list()))
    listed = hands(store, Filters(sessions=sessions), ruleset=ruleset)
    listed = listed.filter(pl.col("hand_key").is_in(chosen["hand_key"].implode()))
    if player is not None:
        sat = listed.filter(pl.col("player") == player)["hand_key"]
        if sat.is_empty():
            raise UsageError(f"{player} sat in none of these hands")
        chosen = chosen.filter(pl.col("hand_key").is_in(sat.implode()))
    keys = chosen["hand_key"].to_list()
    return Replayed(hands=chosen, listed=listed, player=player,
                    seats=stored_decisions.replay_seats(store, keys),
                    decisions=stored_decisions.seat_decisions(store, keys),
                    title=f"Session {session}" if session is not None
                    else f"{len(keys)} hands")
