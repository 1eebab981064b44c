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

All of it is array work over ``tables x candidates x samples`` boards at once, but for
the play-outs themselves: :func:`play_out` is compiled (numba) and plays board by board.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from ofcstats import evaluate
from ofcstats.rules.board import enters, fouled, pair_points, royalties
from ofcstats.simulate import chinese, heuristic
from ofcstats.simulate.bots import Bot, candidates, pattern_values
from ofcstats.simulate.fantasyland import layout_of
from ofcstats.simulate.scoring import RulesetArrays, board_strengths
from ofcstats.simulate.state import CARD_KEYS, Turn
from ofcstats.simulate.tables import (
    SUIT_BITS,
    SUIT_MASK,
    pattern_counts,
    pattern_onehot,
    patterns,
    row_tables,
    transitions,
)
from ofcstats.variants import Variant

_SIZES = np.array([3, 5, 5])
_BLOCKED = -30000


@njit(inline="always")
def _rule_scores(id0: Any, id1: Any, id2: Any, key1: Any, key2: Any, filled0: Any,
                 filled1: Any, filled2: Any, made0: Any, made1: Any, made2: Any, card: Any,
                 card_key: Any, made_after: Any, suited: Any) -> tuple[Any, ...]:
    """How well one card fits each row of a board (in tenths of a made-index step), and
    each row's made index were it put there. The board is its rows' ids
    (:func:`ofcstats.simulate.tables.transitions`), keys, cards and made indexes (top,
    middle, bottom)."""
    rank = card >> 2
    new0 = np.int64(made_after[id0, rank])
    new1 = np.int64(made_after[id1, rank])
    new2 = np.int64(made_after[id2, rank])
    # A row's gain weighs 0.3, 0.8, 1 (in tenths).
    score0, score1, score2 = (new0 - made0) * 3, (new1 - made1) * 8, (new2 - made2) * 10
    # A suited row is a flush draw: worth more the more cards it has.
    if filled1 >= 1 and suited[(key1 + card_key) & SUIT_MASK]:
        score1 += (filled1 + 1) * 20
    if filled2 >= 1 and suited[(key2 + card_key) & SUIT_MASK]:
        score2 += (filled2 + 1) * 20
    # Keep the lower rows ahead: a row may not outgrow what the row above can still make.
    if new0 > made1 + 13 * (filled1 <= 3):
        score0 -= 400
    if new1 > made2 + 13 * (filled2 <= 3):
        score1 -= 400
    # A full row is out: far below any other (a card always has a row with room, so the
    # best row is never a full one; scores stay above -2,000).
    if filled0 >= 3:
        score0 += _BLOCKED
    if filled1 >= 5:
        score1 += _BLOCKED
    if filled2 >= 5:
        score2 += _BLOCKED
    return score0, score1, score2, new0, new1, new2


@njit(inline="always")
def _last_street(id0: Any, id1: Any, id2: Any, key0: Any, key1: Any, key2: Any, filled0: Any,
                 filled1: Any, filled2: Any, cards: Any, pats: Any, counts: Any,
                 card_key: Any, after: Any, tables: Any, royalty: Any, entry: Any,
                 fl_value: float) -> tuple[Any, Any, Any]:
    """The final keys of a board whose last street (``cards``) is played exactly: the
    placement with the best royalties plus fantasyland (``entry`` < 0: none), fouls
    last, then the strongest rows; the first of equals. A board the street cannot
    complete is left as it is."""
    suited, full3, full5, full5_flush = tables
    best, out = -np.inf, (key0, key1, key2)
    for p in range(pats.shape[0]):
        if counts[p, 0] + filled0 != 3 or counts[p, 1] + filled1 != 5 \
                or counts[p, 2] + filled2 != 5:
            continue
        top, middle, bottom, top_key, middle_key, bottom_key = id0, id1, id2, key0, key1, key2
        for j in range(cards.size):
            card = cards[j]
            row, rank = pats[p, j], card >> 2
            if row == 0:
                top, top_key = after[top, rank], top_key + card_key[card]
            elif row == 1:
                middle, middle_key = after[middle, rank], middle_key + card_key[card]
            elif row == 2:
                bottom, bottom_key = after[bottom, rank], bottom_key + card_key[card]
        strength0 = np.int64(full3[top])
        strength1 = np.int64(full5_flush[middle] if suited[middle_key & SUIT_MASK]
                             else full5[middle])
        strength2 = np.int64(full5_flush[bottom] if suited[bottom_key & SUIT_MASK]
                             else full5[bottom])
        value = np.float32(royalty[0][strength0]) + np.float32(royalty[1][strength1]) \
            + np.float32(royalty[2][strength2])
        score = float(value)
        if entry >= 0 and strength0 >= entry:
            score += fl_value
        if strength0 > strength1 or strength1 > strength2:
            score = -50.0
        score += 1e-4 * (strength0 + strength1 + strength2)
        if score > best:
            best, out = score, (top_key, middle_key, bottom_key)
    return out


