"""The compiled part of :mod:`ofcstats.formats.scan` (numba), apart so that reading a
small file never loads the compiler. Each step takes a position on the line and returns
the next one, or -1 when the line is not of the shape: it then goes to the general
reader."""

# The functions here are compiled: line coverage does not see them run.
# mypy: ignore-errors

from __future__ import annotations

import numba
import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ofcstats.formats.scan_codes import (
    CARDS,
    FLAG,
    MAX_KINDS,
    MAX_POS,
    MAX_SEATS,
    MAX_STREETS,
    MISSING,
    NULL,
    NUMBER,
    PRESENT,
    SEATS,
    STREETS,
    TEXT,
    WHOLE,
)
from ofcstats.records import NOT_A_CARD


@intrinsic
def _pointer(typingctx, address):
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(address), codegen


@njit(inline="always")
def _borrow(array):
    """The same array, not counted as a reference: passing a counted array to a function
    costs two atomic operations, which on lines of short values cost more than the
    reading. Only for arrays that outlive every use of the borrowed view."""
    return numba.carray(_pointer(array.ctypes.data), array.shape, array.dtype)


@njit(nogil=True, cache=True)
def gather_spans(buf, first, end):
    """The byte spans ``buf[first[i]:end[i]]`` one after another: (offsets, bytes)."""
    n = len(first)
    offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        offsets[i + 1] = offsets[i] + max(end[i] - first[i], 0)
    out = np.empty(offsets[n], dtype=np.uint8)
    for i in range(n):
        if end[i] > first[i]:
            out[offsets[i]:offsets[i + 1]] = buf[first[i]:end[i]]
    return offsets, out


@njit(inline="always")
def _ws(buf: np.ndarray, i: int, end: int) -> int:
    while i < end:
        b = buf[i]
        if b in (32, 9, 13, 10):
            i += 1
        else:
            break
    return i


@njit(inline="always")
def _string_end(buf: np.ndarray, i: int, end: int) -> int:
    """``buf[i]`` opens a string: the position of its closing quote, or -1 when it has
    an escape or a control character, or does not close on the line."""
    j = i + 1
    while j < end:
        b = buf[j]
        if b == 34:
            return j
        if b == 92 or b < 32:
            return -1
        j += 1
    return -1


@njit(inline="always")
def _literal(buf: np.ndarray, i: int, end: int, word: int) -> int:
    """Match ``null`` (0), ``true`` (1) or ``false`` (2) at ``i``: the next position."""
    if word == 0:
        if i + 4 <= end and buf[i] == 110 and buf[i + 1] == 117 and buf[i + 2] == 108 \
                and buf[i + 3] == 108:
            return i + 4
    elif word == 1:
        if i + 4 <= end and buf[i] == 116 and buf[i + 1] == 114 and buf[i + 2] == 117 \
                and buf[i + 3] == 101:
            return i + 4
    elif i + 5 <= end and buf[i] == 102 and buf[i + 1] == 97 and buf[i + 2] == 108 \
            and buf[i + 3] == 115 and buf[i + 4] == 101:
        return i + 5
    return -1


@njit(inline="always")
def _next_item(buf, i, end, closer):
    """After an item of a list or object (``closer``: its closing bracket): (the next
    item, False) after a comma, (past the list or object, True) at the closer, or (-1,
    True) at anything else."""
    i = _ws(buf, i, end)
    if i < end and buf[i] == 44:
        return _ws(buf, i + 1, end), False
    if i < end and buf[i] == closer:
        return i + 1, True
    return -1, True


@njit(inline="always")
def _digits(buf: np.ndarray, i: int, end: int) -> int:
    while i < end and 48 <= buf[i] <= 57:
        i += 1
    return i


@njit(inline="always")
def _number_end(buf: np.ndarray, i: int, end: int) -> int:
    """The end of a JSON number at ``i``, or -1."""
    j = i
    if j < end and buf[j] == 45:
        j += 1
    if j >= end:
        return -1
    if buf[j] == 48:
        j += 1
    elif 49 <= buf[j] <= 57:
        j = _digits(buf, j, end)
    else:
        return -1
    if j < end and buf[j] == 46:
        k = _digits(buf, j + 1, end)
        if k == j + 1:
            return -1
        j = k
    if j < end and (buf[j] == 101 or buf[j] == 69):
        j += 1
        if j < end and (buf[j] == 43 or buf[j] == 45):
            j += 1
        k = _digits(buf, j, end)
        if k == j:
            return -1
        j = k
    return j


