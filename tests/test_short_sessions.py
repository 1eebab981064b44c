"""Short sessions (apps log a sitting of a few hands as one) give the answers long ones
do by the same rules: the session bootstrap read by codes equals its plain reading (a
pivot per player and variant, the weights drawn as multinomials or counted from draws),
from the store and from a frame alike."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from ofcstats import analysis, stats
from ofcstats.analysis import Filters
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.rules import load_ruleset, load_rulesets
from ofcstats.simulate import Player, Simulation, simulate
from ofcstats.store import Store
from ofcstats.variants import Variant

SESSION_IDS = ["z", "Ärger-1", "a-10", "a-9", "sitting {3}", "日本", "a's"]
"""Ids of every length and script: the codes keep the order the ids sort in."""


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Pineapple hands of ann, bob and cy in sittings of 1 to 4 hands, {dan}'s (braces and
    a quote in a name) sitting in some of them in ann's place, and chinese-13 hands of dee
    and eve."""
    folder = tmp_path_factory.mktemp("short")
    lines = []
    for variant, ruleset, names, seed in (("pineapple", "american", ["ann", "bob", "cy"], 1),
                                          ("pineapple", "american", ["{dan}'s", "bob", "cy"], 2),
                                          ("chinese-13", "russian", ["dee", "eve"], 3)):
        sim = Simulation(variant=Variant(variant), ruleset=load_ruleset(ruleset),
                         players=[Player(name, "balanced") for name in names], hands=36,
                         seed=seed, prefix=f"{variant}-{seed}")
        for i, hand in enumerate(simulate(sim)):
            hand["session_id"] = f"{SESSION_IDS[(i // 3 + seed) % len(SESSION_IDS)]}-{seed}" \
                if i % 5 else f"{SESSION_IDS[i % len(SESSION_IDS)]}"
            lines.append(json.dumps(hand) + "\n")
    log = folder / "short.jsonl"
    log.write_text("".join(lines), encoding="utf-8")
    db = folder / "short.duckdb"
    ingest([log], db)
    with Store(db) as store:
        rescore(store, load_rulesets(["american", "russian", "pokerstars"]))
    return db


def plain_bootstrap(per_session: pl.DataFrame, bootstrap: int, seed: int, draws_from: int,
                    chunk: int) -> pl.DataFrame:
    """The session bootstrap as it reads: per player and variant, the sessions pivoted by
    id, and each resample's weights a multinomial, or from ``draws_from`` sessions the
    sessions it drew (``chunk`` resamples to a draw) counted."""
    rng = np.random.default_rng(seed)
    rows = []
    for (player, variant), group in per_session.sort("player", "variant").group_by(
            "player", "variant", maintain_order=True):
        wide = group.pivot(on="ruleset", index="session_id", values="points",
                           sort_columns=True).sort("session_id")
        counts = group.group_by("session_id").agg(pl.col("hands").max()).sort("session_id")
        names = [c for c in wide.columns if c != "session_id"]
        k = wide.height
        if k < 2:
            rows += [(player, variant, name, None, None) for name in names]
            continue
        points = wide.select(names).fill_null(0.0).to_numpy()
        hands = counts.get_column("hands").to_numpy().astype(np.float64)
        if k < draws_from:
            weights = rng.multinomial(k, np.full(k, 1.0 / k), size=bootstrap)
        else:
            weights = np.concatenate([
                [np.bincount(drawn, minlength=k) for drawn in rng.integers(
                    0, k, size=(min(chunk, bootstrap - start), k), dtype=np.int32)]
                for start in range(0, bootstrap, chunk)])
        weights = weights.astype(np.float64)
        means = (weights @ points) / (weights @ hands)[:, None]
        low, high = np.quantile(means, [0.025, 0.975], axis=0)
        rows += [(player, variant, name, float(lo), float(hi))
                 for name, lo, hi in zip(names, low, high, strict=True)]
    return pl.DataFrame(rows, schema={"player": pl.String, "variant": pl.String,
                                      "ruleset": pl.String, "boot_low": pl.Float64,
                                      "boot_high": pl.Float64}, orient="row")


def _per_session(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.group_by("player", "variant", "ruleset", "session_id").agg(
        points=pl.col("points").sum().cast(pl.Float64), hands=pl.len())


@pytest.mark.parametrize("draws_from", [stats.SESSION_DRAWS_FROM, 2],
                         ids=["multinomial", "counted"])
def test_the_session_bootstrap_by_codes_is_its_plain_reading(
        database: Path, draws_from: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stats, "SESSION_DRAWS_FROM", draws_from)
    monkeypatch.setattr(stats, "SESSION_CHUNK", 7)  # resamples drawn over several chunks
    with Store(database, read_only=True) as store:
        rows = analysis.stored_rows(store, Filters())
        found = stats.session_bootstrap(stats.session_sums(rows), bootstrap=30, seed=5)
        frame = analysis.scored_frame(store)
    assert found.height == frame.select("player", "variant", "ruleset").unique().height
    expected = plain_bootstrap(_per_session(frame), 30, 5, draws_from, 7)
    assert_frame_equal(found, expected, check_exact=True)


@pytest.mark.parametrize("draws_from", [stats.SESSION_DRAWS_FROM, 2],
                         ids=["multinomial", "counted"])
def test_players_from_the_store_and_from_its_frame_agree(
        database: Path, draws_from: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stats, "SESSION_DRAWS_FROM", draws_from)
    with Store(database, read_only=True) as store:
        stored = stats.player_stats_of(analysis.stored_rows(store, Filters()), bootstrap=40)
        frame = analysis.scored_frame(store)
    assert_frame_equal(stored, stats.player_stats(frame, bootstrap=40).select(stored.columns),
                       check_exact=True)
    sessions = _per_session(frame).group_by("player", "variant", "ruleset").agg(
        sessions=pl.len())
    assert_frame_equal(stored.select(*stats.KEYS, "sessions"), sessions.sort(*stats.KEYS),
                       check_dtypes=False)
