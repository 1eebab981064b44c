"""The answers: ``compare``'s statistics and ``players``' rates with their 95% intervals,
the skill groups and the hands to tell the top two rulesets apart, from the resampled
per-game sums."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from ofcstats import stats
from ofcstats.uncertainty.resample import LEVEL, RESAMPLES, SEED, _Layout, _rng
from ofcstats.uncertainty.sums import SUM_COLUMNS, _scan, _Scanned, totals


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


_RESAMPLED_LUCK = 2
"""How many times each resample takes the players' luck out of the variance of their
means. A resample of the games draws the players' means around the observed ones with
the same luck again, so its spread holds the luck twice: once from the hands played, once
from the draw. Taking it out twice centres the resampled signals on the estimate (which
takes it out once); taking it out once would centre them on the spread before the luck
is removed, and an interval of equal players would rarely reach 0."""


def _compare_replicates(summed: npt.NDArray[np.float64], noise: npt.NDArray[np.float64]
                        ) -> dict[str, npt.NDArray[np.float64]]:
    """Per resample and ruleset, :data:`COMPARE_STATS` from the resampled sums
    (resamples, rulesets, players, :data:`_COMPARE_COLUMNS`), as
    :func:`ofcstats.stats.ruleset_table` computes them. ``noise`` (per ruleset): what the
    players' luck adds to the variance of their means (:func:`ofcstats.stats.skill_noise`,
    estimated once from the data), taken out of it in every resample
    :data:`_RESAMPLED_LUCK` times."""
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
        between = (deviations ** 2).sum(axis=-1) / (counted - 1)
        spread = np.sqrt(np.clip(between - _RESAMPLED_LUCK * noise, 0, None))
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
    noise = stats.skill_noise_of(per_game, ("session_id", "game"))
    summed = totals(per_game)
    table = stats.ruleset_table(summed, hands, noise)
    layouts = ((variant, _Layout.of(per_game.filter(pl.col("variant") == variant),
                                    _COMPARE_COLUMNS))
               for variant in sorted(table.get_column("variant").unique().to_list()))
    return _compared(table, layouts, resamples, seed, noise, summed)


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
    noise = _noise(scanned)
    table = stats.ruleset_table(summed, hands, noise)

    def layouts() -> Iterator[tuple[str, _Layout]]:
        for variant in sorted(table.get_column("variant").unique().to_list()):
            scan = scanned.pop(variant)
            yield variant, _Layout.scanned(scan, _COMPARE_COLUMNS)
            del scan

    return _compared(table, layouts(), resamples, seed, noise, summed)


def _noise(scanned: dict[str, _Scanned]) -> pl.DataFrame:
    """:func:`ofcstats.stats.skill_noise_of` from the passes' sums per game and player."""
    found = []
    for variant, scan in sorted(scanned.items()):
        estimate = stats.skill_noise(scan.pair_game, scan.pair_player,
                                     scan.pair_sums.column("hands"),
                                     scan.pair_sums.column("total"))
        found.append(pl.DataFrame({"variant": [variant] * len(scan.rulesets),
                                   "ruleset": scan.rulesets, "noise": estimate}))
    return pl.concat(found) if found else pl.DataFrame(schema={
        "variant": pl.String, "ruleset": pl.String, "noise": pl.Float64})


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


_COMPARE_COUNTED = {"foul_rate": ("fouls", "hands"),
                    "fantasyland_entry_rate": ("entered", "eligible")}
"""The rates of ``compare`` that count events, as numerator and denominator sums."""


def _replicates(variant: str, layout: _Layout, noise: pl.DataFrame, resamples: int,
                seed: int) -> dict[str, npt.NDArray[np.float64]]:
    """:data:`COMPARE_STATS` of each of ``resamples`` resamples of one variant's games
    (resamples x rulesets, in ``layout.rulesets`` order), drawn from the variant's own
    stream, each taking out the luck ``noise`` gives for its rulesets."""
    noisy = dict(noise.filter(pl.col("variant") == variant).select(
        "ruleset", pl.col("noise").fill_nan(None).fill_null(0.0)).iter_rows())
    shift = np.array([noisy.get(r, 0.0) for r in layout.rulesets])[None, :]
    parts = [_compare_replicates(chunk, shift)
             for chunk in layout.resampled(resamples, _rng(seed, variant))]
    return {name: np.concatenate([part[name] for part in parts]) for name in COMPARE_STATS}


