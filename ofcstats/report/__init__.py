"""The session report: one self-contained HTML file (charts embedded, no network), and
optionally the charts as a multi-page PDF.

:func:`collect` gathers what the report shows from a rescored store; :func:`figures`
draws the charts; :func:`render_html` writes the page, every name and value escaped
(:func:`ofcstats.sanitize.html_text`).
:func:`write_report` does all three.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from ofcstats import analysis, stats
from ofcstats.errors import StoreError
from ofcstats.paths import written_whole
from ofcstats.report import charts
from ofcstats.review.session_page import Replayed
from ofcstats.sanitize import html_text
from ofcstats.store import Store

__all__ = ["ReportData", "collect", "figures", "ranking_text", "render_html", "table_names",
           "titled", "write_report"]


@dataclass
class ReportData:
    """Everything the report shows, already computed (summed in the database: no table
    or chart needs the scored rows themselves); every table is per variant."""

    rulesets_shown: dict[str, str]  # per variant, the ruleset of its summary and styles
    players: pl.DataFrame  # player statistics per player, variant and ruleset, with money
    # ruleset statistics per variant and ruleset, with their 95% intervals and skill groups
    rulesets: pl.DataFrame
    differences: pl.DataFrame  # reported points that differ from the re-score
    # the hands whose logged points no re-score checks, in one line (analysis.not_checked)
    unchecked: str | None = None
    # hands and sessions per variant, and under None in all
    counts: dict[str | None, tuple[int, int]] = field(default_factory=dict)
    # running totals per variant, ruleset and player (analysis.running_totals)
    running: pl.DataFrame = field(default_factory=pl.DataFrame)
    # seats per variant, ruleset and points (analysis.points_histogram)
    histogram: pl.DataFrame = field(default_factory=pl.DataFrame)
    database: str = ""
    filters: dict[str, str] = field(default_factory=dict)
    # EV loss per variant and player from ``ofcstats review`` (default settings); None
    # when nothing was reviewed
    decisions: pl.DataFrame | None = None
    # the same per variant, player and street, with 95% intervals; and each player's
    # costliest decision with its board (``ofcstats.review.replay.worst_mistakes``)
    decision_streets: pl.DataFrame | None = None
    # per variant, player and situation beside the table's (``ofcstats review --by
    # situation``)
    decision_situations: pl.DataFrame | None = None
    mistakes: list[dict[str, Any]] = field(default_factory=list)
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    # per variant, whether its top two rulesets are told apart (uncertainty.tell_apart)
    tell_apart: pl.DataFrame = field(default_factory=pl.DataFrame)
    # each player's costliest hands (analysis.hands, the biggest losses first) and those
    # hands as their replay shows them (analysis.replayed)
    costliest: pl.DataFrame = field(default_factory=pl.DataFrame)
    costliest_hands: Replayed | None = None

    @property
    def variants(self) -> list[str]:
        """The variants in the report, in name order."""
        return sorted(self.rulesets_shown)

    def of(self, frame: pl.DataFrame, variant: str) -> pl.DataFrame:
        """The rows of one variant of one of the report's frames."""
        return frame.filter(pl.col("variant") == variant)


def collect(store: Store, filters: analysis.Filters | None = None,
            ruleset: str | None = None, seed: int = 7) -> ReportData:
    """Read and compute what the report needs from a rescored store. ``ruleset`` is the
    one each variant's summary shows, where it was scored for that variant; otherwise
    a variant shows the ruleset most of its hands were played under."""
    filters = filters or analysis.Filters()
    rows = analysis.stored_rows(store, filters)
    summed = stats.sums(rows)
    if summed.is_empty():
        raise StoreError(analysis.NOTHING_SCORED)
    if ruleset is not None:
        store.require_scored([ruleset], set(summed.get_column("ruleset").to_list()))
    shown = {k: v for k, v in (
        ("sessions", ", ".join(filters.sessions or [])),
        ("players", ", ".join(filters.players or [])),
        ("variants", ", ".join(filters.variants or [])),
        ("since", filters.since.isoformat() if filters.since else ""),
        ("until", filters.until.isoformat() if filters.until else ""),
    ) if v}
    compared = analysis.comparison(store, filters, rows, seed=seed)
    # The players' tables show each variant's summary ruleset: its rates' intervals only.
    summary = analysis.played_rulesets(rows, ruleset)
    return ReportData(rulesets_shown=summary,
                      players=analysis.player_table(store, filters, seed=seed, rows=rows,
                                                    summed=(summed, stats.session_counts(rows)),
                                                    intervals=summary),
                      rulesets=compared.table, tell_apart=compared.tell_apart,
                      differences=stats.reported_differences_of(rows),
                      unchecked=analysis.not_checked(store, filters),
                      counts=analysis.hand_counts(rows),
                      running=analysis.running_totals(store, filters, rows),
                      histogram=analysis.points_histogram(rows),
                      database=str(store.path), filters=shown,
                      **_costliest(store, filters, ruleset), **_decisions(store, filters))


