"""Reading the three log formats into the one canonical record."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import zstandard
from formatgen import chipzen_ready, final_rows, to_chipzen, to_csv, write_lines
from handgen import random_hand, write_jsonl
from polars.testing import assert_frame_equal

from ofcstats import formats
from ofcstats.errors import HandError
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
    return formats.read_all([path], name)


def same_hands(a: HandBatch, b: HandBatch) -> None:
    assert a.rejects.is_empty(), a.rejects
    assert b.rejects.is_empty(), b.rejects
    assert_frame_equal(a.hands.select(HAND_COLUMNS), b.hands.select(HAND_COLUMNS))
    assert_frame_equal(a.seats, b.seats)
    assert_frame_equal(a.placements, b.placements)


def test_jsonl_and_chipzen_give_identical_rows_for_the_same_hands(tmp_path: Path) -> None:
    hands = pineapple_hands(60, seed=1)
    native = write_jsonl(tmp_path / "native.jsonl", [chipzen_ready(h) for h in hands])
    chipzen = write_lines(tmp_path / "chipzen.jsonl", [to_chipzen(h) for h in hands])
    assert formats.detect(chipzen) == "chipzen"
    a, b = read(native), read(chipzen)
    assert a.hands.height == 60
    assert a.placements.height == sum(17 if not p.get("fantasyland") else 14
                                      for h in hands for p in h["players"])
    same_hands(a, b)


def test_jsonl_and_csv_give_identical_rows_for_the_same_final_boards(tmp_path: Path) -> None:
    hands = boards_hands(40, seed=2)
    native = write_jsonl(tmp_path / "boards.jsonl", hands)
    table = tmp_path / "boards.csv"
    table.write_text(to_csv(hands), encoding="utf-8")
    assert formats.detect(table) == "boards-csv"
    a, b = read(native), read(table)
    b = HandBatch(hands=b.hands.with_columns(line=a.hands.get_column("line")), seats=b.seats,
                  placements=b.placements)
    same_hands(a, b)
    assert a.placements.is_empty()


def test_csv_rows_of_one_hand_split_across_batches_stay_one_hand(tmp_path: Path) -> None:
    hands = boards_hands(200, seed=3)
    table = tmp_path / "boards.csv"
    table.write_text(to_csv(hands, separator=";"), encoding="utf-8")
    pieces = list(formats.read(table, batch_bytes=700))
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
        assert_frame_equal(base.placements, other.placements)


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


def test_a_binary_file_is_not_a_hand_log(tmp_path: Path) -> None:
    binary = tmp_path / "photo.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(HandError, match="a binary file, not a hand log"):
        formats.detect(binary)


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
    assert_frame_equal(a.placements, b.placements)


def _odd_lines(seed: int) -> list[str]:
    """Hands written compactly and as Python writes JSON, and with every oddity the
    fast reader must hand over to the general one: strange cards, nulls, empty lists and
    street objects, repeated and unknown keys, wrong types, escapes, spaces."""
    rng = random.Random(seed)
    hands = pineapple_hands(30, seed) + [final_rows(h) for h in boards_hands(20, seed + 1)]
    lines: list[str] = []
    for i, hand in enumerate(hands):
        compact = json.dumps(hand, separators=(",", ":"))
        lines.append(compact if i % 2 else json.dumps(hand))
    base = json.dumps(hands[0], separators=(",", ":"))
    first_card = hands[0]["players"][0]["streets"][0]["dealt"][0]
    rows = json.dumps(hands[40], separators=(",", ":"))
    top = hands[40]["players"][0]["top"][0]
    swaps = [
        (base, f'"{first_card}"', '"10h"'), (base, f'"{first_card}"', '"Zz"'),
        (base, f'"{first_card}"', "5"), (base, f'"{first_card}"', "null"),
        (base, f'"{first_card}"', f'"{first_card.lower()}"'),
        (base, '"discard":', '"discard":null,"x":'), (base, '{"dealt":', '{},{"dealt":'),
        (base, '{"dealt":', '{"dealt":[],"dealt":'),
        (base, '"streets":', '"avatar":{"a":[1]},"streets":'),
        (base, '"format":', '"table":"t\\u00e9","format":'),
        (base, '"seat":1', '"seat":1.5'), (base, '"seat":1', '"seat":"1"'),
        (base, '"seat":1', '"seat":1.0'), (base, '"seat":1', '"seat":1e0'),
        (base, '"seat":1', '"seat":99999999999999999999'),
        (base, '"button":', '"button":true,"b":'), (base, '"name":"', '"name":"a\\"b'),
        (base, '"name":"', '"name":"\\u00e9'), (base, '"hand_id":"', '"hand_id":"x\\\\'),
        (base, '"hand_id":"h0"', '"hand_id":7'), (base, '"players":', '"players":null,"p":'),
        (base, '"players":[', '"players":[1,'), (base, '"streets":[', '"streets":[ '),
        (base, '"streets":[', '"top":["As"],"streets":['), (base, '"dealt":[', '"dealt" :['),
        (base, '"variant":"pineapple"', '"variant":null'),
        (base, '"format":"ofc-hand/1"', '"format":"ofc-hand/2"'),
        (rows, f'"{top}"', '"10h"'), (rows, '"top":[', '"top":null,"t":['),
        (rows, '"middle":[', '"middle":[],"m":['),
    ]
    odd = [line.replace(old, new, 1) for line, old, new in swaps]
    odd += [rows.replace('"top":[', '"top":"', 1).replace('"middle"', '"x","middle"', 1),
            base[:-5], "[1,2]", '"hand"', "{}", base + " ", "\t" + base]
    for line in odd:
        lines.insert(rng.randrange(len(lines) + 1), line)
    return lines


def test_fast_and_general_readers_agree_line_for_line() -> None:
    """Whatever the fast reader reads must come out exactly as the general reader would
    have it; whatever it cannot read, it hands over, so rejects and reasons are the same."""
    import duckdb  # noqa: PLC0415

    from ofcstats.formats import ofc_hand  # noqa: PLC0415
    from ofcstats.formats.lines import LineBatch  # noqa: PLC0415
    from ofcstats.validate import validate  # noqa: PLC0415

    for seed in (1, 2):
        lines = _odd_lines(seed)
        batch = LineBatch(first_line=1, data="".join(line + "\n" for line in lines).encode())
        con = duckdb.connect()
        fast = validate(ofc_hand.parse_batch(batch, "t.jsonl", con), con)
        general = validate(ofc_hand.parse_batch(batch, "t.jsonl", con, fast_reader=False), con)
        assert fast.hands.height > 40
        assert fast.rejects.height > 20
        assert_frame_equal(fast.hands, general.hands)
        assert_frame_equal(fast.seats, general.seats)
        assert_frame_equal(fast.placements, general.placements)
        assert_frame_equal(fast.rejects, general.rejects)


def test_the_fast_reader_takes_compact_and_spaced_lines_and_hands_over_the_rest() -> None:
    from ofcstats.formats import ofc_hand  # noqa: PLC0415
    from ofcstats.formats.lines import LineBatch  # noqa: PLC0415

    hand = pineapple_hands(1, seed=3)[0]
    lines = [json.dumps(hand, separators=(",", ":")), json.dumps(hand),
             json.dumps(hand, indent=None).replace('"dealt": [', '"dealt" : ['),
             json.dumps(dict(hand, table="t1"))]
    batch = LineBatch(first_line=1, data="".join(line + "\n" for line in lines).encode())
    frames, slow = ofc_hand._decoded(batch, np.arange(4))
    assert frames is not None
    assert frames[0].get_column("line").to_list() == [1, 2]
    assert slow.tolist() == [2, 3]


def test_the_scan_reads_compact_streets_and_fails_every_other_form() -> None:
    from ofcstats.formats.scan import scan_cards, scan_streets  # noqa: PLC0415

    good = [b'[{"dealt":["Ah","Kd","2c"],"top":["Ah"],"discard":["Kd"],"middle":["2c"]},'
            b'{"dealt":[],"top":[]}]',
            b'[{"dealt": ["Qs"], "bottom": ["Qs"]}, {"dealt": ["2d"], "top": ["2d"]}]',
            b"null", b"[]"]
    bad = [b"[{}]", b'[{"dealt":["Ah"],"dealt":["Kd"]}]', b'[{"dealt":["10h"]}]',
           b'[{"dealt" :["Ah"]}]', b'[{"deal":["Ah"]}]', b'[{"dxxxx":["Ah"]}]',
           b'[{"dealt":["A\\"h"]}]', b'"[]"', b'[{"top":["Qs"],"x":1}]', b'[{"top":null}]',
           b'[{"top":["Qs",null]}]', b'[["Qs"]]', b'{"dealt":["Ah"]}', b'[{"top":["Zz"]}]']
    scanned = scan_streets(good + bad)
    assert scanned.ok.tolist() == [True] * len(good) + [False] * len(bad)
    assert scanned.null.tolist() == [False, False, True, False] + [False] * len(bad)
    assert scanned.count.tolist()[:4] == [2, 2, 0, 0]
    assert [(int(v), int(s), int(k), int(p), int(c)) for v, s, k, p, c in zip(
        scanned.value, scanned.street, scanned.kind, scanned.pos, scanned.code, strict=True)] \
        == [(0, 1, 0, 0, 50), (0, 1, 0, 1, 45), (0, 1, 0, 2, 0), (0, 1, 1, 0, 50),
            (0, 1, 4, 0, 45), (0, 1, 2, 0, 0), (1, 1, 0, 0, 43), (1, 1, 3, 0, 43),
            (1, 2, 0, 0, 1), (1, 2, 1, 0, 1)]
    rows = scan_cards([b'["Ah","2c"]', b'["ah", "2C"]', b"[]", b"null", b'["Ah" ]',
                       b'["Xx"]', b'"Ah"'], 2)
    assert rows.ok.tolist() == [True, True, True, True, False, False, False]
    assert rows.code.tolist() == [50, 0, 50, 0]
    assert set(rows.kind.tolist()) == {2}
