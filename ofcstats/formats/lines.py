"""Reading a log file as numbered lines, in batches of bounded size.

Files may be plain, gzip or zstandard compressed (recognised by their first bytes,
not their names); gzip is read with ISA-L's inflate (``isal``), a few times zlib's
speed. A batch keeps its lines as one ``bytes`` object with the offsets of
the line starts, so parsers can hand the whole batch to a columnar reader in one call;
text is decoded line by line only for the few lines that end up in a reject.

A line longer than :data:`MAX_LINE_BYTES` is never held whole: it is passed over as it is
read, stands in its batch as a blank line (so every format skips it and the lines keep
their numbers), and is listed with the batch (:class:`LongLine`) to be rejected. So is a
line that is not text (:class:`DamagedLine`: a NUL byte or another control character in
it), and the line a compressed stream breaks off in: the rest of the file loads.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import sys
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import zstandard
from isal import isal_zlib

BATCH_BYTES = 16 << 20
MAX_LINE_BYTES = 1 << 20
"""The longest line read, in bytes, its line ending apart (1 MiB: a hand of the native
format takes 1 to 5 KB, so room for any keys a source adds). A longer line is rejected
(the rest of the file loads), is never held in memory whole, and is passed over when the
format is told from the first lines (docs/format.md)."""
KEPT_BYTES = 1 << 10
"""What a rejected long line keeps of itself, from its start, as its raw text."""
_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"
_IS_WHITESPACE = np.zeros(256, dtype=bool)
_IS_WHITESPACE[np.frombuffer(_WHITESPACE, dtype=np.uint8)] = True
_CONTROL_OK = (9, 10, 13)  # tab, line feed, carriage return: the controls text holds
_ISAL_ERROR: type[BaseException] = isal_zlib.error  # type: ignore[assignment]  # a class
BROKEN = (EOFError, OSError, zlib.error, _ISAL_ERROR, zstandard.ZstdError)
"""What reading a compressed stream raises when its data is cut short or damaged."""


Data = bytes | bytearray
"""A batch's bytes: a file's batches are the buffer they were read into, not a copy."""


@dataclass(frozen=True)
class LongLine:
    """A line longer than :data:`MAX_LINE_BYTES`: its number, its length in bytes, and its
    first :data:`KEPT_BYTES` bytes."""

    line: int
    length: int
    start: bytes

    @property
    def reason(self) -> str:
        """Why the line is rejected, in one line."""
        return (f"the line is {self.length:,} bytes long, more than the {MAX_LINE_BYTES:,} a "
                f"line may have: it was not read (its first {len(self.start):,} bytes are "
                "kept as its raw text)")

    @property
    def raw(self) -> str:
        """The kept start of the line as text, bad bytes shown as escapes."""
        return self.start.decode("utf-8", errors="backslashreplace")


@dataclass(frozen=True)
class DamagedLine:
    """A line that cannot be read: one that holds a byte no text holds (a NUL byte or
    another control character, see :func:`control_at`), or the line a compressed stream
    breaks off in. Its bytes are kept (a line is at most :data:`MAX_LINE_BYTES` long) as
    its raw text."""

    line: int
    reason: str
    data: bytes

    @property
    def raw(self) -> str:
        """The line as text, bad bytes and control characters shown as escapes."""
        return self.data.decode("utf-8", errors="backslashreplace").translate(_ESCAPED)


Unread = LongLine | DamagedLine
"""A line a batch lists as not read (a blank line in its data), to be rejected."""

_ESCAPED = {c: f"\\x{c:02x}" for c in range(32) if c not in _CONTROL_OK}


def control_at(data: Data, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lines of ``data`` (newline-terminated, their offsets ``starts``) that are not
    text, 0-based, and where each first holds a control character: a NUL byte or another
    byte under 32 but tab, line feed and carriage return (JSON takes none unescaped, and
    no player's name holds one). One comparison over the bytes in the usual case, where
    the newlines are the only control characters."""
    view = np.frombuffer(data, dtype=np.uint8)
    low = view < 32
    if np.count_nonzero(low) == len(starts) - 1:  # only the newlines
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    for ok in _CONTROL_OK:
        low &= view != ok
    at = np.flatnonzero(low)
    lines, first = np.unique(np.searchsorted(starts, at, side="right") - 1, return_index=True)
    return lines.astype(np.int64), at[first].astype(np.int64)


