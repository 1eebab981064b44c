"""Card lists and lists of streets read straight from their JSON bytes, column-wise.

The JSON decoder hands each seat's ``streets`` (and ``top``, ``middle``, ``bottom``) over
as its raw bytes; all seats' bytes are joined and scanned here with a few numpy passes
instead of making a Python string per card. The scan accepts only the compact form
writers use: ``[{"dealt":["Ah","Kd"],"top":["Ah"],...},...]`` with no spaces, keys among
the five street lists, cards of two characters, each list at most once per street
(or the same with a space after each comma and colon, as Python writes JSON). A
value in any other form (spaces, ``null`` lists, ``"10h"``, escapes, an empty street
object) is marked, and its line goes to the general reader, which reads any JSON and
words every problem; so what the scan accepts, both readers read alike.

How: every string is delimited by quotes (no backslash is allowed in a scanned value),
so the quotes give every string token. The bytes between two tokens (the gap) say what
the tokens are: ``,`` joins two cards, ``:[`` a key and its first card, ``]},{`` the
last card of a street and the first key of the next. A gap that is not in the table,
or a token whose gaps disagree about whether it is a key, fails its value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ofcstats.formats.nested import RANK_OF_BYTE, SUIT_OF_BYTE
from ofcstats.records import KIND_NAMES, NOT_A_CARD, exclusive_cumsum

_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_GAP_BYTES = 8
_CARD, _KEY = 0, 1
_KEY_KIND = np.full(16 * 256, -1, dtype=np.int8)  # kind by (length, first letter)
for _k, _name in enumerate(KIND_NAMES):
    _KEY_KIND[len(_name) * 256 + ord(_name[0])] = _k
_POPCOUNT = np.array([bin(i).count("1") for i in range(32)], dtype=np.int64)

# gap -> (token before is a key, token after is a key, the token after opens a street)
# None for "no token" (the value's start or end).
_STREET_GAPS: dict[bytes, tuple[int | None, int | None, bool]] = {
    b"[{": (None, _KEY, True),
    b",": (_CARD, _CARD, False),
    b":[": (_KEY, _CARD, False),
    b"],": (_CARD, _KEY, False),
    b"]},{": (_CARD, _KEY, True),
    b":[],": (_KEY, _KEY, False),
    b":[]},{": (_KEY, _KEY, True),
    b"]}]": (_CARD, None, False),
    b":[]}]": (_KEY, None, False),
    # As Python's json.dumps writes by default, with a space after "," and ":".
    b", ": (_CARD, _CARD, False),
    b": [": (_KEY, _CARD, False),
    b"], ": (_CARD, _KEY, False),
    b"]}, {": (_CARD, _KEY, True),
    b": [], ": (_KEY, _KEY, False),
    b": []}, {": (_KEY, _KEY, True),
    b": []}]": (_KEY, None, False),
}
_LIST_GAPS: dict[bytes, tuple[int | None, int | None, bool]] = {
    b"[": (None, _CARD, False),
    b",": (_CARD, _CARD, False),
    b", ": (_CARD, _CARD, False),
    b"]": (_CARD, None, False),
}


@dataclass
class Scan:
    """Values scanned: per value ``ok``, ``null`` and ``count`` (streets, or cards of a
    plain list); per card its value, street (1.., 0 in a plain list), kind and position
    in its list, and its code."""

    ok: np.ndarray
    null: np.ndarray
    count: np.ndarray
    value: np.ndarray
    street: np.ndarray
    kind: np.ndarray
    pos: np.ndarray
    code: np.ndarray


def scan_streets(values: Sequence[bytes | memoryview | object]) -> Scan:
    """Scan ``streets`` values (lists of street objects)."""
    return _scan(values, _STREET_GAPS, streets=True)


def scan_cards(values: Sequence[bytes | memoryview | object], kind: int) -> Scan:
    """Scan plain card lists (a seat's final ``top``, ``middle`` or ``bottom``)."""
    scan = _scan(values, _LIST_GAPS, streets=False)
    scan.kind[:] = kind
    return scan


def _scan(values: Sequence[object], gaps: dict[bytes, tuple[int | None, int | None, bool]],
          *, streets: bool) -> Scan:
    n = len(values)
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=n)  # type: ignore[arg-type]
    data = b"".join(values)  # type: ignore[arg-type]
    view = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(1, dtype=np.uint8)
    start = exclusive_cumsum(lengths)
    first = view[np.minimum(start, len(view) - 1)]
    null = (lengths == 4) & (first == ord("n"))
    ok = np.ones(n, dtype=bool)
    t = _tokens(view, b"\\" in data, start, start + lengths, ok)
    bad_token, is_key, before = _roles(view, t, start, start + lengths, gaps)
    length = t.closes - t.opens - 1
    key_at = np.flatnonzero(is_key)
    kind_of_key = _key_kinds(view, t.opens[key_at] + 1, length[key_at])
    bad_token[key_at[kind_of_key < 0]] = True
    # Cards: two characters, a rank and a suit.
    card_at = np.flatnonzero(~is_key)
    at = t.opens[card_at] + 1
    rank = RANK_OF_BYTE[view[at]]
    suit = SUIT_OF_BYTE[view[np.minimum(at + 1, len(view) - 1)]]
    code = rank * 4 + suit
    bad_token[card_at[(length[card_at] != 2) | (rank == NOT_A_CARD)
                      | (suit == NOT_A_CARD)]] = True

    card_owner = t.owner[card_at]
    if streets:
        _, _, opens_street = _gap_meanings(gaps)
        count, card_street, card_kind, pos = _street_layout(
            t, key_at, kind_of_key, opens_street[before[key_at]], card_owner, bad_token, n)
    else:
        card_street = np.zeros(len(card_at), dtype=np.int64)
        card_kind = np.zeros(len(card_at), dtype=np.int64)
        pos = card_at - t.first[card_owner]
        count = t.count.copy()

    ok &= np.bincount(t.owner[bad_token], minlength=n) == 0
    # Values without tokens: ``null``, or an empty list.
    empty = t.count == 0
    ok[empty] &= null[empty] | ((lengths[empty] == 2) & (first[empty] == ord("[")) & (
        view[np.minimum(start[empty] + 1, len(view) - 1)] == ord("]")))
    ok[null] = True
    count[null | ~ok] = 0
    keep = ok[card_owner]
    if keep.all():
        return Scan(ok=ok, null=null, count=count, value=card_owner, street=card_street,
                    kind=card_kind.astype(np.uint8), pos=pos, code=code.astype(np.uint8))
    return Scan(ok=ok, null=null, count=count, value=card_owner[keep],
                street=card_street[keep], kind=card_kind[keep].astype(np.uint8),
                pos=pos[keep], code=code[keep].astype(np.uint8))


