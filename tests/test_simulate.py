"""The simulator: valid logs that score as reported, the game flow of docs/rules.md §5-§6,
determinism, and bots whose styles show in the numbers."""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache
from itertools import pairwise
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from ofcstats import reading, session
from ofcstats.cards import parse_cards
from ofcstats.cli import app
from ofcstats.rules import load_ruleset, preset_names
from ofcstats.score import score
from ofcstats.simulate import (
    Simulation,
    SimulationError,
    chinese,
    parse_players,
    simulate,
    write_jsonl,
)
from ofcstats.simulate.game import auto_rows
from ofcstats.simulate.montecarlo import MonteCarloBot, thirteen_by_rollouts
from ofcstats.simulate.scoring import ruleset_arrays
from ofcstats.variants import Variant

DATA = Path(__file__).resolve().parent.parent / "data"
PROGRESSIVE = str(DATA / "rulesets" / "pineapple-progressive.toml")
TEST_RULESETS = Path(__file__).resolve().parent / "rulesets"
STREAK = str(TEST_RULESETS / "american-streak.toml")
NOT_COUNTED = str(TEST_RULESETS / "american-misses-not-counted.toml")

CASES = [
    # variant, ruleset, players, hands, timeout rate
    ("pineapple", "american", "a:aggressive,b:montecarlo,c:random", 120, 0.05),
    ("pineapple", PROGRESSIVE, "a:aggressive,b:aggressive,c:balanced", 300, 0.0),
    ("ofc-classic", "western", "a:safe,b:balanced,c:aggressive,d:random", 120, 0.05),
    ("ofc-turbo", "mercier-deeb", "a:aggressive,b:safe", 200, 0.05),
    ("chinese-13", "russian", "a:safe,b:balanced,c:aggressive,d:montecarlo", 40, 0.0),
    ("chinese-13", str(TEST_RULESETS / "two-four-misset-per-row.toml"),
     "a:random,b:balanced,c:random", 40, 0.0),
]


def sim_of(variant: str, ruleset: str, players: str, hands: int, timeout: float = 0.0,
           seed: int = 11, rollouts: int = 12) -> Simulation:
    return Simulation(variant=Variant(variant), ruleset=load_ruleset(ruleset),
                      players=parse_players(players), hands=hands, seed=seed,
                      rollouts=rollouts, timeout_rate=timeout)


@cache
def written(case: int, directory: str) -> Path:
    variant, ruleset, players, hands, timeout = CASES[case]
    path = Path(directory) / f"case{case}.jsonl"
    write_jsonl(sim_of(variant, ruleset, players, hands, timeout), path)
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("simulated"))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_simulated_hands_pass_validation_and_score_as_reported(case: int, folder: str) -> None:
    variant, ruleset, _, hands, _ = CASES[case]
    batch = reading.read_all([written(case, folder)])
    assert batch.rejects.is_empty(), batch.rejects["reason"].to_list()[:3]
    assert batch.hands.height == hands
    assert set(batch.hands["variant"]) == {variant}
    results = score(batch.seats_for_scoring(), [load_ruleset(ruleset)])
    joined = batch.seats.join(results, on=["hand_id", "seat"])
    assert joined.height == batch.seats.height
    assert (joined["reported_points"] == joined["points"].cast(pl.Float64)).all()
    per_hand = joined.group_by("hand_id").agg(pl.col("points").sum())
    assert (per_hand["points"] == 0).all()


def hands_of(sim: Simulation) -> list[dict]:
    return list(simulate(sim))


@cache
def fantasyland_run(ruleset: str, hands: int = 2000) -> tuple[dict, ...]:
    sim = sim_of("pineapple", ruleset, "a:aggressive,b:aggressive,c:aggressive", hands, seed=5)
    return tuple(hands_of(sim))


def by_session(hands: tuple[dict, ...]) -> dict[str, list[dict]]:
    games: dict[str, list[dict]] = defaultdict(list)
    for hand in hands:
        games[hand["session_id"]].append(hand)
    return games


def streaks(hands: tuple[dict, ...]) -> list[int]:
    """Lengths of every run of fantasyland hands one seat plays in a row."""
    out = []
    for game in by_session(hands).values():
        for seat in range(len(game[0]["players"])):
            run = 0
            for hand in game:
                if hand["players"][seat]["fantasyland"]:
                    run += 1
                elif run:
                    out.append(run)
                    run = 0
            if run:
                out.append(run)
    return out


