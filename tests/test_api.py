"""The Python API: each method holds the values its command prints as JSON, the same
bytes; its errors are the command's, one line; ``import ofcstats`` loads nothing heavy."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

import ofcstats
from ofcstats.api import SAMPLE_LOGS, Club, Page
from ofcstats.cli import app
from ofcstats.cli.options import TableFormat
from ofcstats.cli.output import frame_text
from ofcstats.errors import OfcstatsError, StoreError, UsageError

runner = CliRunner()
ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def club(tmp_path_factory: pytest.TempPathFactory) -> Club:
    """The sample data opened read-only (the same database the commands read)."""
    return ofcstats.sample()


def command(*args: str) -> tuple[int, str, str]:
    """A command's exit code, stdout and stderr."""
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def json_out(*args: str) -> str:
    code, out, err = command(*args, "--format", "json")
    assert code == 0, err
    return out


def frame_json(frame: pl.DataFrame) -> str:
    return frame_text(frame, TableFormat.json)


@pytest.mark.parametrize(("args", "keywords"), [
    ((), {}),
    (("--variant", "pineapple"), {"variant": "pineapple"}),
    (("--player", "alice", "--ruleset", "american"), {"player": "alice", "ruleset": "american"}),
])
def test_compare_is_the_commands_json(club: Club, args: tuple[str, ...],
                                      keywords: dict[str, Any]) -> None:
    assert frame_json(club.compare(**keywords)) == json_out(
        "compare", "--db", str(club.path), *args)


@pytest.mark.parametrize(("args", "keywords"), [
    ((), {}),
    (("--ruleset", "pokerstars"), {"ruleset": "pokerstars"}),
    (("--variant", "ofc-turbo", "--since", "2020-01-01"),
     {"variant": "ofc-turbo", "since": "2020-01-01"}),
])
def test_players_is_the_commands_json(club: Club, args: tuple[str, ...],
                                      keywords: dict[str, Any]) -> None:
    assert frame_json(club.players(**keywords)) == json_out(
        "players", "--db", str(club.path), *args)


def test_player_is_the_commands_json(club: Club) -> None:
    assert frame_json(club.player("carol")) == json_out("player", "carol", "--db",
                                                        str(club.path))
    both = ["american", "pineapple-progressive"]
    assert frame_json(club.player("ivan", ruleset=both)) == json_out(
        "player", "ivan", "--db", str(club.path), "-r", ",".join(both))


@pytest.mark.parametrize(("args", "keywords"), [
    ((), {}),
    (("--sort", "points", "--per-player", "3"), {"sort": "points", "per_player": 3}),
    (("--player", "alice,bob", "--variant", "pineapple", "--fouled", "--limit", "7"),
     {"player": ["alice", "bob"], "variant": "pineapple", "fouled": True, "limit": 7}),
    (("--ruleset", "pokerstars", "--fantasyland", "--min-points", "-20", "--max-points",
      "5", "--sort", "points"),
     {"ruleset": "pokerstars", "fantasyland": True, "min_points": -20, "max_points": 5,
      "sort": "points"}),
    (("--session", "pineapple-american-00001", "--since", "2020-01-01", "--sort",
      "ev_loss"),
     {"session": "pineapple-american-00001", "since": "2020-01-01", "sort": "ev_loss"}),
])
def test_hands_is_the_commands_json(club: Club, args: tuple[str, ...],
                                    keywords: dict[str, Any]) -> None:
    found = club.hands(**keywords)
    assert not found.is_empty()
    assert frame_json(found) == json_out("hands", "--db", str(club.path), *args)


def test_hands_reviewed_with_mistakes_is_the_commands_json(reviewed: Path) -> None:
    with ofcstats.open(reviewed) as club:
        found = club.hands(mistakes=True, sort="ev_loss")
    assert not found.is_empty()
    assert found.get_column("mistakes").min() >= 1  # type: ignore[operator]
    assert frame_json(found) == json_out("hands", "--db", str(reviewed), "--mistakes",
                                         "--sort", "ev_loss")


