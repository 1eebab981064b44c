"""Going through a night: the hand list (``ofcstats hands``, ``analysis.hands``) held to
SQL on the same store, on a terminal and in a pipe; and a session replayed on one page,
as a browser shows it on a desktop and on a phone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_cli_terminal import run_in_pipe, run_on_terminal
from test_report import _chromium
from typer.testing import CliRunner

from ofcstats import analysis
from ofcstats.cli import app
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.review.store import Selection, Settings, run
from ofcstats.rules import load_ruleset, load_rulesets
from ofcstats.simulate import Player, Simulation, simulate
from ofcstats.store import Store
from ofcstats.variants import Variant

runner = CliRunner()


def _log(path: Path, sim: Simulation) -> Path:
    path.write_text("".join(json.dumps(h) + "\n" for h in simulate(sim)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def club(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Pineapple hands of three players with fantasyland and timed-out seats, a 13-card
    session, one session reviewed."""
    folder = tmp_path_factory.mktemp("hands")
    pineapple = _log(folder / "p.jsonl", Simulation(
        variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
        players=[Player("ann", "aggressive"), Player("bob", "safe"), Player("cy", "balanced")],
        hands=90, seed=5, timeout_rate=0.04))
    chinese = _log(folder / "c.jsonl", Simulation(
        variant=Variant.CHINESE_13, ruleset=load_ruleset("foreign"),
        players=[Player("ann", "safe"), Player("bob", "balanced")], hands=12, seed=2,
        prefix="chi"))
    db = folder / "club.duckdb"
    ingest([pineapple, chinese], db)
    with Store(db) as store:
        rescore(store, load_rulesets(["american", "pokerstars", "foreign"]))
        first = store.query("SELECT min(session_id) AS s FROM hands "
                            "WHERE variant = 'pineapple'")["s"][0]
        run(store, Selection(sessions=[first]), Settings(rollouts=4, screen=2))
    return db


def _sql_list(store: Store, where: str = "true", order: str = "") -> pl.DataFrame:
    """The hand list as SQL says it: the ruleset each variant's hands were played under,
    each seat's loss summed from its decisions (one review in this store)."""
    return store.query(f"""
        WITH shown AS (
            SELECT variant, ruleset FROM (
                SELECT variant, ruleset, count(*) AS n FROM hands GROUP BY ALL)
            QUALIFY row_number() OVER (PARTITION BY variant ORDER BY n DESC, ruleset) = 1),
        loss AS (
            SELECT hand_key, seat, sum(ev_loss) AS ev_loss, count(mistake) AS mistakes
            FROM decisions GROUP BY ALL)
        SELECT x.hand_id, x.player::VARCHAR AS player, x.seat, x.points,
               x.points * coalesce(x.point_value, 1.0) AS money, x.fouled, x.royalties,
               x.fantasyland, x.fantasyland_entered, s.timed_out, l.ev_loss,
               l.mistakes::INTEGER AS mistakes, x.session_id, x.played_at, x.hand_key
        FROM results_named x JOIN shown USING (variant, ruleset)
        JOIN seats s USING (hand_key, seat)
        LEFT JOIN loss l USING (hand_key, seat)
        WHERE {where}
        ORDER BY {order} x.session_id, x.played_at, x.hand_key, x.seat""")


FILTERS: dict[str, tuple[dict[str, Any], str]] = {
    "none": ({}, "true"),
    "player": ({"players": ["bob"]}, "x.player = 'bob'"),
    "variant": ({"variants": ["chinese-13"]}, "x.variant = 'chinese-13'"),
    "since and until": ({"since": "2026-01-05T18:20:00+00:00",
                         "until": "2026-01-05T19:00:00+00:00"},
                        "x.played_at >= '2026-01-05 18:20:00+00' "
                        "AND x.played_at < '2026-01-05 19:00:00+00'"),
    "fouled": ({"fouled": True}, "x.fouled"),
    "not fouled": ({"fouled": False}, "NOT x.fouled"),
    "fantasyland": ({"fantasyland": True}, "(x.fantasyland OR x.fantasyland_entered)"),
    "mistakes": ({"mistakes": True}, "l.mistakes > 0"),
    "min points": ({"min_points": 10}, "x.points >= 10"),
    "max points": ({"max_points": -10}, "x.points <= -10"),
    "points between": ({"min_points": -3, "max_points": 3}, "x.points BETWEEN -3 AND 3"),
}


