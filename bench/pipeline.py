"""Re-scoring throughput: every preset over a million three-player hands.

1. In memory: the seats frame (final rows as card codes) to the results frame, all 13
   presets, next to phevaluator's C function merely ranking the same hands' 6,000,000
   five-card rows one call at a time (from C, and from Python). The random hands are
   all three-seat Pineapple; the shipped sample logs, repeated to as many seats, show
   the cost on real boards of every variant.
2. End to end: ``ofcstats rescore --all-rulesets`` on a store of 1,000,000 hands (read,
   score, write ``results``) in a fresh process, with its peak memory.
3. ``--big``: the same end to end on 10,000,000 hands, to show memory stays bounded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from ofcstats.rules import load_rulesets, preset_names
from ofcstats.score import score

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "bench"


def seats_frame(hands: int, seed: int = 3) -> pl.DataFrame:
    """``hands`` three-player hands dealt at random (39 distinct cards each), as seats."""
    rng = np.random.default_rng(seed)
    blocks = []
    for start in range(0, hands, 250_000):
        n = min(250_000, hands - start)
        keys = rng.random((n, 52), dtype=np.float32)
        blocks.append(np.argpartition(keys, 39, axis=1)[:, :39].astype(np.uint8))
    cards = np.concatenate(blocks).reshape(hands * 3, 13)
    return pl.DataFrame({
        "hand_id": pl.Series(np.repeat(np.arange(hands, dtype=np.int64), 3)),
        "variant": pl.Series(["pineapple"], dtype=pl.String).new_from_index(0, 3 * hands),
        "seat": pl.Series(np.tile(np.arange(1, 4, dtype=np.int8), hands)),
        "player": pl.Series(np.tile(np.array(["ann", "bob", "cat"]), hands)),
        "fantasyland": pl.Series(np.zeros(3 * hands, dtype=bool)),
        "timed_out": pl.Series(np.zeros(3 * hands, dtype=bool)),
        "surrendered": pl.Series(np.zeros(3 * hands, dtype=bool)),
        "top": pl.Series(cards[:, :3]),
        "middle": pl.Series(cards[:, 3:8]),
        "bottom": pl.Series(cards[:, 8:]),
    })


def sample_seats(seats: int) -> pl.DataFrame:
    """The shipped sample logs (all four variants: 2 to 4 seats, fantasyland, naturals,
    surrenders) repeated under new hand ids until they hold about ``seats`` seats: real
    boards rather than random ones."""
    from ofcstats import reading  # noqa: PLC0415

    once = reading.read_all(sorted((ROOT / "data" / "sample").glob("*.jsonl"))
                            ).seats_for_scoring()
    copies = max(1, round(seats / once.height))
    return pl.concat([once.with_columns(pl.col("hand_id") + f"#{i}") for i in range(copies)])


def in_memory(hands: int) -> list[tuple[str, str]]:
    """Time the scoring step against phevaluator ranking the same 5-card rows."""
    sys.path.insert(0, str(Path(__file__).parent))
    from evaluator import best_of, phevaluator_c_loop  # noqa: PLC0415 - a sibling script

    from ofcstats import allocator  # noqa: PLC0415
    from ofcstats import score as scoring  # noqa: PLC0415

    allocator.reuse_freed_memory()  # as the scoring commands do when they start
    seats = seats_frame(hands)
    rulesets = load_rulesets(preset_names())
    score(seats.head(3000), rulesets)  # tables built, code warm
    seconds = best_of(3, lambda: score(seats, rulesets))
    cores = scoring.available_cores()
    parallel_from, scoring.PARALLEL_FROM = scoring.PARALLEL_FROM, 1 << 62
    try:
        one_core = best_of(3, lambda: score(seats, rulesets))
    finally:
        scoring.PARALLEL_FROM = parallel_from
    sample = sample_seats(3 * hands)  # as many seats as the random hands
    score(sample.head(3000), rulesets)
    on_sample = best_of(3, lambda: score(sample, rulesets))
    rows_5 = np.concatenate([np.ascontiguousarray(seats["middle"].to_numpy()),
                             np.ascontiguousarray(seats["bottom"].to_numpy())])
    c_loop = phevaluator_c_loop(rows_5)
    lines = [("results rows", f"{3 * hands * len(rulesets):,} ({len(rulesets)} presets)"),
             (f"ofcstats: seats -> results, all presets ({cores} cores)", f"{seconds:.2f} s"),
             ("ofcstats: the same on one core", f"{one_core:.2f} s"),
             (f"ofcstats: shipped sample logs, {sample.height:,} seats, all presets",
              f"{on_sample:.2f} s")]
    if c_loop is not None:
        lines.append((f"phevaluator C, {len(rows_5):,} rows from C", f"{c_loop:.2f} s"))
    try:
        from phevaluator import _pheval  # noqa: PLC0415

        few = rows_5[:1_000_000].tolist()
        per_call = best_of(1, lambda: [_pheval.evaluate_5cards(*r) for r in few]) / len(few)
        lines.append((f"phevaluator C, {len(rows_5):,} rows from Python",
                      f"{per_call * len(rows_5):.2f} s ({len(few):,} timed)"))
    except ImportError:
        pass
    return lines


def synthetic_store(path: Path, hands: int, batch: int = 500_000,
                    session_hands: int = 500) -> None:
    """A store of ``hands`` random three-player Pineapple hands (final rows, sessions of
    ``session_hands`` hands), written straight into the tables: parsing ten million JSON
    hands would take the benchmark's setup half an hour and measure nothing new."""
    from ofcstats.store import Store  # noqa: PLC0415

    with Store(path) as store:
        con = store.con
        con.execute("INSERT INTO ingested_files (file_id, path, started_at) "
                    "VALUES (1, 'synthetic', current_timestamp)")
        for start in range(0, hands, batch):
            n = min(batch, hands - start)
            seats = seats_frame(n, seed=start).with_columns(
                hand_key=pl.col("hand_id") + start + 1)
            keys = np.arange(start + 1, start + n + 1, dtype=np.int64)
            table = pl.DataFrame({
                "hand_key": keys,
                "hand_id": pl.Series(keys).cast(pl.String),
                "session_id": pl.Series(keys // session_hands).cast(pl.String),
            })
            con.register("new_hands", table)
            con.register("new_seats", seats)
            con.execute("BEGIN TRANSACTION")
            con.execute("""
                INSERT INTO hands (hand_key, hand_id, session_id, played_at, variant, ruleset,
                                   point_value, button, n_seats, extra, file_id, line,
                                   fingerprint)
                SELECT hand_key, 'syn-' || hand_id, 's' || session_id, NULL, 'pineapple',
                       'american', NULL, 3, 3, NULL, 1, hand_key, hand_id
                FROM new_hands""")
            con.execute("""
                INSERT INTO seats (hand_key, seat, player, fantasyland, timed_out,
                                   surrendered, reported_points, dealt, top, middle, bottom)
                SELECT hand_key, seat, player, fantasyland, timed_out, surrendered, NULL, 13,
                       top, middle, bottom
                FROM new_seats""")
            con.execute("COMMIT")
            con.unregister("new_hands")
            con.unregister("new_seats")
        store.compact()  # as ingest leaves it


def end_to_end(hands: int) -> list[tuple[str, str]]:
    """Ingest (cached) then rescore every preset in a fresh process; wall time and RSS."""
    sys.path.insert(0, str(Path(__file__).parent))
    from ingest import write_pineapple_file  # noqa: PLC0415 - a sibling script
    from timing import timed_child  # noqa: PLC0415 - a sibling script

    OUT.mkdir(parents=True, exist_ok=True)
    log = OUT / f"pineapple-3p-{hands}.jsonl"
    stored = OUT / f"store-{hands}.duckdb"
    ofcstats = str(Path(sys.executable).parent / "ofcstats")
    lines = []
    if not stored.exists() and hands > 1_000_000:
        partial = stored.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        started = time.perf_counter()
        synthetic_store(partial, hands)
        partial.rename(stored)
        lines.append(("store built directly (once, cached)",
                      f"{time.perf_counter() - started:.1f} s"))
    if not stored.exists():
        if not log.exists():
            write_pineapple_file(log, hands)
        partial = stored.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        started = time.perf_counter()
        subprocess.run([ofcstats, "ingest", str(log), "--db", str(partial), "--quiet",
                        "--no-rescore"],
                       check=True, capture_output=True)
        partial.rename(stored)
        lines.append(("ingest (once, cached)", f"{time.perf_counter() - started:.1f} s"))
    work = OUT / f"rescore-{hands}.duckdb"
    shutil.copyfile(stored, work)
    os.sync()  # the copy is setup: its write-back to disk must not slow the timed run
    seconds, peak_kb, stdout = timed_child(
        [ofcstats, "rescore", "--all-rulesets", "--db", str(work), "--json"])
    summary = json.loads(stdout)
    lines += [
        ("rescore --all-rulesets, wall time", f"{seconds:.1f} s"),
        ("hands scored", f"{summary['hands']:,} ({summary['rows']:,} result rows)"),
        ("peak RSS", f"{peak_kb / 1024:,.0f} MB"),
        ("database after", f"{work.stat().st_size / 1e9:.2f} GB"),
    ]
    work.unlink()
    return lines


def run(quick: bool = False, big: bool = False) -> None:
    """Print the figures."""
    hands = 100_000 if quick else 1_000_000
    rows = in_memory(hands) + end_to_end(hands)
    if big and not quick:
        rows += [(f"10M: {k}", v) for k, v in end_to_end(10_000_000)]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")


if __name__ == "__main__":
    if "--big-only" in sys.argv:
        for key, value in end_to_end(10_000_000):
            print(f"  10M: {key:<36}  {value}")
    else:
        run(quick="--quick" in sys.argv, big="--big" in sys.argv)