def _not_text(line: int, data: Data, at: int) -> DamagedLine:
    """The damaged line ``line`` (its bytes ``data``), whose first control byte is at
    offset ``at``."""
    byte = data[at]
    what = "a NUL byte" if byte == 0 else f"a control character (0x{byte:02x})"
    return DamagedLine(line=line, data=bytes(data),
                       reason=f"{what} at column {at + 1}: the line is not text and was not "
                              "read")


def broken_off(error: str, *, in_line: bool) -> str:
    """Why reading stopped where a compressed stream broke off (``error``, what the
    decompressor said): inside a line (that line's reject) or between two lines."""
    if in_line:
        return (f"the compressed data breaks off in this line ({error}): the line is cut "
                "short and was not read; the lines before it were")
    return f"the compressed data breaks off ({error}); lines before it were read"


@dataclass(frozen=True)
class LineBatch:
    """Consecutive lines of one file: line ``first_line + i`` is ``line(i)``.

    ``data`` holds the lines, each ending in a newline. ``problem`` is set on the last
    batch of a file whose compressed stream broke off between two lines (the lines before
    it are good; a line the break cuts short is listed in ``long_lines`` instead).
    ``long_lines``: the lines of the batch that cannot be read, each a blank line in
    ``data``: longer than :data:`MAX_LINE_BYTES`, not text, or cut short.
    """

    first_line: int
    data: Data
    problem: str | None = None
    long_lines: tuple[Unread, ...] = ()

    @cached_property
    def starts(self) -> np.ndarray:
        """Offsets of each line's first byte, and one past the end (``len(self) + 1`` values)."""
        view = np.frombuffer(self.data, dtype=np.uint8)
        ends = np.flatnonzero(view == 10) + 1
        return np.concatenate([np.zeros(1, dtype=np.int64), ends.astype(np.int64)])

    @cached_property
    def size(self) -> int:
        """Lines in the batch (from :attr:`starts`, which every reader needs anyway: one
        pass over the bytes instead of two)."""
        return len(self.starts) - 1

    def __len__(self) -> int:
        return self.size

    def line(self, index: int) -> str:
        """Line ``index`` (0-based in the batch) as text, bad bytes shown as escapes."""
        start, end = int(self.starts[index]), int(self.starts[index + 1]) - 1
        return self.data[start:end].decode("utf-8", errors="backslashreplace").removesuffix("\r")

    def texts(self, indices: np.ndarray | list[int] | None = None) -> list[str]:
        """Several lines as text (all of them by default): for slow paths only."""
        chosen = range(len(self)) if indices is None else indices
        return [self.line(int(i)) for i in chosen]

    def select(self, indices: np.ndarray) -> bytes:
        """The given lines (0-based, ascending), newline-terminated, as one ``bytes``."""
        return b"".join(self.data[int(self.starts[i]):int(self.starts[i + 1])] for i in indices)

    @cached_property
    def blank(self) -> np.ndarray:
        """A boolean per line: nothing but whitespace."""
        view = np.frombuffer(self.data, dtype=np.uint8)
        starts = self.starts[:-1]
        lengths = np.diff(self.starts) - 1
        first = np.where(lengths > 0, view[np.minimum(starts, max(len(view) - 1, 0))], 32) \
            if len(view) else np.zeros(0, dtype=np.uint8)
        # Only a line that starts with whitespace can be blank: look closer at those.
        maybe = np.flatnonzero(_IS_WHITESPACE[first])
        out = np.zeros(len(self), dtype=bool)
        for i in maybe:
            out[i] = not self.data[int(self.starts[i]):int(self.starts[i + 1])].strip()
        return out

    @cached_property
    def not_utf8(self) -> np.ndarray:
        """Indices of the lines whose bytes are not UTF-8."""
        if self.data.isascii():
            return np.zeros(0, dtype=np.int64)
        try:
            pa.array([self.data], pa.large_binary()).cast(pa.large_string())
            return np.zeros(0, dtype=np.int64)
        except pa.ArrowInvalid:
            pass
        # Rare path: find the lines at fault.
        bad = []
        for i in range(len(self)):
            try:
                self.data[int(self.starts[i]):int(self.starts[i + 1])].decode("utf-8")
            except UnicodeDecodeError:
                bad.append(i)
        return np.array(bad, dtype=np.int64)


