"""Re-scoring the store: every hand under every ruleset, kept in DuckDB, incrementally.

``rescore`` reads the seats of whole sessions from the store (Arrow into Polars),
scores them under the selected rulesets in one pass (:func:`ofcstats.score.score`, the
same code as ``ofcstats score``), applies what only the session knows (fantasyland
repeat limits: :mod:`ofcstats.session`) and appends the rows to ``results``.

Incremental by session: ``scored_sessions`` remembers how many hands of each session
each ruleset has scored. A session whose hand count has grown (new hands were
ingested) is scored again whole, because a repeat limit depends on the hands before;
a ruleset whose definition changed (same name, edited TOML) is scored again from
scratch. Work goes in batches of whole sessions, each batch in one transaction, so
memory stays bounded and an interrupted run loses only its current batch.

``scored_frame`` reads results back for analysis, with each hand's session, game and
play order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

import duckdb
import numpy as np
import polars as pl

from ofcstats import session
from ofcstats.errors import RulesetError, StoreError
from ofcstats.rules.load import ruleset_from
from ofcstats.rules.model import Ruleset
from ofcstats.score import SHOWDOWN_COLUMNS, available_cores, score_with_showdowns
from ofcstats.showdown import differs, hand_starts, showdown_key
from ofcstats.store import Store
from ofcstats.variants import Variant

_RESULT_COLUMNS = (
    "points", "royalty_top", "royalty_middle", "royalty_bottom", "royalty_points",
    "fantasyland_earned", "fantasyland_cards",
)
"""What ``results`` stores besides its key; ``fantasyland_next`` is ``fantasyland_cards``
> 0. The counts are stored as INTEGER, which DuckDB writes fastest (store.py, version 3)."""
BATCH_HANDS = 250_000

Progress = Callable[[int, int], None]
"""Called with (hands scored so far, hands to score)."""


@dataclass
class RescoreSummary:
    """What a rescore did."""

    rulesets: list[str] = field(default_factory=list)
    hands: int = 0  # hands scored (each under every ruleset that needed it)
    rows: int = 0  # rows written to results
    sessions: int = 0
    rebuilt: list[str] = field(default_factory=list)  # rulesets scored again from scratch
    seconds: float = 0.0


def fingerprint(ruleset: Ruleset) -> str:
    """A digest of everything the ruleset says, to notice an edited definition."""
    text = json.dumps(ruleset.to_dict(), sort_keys=True, ensure_ascii=False)
    return hashlib.md5(text.encode("utf-8")).hexdigest()  # a digest, not a secret


ALL_VARIANTS = tuple(v.value for v in Variant)


def _register(con: duckdb.DuckDBPyConnection, rulesets: Sequence[Ruleset], rebuild: bool,
              what_if: Collection[str] = ()
              ) -> tuple[dict[str, int], list[str], dict[str, tuple[str, ...]]]:
    """Ids for the rulesets, and the variants each is scored over; drop the results of
    those rebuilt or redefined.

    A ruleset is scored over the variants it is played under; one named in ``what_if``
    over every variant. A what-if, once asked for, stays until the ruleset is rebuilt.
    """
    ids: dict[str, int] = {}
    redo = []
    scopes: dict[str, tuple[str, ...]] = {}
    for ruleset in rulesets:
        digest = fingerprint(ruleset)
        definition = json.dumps(ruleset.to_dict(), ensure_ascii=False)
        declared = [v.value for v in ruleset.variants]
        asked = ALL_VARIANTS if ruleset.name in what_if else tuple(declared)
        row = con.execute("SELECT ruleset_id, fingerprint, scope FROM rulesets WHERE name = ?",
                          [ruleset.name]).fetchone()
        if row is None:
            next_id = con.execute("SELECT coalesce(max(ruleset_id), 0) + 1 FROM rulesets"
                                  ).fetchone()
            ruleset_id = int(next_id[0]) if next_id else 1
            scope = asked
            con.execute(
                "INSERT INTO rulesets (ruleset_id, name, description, natural_mask, "
                "fingerprint, definition, variants, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [ruleset_id, ruleset.name, ruleset.description,
                 showdown_key(ruleset), digest, definition, declared, list(scope)])
        else:
            ruleset_id = int(row[0])
            if rebuild or row[1] != digest:
                redo.append(ruleset.name)
                scope = asked
                con.execute("DELETE FROM results WHERE ruleset_id = ?", [ruleset_id])
                con.execute("DELETE FROM scored_sessions WHERE ruleset_id = ?", [ruleset_id])
            else:
                scope = tuple(v for v in ALL_VARIANTS if v in asked or v in (row[2] or ()))
            con.execute(
                "UPDATE rulesets SET fingerprint = ?, definition = ?, description = ?, "
                "natural_mask = ?, variants = ?, scope = ? WHERE ruleset_id = ?",
                [digest, definition, ruleset.description, showdown_key(ruleset),
                 declared, list(scope), ruleset_id])
        ids[ruleset.name] = ruleset_id
        scopes[ruleset.name] = scope
    return ids, redo, scopes


def _sessions_to_score(con: duckdb.DuckDBPyConnection, ruleset_id: int,
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


def _batches(sessions: pl.DataFrame, limit: int) -> list[pl.DataFrame]:
    """Whole sessions, grouped into batches of about ``limit`` hands, the first of about a
    quarter of that: nothing is written until the first batch is scored, so a small one
    sets the writing thread to work sooner."""
    if sessions.is_empty():
        return []
    limit = max(limit, 4)
    first = limit // 4
    done = sessions.get_column("hands").cum_sum() - 1
    group = pl.when(done < first).then(0).otherwise((done - first) // limit + 1)
    return [part for _, part in sessions.with_columns(batch=group).group_by(
        "batch", maintain_order=True)]


def read_sessions(con: duckdb.DuckDBPyConnection, session_ids: Sequence[str],
                  variants: Sequence[str] = ALL_VARIANTS
                  ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The seats frame (``hand_id`` holding the integer hand key), in hand and seat order,
    of whole sessions (their hands of ``variants``), and their hands with what play order
    and games need."""
    con.register("wanted_sessions", pl.DataFrame({"session_id": list(session_ids)}))
    try:
        seats = con.sql("""
            SELECT s.hand_key AS hand_id, h.variant, s.seat, s.player, s.fantasyland,
                   s.timed_out, s.surrendered, s.top, s.middle, s.bottom,
                   h.session_id, h.played_at, h.n_seats
            FROM hands h JOIN seats s USING (hand_key)
            WHERE h.session_id IN (SELECT session_id FROM wanted_sessions)
              AND list_contains($variants, h.variant)
        """, params={"variants": list(variants)}).pl()
    finally:
        con.unregister("wanted_sessions")
    # Sorted here rather than by DuckDB: the join returns them nearly in order, and
    # Polars sorts such a frame in a fraction of the time DuckDB's ORDER BY takes.
    seats = seats.sort("hand_id", "seat").cast({
        "seat": pl.Int8, "top": pl.Array(pl.UInt8, 3), "middle": pl.Array(pl.UInt8, 5),
        "bottom": pl.Array(pl.UInt8, 5)})
    starts = hand_starts(seats.get_column("hand_id"))
    if starts is None:  # cannot happen after the sort
        raise StoreError("the seats of a hand were read apart")
    def any_seat(column: str) -> pl.Series:
        flags = seats.get_column(column).to_numpy()
        return pl.Series(np.logical_or.reduceat(flags, starts) if len(starts)
                         else np.zeros(0, dtype=bool))

    hands = seats.select("hand_id", "session_id", "played_at", "n_seats")[starts].with_columns(
        fantasyland_hand=any_seat("fantasyland"), timed_out_hand=any_seat("timed_out"),
        hand_key=pl.col("hand_id"))
    return seats, hands


