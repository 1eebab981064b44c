"""Every reader under hostile input: random bytes, truncated lines, mutated hands, lines
nested too deep and lines too long, mixed with good ones. No exception escapes
:func:`ofcstats.reading.read_all`, and every good hand loads, at its true line."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from formatgen import to_chipzen, to_csv
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_formats import boards_hands, pineapple_hands

from ofcstats import reading
from ofcstats.formats.lines import MAX_LINE_BYTES
from ofcstats.formats.nesting import MAX_DEPTH


@dataclass(frozen=True)
class Pool:
    """Good hands (each a list of lines) and other hands to break, in one format."""

    name: str
    header: bytes
    good: list[tuple[str, list[bytes]]]  # (hand id, its lines)
    bad: list[list[bytes]]


def _renamed(hands: list[dict], prefix: str) -> list[dict]:
    return [{**h, "hand_id": f"{prefix}{i:03}"} for i, h in enumerate(hands)]


def _jsonl(name: str, encode: Callable[[dict], dict]) -> Pool:
    good = _renamed(pineapple_hands(8, seed=21), "good-hand-")
    bad = _renamed(pineapple_hands(8, seed=22), "zz-")
    return Pool(name, b"", [(h["hand_id"], [json.dumps(encode(h)).encode()]) for h in good],
                [[json.dumps(encode(h)).encode()] for h in bad])


def _csv() -> Pool:
    def rows(hand: dict) -> list[bytes]:
        return [r.encode() for r in to_csv([hand]).splitlines()[1:]]
    good = _renamed(boards_hands(8, seed=23), "good-hand-")
    bad = _renamed(boards_hands(8, seed=24), "zz-")
    header = to_csv([]).splitlines()[0].encode()
    return Pool("boards-csv", header, [(h["hand_id"], rows(h)) for h in good],
                [rows(h) for h in bad])


POOLS = {"ofc-hand": _jsonl("ofc-hand", lambda h: h),
         "chipzen": _jsonl("chipzen", to_chipzen),
         "boards-csv": _csv()}

COMPRESSED = (b"\x1f\x8b", b"(\xb5/\xfd")  # the gzip and zstd magic numbers
_KIND = st.sampled_from(["good", "bytes", "truncated", "mutated", "deep", "long"])
# What is written between the good hands: a kind, which hand, and the noise to use.
PIECES = st.lists(st.tuples(_KIND, st.integers(0, 7), st.binary(max_size=60),
                            st.integers(0, 10_000)), max_size=14)


def _broken(lines: list[bytes], noise: bytes, at: int, kind: str) -> list[bytes]:
    """One line of ``lines`` cut short, or with bytes of ``noise`` written over it."""
    index = at % len(lines)
    line = lines[index]
    if kind == "truncated":
        line = line[:at % max(len(line), 1)]
    else:
        chunk = bytearray(line)
        for offset, byte in enumerate(noise[:4]):
            chunk[(at + 97 * offset) % len(chunk)] = byte
        line = bytes(chunk)
    return [*lines[:index], line, *lines[index + 1:]]


def _deep(extra: int) -> bytes:
    """A line nested deeper than a line may be (the readers never see it)."""
    depth = MAX_DEPTH + 1 + extra
    return b'{"hand_id": "zz-deep", "x": ' + b"[" * depth + b"]" * depth + b"}"


def _long(noise: bytes) -> bytes:
    """A line longer than a line may be (held by no reader)."""
    return b'{"hand_id": "zz-long", "x": "' + noise.replace(b"\n", b"") + b"x" * MAX_LINE_BYTES


def _file(pool: Pool, pieces: list[tuple[str, int, bytes, int]]
          ) -> tuple[bytes, dict[str, int], list[bytes]]:
    """The file's bytes, the line each good hand starts on, and the broken text."""
    out = [pool.header + b"\n"] if pool.header else []
    line_no = len(out) + 1
    starts: dict[str, int] = {}
    broken: list[bytes] = []
    for kind, index, noise, at in pieces:
        if kind == "good":
            hand_id, lines = pool.good[index]
            if hand_id in starts:
                continue
            starts[hand_id] = line_no
        elif kind == "bytes":
            lines = [noise]
            broken.append(noise)
        elif kind in ("deep", "long"):  # nested too deep to read, or too long a line
            lines = [_deep(at) if kind == "deep" else _long(noise)]
        else:
            lines = _broken(pool.bad[index], noise, at, kind)
            broken += lines
        text = b"".join(line + b"\n" for line in lines)
        out.append(text)
        line_no += text.count(b"\n")
    return b"".join(out), starts, broken


