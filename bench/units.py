"""What per-player units cost the scorer: every preset over random three-player hands,
without units, with a unit column of nulls, and with units that differ (players at 10,
10 and 1) in a tenth of the hands and in every hand. Only the hands whose units differ
are scored again, pair by pair."""

from __future__ import annotations

import time

import numpy as np
import polars as pl
from pipeline import seats_frame

from ofcstats.rules import load_rulesets, preset_names
from ofcstats.score import score


def _with_units(seats: pl.DataFrame, share: float, rng: np.random.Generator) -> pl.DataFrame:
    hands = seats.height // 3
    chosen = np.repeat(rng.random(hands) < share, 3)
    unit = np.where(chosen, np.tile([10.0, 10.0, 1.0], hands), np.nan)
    return seats.with_columns(unit=pl.Series(unit).fill_nan(None))


def run(quick: bool = False) -> None:
    """Print the best of three timings of each case."""
    rulesets = load_rulesets(preset_names())
    hands = 20_000 if quick else 200_000
    seats = seats_frame(hands)
    rng = np.random.default_rng(1)
    cases = [("no unit column", seats), ("units all null", _with_units(seats, 0.0, rng)),
             ("units differ in 10% of hands", _with_units(seats, 0.1, rng)),
             ("units differ in every hand", _with_units(seats, 1.0, rng))]
    print(f"{hands:,} three-player hands, {len(rulesets)} presets")
    for label, frame in cases:
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            score(frame, rulesets)
            best = min(best, time.perf_counter() - started)
        print(f"  {label:<30} {best:6.2f} s")


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    run(quick="--quick" in sys.argv)
