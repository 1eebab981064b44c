"""Statistics over scored hands: per player and ruleset, per ruleset, and log checks.

Input is the *scored frame*: one row per ruleset, hand and seat, the result columns
of :mod:`ofcstats.score` after :func:`ofcstats.session.apply_repeat_limits`, with the
hand's ``session_id``, ``variant`` and ``n_seats`` and the seat's ``fantasyland``
flag. Everything is a Polars aggregation; the bootstrap resamples sessions with one
matrix product per player and ruleset.

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
  A higher signal means skill shows in fewer hands.
"""

from __future__ import annotations

import numpy as np
import polars as pl

Z95 = 1.959963984540054
MIN_HANDS_FOR_SKILL = 30

PLAYER_COLUMNS = (
    "player", "ruleset", "session_id", "variant", "n_seats", "points", "fouled",
    "fantasyland", "fantasyland_entered", "fantasyland_stayed", "royalty_top",
    "royalty_middle", "royalty_bottom", "royalty_points", "scoops", "scooped", "wins_top",
    "wins_middle", "wins_bottom",
)
"""The columns :func:`player_stats` reads: ask the store for these alone."""
RULESET_COLUMNS = (
    "ruleset", "hand_key", "player", "variant", "points", "royalty_points", "fouled",
    "fantasyland", "fantasyland_entered",
)
"""The columns :func:`ruleset_stats` reads (``hand_id`` will do for ``hand_key``)."""
DIFFERENCE_COLUMNS = (
    "hand_id", "session_id", "seat", "player", "ruleset", "played_ruleset",
    "reported_points", "points",
)
"""The columns :func:`reported_differences` reads."""


