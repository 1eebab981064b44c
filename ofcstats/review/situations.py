"""The situations a decision is grouped under, as a player recognises them.

Each is read from what the player saw before choosing (the board before the street and
the cards dealt), never from the choice, so every player's decisions of a situation are
the same kind of spot. A decision is in several at once (its street, and any draw it
holds); a situation's losses are compared with the table's in the same situation.

>>> [name for name, _ in SITUATIONS][:4]
['street 1', 'street 2', 'street 3', 'street 4']
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ofcstats.review.core import Position

_MOST_STREETS = 8  # ofc-classic: the first five, then eight streets of one card
QUEEN = 10  # rank index: 2 is 0, queen 10, ace 12

SITUATIONS: tuple[tuple[str, str], ...] = (
    *((f"street {n}", f"the street {n} decision") for n in range(1, _MOST_STREETS + 2)),
    ("fantasyland set", "the 13 to 17 cards of a fantasyland hand set at once"),
    ("first five: pair", "the first five cards hold a pair or better"),
    ("first five: three to a flush", "the first five cards hold three or more of a suit"),
    ("first five: high cards", "the first five cards hold neither a pair nor three of a "
                               "suit"),
    ("chasing fantasyland", "the top row holds a queen, king or ace, unpaired, with "
                            "room left: a pair of queens or better there enters "
                            "fantasyland"),
    ("flush draw", "the middle or bottom holds three or four cards, all of one suit"),
    ("straight draw", "the middle or bottom holds three or four cards of different ranks "
                      "within five in a row (the ace high or low)"),
    ("discard", "a street that throws a card away (Pineapple after the first five)"),
)
"""Every situation's name and what puts a decision in it, in the order tables show
them."""

ORDER = {name: i for i, (name, _) in enumerate(SITUATIONS)}


def _ranks(cards: npt.NDArray[np.uint8]) -> npt.NDArray[np.int64]:
    return cards.astype(np.int64) >> 2


def _straight_draw(cards: npt.NDArray[np.uint8]) -> bool:
    """Three or four cards of different ranks that fit in five ranks in a row.

    >>> from ofcstats.cards import parse_cards
    >>> [_straight_draw(np.array(parse_cards(c), np.uint8))
    ...  for c in ("9h Th Qd", "Ah 2d 4c 5s", "9h Th Ad", "9h 9d Th", "4h 5d")]
    [True, True, False, False, False]
    """
    ranks = set(_ranks(cards).tolist())
    if not 3 <= cards.size <= 4 or len(ranks) != cards.size:
        return False
    spans = (ranks, {-1 if r == 12 else r for r in ranks})  # the ace high, or low
    return any(max(s) - min(s) <= 4 for s in spans)


def _flush_draw(cards: npt.NDArray[np.uint8]) -> bool:
    return 3 <= cards.size <= 4 and np.unique(cards & 3).size == 1


def situations(p: Position) -> list[str]:
    """The situations of a decision, in :data:`SITUATIONS` order.

    >>> from ofcstats.cards import parse_cards
    >>> from ofcstats.rules import load_ruleset
    >>> from ofcstats.variants import Variant
    >>> def at(index, board, rows, dealt, chosen):
    ...     cards = np.array(parse_cards(dealt), np.uint8)
    ...     return Position(1, "h", 1, "p", index + 1, index, Variant.PINEAPPLE,
    ...                     load_ruleset("american"), cards, np.array(chosen, np.int8),
    ...                     np.array(parse_cards(board), np.uint8), np.array(rows, np.int8),
    ...                     np.zeros(52, bool), np.zeros((2, 13), np.uint8))
    >>> situations(at(0, "", [], "As Ad 7h 8h 9h", [0, 0, 2, 2, 2]))
    ['street 1', 'first five: pair', 'first five: three to a flush']
    >>> situations(at(2, "Kd 7h 8h 9h 2c", [0, 2, 2, 2, 1], "3s 4s 5s", [1, 1, 3]))
    ['street 3', 'chasing fantasyland', 'flush draw', 'straight draw', 'discard']
    """
    if p.fantasyland:
        return ["fantasyland set"]
    out = [f"street {p.index + 1}"]
    if p.index == 0:
        pair = np.unique(_ranks(p.dealt)).size < p.dealt.size
        flush = np.bincount(p.dealt & 3, minlength=4).max() >= 3
        if pair:
            out.append("first five: pair")
        if flush:
            out.append("first five: three to a flush")
        if not pair and not flush:
            out.append("first five: high cards")
    else:
        top = p.board[p.board_rows == 0]
        ranks = _ranks(top)
        if 0 < top.size < 3 and np.unique(ranks).size == top.size and ranks.max() >= QUEEN:
            out.append("chasing fantasyland")
        rows = [p.board[p.board_rows == r] for r in (1, 2)]
        if any(_flush_draw(r) for r in rows):
            out.append("flush draw")
        if any(_straight_draw(r) for r in rows):
            out.append("straight draw")
    if p.discards:
        out.append("discard")
    return out
