"""Decision review throughput, and the exact fantasyland solver by card count.

- ``ofcstats review`` over a whole store of simulated three-player Pineapple hands
  (random, balanced and aggressive seats), decisions written to the ``decisions``
  table: at the default settings (100 rollouts, the best 6 candidates of a 12-rollout
  screen valued on all 100) next to the baseline that values every candidate on every
  rollout; target 150 decisions/s. The default is timed in one process and in two
  (``--jobs 2``, the time to start the workers included).
- The exact fantasyland search (:func:`ofcstats.simulate.fantasyland.best_sets`) on
  random hands of 14 to 17 cards, seconds per hand; targets: under a second for 14
  cards, a few seconds for 17.

The lookup tables are built before the clock starts (they are built once per process).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from ofcstats.ingest import ingest
from ofcstats.review.store import Selection, Settings
from ofcstats.review.store import run as review_run
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Simulation, parse_players, write_jsonl
from ofcstats.simulate.bots import DEFAULT_STAY_BONUS
from ofcstats.simulate.fantasyland import best_sets
from ofcstats.simulate.scoring import ruleset_arrays
from ofcstats.store import Store
from ofcstats.variants import Variant

REVIEWS = [
    # label, settings, jobs, hands (full, quick), target decisions/s
    ("default (screen 6 of 12 rollouts)", Settings(), 1, (300, 20), 150),
    ("default, --jobs 2", Settings(), 2, (300, 20), 150),
    ("baseline: every candidate", Settings(screen=None), 1, (100, 8), None),
]
FANTASYLAND = [(14, 20, 1.0), (15, 8, None), (16, 4, None), (17, 2, 5.0)]  # cards, hands, target


def _store(directory: Path, hands: int, tag: str = "") -> Path:
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players("a:random,b:balanced,c:aggressive"), hands=hands,
                     seed=2)
    log = directory / f"review{hands}{tag}.jsonl"
    write_jsonl(sim, log)
    db = directory / f"review{hands}{tag}.duckdb"  # a fresh store for each row
    ingest([log], db)
    return db


def run(quick: bool) -> None:
    """Print decisions per second of each review setting, and the solver's seconds."""
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        warm = _store(directory, 3)
        with Store(warm) as store:  # build the tables once, untimed
            review_run(store, Selection(), Settings(rollouts=10))
        print(f"{'review':36s} {'hands':>6s} {'decisions':>9s} {'seconds':>8s} "
              f"{'dec/s':>7s} {'target':>6s}")
        for row, (label, settings, jobs, (full, small), target) in enumerate(REVIEWS):
            hands = small if quick else full
            db = _store(directory, hands, f"-{row}")
            with Store(db) as store:
                start = time.perf_counter()
                summary = review_run(store, Selection(), settings, jobs=jobs)
                seconds = time.perf_counter() - start
            rate = summary.decisions / seconds
            verdict = "(quick)" if quick else "" if target is None else \
                "ok" if rate >= target else "BELOW"
            shown = "-" if target is None else str(target)
            print(f"{label:36s} {hands:6d} {summary.decisions:9d} {seconds:8.2f} {rate:7.1f} "
                  f"{shown:>6s} {verdict}")

    arrays = ruleset_arrays(load_ruleset("american"), Variant.PINEAPPLE)
    rng = np.random.default_rng(3)
    best_sets(rng.permutation(52)[:14].astype(np.uint8)[None], arrays, DEFAULT_STAY_BONUS)
    print(f"\n{'fantasyland solver':36s} {'hands':>6s} {'s/hand':>9s} {'target':>8s}")
    for cards, hands, target in FANTASYLAND:
        count = 1 if quick else hands
        dealt = np.stack([rng.permutation(52)[:cards] for _ in range(count)]).astype(np.uint8)
        start = time.perf_counter()
        for hand in dealt:  # one at a time: a review meets them one by one
            best_sets(hand[None], arrays, DEFAULT_STAY_BONUS)
        per_hand = (time.perf_counter() - start) / count
        verdict = "" if target is None else "ok" if per_hand < target else "SLOW"
        shown = "-" if target is None else f"<{target:g}"
        print(f"{f'{cards} cards':36s} {count:6d} {per_hand:9.3f} {shown:>8s} {verdict}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small workloads, for a smoke test")
    run(parser.parse_args().quick)
