"""Damaged files lose only what is damaged: a line that is not text is that line's
reject, a file is binary only when most of it is, and a compressed file cut short loads
every whole line its decompressor recovers and rejects the line it cuts."""

from __future__ import annotations

import gzip
import random
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import zstandard
from formatgen import to_csv
from handgen import random_hand, write_jsonl
from typer.testing import CliRunner

from ofcstats import formats
from ofcstats.cli import app
from ofcstats.errors import HandError
from ofcstats.ingest import ingest
from ofcstats.store import Store

runner = CliRunner()


def _log(path: Path, n: int, seed: int = 5) -> Path:
    rng = random.Random(seed)
    return write_jsonl(path, [random_hand(rng, f"h{i}", "pineapple", rng.choice([2, 3]))
                              for i in range(n)])


def _damage(path: Path, line: int, byte: bytes, column: int = 30) -> bytes:
    """Line ``line`` (from 1) of ``path`` with ``byte`` written at ``column`` (from 1);
    the line as it was."""
    lines = path.read_bytes().split(b"\n")
    was = lines[line - 1]
    lines[line - 1] = was[:column - 1] + byte + was[column:]
    path.write_bytes(b"\n".join(lines))
    return was


def _stored(db: Path) -> tuple[int, list[tuple[int | None, str, str | None]]]:
    with Store(db) as store:
        rejects = store.con.sql("SELECT line, reason, raw FROM rejects ORDER BY line").fetchall()
        return store.count("hands"), rejects


def test_a_nul_byte_in_line_11_of_21_rejects_line_11_and_the_other_20_load(
        tmp_path: Path) -> None:
    path = _log(tmp_path / "club.jsonl", 21)
    _damage(path, 11, b"\x00", column=31)
    db = tmp_path / "x.duckdb"
    result = runner.invoke(app, ["ingest", str(path), "--db", str(db)])
    assert result.exit_code == 1, result.output
    assert (f"{path}:11: a NUL byte at column 31: the line is not text and was not read"
            in result.stderr)
    hands, rejects = _stored(db)
    assert hands == 20
    [(line, _, raw)] = rejects
    assert line == 11
    assert raw is not None
    assert "\\x00" in raw, "the NUL byte shown as an escape in the stored raw text"
    assert "\x00" not in raw


@pytest.mark.parametrize("byte", [b"\x01", b"\x1b", b"\x0c", b"\x08"])
def test_a_control_character_rejects_its_line_only(tmp_path: Path, byte: bytes) -> None:
    path = _log(tmp_path / "club.jsonl", 21)
    _damage(path, 4, byte, column=12)
    summary = ingest([path], tmp_path / "x.duckdb")
    assert (summary.hands, summary.rejected) == (20, 1)
    assert summary.first_rejects[0].line == 4
    assert summary.first_rejects[0].reason == (
        f"a control character (0x{byte[0]:02x}) at column 12: the line is not text and was "
        "not read")


def test_tabs_and_carriage_returns_are_text(tmp_path: Path) -> None:
    path = _log(tmp_path / "club.jsonl", 12)
    text = path.read_bytes().replace(b'", "', b'",\t"').replace(b"\n", b"\r\n")
    path.write_bytes(text)
    summary = ingest([path], tmp_path / "x.duckdb")
    assert (summary.hands, summary.rejected) == (12, 0)


def test_a_damaged_first_line_does_not_hide_the_format(tmp_path: Path) -> None:
    path = _log(tmp_path / "club.jsonl", 5)
    _damage(path, 1, b"\x00", column=2)
    assert formats.detect(path) == "ofc-hand"
    summary = ingest([path], tmp_path / "x.duckdb")
    assert (summary.hands, summary.rejected, summary.first_rejects[0].line) == (4, 1, 1)


def test_a_file_is_binary_only_when_most_of_its_first_lines_are_not_text(
        tmp_path: Path) -> None:
    path = _log(tmp_path / "club.jsonl", 9)
    for line in (2, 4, 6, 8):  # four of nine lines: a log with damaged lines
        _damage(path, line, b"\x00")
    assert formats.detect(path) == "ofc-hand"
    assert ingest([path], tmp_path / "x.duckdb").hands == 5
    _damage(path, 9, b"\x00")  # five of nine: binary
    with pytest.raises(HandError, match="a binary file, not a hand log"):
        formats.detect(path)


