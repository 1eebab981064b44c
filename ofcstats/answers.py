"""Each command's answer as frames, computed once: the command line prints it, the Python
API (:mod:`ofcstats.api`) returns it, so the two cannot disagree.

A function here takes an open :class:`~ofcstats.store.Store` and the command's options
as plain values, checks them against the store (a filter value it does not hold is a
:class:`~ofcstats.errors.UsageError` naming those it does), and returns what the command
prints with ``--format json``. It never prints.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from ofcstats import analysis, pipeline, stats, uncertainty
from ofcstats import ingest as ingesting
from ofcstats.bounds import POINTS, ROLLOUTS, SCREEN, SEED
from ofcstats.errors import OfcstatsError, StoreError, UsageError
from ofcstats.paths import no_loop
from ofcstats.rules import load_ruleset, load_rulesets, preset_names
from ofcstats.rules.model import Ruleset
from ofcstats.store import Store
from ofcstats.store import money as stored
from ofcstats.store.results import NOT_SCORED, rescore_command
from ofcstats.variants import VARIANT_NAMES

if TYPE_CHECKING:
    from ofcstats.engine import Engine
    from ofcstats.review.store import Settings
    from ofcstats.store.decisions import Selection

Names = str | Iterable[str] | None
"""A filter's values: one name, several, or a comma-separated list (``"alice,bob"``)."""

Moment = datetime | date | str | None
"""A time filter: a datetime, a date, or ISO text (``"2026-03-01"``); without a zone, UTC."""


def split_list(values: Names) -> list[str] | None:
    """A filter's values as a list, each of which may itself be comma-separated.

    >>> split_list(["ann,bob", " cy ", "ann"]), split_list("ann"), split_list(None)
    (['ann', 'bob', 'cy'], ['ann'], None)
    """
    if values is None:
        return None
    found = [part.strip() for value in ([values] if isinstance(values, str) else values)
             for part in str(value).split(",")]
    return list(dict.fromkeys(part for part in found if part)) or None


