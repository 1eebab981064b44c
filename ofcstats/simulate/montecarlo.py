"""The Monte Carlo bot: sample the unseen cards, play each candidate out, keep the best.

For each decision it keeps the most promising placements by the balanced board value,
then samples ``rollouts`` completions of the cards it has not seen (every card seen so
far, its own and its opponents' face-up ones, is left out of the draw). In each sample
every board is played to the end - intermediate streets by a quick rule, the last
street exactly (the placement with the best royalties, fantasyland and no foul) - and
the candidate is scored against the opponents' finished boards under the ruleset:
rows, scoops, fouls, royalties, plus a value for reaching fantasyland. The candidate
with the best mean wins. Every candidate sees the same samples (common random numbers),
so the comparison between candidates is much sharper than the samples' spread.

All of it is array work over ``tables x candidates x samples`` boards at once.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from ofcstats import evaluate
from ofcstats.rules.board import enters, fouled, pair_points, royalties
from ofcstats.simulate import chinese, heuristic
from ofcstats.simulate.bots import Bot, candidates, pattern_values
from ofcstats.simulate.scoring import RulesetArrays, board_strengths
from ofcstats.simulate.state import CARD_KEYS, Turn
from ofcstats.simulate.tables import (
    STRIDE,
    SUIT_BITS,
    SUIT_MASK,
    pattern_counts,
    pattern_onehot,
    row_tables,
)
from ofcstats.variants import Variant

_SIZES = np.array([3, 5, 5])
_SIZES8 = _SIZES.astype(np.int8)[:, None]
_GAIN_TENTHS = np.array([3, 8, 10], dtype=np.int16)[:, None]  # gains weigh 0.3, 0.8, 1 by row
_BLOCKED = np.int16(-30000)


@cache
def _made_padded() -> npt.NDArray[np.int16]:
    """:attr:`RowTables.made_of_key` reaching one card past a full row (-1 there), so a
    card can be tried on every row at once."""
    made = row_tables().made_of_key
    out = np.full(made.size + 2 * STRIDE, -1, dtype=np.int16)  # six aces: 7.2 strides
    out[:made.size] = made
    return out


def _rule_scores(keys: npt.NDArray[np.int64], filled: npt.NDArray[np.int8],
                 made: npt.NDArray[np.int16],
                 card_key: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int16],
                                                           npt.NDArray[np.int16]]:
    """How well one card (its key, ``(B,)``) fits each row of each board, ``(3, B)`` in
    tenths of a made-index step, and each row's made index were it put there. Boards are
    rows first, ``(3, B)``."""
    new_keys = keys + card_key
    new = _made_padded()[new_keys >> SUIT_BITS]
    score = (new - made) * _GAIN_TENTHS
    # A suited row is a flush draw: worth more the more cards it has.
    flushy = row_tables().suited[new_keys[1:] & SUIT_MASK] & (filled[1:] >= 1)
    score[1:] += flushy * (filled[1:] + 1).astype(np.int16) * 20
    # Keep the lower rows ahead: a row may not outgrow what the row above can still make.
    score[0] -= (new[0] > made[1] + 13 * (filled[1] <= 3)) * 400
    score[1] -= (new[1] > made[2] + 13 * (filled[2] <= 3)) * 400
    # A full row is out: far below any other (a card always has a row with room, so the
    # best row is never a full one; scores stay above -2,000).
    score += (filled >= _SIZES8) * _BLOCKED
    return score, new


def _best_row(score: npt.NDArray[np.int16]) -> npt.NDArray[np.intp]:
    """``argmax`` over the three rows of ``(3, B)`` scores (the first on a tie), by
    comparisons: numpy's reduction along the short axis is several times slower."""
    row = (score[1] > score[0]).astype(np.intp)
    return np.where(score[2] > np.maximum(score[0], score[1]), 2, row)


