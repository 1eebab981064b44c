"""Card codes, parsing and printing (docs/rules.md §1).

A card is a small integer ``rank * 4 + suit``: rank 0 is the deuce and 12 the ace,
suits are clubs, diamonds, hearts, spades (0..3). Bulk work keeps cards as ``uint8``
arrays of these codes; text is only for input and output.

>>> parse_card("Ah"), parse_card("10♣"), parse_card("td")
(50, 32, 33)
>>> format_cards(parse_cards("Ah Kd 7c"))
'Ah Kd 7c'
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from ofcstats.errors import CardError

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK_SIZE = 52
TWO_OF_SPADES = 3  # rank 0 (deuce) * 4 + suit 3 (spades): the Finnish bonus card

_SUIT_SYMBOLS = {"♣": "c", "♦": "d", "♥": "h", "♠": "s", "♧": "c", "♢": "d", "♡": "h", "♤": "s"}
_RANK_TEXT = "10|[2-9tjqka]"
_SUIT_TEXT = "[cdhs" + "".join(_SUIT_SYMBOLS) + "]"
_CARD_RE = re.compile(f"({_RANK_TEXT})({_SUIT_TEXT})", re.IGNORECASE)
_CARDS_RE = re.compile(f"(?:\\s|,)*({_RANK_TEXT})({_SUIT_TEXT})(?:\\s|,)*", re.IGNORECASE)

HELP = (
    "a card is a rank 2-9, T (or 10), J, Q, K, A followed by a suit s, h, d, c "
    "(or ♠ ♥ ♦ ♣), for example Ah, Td, 10♣"
)


def _code(rank_text: str, suit_text: str) -> int:
    rank = RANKS.index("T" if rank_text == "10" else rank_text.upper())
    suit = SUITS.index(_SUIT_SYMBOLS.get(suit_text, suit_text.lower()))
    return rank * 4 + suit


def parse_card(text: str) -> int:
    """Parse one card, forgiving about case, ``10`` for ``T`` and suit symbols.

    >>> parse_card("As"), parse_card("2c")
    (51, 0)
    >>> parse_card("1s")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ofcstats.errors.CardError: '1s' is not a card: a card is a rank 2-9, T (or 10), ...
    """
    if not isinstance(text, str):
        raise CardError(f"{text!r} is not a card: {HELP}")
    match = _CARD_RE.fullmatch(text.strip())
    if match is None:
        raise CardError(f"{text!r} is not a card: {HELP}")
    return _code(match.group(1), match.group(2))


def parse_cards(cards: str | Iterable[str]) -> list[int]:
    """Parse cards from a list of texts or from one text, spaced, comma-separated or run together.

    >>> parse_cards("AhKd 7c,2s")
    [50, 45, 20, 3]
    >>> parse_cards(["Qs", "qh"])
    [43, 42]
    """
    if isinstance(cards, str):
        codes: list[int] = []
        pos = 0
        text = cards
        while pos < len(text):
            match = _CARDS_RE.match(text, pos)
            if match is None or match.end() == pos:
                bad = text[pos:].strip(" ,").split()[0] if text[pos:].strip(" ,") else text[pos:]
                raise CardError(f"{bad!r} in {cards!r} is not a card: {HELP}")
            codes.append(_code(match.group(1), match.group(2)))
            pos = match.end()
        return codes
    return [parse_card(card) for card in cards]


def format_card(code: int) -> str:
    """The two-character text of a card code.

    >>> format_card(0), format_card(51)
    ('2c', 'As')
    """
    code = int(code)
    if not 0 <= code < DECK_SIZE:
        raise CardError(f"{code} is not a card code: codes run from 0 (2c) to 51 (As)")
    return RANKS[code >> 2] + SUITS[code & 3]


def format_cards(codes: Iterable[int], sep: str = " ") -> str:
    """Cards as text, in the order given."""
    return sep.join(format_card(code) for code in codes)


def suit_of(codes: np.ndarray) -> np.ndarray:
    """Suit 0 (clubs) .. 3 (spades) of each card code."""
    return np.asarray(codes) & 3


def spellings() -> dict[str, int]:
    """Every accepted spelling of every card mapped to its code, for columnar parsing.

    >>> spellings()["10♠"] == spellings()["Ts"] == spellings()["tS"] == 35
    True
    """
    table: dict[str, int] = {}
    for rank_index, rank in enumerate(RANKS):
        rank_texts = {rank, rank.lower()} | ({"10"} if rank == "T" else set())
        for suit_index, suit in enumerate(SUITS):
            suit_texts = {suit, suit.upper()} | {s for s, v in _SUIT_SYMBOLS.items() if v == suit}
            for rank_text in rank_texts:
                for suit_text in suit_texts:
                    table[rank_text + suit_text] = rank_index * 4 + suit_index
    return table
