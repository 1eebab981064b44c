"""Reading the three log formats into the one canonical record."""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
import zstandard
from formatgen import chipzen_ready, final_rows, to_chipzen, to_csv, write_lines
from handgen import random_hand, write_jsonl
from polars.testing import assert_frame_equal

from ofcstats import formats, reading
from ofcstats.errors import HandError
from ofcstats.formats import jsonl
from ofcstats.formats.lines import KEPT_BYTES, MAX_LINE_BYTES, DamagedLine, LineBatch
from ofcstats.formats.nesting import MAX_DEPTH
from ofcstats.records import HandBatch

HAND_COLUMNS = ["hand_id", "session_id", "played_at", "variant", "ruleset", "point_value",
                "button", "n_seats", "line", "fingerprint"]


def pineapple_hands(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    hands = []
    for i in range(n):
        players = rng.choice([2, 3])
        fl = tuple(rng.random() < 0.2 for _ in range(players))
        hand = random_hand(rng, f"h{i}", "pineapple", players, fantasyland=fl)
        hand["session_id"] = "m1"
        hands.append(hand)
    return hands


def boards_hands(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    hands = []
    for i in range(n):
        variant = rng.choice(["ofc-classic", "chinese-13", "pineapple", "ofc-turbo"])
        players = rng.randint(2, 3 if variant == "pineapple" else 4)
        hand = final_rows(random_hand(rng, f"b{i}", variant, players))
        hand["session_id"] = f"s{i % 3}"
        hand.pop("button")  # the CSV has no button column
        for p in hand["players"]:
            p["reported_points"] = rng.randint(-20, 20)
        hands.append(hand)
    return hands


def read(path: Path, name: str | None = None) -> HandBatch:
    return reading.read_all([path], name)


def same_hands(a: HandBatch, b: HandBatch) -> None:
    assert a.rejects.is_empty(), a.rejects
    assert b.rejects.is_empty(), b.rejects
    assert_frame_equal(a.hands.select(HAND_COLUMNS), b.hands.select(HAND_COLUMNS))
    assert_frame_equal(a.seats, b.seats)
    assert_frame_equal(a.moves, b.moves)


def test_jsonl_and_chipzen_give_identical_rows_for_the_same_hands(tmp_path: Path) -> None:
    hands = pineapple_hands(60, seed=1)
    native = write_jsonl(tmp_path / "native.jsonl", [chipzen_ready(h) for h in hands])
    chipzen = write_lines(tmp_path / "chipzen.jsonl", [to_chipzen(h) for h in hands])
    assert formats.detect(chipzen) == "chipzen"
    a, b = read(native), read(chipzen)
    assert a.hands.height == 60
    assert a.moves.get_column("moves").list.len().sum() == sum(
        17 if not p.get("fantasyland") else 14 for h in hands for p in h["players"])
    same_hands(a, b)


def test_jsonl_and_csv_give_identical_rows_for_the_same_final_boards(tmp_path: Path) -> None:
    hands = boards_hands(40, seed=2)
    native = write_jsonl(tmp_path / "boards.jsonl", hands)
    table = tmp_path / "boards.csv"
    table.write_text(to_csv(hands), encoding="utf-8")
    assert formats.detect(table) == "boards-csv"
    a, b = read(native), read(table)
    b = HandBatch(hands=b.hands.with_columns(line=a.hands.get_column("line")), seats=b.seats,
                  moves=b.moves)
    same_hands(a, b)
    assert a.moves.is_empty()


def test_csv_rows_of_one_hand_split_across_batches_stay_one_hand(tmp_path: Path) -> None:
    hands = boards_hands(200, seed=3)
    table = tmp_path / "boards.csv"
    table.write_text(to_csv(hands, separator=";"), encoding="utf-8")
    pieces = list(reading.read(table, batch_bytes=700))
    assert len(pieces) > 10
    merged = HandBatch.concat(pieces)
    assert merged.rejects.is_empty()
    assert merged.hands.get_column("hand_id").to_list() == [h["hand_id"] for h in hands]
    assert merged.hands.get_column("n_seats").to_list() == [len(h["players"]) for h in hands]


def test_csv_without_a_variant_column_is_ofc_classic(tmp_path: Path) -> None:
    table = tmp_path / "typed.csv"
    table.write_text("hand_id,seat,player,top,middle,bottom\n"
                     "x1,1,ann,Ah Kc 3d,Qs Qd 9c 8c 2h,7c 7d 7h 7s 4c\n"
                     "x1,2,bob,Kd Jc 2s,Js Jd Tc 6h 5d,3h 5h 8h Th Kh\n", encoding="utf-8")
    batch = read(table)
    assert batch.hands.get_column("variant").to_list() == ["ofc-classic"]
    assert batch.seats.get_column("player").to_list() == ["ann", "bob"]


def test_a_csv_row_with_too_many_fields_is_rejected_alone(tmp_path: Path) -> None:
    table = tmp_path / "typed.csv"
    table.write_text("hand_id,seat,player,top,middle,bottom\n"
                     "x1,1,ann,Ah Kc 3d,Qs Qd 9c 8c 2h,7c 7d 7h 7s 4c\n"
                     "x1,2,bob,Kd Jc 2s,Js Jd Tc 6h 5d,3h 5h 8h Th Kh\n"
                     "x2,1,ann,Ah Kc 3d,Qs Qd 9c 8c 2h,7c 7d 7h 7s 4c,oops\n", encoding="utf-8")
    batch = read(table)
    assert batch.hands.get_column("hand_id").to_list() == ["x1"]
    assert batch.rejects.select("line", "reason").row(0) == (
        4, "a row has 6 fields (hand_id, seat, player, top, middle, bottom); this one has "
           "another number")


def test_compressed_files_read_like_plain_ones(tmp_path: Path) -> None:
    hands = pineapple_hands(20, seed=4)
    plain = write_jsonl(tmp_path / "a.jsonl", hands)
    data = plain.read_bytes()
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress(data))
    zst = tmp_path / "a.jsonl.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(data))
    base = read(plain)
    for packed in (gz, zst):
        other = read(packed)
        assert_frame_equal(base.seats, other.seats)
        assert_frame_equal(base.moves, other.moves)


def test_format_comes_from_content_not_from_the_file_name(tmp_path: Path) -> None:
    hands = pineapple_hands(3, seed=5)
    odd = write_lines(tmp_path / "records.csv", [to_chipzen(h) for h in hands])
    assert formats.detect(odd) == "chipzen"
    assert read(odd).hands.height == 3


def test_named_format_overrides_detection(tmp_path: Path) -> None:
    hands = pineapple_hands(2, seed=6)
    path = write_lines(tmp_path / "x.jsonl", [to_chipzen(h) for h in hands])
    forced = read(path, "ofc-hand")
    assert forced.hands.is_empty()
    assert forced.rejects.get_column("reason").to_list()[0].startswith(
        'hand h0: format is missing: every line starts with "format": "ofc-hand/1"')


def test_unknown_top_level_keys_are_kept_as_extra(tmp_path: Path) -> None:
    hands = pineapple_hands(3, seed=7)
    hands[1]["table"] = "club7"
    hands[1]["notes"] = {"why": ["a", 1]}
    batch = read(write_jsonl(tmp_path / "x.jsonl", hands))
    extra = batch.hands.get_column("extra").to_list()
    assert extra[0] is None
    assert extra[2] is None
    assert json.loads(extra[1]) == {"table": "club7", "notes": {"why": ["a", 1]}}


def test_chipzen_reported_scoring_is_kept_in_extra(tmp_path: Path) -> None:
    record = to_chipzen(pineapple_hands(1, seed=8)[0])
    record["variant"]["seats"][0]["royalties"] = 7
    record["variant"]["seats"][0]["fouled"] = True
    batch = read(write_lines(tmp_path / "c.jsonl", [record]))
    kept = json.loads(batch.hands.get_column("extra")[0])["chipzen"]
    assert kept["seats"][0]["royalties"] == 7
    assert kept["seats"][0]["fouled"] is True
    assert "settlement" in kept


def test_chipzen_hand_id_comes_from_match_and_number_else_file_and_line(
        tmp_path: Path) -> None:
    hand = pineapple_hands(1, seed=9)[0]
    numbered = to_chipzen(hand, with_id=False) | {"match_id": "m42", "hand_number": 17}
    bare = to_chipzen(hand, with_id=False)
    bare.pop("match_id")
    batch = read(write_lines(tmp_path / "cz.jsonl", [numbered, bare]))
    assert batch.rejects.is_empty()
    assert batch.hands.get_column("hand_id").to_list() == ["m42-h17", "cz:2"]


def test_chipzen_unknown_schema_version_is_rejected_not_guessed(tmp_path: Path) -> None:
    record = to_chipzen(pineapple_hands(1, seed=10)[0])
    record["variant"]["schema_version"] = 2
    batch = read(write_lines(tmp_path / "c.jsonl", [record]))
    assert batch.hands.is_empty()
    assert batch.rejects.get_column("reason").to_list() == [
        "hand h0: schema_version 2 is not one this reader knows (1); the record is not read "
        "rather than guessed at"]


def test_chipzen_record_of_the_wrong_shape_says_which_field(tmp_path: Path) -> None:
    record = to_chipzen(pineapple_hands(1, seed=11)[0])
    record["variant"]["seats"][0]["seat"] = "zero"
    path = write_lines(tmp_path / "c.jsonl", [record])
    reasons = read(path, "chipzen").rejects.get_column("reason").to_list()
    assert reasons == ["does not fit the Chipzen OFC hand record v1: "
                       "Column(/variant/seats/[]/seat) changed from number to string"]


def test_an_empty_file_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n  \n")
    with pytest.raises(HandError, match="the file is empty"):
        formats.detect(empty)


@pytest.mark.parametrize("magic", [b"\x1f\x8b", b"(\xb5/\xfd"])
def test_a_compressed_file_broken_before_its_first_line_says_so_not_empty(
        tmp_path: Path, magic: bytes) -> None:
    """Not loaded as an empty file (nothing said): a reject for the whole file."""
    path = tmp_path / "log.jsonl.gz"
    path.write_bytes(magic + b"not really compressed\n")
    with pytest.raises(HandError, match=r"log.jsonl.gz: the compressed data breaks off "
                                        r"before its first line \("):
        formats.detect(path)
    assert read(path).rejects.get_column("line").to_list() == [None]


def test_a_binary_file_is_not_a_hand_log(tmp_path: Path) -> None:
    binary = tmp_path / "photo.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(HandError, match="a binary file, not a hand log"):
        formats.detect(binary)
    long = tmp_path / "zeros.jsonl"  # (no newline in its first megabyte)
    long.write_bytes(b"\x89PNG" + bytes(3 * MAX_LINE_BYTES))
    with pytest.raises(HandError, match="a binary file, not a hand log"):
        formats.detect(long)


def test_a_truncated_last_line_is_rejected_and_the_rest_loads(tmp_path: Path) -> None:
    hands = pineapple_hands(5, seed=12)
    path = write_jsonl(tmp_path / "cut.jsonl", hands)
    path.write_bytes(path.read_bytes()[:-200])
    batch = read(path)
    assert batch.hands.height == 4
    line, reason = batch.rejects.select("line", "reason").row(0)
    assert line == 5
    assert reason.startswith("not valid JSON: ")
    assert reason.endswith("; the line looks cut short")


def test_non_utf8_line_is_rejected_and_the_rest_loads(tmp_path: Path) -> None:
    hands = pineapple_hands(3, seed=13)
    path = write_jsonl(tmp_path / "latin1.jsonl", hands)
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"p1"', b'"J\xf6rg"')
    path.write_bytes(b"\n".join(lines))
    batch = read(path)
    assert batch.hands.get_column("hand_id").to_list() == ["h0", "h2"]
    assert batch.rejects.select("line", "reason").row(0) == (2, "line is not UTF-8 text")
    assert "J\\xf6rg" in batch.rejects.get_column("raw")[0]


def test_quotes_emoji_and_sql_in_ids_and_names_survive(tmp_path: Path) -> None:
    hand = pineapple_hands(1, seed=14)[0]
    hand["hand_id"] = 'h"1\'; DROP TABLE hands; --'
    hand["players"][0]["name"] = "Robert'); DROP TABLE seats;-- \"Bobby\" 🂡🃏"
    batch = read(write_jsonl(tmp_path / "odd.jsonl", [hand]))
    assert batch.hands.get_column("hand_id").to_list() == [hand["hand_id"]]
    assert batch.seats.get_column("player")[0] == hand["players"][0]["name"]


def test_a_byte_order_mark_and_crlf_line_ends_are_read(tmp_path: Path) -> None:
    hands = pineapple_hands(3, seed=15)
    path = tmp_path / "windows.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(json.dumps(h).encode() + b"\r\n"
                                                for h in hands))
    batch = read(path)
    assert batch.rejects.is_empty()
    assert batch.hands.height == 3