@dataclass
class _Batch:
    """One batch of sessions, scored: what goes to the database in one transaction."""

    sessions: pl.DataFrame  # session_id, hands, was_scored
    results: pl.DataFrame
    showdowns: dict[int, pl.DataFrame]


def score_sessions(seats: pl.DataFrame, hands: pl.DataFrame, rulesets: Sequence[Ruleset]
                   ) -> tuple[pl.DataFrame, dict[int, pl.DataFrame]]:
    """Score whole sessions, apply their fantasyland repeat limits, and keep the showdowns
    to store: every seat for natural mask 0, and for another mask only the hands in which
    it changes something (a seat holds one of its naturals, is fouled where misses are
    not counted, or holds a straight where straights rank in the wheel order)."""
    # One core is left to the thread writing the previous batch: the writes take longer.
    scored = score_with_showdowns(seats, rulesets, cores=max(1, available_cores() - 1))
    # Within a batch hands are known by their integer key, in ``hand_id`` too.
    capped = session.limit_repeats(scored.results, seats, hands, rulesets)
    showdowns = {}
    for mask, rows in scored.showdowns.items():
        kept = rows
        if mask:
            changed = rows.get_column("hand_id").filter(
                differs(scored.showdown_bits.to_numpy(), mask)).unique()
            kept = rows.filter(pl.col("hand_id").is_in(changed.implode()))
        showdowns[mask] = kept.rename({"hand_id": "hand_key"})
    return capped.rename({"hand_id": "hand_key"}), showdowns


