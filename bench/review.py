"""Decision review throughput, and the exact fantasyland solver by card count.

- ``ofcstats review`` over a whole store of simulated three-player Pineapple hands
  (random, balanced and aggressive seats), decisions written to the ``decisions``
  table: the default settings (opponents drawn, 256 rollouts, screen 6; one thread per
  core, at most two), whose target is 250 decisions/s on two idle cores, and beside it
  in turns (twice each, the machine's load changing) the baseline: the same with the
  leaders' race off (``RACE_Z`` 10^12: the leaders on all their ``4R`` selection
  rollouts, the step before the race); then the default in one thread (``--jobs 1``);
  and the closest the review still has to the earlier default (opponents logged, every
  candidate on 100 rollouts, the best's mean; its one-step valuing is gone):
  ``--opponents logged --rollouts 100 --screen 0``, with the leaders', the measuring
  and the confirming steps of today on top, so dearer than the earlier default was.
  A busy machine lowers decisions a second, far less decisions per processor second:
  two idle cores give at most twice the latter a second (less the work one thread does
  at a time), which the last column reports against the target.
- The review's exact fantasyland solver (:func:`ofcstats.review.core.solve_set`: every
  way to set 13 of the cards, priced against two opponents' final boards) on random
  hands of 14 to 17 cards, seconds per hand; targets: under a second for 14 cards, a
  few seconds (5) for 17.

Each review runs in a fresh process whose clock starts before anything is built: the
times include building the lookup tables and loading the compiled rollout rule, as a
user's later reviews pay them; the imports are not timed. The benchmark starts with an
empty cache of compiled code and fills it first with a small review, untimed (numba's
compiling, about 3 seconds, is what a user's first review pays once), so that the rows
taking turns pay the same. Each row prints decisions a second, decisions per processor
second (which a busy machine changes far less), the one-minute load average when it
ended, and the most two idle cores would give (twice decisions per processor second).
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ofcstats.ingest import ingest
from ofcstats.review import core
from ofcstats.review.core import FANTASYLAND_VALUE, _Opponents, solve_set
from ofcstats.review.store import Selection, Settings
from ofcstats.review.store import run as review_run
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Simulation, parse_players, write_jsonl
from ofcstats.simulate.scoring import ruleset_arrays
from ofcstats.store import Store
from ofcstats.variants import Variant

DEFAULT = "default: drawn, 256 rollouts, screen 6"
RACE_OFF = "baseline: default, race off"
REVIEWS = [
    # label, settings, jobs, hands (full, quick), race on, target decisions/s
    (DEFAULT, Settings(), 0, (300, 20), True, 250),
    (RACE_OFF, Settings(), 0, (300, 20), False, None),
    (DEFAULT, Settings(), 0, (300, 20), True, 250),
    (RACE_OFF, Settings(), 0, (300, 20), False, None),
    ("default, --jobs 1", Settings(), 1, (150, 10), True, None),
    ("baseline: logged, 100, screen 0", Settings(opponents="logged", rollouts=100, screen=0),
     0, (300, 20), True, None),
]
# cards, hands, target seconds per hand
FANTASYLAND: list[tuple[int, int, float | None]] = [(14, 10, 1.0), (15, 5, None), (16, 3, None),
                                                   (17, 3, 5.0)]


class _Boards(NamedTuple):
    """What :meth:`_Opponents.of` reads of a position: the opponents' final boards."""

    opponents: np.ndarray


def _store(directory: Path, hands: int, tag: str = "") -> Path:
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players("a:random,b:balanced,c:aggressive"), hands=hands,
                     seed=2)
    log = directory / f"review{hands}{tag}.jsonl"
    write_jsonl(sim, log)
    db = directory / f"review{hands}{tag}.duckdb"  # a fresh store for each row
    ingest([log], db)
    return db


