"""Short sessions (apps log a sitting of a few hands as one) give the answers long ones
do by the same rules: the sessions are counted in the database as a plain count of the
ids reads them (ids of every script, a hand with no session counted as one), from the
store and from a frame alike."""

from __future__ import annotations

import json
from pathlib import Path

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


def _per_session(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.group_by("player", "variant", "ruleset", "session_id").agg(
        points=pl.col("points").sum().cast(pl.Float64), hands=pl.len())


def test_players_from_the_store_and_from_its_frame_agree(database: Path) -> None:
    with Store(database, read_only=True) as store:
        stored = stats.player_stats_of(analysis.stored_rows(store, Filters()))
        frame = analysis.scored_frame(store)
    assert_frame_equal(stored, stats.player_stats(frame).select(stored.columns),
                       check_exact=True)
    sessions = _per_session(frame).group_by("player", "variant", "ruleset").agg(
        sessions=pl.len())
    assert_frame_equal(stored.select(*stats.KEYS, "sessions"), sessions.sort(*stats.KEYS),
                       check_dtypes=False)
    # Short sittings: more sessions than three a player, each counted once.
    assert stored.get_column("sessions").max() > 3


def test_hands_with_no_session_are_one_session(database: Path) -> None:
    with Store(database, read_only=True) as store:
        frame = analysis.scored_frame(store)
    some = frame.filter(pl.col("player") == "ann").with_columns(
        session_id=pl.when(pl.col("hand_id").str.ends_with("1")).then(None)
        .otherwise(pl.col("session_id")))
    with stats.frame_rows(some) as rows:
        counted = stats.session_counts(rows)
    expected = some.group_by("player", "variant", "ruleset").agg(
        sessions=pl.col("session_id").n_unique())  # null counts as one value
    assert_frame_equal(counted, expected.sort(*stats.KEYS), check_dtypes=False)
    assert some.get_column("session_id").null_count() > 0
