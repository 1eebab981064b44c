"""Every validation rule of docs/format.md, with the exact reason a person reads.

Hands start from one legal two-seat Pineapple hand built from a fixed deck; each test
breaks one rule. Every case also runs with every hand sent through the slow, wording
pass, so the fast checks can never let through a hand the rules reject.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from handgen import random_hand
from polars.testing import assert_frame_equal

from ofcstats import formats
from ofcstats.cards import format_card, parse_card
from ofcstats.formats import jsonl
from ofcstats.formats.lines import LineBatch
from ofcstats.records import HandBatch
from ofcstats.stakes import POINT_VALUE, UNIT
from ofcstats.validate import validate

# Per seat: street 1 places top, middle, middle, bottom, bottom; streets 2 to 5 place
# two cards each (rows below) and discard the third.
_LATER = [("top", "middle"), ("top", "bottom"), ("middle", "bottom"), ("middle", "bottom")]
DECK = [format_card(c) for c in range(51, -1, -1)]  # As Ah Ad Ac Ks ...


def deal(cards: list[str], seat: int, name: str) -> dict[str, Any]:
    """A seat's 17 cards in dealing order, placed by the fixed plan."""
    first = cards[:5]
    streets = [{"dealt": first, "top": [first[0]], "middle": first[1:3],
                "bottom": first[3:5]}]
    for k, rows in enumerate(_LATER):
        three = cards[5 + 3 * k: 8 + 3 * k]
        street: dict[str, list[str]] = {"dealt": three, "discard": [three[2]]}
        for row, card in zip(rows, three[:2], strict=True):
            street.setdefault(row, []).append(card)
        streets.append(street)
    return {"seat": seat, "name": name, "streets": streets}


def base_hand(deck: list[str] | None = None) -> dict[str, Any]:
    cards = deck or DECK
    return {"format": "ofc-hand/1", "hand_id": "h17", "variant": "pineapple", "button": 2,
            "players": [deal(cards[:17], 1, "ann"), deal(cards[17:34], 2, "bob")]}


def run(hands: list[dict[str, Any]] | list[str], *, slow: bool = False,
        compiled: bool = False) -> HandBatch:
    text = "".join((h if isinstance(h, str) else json.dumps(h)) + "\n" for h in hands)
    lines = LineBatch(first_line=1, data=text.encode())
    con = formats.scratch()
    return validate(jsonl.parse_batch(lines, "t.jsonl", con), con, explain_all=slow,
                    compiled=compiled)


def assert_same(one: HandBatch, other: HandBatch) -> None:
    for name in ("hands", "seats", "moves", "rejects"):
        assert_frame_equal(getattr(one, name), getattr(other, name))
    assert one.duplicates == other.duplicates


def reasons(hand: dict[str, Any] | str) -> list[str]:
    """The reasons the hand is rejected, checking the passes agree: the fast pass, its
    compiled twin and the worded pass."""
    fast, slow = run([hand]), run([hand], slow=True)
    assert_same(run([hand], compiled=True), fast)
    assert fast.rejects.get_column("reason").to_list() == \
        slow.rejects.get_column("reason").to_list()
    assert fast.hands.height == slow.hands.height
    return fast.rejects.get_column("reason").to_list()


def only(hand: dict[str, Any] | str) -> str:
    found = reasons(hand)
    assert len(found) == 1, found
    return found[0]


def test_the_base_hand_is_valid() -> None:
    batch = run([base_hand()])
    assert batch.rejects.is_empty()
    assert batch.hands.height == 1
    assert batch.moves.get_column("moves").list.len().sum() == 34


def test_a_card_dealt_to_two_seats_names_both_places() -> None:
    deck = list(DECK)
    deck[17] = deck[8]  # seat 2's first card is seat 1's first card of street 3
    assert deck[8] == "Qs"
    assert only(base_hand(deck)) == "hand h17: Qs appears twice (seat 1 street 3, seat 2 street 1)"


def test_a_card_dealt_twice_to_one_seat() -> None:
    deck = list(DECK)
    deck[9] = deck[0]
    assert only(base_hand(deck)) == "hand h17: As appears twice (seat 1 street 1, seat 1 street 3)"


def test_a_card_dealt_three_times() -> None:
    deck = list(DECK)
    deck[9] = deck[17] = deck[0]
    assert only(base_hand(deck)) == (
        "hand h17: As appears three times (seat 1 street 1, seat 1 street 3, seat 2 street 1)")


