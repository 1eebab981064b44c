"""The Python API: one handle on a database, whose methods are the commands.

``ofcstats.open(path)`` opens a database read-only and returns a :class:`Club`; each
method answers what the command of the same name answers, with the command's options as
keyword arguments, and returns Polars frames holding the values the command prints with
``--format json`` (the same functions of :mod:`ofcstats.answers` compute both). Errors
are the commands' errors (:mod:`ofcstats.errors`), with the same one-line message.

>>> import ofcstats
>>> club = ofcstats.sample()
>>> club.players(session="pineapple-american-00001").get_column("player").to_list()
['bob', 'alice', 'carol']
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from ofcstats import analysis, answers, stats, uncertainty
from ofcstats import ingest as ingesting
from ofcstats.answers import Moment, Names, ReviewAnswer
from ofcstats.errors import StoreError, UsageError
from ofcstats.paths import written_whole
from ofcstats.pipeline import RescoreSummary
from ofcstats.rules import load_rulesets
from ofcstats.store import Store
from ofcstats.store.results import UNCHECKED_SCHEMA

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Charts", "Club", "Loaded", "Page", "ReviewAnswer", "open", "sample"]

_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_LOGS = _ROOT / "data" / "sample"
"""The sample logs shipped with the source tree (bots whose styles are known)."""
SAMPLE_RULESETS = (_ROOT / "data" / "rulesets" / "pineapple-progressive.toml",)
"""The rulesets the sample is scored under besides the presets."""


def open(path: Path | str, *, write: bool = False,
         wait: float | None = None) -> Club:
    """Open the database at ``path``: read-only (any number of readers share it), or for
    writing with ``write=True`` (which creates it if missing, for :meth:`Club.ingest`).
    ``wait``: seconds to wait for a program holding it (default ``$OFCSTATS_LOCK_WAIT``).

    >>> import ofcstats
    >>> ofcstats.open("no/such.duckdb")
    Traceback (most recent call last):
    ...
    ofcstats.errors.UsageError: no/such.duckdb: no such database; load hands with ofcstats ingest
    """
    return Club(path, write=write, wait=wait)


class Club:
    """A database opened by :func:`open`: the commands as methods, each returning frames.

    Readers: :meth:`compare`, :meth:`players`, :meth:`player`, :meth:`differences`,
    :meth:`hands`, :meth:`review`, :meth:`sql`, :meth:`info`, :meth:`replay` and the
    charts of :attr:`chart`. Writers (opened with ``write=True``): :meth:`ingest`,
    :meth:`rescore`, ``review(run=True)``. Close it with :meth:`close` or a ``with``
    block.

    >>> import ofcstats
    >>> with ofcstats.sample() as club:
    ...     club.writable
    False
    """

    def __init__(self, path: Path | str, *, write: bool = False,
                 wait: float | None = None) -> None:
        self.path = Path(path)
        self.writable = write
        self._wait = wait
        self._store: Store | None = answers.open_store(self.path, read_only=not write,
                                                       wait=wait, create=write)

    def __repr__(self) -> str:
        state = "closed" if self._store is None else \
            "writable" if self.writable else "read-only"
        return f"<ofcstats.Club {self.path} ({state})>"

    def __enter__(self) -> Club:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database (a writer's file is then free for others).

        >>> import ofcstats
        >>> club = ofcstats.sample()
        >>> club.close(); club  # doctest: +ELLIPSIS
        <ofcstats.Club ...sample.duckdb (closed)>
        """
        if self._store is not None:
            self._store.close()
            self._store = None

    @property
    def store(self) -> Store:
        """The open :class:`ofcstats.store.Store` beneath (for what no method answers).

        >>> import ofcstats
        >>> ofcstats.sample().store.count("hands")
        3250
        """
        if self._store is None:
            raise StoreError(f"{self.path}: the database is closed; open it again with "
                             "ofcstats.open(path)")
        return self._store

    def _writer(self, what: str) -> Store:
        if not self.writable:
            raise UsageError(f"{self.path}: opened read-only; to {what}, open it with "
                             "ofcstats.open(path, write=True)")
        return self.store

    # The questions: ``compare``, ``players``, ``player``.

    def compare(self, *, ruleset: Names = None, session: Names = None,
                since: Moment = None, until: Moment = None, variant: Names = None,
                player: Names = None, seed: int = uncertainty.SEED,
                resamples: int = uncertainty.RESAMPLES) -> pl.DataFrame:
        """The scoring systems side by side (``ofcstats compare``): per variant and
        ruleset, volatility, royalties, fouls, fantasyland and the skill signal, each with
        its 95% interval (``<stat>_ci_low``, ``<stat>_ci_high``), the skill groups, and the
        top two rulesets told apart or not (``top_two_*``).

        >>> import ofcstats
        >>> table = ofcstats.sample().compare(variant="pineapple")
        >>> table.filter(pl.col("ruleset") == "american").get_column("hands").item()
        1700
        """
        filters = answers.filters(ruleset, session, since, until, variant, player)
        return answers.comparison(self.store, filters, resamples=resamples,
                                  seed=seed).frame()

    def players(self, *, ruleset: str | None = None, session: Names = None,
                since: Moment = None, until: Moment = None, variant: Names = None,
                player: Names = None, seed: int = 7) -> pl.DataFrame:
        """Every player's results under one ruleset per variant (``ofcstats players``):
        points, spread, 95% intervals, money as the table settled it, fouls, fantasyland,
        scoops. ``ruleset``: the one to show (default: per variant, the one most of its
        hands were played under).

        >>> import ofcstats
        >>> ofcstats.sample().players(player="alice").select("variant", "hands").row(0)
        ('pineapple', 1000)
        """
        filters = answers.filters(None, session, since, until, variant, player)
        return answers.players(self.store, filters, ruleset, seed=seed)

    def player(self, name: str, *, ruleset: Names = None, session: Names = None,
               since: Moment = None, until: Moment = None, variant: Names = None,
               seed: int = 7) -> pl.DataFrame:
        """One player under every scored ruleset, per variant (``ofcstats player NAME``):
        results, money as the table settled it, style.

        >>> import ofcstats
        >>> ofcstats.sample().player("alice", ruleset="american").select("ruleset").item()
        'american'
        """
        filters = answers.filters(ruleset, session, since, until, variant, None)
        return answers.player(self.store, name, filters, seed=seed).table

    def differences(self, *, ruleset: Names = None, session: Names = None,
                    since: Moment = None, until: Moment = None, variant: Names = None,
                    player: Names = None) -> pl.DataFrame:
        """The seats whose logged points differ from the re-score under the ruleset
        played (``ofcstats player`` lists a player's under its table).

        >>> import ofcstats
        >>> ofcstats.sample().differences(variant="pineapple").height
        0
        """
        filters = answers.filters(ruleset, session, since, until, variant, player)
        return answers.differences(self.store, filters)

    def hands(self, *, player: Names = None, session: Names = None, since: Moment = None,
              until: Moment = None, variant: Names = None, ruleset: str | None = None,
              fouled: bool | None = None, fantasyland: bool | None = None,
              mistakes: bool | None = None, min_points: int | None = None,
              max_points: int | None = None, sort: str = "played", limit: int | None = None,
              per_player: int | None = None) -> pl.DataFrame:
        """The hand list (``ofcstats hands``): one row per hand and seat, with its points
        and money under one ruleset per variant (``ruleset`` where scored, else the one
        most of the variant's hands were played under), fouled, royalties, fantasyland
        and, once reviewed, the seat's ``ev_loss`` and ``mistakes`` (null when not).
        ``fouled``, ``fantasyland`` (played in or entered), ``mistakes``: True keeps the
        seats that did, False those that did not; ``min_points``/``max_points`` bound
        the points. ``sort``: ``played`` (play order), ``points`` (the biggest loss
        first) or ``ev_loss`` (the costliest first); ``limit`` rows at most,
        ``per_player`` rows at most of each player (with ``sort="points"``: each one's
        costliest hands). Replay them with :meth:`replay`.

        >>> import ofcstats
        >>> worst = ofcstats.sample().hands(player="alice", sort="points", limit=3)
        >>> worst.height, worst.get_column("points").is_sorted()
        (3, True)
        """
        filters = answers.filters(None, session, since, until, variant, player)
        return answers.hands(self.store, filters, ruleset, fouled=fouled,
                             fantasyland=fantasyland, mistakes=mistakes,
                             min_points=min_points, max_points=max_points, sort=sort,
                             limit=limit, per_player=per_player)

    # The decision review.

    def review(self, *, run: bool = False, player: Names = None, session: Names = None,
               since: Moment = None, until: Moment = None, hand: Names = None,
               ruleset: str | None = None, opponents: str = "drawn", rollouts: int = 256,
               seed: int = 0, fantasyland_value: float = 14.0, screen: int = 6,
               jobs: int | None = None) -> ReviewAnswer:
        """What each logged placement cost (``ofcstats review``), summed from the stored
        decisions under these settings: ``.players`` (EV loss per player and street),
        ``.mistakes``, ``.situations``, ``.streets``, ``.skipped``, ``.decisions``.
        With ``run=True`` (a database opened for writing) the chosen seats not yet
        reviewed under the settings are reviewed first, as the command does; ``hand``
        chooses hands by id.

        >>> import ofcstats
        >>> club = ofcstats.sample(write=True)
        >>> found = club.review(run=True, session="pineapple-american-00001", rollouts=16)
        >>> found.players.get_column("player").sort().to_list()
        ['alice', 'bob', 'carol']
        """
        settings = answers.review_settings(ruleset, rollouts, seed, fantasyland_value,
                                           screen, opponents)
        chosen = answers.selection(player, session, since, until, hand)
        store = self._writer("review hands") if run else self.store
        return answers.review(store, chosen, settings, run=run, jobs=jobs or 0)

    def replay(self, hand_id: str | Iterable[str] | None = None, *more: str,
               session: str | None = None, player: str | None = None,
               ruleset: str | None = None, opponents: str = "drawn", rollouts: int = 256,
               seed: int = 0, fantasyland_value: float = 14.0, screen: int = 6) -> Page:
        """Hands replayed on one page (``ofcstats replay``): one hand street by street,
        the play made and the best candidate with their expected points (the review's
        settings as keywords); several hands (ids, or a list of them such as a column of
        :meth:`hands`) or a whole ``session`` with the list of its hands on top, each
        replayed, and each player's running total; ``player`` follows that seat. Hand ids
        or a session, one or the other. The :class:`Page` shows itself in Jupyter and
        saves with ``.save(path)``.

        >>> import ofcstats
        >>> club = ofcstats.sample()
        >>> '<table class="street">' in club.replay("pineapple-american-00001-01",
        ...                                         rollouts=16).html
        True
        >>> club.replay(session="pineapple-american-00001", player="alice").name
        'pineapple-american-00001.html'
        """
        settings = answers.review_settings(ruleset, rollouts, seed, fantasyland_value,
                                           screen, opponents)
        given = [] if hand_id is None else [hand_id] if isinstance(hand_id, str) \
            else [str(h) for h in hand_id]
        page = answers.replay(self.store, [*given, *more], session, player, settings)
        return Page(page.html, page.name)

    # The database as it is: ``sql``, ``info``.

    def sql(self, query: str) -> pl.DataFrame:
        """The rows of one read-only SQL query (``ofcstats sql``) on the tables and views
        of the database (docs/database.md); a statement with no rows gives an empty frame.
        Unlike the command's, the query may read other files (``read_parquet(...)``), as
        any Python code may.

        >>> import ofcstats
        >>> ofcstats.sample().sql("SELECT count(*) AS hands FROM hands").item()
        3250
        """
        found = answers.sql(self.store, query, contained=False)
        return pl.DataFrame() if found is None else found

    def info(self) -> dict[str, Any]:
        """The database's tables with their row counts, sessions, players, dates, and per
        variant and ruleset how many hands are scored (``ofcstats db info --format
        json``).

        >>> import ofcstats
        >>> ofcstats.sample().info()["scoring_complete"]
        True
        """
        return self.store.info()

    # The writers: ``ingest``, ``rescore``.

    def ingest(self, paths: Path | str | Iterable[Path | str],
               rulesets: Names = None, *, input_format: str | None = None,
               load_changed: bool = False, update: bool = False,
               rescore: bool = True) -> Loaded:
        """Load hand logs (files, folders, patterns), each file in one transaction, then
        score what is not scored yet (``ofcstats ingest``), under ``rulesets`` too (preset
        names or TOML files) when given; ``rescore=False`` only loads.

        >>> import ofcstats, tempfile
        >>> club = ofcstats.open(tempfile.mkdtemp() + "/club.duckdb", write=True)
        >>> club.ingest(ofcstats.api.SAMPLE_LOGS / "criss-cross.jsonl").loaded.hands
        150
        """
        store = self._writer("load hands")
        extra = load_rulesets(answers.split_list(rulesets) or [])
        given = [paths] if isinstance(paths, str | Path) else list(paths)
        store.close()
        self._store = None
        try:
            loaded = ingesting.ingest([Path(p) for p in given], self.path, input_format,
                                      load_changed=load_changed, wait=self._wait,
                                      update=update)
        except BaseException:
            # Reopened for what follows, but the load's own error is the one raised.
            with contextlib.suppress(Exception):
                self._store = answers.open_store(self.path, read_only=False,
                                                 wait=self._wait, create=True)
            raise
        self._store = answers.open_store(self.path, read_only=False, wait=self._wait,
                                         create=True)
        scored, unchecked = answers.after_load(self._store, extra, score=rescore)
        return Loaded(loaded, scored, unchecked)

    def rescore(self, ruleset: Names = None, *, what_if: Names = None,
                all_rulesets: bool = False, rebuild: bool = False) -> RescoreSummary:
        """Score the stored hands under rulesets (``ofcstats rescore``): preset names or
        TOML files (default: every preset, and every other ruleset the database holds);
        ``what_if`` scores every hand under a ruleset, other variants' rows marked.

        >>> import ofcstats
        >>> club = ofcstats.sample(write=True)
        >>> club.rescore("american").hands
        0
        """
        store = self._writer("score hands")
        asked = answers.asked_rulesets(ruleset, what_if, all_rulesets=all_rulesets)
        return answers.rescore(store, asked, rebuild=rebuild)

    @property
    def chart(self) -> Charts:
        """The report's charts of this database, each a matplotlib Figure (:class:`Charts`).

        >>> import ofcstats
        >>> ofcstats.sample().chart  # doctest: +ELLIPSIS
        <ofcstats.Charts of ...sample.duckdb>
        """
        return Charts(self)