def _moment(value: Moment, name: str) -> datetime | None:
    """A time filter as a UTC datetime (a time without a zone is UTC)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise UsageError(f"--{name} {value}: not a date; give one such as 2026-03-01 or "
                             "2026-03-01T20:00") from None
    elif not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def dates(since: Moment, until: Moment) -> tuple[datetime | None, datetime | None]:
    """``--since`` and ``--until`` in UTC (a time without a zone is UTC); a usage error
    when the first comes after the second, as no hand could match.

    >>> dates("2026-03-01", None)
    (datetime.datetime(2026, 3, 1, 0, 0, tzinfo=datetime.timezone.utc), None)
    """
    since, until = _moment(since, "since"), _moment(until, "until")
    if since is not None and until is not None and since > until:
        raise UsageError(f"--since {since:%Y-%m-%dT%H:%M} is after --until "
                         f"{until:%Y-%m-%dT%H:%M}: no hand can match; give the earlier "
                         "moment to --since")
    return since, until


def filters(ruleset: Names = None, session: Names = None, since: Moment = None,
            until: Moment = None, variant: Names = None, player: Names = None
            ) -> analysis.Filters:
    """The filters of a command's options (``--ruleset``, ``--session``, ...).

    >>> filters(player="alice,bob", variant="pineapple").players
    ['alice', 'bob']
    """
    since_at, until_at = dates(since, until)
    return analysis.Filters(rulesets=split_list(ruleset), sessions=split_list(session),
                            players=split_list(player), variants=split_list(variant),
                            since=since_at, until=until_at)


def unknown_value(kind: str, value: str, known: Sequence[str], plural: str = "") -> str:
    """``no player named nobody; known players: ann, bob`` (the closest few of a long list).

    >>> unknown_value("player", "alce", ["alice", "bob"])
    'no player named alce (did you mean alice?); known players: alice, bob'
    """
    plural = plural or f"{kind}s"
    close = difflib.get_close_matches(value, known, n=3, cutoff=0.6)
    guess = f" (did you mean {' or '.join(close)}?)" if close else ""
    if not known:
        listing = f"no {plural} are stored"
    elif len(known) <= 20:
        listing = f"known {plural}: {', '.join(known)}"
    else:
        listing = f"{len(known):,} known {plural}, e.g. {', '.join(known[:5])}"
    return f"no {kind} named {value}{guess}; {listing}"


def not_played_text(ruleset: str, played_in: Sequence[str], variants: Sequence[str]) -> str:
    """A ruleset asked of hands of variants it is not played in, with the way to ask anyway.

    >>> print(not_played_text("russian", ["chinese-13"], ["pineapple"]))
    russian is not played in pineapple (only in chinese-13): to score those hands under it
    anyway, ofcstats rescore --what-if russian
    """
    return (f"{ruleset} is not played in {', '.join(variants)} (only in "
            f"{', '.join(played_in)}): to score those hands under it anyway, ofcstats "
            f"rescore --what-if {ruleset}")


def ruleset_variants(store: Store, name: str) -> list[str] | None:
    """The variants a ruleset is played in: the store's, else its preset's or file's
    (None when it is neither)."""
    for stored_name, variants, _ in stored.defined_rulesets(store):
        if stored_name == name and variants:
            return [str(v) for v in variants]
    try:
        return [v.value for v in load_ruleset(name).variants]
    except (OfcstatsError, OSError):
        return None


def check_played(store: Store, filters: analysis.Filters, ruleset: str) -> None:
    """Raise :class:`UsageError` when none of the hands the filters keep is of a variant
    ``ruleset`` is played in (or scored over, by a what-if)."""
    hands = sorted({str(v) for v, _, _ in stored.played_rulesets(store, filters)})
    scored = {str(v) for name, _, scope in stored.defined_rulesets(store)
              if name == ruleset for v in (scope or [])}
    played_in = ruleset_variants(store, ruleset)
    if hands and played_in is not None and not (set(hands) & (set(played_in) | scored)):
        raise UsageError(not_played_text(ruleset, played_in, hands))


LOAD_HANDS = "load hands with ofcstats ingest LOGS"
"""The hint for a database that holds no hands (not "rescore": nothing to score)."""


def _loadable(ruleset: str) -> bool:
    """Whether ``rescore --ruleset`` could load ``ruleset``: a preset, or a file."""
    return ruleset in preset_names() or Path(ruleset).is_file()


def check_filters(store: Store, filters: analysis.Filters,
                  rulesets: Sequence[str] = ()) -> None:
    """Raise :class:`UsageError` for a filter value (or ruleset) the store does not hold,
    naming the values it does hold or the closest ones; :class:`StoreError` when it holds
    no hands at all."""
    if store.query("SELECT 1 AS held FROM hands LIMIT 1").is_empty():
        # Not "run rescore": with no hands there is nothing to score.
        raise StoreError(f"{store.path}: no hands stored yet: {LOAD_HANDS} --db {store.path}")
    asked = {"player": filters.players, "session": filters.sessions,
             "variant": filters.variants,
             "ruleset": [*(filters.rulesets or []), *rulesets] or None}
    not_played: list[UsageError] = []
    for kind, values in asked.items():
        if not values:
            continue
        known = store.known_values(kind)
        for value in values:
            if value in known:
                if kind == "ruleset":
                    try:
                        check_played(store, filters, value)
                    except UsageError as error:
                        not_played.append(error)
                continue
            if kind == "ruleset" and not _loadable(value):
                # A name rescore could not load either: the nearest names, no command.
                raise UsageError(unknown_value("ruleset", value, sorted(
                    {*known, *preset_names()}), "rulesets (scored, or built in)"))
            if kind == "ruleset":
                check_played(store, filters, value)
                raise UsageError(unknown_value("ruleset", value, known, "scored rulesets")
                                 .replace("no ruleset named", "not scored under", 1)
                                 + f"; to score it: {rescore_command(value)}")
            if kind == "variant" and value not in VARIANT_NAMES:
                known = list(VARIANT_NAMES)
            raise UsageError(unknown_value(kind, value, known))
    if not_played and len(not_played) == len(asked["ruleset"] or []):
        raise not_played[0]  # (one ruleset played in the hands' variants answers)


def open_store(db: Path | str | None, *, read_only: bool = True, wait: float | None = None,
               on_wait: Callable[[str], None] | None = None, create: bool = False) -> Store:
    """The database (default :func:`ofcstats.ingest.default_database`), which must exist
    unless ``create``: read-only unless asked otherwise, so readers never stop each other
    or a notebook holding it open for reading. A program writing to it is waited for up
    to ``wait`` seconds (a writer waits for readers too)."""
    database = Path(db) if db is not None else ingesting.default_database()
    no_loop(database, "database")
    if database.is_dir():
        raise UsageError(f"{database}: is a directory, not a database file")
    if not database.exists() and not (create and not read_only):
        raise UsageError(f"{database}: no such database; load hands with ofcstats ingest")
    return Store(database, read_only=read_only, wait=wait, on_wait=on_wait)


def comparison(store: Store, filters: analysis.Filters, *,
               resamples: int = uncertainty.RESAMPLES, seed: int = uncertainty.SEED,
               check: bool = True) -> uncertainty.Comparison:
    """``compare``'s answer (:func:`ofcstats.analysis.comparison`), the filters checked
    first (unless ``check`` is False: the caller checked them, :func:`check_filters`);
    nothing scored is a :class:`StoreError` (the command's exit code 1). Its ``frame()``
    is what ``compare --format json`` prints."""
    if check:
        check_filters(store, filters)
    found = analysis.comparison(store, filters, resamples=resamples, seed=seed)
    if found.table.is_empty():
        raise StoreError(analysis.NOTHING_SCORED)
    return found


def players(store: Store, filters: analysis.Filters, ruleset: str | None = None, *,
            seed: int = 7, check: bool = True) -> pl.DataFrame:
    """``players``' answer: every player's results under one ruleset per variant
    (``ruleset`` where scored, else the one most of the variant's hands were played
    under), in the command's order (variant, then the best total first). ``check``: as
    :func:`comparison` (the filters with ``ruleset`` as their rulesets)."""
    if ruleset is not None:
        filters = replace(filters, rulesets=[ruleset])
    if check:
        check_filters(store, filters)
    # Only the rulesets shown are read: one per variant.
    shown = analysis.shown_rulesets(store, filters, ruleset)
    if ruleset and not shown:
        check_played(store, filters, ruleset)
    store.require_scored(filters=filters, pairs=shown)
    if shown:
        filters = replace(filters, rulesets=sorted(set(shown.values())))
    table = analysis.player_table(store, filters, seed=seed, pairs=shown)
    return table.sort(["variant", "total", "player"], descending=[False, True, False])


@dataclass(frozen=True)
class PlayerAnswer:
    """``player``'s answer: ``table``, the player under every scored ruleset per variant
    (what ``player --format json`` prints), and ``differences``, the seats whose logged
    points differ from the re-score under the ruleset played, and ``unchecked``, the line
    that counts the hands no re-score checks (logged under a ruleset the store does not
    score over their variant), None when there are none."""

    table: pl.DataFrame
    differences: pl.DataFrame
    unchecked: str | None = None


def player(store: Store, name: str, filters: analysis.Filters, *, seed: int = 7,
           check: bool = True) -> PlayerAnswer:
    """``player``'s answer for ``name`` (the filters' players are replaced by it);
    ``check``: as :func:`comparison`."""
    filters = replace(filters, players=[name])
    if check:
        check_filters(store, filters)
    table = analysis.player_table(store, filters, seed=seed)
    return PlayerAnswer(table.sort(["variant", "mean", "ruleset"],
                                   descending=[False, True, False]),
                        differences(store, filters, check=False),
                        analysis.not_checked(store, filters))


def differences(store: Store, filters: analysis.Filters, *, check: bool = True
                ) -> pl.DataFrame:
    """The seats the filters keep whose logged points differ from the re-score under the
    ruleset played (what ``player`` lists under its table); ``check``: as
    :func:`comparison`."""
    if check:
        check_filters(store, filters)
    return stats.reported_differences_of(analysis.stored_rows(store, filters))


def hands(store: Store, filters: analysis.Filters, ruleset: str | None = None, *,
          fouled: bool | None = None, fantasyland: bool | None = None,
          mistakes: bool | None = None, min_points: int | None = None,
          max_points: int | None = None, sort: str = "played", limit: int | None = None,
          per_player: int | None = None, check: bool = True) -> pl.DataFrame:
    """``hands``' answer, the hand list (:func:`ofcstats.analysis.hands`): one row per hand
    and seat, under ``ruleset`` where scored, else per variant the one most of its hands
    were played under; ``fouled``, ``fantasyland``, ``mistakes``: True keeps the seats
    that did, False those that did not, None both. ``check``: as :func:`comparison` (the
    filters with ``ruleset`` as their rulesets). What ``hands --format json`` prints."""
    if ruleset is not None:
        filters = replace(filters, rulesets=[ruleset])
    if check:
        check_filters(store, filters)
    if ruleset and not analysis.shown_rulesets(store, filters, ruleset):
        check_played(store, filters, ruleset)
    found = analysis.hands(store, filters, ruleset=ruleset, fouled=fouled,
                           fantasyland=fantasyland, mistakes=mistakes, min_points=min_points,
                           max_points=max_points, sort=sort, limit=limit,
                           per_player=per_player)
    return found.drop("hand_key")


def after_load(store: Store, rulesets: Sequence[Ruleset] = (), *, score: bool = True,
               progress: pipeline.Progress | None = None
               ) -> tuple[pipeline.RescoreSummary | None, pl.DataFrame]:
    """What ``ingest`` does after loading: score every hand not yet scored under the
    rulesets the store holds and the presets played under its variants, and under
    ``rulesets`` too (:func:`ofcstats.pipeline.update`); without ``score`` only have the
    store hold ``rulesets`` (:func:`ofcstats.pipeline.register`). Then the hands logged
    under a ruleset the store does not score them under (:meth:`Store.unchecked`;
    without ``score``, those a rescore scores are left out)."""
    scored = None
    if score:
        scored = pipeline.update(store, rulesets, progress=progress)
    elif rulesets:
        pipeline.register(store, rulesets)
    unchecked = store.unchecked()
    if not score:
        unchecked = unchecked.filter(pl.col("why") != NOT_SCORED)
    return scored, unchecked


def sql(store: Store, query: str, progress: Callable[[int, int | None], None] | None = None,
        *, contained: bool = True) -> pl.DataFrame | None:
    """The rows of a query on a read-only store (None for a statement with no rows); a
    query DuckDB refuses is a :class:`UsageError` with DuckDB's reason. ``contained``: as
    :meth:`ofcstats.store.Store.user_query`."""
    import duckdb  # noqa: PLC0415 (loaded with the store already)

    try:
        return store.user_query(query, 1 << 16, progress, contained=contained)
    except duckdb.Error as error:
        raise UsageError(f"the query failed: {str(error).splitlines()[0]}") from None


NO_DECISIONS = "no decisions to review: no hands with logged streets match the filters"


def review_settings(ruleset: str | None = None, rollouts: int = 256, seed: int = 0,
                    fantasyland_value: float = 14.0, screen: int = 6,
                    opponents: str = "drawn") -> Settings:
    """A review's settings from the command's options, checked (a usage error names the
    option and the value)."""
    from ofcstats.review.store import Settings  # noqa: PLC0415 (loads the simulator)

    # The command's options hold to these bounds already; the Python API's arguments too.
    ROLLOUTS.check("rollouts", rollouts)
    SCREEN.check("screen", screen)
    SEED.check("seed", seed)
    POINTS.check("fantasyland_value", fantasyland_value)
    if opponents not in ("drawn", "logged"):
        raise UsageError(f"--opponents {opponents}: use drawn or logged")
    return Settings(ruleset=ruleset, rollouts=rollouts, seed=seed,
                    fantasyland_value=fantasyland_value, screen=screen, opponents=opponents)


def selection(player: Names = None, session: Names = None, since: Moment = None,
              until: Moment = None, hand: Names = None) -> Selection:
    """The hands and seats a review looks at, from the command's options."""
    from ofcstats.store.decisions import Selection  # noqa: PLC0415

    since_at, until_at = dates(since, until)
    return Selection(players=split_list(player), sessions=split_list(session),
                     hand_ids=split_list(hand), since=since_at, until=until_at)