def rule_street(keys: npt.NDArray[np.int64], filled: npt.NDArray[np.int8],
                cards: npt.NDArray[np.uint8], discards: int) -> None:
    """Place a street's ``cards`` (B, k) on boards ``(3, B)`` by the quick rule, in
    place; the ``discards`` cards that fit worst are thrown away."""
    b, k = cards.shape
    card_keys = CARD_KEYS[cards]
    made = _made_padded()[keys >> SUIT_BITS]
    boards = np.arange(b)
    first = None
    if discards:
        # Every card scored against the board as it stands, in one pass; the kept cards
        # are then placed in their order, the first of them from this pass.
        score, new = _rule_scores(np.tile(keys, k), np.tile(filled, k), np.tile(made, k),
                                  card_keys.T.ravel())
        best = score.max(axis=0).reshape(k, b)
        if discards == 1:  # the first card that fits worst (as a stable sort would pick)
            low = best.min(axis=0)
            thrown = np.argmax(best == low, axis=0)
            kept = np.arange(k - 1)[None, :] + (np.arange(k - 1)[None, :] >= thrown[:, None])
        else:
            order = np.argsort(best.T, axis=1, kind="stable")
            kept = np.sort(order[:, discards:], axis=1)
        if kept.shape[1]:
            at = kept[:, 0] * b + boards
            first = score[:, at], new[:, at]
        card_keys = np.take_along_axis(card_keys, kept, axis=1)
    for j in range(card_keys.shape[1]):
        ck = card_keys[:, j]
        score, new = first if j == 0 and first is not None else \
            _rule_scores(keys, filled, made, ck)
        row = _best_row(score)
        for r in range(3):
            here = row == r
            keys[r] += np.where(here, ck, 0)
            filled[r] += here
            made[r] = np.where(here, new[r], made[r])


