"""Simulated per-game frames with known truths, for the bootstrap's validity tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from ofcstats.uncertainty import SUM_COLUMNS


def per_game(games: int, *, skills: Sequence[float] = (1.0, 0.0, -1.0), noise: float = 10.0,
             hands_per_game: int = 3, foul: float = 0.2, royalty: float = 0.0,
             rulesets: dict[str, tuple[float, float]] | None = None, seed: int = 1,
             variant: str = "pineapple", game_noise: float = 0.0,
             entry: float = 0.0) -> pl.DataFrame:
    """``games`` games of ``hands_per_game`` hands, each hand played by every player:
    points are the player's skill plus normal noise of SD ``noise``, centred over the
    table (zero-sum); a hand fouls with probability ``foul``. ``rulesets``: name to
    (scale, royalty SD): the points times the scale, plus zero-sum royalty noise
    independent of skill. Points are whole numbers (rounded). ``game_noise``: the SD of
    a player's luck shared by every hand of a game (the hands of one game move
    together); ``entry``: the chance that a hand enters fantasyland."""
    rulesets = rulesets or {"base": (1.0, royalty)}
    rng = np.random.default_rng(seed)
    n_players = len(skills)
    shape = (games, hands_per_game, n_players)
    base = np.asarray(skills)[None, None, :] + rng.normal(0, noise, shape)
    if game_noise:
        base = base + rng.normal(0, game_noise, (games, 1, n_players))
    base -= base.mean(axis=-1, keepdims=True)
    fouls = rng.random(shape) < foul
    entered = (rng.random(shape) < entry).sum(axis=1) if entry else np.zeros((games, n_players))
    frames = []
    for name, (scale, royalty_sd) in sorted(rulesets.items()):
        extra = rng.normal(0, royalty_sd, shape) if royalty_sd else np.zeros(shape)
        extra -= extra.mean(axis=-1, keepdims=True)
        royalties = np.round(extra)
        points = np.round(base) * scale + royalties
        sums = {
            "hands": np.full((games, n_players), hands_per_game),
            "total": points.sum(axis=1),
            "squares": (points ** 2).sum(axis=1),
            "abs_points": np.abs(points).sum(axis=1),
            "abs_royalty": np.abs(royalties).sum(axis=1),
            "abs_other": np.abs(points - royalties).sum(axis=1),
            "fouls": fouls.sum(axis=1),
            "eligible": np.full((games, n_players), hands_per_game),
            "entered": entered,
            "stayed": np.zeros((games, n_players)),
            "fantasyland_hands": np.zeros((games, n_players)),
            "royalty_top": np.zeros((games, n_players)),
            "royalty_middle": np.zeros((games, n_players)),
            "royalty_bottom": np.zeros((games, n_players)),
            "royalty_points": royalties.sum(axis=1),
            "opponents": np.full((games, n_players), hands_per_game * (n_players - 1)),
            "scoops": np.zeros((games, n_players)),
            "scooped": np.zeros((games, n_players)),
            "wins_top": np.zeros((games, n_players)),
            "wins_middle": np.zeros((games, n_players)),
            "wins_bottom": np.zeros((games, n_players)),
        }
        frames.append(pl.DataFrame({
            "variant": variant, "ruleset": name,
            "session_id": np.repeat([f"s{g // 50:04d}" for g in range(games)], n_players),
            "game": np.repeat(np.arange(games) % 50, n_players).astype(np.int64),
            "player": np.tile([f"p{i}" for i in range(n_players)], games),
            **{c: sums[c].ravel().astype(np.int64) for c in SUM_COLUMNS},
        }))
    return pl.concat(frames)


def hands_of(frame: pl.DataFrame) -> pl.DataFrame:
    """:func:`ofcstats.stats.hands_per_ruleset` of a frame whose every player plays every
    hand."""
    return frame.group_by("variant", "ruleset", "session_id", "game").agg(
        pl.col("hands").max()).group_by("variant", "ruleset").agg(pl.col("hands").sum())