def scored(hands: tuple[dict, ...], ruleset: str) -> dict[tuple[str, int], dict]:
    """Each seat's pipeline result, keyed by hand id and seat, with the session's
    fantasyland repeat limits applied as rescoring applies them."""
    rows = []
    for hand in hands:
        for p in hand["players"]:
            board = {"top": [], "middle": [], "bottom": []}
            for street in p["streets"]:
                for row in board:
                    board[row] += street.get(row, [])
            rows.append({"hand_id": hand["hand_id"], "variant": hand["variant"],
                         "seat": p["seat"], "player": p["name"],
                         "fantasyland": p["fantasyland"],
                         "timed_out": p.get("timed_out", False),
                         "surrendered": False, **board})
    frame = pl.DataFrame(rows).with_columns(
        pl.col("seat").cast(pl.Int8),
        *[pl.col(r).map_elements(parse_cards, return_dtype=pl.List(pl.Int64))
          .list.to_array(n).cast(pl.Array(pl.UInt8, n))
          for r, n in (("top", 3), ("middle", 5), ("bottom", 5))])
    rulesets = [load_ruleset(ruleset)]
    results = session.limit_repeats(score(frame, rulesets), frame, hands_table(hands), rulesets)
    return {(r["hand_id"], r["seat"]): r for r in results.iter_rows(named=True)}


def hands_table(hands: tuple[dict, ...]) -> pl.DataFrame:
    """The hands as :func:`session.hand_order` takes them, in log order."""
    return pl.DataFrame({
        "hand_id": [h["hand_id"] for h in hands],
        "session_id": [h["session_id"] for h in hands],
        "played_at": [h["played_at"] for h in hands],
        "source": ["log"] * len(hands),
        "line": list(range(1, len(hands) + 1)),
        "n_seats": [len(h["players"]) for h in hands],
        "variant": [h["variant"] for h in hands],
        "stake": [float(h.get("point_value") or 1.0) for h in hands],
        "fantasyland_hand": [any(p["fantasyland"] for p in h["players"]) for h in hands],
        "timed_out_hand": [any(p.get("timed_out", False) for p in h["players"])
                           for h in hands],
    }).with_columns(pl.col("played_at").str.to_datetime(time_zone="UTC"))


@pytest.mark.parametrize("ruleset", [
    "american", PROGRESSIVE, STREAK,
    pytest.param("mercier-deeb", marks=pytest.mark.slow),
    pytest.param(NOT_COUNTED, marks=pytest.mark.slow),
])
def test_fantasyland_entry_and_stay_follow_the_scorer(ruleset: str) -> None:
    """Every fantasyland the simulator deals is the one the scorer, with the session's
    repeat limits, says the previous hand earned (per game for standard, in a row for
    progressive, none for unlimited)."""
    hands = fantasyland_run(ruleset)
    results = scored(hands, ruleset)
    entries = stays = 0
    for game in by_session(hands).values():
        for hand, after in pairwise(game):
            for p, q in zip(hand["players"], after["players"], strict=True):
                result = results[(hand["hand_id"], p["seat"])]
                assert q["fantasyland"] == result["fantasyland_next"], (hand["hand_id"],
                                                                         p["seat"])
                if q["fantasyland"]:
                    dealt = len(q["streets"][0]["dealt"])
                    want = 14 if p["fantasyland"] else result["fantasyland_cards"]
                    assert dealt == want
                    entries += not p["fantasyland"]
                    stays += p["fantasyland"]
        # A game never ends with a fantasyland owed.
        last = game[-1]
        if last is not hands[-1]:
            for p in last["players"]:
                assert not results[(last["hand_id"], p["seat"])]["fantasyland_next"]
    assert entries > 50
    assert stays > 5


def test_standard_fantasyland_repeats_once_per_game_not_once_in_a_row() -> None:
    """Under standard (one repeat per game) no seat plays two repeats in one game."""
    most = 0
    for game in by_session(fantasyland_run("american")).values():
        for seat in range(len(game[0]["players"])):
            flags = [h["players"][seat]["fantasyland"] for h in game]
            most = max(most, sum(a and b for a, b in pairwise(flags)))
    assert most == 1


def test_repeat_limit_caps_fantasyland_runs() -> None:
    assert max(streaks(fantasyland_run("american"))) == 2  # standard: one repeat at most


