"""Ingest throughput: 3-player Pineapple hands, ofc-hand/1 into DuckDB, both log forms.

Two files of the same hands are generated here, column-wise (numpy deals, polars writes
the JSON), and cached under ``out/bench/``: street by street (what apps and the
simulator write) and final rows only. Each is loaded by ``ofcstats ingest --no-rescore``
(the load alone) in a child process (so its peak RSS is the ingest's own), and the
street file once more by ``ofcstats ingest`` as a user runs it (the load, then the
scoring of what it loaded), next to what merely parsing the same file
costs: Python's ``json.loads`` line by line, and DuckDB's ``read_json`` into a table.
Then the readers ingest runs, each alone: its compiled reader (every line of the usual
shape) and pyarrow's JSON reader with the file's schema (the lines the compiled one
leaves, and every line of a small file). Then the street file again (a file already
loaded is skipped; beside it, starting the command alone), cut into 8 files loaded as
one directory (then again, skipped), its first 50,000 hands as
200 files of 250 (a club's sessions, a file each; then under other ids into the street
file's database), and compressed (``.gz``, ``.zst``,
beside the time their lines take to read alone). ``--quick`` uses 50,000 hands instead
of 1,000,000.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import zstandard

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "bench"
FULL, QUICK = 1_000_000, 50_000
_RANKS, _SUITS = "23456789TJQKA", "cdhs"
_CARD = [f'"{r}{s}"' for r in _RANKS for s in _SUITS]
_KINDS = ("dealt", "top", "middle", "bottom", "discard")
_STREET_OF = np.repeat(np.arange(5), [5, 3, 3, 3, 3])  # street of each of a seat's 17 cards
_PLAYERS = 12


def _fmt(template: str, *values: pl.Expr | str) -> pl.Expr:
    """``template`` with each ``{}`` filled by a column (literal braces allowed)."""
    pieces = template.split("{}")
    parts: list[pl.Expr] = [pl.lit(pieces[0])]
    for value, piece in zip(values, pieces[1:], strict=True):
        parts += [pl.col(value) if isinstance(value, str) else value, pl.lit(piece)]
    return pl.concat_str(parts)


def pineapple_text(n: int, seed: int, first: int = 0) -> str:
    """``n`` legal 3-player Pineapple hands as ofc-hand/1 JSON Lines.

    Every card mention of the chunk becomes one row of a frame, in file order, with the
    brackets and keys that open or close around it; joining the column is the text.
    """
    rng = np.random.default_rng(seed)
    seats = n * 3
    deck = np.argsort(rng.random((n, 52)), axis=1)[:, :51].reshape(seats, 17)
    # One discard among the 3 cards of each later street, then the 13 kept cards go to
    # rows in a random order of 3 tops, 5 middles and 5 bottoms: always a legal board.
    kind = np.zeros((seats, 17), dtype=np.int64)
    discard = rng.integers(0, 3, size=(seats, 4)) + np.array([5, 8, 11, 14])
    np.put_along_axis(kind, discard, 4, axis=1)
    labels = np.repeat(np.array([1, 2, 3]), [3, 5, 5])
    kind[kind == 0] = labels[np.argsort(rng.random((seats, 13)), axis=1)].ravel()
    # Each seat lists 34 mentions: per street its dealt cards, then its placed and
    # discarded ones grouped by row.
    street = np.tile(_STREET_OF, (seats, 2))
    kinds = np.concatenate([np.zeros((seats, 17), dtype=np.int64), kind], axis=1)
    cards = np.concatenate([deck, deck], axis=1)
    order = np.argsort(street * 10 + kinds, axis=1, kind="stable")
    street = np.take_along_axis(street, order, axis=1).ravel()
    kinds = np.take_along_axis(kinds, order, axis=1).ravel()
    cards = np.take_along_axis(cards, order, axis=1).ravel()
    item = np.tile(np.arange(34), seats)
    new_group = np.r_[True, (street[1:] != street[:-1]) | (kinds[1:] != kinds[:-1])]
    new_street = np.r_[True, street[1:] != street[:-1]] | (item == 0)
    new_group |= item == 0
    end_group = np.r_[new_group[1:], True]
    end_street = np.r_[new_street[1:], True]
    seat_no = np.repeat(np.arange(seats) % 3, 34)
    names = np.argsort(rng.random((n, _PLAYERS)), axis=1)[:, :3].ravel() + 1
    group_texts = [f'"{k}":[' for k in _KINDS] + [f',"{k}":[' for k in _KINDS] + [","]
    # Closing brackets: row list, street, seat, hand, as bits of one small code.
    close = end_group + 2 * end_street + 4 * (item == 33) + 8 * ((item == 33) & (seat_no == 2))
    closings = {c: ("]" if c & 1 else "") + ("}" if c & 2 else "") + ("]}" if c & 4 else "")
                + ("]}\n" if c & 8 else "") for c in range(16)}
    numbers = pl.DataFrame({"hand": np.arange(n) + first})
    played = pl.lit(np.datetime64("2026-11-01T12:00:00", "s")) + pl.duration(
        seconds=pl.col("hand") * 40)
    headers = numbers.select(_fmt(
        '{"format":"ofc-hand/1","hand_id":"bench-{}","session_id":"s{}",'
        '"played_at":"{}","variant":"pineapple","button":3,"players":[',
        pl.col("hand").cast(pl.String), (pl.col("hand") // 500).cast(pl.String),
        played.dt.strftime("%Y-%m-%dT%H:%M:%SZ"))).to_series()
    seat_frame = pl.DataFrame({"seat": np.arange(seats) % 3 + 1, "name": names})
    seat_opens = seat_frame.select(_fmt(
        '{}{"seat":{},"name":"p{}","streets":[',
        pl.when(pl.col("seat") == 1).then(pl.lit("")).otherwise(pl.lit(",")),
        pl.col("seat").cast(pl.String), pl.col("name").cast(pl.String))).to_series()
    mention = np.arange(n * 102)
    hand_open = np.where((item == 0) & (seat_no == 0), mention // 102, -1)
    seat_open = np.where(item == 0, mention // 34, -1)
    frame = pl.DataFrame({
        "hand_open": hand_open, "seat_open": seat_open,
        "open_street": np.where(new_street, np.where(street == 0, 1, 2), 0),
        "open_group": np.where(new_group, np.where(new_street, 0, 5) + kinds, 10),
        "card": cards, "close": close,
    })
    text = frame.select(pl.concat_str([
        headers.gather(pl.Series(hand_open).replace(-1, None)),
        seat_opens.gather(pl.Series(seat_open).replace(-1, None)),
        pl.col("open_street").replace_strict([0, 1, 2], ["", "{", ",{"],
                                             return_dtype=pl.String),
        pl.col("open_group").replace_strict(list(range(11)), group_texts,
                                            return_dtype=pl.String),
        pl.col("card").replace_strict(list(range(52)), _CARD, return_dtype=pl.String),
        pl.col("close").replace_strict(list(closings), list(closings.values()),
                                       return_dtype=pl.String),
    ], ignore_nulls=True).str.join("").alias("text"))
    return str(text.item())


def write_pineapple_file(path: Path, n: int, seed: int = 7, chunk: int = 50_000) -> Path:
    """Write ``n`` hands to ``path`` (plain JSON Lines), a chunk at a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    with partial.open("wb") as out:
        for start in range(0, n, chunk):
            out.write(pineapple_text(min(chunk, n - start), seed + start, first=start).encode())
    partial.rename(path)
    return path