class Digest(Protocol):
    """A hash fed the file's bytes (hashlib's or BLAKE3's)."""

    def update(self, data: bytes | memoryview, /) -> object: ...


@dataclass
class Tally:
    """What reading a file came to: its complete lines (newline-terminated) so far."""

    lines: int = 0


class _Hashing(io.RawIOBase):
    """A read-only file wrapper that feeds every byte read to a hash and counts them."""

    def __init__(self, raw: io.RawIOBase, digest: Digest | None) -> None:
        self.raw, self.digest, self.done = raw, digest, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = self.raw.readinto(buffer)
        if n:
            if self.digest is not None:
                self.digest.update(memoryview(buffer)[:n])
            self.done += n
        return n or 0


def _decompressed(raw: Any) -> Any:
    """The decompressing reader over a buffered binary file, or the file itself."""
    magic = raw.peek(4)[:4]
    if magic[:2] == b"\x1f\x8b":
        return _Gzip(raw)
    if magic == b"\x28\xb5\x2f\xfd":
        return _Zstd(raw)
    return raw


_MEMBER_OUT = 1 << 20
"""The most a gzip member gives at a time (a small piece of data may inflate a thousand
times)."""


class _Members(io.RawIOBase):
    """A compressed stream, member after member (gzip; the frames of zstandard), that
    gives every byte its decompressor recovers before a break and raises only then:
    :class:`EOFError` when the stream ends inside a member (a copy that stopped), the
    decompressor's error when the data is damaged. (Reading a megabyte at a time, a
    reader that raises at once loses the lines that megabyte held.)"""

    CUT = ""  # what the EOFError says

    def __init__(self, raw: io.BufferedReader) -> None:
        self.raw = raw
        self.member: Any = None  # the decompressor of the member begun, until it ends
        self.pending = b""  # data read and not yet given to the member
        self.out = memoryview(b"")
        self.broken: BaseException | None = None  # raised once what came before is read

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not len(self.out):
            if not self._decompress_more():
                return 0
        n = min(len(buffer), len(self.out))
        buffer[:n] = self.out[:n]
        self.out = self.out[n:]
        return n

    def _start(self) -> Any:
        """A decompressor for the next member."""
        raise NotImplementedError

    def _feed(self, data: bytes) -> tuple[bytes, bytes]:
        """What the member gives for ``data``, and the data it did not take yet."""
        raise NotImplementedError

    def _between(self, data: bytes) -> bytes:
        """``data`` from where the next member starts."""
        return data

    def _decompress_more(self) -> bool:
        if self.broken is not None:
            raise self.broken
        data, self.pending = self.pending or self.raw.read1(_READ_AHEAD), b""
        if not data:
            if self.member is not None:
                raise EOFError(self.CUT)
            return False
        pieces = []
        try:
            while data:
                if self.member is None:
                    data = self._between(data)
                    if not data:
                        break
                    self.member = self._start()
                out, data = self._feed(data)
                pieces.append(out)
                if self.member.eof:  # what follows the member's end begins the next one
                    data, self.member = self.member.unused_data, None
                elif data:  # (as much as one piece may hold: the rest waits)
                    self.pending = data
                    break
        except BROKEN as error:
            if not any(pieces):
                raise
            # The members before the damage are read first. (Without its traceback: its
            # frames would hold the reader's view of the batch's buffer.)
            self.broken = error.with_traceback(None)
        self.out = memoryview(b"".join(pieces))
        return True


