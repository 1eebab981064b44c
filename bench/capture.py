"""Every command's output on the demo database, captured to files, so that two versions of
the code can be proved to print the same bytes: capture each tree, then compare.

    python bench/capture.py TREE OUTDIR          # capture TREE's outputs into OUTDIR
    python bench/capture.py --compare OUT1 OUT2  # cmp every file; exit 1 on a difference

TREE is a checkout of the project (its ``ofcstats`` package is the one imported, its
``data/sample`` the logs, its Makefile's ``sample-data`` recipe the one re-run); the
Python that runs this script runs the commands. What the capture holds, one file a
command (``NAME.out`` the standard output, ``NAME.err`` the exit code and the standard
error):

- the demo database built as ``make demo`` builds it (``ingest``, ``rescore``), and a
  what-if rescore on it;
- every read command in each of its formats: ``compare``, ``players``, ``player`` (every
  player), ``db info``, ``sql`` (the whole of ``results_named``, ``showdowns``,
  ``rulesets`` without its times, ``hands``, ``seats``, ``placements``), ``rulesets`` and
  ``rulesets show`` (every preset and policy);
- ``score`` on the sample logs (each hand's own ruleset, two named ones, every preset);
- ``review`` of one session, ``replay`` of one hand (their HTML);
- ``export --parquet``: the checksum of every file written (of the tables holding the
  times of loads and scorings, of their other columns);
- ``report``: the HTML page, its "Generated" time masked;
- a few mistakes (an unknown player, ruleset, variant, file; a write in ``sql``);
- ``make sample-data`` re-run: each regenerated file compared with ``data/sample``.

What changes from run to run is masked: the seconds a command took, the times of the
database's loads and scorings, the capture folder's own path. Two captures of the same
tree compare equal.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import polars as pl

DB = "demo.duckdb"
MASKS = [
    (re.compile(r'("(?:seconds|started_at|finished_at|scored_at|loaded_at|last_scored)"'
                r':\s*)("[^"]*"|[0-9.eE+-]+)'), r"\1<masked>"),
    (re.compile(r"\bin \d+\.\d+s\b"), "in <T>s"),
    (re.compile(r"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC"), "Generated <time>"),
]


def masked(text: str, out: Path) -> str:
    """``text`` with what differs between runs replaced by a marker."""
    text = text.replace(str(out.resolve()), "<OUT>")
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text


class Capture:
    """Runs the commands of one tree in OUTDIR/work and writes their outputs."""

    def __init__(self, tree: Path, out: Path) -> None:
        self.tree = tree.resolve()
        self.out = out.resolve()
        self.work = self.out / "work"
        self.env = {**os.environ, "PYTHONPATH": str(self.tree), "COLUMNS": "120",
                    "NO_COLOR": "1", "TZ": "UTC", "SOURCE_DATE_EPOCH": "0",
                    "OFCSTATS_LOCK_WAIT": "30"}
        for name in ("OFCSTATS_DB", "OFCSTATS_DEBUG"):
            self.env.pop(name, None)

    def run(self, name: str, args: Sequence[str], *, mask: bool = True) -> str:
        """Run ``ofcstats ARGS`` in the work folder; keep its output as NAME.out/.err."""
        done = subprocess.run([sys.executable, "-m", "ofcstats", *args], cwd=self.work,
                              env=self.env, capture_output=True, check=False)
        stdout = done.stdout.decode("utf-8", "replace")
        stderr = done.stderr.decode("utf-8", "replace")
        if mask:
            stdout = masked(stdout, self.out)
        (self.out / f"{name}.out").write_text(stdout, encoding="utf-8")
        (self.out / f"{name}.err").write_text(masked(
            f"$ ofcstats {shlex.join(args)}\nexit {done.returncode}\n{stderr}", self.out),
            encoding="utf-8")
        print(f"  {name}: exit {done.returncode}", flush=True)
        return stdout

    def prepare(self) -> None:
        """A fresh work folder holding the tree's sample logs and ruleset files."""
        if self.out.exists():
            shutil.rmtree(self.out)
        self.work.mkdir(parents=True)
        for folder in ("data/sample", "data/rulesets"):
            shutil.copytree(self.tree / folder, self.work / folder)
        where = subprocess.run(
            [sys.executable, "-c", "import ofcstats; print(ofcstats.__file__)"],
            cwd=self.work, env=self.env, capture_output=True, text=True, check=True
        ).stdout.strip()
        if not Path(where).is_relative_to(self.tree):
            raise SystemExit(f"ofcstats imports from {where}, not from {self.tree}")

    def database(self) -> None:
        """The demo database, as ``make demo`` builds it, and a what-if on top."""
        self.run("ingest", ["ingest", "data/sample", "--db", DB, "--format", "json"])
        self.run("rescore", ["rescore", "--all-rulesets", "--ruleset",
                             "data/rulesets/pineapple-progressive.toml", "--db", DB,
                             "--format", "json"])
        self.run("rescore-again", ["rescore", "--all-rulesets", "--db", DB, "--format",
                                   "json"])
        self.run("rescore-what-if", ["rescore", "--ruleset", "american", "--what-if",
                                     "american", "--db", DB, "--format", "json"])

    def reads(self) -> None:
        """Every read command, in each of its formats."""
        db = ["--db", DB]
        for fmt in ("json", "table"):
            self.run(f"db-info.{fmt}", ["db", "info", *db, "--format", fmt])
        for fmt in ("json", "csv", "table"):
            self.run(f"compare.{fmt}", ["compare", *db, "--format", fmt])
            self.run(f"players.{fmt}", ["players", *db, "--format", fmt])
            self.run(f"rulesets.{fmt}", ["rulesets", "--format", fmt])
        self.run("compare.pineapple.json", ["compare", *db, "--variant", "pineapple",
                                            "-f", "json"])
        self.run("compare.two.csv", ["compare", *db, "-r", "american", "-r", "pokerstars",
                                     "--player", "alice,bob", "-f", "csv"])
        self.run("compare.since.json", ["compare", *db, "--since", "2026-01-06",
                                        "--until", "2026-01-09", "-f", "json"])
        self.run("players.pokerstars.json", ["players", *db, "--ruleset", "pokerstars",
                                             "-f", "json"])
        self.run("players.classic.csv", ["players", *db, "--variant", "ofc-classic",
                                         "--session", "classic-western-00001", "-f", "csv"])
        names = json.loads(self.run("sql-players", [
            "sql", "SELECT DISTINCT player FROM seats ORDER BY player", *db, "-f", "json"]))
        for row in names:
            for fmt in ("json", "csv"):
                self.run(f"player.{row['player']}.{fmt}", ["player", row["player"], *db,
                                                           "-f", fmt])
        self.run("player.alice.table", ["player", "alice", *db])
        tables = {
            "results": "SELECT * FROM results_named ORDER BY ALL",
            "showdowns": "SELECT * FROM showdowns ORDER BY ALL",
            "rulesets": "SELECT * EXCLUDE (scored_at) FROM rulesets ORDER BY ALL",
            "hands": "SELECT * EXCLUDE (file_id) FROM hands ORDER BY hand_key",
            "seats": "SELECT * FROM seats ORDER BY hand_key, seat",
            "placements": "SELECT * FROM placements ORDER BY ALL",
        }
        for table, query in tables.items():  # CSV holds no lists: those tables as JSON Lines
            fmt = "jsonl" if table in ("rulesets", "seats") else "csv"
            self.run(f"sql.{table}.{fmt}", ["sql", query, *db, "-f", fmt])
        self.run("sql.results.jsonl", ["sql", "SELECT * FROM results_named "
                                       "WHERE ruleset = 'american' ORDER BY ALL", *db,
                                       "-f", "jsonl"])
        presets = json.loads(self.run("rulesets-list", ["rulesets", "-f", "json"]))
        for row in presets:
            name = row.get("name") or row.get("ruleset")
            self.run(f"rulesets-show.{name}", ["rulesets", "show", str(name)])
        for policy in ("standard", "progressive", "unlimited"):
            self.run(f"rulesets-show.{policy}", ["rulesets", "show", policy])

    def scores(self) -> None:
        """``ofcstats score`` on the sample logs."""
        logs = sorted(str(p.relative_to(self.work))
                      for p in (self.work / "data" / "sample").glob("*.jsonl"))
        self.run("score.own.jsonl", ["score", *logs, "-f", "jsonl"])
        self.run("score.own.csv", ["score", *logs, "-f", "csv"])
        self.run("score.two.json", ["score", *logs, "-r", "american,pokerstars", "-f", "json"])
        self.run("score.all.csv", ["score", *logs, "--all-rulesets", "-f", "csv"])
        self.run("score.table", ["score", "data/sample/criss-cross.jsonl"])
        self.run("score.file.csv", ["score", "data/sample/pineapple-progressive.jsonl",
                                    "-r", "data/rulesets/pineapple-progressive.toml",
                                    "-f", "csv"])

    def review(self) -> None:
        """A small review and the replay of one of its hands."""
        self.run("review.json", ["review", "--db", DB, "--session", "turbo-kush-00001",
                                 "--rollouts", "8", "-j", "1", "-f", "json", "-q"])
        self.run("review.mistakes.csv", ["review", "--db", DB, "--session",
                                         "turbo-kush-00001", "--rollouts", "8", "-j", "1",
                                         "--mistakes", "-f", "csv", "-q"])
        self.run("replay", ["replay", "turbo-kush-00001-01", "--db", DB, "--rollouts", "8",
                            "-o", "hand.html"])
        self.keep("replay.html", self.work / "hand.html")

    def export(self) -> None:
        """``export --parquet``: the checksum of every file; of a table that holds the
        times of loads and scorings, the checksum of its rows without those columns."""
        self.run("export", ["export", "--parquet", "exported", "--db", DB])
        root = self.work / "exported"
        lines = []
        for path in sorted(root.rglob("*")):
            if not path.is_file():
                continue
            data = path.read_bytes()
            note = ""
            if path.suffix == ".parquet":
                frame = pl.read_parquet(path)
                times = [name for name, dtype in frame.schema.items()
                         if dtype == pl.Datetime and name != "played_at"]
                if times:
                    data = repr(frame.drop(times).rows()).encode("utf-8")
                    note = f" (rows without {', '.join(times)})"
            lines.append(f"{hashlib.sha256(data).hexdigest()}  {path.relative_to(root)}{note}")
        (self.out / "export.sha256").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def report(self) -> None:
        """The HTML report (its "Generated" time masked), whole and for one player."""
        self.run("report", ["report", "--db", DB, "--ruleset", "american", "-o",
                            "report.html", "--pdf", "charts.pdf"])
        self.keep("report.html", self.work / "report.html")
        self.run("report.alice", ["report", "--db", DB, "--player", "alice", "-o",
                                  "alice.html"])
        self.keep("report.alice.html", self.work / "alice.html")

    def mistakes(self) -> None:
        """Usage errors and failures: their message and exit code."""
        db = ["--db", DB]
        self.run("error.player", ["player", "nobody", *db])
        self.run("error.ruleset", ["compare", "-r", "nope", *db])
        self.run("error.variant", ["players", "--variant", "nope", *db])
        self.run("error.score-file", ["score", "missing.jsonl"])
        self.run("error.score-ruleset", ["score", "data/sample/criss-cross.jsonl", "-r", "nope"])
        self.run("error.sql", ["sql", "DROP TABLE hands", *db])
        self.run("error.db", ["players", "--db", "missing.duckdb"])

    def sample_data(self) -> None:
        """The Makefile's ``sample-data`` recipe re-run into the capture, each file
        compared with the tree's ``data/sample``."""
        makefile = (self.tree / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
        recipe = makefile.split("\nsample-data:", 1)[1].split("\n\n", 1)[0]
        regenerated = self.work / "regenerated"
        regenerated.mkdir()
        lines = []
        for line in recipe.splitlines()[1:]:
            words = shlex.split(line.strip())
            if not words or not words[0].endswith("/ofcstats"):
                continue
            at = words.index("-o") + 1
            name = Path(words[at]).name
            words[at] = f"{regenerated.name}/{name}"
            self.run(f"sample-data.{name}", words[1:])
            same = filecmp.cmp(regenerated / name, self.tree / "data" / "sample" / name,
                               shallow=False)
            digest = hashlib.sha256((regenerated / name).read_bytes()).hexdigest()
            lines.append(f"{name}: {'identical to' if same else 'DIFFERS from'} "
                         f"data/sample ({digest})")
        (self.out / "sample-data.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def keep(self, name: str, path: Path) -> None:
        """A file a command wrote, masked, into the capture."""
        text = path.read_text(encoding="utf-8") if path.exists() else "(not written)\n"
        (self.out / name).write_text(masked(text, self.out), encoding="utf-8")


def compare(first: Path, second: Path) -> int:
    """``cmp`` of every captured file of two captures; the differing ones listed."""
    def files(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.iterdir() if p.is_file()}

    left, right = files(first), files(second)
    differ = sorted(name for name in left & right
                    if not filecmp.cmp(first / name, second / name, shallow=False))
    for name in sorted(left ^ right):
        print(f"only in {first if name in left else second}: {name}")
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(left & right)} files compared, {len(differ)} differ, "
          f"{len(left ^ right)} in one capture only")
    return 1 if differ or left ^ right else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=Path, help="the tree (or, with --compare, a capture)")
    parser.add_argument("second", type=Path, help="the capture folder (or a second capture)")
    parser.add_argument("--compare", action="store_true", help="compare two captures")
    parser.add_argument("--no-sample-data", action="store_true",
                        help="skip re-running make sample-data (the slowest part)")
    args = parser.parse_args()
    if args.compare:
        raise SystemExit(compare(args.first, args.second))
    capture = Capture(args.first, args.second)
    capture.prepare()
    capture.database()
    capture.reads()
    capture.scores()
    capture.review()
    capture.export()
    capture.report()
    capture.mistakes()
    if not args.no_sample_data:
        capture.sample_data()
    shutil.rmtree(capture.work)


if __name__ == "__main__":
    main()