@njit(inline="always")
def _whole(buf: np.ndarray, i: int, end: int) -> tuple[int, int]:
    """A whole number of up to 18 digits at ``i`` (no fraction, exponent or ``-0``):
    (value, next position), next -1 otherwise."""
    negative = i < end and buf[i] == 45
    j = i + 1 if negative else i
    if j >= end or not 48 <= buf[j] <= 57:
        return 0, -1
    if buf[j] == 48:
        if negative:
            return 0, -1
        k = j + 1
    else:
        k = _digits(buf, j, end)
        if k - j > 18:
            return 0, -1
    if k < end and (buf[k] == 46 or buf[k] == 101 or buf[k] == 69):
        return 0, -1
    value = 0
    for m in range(j, k):
        value = value * 10 + (buf[m] - 48)
    return (-value if negative else value), k


@njit(inline="always")
def _key(buf: np.ndarray, first: int, end: int, names: np.ndarray, lengths: np.ndarray
         ) -> int:
    size = end - first
    for k in range(len(lengths)):
        if lengths[k] != size:
            continue
        same = True
        for j in range(size):
            if buf[first + j] != names[k, j]:
                same = False
                break
        if same:
            return k
    return -1


@njit
def _skip_string(buf, i, end):
    """Past the string opening at ``i``, escapes and all: the next position, or -1 when
    it is not a JSON string (or escapes half of a surrogate pair)."""
    j = i + 1
    while j < end:
        b = buf[j]
        if b == 34:
            return j + 1
        if b < 32:
            return -1
        if b == 92:
            e = buf[j + 1] if j + 1 < end else 0
            if e == 117:  # \uXXXX
                if j + 6 > end:
                    return -1
                code = 0
                for m in range(j + 2, j + 6):
                    h = buf[m]
                    if 48 <= h <= 57:
                        code = code * 16 + (h - 48)
                    elif 97 <= h <= 102:
                        code = code * 16 + (h - 87)
                    elif 65 <= h <= 70:
                        code = code * 16 + (h - 55)
                    else:
                        return -1
                if 0xD800 <= code <= 0xDFFF:
                    return -1
                j += 6
                continue
            if e in (34, 92, 47, 98, 102, 110, 114, 116):
                j += 2
                continue
            return -1
        j += 1
    return -1


@njit
def _skip_value(buf, i, end):
    """Past any JSON value at ``i`` (up to 62 levels deep): the next position, or -1."""
    objects = 0  # a bit per open level: 1 an object, 0 a list
    depth = 0
    while True:
        # a value at i
        i = _ws(buf, i, end)
        if i >= end:
            return -1
        b = buf[i]
        opened = False
        if b in (123, 91):
            if depth >= 62:
                return -1
            i = _ws(buf, i + 1, end)
            if i < end and buf[i] == (125 if b == 123 else 93):
                i += 1
            else:
                depth += 1
                objects = (objects << 1) | (1 if b == 123 else 0)
                opened = True
        elif b == 34:
            i = _skip_string(buf, i, end)
        elif b == 116:
            i = _literal(buf, i, end, 1)
        elif b == 102:
            i = _literal(buf, i, end, 2)
        elif b == 110:
            i = _literal(buf, i, end, 0)
        else:
            i = _number_end(buf, i, end)
        if i < 0:
            return -1
        if not opened:
            # after a value: close levels, or move on to the next item of one
            while True:
                if depth == 0:
                    return i
                i = _ws(buf, i, end)
                if i >= end:
                    return -1
                in_object = objects & 1
                if buf[i] == 44:
                    i += 1
                    break
                if buf[i] == (125 if in_object else 93):
                    i += 1
                    depth -= 1
                    objects >>= 1
                    continue
                return -1
        if depth > 0 and objects & 1:
            # an object's next key (or its first, just opened)
            i = _ws(buf, i, end)
            if i >= end or buf[i] != 34:
                return -1
            i = _skip_string(buf, i, end)
            if i < 0:
                return -1
            i = _ws(buf, i, end)
            if i >= end or buf[i] != 58:
                return -1
            i += 1


