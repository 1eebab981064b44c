"""The bootstrap over games: its sums, its groups, and its validity on simulated data."""

from __future__ import annotations

import functools
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
from ofcstats.uncertainty import answers, resample, sums

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
    today = stats.player_stats(frame)
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
    truth = stats.ruleset_table(uncertainty.totals(big), hands_of(big), stats.skill_noise_of(
        big, ("session_id", "game"))).sort("ruleset")
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


# The statistics that can say "no difference": simulated tables with a known truth.

EQUAL = (0.0, 0.0, 0.0)
"""Three players of one style: no player is better."""
RULESETS = {"plain": (1.0, 0.0), "royalties": (1.0, 6.0)}


@functools.cache
def _compared_tables(skills: tuple[float, ...], games: int, tables: int
                     ) -> tuple[pl.DataFrame, ...]:
    """``compare``'s table of each of ``tables`` simulated tables (cached: several tests
    read the same tables)."""
    found = []
    for rep in range(tables):
        frame = per_game(games, skills=skills, rulesets=RULESETS, seed=500 + rep)
        found.append(uncertainty.compare(frame, hands_of(frame), resamples=300,
                                         seed=rep).table.sort("ruleset"))
    return tuple(found)


@functools.cache
def _true_table(skills: tuple[float, ...]) -> pl.DataFrame:
    big = per_game(100_000, skills=skills, rulesets=RULESETS, seed=999)
    return stats.ruleset_table(uncertainty.totals(big), hands_of(big), stats.skill_noise_of(
        big, ("session_id", "game"))).sort("ruleset")


@pytest.mark.slow
def test_players_of_one_style_show_no_skill_in_nine_tables_of_ten() -> None:
    """Three equal players, 2,000 hands: the skill signal's interval reaches 0 under
    every ruleset in at least 90% of tables, the estimate averages within 0.01 of 0, and
    where it reaches 0 no number of hands to tell players apart is given."""
    tables = _compared_tables(EQUAL, 667, 40)
    reached = [all(t.get_column("skill_signal_ci_low") == 0) for t in tables]
    assert sum(reached) / len(tables) >= 0.9
    estimates = np.array([t.get_column("skill_signal").to_list() for t in tables])
    assert abs(estimates.mean()) <= 0.01, estimates.mean(axis=0)
    for table in tables:
        quiet = table.filter(pl.col("skill_signal_ci_low") == 0)
        assert quiet.get_column("skill_shown").not_().all()
        assert (quiet.get_column("skill_signal") == 0).all()
        assert quiet.get_column("hands_to_tell_apart").is_null().all()
        assert quiet.get_column("hands_to_tell_apart_ci_high").is_null().all()


def test_without_removing_the_noise_equal_players_would_show_skill() -> None:
    """The spread of the means alone (the signal before the noise is taken out) is well
    above 0 for equal players: the noise is what the estimate removes."""
    table = _compared_tables(EQUAL, 667, 40)[0]
    raw = table.get_column("spread") / table.get_column("pooled_sd")
    assert (raw > 0.01).all()
    assert (table.get_column("skill_signal") < raw).all()


def _resampled_signals(frame: pl.DataFrame) -> tuple[list[float], np.ndarray]:
    """The skill signal of each ruleset and its 1,000 resampled values, as compare
    draws them."""
    noise = stats.skill_noise_of(frame, ("session_id", "game"))
    table = stats.ruleset_table(uncertainty.totals(frame), hands_of(frame), noise)
    variant = table.get_column("variant").item(0)
    layout = resample._Layout.of(frame, answers._COMPARE_COLUMNS)
    table = table.sort("ruleset")
    assert layout.rulesets == table.get_column("ruleset").to_list()
    replicates = answers._replicates(variant, layout, noise, 1_000, 7)["skill_signal"]
    return table.get_column("skill_signal").to_list(), replicates


def test_where_the_luck_explains_the_spread_most_resamples_do_too() -> None:
    """Equal players: where the estimate is 0 (the luck explains the whole spread), at
    least half the resampled signals are 0 too: each resample takes out the luck of the
    hands and the luck of its own draw. Taking the luck out once would leave about a
    third of them at 0, and the interval of equal players would sit above the estimate."""
    signals, replicates = _resampled_signals(per_game(667, skills=EQUAL, rulesets=RULESETS,
                                                      seed=11))
    zero = [r for r, value in enumerate(signals) if value == 0]
    assert zero
    assert ((replicates[:, zero] == 0).mean(axis=0) >= 0.5).all()


def test_the_resampled_signals_spread_around_a_clear_estimate() -> None:
    """Players of clearly different skill: the resampled signals' median is within a
    tenth of the estimate."""
    signals, replicates = _resampled_signals(per_game(200, skills=(6.0, 0.0, -6.0),
                                                      rulesets=RULESETS, seed=12))
    assert np.allclose(np.median(replicates, axis=0), signals, rtol=0.1)


@pytest.mark.slow
def test_players_of_different_skill_show_it_at_600_hands() -> None:
    """A clear difference (a signal about 0.7, as between a random bot and two others):
    the interval stays above 0 in every table of 600 hands."""
    tables = _compared_tables((6.0, 0.0, -6.0), 200, 30)
    assert all((t.get_column("skill_signal_ci_low") > 0).all() for t in tables)
    assert all(t.get_column("skill_shown").all() for t in tables)


