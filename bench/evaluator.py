"""Evaluator throughput: ofcstats' vectorised lookups next to phevaluator and treys.

All figures are for one core and random 5-card hands. phevaluator is measured twice:
its C function called per hand from Python (what a Python user gets) and the same C
function called in a C loop (the function alone, no interpreter in between).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from ofcstats import evaluate

HERE = Path(__file__).parent


def random_hands(n: int, seed: int = 1) -> np.ndarray:
    """``n`` random 5-card hands as an (n, 5) uint8 array of distinct codes per row."""
    rng = np.random.default_rng(seed)
    keys = rng.random((n, 52), dtype=np.float32) if n <= 2_000_000 else None
    if keys is not None:
        return np.argpartition(keys, 5, axis=1)[:, :5].astype(np.uint8)
    blocks = [random_hands(2_000_000, seed + i) for i in range(-(-n // 2_000_000))]
    return np.concatenate(blocks)[:n]


def best_of(runs: int, fn: object) -> float:
    """The fastest of ``runs`` timings, in seconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def phevaluator_c_loop(hands: np.ndarray) -> float | None:
    """Seconds for phevaluator's evaluate_5cards over ``hands`` in a C loop, or None."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    try:
        from phevaluator import _pheval  # noqa: PLC0415 - optional: the comparison only
    except ImportError:
        return None
    if compiler is None:
        return None
    build = HERE / ".build"
    build.mkdir(exist_ok=True)
    binary = build / "pheval_loop"
    source = HERE / "pheval_loop.c"
    if not binary.exists() or binary.stat().st_mtime < source.stat().st_mtime:
        subprocess.run([compiler, "-O2", "-o", str(binary), str(source), "-ldl"], check=True)
    with tempfile.NamedTemporaryFile(suffix=".u8") as data:
        data.write(np.ascontiguousarray(hands).tobytes())
        data.flush()
        seconds = []
        for _ in range(3):
            out = subprocess.run([str(binary), _pheval.__file__, data.name], check=True,
                                 capture_output=True, text=True).stdout.split()
            seconds.append(float(out[1]))
    return min(seconds)


def run(quick: bool = False) -> None:
    """Print hands per second for each evaluator, and each one's ratio to ours."""
    n_ours = 2_000_000 if quick else 20_000_000
    n_calls = 100_000 if quick else 1_000_000
    hands = random_hands(n_ours)
    evaluate.strength5(hands[:1000])  # build the tables outside the timing
    ours = n_ours / best_of(3, lambda: evaluate.strength5(hands))
    threes = np.ascontiguousarray(hands[:, :3])
    ours3 = n_ours / best_of(3, lambda: evaluate.strength3(threes))
    rows = [("ofcstats strength5", "numpy lookups over an (N, 5) array", ours),
            ("ofcstats strength3", "the same for 3-card top rows", ours3)]

    few = hands[:n_calls]
    c_seconds = phevaluator_c_loop(few)
    if c_seconds is not None:
        rows.append(("phevaluator", "C function, called per hand from C", n_calls / c_seconds))
    try:
        from phevaluator import _pheval  # noqa: PLC0415 - optional: the comparison only

        as_lists = few.tolist()
        evaluate5 = _pheval.evaluate_5cards
        per_call = n_calls / best_of(3, lambda: [evaluate5(*h) for h in as_lists])
        rows.append(("phevaluator", "C function, called per hand from Python", per_call))
    except ImportError:
        print("  phevaluator not installed: pip install phevaluator")
    try:
        from treys import Card, Evaluator  # noqa: PLC0415 - optional: the comparison only

        evaluator = Evaluator()
        names = [r + s for r in "23456789TJQKA" for s in "cdhs"]
        treys_hands = [[Card.new(names[c]) for c in h] for h in few[: n_calls // 10].tolist()]
        per_treys = len(treys_hands) / best_of(
            2, lambda: [evaluator.evaluate(h[:2], h[2:]) for h in treys_hands])
        rows.append(("treys", "pure Python, called per hand", per_treys))
    except ImportError:
        print("  treys not installed: pip install treys")

    print(f"  {'evaluator':<20} {'how':<42} {'hands/s':>14} {'strength5 vs it':>16}")
    for name, how, rate in rows:
        ratio = "" if name.startswith("ofcstats") else f"{ours / rate:.1f}x faster"
        print(f"  {name:<20} {how:<42} {rate:>14,.0f} {ratio:>16}")
    print(f"  ({n_ours:,} hands for ofcstats, {n_calls:,} per phevaluator run, one core)")