COSTLIEST = 3
"""The hands each player loses the most points in that the report replays."""


def _costliest(store: Store, filters: analysis.Filters, ruleset: str | None
               ) -> dict[str, Any]:
    """Each player's :data:`COSTLIEST` biggest losses (of the hands the filters keep,
    under each variant's summary ruleset), and those hands for their replay."""
    worst = analysis.hands(store, filters, ruleset=ruleset, max_points=-1, sort="points",
                           per_player=COSTLIEST)
    if worst.is_empty():
        return {}
    ids = list(dict.fromkeys(worst["hand_id"].to_list()))
    return {"costliest": worst,
            "costliest_hands": analysis.replayed(store, hand_ids=ids, ruleset=ruleset)}


def _decisions(store: Store, filters: analysis.Filters) -> dict[str, Any]:
    """The review's EV loss per variant and player, and per street, and each player's
    costliest decision, for the hands the filters keep (none when nothing was reviewed)."""
    from ofcstats.review.replay import worst_mistakes  # noqa: PLC0415 (loads the simulator)
    from ofcstats.review.store import Selection  # noqa: PLC0415
    from ofcstats.review.summary import (  # noqa: PLC0415
        decisions_frame,
        player_summary,
        situation_summary,
        street_summary,
    )

    if not store.count("decisions"):
        return {}
    frame = decisions_frame(store, Selection(players=filters.players,
                                             sessions=filters.sessions,
                                             since=filters.since, until=filters.until))
    if filters.variants is not None:
        frame = frame.filter(pl.col("variant").is_in(list(filters.variants)))
    if frame.is_empty():
        return {}
    return {"decisions": player_summary(frame), "decision_streets": street_summary(frame),
            "decision_situations": situation_summary(frame),
            "mistakes": worst_mistakes(store, frame)}


def _decisions_section(data: ReportData, images: dict[str, str]) -> list[str]:
    """EV loss per player and street, a table per variant (``ofcstats review``), the
    chart of it next to the style map, and each player's costliest decision replayed."""
    from ofcstats.review.core import (  # noqa: PLC0415 (loads the simulator)
        DEFAULT_ROLLOUTS,
        FANTASYLAND_VALUE,
    )

    parts = ["<h2 id=\"decisions\">Decisions</h2>"]
    if data.decisions is None:
        return [*parts, "<p>No decisions reviewed for these hands: run <code>ofcstats "
                "review</code> to see what each placement cost.</p>"]
    parts.append("<p>Expected points given up per decision against the best legal "
                 "placement, valued by rollouts of the rest of the hand, the opponents' "
                 "unseen cards drawn (the review's default settings: "
                 f"{DEFAULT_ROLLOUTS} rollouts, the loss measured on rollouts that did not "
                 f"choose the best, fantasyland worth {FANTASYLAND_VALUE:g} points per "
                 "opponent); 95% interval of the mean over decisions. "
                 "<code>ofcstats replay HAND_ID</code> shows a hand street by street.</p>")
    for (variant,), part in data.decisions.group_by("variant", maintain_order=True):
        streets = [c for c in part.columns if (c.startswith("street_")
                                                or c == "fantasyland_set")
                   and not part[c].is_null().all()]
        parts.append(f"<h3>{html_text(str(variant))}</h3>")
        parts.append(_table(part, [
            ("player", "player"), ("decisions", "decisions"),
            ("mean_ev_loss", "mean EV loss"), ("ci_low", "95% low"), ("ci_high", "95% high"),
            *((c, c.replace("_", " ")) for c in streets),
            ("loss_foul", "lost to fouls"), ("loss_fantasyland", "lost: fantasyland"),
            ("total_ev_loss", "total EV loss")]))
        parts.append(_explained([("mean_ev_loss", "mean EV loss"),
                                 ("street_1", "street 1")]))
        if data.decision_situations is not None:
            leaks = data.decision_situations.filter(pl.col("variant") == variant)
            parts.append(f'<h3 id="leaks-{html_text(str(variant))}">Leaks by situation</h3>')
            parts.append("<p>Each player's mean loss per decision in each situation, "
                         "with its 95% interval, beside the table's (every reviewed "
                         "player in the same situation); situations as in "
                         "<code>ofcstats review --by situation</code>.</p>")
            parts.append(_table(leaks, [
                ("player", "player"), ("situation", "situation"), ("decisions", "decisions"),
                ("mean_ev_loss", "mean EV loss"), ("ci_low", "95% low"),
                ("ci_high", "95% high"), ("table_mean_ev_loss", "table's mean"),
                ("vs_table", "vs the table")]))
            parts.append(_explained([("table_mean_ev_loss", "table's mean"),
                                     ("vs_table", "vs the table")]))
        key = f"{variant}:"
        if key + "decisions" in images:
            parts.append('<div class="pair">'
                         + _image(images[key + "decisions"], f"{variant}: EV loss per decision"
                                  " by street and player, with 95% intervals")
                         + _image(images[key + "styles"], f"{variant}: every player's style"
                                  " (the reviewed and the others), foul rate against "
                                  "fantasyland entry rate")
                         + "</div>")
        worst = [m for m in data.mistakes if m["variant"] == variant]
        if worst:
            from ofcstats.review.replay import mistakes_html  # noqa: PLC0415

            parts.append(f'<h3 id="replay-{html_text(str(variant))}">Replay: each player\'s '
                         "costliest decision</h3>")
            parts.append("<p>The board before the street, the cards dealt (highlighted), "
                         "the play made and the best candidate with their expected points. "
                         "<code>ofcstats replay HAND_ID</code> shows the whole hand.</p>")
            parts.append(f'<div class="replay">{mistakes_html(worst)}</div>')
    return parts