def final_rows_file(street_file: Path, path: Path) -> Path:
    """The same hands with each seat's final rows only (the streets' placements summed
    up), written a chunk at a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    with street_file.open("rb") as src, partial.open("wb") as out:
        while chunk := src.readlines(64 << 20):
            frame = pl.DataFrame({"line": [c.rstrip(b"\n").decode() for c in chunk]})
            rows = frame.select(pl.col("line").str.json_decode(_STREET_HAND)).unnest("line")
            seats = rows.with_row_index("i").explode("players").unnest("players").select(
                "i", "seat", "name",
                *[pl.col("streets").list.eval(
                    pl.element().struct.field(row).explode().drop_nulls()).alias(row)
                  for row in ("top", "middle", "bottom")])
            players = seats.group_by("i", maintain_order=True).agg(
                pl.struct("seat", "name", "top", "middle", "bottom").alias("players"))
            hands = rows.drop("players").with_row_index("i").join(players, on="i").drop("i")
            out.write(hands.write_ndjson().encode())
    partial.rename(path)
    return path


_CARDS = pl.List(pl.String)
_STREET_HAND = pl.Struct({
    "format": pl.String, "hand_id": pl.String, "session_id": pl.String,
    "played_at": pl.String, "variant": pl.String, "button": pl.Int64,
    "players": pl.List(pl.Struct({"seat": pl.Int64, "name": pl.String, "streets": pl.List(
        pl.Struct(dict.fromkeys(_KINDS, _CARDS)))})),
})

_JSON_LOADS = """
import json, sys
with open(sys.argv[1], "rb") as f:
    for line in f:
        json.loads(line)