@pytest.mark.parametrize("packed", ["plain", "gz", "zst"])
def test_a_damaged_line_in_a_stream_is_rejected_and_the_rest_loads(
        tmp_path: Path, packed: str) -> None:
    """Standard input, whose first lines are read once to tell the format and given
    back: the damaged line among them is rejected at its number, as in a file."""
    path = _log(tmp_path / "club.jsonl", 21)
    _damage(path, 1, b"\x00")
    _damage(path, 11, b"\x07")
    text = path.read_bytes()
    if packed != "plain":
        text = gzip.compress(text) if packed == "gz" else zstandard.ZstdCompressor().compress(
            text)
    db = tmp_path / "x.duckdb"
    done = subprocess.run([sys.executable, "-m", "ofcstats", "ingest", "-", "--db", str(db)],
                          input=text, capture_output=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    hands, rejects = _stored(db)
    assert (hands, [line for line, _, _ in rejects]) == (19, [1, 11])


def _recovered_lines(decompressed: bytes) -> int:
    return decompressed.count(b"\n")


@pytest.mark.parametrize("packed", ["gz", "zst"])
def test_a_compressed_log_cut_in_half_loads_every_whole_line_its_decompressor_recovers(
        tmp_path: Path, packed: str) -> None:
    text = _log(tmp_path / "club.jsonl", 1500).read_bytes()
    if packed == "gz":
        whole = gzip.compress(text)
        cut = whole[: len(whole) // 2]
        recovered = zlib.decompressobj(31).decompress(cut)
    else:
        whole = zstandard.ZstdCompressor().compress(text)
        cut = whole[: len(whole) // 2]
        recovered = zstandard.ZstdDecompressor().decompressobj().decompress(cut)
    path = tmp_path / f"club.jsonl.{packed}"
    path.write_bytes(cut)
    db = tmp_path / "x.duckdb"
    result = runner.invoke(app, ["ingest", str(path), "--db", str(db)])
    assert result.exit_code == 1, result.output
    whole_lines = _recovered_lines(recovered)
    assert whole_lines > 700
    hands, rejects = _stored(db)
    assert hands == whole_lines
    [(line, reason, raw)] = rejects
    assert line == whole_lines + 1, "the cut line is the reject, at its number"
    assert reason.startswith("the compressed data breaks off in this line (")
    assert reason.endswith("): the line is cut short and was not read; the lines before it "
                           "were")
    assert raw
    assert recovered.split(b"\n")[-1].decode().startswith(raw)
    assert f"{path}:{line}: the compressed data breaks off in this line" in result.stderr
    # The same bytes piped: a stream is read once, and loses no more.
    piped = tmp_path / "piped.duckdb"
    done = subprocess.run([sys.executable, "-m", "ofcstats", "ingest", "-", "--db", str(piped),
                           "--no-rescore"], input=cut, capture_output=True, timeout=120,
                          check=False)
    assert done.returncode == 1, done.stderr
    assert _stored(piped) == (whole_lines, rejects)
    assert f"-:{line}: the compressed data breaks off in this line" in done.stderr.decode()


def test_a_gzip_cut_between_two_lines_is_one_reject_for_the_break(tmp_path: Path) -> None:
    """A break that cuts no line (the data stops after a whole line) is still said."""
    text = _log(tmp_path / "club.jsonl", 30).read_bytes()
    lines = text.split(b"\n")
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    cut = packer.compress(b"\n".join(lines[:10]) + b"\n") + packer.flush(zlib.Z_SYNC_FLUSH)
    path = tmp_path / "club.jsonl.gz"
    path.write_bytes(cut)
    summary = ingest([path], tmp_path / "x.duckdb")
    assert (summary.hands, summary.rejected) == (10, 1)
    reject = summary.first_rejects[0]
    assert reject.line is None
    assert reject.reason.startswith("the compressed data breaks off (")


def _csv(path: Path, n: int) -> list[bytes]:
    rng = random.Random(8)
    text = to_csv([random_hand(rng, f"h{i}", "pineapple", 3) for i in range(n)]).encode()
    path.write_bytes(text)
    return text.split(b"\n")


@pytest.mark.parametrize(("column", "why"), [
    (12, "line 6, one of its rows, could not be read"),  # the id is read: h1
    (2, "line 6, between two of its rows, could not be read")])  # in the id: not read
def test_a_damaged_row_of_a_csv_rejects_its_hand_never_loads_it_short_of_a_seat(
        tmp_path: Path, column: int, why: str) -> None:
    """Rows 5 to 7 are hand h1's three seats (row 1 the header): a damaged row 6 is no
    hand of two seats, but a reject, and the hand's."""
    path = tmp_path / "boards.csv"
    lines = _csv(path, 5)
    lines[5] = lines[5][:column - 1] + b"\x00" + lines[5][column:]
    path.write_bytes(b"\n".join(lines))
    summary = ingest([path], tmp_path / "x.duckdb")
    assert summary.hands == 4
    found = {(r.line, r.reason) for r in summary.first_rejects}
    assert (5, f"hand h1: {why}") in found
    assert any(line == 6 and reason.startswith("a NUL byte at column ")
               for line, reason in found)


def test_a_damaged_csv_row_between_two_hands_naming_neither_leaves_both(
        tmp_path: Path) -> None:
    path = tmp_path / "boards.csv"
    lines = _csv(path, 3)
    lines.insert(4, b"zz\x00,1,x,,,")  # between h0 (rows 2-4) and h1
    path.write_bytes(b"\n".join(lines))
    summary = ingest([path], tmp_path / "x.duckdb")
    assert (summary.hands, summary.rejected) == (3, 1)
