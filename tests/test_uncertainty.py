"""The bootstrap over games: its sums, its groups, and its validity on simulated data."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from test_stats import scored
from uncertaintygen import hands_of, per_game

from ofcstats import analysis, stats, uncertainty
from ofcstats.analysis import Filters
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.rules import load_rulesets, preset_names
from ofcstats.store import Store
from ofcstats.uncertainty import resample, sums

SKILLS = (3.0, 0.0, -3.0)


def two_sessions() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Six hands of ann, bob and cat in two sessions and three games, with fouls,
    fantasyland and royalties; and each hand's game."""
    rows = []
    points = [(3, -1, -2), (-4, 6, -2), (0, 0, 0), (9, -3, -6), (-1, -1, 2), (5, -7, 2)]
    for i, hand in enumerate(points):
        for seat, (player, value) in enumerate(zip(("ann", "bob", "cat"), hand,
                                                   strict=True)):
            rows.append({
                "hand_id": f"h{i}", "session_id": f"s{i // 4}", "player": player,
                "seat": seat + 1, "points": value, "n_seats": 3,
                "royalty_points": 2 if value > 4 else 0, "fouled": value < -5,
                "fantasyland": player == "bob" and i in (1, 2),
                "fantasyland_entered": player == "bob" and i == 0,
                "fantasyland_stayed": player == "bob" and i == 1,
                "scoops": int(value > 4), "wins_top": int(value > 0)})
    frame = scored(rows)
    both = pl.concat([frame, frame.with_columns(ruleset=pl.lit("doubled"),
                                                points=pl.col("points") * 2)])
    games = pl.DataFrame({"hand_id": [f"h{i}" for i in range(6)],
                          "game": [0, 0, 1, 1, 0, 0]})
    return both, games


def test_game_sums_add_up_to_the_sums_of_every_statistic() -> None:
    frame, games = two_sessions()
    with stats.frame_rows(frame) as rows:
        per_game = uncertainty.game_sums(rows, games)
        summed = stats.sums(rows)
    assert per_game.select("session_id", "game").unique().height == 3
    assert per_game.height == 2 * 3 * 3  # rulesets, games, players
    assert uncertainty.totals(per_game).select(summed.columns).equals(summed)


def test_the_point_estimates_are_the_ones_compare_shows_today() -> None:
    frame, games = two_sessions()
    with stats.frame_rows(frame) as rows:
        per_game = uncertainty.game_sums(rows, games)
        hands = stats.hands_per_ruleset(rows)
    today = stats.ruleset_stats(frame)
    found = uncertainty.compare(per_game, hands, resamples=50).table
    assert found.select(today.columns).equals(today)


@pytest.mark.parametrize("players", [None, ("ann", "cat"), ("bob",)])
def test_compare_summed_in_the_database_is_compare_of_the_per_game_frame(
        players: tuple[str, ...] | None) -> None:
    frame, games = two_sessions()
    if players is not None:
        frame = frame.filter(pl.col("player").is_in(players) & (pl.col("hand_id") != "h2"))
    with stats.frame_rows(frame) as rows:
        expected = uncertainty.compare(uncertainty.game_sums(rows, games),
                                       stats.hands_per_ruleset(rows), resamples=60, seed=3)
        found = uncertainty.compare_stored(rows, games, resamples=60, seed=3)
    assert found.table.equals(expected.table)
    assert found.tell_apart.equals(expected.tell_apart)


@pytest.mark.parametrize("players", [None, ("ann", "cat"), ("bob",)])
@pytest.mark.parametrize("with_money", [True, False])
def test_player_intervals_summed_in_the_database_are_those_of_the_per_game_frame(
        players: tuple[str, ...] | None, with_money: bool) -> None:
    frame, games = two_sessions()
    if players is not None:
        frame = frame.filter(pl.col("player").is_in(players) & (pl.col("hand_id") != "h2"))
    with stats.frame_rows(frame) as rows:
        per_game = uncertainty.game_sums(rows, games)
        # Money of every seat of every game, one game's settled for one ruleset only.
        money = per_game.select("variant", "ruleset", "session_id", "game", "player",
                                money=pl.col("total") * 0.37).filter(
            (pl.col("game") > 0) | (pl.col("ruleset") == "doubled")) if with_money else None
        expected = uncertainty.player_intervals(per_game, money, resamples=60, seed=3)
        found = uncertainty.player_intervals_stored(rows, games, money, resamples=60, seed=3)
    assert found.equals(expected)