def _compared(table: pl.DataFrame, layouts: Iterable[tuple[str, _Layout]], resamples: int,
              seed: int, noise: pl.DataFrame, summed: pl.DataFrame) -> Comparison:
    """:func:`compare`'s answer from the point estimates (``table``; ``summed``, the sums
    per player they come from) and each variant's layout, one variant at a time."""
    intervals: list[pl.DataFrame] = []
    apart: list[pl.DataFrame] = []
    for variant, layout in layouts:
        replicates = _replicates(variant, layout, noise, resamples, seed)
        mine = table.filter(pl.col("variant") == variant)
        frame = pl.DataFrame({"variant": [variant] * len(layout.rulesets),
                              "ruleset": layout.rulesets})
        for name in COMPARE_STATS:
            low, high = _quantiles(replicates[name])
            frame = frame.with_columns(pl.Series(f"{name}_ci_low", low),
                                       pl.Series(f"{name}_ci_high", high))
        frame = frame.with_columns(pl.Series(f"{name}_sd", _sds(replicates[name]))
                                   for name in _COMPARE_COUNTED)
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
        del layout, replicates
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
        for stat in COMPARE_STATS for end in ("low", "high")
    ).with_columns(
        pl.when(pl.col("skill_signal").is_not_null()).then(
            pl.col(f"hands_to_tell_apart_ci_{end}")).alias(f"hands_to_tell_apart_ci_{end}")
        for end in ("low", "high")
    ) if intervals else joined
    # Rates of few events: the score interval (as a player's rates).
    counted = summed.group_by("variant", "ruleset").agg(
        pl.col(c).sum().alias(f"{c}_sum") for pair in _COMPARE_COUNTED.values() for c in pair)
    helpers = [*counted.columns[2:], *(f"{name}_sd" for name in _COMPARE_COUNTED)]
    joined = joined.join(counted, on=["variant", "ruleset"], how="left").with_columns(
        expression for name, (top, bottom) in _COMPARE_COUNTED.items()
        for expression in _few_events(name, f"{top}_sum", f"{bottom}_sum")
    ).with_columns(
        pl.when(pl.col(name).is_not_null()).then(pl.col(f"{name}_ci_{end}")).alias(
            f"{name}_ci_{end}") for name in _COMPARE_COUNTED for end in ("low", "high")
    ).drop(helpers) if intervals else joined
    # Skill shown only where the signal's interval stays above 0; where it reaches 0 these
    # hands show no skill difference: the signal reads 0 (the interval's upper end says
    # how large a difference they leave room for), and the hands to tell players apart
    # have only a lower bound (from that upper end). The rank stays the estimate's.
    joined = joined.with_columns(
        skill_shown=pl.when(pl.col("skill_signal_ci_low").is_not_null()).then(
            pl.col("skill_signal_ci_low") > 0),
    ).with_columns(
        skill_signal=pl.when(pl.col("skill_shown").not_()).then(
            pl.lit(0.0, pl.Float64)).otherwise(pl.col("skill_signal")),
        hands_to_tell_apart=pl.when(pl.col("skill_shown").fill_null(True)).then(
            pl.col("hands_to_tell_apart")),
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
    "mean": ("total", "hands"),
}
"""A player's rates as numerator and denominator sums (money in whole millionths, so that
its sums are exact too), and their mean points per hand."""

COUNTED = ("foul_rate", "fantasyland_entry_rate", "fantasyland_stay_rate", "scoop_rate",
           "scooped_rate", "win_rate_top", "win_rate_middle", "win_rate_bottom")