@njit(nogil=True, cache=True)
def _play_out(keys: Any, filled: Any, cards: Any, dealt: Any, discards: Any,
              exact_last: bool, card_key: Any, id_of_key: Any, after: Any, made_of: Any,
              made_after: Any, tables: Any, pats: Any, counts: Any, royalty: Any, entry: int,
              fl_value: float) -> None:
    """:func:`play_out` on boards ``(3, B)``, in place, one board at a time: each
    street's ``discards`` cards that fit worst (their best row's score lowest, the
    first of equals) thrown away, the others placed in their order, each on the row it
    scores best on (the first of equals); the last street exactly if ``exact_last``."""
    suited = tables[0]
    worst = np.empty(cards.shape[1], dtype=np.int64)
    kept = np.empty(cards.shape[1], dtype=np.bool_)
    streets = dealt.size
    for b in range(keys.shape[1]):
        key0, key1, key2 = keys[0, b], keys[1, b], keys[2, b]
        id0 = np.int64(id_of_key[key0 >> SUIT_BITS])
        id1 = np.int64(id_of_key[key1 >> SUIT_BITS])
        id2 = np.int64(id_of_key[key2 >> SUIT_BITS])
        filled0, filled1, filled2 = (np.int64(filled[0, b]), np.int64(filled[1, b]),
                                     np.int64(filled[2, b]))
        made0, made1, made2 = (np.int64(made_of[id0]), np.int64(made_of[id1]),
                               np.int64(made_of[id2]))
        start = 0
        for s in range(streets):
            k = dealt[s]
            if exact_last and s == streets - 1:
                key0, key1, key2 = _last_street(
                    id0, id1, id2, key0, key1, key2, filled0, filled1, filled2,
                    cards[b, start:start + k], pats, counts, card_key, after, tables, royalty,
                    entry, fl_value)
                break
            for j in range(k):
                kept[j] = True
            if discards[s]:
                # Every card scored against the board as it stands, its best row's score.
                for j in range(k):
                    card = cards[b, start + j]
                    score0, score1, score2, _, _, _ = _rule_scores(
                        id0, id1, id2, key1, key2, filled0, filled1, filled2, made0, made1,
                        made2, card, card_key[card], made_after, suited)
                    worst[j] = max(score0, score1, score2)
                for _ in range(discards[s]):
                    low = -1
                    for j in range(k):
                        if kept[j] and (low < 0 or worst[j] < worst[low]):
                            low = j
                    kept[low] = False
            for j in range(k):
                if not kept[j]:
                    continue
                card = cards[b, start + j]
                rank, add = card >> 2, card_key[card]
                score0, score1, score2, new0, new1, new2 = _rule_scores(
                    id0, id1, id2, key1, key2, filled0, filled1, filled2, made0, made1, made2,
                    card, add, made_after, suited)
                if score2 > max(score0, score1):
                    id2, key2, filled2, made2 = np.int64(after[id2, rank]), key2 + add, \
                        filled2 + 1, new2
                elif score1 > score0:
                    id1, key1, filled1, made1 = np.int64(after[id1, rank]), key1 + add, \
                        filled1 + 1, new1
                else:
                    id0, key0, filled0, made0 = np.int64(after[id0, rank]), key0 + add, \
                        filled0 + 1, new0
            start += k
        keys[0, b], keys[1, b], keys[2, b] = key0, key1, key2


