"""`make bench`: every benchmark section in one run, figures side by side.

Each section is a module in this folder with ``run(quick: bool) -> None`` that prints
its own table. ``python bench/run.py --only evaluator`` runs one section;
``--quick`` shrinks the workloads for a smoke test.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
import time
from pathlib import Path

SECTIONS = ["evaluator", "ingest", "simulate", "pipeline", "review", "scale",
            "fantasyland_value", "memory", "units", "uncertainty", "hands", "api", "sessions"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", action="append", choices=SECTIONS)
    parser.add_argument("--quick", action="store_true", help="small workloads, for a smoke test")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    print(f"ofcstats benchmarks  {time.strftime('%Y-%m-%d %H:%M')}  "
          f"python {platform.python_version()}  {platform.machine()}")
    for name in args.only or SECTIONS:
        module_path = Path(__file__).parent / f"{name}.py"
        if not module_path.exists():
            print(f"\n[{name}] not written yet")
            continue
        print(f"\n[{name}]")
        importlib.import_module(name).run(quick=args.quick)


if __name__ == "__main__":
    main()