def test_a_card_in_two_final_boards() -> None:
    hand = {"format": "ofc-hand/1", "hand_id": "b1", "variant": "ofc-classic", "players": [
        {"seat": 1, "name": "a", "top": ["Ah", "Kc", "3d"],
         "middle": ["Qs", "Qd", "9c", "8c", "2h"], "bottom": ["7c", "7d", "7h", "7s", "4c"]},
        {"seat": 2, "name": "b", "top": ["Ah", "Jc", "2s"],
         "middle": ["Js", "Jd", "Tc", "6h", "5d"], "bottom": ["3h", "5h", "8h", "Th", "Kh"]},
    ]}
    assert only(hand) == "hand b1: Ah appears twice (seat 1 top, seat 2 top)"


def test_a_placed_card_that_was_not_dealt_on_that_street() -> None:
    hand = base_hand()
    hand["players"][0]["streets"][1]["top"] = ["2c"]
    assert only(hand) == (
        "hand h17: seat 1 street 2: 2c is put in top but was not dealt on that street; "
        "seat 1 street 2: Kh was dealt but neither placed nor discarded")


def test_a_dealt_card_neither_placed_nor_discarded() -> None:
    hand = base_hand()
    hand["players"][0]["streets"][1].pop("discard")
    assert only(hand) == (
        "hand h17: seat 1 street 2: 0 discarded; pineapple discards 1 on that street; "
        "seat 1 street 2: Kc was dealt but neither placed nor discarded")


def test_a_card_placed_twice() -> None:
    hand = base_hand()
    street = hand["players"][0]["streets"][1]
    street["discard"] = [street["top"][0]]
    assert only(hand) == (
        "hand h17: seat 1 street 2: Kc was dealt but neither placed nor discarded; "
        "seat 1 street 2: Kh is dealt 1 times and put down 2 times (top and discard)")


def test_a_street_dealing_the_wrong_number_of_cards() -> None:
    hand = base_hand()
    street = hand["players"][1]["streets"][2]
    street["dealt"].append("2c")
    street["discard"].append("2c")
    assert only(hand) == \
        "hand h17: seat 2 street 3: 4 cards dealt; pineapple deals 3 on that street"


def test_the_wrong_number_of_streets() -> None:
    hand = base_hand()
    hand["players"][0]["streets"].pop()
    assert reasons(hand)[0].startswith("hand h17: seat 1 has 4 streets; pineapple deals 5; ")


def test_rows_of_the_wrong_size() -> None:
    hand = base_hand()
    street = hand["players"][0]["streets"][4]
    street["top"] = street.pop("middle")
    assert only(hand) == ("hand h17: seat 1 ends with 4 cards in the middle row, not 5; "
                          "seat 1 ends with 4 cards in the top row, not 3")


def test_a_row_of_one_card_says_card() -> None:
    hand = base_hand()
    seat = hand["players"][0]
    del seat["streets"]
    seat.update(top=["Ah"], middle=["2c", "3c", "4c", "5c", "6c"],
                bottom=["2d", "3d", "4d", "5d", "6d"])
    assert only(hand) == "hand h17: seat 1 ends with 1 card in the top row, not 3"


def test_final_rows_given_beside_streets_must_agree() -> None:
    hand = base_hand()
    seat = hand["players"][0]
    seat["top"] = ["Ad", "Ks", "2c"]
    assert only(hand) == ("hand h17: seat 1: the final top row given (Ad Ks 2c) is not what "
                          "its streets placed (As Kh Qs)")


def test_final_rows_given_beside_streets_that_agree_are_fine() -> None:
    hand = base_hand()
    seat = hand["players"][0]
    for row in ("top", "middle", "bottom"):
        seat[row] = [c for s in seat["streets"] for c in s.get(row, [])][::-1]
    assert reasons(hand) == []


@pytest.mark.parametrize(("players", "message"), [
    (1, "hand h17: pineapple seats 2 to 3 players, this hand has 1"),
    (4, "hand h17: pineapple seats 2 to 3 players, this hand has 4"),
])
def test_seat_counts_per_variant(players: int, message: str) -> None:
    rng = random.Random(1)
    hand = random_hand(rng, "h17", "ofc-classic", 4)
    hand["variant"] = "pineapple"
    hand["players"] = [deal(DECK[17 * i: 17 * i + 17], i + 1, f"p{i}") for i in range(3)]
    hand["players"] = (hand["players"] + [hand["players"][0] | {"seat": 4, "name": "x"}]
                       )[:players]
    hand["button"] = 1
    assert reasons(hand)[0].startswith(message)