def _cpu_seconds() -> float:
    """Processor time of this process, all its threads: on a shared machine
    ``dec/cpu-s`` says what a review costs whatever else runs (two cores give at most
    twice it a second)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed_review(db: Path, settings: Settings, jobs: int, race: bool
                  ) -> tuple[int, float, float]:
    """In a fresh process: decisions, seconds and processor seconds of a whole review
    (``race``: the leaders' race on, as by default)."""
    if not race:
        core.RACE_Z = 1e12  # no contender trails by so many errors
    with Store(db) as store:
        start, cpu = time.perf_counter(), _cpu_seconds()
        summary = review_run(store, Selection(), settings, jobs=jobs)
        return summary.decisions, time.perf_counter() - start, _cpu_seconds() - cpu


def run(quick: bool) -> None:
    """Print decisions per second of each review setting, and the solver's seconds."""
    spawn = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        cache = os.environ.get("NUMBA_CACHE_DIR")
        os.environ["NUMBA_CACHE_DIR"] = str(directory / "numba")  # the rows' own, empty
        warm = _store(directory, 4, "-warm")  # the compiling, untimed
        with ProcessPoolExecutor(1, mp_context=spawn) as fresh:
            fresh.submit(_timed_review, warm, Settings(), 1, True).result()
        print(f"{'review':40s} {'hands':>6s} {'decisions':>9s} {'seconds':>8s} "
              f"{'dec/s':>7s} {'dec/cpu-s':>9s} {'load':>5s} {'target':>6s} {'2 idle cores':>12s}")
        for row, (label, settings, jobs, (full, small), race, target) in enumerate(REVIEWS):
            hands = small if quick else full
            db = _store(directory, hands, f"-{row}")
            with ProcessPoolExecutor(1, mp_context=spawn) as fresh:
                decisions, seconds, cpu = fresh.submit(_timed_review, db, settings, jobs,
                                                       race).result()
            rate = decisions / seconds
            # At most two cores' worth of processor seconds a second, when they are idle.
            idle = 2 * decisions / cpu
            verdict = "(quick)" if quick else "" if target is None else \
                "ok" if rate >= target else "BELOW"
            shown = "-" if target is None else str(target)
            print(f"{label:40s} {hands:6d} {decisions:9d} {seconds:8.2f} {rate:7.1f} "
                  f"{decisions / cpu:9.1f} {os.getloadavg()[0]:5.1f} {shown:>6s} "
                  f"{'<=' + format(idle, '.0f'):>12s} {verdict}", flush=True)
        if cache is None:
            del os.environ["NUMBA_CACHE_DIR"]
        else:
            os.environ["NUMBA_CACHE_DIR"] = cache

    arrays = ruleset_arrays(load_ruleset("american"), Variant.PINEAPPLE)
    rng = np.random.default_rng(3)

    def solve(deck: np.ndarray, cards: int) -> None:
        opponents = _Boards(deck[cards:cards + 26].reshape(2, 13))
        solve_set(deck[:cards], arrays, _Opponents.of([opponents], arrays),  # type: ignore[list-item]
                  FANTASYLAND_VALUE)

    for cards, _, _ in FANTASYLAND:  # each size's tables, untimed
        solve(rng.permutation(52).astype(np.uint8), cards)
    print(f"\n{'fantasyland solver':40s} {'hands':>6s} {'s/hand':>9s} {'target':>8s}")
    for cards, hands, target in FANTASYLAND:
        count = 1 if quick else hands
        dealt = np.stack([rng.permutation(52) for _ in range(count)]).astype(np.uint8)
        start = time.perf_counter()
        for deck in dealt:  # one at a time: a review meets them one by one
            solve(deck, cards)
        per_hand = (time.perf_counter() - start) / count
        verdict = "" if target is None else "ok" if per_hand < target else "SLOW"
        shown = "-" if target is None else f"<{target:g}"
        print(f"{f'{cards} cards':40s} {count:6d} {per_hand:9.3f} {shown:>8s} {verdict}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small workloads, for a smoke test")
    run(parser.parse_args().quick)
