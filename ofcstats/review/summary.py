"""Reading the ``decisions`` table back: per player EV loss, by street and situation,
and the biggest mistakes."""

from __future__ import annotations

import polars as pl

from ofcstats.review.core import MISTAKES
from ofcstats.review.replay import placement_text
from ofcstats.review.situations import ORDER
from ofcstats.review.store import Selection, Settings, reviewed_as
from ofcstats.store import Store
from ofcstats.store import decisions as stored

Z95 = 1.959964


def skipped_text(skipped: dict[str, int]) -> str:
    """One line counting the seats a review left out (see
    :func:`ofcstats.review.store.skipped`); empty when none.

    >>> skipped_text({"timed_out": 2, "chinese_13": 0, "final_rows": 1})
    ... # doctest: +ELLIPSIS
    'Not reviewed: 2 seats that timed out (placed for the player), 1 seat logged with its...'
    """
    what = {"timed_out": "that timed out (placed for the player)",
            "chinese_13": "of 13-card hands (no streets)",
            "final_rows": "logged with {its} final rows only"}
    parts = []
    for key, text in what.items():
        count = skipped.get(key, 0)
        if count:
            noun = "seat" if count == 1 else "seats"
            parts.append(f"{count} {noun} {text.format(its='its' if count == 1 else 'their')}")
    return f"Not reviewed: {', '.join(parts)}." if parts else ""


def decisions_frame(store: Store, selection: Selection | None = None,
                    settings: Settings | None = None) -> pl.DataFrame:
    """The stored decisions of the selected hands and seats under ``settings``."""
    selection = selection or Selection()
    settings = settings or Settings()
    return stored.decisions(store, selection, settings.reviewed(reviewed_as(settings)))


def street_label(street: pl.Expr, fantasyland: pl.Expr) -> pl.Expr:
    """``street_1`` ... or ``fantasyland_set``."""
    return pl.when(fantasyland).then(pl.lit("fantasyland_set")).otherwise(
        pl.lit("street_") + street.cast(pl.String))


def player_summary(frame: pl.DataFrame) -> pl.DataFrame:
    """Per variant and player: decisions, mean and total EV loss with a 95% interval of
    the mean, the mean loss per decision of each street, and the total loss by kind of
    mistake. Variants are never mixed: their streets differ."""
    keys = ["variant", "player"]
    if frame.is_empty():
        return pl.DataFrame(schema={"variant": pl.String, "player": pl.String,
                                    "decisions": pl.UInt32, "mean_ev_loss": pl.Float64,
                                    "total_ev_loss": pl.Float64})
    base = frame.group_by(keys).agg(
        decisions=pl.len(), mean_ev_loss=pl.col("ev_loss").mean(),
        total_ev_loss=pl.col("ev_loss").sum(), sd=pl.col("ev_loss").std(),
        mistakes=pl.col("mistake").is_not_null().sum())
    half = Z95 * pl.col("sd").fill_null(0) / pl.col("decisions").sqrt()
    base = base.with_columns(ci_low=pl.col("mean_ev_loss") - half,
                             ci_high=pl.col("mean_ev_loss") + half).drop("sd")
    labelled = frame.with_columns(label=street_label(pl.col("street"), pl.col("fantasyland")))
    streets = sorted(labelled["label"].unique().to_list(),
                     key=lambda s: (s == "fantasyland_set", len(s), s))
    by_street = labelled.pivot("label", index=keys, values="ev_loss",
                               aggregate_function="mean").select(*keys, *streets)
    kinds = frame.filter(pl.col("mistake").is_not_null())
    by_kind = frame.select(keys).unique()
    for kind in MISTAKES:
        part = kinds.filter(pl.col("mistake") == kind).group_by(keys).agg(
            pl.col("ev_loss").sum().alias(f"loss_{kind}"))
        by_kind = by_kind.join(part, on=keys, how="left")
    return (base.join(by_street, on=keys, how="left")
            .join(by_kind.fill_null(0.0), on=keys, how="left").sort(keys))