def titled(variant: str, draw: Callable[..., Figure], *args: Any) -> Figure:
    """The chart ``draw(*args)`` draws, the variant in front of its title (the
    figure's, else its first axes')."""
    figure = draw(*args)
    if isinstance(figure, charts.NoChart):
        figure.title = f"{variant}: {figure.title}"
        figure.axes[0].texts[0].set_text(f"{figure.title}: {figure.why}")
        return figure
    if figure.get_suptitle():
        with charts.style():
            charts.suptitled(figure, f"{variant}: {figure.get_suptitle().replace(chr(10), ' ')}")
        return figure
    for axes in figure.axes[:1]:
        with charts.style():
            charts.titled(axes, f"{variant}: {axes.get_title().replace(chr(10), ' ')}")
    return figure


Chart = tuple[str, Callable[[], Figure]]
"""A chart of the report not drawn yet: its key and what draws it."""


def chart_plan(data: ReportData) -> list[Chart]:
    """Every chart of the report, with its key, in page order, not yet drawn: per
    variant, its summary charts, then one per player of that variant; then the
    decisions. Counted before any is drawn, so progress can say "chart 3 of 28"."""
    plan: list[Chart] = []
    for variant in data.variants:
        main = data.rulesets_shown[variant]
        running = data.of(data.running, variant)
        players = data.of(data.players, variant)
        compared = data.of(data.rulesets, variant)
        histogram = data.of(data.histogram, variant)
        sigma = next(iter(compared.filter(pl.col("ruleset") == main).get_column("sd")
                          .drop_nulls()), 0.0)
        # Every ruleset a chart names, marked as the tables mark it (a what-if).
        names = table_names(compared)
        running, players, compared, histogram = (
            frame.with_columns(pl.col("ruleset").replace(names)) if "ruleset" in frame.columns
            else frame for frame in (running, players, compared, histogram))
        main = names.get(main, main)
        plan += [(f"{variant}:{key}", partial(titled, variant, draw, *args))
                 for key, draw, args in (
            ("cumulative", charts.cumulative_points, (running, main, sigma)),
            ("distribution", charts.points_distribution, (histogram, compared)),
            ("intervals", charts.skill_intervals, (compared,)),
            ("styles", charts.style_map, (players, main)),
            ("royalties", charts.royalties_by_row, (players, main)),
                 )]
        plan += [(f"{variant}:player:{player}",
                  partial(titled, variant, charts.player_under_rulesets, running, player))
                 for player in _players(data, variant)]
    if data.decision_streets is not None:
        for (variant,), part in data.decision_streets.group_by("variant", maintain_order=True):
            if variant in data.rulesets_shown:
                plan.append((f"{variant}:decisions",
                             partial(titled, str(variant), charts.ev_loss_by_street, part)))
    return plan


def table_names(compared: pl.DataFrame) -> dict[str, str]:
    """Each ruleset of a variant's comparison, named as its tables name it
    (:func:`ofcstats.analysis.labelled`: ``russian (what-if)``)."""
    if "what_if" not in compared.columns:
        return {}
    pairs = compared.select("ruleset", "what_if").unique(maintain_order=True)
    return dict(zip(pairs.get_column("ruleset").to_list(),
                    analysis.labelled(pairs).get_column("ruleset").to_list(), strict=True))


