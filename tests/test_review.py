"""Decision review: positions with a known best play, convergence, the decisions table,
the review and replay commands."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from ofcstats.cards import parse_cards
from ofcstats.cli import app
from ofcstats.ingest import ingest
from ofcstats.review.core import Position, review
from ofcstats.review.store import Selection, Settings, run
from ofcstats.review.summary import biggest_mistakes, decisions_frame, player_summary
from ofcstats.rules import load_ruleset
from ofcstats.simulate import Player, Simulation, write_jsonl
from ofcstats.simulate.scoring import RulesetArrays
from ofcstats.store import Store
from ofcstats.variants import Variant

runner = CliRunner()
AMERICAN = load_ruleset("american")
TOP, MIDDLE, BOTTOM, DISCARD = 0, 1, 2, 3


def position(variant: str, index: int, board: dict[int, str], dealt: str, chosen: list[int],
             opponents: list[str], *, seen_extra: str = "") -> Position:
    """A position from text: the board before (row -> cards), the dealt cards and the
    rows chosen, the opponents' final boards as 13 cards each."""
    board_cards = [c for row in (0, 1, 2) for c in parse_cards(board.get(row, ""))]
    board_rows = [row for row in (0, 1, 2) for _ in parse_cards(board.get(row, ""))]
    cards = np.array(parse_cards(dealt), dtype=np.uint8)
    seen = np.zeros(52, dtype=bool)
    seen[board_cards + cards.tolist() + parse_cards(seen_extra)] = True
    return Position(
        hand_key=1, hand_id="h1", seat=1, player="p", street=index + 1, index=index,
        variant=Variant(variant), ruleset=AMERICAN, dealt=cards,
        chosen=np.array(chosen, dtype=np.int8), board=np.array(board_cards, dtype=np.uint8),
        board_rows=np.array(board_rows, dtype=np.int8), seen=seen,
        opponents=np.array([parse_cards(o) for o in opponents], dtype=np.uint8))


OPPONENT = "2d 3h 4s 5d 6h 8s 9d Jh 7d 7h Th Ts Td"  # a plain board: high card, pair, trips


def test_forced_last_card_has_one_candidate_and_no_loss() -> None:
    p = position("ofc-classic", 8, {0: "2c 3c 4c", 1: "5c 6c 7c 8c", 2: "9c Tc Jc Qc Kc"},
                 "Ac", [MIDDLE], [OPPONENT])
    (verdict,) = review([p])
    assert verdict.candidates == 1
    assert verdict.rollouts == 0
    assert verdict.ev_loss == 0
    assert verdict.best.tolist() == [MIDDLE]


def test_foul_avoided_by_one_placement_is_found() -> None:
    # Top QQ and middle KK with one slot each: a queen on top makes trips over a pair
    # of kings (a foul); only the ace on top and a queen in the middle stay legal.
    board = {0: "Qh Qd", 1: "Kh Kd 5s 6c", 2: "7c 8c 9c Tc Jc"}
    chosen = [TOP, MIDDLE, DISCARD]  # Qs on top: a foul
    p = position("pineapple", 4, board, "Qs Qc Ac", chosen, [OPPONENT])
    (verdict,) = review([p])
    assert verdict.best[2] == TOP  # the ace goes on top
    assert sorted(verdict.best[:2].tolist()) == [MIDDLE, DISCARD]
    assert verdict.ev_loss > 0
    assert verdict.mistake == "foul"
    # The play that avoids the foul costs nothing.
    (good,) = review([position("pineapple", 4, board, "Qs Qc Ac", [MIDDLE, DISCARD, TOP],
                               [OPPONENT])])
    assert good.ev_loss == 0


def test_fantasyland_with_a_unique_best_set_is_solved() -> None:
    # Trips aces on top (royalty and stay), four kings in the middle, a straight flush
    # at the bottom: the one set worth 22 + 10 + 15 royalties and a stay.
    cards = "Ah Ad Ac Ks Kh Kd Kc 2h 2s 3s 4s 5s 6s 9d"
    chosen = [MIDDLE] * 3 + [BOTTOM] * 2 + [TOP] * 2 + [DISCARD] + [MIDDLE] * 2 + [BOTTOM] * 3 \
        + [TOP]  # aces and kings split: a much weaker, still legal set
    p = position("pineapple", -1, {}, cards, chosen, [OPPONENT])
    (verdict,) = review([p])
    best = verdict.best.tolist()
    assert best[:3] == [TOP] * 3
    assert best[3:7] == [MIDDLE] * 4
    assert best[8:13] == [BOTTOM] * 5
    assert verdict.ev_loss > 20
    (again,) = review([position("pineapple", -1, {}, cards, best, [OPPONENT])])
    assert again.ev_loss == 0


def _every_set_value(cards: np.ndarray, opponents: list[str], arrays: RulesetArrays) -> float:
    """The best points of any way to set 13 of ``cards``, by trying every one."""
    from ofcstats.review.core import _Opponents, _set_values  # noqa: PLC0415
    from ofcstats.simulate.fantasyland import layout_of  # noqa: PLC0415

    k = cards.size
    layout = layout_of(k)
    tops = layout.left_tops.shape[1]
    b = np.repeat(np.arange(layout.five.shape[0]), layout.apart5.shape[1] * tops)
    m = np.repeat(layout.apart5.ravel(), tops)
    t = layout.left_tops[layout.apart_left].ravel()
    actions = np.full((b.size, k), DISCARD, dtype=np.int8)
    bits = 1 << np.arange(k)
    for mask, row in ((layout.mask3[t], TOP), (layout.mask5[m], MIDDLE),
                      (layout.mask5[b], BOTTOM)):
        actions[(mask[:, None] & bits) != 0] = row
    opp = _Opponents.of([position("pineapple", -1, {}, "", [], opponents)], arrays)
    return max(float(_set_values(np.broadcast_to(cards, part.shape), part, arrays, opp,
                                 14.0)[0].max()) for part in np.array_split(actions, 8))