def test_unlimited_policy_lets_fantasyland_run_on() -> None:
    sim = sim_of("pineapple", "pokerdom", "a:aggressive,b:aggressive,c:aggressive", 2000, seed=5)
    assert max(streaks(tuple(hands_of(sim)))) >= 3


def test_button_does_not_move_on_a_fantasyland_hand() -> None:
    hands = fantasyland_run("american")
    games = by_session(hands)
    complete = list(games.values())[:-1]
    for game in complete:
        seats = len(game[0]["players"])
        buttons = [game[0]["button"]]
        for before, hand in pairwise(game):
            if any(p["fantasyland"] for p in hand["players"]):
                assert hand["button"] == before["button"]
            else:
                assert hand["button"] == before["button"] % seats + 1
                buttons.append(hand["button"])
        # One orbit, lengthened by one hand per fantasyland hand.
        assert sorted(buttons) == list(range(1, seats + 1))
        fantasy_hands = sum(any(p["fantasyland"] for p in h["players"]) for h in game)
        assert len(game) == seats + fantasy_hands
    assert any(len(g) > len(g[0]["players"]) for g in complete)


def test_simultaneous_fantasylands_set_in_one_street_each() -> None:
    hands = fantasyland_run("american")
    both = [h for h in hands if sum(p["fantasyland"] for p in h["players"]) >= 2]
    assert both
    for hand in both:
        for p in hand["players"]:
            if p["fantasyland"]:
                (street,) = p["streets"]
                placed = sum(len(street.get(r, [])) for r in ("top", "middle", "bottom"))
                assert placed == 13
                assert len(street["dealt"]) == 14
                assert len(street["discard"]) == 1


def test_progressive_fantasyland_deals_by_the_top_that_earned_it() -> None:
    hands = fantasyland_run(PROGRESSIVE)
    dealt = {len(p["streets"][0]["dealt"]) for h in hands for p in h["players"]
             if p["fantasyland"]}
    assert {14, 15} <= dealt <= {14, 15, 16, 17}


def test_timed_out_seat_is_placed_from_the_bottom_up() -> None:
    rows = auto_rows(np.array([[0, 0, 0], [1, 4, 5], [2, 5, 3]], dtype=np.int8), 3, 1)
    assert rows.tolist() == [[2, 2, 3], [1, 0, 3], [2, 2, 3]]
    sim = sim_of("pineapple", "american", "a:balanced,b:safe", 60, timeout=1.0)
    for hand in hands_of(sim):
        for p in hand["players"]:
            assert p["timed_out"]
            last = p["streets"][-1]
            # The last street's discard is the last card dealt.
            assert last["discard"] == [last["dealt"][-1]]


def test_same_seed_writes_the_same_bytes(tmp_path: Path) -> None:
    sim = sim_of("pineapple", "american", "a:montecarlo,b:random,c:safe", 30, timeout=0.1,
                 rollouts=8)
    first, second = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    write_jsonl(sim, first)
    write_jsonl(sim, second)
    assert first.read_bytes() == second.read_bytes()
    other = tmp_path / "3.jsonl"
    write_jsonl(sim_of("pineapple", "american", "a:montecarlo,b:random,c:safe", 30,
                       timeout=0.1, seed=12, rollouts=8), other)
    assert other.read_bytes() != first.read_bytes()


def test_hands_stop_at_the_count_asked_and_ids_follow_games() -> None:
    hands = hands_of(sim_of("ofc-turbo", "american", "a:safe,b:balanced,c:aggressive", 50))
    assert len(hands) == 50
    assert len({h["hand_id"] for h in hands}) == 50
    for hand in hands:
        assert hand["hand_id"].startswith(hand["session_id"] + "-")
        assert hand["bots"] == {"a": "safe", "b": "balanced", "c": "aggressive"}


def test_deck_too_small_for_progressive_four_seats_is_refused() -> None:
    sim = sim_of("ofc-classic", PROGRESSIVE, "a:safe,b:safe,c:safe,d:safe", 10)
    with pytest.raises(SimulationError, match="deck runs out"):
        sim.check()


def test_pineapple_seats_three_at_most() -> None:
    with pytest.raises(SimulationError, match="pineapple seats 2 to 3 players; 4 given"):
        sim_of("pineapple", "american", "a:safe,b:safe,c:safe,d:safe", 10).check()