def test_the_compiled_weights_are_numpys_counts() -> None:
    from ofcstats.uncertainty._kernel import weights  # noqa: PLC0415 - loads the compiler

    rng = np.random.default_rng(5)
    for games in (1, 7, 5_000):
        drawn = rng.integers(0, games, size=(13, games))
        expected = np.stack([np.bincount(row, minlength=games) for row in drawn])
        found = weights(drawn, games)
        assert found.dtype == np.float64
        assert np.array_equal(found, expected)
        assert np.array_equal(resample._weights(drawn.copy(), games), expected)


def test_a_ruleset_against_itself_with_doubled_points_is_one_group() -> None:
    frame = per_game(300, rulesets={"base": (1.0, 0.0), "doubled": (2.0, 0.0)}, skills=SKILLS)
    comparison = uncertainty.compare(frame, hands_of(frame), resamples=200)
    table = comparison.table.sort("ruleset")
    signal = table.get_column("skill_signal").to_list()
    assert signal[0] == signal[1] is not None
    assert table.get_column("skill_group").to_list() == [1, 1]
    low = table.get_column("skill_signal_ci_low").to_list()
    assert low[0] == low[1]
    assert table.get_column("sd").to_list()[1] == pytest.approx(
        2 * table.get_column("sd").to_list()[0])
    apart = comparison.tell_apart.row(0, named=True)
    assert apart["difference"] == apart["difference_ci_low"] == apart["difference_ci_high"] == 0
    assert apart["told_apart"] is False
    assert apart["hands_needed"] is None  # no difference: never told apart


def test_royalties_that_add_noise_are_told_apart_from_none() -> None:
    rulesets = {"no-royalties": (1.0, 0.0), "royalties": (1.0, 8.0)}
    frame = per_game(2000, rulesets=rulesets, skills=SKILLS)
    comparison = uncertainty.compare(frame, hands_of(frame), resamples=400)
    table = comparison.table
    assert table.select("ruleset", "skill_rank", "skill_group").rows() == [
        ("no-royalties", 1, 1), ("royalties", 2, 2)]
    apart = comparison.tell_apart.row(0, named=True)
    assert apart["told_apart"] is True
    assert 0 < apart["difference_ci_low"] < apart["difference"] < apart["difference_ci_high"]
    assert apart["hands_needed"] < apart["hands"] == 6000
    assert apart["more_hands"] == 0
    # Their royalty shares: none, and an interval around the one observed.
    share = table.get_column("royalty_share").to_list()
    assert share[0] == 0
    assert table.get_column("royalty_share_ci_high").to_list()[0] == 0
    row = table.row(1, named=True)
    assert row["royalty_share_ci_low"] < row["royalty_share"] < row["royalty_share_ci_high"]


def test_too_few_hands_cannot_rank_and_say_how_many_more_are_needed() -> None:
    rulesets = {"no-royalties": (1.0, 0.0), "royalties": (1.0, 2.0)}
    frame = per_game(60, rulesets=rulesets, skills=SKILLS)
    comparison = uncertainty.compare(frame, hands_of(frame), resamples=400)
    assert comparison.table.get_column("skill_group").to_list() == [1, 1]
    apart = comparison.tell_apart.row(0, named=True)
    assert apart["told_apart"] is False
    assert apart["hands"] == 180
    assert apart["hands_needed"] > 180
    assert apart["more_hands"] == apart["hands_needed"] - 180


def test_a_ruleset_joins_the_group_of_its_leader_not_of_its_neighbour() -> None:
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 0.01, 1000)
    # b is within noise of a, c within noise of b, but c is far from a.
    signals = np.stack([0.50 + noise, 0.49 + noise + rng.normal(0, 0.01, 1000),
                        0.47 + noise + rng.normal(0, 0.01, 1000),
                        0.30 + noise], axis=1)
    assert uncertainty.skill_groups(signals) == [1, 1, 2, 3]
    assert uncertainty.skill_groups(signals[:, [0, 0, 3]]) == [1, 1, 2]


def test_hands_needed_scale_with_the_square_of_the_noise_to_the_difference() -> None:
    rng = np.random.default_rng(1)
    first = 0.30 + rng.normal(0, 0.02, 4000)
    second = first - 0.01 + rng.normal(0, 0.01, 4000)  # paired: difference SD 0.01
    table = pl.DataFrame({"ruleset": ["a", "b"], "skill_signal": [0.30, 0.29],
                          "hands": [1000, 1000]})
    row = uncertainty.tell_apart("pineapple", ["a", "b"], np.stack([first, second], 1),
                                 table).row(0, named=True)
    sd = float(np.std(first - second, ddof=1))
    assert row["hands_needed"] == math.ceil(1000 * (stats.Z95 * sd / 0.01) ** 2)
    assert 3500 < row["hands_needed"] < 4200  # (1.96 x 0.01 / 0.01)^2 x 1000


