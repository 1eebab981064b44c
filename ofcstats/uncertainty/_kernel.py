"""The compiled steps of :mod:`ofcstats.uncertainty` (numba), apart so that a small
bootstrap never loads the compiler; tests/test_uncertainty.py holds each to the plain
numpy or Polars reading of the same thing.

- :func:`weights` / :func:`counted`: a resample's weights, how many times it drew each
  game. ``numpy.bincount`` gives the same counts, but over a million games it adds into
  an array far larger than the caches, one draw at a time; these count one resample at a
  time into a small array of int32 and write the weights out in order.
- :func:`scatter`: one pass over a batch of scored rows, adding each row's values into
  its game's sums (over every player) and its player's sums in that game, and into the
  totals per ruleset and player: the per-game sums of :func:`ofcstats.uncertainty.sums.game_sums`
  without a query grouping millions of games.
"""

# The functions here are compiled: line coverage does not see them run.
# mypy: ignore-errors

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def weights(drawn, games):
    """Per resample (a row of ``drawn``, the games it drew, each in ``range(games)``):
    how many times it drew each game, as float64 (resamples x games)."""
    out = np.empty((drawn.shape[0], games))
    counts = np.zeros(games, dtype=np.int32)
    for i in range(drawn.shape[0]):
        counts[:] = 0
        for j in range(drawn.shape[1]):
            counts[drawn[i, j]] += 1
        for j in range(games):
            out[i, j] = counts[j]
    return out


@njit(nogil=True, cache=True)
def counted(drawn, out, first):
    """:func:`weights` of ``drawn`` into rows ``first``... of ``out`` (uint8); the largest
    count, so that the caller can tell a count that does not fit (over 255)."""
    games = out.shape[1]
    counts = np.zeros(games, dtype=np.int32)
    most = 0
    for i in range(drawn.shape[0]):
        counts[:] = 0
        for j in range(drawn.shape[1]):
            counts[drawn[i, j]] += 1
        row = first + i
        for j in range(games):
            count = counts[j]
            most = max(most, count)
            out[row, j] = min(count, 255)
    return most


@njit(nogil=True, cache=True)
def _added(sums, row, r, columns, values, i, high):
    """Row ``i``'s ``values`` of ``columns`` added into ``sums[row, r]``; False where a
    sum would pass ``high``."""
    for c in range(columns.shape[0]):
        total = np.int64(sums[row, r, c]) + values[columns[c]][i]
        if total > high or total < -high:
            return False
        sums[row, r, c] = total
    return True


@njit(nogil=True, cache=True)
def scatter(start, variant_of, game_of, hand_of, ruleset_of, player_of, flags, values,
            variant, rmap, pmap, game_small, game_small_columns, game_large,
            game_large_columns, game_seen, slot_start, slot_used, slot_player, slot_pair,
            pair_small, pair_small_columns, pair_large, pair_large_columns, pair_game,
            pair_player, used, totals, flagged, seen, hands, small_high, large_high):
    """Rows ``start``... of a batch (per row: variant, game, hand within the variant,
    ruleset and player codes, a flag, and ``values``: a tuple of columns) of ``variant``:
    each row's values added into its game's sums (games x rulesets x columns: those of
    ``game_small_columns`` into ``game_small``, of ``game_large_columns`` into
    ``game_large``), into its player's sums in that game the same way (pairs x rulesets x
    columns: a pair, a game and a player, numbered as first met: ``pair_game``,
    ``pair_player``, found through the game's slots), and every value into ``totals``
    (rulesets x players x values); ``flagged`` or-ed with the flag, ``hands`` counting
    each ruleset's distinct hands. ``rmap`` and ``pmap`` turn the rows' ruleset and
    player codes into the variant's; ``small_high`` and ``large_high``: the largest sum
    the small and large sums hold.

    Returns the number of rows done: short of the batch when the pairs are full (grow
    them and go on from there); minus one minus the row whose sum would not fit (sum
    again in wider types); minus one minus the rows minus the row whose ruleset or
    player is not among the variant's (name them from the rows)."""
    n = variant_of.shape[0]
    for i in range(start, n):
        if variant_of[i] != variant:
            continue
        if ruleset_of[i] < 0 or player_of[i] < 0:
            return -1 - n - i  # a name not among those given
        r = rmap[ruleset_of[i]]
        p = pmap[player_of[i]]
        if r < 0 or p < 0:
            return -1 - n - i
        g = game_of[i]
        first = slot_start[g]
        k = first
        end = first + slot_used[g]
        while k < end and slot_player[k] != p:
            k += 1
        if k == end:
            if used[0] == pair_game.shape[0]:
                return i
            slot_player[k] = p
            slot_pair[k] = used[0]
            slot_used[g] += 1
            pair_game[used[0]] = g
            pair_player[used[0]] = p
            used[0] += 1
        pair = slot_pair[k]
        if not (_added(game_small, g, r, game_small_columns, values, i, small_high)
                and _added(game_large, g, r, game_large_columns, values, i, large_high)
                and _added(pair_small, pair, r, pair_small_columns, values, i, small_high)
                and _added(pair_large, pair, r, pair_large_columns, values, i, large_high)):
            return -1 - i
        for c in range(len(values)):
            totals[r, p, c] += values[c][i]
        game_seen[g] = 1
        if flags[i]:
            flagged[r, p] = 1
        h = hand_of[i]
        if not seen[r, h]:
            seen[r, h] = 1
            hands[r] += 1
    return n


@njit(nogil=True, cache=True)
def pairs_of(games, players, slot_start, slot_used, slot_player, slot_pair):
    """The pair (as :func:`scatter` numbered them) of each game and player, -1 where the
    player has no rows in that game."""
    out = np.full(games.shape[0], -1, dtype=np.int64)
    for i in range(games.shape[0]):
        g = games[i]
        for k in range(slot_start[g], slot_start[g] + slot_used[g]):
            if slot_player[k] == players[i]:
                out[i] = slot_pair[k]
                break
    return out
