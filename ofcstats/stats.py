"""Statistics over scored hands: per player, variant and ruleset; per variant and ruleset;
and log checks. No figure pools two variants.

Input is the *scored frame*: one row per ruleset, hand and seat, the result columns
of :mod:`ofcstats.score` after :func:`ofcstats.session.apply_repeat_limits`, with the
hand's ``session_id``, ``variant`` and ``n_seats`` and the seat's ``fantasyland``
flag. Everything is a Polars aggregation; the bootstrap resamples sessions with one
matrix product per player and variant.

Definitions (they are printed in the report's methodology section too):

- *SD* is the sample standard deviation of points per hand; the normal 95% interval of
  the mean is ``mean ± 1.96 SD / sqrt(hands)``; the bootstrap interval resamples whole
  sessions (hands within a session are not independent: fantasyland carries over).
- *Hands for ±1*: how many hands the normal 95% interval needs to be ±1 point per
  hand wide: ``(1.96 SD)²``.
- *Fantasyland entry rate*: entries earned per hand played outside fantasyland in a
  variant that has it; *stay rate*: stays earned per hand played in fantasyland.
- *Scoop rate*: matchups (seat against one opponent) won 3-0, per matchup; *row win
  rate*: the same per row.
- *Royalty share*: of all points that changed hands, the part paid as royalties,
  ``Σ|royalty points| / (Σ|royalty points| + Σ|other points|)``.
- *Skill signal*: the spread (SD) of players' mean points per hand divided by the
  pooled SD within players; *hands to tell players apart* ``= (1.96 / signal)²``.
  A higher signal means skill shows in fewer hands. Rulesets are ranked within each
  variant by the signal rounded to nine decimals, ties broken by the ruleset's name.
- *Money*: settled per game (one orbit of the button plus its fantasyland hands; a
  change of variant or stakes starts a new game) and ruleset over every seat at the
  table: the loss cap limits what a player loses in the game, and what a capped loser
  does not pay is taken from the game's winners in proportion to their winnings. The
  point value is the ruleset's where its file sets one, else the one logged with the
  hand, else 1. Player, session and time filters pick from the settled games (a game
  belongs to the time it started).
- *What-if*: a ruleset applied to hands of a variant it is not played under, at the
  user's request; such rows are marked and never mixed with the others.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ofcstats.variants import Variant

Z95 = 1.959963984540054
MIN_HANDS_FOR_SKILL = 30

PLAYER_COLUMNS = (
    "player", "ruleset", "session_id", "variant", "n_seats", "points", "fouled",
    "fantasyland", "fantasyland_entered", "fantasyland_stayed", "royalty_top",
    "royalty_middle", "royalty_bottom", "royalty_points", "scoops", "scooped", "wins_top",
    "wins_middle", "wins_bottom", "what_if",
)
"""The columns :func:`player_stats` reads: ask the store for these alone."""
RULESET_COLUMNS = (
    "ruleset", "hand_key", "player", "variant", "points", "royalty_points", "fouled",
    "fantasyland", "fantasyland_entered", "what_if",
)
"""The columns :func:`ruleset_stats` reads (``hand_id`` will do for ``hand_key``)."""
DIFFERENCE_COLUMNS = (
    "hand_id", "session_id", "variant", "seat", "player", "ruleset", "played_ruleset",
    "reported_points", "points",
)
"""The columns :func:`reported_differences` reads."""


KEYS = ("player", "variant", "ruleset")
"""A player's statistics are per variant and ruleset: no figure pools two variants."""
DECIMALS = 9
"""Statistics are rounded to this many decimals: the same bytes whatever the thread count
(sums of points are exact integers; only the last bits of a few float steps could vary)."""