def figures(data: ReportData) -> list[tuple[str, Figure]]:
    """Every chart of the report drawn, with its key, in page order (:func:`chart_plan`)."""
    return [(key, draw()) for key, draw in chart_plan(data)]


def _players(data: ReportData, variant: str) -> list[str]:
    main = data.players.filter((pl.col("variant") == variant)
                               & (pl.col("ruleset") == data.rulesets_shown[variant]))
    return main.sort(["total", "player"], descending=[True, False]).get_column(
        "player").to_list()


def _embedded(figure: Figure) -> str:
    """How the page shows a chart: its SVG as a data URI, or for a chart with nothing
    to draw (:class:`~ofcstats.report.charts.NoChart`) its one line of text, marked
    ``text:``."""
    if isinstance(figure, charts.NoChart):
        return f"text:{figure.title}: {figure.why}"
    return base64.b64encode(charts.svg(figure).encode("utf-8")).decode("ascii")


def _cell(value: object, decimals: int = 2, money: bool = False) -> str:
    if value is None:
        return "&ndash;"
    if money and isinstance(value, int | float):
        return html_text(analysis.money_text(float(value)))
    if isinstance(value, float):
        text = f"{value:,.{decimals}f}" if abs(value) < 1000 else f"{value:,.0f}"
        return html_text(text)
    if isinstance(value, int) and not isinstance(value, bool):
        return html_text(f"{value:,}")
    return html_text(str(value))