def _final_strengths(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
    """Exact strengths of complete boards given as row keys ``(3, ...)``."""
    t = row_tables()
    ids = t.id_of_key[keys >> SUIT_BITS].astype(np.intp)
    flush = t.suited[keys[1:] & SUIT_MASK]
    out = np.empty(keys.shape, dtype=np.intp)
    out[0] = t.full3[ids[0]]
    out[1:] = np.where(flush, t.full5_flush[ids[1:]], t.full5[ids[1:]])
    return out


def last_street(keys: npt.NDArray[np.int64], filled: npt.NDArray[np.int8],
                cards: npt.NDArray[np.uint8], discards: int, arrays: RulesetArrays,
                fl_value: float) -> npt.NDArray[np.int64]:
    """The final keys ``(3, B)`` after the last street played exactly: the placement
    with the best royalties plus fantasyland, fouls last. Boards are grouped by their
    free slots, so only the placements that complete them are tried."""
    k = cards.shape[1]
    counts = pattern_counts(k, discards)
    onehot = pattern_onehot(k, discards).reshape(k, -1, 3)
    open_slots = (_SIZES[:, None] - filled).astype(np.int64)
    code = (open_slots[0] * 6 + open_slots[1]) * 6 + open_slots[2]
    out = keys.copy()
    card_keys = CARD_KEYS[cards].astype(np.float64)
    for value in np.unique(code):
        boards = np.flatnonzero(code == value)
        want = open_slots[:, boards[0]]
        fit = np.flatnonzero((counts == want).all(axis=1))
        if not fit.size:
            continue  # a board this street cannot complete: a candidate thrown away later
        added = np.stack([(card_keys[boards] @ onehot[:, fit, r]).astype(np.int64)
                          for r in range(3)])
        finals = keys[:, boards][:, :, None] + added  # (3, b, fits)
        strengths = _final_strengths(finals)
        score = sum(arrays.royalty[r][strengths[r]].astype(np.float32) for r in range(3))
        if arrays.entry is not None:
            score = score + fl_value * enters(strengths, np.True_, arrays.entry)
        score = np.where(fouled(strengths), -50.0, score) + 1e-4 * strengths.sum(axis=0)
        choice = np.argmax(score, axis=1)
        out[:, boards] = np.take_along_axis(finals, choice[None, :, None], axis=2)[..., 0]
    return out


def play_out(keys: npt.NDArray[np.int64], filled: npt.NDArray[np.int8],
             cards: npt.NDArray[np.uint8], streets: list[tuple[int, int]],
             arrays: RulesetArrays, fl_value: float,
             exact_last: bool = True) -> npt.NDArray[np.int64]:
    """Final row keys of boards ``(3, B)`` given the cards still to come ``(B, F)`` in
    the given streets (dealt, discards): the quick rule, then the last street exactly
    (or by the rule too, for the opponents' boards, which matter less)."""
    keys, filled = keys.copy(), filled.copy()
    offset = 0
    for number, (dealt, discards) in enumerate(streets):
        street_cards = cards[:, offset:offset + dealt]
        offset += dealt
        if exact_last and number == len(streets) - 1:
            return last_street(keys, filled, street_cards, discards, arrays, fl_value)
        rule_street(keys, filled, street_cards, discards)
    return keys


class MonteCarloBot(Bot):
    """Picks the placement with the best expected points over sampled completions."""

    style = "montecarlo"
    needs_opponents = True

    def __init__(self, rng: np.random.Generator, rollouts: int = 100, candidates: int = 12,
                 fantasyland_value: float = 8.0, chunk_boards: int = 60_000):
        super().__init__(rng)
        self.rollouts = rollouts
        self.keep = candidates
        self.fl_value = fantasyland_value
        self.chunk_boards = chunk_boards

    def place(self, turn: Turn) -> npt.NDArray[np.int8]:
        """The candidate with the best mean points over ``rollouts`` samples."""
        pats, fits = candidates(turn)
        guide = pattern_values(turn, heuristic.BALANCED)
        noise = self.rng.random(guide.shape, dtype=np.float32) * 1e-3
        guide = np.where(fits, guide + noise, -np.inf)
        # Never more candidates than any table has placements that fit.
        keep = min(self.keep, int(fits.sum(axis=1).max()))
        chosen = np.argsort(-guide, axis=1)[:, :keep]  # (m, C)
        usable = np.take_along_axis(fits, chosen, axis=1)
        per_table = keep * self.rollouts
        step = max(1, self.chunk_boards // per_table)
        best = np.empty(turn.size, dtype=np.intp)
        for start in range(0, turn.size, step):
            part = slice(start, start + step)
            means = self._means(turn, part, chosen[part])
            means = np.where(usable[part], means, -np.inf)
            best[part] = np.take_along_axis(chosen[part], np.argmax(means, axis=1)[:, None],
                                            axis=1)[:, 0]
        return pats[best]

    def set_thirteen(self, cards: npt.NDArray[np.uint8], arrays: RulesetArrays,
                     seen: npt.NDArray[np.bool_], opponents: int) -> npt.NDArray[np.int8]:
        """Chinese poker: the candidate set with the best mean against sampled hands."""
        return thirteen_by_rollouts(self, cards, arrays, opponents)

    def _means(self, turn: Turn, part: slice,
               chosen: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        arrays = turn.arrays
        m, c, n = chosen.shape[0], chosen.shape[1], self.rollouts
        k = turn.cards.shape[1]
        # Boards after each candidate, rows first: (3, m, c).
        added = (CARD_KEYS[turn.cards[part]].astype(np.float64)
                 @ pattern_onehot(k, turn.discards)).astype(np.int64).reshape(m, -1, 3)
        keys = turn.keys[part][:, None, :] + np.take_along_axis(added, chosen[..., None], axis=1)
        filled = turn.filled[part][:, None, :] + pattern_counts(k, turn.discards)[chosen]
        # Candidates that do not fit (fewer fitting patterns than kept) are scored on the
        # board as it stands and thrown away by the caller.
        bad = (filled > _SIZES).any(axis=-1, keepdims=True)
        keys = np.where(bad, turn.keys[part][:, None, :], keys).transpose(2, 0, 1)
        filled = np.where(bad, turn.filled[part][:, None, :], filled).transpose(2, 0, 1)
        # Samples of the unseen cards: shuffled, the seen ones pushed past the end.
        order = self.rng.random((m, n, 52), dtype=np.float32)
        order[np.broadcast_to(turn.seen[part][:, None, :], order.shape)] = 2.0
        deck = np.argsort(order, axis=2).astype(np.uint8)
        unseen = (~turn.seen[part]).sum(axis=1)

        streets = _streets_after(turn.variant, turn.street)
        future = sum(d for d, _ in streets)
        offset = future
        opponents = []
        for o in range(turn.opponents.shape[1]):
            width = max(int(turn.opponent_future[part][:, o].max()), 1)
            opponents.append(self._opponent(turn, part, o, deck, offset, width, unseen))
            offset += width
        shape = (3, m, c, n)
        if streets:
            mine = np.broadcast_to(deck[:, None, :, :future], (m, c, n, future))
            final = play_out(
                np.broadcast_to(keys[..., None], shape).reshape(3, -1),
                np.broadcast_to(filled[..., None], shape).reshape(3, -1),
                mine.reshape(-1, future), streets, arrays, self.fl_value).reshape(shape)
        else:
            final = np.broadcast_to(keys[..., None], shape)
        strengths = _final_strengths(final)
        foul = fouled(strengths)
        roy = royalties([arrays.royalty], strengths, ~foul, np.int32, dense=True)[0]
        total = np.zeros((m, c, n), dtype=np.float64)
        for o_strength, o_foul, o_roy in opponents:
            total += pair_points(arrays, strengths, o_strength[:, :, None], foul,
                                 o_foul[:, None], roy, o_roy[:, :, None])
        if arrays.entry is not None:
            total += self.fl_value * enters(strengths, ~foul, arrays.entry)
        return total.mean(axis=2)

    def _opponent(self, turn: Turn, part: slice, o: int, deck: npt.NDArray[np.uint8],
                  offset: int, width: int,
                  unseen: npt.NDArray[np.int64]) -> tuple[npt.NDArray[Any], ...]:
        """One opponent's finished boards in every sample, rows first ``(3, m, n)``:
        strengths, fouls ``(m, n)``, royalties."""
        arrays = turn.arrays
        m, n = deck.shape[0], deck.shape[1]
        keys = np.repeat(turn.opponent_keys[part][:, o], n, axis=0).T.copy()
        filled = np.repeat(turn.opponent_filled[part][:, o], n, axis=0).T.copy()
        future = np.repeat(turn.opponent_future[part][:, o], n)
        hidden = np.repeat(turn.opponent_hidden[part][:, o], n)
        # Cards past those drawn for the seat and earlier opponents; should the unseen
        # cards run short, the window slides back (a few cards then serve twice).
        start = np.minimum(offset, np.maximum(np.repeat(unseen, n) - width, 0))
        cards = deck.reshape(m * n, 52)[np.arange(m * n)[:, None],
                                         start[:, None] + np.arange(width)]
        final = keys.copy()
        for count, plan in _plans(turn.variant).items():
            boards = np.flatnonzero((future == count) & ~hidden)
            if boards.size and plan:
                final[:, boards] = play_out(keys[:, boards], filled[:, boards],
                                            cards[boards, :count], plan, arrays, self.fl_value,
                                            exact_last=False)
        boards = np.flatnonzero(hidden)
        if boards.size:
            # A fantasyland seat sets face down: its 13 cards by the rule, in one street.
            final[:, boards] = play_out(np.zeros((3, boards.size), dtype=np.int64),
                                        np.zeros((3, boards.size), dtype=np.int8),
                                        cards[boards, :13], [(13, 0)], arrays,
                                        self.fl_value, exact_last=False)
        strengths = _final_strengths(final)
        foul = fouled(strengths)
        roy = royalties([arrays.royalty], strengths, ~foul, np.int32, dense=True)[0]
        return strengths.reshape(3, m, n), foul.reshape(m, n), roy.reshape(3, m, n)


def _streets_after(variant: Variant, street: int) -> list[tuple[int, int]]:
    return [(s.dealt, s.discard) for s in variant.streets[street + 1:]]


def _plans(variant: Variant) -> dict[int, list[tuple[int, int]]]:
    """Cards still to come -> the streets that bring them, for a seat part-way through."""
    streets = [(s.dealt, s.discard) for s in variant.streets]
    out: dict[int, list[tuple[int, int]]] = {}
    for first in range(len(streets) + 1):
        rest = streets[first:]
        out[sum(d for d, _ in rest)] = rest
    return out



def thirteen_by_rollouts(bot: MonteCarloBot, cards: npt.NDArray[np.uint8],
                         arrays: RulesetArrays, opponents: int) -> npt.NDArray[np.int8]:
    """Chinese poker: the best of the balanced bot's top sets against sampled opponents.

    Each sample deals the opponents 13 of the cards this seat does not hold and sets
    them the plain way; a candidate's score is its mean points against them.
    """
    layout = chinese._layout(13)
    out = np.empty(cards.shape, dtype=np.int8)
    n = bot.rollouts
    for i, hand in enumerate(cards):
        score, sets = chinese.scored_sets(hand, arrays, chinese.WEIGHTS["balanced"])
        keep = min(bot.keep, int(np.isfinite(score).sum()))
        top = np.argsort(-score)[:keep]
        mine = np.stack([
            evaluate.strength3(hand[layout.three[sets[0, top]]]),
            arrays.middle(evaluate.strength5(hand[layout.five[sets[1, top]]])),
            arrays.five(evaluate.strength5(hand[layout.five[sets[2, top]]]))]).astype(np.intp)
        rest = np.setdiff1d(np.arange(52, dtype=np.uint8), hand)
        order = np.argsort(bot.rng.random((n, rest.size)), axis=1)
        total = np.zeros(keep, dtype=np.float64)
        mine_foul = np.zeros((keep, 1), dtype=bool)
        mine_roy = royalties([arrays.royalty], mine, np.True_, np.int32, dense=True)[0][:, :, None]
        for o in range(opponents):
            dealt = rest[order[:, 13 * o:13 * (o + 1)]]
            board = chinese.greedy(dealt, arrays.wheel, arrays.low_middle)
            theirs = board_strengths(board).astype(np.intp).T  # (3, n)
            theirs[1], theirs[2] = arrays.middle(theirs[1]), arrays.five(theirs[2])
            their_roy = royalties([arrays.royalty], theirs, np.True_, np.int32, dense=True)[0]
            their_foul = np.zeros((1, n), dtype=bool)
            total += pair_points(arrays, mine[:, :, None], theirs[:, None, :], mine_foul,
                                 their_foul, mine_roy, their_roy[:, None, :]).mean(axis=1)
        out[i] = chinese.actions_of(sets[:, top[int(np.argmax(total))]][:, None])[0]
    return out
