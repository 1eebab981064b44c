"""The codes the compiled reader's driver (:mod:`ofcstats.formats.scan`) and its compiled
steps (``_scan_kernel.py``) share: what a key holds, a value's state, and the limits a
line's numbers must fit in."""

from __future__ import annotations

# What a key holds.
TEXT, WHOLE, NUMBER, FLAG, CARDS, SEATS, STREETS = range(7)
# A value's state.
MISSING, NULL, PRESENT = 0, 1, 2

MAX_SEATS = 100  # a seat's index, a street's number and a card's position must fit
MAX_STREETS = 1000  # their columns (a line with more goes to the general reader)
MAX_POS = 1000
MAX_KINDS = 8  # card list kinds are below this (the scan counts each kind's cards)
