"""The compiled reader of ofc-hand/1 lines against Arrow's JSON reader, the yardstick.

A batch read with the compiled reader first (the lines it leaves going to Arrow's reader
and on) must give exactly the frames and rejects of the same batch read without it:
on the shipped logs, on random hands of every variant in both forms, and on hands
edited in every way a line can differ from the usual shape, or broken at random.
"""

from __future__ import annotations

import ast
import gzip
import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from handgen import random_hand
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from ofcstats import formats
from ofcstats.formats import jsonl, scan
from ofcstats.formats.lines import LineBatch
from ofcstats.formats.nesting import MAX_DEPTH
from ofcstats.records import RawBatch
from ofcstats.variants import Variant

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = int(os.environ.get("OFCSTATS_SCAN_EXAMPLES", "120"))  # more for a deeper search


def _parse(data: bytes, *, compiled: bool, monkeypatch: pytest.MonkeyPatch) -> RawBatch:
    with monkeypatch.context() as patch:
        patch.setattr(jsonl, "use_compiled", lambda size: compiled)
        return jsonl.parse_batch(LineBatch(first_line=1, data=data), "log.jsonl",
                                 formats.scratch())


def _same(data: bytes, monkeypatch: pytest.MonkeyPatch) -> RawBatch:
    """Parse both ways; assert they agree; return the compiled reader's result."""
    fast = _parse(data, compiled=True, monkeypatch=monkeypatch)
    slow = _parse(data, compiled=False, monkeypatch=monkeypatch)
    for name in ("hands", "seats", "cards", "rejects"):
        assert_frame_equal(getattr(fast, name), getattr(slow, name))
    return fast


def _left_to_arrow(data: bytes) -> np.ndarray:
    batch = LineBatch(first_line=1, data=data)
    _, left = jsonl.scan_lines(batch, jsonl.readable(batch), formats.scratch())
    return left


def _hands(seed: int, n: int = 40) -> list[dict[str, Any]]:
    """Hands of every variant, street form and final rows, fantasyland seats included."""
    rng = random.Random(seed)
    hands = []
    for i in range(n):
        variant = rng.choice(list(Variant))
        players = 4 if variant is Variant.CRISS_CROSS else rng.choice(
            range(2, min(variant.max_players, 4) + 1))
        fantasyland = () if variant.thirteen_card or variant is Variant.CRISS_CROSS else \
            tuple(rng.random() < 0.2 for _ in range(players))
        hand = random_hand(rng, f"h{i}", variant.value, players,
                           streets=rng.random() < 0.7, fantasyland=fantasyland)
        if variant is Variant.CRISS_CROSS:
            for seat, entry in enumerate(hand["players"]):
                entry["name"] = f"p{seat // 2}"
        if rng.random() < 0.5:
            hand.update(session_id=f"s{i % 3}", played_at=f"2026-11-0{1 + i % 9}T12:00:00Z",
                        point_value=rng.choice([1, 0.5, 2.25]), ruleset="american")
        for entry in hand["players"]:
            if rng.random() < 0.3:
                entry["reported_points"] = rng.choice([-6, 3.5, 0, 12])
        hands.append(hand)
    return hands


