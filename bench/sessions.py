"""The read commands on the same hands in short and in long sessions, side by side.

Apps log a sitting of a few hands as a session. The same random three-player Pineapple
hands (:func:`pipeline.synthetic_store`, rescored under every preset) are stored twice:
in sessions of 3 hands and in sessions of 1,000. Each read command runs in a fresh
process (:func:`timing.measured_child`) on both; the table shows its wall time, its
processor time and its own peak RSS on each, the ratio of the short sessions' time to
the long ones', and the targets: every command under 1 GB on 300,000 hands and under
2 GB on 1,000,000 (decimal gigabytes, 10^9 bytes), within 1.5x its time in long
sessions. The stores are built once and kept in ``out/bench`` (or named with
``OFCSTATS_BENCH_SESSIONS_<per>_<hands>``, e.g. ``OFCSTATS_BENCH_SESSIONS_3_300000``).

    python bench/run.py --only sessions            # 300,000 and 1,000,000 hands
    python bench/run.py --only sessions --quick    # 20,000 hands, a smoke test
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "bench"
SHAPES = (1_000, 3)
"""Hands per session: the long sessions first (the reference), then the short."""
TARGETS_GB = {300_000: 1.0, 1_000_000: 2.0}
TIME_RATIO = 1.5


def store(hands: int, per_session: int) -> Path:
    """A rescored store of ``hands`` hands in sessions of ``per_session`` (built once)."""
    named = os.environ.get(f"OFCSTATS_BENCH_SESSIONS_{per_session}_{hands}")
    if named:
        return Path(named)
    from pipeline import synthetic_store  # noqa: PLC0415 - a sibling script

    path = OUT / f"sessions-{per_session}-{hands}.duckdb"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.unlink(missing_ok=True)
        synthetic_store(partial, hands, session_hands=per_session)
        subprocess.run([_ofcstats(), "rescore", "--all-rulesets", "--db", str(partial),
                        "--quiet"], check=True)
        partial.rename(path)
    return path


def _gb(kib: float) -> float:
    """A peak RSS in KiB (as the kernel counts it) in decimal gigabytes."""
    return kib * 1024 / 1e9


def _ofcstats() -> str:
    return str(Path(sys.executable).parent / "ofcstats")


def commands(db: Path, scratch: Path) -> dict[str, list[str]]:
    """Every read command over the whole store."""
    base = ["--db", str(db), "--quiet"]
    return {
        "players": ["players", *base, "-f", "json"],
        "player ann": ["player", "ann", *base, "-f", "json"],
        "compare": ["compare", *base, "-f", "json"],
        "report": ["report", *base, "-o", str(scratch / "report.html")],
        "export": ["export", *base, "-o", str(scratch / "export")],
    }


def run(quick: bool = False) -> None:
    """Print, per store size and command, both shapes side by side."""
    from timing import measured_child  # noqa: PLC0415 - a sibling script

    rows = []
    for hands in [20_000] if quick else list(TARGETS_GB):
        target = TARGETS_GB.get(hands, 1.0)
        dbs = {per: store(hands, per) for per in SHAPES}
        for name in commands(dbs[SHAPES[0]], Path()):
            found = {}
            for per in SHAPES:  # the two shapes one after the other: the same load
                with tempfile.TemporaryDirectory() as scratch:
                    command = commands(dbs[per], Path(scratch))[name]
                    found[per] = measured_child([_ofcstats(), *command])
            (long_s, long_cpu, long_kb, _), (short_s, short_cpu, short_kb, _) = (
                found[per] for per in SHAPES)
            ratio = short_cpu / long_cpu
            over = [f"{per}-hand sessions over {target} GB" for per in SHAPES
                    if _gb(found[per][2]) >= target]
            if ratio > TIME_RATIO:
                over.append(f"processor time over {TIME_RATIO}x")
            rows.append((f"{hands:,} hands: {name}",
                         f"{long_s:6.1f} s {long_cpu:6.1f} s cpu {_gb(long_kb):5.2f} GB",
                         f"{short_s:6.1f} s {short_cpu:6.1f} s cpu {_gb(short_kb):5.2f} GB",
                         f"{ratio:4.2f}x", "; ".join(over) or "ok"))
    header = ("", f"sessions of {SHAPES[0]:,}: wall, cpu, peak RSS",
              f"sessions of {SHAPES[1]:,}: wall, cpu, peak RSS", "cpu ratio",
              f"targets (< {'/'.join(f'{t:g}' for t in TARGETS_GB.values())} GB, "
              f"<= {TIME_RATIO}x)")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  " + "  ".join(f"{cell:<{w}}" for cell, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    run(quick="--quick" in sys.argv)
