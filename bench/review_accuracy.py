"""How far a review's numbers are from the truth: hindsight, bias and stability.

On simulated three-player Pineapple hands (random, balanced and Monte Carlo seats), this
reviews the same hands several ways and prints what ``docs/review.md`` reports:

- **hindsight**: opponents drawn (the default) against their final boards as logged:
  each player's mean loss, on the first street too, and how often the best placement
  differs;
- **bias**: each player's mean loss at the default settings against a review with
  3,200 rollouts (the reference), the relative difference, and the share of decisions
  the default calls a mistake where the reference finds the play made best;
- **stability**: two seeds at the default settings: how many of each player's ten
  biggest mistakes they share, and how often their best placements agree.

Every review is the library's (:func:`ofcstats.review.store.run`); the reference is the
same method with ``--rollouts 3200``. Run ``python bench/review_accuracy.py`` (about ten
minutes on two cores; ``--quick`` for a smoke test).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import polars as pl

from ofcstats.ingest import ingest
from ofcstats.review.store import Selection, Settings, run
from ofcstats.review.summary import biggest_mistakes, decisions_frame
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Simulation, parse_players, write_jsonl
from ofcstats.store import Store
from ofcstats.variants import Variant

PLAYERS = "rand:random,bal:balanced,mc:montecarlo"
KEY = ["hand_id", "seat", "street"]


def _store(directory: Path, hands: int) -> Path:
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players(PLAYERS), hands=hands, seed=21, rollouts=40)
    log = directory / "accuracy.jsonl"
    write_jsonl(sim, log)
    db = directory / "accuracy.duckdb"
    ingest([log], db)
    return db


def _review(db: Path, settings: Settings) -> pl.DataFrame:
    with Store(db) as store:
        start = time.perf_counter()
        run(store, Selection(), settings, jobs=min(2, len(os.sched_getaffinity(0))))
        seconds = time.perf_counter() - start
        frame = decisions_frame(store, Selection(), settings)
    print(f"  reviewed {frame.height} decisions in {seconds:.1f} s: {_label(settings)}",
          flush=True)
    return frame


def _label(settings: Settings) -> str:
    return (f"opponents {settings.opponents}, {settings.rollouts} rollouts, seed "
            f"{settings.seed}, screen {settings.screen}")


def _means(frame: pl.DataFrame, name: str, first: bool = False) -> pl.DataFrame:
    if first:
        frame = frame.filter((pl.col("street") == 1) & ~pl.col("fantasyland"))
    return frame.group_by("player").agg(pl.col("ev_loss").mean().alias(name))


def _best_differs(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    joined = a.select(*KEY, "player", "best").join(b.select(*KEY, best_b="best"), on=KEY)
    return joined.with_columns(differs=pl.col("best") != pl.col("best_b"),
                               first=pl.col("street") == 1)


def hindsight(drawn: pl.DataFrame, logged: pl.DataFrame) -> None:
    """Mean losses of the two modes, and how often their best placements differ."""
    print("\nHindsight: opponents drawn against logged (mean EV loss per decision)")
    table = (_means(drawn, "drawn").join(_means(logged, "logged"), on="player")
             .join(_means(drawn, "drawn_street_1", True), on="player")
             .join(_means(logged, "logged_street_1", True), on="player")
             .with_columns(lower=1 - pl.col("drawn") / pl.col("logged"),
                           lower_street_1=1 - pl.col("drawn_street_1")
                           / pl.col("logged_street_1")).sort("player"))
    print(table)
    whole = 1 - drawn["ev_loss"].mean() / logged["ev_loss"].mean()  # type: ignore[operator]
    first_d = drawn.filter(pl.col("street") == 1)["ev_loss"].mean()
    first_l = logged.filter(pl.col("street") == 1)["ev_loss"].mean()
    differs = _best_differs(drawn, logged)
    print(f"overall: drawn {drawn['ev_loss'].mean():.3f}, logged {logged['ev_loss'].mean():.3f}"
          f" ({whole:.0%} lower drawn); street 1: drawn {first_d:.3f}, logged {first_l:.3f} "
          f"({1 - first_d / first_l:.0%} lower)")  # type: ignore[operator]
    print(f"best placement differs in {differs['differs'].mean():.0%} of decisions, "
          f"{differs.filter('first')['differs'].mean():.0%} on street 1")


def bias(default: pl.DataFrame, reference: pl.DataFrame) -> None:
    """Each player's mean loss at the default settings against the reference."""
    print("\nBias: default settings against 3,200 rollouts (mean EV loss per decision)")
    table = (_means(default, "default").join(_means(reference, "reference"), on="player")
             .with_columns(difference=pl.col("default") - pl.col("reference"))
             .with_columns(relative=pl.col("difference") / pl.col("reference"),
                           within=(pl.col("difference").abs() <= 0.1)
                           | (pl.col("difference").abs() <= 0.05 * pl.col("reference")))
             .sort("player"))
    print(table)
    joined = default.select(*KEY, "mistake").join(
        reference.select(*KEY, ref_loss="ev_loss", ref_se="ev_loss_se",
                         ref_best="best", chosen="chosen"), on=KEY)
    made_best = joined.filter(pl.col("ref_best") == pl.col("chosen"))
    charged = made_best["mistake"].is_not_null().mean()
    print(f"decisions where the reference keeps the play made as best: {made_best.height}; "
          f"the default calls {charged:.1%} of them a mistake")


def stability(a: pl.DataFrame, b: pl.DataFrame) -> None:
    """Shared top-ten mistakes per player, and agreement of the best placements."""
    print("\nStability: two seeds at the default settings")
    top_a, top_b = biggest_mistakes(a), biggest_mistakes(b)
    for (player,), part in top_a.group_by("player", maintain_order=True):
        mine = set(map(tuple, part.select(KEY).rows()))
        theirs = set(map(tuple, top_b.filter(pl.col("player") == player).select(KEY).rows()))
        print(f"{player}: {len(mine & theirs)} of the 10 biggest mistakes shared "
              f"({len(mine)} and {len(theirs)} listed)")
    differs = _best_differs(a, b)
    print(f"best placement differs in {differs['differs'].mean():.0%} of decisions, "
          f"{differs.filter('first')['differs'].mean():.0%} on street 1")


def main(quick: bool) -> None:
    """Review the hands every way and print the three comparisons."""
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        db = _store(Path(folder), 8 if quick else 60)
        reference_rollouts = 400 if quick else 3200
        default = _review(db, Settings())
        logged = _review(db, Settings(opponents="logged"))
        other = _review(db, Settings(seed=1))
        reference = _review(db, Settings(rollouts=reference_rollouts, seed=2))
    hindsight(default, logged)
    bias(default, reference)
    stability(default, other)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few hands, for a smoke test")
    main(parser.parse_args().quick)
