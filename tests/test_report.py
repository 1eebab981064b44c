"""The HTML report and its charts: self-contained, escaped, complete; and in a browser."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from ofcstats.analysis import Filters
from ofcstats.cli import app
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.report import ReportData, charts, collect, ranking_text, write_report
from ofcstats.rules import load_ruleset, load_rulesets
from ofcstats.simulate import Player, Simulation, simulate
from ofcstats.store import Store
from ofcstats.variants import Variant

NASTY = ['<script>alert("x")</script>', "O'Brien \"the hammer\" 🂡", "x'); DROP TABLE hands;--"]


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=[Player(NASTY[0], "aggressive"), Player(NASTY[1], "safe"),
                              Player(NASTY[2], "balanced")], hands=240, seed=3)
    log = folder / "nasty.jsonl"
    log.write_text("".join(json.dumps(h) + "\n" for h in simulate(sim)), encoding="utf-8")
    db = folder / "club.duckdb"
    ingest([log], db)
    with Store(db) as store:
        # russian and one-six are 13-card rulesets: on these Pineapple hands, what-ifs.
        rescore(store, load_rulesets(["american", "pokerstars", "russian", "one-six"]),
                what_if=["russian", "one-six"])
    return db


@pytest.fixture(scope="module")
def written(database: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    out = tmp_path_factory.mktemp("out")
    with Store(database) as store:
        data = collect(store)
    files = write_report(data, out / "report.html", out / "charts.pdf")
    return files.html, out / "charts.pdf", files.charts


def test_the_report_is_one_self_contained_file(written: tuple[Path, Path, int]) -> None:
    page = written[0].read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["'](?!data:|#)""", page)  # nothing fetched
    assert "http://" not in page
    assert "https://" not in page
    assert page.count('src="data:image/png;base64,') == written[2]


def test_every_name_and_value_is_escaped(written: tuple[Path, Path, int]) -> None:
    page = written[0].read_text(encoding="utf-8")
    assert "<script" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "O&#x27;Brien &quot;the hammer&quot; 🂡" in page
    assert "x&#x27;); DROP TABLE hands;--" in page


def test_the_report_has_every_section(written: tuple[Path, Path, int]) -> None:
    page = written[0].read_text(encoding="utf-8")
    assert '<section id="pineapple"><h2>pineapple</h2>' in page
    for heading in ("Scoring systems compared", "Player styles"):
        assert f"<h3>{heading}</h3>" in page
    for anchor, heading in (("checks", "Checks against the logs"),
                            ("methodology", "Methodology")):
        assert f'<h2 id="{anchor}">{heading}</h2>' in page
    assert page.count("<h3>Player: ") == 3
    assert "russian (what-if)" in page
    assert re.search(r"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", page)
    assert "Hands for ±1" in page  # the methodology comes from the statistics' definitions
    assert "Every logged <code>reported_points</code> agrees" in page


def test_the_pdf_is_one_a4_document_with_a_title_page_and_a_page_per_chart(
        written: tuple[Path, Path, int]) -> None:
    pdf = written[1].read_bytes()
    assert pdf.startswith(b"%PDF")
    assert len(re.findall(rb"/Type /Page\b", pdf)) == written[2] + 1
    # Every page A4 (595 x 842 points).
    boxes = set(re.findall(rb"/MediaBox \[ *([\d. ]+)\]", pdf))
    assert {tuple(round(float(v)) for v in box.split()) for box in boxes} == \
        {(0, 0, 595, 842)}


def test_filters_narrow_the_report(database: Path) -> None:
    with Store(database) as store:
        data = collect(store, Filters(players=[NASTY[1]]), ruleset="pokerstars")
    assert set(data.players["player"]) == set(data.running["player"]) == {NASTY[1]}
    assert data.rulesets_shown == {"pineapple": "pokerstars"}
    assert data.filters == {"players": NASTY[1]}


