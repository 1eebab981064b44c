"""Statistics with their uncertainty: a seeded bootstrap over games, paired across rulesets.

Input is the *per-game frame* (:func:`game_sums`): one row per variant, ruleset, game
and player, with the integer sums every statistic of :mod:`ofcstats.stats` comes from.
Its sums over games are :func:`ofcstats.stats.sums`, so the point estimates here are
exactly the ones ``compare`` and ``players`` print; this module adds their intervals.
The commands never build that frame (:func:`compare_stored`,
:func:`player_intervals_stored`): one pass over the stored rows
(:func:`ofcstats.uncertainty.sums._scan`) streams each row's values with its game's code
out of DuckDB, batch by batch, and the compiled step (:mod:`ofcstats.uncertainty._kernel`)
adds them into per-game sums (over every player
where only their total is resampled, per player where the skill signal or a player's
rate needs it), in 16 or 32 bits (64 should one not fit); the point estimates are
those sums added up. The answer is the same bytes as the frame's
(tests/test_uncertainty.py holds the two to each other), in a fraction of the time
and memory.

The method (docs/statistics.md says the same to users):

- **Resample unit: the game** (:data:`ofcstats.session.GAME_SPLIT`,
  :func:`ofcstats.session.game_ends`). A game never spans two sessions, and it ends only
  when no fantasyland is owed, so a fantasyland entry and its stays lie in one game;
  hands within a game are dependent, games are taken as independent. Every statistic
  is a function of sums over games, so resampling games is resampling those sums.
- **Paired**: per variant, one matrix of multinomial weights (resamples x games: each
  resample draws as many games as the variant has, with replacement) serves every
  ruleset and every player. Every hand is scored under every ruleset, so the rulesets'
  statistics move together from resample to resample, and the interval of a difference
  between two rulesets is far narrower than either's own.
- The resampled sums are matrix products ``W @ sums`` (a block of games at a time,
  the columns equal in every game or 0 in every game multiplied once or not at all);
  the weights and sums are whole numbers, so every product is exact: in float32 where
  every partial sum stays under 2**24, else in float64, in any order and any blocks,
  and the intervals are the same bytes whatever the thread count. The next resamples
  are drawn on a second thread while these are multiplied, always in the same order.
  :data:`RESAMPLES` resamples, seeded with the seed and the variant's name
  (:func:`ofcstats.uncertainty.resample._rng`).
- **Intervals**: 95% percentile intervals (the 2.5% and 97.5% quantiles of the
  resampled statistic, linear interpolation), as ``<stat>_ci_low`` / ``<stat>_ci_high``.
  A resample whose statistic is undefined (no eligible hand, fewer than two players
  with :data:`ofcstats.stats.MIN_HANDS_FOR_SKILL` hands) is left out of its quantiles.
- **Skill groups** (:func:`skill_groups`): within a variant, rulesets in rank order;
  the best starts group 1 and leads it; each next ruleset joins the current group when
  the 95% percentile interval of its paired difference to the group's leader
  (leader's signal minus its own, on the same resamples) covers 0, else it starts and
  leads the next group. Rulesets in one group cannot be ranked by these data.
- **Hands to tell the top two apart** (:func:`tell_apart`): with ``d`` the observed
  difference of the top two skill signals and ``s`` the bootstrap SD of the paired
  difference at ``n`` hands, the SD shrinks as ``1 / sqrt(hands)``, so the difference
  is told apart at 95% (``d = 1.96 s'``) after ``n (1.96 s / d)²`` hands.

The parts, each readable alone:

- :mod:`ofcstats.uncertainty.sums`: the per-game sums (the frame, and the one pass over
  the stored rows);
- :mod:`ofcstats.uncertainty.resample`: the bootstrap over games (the layout of the sums,
  the weights, the exact products);
- :mod:`ofcstats.uncertainty.answers`: the statistics and their intervals, the skill
  groups, the hands to tell the top two apart;
- :mod:`ofcstats.uncertainty._kernel`: the compiled steps the first two use (numba),
  loaded only when they run.
"""

from ofcstats.uncertainty.answers import (
    COMPARE_STATS,
    PLAYER_RATES,
    Comparison,
    compare,
    compare_stored,
    player_intervals,
    player_intervals_stored,
    skill_groups,
    tell_apart,
)
from ofcstats.uncertainty.resample import CHUNK, LEVEL, PRODUCT, RESAMPLES, SEED
from ofcstats.uncertainty.sums import SUM_COLUMNS, game_sums, totals

__all__ = [
    "CHUNK", "COMPARE_STATS", "LEVEL", "PLAYER_RATES", "PRODUCT", "RESAMPLES", "SEED",
    "SUM_COLUMNS", "Comparison", "compare", "compare_stored", "game_sums",
    "player_intervals", "player_intervals_stored", "skill_groups", "tell_apart", "totals",
]