@pytest.mark.slow
def test_the_skill_signal_interval_covers_the_truth_at_600_hands() -> None:
    """A small difference at 600 hands (the truth from a table of 300,000 hands): the
    interval holds it in at least 92% of tables, under each ruleset."""
    skills = (1.0, 0.0, -1.0)
    truth = _true_table(skills).get_column("skill_signal").to_list()
    tables = _compared_tables(skills, 200, 100)
    for r, value in enumerate(truth):
        held = [t.row(r, named=True)["skill_signal_ci_low"] <= value
                <= t.row(r, named=True)["skill_signal_ci_high"] for t in tables]
        assert sum(held) / len(tables) >= 0.92, (r, sum(held))


@pytest.mark.slow
def test_hands_to_tell_apart_is_where_a_player_one_spread_up_is_told_apart_half_the_time(
        ) -> None:
    """The sentence of docs/statistics.md: after ``hands_to_tell_apart`` hands, a player
    whose true mean is one spread of the players' true means above the table's average
    has a 95% interval of its mean that excludes the average in about half of tables
    (within 10 points)."""
    skills = (1.0, 0.0, -1.0)  # p0 is one spread (the SD of 1, 0, -1) above the average
    hands = int(_true_table(skills).row(0, named=True)["hands_to_tell_apart"])
    told = []
    for rep in range(200):
        frame = per_game(math.ceil(hands / 3), skills=skills, seed=2_000 + rep)
        means = uncertainty.player_intervals(frame, resamples=300, seed=rep)
        told.append(means.row(0, named=True)["mean_ci_low"] > 0)
    assert abs(sum(told) / len(told) - 0.5) <= 0.10, sum(told)


@pytest.mark.slow
def test_a_players_mean_interval_allows_for_the_hands_of_a_game_moving_together() -> None:
    """Each player's luck shared by the hands of a game: the interval of a player's mean
    holds the truth in at least 90% of tables of 600 hands, where one that takes the
    hands as independent holds it far less often."""
    skills = (2.0, 0.0, -2.0)
    true_mean = 2.0  # p0's skill less the table's average
    held, naive = 0, 0
    repetitions = 100
    for rep in range(repetitions):
        frame = per_game(200, skills=skills, game_noise=10.0, seed=3_000 + rep)
        row = uncertainty.player_intervals(frame, resamples=300, seed=rep).row(0, named=True)
        held += row["mean_ci_low"] <= true_mean <= row["mean_ci_high"]
        mine = uncertainty.totals(frame).row(0, named=True)
        n, total, squares = mine["hands"], mine["total"], mine["squares"]
        half = stats.Z95 * math.sqrt((squares - total * total / n) / (n - 1) / n)
        naive += abs(total / n - true_mean) <= half
    assert held / repetitions >= 0.90, held
    assert naive / repetitions < 0.90, naive


@pytest.mark.slow
def test_a_rate_near_0_with_few_or_no_events_is_covered() -> None:
    """A true fantasyland entry rate of 0.0003 over 600 hands (mostly no entry at all):
    the interval holds it in at least 90% of tables, and reaches above 0 when nothing
    was seen."""
    held, empty = 0, 0
    repetitions = 100
    for rep in range(repetitions):
        frame = per_game(200, entry=0.0003, seed=4_000 + rep)
        row = uncertainty.player_intervals(frame, resamples=200, seed=rep).row(0, named=True)
        held += row["fantasyland_entry_rate_ci_low"] <= 0.0003 \
            <= row["fantasyland_entry_rate_ci_high"]
        if row["fantasyland_entry_rate"] == 0:
            empty += 1
            assert row["fantasyland_entry_rate_ci_high"] > 0.0003
    assert empty > repetitions // 2  # most tables see no entry at all
    assert held / repetitions >= 0.90, held


def test_a_rate_with_no_event_has_the_score_intervals_upper_end() -> None:
    """No entry in 600 eligible hands: the interval is [0, z² / (600 + z²)], the Wilson
    interval of 0 of 600 (no event to measure the games' dependence by)."""
    frame = per_game(200, entry=0.0, seed=5)
    row = uncertainty.player_intervals(frame, resamples=100).row(0, named=True)
    assert row["fantasyland_entry_rate"] == 0
    assert row["fantasyland_entry_rate_ci_low"] == 0
    z2 = stats.Z95 ** 2
    assert row["fantasyland_entry_rate_ci_high"] == pytest.approx(z2 / (600 + z2), abs=1e-9)


def test_compare_gives_a_rate_with_no_event_an_upper_end_above_0() -> None:
    """No fantasyland entry in 1,800 eligible seat hands: compare's interval is the
    Wilson interval of 0 of 1,800, not [0, 0]."""
    frame = per_game(200, entry=0.0, seed=6)
    row = uncertainty.compare(frame, hands_of(frame), resamples=100).table.row(0, named=True)
    assert row["fantasyland_entry_rate"] == 0
    assert row["fantasyland_entry_rate_ci_low"] == 0
    z2 = stats.Z95 ** 2
    assert row["fantasyland_entry_rate_ci_high"] == pytest.approx(z2 / (1800 + z2), abs=1e-9)