def test_four_seats_are_fine_in_classic_but_not_five() -> None:
    rng = random.Random(2)
    assert reasons(random_hand(rng, "c4", "ofc-classic", 4)) == []
    five = random_hand(rng, "c5", "chinese-13", 4)
    five["players"].append(dict(five["players"][0], seat=5, name="e"))
    assert reasons(five)[0].startswith("hand c5: chinese-13 seats 2 to 4 players, this hand has 5")


def test_an_empty_list_of_players() -> None:
    assert only(base_hand() | {"players": []}) == "hand h17: players is an empty list"


def test_a_seat_number_used_twice() -> None:
    hand = base_hand()
    hand["players"][1]["seat"] = 1
    hand["button"] = 1
    assert only(hand) == "hand h17: seat 1 appears 2 times"


def test_a_player_in_two_seats() -> None:
    hand = base_hand()
    hand["players"][1]["name"] = "ann"
    assert only(hand) == "hand h17: player ann sits in seats 1 and 2"


def test_a_seat_number_out_of_range() -> None:
    hand = base_hand()
    hand["players"][1]["seat"] = 120
    hand["button"] = 1
    assert only(hand) == "hand h17: seat 120 is out of range: seats are numbered 0 to 99"


def test_a_button_not_at_the_table() -> None:
    assert only(base_hand() | {"button": 7}) == \
        "hand h17: button is seat 7, which is not at the table"


def test_fantasyland_is_not_part_of_chinese_13() -> None:
    hand = random_hand(random.Random(3), "c1", "chinese-13", 2)
    hand["players"][0]["fantasyland"] = True
    assert only(hand) == "hand c1: seat 1: fantasyland is not part of chinese-13"


@pytest.mark.parametrize("variant", ["pineapple", "ofc-classic", "ofc-turbo"])
def test_surrender_is_rejected_in_an_open_face_hand(variant: str) -> None:
    """Surrender is a 13-card Chinese poker option: an OFC hand is played out."""
    hand = random_hand(random.Random(4), "o1", variant, 2)
    hand["players"][1]["surrendered"] = True
    assert only(hand) == (f"hand o1: seat 2: surrender is a chinese-13 option, not part of "
                          f"{variant}: an open-face hand is played out (drop \"surrendered\")")


def test_surrender_is_accepted_in_a_chinese_13_hand() -> None:
    hand = random_hand(random.Random(4), "c2", "chinese-13", 3)
    hand["players"][0]["surrendered"] = True
    assert reasons(hand) == []


def test_a_text_that_is_not_a_card() -> None:
    deck = list(DECK)
    deck[3] = "Zz"
    assert only(base_hand(deck)) == (
        "hand h17: seat 1 street 1: 'Zz' is not a card (a rank 2-9, T, J, Q, K, A and a suit "
        "s, h, d, c)")


def test_forgiving_card_spellings_are_cards() -> None:
    deck = list(DECK)
    deck[0], deck[17] = "A♠", "10h"  # As and Th, spelled otherwise
    batch = run([base_hand(deck)])
    assert batch.rejects.is_empty()
    assert batch.seats.get_column("top")[0].to_list()[0] == 51
    assert batch.seats.get_column("top")[1].to_list()[0] == 34


@pytest.mark.parametrize(("cards", "message"), [
    (12, "hand f1: seat 1 plays fantasyland with 12 cards dealt; fantasyland deals 13 to 17"),
    (18, "hand f1: seat 1 plays fantasyland with 18 cards dealt; fantasyland deals 13 to 17"),
])
def test_fantasyland_deals_13_to_17_cards(cards: int, message: str) -> None:
    hand = fantasyland_hand(14)
    street = hand["players"][0]["streets"][0]
    extra = [c for c in DECK if c not in street["dealt"]
             and c not in hand["players"][1]["streets"][0]["dealt"]
             and all(c not in s["dealt"] for s in hand["players"][1]["streets"])]
    if cards > 14:
        street["dealt"] += extra[: cards - 14]
        street["discard"] += extra[: cards - 14]
    else:
        street["dealt"] = street["dealt"][:cards]
        street["discard"] = []
        street["bottom"] = street["bottom"][:cards - 8]
    assert reasons(hand)[0].startswith(message)


