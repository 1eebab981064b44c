"""Rescoring the store: the same results as ``ofcstats score``, incrementally, with the
session's fantasyland repeat limits."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from handgen import random_hand, rich_board, write_jsonl
from polars.testing import assert_frame_equal

from ofcstats import analysis, pipeline, reading
from ofcstats.analysis import Filters, scored_frame
from ofcstats.ingest import ingest
from ofcstats.logscore import score_batch
from ofcstats.rules import Ruleset, load_ruleset, load_rulesets, preset_names
from ofcstats.score import score
from ofcstats.simulate import Simulation, parse_players, simulate
from ofcstats.store import Store
from ofcstats.variants import Variant

RULESETS = Path(__file__).resolve().parent / "rulesets"
COMPARED = ["points", "royalties", "royalty_top", "royalty_middle", "royalty_bottom",
            "royalty_points", "rows_top", "rows_middle", "rows_bottom", "wins_top",
            "wins_middle", "wins_bottom", "fouled", "scoops", "scooped"]


def random_log(path: Path, n: int, seed: int, sessions: int = 10) -> Path:
    rng = random.Random(seed)
    hands = []
    for i in range(n):
        variant = rng.choice(["pineapple", "ofc-classic", "ofc-turbo", "chinese-13"])
        players = rng.randint(2, 3 if variant == "pineapple" else 4)
        fantasyland = tuple(variant != "chinese-13" and rng.random() < 0.2
                            for _ in range(players))
        hand = random_hand(rng, f"{path.stem}-{i}", variant, players, streets=False,
                           fantasyland=fantasyland)
        if rng.random() < 0.6:  # richer boards; a few cards may repeat across seats
            hand = _richer(rng, hand)
        hand["session_id"] = f"{path.stem}-s{i % sessions}"
        hands.append(hand)
    return write_jsonl(path, hands)


def _richer(rng: random.Random, hand: dict) -> dict:
    """Rich boards without a card twice in the hand (else ingest would reject it)."""
    for _ in range(50):
        boards = [rich_board(rng) for _ in hand["players"]]
        cards = [c for b in boards for row in b.values() for c in row]
        if len(set(cards)) == len(cards):
            for player, board in zip(hand["players"], boards, strict=True):
                player.update(board)
            break
    return hand


def rescore(store: Store, rulesets: list[Ruleset], **options: Any) -> pipeline.RescoreSummary:
    """Every hand under every ruleset, what-ifs included: these tests compare the store's
    results with what ``score`` gives for every hand of the mixed-variant logs."""
    return pipeline.rescore(store, rulesets, what_if=[r.name for r in rulesets], **options)


def loaded(tmp_path: Path, *logs: Path) -> Path:
    db = tmp_path / "club.duckdb"
    ingest(list(logs), db)
    return db


def rescored_against_score(tmp_path: Path, n: int, seed: int, rulesets: list[Ruleset]
                           ) -> pl.DataFrame:
    """A random log rescored in a store, joined to what score gives (``_direct``); the
    :data:`COMPARED` columns must agree."""
    log = random_log(tmp_path / "mixed.jsonl", n, seed=seed)
    with Store(loaded(tmp_path, log)) as store:
        rescore(store, rulesets)
        stored = scored_frame(store)
    direct = score(reading.read_all([log]).seats_for_scoring(), rulesets).with_columns(
        pl.col("ruleset").cast(pl.String))
    joined = stored.join(direct, on=["ruleset", "hand_id", "seat"], suffix="_direct")
    assert joined.height == direct.height == stored.height
    for column in COMPARED:
        assert (joined[column] == joined[f"{column}_direct"]).all(), column
    return joined


def test_rescore_gives_what_score_gives_under_every_ruleset(tmp_path: Path) -> None:
    joined = rescored_against_score(tmp_path, 1500, 11, load_rulesets(preset_names()))
    # Before the session's repeat limit, fantasyland is what score says.
    assert (joined["fantasyland_earned"] == joined["fantasyland_next_direct"]).all()
    kept = joined.filter(pl.col("fantasyland_next"))
    assert (kept["fantasyland_cards"] == kept["fantasyland_cards_direct"]).all()


def test_rescore_stores_the_showdowns_of_rules_that_change_them(tmp_path: Path) -> None:
    """Misses not counted and the wheel order of straights change who wins rows: such
    rulesets get showdowns of their own in the store, and rescoring gives what score
    gives."""
    rulesets = [load_ruleset(str(RULESETS / name)) for name in (
        "american-misses-not-counted.toml", "russian-misses-not-counted.toml",
        "two-four-misset-per-row.toml", "one-six-misset-per-row.toml",
        "two-four-wheel.toml", "foreign-wheel-misses-not-counted.toml")]
    rulesets.append(load_ruleset("russian"))
    joined = rescored_against_score(tmp_path, 500, 4, rulesets)
    unfouled = joined.filter(pl.col("ruleset") == "american-misses-not-counted")
    assert not unfouled["fouled"].any()
    assert joined.filter(pl.col("ruleset") == "russian")["fouled"].any()


def test_rescore_of_simulated_sessions_matches_their_reported_points(tmp_path: Path) -> None:
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players("ann:aggressive,bob:balanced,cat:safe"),
                     hands=150, seed=5)
    hands = list(simulate(sim))
    log = write_jsonl(tmp_path / "sim.jsonl", hands)
    with Store(loaded(tmp_path, log)) as store:
        rescore(store, [load_ruleset("american")])
        frame = scored_frame(store)
    assert frame.height == 3 * len(hands)
    assert (frame["points"] == frame["reported_points"]).all()
    assert frame["fantasyland"].any()  # the aggressive bot reaches fantasyland
    # A seat in fantasyland this hand earned it in the hand before, unless a new game
    # (a new session) started.
    ordered = frame.sort("session_id", "order")
    nxt = ordered.with_columns(
        came_next=pl.col("fantasyland").shift(-1).over("session_id", "player"))
    assert (nxt.filter(pl.col("came_next").is_not_null())
            .select((pl.col("fantasyland_next") == pl.col("came_next")).all()).item())


def test_a_second_rescore_adds_nothing(tmp_path: Path) -> None:
    db = loaded(tmp_path, random_log(tmp_path / "a.jsonl", 200, seed=1))
    with Store(db) as store:
        first = rescore(store, load_rulesets(["american", "russian"]))
        again = rescore(store, load_rulesets(["american", "russian"]))
        rows = store.count("results")
        seats = store.count("seats")
    assert first.rows == rows == 2 * seats
    assert (again.hands, again.rows) == (0, 0)


def test_new_hands_rescore_only_their_sessions(tmp_path: Path) -> None:
    a = random_log(tmp_path / "a.jsonl", 200, seed=1, sessions=4)
    b = random_log(tmp_path / "b.jsonl", 50, seed=2, sessions=1)  # one new session
    db = loaded(tmp_path, a)
    with Store(db) as store:
        rescore(store, [load_ruleset("american")])
    ingest([b], db)
    with Store(db) as store:
        summary = rescore(store, [load_ruleset("american")])
        assert (summary.sessions, summary.hands) == (1, 50)
        assert store.count("results") == store.count("seats")


def test_a_grown_session_is_scored_again_whole(tmp_path: Path) -> None:
    a = random_log(tmp_path / "a.jsonl", 100, seed=1, sessions=2)
    more = random_log(tmp_path / "more.jsonl", 10, seed=3, sessions=1)
    # The new hands join session a-s0.
    text = more.read_text(encoding="utf-8").replace('"more-s0"', '"a-s0"')
    more.write_text(text, encoding="utf-8")
    db = loaded(tmp_path, a)
    with Store(db) as store:
        rescore(store, [load_ruleset("american")])
    ingest([more], db)
    with Store(db) as store:
        summary = rescore(store, [load_ruleset("american")])
        assert (summary.sessions, summary.hands) == (1, 60)
        assert store.count("results") == store.count("seats")


def test_an_edited_ruleset_and_rebuild_score_again_from_scratch(tmp_path: Path) -> None:
    db = loaded(tmp_path, random_log(tmp_path / "a.jsonl", 100, seed=1))
    path = tmp_path / "house.toml"
    path.write_text('name = "house"\n[head_to_head]\nrow = 1\nmajority = 0\nscoop = 3\n',
                    encoding="utf-8")
    with Store(db) as store:
        rescore(store, [load_ruleset(str(path))])
        before = scored_frame(store)["points"].abs().sum()
        load_ruleset.cache_clear()
        path.write_text('name = "house"\n[head_to_head]\nrow = 2\nmajority = 0\nscoop = 0\n',
                        encoding="utf-8")
        edited = rescore(store, [load_ruleset(str(path))])
        assert edited.rebuilt == ["house"]
        assert scored_frame(store)["points"].abs().sum() != before
        rebuilt = rescore(store, [load_ruleset(str(path))], rebuild=True)
        assert rebuilt.rebuilt == ["house"]
        assert rebuilt.hands == 100


def test_repeat_limits_apply_within_a_session_and_restart_with_the_next(
        tmp_path: Path) -> None:
    board = ("As Ah Ad", "2c 3d 4h 5c 6d", "9c 9d 9h Ts Tc")  # stays in fantasyland
    other = ("2d 3c 4d", "7s 7h 8c 9s Jd", "Kc Kd Kh Qs Qc")
    hands = []
    for session, flags in (("s1", [False, True, True, True]), ("s2", [True, True])):
        for i, in_fl in enumerate(flags):
            hands.append({
                "format": "ofc-hand/1", "hand_id": f"{session}-{i}", "session_id": session,
                "variant": "ofc-classic", "played_at": f"2026-01-0{1 + i}T10:00:00Z",
                "players": [
                    {"seat": 1, "name": "ann", "fantasyland": in_fl, "top": board[0].split(),
                     "middle": board[1].split(), "bottom": board[2].split()},
                    {"seat": 2, "name": "bob", "top": other[0].split(),
                     "middle": other[1].split(), "bottom": other[2].split()}]})
    db = loaded(tmp_path, write_jsonl(tmp_path / "fl.jsonl", hands))
    with Store(db) as store:
        rescore(store, load_rulesets(["american", "mercier-deeb"]))
        frame = scored_frame(store, Filters(players=["ann"])).sort("ruleset", "hand_id")
    american = frame.filter(pl.col("ruleset") == "american")
    # s1: entry, stay (the one repeat), then no more; s2 starts a new streak.
    assert american["fantasyland_next"].to_list() == [True, True, False, False, True, False]
    assert american["fantasyland_entered"].to_list() == [True, False, False, False, False,
                                                         False]
    unlimited = frame.filter(pl.col("ruleset") == "mercier-deeb")
    assert unlimited["fantasyland_next"].all()
    assert unlimited["fantasyland_earned"].all()


def _timeout_session(timed_out_on: int | None) -> list[dict]:
    """Three seats, one session: ann plays fantasyland on hands 1, 2, 4 and 5, and her
    boards always earn entry or a stay; bob times out on ``timed_out_on``."""
    boards = {"ann": ("As Ah Ad", "2c 3d 4h 5c 6d", "9c 9d 9h Ts Tc"),
              "bob": ("2d 3c 4d", "7s 7h 8c 9s Jd", "Kc Kd Kh Qs Qc"),
              "cat": ("2h 3h 5h", "6s 7c 8d Js Qd", "5s 5d 6h 8s Jc")}
    ann_in = [False, True, True, False, True, True]
    hands = []
    for i, in_fl in enumerate(ann_in):
        players = []
        for seat, (name, (top, middle, bottom)) in enumerate(boards.items(), start=1):
            player = {"seat": seat, "name": name, "top": top.split(),
                      "middle": middle.split(), "bottom": bottom.split()}
            if name == "ann":
                player["fantasyland"] = in_fl
            if name == "bob" and i == timed_out_on:
                player["timed_out"] = True
            players.append(player)
        hands.append({"format": "ofc-hand/1", "hand_id": f"t-{i}", "session_id": "t",
                      "variant": "ofc-classic", "played_at": f"2026-01-0{1 + i}T10:00:00Z",
                      "players": players})
    return hands


@pytest.mark.parametrize(("timed_out_on", "games", "stays"), [
    (None, [0, 0, 0, 0, 0, 0], [False, True, False, False, False, False]),
    (1, [0, 0, 0, 1, 1, 1], [False, True, False, False, True, False]),
])
def test_a_timeout_ends_the_game_and_restarts_the_repeat_limit_in_rescore_and_score(
        tmp_path: Path, timed_out_on: int | None, games: list[int], stays: list[bool]) -> None:
    """Without a timeout the six hands are one game of three seats (two button moves),
    and ann's second run of fantasyland may not repeat: the game's one repeat is spent.
    Bob's timeout on hand 1, while ann holds fantasyland, ends the game after the
    fantasyland owed (hand 2): ann's second run is in a new game and may repeat."""
    log = write_jsonl(tmp_path / "timeout.jsonl", _timeout_session(timed_out_on))
    with Store(loaded(tmp_path, log)) as store:
        rescore(store, [load_ruleset("american")])
        frame = scored_frame(store, Filters(players=["ann"])).sort("hand_id")
    assert frame["game"].to_list() == games
    assert frame["fantasyland_stayed"].to_list() == stays
    per_file = score_batch(reading.read_all([log]), [load_ruleset("american")]).results
    ann = per_file.filter(pl.col("player") == "ann").sort("hand_id")
    assert ann["fantasyland_stayed"].to_list() == stays
    assert ann["fantasyland_next"].to_list() == frame["fantasyland_next"].to_list()