@dataclass(frozen=True)
class Loaded:
    """What :meth:`Club.ingest` did: ``loaded`` (an
    :class:`ofcstats.ingest.IngestSummary`), ``scored`` (the
    :class:`ofcstats.pipeline.RescoreSummary` of the scoring after it, or None) and
    ``unchecked``: the hands logged under a ruleset the database does not score them
    under, so that nothing checks their logged points (a frame: ``ruleset``,
    ``variant``, ``hands``, ``reported``, ``why``; empty when every hand is checked),
    what ``ingest`` counts in the line it ends with (exit code 1).

    >>> import ofcstats, tempfile
    >>> club = ofcstats.open(tempfile.mkdtemp() + "/club.duckdb", write=True)
    >>> sorted(club.ingest(ofcstats.api.SAMPLE_LOGS / "criss-cross.jsonl").to_dict())[:3]
    ['conflicts', 'database', 'duplicates']
    """

    loaded: ingesting.IngestSummary
    scored: RescoreSummary | None
    unchecked: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(
        schema=UNCHECKED_SCHEMA))

    def to_dict(self) -> dict[str, Any]:
        """What ``ingest --format json`` prints.

        >>> Loaded(ingesting.IngestSummary(database="club.duckdb"), None).to_dict()["hands"]
        0
        """
        return {**self.loaded.to_dict(),
                "rescore": None if self.scored is None else asdict(self.scored),
                "unchecked": self.unchecked.to_dicts()}