@pytest.mark.parametrize("monotone", [True, False])
def test_fantasyland_solver_finds_the_best_of_every_set(monotone: bool) -> None:
    # Against two opponents' boards, row points count as much as royalties: the solver's
    # set (its bounds and the strongest legal top of each pair) is worth what the best of
    # all 1,009,008 ways to set 13 of 14 cards is worth.
    from dataclasses import replace  # noqa: PLC0415

    from ofcstats.review.core import _Opponents, _set_values, solve_set  # noqa: PLC0415
    from ofcstats.simulate.scoring import ruleset_arrays  # noqa: PLC0415

    arrays = ruleset_arrays(AMERICAN, Variant.PINEAPPLE)
    if not monotone:  # royalties that do not grow with the hand: every top is tried
        top = arrays.royalty[0].copy()
        top[top > 0] = 30 - top[top > 0]
        arrays = replace(arrays, royalty=(top, *arrays.royalty[1:]))
    rng = np.random.default_rng(21 if monotone else 22)
    deck = rng.permutation(52).astype(np.uint8)
    cards, opponents = deck[:14], [_code(deck[14:27]), _code(deck[27:40])]
    opp = _Opponents.of([position("pineapple", -1, {}, "", [], opponents)], arrays)
    assert opp.foul[0].tolist() == [False, True]  # one opponent fouled, one not
    actions, value, count = solve_set(cards, arrays, opp, 14.0)
    assert count == 1_009_008
    assert value == _every_set_value(cards, opponents, arrays)
    assert _set_values(cards[None], actions[None], arrays, opp, 14.0)[0][0] == value


def _code(cards: np.ndarray) -> str:
    return " ".join(f"{'23456789TJQKA'[c // 4]}{'cdhs'[c % 4]}" for c in cards.tolist())