def test_hands_false_keeps_the_seats_that_did_not(club: Club) -> None:
    every = club.hands(variant="ofc-classic")
    fouled = club.hands(variant="ofc-classic", fouled=True)
    clean = club.hands(variant="ofc-classic", fouled=False)
    assert fouled.height > 0
    assert clean.height > 0
    assert fouled.height + clean.height == every.height
    assert not clean.get_column("fouled").any()


def test_sql_and_info_are_the_commands_json(club: Club) -> None:
    query = "SELECT variant, count(*) AS hands FROM hands GROUP BY 1 ORDER BY 1"
    # (the command in a process of its own: it closes the database to other files)
    command_json = subprocess.run(
        [sys.executable, "-m", "ofcstats", "sql", query, "--db", str(club.path), "-f", "json"],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert frame_json(club.sql(query)) == command_json.stdout
    assert json.dumps(club.info(), indent=2) + "\n" == json_out("db", "info", "--db",
                                                                str(club.path))


def test_a_query_leaves_the_database_open_to_the_commands(club: Club) -> None:
    club.sql("SELECT 1")
    assert json_out("players", "--db", str(club.path), "--variant", "criss-cross")


@pytest.mark.parametrize(("call", "args"), [
    (lambda c: c.players(player="alce"), ("players", "--player", "alce")),
    (lambda c: c.compare(variant="pinapple"), ("compare", "--variant", "pinapple")),
    (lambda c: c.player("carol", ruleset="nope"), ("player", "carol", "-r", "nope")),
    (lambda c: c.players(since="2027-01-02", until="2026-01-01"),
     ("players", "--since", "2027-01-02", "--until", "2026-01-01")),
    (lambda c: c.compare(since="2100-01-01"), ("compare", "--since", "2100-01-01")),
    (lambda c: c.hands(session="nope"), ("hands", "--session", "nope")),
    (lambda c: c.hands(ruleset="russian", variant="pineapple"),
     ("hands", "-r", "russian", "--variant", "pineapple")),
    (lambda c: c.replay(), ("replay",)),
    (lambda c: c.replay("pineapple-american-00001-01", session="pineapple-american-00001"),
     ("replay", "pineapple-american-00001-01", "--session", "pineapple-american-00001")),
    (lambda c: c.replay("pineapple-american-00001-01", player="alice"),
     ("replay", "pineapple-american-00001-01", "--player", "alice")),
    (lambda c: c.replay("pineapple-american-00001-01", "no-such-hand"),
     ("replay", "pineapple-american-00001-01", "no-such-hand")),
    (lambda c: c.replay(session="no-such-session"), ("replay", "--session", "no-such-session")),
    (lambda c: c.replay(session="pineapple-american-00001", player="ivan"),
     ("replay", "--session", "pineapple-american-00001", "--player", "ivan")),
    # (last: the command closes this process's database to other files)
    (lambda c: c.sql("SELECT nothing FROM nowhere"), ("sql", "SELECT nothing FROM nowhere")),
])
def test_an_error_is_the_commands_one_line(club: Club, call: Any,
                                           args: tuple[str, ...]) -> None:
    with pytest.raises(OfcstatsError) as raised:
        call(club)
    code, _, err = command(*args, "--db", str(club.path))
    assert err == f"ofcstats: {raised.value}\n"
    assert code == (2 if isinstance(raised.value, UsageError) else 1)


def test_a_missing_database_is_the_commands_error(tmp_path: Path) -> None:
    missing = tmp_path / "none.duckdb"
    with pytest.raises(UsageError) as raised:
        ofcstats.open(missing)
    assert command("players", "--db", str(missing))[2] == f"ofcstats: {raised.value}\n"
    assert not missing.exists()


def test_a_review_past_the_commands_bounds_is_refused_before_any_work(tmp_path: Path) -> None:
    """The methods hold to the bounds the command's options do: no run of 10**8 rollouts
    that would fill the memory (the command's --rollouts stops there too)."""
    with ofcstats.sample(write=True) as club:
        with pytest.raises(UsageError, match=r"^rollouts 100000000: must be from 1 to "
                                             r"10,000$"):
            club.review(run=True, rollouts=10**8)
        with pytest.raises(UsageError, match=r"^screen -1: must be from 0 to 1,000$"):
            club.review(run=True, screen=-1)
        with pytest.raises(StoreError, match=r"^no decisions stored"):
            club.review()  # (nothing was reviewed)


def test_a_read_only_handle_refuses_to_write_and_says_how(club: Club) -> None:
    with pytest.raises(UsageError, match=r"opened read-only; to load hands, open it with "
                       r"ofcstats.open\(path, write=True\)"):
        club.ingest(SAMPLE_LOGS / "criss-cross.jsonl")
    with pytest.raises(UsageError, match="opened read-only"):
        club.rescore("american")
    with pytest.raises(UsageError, match="opened read-only"):
        club.review(run=True)


def test_a_closed_handle_says_so(tmp_path: Path) -> None:
    other = ofcstats.sample()
    other.close()
    with pytest.raises(StoreError, match="the database is closed"):
        other.players()


def test_ingest_and_rescore_score_what_the_commands_score(tmp_path: Path) -> None:
    logs = [SAMPLE_LOGS / "criss-cross.jsonl", SAMPLE_LOGS / "pineapple-progressive.jsonl"]
    progressive = str(ROOT / "data" / "rulesets" / "pineapple-progressive.toml")
    with ofcstats.open(tmp_path / "api.duckdb", write=True) as club:
        loaded = club.ingest(logs, rulesets=progressive)
        assert loaded.loaded.hands == 850
        assert "pineapple-progressive" in loaded.scored.rulesets  # type: ignore[union-attr]
        assert club.rescore("american").hands == 0  # (scored already, on loading)
        mine = club.players()
        assert loaded.unchecked.is_empty()
    code, _, err = command("ingest", *map(str, logs), "-r", progressive,
                           "--db", str(tmp_path / "cli.duckdb"))
    assert code == 0, err
    code, _, err = command("rescore", "-r", progressive, "--db", str(tmp_path / "cli.duckdb"))
    assert code == 0, err
    assert frame_json(mine) == json_out("players", "--db", str(tmp_path / "cli.duckdb"))


def test_ingest_names_the_hands_no_rescore_checks_as_the_command_does(tmp_path: Path) -> None:
    logs = [str(SAMPLE_LOGS / "pineapple-progressive.jsonl")]
    with ofcstats.open(tmp_path / "api.duckdb", write=True) as club:
        loaded = club.ingest(logs)
    code, out, err = command("ingest", *logs, "--db", str(tmp_path / "cli.duckdb"),
                             "--format", "json")
    assert code == 1, err
    assert loaded.unchecked.to_dicts() == json.loads(out)["unchecked"]
    assert loaded.unchecked.select("ruleset", "hands").rows() == [("pineapple-progressive", 700)]


@pytest.fixture(scope="module")
def reviewed() -> Path:
    """A copy of the sample with one session reviewed (few rollouts: fast), closed."""
    with ofcstats.sample(write=True) as club:
        club.review(run=True, session="pineapple-american-00001", rollouts=16)
    return club.path


@pytest.mark.parametrize("by", ["player", "situation"])
def test_review_is_the_commands_json(reviewed: Path, by: str) -> None:
    with ofcstats.open(reviewed) as club:
        found = club.review(session="pineapple-american-00001", rollouts=16)
    assert json.dumps(found.to_dict(by), indent=2, default=str) + "\n" == json_out(
        "review", "--db", str(reviewed), "--session", "pineapple-american-00001",
        "--rollouts", "16", "--by", by)


def test_review_of_nothing_reviewed_says_how_to_review(reviewed: Path) -> None:
    with ofcstats.open(reviewed) as club, \
            pytest.raises(StoreError, match=r"review them first \(ofcstats review; in Python, "
                          r"review\(run=True\) on a database opened with write=True\)"):
        club.review(session="pineapple-american-00002", rollouts=16)


def shown_page(page: Page) -> str:
    """The page a notebook shows inline: in a frame of its own, whole."""
    shown = page._repr_html_()
    found = re.fullmatch(r'<iframe srcdoc="([^"]*)" [^>]*></iframe>', shown)
    assert found, shown[:200]
    return html.unescape(found.group(1))


def test_a_page_shown_inline_keeps_its_style_and_keys_to_itself(club: Club) -> None:
    page = club.replay(session="pineapple-american-00001")
    assert "document.addEventListener('keydown'" in page.html  # (the page's arrow keys)
    shown = page._repr_html_()
    assert shown.startswith("<iframe ")
    assert "<script" not in shown
    assert "<style" not in shown


def test_replay_shows_itself_and_saves_the_commands_page(reviewed: Path,
                                                         tmp_path: Path) -> None:
    hand = "pineapple-american-00001-01"
    with ofcstats.open(reviewed) as club:
        page = club.replay(hand, rollouts=16)
    assert isinstance(page, Page)
    assert shown_page(page) == page.html
    saved = page.save(tmp_path)
    assert saved == tmp_path / f"{hand}.html"
    code, _, err = command("replay", hand, "--db", str(reviewed), "--rollouts", "16", "-o",
                           str(tmp_path / "cli.html"))
    assert code == 0, err
    assert saved.read_bytes() == (tmp_path / "cli.html").read_bytes()


@pytest.mark.parametrize(("args", "keywords", "name"), [
    (("--session", "pineapple-american-00001"), {"session": "pineapple-american-00001"},
     "pineapple-american-00001.html"),
    (("--session", "pineapple-american-00001", "--player", "alice"),
     {"session": "pineapple-american-00001", "player": "alice"},
     "pineapple-american-00001.html"),
    (("pineapple-american-00001-03", "pineapple-american-00002-01",
      "pineapple-american-00001-02"),
     {"hand_id": ["pineapple-american-00001-03", "pineapple-american-00002-01",
                  "pineapple-american-00001-02"]}, "hands.html"),
])
def test_replay_of_several_hands_saves_the_commands_page(
        reviewed: Path, tmp_path: Path, args: tuple[str, ...], keywords: dict[str, Any],
        name: str) -> None:
    with ofcstats.open(reviewed) as club:
        page = club.replay(**keywords)
    assert shown_page(page) == page.html
    saved = page.save(tmp_path)
    assert saved == tmp_path / name
    code, _, err = command("replay", *args, "--db", str(reviewed), "-o",
                           str(tmp_path / "cli.html"))
    assert code == 0, err
    assert saved.read_bytes() == (tmp_path / "cli.html").read_bytes()


def test_replay_takes_hand_ids_as_arguments_or_a_column(club: Club) -> None:
    ids = club.hands(session="pineapple-american-00001", player="alice", sort="points",
                     limit=2).get_column("hand_id")
    assert club.replay(*ids).html == club.replay(ids).html == club.replay(ids.to_list()).html
    assert all(f'{hand}' in club.replay(ids).html for hand in ids)


def test_charts_are_figures_of_one_variant(club: Club) -> None:
    from matplotlib.figure import Figure  # noqa: PLC0415

    figures = [club.chart.cumulative("alice"), club.chart.style_map(variant="ofc-classic"),
               club.chart.comparison(variant="pineapple"), club.chart.rulesets("carol"),
               club.chart.royalties(player="ivan")]
    assert all(isinstance(f, Figure) for f in figures)
    assert figures[0].axes[0].get_title().startswith("pineapple: ")
    assert figures[1].axes[0].get_title().startswith("ofc-classic: ")
    assert figures[4].axes[0].get_title().startswith("pineapple: ")  # (ivan's variant)
    # alice's curve alone (labelled with her total)
    players = {str(line.get_label()).split(" ")[0]
               for line in figures[0].axes[0].get_lines()
               if not str(line.get_label()).startswith("_")}  # (unlabelled lines)
    assert players == {"alice"}


def test_a_chart_of_a_player_not_stored_is_the_usage_error(club: Club) -> None:
    with pytest.raises(UsageError, match="no player named alce"):
        club.chart.cumulative("alce")


def test_importing_ofcstats_loads_no_heavy_module() -> None:
    found = subprocess.run(
        [sys.executable, "-c", "import sys, ofcstats; print(sorted(m for m in "
         "('polars', 'duckdb', 'matplotlib', 'numpy', 'numba', 'typer') if m in sys.modules))"],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert found.stdout.strip() == "[]"


def test_the_api_is_named_and_documented() -> None:
    from ofcstats import api  # noqa: PLC0415

    assert set(ofcstats.__all__) <= set(dir(ofcstats))
    for name in ofcstats.__all__:
        assert getattr(ofcstats, name).__doc__
    public = [getattr(api, name) for name in api.__all__]
    public += [member for owner in (api.Club, api.Charts, api.Page, api.Loaded)
               for name, member in vars(owner).items() if not name.startswith("_")]
    for member in public:
        doc = getattr(member, "__doc__", None) or getattr(getattr(member, "fget", None),
                                                          "__doc__", None)
        assert doc, f"{member} has no docstring"
        assert ">>>" in doc, f"{member} has no example"
    for name in ("compare", "players", "player", "review", "sql", "info", "ingest",
                 "rescore", "replay", "chart"):
        assert f"club.{name}" in ofcstats.__doc__  # the map names every method


def test_a_page_shown_inline_works_in_its_frame_and_leaves_the_notebook_alone(
        club: Club, tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    from test_report import _chromium  # noqa: PLC0415

    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium: not installed, and apt-get could not install it here")
    page = club.replay(session="pineapple-american-00001")
    hands = page.html.count('<section class="hand"')
    # A notebook as a browser shows it: its own style and keys, the output inline.
    notebook = tmp_path / "notebook.html"
    notebook.write_text("<!DOCTYPE html><html><head><style>body { margin: 3px; }</style>"
                        "</head><body><textarea id='cell'></textarea>"
                        f"<div class='output'>{page._repr_html_()}</div></body></html>",
                        encoding="utf-8")
    problems: list[str] = []
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"])
        tab = browser.new_page(viewport={"width": 1000, "height": 900})
        tab.on("pageerror", lambda e: problems.append(str(e)))
        tab.on("request", lambda r: problems.append(f"request {r.url}")
               if not r.url.startswith(("file:", "data:", "about:")) else None)
        tab.goto(notebook.as_uri())
        tab.wait_for_load_state("load")
        frame = tab.frame_locator("iframe")
        shown = "Array.from(document.querySelectorAll('section.hand')).filter(s => !s.hidden)" \
            ".map(s => s.id)"
        inner = tab.frames[1]
        assert inner.evaluate("document.querySelectorAll('section.hand').length") == hands
        first = inner.evaluate(shown)
        tab.focus("#cell")  # typing in a cell: the arrow keys are the notebook's
        tab.keyboard.press("ArrowRight")
        assert inner.evaluate(shown) == first
        frame.locator("#next").click()  # in the frame, the page steps
        assert inner.evaluate(shown) != first
        assert tab.evaluate("getComputedStyle(document.body).margin") == "3px"
        height = tab.evaluate("document.querySelector('iframe').getBoundingClientRect().height")
        assert 600 <= height <= 802  # (fit to the page, up to 800 px and its border)
        browser.close()
    assert problems == []