def _lines(hands: list[dict[str, Any]], **dumps: Any) -> bytes:
    return b"".join(json.dumps(h, **dumps).encode() + b"\n" for h in hands)


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "data/sample").glob("*.jsonl")))
def test_compiled_reader_reads_every_shipped_log_as_arrow_does(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = (ROOT / "data/sample" / name).read_bytes()
    raw = _same(data, monkeypatch)
    assert raw.hands.height > 0
    assert len(_left_to_arrow(data)) == 0  # every line was the compiled reader's


@pytest.mark.parametrize("dumps", [{}, {"separators": (",", ":")}, {"indent": None,
                                                                    "sort_keys": True}])
def test_compiled_reader_reads_random_hands_of_every_variant_as_arrow_does(
        dumps: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    data = _lines(_hands(seed=5), **dumps)
    raw = _same(data, monkeypatch)
    assert raw.hands.height == 40
    assert raw.rejects.height == 0
    assert len(_left_to_arrow(data)) == 0


def test_compiled_reader_leaves_the_unusual_lines_and_only_those() -> None:
    good = json.dumps(_hands(seed=6, n=1)[0])
    unusual = [
        good.replace('"hand_id": "h0"', '"hand_id": "h\\u0030"'),  # an escape
        good.replace('"name": "p1"', '"name": "p1", "x": 1'),  # a seat key it does not know
        good.replace('"format"', '"variant": "pineapple", "format"'),  # a key twice
        good.replace('"seat": 1', '"seat": 1.0'),  # a fraction where a seat number is due
        good.replace('"seat": 1', '"seat": -0'),
        good.replace('"seat": 1', '"seat": "1"'),
        good.replace('"button": ', '"button": 1e0, "x": '),
        good + " x",  # something after the object
    ]
    data = "\n".join([good, *unusual, good]).encode() + b"\n"
    assert _left_to_arrow(data).tolist() == list(range(1, len(unusual) + 1))


# Edits: a value anywhere in the hand replaced, a key dropped or added, or raw JSON text
# put where a value was (numbers spelt unusually, escapes, literals, broken text).
RAW = ["1e400", "-1e400", "-0", "1E2", "2.50", "0.1", "01", "1.", "-", "123456789012345678901",
       '"a\\"b"', '"\\u0041h"', '"Jos\u00e9"', "tru", "nul", "[1,]", "{}", "[]", "[null]",
       '["Ah",]', '["10h"]', '["ah"]', '["AH"]', '["A\u2660"]', '[" Ah"]', "true", "false",
       "null", '"x"', "3", "-7", "2.5", '["Ah", "Kd"]', '{"dealt": []}', '[{}]', "[[]]",
       '"\t"']


@st.composite
def _edited(draw: st.DrawFn) -> bytes:
    hands = _hands(seed=draw(st.integers(0, 3)), n=6)
    out = []
    for original in hands:
        hand = original
        separators = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]))
        for _ in range(draw(st.integers(0, 3))):
            path = draw(st.sampled_from(list(_paths(hand))))
            raw = draw(st.sampled_from(RAW))
            how = draw(st.sampled_from(["replace", "drop", "add"]))
            hand = _set(hand, path, f"@@{RAW.index(raw)}@@", how)
        text = json.dumps(hand, separators=separators)
        for index, snippet in enumerate(RAW):
            text = text.replace(f'"@@{index}@@"', snippet)
        out.append(text.replace('"@@dup@@"', '"seat"').encode())
    if draw(st.booleans()):  # bytes written over one line, or a line cut short
        at = draw(st.integers(0, len(out) - 1))
        line = bytearray(out[at])
        for offset, byte in enumerate(draw(st.binary(min_size=1, max_size=3))):
            line[draw(st.integers(0, len(line) - 1)) if offset else 0] = byte
        out[at] = bytes(line).replace(b"\n", b" ")
    return b"\n".join(out) + b"\n"


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Any:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _set(value: Any, path: tuple[Any, ...], new: str, how: str) -> Any:
    if not path:
        return value if how != "replace" else new
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    if rest:
        copy[head] = _set(copy[head], rest, new, how)
    elif how == "replace":
        copy[head] = new
    elif how == "drop":
        del copy[head]
    elif isinstance(copy, dict):
        copy["@@dup@@" if "seat" in copy and "name" in copy else "unknown"] = new
    else:
        copy.append(new)
    return copy


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_edited())
def test_compiled_reader_and_arrow_agree_on_edited_and_broken_hands(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as patch:
        _same(data, patch)


def test_a_number_too_big_for_a_double_is_left_to_arrow(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    hand = _hands(seed=7, n=1)[0]
    hand["point_value"] = 1.5
    text = json.dumps(hand)
    data = (text + "\n" + text.replace("1.5", "1e400") + "\n").encode()
    assert _left_to_arrow(data).tolist() == [1]
    raw = _same(data, monkeypatch)
    assert raw.hands.height == 2


def test_a_line_nested_deeper_than_max_depth_is_the_same_reject_either_way(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled reader gives up on a key it reads past once 62 levels are open (a line
    so deep is left to the others), so it never reads a line deeper than
    :data:`MAX_DEPTH`: the check before the other readers rejects it, and a line just
    deeper than the compiled reader reads is read all the same."""
    text = json.dumps(_hands(seed=12, n=1)[0])

    def nested(depth: int) -> str:  # the hand nested ``depth`` deep in all
        return text[:-1] + ', "app": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"

    lines = [text, nested(63), nested(64), nested(MAX_DEPTH), nested(MAX_DEPTH + 1),
             nested(20_000), text]
    data = ("\n".join(lines) + "\n").encode()
    assert _left_to_arrow(data).tolist() == [2, 3, 4, 5]
    raw = _same(data, monkeypatch)
    assert raw.hands.get_column("line").to_list() == [1, 2, 3, 4, 7]
    assert raw.rejects.select("line", "reason").rows() == [
        (5, f"JSON nested {MAX_DEPTH + 1} levels deep, more than the {MAX_DEPTH} a line may "
            "have: it was not read"),
        (6, f"JSON nested 20,000 levels deep, more than the {MAX_DEPTH} a line may have: it "
            "was not read")]


def test_ingest_stores_the_same_with_or_without_the_compiled_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ofcstats.ingest import ingest  # noqa: PLC0415
    from ofcstats.store import Store  # noqa: PLC0415

    lines = [json.dumps(h) for h in _hands(seed=9, n=60)]
    lines[5] = lines[5].replace('"seat": 1', '"seat": 1.5', 1)  # read, then rejected
    lines[7] = "not json"
    lines[9] = lines[9][:80]  # cut short
    lines[11] = lines[11].replace('"format"', '"app": {"v": [1, "x"]}, "format"')  # extra
    lines[13] = lines[13].replace('"name": "p', '"name": "\\u00e9p', 1)  # an escape
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(lines) + "\n\n")
    stored = {}
    for compiled in (True, False):
        monkeypatch.setattr(jsonl, "use_compiled", lambda size, on=compiled: on)
        db = tmp_path / f"{compiled}.duckdb"
        summary = ingest([log], db)
        with Store(db, read_only=True) as store:
            stored[compiled] = (summary.hands, summary.rejected, [
                store.con.sql(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
                for table in ("hands", "seats", "seat_placements", "cards")
            ], store.con.sql("SELECT line, hand_id, reason FROM rejects ORDER BY ALL"
                             ).fetchall())
    assert stored[True] == stored[False]
    assert stored[True][0] == 57
    assert [line for line, _, _ in stored[True][3]] == [6, 8, 10]


_SIGNATURES = """
import sys
from pathlib import Path
from ofcstats import _validate_kernel as checks
from ofcstats.formats import _scan_kernel as reader, jsonl
from ofcstats.ingest import ingest
jsonl.compile_reader()
steps = [getattr(module, name) for module in (reader, checks) for name in dir(module)
         if hasattr(getattr(module, name), "signatures")]
before = {step.__name__: list(step.signatures) for step in steps}
jsonl.use_compiled = lambda size: True
summary = ingest([Path(p) for p in sys.argv[2:]], sys.argv[1])
assert summary.hands > 0 and summary.rejected > 0, summary.to_dict()
after = {step.__name__: list(step.signatures) for step in steps}
print({name: len(after[name]) - len(types) for name, types in before.items()})
"""


@pytest.mark.slow
def test_a_load_calls_the_compiled_steps_as_compiled_at_install(tmp_path: Path) -> None:
    """Numba compiles a step once per argument types, and a writable array is not of the
    type of a read-only one: whatever lent a load its memory (a plain file, a compressed
    one, a file with rejects), the steps get the types the install compiled them for, and
    no load waits half a minute for the compiler."""
    lines = [json.dumps(h) for h in _hands(seed=21, n=60)]
    lines[3] = lines[3].replace('"seat": 1', '"seat": 1.5', 1)
    lines[8] = "not json"
    plain = tmp_path / "log.jsonl"
    plain.write_text("\ufeff" + "\n".join(lines) + "\n")
    packed = tmp_path / "other.jsonl.gz"
    packed.write_bytes(gzip.compress("\n".join(lines).replace('"h', '"g').encode()))
    run = subprocess.run([sys.executable, "-c", _SIGNATURES, str(tmp_path / "db.duckdb"),
                          str(plain), str(packed)], capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stderr
    added = ast.literal_eval(run.stdout.strip().splitlines()[-1])
    assert set(added) >= {"scan_lines", "gather_spans", "card_columns", "card_rules",
                          "hand_columns", "fingerprint_texts"}
    assert added == dict.fromkeys(added, 0)


@pytest.mark.parametrize(("reader", "checks"), [(True, True), (True, False), (False, True),
                                                (False, False)])
def test_the_compiled_reader_waits_for_a_load_large_enough_to_pay_for_it(
        reader: bool, checks: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader and the checks' compiled twin count as compiled only together."""
    cached = reader and checks
    use_rules(monkeypatch, reader, checks)
    assert not jsonl.use_compiled(9)  # a small batch: never (nor counted)
    assert not jsonl.use_compiled(60)  # 60 bytes read in large batches: not yet
    assert jsonl.use_compiled(60) is cached  # 120: if compiled already
    assert jsonl.use_compiled(500) is cached
    assert jsonl.use_compiled(400)  # 1,020: compiled or not (it is compiled then)


@pytest.mark.parametrize("cached", [True, False])
def test_a_large_file_takes_the_compiled_reader_from_its_first_large_batch(
        cached: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files begun count with their size on disk: a small load never loads the compiled
    reader, a large one (files of a directory added up) takes it at once."""
    use_rules(monkeypatch, cached, cached)
    jsonl.expect(40)
    jsonl.expect(40)
    assert not jsonl.use_compiled(20)  # 80 bytes of files: too few
    jsonl.expect(30)
    assert jsonl.use_compiled(20) is cached  # 110: if compiled already
    assert jsonl.use_compiled(9) is False  # never a small batch


def use_rules(monkeypatch: pytest.MonkeyPatch, reader: bool, checks: bool) -> None:
    """A fresh count, small thresholds, and the reader and checks compiled or not."""
    class Use:
        lock = threading.Lock()
        read = 0
        expected = 0
        compiled: bool | None = None

    monkeypatch.setattr(jsonl, "_Use", Use)
    monkeypatch.setattr(scan, "compiled", lambda: reader)
    monkeypatch.setattr(jsonl, "_checks_compiled", lambda: checks)
    for name, value in (("SCAN_BYTES", 10), ("SCAN_LOAD", 100), ("COMPILE_AFTER", 1000)):
        monkeypatch.setattr(jsonl, name, value)