"""The rates of :data:`PLAYER_RATES` that count events: each event is one of the
denominator's (a foul is one of the hands), so the rate lies between 0 and 1."""

FEW = 10
"""Fewer events than this (or fewer non-events), and a rate's interval is a score
interval (:func:`wilson`) rather than the bootstrap's percentiles."""


def wilson(rate: pl.Expr, n: pl.Expr, *, low: bool) -> pl.Expr:
    """An end of the Wilson score interval (95%) of a proportion ``rate`` of ``n`` trials
    (``n`` need not be whole: an effective number of trials)."""
    z2 = stats.Z95 ** 2
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = stats.Z95 * (rate * (1 - rate) / n + z2 / (4 * n * n)).sqrt() / (1 + z2 / n)
    return (centre - half).clip(lower_bound=0) if low else (centre + half).clip(upper_bound=1)


def _few_events(name: str, top: str, bottom: str) -> list[pl.Expr]:
    """The ends of a counted rate's interval where its events (or non-events) are fewer
    than :data:`FEW`: the Wilson interval over the effective number of trials, the trials
    that would give a binomial rate the variance the game bootstrap gives this one
    (``p (1 - p) / variance``; at most the trials themselves), or, with no event (or no
    non-event) to measure that variance by, the trials themselves."""
    x, n = pl.col(top).cast(pl.Float64), pl.col(bottom).cast(pl.Float64)
    rate = x / n
    variance = pl.col(f"{name}_sd").pow(2)
    effective = pl.when((x > 0) & (x < n) & (variance > 0)).then(
        pl.min_horizontal(rate * (1 - rate) / variance, n)).otherwise(n)
    few = (n > 0) & ((x < FEW) | (n - x < FEW))
    return [pl.when(few).then(wilson(rate, effective, low=end == "low")).otherwise(
        pl.col(f"{name}_ci_{end}")).alias(f"{name}_ci_{end}") for end in ("low", "high")]
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
_COUNTED_COLUMNS = sorted({c for name in COUNTED for c in PLAYER_RATES[name]})


def _sds(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The SD along the first axis over the defined resamples, NaN where fewer than two."""
    defined = np.isfinite(values)
    count = defined.sum(axis=0)
    filled = np.where(defined, values, 0.0)
    mean = filled.sum(axis=0) / np.maximum(count, 1)
    squares = (np.where(defined, values - mean, 0.0) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 1, np.sqrt(squares / (count - 1)), np.nan)


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
        spread = _sds(replicates)
        keys = [(r, p) for r in layout.rulesets for p in layout.players]
        frame_v = pl.DataFrame({
            "player": [p for _, p in keys], "variant": [variant] * len(keys),
            "ruleset": [r for r, _ in keys],
            **{f"{name}_ci_{end}": bound[:, :, i].ravel()
               for i, name in enumerate(PLAYER_RATES)
               for end, bound in (("low", low), ("high", high))},
            **{f"{name}_sd": spread[:, :, i].ravel() for i, name in enumerate(PLAYER_RATES)
               if name in COUNTED}})
        parts.append(frame_v)
        del layout, chunks, replicates
    if observed is None:
        observed = pl.concat(observed_parts) if observed_parts else pl.DataFrame(
            schema={**dict.fromkeys(stats.KEYS, pl.String), **dict.fromkeys(columns, pl.Int64)})
    rates = observed.select(*stats.KEYS, *(
        pl.when(pl.col(bottom) > 0).then(
            pl.col(top) / pl.col(bottom) / (_MONEY_SCALE if top == "money_millionths" else 1))
        .alias(name) for name, (top, bottom) in PLAYER_RATES.items()), *(
        pl.col(c).alias(f"{c}_sum") for c in _COUNTED_COLUMNS))
    table = rates.join(pl.concat(parts), on=list(stats.KEYS), how="inner") if parts else rates
    table = table.with_columns(
        expression for name in COUNTED for expression in _few_events(
            name, *(f"{c}_sum" for c in PLAYER_RATES[name]))) if parts else table
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
