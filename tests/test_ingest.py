"""Ingest: idempotent on hand id, conflicts never overwrite, each file all or nothing."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import blake3
import duckdb
import numpy as np
import polars as pl
import pytest
import zstandard
from handgen import random_hand, write_jsonl
from typer.testing import CliRunner

from ofcstats import ingest as ingesting
from ofcstats import pipeline, reading
from ofcstats.cli import app
from ofcstats.errors import NothingLoadedError, StoreError
from ofcstats.formats import jsonl
from ofcstats.formats.lines import MAX_LINE_BYTES, LineBatch
from ofcstats.ingest import collect_paths, ingest
from ofcstats.records import HandBatch, IdHashes, id_hashes
from ofcstats.rules import load_rulesets, preset_names
from ofcstats.store import Store
from ofcstats.store.hands import stored_ids

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent


def hands(n: int, seed: int, prefix: str = "h") -> list[dict]:
    rng = random.Random(seed)
    return [random_hand(rng, f"{prefix}{i}", "pineapple", rng.choice([2, 3]))
            for i in range(n)]


def counts(db: Path) -> dict[str, int]:
    with Store(db) as store:
        return {t: store.count(t) for t in ("hands", "seats", "placements", "rejects",
                                            "ingested_files")}


def test_loading_the_same_file_again_adds_nothing(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", hands(40, 1))
    path.write_text(path.read_text() + "{broken\n", encoding="utf-8")
    db = tmp_path / "x.duckdb"
    first = ingest([path], db)
    assert (first.hands, first.duplicates, first.rejected) == (40, 0, 1)
    before = counts(db)
    again = ingest([path], db)
    assert (again.hands, again.duplicates, again.conflicts, again.skipped) == (0, 0, 0, 1)
    assert again.files[0].skipped is not None
    assert again.files[0].skipped.startswith(f"already loaded (from {path}, ")
    assert again.clean
    assert counts(db) == before


def test_the_same_hands_in_another_file_are_duplicates(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    ingest([write_jsonl(tmp_path / "a.jsonl", hands(20, 2))], db)
    both = hands(20, 2) + hands(5, 3, prefix="new")
    summary = ingest([write_jsonl(tmp_path / "b.jsonl", both)], db)
    assert (summary.hands, summary.duplicates, summary.rejected) == (5, 20, 0)
    assert counts(db)["hands"] == 25


def test_a_different_hand_under_a_stored_id_is_a_conflict_not_an_overwrite(
        tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    original = write_jsonl(tmp_path / "a.jsonl", hands(5, 4))
    ingest([original], db)
    with Store(db) as store:
        stored = store.seats_frame(hand_ids=["h3"])
    other = hands(5, 5)
    summary = ingest([write_jsonl(tmp_path / "b.jsonl", other)], db)
    assert (summary.hands, summary.conflicts, summary.rejected) == (0, 5, 5)
    assert summary.first_rejects[3].reason == (
        f"hand h3: a different hand with this id is already stored (from {original} line 4)")
    with Store(db) as store:
        assert store.seats_frame(hand_ids=["h3"]).equals(stored)
        raw = store.con.sql("SELECT raw FROM rejects WHERE hand_id = 'h3'").fetchall()
    assert json.loads(raw[0][0])["hand_id"] == "h3"


def test_rejects_are_stored_with_file_line_id_reason_and_raw_text(tmp_path: Path) -> None:
    batch = hands(3, 6)
    batch[1]["players"][0]["streets"][0]["dealt"][0] = "Zz"
    path = write_jsonl(tmp_path / "a.jsonl", batch)
    db = tmp_path / "x.duckdb"
    ingest([path], db)
    with Store(db) as store:
        rows = store.con.sql("SELECT path, line, hand_id, reason, raw FROM rejects").fetchall()
    assert len(rows) == 1
    where, line, hand_id, reason, raw = rows[0]
    assert (where, line, hand_id) == (str(path), 2, "h1")
    assert reason.startswith("hand h1: seat 1 street 1: 'Zz' is not a card")
    assert json.loads(raw) == batch[1]


def test_directories_are_searched_recursively_for_log_files(tmp_path: Path) -> None:
    (tmp_path / "logs" / "2026" / ".hidden").mkdir(parents=True)
    a = write_jsonl(tmp_path / "logs" / "a.jsonl", hands(2, 7, "a"))
    b = write_jsonl(tmp_path / "logs" / "2026" / "b.jsonl", hands(2, 8, "b"))
    write_jsonl(tmp_path / "logs" / "2026" / ".hidden" / "c.jsonl", hands(2, 9, "c"))
    (tmp_path / "logs" / "README.md").write_text("notes", encoding="utf-8")
    found = collect_paths([tmp_path / "logs", a])
    assert found == [b, a]


def test_an_empty_file_loads_nothing_and_is_no_reject(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    summary = ingest([empty], tmp_path / "x.duckdb")
    assert (summary.hands, summary.rejected, summary.clean) == (0, 0, True)


def test_a_binary_file_is_one_reject_for_the_whole_file(tmp_path: Path) -> None:
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(bytes(range(256)) * 4)
    summary = ingest([binary, write_jsonl(tmp_path / "ok.jsonl", hands(3, 10))],
                     tmp_path / "x.duckdb")
    assert summary.hands == 3
    assert summary.files[0].problem == "a binary file, not a hand log"
    assert summary.rejected == 1


def test_a_failure_mid_file_rolls_that_file_back(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "x.duckdb"
    ingest([write_jsonl(tmp_path / "first.jsonl", hands(10, 11, "f"))], db)
    big = write_jsonl(tmp_path / "big.jsonl", hands(300, 12))
    calls = {"n": 0}
    real_add = Store.add

    def failing_add(self: Store, batch: object, file_id: int) -> object:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full")
        return real_add(self, batch, file_id)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "add", failing_add)
    monkeypatch.setattr(ingesting, "APPEND_HANDS", 20)
    summary = ingest([big], db, batch_bytes=32 << 10)
    assert calls["n"] == 3
    assert summary.files[0].problem == "disk full; nothing from this file was loaded"
    assert counts(db)["hands"] == 10
    monkeypatch.setattr(Store, "add", real_add)
    assert ingest([big], db).hands == 300, "a file that failed is read again, not skipped"


def test_cli_ingest_prints_a_summary_and_json(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", hands(4, 13))
    db = tmp_path / "x.duckdb"
    result = runner.invoke(app, ["ingest", str(path), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("1 file: 4 hands loaded, 0 duplicates skipped, 0 rejected")
    again = runner.invoke(app, ["ingest", str(path), "--db", str(db), "--json"])
    summary = json.loads(again.stdout)
    assert (summary["hands"], summary["skipped"], summary["files"]) == (0, 1, 1)
    assert again.exit_code == 0


def test_cli_ingest_exits_1_and_names_file_and_line_when_something_is_rejected(
        tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", hands(2, 17))
    path.write_text(path.read_text() + '{"format": "ofc-hand/1"\n', encoding="utf-8")
    result = runner.invoke(app, ["ingest", str(path), "--db", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 1
    assert f"{path}:3: not valid JSON" in result.stderr


def test_cli_uses_ofcstats_db_from_the_environment(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "env.duckdb"
    monkeypatch.setenv("OFCSTATS_DB", str(db))
    path = write_jsonl(tmp_path / "a.jsonl", hands(2, 14))
    assert runner.invoke(app, ["ingest", str(path)]).exit_code == 0
    info = runner.invoke(app, ["db", "info", "--json"])
    assert json.loads(info.stdout)["tables"]["hands"] == 2
    assert ingesting.default_database() == db


def test_cli_db_info_and_export(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    ingest([write_jsonl(tmp_path / "a.jsonl", hands(3, 15))], db)
    info = runner.invoke(app, ["db", "info", "--db", str(db)])
    assert info.exit_code == 1  # loaded by the library alone, not scored: not complete
    assert "scoring: NOT COMPLETE: 0 of 3 hands" in info.stdout
    assert "hands" in info.stdout
    assert "players: " in info.stdout
    exported = runner.invoke(app, ["export", "--parquet", str(tmp_path / "pq"), "--db", str(db)])
    assert exported.exit_code == 0
    assert list((tmp_path / "pq" / "seats").glob("shard=*/*.parquet"))
    missing = runner.invoke(app, ["db", "info", "--db", str(tmp_path / "none.duckdb")])
    assert missing.exit_code == 2


def _bench_generator() -> object:
    spec = importlib.util.spec_from_file_location("bench_ingest", ROOT / "bench" / "ingest.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _store_and_big_file(tmp_path: Path, n: int, seed: int
                        ) -> tuple[Path, dict[str, int], Path]:
    """A store holding 20 hands, its table counts, and a log of ``n`` Pineapple hands
    (the benchmark's) large enough to stop a load of it mid-file."""
    db = tmp_path / "x.duckdb"
    ingest([write_jsonl(tmp_path / "first.jsonl", hands(20, seed, "f"))], db)
    big = tmp_path / "big.jsonl"
    _bench_generator().write_pineapple_file(big, n)  # type: ignore[attr-defined]
    return db, counts(db), big


# Loads a file like `ofcstats ingest`, printing a line each time a batch is stored, so
# the test can kill it at a known point mid-file.
_DRIVER = """
import sys
from pathlib import Path
import ofcstats.ingest
from ofcstats.ingest import ingest
from ofcstats.store import Store
ofcstats.ingest.APPEND_HANDS = 1000
real_add = Store.add
def add(self, batch, file_id):
    out = real_add(self, batch, file_id)
    print("stored", flush=True)
    return out
Store.add = add
ingest([Path(sys.argv[1])], sys.argv[2], batch_bytes=1 << 20)
print("done", flush=True)
"""


@pytest.mark.slow
def test_a_load_killed_mid_file_leaves_the_database_as_before_and_a_rerun_completes(
        tmp_path: Path) -> None:
    db, before, big = _store_and_big_file(tmp_path, 30_000, seed=16)
    child = subprocess.Popen([sys.executable, "-c", _DRIVER, str(big), str(db)],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert child.stdout is not None
    with child.stdout:
        stored = 0
        for line in child.stdout:
            stored += line.strip() == "stored"
            if stored == 5:
                child.send_signal(signal.SIGKILL)
                break
        child.wait(timeout=20)
    assert child.returncode == -signal.SIGKILL, "the load ended before it could be killed"
    assert counts(db) == before
    rerun = ingest([big], db)
    assert rerun.hands == 30_000
    assert counts(db)["hands"] == before["hands"] + 30_000


def test_progress_counts_bytes_of_all_files_up_to_the_total(tmp_path: Path) -> None:
    paths = [write_jsonl(tmp_path / f"{k}.jsonl", hands(30, 20 + k, f"p{k}")) for k in range(3)]
    seen: list[tuple[int, int]] = []
    ingest(paths, tmp_path / "x.duckdb", progress=lambda done, total: seen.append((done, total)),
           batch_bytes=4 << 10)
    total = sum(p.stat().st_size for p in paths)
    assert len(seen) > 3
    assert all(t == total for _, t in seen)
    done = [d for d, _ in seen]
    assert done == sorted(done)
    assert done[-1] == total


def test_the_same_content_under_another_name_is_skipped_without_reading_it(
        tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    first = write_jsonl(tmp_path / "a.jsonl", hands(30, 30))
    ingest([first], db)
    before = counts(db)
    copy = tmp_path / "elsewhere" / "renamed.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(first.read_bytes())
    zipped = tmp_path / "a.jsonl.gz"
    zipped.write_bytes(gzip.compress(first.read_bytes()))
    summary = ingest([copy, zipped, copy.parent], db)
    assert [f.skipped is not None for f in summary.files] == [True, False]
    assert summary.files[1].duplicates == 30  # other bytes on disk: read, hands known
    again = ingest([zipped], db)
    assert again.skipped == 1
    assert counts(db)["hands"] == before["hands"]
    assert counts(db)["ingested_files"] == before["ingested_files"] + 1


def test_a_pattern_loads_the_files_it_matches(tmp_path: Path) -> None:
    for name in ("2026-01.jsonl", "2026-02.jsonl", "2025-12.jsonl"):
        write_jsonl(tmp_path / name, hands(3, len(name), prefix=name))
    (tmp_path / "sub").mkdir()
    write_jsonl(tmp_path / "sub" / "2026-03.jsonl", hands(3, 9, prefix="sub"))
    assert collect_paths([tmp_path / "2026-*.jsonl"]) == [tmp_path / "2026-01.jsonl",
                                                         tmp_path / "2026-02.jsonl"]
    everything = collect_paths([tmp_path / "**" / "2026-*.jsonl"])
    assert [p.name for p in everything] == ["2026-01.jsonl", "2026-02.jsonl", "2026-03.jsonl"]
    summary = ingest([tmp_path / "**" / "2026-*.jsonl"], tmp_path / "x.duckdb")
    assert (len(summary.files), summary.hands) == (3, 9)


def test_two_files_with_the_same_content_in_one_run_load_once(tmp_path: Path) -> None:
    text = write_jsonl(tmp_path / "a.jsonl", hands(10, 31)).read_bytes()
    (tmp_path / "b.jsonl").write_bytes(text)
    summary = ingest([tmp_path], tmp_path / "x.duckdb")
    assert (summary.hands, summary.skipped, summary.duplicates) == (10, 1, 0)
    assert summary.files[1].skipped == f"the same content as {tmp_path / 'a.jsonl'}, " \
        "loaded just before"


def test_a_grown_file_loads_only_its_new_lines_numbered_on(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    path = write_jsonl(tmp_path / "live.jsonl", hands(20, 32))
    ingest([path], db)
    more = hands(15, 33, prefix="later")
    with path.open("a", encoding="utf-8") as f:
        f.write("".join(json.dumps(h) + "\n" for h in more[:10]) + '{"format": "ofc-hand/1"\n')
    grown = ingest([path], db)
    assert grown.files[0].first_line == 21
    assert (grown.hands, grown.duplicates, grown.rejected) == (10, 0, 1)
    assert grown.first_rejects[0].line == 31
    with Store(db) as store:
        lines = store.con.sql("SELECT line FROM hands WHERE hand_id LIKE 'later%' "
                              "ORDER BY line").fetchall()
        assert [line for (line,) in lines] == list(range(21, 31))
    # Grown again, after a last line that was cut short when it was read.
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(more[10])[:40])
    ingest([path], db)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(more[10])[40:] + "\n" + json.dumps(more[11]) + "\n")
    last = ingest([path], db)
    assert (last.files[0].first_line, last.hands, last.rejected) == (32, 2, 0)
    with Store(db) as store:
        rejects = store.con.sql("SELECT line FROM rejects ORDER BY line").fetchall()
    assert rejects == [(31,)], "the cut-short line's reject went when it was read whole"
    assert counts(db)["hands"] == 32


def test_a_changed_file_is_reported_not_merged(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    path = write_jsonl(tmp_path / "day.jsonl", hands(12, 34))
    ingest([path], db)
    before = counts(db)
    rewritten = hands(12, 35, prefix="other")
    write_jsonl(path, rewritten)
    summary = ingest([path], db)
    assert not summary.clean
    problem = summary.files[0].problem
    assert problem is not None
    assert problem.startswith("the file has changed since it was loaded")
    assert "--load-changed" in problem
    assert counts(db) == before, "nothing loaded, nothing recorded"
    assert ingest([path], db).files[0].problem == problem, "reported again next time"
    result = runner.invoke(app, ["ingest", str(path), "--db", str(db)])
    assert result.exit_code == 1
    assert f"{path}: the file has changed since it was loaded" in result.stderr
    loaded = ingest([path], db, load_changed=True)
    assert (loaded.hands, loaded.clean) == (12, True)
    assert ingest([path], db).skipped == 1


def test_a_file_that_could_not_be_read_loads_when_replaced_by_a_log(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    ingest([write_jsonl(tmp_path / "first.jsonl", hands(3, 40, prefix="f"))], db)
    path = tmp_path / "a.jsonl"
    path.write_bytes(bytes(range(256)))
    assert ingest([path], db).files[0].problem == "a binary file, not a hand log"
    assert ingest([path], db).skipped == 1, "the same bytes: reported once, then skipped"
    write_jsonl(path, hands(7, 39))
    assert ingest([path], db).hands == 7


def test_compressed_files_load_like_plain_ones(tmp_path: Path) -> None:
    plain = write_jsonl(tmp_path / "p.jsonl", hands(25, 36))
    (tmp_path / "z.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(
        write_jsonl(tmp_path / "raw.txt", hands(25, 37, prefix="z")).read_bytes()))
    (tmp_path / "g.jsonl.gz").write_bytes(gzip.compress(
        write_jsonl(tmp_path / "raw.txt", hands(25, 38, prefix="g")).read_bytes()))
    summary = ingest([tmp_path], tmp_path / "x.duckdb")
    assert [Path(f.path).name for f in summary.files] == ["g.jsonl.gz", "p.jsonl",
                                                          "z.jsonl.zst"]
    assert [f.hands for f in summary.files] == [25, 25, 25]
    assert plain.exists()


def test_many_files_read_ahead_still_load_in_order_one_transaction_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in range(6):
        write_jsonl(tmp_path / f"{k}.jsonl", hands(15, 40 + k, prefix=f"f{k}-"))
    (tmp_path / "6.jsonl").write_text(json.dumps(hands(1, 40, prefix="f0-")[0] | {
        "players": []}) + "\n", encoding="utf-8")  # a conflict with 0.jsonl's first hand
    db = tmp_path / "x.duckdb"
    summary = ingest([tmp_path], db, batch_bytes=4 << 10)
    assert [f.hands for f in summary.files] == [15] * 6 + [0]
    assert summary.files[6].rejected == 1
    with Store(db) as store:
        files = store.con.sql("SELECT path, hands FROM ingested_files ORDER BY file_id"
                              ).fetchall()
    assert [Path(p).name for p, _ in files] == [f"{k}.jsonl" for k in range(7)]


def test_the_files_of_a_directory_are_read_ahead_while_the_first_is_stored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in range(5):
        write_jsonl(tmp_path / f"{k}.jsonl", hands(10 + k, 60 + k, prefix=f"d{k}-"))
    events: list[str] = []
    job, do = ingesting._Run.job, ingesting._do

    def spy_job(self: ingesting._Run, path: Path, *args: object) -> ingesting._Job:
        events.append(f"read {path.name}")
        return job(self, path, *args)  # type: ignore[arg-type]

    def spy_do(store: Store, todo: ingesting._Job, *args: object) -> ingesting.FileSummary:
        events.append(f"store {todo.path.name}")
        return do(store, todo, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(ingesting._Run, "job", spy_job)
    monkeypatch.setattr(ingesting, "_do", spy_do)
    summary = ingest([tmp_path], tmp_path / "x.duckdb")
    ahead = ingesting.FILES_AHEAD
    assert ahead >= 1
    assert events[:ahead + 2] == [*(f"read {k}.jsonl" for k in range(ahead + 1)),
                                  "store 0.jsonl"]
    assert [e for e in events if e.startswith("store")] == [
        f"store {k}.jsonl" for k in range(5)]
    assert [f.hands for f in summary.files] == [10, 11, 12, 13, 14]


def test_the_batches_of_the_file_being_stored_are_parsed_before_those_of_later_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files are read ahead, but a file's batches go to the parsing threads only once the
    file before has handed them its last: the file being stored never waits behind the
    batches of the files after it."""
    for k in range(4):
        write_jsonl(tmp_path / f"{k}.jsonl", hands(40, 80 + k, prefix=f"o{k}-"))
    started: list[str] = []
    parse_batch = jsonl.parse_batch

    def spy(batch: LineBatch, source: str, con: object) -> object:
        started.append(Path(source).name)
        time.sleep(0.002)  # (the readers of later files get every chance to jump ahead)
        return parse_batch(batch, source, con)  # type: ignore[arg-type]

    monkeypatch.setattr(jsonl, "parse_batch", spy)
    summary = ingest([tmp_path], tmp_path / "x.duckdb", batch_bytes=4 << 10)
    assert [f.hands for f in summary.files] == [40] * 4
    assert started.count("0.jsonl") > 3
    assert started == sorted(started)


def test_batches_gathered_for_one_insert_keep_first_hands_like_merging_them(
        tmp_path: Path) -> None:
    rows = hands(40, 71)
    changed = json.loads(json.dumps(rows[3]))
    changed["players"][0]["name"] = "someone else"
    write_jsonl(tmp_path / "g.jsonl", [*rows, rows[5], changed, rows[30]])
    batches = list(reading.read(tmp_path / "g.jsonl", batch_bytes=2 << 10))
    assert len(batches) > 3
    gathered = reading.Gathered()
    merged = HandBatch()
    for batch in batches:
        gathered.add(batch)
        merged = reading.merge(merged, batch)
    taken = gathered.take()
    assert gathered.hands == 0
    assert gathered.take().hands.is_empty()
    for name in ("hands", "seats", "moves", "rejects"):
        assert getattr(taken, name).equals(getattr(merged, name)), name
    assert taken.duplicates == merged.duplicates == 2
    assert taken.rejects.get_column("reason").to_list() == [
        "hand h3: a different hand with this id is at line 4"]


_HOLD = """
import sys, time
from ofcstats.store import Store
with Store(sys.argv[1]):
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
"""


@pytest.mark.slow
def test_a_second_ingest_waits_for_the_first_or_says_who_holds_the_database(
        tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    path = write_jsonl(tmp_path / "a.jsonl", hands(5, 50))
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(db), "2"],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "holding"
    notes: list[str] = []
    summary = ingest([path], db, wait=30, on_wait=notes.append)
    assert summary.hands == 5
    assert len(notes) == 1
    assert f"(PID {holder.pid}: " in notes[0]  # and what it runs
    holder.wait(timeout=30)
    holder.stdout.close()

    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(db), "30"],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(StoreError, match=rf"in use by \S+ \(PID {holder.pid}: [^)]*\); "
                           r"waited 1 s\. Close that program .*wait longer: wait=SECONDS "
                           r"\(or \$OFCSTATS_LOCK_WAIT\)$"):
            ingest([path], db, wait=1)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


_FULL_DISK = """
import resource, signal, sys
from pathlib import Path
from ofcstats.errors import StoreError
from ofcstats.ingest import ingest
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, as on a full disk
limit = Path(sys.argv[2]).stat().st_size + (1 << 20)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    ingest([Path(sys.argv[1])], sys.argv[2])
except StoreError as error:
    print(error)
    sys.exit(2)
"""


@pytest.mark.slow
def test_a_full_disk_is_one_clear_error_and_the_database_is_intact(tmp_path: Path) -> None:
    db, before, big = _store_and_big_file(tmp_path, 20_000, seed=51)
    child = subprocess.run([sys.executable, "-c", _FULL_DISK, str(big), str(db)],
                           capture_output=True, text=True, timeout=300, check=False)
    assert child.returncode == 2, child.stderr[-2000:]
    message = child.stdout.strip()
    assert message.startswith(f"{db}: could not write to the database while loading {big}: ")
    assert message.endswith("the database is as it was before that file: free some disk "
                            "space, then run this again")
    assert "Traceback" not in child.stderr
    assert counts(db) == before
    assert ingest([big], db).hands == 20_000


def _log_with_a_bad_line(tmp_path: Path, n: int = 300) -> tuple[Path, int]:
    """A log longer than the bytes format detection reads, with a broken line near its
    end: its line number."""
    path = write_jsonl(tmp_path / "a.jsonl", hands(n, 21))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(n - 5, "{broken\n")
    path.write_text("".join(lines), encoding="utf-8")
    assert path.stat().st_size > 2 * (64 << 10)
    return path, n - 4


def _stream_loaded(db: Path) -> tuple[int, list[tuple[str, int]]]:
    with Store(db) as store:
        rejects = store.con.sql("SELECT path, line FROM rejects").fetchall()
        return store.count("hands"), rejects


@pytest.mark.parametrize("name", ["-", "/dev/stdin"])
def test_piped_input_loads_every_hand_with_true_line_numbers(tmp_path: Path,
                                                             name: str) -> None:
    path, bad = _log_with_a_bad_line(tmp_path)
    db = tmp_path / "x.duckdb"
    done = subprocess.run(
        f"cat {path} | {sys.executable} -m ofcstats ingest {name} --db {db}",
        shell=True, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr  # the broken line
    assert f"{name}:{bad}: " in done.stderr
    assert _stream_loaded(db) == (300, [(name, bad)])
    # A stream is never skipped as already loaded; its stored hands are duplicates.
    again = subprocess.run(
        f"{sys.executable} -m ofcstats ingest {name} --db {db} --format json < {path}",
        shell=True, capture_output=True, text=True, timeout=120, check=False)
    summary = json.loads(again.stdout)
    assert (summary["hands"], summary["duplicates"], summary["skipped"]) == (0, 300, 0)


@pytest.mark.parametrize("packed", ["plain", "gz", "zst"])
def test_piped_input_with_a_long_first_line_loads_the_rest(tmp_path: Path, packed: str
                                                           ) -> None:
    """Format detection of a stream looks past a line too long to read (which is never held
    whole), and gives the stream back from its first line: the long line is rejected
    with its length, every other line loads at its true number."""
    path, bad = _log_with_a_bad_line(tmp_path)
    long = b'{"format": "ofc-hand/1", "pad": "' + b"x" * (3 * MAX_LINE_BYTES) + b'"}'
    text = long + b"\n" + path.read_bytes() + long + b"\n"
    if packed != "plain":
        text = gzip.compress(text) if packed == "gz" else zstandard.ZstdCompressor().compress(
            text)
    piped = tmp_path / f"piped.{packed}"
    piped.write_bytes(text)
    db = tmp_path / "x.duckdb"
    done = subprocess.run(f"cat {piped} | {sys.executable} -m ofcstats ingest - --db {db}",
                          shell=True, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert f"-:1: the line is {len(long):,} bytes long, more than the " in done.stderr
    assert _stream_loaded(db) == (300, [("-", 1), ("-", bad + 1), ("-", 303)])


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_a_100_mb_line_is_rejected_in_bounded_memory(tmp_path: Path) -> None:
    """A line of 100 MB takes no more memory than a line just over the limit: it is passed
    over as it is read (loading it took 2 GB before). Both files compressed, so both are
    read the same way (a plain file of 100 MB would take the compiled reader)."""
    lines = write_jsonl(tmp_path / "a.jsonl", hands(200, 23)).read_bytes().split(b"\n")
    peaks = {}
    for size in (MAX_LINE_BYTES + 1, 100 << 20):
        long = b'{"format": "ofc-hand/1", "pad": "' + b"x" * size + b'"}'
        log = tmp_path / f"long-{size}.jsonl.gz"
        log.write_bytes(gzip.compress(b"\n".join([long, *lines[:100], long, *lines[100:]]),
                                      compresslevel=1))
        done = subprocess.run([sys.executable, "-c", _PEAK, str(log), str(tmp_path / f"{size}.db")],
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        hands_loaded, rejected, peaks[size] = map(int, done.stdout.split())
        assert (hands_loaded, rejected) == (200, 2)
    assert peaks[100 << 20] - peaks[MAX_LINE_BYTES + 1] < 64 << 20, peaks


_PEAK = """
import re, sys
from pathlib import Path
from ofcstats.ingest import ingest
summary = ingest([Path(sys.argv[1])], Path(sys.argv[2]))
# The process's own peak (ru_maxrss would count the parent's, copied before the exec).
peak = re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1)
print(summary.hands, summary.rejected, int(peak) * 1024)
"""


def test_a_forced_input_format_reads_a_stream_too(tmp_path: Path) -> None:
    path, bad = _log_with_a_bad_line(tmp_path)
    db = tmp_path / "x.duckdb"
    with path.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "ofcstats", "ingest", "-", "--db", str(db),
             "--input-format", "ofc-hand"],
            stdin=stdin, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert _stream_loaded(db) == (300, [("-", bad)])


def test_a_fifo_loads_every_hand_and_does_not_hang(tmp_path: Path) -> None:
    path, bad = _log_with_a_bad_line(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def write() -> None:
        with fifo.open("wb") as out:
            out.write(path.read_bytes())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    db = tmp_path / "x.duckdb"
    done = subprocess.run([sys.executable, "-m", "ofcstats", "ingest", str(fifo), "--db",
                           str(db)], capture_output=True, text=True, timeout=120, check=False)
    writer.join(timeout=10)
    assert done.returncode == 1, done.stderr
    assert _stream_loaded(db) == (300, [(str(fifo), bad)])


def _reloaded_with(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A store of five hands, and a log of the same hands (the same cards) where hand h1
    reports other points and hand h3 another point value."""
    db = tmp_path / "x.duckdb"
    original = write_jsonl(tmp_path / "a.jsonl", hands(5, 4))
    ingest([original], db)
    changed = hands(5, 4)
    changed[1]["players"][0]["reported_points"] = 17.5
    changed[3]["point_value"] = 0.25
    return db, original, write_jsonl(tmp_path / "b.jsonl", changed)


def _stored_values(db: Path) -> dict[str, tuple[object, ...]]:
    with Store(db) as store:
        rows = store.con.sql("""
            SELECT h.hand_id, h.point_value, list(s.reported_points ORDER BY s.seat)
            FROM hands h JOIN seats s USING (hand_key) GROUP BY ALL""").fetchall()
    return {hand_id: (value, tuple(points)) for hand_id, value, points in rows}


def test_a_stored_hand_with_other_reported_points_is_a_conflict_not_dropped(
        tmp_path: Path) -> None:
    db, original, changed = _reloaded_with(tmp_path)
    before = _stored_values(db)
    summary = ingest([changed], db)
    assert (summary.hands, summary.duplicates, summary.conflicts, summary.rejected,
            summary.updated) == (0, 3, 2, 2, 0)
    assert [r.reason for r in summary.first_rejects] == [
        f"hand h1: the same hand as the one stored (from {original} line 2) but another "
        "reported_points: to keep the new values, load it with --update",
        f"hand h3: the same hand as the one stored (from {original} line 4) but another "
        "point_value: to keep the new values, load it with --update"]
    assert [(r.path, r.line) for r in summary.first_rejects] == [(str(changed), 2),
                                                                 (str(changed), 4)]
    assert _stored_values(db) == before


def test_the_same_id_twice_in_one_file_with_other_values_is_a_conflict(
        tmp_path: Path) -> None:
    """Inside one run, as against the store: the same cards under one id with another
    reported result or point value are a conflict; an exact repeat is a duplicate."""
    first = hands(3, 4)
    changed = hands(3, 4)
    changed[1]["players"][0]["reported_points"] = 17.5
    changed[2]["point_value"] = 0.25
    log = write_jsonl(tmp_path / "a.jsonl", [*first, first[0], changed[1], changed[2]])
    db = tmp_path / "x.duckdb"
    summary = ingest([log], db)
    assert (summary.hands, summary.duplicates, summary.rejected) == (3, 1, 2)
    assert [(r.line, r.reason) for r in summary.first_rejects] == [
        (5, "hand h1: the same hand as at line 2 but with other values of played_at, "
            "ruleset, point_value, button, reported_points, unit"),
        (6, "hand h2: the same hand as at line 3 but with other values of played_at, "
            "ruleset, point_value, button, reported_points, unit")]
    assert _stored_values(db) == {h["hand_id"]: (h.get("point_value"), tuple(
        p.get("reported_points") for p in h["players"])) for h in first}


def test_update_gives_a_stored_hand_the_new_non_card_values_and_rescores_it(
        tmp_path: Path) -> None:
    db, _, changed = _reloaded_with(tmp_path)
    rulesets = load_rulesets(preset_names()[:1])
    with Store(db) as store:
        pipeline.rescore(store, rulesets)
        rows = store.count("results")
    before = _stored_values(db)
    assert ingest([changed], db).conflicts == 2
    # The file's content is loaded already (with its conflicts): --update reads it again.
    summary = ingest([changed], db, update=True)
    assert (summary.hands, summary.duplicates, summary.conflicts, summary.updated) == \
        (0, 3, 0, 2)
    assert summary.clean
    after = _stored_values(db)
    assert after["h1"][1][0] == 17.5
    assert after["h3"][0] == 0.25
    assert {k: v for k, v in after.items() if k not in ("h1", "h3")} == \
        {k: v for k, v in before.items() if k not in ("h1", "h3")}
    with Store(db) as store:
        again = pipeline.rescore(store, rulesets)
        assert again.hands == 5, "the session of the updated hands is scored again"
        assert store.count("results") == rows
    assert ingest([changed], db, update=True).updated == 0


def test_cli_ingest_update_flag(tmp_path: Path) -> None:
    db, _, changed = _reloaded_with(tmp_path)
    first = runner.invoke(app, ["ingest", str(changed), "--db", str(db)])
    assert first.exit_code == 1
    assert "load it with --update" in first.output
    second = runner.invoke(app, ["ingest", str(changed), "--db", str(db), "--update"])
    assert second.exit_code == 0, second.output
    assert "2 updated" in second.output


def test_the_content_hash_and_its_head_agree_with_hashing_the_bytes_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The file is hashed a mapped window at a time; small windows put window edges, the
    # end of the file and the head (what a grown file had when it was loaded) everywhere.
    monkeypatch.setattr(ingesting, "_HASH_CHUNK", 1 << 16)
    rng = random.Random(7)
    log = tmp_path / "x.jsonl"
    for size in (0, 1, 65_535, 65_536, 65_537, 300_001):
        data = rng.randbytes(size)
        log.write_bytes(data)
        for prefix in (None, 1, 4_096, 65_535, 65_536, 70_000, size, size + 1):
            whole, head = ingesting._hash(log, prefix)
            assert whole == blake3.blake3(data).hexdigest()
            expected = None if prefix is None or prefix > size else \
                blake3.blake3(data[:prefix]).hexdigest()
            assert head == expected, (size, prefix)


def _stream_interrupted() -> duckdb.Error:
    """DuckDB's error for an insert whose Arrow stream of rows Ctrl-C stopped (the rows
    are read back in Python as DuckDB takes them)."""
    import pyarrow as pa  # noqa: PLC0415

    schema = pa.schema([("a", pa.int32())])

    def rows() -> Iterator[pa.RecordBatch]:
        yield pa.record_batch([pa.array([1], pa.int32())], schema=schema)
        raise KeyboardInterrupt

    con = duckdb.connect()
    con.execute("CREATE TABLE t (a INTEGER)")
    try:
        con.from_arrow(pa.RecordBatchReader.from_batches(schema, rows())).insert_into("t")
    except duckdb.Error as error:
        return error
    raise AssertionError("the insert went through")


@pytest.mark.parametrize("error", [RuntimeError("Query interrupted"),
                                   duckdb.InterruptException("INTERRUPT Error: Interrupted!"),
                                   _stream_interrupted()])
def test_ctrl_c_while_duckdb_stores_a_file_says_interrupted_and_keeps_the_database(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    """Ctrl-C during a query reaches Python as DuckDB's error, not KeyboardInterrupt:
    still 'interrupted' (exit 130), the file's transaction undone."""
    from ofcstats.store import hands as adding  # noqa: PLC0415

    db = tmp_path / "x.duckdb"
    ingest([write_jsonl(tmp_path / "first.jsonl", hands(5, 3, "f"))], db)
    before = counts(db)
    write = adding.Appends._write

    def stopped(self: adding.Appends, table: str, count: int) -> None:
        write(self, table, count)
        raise error

    monkeypatch.setattr(adding.Appends, "_write", stopped)
    result = CliRunner().invoke(app, ["ingest", str(write_jsonl(
        tmp_path / "second.jsonl", hands(5, 4, "s"))), "--db", str(db), "--quiet"])
    assert result.exit_code == 130, result.output
    assert result.output.strip().splitlines()[-1] == (
        f"ofcstats: interrupted: no file loaded; {tmp_path / 'second.jsonl'} was rolled back, "
        "the database as it was before it; run the same ofcstats ingest again to load the "
        "rest (what is loaded is skipped) and score them")
    monkeypatch.undo()
    assert counts(db) == before


_INTERRUPTED = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as on a terminal
from ofcstats.store import Store
real_add = Store.add
def add(self, *args, **kwargs):
    out = real_add(self, *args, **kwargs)
    print("stored", file=sys.stderr, flush=True)
    return out
Store.add = add
import ofcstats.ingest
ofcstats.ingest.APPEND_HANDS = 1000
from ofcstats.cli import main
sys.argv = ["ofcstats", "ingest", sys.argv[1], "--db", sys.argv[2], "--quiet"]
main()
"""


@pytest.mark.slow
def test_ctrl_c_mid_file_says_interrupted_and_a_rerun_completes(tmp_path: Path) -> None:
    db, before, big = _store_and_big_file(tmp_path, 10_000, seed=16)
    child = subprocess.Popen([sys.executable, "-c", _INTERRUPTED, str(big), str(db)],
                             stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert child.stderr is not None
    with child.stderr:
        lines = []
        for line in child.stderr:
            lines.append(line.strip())
            if lines.count("stored") == 3:
                child.send_signal(signal.SIGINT)
                break
        lines += [line.strip() for line in child.stderr]
        child.wait(timeout=30)
    assert child.returncode == 130, lines
    assert lines[-1] == (f"ofcstats: interrupted: no file loaded; {big} was rolled back, "
                         "the database as it was before it; run the same ofcstats ingest "
                         "again to load the rest (what is loaded is skipped) and score them")
    assert counts(db) == before
    assert ingest([big], db).hands == 10_000


def test_repeats_across_many_files_and_runs_meet_their_stored_copies(tmp_path: Path) -> None:
    """From a load's second batch on, whether a hand may be stored is asked of the stored
    ids' hashes (read once, kept up to date) instead of the database: repeats and
    conflicts with hands of an earlier run, of an earlier file of the same run and of a
    file whose hands are still held are all found, file after file."""
    first = hands(20, 81)
    ingest([write_jsonl(tmp_path / "a.jsonl", first)], tmp_path / "db.duckdb")
    new = hands(40, 82, prefix="n")
    other = json.loads(json.dumps(first[7]))
    other["players"][0]["name"] = "someone else"  # the same id, another hand
    clash = json.loads(json.dumps(new[11]))
    clash["players"][0]["name"] = "someone else"
    files = [
        [*new[0:10]],  # new hands
        [first[5], *new[10:15]],  # a repeat of the earlier run's
        [new[3], other, *new[15:20]],  # a repeat from this run, a conflict with the first
        [clash, *new[20:30], new[12]],  # a conflict and a repeat of this run's hands
        [*new[30:40], first[0], first[19]],  # more new hands, then two old ones
    ]
    folder = tmp_path / "logs"
    folder.mkdir()
    for k, rows in enumerate(files):
        write_jsonl(folder / f"part-{k}.jsonl", rows)
    summary = ingest([folder], tmp_path / "db.duckdb")
    per_file = [(f.hands, f.duplicates, f.conflicts) for f in summary.files]
    assert per_file == [(10, 0, 0), (5, 1, 0), (5, 1, 1), (10, 1, 1), (10, 2, 0)]
    with Store(tmp_path / "db.duckdb") as store:
        ids = store.con.execute("SELECT count(*), count(DISTINCT hand_id) FROM hands"
                                ).fetchall()[0]
        players = dict(store.con.execute(
            "SELECT h.hand_id, s.player FROM hands h JOIN seats s USING (hand_key) "
            "WHERE s.seat = (SELECT min(seat) FROM seats t WHERE t.hand_key = h.hand_key) "
            "AND h.hand_id IN ('h7', 'n11')").fetchall())
    assert ids == (60, 60)
    assert "someone else" not in players.values()


def test_the_stored_ids_filter_never_misses_a_stored_id() -> None:
    """Every id added, however the sorted runs were merged, is found; ids never added
    are (nearly always) not."""
    con = duckdb.connect()
    con.execute("CREATE TABLE hands (hand_id VARCHAR)")
    con.execute("INSERT INTO hands SELECT 'stored' || range FROM range(1000)")

    def hashed(names: list[str]) -> np.ndarray:
        return id_hashes(pl.Series(names, dtype=pl.String))

    stored = stored_ids(con, IdHashes(hashed(["held1", "held2"])))
    rng = random.Random(5)
    added: list[str] = []
    for size in (1, 3, 250, 2, 40_000, 7, 1, 600):
        batch = [f"added{len(added) + i}" for i in range(size)]
        stored.add(hashed(batch))
        added += batch
    assert len(stored.runs) <= 12
    for name in [*rng.sample(added, 500), "stored0", "stored999", "held1", "held2"]:
        assert stored.may_hold_any(hashed([name])), name
    assert stored.may_hold_any(hashed(["nobody", "added40000", "someone"]))
    assert not stored.may_hold_any(hashed([f"never{i}" for i in range(200)]))
    assert not stored.may_hold_any(hashed([]))


def test_a_file_of_sixteen_large_batches_or_more_is_parsed_in_large_batches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    large = ingesting.LARGE_BATCH_BYTES
    assert ingesting.batch_bytes_for(16 * large) == large
    assert ingesting.batch_bytes_for(16 * large - 1) == ingesting.BATCH_BYTES
    assert ingesting.batch_bytes_for(0) == ingesting.BATCH_BYTES
    # A load left to choose asks by each file's size; a load given a size keeps it.
    asked: list[int] = []
    monkeypatch.setattr(ingesting, "batch_bytes_for",
                        lambda size: asked.append(size) or 2048)
    log = write_jsonl(tmp_path / "a.jsonl", hands(30, 1))
    packed = tmp_path / "c.jsonl.gz"
    packed.write_bytes(gzip.compress(
        write_jsonl(tmp_path / "c.txt", hands(30, 3, prefix="c")).read_bytes()))
    summary = ingest([log, packed], tmp_path / "a.duckdb")
    assert asked == [log.stat().st_size, packed.stat().st_size * ingesting.COMPRESSION]
    assert summary.hands == 60
    read: list[int] = []
    parse = ingesting.formats.parse
    monkeypatch.setattr(ingesting.formats, "parse", lambda *args, **kwargs: (
        read.append(args[4]), parse(*args, **kwargs))[1])
    other = write_jsonl(tmp_path / "b.jsonl", hands(30, 2, prefix="b"))
    ingest([other], tmp_path / "a.duckdb", batch_bytes=4096)
    assert read == [4096]
    assert len(asked) == 2


def test_every_hand_rejected_into_a_new_database_leaves_no_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n{\"not\": \"a hand\"}\n", encoding="utf-8")
    db = tmp_path / "x.duckdb"
    with pytest.raises(NothingLoadedError) as raised:
        ingest([bad], db, "ofc-hand")
    assert str(raised.value) == (
        f"{bad}:1: not valid JSON: Expecting value at column 1; nothing loaded (2 rejected), "
        f"{db} not created: fix the log (its format: docs/format.md) and load it again")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def test_every_hand_rejected_into_an_existing_database_keeps_its_hands(tmp_path: Path
                                                                       ) -> None:
    db = tmp_path / "x.duckdb"
    ingest([write_jsonl(tmp_path / "a.jsonl", hands(4, 41))], db)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n", encoding="utf-8")
    summary = ingest([bad], db, "ofc-hand")
    assert (summary.hands, summary.rejected) == (0, 1)
    with Store(db) as store:
        assert store.con.sql("SELECT count(*) FROM hands").fetchall() == [(4,)]


def test_some_hands_rejected_into_a_new_database_load_the_others(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n", encoding="utf-8")
    db = tmp_path / "x.duckdb"
    summary = ingest([bad, write_jsonl(tmp_path / "a.jsonl", hands(3, 42))], db, "ofc-hand")
    assert (summary.hands, summary.rejected) == (3, 1)
    with Store(db) as store:
        assert store.con.sql("SELECT count(*) FROM rejects").fetchall() == [(1,)]