def _asked(store: Store, args: dict[str, Any]) -> pl.DataFrame:
    from datetime import datetime  # noqa: PLC0415

    keys = {"players", "variants", "since", "until", "sessions"}
    filters = analysis.Filters(**{k: datetime.fromisoformat(v) if k in ("since", "until")
                                  else v for k, v in args.items() if k in keys})
    return analysis.hands(store, filters, **{k: v for k, v in args.items() if k not in keys})


@pytest.mark.parametrize("name", list(FILTERS))
def test_every_filter_keeps_the_rows_sql_keeps(club: Path, name: str) -> None:
    args, where = FILTERS[name]
    with Store(club, read_only=True) as store:
        got = _asked(store, args)
        want = _sql_list(store, where)
    assert got.height == want.height > 0
    assert_frame_equal(got.select(want.columns), want, check_dtypes=False)


def test_the_session_filter_and_the_ruleset_asked(club: Path) -> None:
    with Store(club, read_only=True) as store:
        session = store.query("SELECT max(session_id) AS s FROM hands "
                              "WHERE variant = 'pineapple'")["s"][0]
        got = analysis.hands(store, analysis.Filters(sessions=[session]), ruleset="pokerstars")
        want = store.query("SELECT hand_id, seat, points FROM results_named WHERE "
                           "session_id = ? AND ruleset = 'pokerstars' ORDER BY played_at, "
                           "hand_key, seat", [session])
    assert set(got["ruleset"]) == {"pokerstars"}
    assert_frame_equal(got.select(want.columns), want, check_dtypes=False)


def test_sorts_put_the_biggest_loss_first_and_ties_in_play_order(club: Path) -> None:
    with Store(club, read_only=True) as store:
        by_points = analysis.hands(store, sort="points", limit=15)
        want = _sql_list(store, order="x.points,").head(15)
        by_loss = analysis.hands(store, sort="ev_loss")
        want_loss = _sql_list(store, order="l.ev_loss DESC NULLS LAST,")
    assert by_points["points"].to_list() == sorted(by_points["points"].to_list())
    assert by_points["hand_id"].to_list() == want["hand_id"].to_list()
    assert by_points.height == 15
    reviewed = by_loss.filter(pl.col("ev_loss").is_not_null())
    assert reviewed.height > 0
    assert by_loss.head(reviewed.height)["ev_loss"].is_not_null().all()
    assert by_loss["ev_loss"].head(reviewed.height).is_sorted(descending=True)
    assert by_loss.select("hand_id", "seat").equals(want_loss.select("hand_id", "seat"))


def test_a_seat_not_reviewed_has_no_loss_and_a_reviewed_one_counts_zero(club: Path) -> None:
    with Store(club, read_only=True) as store:
        frame = analysis.hands(store)
    reviewed = frame.filter(pl.col("ev_loss").is_not_null())
    assert reviewed["mistakes"].is_not_null().all()
    assert reviewed.height > 0
    assert (reviewed["mistakes"] == 0).any()
    assert frame.filter(pl.col("ev_loss").is_null())["mistakes"].is_null().all()
    chinese = frame.filter(pl.col("variant") == "chinese-13")
    assert chinese.height > 0
    assert chinese["ev_loss"].is_null().all()


def test_hands_on_an_80_column_terminal_fits_and_says_what_it_left_out(club: Path) -> None:
    code, seen = run_on_terminal(["hands", "--db", str(club), "--sort", "ev_loss", "-n", "12"],
                                 club.parent, env={"COLUMNS": "80"})
    assert code == 0, seen
    text = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", seen).decode().replace("\r", "")
    lines = [line for line in text.splitlines() if line.strip()]
    assert max(len(line) for line in lines) <= 80
    header = next(line for line in lines if line.startswith("| hand_id"))
    # The columns the list exists for come first: the points, the money, the loss.
    assert [c.strip() for c in header.strip("|").split("|")][:6] == [
        "hand_id", "player", "points", "money", "ev_loss", "mistakes"]
    assert "more column" in text
    assert "--wide" in text
    assert "pineapple under american" in text


