"""The compiled step of :mod:`ofcstats.uncertainty` (numba): a resample's weights, how
many times it drew each game. ``numpy.bincount`` gives the same counts, but over a
million games it adds into an array far larger than the caches, one draw at a time; this
counts one resample at a time into a small array of int32 and writes the weights out in
order. It is apart so that a small bootstrap never loads the compiler;
tests/test_uncertainty.py holds it to ``numpy.bincount``.
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