class _Gzip(_Members):
    """A gzip stream (ISA-L's inflate), member after member (files put together with
    ``cat``), zero bytes between them passed over (as gzip's own reader does)."""

    CUT = "Compressed file ended before the end-of-stream marker was reached"

    def _start(self) -> Any:
        return isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)

    def _feed(self, data: bytes) -> tuple[bytes, bytes]:
        return self.member.decompress(data, _MEMBER_OUT), self.member.unconsumed_tail

    def _between(self, data: bytes) -> bytes:
        return data.lstrip(b"\0")


class _Zstd(_Members):
    """A zstandard stream, frame after frame. (zstandard's own stream reader ends quietly
    inside a frame cut short, and a cut file would load as if whole.)"""

    CUT = "Compressed file ended before the end of its last zstandard frame"

    def _start(self) -> Any:
        return zstandard.ZstdDecompressor().decompressobj()

    def _feed(self, data: bytes) -> tuple[bytes, bytes]:
        return self.member.decompress(data), b""


class _Prefixed(io.RawIOBase):
    """A stream, after the bytes already taken from it (its first, to tell whether it is
    compressed)."""

    def __init__(self, raw: Any, taken: bytes) -> None:
        self.raw, self.taken = raw, memoryview(taken)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if len(self.taken):
            n = min(len(buffer), len(self.taken))
            buffer[:n] = self.taken[:n]
            self.taken = self.taken[n:]
            return n
        return self.raw.readinto(buffer) or 0


Piece = bytes | int
"""A piece of the lines a :class:`Replay` gives back: bytes, or so many bytes of a long
line that were not kept (given back as spaces: the line is rejected all the same)."""


class Replay(io.RawIOBase):
    """A stream that can be read only once (a pipe, a FIFO, standard input), decompressed:
    the lines already taken from it for format detection, then the rest of it. A long line
    among those taken comes back as its kept start and spaces, as long as it was, so it is
    rejected as it would have been; a break in its compressed data comes after them."""

    def __init__(self, raw: Any, source: Any, pieces: list[Piece],
                 broken: BaseException | None = None) -> None:
        self.raw, self.source, self.broken = raw, source, broken
        self.pieces: deque[Piece] = deque(p for p in pieces if p)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.pieces:
            piece = self.pieces.popleft()
            if isinstance(piece, int):
                n = min(len(buffer), piece)
                buffer[:n] = b" " * n
                if piece > n:
                    self.pieces.appendleft(piece - n)
                return n
            n = min(len(buffer), len(piece))
            buffer[:n] = piece[:n]
            if len(piece) > n:
                self.pieces.appendleft(piece[n:])
            return n
        if self.broken is not None:
            raise self.broken
        return self.source.readinto(buffer) or 0

    def close(self) -> None:
        if self.raw is not _stdin():
            with contextlib.suppress(OSError):
                self.raw.close()
        super().close()


def _stdin() -> Any:
    """Standard input's unbuffered bytes."""
    return getattr(sys.stdin.buffer, "raw", sys.stdin.buffer)


def is_stream(path: Path) -> bool:
    """``-`` (standard input), or a path that is no regular file (a FIFO,
    ``/dev/stdin``): a stream that can be read only once, with no size or content known
    before it is read."""
    if str(path) == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


HEAD_BYTES = 64 << 10
"""What format detection reads of a file's first lines (at least its first line)."""


@dataclass(frozen=True)
class Head:
    """A file's first lines, as format detection reads them (see :func:`first_lines`)."""

    data: bytes  # whole lines, a line too long to read or not text a blank line
    long_lines: int = 0  # the lines passed over as too long
    broken: str | None = None  # why the compressed data broke off, if it did
    lines: int = 0  # the lines read
    damaged: int = 0  # those not text (a long line: by its kept start)

    @property
    def binary(self) -> bool:
        """Whether the file is binary, not a log: most of its first lines are not text
        (a log with a damaged line or two is a log, whose damaged lines are rejected)."""
        return 2 * self.damaged > self.lines