@dataclass(frozen=True)
class Page:
    """An HTML page (replayed hands): shown inline by Jupyter, written by :meth:`save`.
    Inline, the page stands in a frame of its own, so its style and its keys (the arrow
    keys step through a session) stay in it and leave the notebook's alone.

    >>> Page("<p>hi</p>", "hand.html")._repr_html_()[:39]
    '<iframe srcdoc="&lt;p&gt;hi&lt;/p&gt;" '
    """

    html: str
    name: str

    def _repr_html_(self) -> str:
        # As tall as the page, up to 800 px (then it scrolls within); 600 px where the
        # notebook runs no script.
        fit = "this.style.height=Math.min(this.contentDocument.documentElement" \
              ".scrollHeight+8,800)+'px'"
        return (f'<iframe srcdoc="{escape(self.html, quote=True)}" '
                f'title="{escape(self.name, quote=True)}" onload="{fit}" '
                'style="width:100%;height:600px;border:1px solid #ddd"></iframe>')

    def save(self, path: Path | str | None = None) -> Path:
        """Write the page (whole or not at all) to ``path``, a file or a folder (default:
        its own name in the current folder); the file written.

        >>> import tempfile
        >>> Page("<p>hi</p>", "hand.html").save(tempfile.mkdtemp()).name
        'hand.html'
        """
        target = Path(path) if path is not None else Path(self.name)
        if target.is_dir():
            target = target / self.name
        with written_whole(target) as partial:
            partial.write_text(self.html, encoding="utf-8")
        return target


