"""What reaching fantasyland is worth: the review's ``FANTASYLAND_VALUE``, measured.

Plays three-player Pineapple hands under american with the balanced bot in every seat,
scores them, and compares the mean points of a seat in a fantasyland hand with those of
a seat in a normal hand where nobody is in fantasyland (zero by symmetry), per
opponent. The stay chance is printed too: each stay repeats the gain, which the
review's value leaves out (a conservative value).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ofcstats import pipeline
from ofcstats.ingest import ingest
from ofcstats.review.core import FANTASYLAND_VALUE
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Simulation, parse_players, write_jsonl
from ofcstats.store import Store
from ofcstats.variants import Variant


def run(quick: bool) -> None:
    """Print the measured value per opponent next to the review's default."""
    hands = 3_000 if quick else 30_000
    american = load_ruleset("american")
    with tempfile.TemporaryDirectory() as folder:
        log, db = Path(folder) / "fl.jsonl", Path(folder) / "fl.duckdb"
        write_jsonl(Simulation(variant=Variant.PINEAPPLE, ruleset=american,
                               players=parse_players("a:balanced,b:balanced,c:balanced"),
                               hands=hands, seed=5), log)
        ingest([log], db)
        with Store(db) as store:
            pipeline.rescore(store, [american])
            rows = store.con.sql("""
                SELECT fantasyland, count(*), avg(points), stddev(points) / sqrt(count(*)),
                       avg(fantasyland_next::INTEGER), avg(n_seats - 1)
                FROM results_named WHERE ruleset = 'american' AND (fantasyland OR hand_key
                    NOT IN (SELECT hand_key FROM seats WHERE fantasyland))
                GROUP BY 1 ORDER BY 1""").fetchall()
    print(f"{'seat':20s} {'seats':>7s} {'points':>8s} {'se':>6s} {'per opp.':>8s} "
          f"{'stays':>6s}")
    for fantasyland, count, points, se, stays, opponents in rows:
        label = "in fantasyland" if fantasyland else "normal, none in FL"
        print(f"{label:20s} {count:7d} {points:8.2f} {se:6.2f} {points / opponents:8.2f} "
              f"{stays if fantasyland else float('nan'):6.3f}")
    print(f"review default FANTASYLAND_VALUE: {FANTASYLAND_VALUE:g} points per opponent")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer hands, for a smoke test")
    run(parser.parse_args().quick)