def test_every_player_rate_has_an_interval_around_it() -> None:
    frame, games = two_sessions()
    with stats.frame_rows(frame) as rows:
        found = uncertainty.game_sums(rows, games)
    today = stats.player_stats(frame, bootstrap=20)
    money = found.select("variant", "ruleset", "session_id", "game", "player",
                         money=pl.col("total") * 0.5)
    table = uncertainty.player_intervals(found, money, resamples=300)
    assert table.height == today.height
    rates = [name for name in uncertainty.PLAYER_RATES if name != "money_per_game"]
    assert table.select(*stats.KEYS, *rates).equals(today.select(*stats.KEYS, *rates))
    for name in uncertainty.PLAYER_RATES:
        values = table.select(name, f"{name}_ci_low", f"{name}_ci_high").drop_nulls()
        assert values.height > 0
        assert values.filter((pl.col(f"{name}_ci_low") > pl.col(name))
                             | (pl.col(name) > pl.col(f"{name}_ci_high"))).is_empty(), name
    ann = table.filter(pl.col("player") == "ann", pl.col("ruleset") == "american").row(
        0, named=True)
    assert ann["money_per_game"] == pytest.approx((3 - 4 + 0 + 9 - 1 + 5) * 0.5 / 3)
    # Only bob played in fantasyland: the others have no stay rate, nor its interval.
    stay = table.filter(pl.col("player") != "bob")
    assert stay.get_column("fantasyland_stay_rate_ci_low").null_count() == stay.height


def test_a_foul_rate_interval_halves_when_the_hands_quadruple() -> None:
    widths = []
    for games in (400, 1600):
        frame = per_game(games, skills=SKILLS)
        table = uncertainty.compare(frame, hands_of(frame), resamples=400).table
        row = table.row(0, named=True)
        widths.append({name: row[f"{name}_ci_high"] - row[f"{name}_ci_low"]
                       for name in ("sd", "foul_rate", "skill_signal")})
    for name in widths[0]:
        assert 0.4 < widths[1][name] / widths[0][name] < 0.6, name


_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from uncertaintygen import hands_of, per_game
from ofcstats import uncertainty
frame = per_game(500, rulesets={{"a": (1.0, 0.0), "b": (1.0, 5.0), "c": (2.0, 1.0)}},
                 skills=(2.0, 1.0, 0.0, -3.0), hands_per_game=4)
comparison = uncertainty.compare(frame, hands_of(frame), resamples=300, seed=11)
sys.stdout.write(comparison.table.write_csv() + comparison.tell_apart.write_csv()
                 + uncertainty.player_intervals(frame, resamples=300, seed=11).write_csv())