def open_stream(path: Path, size: int = HEAD_BYTES) -> tuple[Replay, Head]:
    """Open a stream (see :func:`is_stream`) once: the stream, decompressed, which gives
    every line from the first, and its first lines (:func:`first_lines`), for format
    detection."""
    raw: Any = _stdin() if str(path) == "-" else path.open("rb", buffering=0)
    taken = bytearray()
    while len(taken) < 4:  # a pipe gives what has been written so far: read on
        chunk = raw.read(4 - len(taken))
        if not chunk:
            break
        taken += chunk
    source = _decompressed(io.BufferedReader(_Prefixed(raw, bytes(taken)),
                                             buffer_size=_READ_AHEAD))
    head, pieces, broken = first_lines(source, size)
    return Replay(raw, source, pieces, broken), head


def read_head(path: Path, size: int = HEAD_BYTES) -> Head:
    """A file's first lines, decompressed, for format detection (:func:`first_lines`)."""
    with path.open("rb") as raw:
        return first_lines(_decompressed(raw), size)[0]


def first_lines(stream: Any, size: int) -> tuple[Head, list[Piece], BaseException | None]:
    """The first whole lines of a decompressed stream, at least ``size`` bytes of them (or
    all of it), a line longer than :data:`MAX_LINE_BYTES` passed over (a blank line in
    their place): what format detection reads, so that a long first line does not hide
    the format. Also what was taken from the stream, to be given back (see
    :class:`Replay`), and the error that broke its compressed data, if one did."""
    split = _Splitter(1)
    head = bytearray()
    pieces: list[Piece] = []
    broken: BaseException | None = None
    unread: list[Unread] = []
    while len(head) < size and broken is None:
        held = len(split.held)
        buffer, broken = _fill(stream, split.held, size)
        if len(buffer) == held:
            last = split.end(None) if split.passing is None else None
            if last is not None:  # the end: a last line without a newline
                head += last.data
                unread += last.long_lines
            break
        if not head and not held and buffer.startswith(_BOM):
            del buffer[:len(_BOM)]
        batch = split.cut(buffer)
        if batch is not None:
            head += batch.data
            pieces += _as_read(batch)
            unread += batch.long_lines
    if split.passing is not None:
        start = split.passing.start
        pieces += [start, split.passing.length - len(start)]
        unread.append(split.passing.done())
    else:
        pieces.append(split.held)
    long = [x for x in unread if isinstance(x, LongLine)]
    starts = [x.start for x in long]
    damaged = len(unread) - len(long) + sum(  # a long line: by its kept start
        len(control_at(start + b"\n", np.array([0, len(start) + 1]))[0]) for start in starts)
    return Head(bytes(head), len(long), None if broken is None else str(broken),
                lines=head.count(b"\n") + (split.passing is not None), damaged=damaged
                ), pieces, broken


def _as_read(batch: LineBatch) -> list[Piece]:
    """A batch's bytes as they were read: each long line its kept start and the count of
    the bytes not kept, in place of the blank line that stands for it."""
    if not batch.long_lines:
        return [bytes(batch.data)]
    pieces: list[Piece] = []
    at = 0
    for long in batch.long_lines:
        blank = int(batch.starts[long.line - batch.first_line])
        pieces += [bytes(batch.data[at:blank]), *(
            (long.start, long.length - len(long.start)) if isinstance(long, LongLine)
            else (long.data,))]
        at = blank
    pieces.append(bytes(batch.data[at:]))
    return pieces


_READ_AHEAD = 1 << 20  # a file's bytes read ahead of the lines (and hashed as they are read)


