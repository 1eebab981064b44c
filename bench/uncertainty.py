"""What the intervals cost: ``compare`` without intervals (the statistics alone, as
``compare`` computed them before: one summing query) against the ``compare`` command with
its bootstrap intervals (games read, per-game sums summed by DuckDB, 1,000 paired
resamples), each in a fresh process on the same store, wall time and peak RSS side by
side; and the players' intervals (one ruleset per variant, as ``players`` shows).

The store is :mod:`memory`'s: random three-player Pineapple hands rescored under every
preset (1,000,000 hands; 20,000 with ``--quick``).

    python bench/run.py --only uncertainty
    OFCSTATS_BENCH_BASELINE=/path/to/old/checkout python bench/run.py --only uncertainty
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

_CHILD = """
import sys, time
from ofcstats import analysis, stats, uncertainty
from ofcstats.cli.common import bounded_memory
from ofcstats.store import Store
from ofcstats.analysis import Filters

started = time.perf_counter()
what = sys.argv[2]
# DuckDB held as the commands hold it.
with Store(sys.argv[1], read_only=True) as store, bounded_memory(store):
    filters = Filters()
    rows = analysis.stored_rows(store, filters)
    if what == "today":
        answer = stats.ruleset_stats_of(rows)
        print(f"{time.perf_counter() - started:.1f} s reading and summing")
        sys.exit(0)
    if what == "players":
        pairs = analysis.played_rulesets(rows)
        rows = analysis.stored_rows(store, filters, pairs)
    games = analysis.hand_games(store, filters)
    if what == "compare":
        answer = uncertainty.compare_stored(rows, games).table
        print(f"{time.perf_counter() - started:.1f} s summing and resampling")
        sys.exit(0)
    per_game = uncertainty.game_sums(rows, games)
    summed = time.perf_counter()
    answer = uncertainty.player_intervals(per_game)
print(f"{summed - started:.1f} s reading and summing, {per_game.height:,} per-game rows,"
      f" {time.perf_counter() - summed:.1f} s resampling")
"""

_BASELINE = """
import sys
sys.path.insert(0, sys.argv[1])
sys.argv = ["ofcstats", *sys.argv[2:]]
from ofcstats.entry import main
main()
"""


def run(quick: bool = False) -> None:
    """Print wall time and peak RSS of each command on the same store."""
    from memory import _ofcstats, store  # noqa: PLC0415 - a sibling script
    from timing import timed_child  # noqa: PLC0415 - a sibling script

    hands = 20_000 if quick else 1_000_000
    db = store(hands)
    base = os.environ.get("OFCSTATS_BENCH_BASELINE")
    baseline = {} if not base else {
        "compare, baseline code": [sys.executable, "-c", _BASELINE, base, "compare", "--db",
                                   str(db), "--quiet"]}
    cases = {
        **baseline,
        "compare without intervals": [sys.executable, "-c", _CHILD, str(db), "today"],
        "compare with intervals": [_ofcstats(), "compare", "--db", str(db), "--quiet"],
        "compare's intervals, library call": [sys.executable, "-c", _CHILD, str(db), "compare"],
        "players' intervals": [sys.executable, "-c", _CHILD, str(db), "players"],
    }
    print(f"{hands:,} three-player Pineapple hands, every preset, "
          f"{time.strftime('%H:%M')}, load average {os.getloadavg()[0]:.2f}")
    for name, command in cases.items():
        seconds, peak_kb, out = timed_child(command)
        note = out.strip().splitlines()[-1] if _CHILD in command else ""
        print(f"  {name:<34} {seconds:7.1f} s  peak RSS {peak_kb / 1024 / 1024:5.2f} GB"
              f"  load {os.getloadavg()[0]:.2f}  {note}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    run(quick="--quick" in sys.argv)
