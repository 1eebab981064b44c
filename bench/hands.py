"""The hand list and the session page: what walking through a night costs.

``hands`` with a filter on a store of 1,000,000 random three-player Pineapple hands
(:func:`pipeline.synthetic_store`, scored under american; built once and kept in
``out/bench``, or named with ``OFCSTATS_BENCH_STORE_<hands>``), beside the baseline of
the same rows read by ``ofcstats sql`` from ``results_named``; and ``replay --session``
of a 300-hand session of simulated hands (their streets logged). Each command runs in a
fresh process (:func:`timing.timed_child`): wall time and its own peak RSS.

    python bench/run.py --only hands            # 1,000,000 hands, a 300-hand session
    python bench/run.py --only hands --quick    # 20,000 hands, a 60-hand session
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "bench"
TARGETS = {"hands": (5.0, 1.0), "replay": (10.0, None)}  # seconds, GB


def _ofcstats() -> str:
    return str(Path(sys.executable).parent / "ofcstats")


def store(hands: int) -> Path:
    """A store of ``hands`` hands scored under american (built once, then reused)."""
    named = os.environ.get(f"OFCSTATS_BENCH_STORE_{hands}")
    if named:
        return Path(named)
    from pipeline import synthetic_store  # noqa: PLC0415 - a sibling script

    path = OUT / f"hands-{hands}.duckdb"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.unlink(missing_ok=True)
        synthetic_store(partial, hands)
        subprocess.run([_ofcstats(), "rescore", "-r", "american", "--db", str(partial),
                        "--quiet"], check=True)
        partial.rename(path)
    return path


def session_store(hands: int, folder: Path) -> Path:
    """A store holding one session of ``hands`` simulated hands, streets logged."""
    from ofcstats.rules import load_ruleset  # noqa: PLC0415
    from ofcstats.simulate import Player, Simulation, simulate  # noqa: PLC0415
    from ofcstats.variants import Variant  # noqa: PLC0415

    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     hands=hands, seed=11,
                     players=[Player("ann", "aggressive"), Player("bob", "safe"),
                              Player("cy", "balanced")])
    log = folder / "night.jsonl"
    log.write_text("".join(json.dumps({**h, "session_id": "night"}) + "\n"
                           for h in simulate(sim)), encoding="utf-8")
    db = folder / "night.duckdb"
    subprocess.run([_ofcstats(), "ingest", str(log), "--db", str(db), "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    return db


def run(quick: bool = False) -> None:
    """Print wall time and peak RSS of each command beside its baseline and target."""
    from timing import timed_child  # noqa: PLC0415 - a sibling script

    listed = 20_000 if quick else 1_000_000
    night = 60 if quick else 300
    db = store(listed)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        measured = {
            "hands: ann's fouls, by points (CSV)": (
                "hands", ["hands", "--db", str(db), "--player", "ann", "--fouled", "--sort",
                          "points", "-f", "csv", "-o", str(folder / "h.csv"), "--quiet"]),
            "hands: ann's 20 worst (table)": (
                "hands", ["hands", "--db", str(db), "--player", "ann", "--sort", "points",
                          "-n", "20", "-o", str(folder / "h.txt"), "--quiet"]),
            "baseline: sql, the same rows": (
                "", ["sql", "SELECT hand_id, session_id, player, seat, points, fouled, "
                     "royalties FROM results_named WHERE player = 'ann' AND fouled AND "
                     "ruleset = 'american' ORDER BY points", "--db", str(db), "-f", "csv",
                     "-o", str(folder / "b.csv")]),
        }
        for name, (kind, command) in measured.items():
            seconds, peak_kb, _ = timed_child([_ofcstats(), *command])
            rows.append((f"{listed:,} hands: {name}", seconds, peak_kb, kind))
        night_db = session_store(night, folder)
        page = folder / "night.html"
        seconds, peak_kb, _ = timed_child([_ofcstats(), "replay", "--session", "night", "--db",
                                           str(night_db), "-o", str(page), "--quiet"])
        rows.append((f"replay --session of {night} hands "
                     f"({page.stat().st_size / night / 1000:.1f} KB a hand)",
                     seconds, peak_kb, "replay"))
    width = max(len(r[0]) for r in rows)
    for name, seconds, peak_kb, kind in rows:
        gb = peak_kb / 1024 / 1024
        target = ""
        if kind in TARGETS:
            most_s, most_gb = TARGETS[kind]
            ok = seconds < most_s and (most_gb is None or gb < most_gb)
            target = f"target < {most_s:.0f} s" + (f", < {most_gb} GB" if most_gb else "") + \
                (" ok" if ok else " OVER")
        print(f"  {name:<{width}}  {seconds:6.1f} s  peak RSS {gb:5.2f} GB  {target}")


if __name__ == "__main__":
    run(quick="--quick" in sys.argv)
