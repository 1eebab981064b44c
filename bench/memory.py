"""Peak memory of the read commands and ``score`` on large stores.

Each command runs in a fresh process (:func:`timing.timed_child`): its wall time and its
own peak RSS, next to the target (under 1 GB on 300,000 hands, under 2 GB on 1,000,000).
The stores are random three-player Pineapple hands (:func:`pipeline.synthetic_store`,
sessions of 500 hands) rescored under every preset, built once and kept in ``out/bench``
(or named with ``OFCSTATS_BENCH_STORE_<hands>``, e.g. ``OFCSTATS_BENCH_STORE_1000000``).
``score`` reads a log of as many hands (written once) and scores it under one ruleset.

    python bench/run.py --only memory            # 300,000 and 1,000,000 hands
    python bench/run.py --only memory --quick    # 20,000 hands, a smoke test
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "bench"
TARGETS_GB = {300_000: 1.0, 1_000_000: 2.0}


def store(hands: int) -> Path:
    """A rescored store of ``hands`` hands (built once, then reused)."""
    named = os.environ.get(f"OFCSTATS_BENCH_STORE_{hands}")
    if named:
        return Path(named)
    from pipeline import synthetic_store  # noqa: PLC0415 - a sibling script

    path = OUT / f"memory-{hands}.duckdb"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.unlink(missing_ok=True)
        synthetic_store(partial, hands)
        subprocess.run([_ofcstats(), "rescore", "--all-rulesets", "--db", str(partial),
                        "--quiet"], check=True)
        partial.rename(path)
    return path


def log(hands: int) -> Path:
    """A log of ``hands`` three-player Pineapple hands (written once, then reused)."""
    from ingest import write_pineapple_file  # noqa: PLC0415 - a sibling script

    path = OUT / f"pineapple-3p-{hands}.jsonl"
    return path if path.exists() else write_pineapple_file(path, hands)


def _ofcstats() -> str:
    return str(Path(sys.executable).parent / "ofcstats")


def commands(db: Path, logged: Path, scratch: Path) -> dict[str, list[str]]:
    """What is measured: each read command over the whole store, and ``score``."""
    base = ["--db", str(db), "--quiet"]
    return {
        "players": ["players", *base],
        "player ann": ["player", "ann", *base],
        "compare": ["compare", *base],
        "report": ["report", *base, "-o", str(scratch / "report.html")],
        "score -r american": ["score", str(logged), "-r", "american", "-f", "csv", "-o",
                              str(scratch / "scored.csv"), "--quiet"],
    }


def run(quick: bool = False) -> None:
    """Print wall time and peak RSS per command and store size."""
    from timing import timed_child  # noqa: PLC0415 - a sibling script

    rows = []
    for hands in [20_000] if quick else list(TARGETS_GB):
        db, logged = store(hands), log(hands)
        target = TARGETS_GB.get(hands)
        with tempfile.TemporaryDirectory() as scratch:
            for name, command in commands(db, logged, Path(scratch)).items():
                seconds, peak_kb, _ = timed_child([_ofcstats(), *command])
                gb = peak_kb / 1024 / 1024
                verdict = "" if target is None else ("ok" if gb < target else "OVER")
                rows.append((f"{hands:,} hands: {name}", f"{seconds:7.1f} s",
                             f"{gb:5.2f} GB", f"target < {target} GB {verdict}"
                             if target else ""))
    width = max(len(r[0]) for r in rows)
    for key, seconds, peak, target in rows:
        print(f"  {key:<{width}}  {seconds}  peak RSS {peak}  {target}")


if __name__ == "__main__":
    run(quick="--quick" in sys.argv)
