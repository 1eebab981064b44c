"""What rescoring reads and writes: rulesets, results, showdowns and their progress.

The SQL of :mod:`ofcstats.pipeline` lives here; the pipeline hands over frames and
gets frames back. Functions take a connection rather than a :class:`~ofcstats.store.Store`
because the pipeline writes on a second cursor of the same database, on another thread.

- ``rulesets``: one row per ruleset scored, with its definition and the variants it is
  scored over (:func:`register_ruleset`).
- ``results`` and ``scored_sessions``: each ruleset's rows, and how many hands of each
  session it has scored; ``showdowns`` and ``showdown_sessions`` the same for what
  every ruleset shares, per natural mask (:func:`write_scored`).
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
from ofcstats.store.connect import registered
from ofcstats.variants import Variant

ALL_VARIANTS = tuple(v.value for v in Variant)

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


def sessions_to_score(con: duckdb.DuckDBPyConnection, ruleset_id: int,
                      scope: Sequence[str]) -> pl.DataFrame:
    """Sessions with hands the ruleset has not scored, counting only the hands of the
    variants in ``scope``: (session_id, hands, was_scored)."""
    return con.sql("""
        SELECT h.session_id, h.hands, s.hands IS NOT NULL AS was_scored
        FROM (SELECT session_id, count(*)::INTEGER AS hands FROM hands
              WHERE list_contains($scope, variant) GROUP BY session_id) h
        LEFT JOIN scored_sessions s ON s.session_id = h.session_id AND s.ruleset_id = $id
        WHERE s.hands IS NULL OR s.hands <> h.hands
        ORDER BY h.session_id
    """, params={"scope": list(scope), "id": ruleset_id}).pl()


def session_seats(con: duckdb.DuckDBPyConnection, session_ids: Sequence[str],
                  variants: Sequence[str]) -> pl.DataFrame:
    """The seats of whole sessions (their hands of ``variants``), ``hand_id`` holding the
    integer hand key, with each hand's session, time and table size; in no set order."""
    with registered(con, "wanted_sessions", pl.DataFrame({"session_id": list(session_ids)})):
        return con.sql("""
            SELECT s.hand_key AS hand_id, h.variant, s.seat, s.player, s.fantasyland,
                   s.timed_out, s.surrendered, s.top, s.middle, s.bottom, s.unit,
                   h.session_id, h.played_at, h.n_seats
            FROM hands h JOIN seats s USING (hand_key)
            WHERE h.session_id IN (SELECT session_id FROM wanted_sessions)
              AND list_contains($variants, h.variant)
        """, params={"variants": list(variants)}).pl()


def write_scored(con: duckdb.DuckDBPyConnection, ruleset_ids: list[int],
                 sessions: pl.DataFrame, results: pl.DataFrame,
                 showdowns: Mapping[int, pl.DataFrame]) -> None:
    """Store one scored batch of whole sessions in one transaction: the results (rows
    of sessions scored before replaced), the showdowns of each natural mask, and the
    progress marks. ``sessions`` is (session_id, hands, was_scored)."""
    con.execute("BEGIN TRANSACTION")
    try:
        if sessions.get_column("was_scored").any():
            _forget(con, ruleset_ids, sessions.get_column("session_id").to_list())
        _append(con, results)
        _mark_scored(con, ruleset_ids, sessions)
        for mask, rows in showdowns.items():
            _write_showdowns(con, rows, mask, sessions)
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
                     batch: pl.DataFrame) -> None:
    """The batch's showdowns for one natural mask, unless already stored whole."""
    done = con.sql("""
        SELECT session_id, hands FROM showdown_sessions WHERE natural_mask = ?
    """, params=[mask]).pl()
    status = batch.select("session_id", "hands").join(
        done.rename({"hands": "stored"}), on="session_id", how="left")
    if (status.get_column("stored") == status.get_column("hands")).fill_null(False).all():
        return
    # Sessions with older showdowns (they have grown since) are written again whole.
    stale = status.filter(pl.col("stored").is_not_null()).get_column("session_id").to_list()
    if stale:
        con.execute("""
            DELETE FROM showdowns WHERE natural_mask = $1 AND hand_key IN
                (SELECT hand_key FROM hands WHERE session_id IN (SELECT unnest($2)))
        """, [mask, stale])
        con.execute("DELETE FROM showdown_sessions WHERE natural_mask = $1 "
                    "AND session_id IN (SELECT unnest($2))", [mask, stale])
    frame = showdowns.select("hand_key", "seat", pl.lit(mask, dtype=pl.UInt8).alias("mask"),
                             *SHOWDOWN_COLUMNS).cast(
        {name: pl.Int32 for name in SHOWDOWN_COLUMNS if name != "fouled"}).rechunk()
    marks = batch.select(pl.lit(mask, dtype=pl.UInt8).alias("mask"), "session_id", "hands")
    with registered(con, "new_showdowns", frame), \
            registered(con, "new_marks", marks):
        con.execute("INSERT INTO showdowns SELECT * FROM new_showdowns")
        con.execute("INSERT INTO showdown_sessions SELECT * FROM new_marks")


def _mark_scored(con: duckdb.DuckDBPyConnection, ruleset_ids: list[int],
                 batch: pl.DataFrame) -> None:
    marks = batch.select("session_id", "hands").join(
        pl.DataFrame({"ruleset_id": ruleset_ids}, schema={"ruleset_id": pl.Int16}),
        how="cross")
    with registered(con, "new_marks", marks):
        con.execute("INSERT INTO scored_sessions SELECT ruleset_id, session_id, hands "
                    "FROM new_marks")


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


def results_relation(con: duckdb.DuckDBPyConnection, filters: Filters,
                     columns: Sequence[str] | None) -> duckdb.DuckDBPyRelation:
    """The rows of ``results_named`` that pass the filters: every column, or ``columns``."""
    where, params = filters.sql()
    wanted = "*" if columns is None else ", ".join(f'"{name}"' for name in columns)
    return con.sql(f"SELECT {wanted} FROM results_named WHERE {where}", params=params)


def session_hands(con: duckdb.DuckDBPyConnection, session_ids: pl.DataFrame
                  ) -> pl.DataFrame:
    """Every hand of the sessions in ``session_ids`` (a ``session_id`` column) with what
    play order and games need: time, table size, file and line, variant, stake, and
    whether any seat played it in fantasyland or timed out."""
    with registered(con, "wanted_sessions", session_ids):
        return con.sql("""
            SELECT h.hand_key, h.session_id, h.played_at, h.n_seats, h.file_id, h.line,
                   h.variant, coalesce(h.point_value, 1) AS stake,
                   bool_or(s.fantasyland) AS fantasyland_hand,
                   bool_or(s.timed_out) AS timed_out_hand
            FROM hands h JOIN seats s USING (hand_key)
            WHERE h.session_id IN (SELECT session_id FROM wanted_sessions)
            GROUP BY ALL
        """).pl()