def _fill(stream: Any, pending: bytes, room: int) -> tuple[bytearray, BaseException | None]:
    """A new buffer of ``pending`` and then up to ``room`` bytes of ``stream`` (fewer
    only at its end): the batch's lines are read straight into it, copied once, a
    megabyte at a time. A compressed stream that breaks off keeps what was read before
    the break (the decompressing readers give every byte they recovered before they raise),
    and the error comes with it."""
    held = len(pending)
    buffer = bytearray(held + room)
    buffer[:held] = pending
    view, done, broken = memoryview(buffer), held, None
    try:
        while done < len(buffer):
            n = stream.readinto(view[done:done + _READ_AHEAD])
            if not n:
                break
            done += n
    except BROKEN as error:
        broken = error.with_traceback(None)  # (its frames would hold views of the buffer)
    view.release()
    del buffer[done:]
    return buffer, broken


@dataclass
class _Passing:
    """A line longer than :data:`MAX_LINE_BYTES`, passed over as it is read."""

    line: int
    start: bytes
    length: int

    def done(self) -> LongLine:
        return LongLine(line=self.line, length=self.length, start=self.start)


class _Splitter:
    """Cuts the bytes of a stream, buffer by buffer, into batches of whole lines: the start
    of a line a buffer ends in is held over for the next, unless it is longer than
    :data:`MAX_LINE_BYTES` already; then the line is passed over up to its newline,
    keeping only its start and its length."""

    def __init__(self, first_line: int) -> None:
        self.line = first_line  # the number of the next line
        self.held = b""  # the start of that line, to begin the next buffer
        self.passing: _Passing | None = None  # or that line, too long, being passed over

    def cut(self, buffer: bytearray) -> LineBatch | None:
        """The whole lines of ``buffer`` (which begins with :attr:`held`), cut at its last
        newline in place; None when it ends none."""
        ended: list[Unread] = []
        if self.passing is not None:
            newline = buffer.find(b"\n")
            if newline < 0:
                self.passing.length += len(buffer)
                return None
            self.passing.length += newline
            ended.append(self.passing.done())
            self.passing = None
            del buffer[:newline]  # (the line stands as a blank one)
        end = buffer.rfind(b"\n") + 1
        held = bytes(buffer[end:])
        del buffer[end:]
        batch = _blanked(LineBatch(first_line=self.line, data=buffer), ended) if end else None
        if batch is not None:
            self.line += len(batch)
        if len(held) > MAX_LINE_BYTES:
            self.passing = _Passing(self.line, held[:KEPT_BYTES], len(held))
            held = b""
        self.held = held
        return batch

    def end(self, broken: str | None) -> LineBatch | None:
        """What is left at the end of the stream: a last line without a newline, a long
        line passed over up to the end, the line a compressed stream broke off in
        (``broken``: what the decompressor said), or only that break."""
        problem = None if broken is None else broken_off(broken, in_line=False)
        if self.passing is not None:
            return LineBatch(first_line=self.line, data=b"\n", problem=problem,
                             long_lines=(self.passing.done(),))
        if self.held and broken is not None:
            return LineBatch(first_line=self.line, data=b"\n", long_lines=(DamagedLine(
                line=self.line, data=self.held, reason=broken_off(broken, in_line=True)),))
        if self.held:
            return _blanked(LineBatch(first_line=self.line, data=self.held + b"\n"), [])
        if problem:
            return LineBatch(first_line=self.line, data=b"", problem=problem)
        return None