def test_slow_and_fast_readers_give_the_same_frames(tmp_path: Path) -> None:
    """A batch that Arrow cannot read whole is read in pieces and line by line; the
    hands in it come out as if nothing had happened."""
    hands = pineapple_hands(80, seed=16) + [final_rows(h) for h in boards_hands(20, seed=17)]
    clean = write_jsonl(tmp_path / "clean.jsonl", hands)
    dirty_hands = [dict(h) for h in hands]
    dirty_hands[7] = dict(dirty_hands[7], hand_id=12345)  # an integer id: only DuckDB reads it
    dirty = write_jsonl(tmp_path / "dirty.jsonl", dirty_hands)
    a, b = read(clean), read(dirty)
    assert b.rejects.is_empty()
    assert b.hands.get_column("hand_id")[7] == "12345"
    keep = pl.Series([i != 7 for i in range(100)])
    a, b = a.select(keep), b.select(keep)
    assert_frame_equal(a.hands.select(HAND_COLUMNS), b.hands.select(HAND_COLUMNS))
    assert_frame_equal(a.seats, b.seats)
    assert_frame_equal(a.moves, b.moves)



def test_a_boards_csv_line_with_a_bare_carriage_return_is_a_reject(tmp_path: Path) -> None:
    path = tmp_path / "boards.csv"
    path.write_bytes(b"hand_id,seat,player,top,middle,bottom\n"
                     b"b1,1,ann,Ah Kd 2c,Qs Qd 9c 8c 2h,7c 7d 7h 7s 4c\n"
                     b"b1,2,bob,Kh Jc 2s,Js Jd Tc 6h 5d,3h 5h 8h Th 9h\n"
                     b"b2,1,a\rnn,Ah Kd 2c,Qs Qd 9c 8c 2h,7c 7d 7h 7s 4c\n"
                     b"b3,1,too few fields\n")  # read line by line from here
    batch = reading.read_all([path])
    assert batch.hands.get_column("hand_id").to_list() == ["b1"]
    assert sorted(batch.rejects.get_column("line").to_list()) == [4, 5]