@dataclass
class Plan:
    """What a rescore has to do: the rulesets' ids, those scored again from scratch, and
    groups of rulesets that need the same sessions of the same variants."""

    ids: dict[str, int]
    rebuilt: list[str]
    groups: list[tuple[list[Ruleset], tuple[str, ...], pl.DataFrame]]
    """(rulesets, variants, sessions to score: session_id, hands, was_scored)"""

    @property
    def total(self) -> int:
        """Hands to score (a hand counted once per group that scores it)."""
        return sum(int(sessions.get_column("hands").sum()) for _, _, sessions in self.groups)


def plan(store: Store, rulesets: Sequence[Ruleset], *, rebuild: bool = False,
         what_if: Collection[str] = ()) -> Plan:
    """Register the rulesets (dropping the results of those rebuilt or redefined) and
    find the sessions each group of them has still to score."""
    con = store.con
    unknown = sorted(set(what_if) - {r.name for r in rulesets})
    if unknown:
        raise StoreError(f"what-if {unknown[0]!r} is not among the rulesets being scored")
    with store.transaction():
        ids, rebuilt, scopes = _register(con, rulesets, rebuild, what_if)
    # Rulesets that need the same sessions of the same variants are scored together.
    by_sessions: dict[tuple[tuple[str, ...], tuple[str, ...]], list[Ruleset]] = {}
    todo: dict[tuple[tuple[str, ...], tuple[str, ...]], pl.DataFrame] = {}
    for ruleset in rulesets:
        scope = scopes[ruleset.name]
        sessions = _sessions_to_score(con, ids[ruleset.name], scope)
        key = (tuple(sessions.get_column("session_id").to_list()), scope)
        if key[0]:
            by_sessions.setdefault(key, []).append(ruleset)
            todo[key] = sessions
    return Plan(ids, rebuilt, [(group, key[1], todo[key]) for key, group in by_sessions.items()])


def with_ruleset_ids(results: pl.DataFrame, ruleset_ids: Sequence[int]) -> pl.DataFrame:
    """The scored rows (one block per ruleset, in order) with their rulesets' ids."""
    block = results.height // len(ruleset_ids)
    return results.with_columns(ruleset_id=pl.Series(
        np.repeat(np.array(ruleset_ids, dtype=np.int16), block)))


def write_batch(con: duckdb.DuckDBPyConnection, ruleset_ids: list[int], sessions: pl.DataFrame,
                results: pl.DataFrame, showdowns: dict[int, pl.DataFrame]) -> None:
    """Store one scored batch of whole sessions in one transaction."""
    _write(con, ruleset_ids, _Batch(sessions, results, showdowns))


def finish(store: Store, ids: Collection[int]) -> None:
    """Note when the rulesets were last scored."""
    with store.transaction():
        store.con.execute("UPDATE rulesets SET scored_at = current_timestamp WHERE ruleset_id "
                          "IN (SELECT unnest(?))", [list(ids)])


def rescore(store: Store, rulesets: Sequence[Ruleset], *, rebuild: bool = False,
            what_if: Collection[str] = (), progress: Progress | None = None,
            batch_hands: int = BATCH_HANDS) -> RescoreSummary:
    """Score every hand not yet scored under each ruleset, session by session.

    A ruleset scores the hands of the variants it is played under; those named in
    ``what_if`` score every hand, the rows of other variants marked as what-ifs.

    Batches are read and scored on this thread while the previous batch is written on
    another (DuckDB writes without holding Python's lock), so the two overlap; at most
    two batches are in memory.
    """
    started = datetime.now()
    con = store.con
    summary = RescoreSummary(rulesets=[r.name for r in rulesets])
    work = plan(store, rulesets, rebuild=rebuild, what_if=what_if)
    ids = work.ids
    summary.rebuilt = work.rebuilt
    total = work.total
    done = 0
    writer = store.con.cursor()  # a second connection to the same database, for the writes
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending: Future[None] | None = None
        for group, variants, todo in work.groups:
            group_ids = [ids[r.name] for r in group]
            for sessions in _batches(todo, batch_hands):
                names = sessions.get_column("session_id").to_list()
                seats, hands = read_sessions(con, names, variants)
                results, showdowns = score_sessions(seats, hands, group)
                results = with_ruleset_ids(results, group_ids)
                if pending is not None:
                    pending.result()  # the previous batch is written; its errors surface here
                pending = pool.submit(_write, writer, group_ids,
                                      _Batch(sessions, results, showdowns))
                done += int(sessions.get_column("hands").sum())
                summary.hands += hands.height
                summary.rows += results.height
                summary.sessions += sessions.height
                if progress is not None:
                    progress(done, total)
        if pending is not None:
            pending.result()
    writer.close()
    finish(store, ids.values())
    summary.seconds = (datetime.now() - started).total_seconds()
    return summary