def test_scored_frame_filters_and_names_missing_rulesets(tmp_path: Path) -> None:
    db = loaded(tmp_path, random_log(tmp_path / "a.jsonl", 60, seed=4, sessions=3))
    with Store(db) as store:
        rescore(store, load_rulesets(["american", "pokerstars"]))
        some = scored_frame(store, Filters(rulesets=["pokerstars"], sessions=["a-s1"],
                                           players=["p1"]))
        assert set(some["ruleset"]) == {"pokerstars"}
        assert set(some["session_id"]) == {"a-s1"}
        assert set(some["player"]) == {"p1"}
        with pytest.raises(Exception, match="not scored under russian"):
            scored_frame(store, Filters(rulesets=["russian"]))


def test_scored_frame_reads_only_the_columns_asked_for(tmp_path: Path) -> None:
    """What ``compare`` and ``players`` read: fewer columns, the same rows and values."""
    db = loaded(tmp_path, random_log(tmp_path / "a.jsonl", 120, seed=6, sessions=4))
    with Store(db) as store:
        rescore(store, load_rulesets(["american", "pokerstars"]))
        full = scored_frame(store)
        few = scored_frame(store, Filters(rulesets=["american"]),
                           columns=["ruleset", "hand_key", "seat", "points", "fouled"])
        ordered = scored_frame(store, columns=["hand_key", "seat", "ruleset", "game"])
        nothing = scored_frame(store, Filters(players=[]), columns=["points"])
    assert few.columns == ["ruleset", "hand_key", "seat", "points", "fouled"]
    want = full.filter(pl.col("ruleset") == "american").select(few.columns)
    assert_frame_equal(few.sort("hand_key", "seat"), want.sort("hand_key", "seat"))
    assert ordered.columns == ["hand_key", "seat", "ruleset", "game"]
    assert_frame_equal(ordered, full.select(ordered.columns))  # same play order
    assert nothing.is_empty()