"""
_DUCKDB_READ_JSON = """
import duckdb, sys
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
con.execute("CREATE TABLE raw AS SELECT * FROM read_json(?, format='newline_delimited')",
            [sys.argv[1]])
"""
_PYARROW_JSON = """
import sys, time
import pyarrow.json as pajson
from ofcstats.formats.jsonl import SCHEMA
started = time.perf_counter()
pajson.read_json(sys.argv[1], parse_options=pajson.ParseOptions(explicit_schema=SCHEMA))
print(time.perf_counter() - started)
"""
_COMPILED = """
import sys, time
from pathlib import Path
from ofcstats.formats import jsonl, scratch
from ofcstats.formats.lines import LineBatch, read_line_batches
con = scratch()
warm = LineBatch(first_line=1, data=b"{}\\n")
jsonl.scan_lines(warm, jsonl.readable(warm), con)  # loads the compiled reader
started = time.perf_counter()
for batch in read_line_batches(Path(sys.argv[1])):
    jsonl.scan_lines(batch, jsonl.readable(batch), con)
print(time.perf_counter() - started)
"""
_DECOMPRESS = """
import sys
from ofcstats.formats.lines import read_line_batches
from pathlib import Path
for _ in read_line_batches(Path(sys.argv[1])):
    pass
"""

_INFLATE = """
import sys
from isal import igzip
import zstandard
path = sys.argv[1]
buffer = bytearray(1 << 20)
with open(path, "rb") as raw:
    reader = igzip.IGzipFile(fileobj=raw) if path.endswith(".gz") else \\
        zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    while reader.readinto(buffer):
        pass
"""
"""The baseline of the lines alone: the decompressor alone (ISA-L's gzip reader,
zstandard's), a megabyte at a time, no lines cut (and no break kept apart from the lines
before it, as the line reader's own readers do)."""


def _ingest(path: Path, db: Path, fresh: bool = True, scored: bool = False
            ) -> tuple[float, int, dict[str, object]]:
    """One ``ofcstats ingest``: the load alone (``--no-rescore``), or with ``scored`` the
    command as a user runs it, the load then the scoring of what it loaded."""
    from timing import timed_child  # noqa: PLC0415 - a sibling script

    if fresh:
        for stale in (db, db.with_name(db.name + ".wal")):
            stale.unlink(missing_ok=True)
    command = [str(Path(sys.executable).parent / "ofcstats"), "ingest", str(path),
               "--db", str(db), "--json", "--quiet", *([] if scored else ["--no-rescore"])]
    seconds, peak_kb, stdout = timed_child(command)
    return seconds, peak_kb, json.loads(stdout)


def _start_up() -> float:
    """What starting the command costs (Python, the imports), the median of three."""
    from timing import timed_child  # noqa: PLC0415 - a sibling script

    command = [str(Path(sys.executable).parent / "ofcstats"), "--version"]
    return sorted(timed_child(command)[0] for _ in range(3))[1]


def _parse_only(script: str, path: Path) -> tuple[float, int]:
    """The script's time and peak memory; the time it prints instead, if it prints one
    (the parse alone, without importing what names the file's schema)."""
    from timing import timed_child  # noqa: PLC0415 - a sibling script

    seconds, peak_kb, stdout = timed_child([sys.executable, "-c", script, str(path)])
    return (float(stdout) if script in (_PYARROW_JSON, _COMPILED) else seconds), peak_kb


def _loads(path: Path, db: Path, hands: int, repeats: int, copy_of: Path | None = None
           ) -> tuple[float, int]:
    """Load ``path`` ``repeats`` times, into a new database or a fresh copy of
    ``copy_of``: the median time, with its peak memory."""
    runs = []
    for _ in range(repeats):
        if copy_of is not None:
            db.with_name(db.name + ".wal").unlink(missing_ok=True)
            shutil.copyfile(copy_of, db)
        seconds, peak_kb, summary = _ingest(path, db, fresh=copy_of is None)
        assert summary["hands"] == hands, summary
        runs.append((seconds, peak_kb))
    return _median(runs)


def _folder_mb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.iterdir()) / 1e6