def _write(con: duckdb.DuckDBPyConnection, ruleset_ids: list[int], batch: _Batch) -> None:
    """Store one scored batch in one transaction: results, showdowns, progress marks."""
    con.execute("BEGIN TRANSACTION")
    try:
        if batch.sessions.get_column("was_scored").any():
            _forget(con, ruleset_ids, batch.sessions.get_column("session_id").to_list())
        _append(con, batch.results)
        _mark_scored(con, ruleset_ids, batch.sessions)
        for mask, showdowns in batch.showdowns.items():
            _write_showdowns(con, showdowns, mask, batch.sessions)
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
    frame = results.select("ruleset_id", "hand_key", "seat", *_RESULT_COLUMNS).cast(
        {name: pl.Int32 for name in _RESULT_COLUMNS if name != "fantasyland_earned"}
    ).rechunk()
    con.register("new_results", frame)
    try:
        con.execute("INSERT INTO results SELECT * FROM new_results")
    finally:
        con.unregister("new_results")


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
    con.register("new_showdowns", frame)
    con.register("new_marks", marks)
    try:
        con.execute("INSERT INTO showdowns SELECT * FROM new_showdowns")
        con.execute("INSERT INTO showdown_sessions SELECT * FROM new_marks")
    finally:
        con.unregister("new_showdowns")
        con.unregister("new_marks")


def _mark_scored(con: duckdb.DuckDBPyConnection, ruleset_ids: list[int],
                 batch: pl.DataFrame) -> None:
    marks = batch.select("session_id", "hands").join(
        pl.DataFrame({"ruleset_id": ruleset_ids}, schema={"ruleset_id": pl.Int16}),
        how="cross")
    con.register("new_marks", marks)
    try:
        con.execute("INSERT INTO scored_sessions SELECT ruleset_id, session_id, hands "
                    "FROM new_marks")
    finally:
        con.unregister("new_marks")


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


REPEATED_COLUMNS = ("ruleset", "player", "session_id", "variant", "played_ruleset")
"""Columns of ``results_named`` whose few distinct strings repeat on every row."""


def _categorical_frame(relation: duckdb.DuckDBPyRelation, rows: int = 1 << 20,
                       progress: Callable[[int, int | None], None] | None = None
                       ) -> pl.DataFrame:
    """The relation's rows, fetched a million at a time with :data:`REPEATED_COLUMNS` made
    categorical as they arrive: as plain strings, tens of millions of rows take several
    times the memory."""
    def shrunk(part: pl.DataFrame) -> pl.DataFrame:
        return part.with_columns(pl.col(c).cast(pl.Categorical) for c in REPEATED_COLUMNS
                                 if c in part.columns)

    # DuckDB 2 renamed fetch_record_batch (kept, deprecated) to to_arrow_reader.
    reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_record_batch
    parts = []
    for batch in reader(rows):
        parts.append(shrunk(pl.DataFrame(batch)))
        if progress is not None:
            progress(sum(part.height for part in parts), None)
    return pl.concat(parts) if parts else shrunk(relation.limit(0).pl())


