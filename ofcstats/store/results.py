"""What rescoring reads and writes: rulesets, results, showdowns and their progress.

The SQL of :mod:`ofcstats.pipeline` lives here; the pipeline hands over frames and
gets frames back, through the :class:`~ofcstats.store.Store`'s methods (and a
:class:`Writer`, a second cursor of the same database, for the writing thread).
Functions take a connection rather than a Store for that second cursor.

- ``rulesets``: one row per ruleset scored, with its definition and the variants it is
  scored over (:func:`register_ruleset`).
- ``results`` and ``scored_sessions``: each ruleset's rows, and how many hands of each
  variant of each session it has scored (with the session's hands of every variant
  then); ``showdowns`` and ``showdown_sessions`` the same for what every ruleset
  shares, per natural mask (:func:`write_scored`). What is left to score is read from
  them (:func:`sessions_to_score`, :func:`unscored`), and checked against the rows
  themselves by :func:`scoring_check`.
- ``results_named``: everything about a row by name, what analysis reads
  (:func:`results_relation`, filtered by :class:`Filters`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import duckdb
import polars as pl

from ofcstats.records import SHOWDOWN_COLUMNS
from ofcstats.rules import load_rulesets, preset_names
from ofcstats.store.connect import registered
from ofcstats.variants import Variant

ALL_VARIANTS = tuple(v.value for v in Variant)

STAKE = "coalesce(h.point_value, 1.0)::DOUBLE AS stake"
"""A hand's logged stake (of ``hands h``): its ``point_value``, else 1 a point, as
:func:`ofcstats.session.logged_stake`. A change of it starts a new game, whatever a
ruleset values a point at (docs/rules.md §5)."""

RESULT_COLUMNS = (
    "points", "royalty_top", "royalty_middle", "royalty_bottom", "royalty_points",
    "fantasyland_earned", "fantasyland_cards",
)
"""What ``results`` stores besides its key; ``fantasyland_next`` is ``fantasyland_cards``
> 0. The counts are stored as INTEGER, which DuckDB writes fastest (schema version 3)."""



@dataclass(frozen=True)
class RulesetRow:
    """A ruleset as the ``rulesets`` table keeps it."""

    name: str
    description: str
    natural_mask: int  # which 13-card naturals it pays (picks the showdown rows)
    fingerprint: str  # a digest of the definition: another one means a rescore
    definition: str  # the definition as JSON
    variants: Sequence[str]  # the variants it is played under
    asked: Sequence[str]  # the variants this run scores it over


def register_ruleset(con: duckdb.DuckDBPyConnection, ruleset: RulesetRow, rebuild: bool
                     ) -> tuple[int, bool, tuple[str, ...]]:
    """Store (or update) a ruleset's row: its id, whether its results were dropped to be
    scored again (``rebuild``, or a changed definition), and the variants it is scored
    over (those asked for, and those asked for before unless its results were dropped)."""
    # Every row fetched (fetchall): a result left open would block the next query.
    found = con.execute("SELECT ruleset_id, fingerprint, scope FROM rulesets WHERE name = ?",
                        [ruleset.name]).fetchall()
    row = found[0] if found else None
    redone = False
    if row is None:
        next_id = con.execute("SELECT coalesce(max(ruleset_id), 0) + 1 FROM rulesets"
                              ).fetchall()
        ruleset_id = int(next_id[0][0]) if next_id else 1
        scope = tuple(ruleset.asked)
        con.execute(
            "INSERT INTO rulesets (ruleset_id, name, description, natural_mask, "
            "fingerprint, definition, variants, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [ruleset_id, ruleset.name, ruleset.description, ruleset.natural_mask,
             ruleset.fingerprint, ruleset.definition, list(ruleset.variants), list(scope)])
        return ruleset_id, redone, scope
    ruleset_id = int(row[0])
    if rebuild or row[1] != ruleset.fingerprint:
        redone = True
        scope = tuple(ruleset.asked)
        con.execute("DELETE FROM results WHERE ruleset_id = ?", [ruleset_id])
        con.execute("DELETE FROM scored_sessions WHERE ruleset_id = ?", [ruleset_id])
    else:
        scope = tuple(v for v in ALL_VARIANTS if v in ruleset.asked or v in (row[2] or ()))
    con.execute(
        "UPDATE rulesets SET fingerprint = ?, definition = ?, description = ?, "
        "natural_mask = ?, variants = ?, scope = ? WHERE ruleset_id = ?",
        [ruleset.fingerprint, ruleset.definition, ruleset.description, ruleset.natural_mask,
         list(ruleset.variants), list(scope), ruleset_id])
    return ruleset_id, redone, scope


_STANDING = """
    -- Per ruleset, and session and variant in its scope: the hands stored, and whether
    -- its results of them are current: marked scored when the session held as many hands
    -- of the variant and as many of every variant (play order, games and fantasyland
    -- repeat limits are the whole table's).
    WITH counted AS (
        SELECT session_id, variant, count(*)::INTEGER AS hands FROM hands
        WHERE {sessions} GROUP BY ALL
    ), totals AS (
        SELECT session_id, sum(hands)::INTEGER AS session_hands FROM counted GROUP BY ALL
    )
    SELECT r.ruleset_id, r.name AS ruleset, c.session_id, c.variant, c.hands,
           t.session_hands, m.hands IS NOT NULL AS marked,
           coalesce(m.hands = c.hands AND m.session_hands = t.session_hands, false)
               AS current,
           NOT list_contains(r.variants, c.variant) AS what_if
    FROM counted c JOIN totals t USING (session_id)
    JOIN rulesets r ON list_contains(r.scope, c.variant)
    LEFT JOIN scored_sessions m ON m.ruleset_id = r.ruleset_id
        AND m.session_id = c.session_id AND m.variant = c.variant
    WHERE {rulesets}
"""
"""The one statement of what is scored (:func:`sessions_to_score`, :func:`unscored`)."""


def sessions_to_score(con: duckdb.DuckDBPyConnection, ruleset_id: int) -> pl.DataFrame:
    """Sessions with hands the ruleset has not scored (or scored before the session grew),
    in id order: ``session_id``, ``hands`` (its hands of the variants in the ruleset's
    scope), ``session_hands`` (of every variant), ``was_scored`` (some are marked)."""
    standing = _STANDING.format(sessions="true", rulesets="r.ruleset_id = $id")
    return con.sql(f"""
        SELECT session_id, sum(hands)::INTEGER AS hands,
               any_value(session_hands) AS session_hands, bool_or(marked) AS was_scored
        FROM ({standing}) GROUP BY session_id HAVING NOT bool_and(current)
        ORDER BY session_id
    """, params={"id": ruleset_id}).pl()


RESCORE = "ofcstats rescore"
"""The command that scores what is not scored: every "not scored" message names it."""

NOTHING_SCORED = f"no scored hands match: run {RESCORE}, or loosen the filters"


def rescore_command(ruleset: str) -> str:
    """The command that scores ``ruleset``.

    >>> rescore_command("american")
    'ofcstats rescore --ruleset american'
    """
    return f"{RESCORE} --ruleset {ruleset}"


def not_scored_text(names: Sequence[str]) -> str:
    """Rulesets never scored, in one line with the command that scores the first.

    >>> not_scored_text(["american", "dutch"])
    'not scored under american, dutch: run ofcstats rescore --ruleset american'
    """
    return f"not scored under {', '.join(names)}: run {rescore_command(names[0])}"


def unscored_text(missing: pl.DataFrame) -> str:
    """What :func:`unscored` found, in one line with the fix.

    >>> print(unscored_text(pl.DataFrame({"variant": ["pineapple", "chinese-13"],
    ...     "ruleset": ["american", None], "hands": [1200, 50], "missing": [200, 50]})))
    not every hand is scored: 200 of 1,200 pineapple hands not under american
    (and 1 more: ofcstats db info lists them); run ofcstats rescore
    """
    variant, ruleset, hands, count = missing.select(
        "variant", "ruleset", "hands", "missing").row(0)
    under = "under any ruleset" if ruleset is None else f"under {ruleset}"
    first = f"all {hands:,}" if count == hands else f"{count:,} of {hands:,}"
    more = f" (and {missing.height - 1:,} more: ofcstats db info lists them)" \
        if missing.height > 1 else ""
    return f"not every hand is scored: {first} {variant} hands not {under}{more}; run {RESCORE}"


def unscored(con: duckdb.DuckDBPyConnection, filters: Filters,
             pairs: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Hands the answers for ``filters`` need and the store has not scored (or scored
    before their session grew), from the progress marks: per variant and ruleset,
    ``variant``, ``ruleset`` (null: no ruleset is scored over the variant at all),
    ``hands`` (stored), ``missing``; only the rows with some missing, in order.

    The rulesets are those of ``filters`` (else every ruleset the store holds), or with
    ``pairs`` (variant to ruleset) those; the variants and sessions those of ``filters``.
    A variant no ruleset is scored over counts when the filters name no ruleset."""
    sessions, params = filters.sql({"session_id": "session_id"}, times=None)
    wanted, more = filters.sql({"ruleset": "ruleset", "variant": "variant"}, times=None)
    if pairs is not None:
        wanted += " AND (" + (" OR ".join(["(variant = ? AND ruleset = ?)"] * len(pairs))
                              or "false") + ")"
        more += [value for pair in sorted(pairs.items()) for value in pair]
    standing = _STANDING.format(sessions=sessions, rulesets="true")
    bare = "false"
    bare_params: list[object] = []
    if filters.rulesets is None:
        # Hands of a variant no ruleset is scored over: no answer would show them.
        bare, bare_params = filters.sql({"session_id": "session_id", "variant": "variant"},
                                        times=None)
    return con.sql(f"""
        WITH standing AS ({standing})
        SELECT variant, ruleset, sum(hands)::BIGINT AS hands,
               (sum(hands) FILTER (WHERE NOT current))::BIGINT AS missing
        FROM standing WHERE {wanted} GROUP BY ALL HAVING missing > 0
        UNION ALL
        SELECT variant, NULL, count(*), count(*) FROM hands
        WHERE {bare} AND NOT EXISTS (SELECT 1 FROM rulesets r
                                     WHERE list_contains(r.scope, hands.variant))
        GROUP BY ALL
        ORDER BY variant, ruleset NULLS FIRST
    """, params=[*params, *more, *bare_params]).pl()


def scoring_check(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per variant and every ruleset scored over it (and each variant no ruleset is):
    ``variant``, ``ruleset`` (null: none), ``what_if``, ``hands`` stored, ``scored`` (the
    hands ``results_named`` has rows of, read from the rows themselves), ``current`` (the
    hands the progress marks say are scored and up to date), in order.

    The rows are counted seat by seat first (a second for 24 million result rows): where
    a ruleset's result rows, and the showdowns, hold every stored seat of the variant,
    its hands are all answered; only elsewhere are the hands counted one by one (several
    times slower), for those rulesets and variants alone."""
    found = con.sql(f"""
        WITH stored AS (
            SELECT variant, count(*)::BIGINT AS hands, sum(n_seats)::BIGINT AS seats
            FROM hands GROUP BY ALL
        ), standing AS ({_STANDING.format(sessions="true", rulesets="true")}),
        marked AS (
            SELECT variant, ruleset_id, ruleset, bool_and(what_if) AS what_if,
                   (sum(hands) FILTER (WHERE current))::BIGINT AS current
            FROM standing GROUP BY ALL
        ), rows AS (
            SELECT x.ruleset_id, h.variant, count(*)::BIGINT AS seats
            FROM results x JOIN hands h USING (hand_key) GROUP BY ALL
        ), shown AS (
            SELECT h.variant, count(*)::BIGINT AS seats
            FROM showdowns z JOIN hands h USING (hand_key) WHERE z.natural_mask = 0
            GROUP BY ALL
        )
        SELECT s.variant, m.ruleset, m.ruleset_id, coalesce(m.what_if, false) AS what_if,
               s.hands, coalesce(r.seats = s.seats AND w.seats = s.seats, false) AS whole,
               coalesce(m.current, 0)::BIGINT AS current
        FROM stored s LEFT JOIN marked m USING (variant)
        LEFT JOIN rows r ON r.ruleset_id = m.ruleset_id AND r.variant = s.variant
        LEFT JOIN shown w ON w.variant = s.variant
        ORDER BY s.variant, m.ruleset NULLS FIRST
    """).pl()
    partial = found.filter(~pl.col("whole") & pl.col("ruleset_id").is_not_null())
    counted = pl.DataFrame(schema={"ruleset_id": pl.Int16, "variant": pl.String,
                                   "counted": pl.Int64})
    if not partial.is_empty():
        with registered(con, "partial_answers", partial.select("ruleset_id", "variant")):
            counted = con.sql("""
                SELECT x.ruleset_id, h.variant, count(DISTINCT x.hand_key)::BIGINT AS counted
                FROM results x JOIN hands h USING (hand_key)
                SEMI JOIN partial_answers p ON p.ruleset_id = x.ruleset_id
                    AND p.variant = h.variant
                SEMI JOIN showdowns z ON z.hand_key = x.hand_key AND z.seat = x.seat
                    AND z.natural_mask = 0
                GROUP BY ALL
            """).pl()
    return found.join(counted, on=["ruleset_id", "variant"], how="left").select(
        "variant", "ruleset", "what_if", "hands",
        scored=pl.when(pl.col("whole")).then(pl.col("hands"))
        .otherwise(pl.col("counted").fill_null(0)).cast(pl.Int64),
        current="current")


UNKNOWN, NOT_SCORED, NOT_PLAYED = "unknown", "not scored", "not played"
"""Why hands logged under a ruleset are not scored under it (:func:`unchecked`)."""

UNCHECKED_SCHEMA = {"ruleset": pl.String, "variant": pl.String, "hands": pl.Int64,
                    "reported": pl.Int64, "why": pl.String}
"""The columns :func:`unchecked` gives."""

SUPPLY = "ofcstats ingest -r FILE or ofcstats rescore -r FILE"
"""The commands that give the store a ruleset it does not know (its TOML file)."""


def unchecked(con: duckdb.DuckDBPyConnection, filters: Filters | None = None
              ) -> pl.DataFrame:
    """Hands logged under a ruleset (their ``ruleset``) that the store does not score
    over their variant: their logged points are checked against no re-score. Per logged
    ruleset and variant, in order: ``ruleset``, ``variant``, ``hands``, ``reported``
    (those of them with a seat's ``reported_points``; with ``filters.players``, a seat
    of theirs) and ``why``: :data:`UNKNOWN` (neither a ruleset the store holds nor a
    preset: its file is needed, :data:`SUPPLY`), :data:`NOT_SCORED` (played under the
    variant, not scored yet: ``ofcstats rescore``) or :data:`NOT_PLAYED` (played under
    other variants only: a what-if scores it). The sessions, variants, times and players
    of ``filters`` apply, not its rulesets (a ruleset not scored is no filter's).

    Hands are counted by logged ruleset and variant first, in one pass over two columns;
    seats are read only for the few groups found."""
    filters = filters or Filters()
    where, params = filters.sql({"session_id": "h.session_id", "variant": "h.variant"},
                                times="h.played_at")
    pairs = con.sql(f"""
        WITH logged AS (
            SELECT h.ruleset, h.variant FROM hands h
            WHERE h.ruleset IS NOT NULL AND {where} GROUP BY ALL
        )
        SELECT l.ruleset, l.variant FROM logged l
        WHERE NOT EXISTS (SELECT 1 FROM rulesets r
                          WHERE r.name = l.ruleset AND list_contains(r.scope, l.variant))
    """, params=params).pl()
    if pairs.is_empty():
        return pl.DataFrame(schema=UNCHECKED_SCHEMA)
    seated, more = filters.sql({"player": "player"}, times=None)
    with registered(con, "unchecked_pairs", pairs):
        counted = con.sql(f"""
            SELECT h.ruleset, h.variant, count(*)::BIGINT AS hands,
                   (count(*) FILTER (WHERE s.reported))::BIGINT AS reported
            FROM hands h SEMI JOIN unchecked_pairs p
                ON p.ruleset = h.ruleset AND p.variant = h.variant
            JOIN (SELECT hand_key, bool_or(reported_points IS NOT NULL) AS reported
                  FROM seats WHERE {seated} GROUP BY hand_key) s USING (hand_key)
            WHERE {where}
            GROUP BY ALL ORDER BY ALL
        """, params=[*more, *params]).pl()
    played = {name: set(variants) for name, variants in con.execute(
        "SELECT name, variants FROM rulesets").fetchall()}
    for ruleset in load_rulesets(preset_names()):
        played.setdefault(ruleset.name, {v.value for v in ruleset.variants})
    why = [UNKNOWN if name not in played else NOT_SCORED if variant in played[name]
           else NOT_PLAYED for name, variant in counted.select("ruleset", "variant").rows()]
    return counted.with_columns(why=pl.Series(why, dtype=pl.String)).cast(
        UNCHECKED_SCHEMA)


def unchecked_text(found: pl.DataFrame, count: str = "hands") -> str:
    """What :func:`unchecked` found, in one line with the fixes; ``count``: the column
    counted (``reported``: the hands whose logged points are not checked).

    >>> for part in unchecked_text(pl.DataFrame({"ruleset": ["house"],
    ...         "variant": ["pineapple"], "hands": [700], "reported": [700],
    ...         "why": ["unknown"]})).split("; "):
    ...     print(part)
    700 hands not checked: ruleset house unknown
    supply its file: ofcstats ingest -r FILE or ofcstats rescore -r FILE
    >>> for part in unchecked_text(pl.DataFrame({"ruleset": ["house", "russian"],
    ...         "variant": ["pineapple", "pineapple"], "hands": [700, 12],
    ...         "reported": [0, 12], "why": ["unknown", "not played"]}),
    ...         "reported").split("; "):
    ...     print(part)
    12 hands not checked: ruleset russian not played under pineapple
    score it as a what-if: ofcstats rescore --what-if russian
    """
    found = found.filter(pl.col(count) > 0)
    parts: dict[str, int] = {}
    for name, variant, n, why in found.select("ruleset", "variant", count, "why").rows():
        part = f"ruleset {name} {why}" + (f" under {variant}" if why == NOT_PLAYED else "")
        parts[part] = parts.get(part, 0) + n
    total = sum(parts.values())
    listed = ", ".join(part + (f" ({n:,})" if len(parts) > 1 else "")
                       for part, n in parts.items())
    kinds = set(found.get_column("why").to_list())
    other = found.filter(pl.col("why") == NOT_PLAYED).get_column("ruleset").unique(
        maintain_order=True).to_list()
    unknown = found.filter(pl.col("why") == UNKNOWN).get_column("ruleset").unique().len()
    fixes = [f"supply {'its file' if unknown == 1 else 'their files'}: {SUPPLY}"
             if UNKNOWN in kinds else "",
             f"run {RESCORE}" if NOT_SCORED in kinds else "",
             f"score {'it' if len(other) == 1 else 'each'} as a what-if: {RESCORE} "
             f"--what-if {other[0] if len(other) == 1 else 'NAME'}" if other else ""]
    return (f"{total:,} {'hand' if total == 1 else 'hands'} not checked: {listed}; "
            + "; ".join(fix for fix in fixes if fix))


def whole_hands(con: duckdb.DuckDBPyConnection, check: pl.DataFrame) -> dict[str, int]:
    """Per variant, the hands scored and up to date under every ruleset scored over it:
    those the progress marks say are current under all of them, and no more than the
    fewest any of them has result rows of (``check``: :func:`scoring_check`'s rows). A
    variant no ruleset is scored over has none."""
    standing = _STANDING.format(sessions="true", rulesets="true")
    marked = dict(con.sql(f"""
        SELECT variant, sum(hands)::BIGINT FROM (
            SELECT session_id, variant, any_value(hands) AS hands, bool_and(current) AS ok
            FROM ({standing}) GROUP BY ALL)
        WHERE ok GROUP BY ALL
    """).fetchall())
    fewest = check.filter(pl.col("ruleset").is_not_null()).group_by("variant").agg(
        pl.col("scored").min())
    rows = dict(zip(fewest.get_column("variant").to_list(),
                    fewest.get_column("scored").to_list(), strict=True))
    return {variant: min(int(marked.get(variant) or 0), int(rows.get(variant, 0)))
            for variant in check.get_column("variant").unique(maintain_order=True).to_list()}


def session_seats(con: duckdb.DuckDBPyConnection, session_ids: Sequence[str]
                  ) -> pl.DataFrame:
    """The seats of whole sessions (every variant: play order and games are the whole
    table's), ``hand_id`` holding the integer hand key, with each hand's session, time,
    table size and logged stake (:data:`STAKE`); in no set order."""
    with registered(con, "wanted_sessions", pl.DataFrame({"session_id": list(session_ids)})):
        return con.sql(f"""
            SELECT s.hand_key AS hand_id, h.variant, s.seat, s.player, s.fantasyland,
                   s.timed_out, s.surrendered, s.top, s.middle, s.bottom, s.unit,
                   h.session_id, h.played_at, h.n_seats, {STAKE}
            FROM hands h JOIN seats s USING (hand_key)
            WHERE h.session_id IN (SELECT session_id FROM wanted_sessions)
        """).pl()


def write_scored(con: duckdb.DuckDBPyConnection, ruleset_ids: list[int],
                 sessions: pl.DataFrame, scored: pl.DataFrame, results: pl.DataFrame,
                 showdowns: Mapping[int, pl.DataFrame]) -> None:
    """Store one scored batch of whole sessions in one transaction: the results (rows
    of sessions scored before replaced), the showdowns of each natural mask, and the
    progress marks. ``sessions`` is (session_id, hands, session_hands, was_scored);
    ``scored`` the hands scored: (hand_key, session_id, variant, session_hands)."""
    marks = scored.group_by("session_id", "variant").agg(
        hands=pl.len().cast(pl.Int32), session_hands=pl.col("session_hands").first()
    ).sort("session_id", "variant")
    con.execute("BEGIN TRANSACTION")
    try:
        if sessions.get_column("was_scored").any():
            _forget(con, ruleset_ids, sessions.get_column("session_id").to_list())
        _append(con, results)
        _mark_scored(con, ruleset_ids, marks)
        for mask, rows in showdowns.items():
            _write_showdowns(con, rows, mask, marks, scored)
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def _forget(con: duckdb.DuckDBPyConnection, ruleset_ids: list[int], sessions: list[str]
            ) -> None:
    con.execute("""
        DELETE FROM results WHERE ruleset_id IN (SELECT unnest($1))
          AND hand_key IN (SELECT hand_key FROM hands WHERE session_id IN (SELECT unnest($2)))
    """, [ruleset_ids, sessions])
    con.execute("DELETE FROM scored_sessions WHERE ruleset_id IN (SELECT unnest($1)) "
                "AND session_id IN (SELECT unnest($2))", [ruleset_ids, sessions])


def _append(con: duckdb.DuckDBPyConnection, results: pl.DataFrame) -> None:
    # One chunk per column: DuckDB scans a contiguous frame faster than thirteen pieces.
    frame = results.select("ruleset_id", "hand_key", "seat", *RESULT_COLUMNS,
                           "unit_points").cast(
        {name: pl.Int32 for name in RESULT_COLUMNS if name != "fantasyland_earned"}
    ).rechunk()
    with registered(con, "new_results", frame):
        con.execute("INSERT INTO results SELECT * FROM new_results")


def _write_showdowns(con: duckdb.DuckDBPyConnection, showdowns: pl.DataFrame, mask: int,
                     marks: pl.DataFrame, scored: pl.DataFrame) -> None:
    """The batch's showdowns for one natural mask, of each session and variant not
    already stored whole; those stored before the session grew are replaced. Each
    variant of a session has its own mark: another variant's hands are left alone."""
    with registered(con, "batch_marks", marks.select("session_id", "variant", "hands")):
        status = con.sql("""
            SELECT b.session_id, b.variant, b.hands, d.hands AS stored
            FROM batch_marks b LEFT JOIN showdown_sessions d ON d.natural_mask = $mask
                AND d.session_id = b.session_id AND d.variant = b.variant
        """, params={"mask": mask}).pl()
    todo = status.filter(pl.col("stored").is_null() | (pl.col("stored") != pl.col("hands")))
    if todo.is_empty():
        return
    stale = todo.filter(pl.col("stored").is_not_null()).select("session_id", "variant")
    if not stale.is_empty():
        with registered(con, "stale_marks", stale):
            con.execute("""
                DELETE FROM showdowns WHERE natural_mask = $mask AND hand_key IN (
                    SELECT h.hand_key FROM hands h
                    JOIN stale_marks m USING (session_id, variant))
            """, {"mask": mask})
            con.execute("""
                DELETE FROM showdown_sessions WHERE natural_mask = $mask AND EXISTS (
                    SELECT 1 FROM stale_marks m WHERE m.session_id = showdown_sessions.session_id
                      AND m.variant = showdown_sessions.variant)
            """, {"mask": mask})
    rows = showdowns
    if todo.height < status.height:
        keys = scored.join(todo.select("session_id", "variant"), on=["session_id", "variant"],
                           how="semi").get_column("hand_key")
        rows = rows.filter(pl.col("hand_key").is_in(keys.implode()))
    frame = rows.select("hand_key", "seat", pl.lit(mask, dtype=pl.UInt8).alias("mask"),
                        *SHOWDOWN_COLUMNS).cast(
        {name: pl.Int32 for name in SHOWDOWN_COLUMNS if name != "fouled"}).rechunk()
    new_marks = todo.select(pl.lit(mask, dtype=pl.UInt8).alias("mask"), "session_id",
                            "variant", "hands")
    with registered(con, "new_showdowns", frame), \
            registered(con, "new_marks", new_marks):
        con.execute("INSERT INTO showdowns SELECT * FROM new_showdowns")
        con.execute("INSERT INTO showdown_sessions SELECT * FROM new_marks")


def _mark_scored(con: duckdb.DuckDBPyConnection, ruleset_ids: list[int],
                 marks: pl.DataFrame) -> None:
    rows = marks.join(pl.DataFrame({"ruleset_id": ruleset_ids},
                                   schema={"ruleset_id": pl.Int16}), how="cross")
    with registered(con, "new_marks", rows):
        con.execute("INSERT INTO scored_sessions SELECT ruleset_id, session_id, variant, "
                    "hands, session_hands FROM new_marks")


@dataclass(frozen=True)
class Writer:
    """Where :func:`write_scored` writes: the store's connection, or a second one to the
    same database for a writing thread (:meth:`ofcstats.store.Store.writer`)."""

    con: duckdb.DuckDBPyConnection

    def write_scored(self, ruleset_ids: list[int], sessions: pl.DataFrame,
                     scored: pl.DataFrame, results: pl.DataFrame,
                     showdowns: Mapping[int, pl.DataFrame]) -> None:
        """:func:`write_scored` on this connection."""
        write_scored(self.con, ruleset_ids, sessions, scored, results, showdowns)


def mark_rulesets_scored(con: duckdb.DuckDBPyConnection, ruleset_ids: Collection[int]
                         ) -> None:
    """Note the time the rulesets were last brought up to date."""
    con.execute("UPDATE rulesets SET scored_at = current_timestamp WHERE ruleset_id IN "
                "(SELECT unnest(?))", [list(ruleset_ids)])


def ruleset_definitions(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(name, definition as JSON) of every ruleset scored, in the order first scored."""
    return [(str(name), str(definition)) for name, definition in con.execute(
        "SELECT name, definition FROM rulesets ORDER BY ruleset_id").fetchall()]


def scored_ruleset_names(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The names of the rulesets scored."""
    return {name for (name,) in con.execute("SELECT name FROM rulesets").fetchall()}


@dataclass(frozen=True)
class Filters:
    """Which hands and rows an analysis looks at; None means no restriction."""

    rulesets: Sequence[str] | None = None
    sessions: Sequence[str] | None = None
    players: Sequence[str] | None = None
    variants: Sequence[str] | None = None
    since: datetime | None = None
    until: datetime | None = None

    def sql(self, columns: Mapping[str, str] | None = None, *, times: str | None = "played_at"
            ) -> tuple[str, list[object]]:
        """The filters as a SQL condition with its parameters. ``columns`` names the column
        of each filter (``ruleset``, ``session_id``, ``player``, ``variant``; a filter
        left out of it is not applied); ``times`` the time column (None: no time filter)."""
        names = {"ruleset": "ruleset", "session_id": "session_id", "player": "player",
                 "variant": "variant"} if columns is None else columns
        asked = {"ruleset": self.rulesets, "session_id": self.sessions,
                 "player": self.players, "variant": self.variants}
        where: list[str] = ["true"]
        params: list[object] = []
        for key, column in names.items():
            values = asked[key]
            if values is not None:
                # A list of values, not a subquery: DuckDB then filters the tables under
                # the view before joining them (a ruleset's rows in seconds, not all rows).
                where.append(f"{column} IN ({', '.join('?' * len(values))})" if values
                             else "false")
                params.extend(values)
        for bound, operator in ((self.since, ">="), (self.until, "<")):
            if bound is not None and times is not None:
                where.append(f"{times} {operator} ?")
                params.append(bound)
        return " AND ".join(where), params


def results_query(filters: Filters, columns: Sequence[str] | None
                  ) -> tuple[str, list[object]]:
    """The query of the rows of ``results_named`` that pass the filters (every column, or
    ``columns``), and its parameters."""
    where, params = filters.sql()
    wanted = "*" if columns is None else ", ".join(f'"{name}"' for name in columns)
    return f"SELECT {wanted} FROM results_named WHERE {where}", params


def session_hands(con: duckdb.DuckDBPyConnection, session_ids: pl.DataFrame
                  ) -> pl.DataFrame:
    """Every hand of the sessions in ``session_ids`` (a ``session_id`` column) with what
    play order and games need: time, table size, file and line, variant, stake, and
    whether any seat played it in fantasyland or timed out."""
    with registered(con, "wanted_sessions", session_ids):
        return con.sql(f"""
            SELECT h.hand_key, h.session_id, h.played_at, h.n_seats, h.file_id, h.line,
                   h.variant, {STAKE},
                   bool_or(s.fantasyland) AS fantasyland_hand,
                   bool_or(s.timed_out) AS timed_out_hand
            FROM hands h JOIN seats s USING (hand_key)
            WHERE h.session_id IN (SELECT session_id FROM wanted_sessions)
            GROUP BY ALL
        """).pl()


def scored_names(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every ``variant``, ``ruleset`` and ``player`` a row of ``results_named`` can have:
    the rulesets each variant was scored under (``scored_sessions``) and the players
    seated in its hands; a few rows, from the small tables."""
    return con.sql("""
        SELECT v.variant::VARCHAR AS variant, r.name::VARCHAR AS ruleset,
               p.player::VARCHAR AS player
        FROM (SELECT DISTINCT ruleset_id, variant FROM scored_sessions) v
        JOIN rulesets r USING (ruleset_id)
        JOIN (SELECT DISTINCT h.variant, s.player FROM seats s JOIN hands h USING (hand_key)) p
          USING (variant)
    """).pl()