@njit(inline="always")
def _cards(buf: np.ndarray, i: int, end: int, pair: np.ndarray, line: int, seat: int,
           street: int, kind: int, nc: int, cap: int, c_line: np.ndarray,
           c_seat: np.ndarray, c_street: np.ndarray, c_kind: np.ndarray, c_pos: np.ndarray,
           c_code: np.ndarray) -> tuple[int, int]:
    """A list of two-letter cards at ``i`` (``[`` seen): (next position, cards so far)."""
    i = _ws(buf, i + 1, end)
    if i < end and buf[i] == 93:
        return i + 1, nc
    pos = 0
    while True:
        if i + 3 >= end or buf[i] != 34 or buf[i + 3] != 34 or nc >= cap or pos >= MAX_POS:
            return -1, nc
        code = pair[np.int64(buf[i + 1]) | (np.int64(buf[i + 2]) << 8)]
        if code == NOT_A_CARD:
            return -1, nc
        c_line[nc] = line
        c_seat[nc] = seat
        c_street[nc] = street
        c_kind[nc] = kind
        c_pos[nc] = pos
        c_code[nc] = code
        nc += 1
        pos += 1
        i, closed = _next_item(buf, i + 4, end, 93)
        if closed:
            return i, nc


@njit(inline="always")
def _scalar(buf: np.ndarray, i: int, end: int, holds: int
            ) -> tuple[int, int, int, int]:
    """A string, number or boolean (or null) at ``i``: (next, state, a, b)."""
    b = buf[i]
    if b == 110:
        return _literal(buf, i, end, 0), NULL, 0, 0
    if holds == TEXT:
        if b != 34:
            return -1, 0, 0, 0
        close = _string_end(buf, i, end)
        if close < 0:
            return -1, 0, 0, 0
        return close + 1, PRESENT, i + 1, close
    if holds == WHOLE:
        value, j = _whole(buf, i, end)
        return j, PRESENT, value, 0
    if holds == NUMBER:
        j = _number_end(buf, i, end)
        return j, PRESENT, i, j
    if holds == FLAG:
        if b == 116:
            return _literal(buf, i, end, 1), PRESENT, 1, 0
        return _literal(buf, i, end, 2), PRESENT, 0, 0
    return -1, 0, 0, 0


@njit(inline="always")
def _street(buf: np.ndarray, i: int, end: int, pair: np.ndarray, line: int, seat: int,
            street: int, t_names: np.ndarray, t_lengths: np.ndarray, t_kinds: np.ndarray,
            nc: int, cap: int, c_line: np.ndarray, c_seat: np.ndarray, c_street: np.ndarray,
            c_kind: np.ndarray, c_pos: np.ndarray, c_code: np.ndarray
            ) -> tuple[int, int]:
    """One street object at ``i`` (``{`` seen): (next position, cards so far)."""
    i = _ws(buf, i + 1, end)
    if i < end and buf[i] == 125:
        return i + 1, nc
    seen = 0
    while True:
        if i >= end or buf[i] != 34:
            return -1, nc
        close = _string_end(buf, i, end)
        if close < 0:
            return -1, nc
        k = _key(buf, i + 1, close, t_names, t_lengths)
        if k < 0 or (seen >> k) & 1:
            return -1, nc
        seen |= 1 << k
        i = _ws(buf, close + 1, end)
        if i >= end or buf[i] != 58:
            return -1, nc
        i = _ws(buf, i + 1, end)
        if i < end and buf[i] == 91:
            i, nc = _cards(buf, i, end, pair, line, seat, street, t_kinds[k], nc, cap,
                           c_line, c_seat, c_street, c_kind, c_pos, c_code)
        elif i < end and buf[i] == 110:
            i = _literal(buf, i, end, 0)
        else:
            return -1, nc
        if i < 0:
            return -1, nc
        i, closed = _next_item(buf, i, end, 125)
        if closed:
            return i, nc


@njit(inline="always")
def _streets(buf: np.ndarray, i: int, end: int, pair: np.ndarray, line: int, seat: int,
             t_names: np.ndarray, t_lengths: np.ndarray, t_kinds: np.ndarray, nc: int,
             cap: int, c_line: np.ndarray, c_seat: np.ndarray, c_street: np.ndarray,
             c_kind: np.ndarray, c_pos: np.ndarray, c_code: np.ndarray
             ) -> tuple[int, int, int]:
    """A list of streets at ``i`` (``[`` seen): (next position, streets, cards so far)."""
    i = _ws(buf, i + 1, end)
    if i < end and buf[i] == 93:
        return i + 1, 0, nc
    count = 0
    while True:
        if i >= end or buf[i] != 123 or count >= MAX_STREETS:
            return -1, count, nc
        count += 1
        i, nc = _street(buf, i, end, pair, line, seat, count, t_names, t_lengths, t_kinds,
                        nc, cap, c_line, c_seat, c_street, c_kind, c_pos, c_code)
        if i < 0:
            return -1, count, nc
        i, closed = _next_item(buf, i, end, 93)
        if closed:
            return i, count, nc


