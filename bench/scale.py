"""Sharded runs (``--engine``): one process next to 1 and 2 local workers and Ray.

- ``rescore --all-rulesets`` over a store of random three-player Pineapple hands in
  sessions of 500 (:func:`pipeline.synthetic_store`): the default one-process path,
  the local engine with 1 worker (this process, shard by shard) and 2 workers, and
  the Ray engine on a local cluster of 2 CPUs; hands per second, the time to start the
  worker processes included; the Ray cluster is started once, before, and its start
  timed apart. Ray's rows are left out when the extra is not installed.
- ``review`` at the default settings over simulated Pineapple hands (one session per
  game): ``run`` in one process, the local engine with 1 and 2 workers, and Ray, in
  shards of about an eighth of the hands; decisions per second.

Every run starts from a copy of the same store, so each scores (reviews) everything.
The figures for ``docs/scale.md`` come from ``python bench/run.py --only scale``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ofcstats import engine, pipeline
from ofcstats.ingest import ingest
from ofcstats.review.store import Selection, Settings
from ofcstats.review.store import run as review_run
from ofcstats.rules import load_ruleset, load_rulesets, preset_names
from ofcstats.simulate import Simulation, parse_players, write_jsonl
from ofcstats.store import Store
from ofcstats.variants import Variant

HAS_RAY = importlib.util.find_spec("ray") is not None
ENGINES: list[tuple[str, engine.Engine | None]] = [
    ("one process (default)", None),
    ("--engine local --jobs 1", engine.Engine(jobs=1)),
    ("--engine local --jobs 2", engine.Engine(jobs=2)),
    ("--engine ray --jobs 2 (cluster up)", engine.Engine(kind="ray", jobs=2)),
]


def _timed(source: Path, folder: Path, work: Callable[[Store], int]) -> tuple[float, int]:
    copy = folder / "work.duckdb"
    shutil.copyfile(source, copy)
    os.sync()
    with Store(copy) as store:
        start = time.perf_counter()
        count = work(store)
        seconds = time.perf_counter() - start
    copy.unlink()
    return seconds, count


def _review_store(folder: Path, hands: int) -> Path:
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players("a:random,b:balanced,c:aggressive"), hands=hands,
                     seed=2, timeout_rate=0.1)  # timeouts end games: several sessions
    log = folder / "review.jsonl"
    write_jsonl(sim, log)
    db = folder / "review.duckdb"
    ingest([log], db)
    return db


def run(quick: bool) -> None:
    """Print hands/s of rescore and decisions/s of review on each engine."""
    import pipeline as bench_pipeline  # noqa: PLC0415 - the sibling bench script

    rulesets = load_rulesets(preset_names())
    hands = 20_000 if quick else 200_000
    reviewed = 8 if quick else 240
    started = _start_ray() if HAS_RAY else None
    use_ray = started is not None
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        if started is not None:
            print(f"{'ray cluster start (2 CPUs), apart':40s} {'':8s} {started:8.2f}")
        stored = folder / "rescore.duckdb"
        bench_pipeline.synthetic_store(stored, hands)
        print(f"{'rescore --all-rulesets':40s} {'hands':>8s} {'seconds':>8s} {'hands/s':>9s}")
        for label, chosen in ENGINES:
            if chosen is not None and chosen.kind == "ray" and not use_ray:
                print(f"{label:40s} " + ("(Ray did not start)" if HAS_RAY else
                                         "(no Ray: pip install 'ofcstats[ray]')"))
                continue

            def rescore(store: Store, chosen: engine.Engine | None = chosen) -> int:
                if chosen is None:
                    return pipeline.rescore(store, rulesets).hands
                return engine.rescore(store, rulesets, chosen).hands

            seconds, count = _timed(stored, folder, rescore)
            print(f"{label:40s} {count:8,d} {seconds:8.2f} {count / seconds:9,.0f}")

        db = _review_store(folder, reviewed)
        print(f"\n{'review (default settings)':40s} {'dec.':>8s} {'seconds':>8s} "
              f"{'dec/s':>9s}")
        for label, chosen in ENGINES:
            if chosen is not None and chosen.kind == "ray" and not use_ray:
                print(f"{label:40s} " + ("(Ray did not start)" if HAS_RAY else
                                         "(no Ray: pip install 'ofcstats[ray]')"))
                continue

            def review(store: Store, chosen: engine.Engine | None = chosen) -> int:
                if chosen is None:
                    review_run(store, Selection(), Settings())
                    return store.count("decisions")
                # Shards of a few games: several for the workers to share.
                shards = replace(chosen, review_shard_hands=max(2, reviewed // 8))
                return engine.review(store, Selection(), Settings(), shards).decisions

            seconds, count = _timed(db, folder, review)
            print(f"{label:40s} {count:8,d} {seconds:8.2f} {count / seconds:9,.1f}")
    if started is not None:
        import ray  # noqa: PLC0415 - an optional extra

        ray.shutdown()


def _start_ray() -> float | None:
    """Seconds to start a local Ray cluster of 2 CPUs (the runs then use it); None when
    it does not start (its agents can miss Ray's own start-up deadline on a busy
    machine), after a second try."""
    import ray  # noqa: PLC0415 - an optional extra

    os.environ.setdefault("RAY_DISABLE_IMPORT_WARNING", "1")
    for _ in range(2):
        start = time.perf_counter()
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                     _system_config=engine.RAY_SYSTEM_CONFIG)
        except Exception as error:  # Ray raises bare Exceptions when it cannot start
            print(f"ray did not start: {str(error).splitlines()[0]}")
            ray.shutdown()
            continue
        return time.perf_counter() - start
    return None


if __name__ == "__main__":
    import argparse
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small workloads, for a smoke test")
    run(parser.parse_args().quick)