def test_formats_know_nothing_of_validation_and_each_is_registered_once() -> None:
    # In a fresh process: loading every format leaves the validation stage unloaded.
    probe = ("import sys, ofcstats.formats as f; "
             "print(sorted(f.FORMATS), 'ofcstats.validate' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["['boards-csv',", "'chipzen',", "'ofc-hand']", "False"]
    assert formats.FORMATS["ofc-hand"] is jsonl
    assert formats.format_module("chipzen").STANDALONE_BATCHES
    assert not formats.format_module("boards-csv").STANDALONE_BATCHES


NOT_OBJECTS = ["null", "true", "5", '"x"', "[1]", "  null", "[]"]


@pytest.mark.parametrize("name", ["ofc-hand", "chipzen"])
def test_a_line_that_is_not_an_object_is_a_reject_not_a_crash(tmp_path: Path, name: str
                                                              ) -> None:
    # Arrow's JSON reader crashes the whole process on a line of `null` (pyarrow 26):
    # a child process, so that a crash is a failure here and not the end of the tests.
    hand = random_hand(random.Random(3), "h1")
    record = to_chipzen(chipzen_ready(hand)) if name == "chipzen" else hand
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join([json.dumps(record), *NOT_OBJECTS, json.dumps(record)]) + "\n")
    db = tmp_path / "x.duckdb"
    done = subprocess.run([sys.executable, "-m", "ofcstats", "ingest", str(log), "--db", str(db),
                           "--json", "--quiet"], capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr  # 1: some lines rejected
    summary = json.loads(done.stdout)
    assert summary["hands"] == 1
    assert summary["rejected"] == len(NOT_OBJECTS)
    reasons = [reject["reason"] for reject in summary["first_rejects"]]
    assert [reject["line"] for reject in summary["first_rejects"]] == list(
        range(2, 2 + len(NOT_OBJECTS)))
    assert all("JSON object" in reason for reason in reasons), reasons


def test_arrow_never_sees_a_line_that_is_not_an_object() -> None:
    assert jsonl._objects_only(b'{"a": 1}\n\n  {"b": 2}\n \t\n')
    for text in NOT_OBJECTS:
        assert not jsonl._objects_only(f'{{"a": 1}}\n{text}\n'.encode())
        with pytest.raises(pa.ArrowInvalid):
            jsonl.read_arrow(f"{text}\n".encode(), jsonl._PARSE, 1)


def test_a_file_is_read_in_batches_of_whole_lines_to_its_end_even_as_it_grows(
        tmp_path: Path) -> None:
    """Each batch ends at a line's end whatever the batch size; a line cut by a batch
    boundary starts the next batch; lines appended while the file is read are read
    too (what the file holds when its end is reached is what is loaded and hashed)."""
    from ofcstats.formats.lines import read_line_batches  # noqa: PLC0415

    path = tmp_path / "growing.jsonl"
    first = [f'{{"n": {i}, "pad": "{"x" * (i % 37)}"}}' for i in range(200)]
    path.write_text("\ufeff" + "\n".join(first) + "\n", encoding="utf-8")
    later = [f'{{"n": {i}}}' for i in range(200, 260)]
    seen: list[str] = []
    numbers: list[int] = []
    for index, batch in enumerate(read_line_batches(path, batch_bytes=700)):
        assert batch.data.endswith(b"\n")
        numbers.append(batch.first_line)
        seen += batch.texts()
        if index == 0:
            with path.open("a", encoding="utf-8") as f:
                f.write("\n".join(later) + "\n")
    assert seen == first + later
    assert numbers[0] == 1
    assert len(numbers) > 10


def _break(batch: LineBatch) -> str:
    """Why a file's last batch says its compressed data broke off: the break between two
    lines, or the line it cuts short."""
    return batch.problem or " ".join(x.reason for x in batch.long_lines
                                     if isinstance(x, DamagedLine))


def test_a_zstd_file_cut_short_is_told_apart_from_a_whole_one(tmp_path: Path) -> None:
    """zstandard's own reader ends quietly inside a frame cut short: the break is told
    here, as with gzip, every whole line before it read, and a file of several frames
    (files put together with ``cat``) reads whole; bytes after whole frames that are not a
    frame are a break after those frames' lines."""
    from ofcstats.formats.lines import read_line_batches  # noqa: PLC0415

    lines = [f'{{"n": {i}, "pad": "{"y" * (i % 97)}"}}' for i in range(60_000)]
    halves = [("\n".join(part) + "\n").encode() for part in (lines[:30_000], lines[30_000:])]
    frames = [zstandard.ZstdCompressor().compress(half) for half in halves]
    whole = tmp_path / "whole.jsonl.zst"
    whole.write_bytes(b"".join(frames))
    batches = list(read_line_batches(whole, batch_bytes=1 << 20))
    assert [line for batch in batches for line in batch.texts()] == lines
    assert not any(batch.problem for batch in batches)
    for name, content in (
            ("cut", frames[0] + frames[1][: len(frames[1]) // 2]),
            ("junk", frames[0] + b"\0\0\0\0 not a frame"),
            ("cut_first", frames[0][:-9])):
        path = tmp_path / f"{name}.jsonl.zst"
        path.write_bytes(content)
        batches = list(read_line_batches(path, batch_bytes=1 << 20))
        assert "compressed data breaks off" in _break(batches[-1]), name
        seen = [line for batch in batches for line in batch.texts() if line]
        assert seen == _zstd_recovered(content).decode().split("\n")[:-1], name


def _zstd_recovered(data: bytes) -> bytes:
    """What zstandard's decompressor gives of ``data``, frame after frame, up to a break."""
    out = b""
    while data:
        frame = zstandard.ZstdDecompressor().decompressobj()
        try:
            out += frame.decompress(data)
        except zstandard.ZstdError:
            break
        if not frame.eof:
            break
        data = frame.unused_data
    return out


def test_a_gzip_file_cut_short_keeps_every_whole_line_before_the_break(
        tmp_path: Path) -> None:
    """Every whole line zlib recovers from the cut data is read (none of the megabyte the
    break falls in is lost), and the line the break cuts is the last batch's reject."""
    from ofcstats.formats.lines import read_line_batches  # noqa: PLC0415

    lines = [f'{{"n": {i}, "pad": "{"y" * (i % 97)}"}}' for i in range(60_000)]
    text = ("\n".join(lines) + "\n").encode()
    packed = gzip.compress(text)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(packed[: len(packed) * 3 // 4])
    batches = list(read_line_batches(path, batch_bytes=8 << 20))
    assert "compressed data breaks off in this line" in _break(batches[-1])
    seen = [line for batch in batches for line in batch.texts() if line]
    recovered = zlib.decompressobj(31).decompress(path.read_bytes())
    assert seen == recovered.decode().split("\n")[:-1]
    cut = batches[-1].long_lines[-1]
    assert cut.line == len(seen) + 1
    assert recovered.decode().split("\n")[-1].startswith(cut.raw), "what was read of it"


def _log_of(name: str, hands: list[dict], tmp_path: Path, odd: list[tuple[int, bytes]],
            suffix: str = "") -> Path:
    """``hands`` written in format ``name``, with line ``odd[i][1]`` put before hand
    ``odd[i][0]`` (the CSV: before that hand's first row, counting the header as a hand's
    place 0); compressed when ``suffix`` is ``.gz`` or ``.zst``."""
    if name == "boards-csv":
        rows = to_csv(hands).encode().splitlines()
        blocks = [[rows[0]]] + [[row for row in rows[1:] if row.startswith(f"{h['hand_id']},"
                                                                           .encode())]
                                for h in hands]
    else:
        records = [to_chipzen(h) for h in hands] if name == "chipzen" else hands
        blocks = [[]] + [[json.dumps(r).encode()] for r in records]
    for at, line in sorted(odd, reverse=True):
        blocks.insert(at, [line])
    text = b"".join(line + b"\n" for block in blocks for line in block)
    if suffix == ".gz":
        text = gzip.compress(text)
    elif suffix == ".zst":
        text = zstandard.ZstdCompressor().compress(text)
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / f"log.{'csv' if name == 'boards-csv' else 'jsonl'}{suffix}"
    path.write_bytes(text)
    return path


def _hands_of(name: str) -> list[dict]:
    return boards_hands(6, seed=31) if name == "boards-csv" else pineapple_hands(6, seed=31)


LONG = b'{"pad": "' + b"x" * MAX_LINE_BYTES + b'"}'  # one line longer than a line may be


@pytest.mark.parametrize("suffix", ["", ".gz", ".zst"])
@pytest.mark.parametrize("name", ["ofc-hand", "chipzen", "boards-csv"])
def test_a_line_longer_than_max_line_bytes_is_a_reject_and_the_rest_loads(
        tmp_path: Path, name: str, suffix: str) -> None:
    """First or in the middle: the line is rejected with its length, its start kept as its
    raw text, the lines keep their numbers, and format detection looks past it."""
    hands = _hands_of(name)
    path = _log_of(name, hands, tmp_path, [(0, LONG), (4, LONG)], suffix)
    lines = _log_of(name, hands, tmp_path / "plain", [(0, LONG), (4, LONG)]).read_bytes(
        ).split(b"\n")
    assert formats.detect(path) == name
    batch = read(path)
    # Every hand, at its true line.
    assert dict(batch.hands.select("hand_id", "line").iter_rows()) == {
        h["hand_id"]: next(i + 1 for i, line in enumerate(lines) if h["hand_id"].encode()
                           in line) for h in hands}
    rejects = batch.rejects.sort("line")
    assert rejects.get_column("line").to_list() == [1, lines.index(LONG, 1) + 1]
    length = len(LONG)
    assert rejects.get_column("reason").to_list() == [
        f"the line is {length:,} bytes long, more than the {MAX_LINE_BYTES:,} a line may "
        f"have: it was not read (its first {KEPT_BYTES:,} bytes are kept as its raw text)"] * 2
    assert rejects.get_column("raw").to_list() == [LONG[:KEPT_BYTES].decode()] * 2


def test_a_line_of_max_line_bytes_is_read(tmp_path: Path) -> None:
    hand = pineapple_hands(1, seed=32)[0]
    short = len(json.dumps({**hand, "pad": ""}))
    hand["pad"] = "x" * (MAX_LINE_BYTES - short)
    path = write_jsonl(tmp_path / "wide.jsonl", [hand, *pineapple_hands(2, seed=33)[1:]])
    assert len(path.read_bytes().split(b"\n")[0]) == MAX_LINE_BYTES
    batch = read(path)
    assert batch.rejects.is_empty(), batch.rejects
    assert batch.hands.get_column("hand_id").to_list() == ["h0", "h1"]


def test_a_long_line_is_passed_over_whatever_the_batch_size(tmp_path: Path) -> None:
    """Held over batch after batch, cut inside a batch, at the end without a newline: the
    lines around it come whole and numbered, the long line stands as a blank line of the
    batch that lists it."""
    from ofcstats.formats.lines import read_line_batches  # noqa: PLC0415

    short = [f'{{"n": {i}}}'.encode() for i in range(40)]
    long = [b"a" * (MAX_LINE_BYTES + 1), b"b" * (3 * MAX_LINE_BYTES), b"c" * (MAX_LINE_BYTES + 7)]
    lines = [*short[:10], long[0], *short[10:30], long[1], *short[30:], long[2]]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines))  # (no newline after the last)
    for size in (1000, MAX_LINE_BYTES // 2, 2 * MAX_LINE_BYTES, 16 << 20):
        batches = list(read_line_batches(path, batch_bytes=size))
        texts = [text for batch in batches for text in batch.texts()]
        assert texts == [("" if len(x) > MAX_LINE_BYTES else x.decode()) for x in lines], size
        found = [(x.line, x.length, x.start) for b in batches for x in b.long_lines]
        assert found == [(11, len(long[0]), b"a" * KEPT_BYTES),
                         (32, len(long[1]), b"b" * KEPT_BYTES),
                         (43, len(long[2]), b"c" * KEPT_BYTES)], size
        for batch in batches:
            assert all(batch.line(x.line - batch.first_line) == "" for x in batch.long_lines)


@pytest.mark.parametrize("name", ["ofc-hand", "chipzen"])
def test_a_file_of_only_long_lines_cannot_tell_its_format_but_named_rejects_each(
        tmp_path: Path, name: str) -> None:
    path = tmp_path / "long.jsonl"
    path.write_bytes(LONG + b"\n" + LONG + b"\n")
    with pytest.raises(HandError, match=r"cannot tell the format: its first lines are all "
                       r"longer than the 1,048,576 bytes a line may have; name it with "
                       r"--input-format"):
        formats.detect(path)
    assert read(path, name).rejects.get_column("line").to_list() == [1, 2]


def _deep(depth: int) -> bytes:
    """An object nested ``depth`` deep in all (itself counted), under an unknown key."""
    return (b'{"format": "ofc-hand/1", "deep": ' + b"[" * (depth - 1) + b"]" * (depth - 1)
            + b"}")


@pytest.mark.parametrize("name", ["ofc-hand", "chipzen"])
def test_a_line_nested_deeper_than_max_depth_is_a_reject_and_the_rest_loads(
        tmp_path: Path, name: str) -> None:
    """100,000 levels first and in the middle: Arrow's reader would crash the process on
    them (so a child process loads the file); each is one reject naming its line, and
    the file's other hands load."""
    hands = _hands_of(name)
    path = _log_of(name, hands, tmp_path, [(0, _deep(100_000)), (3, _deep(MAX_DEPTH + 1))])
    done = subprocess.run([sys.executable, "-m", "ofcstats", "ingest", str(path), "--db",
                           str(tmp_path / "x.duckdb")], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 1, done.stderr  # 1: some lines rejected
    assert done.stdout.startswith(f"1 file: {len(hands)} hands loaded, 0 duplicates skipped, "
                                  "2 rejected"), done.stdout
    # One line per reject, naming the file and the line.
    assert done.stderr.splitlines() == [
        f"{path}:1: JSON nested 100,000 levels deep, more than the {MAX_DEPTH} a line may "
        "have: it was not read",
        f"{path}:4: JSON nested {MAX_DEPTH + 1} levels deep, more than the {MAX_DEPTH} a line "
        "may have: it was not read"]


def test_a_line_nested_max_depth_deep_is_read(tmp_path: Path) -> None:
    hand = pineapple_hands(1, seed=34)[0]
    text = json.dumps(hand).encode()
    nested_line = text[:-1] + b', "deep": ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"
    path = tmp_path / "deep.jsonl"
    path.write_bytes(nested_line + b"\n")
    batch = read(path)
    assert batch.rejects.is_empty(), batch.rejects
    assert batch.hands.height == 1


def test_max_depth_counts_brackets_outside_strings_only() -> None:
    from ofcstats.formats.nesting import depths, too_deep  # noqa: PLC0415

    lines = [b'{"a": "[[[{{{", "b": [{"c": [1]}]}', b'{"a": "\\"[[[", "b": "\\\\"}',
             b'{"a": "\\\\\\"{{{{"}', b"", b"[]", b'{"a": "}}}}}}", "b": [[[1]]]}',
             b"[" * 300 + b'"' + b"]" * 300, b'"' + b"[" * 300 + b'"']
    data = b"".join(line + b"\n" for line in lines)
    starts = np.concatenate([[0], np.cumsum([len(line) + 1 for line in lines])])
    assert depths(data, starts).tolist() == [4, 1, 1, 0, 1, 4, 300, 0]
    deep, depth = too_deep(data, starts)
    assert (deep.tolist(), depth.tolist()) == ([6], [300])