def test_hands_in_a_pipe_as_csv_and_json_hold_every_column(club: Path) -> None:
    csv = run_in_pipe(["hands", "--db", str(club), "-f", "csv", "--player", "ann"], club.parent)
    assert csv.returncode == 0, csv.stderr
    frame = pl.read_csv(csv.stdout)
    assert set(frame["player"]) == {"ann"}
    assert "hand_key" not in frame.columns
    assert {"ev_loss", "mistakes", "money", "fantasyland_entered", "timed_out"} \
        <= set(frame.columns)
    listed = run_in_pipe(["hands", "--db", str(club), "-f", "json", "--player", "ann"],
                         club.parent)
    rows = json.loads(listed.stdout)
    assert [r["hand_id"] for r in rows] == frame["hand_id"].to_list()
    assert any(r["ev_loss"] is None and r["mistakes"] is None for r in rows)


def test_hands_usage_errors_are_one_line(club: Path) -> None:
    result = runner.invoke(app, ["hands", "--db", str(club), "--player", "bbo"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "ofcstats: no player named bbo (did you mean bob?); known players: ann, bob, cy"]
    result = runner.invoke(app, ["hands", "--db", str(club), "--sort", "luck"])
    assert result.exit_code == 2
    empty = runner.invoke(app, ["hands", "--db", str(club), "--min-points", "999"])
    assert empty.exit_code == 0
    assert "no hands match" in empty.output


# The session page.

def _session(store: Store, where: str) -> str:
    found = store.query(f"""SELECT min(h.session_id) AS s FROM hands h
                            JOIN seats s USING (hand_key) WHERE {where}""")["s"][0]
    assert found is not None, where
    return str(found)


def _page(club: Path, folder: Path, *args: str) -> str:
    target = folder / "night.html"
    result = runner.invoke(app, ["replay", *args, "--db", str(club), "-o", str(target)])
    assert result.exit_code == 0, result.output
    return target.read_text(encoding="utf-8")


def test_a_reviewed_session_page_marks_mistakes_and_stays_small(club: Path,
                                                                tmp_path: Path) -> None:
    with Store(club, read_only=True) as store:
        session = _session(store, "h.variant = 'pineapple'")
        ids = store.query("SELECT hand_id FROM hands WHERE session_id = ? ORDER BY played_at",
                          [session])["hand_id"].to_list()
        mistakes = store.query("SELECT count(*) AS n FROM decisions WHERE mistake IS NOT NULL"
                               )["n"][0]
    page = _page(club, tmp_path, "--session", session)
    assert page.count('<section class="hand"') == len(ids)
    assert all(f"{hand}</h2>" in page for hand in ids)
    assert page.count('<tr class="mistake">') == mistakes > 0
    assert "<th>Best</th><th>EV loss</th>" in page
    assert len(page.encode()) <= 60_000 * len(ids)
    assert "http" not in page.replace("http-equiv", "")  # nothing fetched


def test_fantasyland_and_timed_out_seats_on_the_page(club: Path, tmp_path: Path) -> None:
    with Store(club, read_only=True) as store:
        fantasyland = _session(store, "s.fantasyland")
        timed_out = _session(store, "s.timed_out")
    page = _page(club, tmp_path, "--session", fantasyland)
    assert "(fantasyland)</h3>" in page or "(fantasyland):" in page
    assert "FL</td>" in page
    page = _page(club, tmp_path, "--session", timed_out)
    assert "Timed out: the cards were placed for the player" in page


def test_a_chinese_13_session_shows_the_final_sets_and_no_decisions(club: Path,
                                                                    tmp_path: Path) -> None:
    with Store(club, read_only=True) as store:
        session = _session(store, "h.variant = 'chinese-13'")
        hands = store.query("SELECT count(*) AS n FROM hands WHERE session_id = ?",
                            [session])["n"][0]
    page = _page(club, tmp_path, "--session", session)
    assert page.count("The final board:") == 2 * hands
    assert 'class="street"' not in page
    assert "EV loss" in page  # the list's column, empty
    assert '<td data-v="">-</td>' in page


def test_following_one_player_shows_their_hands_and_their_seat_first(club: Path,
                                                                     tmp_path: Path) -> None:
    with Store(club, read_only=True) as store:
        ids = store.query("SELECT hand_id FROM hands WHERE variant = 'pineapple' "
                          "ORDER BY hand_id LIMIT 3")["hand_id"].to_list()
    page = _page(club, tmp_path, *ids, "--player", "cy")
    sections = page.split('<section class="hand"')[1:]
    assert len(sections) == 3
    assert all(re.search(r"<h3>Seat \d: cy", s.split("</h3>")[0] + "</h3>") for s in sections)
    assert page.count('<table class="street">') == 3  # cy's streets alone


def test_replay_asks_for_hands_or_a_session(club: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "x.html")
    for args, words in ((["replay", "-o", out], "give a hand's id"),
                        (["replay", "a", "--session", "b", "-o", out], "not both"),
                        (["replay", "--session", "nope", "-o", out], "no session named nope")):
        result = runner.invoke(app, [*args, "--db", str(club)])
        assert result.exit_code == 2, result.output
        assert words in result.output
    assert not (tmp_path / "x.html").exists()


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_the_session_page_in_a_browser_sorts_filters_and_steps(club: Path, tmp_path: Path,
                                                              width: int) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium: not installed, and apt-get could not install it here")
    with Store(club, read_only=True) as store:
        session = _session(store, "h.variant = 'pineapple'")
        ids = store.query("SELECT hand_id FROM hands WHERE session_id = ? "
                          "ORDER BY played_at, hand_key", [session])["hand_id"].to_list()
    _page(club, tmp_path, "--session", session)
    path = tmp_path / "night.html"
    problems: list[str] = []
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("request", lambda r: problems.append(f"request {r.url}")
                if not r.url.startswith(("file:", "data:")) else None)
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        # Opened with no hand named, the page stays at its top: the list of hands first.
        assert page.evaluate("window.scrollY") == 0
        shown = "Array.from(document.querySelectorAll('section.hand')).filter(s => !s.hidden)" \
            ".map(s => s.querySelector('h2').textContent)"
        assert page.evaluate("document.querySelectorAll('section.hand').length") == len(ids)
        assert page.evaluate(f"{shown}.length") == 1
        assert ids[0] in page.evaluate(shown)[0]
        page.keyboard.press("ArrowRight")
        assert ids[1] in page.evaluate(shown)[0]
        page.click("#next")
        assert ids[2] in page.evaluate(shown)[0]
        page.click("#prev")
        page.keyboard.press("ArrowLeft")
        assert ids[0] in page.evaluate(shown)[0]
        # Sorting: a player's points, biggest first; then back in play order.
        column = "Array.from(document.querySelectorAll('.hands-list tbody tr'))" \
            ".map(r => r.cells[2].dataset.v)"
        page.click(".hands-list th:nth-child(3) button")
        points = [int(v) for v in page.evaluate(column)]
        assert points == sorted(points, reverse=True)
        page.click(".hands-list th:nth-child(1) button")
        order = "Array.from(document.querySelectorAll('.hands-list tbody tr'))" \
            ".map(r => +r.dataset.i)"
        assert page.evaluate(order) == list(range(len(ids)))
        # A row opens its hand; the filters hide the rows that do not match.
        page.click(f".hands-list tbody tr[data-i='{len(ids) - 1}']")
        assert ids[-1] in page.evaluate(shown)[0]
        page.fill("#find", ids[1].lower())
        visible = "Array.from(document.querySelectorAll('.hands-list tbody tr'))" \
            ".filter(r => !r.hidden).length"
        assert page.evaluate(visible) == 1
        page.fill("#find", "")
        # Nothing wider than the screen, no box scrolling sideways, on each hand.
        for _ in ids:
            wide = page.evaluate(
                "[document.documentElement.scrollWidth, Math.max(...Array.from("
                "document.querySelectorAll('body *')).filter(e => e.offsetParent)"
                ".map(e => e.scrollWidth - e.clientWidth))]")
            assert wide[0] <= width, wide
            assert wide[1] <= 1, wide
            page.keyboard.press("ArrowRight")
        page.screenshot(path=str(tmp_path / "night.png"), full_page=True)
        browser.close()
    assert problems == []


def test_per_player_keeps_each_players_first_rows_in_the_order_asked(club: Path) -> None:
    with Store(club, read_only=True) as store:
        got = analysis.hands(store, sort="points", per_player=2)
        every = analysis.hands(store, sort="points")
    want = every.group_by("variant", "player", maintain_order=True).head(2)
    assert got.height == want.height == 2 * every.select("variant", "player").n_unique()
    assert sorted(got["hand_id"] + got["player"]) == sorted(want["hand_id"] + want["player"])
    assert got["points"].is_sorted()


def test_the_report_replays_each_players_costliest_hands(club: Path, tmp_path: Path) -> None:
    from ofcstats.report import COSTLIEST, collect, write_report  # noqa: PLC0415

    with Store(club, read_only=True) as store:
        data = collect(store)
        worst = analysis.hands(store, sort="points", max_points=-1, per_player=COSTLIEST)
    page = write_report(data, tmp_path / "report.html").html.read_text(encoding="utf-8")
    for row in worst.iter_rows(named=True):
        summary = f"<summary>{row['hand_id']}: {row['points']:+d} points"
        assert summary in page
        replayed = page.split(summary, 1)[1].split("</details>", 1)[0]
        assert f"{row['player']}: {row['points']:+d} points" in replayed
    assert page.count("<details>") == worst.height


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_a_hands_page_puts_the_board_played_above_the_best_on_a_phone(
        club: Path, tmp_path: Path, width: int) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium: not installed, and apt-get could not install it here")
    with Store(club, read_only=True) as store:
        hand = store.query("SELECT min(hand_id) AS h FROM decisions_named")["h"][0]
    target = tmp_path / "hand.html"
    result = runner.invoke(app, ["replay", hand, "--db", str(club), "-o", str(target),
                                 "--rollouts", "4", "--screen", "2"])
    assert result.exit_code == 0, result.output
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(target.as_uri())
        boxes = page.evaluate("""() => Array.from(document.querySelectorAll(
            'table.street tr:not(.head)')).filter(r => r.cells.length === 5).map(r => {
                const played = r.cells[2].getBoundingClientRect();
                const best = r.cells[3].getBoundingClientRect();
                return [played.bottom, best.top, played.top, best.right];
            })""")
        wide = page.evaluate(
            "[document.documentElement.scrollWidth, Math.max(...Array.from("
            "document.querySelectorAll('body *')).map(e => e.scrollWidth - e.clientWidth))]")
        browser.close()
    assert boxes
    if width == 390:  # stacked: the best board under the one played, all on the screen
        assert all(bottom <= top + 1 and right <= width for bottom, top, _, right in boxes)
    else:  # side by side
        assert all(top == best_top for _, best_top, top, _ in boxes)
    assert wide[0] <= width
    assert wide[1] <= 1


@pytest.mark.slow
def test_the_reports_replays_fit_a_phone_without_a_sideways_box(club: Path,
                                                                tmp_path: Path) -> None:
    from ofcstats.report import collect, write_report  # noqa: PLC0415

    playwright = pytest.importorskip("playwright.sync_api")
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium: not installed, and apt-get could not install it here")
    with Store(club, read_only=True) as store:
        path = write_report(collect(store), tmp_path / "report.html").html
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 390, "height": 900})
        page.goto(path.as_uri())
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        boxes = page.evaluate("""() => Array.from(document.querySelectorAll(
            '.replay, .costliest')).map(b => [b.className, b.scrollWidth - b.clientWidth,
                                              b.getBoundingClientRect().right])""")
        browser.close()
    assert "costliest" in {name for name, _, _ in boxes}
    assert all(overflow <= 1 and right <= 390 for _, overflow, right in boxes), boxes