def test_candidates_alike_are_valued_once_and_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    # A pair split between rows that cannot make a flush, or one card of it on top and
    # the other thrown away, leaves boards the rest of the hand cannot tell apart: valuing
    # one of them stands for the other, with the very same numbers.
    from ofcstats.review import core  # noqa: PLC0415

    # Step 5 follows the best's lead, which may differ where the leaders are two alike
    # candidates (below): without it the play made is measured on the same rollouts.
    monkeypatch.setattr(core, "CONFIRM_SHARE", 0)
    rng = np.random.default_rng(8)
    found = []
    for _ in range(6):
        deck = rng.permutation(52).astype(np.uint8)
        pair = deck[deck // 4 == deck[0] // 4][:2]
        rest = deck[~np.isin(deck, pair)]
        board = {0: _code(rest[:1]), 1: _code(rest[1:3]), 2: _code(rest[3:5])}
        found.append(position("pineapple", 1, board, _code(np.r_[pair, rest[5:6]]),
                              [TOP, DISCARD, MIDDLE], [_code(rest[6:19])]))
        found.append(position("pineapple", 1, board, _code(np.r_[pair, rest[5:6]]),
                              [DISCARD, TOP, MIDDLE], [_code(rest[6:19])]))
    pruned = review(found, rollouts=30, screen=0)
    for a, b in zip(pruned[::2], pruned[1::2], strict=True):
        assert (a.ev_chosen, a.ev_best, a.se_chosen) == (b.ev_chosen, b.ev_best, b.se_chosen)

    def each_alone(dec, pat, keys, added, shape):
        rep = np.full(shape, -1, dtype=np.intp)
        rep[dec, pat] = pat
        return rep

    monkeypatch.setattr(core, "_representatives", each_alone)
    every = review(found, rollouts=30, screen=0)
    # The play made has the very same value; the best may differ where the two leaders
    # valued on more rollouts are two alike candidates (one class), so only that is held.
    assert [(v.ev_chosen, v.se_chosen) for v in every] == \
        [(v.ev_chosen, v.se_chosen) for v in pruned]


@pytest.mark.parametrize("in_fantasyland", [False, True])
@pytest.mark.parametrize("ruleset", ["american", "two-four-scoop", "one-six"])
def test_compiled_scoring_of_played_out_boards_equals_the_rules(ruleset: str,
                                                                in_fantasyland: bool) -> None:
    # The rollouts' boards are scored board by board, compiled: the same points, fouls,
    # fantasyland (entered, or stayed in) and royalties as the rules on arrays, against
    # opponents some of whom fouled and some of whom are not there.
    from ofcstats.review import core  # noqa: PLC0415
    from ofcstats.rules.board import fouled, pair_points, royalties  # noqa: PLC0415
    from ofcstats.simulate.montecarlo import final_strengths, play_out  # noqa: PLC0415
    from ofcstats.simulate.scoring import qualifies, ruleset_arrays  # noqa: PLC0415

    arrays = ruleset_arrays(load_ruleset(ruleset), Variant.PINEAPPLE)
    rng = np.random.default_rng(5)
    streets = [(s.dealt, s.discard) for s in Variant.PINEAPPLE.streets]
    cards = np.stack([rng.permutation(52)[:17] for _ in range(4000)]).astype(np.uint8)
    empty = np.zeros((3, 4000), dtype=np.int64)
    keys = play_out(empty, np.zeros((3, 4000), dtype=np.int8), cards, streets, arrays, 14.0)
    keys[:, ::7] = keys[::-1, ::7]  # some boards the wrong way up: fouled
    strength = final_strengths(keys)
    worlds = 40
    opp = core._Opponents.of_strengths(strength[:, :worlds * 3].reshape(3, worlds, 3),
                                       rng.random((worlds, 3)) < 0.8, arrays)
    world = rng.integers(0, worlds, 4000)
    foul = fouled(strength)
    roy = royalties([arrays.royalty], strength, ~foul, np.int32, dense=True)[0]
    points = np.zeros(4000)
    for o in range(3):
        pair = pair_points(arrays, strength, opp.strength[:, world, o], foul,
                           opp.foul[world, o], roy, opp.royalty[:, world, o])
        points += np.where(opp.present[world, o], pair, 0)
    reach = qualifies(arrays, strength.T.astype(np.int32), foul, in_fantasyland)
    points += 14.0 * opp.present[world].sum(axis=1) * reach
    assert 0.05 < foul.mean() < 0.6
    assert opp.foul.any()
    assert reach.any() == (arrays.entry is not None)
    want = (points, foul, reach, roy.sum(axis=0))
    got = core._score(arrays, strength, world, opp, 14.0, in_fantasyland)
    for compiled, expected in zip(got, want, strict=True):
        assert (compiled == expected).all()
    if not in_fantasyland:
        for compiled, expected in zip(core._score_keys(arrays, keys, world, opp, 14.0), want,
                                      strict=True):
            assert (compiled == expected).all()


def test_rollouts_deal_distinct_cards_each_as_likely_at_every_place() -> None:
    # The rollouts' deals: no card twice in a deal, and every unseen card equally likely
    # at each place dealt (within 5 standard errors of 1 in 40 over 40,000 deals).
    from ofcstats.review import core  # noqa: PLC0415

    deck = np.arange(5, 45, dtype=np.uint8)
    out = np.empty((40_000, 12), dtype=np.uint8)
    core._deal(deck, np.random.default_rng(2).random((40_000, 12)), out)
    assert all(np.unique(row).size == 12 for row in out[:2000])
    assert set(np.unique(out).tolist()) == set(deck.tolist())
    counts = np.stack([np.bincount(out[:, i], minlength=45)[5:] for i in range(12)])
    share = counts / 40_000
    assert np.abs(share - 1 / 40).max() < 5 * np.sqrt((1 / 40) * (39 / 40) / 40_000)


def test_same_seed_same_numbers_whatever_is_reviewed_alongside() -> None:
    board = {0: "Qh", 1: "Kh Kd", 2: "7c 8c"}
    a = position("pineapple", 1, board, "Qs Qc Ac", [TOP, MIDDLE, DISCARD], [OPPONENT])
    b = position("pineapple", 1, {0: "2c", 1: "3c 3d", 2: "Ah Ad"}, "4c 5c 6c",
                 [MIDDLE, BOTTOM, DISCARD], [OPPONENT])
    alone = review([a], seed=3)[0]
    together = review([b, a], seed=3)[1]
    assert (alone.ev_chosen, alone.ev_best) == (together.ev_chosen, together.ev_best)
    other = review([a], seed=4)[0]
    assert other.ev_chosen != alone.ev_chosen


def test_rollouts_converge_within_the_reported_interval() -> None:
    rng = np.random.default_rng(5)
    positions = []
    for _ in range(12):
        deck = rng.permutation(52).astype(int)
        code = " ".join(f"{'23456789TJQKA'[c // 4]}{'cdhs'[c % 4]}" for c in deck)
        cards = code.split()
        opponent = " ".join(cards[:13])
        dealt = " ".join(cards[13:18])
        chosen = rng.choice(patterns_first_street())
        # Each its own hand: a decision's draws are seeded by its hand, seat and street,
        # so positions of one hand would share their draws and their errors.
        positions.append(replace(position("pineapple", 0, {}, dealt, list(chosen), [opponent]),
                                 hand_id=f"h{len(positions)}"))
    default = review(positions, rollouts=100, seed=1)
    many = review(positions, rollouts=1000, seed=2)
    inside = [abs(m.ev_chosen - d.ev_chosen) <= 1.96 * d.se_chosen
              for d, m in zip(default, many, strict=True)]
    assert sum(inside) >= 9  # a 95% interval: most of the dozen, by far
    assert all(abs(m.ev_chosen - d.ev_chosen) <= 4 * d.se_chosen
               for d, m in zip(default, many, strict=True))


def patterns_first_street() -> np.ndarray:
    from ofcstats.simulate.tables import patterns  # noqa: PLC0415

    return patterns(5, 0)


@cache
def _simulated(folder: Path) -> Path:
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=AMERICAN, hands=24, seed=11,
                     rollouts=40, players=[Player("rand", "random"), Player("bal", "balanced"),
                                           Player("mc", "montecarlo")])
    log = folder / "sim.jsonl"
    write_jsonl(sim, log)
    db = folder / "sim.duckdb"
    ingest([log], db)
    return db


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _simulated(tmp_path_factory.mktemp("review"))


def test_random_player_loses_more_than_balanced_and_montecarlo(simulated: Path) -> None:
    settings = Settings(rollouts=40)
    with Store(simulated) as store:
        run(store, Selection(), settings)
        table = player_summary(decisions_frame(store, Selection(), settings))
    loss = dict(zip(table["player"], table["mean_ev_loss"], strict=True))
    assert loss["rand"] > loss["bal"]
    assert loss["rand"] > loss["mc"]