def test_scored_frame_can_give_repeated_strings_as_categories(tmp_path: Path) -> None:
    """What ``report`` reads: the same rows and values, the repeated strings categorical,
    fetched in parts (three rows at a time here)."""
    db = loaded(tmp_path, random_log(tmp_path / "a.jsonl", 60, seed=8, sessions=3))
    with Store(db) as store:
        rescore(store, load_rulesets(["american", "pokerstars"]))
        plain = scored_frame(store)
        categorical = scored_frame(store, categorical=True)
        none = scored_frame(store, Filters(players=[]), categorical=True)
        parts = analysis._categorical_frame(store.con.sql(
            "SELECT ruleset, hand_id, points FROM results_named ORDER BY ALL"), rows=3)
        whole = store.con.sql(
            "SELECT ruleset, hand_id, points FROM results_named ORDER BY ALL").pl()
    repeated = [c for c in analysis.REPEATED_COLUMNS if c in plain.columns]
    assert repeated == list(analysis.REPEATED_COLUMNS)
    assert all(categorical.schema[c] == pl.Categorical for c in repeated)
    assert_frame_equal(categorical.with_columns(pl.col(repeated).cast(pl.String)), plain)
    assert none.is_empty()
    assert none.schema["player"] == pl.Categorical
    assert_frame_equal(parts.with_columns(pl.col("ruleset").cast(pl.String)), whole)