def _check(pool: Pool, pieces: list[tuple[str, int, bytes, int]], *, detect: bool) -> int:
    """Read the file; the number of good hands it had."""
    content, starts, broken = _file(pool, pieces)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.log"
        path.write_bytes(content)
        batch = reading.read_all([path], None if detect else pool.name)
    if detect or content.startswith(COMPRESSED):
        # Detection may refuse a file that starts with noise; one that starts as a
        # compressed file is read as one.
        return len(starts)
    loaded = dict(batch.hands.select("hand_id", "line").iter_rows())
    for hand_id, line in starts.items():
        if any(hand_id.encode() in text for text in broken):
            continue  # noise that happens to carry the id may claim it first
        assert loaded.get(hand_id) == line, (hand_id, line, batch.rejects.to_dicts())
    return len(starts)


@pytest.mark.parametrize("name", list(POOLS))
def test_good_hands_between_every_kind_of_noise_load(name: str) -> None:
    noise = b'\x00\xff{"hand_id": "zz-9", "players": [' + b"\x1b\"" + b",;\t"
    pieces = [("good", 0, b"", 0), ("bytes", 0, noise, 0), ("good", 1, b"", 0),
              ("truncated", 2, b"", 41), ("good", 2, b"", 0), ("mutated", 3, noise, 7),
              ("good", 3, b"", 0), ("bytes", 0, b"", 0), ("good", 4, b"", 0),
              ("deep", 0, b"", 20_000), ("good", 5, b"", 0), ("long", 0, noise, 0),
              ("good", 6, b"", 0)]
    assert _check(POOLS[name], pieces, detect=False) == 7


@pytest.mark.parametrize("magic", COMPRESSED)
@pytest.mark.parametrize("name", ["ofc-hand", "chipzen"])  # (a CSV starts with its header)
def test_a_file_that_only_looks_compressed_is_a_reject_not_a_crash(name: str,
                                                                  magic: bytes) -> None:
    """The zstd and gzip magic numbers followed by a log: the fuzz test's first find."""
    pieces = [("bytes", 0, magic, 0), ("good", 0, b"", 0)]
    content, _, _ = _file(POOLS[name], pieces)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.log"
        path.write_bytes(content)
        batch = reading.read_all([path], name)
    assert batch.hands.is_empty()
    assert batch.rejects.height == 1
    assert "compressed data breaks off" in batch.rejects.get_column("reason")[0]


@pytest.mark.parametrize("name", list(POOLS))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=PIECES)
def test_no_exception_escapes_a_reader_and_every_good_hand_loads(
        name: str, pieces: list[tuple[str, int, bytes, int]]) -> None:
    _check(POOLS[name], pieces, detect=False)


@pytest.mark.parametrize("name", list(POOLS))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=PIECES)
def test_no_exception_escapes_format_detection(
        name: str, pieces: list[tuple[str, int, bytes, int]]) -> None:
    _check(POOLS[name], pieces, detect=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(POOLS))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=PIECES)
def test_many_more_hostile_files_for_every_reader(
        name: str, pieces: list[tuple[str, int, bytes, int]]) -> None:
    _check(POOLS[name], pieces, detect=False)