def play_out(keys: npt.NDArray[np.int64], filled: npt.NDArray[np.int8],
             cards: npt.NDArray[np.uint8], streets: list[tuple[int, int]],
             arrays: RulesetArrays, fl_value: float, exact_last: bool = True,
             placements: tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]] | None = None
             ) -> npt.NDArray[np.int64]:
    """Final row keys of boards ``(3, B)`` given the cards still to come ``(B, F)`` in
    the given streets (dealt, discards): the quick rule, then the last street exactly
    (or by the rule too, for the opponents' boards, which matter less).

    The quick rule places each card where it helps most (the gain in made hand, weighted
    by row, a flush draw's worth, never a row past what the row below can still make),
    throwing away the cards that fit worst; the exact last street takes the placement
    with the best royalties plus fantasyland, fouls last. Compiled, board by board.

    ``placements``: the ways to place the last street and their row counts (by default
    :func:`~ofcstats.simulate.tables.patterns`' when it is played exactly, none when by
    the rule, which never reads them)."""
    out = np.array(keys, dtype=np.int64, order="C")
    if not streets or not out.shape[1]:
        return out
    t = row_tables()
    after, made_of, made_after = transitions()
    last, last_discards = streets[-1]
    if placements is not None:
        pats, counts = placements
    elif exact_last:
        pats, counts = patterns(last, last_discards), pattern_counts(last, last_discards)
    else:
        # The last street by the rule too: no placement is enumerated, so none is built
        # (every way to set 13 cards, for a seat in fantasyland, took seconds to list).
        pats, counts = np.empty((0, last), dtype=np.int8), np.empty((0, 3), dtype=np.int8)
    _play_out(out, np.ascontiguousarray(filled, dtype=np.int8),
              np.ascontiguousarray(cards, dtype=np.uint8),
              np.array([d for d, _ in streets], dtype=np.int64),
              np.array([x for _, x in streets], dtype=np.int64), exact_last, CARD_KEYS,
              t.id_of_key, after, made_of, made_after, (t.suited, t.full3, t.full5, t.full5_flush),
              pats, counts,
              tuple(r.astype(np.float32) for r in arrays.royalty),
              -1 if arrays.entry is None else arrays.entry, float(fl_value))
    return out


def final_strengths(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
    """Exact strengths of complete boards given as row keys ``(3, ...)``: the rows'
    strengths on the one scale of :mod:`ofcstats.evaluate`, rows first."""
    t = row_tables()
    ids = t.id_of_key[keys >> SUIT_BITS].astype(np.intp)
    flush = t.suited[keys[1:] & SUIT_MASK]
    out = np.empty(keys.shape, dtype=np.intp)
    out[0] = t.full3[ids[0]]
    out[1:] = np.where(flush, t.full5_flush[ids[1:]], t.full5[ids[1:]])
    return out


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
        chosen = np.argsort(-guide, axis=1, kind="stable")[:, :keep]  # (m, C)
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
        strengths = final_strengths(final)
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
        strengths = final_strengths(final)
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
    layout = layout_of(13)
    out = np.empty(cards.shape, dtype=np.int8)
    n = bot.rollouts
    for i, hand in enumerate(cards):
        score, sets = chinese.scored_sets(hand, arrays, chinese.WEIGHTS["balanced"])
        keep = min(bot.keep, int(np.isfinite(score).sum()))
        top = np.argsort(-score, kind="stable")[:keep]
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
