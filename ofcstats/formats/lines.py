"""Reading a log file as numbered text lines, in batches of bounded size.

Files may be plain, gzip or zstandard compressed (recognised by their first bytes,
not their names). Each batch is decoded as UTF-8 in one call; only a batch holding
bad bytes is decoded line by line, to name the lines at fault.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

BATCH_BYTES = 8 << 20


@dataclass(frozen=True)
class LineBatch:
    """Consecutive lines of one file: ``texts[i]`` is line ``first_line + i``.

    Lines keep any trailing carriage return. A line whose bytes are not UTF-8 is in
    ``not_utf8`` (by index into ``texts``) and decoded with backslash escapes.
    """

    first_line: int
    texts: list[str]
    not_utf8: tuple[int, ...] = ()


def _decompressed(raw: BinaryIO) -> BinaryIO:
    magic = raw.peek(4)[:4] if hasattr(raw, "peek") else b""
    if magic[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    if magic == b"\x28\xb5\x2f\xfd":
        import zstandard

        return zstandard.ZstdDecompressor().stream_reader(raw)  # type: ignore[no-any-return]
    return raw


def read_head(path: Path, size: int = 64 << 10) -> bytes:
    """The first ``size`` decompressed bytes of a file, for format detection."""
    with path.open("rb") as raw:
        return _decompressed(raw).read(size)


def read_line_batches(
    path: Path, progress: Callable[[int], None] | None = None, batch_bytes: int = BATCH_BYTES
) -> Iterator[LineBatch]:
    """Yield the file's lines in batches; a last line without a newline is still a line.

    ``progress`` receives the count of file bytes (compressed, as on disk) read so far.
    """
    line_no = 1
    pending = b""
    with path.open("rb") as raw:
        stream = _decompressed(raw)
        while block := stream.read(batch_bytes):
            data = pending + block
            cut = data.rfind(b"\n")
            if cut < 0:
                pending = data
                continue
            pending = data[cut + 1 :]
            batch = _batch(data[:cut], line_no)
            line_no += len(batch.texts)
            yield batch
            if progress is not None:
                progress(raw.tell())
        if pending:
            yield _batch(pending, line_no)
    if progress is not None:
        progress(path.stat().st_size)


def _batch(chunk: bytes, first_line: int) -> LineBatch:
    try:
        return LineBatch(first_line=first_line, texts=chunk.decode("utf-8").split("\n"))
    except UnicodeDecodeError:
        pass
    # Rare path: find the lines at fault; only this batch pays for a loop.
    texts, bad = [], []
    for index, line in enumerate(chunk.split(b"\n")):
        try:
            texts.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            texts.append(line.decode("utf-8", errors="backslashreplace"))
            bad.append(index)
    return LineBatch(first_line=first_line, texts=texts, not_utf8=tuple(bad))