def fantasyland_hand(cards: int) -> dict[str, Any]:
    dealt = DECK[:cards]
    fl = {"seat": 1, "name": "ann", "fantasyland": True, "streets": [
        {"dealt": dealt, "top": dealt[:3], "middle": dealt[3:8], "bottom": dealt[8:13],
         "discard": dealt[13:]}]}
    other = deal(DECK[cards: cards + 17], 2, "bob")
    return {"format": "ofc-hand/1", "hand_id": "f1", "variant": "pineapple",
            "players": [fl, other]}


@pytest.mark.parametrize("cards", [14, 15, 16, 17])
def test_fantasyland_with_14_to_17_cards_is_valid(cards: int) -> None:
    assert reasons(fantasyland_hand(cards)) == []


def test_fantasyland_places_13_and_discards_the_rest() -> None:
    hand = fantasyland_hand(15)
    street = hand["players"][0]["streets"][0]
    street["bottom"].append(street["discard"].pop())
    assert reasons(hand) == [
        "hand f1: seat 1 plays fantasyland with 15 cards: it places 13 and discards 2, the "
        "log discards 1; seat 1 ends with 6 cards in the bottom row, not 5"]


def test_fantasyland_is_one_street() -> None:
    hand = fantasyland_hand(14)
    hand["players"][0]["streets"].append({"dealt": []})
    assert only(hand) == ("hand f1: seat 1 plays fantasyland, so sets all its cards on one "
                          "street; the log has 2")


def test_classic_fantasyland_with_13_cards_and_no_discard() -> None:
    rng = random.Random(4)
    hand = random_hand(rng, "k1", "ofc-classic", 3, fantasyland=(True, False, False))
    assert reasons(hand) == []


@pytest.mark.parametrize(("change", "message"), [
    ({"format": None}, 'hand h17: format is missing: every line starts with "format": '
                       '"ofc-hand/1"'),
    ({"format": "ofc-hand/2"}, 'hand h17: format is "ofc-hand/2", expected "ofc-hand/1"'),
    ({"hand_id": None}, "hand_id is missing or not a string"),
    ({"variant": None}, "hand h17: variant is missing or not a string"),
    ({"variant": "omaha"}, "hand h17: unknown variant 'omaha': use one of chinese-13, "
                           "criss-cross, ofc-classic, ofc-turbo, pineapple"),
    ({"players": None}, "hand h17: players is missing or not a list of seats"),
    ({"played_at": "yesterday"}, "hand h17: played_at 'yesterday' is not an ISO 8601 time "
                                 "such as 2026-11-29T18:03:11Z"),
    ({"point_value": "a lot"}, "hand h17: point_value must be a number"),
    ({"button": 1.5}, "hand h17: button must be a seat number"),
])
def test_hand_fields(change: dict[str, Any], message: str) -> None:
    hand = base_hand()
    for key, value in change.items():
        if value is None:
            hand.pop(key)
        else:
            hand[key] = value
    assert only(hand) == message


@pytest.mark.parametrize(("change", "message"), [
    ({"name": None}, "hand h17: seat 2: a seat has no name (or a name that is not a string)"),
    ({"name": ""}, "hand h17: seat 2: a seat has no name (or a name that is not a string)"),
    ({"seat": None}, "hand h17: player 2 of the list: seat number missing for player 2 of "
                     "the list"),
    ({"seat": 2.5}, "hand h17: player 2 of the list: seat 2.5 is not a whole number"),
    ({"fantasyland": "yes"}, "hand h17: seat 2: fantasyland must be true or false"),
    ({"streets": None}, "hand h17: seat 2: a seat has neither streets nor final rows (top, "
                        "middle, bottom)"),
])
def test_seat_fields(change: dict[str, Any], message: str) -> None:
    hand = base_hand()
    for key, value in change.items():
        if value is None:
            hand["players"][1].pop(key)
        else:
            hand["players"][1][key] = value
    found = reasons(hand)
    assert found[0].startswith(message), found


def test_a_line_that_is_not_json_or_not_an_object() -> None:
    assert reasons("{not json") == ["not valid JSON: Expecting property name enclosed in "
                                    "double quotes at column 2"]
    assert reasons("[1, 2]") == ["a hand is a JSON object ({...}); this line is not"]


def test_a_fouled_hand_is_valid_data() -> None:
    hand = base_hand()  # As over Qd Jc ... on top: top beats middle, a foul
    batch = run([hand])
    assert batch.rejects.is_empty()
    assert batch.hands.height == 1


def test_the_same_hand_twice_in_a_file_is_one_hand_and_a_duplicate() -> None:
    batch = run([base_hand(), base_hand()])
    assert batch.hands.height == 1
    assert batch.duplicates == 1
    assert batch.rejects.is_empty()


