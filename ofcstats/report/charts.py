"""The report's charts, one function per chart, each returning a matplotlib ``Figure``.

One style for all (:func:`style`): the Okabe-Ito palette, which stays distinguishable
for the common forms of colour blindness, light grid, labelled axes with units, and
titles that say what to read off the chart. Figures are built with the object API
(no pyplot state), so charts can be drawn from threads and notebooks alike.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import matplotlib as mpl
import numpy as np
import PIL.Image
import polars as pl
from adjustText import adjust_text
from cycler import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from ofcstats.rows import ROW_NAMES
from ofcstats.sanitize import visible

# Okabe & Ito (2008), "Color Universal Design": seven hues and black.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000")
_RC: dict[str, Any] = {
    "axes.prop_cycle": cycler(color=PALETTE),
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    # Type sized for the width a chart is drawn at (WIDTH): scaled to the 370 px a phone
    # of 390 px leaves it, the smallest text (9.5 pt) is still 10 px; the vector charts
    # zoom sharp from there.
    "axes.titlesize": 11.5,
    "axes.titleweight": "bold",
    "figure.titlesize": 11.5,
    "axes.labelsize": 10,
    "xtick.labelsize": 9.5,
    "ytick.labelsize": 9.5,
    "legend.fontsize": 9.5,
    "legend.title_fontsize": 9.5,
    "legend.frameon": True,
    "legend.framealpha": 0.85,
    "legend.edgecolor": "#dddddd",
    "figure.dpi": 110,
    "savefig.bbox": "tight",
    "font.family": "DejaVu Sans",
    # SVG text as text (the page's fonts draw it; a tenth of the size of outlines).
    "svg.fonttype": "none",
    "svg.hashsalt": "ofcstats",  # the same ids in every file: same inputs, same bytes
    "svg.id": "chart",
    # Plain numbers on the axes: no "1e6" offsets or scientific notation.
    "axes.formatter.useoffset": False,
    "axes.formatter.limits": (-9, 12),
    "axes.formatter.use_locale": False,
}


NAME_CHARACTERS = 24
"""The most of a player's name a chart shows (the tables show it whole): a longer one
would widen a legend past a phone's screen and leave its chart no room to draw in."""


def _name(player: str) -> str:
    """A player's name as a chart shows it: control and bidi characters escaped
    (:func:`ofcstats.sanitize.visible`), cut to :data:`NAME_CHARACTERS` with an ellipsis,
    ``$`` not read as the start of mathematics.

    >>> _name("a" * 30)
    'aaaaaaaaaaaaaaaaaaaaaaa…'
    """
    shown = visible(player)
    if len(shown) > NAME_CHARACTERS:
        shown = shown[:NAME_CHARACTERS - 1] + "…"
    return shown.replace("$", r"\$")


@contextmanager
def style() -> Iterator[None]:
    """The report's matplotlib style, for the charts drawn inside the block."""
    with mpl.rc_context(_RC):  # type: ignore[arg-type]
        yield


_DASHES = ("-", "--", ":", "-.")