# One function for the line, its seats and theirs lists, on purpose: the steps above are
# inlined, and splitting this one up (measured) doubles the compile time or, not inlined,
# triples the reading time.
@njit(nogil=True, cache=True)
def scan_lines(buf, starts, ends, pair, h_names, h_lengths, h_holds,  # noqa: PLR0915
               s_names, s_lengths, s_holds, s_kinds, t_names, t_lengths, t_kinds, seat_cap,
               card_cap):
    """Read every line; see :func:`ofcstats.formats.scan.scan` for what comes back."""
    n = len(starts)
    n_hand_keys, n_seat_keys = len(h_lengths), len(s_lengths)
    ok = np.zeros(n, dtype=np.bool_)
    extra = np.zeros(n, dtype=np.bool_)
    h_state = np.zeros((n, n_hand_keys), dtype=np.int8)
    h_a = np.zeros((n, n_hand_keys), dtype=np.int64)
    h_b = np.zeros((n, n_hand_keys), dtype=np.int64)
    s_line = np.empty(seat_cap, dtype=np.int64)
    s_index = np.empty(seat_cap, dtype=np.int64)
    s_state = np.empty((seat_cap, n_seat_keys), dtype=np.int8)
    s_a = np.empty((seat_cap, n_seat_keys), dtype=np.int64)
    s_b = np.empty((seat_cap, n_seat_keys), dtype=np.int64)
    s_streets = np.empty(seat_cap, dtype=np.int64)
    c_line = np.empty(card_cap, dtype=np.int64)
    c_seat = np.empty(card_cap, dtype=np.int8)
    c_street = np.empty(card_cap, dtype=np.int16)
    c_kind = np.empty(card_cap, dtype=np.uint8)
    c_pos = np.empty(card_cap, dtype=np.int16)
    c_code = np.empty(card_cap, dtype=np.uint8)
    c_groups = np.zeros(2 * MAX_KINDS, dtype=np.int64)  # cards of read lines by group
    # Borrowed views of the arrays the steps below are given (see _borrow).
    buf, pair = _borrow(buf), _borrow(pair)
    h_names, h_lengths = _borrow(h_names), _borrow(h_lengths)
    s_names, s_lengths = _borrow(s_names), _borrow(s_lengths)
    t_names, t_lengths, t_kinds = _borrow(t_names), _borrow(t_lengths), _borrow(t_kinds)
    cl, cs, ct = _borrow(c_line), _borrow(c_seat), _borrow(c_street)
    ck, cp, cc = _borrow(c_kind), _borrow(c_pos), _borrow(c_code)
    ns = 0
    nc = 0
    for line in range(n):
        end = ends[line]
        ns0, nc0 = ns, nc
        i = _ws(buf, starts[line], end)
        good = i < end and buf[i] == 123
        if good:
            i = _ws(buf, i + 1, end)
            good = i < end
        if good and buf[i] == 125:
            i += 1
        elif good:
            seen = 0
            while True:
                # a key
                if i >= end or buf[i] != 34:
                    good = False
                    break
                close = _string_end(buf, i, end)
                if close < 0:
                    good = False
                    break
                k = _key(buf, i + 1, close, h_names, h_lengths)
                if k >= 0 and (seen >> k) & 1:
                    good = False
                    break
                if k >= 0:
                    seen |= 1 << k
                i = _ws(buf, close + 1, end)
                if i >= end or buf[i] != 58:
                    good = False
                    break
                i = _ws(buf, i + 1, end)
                if i >= end:
                    good = False
                    break
                holds = h_holds[k] if k >= 0 else -1
                if k < 0:  # a key the format does not know: kept whole in ``extra``
                    i = _skip_value(buf, i, end)
                    extra[line] = True
                elif holds != SEATS:
                    i, state, a, b = _scalar(buf, i, end, holds)
                    h_state[line, k], h_a[line, k], h_b[line, k] = state, a, b
                elif buf[i] == 110:
                    i = _literal(buf, i, end, 0)
                    h_state[line, k] = NULL
                elif buf[i] == 91:
                    h_state[line, k] = PRESENT
                    i = _ws(buf, i + 1, end)
                    if i < end and buf[i] == 93:
                        i += 1
                    else:
                        index = 0
                        while True:
                            # a seat object
                            if i >= end or buf[i] != 123 or ns >= seat_cap \
                                    or index >= MAX_SEATS:
                                i = -1
                                break
                            index += 1
                            s = ns
                            ns += 1
                            s_line[s] = line
                            s_index[s] = index
                            for q in range(n_seat_keys):
                                s_state[s, q] = MISSING
                            s_streets[s] = 0
                            i = _ws(buf, i + 1, end)
                            if i < end and buf[i] == 125:
                                i += 1
                            else:
                                seat_seen = 0
                                while True:
                                    if i >= end or buf[i] != 34:
                                        i = -1
                                        break
                                    close = _string_end(buf, i, end)
                                    q = _key(buf, i + 1, close, s_names, s_lengths) \
                                        if close > 0 else -1
                                    if q < 0 or (seat_seen >> q) & 1:
                                        i = -1
                                        break
                                    seat_seen |= 1 << q
                                    i = _ws(buf, close + 1, end)
                                    if i >= end or buf[i] != 58:
                                        i = -1
                                        break
                                    i = _ws(buf, i + 1, end)
                                    if i >= end:
                                        i = -1
                                        break
                                    seat_holds = s_holds[q]
                                    if buf[i] == 110:
                                        i = _literal(buf, i, end, 0)
                                        s_state[s, q] = NULL
                                    elif seat_holds == CARDS:
                                        if buf[i] != 91:
                                            i = -1
                                            break
                                        s_state[s, q] = PRESENT
                                        i, nc = _cards(buf, i, end, pair, line, index, 0,
                                                       s_kinds[q], nc, card_cap, cl, cs, ct, ck, cp,
                                                       cc)
                                    elif seat_holds == STREETS:
                                        if buf[i] != 91:
                                            i = -1
                                            break
                                        s_state[s, q] = PRESENT
                                        i, count, nc = _streets(
                                            buf, i, end, pair, line, index, t_names,
                                            t_lengths, t_kinds, nc, card_cap, cl, cs, ct,
                                            ck, cp, cc)
                                        s_streets[s] = count
                                    else:
                                        i, state, a, b = _scalar(buf, i, end, seat_holds)
                                        s_state[s, q], s_a[s, q], s_b[s, q] = state, a, b
                                    if i < 0:
                                        break
                                    i, closed = _next_item(buf, i, end, 125)
                                    if closed:
                                        break
                            if i < 0:
                                break
                            i, closed = _next_item(buf, i, end, 93)
                            if closed:
                                break
                else:
                    i = -1
                if i < 0:
                    good = False
                    break
                i, closed = _next_item(buf, i, end, 125)
                if closed:
                    good = i >= 0
                    break
        if good and _ws(buf, i, end) == end:
            ok[line] = True
            for c in range(nc0, nc):  # (just written: in cache)
                c_groups[2 * ck[c] + (ct[c] == 0)] += 1
        else:
            ns, nc = ns0, nc0
    return (ok, extra, h_state, h_a, h_b, ns, s_line, s_index, s_state, s_a, s_b, s_streets,
            nc, c_line, c_seat, c_street, c_kind, c_pos, c_code, c_groups)