class Charts:
    """The report's charts, drawn from a :class:`Club`'s database, one variant a chart
    (by default the one the filters' hands hold most of); each a matplotlib Figure.

    >>> import ofcstats
    >>> figure = ofcstats.sample().chart.cumulative("alice")
    >>> type(figure).__name__, figure.axes[0].get_title()[:10]
    ('Figure', 'pineapple:')
    """

    def __init__(self, club: Club) -> None:
        self.club = club

    def __repr__(self) -> str:
        return f"<ofcstats.Charts of {self.club.path}>"

    def _variant(self, filters: analysis.Filters) -> str:
        """The one variant a chart draws: the filters', else the one most hands hold."""
        answers.check_filters(self.club.store, filters)
        if filters.variants and len(filters.variants) == 1:
            return filters.variants[0]
        rows = analysis.stored_rows(self.club.store, filters)
        held = {v: h for v, (h, _) in analysis.hand_counts(rows).items() if v is not None}
        if not held:
            raise StoreError(analysis.NOTHING_SCORED)
        return max(sorted(held), key=lambda v: held[v])

    def _running(self, filters: analysis.Filters) -> pl.DataFrame:
        rows = analysis.stored_rows(self.club.store, filters)
        return analysis.running_totals(self.club.store, filters, rows)

    def cumulative(self, player: Names = None, *, ruleset: str | None = None,
                   variant: str | None = None, session: Names = None,
                   since: Moment = None, until: Moment = None) -> Figure:
        """The players' running totals under one ruleset (default: the one most hands of
        the variant were played under), with the band two standard deviations of luck
        fill; ``player``: those players only.

        >>> import ofcstats
        >>> ofcstats.sample().chart.cumulative(variant="pineapple").axes[0].get_ylabel()
        'points'
        """
        from ofcstats import report  # noqa: PLC0415 (matplotlib)
        from ofcstats.report import charts  # noqa: PLC0415

        base = answers.filters(None, session, since, until, variant, player)
        chosen = self._variant(base)
        table = answers.filters(None, session, since, until, chosen, None)
        main = ruleset or analysis.shown_rulesets(self.club.store, table).get(chosen)
        if main is None:
            raise StoreError(analysis.NOTHING_SCORED)
        table = answers.filters(main, session, since, until, chosen, None)
        sigma = next(iter(stats.ruleset_stats_of(analysis.stored_rows(
            self.club.store, table)).get_column("sd").drop_nulls()), 0.0)
        mine = answers.filters(main, session, since, until, chosen, player)
        return report.titled(chosen, charts.cumulative_points, self._running(mine), main,
                             sigma)

    def style_map(self, *, ruleset: str | None = None, variant: str | None = None,
                  session: Names = None, since: Moment = None, until: Moment = None,
                  player: Names = None) -> Figure:
        """Each player's foul rate against fantasyland entry rate (the marker's area: the
        hands played), under one ruleset (as :meth:`Club.players` chooses it).

        >>> import ofcstats
        >>> figure = ofcstats.sample().chart.style_map(variant="pineapple")
        >>> figure.axes[0].get_xlabel().startswith("foul rate")
        True
        """
        from ofcstats.report import charts  # noqa: PLC0415 (matplotlib)

        return self._of_players(charts.style_map, ruleset, variant, session, since, until,
                                player)

    def royalties(self, *, ruleset: str | None = None, variant: str | None = None,
                  session: Names = None, since: Moment = None, until: Moment = None,
                  player: Names = None) -> Figure:
        """Each player's royalties per hand by row, under one ruleset (as
        :meth:`Club.players` chooses it).

        >>> import ofcstats
        >>> ofcstats.sample().chart.royalties(variant="ofc-turbo").axes[0].get_title()[:11]
        'ofc-turbo: '
        """
        from ofcstats.report import charts  # noqa: PLC0415 (matplotlib)

        return self._of_players(charts.royalties_by_row, ruleset, variant, session, since,
                                until, player)

    def _of_players(self, draw: Callable[[pl.DataFrame, str], Figure], ruleset: str | None,
                    variant: str | None, session: Names, since: Moment, until: Moment,
                    player: Names) -> Figure:
        """A chart of :meth:`Club.players`' table of one variant."""
        from ofcstats import report  # noqa: PLC0415 (matplotlib)

        chosen = self._variant(answers.filters(ruleset, session, since, until, variant,
                                               player))
        table = self.club.players(ruleset=ruleset, session=session, since=since,
                                  until=until, variant=chosen, player=player)
        return report.titled(chosen, draw, table, table.get_column("ruleset")[0])

    def comparison(self, *, variant: str | None = None, ruleset: Names = None,
                   session: Names = None, since: Moment = None, until: Moment = None,
                   player: Names = None, seed: int = uncertainty.SEED) -> Figure:
        """The rulesets' skill signals with their 95% intervals (:meth:`Club.compare`).

        >>> import ofcstats
        >>> figure = ofcstats.sample().chart.comparison(variant="pineapple")
        >>> len(figure.axes) >= 1
        True
        """
        from ofcstats import report  # noqa: PLC0415 (matplotlib)
        from ofcstats.report import charts  # noqa: PLC0415

        chosen = self._variant(answers.filters(ruleset, session, since, until, variant,
                                               player))
        table = answers.comparison(self.club.store, answers.filters(
            ruleset, session, since, until, chosen, player), seed=seed).table
        return report.titled(chosen, charts.skill_intervals,
                             table.with_columns(pl.col("ruleset").replace(
                                 report.table_names(table))))

    def rulesets(self, player: str, *, variant: str | None = None,
                 ruleset: Names = None, session: Names = None, since: Moment = None,
                 until: Moment = None) -> Figure:
        """One player's running total under every scored ruleset: the same cards, other
        money.

        >>> import ofcstats
        >>> len(ofcstats.sample().chart.rulesets("carol").axes) >= 1
        True
        """
        from ofcstats import report  # noqa: PLC0415 (matplotlib)
        from ofcstats.report import charts  # noqa: PLC0415

        chosen = self._variant(answers.filters(ruleset, session, since, until, variant,
                                               player))
        running = self._running(answers.filters(ruleset, session, since, until, chosen,
                                                player))
        return report.titled(chosen, charts.player_under_rulesets, running, player)