def test_decisions_cover_every_street_and_resume(simulated: Path, tmp_path: Path) -> None:
    settings = Settings(rollouts=20, seed=9)
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(simulated.read_bytes())
    with Store(copy) as store:
        first = run(store, Selection(players=["bal"]), settings)
        again = run(store, Selection(players=["bal"]), settings)
        rest = run(store, Selection(), settings)
        frame = decisions_frame(store, Selection(), settings)
        streets = store.con.sql("SELECT count(DISTINCT (hand_key, seat, street)) "
                                "FROM placements").fetchall()[0][0]
    assert first.decisions > 0
    assert again.decisions == 0
    assert rest.decisions == streets - first.decisions
    assert frame.height == streets
    assert (frame.filter(pl.col("mistake").is_not_null())["ev_loss"] > 0).all()
    assert (frame["ev_loss"] - (frame["ev_best"] - frame["ev_chosen"])).abs().max() < 1e-9
    # Resuming gives the numbers a review in one go gives, in one process or two.
    with Store(simulated) as store:
        store.con.execute("DELETE FROM decisions WHERE seed = 9")
        run(store, Selection(), settings, jobs=2)
        whole = decisions_frame(store, Selection(), settings)
    cols = ["hand_id", "seat", "street", "ev_chosen", "ev_best", "best"]
    assert frame.select(cols).equals(whole.select(cols))
    top = biggest_mistakes(frame)
    assert top.group_by("player").len()["len"].max() <= 10
    assert top["ev_loss"].min() > 0