def test_report_command_writes_the_page_and_names_it(database: Path, tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    result = CliRunner().invoke(app, ["report", "--db", str(database), "-o", str(target),
                                      "--ruleset", "russian"])
    assert result.exit_code == 0, result.output
    assert str(target.resolve()) in result.stdout
    assert "Summary ruleset: <strong>russian</strong>" in target.read_text(encoding="utf-8")
    missing = CliRunner().invoke(app, ["report", "--db", str(database), "-r", "western"])
    assert missing.exit_code == 2
    assert "not scored under western" in missing.stderr


def _chromium() -> str | None:
    """The system Chromium, installed from Debian's packages when absent and allowed."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return None
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        subprocess.run(command, check=False, timeout=600, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return shutil.which("chromium")


@pytest.mark.slow
def test_the_report_renders_in_a_real_browser(written: tuple[Path, Path, int],
                                              tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium: not installed, and apt-get could not install it here")
    problems: list[str] = []
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("request", lambda r: problems.append(f"request {r.url}")
                if not r.url.startswith(("file:", "data:")) else None)
        page.goto(written[0].as_uri())
        sizes = page.evaluate(
            "Array.from(document.images).map(i => [i.naturalWidth, i.naturalHeight])")
        overflow = page.evaluate(
            "[document.documentElement.scrollWidth, ...Array.from(document.querySelectorAll("
            "'table')).map(t => t.scrollWidth - t.clientWidth)]")
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert problems == []
    assert len(sizes) == written[2]
    assert all(width > 0 and height > 0 for width, height in sizes)
    # Nothing wider than the window at 1280 px: neither the page nor a table.
    assert overflow[0] <= 1280
    assert max(overflow[1:]) <= 0
    assert shot.stat().st_size > 10_000


def test_a_ruleset_without_royalties_gets_a_note_not_an_empty_chart() -> None:
    players = pl.DataFrame({"player": ["ann", "bob"], "ruleset": "russian",
                            "royalties_top": [0.0, 0.0], "royalties_middle": [0.0, 0.0],
                            "royalties_bottom": [0.0, 0.0]})
    figure = charts.royalties_by_row(players, "russian")
    assert not figure.axes[0].axison
    assert "no royalties were collected under russian" in figure.axes[0].texts[0].get_text()


def test_the_report_draws_the_intervals_and_says_whether_the_hands_can_rank(
        written: tuple[Path, Path, int], database: Path) -> None:
    page = written[0].read_text(encoding="utf-8")
    assert "<h3>Can these hands rank them?</h3>" in page
    assert "skill signal of each ruleset with its 95% interval" in page
    with Store(database, read_only=True) as store:
        data = collect(store)
    said = ranking_text(data, "pineapple")
    assert html.escape(said) in page
    apart = data.tell_apart.row(0, named=True)
    assert ("cannot be told apart" in said) == (not apart["told_apart"])
    groups = data.of(data.rulesets, "pineapple").get_column("skill_group").drop_nulls()
    assert ("cannot rank" in said) == (int((groups == 1).sum()) > 1)


def test_the_interval_chart_shades_one_band_per_skill_group() -> None:
    compared = pl.DataFrame({
        "ruleset": ["a", "b", "c", "d"], "skill_rank": [1, 2, 3, 4],
        "skill_signal": [0.30, 0.29, 0.20, 0.19], "skill_signal_ci_low": [0.25, 0.24, 0.15, 0.14],
        "skill_signal_ci_high": [0.35, 0.34, 0.25, 0.24], "skill_group": [1, 1, 2, 2]})
    figure = charts.skill_intervals(compared)
    axes = figure.axes[0]
    bands = [p for p in axes.patches if type(p).__name__ == "Rectangle"]
    assert len(bands) == 2
    at = {t.get_text(): t.get_position()[1] for t in axes.get_yticklabels()}
    assert sorted(at, key=at.__getitem__, reverse=True) == ["a", "b", "c", "d"]  # best on top
    assert {t.get_text().strip() for t in axes.texts} == {"group 1", "group 2"}
    nothing = charts.skill_intervals(compared.with_columns(skill_group=None))
    assert not nothing.axes[0].axison


def test_one_ruleset_has_nothing_to_rank_and_the_page_says_so() -> None:
    data = ReportData(rulesets_shown={"pineapple": "a"}, players=pl.DataFrame(),
                      rulesets=pl.DataFrame({"variant": ["pineapple"], "ruleset": ["a"],
                                             "skill_rank": [1], "skill_group": [1]}),
                      differences=pl.DataFrame())
    assert ranking_text(data, "pineapple").startswith("Fewer than two rulesets")
