"""The compiled twin of the fast pass of :mod:`ofcstats.validate` (numba), for large
loads: the card, street and row rules of :func:`~ofcstats.validate.suspects`, and the
final rows, dealt counts and placements of :func:`~ofcstats.validate.build`, each in
one or two passes over the cards instead of a few dozen numpy passes. It is apart so
that checking a small file never loads the compiler; tests/test_validate.py holds it
to the numpy pass, rule by rule, on damaged hands of every variant.

Cards come as the cards frame holds them (:data:`~ofcstats.records.RAW_CARDS_SCHEMA`):
per card its seat row, street (0 for a seat's own list), kind, position and code.
"""

# The functions here are compiled: line coverage does not see them run.
# mypy: ignore-errors

from __future__ import annotations

import numpy as np
from numba import njit

from ofcstats.records import BOTTOM, DEALT, DISCARD, NOT_A_CARD, TOP

_ROW_SIZES = (3, 5, 5)  # top, middle, bottom: the sizes validate.ROW_SIZES gives


@njit(nogil=True, cache=True)
def card_rules(n, s_hand, s_streets, s_fl, n_streets, street_start, s_variant,
               c_hand, c_seat, c_street, c_kind, c_pos, c_code,
               plan_len, plan_dealt, plan_discard, fl_max):
    """The rules of the cards, streets and rows: (per hand, it breaks a card rule; per
    seat row, it breaks a street or row rule). ``s_variant``: per seat, its hand's
    variant (0 when unknown: the hand is bad anyway)."""
    n_seats = len(s_hand)
    n_cards = len(c_hand)
    n_street_rows = n_streets.sum()
    bad = np.zeros(n, dtype=np.bool_)
    s_bad = np.zeros(n_seats, dtype=np.bool_)
    held = np.zeros(n, dtype=np.uint64)  # per hand: the cards it holds (dealt or given)
    used = np.zeros(n, dtype=np.uint64)  # per hand: the cards placed or discarded
    owner = np.full(n * 52, -1, dtype=np.int64)  # per hand and card: its dealing street
    t_dealt = np.zeros(n_street_rows, dtype=np.int64)
    t_discard = np.zeros(n_street_rows, dtype=np.int64)
    t_all = np.zeros(n_street_rows, dtype=np.int64)
    in_row = np.zeros((n_seats, 3), dtype=np.int64)
    # Pass 1: card texts, positions, what each hand holds, street and row counts.
    for i in range(n_cards):
        h = c_hand[i]
        s = c_seat[i]
        kind = c_kind[i]
        code = c_code[i]
        on_street = c_street[i] > 0
        form_ok = on_street == s_streets[s]
        if code == NOT_A_CARD or c_pos[i] < 0:
            bad[h] = True
        if on_street:
            t = street_start[s] + c_street[i] - 1
            t_all[t] += 1
            if kind == DEALT:
                t_dealt[t] += 1
            elif kind == DISCARD:
                t_discard[t] += 1
        if form_ok and TOP <= kind <= BOTTOM:
            in_row[s, kind - TOP] += 1
        if code == NOT_A_CARD:
            continue
        bit = np.uint64(1) << np.uint64(code)
        if (on_street and kind == DEALT) or (not on_street and form_ok):
            if held[h] & bit:
                bad[h] = True
            held[h] |= bit
            if on_street:
                owner[h * 52 + code] = street_start[s] + c_street[i] - 1
    # Pass 2: each card placed or discarded once, on the street that dealt it.
    for i in range(n_cards):
        code = c_code[i]
        if c_street[i] <= 0 or c_kind[i] == DEALT or code == NOT_A_CARD:
            continue
        h = c_hand[i]
        bit = np.uint64(1) << np.uint64(code)
        if used[h] & bit:
            bad[h] = True
        used[h] |= bit
        if owner[h * 52 + code] != street_start[c_seat[i]] + c_street[i] - 1:
            bad[h] = True
    _against_plans(s_bad, s_fl, n_streets, street_start, s_variant, t_all, t_dealt,
                   t_discard, in_row, plan_len, plan_dealt, plan_discard, fl_max)
    return bad, s_bad


@njit(nogil=True, cache=True)
def _against_plans(s_bad, s_fl, n_streets, street_start, s_variant, t_all, t_dealt,
                   t_discard, in_row, plan_len, plan_dealt, plan_discard, fl_max):
    """Marks in ``s_bad`` the seats whose streets break the variant's plan (or
    fantasyland's), or whose rows are not of their sizes."""
    for s in range(len(s_bad)):
        v = s_variant[s]
        for j in range(n_streets[s]):
            t = street_start[s] + j
            dealt = t_dealt[t]
            wrong = t_all[t] - dealt != dealt
            if s_fl[s]:
                wrong |= dealt < 13 or dealt > fl_max or t_discard[t] != dealt - 13
            elif j < plan_len[v]:
                wrong |= dealt != plan_dealt[v, j] or t_discard[t] != plan_discard[v, j]
            if wrong:
                s_bad[s] = True
        for r in range(3):
            if in_row[s, r] != _ROW_SIZES[r]:
                s_bad[s] = True