"""


def test_the_same_bytes_whatever_the_thread_count() -> None:
    script = _SCRIPT.format(tests=str(Path(__file__).parent))
    outputs = []
    for threads in ("1", "2", "2"):
        env = {**os.environ, "POLARS_MAX_THREADS": threads, "OPENBLAS_NUM_THREADS": threads}
        outputs.append(subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                      capture_output=True).stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    assert b"skill_group" in outputs[0]


@pytest.mark.slow
def test_the_95_percent_intervals_cover_the_truth_95_times_in_100() -> None:
    """Over 100 simulated tables of 100 games, each interval holds the value a table of
    100,000 games gives (the truth, to well within the small tables' intervals) between
    90 and 99 times in 100; the paired difference of the skill signals too."""
    rulesets = {"no-royalties": (1.0, 0.0), "royalties": (1.0, 6.0)}
    big = per_game(100_000, rulesets=rulesets, seed=999, skills=SKILLS)
    truth = stats.ruleset_table(uncertainty.totals(big), hands_of(big)).sort("ruleset")
    names = ("sd", "mean_abs_points", "foul_rate", "skill_signal")
    hits = {(name, r): 0 for name in names for r in range(2)}
    hits.update({("royalty_share", 1): 0, ("difference", 0): 0})
    true_difference = float(truth.get_column("skill_signal").diff().item(1))
    repetitions = 100
    for rep in range(repetitions):
        frame = per_game(100, rulesets=rulesets, seed=rep, skills=SKILLS)
        found = uncertainty.compare(frame, hands_of(frame), seed=rep)
        table = found.table.sort("ruleset")
        for name, r in hits:
            if name == "difference":
                row = found.tell_apart.row(0, named=True)
                value = -true_difference if row["first"] == "no-royalties" else true_difference
            else:
                row = {key: table.get_column(key)[r] for key in
                       (f"{name}_ci_low", f"{name}_ci_high")}
                value = truth.get_column(name)[r]
            hits[name, r] += row[f"{name}_ci_low"] <= value <= row[f"{name}_ci_high"]
    coverage = {key: count / repetitions for key, count in hits.items()}
    assert all(0.90 <= share <= 0.99 for share in coverage.values()), coverage


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped sample logs (every variant, criss-cross's two boards a player among
    them) loaded and scored under every ruleset of each variant."""
    db = tmp_path_factory.mktemp("sample") / "sample.duckdb"
    ingest(sorted((Path(__file__).parent.parent / "data" / "sample").glob("*.jsonl")), db)
    with Store(db) as store:
        rescore(store, load_rulesets(preset_names()))
    return db


def _money(store: Store, filters: Filters, rows: stats.Rows, games: pl.DataFrame
           ) -> pl.DataFrame:
    names = sorted(stats.sums(rows).get_column("ruleset").unique().to_list())
    return analysis.money_and_games(store, filters, store.scored_rulesets(names), games)[1]


def _from_the_frame(store: Store, filters: Filters) -> tuple[uncertainty.Comparison,
                                                            pl.DataFrame]:
    """compare and the player intervals the readable way: the per-game frame."""
    rows = analysis.stored_rows(store, filters)
    games = analysis.hand_games(store, filters)
    per_game = uncertainty.game_sums(rows, games)
    compared = uncertainty.compare(per_game, stats.hands_per_ruleset(rows), resamples=40,
                                   seed=4)
    money = _money(store, filters, rows, games).with_columns(
        pl.col(pl.Categorical).cast(pl.String))
    return compared, uncertainty.player_intervals(per_game, money, resamples=40, seed=4)


def _in_one_pass(store: Store, filters: Filters) -> tuple[uncertainty.Comparison,
                                                         pl.DataFrame]:
    rows = analysis.stored_rows(store, filters)
    games = analysis.hand_games(store, filters)
    money = _money(store, filters, rows, games)
    return (uncertainty.compare_stored(rows, games, resamples=40, seed=4),
            uncertainty.player_intervals_stored(rows, games, money, resamples=40, seed=4))


def _passes(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """The options of every pass over the rows from now on, as they start."""
    calls: list[dict[str, object]] = []
    scan = sums._scan_into

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(kwargs)
        return scan(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sums, "_scan_into", spy)
    return calls


@pytest.mark.parametrize("players", [None, ("alice", "bob", "rosa", "nora")])
def test_one_pass_over_a_store_of_every_variant_is_the_per_game_frames_answer(
        sample_store: Path, players: tuple[str, ...] | None) -> None:
    with Store(sample_store, read_only=True) as store:
        filters = Filters(players=players)
        expected, expected_players = _from_the_frame(store, filters)
        found, found_players = _in_one_pass(store, filters)
    assert found.table.get_column("variant").n_unique() >= 2
    assert found.table.equals(expected.table)
    assert found.tell_apart.equals(expected.tell_apart)
    assert found_players.equals(expected_players)
    assert found_players.get_column("money_per_game_ci_low").drop_nulls().len() > 0


def test_sums_that_overflow_16_bits_are_summed_again_in_64(
        sample_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Store(sample_store, read_only=True) as store:
        expected, expected_players = _in_one_pass(store, Filters())
        passes = _passes(monkeypatch)
        monkeypatch.setattr(sums, "_SMALL_HIGH", 1)  # a game of two hands overflows
        found, found_players = _in_one_pass(store, Filters())
    assert [p["wide"] for p in passes[:2]] == [False, True]
    assert found.table.equals(expected.table)
    assert found_players.equals(expected_players)


def test_a_name_the_database_did_not_foretell_is_named_from_the_rows(
        sample_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Store(sample_store, read_only=True) as store:
        expected, expected_players = _in_one_pass(store, Filters())
        every = store.scored_names()
        # One player the small tables forgot: the rows name them instead.
        monkeypatch.setattr(Store, "scored_names", lambda self: every.filter(
            pl.col("player") != every.get_column("player").sort()[0]))
        passes = _passes(monkeypatch)
        found, found_players = _in_one_pass(store, Filters())
    assert [p["named"] for p in passes[:2]] == [True, False]
    assert found.table.equals(expected.table)
    assert found_players.equals(expected_players)