def _colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _line(index: int) -> dict[str, Any]:
    """Colour and dash for the index-th line: past eight lines the dash tells them apart."""
    return {"color": _colour(index), "linestyle": _DASHES[(index // len(PALETTE)) % 4]}


WIDTH = 4.8
"""The width of a chart, in inches: the report's one figure width, narrow enough that a
phone's screen shows it whole with its text legible (:data:`SMALLEST`); a wider screen
shows it larger."""
NOTE = 9.5
"""The size of a chart's notes (what the marker area or the bars mean), in points."""
SMALLEST = 9.5
"""The smallest text of a chart, in points (tick labels, notes, legends)."""


def wrapped(text: str, size: float, width: float = WIDTH - 0.9) -> str:
    """``text`` broken into lines that fit ``width`` inches at ``size`` points (a
    character taken as 0.62 of the size; by default the width of the axes a title is
    centred over), each line of it on its own.

    >>> wrapped("points per hand under each ruleset of the variant", 11.5, 2.4)
    'points per hand under\\neach ruleset of the\\nvariant'
    """
    chars = max(12, int(width * 72 / (size * 0.62)))
    return "\n".join(textwrap.fill(line, chars) for line in text.split("\n"))


def titled(axes: Any, text: str) -> None:
    """The axes' title, wrapped to the chart's width (:func:`wrapped`)."""
    axes.set_title(wrapped(text, mpl.rcParams["axes.titlesize"]))


def suptitled(figure: Figure, text: str) -> None:
    """The figure's title over its panels, wrapped to the figure's width: two lines at
    most for the titles the report gives (the room :func:`_grid` leaves above)."""
    size = mpl.rcParams["figure.titlesize"]
    figure.suptitle(wrapped(text, size, WIDTH - 0.2), fontweight="bold", fontsize=size)


def _legend(axes: Any, count: int, **kwargs: Any) -> None:
    """The legend inside the axes, where it hides least (two columns past six entries):
    a legend beside the axes would widen the chart past a phone's screen."""
    axes.legend(loc="best", ncols=1 if count <= 6 else 2, **kwargs)


class NoChart(Figure):
    """A chart with nothing to draw: its title and why, which the report prints as one
    line of text instead of an empty frame (shown as a figure, the same line)."""

    def __init__(self, title: str, why: str) -> None:
        super().__init__(figsize=(WIDTH, 1.0))
        self.title, self.why = title, why
        axes = self.subplots()
        axes.set_axis_off()
        axes.text(0.0, 0.5, f"{title}: {why}", ha="left", va="center", fontsize=NOTE + 1,
                  color="#555555")


def _empty(title: str, why: str) -> Figure:
    return NoChart(title, why)


def laid_out(figure: Figure) -> Bbox:
    """Lay ``figure`` out once and keep it so: its layout engine run (one dry drawing, no
    pixels), then switched off, and the box its ink fills (with the usual 0.1 inch of
    margin), in inches, remembered. Every later drawing (:func:`svg`, :func:`pixels`)
    reuses both instead of laying the chart out again and measuring it by a dry drawing
    of its own: a chart written as SVG and for the PDF is laid out once, not four times."""
    box = getattr(figure, "_ofcstats_box", None)
    if box is None:
        with style():
            renderer = FigureCanvasAgg(figure).get_renderer()
            figure.draw_without_rendering()
            box = figure.get_tightbbox(renderer).padded(mpl.rcParams["savefig.pad_inches"])
        figure.set_layout_engine("none")
        figure._ofcstats_box = box  # type: ignore[attr-defined]
    return box


def svg(figure: Figure) -> str:
    """The figure as an SVG document (text kept as text, no timestamp): the report's
    charts, sharp at any zoom on any screen. Laid out once (:func:`laid_out`); what
    draws raster (the grey lines of small multiples) at :data:`SVG_RASTER_DPI`."""
    box = laid_out(figure)
    buffer = io.StringIO()
    with style():
        figure.savefig(buffer, format="svg", bbox_inches=box, dpi=SVG_RASTER_DPI,
                       metadata={"Date": None, "Creator": None})
    return buffer.getvalue()


SVG_RASTER_DPI = 110
"""The resolution of what a chart's SVG draws raster (the small multiples' grey lines,
behind): about a pixel a dot where the page shows the chart, on a desktop's screen as
on a phone's of three pixels a CSS pixel (the chart about 390 px wide there)."""
PDF_DPI = 200
"""The resolution of a chart in the PDF (:func:`pixels`): about 240 dots an inch at the
width of an A4 page."""


def pixels(figure: Figure, dpi: int = PDF_DPI) -> np.ndarray:
    """The figure drawn as pixels (rows, columns, RGBA in ``uint8``), cropped as
    :func:`svg` crops it: what the PDF places on its pages."""
    box = laid_out(figure)
    buffer = io.BytesIO()
    with style():
        # The least compression: the PNG is read back at once, never stored.
        figure.savefig(buffer, format="png", dpi=dpi, bbox_inches=box,
                       pil_kwargs={"compress_level": 0})
    with PIL.Image.open(buffer) as image:
        return np.asarray(image.convert("RGBA"))


def _grid(count: int, panel_height: float, shared: bool = False) -> tuple[Figure, Any]:
    """A figure of ``count`` small panels, two to a line (small multiples); ``shared``:
    on the same scales, the numbers on the outer axes only (a panel with none below it
    keeps its own)."""
    columns = min(2, count)
    lines = -(-count // columns)
    height = panel_height * lines + 1.0
    if shared:
        # Margins set, not solved for: with the numbers on the outer axes only, what lies
        # between two panels is a panel's title (or, below one with none under it, its
        # numbers); the margins outside are cropped to the ink. Constrained layout would
        # measure every label of every panel twice (half the time of such a chart).
        inch_w, inch_h = 1 / WIDTH, 1 / height
        panel = (height - 1.5 - 0.45 * (lines - 1)) / lines
        grid_kw = {"left": 1.0 * inch_w, "right": 1 - 0.15 * inch_w, "top": 1 - 0.95 * inch_h,
                   "bottom": 0.55 * inch_h, "hspace": 0.45 / panel,
                   "wspace": 0.4 / ((WIDTH - 1.15 - 0.4 * (columns - 1)) / columns)}
        figure = Figure(figsize=(WIDTH, height))
        grid = figure.subplots(lines, columns, squeeze=False, sharex=True, sharey=True,
                               gridspec_kw=grid_kw)
    else:
        figure = Figure(figsize=(WIDTH, height), layout="constrained")
        grid = figure.subplots(lines, columns, squeeze=False)
    for axes in grid.flat[count:]:
        axes.set_axis_off()
    if shared:
        for axes in grid.flat[max(count - columns, 0):count]:
            axes.xaxis.set_tick_params(labelbottom=True)
    return figure, grid


POINTS = 300
"""The most points a curve is drawn with: more than a chart's width shows apart (its
first and last kept), so the SVG of a long session stays small."""


def _curves(running: pl.DataFrame, key: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per value of ``key``, the hands played and the running total at each point (at
    most :data:`POINTS` of them, evenly spaced in hands)."""
    return {str(name): _thin(part.get_column("hands").to_numpy(),
                             part.get_column("points").to_numpy(), POINTS)
            for (name,), part in running.group_by(key, maintain_order=True)}


def _thin(hands: np.ndarray, points: np.ndarray, most: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``most`` points of a curve, evenly spaced, its first and last kept."""
    if len(hands) <= most:
        return hands, points
    keep = np.unique(np.linspace(0, len(hands) - 1, most).round().astype(np.intp))
    return hands[keep], points[keep]


def cumulative_points(running: pl.DataFrame, ruleset: str, sigma: float) -> Figure:
    """Each player's running total over their hands, with the ±2 SD band of pure luck.

    ``running`` is :func:`ofcstats.analysis.running_totals` of one variant. The band is
    ``±2 σ √n`` around zero, σ being the SD of points per hand under the ruleset: a
    player whose curve leaves it is winning (or losing) by more than luck would usually
    give.
    """
    title = f"Cumulative points per player ({ruleset})"
    rows = running.filter(pl.col("ruleset") == ruleset)
    if rows.is_empty():
        return _empty(title, f"no hands scored under {ruleset}")
    curves = _curves(rows, "player")
    players = sorted(curves, key=lambda p: (-int(curves[p][1][-1]), p))
    lengths = [int(curves[p][0][-1]) for p in players]
    with style():
        if len(curves) > 1 and max(lengths) > UNEVEN * min(lengths):
            return _small_multiples(title, players, [curves[p] for p in players], sigma)
        figure = Figure(figsize=(WIDTH, 4.2), layout="constrained")
        axes = figure.subplots()
        for index, player in enumerate(players):
            hands, curve = curves[player]
            axes.plot(hands, curve, linewidth=1.4, label=f"{_name(player)} ({int(curve[-1]):+,})",
                      **_line(index))
        _luck_band(axes, max(lengths), sigma)
        titled(axes, title)
        axes.set_xlabel("hands played")
        axes.set_ylabel("points")
        _legend(axes, len(players) + 1)
    return figure


UNEVEN = 2
"""Past this ratio between the most and the fewest hands a player played, the running
totals are drawn one panel a player, each on its own scale: on one axis the short
curves would be squashed into the corner."""


def _luck_band(axes: Any, hands: int, sigma: float) -> None:
    n = np.arange(0, hands + 1)
    band = 2 * sigma * np.sqrt(n)
    axes.fill_between(n, -band, band, color="#999999", alpha=0.18, linewidth=0,
                      label="±2 SD of luck alone")
    axes.axhline(0, color="#666666", linewidth=0.8)


def _small_multiples(title: str, players: list[str],
                     curves: list[tuple[np.ndarray, np.ndarray]], sigma: float) -> Figure:
    figure, grid = _grid(len(players), 2.4)
    for index, axes in enumerate(grid.flat[:len(players)]):
        hands, curve = curves[index]
        axes.plot(hands, curve, linewidth=1.3, **_line(index))
        _luck_band(axes, int(hands[-1]), sigma)
        axes.set_title(f"{_name(players[index])}\n{int(curve[-1]):+,} in {int(hands[-1]):,} "
                       "hands", fontsize=NOTE + 1, fontweight="normal")
        axes.set_xlabel("hands played", fontsize=NOTE)
        axes.set_ylabel("points", fontsize=NOTE)
    suptitled(figure, f"{title}: one panel a player (grey: ±2 SD of luck alone)")
    return figure


def player_under_rulesets(running: pl.DataFrame, player: str) -> Figure:
    """One player's running total under every scored ruleset: same cards, other money.
    ``running`` is :func:`ofcstats.analysis.running_totals` of one variant.

    Up to :data:`FEW_LINES` rulesets share one axis; past that, one panel a ruleset,
    its line in colour over the others in grey, every panel on the same scale."""
    title = f"{_name(player)}: cumulative points under each ruleset"
    rows = running.filter(pl.col("player") == player)
    if rows.is_empty():
        return _empty(title, f"no hands for {_name(player)}")
    curves = _curves(rows, "ruleset")
    order = sorted(curves, key=lambda r: (-int(curves[r][1][-1]), r))
    with style():
        if len(order) > FEW_LINES:
            return _highlighted(title, order, curves)
        figure = Figure(figsize=(WIDTH, 4.0), layout="constrained")
        axes = figure.subplots()
        for index, ruleset in enumerate(order):
            hands, points = curves[ruleset]
            axes.plot(hands, points, linewidth=1.2, label=f"{ruleset} ({int(points[-1]):+,})",
                      **_line(index))
        axes.axhline(0, color="#666666", linewidth=0.8)
        titled(axes, title)
        axes.set_xlabel("hands played")
        axes.set_ylabel("points")
        _legend(axes, len(order))
    return figure


FEW_LINES = 4
"""Past this many lines on one axis, :func:`player_under_rulesets` draws small multiples."""
PANEL_POINTS = 150
"""The most points of a small multiple's curve in colour (its grey ones: half)."""


def _highlighted(title: str, order: list[str],
                 curves: dict[str, tuple[np.ndarray, np.ndarray]]) -> Figure:
    """One panel per curve of ``curves`` (in ``order``): it in colour, the rest in grey."""
    figure, grid = _grid(len(order), 1.6, shared=True)
    low = min(float(c[1].min()) for c in curves.values())
    high = max(float(c[1].max()) for c in curves.values())
    pad = 0.05 * (high - low or 1.0)
    # A panel is a third of the width: fewer points draw it as well (a smaller SVG).
    grey = {name: np.column_stack(_thin(*curves[name], PANEL_POINTS // 2)) for name in order}
    for index, (axes, name) in enumerate(zip(grid.flat, order, strict=False)):
        # The others in grey, behind: one collection drawn raster (in the SVG, an image
        # per panel instead of a path per curve; the text and the coloured curve stay
        # vector).
        axes.add_collection(LineCollection([grey[other] for other in order if other != name],
                                           colors="#c8c8c8", linewidths=0.8, zorder=1.5,
                                           rasterized=True))
        hands, points = _thin(*curves[name], PANEL_POINTS)
        axes.plot(hands, points, color=_colour(0), linewidth=1.6)
        axes.axhline(0, color="#666666", linewidth=0.6)
        axes.set_ylim(low - pad, high + pad)
        axes.set_title(f"{name} ({int(points[-1]):+,})", fontsize=NOTE + 2,
                       fontweight="normal")
        if index % grid.shape[1] == 0:
            axes.set_ylabel("points", fontsize=NOTE)
        if index >= len(order) - grid.shape[1]:
            axes.set_xlabel("hands played", fontsize=NOTE)
    suptitled(figure, f"{title} (grey: the other rulesets)")
    return figure


def _percentile(values: np.ndarray, before: np.ndarray, q: float) -> float:
    """numpy's linear percentile of values repeated as counted: ``before`` holds, for each
    distinct value in ascending order, how many values come before its last copy + 1."""
    n = int(before[-1])
    virtual = (n - 1) * (q / 100)
    low = int(np.floor(virtual))
    t = virtual - low
    a = float(values[np.searchsorted(before, low, side="right")])
    b = float(values[np.searchsorted(before, min(low + 1, n - 1), side="right")])
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


def box_stats(histogram: pl.DataFrame, whis: tuple[float, float] = (1, 99)
              ) -> dict[str, Any]:
    """What matplotlib's ``boxplot_stats`` gives for the points a histogram counts
    (``points``, ``seats``): quartiles, and whiskers at the ``whis`` percentiles."""
    part = histogram.sort("points")
    values = part.get_column("points").to_numpy()
    before = np.cumsum(part.get_column("seats").to_numpy())
    q1, med, q3 = (_percentile(values, before, q) for q in (25, 50, 75))
    low, high = (_percentile(values, before, q) for q in whis)
    below = values[values <= high]
    above = values[values >= low]
    return {"med": med, "q1": q1, "q3": q3,
            "whishi": q3 if len(below) == 0 or below.max() < q3 else float(below.max()),
            "whislo": q1 if len(above) == 0 or above.min() > q1 else float(above.min()),
            "fliers": np.array([])}


def points_distribution(histogram: pl.DataFrame, spread: pl.DataFrame) -> Figure:
    """Points per hand under each ruleset, widest spread first: the variance comparison.
    ``histogram`` is :func:`ofcstats.analysis.points_histogram` of one variant, ``spread``
    its rulesets' ``sd`` (:func:`ofcstats.stats.ruleset_stats`)."""
    title = "Points per hand by ruleset (box: middle half; whiskers: 1st-99th percentile)"
    if histogram.is_empty():
        return _empty(title, "no hands scored")
    spread = spread.select("ruleset", "sd").sort(["sd", "ruleset"], descending=[True, False],
                                                 nulls_last=True)
    names = spread.get_column("ruleset").to_list()
    boxes = [box_stats(histogram.filter(pl.col("ruleset") == name)) for name in names]
    with style():
        figure = Figure(figsize=(WIDTH, 0.55 * len(names) + 1.9), layout="constrained")
        axes = figure.subplots()
        parts = axes.bxp(boxes, orientation="horizontal", showfliers=False,
                         patch_artist=True, widths=0.6)
        for index, box in enumerate(parts["boxes"]):
            box.set_facecolor(_colour(index))
            box.set_alpha(0.55)
        for median in parts["medians"]:
            median.set_color("#000000")
        labels = [f"{name}\nSD {sd:.1f}" if sd is not None else f"{name}\none hand"
              for name, sd in spread.iter_rows()]
        axes.set_yticks(range(1, len(names) + 1), labels)
        axes.invert_yaxis()
        axes.axvline(0, color="#666666", linewidth=0.8)
        titled(axes, title)
        axes.set_xlabel("points per hand (one seat)")
    return figure


def style_map(player_stats: pl.DataFrame, ruleset: str) -> Figure:
    """Foul rate against fantasyland entry rate per player; marker area by hands played."""
    title = f"Player styles: fouls against fantasyland ({ruleset})"
    rows = _style_rows(player_stats, ruleset)
    if rows.is_empty():
        return _empty(title, f"no player under {ruleset} had a hand with fantasyland to enter")
    with style():
        figure = Figure(figsize=(WIDTH, 4.4), layout="constrained")
        _draw_style_map(figure, figure.subplots(), rows, title)
    return figure


def _style_rows(player_stats: pl.DataFrame, ruleset: str) -> pl.DataFrame:
    # Players of 13-card Chinese poker only have no fantasyland to enter.
    return player_stats.filter((pl.col("ruleset") == ruleset)
                               & pl.col("fantasyland_entry_rate").is_not_null())


def _draw_style_map(figure: Figure, axes: Any, rows: pl.DataFrame, title: str,
                    players: list[str] | None = None) -> None:
    """The style map of ``rows`` on ``axes``; each player in the colour of its place in
    ``players`` when given (as in a chart beside it), else of its row."""
    hands = rows.get_column("hands").to_numpy().astype(float)
    sizes = 40 + 400 * hands / hands.max()
    fouls = rows.get_column("foul_rate").to_numpy() * 100
    entries = rows.get_column("fantasyland_entry_rate").to_numpy() * 100
    labels = []
    for index, (player, x, y, size) in enumerate(zip(rows.get_column("player"), fouls,
                                                     entries, sizes, strict=True)):
        colour = _colour(players.index(player) if players else index)
        # Not clipped: a marker at a rate of 0 stays whole over the axis.
        axes.scatter([x], [y], s=size, color=colour, alpha=0.75, edgecolors="#333333",
                     linewidths=0.6, clip_on=False, zorder=3)
        labels.append(axes.text(x, y, _name(player), fontsize=NOTE + 1))
    titled(axes, title)
    # The note on the marker area under the axis title: never over a marker.
    axes.set_xlabel("foul rate (% of hands)\n(marker area: hands played)")
    axes.set_ylabel("fantasyland entry rate\n(% of eligible hands)")
    # Room for the largest marker inside the frame: rates start at 0, the axes just below.
    axes.set_xlim(-0.04 * max(float(fouls.max()), 1.0), 1.12 * max(float(fouls.max()), 1.0))
    axes.set_ylim(-0.04 * max(float(entries.max()), 1.0),
                  1.12 * max(float(entries.max()), 1.0))
    _spread_labels(figure, axes, labels, fouls, entries)


def _spread_labels(figure: Figure, axes: Any, labels: list[Any], x: np.ndarray,
                   y: np.ndarray) -> None:
    """Move the labels off each other and off the markers (adjustText), with a thin line
    to their point where they moved far."""
    FigureCanvasAgg(figure)  # adjustText measures the labels with a renderer
    adjust_text(labels, x=x, y=y, ax=axes, expand=(1.3, 1.6),
                arrowprops={"arrowstyle": "-", "color": "#888888", "lw": 0.6})


def ev_loss_by_street(streets: pl.DataFrame) -> Figure:
    """Mean EV loss per decision by street, a bar per player with its 95% interval
    (rows of :func:`ofcstats.review.summary.street_summary`, one variant)."""
    title = "EV loss per decision, by street"
    if streets.is_empty():
        return _empty(title, "no decisions reviewed: run ofcstats review")
    with style():
        figure = Figure(figsize=(WIDTH, 4.0), layout="constrained")
        _draw_ev_loss(figure.subplots(), streets, title)
    return figure


def ev_loss_beside_styles(streets: pl.DataFrame, player_stats: pl.DataFrame,
                          ruleset: str) -> Figure:
    """:func:`ev_loss_by_street` and, under it in one figure, the reviewed players on
    the :func:`style_map` (``player_stats`` under ``ruleset``), each player in one colour
    in both."""
    title = "EV loss per decision, by street"
    if streets.is_empty():
        return _empty(title, "no decisions reviewed: run ofcstats review")
    players = sorted(set(streets.get_column("player").to_list()))
    rows = _style_rows(player_stats, ruleset).filter(pl.col("player").is_in(players)) \
        .sort("player")
    with style():
        # One above the other: side by side, neither would be legible on a phone.
        figure = Figure(figsize=(WIDTH, 8.0), layout="constrained")
        left, right = figure.subplots(2, 1)
        _draw_ev_loss(left, streets, title)
        styles = f"The same players' styles ({ruleset})"
        if rows.is_empty():
            right.set_axis_off()
            right.text(0.5, 0.5, f"{styles}:\nno hand of theirs had fantasyland to enter",
                       ha="center", va="center", transform=right.transAxes)
        else:
            _draw_style_map(figure, right, rows, styles, players)
    return figure


def _draw_ev_loss(axes: Any, streets: pl.DataFrame, title: str) -> None:
    """The bars of :func:`ev_loss_by_street` on ``axes``."""
    labels = list(dict.fromkeys(streets.sort(pl.col("street").str.len_chars(), "street")
                                .get_column("street").to_list()))
    players = sorted(set(streets.get_column("player").to_list()))
    width = 0.8 / len(players)
    for index, player in enumerate(players):
        mine = streets.filter(pl.col("player") == player)
        at = {s: i for i, s in enumerate(labels)}
        x = np.array([at[s] for s in mine.get_column("street")]) + (index + 0.5) * width - 0.4
        mean = mine.get_column("mean_ev_loss").to_numpy()
        low = mean - mine.get_column("ci_low").to_numpy()
        high = mine.get_column("ci_high").to_numpy() - mean
        axes.bar(x, mean, width=width, color=_colour(index), label=_name(player),
                 yerr=np.stack([low, high]), capsize=2, error_kw={"linewidth": 0.8})
    axes.set_xticks(range(len(labels)), [s.replace("_", " ").replace("street ", "st ")
                                         .replace("fantasyland set", "FL set")
                                         for s in labels])
    titled(axes, title)
    axes.set_ylabel("points given up per decision")
    # The note on the bars as the legend's title: never a text over the bars.
    _legend(axes, len(players), title="bars: 95% interval\nof the mean",
            title_fontsize=NOTE, alignment="left")


def royalties_by_row(player_stats: pl.DataFrame, ruleset: str) -> Figure:
    """Mean royalties collected per hand, by row, per player."""
    title = f"Royalties collected per hand, by row ({ruleset})"
    rows = player_stats.filter(pl.col("ruleset") == ruleset).sort("player")
    if rows.is_empty():
        return _empty(title, f"no players under {ruleset}")
    collected = rows.select(pl.col(f"royalties_{r}").fill_null(0).abs().sum()
                            for r in ROW_NAMES).row(0)
    if not any(collected):
        return _empty(title, f"no royalties were collected under {ruleset}")
    players = rows.get_column("player").to_list()
    with style():
        figure = Figure(figsize=(WIDTH, 3.8), layout="constrained")
        axes = figure.subplots()
        width = 0.26
        x = np.arange(len(players))
        for index, row in enumerate(ROW_NAMES):
            values = rows.get_column(f"royalties_{row}").fill_null(0).to_numpy()
            axes.bar(x + (index - 1) * width, values, width, color=_colour(index), label=row)
        axes.set_xticks(x, [_name(p) for p in players],
                        rotation=30 if len(players) > 3 else 0,
                        ha="right" if len(players) > 3 else "center")
        titled(axes, title)
        axes.set_ylabel("points per hand")
        _legend(axes, 3, title="row")
    return figure


def skill_intervals(compared: pl.DataFrame) -> Figure:
    """Each ruleset's skill signal with its 95% interval (dot and whisker), in rank order,
    the skill groups shaded: rulesets in one band cannot be ranked by these hands
    (:func:`ofcstats.uncertainty.compare`); beside each whisker, the hands it takes to
    tell players one spread apart under the ruleset (``hands_to_tell_apart``, when
    ``compared`` has it). The report's one chart of the skill signal."""
    title = "Skill signal with its 95% interval; shaded bands: rulesets the hands cannot rank"
    rows = compared.filter(pl.col("skill_signal").is_not_null()
                           & pl.col("skill_group").is_not_null()).sort("skill_rank")
    if rows.is_empty():
        return _empty(title, f"needs at least two players with {30}+ hands under a ruleset")
    with style():
        figure = Figure(figsize=(WIDTH, 0.42 * rows.height + 2.6), layout="constrained")
        axes = figure.subplots()
        values = rows.get_column("skill_signal").to_numpy()
        low = rows.get_column("skill_signal_ci_low").fill_null(np.nan).to_numpy()
        high = rows.get_column("skill_signal_ci_high").fill_null(np.nan).to_numpy()
        groups = rows.get_column("skill_group").to_list()
        place = np.arange(rows.height)[::-1]  # the best at the top
        for group in sorted(set(groups)):
            where = place[[g == group for g in groups]]
            axes.axhspan(where.min() - 0.45, where.max() + 0.45, color=_colour(group - 1),
                         alpha=0.12, linewidth=0)
            # Inside the frame, at its right end: outside, it would widen the chart.
            axes.text(0.995, where.mean(), f"group {group}",
                      transform=axes.get_yaxis_transform(), ha="right", va="center",
                      fontsize=NOTE, color="#555555")
        errors = np.vstack([np.clip(values - low, 0, None), np.clip(high - values, 0, None)])
        axes.errorbar(values, place, xerr=np.nan_to_num(errors), fmt="o", color=_colour(0),
                      ecolor="#333333", capsize=3)
        axes.set_yticks(place, [visible(name) for name in rows.get_column("ruleset").to_list()])
        ends = np.where(np.isnan(high), values, high)
        starts = np.where(np.isnan(low), values, low)
        span = float(ends.max() - starts.min()) or 1.0
        hands = (rows.get_column("hands_to_tell_apart").to_list()
                 if "hands_to_tell_apart" in rows.columns else [None] * rows.height)
        for end, at, count in zip(ends, place, hands, strict=True):
            if count is not None:
                axes.annotate(f"{int(count):,} hands", (end, at), xytext=(6, 0),
                              textcoords="offset points", va="center", fontsize=NOTE)
        # Room on the right for the labels ("123,456 hands") and the group's name, inside.
        axes.set_xlim(float(starts.min()) - 0.05 * span, float(ends.max()) + 0.9 * span)
        titled(axes, title)
        # The groups come from paired differences (the same games under every ruleset),
        # far narrower than each ruleset's own interval drawn here.
        axes.set_xlabel(wrapped(
            "skill signal: spread of players' means, their luck taken out, / SD within "
            "players (95% interval: "
            "bootstrap over games)\ngroups: paired differences on the same games, narrower "
            "than each ruleset's own interval\nbeside each: the hands it takes to tell "
            "players apart (higher signal: fewer)", mpl.rcParams["axes.labelsize"]))
    return figure