def _table(frame: pl.DataFrame, columns: Sequence[tuple[str, str]]) -> str:
    head = "".join(f"<th>{html_text(label)}</th>" for _, label in columns)
    body = []
    for row in frame.iter_rows(named=True):
        cells = "".join(
            f"<td>{_cell(row.get(name), 1 if label.endswith('%') else 2, name == 'money')}</td>"
            for name, label in columns)
        body.append(f"<tr>{cells}</tr>")
    # The table scrolls sideways in its own box on a narrow screen, not the page.
    return (f'<div class="wide"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _explained(columns: Sequence[tuple[str, str]]) -> str:
    """The line under a table that says what its less plain columns mean
    (:data:`ofcstats.analysis.MEANINGS`, the words of the commands' ``--help``)."""
    said = [f"<b>{html_text(label)}</b>: {html_text(analysis.MEANINGS[name])}"
            for name, label in columns if name in analysis.MEANINGS
            and name not in PLAIN and not name.startswith("street_")]
    return f'<p class="legend">{"; ".join(said)}.</p>' if said else ""


PLAIN = frozenset({"total", "mean", "money", "ci_high", "total_ev_loss"})
"""Columns a table's header says well enough (or whose pair's line says it)."""


def _image(chart: str, alt: str) -> str:
    """A chart as :func:`_embedded` gives it: an image, or its line of text."""
    if chart.startswith("text:"):
        return f'<p class="nochart">{html_text(chart.removeprefix("text:"))}.</p>'
    return (f'<figure><div class="chart"><img src="data:image/svg+xml;base64,{chart}" '
            f'alt="{html_text(alt)}"></div><figcaption>{html_text(alt)}</figcaption></figure>')


def _percent(frame: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    """Rates as percentages, for the columns the frame has."""
    return frame.with_columns([(pl.col(c) * 100).round(1) for c in columns
                               if c in frame.columns])


PLAYER_COLUMNS = (("player", "player"), ("hands", "hands"), ("total", "points"),
                  ("mean", "per hand"), ("ci_low", "95% low"), ("ci_high", "95% high"),
                  ("sd", "SD"), ("money", "money (units)"), ("foul_rate", "fouls %"),
                  ("fantasyland_entry_rate", "FL entry %"),
                  ("fantasyland_stay_rate", "FL stay %"), ("scoop_rate", "scoops %"),
                  ("hands_for_1", "hands for ±1"))
RULESET_COLUMNS = (("skill_group", "group"), ("ruleset", "ruleset"), ("hands", "hands"),
                   ("sd", "SD per hand"), ("mean_abs_points", "mean |points|"),
                   ("royalty_share", "royalties %"), ("foul_rate", "fouls %"),
                   ("fantasyland_entry_rate", "FL entry %"),
                   ("skill_signal", "skill signal (95%)"),
                   ("hands_to_tell_apart", "hands to tell players apart"))
_RATES = ("foul_rate", "fantasyland_entry_rate", "fantasyland_stay_rate", "scoop_rate",
          "royalty_share")

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1200px;padding:0 1rem;color:#222;line-height:1.45}
h1{margin-bottom:.2rem}h2{border-bottom:2px solid #0072B2;padding-bottom:.2rem;margin-top:2.4rem}
.meta{color:#555;font-size:.9rem}
table{border-collapse:collapse;font-size:.8rem;margin:.8rem 0}
.wide,.replay{max-width:100%;overflow-x:auto}
th,td{padding:.3rem .45rem;border-bottom:1px solid #e3e3e3;text-align:right;white-space:nowrap}
th{background:#f2f6fa;white-space:normal;vertical-align:bottom;min-width:3.2em}
td:first-child,th:first-child{text-align:left}
.wide td:first-child,.wide th:first-child{position:sticky;left:0;z-index:1;
box-shadow:1px 0 0 #e3e3e3}.wide td:first-child{background:#fff}
nav ul{columns:3;font-size:.9rem}
@page{size:A4;margin:12mm}
@media print{body{margin:0;max-width:none;font-size:9pt}table{font-size:7pt}
.wide,.replay{overflow:visible}
th,td{padding:.15rem .25rem}figure,table{break-inside:avoid}h2{break-before:page}}
figure{margin:1rem 0}img{max-width:100%;height:auto}figcaption{color:#555;font-size:.85rem}
.chart img{display:block;width:100%;max-width:720px}
.nochart{color:#555;font-style:italic}
.legend{color:#555;font-size:.8rem;margin-top:-.4rem}
@media (max-width:600px){body{margin:1rem auto;padding:0 .6rem}nav ul{columns:1}}
.note{background:#f7f7f2;border-left:4px solid #E69F00;padding:.6rem 1rem}
.pair{display:flex;flex-wrap:wrap;gap:1rem}.pair figure{flex:1 1 300px;margin:0;min-width:0}
.replay td{text-align:left;white-space:normal}
"""


def _methodology() -> str:
    """The definitions in :mod:`ofcstats.stats`, so the page and the code cannot disagree."""
    text = (stats.__doc__ or "").split("Definitions", 1)[-1]
    items = re.split(r"\n- ", text)[1:]
    bullets = []
    for item in items:
        clean = " ".join(item.split()).replace("``", "")
        clean = re.sub(r"\*(.+?)\*", r"\1", clean)
        bullets.append(f"<li>{html_text(clean)}</li>")
    return "<ul>" + "".join(bullets) + "</ul>"


def _stakes(data: ReportData, variant: str, ruleset: str) -> str:
    rows = data.players.filter((pl.col("variant") == variant) & (pl.col("ruleset") == ruleset))
    sources = sorted({part for text in rows.get_column("stake").drop_nulls().to_list()
                      for part in text.split("; ")})
    words = {"ruleset": "the ruleset's point value", "logged": "the point value logged with "
             "each hand", "default": "1 a point (none was set)",
             "logged, else default": "the logged point value, else 1"}
    return ", ".join(words.get(s, s) for s in sources) or "none"


def ranking_text(data: ReportData, variant: str) -> str:
    """In words: which rulesets of a variant the hands cannot rank (those sharing the
    best skill group), and whether the top two are told apart, or how many more hands
    it would take."""
    ranked = data.of(data.rulesets, variant).filter(
        pl.col("skill_group").is_not_null()).sort("skill_rank")
    if ranked.height < 2:
        return ("Fewer than two rulesets have a skill signal here (each needs two players "
                "with 30 or more hands): there is nothing to rank.")
    best = analysis.labelled(ranked).filter(pl.col("skill_group") == 1).get_column(
        "ruleset").to_list()
    if len(best) == ranked.height:
        words = (f"These hands cannot rank the {len(best)} rulesets: their skill signals "
                 "are within the noise of each other (one group).")
    elif len(best) > 1:
        words = (f"These hands cannot rank {', '.join(best)}: they share the best group; "
                 f"the other {ranked.height - len(best)} rank below them.")
    else:
        words = f"{best[0]} alone is in the best group."
    apart = data.of(data.tell_apart, variant) if not data.tell_apart.is_empty() else None
    what_if = ranked.filter(pl.col("what_if")).get_column("ruleset").to_list() \
        if "what_if" in ranked.columns else []
    notes = analysis.skill_notes(
        data.of(data.rulesets, variant),
        apart.row(0, named=True) if apart is not None and not apart.is_empty() else None,
        what_if)
    return " ".join([words, *(f"{line}." for line in notes)])


def _variant_section(data: ReportData, variant: str, images: dict[str, str]) -> list[str]:
    esc = html_text
    main_name = data.rulesets_shown[variant]
    players = data.of(data.players, variant)
    main = _percent(players.filter(pl.col("ruleset") == main_name).sort(
        ["total", "player"], descending=[True, False]), _RATES)
    compared = analysis.labelled(_percent(data.rulesets.filter(pl.col("variant") == variant),
                                          _RATES))
    hands, sessions = data.counts[variant]
    key = f"{variant}:"
    parts = [
        f"<section id=\"{esc(variant)}\"><h2>{esc(variant)}</h2>",
        f"<p class=\"meta\">{analysis.plural(hands, 'hand')} in "
        f"{analysis.plural(sessions, 'session')}. Summary ruleset: "
        f"<strong>{esc(main_name)}</strong>. Money under it: points settled per game, "
        f"times {esc(_stakes(data, variant, main_name))}.</p>",
        _table(main, PLAYER_COLUMNS),
        _explained(PLAYER_COLUMNS),
        _image(images[key + "cumulative"], f"{variant}: each player's running total of points "
               f"under {main_name}; a curve outside the grey band is winning (or losing) by "
               "more than luck alone usually gives"),
        "<h3>Scoring systems compared</h3>",
        "<p>The same hands under every ruleset played in this variant: how volatile each is, "
        "how much of the money royalties move, and how many hands it takes before the "
        "better player shows.</p>",
        _table(compared.with_columns(analysis.with_interval(
            compared, "skill_signal", "skill_shown")) if "skill_shown" in compared.columns
            else compared, RULESET_COLUMNS),
        _explained(RULESET_COLUMNS),
        f"<p>{esc(analysis.TELL_APART_MEANING)}</p>",
        _image(images[key + "distribution"], f"{variant}: points a seat wins or loses in a hand "
               "under each ruleset: the box holds the middle half of the hands, the whiskers "
               "all but the 1% at each end; a wider box, bigger swings"),
        "<h3>Can these hands rank them?</h3>",
        f"<p>{esc(ranking_text(data, variant))}</p>",
        _image(images[key + "intervals"], f"{variant}: how much each ruleset lets skill show "
               "(the skill signal: how far apart the players' results per hand are, against "
               "the luck of the cards), with its 95% interval; further right, the better "
               "player shows sooner; rulesets in one shaded band cannot be ranked by these "
               "hands"),
        "<h3>Player styles</h3>",
        _image(images[key + "styles"], f"{variant}: each player's style: further right, more "
               "fouled hands; higher, more hands into fantasyland; a bigger marker, more hands "
               "played"),
        _image(images[key + "royalties"], f"{variant}: royalty points (the bonuses strong rows "
               "pay) each player collected per hand, by row"),
    ]
    for player in _players(data, variant):
        mine = analysis.labelled(_percent(players.filter(pl.col("player") == player).sort(
            ["mean", "ruleset"], descending=[True, False]), _RATES))
        columns = [("ruleset", "ruleset"), *PLAYER_COLUMNS[1:]]
        parts += [f"<h3>Player: {esc(player)}</h3>", _table(mine, columns),
                  _image(images[f"{key}player:{player}"],
                         f"{variant}, {player}: cumulative points under each ruleset"),
                  _costliest_html(data, variant, player)]
    parts.append("</section>")
    return parts


def _costliest_html(data: ReportData, variant: str, player: str) -> str:
    """A player's costliest hands, each replayed under its line (opened on a tap)."""
    if data.costliest.is_empty() or data.costliest_hands is None:
        return ""
    from ofcstats.review.session_page import hand_replays  # noqa: PLC0415

    esc = html_text
    mine = data.costliest.filter((pl.col("variant") == variant) & (pl.col("player") == player))
    if mine.is_empty():
        return ""
    drawn = hand_replays(data.costliest_hands)
    items = []
    for row in mine.iter_rows(named=True):
        words = [f"{row['points']:+d} points", f"money {analysis.money_text(row['money'])}"]
        words += [w for w, on in (("fouled", row["fouled"]),
                                  ("timed out", row["timed_out"])) if on]
        if row["ev_loss"] is not None:
            words.append(f"EV loss {row['ev_loss']:.2f}")
        items.append(f"<details><summary>{esc(str(row['hand_id']))}: "
                     f"{esc(', '.join(words))}</summary>"
                     f"{drawn.get(str(row['hand_id']), '')}</details>")
    return (f"<p>{esc(player)}'s costliest hands (tap one to replay it; "
            f"<code>ofcstats replay --session SESSION</code> replays a whole session):</p>"
            f'<div class="costliest">{"".join(items)}</div>')


def _card_style(data: ReportData) -> str:
    """The replay's card style, when the page shows cards."""
    if not data.mistakes and data.costliest.is_empty():
        return ""
    from ofcstats.review.replay import CARD_STYLE  # noqa: PLC0415

    return CARD_STYLE + (".costliest{max-width:100%;overflow-x:auto}"
                         ".costliest td{text-align:left;white-space:normal}"
                         ".costliest summary{cursor:pointer}")


def render_html(data: ReportData, images: dict[str, str]) -> str:
    """The page: per variant its summary, charts, rulesets compared and players; then the
    checks and the methodology. ``images`` maps a chart's key (see :func:`chart_plan`)
    to the chart as :func:`_embedded` gives it."""
    esc = html_text
    hands, sessions = data.counts[None]
    filters = "; ".join(f"{k}: {v}" for k, v in data.filters.items()) or "none"
    contents = "".join(f"<li><a href=\"#{esc(v)}\">{esc(v)}</a></li>" for v in data.variants)
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>ofcstats report</title><style>{CSS}{_card_style(data)}</style></head><body>",
        "<h1>ofcstats session report</h1>",
        f"<p class=\"meta\">Generated {esc(data.generated_at.strftime('%Y-%m-%d %H:%M UTC'))}"
        f" from {esc(data.database)}: {analysis.plural(hands, 'hand')} in "
        f"{analysis.plural(sessions, 'session')}, {analysis.plural(len(data.variants), 'variant')}."
        f" Filters: {esc(filters)}.</p>",
        f"<nav><ul>{contents}<li><a href=\"#decisions\">Decisions</a></li>"
        "<li><a href=\"#checks\">Checks against the logs</a></li>"
        "<li><a href=\"#methodology\">Methodology</a></li></ul></nav>",
    ]
    for variant in data.variants:
        parts += _variant_section(data, variant, images)
    parts += _decisions_section(data, images)
    parts.append("<h2 id=\"checks\">Checks against the logs</h2>")
    if data.unchecked is not None:
        parts.append(f"<p class=\"note\">{esc(data.unchecked)}. Their logged points are "
                     "checked against nothing.</p>")
    if data.differences.is_empty():
        other = "other " if data.unchecked is not None else ""
        parts.append(f"<p>Every {other}logged <code>reported_points</code> agrees with the "
                     "re-score under the ruleset played (or the logs give none).</p>")
    else:
        parts.append(f"<p class=\"note\">{data.differences.height:,} seat results differ "
                     "from the points the log reported: a site's scoring quirk or a logging "
                     "error.</p>")
        parts.append(_table(data.differences.head(200), [(c, c) for c in
                                                          data.differences.columns]))
    parts += [
        "<h2 id=\"methodology\">Methodology</h2>",
        "<p>Every hand is scored from its final boards under every ruleset played in its "
        "variant (see docs/rules.md): pairwise, each seat against each opponent; fouls, "
        "royalties, the Finnish spade bonus and the Russian table bonus as each ruleset "
        "defines them; fantasyland repeats limited within a session. No table or chart "
        "mixes two variants.</p>",
        _methodology(),
        "</body></html>",
    ]
    return "\n".join(parts)


A4 = (8.27, 11.69)
"""A portrait page, in inches: every page of the PDF has this size, or turned on its
side for charts wider than :data:`LANDSCAPE`."""
LANDSCAPE = 2.8
"""A chart this many times wider than high goes on a landscape page."""
MARGIN, CAPTION = 0.45, 0.32
"""The page's margin and the height of a chart's caption, in inches."""


def _caption(key: str) -> str:
    variant, _, chart = key.partition(":")
    if chart.startswith("player:"):
        return f"{variant}: {chart.removeprefix('player:')} under each ruleset"
    names = {"cumulative": "cumulative points per player", "distribution": "points per hand "
             "by ruleset", "intervals": "skill signal with 95% intervals",
             "styles": "player styles", "royalties": "royalties by row",
             "decisions": "EV loss by street"}
    return f"{variant}: {names.get(chart, chart)}"


def _page(number: int, total: int, size: tuple[float, float] = A4) -> Figure:
    page = Figure(figsize=size)
    page.text(0.5, 0.2 / size[1], f"ofcstats report, page {number} of {total}",
              ha="center", fontsize=8, color="#777777")
    return page


@dataclass
class _Placed:
    """A chart's image and the height it takes on its page, in inches."""

    key: str
    image: Any
    width: float
    height: float


def _pages(drawn: Sequence[tuple[str, Figure]]) -> list[tuple[tuple[float, float],
                                                             list[_Placed]]]:
    """The charts laid out in page order: as many to a page as fit at the page's width
    (less margins) and at most half its height, each on a portrait page, or a landscape
    one when it is wide."""
    pages: list[tuple[tuple[float, float], list[_Placed]]] = []
    room = 0.0
    for key, figure in drawn:
        image = charts.pixels(figure)
        height, width = image.shape[:2]
        size = (A4[1], A4[0]) if width / height > LANDSCAPE else A4
        # At most half the page's height: two charts or more to every page.
        box_w, box_h = size[0] - 2 * MARGIN, (size[1] - 2 * MARGIN - 0.3 - 0.15) / 2 - CAPTION
        scale = min(box_w / width, box_h / height)
        placed = _Placed(key, image, width * scale, height * scale + CAPTION)
        if not pages or pages[-1][0] != size or placed.height > room:
            pages.append((size, []))
            room = size[1] - 2 * MARGIN - 0.3
        pages[-1][1].append(placed)
        room -= placed.height + 0.15
    return pages


def write_pdf(data: ReportData, drawn: Sequence[tuple[str, Figure]], path: Path) -> None:
    """One document of A4 pages: a title page with the contents, then the charts in
    page order, as many to a page as fit (a wide chart on a landscape page), each
    captioned, every page numbered."""
    pages = _pages(drawn)
    total = 1 + len(pages)
    with PdfPages(path, metadata={"Title": "ofcstats report", "Creator": "ofcstats"}) as pdf:
        title = _page(1, total)
        title.text(0.08, 0.93, "ofcstats report", fontsize=22, fontweight="bold")
        hands = data.counts[None][0]
        filters = "; ".join(f"{k}: {v}" for k, v in data.filters.items()) or "none"
        title.text(0.08, 0.895, f"Generated {data.generated_at:%Y-%m-%d %H:%M UTC} from "
                   f"{Path(data.database).name}: {analysis.plural(hands, 'hand')}. "
                   f"Filters: {filters}.",
                   fontsize=9, color="#444444", wrap=True)
        title.text(0.08, 0.85, "Contents", fontsize=14, fontweight="bold")
        lines = [(_caption(chart.key), number)
                 for number, (_, placed) in enumerate(pages, start=2) for chart in placed]
        size = 9 if len(lines) <= 60 else 7
        step = min(0.013 * size / 9 * 1.25, 0.78 / max(len(lines), 1))
        for index, (caption, number) in enumerate(lines):
            y = 0.82 - index * step
            title.text(0.1, y, caption, fontsize=size)
            title.text(0.9, y, str(number), fontsize=size, ha="right")
        pdf.savefig(title)
        for number, (paper, placed) in enumerate(pages, start=2):
            page = _page(number, total, paper)
            top = paper[1] - MARGIN
            for chart in placed:
                page.text(0.5, (top - 0.2) / paper[1], _caption(chart.key), ha="center",
                          fontsize=11, fontweight="bold")
                h = chart.height - CAPTION
                axes = page.add_axes(((paper[0] - chart.width) / 2 / paper[0],
                                      (top - chart.height) / paper[1],
                                      chart.width / paper[0], h / paper[1]))
                axes.imshow(chart.image)
                axes.set_axis_off()
                top -= chart.height + 0.15
            pdf.savefig(page)


@dataclass(frozen=True)
class ReportFiles:
    """What :func:`write_report` wrote."""

    html: Path
    pdf: Path | None
    charts: int


Progress = Callable[[str, int, int], None]
"""Told each step of :func:`write_report` as it starts: what it does, its number and
how many there are."""


def write_report(data: ReportData, html_path: Path, pdf_path: Path | None = None,
                 progress: Progress | None = None) -> ReportFiles:
    """Draw the charts and write the HTML page (and the PDF of the charts); ``progress``
    is told of each chart drawn and each file written."""
    plan = chart_plan(data)
    steps = len(plan) + 1 + (pdf_path is not None)
    tell = progress or (lambda _what, _done, _total: None)
    drawn, images = [], {}
    for number, (key, draw) in enumerate(plan):
        tell(f"chart {number + 1} of {len(plan)}: {_caption(key)}", number, steps)
        figure = draw()
        drawn.append((key, figure))
        # Laid out once (charts.laid_out): the page's SVG and the PDF draw it where it is.
        images[key] = _embedded(figure)
    tell("writing the page", len(plan), steps)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    with written_whole(html_path) as partial_file:  # never a half-written report
        partial_file.write_text(render_html(data, images), encoding="utf-8")
    if pdf_path is not None:
        tell("writing the PDF", len(plan) + 1, steps)
        pdf_path.parent.mkdir(parents=True, exist_ok=True)
        with written_whole(pdf_path) as partial_file:
            write_pdf(data, drawn, partial_file)
    tell("done", steps, steps)
    return ReportFiles(html=html_path, pdf=pdf_path, charts=len(drawn))