def test_a_different_hand_under_a_used_id_is_a_conflict() -> None:
    other = base_hand(DECK[::-1])
    batch = run([base_hand(), other])
    assert batch.hands.height == 1
    assert batch.rejects.select("line", "reason").row(0) == (
        2, "hand h17: a different hand with this id is at line 1")


def mutate(hand: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One random small change, to a hand valid before it."""
    hand = copy.deepcopy(hand)
    seat = rng.choice(hand["players"])
    choice = rng.randrange(10)
    streets = seat.get("streets")
    if choice == 0 and streets:
        street = rng.choice(streets)
        kind = rng.choice([k for k in street if street[k]])
        street[kind][rng.randrange(len(street[kind]))] = format_card(rng.randrange(52))
    elif choice == 1 and streets:
        street = rng.choice(streets)
        kind = rng.choice([k for k in street if street[k]])
        street[kind].pop()
    elif choice == 2 and streets:
        streets.pop(rng.randrange(len(streets)))
    elif choice == 3:
        seat["seat"] = rng.choice([0, 1, 2, 3, 100])
    elif choice == 4:
        seat["name"] = rng.choice(["p1", "p2", ""])
    elif choice == 5:
        seat["fantasyland"] = not seat.get("fantasyland", False)
    elif choice == 6:
        hand["variant"] = rng.choice(["pineapple", "ofc-classic", "ofc-turbo", "chinese-13"])
    elif choice == 8:
        seat["surrendered"] = True
    elif choice == 7 and streets:
        a, b = rng.sample(range(len(streets)), 2) if len(streets) > 1 else (0, 0)
        streets[a], streets[b] = streets[b], streets[a]
    else:
        hand["button"] = rng.randint(0, 4)
    return hand


def any_hand(rng: random.Random, hand_id: str, *, fantasyland: float, streets: float
             ) -> dict[str, Any]:
    """A valid hand of a random variant and table size; seats in fantasyland and hands in
    street form with the given chances."""
    variant = rng.choice(["pineapple", "ofc-classic", "ofc-turbo", "chinese-13"])
    players = rng.randint(2, 3 if variant == "pineapple" else 4)
    fl = tuple(rng.random() < fantasyland for _ in range(players)) \
        if variant != "chinese-13" else ()
    return random_hand(rng, hand_id, variant, players, fantasyland=fl,
                       streets=rng.random() < streets)


def test_fast_checks_and_worded_checks_agree_on_random_damage() -> None:
    """Whatever a hand breaks, the fast pass flags it (and never rejects on its own)."""
    rng = random.Random(5)
    hands = []
    for i in range(400):
        hand = any_hand(rng, f"r{i}", fantasyland=0.2, streets=0.8)
        for _ in range(rng.choice([0, 1, 1, 2])):
            hand = mutate(hand, rng)
        hands.append(hand)
    fast, slow = run(hands), run(hands, slow=True)
    assert_same(run(hands, compiled=True), fast)
    assert fast.rejects.get_column("reason").to_list() == \
        slow.rejects.get_column("reason").to_list()
    assert fast.hands.get_column("hand_id").to_list() == \
        slow.hands.get_column("hand_id").to_list()
    assert 50 < fast.rejects.height < 350
    assert np.array_equal(fast.seats.get_column("top").to_numpy(),
                          slow.seats.get_column("top").to_numpy())


def test_rejects_keep_the_raw_line(tmp_path: Path) -> None:
    deck = list(DECK)
    deck[3] = "Zz"
    text = json.dumps(base_hand(deck))
    batch = run([text])
    assert batch.rejects.get_column("raw").to_list() == [text]


def _fingerprint_of(hand: dict[str, Any]) -> str:
    """The fingerprint as docs/database.md defines it, written out plainly: md5 of the
    variant, then a line per seat in seat order: number, player, the three flags as
    digits, and the row cards as sets (each card's code + 48 as one character)."""
    lines = [hand["variant"]]
    for seat in sorted(hand["players"], key=lambda s: s["seat"]):
        rows = {row: [] for row in ("top", "middle", "bottom")}
        for street in seat.get("streets", [seat]):
            for row, cards in rows.items():
                cards += [parse_card(c) for c in street.get(row, [])]
        flags = "".join(str(int(seat.get(f, False)))
                        for f in ("fantasyland", "timed_out", "surrendered"))
        board = "".join(chr(48 + c) for row in rows.values() for c in sorted(row))
        lines.append(f"{seat['seat']}|{seat['name']}|{flags}|{board}")
    return hashlib.md5("\n".join(lines).encode()).hexdigest()


def test_fingerprints_follow_their_definition() -> None:
    """Stored hands are told apart by fingerprint: the formula must not drift."""
    rng = random.Random(11)
    hands = []
    for i in range(60):
        hand = any_hand(rng, f"f{i}", fantasyland=0.3, streets=0.7)
        variant = hand["variant"]
        rng.shuffle(hand["players"])  # seat order is the seat numbers', not the list's
        numbers = rng.sample(range(100), len(hand["players"]))  # one digit or two
        for seat, number in zip(hand["players"], numbers, strict=True):
            seat["seat"] = number
            seat["name"] = rng.choice(["ann", "Zoë", "李", "b|c", seat["name"]]) + str(number)
            seat["timed_out"] = rng.random() < 0.2
            if variant == "chinese-13":
                seat["surrendered"] = rng.random() < 0.2
        hand.pop("button", None)
        hands.append(hand)
    batch = run(hands)
    assert batch.rejects.is_empty()
    assert_same(run(hands, compiled=True), batch)
    assert batch.hands.get_column("fingerprint").to_list() == [_fingerprint_of(h)
                                                               for h in hands]


@pytest.mark.parametrize("shuffled", [False, True])
def test_values_repeated_within_a_hand_are_found_without_sorting_as_with_it(
        shuffled: bool) -> None:
    """The fast pass's check of seat numbers and names repeated in a hand compares each
    seat with the few before it when a hand's seats are together (as every reader gives
    them), and sorts otherwise: both against a plain count per hand."""
    from ofcstats.validate import _repeats  # noqa: PLC0415

    rng = np.random.default_rng(17)
    for _ in range(400):
        n = int(rng.integers(1, 20))
        group = np.repeat(np.arange(n), rng.integers(0, 11, n))
        values = rng.integers(0, int(rng.integers(1, 12)), len(group))
        if shuffled:
            order = rng.permutation(len(group))
            group, values = group[order], values[order]
        counted = [len(values[group == h]) != len(set(values[group == h].tolist()))
                   for h in range(n)]
        assert _repeats(group, values, n).tolist() == counted


@pytest.mark.parametrize("texts", [
    ["2026-11-01T12:00:00Z", None, "2026-12-31T23:59:59Z"],
    ["2026-11-01T12:00:00Z", "2026-11-01T12:00:00+01:00", "2026-11-01T12:00:00.5Z"],
    ["2026-11-01T12:00:00+01:00", "2026-11-01T12:00:00Z", "yesterday"],
    ["2026-02-30T12:00:00Z", "2026-11-01T12:00:00Z"],
    ["2026-11-01", "2026-11-02"],
    [None, None],
])
def test_times_of_play_read_in_the_usual_shape_first_as_polars_reads_them(
        texts: list[str | None]) -> None:
    import polars as pl  # noqa: PLC0415

    from ofcstats.validate import _played_at  # noqa: PLC0415

    series = pl.Series(texts, dtype=pl.String)
    expected = series.str.to_datetime(time_zone="UTC", strict=False, time_unit="us")
    assert _played_at(series).to_list() == expected.to_list()


@pytest.mark.parametrize(("value", "shown"), [
    (1e308, "1e+308"), (1_000_000.5, "1000000.5"), (0.0000009, "9e-7"), (0, "0.0"),
    (-1, "-1.0")])
def test_a_point_value_outside_its_range_is_a_reject_naming_key_and_value(
        value: float, shown: str) -> None:
    """From 0.000001 to 1,000,000 (ofcstats.stakes.POINT_VALUE): money stays finite and
    exact (a hand at 1e308 once made players, player and report fail)."""
    hand = base_hand()
    hand["point_value"] = value
    assert only(hand) == (f"hand h17: point_value = {shown}: must be a number from 0.000001 "
                          "to 1,000,000 (money per point)")


def test_point_value_and_units_at_the_ends_of_their_ranges_are_valid() -> None:
    """The ranges of ofcstats.stakes include their ends (docs/format.md, limits)."""
    for value, unit in ((POINT_VALUE.low, UNIT.low), (POINT_VALUE.high, UNIT.high)):
        hand = base_hand()
        hand["point_value"] = value
        for player in hand["players"]:
            player["unit"] = unit
        assert reasons(hand) == []