@njit(nogil=True, cache=True)
def hand_columns(s_valid, seat_new, s_streets, n_streets, street_start,
                 c_seat, c_street, c_kind, c_pos, c_code):
    """The valid seats' final rows (top, middle, bottom, in playing order: from the
    streets, else as given), every seat's dealt count (13 without streets), and the
    valid seats' placed and discarded cards in order (how many per seat row, then per
    card its street, card and row), as :func:`ofcstats.validate.build` makes them."""
    n_seats = len(s_valid)
    n_cards = len(c_seat)
    n_valid = s_valid.sum()
    top = np.zeros((n_valid, 3), dtype=np.uint8)
    middle = np.zeros((n_valid, 5), dtype=np.uint8)
    bottom = np.zeros((n_valid, 5), dtype=np.uint8)
    filled = np.zeros((n_seats, 3), dtype=np.int64)
    dealt = np.zeros(n_seats, dtype=np.int64)
    n_street_rows = n_streets.sum()
    per_key = np.zeros(n_street_rows * 4 + 1, dtype=np.int64)  # cards per street and kind
    n_moves = 0
    for i in range(n_cards):
        s = c_seat[i]
        kind = c_kind[i]
        on_street = c_street[i] > 0
        if on_street and kind == DEALT:
            dealt[s] += 1
        if not s_valid[s]:
            continue
        if TOP <= kind <= BOTTOM and on_street == s_streets[s]:
            r = kind - TOP
            k = filled[s, r]
            if k < _ROW_SIZES[r]:
                row = top if r == 0 else middle if r == 1 else bottom
                row[seat_new[s], k] = c_code[i]
            filled[s, r] = k + 1
        if on_street and kind >= TOP:
            per_key[(street_start[s] + c_street[i] - 1) * 4 + kind - TOP + 1] += 1
            n_moves += 1
    for s in range(n_seats):
        if not s_streets[s]:
            dealt[s] = 13
    # A card's slot: its street and kind's first slot (the cards before, in that order),
    # plus its position in its list.
    for k in range(1, len(per_key)):
        per_key[k] += per_key[k - 1]
    per_seat = np.zeros(n_seats, dtype=np.int64)
    m_street = np.empty(n_moves, dtype=np.uint8)
    m_card = np.empty(n_moves, dtype=np.uint8)
    m_row = np.empty(n_moves, dtype=np.uint8)
    for i in range(n_cards):
        s = c_seat[i]
        kind = c_kind[i]
        if c_street[i] <= 0 or kind < TOP or not s_valid[s]:
            continue
        dest = per_key[(street_start[s] + c_street[i] - 1) * 4 + kind - TOP] + c_pos[i]
        per_seat[s] += 1
        m_street[dest] = c_street[i]
        m_card[dest] = c_code[i]
        m_row[dest] = kind
    return top, middle, bottom, dealt, per_seat, m_street, m_card, m_row


@njit(nogil=True, cache=True)
def fingerprint_texts(variant_offsets, variant_bytes, seat_hand, seat_number,
                      player_offsets, player_bytes, tail):
    """Per hand, the text :func:`ofcstats.validate._fingerprints` hashes: its variant,
    then a line per seat in seat order, ``number|player|`` and the seat's ``tail`` (its
    flags, ``|`` and its rows, fixed width): (offsets, bytes). Seat numbers are 0..99."""
    n = len(variant_offsets) - 1
    n_seats = len(seat_hand)
    # The seats of each hand, in seat order: by hand (stable), then by number.
    first = np.zeros(n + 1, dtype=np.int64)
    for s in range(n_seats):
        first[seat_hand[s] + 1] += 1
    for h in range(n):
        first[h + 1] += first[h]
    order = np.empty(n_seats, dtype=np.int64)
    filled = first[:n].copy()
    for s in range(n_seats):
        order[filled[seat_hand[s]]] = s
        filled[seat_hand[s]] += 1
    for h in range(n):
        for i in range(first[h] + 1, first[h + 1]):
            j = i
            while j > first[h] and seat_number[order[j - 1]] > seat_number[order[j]]:
                order[j - 1], order[j] = order[j], order[j - 1]
                j -= 1
    width = tail.shape[1]
    size = variant_offsets[n] - variant_offsets[0] + n
    for s in range(n_seats):
        size += 5 + (seat_number[s] >= 10) + player_offsets[s + 1] - player_offsets[s] + width
    offsets = np.zeros(n + 1, dtype=np.int64)
    out = np.empty(size, dtype=np.uint8)
    at = 0
    for h in range(n):
        for b in range(variant_offsets[h], variant_offsets[h + 1]):
            out[at] = variant_bytes[b]
            at += 1
        if first[h] == first[h + 1]:
            out[at] = 10  # no seats: the variant and a newline
            at += 1
        for i in range(first[h], first[h + 1]):
            s = order[i]
            out[at] = 10
            at += 1
            number = seat_number[s]
            if number >= 10:
                out[at] = 48 + number // 10
                at += 1
            out[at] = 48 + number % 10
            out[at + 1] = 124  # |
            at += 2
            for b in range(player_offsets[s], player_offsets[s + 1]):
                out[at] = player_bytes[b]
                at += 1
            out[at] = 124
            at += 1
            for k in range(width):
                out[at] = tail[s, k]
                at += 1
        offsets[h + 1] = at
    return offsets, out[:at]
