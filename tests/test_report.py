"""The HTML report and its charts: self-contained, escaped, complete; and in a browser."""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from typer.testing import CliRunner

from ofcstats.analysis import WHAT_IF, Filters
from ofcstats.cli import app
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.report import (
    A4,
    ReportData,
    _embedded,
    _image,
    _pages,
    charts,
    collect,
    ranking_text,
    titled,
    write_report,
)
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
    drawn = page.count('src="data:image/svg+xml;base64,')
    assert drawn + page.count('<p class="nochart">') == written[2]


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
    assert ", 1 variant. Filters: none.</p>" in page  # a plural as a person writes it
    assert not re.search(r"\b1 (hands|sessions|variants)\b|\(s\)", page)
    assert "Hands for ±1" in page  # the methodology comes from the statistics' definitions
    assert "Every logged <code>reported_points</code> agrees" in page


def test_the_pdf_is_a4_with_a_title_page_and_two_or_more_charts_a_page(
        written: tuple[Path, Path, int]) -> None:
    pdf = written[1].read_bytes()
    assert pdf.startswith(b"%PDF")
    pages = len(re.findall(rb"/Type /Page\b", pdf))
    assert 2 <= pages <= 1 + -(-written[2] // 2)  # the title page, then two charts or more
    # Every page A4 (595 x 842 points), upright or on its side.
    boxes = set(re.findall(rb"/MediaBox \[ *([\d. ]+)\]", pdf))
    assert {tuple(round(float(v)) for v in box.split()) for box in boxes} <= \
        {(0, 0, 595, 842), (0, 0, 842, 595)}


def test_a_wide_chart_goes_on_a_landscape_page_and_tall_ones_share_upright_pages() -> None:
    wide, tall = Figure(figsize=(15, 4.5)), Figure(figsize=(7, 4))
    for figure in (wide, tall):
        figure.subplots().plot([0, 1], [0, 1])
    pages = _pages([("v:a", tall), ("v:b", tall), ("v:c", wide), ("v:d", tall)])
    assert [(size, [p.key for p in placed]) for size, placed in pages] == [
        (A4, ["v:a", "v:b"]), ((A4[1], A4[0]), ["v:c"]), (A4, ["v:d"])]


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


def _in_browser(page_file: Path, width: int, shot: Path) -> dict[str, object]:
    """The page opened in headless Chromium ``width`` px wide: its problems (console
    errors, page errors, requests off the file), the page's width, each image's natural
    size, the inline SVGs and a screenshot of the whole page."""
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium: not installed, and apt-get could not install it here")
    problems: list[str] = []
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("request", lambda r: problems.append(f"request {r.url}")
                if not r.url.startswith(("file:", "data:")) else None)
        page.goto(page_file.as_uri())
        seen = page.evaluate(
            "({width: document.documentElement.scrollWidth, inner: window.innerWidth,"
            " images: Array.from(document.images).map(i => [i.naturalWidth, i.naturalHeight,"
            "   i.complete]),"
            " svgs: document.querySelectorAll('svg').length})")
        # Each chart where it is drawn (its box on the screen, and its SVG); each table's
        # box: whether it fits, and where its first column is once scrolled to the end.
        seen["charts"] = page.evaluate(
            "Array.from(document.querySelectorAll('.chart img')).map(i => {"
            " const r = i.getBoundingClientRect();"
            " return [r.left, r.right, r.width, i.getAttribute('src')]; })")
        seen["tables"] = page.evaluate(
            "Array.from(document.querySelectorAll('.wide')).map(b => {"
            " const fits = b.scrollWidth <= b.clientWidth + 1; b.scrollLeft = b.scrollWidth;"
            " const first = b.querySelector('tbody td') || b.querySelector('th');"
            " return [fits, first.getBoundingClientRect().left - b.getBoundingClientRect().left,"
            "  b.getBoundingClientRect().right]; })")
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    return {"problems": problems, **seen}


@pytest.fixture(scope="module")
def reviewed(database: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the test hands with one player's decisions reviewed: every section,
    the decisions' tables and the replay of a costly decision among them."""
    folder = tmp_path_factory.mktemp("reviewed")
    db = folder / "club.duckdb"
    shutil.copy(database, db)
    with Store(db, read_only=True) as store:
        session = store.con.execute("SELECT min(session_id) FROM hands").fetchone()[0]  # type: ignore[index]
    # The review's default settings, as the report shows; one session, for time.
    result = CliRunner().invoke(app, ["review", "--db", str(db), "--player", NASTY[1],
                                      "--session", session, "--quiet"])
    assert result.exit_code == 0, result.output
    with Store(db, read_only=True) as store:
        data = collect(store)
    return write_report(data, folder / "report.html").html


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_the_report_renders_in_a_real_browser(reviewed: Path, tmp_path: Path,
                                              width: int) -> None:
    page = reviewed.read_text(encoding="utf-8")
    assert '<table class="street">' in page  # the replayed decisions are on the page
    seen = _in_browser(reviewed, width, tmp_path / "report.png")
    assert seen["problems"] == []
    charts_drawn = page.count("data:image/svg+xml;base64,")
    assert len(seen["images"]) == charts_drawn > 0  # type: ignore[arg-type]
    assert all(w > 0 and h > 0 and done for w, h, done in seen["images"])  # type: ignore[attr-defined]
    # No sideways scroll of the page, on a desktop or a phone: wide tables scroll in
    # their own boxes.
    assert seen["width"] <= seen["inner"] == width
    assert (tmp_path / "report.png").stat().st_size > 10_000
    charts_seen = seen["charts"]
    assert len(charts_seen) == charts_drawn  # type: ignore[arg-type]
    for left, right, _, _ in charts_seen:  # type: ignore[attr-defined]
        assert left >= 0, f"a chart is drawn from {left} px"
        assert right <= width, f"a chart is drawn to {right} px"
    for fits, first, right in seen["tables"]:  # type: ignore[attr-defined]
        assert right <= width
        assert fits or first >= -0.5, "a table scrolled sideways hides its first column"
    if width == 390:
        smallest = min(_smallest_text(src, shown) for _, _, shown, src in charts_seen)  # type: ignore[attr-defined]
        assert smallest >= 9, f"a chart's text is {smallest:.1f} px on a phone"


def _smallest_text(src: str, shown: float) -> float:
    """The smallest text of a chart (an SVG as a data URI) drawn ``shown`` px wide, in px."""
    svg = base64.b64decode(src.split(",", 1)[1]).decode("utf-8")
    view = float(re.search(r'viewBox="[0-9.]+ [0-9.]+ ([0-9.]+)', svg).group(1))  # type: ignore[union-attr]
    sizes = [float(size) for size in re.findall(r"font-size: ([0-9.]+)px", svg)]
    return min(sizes) * shown / view


def test_the_smallest_text_is_read_from_the_chart_as_drawn() -> None:
    svg = '<svg viewBox="0 0 200 100"><text style="font-size: 9px">a</text>' \
          '<text style="font-size: 12px">b</text></svg>'
    src = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    assert _smallest_text(src, 400) == 18
    assert _smallest_text(src, 100) == 4.5


def test_every_chart_fits_a_phone_with_its_text_legible() -> None:
    """Without a browser: each chart's SVG, scaled to the 370 px a phone of 390 px leaves
    it, keeps its smallest text at 9 px or more."""
    rows = pl.DataFrame({"player": ["ann", "bob", "a much longer player name"],
                         "ruleset": "r", "hands": [100, 400, 250],
                         "foul_rate": [0.0, 0.2, 0.35], "fantasyland_entry_rate": [0.0, 0.3, 0.1],
                         "royalties_top": [1.0, 2.0, 0.5], "royalties_middle": [1.0, 0.5, 0.2],
                         "royalties_bottom": [2.0, 1.0, 3.0]})
    for figure in (charts.style_map(rows, "r"), charts.royalties_by_row(rows, "r"),
                   charts.player_under_rulesets(_nine_rulesets(), "ann")):
        src = "data:image/svg+xml;base64," + base64.b64encode(
            charts.svg(figure).encode()).decode()
        assert _smallest_text(src, 370) >= 9


WHAT_IFS = ("russian", "one-six")  # what-ifs on the Pineapple hands of the fixture
_NAMED = re.compile(r"\b(russian|one-six|american|pokerstars)\b( \(what-if\))?")


def _chart_words(page: str) -> list[str]:
    """The text of every chart on the page (its SVG's <text> elements)."""
    words = []
    for encoded in re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", page):
        svg = base64.b64decode(encoded).decode("utf-8")
        words += [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    return words


def test_every_chart_marks_a_what_if_ruleset_as_the_tables_do(
        written: tuple[Path, Path, int]) -> None:
    page = written[0].read_text(encoding="utf-8")
    named = [m for text in _chart_words(page) for m in _NAMED.finditer(text)]
    for name in WHAT_IFS:
        marks = {m.group(2) for m in named if m.group(1) == name}
        assert marks == {WHAT_IF}, (name, marks)  # named in the charts, always marked
        assert f"{name}{WHAT_IF}" in page  # as in the tables
    assert {m.group(2) for m in named if m.group(1) == "american"} == {None}


@pytest.mark.slow
def test_the_what_if_mark_shows_in_the_charts_chromium_renders(
        written: tuple[Path, Path, int]) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium: not installed, and apt-get could not install it here")
    page_text = written[0].read_text(encoding="utf-8")
    sources = re.findall(r'src="(data:image/svg\+xml;base64,[^"]+)"', page_text)
    assert sources
    shown: list[str] = []
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run"])
        page = browser.new_page()
        for source in sources:  # each chart as the browser draws it: its texts
            page.goto(source)
            shown += page.evaluate(
                "Array.from(document.querySelectorAll('text')).map(t => t.textContent)")
        browser.close()
    named = [m for text in shown for m in _NAMED.finditer(text)]
    for name in WHAT_IFS:
        assert {m.group(2) for m in named if m.group(1) == name} == {WHAT_IF}, name


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_a_replay_page_renders_in_a_real_browser(database: Path, tmp_path: Path,
                                                 width: int) -> None:
    with Store(database, read_only=True) as store:
        hand = store.con.execute("SELECT min(hand_id) FROM hands").fetchone()[0]  # type: ignore[index]
    target = tmp_path / "hand.html"
    result = CliRunner().invoke(app, ["replay", hand, "--db", str(database), "-o", str(target),
                                      "--rollouts", "16"])
    assert result.exit_code == 0, result.output
    seen = _in_browser(target, width, tmp_path / "hand.png")
    assert seen["problems"] == []
    assert seen["width"] <= seen["inner"] == width
    assert all(w > 0 and h > 0 and done for w, h, done in seen["images"])  # type: ignore[attr-defined]


def test_a_ruleset_without_royalties_gets_a_note_not_an_empty_chart() -> None:
    players = pl.DataFrame({"player": ["ann", "bob"], "ruleset": "russian",
                            "royalties_top": [0.0, 0.0], "royalties_middle": [0.0, 0.0],
                            "royalties_bottom": [0.0, 0.0]})
    figure = charts.royalties_by_row(players, "russian")
    assert not figure.axes[0].axison
    assert "no royalties were collected under russian" in figure.axes[0].texts[0].get_text()


def test_a_chart_with_nothing_to_draw_is_one_line_of_text_on_the_page() -> None:
    players = pl.DataFrame({"player": ["ann"], "ruleset": "russian", "royalties_top": [0.0],
                            "royalties_middle": [0.0], "royalties_bottom": [0.0]})
    shown = _embedded(titled("chinese-13", charts.royalties_by_row, players, "russian"))
    assert _image(shown, "alt") == (
        '<p class="nochart">chinese-13: Royalties collected per hand, by row (russian): '
        "no royalties were collected under russian.</p>")


def test_style_map_markers_are_whole_and_its_note_is_off_the_plot() -> None:
    rows = pl.DataFrame({"player": ["ann", "bob"], "ruleset": "r", "hands": [100, 400],
                         "foul_rate": [0.0, 0.2], "fantasyland_entry_rate": [0.0, 0.3]})
    figure = charts.style_map(rows, "r")
    axes = figure.axes[0]
    assert all(not c.get_clip_on() for c in axes.collections)  # a marker at 0 is not cut
    assert axes.get_xlim()[0] < 0
    assert axes.get_ylim()[0] < 0
    assert "marker area" in axes.get_xlabel()
    assert not any("marker area" in t.get_text() for t in axes.texts)


def test_the_interval_note_is_the_legends_title_not_a_text_over_the_bars() -> None:
    streets = pl.DataFrame({"player": ["ann", "bob"], "street": ["street_1"] * 2,
                            "mean_ev_loss": [1.0, 2.0], "ci_low": [0.5, 1.5],
                            "ci_high": [1.5, 2.5]})
    axes = charts.ev_loss_by_street(streets).axes[0]
    assert "95%" in axes.get_legend().get_title().get_text()
    assert len(axes.texts) == 0


def _nine_rulesets() -> pl.DataFrame:
    """One player's running points under nine rulesets, r0 to r8 (ri: i points a hand)."""
    hands = list(range(1, 11))
    return pl.DataFrame({"player": "ann", "ruleset": [f"r{i}" for i in range(9) for _ in hands],
                         "hands": hands * 9, "points": [i * h for i in range(9) for h in hands]})


def test_many_rulesets_are_small_multiples_one_in_colour_over_the_rest_in_grey() -> None:
    running = _nine_rulesets()
    figure = charts.player_under_rulesets(running, "ann")
    panels = [a for a in figure.axes if a.axison]
    assert len(panels) == 9
    assert [a.get_title() for a in panels[:2]] == ["r8 (+80)", "r7 (+70)"]
    for axes in panels:
        colours = [line.get_color() for line in axes.get_lines()[:-1]]  # less the zero line
        assert colours == [charts.PALETTE[0]]
        # The other eight in grey, one collection behind it, drawn raster (text stays text).
        (grey,) = axes.collections
        assert len(grey.get_segments()) == 8
        assert grey.get_rasterized()
        assert grey.get_zorder() < axes.get_lines()[0].get_zorder()
        assert to_hex(grey.get_colors()[0]) == "#c8c8c8"
        assert axes.get_ylim() == panels[0].get_ylim()  # every panel on the same scale
    few = charts.player_under_rulesets(running.filter(pl.col("ruleset") < "r3"), "ann")
    assert len(few.axes) == 1
    assert len(few.axes[0].get_legend().get_texts()) == 3


def test_over_the_style_map_the_bars_legend_stays_off_it() -> None:
    """The bars above the style map (one above the other, to fit a phone): the bars'
    legend over neither the style map nor a bar."""
    streets = pl.DataFrame({"player": ["ann", "bob"], "street": ["street_1"] * 2,
                            "mean_ev_loss": [1.0, 2.0], "ci_low": [0.5, 1.5],
                            "ci_high": [1.5, 2.5]})
    styles = pl.DataFrame({"player": ["ann", "bob"], "ruleset": "r", "hands": [100, 400],
                           "foul_rate": [0.0, 0.1], "fantasyland_entry_rate": [0.0, 0.12]})
    figure = charts.ev_loss_beside_styles(streets, styles, "r")
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    left, right = figure.axes
    legend = left.get_legend().get_window_extent(renderer)
    under = right.get_tightbbox(renderer)
    assert legend.y0 > under.y1
    bars = [bar.get_window_extent(renderer) for bar in left.patches]
    assert bars
    assert not any(legend.overlaps(bar) for bar in bars)


def test_the_report_draws_the_intervals_and_says_whether_the_hands_can_rank(
        written: tuple[Path, Path, int], database: Path) -> None:
    page = written[0].read_text(encoding="utf-8")
    assert "<h3>Can these hands rank them?</h3>" in page
    assert "how much each ruleset lets skill show (the skill signal: " in page
    assert "with its 95% interval; further right, the better player shows sooner" in page
    with Store(database, read_only=True) as store:
        data = collect(store)
    said = ranking_text(data, "pineapple")
    assert html.escape(said) in page
    apart = data.tell_apart.row(0, named=True)
    assert ("cannot be told apart" in said) == (not apart["told_apart"])
    groups = data.of(data.rulesets, "pineapple").get_column("skill_group").drop_nulls()
    assert ("cannot rank" in said) == (int((groups == 1).sum()) > 1)
    # russian and one-six are what-ifs here: named so wherever the words name them
    named = re.findall(r"\b(russian|one-six|american|pokerstars)\b( \(what-if\))?", said)
    assert any(name in ("russian", "one-six") for name, _ in named), said
    assert all(bool(marked) == (name in ("russian", "one-six")) for name, marked in named), said


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


def test_the_interval_chart_says_beside_each_ruleset_the_hands_to_tell_players_apart() -> None:
    compared = pl.DataFrame({
        "ruleset": ["a", "b", "c"], "skill_rank": [1, 2, 3],
        "skill_signal": [0.30, 0.2, 0.01], "skill_signal_ci_low": [0.25, 0.15, None],
        "skill_signal_ci_high": [0.35, 0.25, None], "skill_group": [1, 2, 2],
        "hands_to_tell_apart": [43, 97, 38_416]})
    figure = charts.skill_intervals(compared)
    axes = figure.axes[0]
    labels = {t.get_text().strip(): t for t in axes.texts if "hands" in t.get_text()}
    assert set(labels) == {"43 hands", "97 hands", "38,416 hands"}
    assert labels["43 hands"].xy == (0.35, 2)  # at the whisker's end, on top
    assert labels["38,416 hands"].xy == (0.01, 0)  # no interval: at the dot
    # Each inside the frame, clear of the group names beside it.
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw_without_rendering()
    frame = axes.get_window_extent(renderer)
    assert all(t.get_window_extent(renderer).x1 < frame.x1 for t in labels.values())


def test_a_chart_is_laid_out_once_and_the_page_and_the_pdf_crop_it_alike() -> None:
    running = _nine_rulesets()
    figure = charts.player_under_rulesets(running, "ann")
    box = charts.laid_out(figure)
    assert charts.laid_out(figure) is box
    assert not isinstance(figure.get_layout_engine(), ConstrainedLayoutEngine)
    page = charts.svg(figure)
    width = float(re.search(r'<svg[^>]* width="([0-9.]+)pt"', page).group(1))  # type: ignore[union-attr]
    assert width == pytest.approx(box.width * 72, abs=1)
    image = charts.pixels(figure)
    assert image.dtype == "uint8"
    assert image.shape[2] == 4
    assert image.shape[1] == pytest.approx(box.width * charts.PDF_DPI, abs=2)
    assert image.shape[0] == pytest.approx(box.height * charts.PDF_DPI, abs=2)
    # The grey curves as images, the titles and numbers as text.
    assert page.count("<image") == 9
    assert ">r8 (+80)</text>" in page


def test_one_ruleset_has_nothing_to_rank_and_the_page_says_so() -> None:
    data = ReportData(rulesets_shown={"pineapple": "a"}, players=pl.DataFrame(),
                      rulesets=pl.DataFrame({"variant": ["pineapple"], "ruleset": ["a"],
                                             "skill_rank": [1], "skill_group": [1]}),
                      differences=pl.DataFrame())
    assert ranking_text(data, "pineapple").startswith("Fewer than two rulesets")


def test_under_each_table_its_columns_are_said_in_a_players_words(
        written: tuple[Path, Path, int]) -> None:
    """The words the commands' --help gives (MEANINGS), under the report's tables, and
    beside each chart a caption that says how to read it."""
    from ofcstats.analysis import MEANINGS  # noqa: PLC0415

    page = written[0].read_text(encoding="utf-8")
    for name in ("foul_rate", "fantasyland_stay_rate", "skill_signal", "hands_to_tell_apart",
                 "royalty_share"):
        assert html.escape(MEANINGS[name]) in page, name
    assert page.count('<p class="legend">') >= 2
    assert "further right, more fouled hands; higher, more hands into fantasyland" in page


def test_the_rulesets_table_gives_each_skill_signal_with_its_interval(
        written: tuple[Path, Path, int], database: Path) -> None:
    """As compare's table: the signal and its 95% interval in one cell, ``none`` where
    the interval reaches 0 (these hands show no skill difference)."""
    page = written[0].read_text(encoding="utf-8")
    table = page.split("<h3>Scoring systems compared</h3>")[1].split("</table>")[0]
    assert "<th>skill signal (95%)</th>" in table
    with Store(database, read_only=True) as store:
        rows = collect(store).rulesets.filter(pl.col("variant") == "pineapple")
    assert rows.height == table.count("<tr>") - 1
    for row in rows.iter_rows(named=True):
        shown = "none" if not row["skill_shown"] else f"{row['skill_signal']:.3f}"
        cell = (f"<td>{shown} ({row['skill_signal_ci_low']:.3f}-"
                f"{row['skill_signal_ci_high']:.3f})</td>")
        assert cell in table, (cell, table)
