"""Simulator throughput: three-player Pineapple hands per second on one core.

Two workloads, each timed end to end (deal, every decision, fantasyland, scoring the
reported points with ``ofcstats.score``, and writing the JSON Lines file):

- the three heuristic bots (safe, balanced, aggressive); target 2,000 hands/s;
- Monte Carlo at 100 rollouts per decision; target 20 hands/s, measured with one
  ``montecarlo`` seat among heuristic ones and with ``montecarlo`` in every seat.

The lookup tables are built before the clock starts (they are built once per process).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from ofcstats.rules import load_ruleset
from ofcstats.simulate import Simulation, parse_players, write_jsonl
from ofcstats.variants import Variant

WORKLOADS = [
    # label, players, hands (full, quick), target hands/s
    ("heuristic bots", "a:safe,b:balanced,c:aggressive", (20_000, 3_000), 2000),
    ("montecarlo@100, 1 of 3 seats", "a:montecarlo,b:balanced,c:safe", (600, 120), 20),
    ("montecarlo@100, 3 of 3 seats", "a:montecarlo,b:montecarlo,c:montecarlo", (600, 60), 20),
]


def _time(players: str, hands: int, directory: Path) -> float:
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players(players), hands=hands, seed=1, rollouts=100)
    start = time.perf_counter()
    write_jsonl(sim, directory / "bench.jsonl")
    return time.perf_counter() - start


def run(quick: bool) -> None:
    """Print hands per second for each workload next to its target."""
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        _time("a:safe,b:montecarlo", 12, directory)  # build the tables once, untimed
        print(f"{'workload':32s} {'hands':>7s} {'seconds':>8s} {'hands/s':>8s} {'target':>7s}")
        for label, players, (full, small), target in WORKLOADS:
            hands = small if quick else full
            seconds = _time(players, hands, directory)
            rate = hands / seconds
            # A quick run plays a few tables at once, so its rate says nothing of the target.
            verdict = "(quick)" if quick else "ok" if rate >= target else "BELOW"
            print(f"{label:32s} {hands:7d} {seconds:8.2f} {rate:8.0f} {target:7d} {verdict}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small workloads, for a smoke test")
    run(parser.parse_args().quick)