class _Page(HTMLParser):
    """Tags and text of a page, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_review_and_replay_commands(simulated: Path, tmp_path: Path) -> None:
    db = tmp_path / "cli.duckdb"
    db.write_bytes(simulated.read_bytes())
    with Store(db) as store:  # a name a page must escape
        store.con.execute("UPDATE seats SET player = '<b>x</b>' WHERE player = 'rand'")
    args = ["--db", str(db), "--rollouts", "20", "--seed", "1"]
    result = runner.invoke(app, ["review", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {r["player"] for r in data["players"]} == {"<b>x</b>", "bal", "mc"}
    assert all(r["decisions"] > 0 and r["total_ev_loss"] >= 0 for r in data["players"])
    csv = runner.invoke(app, ["review", *args, "--format", "csv", "--player", "mc"])
    assert pl.read_csv(csv.stdout.encode())["player"].to_list() == ["mc"]
    table = runner.invoke(app, ["review", *args])
    assert "Biggest mistakes" in table.stdout
    hand_id = data["mistakes"][0]["hand_id"]
    page_path = tmp_path / "hand.html"
    result = runner.invoke(app, ["replay", hand_id, "-o", str(page_path), *args])
    assert result.exit_code == 0, result.output
    text = page_path.read_text()
    assert "<b>x</b>" not in text
    assert "&lt;b&gt;x&lt;/b&gt;" in text
    page = _Page()
    page.feed(text)
    assert page.tags.count("table") == 3  # one a seat
    assert "<b>x</b>" in "".join(page.text)  # the name reads as written
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is not None:  # as a browser reads it: the DOM after parsing
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                              "--dump-dom", page_path.as_uri()], capture_output=True,
                             text=True, timeout=120, check=True).stdout
        assert dom.count('<table class="street">') == 3
        assert "&lt;b&gt;x&lt;/b&gt;" in dom
        assert dom.count('class="card') >= 3 * 17
    assert runner.invoke(app, ["replay", "nope", "-o", str(page_path), *args]).exit_code == 2
    assert runner.invoke(app, ["review", *args, "--rollouts", "0"]).exit_code == 2


def _unreviewed_copy(simulated: Path, path: Path) -> Path:
    path.write_bytes(simulated.read_bytes())
    with Store(path) as store:
        store.con.execute("DELETE FROM decisions")
    return path


@pytest.mark.parametrize("read_only", [True, False])
def test_replay_values_a_hand_not_reviewed_in_memory_and_writes_nothing(
        simulated: Path, tmp_path: Path, read_only: bool) -> None:
    from ofcstats.review.replay import page  # noqa: PLC0415
    from ofcstats.review.store import in_memory  # noqa: PLC0415

    db = _unreviewed_copy(simulated, tmp_path / "fresh.duckdb")
    settings = Settings(rollouts=10, seed=3)
    with Store(db, read_only=read_only) as store:
        hand_id = store.con.sql("SELECT min(hand_id) FROM hands").fetchall()[0][0]
        text = page(store, hand_id, settings)
        fresh = in_memory(store, Selection(hand_ids=[hand_id]), settings)
        assert store.count("decisions") == 0
    assert "not reviewed" not in text
    assert fresh.height > 0
    assert fresh["hand_key"].n_unique() == 1
    # The numbers are those a review stores, and the page is the same once it has.
    with Store(db) as store:
        run(store, Selection(hand_ids=[hand_id]), settings)
        kept = decisions_frame(store, Selection(hand_ids=[hand_id]), settings)
        assert page(store, hand_id, settings) == text
    cols = ["seat", "street", "best", "ev_chosen", "ev_best", "ev_loss"]
    assert kept.select(cols).equals(fresh.select(cols))


def test_replay_right_after_ingest_and_of_a_hand_reviewed_otherwise(
        simulated: Path, tmp_path: Path) -> None:
    db = _unreviewed_copy(simulated, tmp_path / "fresh.duckdb")
    out = tmp_path / "hand.html"
    with Store(db, read_only=True) as store:
        hand_id = store.con.sql("SELECT max(hand_id) FROM hands").fetchall()[0][0]
    result = runner.invoke(app, ["replay", hand_id, "-o", str(out), "--db", str(db),
                                 "--rollouts", "10"])
    assert result.exit_code == 0, result.output
    assert "EV loss" in out.read_text()
    # A hand the review listed under other settings replays under the asked ones.
    listed = runner.invoke(app, ["review", "--db", str(db), "--rollouts", "5", "--seed", "4",
                                 "--format", "json", "--quiet"])
    assert listed.exit_code == 0, listed.output
    hand_id = json.loads(listed.stdout)["mistakes"][0]["hand_id"]
    result = runner.invoke(app, ["replay", hand_id, "-o", str(out), "--db", str(db),
                                 "--rollouts", "10"])
    assert result.exit_code == 0, result.output
    with Store(db, read_only=True) as store:
        assert store.con.sql("SELECT count(*) FROM decisions WHERE rollouts = 10"
                             ).fetchall()[0][0] == 0


def test_command_defaults_are_the_library_defaults() -> None:
    import inspect  # noqa: PLC0415

    from ofcstats.cli import reviewing  # noqa: PLC0415
    from ofcstats.review import core  # noqa: PLC0415

    for command in (reviewing.review, reviewing.replay):
        params = inspect.signature(command).parameters
        assert params["rollouts"].default == core.DEFAULT_ROLLOUTS
        assert params["seed"].default == core.DEFAULT_SEED
        assert params["fantasyland_value"].default == core.FANTASYLAND_VALUE
        assert params["screen"].default == core.DEFAULT_SCREEN
        assert params["opponents"].default.value == core.DEFAULT_OPPONENTS


def test_report_shows_the_decisions_per_variant(simulated: Path, tmp_path: Path) -> None:
    from ofcstats import report  # noqa: PLC0415
    from ofcstats.analysis import Filters  # noqa: PLC0415
    from ofcstats.pipeline import rescore  # noqa: PLC0415

    db = tmp_path / "report.duckdb"
    db.write_bytes(simulated.read_bytes())
    with Store(db) as store:
        rescore(store, [AMERICAN])
        store.con.execute("DELETE FROM decisions")
        assert report.collect(store).decisions is None
        run(store, Selection(players=["mc"]), Settings())
        data = report.collect(store, Filters(players=["mc"]))
        costliest = decisions_frame(store, Selection(players=["mc"]))["ev_loss"].max()
    assert data.decisions is not None
    assert data.decisions["player"].to_list() == ["mc"]
    assert data.decision_streets is not None
    streets = data.decision_streets
    assert streets["street"].to_list()[:2] == ["street_1", "street_2"]
    assert (streets["ci_low"] <= streets["mean_ev_loss"]).all()
    assert (streets["mean_ev_loss"] <= streets["ci_high"]).all()
    images = {key: report._png(figure) for key, figure in report.figures(data)}
    assert "pineapple:decisions" in images
    section = "\n".join(report._decisions_section(data, images))
    assert '<h2 id="decisions">Decisions</h2>' in section
    assert "<h3>pineapple</h3>" in section
    assert "mean EV loss" in section
    # The chart of EV loss by street with its intervals, next to the style map.
    assert section.count('<div class="pair">') == 1
    assert "EV loss per decision by street and player, with 95% intervals" in section
    assert "foul rate against fantasyland entry rate" in section
    # The leaks by situation: mc's rows, each beside the table's mean.
    assert data.decision_situations is not None
    leaks = data.decision_situations
    assert set(leaks["player"]) == {"mc"}
    assert "street 1" in set(leaks["situation"])
    assert '<h3 id="leaks-pineapple">Leaks by situation</h3>' in section
    assert "table&#x27;s mean" in section or "table's mean" in section
    assert section.count("<td>street 1</td>") == 1
    # The replay: mc's costliest decision, its board before and both placements.
    (worst,) = data.mistakes
    assert worst["ev_loss"] == costliest > 0
    assert len(worst["placed"]) == {1: 0, 2: 5, 3: 7, 4: 9, 5: 11}[worst["street"]]
    assert '<h3 id="replay-pineapple">' in section
    assert worst["hand_id"] in section
    page = report.render_html(data, images)
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is not None:  # as a browser lays it out: the replay's boards and cards
        playwright = pytest.importorskip("playwright.sync_api")
        with playwright.sync_playwright() as driver:
            chromium = driver.chromium.launch(executable_path=browser, args=[
                "--no-sandbox", "--disable-gpu"])
            tab = chromium.new_page(viewport={"width": 1280, "height": 900})
            tab.goto(path.as_uri())
            replay = tab.evaluate("""() => {
                const t = document.querySelector('.replay table.street');
                const cards = Array.from(t.querySelectorAll('.card'));
                return [t.rows.length, cards.length,
                        cards.filter(c => c.getBoundingClientRect().width > 0).length,
                        getComputedStyle(t.querySelector('.card.new')).backgroundColor,
                        document.querySelectorAll('.pair img').length];
            }""")
            chromium.close()
        rows, cards, shown, highlight, images_shown = replay
        assert rows == 2  # the header and mc's decision
        assert cards == shown >= 2 * 13 + len(worst["dealt"])  # two boards and the dealt
        assert highlight == "rgb(255, 246, 200)"  # the street's cards stand out
        assert images_shown == 2


def test_ev_loss_chart_has_the_style_map_beside_it_in_one_figure() -> None:
    from matplotlib.colors import to_hex  # noqa: PLC0415

    from ofcstats.report import charts  # noqa: PLC0415

    streets = pl.DataFrame({
        "player": ["bo", "bo", "al", "al"], "street": ["street_1", "street_2"] * 2,
        "mean_ev_loss": [2.0, 1.0, 3.0, 0.5], "ci_low": [1.0, 0.5, 2.0, 0.1],
        "ci_high": [3.0, 1.5, 4.0, 0.9]})
    players = pl.DataFrame({  # cy played but was not reviewed: not on the map
        "player": ["cy", "bo", "al"], "ruleset": ["american"] * 3, "hands": [50, 40, 60],
        "foul_rate": [0.3, 0.1, 0.2], "fantasyland_entry_rate": [0.05, 0.02, 0.08]})
    figure = charts.ev_loss_beside_styles(streets, players, "american")
    bars, styles = figure.axes
    assert bars.get_title() == "EV loss per decision, by street"
    assert "styles" in styles.get_title()
    assert sorted(t.get_text() for t in styles.texts if t.get_text() in {"al", "bo", "cy"}) \
        == ["al", "bo"]
    # Each player in one colour in both: the legend's bars and the map's markers.
    legend = {t.get_text(): to_hex(h.get_facecolor())
              for t, h in zip(bars.get_legend().get_texts(), bars.get_legend().legend_handles,
                              strict=True)}
    marked = {round(float(c.get_offsets()[0][0]), 6): to_hex(c.get_facecolor()[0], keep_alpha=False)
              for c in styles.collections}
    assert marked == {20.0: legend["al"], 10.0: legend["bo"]}
    assert legend["al"] != legend["bo"]


def test_timed_out_seats_are_not_reviewed_and_are_counted(tmp_path: Path) -> None:
    # A seat out of time had the rest of its hand placed for it: none of its streets is
    # judged as the player's, and the review says how many seats it left out.
    from ofcstats.review.store import skipped  # noqa: PLC0415

    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=AMERICAN, hands=6, seed=4,
                     timeout_rate=0.5, players=[Player("a", "balanced"),
                                                Player("b", "aggressive")])
    log = tmp_path / "late.jsonl"
    write_jsonl(sim, log)
    db = tmp_path / "late.duckdb"
    ingest([log], db)
    with Store(db) as store:
        late = set(store.con.sql("SELECT hand_key, seat FROM seats WHERE timed_out")
                   .fetchall())
        assert late  # the simulator made some
        run(store, Selection(), Settings(rollouts=5))
        reviewed = set(store.con.sql("SELECT DISTINCT hand_key, seat FROM decisions")
                       .fetchall())
        assert reviewed
        assert not reviewed & late
        assert skipped(store) == {"timed_out": len(late), "chinese_13": 0, "final_rows": 0}
    result = runner.invoke(app, ["review", "--db", str(db), "--rollouts", "5",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["skipped"]["timed_out"] == len(late)
    table = runner.invoke(app, ["review", "--db", str(db), "--rollouts", "5"])
    assert f"Not reviewed: {len(late)} seats that timed out" in table.stdout


@pytest.mark.parametrize("screen", [core_default_screen := 6, 0])
def test_every_candidate_first_then_the_best_few_then_fresh_rollouts_for_the_loss(
        monkeypatch: pytest.MonkeyPatch, screen: int) -> None:
    # Step 1 values every class of candidates on the first rollouts, step 2 the best few
    # (or, --screen 0, every one) and the play made up to the rollouts asked for, step 3
    # the two best of those and the play made on the rest of the selection rollouts,
    # step 4 the play made and the best on the measuring rollouts, none of them seen.
    from ofcstats.review import core  # noqa: PLC0415

    valued: list[tuple[int, int, int]] = []
    original = core._Street.value

    def spy(self, dec, pat, r0, r1, raw=False):  # type: ignore[no-untyped-def]
        valued.append((dec.size, r0, r1))
        return original(self, dec, pat, r0, r1, raw)

    monkeypatch.setattr(core._Street, "value", spy)
    rng = np.random.default_rng(3)
    deck = rng.permutation(52).astype(np.uint8)
    p = position("pineapple", 0, {}, _code(deck[:5]), [BOTTOM, BOTTOM, MIDDLE, MIDDLE, TOP],
                 [_code(deck[5:18])])
    (verdict,) = review([p], screen=screen)
    rollouts, first = core.DEFAULT_ROLLOUTS, core.Plan().first
    assert core_default_screen == core.DEFAULT_SCREEN
    assert verdict.candidates == 232
    assert verdict.rollouts == rollouts
    dec, pat = np.nonzero(np.ones((1, 232), dtype=bool))
    keys = np.zeros((1, 3), dtype=np.int64)
    onehot = core.pattern_onehot(5, 0).reshape(5, -1, 3)
    added = np.einsum("k,kpr->pr", core.CARD_KEYS[deck[:5]].astype(float), onehot)[None]
    classes = len(np.unique(core._representatives(dec, pat, keys, added.astype(np.int64),
                                                  (1, 232))))
    kept = classes if not screen else screen + 1 if verdict.best.tolist() != [
        BOTTOM, BOTTOM, MIDDLE, MIDDLE, TOP] else screen
    assert valued[0] == (classes, 0, first)
    assert valued[1][1:] == (first, rollouts)
    assert valued[1][0] in (kept, screen + 1) if screen else valued[1][0] == classes
    assert valued[2][0] in (core.LEADERS, core.LEADERS + 1)  # the play made, unless a leader
    assert valued[2][1:] == (rollouts, core.LEADERS_SHARE * rollouts)
    assert valued[3] == (2, core.LEADERS_SHARE * rollouts,
                         (core.LEADERS_SHARE + core.MEASURE_SHARE) * rollouts)
    assert len(valued) == 4


def test_reviews_of_many_hands_use_both_cores() -> None:
    from ofcstats.review.store import auto_jobs  # noqa: PLC0415

    assert auto_jobs(1) == auto_jobs(100) == 1
    assert auto_jobs(101) == min(2, len(os.sched_getaffinity(0)))


def test_seats_of_13_card_hands_and_their_criss_cross_are_counted_as_13_card(
        tmp_path: Path) -> None:
    # Neither deals streets: 13 cards are set at once, so nothing is reviewed, and the
    # review says why (not "final rows only", which would blame the log).
    from ofcstats.review.store import skipped  # noqa: PLC0415

    sample = Path(__file__).resolve().parent.parent / "data" / "sample"
    db = tmp_path / "thirteen.duckdb"
    ingest([sample / "criss-cross.jsonl", sample / "chinese-13-russian.jsonl"], db)
    with Store(db) as store:
        seats = store.con.sql("SELECT count(*) FROM seats").fetchall()[0][0]
        assert skipped(store) == {"timed_out": 0, "chinese_13": seats, "final_rows": 0}
        run(store, Selection(), Settings(rollouts=5))
        assert store.con.sql("SELECT count(*) FROM decisions").fetchall()[0][0] == 0


def test_drawn_opponents_equal_logged_where_nothing_is_left_to_draw(simulated: Path) -> None:
    from ofcstats.review.store import positions  # noqa: PLC0415
    from ofcstats.store.decisions import review_seats  # noqa: PLC0415

    with Store(simulated, read_only=True) as store:
        keys = [k for (k,) in store.con.sql("SELECT hand_key FROM hands").fetchall()]
        found = positions(review_seats(store, keys), None, None)
    last = [p for p in found if p.future() == 0 and not any(p.to_draw("drawn"))]
    later = [p for p in found if p.index == 4 and any(p.to_draw("drawn"))]
    assert last  # the last to act on the last street has seen every board
    assert later  # the others still have to see some
    drawn = review(last, opponents="drawn", rollouts=10)
    logged = review(last, opponents="logged", rollouts=10)
    for a, b in zip(drawn, logged, strict=True):
        assert (a.ev_chosen, a.ev_best, a.ev_loss, a.rollouts) == \
            (b.ev_chosen, b.ev_best, b.ev_loss, 0)
        assert a.best.tolist() == b.best.tolist()


def test_a_player_sees_only_the_cards_placed_before_its_turn(simulated: Path) -> None:
    from ofcstats.review.store import acting_order, positions  # noqa: PLC0415
    from ofcstats.store.decisions import review_seats  # noqa: PLC0415

    with Store(simulated, read_only=True) as store:
        keys = [k for (k,) in store.con.sql("SELECT hand_key FROM hands").fetchall()]
        frame = review_seats(store, keys)
    found = positions(frame, None, None)
    buttons = dict(zip(frame["hand_key"], frame["button"], strict=True))
    checked = 0
    for p in found:
        seen, _, after, dealt = p.seen_of_opponents()
        shown = seen[seen < 52]
        assert np.isin(shown, p.opponents).all()  # only cards that ended on their boards
        assert not np.isin(shown, np.flatnonzero(p.seen)).any()
        order = acting_order([1, 2, 3], buttons[p.hand_key])
        before = order.index(p.seat)  # opponents acting before this seat on a street
        if p.fantasyland or dealt.any():
            continue
        # Five cards of each earlier street, then two a street (Pineapple), of each
        # opponent; this street's too from those who acted before.
        per_street = [5, 2, 2, 2, 2]
        expected = sum(per_street[:p.index]) * 2 + per_street[p.index] * before
        assert shown.size == expected, (p.hand_id, p.seat, p.street)
        assert (after == np.where(np.arange(2) < before, p.index + 1, p.index)).all() or \
            before == 1
        checked += 1
    assert checked > 100


def test_same_seed_same_numbers_whatever_the_thread_count(simulated: Path,
                                                           tmp_path: Path) -> None:
    settings = Settings(rollouts=16, seed=5)
    frames = []
    for jobs in (1, 2):
        db = _unreviewed_copy(simulated, tmp_path / f"jobs{jobs}.duckdb")
        with Store(db) as store:
            run(store, Selection(), settings, jobs=jobs)
            frames.append(decisions_frame(store, Selection(), settings))
    cols = ["hand_id", "seat", "street", "best", "ev_chosen", "ev_best", "ev_loss",
            "ev_loss_se", "mistake", "situations"]
    assert frames[0].height > 0
    assert frames[0].select(cols).equals(frames[1].select(cols))


def test_a_mistake_is_a_loss_above_two_standard_errors(simulated: Path,
                                                       tmp_path: Path) -> None:
    db = _unreviewed_copy(simulated, tmp_path / "se.duckdb")
    settings = Settings(rollouts=24, seed=2)
    with Store(db) as store:
        run(store, Selection(), settings)
        frame = decisions_frame(store, Selection(), settings)
    above = frame["ev_loss"] > (2 * frame["ev_loss_se"]).clip(lower_bound=1e-9)
    assert (frame["mistake"].is_not_null() == above).all()
    assert (frame["ev_loss"] < 0).any()  # unbiased: a play as good as the best can show so
    assert ((frame["ev_loss_se"] > 0) | (frame["ev_loss"] == 0) | frame["exact"]).all()
    top = biggest_mistakes(frame)
    assert top["mistake"].is_not_null().all()


@pytest.mark.slow
def test_default_review_is_within_five_percent_of_a_high_rollout_review(
        simulated: Path, tmp_path: Path) -> None:
    db = _unreviewed_copy(simulated, tmp_path / "bias.duckdb")
    with Store(db) as store:
        players = ["rand", "bal"]
        run(store, Selection(players=players), Settings())
        run(store, Selection(players=players), Settings(rollouts=1600, seed=7))
        default = decisions_frame(store, Selection(players=players), Settings())
        many = decisions_frame(store, Selection(players=players),
                               Settings(rollouts=1600, seed=7))
    for player in players:
        a = default.filter(pl.col("player") == player)["ev_loss"].mean()
        b = many.filter(pl.col("player") == player)["ev_loss"].mean()
        assert abs(a - b) <= max(0.05 * b, 0.1), (player, a, b)  # type: ignore[operator]


def test_situations_of_hand_made_positions() -> None:
    from ofcstats.review.situations import SITUATIONS, situations  # noqa: PLC0415

    first = position("pineapple", 0, {}, "2c 7d 9h Js Kc", [TOP, MIDDLE, MIDDLE, BOTTOM, BOTTOM],
                     [OPPONENT])
    assert situations(first) == ["street 1", "first five: high cards"]
    suited = position("pineapple", 0, {}, "2c 7c 9c 9s Kc", [TOP] * 3 + [MIDDLE] * 2,
                      [OPPONENT])
    assert situations(suited) == ["street 1", "first five: pair",
                                  "first five: three to a flush"]
    # Queens up on top, unpaired, with room: chasing fantasyland; a pair of them is made.
    chase = position("pineapple", 2, {0: "Qs", 1: "Ah 2d 3c", 2: "9s 9d 4h"}, "5c 6c 7c",
                     [MIDDLE, BOTTOM, DISCARD], [OPPONENT])
    assert situations(chase) == ["street 3", "chasing fantasyland", "straight draw",
                                 "discard"]  # A-2-3 is a wheel draw
    made = position("pineapple", 2, {0: "Qs Qd", 1: "Kh 8h 3h", 2: "9s 9d"}, "5c 6c 7c",
                    [MIDDLE, BOTTOM, DISCARD], [OPPONENT])
    assert situations(made) == ["street 3", "flush draw", "discard"]
    fl = position("pineapple", -1, {}, OPPONENT + " As", [TOP] * 3 + [MIDDLE] * 5
                  + [BOTTOM] * 5 + [DISCARD], [OPPONENT])
    assert situations(fl) == ["fantasyland set"]
    names = [name for name, _ in SITUATIONS]
    assert len(names) == len(set(names))


def test_an_older_database_upgrades_and_keeps_its_decisions(tmp_path: Path) -> None:
    from ofcstats.store.schema import MIGRATIONS  # noqa: PLC0415

    db = tmp_path / "old.duckdb"
    with Store(db) as fresh:  # the newest schema, then back to version 8's table
        fresh.con.execute("DROP VIEW decisions_named")
        fresh.con.execute("DROP TABLE decisions")
        fresh.con.execute("DELETE FROM schema_version WHERE version > 4")
        fresh.migrate([m for m in MIGRATIONS if m[0] == 5])
        fresh.con.execute("INSERT INTO schema_version (version) VALUES (6), (7), (8)")
        fresh.con.execute("""INSERT INTO decisions VALUES (1, 1, 'p', 1, false, 'american',
            '', [1, 2], [0, 1], [0, 1], 1.5, 2.5, 1.0, 0.1, 3, 'rows', false, 100, 0, 0,
            14.0)""")
        assert fresh.version() == 8
    with Store(db) as store:
        assert store.version() == MIGRATIONS[-1][0]
        row = store.con.sql("SELECT opponents, method, ev_loss_se, situations, ev_loss "
                            "FROM decisions").fetchall()
        assert row == [("logged", "best-mean", None, None, 1.0)]
        # A review reads only its own method's rows.
        assert decisions_frame(store, Selection(), Settings(
            opponents="logged", rollouts=100, screen=0)).is_empty()


def test_a_likely_costly_mistake_is_measured_on_more_rollouts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Three kings on top on the first street all but fouls: the best led the play made by
    # far on the selection rollouts, so step 5 measures the loss on many more rollouts,
    # fresh ones, and its error shrinks; without the step it is measured on fewer.
    from ofcstats.review import core  # noqa: PLC0415

    valued: list[tuple[int, int, int]] = []
    original = core._Street.value

    def spy(self, dec, pat, r0, r1, raw=False):  # type: ignore[no-untyped-def]
        valued.append((dec.size, r0, r1))
        return original(self, dec, pat, r0, r1, raw)

    monkeypatch.setattr(core._Street, "value", spy)
    p = position("pineapple", 0, {}, "Kh Kd Ks 2c 3d", [TOP, TOP, TOP, MIDDLE, BOTTOM],
                 [OPPONENT])
    (verdict,) = review([p])
    rollouts = core.DEFAULT_ROLLOUTS
    assert len(valued) == 5
    assert valued[-1] == (2, 0, core.CONFIRM_SHARE * rollouts)
    assert verdict.mistake == "foul"
    assert verdict.ev_loss > core.CONFIRM_ABOVE
    monkeypatch.setattr(core, "CONFIRM_SHARE", 0)
    (alone,) = review([p])
    assert alone.best.tolist() == verdict.best.tolist()
    # Four times the rollouts: about half the error.
    assert verdict.ev_loss_se < 0.75 * alone.ev_loss_se
    assert abs(verdict.ev_loss - alone.ev_loss) < 3 * alone.ev_loss_se