@dataclass(frozen=True)
class ReviewAnswer:
    """The review's summary of the stored decisions: ``settings`` as JSON shows them,
    ``players`` (EV loss per variant, player and street), ``mistakes`` (the biggest),
    ``situations`` (per player and situation beside the table's), ``streets`` (per
    player and street, with intervals), ``skipped`` (seats not reviewed, by why) and
    ``decisions`` (one row a decision).

    >>> answer = ReviewAnswer({"rollouts": 16}, pl.DataFrame(), pl.DataFrame(),
    ...                       pl.DataFrame(), pl.DataFrame(), {"timed_out": 0}, pl.DataFrame())
    >>> answer.to_dict("situation")
    {'settings': {'rollouts': 16}, 'situations': [], 'skipped': {'timed_out': 0}}
    """

    settings: dict[str, object]
    players: pl.DataFrame
    mistakes: pl.DataFrame
    situations: pl.DataFrame
    streets: pl.DataFrame
    skipped: dict[str, int]
    decisions: pl.DataFrame = field(repr=False)

    def to_dict(self, by: str = "player") -> dict[str, Any]:
        """What ``review --format json`` prints (``by``: ``player`` or ``situation``)."""
        if by == "situation":
            return {"settings": self.settings, "situations": self.situations.to_dicts(),
                    "skipped": self.skipped}
        return {"settings": self.settings, "players": self.players.to_dicts(),
                "mistakes": self.mistakes.to_dicts(), "skipped": self.skipped}