def _median(runs: list[tuple[float, int]]) -> tuple[float, int]:
    """The run of median time (its peak memory with it)."""
    return sorted(runs)[len(runs) // 2]


def _compressed(path: Path, suffix: str) -> Path:
    target = path.with_name(path.name + suffix)
    if not target.exists():
        partial = target.with_name(target.name + ".partial")
        with path.open("rb") as src, partial.open("wb") as raw:
            if suffix == ".gz":
                with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6) as out:
                    shutil.copyfileobj(src, out, 8 << 20)
            else:
                zstandard.ZstdCompressor(level=3).copy_stream(src, raw)
        partial.rename(target)
    return target


def _split(path: Path, n: int, parts: int) -> Path:
    """The file's ``n`` lines in ``parts`` files of a directory beside it (made once)."""
    folder = path.with_name(f"{path.stem}-{parts}-files")
    if not folder.exists():
        partial = folder.with_name(folder.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        each = -(-n // parts)
        with path.open("rb") as src:
            for k in range(parts):
                with (partial / f"part-{k}.jsonl").open("wb") as out:
                    out.writelines(itertools.islice(src, each))
        partial.rename(folder)
    return folder


def _renamed(folder: Path) -> Path:
    """The files of ``folder`` with every hand id ending in ``z`` (made once)."""
    target = folder.with_name(f"{folder.name}-renamed")
    if not target.exists():
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        for file in sorted(folder.iterdir()):
            (partial / file.name).write_bytes(
                re.sub(rb'"hand_id":\s*"([^"]*)"', rb'"hand_id":"\1z"', file.read_bytes()))
        partial.rename(target)
    return target


def _rate(label: str, n: int, size_mb: float, seconds: float, note: str = "") -> str:
    return (f"  {label:<24}{seconds:6.1f} s  {n / seconds:>9,.0f} hands/s  "
            f"{size_mb / seconds:5,.0f} MB/s  {note}").rstrip()


def run(quick: bool) -> None:
    """Generate (or reuse) the files, load each into a new database, print a table.

    Each figure is the median of three runs with ``--quick`` (one without), the runs of
    one file taken in turn (ingest, json.loads, read_json, ...) so that other work on the
    machine falls on all of them alike; the load average is printed with them.
    """
    sys.path.insert(0, str(Path(__file__).parent))
    n = QUICK if quick else FULL
    repeats = 3 if quick else 1
    streets = OUT / f"pineapple-3p-{n}.jsonl"
    rows = OUT / f"pineapple-3p-{n}-final-rows.jsonl"
    started = time.perf_counter()
    if not streets.exists():
        write_pineapple_file(streets, n)
    if not rows.exists():
        final_rows_file(streets, rows)
    if time.perf_counter() - started > 1:
        print(f"generated the files in {time.perf_counter() - started:.1f}s")
    # The compiled reader and checks are compiled once per install (as `make test` does):
    # a figure below never includes that.
    from ofcstats.formats import jsonl  # noqa: PLC0415

    jsonl.compile_reader()
    load = os.getloadavg()
    print(f"  load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"({os.cpu_count()} cores); median of {repeats} run(s) each")
    lines = [*_one_form("street by street", streets, n, repeats),
             *_one_form("final rows", rows, n, repeats), *_other_forms(streets, n, repeats)]
    for line in lines:
        print(f"  {line}")


def _one_form(label: str, path: Path, n: int, repeats: int) -> list[str]:
    """Ingest next to the parsers alone, for one file."""
    size_mb = path.stat().st_size / 1e6
    db = OUT / f"ingest-{path.stem}.duckdb"
    runs: dict[str, list[tuple[float, int]]] = {}
    for _ in range(repeats):
        seconds, peak_kb, summary = _ingest(path, db)
        assert summary["hands"] == n, summary
        runs.setdefault("ingest", []).append((seconds, peak_kb))
        for name, script in (("loads", _JSON_LOADS), ("read_json", _DUCKDB_READ_JSON),
                             ("pyarrow", _PYARROW_JSON), ("compiled", _COMPILED)):
            runs.setdefault(name, []).append(_parse_only(script, path))
    seconds, peak_kb = _median(runs["ingest"])
    loads, _ = _median(runs["loads"])
    duck, duck_kb = _median(runs["read_json"])
    arrow, _ = _median(runs["pyarrow"])
    compiled, _ = _median(runs["compiled"])
    lines = [
        f"{label}: {size_mb:,.0f} MB, {path.stat().st_size / n:,.0f} bytes a hand",
        _rate("ofcstats ingest", n, size_mb, seconds,
              f"peak RSS {peak_kb / 1024:,.0f} MB  (database {db.stat().st_size / 1e6:,.0f} "
              "MB; the whole process, startup included)"),
        _rate("json.loads, per line", n, size_mb, loads, "(parse only, nothing kept)"),
        _rate("DuckDB read_json", n, size_mb, duck,
              f"peak RSS {duck_kb / 1024:,.0f} MB  (to a table, types guessed, nothing "
              "checked)"),
        _rate("pyarrow.json alone", n, size_mb, arrow,
              "(the file's schema; the parse alone, in its process; ingest's reader of "
              "unusual lines)"),
        _rate("compiled reader alone", n, size_mb, compiled,
              "(ingest's reader: raw frames of every batch, one thread, loaded beforehand)"),
    ]
    if label.startswith("street"):
        # The command as a user runs it: the load, then the scoring of what it loaded
        # under the 8 presets played in Pineapple (24 result rows a hand).
        whole, whole_kb, summary = _ingest(path, db, scored=True)
        scoring = summary["rescore"]
        assert isinstance(scoring, dict), summary
        assert scoring["hands"] == n, summary
        lines.append(_rate("ingest, then its rescore", n, size_mb, whole,
                           f"peak RSS {whole_kb / 1024:,.0f} MB  (the default; of which "
                           f"scoring {scoring['seconds']:.1f} s, {n / scoring['seconds']:,.0f}"
                           " hands/s; the line above: --no-rescore)"))
        again, _, skipped = _ingest(path, db, fresh=False)
        assert skipped["skipped"] == 1, skipped
        start = _start_up()
        lines.append(f"  ingest again (skipped)  {again:6.1f} s  whole process: start, "
                     f"hash the file, look it up; of which start-up {start:.1f} s "
                     "(ofcstats --version)")
    return lines


def _other_forms(streets: Path, n: int, repeats: int) -> list[str]:
    """The street file as 8 files of a directory, as a club's session files, and
    compressed."""
    size_mb = streets.stat().st_size / 1e6
    folder = _split(streets, n, 8)
    seconds, peak_kb = _loads(folder, OUT / "ingest-8-files.duckdb", n, repeats)
    again, _, skipped = _ingest(folder, OUT / "ingest-8-files.duckdb", fresh=False)
    assert skipped["skipped"] == 8, skipped
    lines = [_rate("street, 8 files (a dir)", n, size_mb, seconds,
                   f"peak RSS {peak_kb / 1024:,.0f} MB"),
             f"  the 8 files again (skipped) {again:.1f} s  whole process"]
    # A club's history: a file per session. The first 50,000 hands, 250 to a file.
    small = min(n, QUICK)
    sessions = _split(streets, small, small // 250)
    seconds, peak_kb = _loads(sessions, OUT / "ingest-session-files.duckdb", small, repeats)
    lines.append(_rate(f"{small // 250} files of 250 hands", small, _folder_mb(sessions),
                       seconds, f"peak RSS {peak_kb / 1024:,.0f} MB  (a club's sessions: "
                       f"the first {small:,} hands, a file each)"))
    # The same sessions under other ids (among the stored ones, in their sort order) into
    # a copy of the database the street file made: a club's new sessions, late on.
    renamed = _renamed(sessions)
    seconds, peak_kb = _loads(renamed, OUT / "ingest-club.duckdb", small, repeats,
                              copy_of=OUT / f"ingest-{streets.stem}.duckdb")
    lines.append(_rate(f"same, into {n:,}", small, _folder_mb(renamed), seconds,
                       f"peak RSS {peak_kb / 1024:,.0f} MB  (the same files, other ids, into "
                       "the street file's database)"))
    for suffix in (".gz", ".zst"):
        packed = _compressed(streets, suffix)
        runs = {}
        for _ in range(repeats):
            seconds, peak_kb, summary = _ingest(packed, OUT / f"ingest-{packed.name}.duckdb")
            assert summary["hands"] == n, summary
            runs.setdefault("ingest", []).append((seconds, peak_kb))
            runs.setdefault("inflate", []).append(_parse_only(_DECOMPRESS, packed))
            runs.setdefault("floor", []).append(_parse_only(_INFLATE, packed))
        seconds, peak_kb = _median(runs["ingest"])
        inflate, _ = _median(runs["inflate"])
        floor, _ = _median(runs["floor"])
        lines.append(_rate(f"street{suffix}", n, size_mb, seconds,
                           f"({packed.stat().st_size / 1e6:,.0f} MB on disk; its lines "
                           f"alone {inflate:.1f} s, the decompressor alone {floor:.1f} s)  "
                           f"peak RSS {peak_kb / 1024:,.0f} MB"))
    return lines


if __name__ == "__main__":
    run(quick="--quick" in sys.argv)