def test_results_stay_right_through_partial_runs_and_rebuilds(tmp_path: Path) -> None:
    log = random_log(tmp_path / "mix.jsonl", 300, seed=21, sessions=5)
    db = loaded(tmp_path, log)
    seats = reading.read_all([log]).seats_for_scoring()
    with Store(db) as store:
        # Showdowns shared in every order: russian pays naturals (hands with a natural
        # get showdowns of their own), the others share mask 0's.
        rescore(store, [load_ruleset("russian")])
        rescore(store, load_rulesets(["american", "one-six"]))
        rescore(store, load_rulesets(["pokerdom", "western"]))
        rescore(store, [load_ruleset("american")], rebuild=True)
        stored = scored_frame(store)
    names = ["russian", "american", "one-six", "pokerdom", "western"]
    direct = score(seats, load_rulesets(names)).with_columns(pl.col("ruleset").cast(pl.String))
    joined = stored.join(direct, on=["ruleset", "hand_id", "seat"], suffix="_direct")
    assert joined.height == direct.height == stored.height
    for column in COMPARED:
        assert (joined[column] == joined[f"{column}_direct"]).all(), column


def test_sums_over_results_named_grouped_and_sorted_work_in_plain_duckdb(
        tmp_path: Path) -> None:
    """What a user types into DuckDB: totals per ruleset or player, sorted. A store of
    Pineapple hands (so no 13-card naturals) scored under a ruleset that pays naturals
    used to make DuckDB fail such queries ("INT128 ... can't be cast ... INT8"); the
    view is written so that it does not."""
    rng = random.Random(8)
    hands = []
    for i in range(3000):
        hand = random_hand(rng, f"p{i}", "pineapple", 3, streets=False)
        hand["session_id"] = f"s{i % 5}"
        hands.append(hand)
    db = loaded(tmp_path, write_jsonl(tmp_path / "pineapple.jsonl", hands))
    with Store(db) as store:
        rescore(store, load_rulesets(["american", "russian"]))
        direct = scored_frame(store)
    con = duckdb.connect(str(db), read_only=True)
    numeric = [name for name, kind, *_ in con.sql("DESCRIBE results_named").fetchall()
               if kind in ("INTEGER", "SMALLINT", "TINYINT", "BIGINT")]
    assert {"points", "royalties", "wins_top", "fantasyland_cards"} <= set(numeric)
    for column in numeric:
        for by in ("ruleset", "player"):
            got = con.sql(f"SELECT {by}, sum({column}) FROM results_named "
                          "GROUP BY 1 ORDER BY 1").fetchall()
            want = direct.group_by(by).agg(pl.col(column).cast(pl.Int64).sum()).sort(by)
            assert got == want.rows(), (by, column)
    con.close()


def test_rescore_goes_in_batches_of_whole_sessions_the_first_one_small(
        tmp_path: Path) -> None:
    """Memory stays bounded by batches of whole sessions; the first is a quarter of the
    size so that writing starts early; every hand is scored once."""
    log = random_log(tmp_path / "a.jsonl", 400, seed=2, sessions=40)  # 10 hands each
    calls: list[tuple[int, int]] = []
    with Store(loaded(tmp_path, log)) as store:
        summary = rescore(store, load_rulesets(["american"]), batch_hands=80,
                          progress=lambda done, total: calls.append((done, total)))
        rows = store.count("results")
        seats = store.count("seats")
    steps = [b - a for (a, _), (b, _) in zip([(0, 0), *calls], calls, strict=False)]
    assert steps == [20] + [80] * 4 + [60]
    assert calls[-1] == (400, 400)
    assert summary.hands == 400
    assert rows == seats
