"""Turning nested Arrow columns (lists of seats, lists of streets, lists of cards) into
the flat frames of a :class:`~ofcstats.records.RawBatch`, without a loop per hand.

A JSON reader gives hands as nested lists; every level here is flattened with its
parents' row numbers (``list_parent_indices``), and card texts become card codes by
looking their two bytes up in a table, so a million cards cost a few numpy passes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from ofcstats.cards import RANKS, SUITS, spellings
from ofcstats.records import NOT_A_CARD, RAW_CARDS_SCHEMA, exclusive_cumsum

_RANK = np.full(256, NOT_A_CARD, dtype=np.uint8)
_SUIT = np.full(256, NOT_A_CARD, dtype=np.uint8)
for _i, _r in enumerate(RANKS):
    _RANK[ord(_r)] = _RANK[ord(_r.lower())] = _i
for _i, _s in enumerate(SUITS):
    _SUIT[ord(_s)] = _SUIT[ord(_s.upper())] = _i
# Both bytes of a two-byte text at once: a card's code by the text read as a
# little-endian 16-bit number.
PAIR = np.full(1 << 16, NOT_A_CARD, dtype=np.uint8)
_first, _second = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
PAIR[_first.ravel() | (_second.ravel() << 8)] = np.where(
    (_RANK[_first] != NOT_A_CARD) & (_SUIT[_second] != NOT_A_CARD),
    _RANK[_first].astype(np.int64) * 4 + _SUIT[_second], NOT_A_CARD).ravel()
del _first, _second
_SPELLINGS = spellings()
_SPELLING_TEXTS = pa.array(list(_SPELLINGS), pa.string())
_SPELLING_CODES = np.array(list(_SPELLINGS.values()), dtype=np.uint8)


def card_codes(texts: pa.Array) -> np.ndarray:
    """Card codes of a string array; :data:`NOT_A_CARD` where a text is not a card.

    >>> card_codes(pa.array(["Ah", "2c", "10♠", "Zz", None])).tolist()
    [50, 0, 35, 255, 255]
    >>> card_codes(pa.array(["xx", "Ah", "2c", "td", "Zz", "KS"]).slice(1)).tolist()
    [50, 0, 33, 255, 47]
    """
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    texts = texts.cast(pa.string())
    n = len(texts)
    if n == 0:
        return np.zeros(0, dtype=np.uint8)
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int32)[texts.offset: texts.offset + n + 1]
    data_buffer = texts.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else \
        np.zeros(0, dtype=np.uint8)
    start, end = int(offsets[0]), int(offsets[-1])
    if end - start == 2 * n and not texts.null_count and \
            np.array_equal(offsets, np.arange(start, end + 1, 2, dtype=offsets.dtype)):
        # Every text has two bytes (the usual case): one lookup per card.
        codes = PAIR[np.frombuffer(data_buffer, dtype="<u2", count=n, offset=start)]
    else:
        lengths = np.diff(offsets)
        two = lengths == 2
        if texts.null_count:
            two &= np.asarray(texts.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        codes = np.full(n, NOT_A_CARD, dtype=np.uint8)
        where = offsets[:-1][two]
        codes[two] = PAIR[data[where].astype(np.uint16) | (data[where + 1].astype(np.uint16) << 8)]
    # Rare spellings ("10h", "A♠", lower case ranks are above) go through a hash lookup.
    odd = np.flatnonzero(codes == NOT_A_CARD)
    if len(odd):
        found = pc.index_in(pc.utf8_trim_whitespace(texts.take(pa.array(odd))),
                            value_set=_SPELLING_TEXTS)
        hit = found.is_valid().to_numpy(zero_copy_only=False)
        codes[odd[hit]] = _SPELLING_CODES[found.drop_null().to_numpy()]
    return codes


@dataclass
class Level:
    """One flattened list level: the child values and, per child, the parent row and the
    position within its parent's list (0-based). ``lengths`` has a count per parent
    (0 for a null list) and ``valid`` says which parents had a list at all."""

    values: pa.Array
    parent: np.ndarray
    pos: np.ndarray
    lengths: np.ndarray
    valid: np.ndarray


def flatten(lists: pa.Array) -> Level:
    """Flatten one list column, keeping each child's parent and position."""
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy().astype(np.int64)
    valid = lists.is_valid().to_numpy(zero_copy_only=False)
    parent = pc.list_parent_indices(lists).to_numpy()
    pos = np.arange(len(parent), dtype=np.int64) - exclusive_cumsum(lengths)[parent]
    return Level(values=lists.flatten(), parent=parent, pos=pos, lengths=lengths, valid=valid)


def series(values: pa.Array | pa.ChunkedArray) -> pl.Series:
    """An Arrow array as a Polars series."""
    out = pl.from_arrow(values)
    assert isinstance(out, pl.Series)
    return out


def field(struct: pa.Array, name: str) -> pa.Array:
    """A field of a struct array, null where the struct itself is null."""
    return pc.struct_field(struct, name)


@dataclass
class CardList:
    """One kind of card list, flattened: per card its owner row (a seat or a street) and
    position, and its code (``NOT_A_CARD`` when the text is not a card)."""

    owner: np.ndarray
    pos: np.ndarray
    codes: np.ndarray
    texts: pa.Array


def card_list(lists: pa.Array) -> CardList:
    """Flatten a list-of-card-texts column."""
    level = flatten(lists)
    return CardList(owner=level.parent, pos=level.pos, codes=card_codes(level.values),
                    texts=level.values)


def cards_frame(parts: list[tuple[int, CardList, np.ndarray, np.ndarray, np.ndarray]]
                ) -> pl.DataFrame:
    """The cards frame from ``(kind, cards, hand, seat_index, street)`` parts, where the
    last three arrays are indexed by each card's owner row."""
    if not parts:
        return pl.DataFrame(schema=RAW_CARDS_SCHEMA)
    kinds = [kind for kind, *_ in parts]
    if kinds != sorted(kinds):
        raise ValueError(f"card lists must come kind by kind (RAW_CARDS_SCHEMA), not {kinds}")
    hand = np.concatenate([h[c.owner] for _, c, h, _, _ in parts])
    seat_index = np.concatenate([s[c.owner] for _, c, _, s, _ in parts])
    street = np.concatenate([t[c.owner] for _, c, _, _, t in parts])
    kind = np.concatenate([np.full(len(c.codes), k, dtype=np.uint8) for k, c, _, _, _ in parts])
    pos = np.concatenate([c.pos for _, c, _, _, _ in parts])
    codes = np.concatenate([c.codes for _, c, _, _, _ in parts])
    bad = codes == NOT_A_CARD
    columns = {"hand": hand, "seat_index": seat_index, "street": street, "kind": kind,
               "pos": pos}
    frame = pl.DataFrame({name: pl.Series(name, values, dtype=RAW_CARDS_SCHEMA[name])
                          for name, values in columns.items()})
    if not bad.any():
        return frame.with_columns(code=pl.Series("code", codes, dtype=pl.UInt8),
                                  text=pl.lit(None, dtype=pl.String))
    # Rare path: keep the text of what is not a card, for the reason.
    texts = pa.concat_arrays([c.texts.cast(pa.string()) for _, c, _, _, _ in parts])
    shown = pc.if_else(texts.is_null(), "null", texts)
    return frame.with_columns(
        code=pl.from_arrow(pa.array(codes, mask=bad)),  # type: ignore[arg-type]
        text=pl.from_arrow(pc.if_else(pa.array(bad), shown, pa.scalar(None, pa.string()))),  # type: ignore[arg-type]
    )