def review(store: Store, chosen: Selection, settings: Settings, *, run: bool = False,
           progress: Callable[[int, int], None] | None = None, jobs: int = 0,
           engine: Engine | None = None) -> ReviewAnswer:
    """The review's answer: with ``run``, the chosen seats not yet reviewed under
    ``settings`` are reviewed first (into ``decisions``: the store must be writable; on
    ``engine``'s workers when given), then the stored decisions are summed. No decision
    is a :class:`StoreError` (exit code 1)."""
    from ofcstats import engine as engines  # noqa: PLC0415
    from ofcstats.review import store as reviewing  # noqa: PLC0415
    from ofcstats.review import summary  # noqa: PLC0415

    check_filters(store, analysis.Filters(players=chosen.players, sessions=chosen.sessions))
    if run:
        if engine is None:
            reviewing.run(store, chosen, settings, progress, jobs=jobs)
        else:
            engines.review(store, chosen, settings, engine, progress)
    frame = summary.decisions_frame(store, chosen, settings)
    left_out = reviewing.skipped(store, chosen)
    shown = settings.as_dict(reviewing.reviewed_as(settings))
    if frame.is_empty():
        raise StoreError(NO_DECISIONS if run else
                         "no decisions stored for these hands under these settings: review "
                         "them first (ofcstats review; in Python, review(run=True) on a "
                         "database opened with write=True)")
    return ReviewAnswer(settings=shown, players=summary.player_summary(frame),
                        mistakes=summary.biggest_mistakes(frame),
                        situations=summary.situation_summary(frame),
                        streets=summary.street_summary(frame), skipped=left_out,
                        decisions=frame)


