"""The skill signal on tables the bots play (not run by the test suite: minutes, not
seconds). Three ``balanced`` players at 2,000 Pineapple hands (no player is better), or
``random``, ``balanced`` and ``aggressive`` at 600 (against the signal of one table of
``--truth`` hands), every ruleset played under Pineapple:

    PYTHONPATH=$PWD python tests/uncertaintybots.py equal --tables 40 --hands 2000
    PYTHONPATH=$PWD python tests/uncertaintybots.py skill --tables 60 --hands 600 --truth 60000

prints, per ruleset, how often the skill signal's interval reaches 0 and the mean
estimate (``equal``), or how often the interval stays above 0 and holds the truth
(``skill``), with ``compare``'s own settings (1,000 resamples, seed 7).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import polars as pl

from ofcstats import analysis
from ofcstats.analysis import Filters
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.rules import load_rulesets, presets_played_in
from ofcstats.simulate import Player, Simulation, write_jsonl
from ofcstats.store import Store
from ofcstats.variants import Variant

STYLES = {"equal": ("balanced",) * 3, "skill": ("random", "balanced", "aggressive")}


def table(styles: tuple[str, ...], hands: int, seed: int) -> pl.DataFrame:
    """``compare``'s table of one simulated table."""
    variant = Variant("pineapple")
    with tempfile.TemporaryDirectory() as folder:
        log, db = Path(folder) / "t.jsonl", Path(folder) / "t.duckdb"
        write_jsonl(Simulation(variant, load_rulesets(["american"])[0],
                               [Player(f"p{i}", s) for i, s in enumerate(styles)], hands,
                               seed=seed), log)
        ingest([log], db)
        with Store(db) as store:
            rescore(store, load_rulesets(presets_played_in(variant)))
        with Store(db, read_only=True) as store:
            return analysis.comparison(store, Filters()).table.sort("ruleset")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=sorted(STYLES))
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--truth", type=int, default=60_000)
    args = parser.parse_args()
    styles = STYLES[args.kind]
    tables = [table(styles, args.hands, 1000 + seed) for seed in range(args.tables)]
    found = pl.concat(tables)
    if args.kind == "equal":
        every = sum(bool((t.get_column("skill_signal_ci_low") == 0).all()) for t in tables)
        print(f"interval reaches 0 under every ruleset: {every}/{len(tables)}")
        print(found.group_by("ruleset").agg(
            reaches_0=(pl.col("skill_signal_ci_low") == 0).mean(),
            mean_estimate=pl.col("skill_signal").mean()).sort("ruleset"))
        print(f"mean estimate over every ruleset: {found['skill_signal'].mean():.4f}")
        return
    truth = table(styles, args.truth, 999).select("ruleset", truth="skill_signal")
    print(found.join(truth, on="ruleset").group_by("ruleset").agg(
        above_0=(pl.col("skill_signal_ci_low") > 0).mean(),
        holds_truth=((pl.col("skill_signal_ci_low") <= pl.col("truth"))
                     & (pl.col("truth") <= pl.col("skill_signal_ci_high"))).mean(),
        truth=pl.col("truth").first()).sort("ruleset"))


if __name__ == "__main__":
    main()