@njit(nogil=True, cache=True)
def card_columns(kept, hand_of_line, c_line, c_seat, c_street, c_kind, c_pos, c_code,
                 counted, n_kinds):
    """The cards of the kept lines in the order of the cards frame: kind by kind, street
    cards before those of the final rows, then as read (hand, seat, street, position).
    ``counted``: the cards of each group (kind, then street or not) when the kept lines
    are those the scan read (its counts), else empty (counted here)."""
    groups = 2 * n_kinds
    counts = np.zeros(groups + 1, dtype=np.int64)
    if len(counted):
        counts[1:] = counted[:groups]
    else:
        for c in range(len(c_line)):
            if kept[c_line[c]]:
                counts[1 + 2 * c_kind[c] + (c_street[c] == 0)] += 1
    for g in range(groups):
        counts[g + 1] += counts[g]
    total = counts[groups]
    hand = np.empty(total, dtype=np.int32)
    seat = np.empty(total, dtype=np.int32)
    street = np.empty(total, dtype=np.int32)
    kind = np.empty(total, dtype=np.uint8)
    pos = np.empty(total, dtype=np.int32)
    code = np.empty(total, dtype=np.uint8)
    for c in range(len(c_line)):
        line = c_line[c]
        if kept[line]:
            g = 2 * c_kind[c] + (c_street[c] == 0)
            at = counts[g]
            counts[g] = at + 1
            hand[at] = hand_of_line[line]
            seat[at] = c_seat[c]
            street[at] = c_street[c]
            kind[at] = c_kind[c]
            pos[at] = c_pos[c]
            code[at] = c_code[c]
    return hand, seat, street, kind, pos, code