def test_unknown_style_names_the_styles() -> None:
    with pytest.raises(SimulationError, match="random, safe, balanced, aggressive, montecarlo"):
        parse_players("alice:reckless")


def test_simulate_command_writes_a_log(tmp_path: Path) -> None:
    out = tmp_path / "sim.jsonl"
    result = CliRunner().invoke(app, ["simulate", "--variant", "ofc-turbo", "--players",
                                      "alice:aggressive,bob:safe", "--hands", "20",
                                      "--ruleset", "american", "--seed", "7", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "20 hands of ofc-turbo under american (seed 7)" in result.stdout
    assert len(out.read_text().splitlines()) == 20


def test_simulate_command_rejects_a_bad_player_cleanly(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["simulate", "--players", "alice", "-o",
                                      str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2
    assert "'alice' is not a player" in result.output
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("where", ["pipe", "terminal"])
def test_simulate_under_a_ruleset_not_played_in_the_variant_is_a_usage_error(
        tmp_path: Path, where: str) -> None:
    from test_cli_consistency import screen_lines  # noqa: PLC0415
    from test_cli_terminal import run_in_pipe, run_on_terminal  # noqa: PLC0415

    args = ["simulate", "--variant", "pineapple", "--ruleset", "russian", "-p",
            "a:safe,b:safe", "-n", "4", "-o", "x.jsonl"]
    if where == "pipe":
        done = run_in_pipe(args, tmp_path)
        code, lines = done.returncode, done.stderr.decode().splitlines()
    else:
        code, shown = run_on_terminal(args, tmp_path)
        lines = [line for line in screen_lines(shown) if line.strip()]
    assert code == 2
    played = [name for name in preset_names() if Variant.PINEAPPLE in
              load_ruleset(name).variants]
    assert lines == [
        "ofcstats: --ruleset russian: not played under pineapple (only under chinese-13); "
        f"rulesets played under pineapple: {', '.join(played)}"]
    assert "american" in played
    assert "russian" not in played
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize(("variant", "ruleset"), [
    ("pineapple", "american"), ("chinese-13", "foreign"), ("criss-cross", "criss-cross")])
def test_simulate_without_a_ruleset_plays_one_played_in_the_variant(
        tmp_path: Path, variant: str, ruleset: str) -> None:
    result = CliRunner().invoke(app, ["simulate", "--variant", variant, "-p", "a:safe,b:safe",
                                      "-n", "2", "-o", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 0, result.output
    assert f"2 hands of {variant} under {ruleset} (seed 0)" in result.stdout


def style_rates(variant: str, players: str, hands: int, seed: int,
                folder: Path) -> dict[str, tuple[float, float, float]]:
    """Per player: foul rate and fantasyland entry rate over the hands it did not play in
    fantasyland, mean points; the log read back and scored by the pipeline."""
    path = folder / f"{variant}-{seed}.jsonl"
    write_jsonl(sim_of(variant, "american", players, hands, seed=seed), path)
    batch = reading.read_all([path])
    results = score(batch.seats_for_scoring(), [load_ruleset("american")])
    seats = batch.seats.join(results, on=["hand_id", "seat"])
    rates = seats.group_by("player").agg(
        pl.col("fouled").filter(~pl.col("fantasyland")).mean(),
        pl.col("fantasyland_next").filter(~pl.col("fantasyland")).mean(),
        pl.col("points").mean())
    return {row[0]: (row[1], row[2], row[3]) for row in rates.iter_rows()}


@pytest.mark.slow
def test_styles_differ_in_fouls_and_fantasyland_over_5000_hands(tmp_path: Path) -> None:
    rates = style_rates("pineapple", "safe:safe,balanced:balanced,aggressive:aggressive",
                        5000, 2026, tmp_path)
    safe, balanced, aggressive = rates["safe"], rates["balanced"], rates["aggressive"]
    assert safe[0] + 0.1 < balanced[0]
    assert balanced[0] + 0.1 < aggressive[0]
    assert safe[1] + 0.012 < balanced[1]
    assert balanced[1] + 0.02 < aggressive[1]
    wild = style_rates("pineapple", "random:random,balanced:balanced", 1500, 2026, tmp_path)
    assert wild["random"][0] > aggressive[0] + 0.2


# Without discards fantasyland is rarer (the middle must beat a pair of queens with the
# cards as they come): many hands, margins in proportion. The margins are below what any
# of six seeds gave (docs/rules.md §5 deals; style weights in ofcstats.simulate.heuristic).
ORDERINGS = [
    # variant, hands, foul margins safe < balanced < aggressive, the same for entries
    ("ofc-classic", 12_000, (0.04, 0.05), (0.0015, 0.002)),
    ("ofc-turbo", 12_000, (0.03, 0.05), (0.005, 0.006)),
]


@pytest.mark.slow
@pytest.mark.parametrize(("variant", "hands", "fouls", "entries"), ORDERINGS)
def test_styles_keep_their_order_without_discards(variant: str, hands: int,
                                                  fouls: tuple[float, float],
                                                  entries: tuple[float, float],
                                                  tmp_path: Path) -> None:
    rates = style_rates(variant, "random:random,safe:safe,balanced:balanced,"
                        "aggressive:aggressive", hands, 2026, tmp_path)
    wild, safe, balanced, aggressive = (rates[name] for name in
                                        ("random", "safe", "balanced", "aggressive"))
    assert safe[0] + fouls[0] < balanced[0]
    assert balanced[0] + fouls[1] < aggressive[0]
    assert aggressive[0] + 0.2 < wild[0]
    assert safe[1] + entries[0] < balanced[1]
    assert balanced[1] + entries[1] < aggressive[1]


@pytest.mark.slow
def test_montecarlo_beats_balanced_head_to_head() -> None:
    sim = sim_of("pineapple", "american", "mc:montecarlo,bal:balanced", 300, seed=3,
                 rollouts=30)
    points = [h["players"][0]["reported_points"] for h in hands_of(sim)]
    assert np.mean(points) > 1.0


def test_written_lines_are_the_records_as_compact_json(tmp_path: Path) -> None:
    for variant, players in (("pineapple", "a:aggressive,b:safe"),
                             ("chinese-13", "x:safe,y:random,z:balanced")):
        sim = sim_of(variant, "american", players, 25, timeout=0.2)
        path = tmp_path / f"{variant}.jsonl"
        write_jsonl(sim, path)
        lines = path.read_text(encoding="utf-8").splitlines()
        expected = [json.dumps(h, separators=(",", ":"), ensure_ascii=False)
                    for h in simulate(sim)]
        assert lines == expected


def test_sample_data_is_small_valid_and_scores_as_reported() -> None:
    files = sorted((DATA / "sample").glob("*.jsonl"))
    assert sum(f.stat().st_size for f in files) <= 5_000_000
    batch = reading.read_all(files)
    assert batch.rejects.is_empty()
    assert set(batch.hands["variant"]) == {v.value for v in Variant}
    rulesets = {"pineapple-progressive": PROGRESSIVE}
    styles = set()
    for (name,), hands in batch.hands.group_by("ruleset"):
        seats = batch.seats_for_scoring().join(hands.select("hand_id"), on="hand_id")
        results = score(seats, [load_ruleset(rulesets.get(str(name), str(name)))])
        joined = batch.seats.join(results, on=["hand_id", "seat"])
        assert (joined["reported_points"] == joined["points"].cast(pl.Float64)).all()
        styles |= {style for extra in hands["extra"] for style in json.loads(extra)["bots"]
                   .values()}
    assert styles == {"random", "safe", "balanced", "aggressive", "montecarlo"}


def _sample_commands() -> dict[str, list[str]]:
    """The ``ofcstats simulate`` arguments of each file ``make sample-data`` writes, read
    from the Makefile's recipe, by file name."""
    text = (DATA.parent / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    recipe = text.split("\nsample-data:", 1)[1].split("\n\n", 1)[0]
    commands = {}
    for line in recipe.splitlines()[1:]:
        words = line.split()
        at = words.index("simulate")
        arguments = words[at + 1:]
        commands[Path(arguments[arguments.index("-o") + 1]).name] = arguments
    return commands


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_sample_commands()))
def test_make_sample_data_reproduces_the_shipped_file_byte_for_byte(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arguments = _sample_commands()[name]
    arguments[arguments.index("-o") + 1] = str(tmp_path / name)
    monkeypatch.chdir(DATA.parent)  # the recipe names rulesets by their path in the project
    result = CliRunner().invoke(app, ["simulate", *arguments])
    assert result.exit_code == 0, result.output
    assert (tmp_path / name).read_bytes() == (DATA / "sample" / name).read_bytes()


def test_the_13_card_monte_carlo_bot_breaks_ties_by_the_sets_order() -> None:
    """Sets of equal score are kept in their order (a stable sort), the same on every
    processor: numpy's default sort orders ties by the machine's vector instructions."""
    hand = np.array(parse_cards(["Td", "7s", "7h", "Jd", "5d", "Ac", "9h", "As", "3s", "2h",
                                 "4c", "2s", "3d"]), dtype=np.uint8)
    arrays = ruleset_arrays(load_ruleset("russian"), Variant.CHINESE_13)
    score_of, _ = chinese.scored_sets(hand, arrays, chinese.WEIGHTS["balanced"])
    best = np.sort(score_of)[::-1]
    assert (best[:-1] == best[1:]).any()  # this hand has tied sets among its best
    calls: list[str] = []
    original = np.argsort

    def watched(a: object, *args: object, **kwargs: object) -> object:
        calls.append(str(kwargs.get("kind")))
        return original(a, *args, **kwargs)  # type: ignore[call-overload]

    bot = MonteCarloBot(np.random.default_rng(1), rollouts=8)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(np, "argsort", watched)
        thirteen_by_rollouts(bot, hand[None, :], arrays, 1)
    assert "stable" in calls


@cache
def timeout_run() -> tuple[dict, ...]:
    sim = sim_of("pineapple", "american", "a:aggressive,b:aggressive,c:aggressive", 600,
                 timeout=0.06, seed=9)
    return tuple(hands_of(sim))


def test_a_timeout_ends_the_simulated_game_after_every_fantasyland_owed() -> None:
    """After the hand in which a seat timed out only fantasyland hands follow in that game;
    so some games are cut short. One session for the whole run gives, by
    :func:`session.hand_order`, exactly the simulator's games."""
    hands = timeout_run()
    short = 0
    for game in by_session(hands).values():
        timed = [i for i, h in enumerate(game) if any(p.get("timed_out") for p in h["players"])]
        if timed:
            assert all(any(p["fantasyland"] for p in h["players"])
                       for h in game[timed[0] + 1:])
        moves = sum(not any(p["fantasyland"] for p in h["players"]) for h in game)
        short += game[-1] is not hands[-1] and moves < len(game[0]["players"])
    assert short >= 5
    merged = hands_table(hands).with_columns(session_id=pl.lit("all"))
    games = session.hand_order(merged).collect().sort("order")["game"].to_list()
    sessions = [h["session_id"] for h in hands]
    assert games == [len(dict.fromkeys(sessions[: i + 1])) - 1 for i in range(len(hands))]


def test_score_command_applies_games_and_repeat_limits_per_file(tmp_path: Path) -> None:
    """``ofcstats score`` gives the fantasyland each next hand was played with, timeouts
    and the repeat limit per game included."""
    hands = timeout_run()
    path = tmp_path / "timeouts.jsonl"
    path.write_text("".join(json.dumps(h) + "\n" for h in hands), encoding="utf-8")
    result = CliRunner().invoke(app, ["score", str(path), "-r", "american", "-f", "jsonl"])
    assert result.exit_code == 0, result.output
    rows = {(r["hand_id"], r["seat"]): r for r in map(json.loads, result.stdout.splitlines())}
    checked = 0
    for game in by_session(hands).values():
        for hand, after in pairwise(game):
            for p, q in zip(hand["players"], after["players"], strict=True):
                assert rows[(hand["hand_id"], p["seat"])]["fantasyland_next"] == \
                    q["fantasyland"]
                checked += q["fantasyland"]
    assert checked > 10


def test_progress_moves_within_a_round_of_hands_as_turns_are_taken() -> None:
    """The count advances after each seat's turn on each street, not only once every
    table has finished its hand: a slow bot's round does not sit still."""
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players("ann:safe,bob:balanced,cy:random"), hands=30, seed=5)
    counts: list[int] = []
    hands = list(simulate(sim, lambda done, total: counts.append(done)))
    tables = 3  # 30 hands of games of 3 seats, 4 games a table: 3 tables in lockstep
    assert len(hands) == 30
    assert counts == sorted(counts)
    assert counts[-1] == 30
    assert any(count % tables for count in counts if count < 30), counts