def replay_ids(hand_ids: Iterable[str] | None, session: str | None,
               player: str | None) -> list[str]:
    """The hands ``replay`` is asked for (each once, in the order given), checked against
    the other options: hand ids or a session, one or the other; ``player`` follows a
    seat over several hands.

    >>> replay_ids(["h1", "h2", "h1"], None, "ann")
    ['h1', 'h2']
    """
    ids = list(dict.fromkeys(hand_ids or []))
    if not ids and session is None:
        raise UsageError("give a hand's id, several, or --session SESSION (list them with "
                         "ofcstats hands)")
    if ids and session is not None:
        raise UsageError("give hand ids or --session, not both")
    if player is not None and len(ids) == 1:
        raise UsageError("--player follows a seat over several hands: give --session or "
                         "more hand ids")
    return ids


@dataclass(frozen=True)
class Replay:
    """``replay``'s page: ``html``, the whole self-contained page; ``what`` it holds
    (``hand H``, ``session S (12 hands)``); ``name``, the file it is saved as by default.

    >>> Replay("<p>hi</p>", "hand h1", "h1.html").what
    'hand h1'
    """

    html: str
    what: str
    name: str


def replay(store: Store, hand_ids: Iterable[str] | None = None, session: str | None = None,
           player: str | None = None, settings: Settings | None = None) -> Replay:
    """``replay``'s page: one hand street by street under the review's ``settings``
    (:func:`ofcstats.review.replay.page`), or several hands or a ``session`` on one page
    (:func:`ofcstats.analysis.replayed`: the decisions as stored, under the settings'
    ruleset where it names one), ``player``'s seat followed. Hand ids or a
    session, one or the other (:func:`replay_ids`)."""
    from ofcstats.review import replay as replaying  # noqa: PLC0415 (the simulator)
    from ofcstats.review import session_page  # noqa: PLC0415

    ids = replay_ids(hand_ids, session, player)
    if len(ids) == 1:
        return Replay(replaying.page(store, ids[0], settings), f"hand {ids[0]}",
                      f"{ids[0]}.html")
    # The session and the player checked as every filter is (the nearest names named).
    check_filters(store, analysis.Filters(sessions=None if session is None else [session],
                                          players=None if player is None else [player]))
    data = analysis.replayed(store, session=session, hand_ids=ids or None, player=player,
                             ruleset=None if settings is None else settings.ruleset)
    count = analysis.plural(data.hands.height, "hand")
    if session is not None:
        return Replay(session_page.render(data), f"session {session} ({count})",
                      f"{session}.html")
    return Replay(session_page.render(data), f"hands ({count})", "hands.html")


