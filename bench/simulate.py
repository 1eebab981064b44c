"""Simulator throughput: three-player Pineapple hands per second on one core.

Two workloads, each timed end to end (deal, every decision, fantasyland, scoring the
reported points with ``ofcstats.score``, and writing the JSON Lines file):

- the three heuristic bots (safe, balanced, aggressive); target 2,000 hands/s;
- Monte Carlo at 100 rollouts per decision; target 20 hands/s, measured with one
  ``montecarlo`` seat among heuristic ones and with ``montecarlo`` in every seat.

The lookup tables are built before the clock starts (they are built once per process).

Then the heuristic workload as written block by block: seconds until the file holds its
first hands (what a run stopped by Ctrl-C then keeps) and to the end, with today's blocks
(128 tables, twice as many each next, up to 2,048) beside the baseline of blocks of
2,048 tables from the first; the file differs (each block deals from its own seeds).

Then the README tour's run (300 Pineapple hands, aggressive, safe and montecarlo seats,
seed 7), each in a fresh process whose clock starts after the imports, as a user's run
pays it: today's against the baseline, the play-out of before, which listed every way to
place an opponent's last street though it plays it by the rule (for an opponent in
fantasyland, every way to set 13 cards: seconds, once per process, on the first decision
that meets one). Each row gives the run's seconds and its slowest decision (a round of
decisions, all tables at once, as the progress display sees it); both write the same
hands.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import ofcstats.simulate as simulating
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Simulation, game, montecarlo, parse_players, write_jsonl
from ofcstats.simulate.tables import pattern_counts, patterns
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


TOUR = "alice:aggressive,bob:safe,carol:montecarlo"


def _first_hands(first_tables: int, players: str, hands: int,
                 directory: Path) -> tuple[float, float]:
    """Seconds until the file holds its first hands, and to the end, with blocks that
    begin at ``first_tables`` tables."""
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players(players), hands=hands, seed=1)
    path = directory / "blocks.jsonl"
    path.unlink(missing_ok=True)
    shipped, simulating.FIRST_TABLES = simulating.FIRST_TABLES, first_tables
    first = [0.0]
    start = time.perf_counter()

    def seen(done: int, total: int) -> None:
        if not first[0] and path.exists() and path.stat().st_size:
            first[0] = time.perf_counter() - start

    try:
        write_jsonl(sim, path, seen)
    finally:
        simulating.FIRST_TABLES = shipped
    seconds = time.perf_counter() - start
    return first[0] or seconds, seconds


def _blocks(quick: bool, directory: Path) -> None:
    """The heuristic workload with today's blocks beside blocks of the most tables from
    the first, in turns."""
    label, players, (full, small), _ = WORKLOADS[0]
    hands = small if quick else full
    print(f"\n{label + f', {hands:,} hands':40s} {'first hands':>12s} {'seconds':>8s}")
    rows = (("baseline: blocks of 2,048 tables", simulating.MAX_TABLES),
            (f"today: {simulating.FIRST_TABLES} tables, then doubling", simulating.FIRST_TABLES))
    for _turn in range(2):
        for row, first_tables in rows:
            first, seconds = _first_hands(first_tables, players, hands, directory)
            print(f"{row:40s} {first:11.2f}s {seconds:8.2f}")


_PLAY_OUT = montecarlo.play_out


def _listed_play_out(keys: Any, filled: Any, cards: Any, streets: list[tuple[int, int]],
                     arrays: Any, fl_value: float, exact_last: bool = True) -> Any:
    """The baseline: :func:`montecarlo.play_out` as it was, every way to place the last
    street listed whether it is played exactly or by the rule."""
    listed = (patterns(*streets[-1]), pattern_counts(*streets[-1])) if streets else None
    return _PLAY_OUT(keys, filled, cards, streets, arrays, fl_value, exact_last, listed)


def _tour(baseline: bool, folder: str) -> tuple[float, float, str]:
    """In a fresh process: the tour's seconds, its slowest round of decisions and the
    digest of the file it wrote."""
    if baseline:
        montecarlo.play_out = _listed_play_out
    slowest = [0.0]
    place_all = game.place_all

    def timed(*args: Any) -> Any:
        start = time.perf_counter()
        out = place_all(*args)
        slowest[0] = max(slowest[0], time.perf_counter() - start)
        return out

    game.place_all = timed  # type: ignore[assignment]
    path = Path(folder) / f"tour-{baseline}.jsonl"
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players(TOUR), hands=300, seed=7, rollouts=100)
    start = time.perf_counter()
    write_jsonl(sim, path)
    seconds = time.perf_counter() - start
    return seconds, slowest[0], hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _tours() -> None:
    """The README tour, today's play-out against the baseline's, in turns."""
    print(f"\n{'the README tour, 300 hands':40s} {'seconds':>8s} {'slowest decision':>17s} "
          f"{'file':>13s}")
    spawn = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as folder:
        for label, baseline in (("baseline: every placement listed", True),
                                ("today: the rule lists none", False)):
            with ProcessPoolExecutor(1, mp_context=spawn) as pool:
                seconds, slowest, digest = pool.submit(_tour, baseline, folder).result()
            print(f"{label:40s} {seconds:8.2f} {slowest:16.2f}s {digest:>13s}")


def run(quick: bool) -> None:
    """Print hands per second for each workload next to its target, then the README
    tour against its baseline."""
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
        _blocks(quick, directory)
    _tours()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small workloads, for a smoke test")
    run(parser.parse_args().quick)