_SAMPLE: list[Path] = []  # the sample database built in this process, if any


def _sample_database() -> Path:
    """The sample logs loaded and scored once per process, in a temporary folder removed
    when the process ends."""
    if _SAMPLE and _SAMPLE[0].exists():
        return _SAMPLE[0]
    if not SAMPLE_LOGS.is_dir():
        raise UsageError(f"{SAMPLE_LOGS}: the sample logs are not here; they ship with the "
                         "source tree (data/sample/): open your own database instead")
    folder = Path(tempfile.mkdtemp(prefix="ofcstats-sample-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "sample.duckdb"
    with Club(path, write=True) as club:
        club.ingest(SAMPLE_LOGS, [str(p) for p in SAMPLE_RULESETS])
    _SAMPLE[:] = [path]
    return path


def sample(*, write: bool = False) -> Club:
    """The sample data (data/sample/: 3,250 hands of every variant, played by bots whose
    styles are known), loaded into a temporary database and scored under every preset
    played and data/rulesets/pineapple-progressive.toml. Read-only; ``write=True`` gives
    a copy of one's own to write to (to run a review, say).

    >>> import ofcstats
    >>> ofcstats.sample().info()["variants"]["pineapple"]
    1700
    """
    path = _sample_database()
    if not write:
        return Club(path)
    own = Path(tempfile.mkdtemp(prefix="ofcstats-sample-")) / "sample.duckdb"
    atexit.register(shutil.rmtree, own.parent, ignore_errors=True)
    shutil.copyfile(path, own)
    return Club(own, write=True)