@dataclass(frozen=True)
class Asked:
    """The rulesets a rescore was asked for: ``rulesets`` loaded, ``what_if`` the names of
    the what-ifs among them, ``every`` whether the database's own are added."""

    rulesets: list[Ruleset]
    what_if: list[str]
    every: bool


def asked_rulesets(ruleset: Names = None, what_if: Names = None, *,
                   all_rulesets: bool = False) -> Asked:
    """The rulesets ``rescore --ruleset ... --what-if ... [--all-rulesets]`` names, loaded
    (a name that is neither a preset nor a TOML file is an error naming it): with none
    named, or with ``all_rulesets``, every preset too."""
    named = split_list(ruleset) or []
    what_ifs = split_list(what_if) or []
    every = all_rulesets or not [*named, *what_ifs]
    chosen = load_rulesets([*(preset_names() if every else []), *named, *what_ifs])
    return Asked(chosen, [load_ruleset(name).name for name in what_ifs], every)


def rescore(store: Store, asked: Asked, *, rebuild: bool = False,
            engine: Engine | None = None,
            progress: pipeline.Progress | None = None) -> pipeline.RescoreSummary:
    """``rescore``'s work: the hands not yet scored under the rulesets ``asked`` (every
    hand with ``rebuild``), and with ``asked.every`` under the other rulesets the database
    holds too; on ``engine``'s workers when given. Returns the
    :class:`ofcstats.pipeline.RescoreSummary` that ``rescore --format json`` prints."""
    from ofcstats import engine as engines  # noqa: PLC0415

    chosen = list(asked.rulesets)
    if asked.every:
        # Every preset, and the other rulesets the database holds.
        have = {r.name for r in chosen}
        chosen += [r for r in pipeline.default_rulesets(store, as_stored=False)
                   if r.name not in have]
    if engine is None:
        return pipeline.rescore(store, chosen, rebuild=rebuild, what_if=asked.what_if,
                                progress=progress)
    return engines.rescore(store, chosen, engine, rebuild=rebuild, what_if=asked.what_if,
                           progress=progress)