def _rate(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    return pl.when(denominator > 0).then(numerator / denominator).otherwise(None)


def _mean(column: str) -> pl.Expr:
    """The mean of an integer or boolean column from its exact integer sum."""
    return pl.col(column).cast(pl.Int64).sum() / pl.len()


def _sd(column: str = "points") -> pl.Expr:
    """Sample SD from exact integer sums (null for a single value)."""
    x = pl.col(column).cast(pl.Int64)
    n = pl.len().cast(pl.Float64)
    total = x.sum().cast(pl.Float64)
    squares = (x * x).sum().cast(pl.Float64)
    variance = (squares - total * total / n) / (n - 1)
    return pl.when(n > 1).then(variance.clip(lower_bound=0).sqrt()).otherwise(None)


def _stable(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.col(pl.Float64).round(DECIMALS))


def as_text(frame: pl.DataFrame) -> pl.DataFrame:
    """Categorical columns (as ``scored_frame(..., categorical=True)`` gives) as strings:
    statistics are small, and plain strings join with anything."""
    return frame.with_columns(pl.col(pl.Categorical).cast(pl.String))


def _what_if(lf: pl.LazyFrame) -> list[pl.Expr]:
    """``what_if`` (the ruleset is not played under the variant) where the frame has it."""
    return [pl.col("what_if").any()] if "what_if" in lf.collect_schema().names() else []


def player_stats(scored: pl.LazyFrame | pl.DataFrame, *, bootstrap: int = 1000,
                 seed: int = 7) -> pl.DataFrame:
    """Per player, variant and ruleset: results, spread, intervals, rates and style."""
    lf = scored.lazy().with_columns(
        opponents=(pl.col("n_seats") - 1).cast(pl.Int64),
        eligible=~pl.col("fantasyland") & (pl.col("variant") != Variant.CHINESE_13.value),
    )
    opponents = pl.col("opponents").sum()
    table = lf.group_by(*KEYS).agg(
        *_what_if(lf),
        hands=pl.len(),
        sessions=pl.col("session_id").n_unique(),
        total=pl.col("points").cast(pl.Int64).sum(),
        mean=_mean("points"),
        sd=_sd(),
        foul_rate=_mean("fouled"),
        fantasyland_entry_rate=_rate(pl.col("fantasyland_entered").sum(),
                                     pl.col("eligible").sum()),
        fantasyland_stay_rate=_rate(pl.col("fantasyland_stayed").sum(),
                                    pl.col("fantasyland").sum()),
        fantasyland_hands=pl.col("fantasyland").sum(),
        royalties_top=_mean("royalty_top"),
        royalties_middle=_mean("royalty_middle"),
        royalties_bottom=_mean("royalty_bottom"),
        royalty_points=_mean("royalty_points"),
        scoop_rate=_rate(pl.col("scoops").cast(pl.Int64).sum(), opponents),
        scooped_rate=_rate(pl.col("scooped").cast(pl.Int64).sum(), opponents),
        win_rate_top=_rate(pl.col("wins_top").cast(pl.Int64).sum(), opponents),
        win_rate_middle=_rate(pl.col("wins_middle").cast(pl.Int64).sum(), opponents),
        win_rate_bottom=_rate(pl.col("wins_bottom").cast(pl.Int64).sum(), opponents),
    ).with_columns(
        ci_low=pl.col("mean") - Z95 * pl.col("sd") / pl.col("hands").sqrt(),
        ci_high=pl.col("mean") + Z95 * pl.col("sd") / pl.col("hands").sqrt(),
        hands_for_1=(Z95 * pl.col("sd")).pow(2).ceil().cast(pl.Int64),
    ).collect()
    boot = session_bootstrap(lf, bootstrap=bootstrap, seed=seed)
    return _stable(as_text(table).join(boot, on=list(KEYS), how="left").sort(*KEYS))


def session_bootstrap(scored: pl.LazyFrame, *, bootstrap: int = 1000, seed: int = 7
                      ) -> pl.DataFrame:
    """95% percentile interval of mean points per hand, resampling whole sessions.

    Per player and variant, one matrix of multinomial weights (bootstrap x sessions)
    serves every ruleset, so the rulesets are compared on the same resamples; the
    resampled mean is ``(W @ points) / (W @ hands)``: sums of whole numbers, exact in
    any order. Same seed, same intervals.
    """
    per_session = scored.group_by(*KEYS, "session_id").agg(
        points=pl.col("points").sum().cast(pl.Float64), hands=pl.len(),
    ).with_columns(pl.col(pl.Categorical).cast(pl.String)).collect()
    rng = np.random.default_rng(seed)
    rows: list[tuple[str, str, str, float | None, float | None]] = []
    for (player, variant), group in per_session.sort("player", "variant").group_by(
            "player", "variant", maintain_order=True):
        wide = group.pivot(on="ruleset", index="session_id", values="points",
                           sort_columns=True).sort("session_id")
        counts = group.group_by("session_id").agg(pl.col("hands").max()).sort("session_id")
        names = [c for c in wide.columns if c != "session_id"]
        k = wide.height
        if k < 2:
            rows += [(str(player), str(variant), name, None, None) for name in names]
            continue
        points = wide.select(names).fill_null(0.0).to_numpy()
        hands = counts.get_column("hands").to_numpy().astype(np.float64)
        weights = rng.multinomial(k, np.full(k, 1.0 / k), size=bootstrap).astype(np.float64)
        means = (weights @ points) / (weights @ hands)[:, None]
        low, high = np.quantile(means, [0.025, 0.975], axis=0)
        rows += [(str(player), str(variant), name, float(lo), float(hi))
                 for name, lo, hi in zip(names, low, high, strict=True)]
    return pl.DataFrame(rows, schema={"player": pl.String, "variant": pl.String,
                                      "ruleset": pl.String, "boot_low": pl.Float64,
                                      "boot_high": pl.Float64}, orient="row")


def ruleset_stats(scored: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """Per variant and ruleset: volatility, royalty share, foul and fantasyland rates, and
    the skill signal, ranked within each variant (``skill_rank``: highest signal first,
    rounded to :data:`DECIMALS`, ties by ruleset name)."""
    lf = scored.lazy().with_columns(
        pl.col("variant").cast(pl.String), pl.col("ruleset").cast(pl.String),
        pl.col("player").cast(pl.String),
        eligible=~pl.col("fantasyland") & (pl.col("variant") != Variant.CHINESE_13.value))
    # The integer key counts hands faster than the text id, where the frame has it.
    hand = "hand_key" if "hand_key" in lf.collect_schema().names() else "hand_id"
    other = (pl.col("points") - pl.col("royalty_points")).cast(pl.Int64).abs().sum()
    royalty = pl.col("royalty_points").cast(pl.Int64).abs().sum()
    overall = lf.group_by("variant", "ruleset").agg(
        *_what_if(lf),
        hands=pl.col(hand).n_unique(),
        seat_hands=pl.len(),
        sd=_sd(),
        mean_abs_points=pl.col("points").cast(pl.Int64).abs().sum() / pl.len(),
        royalty_share=_rate(royalty, royalty + other),
        foul_rate=_mean("fouled"),
        fantasyland_entry_rate=_rate(pl.col("fantasyland_entered").sum(),
                                     pl.col("eligible").sum()),
    )
    # Player means from exact sums, in a fixed order: the spread and the pooled SD are
    # then the same whatever the thread count.
    players = lf.group_by("variant", "ruleset", "player").agg(
        n=pl.len(), mean=_mean("points"),
        within=(pl.col("points").cast(pl.Int64).pow(2).sum().cast(pl.Float64)
                - pl.col("points").cast(pl.Int64).sum().cast(pl.Float64).pow(2) / pl.len()),
    ).filter(pl.col("n") >= MIN_HANDS_FOR_SKILL).sort("variant", "ruleset", "player")
    skill = players.group_by("variant", "ruleset", maintain_order=True).agg(
        players=pl.len(),
        spread=pl.col("mean").std(),
        pooled_sd=(pl.col("within").sum() / (pl.col("n") - 1).sum()).sqrt(),
    ).with_columns(
        skill_signal=_rate(pl.col("spread"), pl.col("pooled_sd")),
    ).with_columns(
        # No signal at all (every player's mean equal): never told apart.
        hands_to_tell_apart=pl.when(pl.col("skill_signal") > 0).then(
            (Z95 / pl.col("skill_signal")).pow(2).ceil()).cast(pl.Int64),
    )
    joined = _stable(overall.join(skill, on=["variant", "ruleset"], how="left").collect())
    ranked = joined.sort(["variant", "skill_signal", "ruleset"],
                         descending=[False, True, False], nulls_last=True)
    return ranked.with_columns(
        skill_rank=pl.when(pl.col("skill_signal").is_not_null())
        .then(pl.int_range(1, pl.len() + 1).over("variant")).cast(pl.Int32),
    ).select("variant", "skill_rank", pl.exclude("variant", "skill_rank"))


def reported_differences(scored: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """Seats whose logged ``reported_points`` differ from the re-score under the played
    ruleset: a site's scoring quirk, or a logging error."""
    return scored.lazy().filter(
        pl.col("reported_points").is_not_null()
        & (pl.col("ruleset") == pl.col("played_ruleset"))
        & (pl.col("reported_points") != pl.col("points"))
    ).select(
        "hand_id", "session_id", "variant", "seat", "player", "ruleset",
        pl.col("reported_points").alias("reported"), pl.col("points").alias("rescored"),
        (pl.col("points") - pl.col("reported_points")).alias("difference"),
    ).sort("session_id", "hand_id", "seat").collect().pipe(as_text)