def street_summary(frame: pl.DataFrame) -> pl.DataFrame:
    """Per variant, player and street (``street_1`` ... ``fantasyland_set``): decisions,
    the mean EV loss and its normal 95% interval over the decisions."""
    keys = ["variant", "player", "street"]
    if frame.is_empty():
        return pl.DataFrame(schema={"variant": pl.String, "player": pl.String,
                                    "street": pl.String, "decisions": pl.UInt32,
                                    "mean_ev_loss": pl.Float64, "ci_low": pl.Float64,
                                    "ci_high": pl.Float64})
    labelled = frame.with_columns(street=street_label(pl.col("street"), pl.col("fantasyland")))
    out = labelled.group_by(keys).agg(decisions=pl.len(), mean_ev_loss=pl.col("ev_loss").mean(),
                                      sd=pl.col("ev_loss").std())
    half = Z95 * pl.col("sd").fill_null(0) / pl.col("decisions").sqrt()
    return (out.with_columns(ci_low=pl.col("mean_ev_loss") - half,
                             ci_high=pl.col("mean_ev_loss") + half).drop("sd")
            .with_columns(order=pl.col("street").str.len_chars())
            .sort(["variant", "player", "order", "street"]).drop("order"))


def situation_summary(frame: pl.DataFrame) -> pl.DataFrame:
    """Per variant, player and situation (:data:`ofcstats.review.situations.SITUATIONS`,
    in that order): decisions, the mean EV loss with its normal 95% interval over the
    decisions, and the table's (every player's decisions in the same situation) beside
    it, with ``vs_table``, the player's mean minus the table's."""
    keys = ["variant", "player", "situation"]
    schema = {"variant": pl.String, "player": pl.String, "situation": pl.String,
              "decisions": pl.UInt32, "mean_ev_loss": pl.Float64, "ci_low": pl.Float64,
              "ci_high": pl.Float64, "table_decisions": pl.UInt32,
              "table_mean_ev_loss": pl.Float64, "vs_table": pl.Float64}
    if frame.is_empty():
        return pl.DataFrame(schema=schema)
    each = frame.select("variant", "player", "ev_loss",
                        pl.col("situations").alias("situation")).explode("situation")
    each = each.filter(pl.col("situation").is_not_null())
    out = each.group_by(keys).agg(decisions=pl.len(), mean_ev_loss=pl.col("ev_loss").mean(),
                                  sd=pl.col("ev_loss").std())
    table = each.group_by("variant", "situation").agg(
        table_decisions=pl.len(), table_mean_ev_loss=pl.col("ev_loss").mean())
    half = Z95 * pl.col("sd").fill_null(0) / pl.col("decisions").sqrt()
    order = pl.col("situation").replace_strict(ORDER, default=len(ORDER),
                                               return_dtype=pl.Int32)
    return (out.with_columns(ci_low=pl.col("mean_ev_loss") - half,
                             ci_high=pl.col("mean_ev_loss") + half).drop("sd")
            .join(table, on=["variant", "situation"], how="left")
            .with_columns(vs_table=pl.col("mean_ev_loss") - pl.col("table_mean_ev_loss"),
                          order=order)
            .sort(["variant", "player", "order"]).drop("order")
            .select(list(schema)).cast(schema))  # type: ignore[arg-type]


def biggest_mistakes(frame: pl.DataFrame, count: int = 10) -> pl.DataFrame:
    """Each player's ``count`` costliest mistakes in each variant (decisions whose loss
    exceeds ``SE_MULTIPLE`` standard errors), with the hand ids to replay them."""
    if frame.is_empty():
        return pl.DataFrame(schema={"variant": pl.String, "player": pl.String,
                                    "hand_id": pl.String})
    top = (frame.filter(pl.col("mistake").is_not_null())
           .sort(["variant", "player", "ev_loss", "hand_id", "seat", "street"],
                 descending=[False, False, True, False, False, False])
           .group_by(["variant", "player"], maintain_order=True).head(count))
    chosen = [placement_text(d, r) for d, r in zip(top["dealt"], top["chosen"], strict=True)]
    best = [placement_text(d, r) for d, r in zip(top["dealt"], top["best"], strict=True)]
    return top.select(
        "variant", "player", "hand_id", "seat", "street", "fantasyland", "mistake", "ev_chosen",
        "ev_best", "ev_loss", "ev_loss_se").with_columns(chosen=pl.Series(chosen, dtype=pl.String),
                                           best=pl.Series(best, dtype=pl.String))
