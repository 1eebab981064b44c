"""The session report: one self-contained HTML file (charts embedded, no network), and
optionally the charts as a multi-page PDF.

:func:`collect` gathers what the report shows from a rescored store; :func:`figures`
draws the charts; :func:`render_html` writes the page, every name and value escaped.
:func:`write_report` does all three.
"""

from __future__ import annotations

import base64
import html
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from ofcstats import pipeline, session, stats
from ofcstats.errors import StoreError
from ofcstats.report import charts
from ofcstats.store import Store

__all__ = ["ReportData", "collect", "figures", "render_html", "write_report"]


@dataclass
class ReportData:
    """Everything the report shows, already computed."""

    scored: pl.DataFrame  # one row per ruleset, hand and seat (filters applied)
    ruleset: str  # the ruleset the summary and the player-style charts use
    players: pl.DataFrame  # player statistics, per player and ruleset, with money
    rulesets: pl.DataFrame  # ruleset statistics
    differences: pl.DataFrame  # reported points that differ from the re-score
    database: str = ""
    filters: dict[str, str] = field(default_factory=dict)
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))


def default_ruleset(scored: pl.DataFrame) -> str:
    """The ruleset most hands were played under, when it was scored; else american, else
    the first scored."""
    names = set(scored.get_column("ruleset").unique().to_list())
    played = scored.filter(pl.col("played_ruleset").is_in(list(names))).group_by(
        "played_ruleset").agg(pl.col("hand_key").n_unique().alias("hands")).sort(
        "hands", descending=True)
    if played.height:
        return str(played.item(0, "played_ruleset"))
    return "american" if "american" in names else sorted(names)[0]


COLUMNS = tuple(dict.fromkeys([
    *stats.PLAYER_COLUMNS, *stats.RULESET_COLUMNS, "hand_id", "seat", "played_ruleset",
    "reported_points", "point_value", "order", "game",
]))
"""What the report reads of each result: the statistics', the charts' and the checks'."""


def collect(store: Store, filters: pipeline.Filters | None = None,
            ruleset: str | None = None, seed: int = 7) -> ReportData:
    """Read and compute what the report needs from a rescored store."""
    filters = filters or pipeline.Filters()
    scored = pipeline.scored_frame(store, filters, COLUMNS, categorical=True)
    if scored.is_empty():
        raise StoreError("no scored hands match: run ofcstats rescore, or loosen the filters")
    main = ruleset or default_ruleset(scored)
    scored_under = sorted(scored.get_column("ruleset").unique().to_list())
    if main not in scored_under:
        raise StoreError(f"not scored under {main}: run ofcstats rescore --ruleset {main}")
    known = pipeline.stored_rulesets(store, scored_under)
    money = session.money_by_player(scored, known)
    players = stats.player_stats(scored, seed=seed).join(money, on=["player", "ruleset"],
                                                         how="left")
    shown = {k: v for k, v in (
        ("sessions", ", ".join(filters.sessions or [])),
        ("players", ", ".join(filters.players or [])),
        ("variants", ", ".join(filters.variants or [])),
        ("since", filters.since.isoformat() if filters.since else ""),
        ("until", filters.until.isoformat() if filters.until else ""),
    ) if v}
    return ReportData(scored=scored, ruleset=main, players=players,
                      rulesets=stats.ruleset_stats(scored),
                      differences=stats.reported_differences(scored),
                      database=str(store.path), filters=shown)


def figures(data: ReportData) -> list[tuple[str, Figure]]:
    """Every chart of the report, with its caption, in page order."""
    drawn = [
        ("cumulative", charts.cumulative_points(data.scored, data.ruleset)),
        ("distribution", charts.points_distribution(data.scored)),
        ("skill", charts.skill_signal(data.rulesets)),
        ("styles", charts.style_map(data.players, data.ruleset)),
        ("royalties", charts.royalties_by_row(data.players, data.ruleset)),
    ]
    for player in _players(data):
        drawn.append((f"player:{player}", charts.player_under_rulesets(data.scored, player)))
    return drawn


def _players(data: ReportData) -> list[str]:
    main = data.players.filter(pl.col("ruleset") == data.ruleset)
    return main.sort("total", descending=True).get_column("player").to_list()