@dataclass
class _Tokens:
    """The strings of the values: where each opens and closes, and whose it is; per
    value its first token and how many it has."""

    opens: np.ndarray
    closes: np.ndarray
    owner: np.ndarray
    first: np.ndarray
    count: np.ndarray


def _tokens(view: np.ndarray, backslash: bool, start: np.ndarray, end: np.ndarray,
            ok: np.ndarray) -> _Tokens:
    quotes = np.flatnonzero(view == _QUOTE)
    if backslash:
        # A value with a backslash (whose quotes may not pair up) fails; drop its quotes
        # so the others pair up right.
        ok &= ~_holds(view == _BACKSLASH, start, end)
        q_owner = np.searchsorted(start, quotes, side="right") - 1
        quotes = quotes[ok[q_owner]]
    # Positions fit in 32 bits (a batch is far below 2 GB): half the memory to stream.
    opens = quotes[0::2].astype(np.int32)
    closes = quotes[1::2].astype(np.int32)
    first = np.searchsorted(opens, start)
    count = np.diff(np.r_[first, len(opens)])
    owner = np.repeat(np.arange(len(start), dtype=np.int32), count)
    return _Tokens(opens=opens, closes=closes, owner=owner, first=first, count=count)


def _roles(view: np.ndarray, t: _Tokens, start: np.ndarray, end: np.ndarray,
           gaps: dict[bytes, tuple[int | None, int | None, bool]]
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per token: whether its gaps fail it, whether it is a key, and its gap before's
    class."""
    m = len(t.opens)
    t_first = np.zeros(m, dtype=bool)
    t_first[t.first[t.count > 0]] = True
    t_last = np.zeros(m, dtype=bool)
    t_last[(t.first + t.count - 1)[t.count > 0]] = True
    gap_start = np.empty(m, dtype=np.int32)
    gap_start[1:] = t.closes[:-1] + 1
    gap_start[t_first] = start[t.owner[t_first]]
    before = _gap_class(view, gap_start, t.opens - gap_start, gaps)
    last_close = t.closes[t_last]
    after_last = _gap_class(view, last_close + 1, end[t.owner[t_last]] - last_close - 1, gaps)
    prev_kind, next_kind, _ = _gap_meanings(gaps)
    # The kind of each token, as its gap before says and as its gap after says.
    said_before = next_kind[before]
    said_before[t_first != (prev_kind[before] == _NONE)] = _BAD  # start gaps at starts only
    said_after = np.empty(m, dtype=np.int8)
    said_after[:-1] = prev_kind[before[1:]]
    said_after[t_last] = np.where(next_kind[after_last] == _NONE, prev_kind[after_last], _BAD)
    return (said_before != said_after) | (said_before < 0), said_before == _KEY, before


def _key_kinds(view: np.ndarray, key_start: np.ndarray, key_length: np.ndarray
               ) -> np.ndarray:
    """Keys: one of the five names, told apart by length and first letter, then the
    other letters compared; -1 for any other key."""
    kind_of_key = _KEY_KIND[np.minimum(key_length, 15) * 256 + view[key_start]]
    for k, name in enumerate(KIND_NAMES):
        hit = np.flatnonzero(kind_of_key == k)
        hit_start = key_start[hit]
        wrong = np.zeros(len(hit), dtype=bool)
        for b, byte in enumerate(name.encode()[1:], start=1):
            wrong |= view[hit_start + b] != byte
        kind_of_key[hit[wrong]] = -1
    return kind_of_key


def _street_layout(t: _Tokens, key_at: np.ndarray, kind_of_key: np.ndarray,
                   new_street: np.ndarray, card_owner: np.ndarray, bad_token: np.ndarray,
                   n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Streets per value, and per card its street, kind and position: a new street at
    each key after an opening gap, a list's cards the tokens up to the next key. (Tokens
    before a value's first key only occur in failed values.) Fails repeated keys."""
    m = len(t.opens)
    street_of_key = np.cumsum(new_street)
    per_value = np.bincount(t.owner[key_at[new_street]], minlength=n)
    in_list = np.diff(np.r_[key_at, m]) - 1
    orphans = int(key_at[0]) if len(key_at) else m
    runs = np.r_[orphans, in_list]
    card_kind = np.r_[np.full(orphans, 255), np.repeat(kind_of_key, in_list)]
    pos = np.arange(len(card_owner)) - np.repeat(exclusive_cumsum(runs), runs)
    card_street = np.r_[np.zeros(orphans, dtype=np.int64), np.repeat(street_of_key, in_list)] \
        - exclusive_cumsum(per_value)[card_owner]
    # Each list at most once per street: the kinds' bits of a street add up without a
    # carry exactly when no kind repeats.
    street_row = np.maximum(street_of_key - 1, 0)
    bits = np.bincount(street_row, weights=1 << np.maximum(kind_of_key, 0)).astype(np.int64)
    keys = np.bincount(street_row, minlength=len(bits))
    repeated = np.flatnonzero((bits >= len(_POPCOUNT))
                              | (_POPCOUNT[np.minimum(bits, len(_POPCOUNT) - 1)] != keys)) + 1
    if len(repeated):
        bad_token[key_at[np.isin(street_of_key, repeated)]] = True
    return per_value, card_street, card_kind, pos


_NONE, _BAD = -1, -2


def _gap_meanings(gaps: dict[bytes, tuple[int | None, int | None, bool]]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per gap class (its index in ``gaps``, then one more for unknown gaps): the kind of
    the token before and after it, and whether it opens a street."""
    meanings = [*gaps.values(), (_BAD, _BAD, False)]
    prev_kind = np.array([_NONE if m[0] is None else m[0] for m in meanings], dtype=np.int8)
    next_kind = np.array([_NONE if m[1] is None else m[1] for m in meanings], dtype=np.int8)
    return prev_kind, next_kind, np.array([m[2] for m in meanings], dtype=bool)


def _gap_lut(gaps: dict[bytes, tuple[int | None, int | None, bool]]) -> np.ndarray:
    """Gap class by (length, first byte, last byte); unique for every table here."""
    lut = np.full((_GAP_BYTES + 1) << 16, len(gaps), dtype=np.int8)
    for index, gap in enumerate(gaps):
        slot = (len(gap) << 16) | (gap[0] << 8) | gap[-1]
        assert lut[slot] == len(gaps), gap
        lut[slot] = index
    return lut


_LUTS = {id(gaps): _gap_lut(gaps) for gaps in (_STREET_GAPS, _LIST_GAPS)}


def _gap_class(view: np.ndarray, at: np.ndarray, length: np.ndarray,
               gaps: dict[bytes, tuple[int | None, int | None, bool]]) -> np.ndarray:
    """The index in ``gaps`` of each gap's bytes, ``len(gaps)`` when it is none of them.

    Gaps are told apart by their length and first and last bytes, then the bytes in
    between are compared for the few classes that have any."""
    last = view[np.maximum(at + length - 1, 0)]
    key = (np.minimum(length, _GAP_BYTES).astype(np.int32) << 16) \
        | (view[np.minimum(at, len(view) - 1)].astype(np.int32) << 8) | last
    out = _LUTS[id(gaps)][key]
    out[(length <= 0) | (length > _GAP_BYTES)] = len(gaps)
    long_gaps = np.flatnonzero(length > 2)
    for index, gap in enumerate(gaps):
        if len(gap) <= 2:
            continue
        hit = long_gaps[out[long_gaps] == index]
        for b in range(1, len(gap) - 1):
            out[hit[view[at[hit] + b] != gap[b]]] = len(gaps)
    return out


def _holds(mask: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per value, whether ``mask`` is set anywhere in its bytes."""
    at = np.flatnonzero(mask)
    owner = np.searchsorted(start, at, side="right") - 1
    return np.bincount(owner, minlength=len(start)) > 0 if len(at) else \
        np.zeros(len(start), dtype=bool)