def _rate(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    return pl.when(denominator > 0).then(numerator / denominator).otherwise(None)


def as_text(frame: pl.DataFrame) -> pl.DataFrame:
    """Categorical columns (as ``scored_frame(..., categorical=True)`` gives) as strings:
    statistics are small, and plain strings join with anything."""
    return frame.with_columns(pl.col(pl.Categorical).cast(pl.String))


def player_stats(scored: pl.LazyFrame | pl.DataFrame, *, bootstrap: int = 1000,
                 seed: int = 7) -> pl.DataFrame:
    """Per player and ruleset: results, spread, intervals, rates and style."""
    lf = scored.lazy().with_columns(
        opponents=(pl.col("n_seats") - 1).cast(pl.Int64),
        eligible=~pl.col("fantasyland") & (pl.col("variant") != "chinese-13"),
    )
    n = pl.len()
    sd = pl.col("points").std()
    table = lf.group_by("player", "ruleset").agg(
        hands=n,
        sessions=pl.col("session_id").n_unique(),
        total=pl.col("points").sum(),
        mean=pl.col("points").mean(),
        sd=sd,
        foul_rate=pl.col("fouled").mean(),
        fantasyland_entry_rate=_rate(pl.col("fantasyland_entered").sum(),
                                     pl.col("eligible").sum()),
        fantasyland_stay_rate=_rate(pl.col("fantasyland_stayed").sum(),
                                    pl.col("fantasyland").sum()),
        fantasyland_hands=pl.col("fantasyland").sum(),
        royalties_top=pl.col("royalty_top").mean(),
        royalties_middle=pl.col("royalty_middle").mean(),
        royalties_bottom=pl.col("royalty_bottom").mean(),
        royalty_points=pl.col("royalty_points").mean(),
        scoop_rate=_rate(pl.col("scoops").sum(), pl.col("opponents").sum()),
        scooped_rate=_rate(pl.col("scooped").sum(), pl.col("opponents").sum()),
        win_rate_top=_rate(pl.col("wins_top").sum(), pl.col("opponents").sum()),
        win_rate_middle=_rate(pl.col("wins_middle").sum(), pl.col("opponents").sum()),
        win_rate_bottom=_rate(pl.col("wins_bottom").sum(), pl.col("opponents").sum()),
    ).with_columns(
        ci_low=pl.col("mean") - Z95 * pl.col("sd") / pl.col("hands").sqrt(),
        ci_high=pl.col("mean") + Z95 * pl.col("sd") / pl.col("hands").sqrt(),
        hands_for_1=(Z95 * pl.col("sd")).pow(2).ceil(),
    ).collect()
    boot = session_bootstrap(lf, bootstrap=bootstrap, seed=seed)
    return as_text(table).join(boot, on=["player", "ruleset"], how="left").sort(
        "ruleset", "player")


def session_bootstrap(scored: pl.LazyFrame, *, bootstrap: int = 1000, seed: int = 7
                      ) -> pl.DataFrame:
    """95% percentile interval of mean points per hand, resampling whole sessions.

    Per player, one matrix of multinomial weights (bootstrap x sessions) serves every
    ruleset, so the rulesets are compared on the same resamples; the resampled mean is
    ``(W @ points) / (W @ hands)``. Same seed, same intervals.
    """
    per_session = scored.group_by("player", "ruleset", "session_id").agg(
        points=pl.col("points").sum().cast(pl.Float64), hands=pl.len(),
    ).collect()
    rng = np.random.default_rng(seed)
    rows: list[tuple[str, str, float | None, float | None]] = []
    for (player,), group in per_session.sort("player").group_by("player",
                                                                maintain_order=True):
        wide = group.pivot(on="ruleset", index="session_id", values="points").sort(
            "session_id")
        counts = group.group_by("session_id").agg(pl.col("hands").max()).sort("session_id")
        names = [c for c in wide.columns if c != "session_id"]
        k = wide.height
        if k < 2:
            rows += [(str(player), name, None, None) for name in names]
            continue
        points = wide.select(names).fill_null(0.0).to_numpy()
        hands = counts.get_column("hands").to_numpy().astype(np.float64)
        weights = rng.multinomial(k, np.full(k, 1.0 / k), size=bootstrap).astype(np.float64)
        means = (weights @ points) / (weights @ hands)[:, None]
        low, high = np.quantile(means, [0.025, 0.975], axis=0)
        rows += [(str(player), name, float(lo), float(hi))
                 for name, lo, hi in zip(names, low, high, strict=True)]
    return pl.DataFrame(rows, schema={"player": pl.String, "ruleset": pl.String,
                                      "boot_low": pl.Float64, "boot_high": pl.Float64},
                        orient="row")


def ruleset_stats(scored: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """Per ruleset: volatility, royalty share, foul and fantasyland rates, skill signal."""
    lf = scored.lazy().with_columns(
        eligible=~pl.col("fantasyland") & (pl.col("variant") != "chinese-13"))
    # The integer key counts hands faster than the text id, where the frame has it.
    hand = "hand_key" if "hand_key" in lf.collect_schema().names() else "hand_id"
    overall = lf.group_by("ruleset").agg(
        hands=pl.col(hand).n_unique(),
        seat_hands=pl.len(),
        sd=pl.col("points").std(),
        mean_abs_points=pl.col("points").abs().mean(),
        royalty_share=_rate(pl.col("royalty_points").abs().sum(),
                            pl.col("royalty_points").abs().sum()
                            + (pl.col("points") - pl.col("royalty_points")).abs().sum()),
        foul_rate=pl.col("fouled").mean(),
        fantasyland_entry_rate=_rate(pl.col("fantasyland_entered").sum(),
                                     pl.col("eligible").sum()),
    )
    players = lf.group_by("ruleset", "player").agg(
        n=pl.len(), mean=pl.col("points").mean(), var=pl.col("points").var(),
    ).filter(pl.col("n") >= MIN_HANDS_FOR_SKILL)
    skill = players.group_by("ruleset").agg(
        players=pl.len(),
        spread=pl.col("mean").std(),
        pooled_sd=((pl.col("var") * (pl.col("n") - 1)).sum() / (pl.col("n") - 1).sum()).sqrt(),
    ).with_columns(
        skill_signal=_rate(pl.col("spread"), pl.col("pooled_sd")),
    ).with_columns(
        hands_to_tell_apart=(Z95 / pl.col("skill_signal")).pow(2).ceil(),
    )
    joined = as_text(overall.join(skill, on="ruleset", how="left").collect())
    return joined.with_columns(
        skill_rank=pl.col("skill_signal").rank("ordinal", descending=True).cast(pl.Int32),
    ).sort("skill_rank", nulls_last=True)


def reported_differences(scored: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """Seats whose logged ``reported_points`` differ from the re-score under the played
    ruleset: a site's scoring quirk, or a logging error."""
    return scored.lazy().filter(
        pl.col("reported_points").is_not_null()
        & (pl.col("ruleset") == pl.col("played_ruleset"))
        & (pl.col("reported_points") != pl.col("points"))
    ).select(
        "hand_id", "session_id", "seat", "player", "ruleset",
        pl.col("reported_points").alias("reported"), pl.col("points").alias("rescored"),
        (pl.col("points") - pl.col("reported_points")).alias("difference"),
    ).sort("session_id", "hand_id", "seat").collect().pipe(as_text)