def _png(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _cell(value: object, decimals: int = 2) -> str:
    if value is None:
        return "&ndash;"
    if isinstance(value, float):
        text = f"{value:,.{decimals}f}" if abs(value) < 1000 else f"{value:,.0f}"
        return html.escape(text)
    if isinstance(value, int) and not isinstance(value, bool):
        return html.escape(f"{value:,}")
    return html.escape(str(value))


def _table(frame: pl.DataFrame, columns: Sequence[tuple[str, str]]) -> str:
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label in columns)
    body = []
    for row in frame.iter_rows(named=True):
        cells = "".join(
            f"<td>{_cell(row.get(name), 1 if label.endswith('%') else 2)}</td>"
            for name, label in columns)
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _image(png: str, alt: str) -> str:
    return (f'<figure><img src="data:image/png;base64,{png}" alt="{html.escape(alt)}">'
            f"<figcaption>{html.escape(alt)}</figcaption></figure>")


def _percent(frame: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    """Rates as percentages, for the columns the frame has."""
    return frame.with_columns([(pl.col(c) * 100).round(1) for c in columns
                               if c in frame.columns])


PLAYER_COLUMNS = (("player", "player"), ("hands", "hands"), ("total", "points"),
                  ("mean", "per hand"), ("ci_low", "95% low"), ("ci_high", "95% high"),
                  ("boot_low", "bootstrap low"), ("boot_high", "bootstrap high"),
                  ("sd", "SD"), ("money", "money"), ("foul_rate", "fouls %"),
                  ("fantasyland_entry_rate", "FL entry %"),
                  ("fantasyland_stay_rate", "FL stay %"), ("scoop_rate", "scoops %"),
                  ("hands_for_1", "hands for ±1"))
RULESET_COLUMNS = (("skill_rank", "rank"), ("ruleset", "ruleset"), ("hands", "hands"),
                   ("sd", "SD per hand"), ("mean_abs_points", "mean |points|"),
                   ("royalty_share", "royalties %"), ("foul_rate", "fouls %"),
                   ("fantasyland_entry_rate", "FL entry %"),
                   ("skill_signal", "skill signal"),
                   ("hands_to_tell_apart", "hands to tell players apart"))
_RATES = ("foul_rate", "fantasyland_entry_rate", "fantasyland_stay_rate", "scoop_rate",
          "royalty_share")

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1100px;padding:0 1rem;color:#222;line-height:1.45}
h1{margin-bottom:.2rem}h2{border-bottom:2px solid #0072B2;padding-bottom:.2rem;margin-top:2.4rem}
.meta{color:#555;font-size:.9rem}
table{border-collapse:collapse;font-size:.86rem;margin:.8rem 0;display:block;overflow-x:auto}
th,td{padding:.3rem .55rem;border-bottom:1px solid #e3e3e3;text-align:right;white-space:nowrap}
th{background:#f2f6fa}td:first-child,th:first-child{text-align:left}
figure{margin:1rem 0}img{max-width:100%;height:auto}figcaption{color:#555;font-size:.85rem}
.note{background:#f7f7f2;border-left:4px solid #E69F00;padding:.6rem 1rem}
"""


def _methodology() -> str:
    """The definitions in :mod:`ofcstats.stats`, so the page and the code cannot disagree."""
    text = (stats.__doc__ or "").split("Definitions", 1)[-1]
    items = re.split(r"\n- ", text)[1:]
    bullets = []
    for item in items:
        clean = " ".join(item.split()).replace("``", "")
        clean = re.sub(r"\*(.+?)\*", r"\1", clean)
        bullets.append(f"<li>{html.escape(clean)}</li>")
    return "<ul>" + "".join(bullets) + "</ul>"


def render_html(data: ReportData, images: dict[str, str]) -> str:
    """The page: summary, charts, the ruleset comparison, a section per player, checks,
    methodology. ``images`` maps a chart's key (see :func:`figures`) to its PNG, base64."""
    esc = html.escape
    main = _percent(data.players.filter(pl.col("ruleset") == data.ruleset).sort(
        "total", descending=True), _RATES)
    hands = data.scored.get_column("hand_key").n_unique()
    sessions = data.scored.get_column("session_id").n_unique()
    filters = "; ".join(f"{k}: {v}" for k, v in data.filters.items()) or "none"
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>ofcstats report: {esc(data.ruleset)}</title><style>{CSS}</style></head><body>",
        "<h1>ofcstats session report</h1>",
        f"<p class=\"meta\">Generated {esc(data.generated_at.strftime('%Y-%m-%d %H:%M UTC'))}"
        f" from {esc(data.database)}: {hands:,} hands in {sessions:,} sessions, "
        f"{data.scored.get_column('ruleset').n_unique()} rulesets. Filters: {esc(filters)}."
        f" Summary ruleset: <strong>{esc(data.ruleset)}</strong>.</p>",
        "<h2>Summary</h2>",
        _table(main, PLAYER_COLUMNS),
        _image(images["cumulative"], f"Cumulative points per player under {data.ruleset}, "
               "with the band two standard deviations of luck alone would fill"),
        "<h2>Scoring systems compared</h2>",
        "<p>The same hands under every ruleset: how volatile each is, how much of the money "
        "royalties move, and how many hands it takes before the better player shows.</p>",
        _table(_percent(data.rulesets, _RATES), RULESET_COLUMNS),
        _image(images["distribution"], "Points per hand under each ruleset"),
        _image(images["skill"], "Rulesets ranked by skill signal"),
        "<h2>Player styles</h2>",
        _image(images["styles"], "Foul rate against fantasyland entry rate per player"),
        _image(images["royalties"], "Royalties collected per hand, by row"),
    ]
    for player in _players(data):
        rows = _percent(data.players.filter(pl.col("player") == player).sort(
            "mean", descending=True), _RATES)
        columns = [("ruleset", "ruleset"), *PLAYER_COLUMNS[1:]]
        parts += [f"<h2>Player: {esc(player)}</h2>", _table(rows, columns),
                  _image(images[f"player:{player}"],
                         f"{player}: cumulative points under each ruleset")]
    parts.append("<h2>Checks against the logs</h2>")
    if data.differences.is_empty():
        parts.append("<p>Every logged <code>reported_points</code> agrees with the re-score "
                     "under the ruleset played (or the logs give none).</p>")
    else:
        parts.append(f"<p class=\"note\">{data.differences.height:,} seat results differ "
                     "from the points the log reported: a site's scoring quirk or a logging "
                     "error.</p>")
        parts.append(_table(data.differences.head(200), [(c, c) for c in
                                                          data.differences.columns]))
    parts += [
        "<h2>Methodology</h2>",
        "<p>Every hand is scored from its final boards under every ruleset (docs/rules.md): "
        "pairwise, each seat against each opponent; fouls, royalties, the Finnish spade "
        "bonus and the Russian table bonus as each ruleset defines them; fantasyland "
        "repeats limited within a session. Money is points times the point value, a "
        "player's loss in one game (an orbit of the button) capped where the ruleset says, "
        "the shortfall taken from that game's winners pro rata.</p>",
        _methodology(),
        "</body></html>",
    ]
    return "\n".join(parts)


@dataclass(frozen=True)
class ReportFiles:
    """What :func:`write_report` wrote."""

    html: Path
    pdf: Path | None
    charts: int


def write_report(data: ReportData, html_path: Path, pdf_path: Path | None = None
                 ) -> ReportFiles:
    """Draw the charts and write the HTML page (and the PDF of the charts)."""
    drawn = figures(data)
    images = {key: _png(figure) for key, figure in drawn}
    html_path.parent.mkdir(parents=True, exist_ok=True)
    partial = html_path.with_name(html_path.name + ".partial")
    partial.write_text(render_html(data, images), encoding="utf-8")
    partial.replace(html_path)  # never a half-written report under the real name
    if pdf_path is not None:
        pdf_path.parent.mkdir(parents=True, exist_ok=True)
        partial_pdf = pdf_path.with_name(pdf_path.name + ".partial")
        with PdfPages(partial_pdf) as pdf:
            for _, figure in drawn:
                pdf.savefig(figure, bbox_inches="tight")
        partial_pdf.replace(pdf_path)
    return ReportFiles(html=html_path, pdf=pdf_path, charts=len(drawn))