def _blanked(batch: LineBatch, ended: list[Unread]) -> LineBatch:
    """``batch`` with each of its lines longer than :data:`MAX_LINE_BYTES` or not text
    (:func:`control_at`) made a blank line and listed in ``long_lines`` (after ``ended``, a
    line passed over that ended at the batch's start, blank already): the batch itself
    when it has none (the usual case)."""
    data, starts = batch.data, batch.starts
    long = np.flatnonzero(np.diff(starts) - 1 > MAX_LINE_BYTES)
    bad, bad_at = control_at(data, starts)
    if len(long) and len(bad):
        bad_at, bad = bad_at[~np.isin(bad, long)], bad[~np.isin(bad, long)]
    if not len(long) and not len(bad) and not ended:
        return batch
    # (A loop over lines of a megabyte or more, or not text: a few per batch at most.)
    unread = sorted([(int(i), -1) for i in long] + [(int(i), int(a)) for i, a in zip(
        bad, bad_at, strict=True)])
    kept = bytearray()
    at = 0
    for i, control in unread:
        start, end = int(starts[i]), int(starts[i + 1]) - 1
        kept += data[at:start]
        line = batch.first_line + i
        ended.append(LongLine(line=line, length=end - start,
                              start=bytes(data[start:start + KEPT_BYTES])) if control < 0
                     else _not_text(line, data[start:end], control - start))
        at = end
    kept += data[at:]
    return LineBatch(first_line=batch.first_line, data=kept if unread else data,
                     long_lines=tuple(ended))


def read_line_batches(
    path: Path, progress: Callable[[int], None] | None = None, batch_bytes: int = BATCH_BYTES,
    digest: Digest | None = None, *, start: int = 0, first_line: int = 1,
    tally: Tally | None = None, stream: Replay | None = None,
) -> Iterator[LineBatch]:
    """Yield the file's lines in batches; a last line without a newline is still a line.
    A line longer than :data:`MAX_LINE_BYTES` is a blank line of its batch, listed in
    its ``long_lines``.

    ``progress`` receives the count of file bytes (compressed, as on disk) read so far;
    ``digest`` is updated with those bytes, so a file is hashed in the same pass.
    ``start`` (a plain file's byte offset, at a line's start) and ``first_line`` (that
    line's number) read only the lines from there on; ``tally`` gets the count of
    complete lines. ``stream`` (from :func:`open_stream`, decompressed already) is read
    instead of opening ``path``.
    """
    split = _Splitter(first_line)
    why_broken = None
    if tally is not None:
        tally.lines = first_line - 1
    opened: io.RawIOBase = path.open("rb", buffering=0) if stream is None else stream
    with opened as plain:
        if start:
            plain.seek(start)
        counted = _Hashing(plain, digest)
        counted.done = start
        raw = io.BufferedReader(counted, buffer_size=_READ_AHEAD)
        # A stream is read unbuffered: a buffered reader that meets the break in the middle
        # of a read loses what it read before it in that read.
        lines = counted if isinstance(plain, Replay) else _decompressed(raw)
        # What is left of a plain file bounds a batch's buffer (a small file's one batch
        # then takes a buffer of its size, not of a batch's); a file that grows as it is
        # read is read on to its end all the same.
        left = os.fstat(plain.fileno()).st_size - start if lines is raw and not isinstance(
            plain, Replay) else None
        first = not start
        while True:
            # The held-over start of a line and what follows, in the batch's own buffer,
            # cut at its last newline in place.
            held = len(split.held)
            if left is not None and left <= 0 and not raw.peek(1):
                break  # (the end, found without a buffer of a batch's size)
            buffer, broken = _fill(lines, split.held, min(batch_bytes, left)
                                   if left is not None and left > 0 else batch_bytes)
            if broken is not None:
                # A compressed stream cut short: keep every whole line before the break.
                why_broken = str(broken)
            if len(buffer) == held:
                break
            if left is not None:
                left -= len(buffer) - held
            if first and buffer.startswith(_BOM):
                del buffer[:len(_BOM)]  # a byte order mark is not part of the first line
            first = False
            batch = split.cut(buffer)
            if tally is not None:
                tally.lines = split.line - 1
            if batch is not None:
                yield batch
            if progress is not None:
                progress(counted.done)
            if why_broken is not None:
                break
        if digest is not None:
            # Whatever the decompressor left unread still belongs to the file's hash.
            while chunk := plain.read(1 << 20):
                digest.update(chunk)
        last = split.end(why_broken)
        if last is not None:
            yield last
    if progress is not None and stream is None:
        progress(path.stat().st_size)