def scored_frame(store: Store, filters: Filters = Filters(),
                 columns: Sequence[str] | None = None, *, categorical: bool = False,
                 progress: Callable[[int, int | None], None] | None = None
                 ) -> pl.DataFrame:
    """Results with what analysis needs: session, game, play order, variant, table size,
    the seat's fantasyland flag and reported points, and the ruleset the hand was played
    under. A player filter keeps that player's rows only.

    ``columns`` keeps only those columns of ``results_named`` (plus ``order`` and
    ``game`` when named): tens of millions of rows then fit in little memory. Rows come
    in play order (ruleset, session, order, seat) when ``order`` or ``game`` is among
    them or ``columns`` is None, in no particular order otherwise.

    ``categorical`` gives :data:`REPEATED_COLUMNS` as ``pl.Categorical`` rather than
    strings, fetching the rows in parts: a fraction of the memory for large stores;
    ``progress(rows, None)`` is then called as the parts arrive.
    """
    con = store.con
    known = {name for (name,) in con.execute("SELECT name FROM rulesets").fetchall()}
    if filters.rulesets is not None:
        missing = [name for name in filters.rulesets if name not in known]
        if missing:
            raise StoreError(f"not scored under {', '.join(missing)}: run "
                             f"ofcstats rescore --ruleset {missing[0]}")
    where, params = filters.sql()
    in_order = columns is None or "order" in columns or "game" in columns
    wanted = "*" if columns is None else ", ".join(
        f'"{name}"' for name in dict.fromkeys(
            [*(c for c in columns if c not in ("order", "game")),
             *(("hand_key", "session_id") if in_order else ())]))
    relation = con.sql(f"SELECT {wanted} FROM results_named WHERE {where}", params=params)
    frame = _categorical_frame(relation, progress=progress) if categorical else relation.pl()
    if frame.is_empty() or not in_order:
        return frame
    # Games and play order come from whole sessions, whichever rows were asked for.
    con.register("wanted_sessions", frame.select(pl.col("session_id").unique()))
    try:
        hands = con.sql("""
            SELECT h.hand_key, h.session_id, h.played_at, h.n_seats, h.file_id, h.line,
                   h.variant, coalesce(h.point_value, 1) AS stake,
                   bool_or(s.fantasyland) AS fantasyland_hand,
                   bool_or(s.timed_out) AS timed_out_hand
            FROM hands h JOIN seats s USING (hand_key)
            WHERE h.session_id IN (SELECT session_id FROM wanted_sessions)
            GROUP BY ALL
        """).pl()
    finally:
        con.unregister("wanted_sessions")
    # Each hand's place in play order (session, then order in it), as one integer; its
    # game as the log's stakes make it (the money in :mod:`ofcstats.analysis`).
    places = session.hand_order(hands, split_on=["variant", "stake"]).select(
        "hand_key", "session_id", "order", "game").sort("session_id", "order").with_columns(
        _place=pl.int_range(pl.len(), dtype=pl.UInt32)).drop("session_id").collect()
    # Sort integer keys alone (ruleset by name, place, seat), then move every column
    # once: joining and sorting the whole frame would copy its wide columns twice.
    key_columns = [pl.col("hand_key")]
    sort_by = ["_place"]
    if "ruleset" in frame.columns:
        names = pl.Enum(sorted(frame.get_column("ruleset").unique().to_list()))
        key_columns.append(pl.col("ruleset").cast(names).to_physical().alias("_ruleset"))
        sort_by.insert(0, "_ruleset")
    if "seat" in frame.columns:
        key_columns.append(pl.col("seat"))
        sort_by.append("seat")
    keys = frame.select(key_columns).with_row_index("_row").join(
        places, on="hand_key").sort(sort_by)
    ordered = frame[keys.get_column("_row")].with_columns(keys.get_column("order"),
                                                          keys.get_column("game"))
    return ordered if columns is None else ordered.select(*dict.fromkeys(columns))


def stored_rulesets(store: Store, names: Sequence[str] | None = None) -> list[Ruleset]:
    """The rulesets the store has scored (or those named), as they were when scored."""
    rows = store.con.execute("SELECT name, definition FROM rulesets ORDER BY ruleset_id"
                             ).fetchall()
    found = {}
    for name, definition in rows:
        try:
            found[name] = ruleset_from(json.loads(definition), f"the stored ruleset {name}")
        except RulesetError as error:
            raise StoreError(f"{error}; it was scored by another version of ofcstats: score "
                             f"it again with ofcstats rescore --rebuild --ruleset "
                             f"NAME_OR_FILE") from None
    if names is None:
        return list(found.values())
    missing = [name for name in names if name not in found]
    if missing:
        raise StoreError(f"not scored under {', '.join(missing)}: run "
                         f"ofcstats rescore --ruleset {missing[0]}")
    return [found[name] for name in names]
