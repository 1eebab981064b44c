"""What the intervals cost: ``compare``, ``players``, ``player`` and ``report`` with
their bootstrap intervals (1,000 resamples over games, paired across rulesets), each in a
fresh process on the same store, wall time and peak RSS side by side. With
``OFCSTATS_BENCH_BASELINE`` naming a checkout of an earlier version (its folder holding
``ofcstats/``), that version's command runs just before each, on the same store. Then,
as library calls: the statistics alone as ``compare`` summed them before its intervals
(one summing query), ``compare``'s answer, and the players' intervals (one ruleset per
variant, as ``players`` shows).

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
    answer = uncertainty.player_intervals_stored(rows, games)
print(f"{time.perf_counter() - started:.1f} s summing and resampling")
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
    commands = {"compare": ["compare"], "players": ["players"], "player ann": ["player", "ann"],
                "report": ["report", "-o", str(db.with_suffix(".html"))]}
    cases: dict[str, list[str]] = {}
    for name, command in commands.items():
        if base:
            cases[f"{name}, baseline code"] = [sys.executable, "-c", _BASELINE, base, *command,
                                               "--db", str(db), "--quiet"]
        cases[f"{name} with intervals"] = [_ofcstats(), *command, "--db", str(db), "--quiet"]
    cases |= {
        "compare without intervals": [sys.executable, "-c", _CHILD, str(db), "today"],
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
