"""Card codes, parsing and printing (docs/rules.md §1)."""

from __future__ import annotations

import pytest

from ofcstats.cards import format_card, format_cards, parse_card, parse_cards, spellings
from ofcstats.errors import CardError


@pytest.mark.parametrize(
    ("text", "code"),
    [("2c", 0), ("2s", 3), ("Ah", 50), ("As", 51), ("Td", 33), ("10d", 33), ("td", 33),
     ("TD", 33), ("10♣", 32), ("A♠", 51), ("k♥", 46), ("Q♦", 41), (" 9h ", 30)],
)
def test_card_text_accepts_ranks_suits_ten_and_symbols_in_any_case(text: str, code: int) -> None:
    assert parse_card(text) == code


@pytest.mark.parametrize("text", ["1s", "Ax", "", "AhK", "11c", "A", "♠A", "Ahh"])
def test_card_text_that_is_not_a_card_is_an_error_naming_the_text(text: str) -> None:
    with pytest.raises(CardError) as error:
        parse_card(text)
    assert str(error.value).startswith(f"{text!r} is not a card: a card is a rank 2-9, T (or 10)")


def test_card_codes_are_rank_times_four_plus_suit_with_deuce_zero() -> None:
    for rank_index, rank in enumerate("23456789TJQKA"):
        for suit_index, suit in enumerate("cdhs"):
            assert parse_card(rank + suit) == rank_index * 4 + suit_index


def test_every_code_prints_and_parses_back() -> None:
    assert [parse_card(format_card(code)) for code in range(52)] == list(range(52))


def test_cards_parse_from_spaced_comma_separated_or_joined_text() -> None:
    assert parse_cards("Ah Kd, 7c") == parse_cards("AhKd7c") == parse_cards(["Ah", "kd", "7♣"])
    assert parse_cards("10h10s") == [34, 35]


def test_a_bad_card_in_a_list_names_that_card() -> None:
    with pytest.raises(CardError, match="'Zz' in 'Ah Zz Kd' is not a card"):
        parse_cards("Ah Zz Kd")


def test_format_cards_joins_with_spaces() -> None:
    assert format_cards([50, 45, 20]) == "Ah Kd 7c"


def test_code_out_of_range_is_an_error() -> None:
    with pytest.raises(CardError, match="52 is not a card code"):
        format_card(52)


def test_spellings_cover_every_accepted_form() -> None:
    table = spellings()
    assert set(table.values()) == set(range(52))
    for text, code in table.items():
        assert parse_card(text) == code
