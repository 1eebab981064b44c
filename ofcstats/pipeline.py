"""Re-scoring the store: every hand under every ruleset, kept in DuckDB, incrementally.

``rescore`` reads the seats of whole sessions from the store (Arrow into Polars),
scores them under the selected rulesets in one pass (:func:`ofcstats.score.score`, the
same code as ``ofcstats score``), applies what only the session knows (fantasyland
repeat limits: :mod:`ofcstats.session`) and appends the rows to ``results``.

What several rulesets share is stored once: the showdown (per natural mask), the
royalties (per royalty scheme: table, spade switch, natural mask) and fantasyland (per
policy); ``results`` holds each ruleset's points. Writing fewer values is most of
what keeps a rescore fast.

Incremental by session: ``stored_sessions`` remembers, per part, how many hands of each
session are stored. A session whose hand count has grown (new hands were ingested) is
scored again whole, because a repeat limit depends on the hands before; a ruleset
whose definition changed (same name, edited TOML) is scored again from scratch. Work
goes in batches of whole sessions, each batch written in one transaction, so memory
stays bounded and an interrupted run loses only its current batch.

``scored_frame`` reads results back for analysis, with each hand's session, game and
play order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

import duckdb
import polars as pl

from ofcstats import session
from ofcstats.errors import StoreError
from ofcstats.rules.load import ruleset_from
from ofcstats.rules.model import Ruleset
from ofcstats.score import SHOWDOWN_COLUMNS, score_with_showdowns
from ofcstats.showdown import natural_mask
from ofcstats.store import Store

PARTS: dict[str, tuple[str, ...]] = {
    "results": ("points",),
    "royalties": ("royalty_top", "royalty_middle", "royalty_bottom", "royalty_points"),
    "fantasylands": ("fantasyland_earned", "fantasyland_next", "fantasyland_cards"),
    "showdowns": SHOWDOWN_COLUMNS,
}
"""Each stored part, named as its table, and its value columns (after the part's id,
``hand_key`` and ``seat``; showdowns put the natural mask third)."""
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


def _digest(data: object) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return hashlib.md5(text.encode("utf-8")).hexdigest()  # a digest, not a secret


def fingerprint(ruleset: Ruleset) -> str:
    """A digest of everything the ruleset says, to notice an edited definition."""
    return _digest(ruleset.to_dict())


@dataclass(frozen=True)
class _Ids:
    """A ruleset's keys in the store: its own, and those of the parts it shares."""

    ruleset: int
    mask: int
    royalty: int | None
    policy: int | None

    def parts(self) -> list[tuple[str, int]]:
        """Every (part, id) the ruleset's results need."""
        needed = [("results", self.ruleset), ("showdowns", 0)]
        if self.mask:
            needed.append(("showdowns", self.mask))
        if self.royalty is not None:
            needed.append(("royalties", self.royalty))
        if self.policy is not None:
            needed.append(("fantasylands", self.policy))
        return needed


def _shared_id(con: duckdb.DuckDBPyConnection, table: str, column: str, digest: str,
               label: str) -> int:
    """The id of a shared part by its fingerprint, registering it when new."""
    row = con.execute(f"SELECT {column} FROM {table} WHERE fingerprint = ?", [digest]
                      ).fetchone()
    if row is not None:
        return int(row[0])
    top = con.execute(f"SELECT coalesce(max({column}), 0) + 1 FROM {table}").fetchone()
    new_id = int(top[0]) if top else 1
    con.execute(f"INSERT INTO {table} VALUES (?, ?, ?)", [new_id, digest, label])
    return new_id


def _register(con: duckdb.DuckDBPyConnection, rulesets: Sequence[Ruleset], rebuild: bool
              ) -> tuple[dict[str, _Ids], list[str]]:
    """Keys for the rulesets and their shared parts; drop the points of those rebuilt or
    redefined."""
    ids: dict[str, _Ids] = {}
    redo = []
    for ruleset in rulesets:
        digest = fingerprint(ruleset)
        definition = ruleset.to_dict()
        mask = natural_mask(ruleset.naturals)
        royalty = None if ruleset.royalties.is_empty else _shared_id(
            con, "royalty_schemes", "royalty_id",
            _digest([definition["royalties"], ruleset.spade_bonus, mask]),
            f"{ruleset.royalties.name}{', 2♠ doubles' if ruleset.spade_bonus else ''}")
        policy = None if not ruleset.fantasyland.enters else _shared_id(
            con, "fantasyland_policies", "policy_id", _digest(definition["fantasyland"]),
            ruleset.fantasyland.name)
        row = con.execute("SELECT ruleset_id, fingerprint FROM rulesets WHERE name = ?",
                          [ruleset.name]).fetchone()
        values = [ruleset.description, mask, royalty, policy, digest,
                  json.dumps(definition, ensure_ascii=False)]
        if row is None:
            top = con.execute("SELECT coalesce(max(ruleset_id), 0) + 1 FROM rulesets"
                              ).fetchone()
            ruleset_id = int(top[0]) if top else 1
            con.execute("INSERT INTO rulesets VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                        [ruleset_id, ruleset.name, *values])
        else:
            ruleset_id = int(row[0])
            if rebuild or row[1] != digest:
                redo.append(ruleset.name)
                con.execute("DELETE FROM results WHERE ruleset_id = ?", [ruleset_id])
                con.execute("DELETE FROM stored_sessions WHERE part = 'results' "
                            "AND part_id = ?", [ruleset_id])
                con.execute(
                    "UPDATE rulesets SET description = ?, natural_mask = ?, royalty_id = ?, "
                    "policy_id = ?, fingerprint = ?, definition = ? WHERE ruleset_id = ?",
                    [*values, ruleset_id])
        ids[ruleset.name] = _Ids(ruleset_id, mask, royalty, policy)
    return ids, redo


def _sessions_to_score(con: duckdb.DuckDBPyConnection, ids: _Ids, everything: bool
                       ) -> pl.DataFrame:
    """Sessions where a part the ruleset needs is missing or out of date (all of them
    when ``everything``): (session_id, hands)."""
    parts = pl.DataFrame(ids.parts(), schema={"part": pl.String, "part_id": pl.Int16},
                         orient="row")
    con.register("needed_parts", parts)
    try:
        return con.sql(f"""
            WITH current AS (
                SELECT session_id, count(*)::INTEGER AS hands FROM hands GROUP BY session_id
            )
            SELECT c.session_id, c.hands FROM current c
            WHERE {'true' if everything else 'false'} OR EXISTS (
                SELECT 1 FROM needed_parts n
                LEFT JOIN stored_sessions s ON s.part = n.part AND s.part_id = n.part_id
                                           AND s.session_id = c.session_id
                WHERE s.hands IS NULL OR s.hands <> c.hands)
            ORDER BY c.session_id
        """).pl()
    finally:
        con.unregister("needed_parts")


def _batches(sessions: pl.DataFrame, limit: int) -> list[pl.DataFrame]:
    """Whole sessions, grouped into batches of about ``limit`` hands."""
    if sessions.is_empty():
        return []
    group = (sessions.get_column("hands").cum_sum() - 1) // max(limit, 1)
    return [part for _, part in sessions.with_columns(batch=group).group_by(
        "batch", maintain_order=True)]


def read_sessions(con: duckdb.DuckDBPyConnection, session_ids: Sequence[str]
                  ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The seats frame (``hand_id`` holding the integer hand key) of whole sessions, and
    their hands with what play order and games need."""
    con.register("wanted_sessions", pl.DataFrame({"session_id": list(session_ids)}))
    try:
        seats = con.sql("""
            SELECT s.hand_key AS hand_id, h.variant, s.seat, s.player, s.fantasyland,
                   s.timed_out, s.surrendered, s.top, s.middle, s.bottom,
                   h.session_id, h.played_at, h.n_seats
            FROM hands h JOIN seats s USING (hand_key)
            WHERE h.session_id IN (SELECT session_id FROM wanted_sessions)
            ORDER BY s.hand_key, s.seat
        """).pl()
    finally:
        con.unregister("wanted_sessions")
    seats = seats.cast({"seat": pl.Int8, "top": pl.Array(pl.UInt8, 3),
                        "middle": pl.Array(pl.UInt8, 5), "bottom": pl.Array(pl.UInt8, 5)})
    hands = seats.group_by("hand_id", maintain_order=True).agg(
        pl.col("session_id").first(), pl.col("played_at").first(), pl.col("n_seats").first(),
        fantasyland_hand=pl.col("fantasyland").any(),
    ).with_columns(hand_key=pl.col("hand_id"))
    return seats, hands


@dataclass
class _Batch:
    """One batch of sessions, scored: every part to store, keyed by (part, id)."""

    sessions: pl.DataFrame  # session_id, hands
    parts: dict[tuple[str, int], pl.DataFrame]  # hand_key, seat, the part's columns


def score_sessions(seats: pl.DataFrame, hands: pl.DataFrame, rulesets: Sequence[Ruleset]
                   ) -> tuple[pl.DataFrame, dict[int, pl.DataFrame]]:
    """Score whole sessions, apply their fantasyland repeat limits, and keep the showdowns
    to store: every seat for natural mask 0, and for another mask only the hands in which
    it changes something (a seat holds one of its naturals)."""
    scored = score_with_showdowns(seats, rulesets)
    # Within a batch hands are known by their integer key, in ``hand_id`` too.
    order = session.hand_order(hands).collect()
    streaks = session.fantasyland_streaks(
        seats.select("hand_id", "seat", "player", "fantasyland"), order)
    capped = session.apply_repeat_limits(scored.results, streaks, rulesets)
    showdowns = {}
    for mask, rows in scored.showdowns.items():
        kept = rows
        if mask:
            changed = rows.get_column("hand_id").filter(
                (scored.natural_bits & mask) != 0).unique()
            kept = rows.filter(pl.col("hand_id").is_in(changed.implode()))
        showdowns[mask] = kept.rename({"hand_id": "hand_key"})
    return capped.rename({"hand_id": "hand_key"}), showdowns


def _parts(results: pl.DataFrame, showdowns: dict[int, pl.DataFrame],
           rulesets: Sequence[Ruleset], ids: dict[str, _Ids]
           ) -> dict[tuple[str, int], pl.DataFrame]:
    """Cut a batch's results into the parts the store keeps: a ruleset's points, and each
    shared part once (taken from the first ruleset that has it)."""
    block = results.height // len(rulesets)
    parts: dict[tuple[str, int], pl.DataFrame] = {}
    for index, ruleset in enumerate(rulesets):
        rows = results.slice(index * block, block)
        key = ids[ruleset.name]
        shared = (("results", key.ruleset), ("royalties", key.royalty),
                  ("fantasylands", key.policy))
        for part, part_id in shared:
            if part_id is not None and (part, part_id) not in parts:
                parts[(part, part_id)] = rows.select("hand_key", "seat", *PARTS[part])
    for mask, rows in showdowns.items():
        parts[("showdowns", mask)] = rows.select("hand_key", "seat", *SHOWDOWN_COLUMNS)
    return parts


def rescore(store: Store, rulesets: Sequence[Ruleset], *, rebuild: bool = False,
            progress: Progress | None = None, batch_hands: int = BATCH_HANDS
            ) -> RescoreSummary:
    """Score every hand not yet scored under each ruleset, session by session.

    Batches are read and scored on this thread while the previous batch is written on
    another (DuckDB writes without holding Python's lock), so the two overlap; at most
    two batches are in memory. With ``rebuild`` every part is written again.
    """
    started = datetime.now()
    con = store.con
    summary = RescoreSummary(rulesets=[r.name for r in rulesets])
    with store.transaction():
        ids, summary.rebuilt = _register(con, rulesets, rebuild)
    # Rulesets that need the same sessions are scored together, in one pass.
    by_sessions: dict[tuple[str, ...], list[Ruleset]] = {}
    todo: dict[tuple[str, ...], pl.DataFrame] = {}
    for ruleset in rulesets:
        sessions = _sessions_to_score(con, ids[ruleset.name], rebuild)
        key = tuple(sessions.get_column("session_id").to_list())
        if key:
            by_sessions.setdefault(key, []).append(ruleset)
            todo[key] = sessions
    total = sum(int(todo[k].get_column("hands").sum()) for k in todo)
    done = 0
    written: set[tuple[str, int]] = set()  # parts rewritten in this run (for rebuild)
    writer = store.con.cursor()  # a second connection to the same database, for the writes
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending: Future[None] | None = None
        for key, group in by_sessions.items():
            for sessions in _batches(todo[key], batch_hands):
                seats, hands = read_sessions(con, sessions.get_column("session_id").to_list())
                results, showdowns = score_sessions(seats, hands, group)
                parts = _parts(results, showdowns, group, ids)
                force = set(parts) - written if rebuild else set()
                if pending is not None:
                    pending.result()  # the previous batch is written; its errors surface here
                pending = pool.submit(_write, writer, _Batch(sessions, parts), force)
                done += int(sessions.get_column("hands").sum())
                summary.hands += hands.height
                summary.rows += results.height
                summary.sessions += sessions.height
                if progress is not None:
                    progress(done, total)
            written |= {part for ruleset in group for part in ids[ruleset.name].parts()}
        if pending is not None:
            pending.result()
    writer.close()
    with store.transaction():
        con.execute("UPDATE rulesets SET scored_at = current_timestamp WHERE ruleset_id IN "
                    "(SELECT unnest(?))", [[i.ruleset for i in ids.values()]])
    summary.seconds = (datetime.now() - started).total_seconds()
    return summary


def _write(con: duckdb.DuckDBPyConnection, batch: _Batch, force: set[tuple[str, int]]
           ) -> None:
    """Store one scored batch in one transaction: each part its sessions lack, or all
    those in ``force``."""
    con.execute("BEGIN TRANSACTION")
    try:
        for (part, part_id), rows in batch.parts.items():
            _write_part(con, part, part_id, rows, batch.sessions, (part, part_id) in force)
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def _write_part(con: duckdb.DuckDBPyConnection, part: str, part_id: int, rows: pl.DataFrame,
                sessions: pl.DataFrame, force: bool) -> None:
    """One part of a batch, unless already stored whole for every session of the batch.

    Sessions stored before (they have grown since, or ``force``) are written again
    whole: their old rows go first.
    """
    stored = con.sql("SELECT session_id, hands AS stored FROM stored_sessions "
                     "WHERE part = ? AND part_id = ?", params=[part, part_id]).pl()
    status = sessions.select("session_id", "hands").join(stored, on="session_id", how="left")
    current = (status.get_column("stored") == status.get_column("hands")).fill_null(False)
    if current.all() and not force:
        return
    stale = status.filter(pl.col("stored").is_not_null()).get_column("session_id").to_list()
    table, id_column = part, _ID_COLUMNS[part]
    if stale:
        con.execute(f"""
            DELETE FROM {table} WHERE {id_column} = $1 AND hand_key IN
                (SELECT hand_key FROM hands WHERE session_id IN (SELECT unnest($2)))
        """, [part_id, stale])
        con.execute("DELETE FROM stored_sessions WHERE part = $1 AND part_id = $2 "
                    "AND session_id IN (SELECT unnest($3))", [part, part_id, stale])
    # One chunk per column: DuckDB scans a contiguous frame faster than many pieces.
    if part == "showdowns":
        frame = rows.select("hand_key", "seat", pl.lit(part_id, dtype=pl.UInt8),
                            *PARTS[part]).rechunk()
    else:
        frame = rows.select(pl.lit(part_id, dtype=pl.Int16), "hand_key", "seat",
                            *PARTS[part]).rechunk()
    marks = sessions.select(pl.lit(part).alias("part"),
                            pl.lit(part_id, dtype=pl.Int16).alias("part_id"),
                            "session_id", "hands")
    con.register("new_rows", frame)
    con.register("new_marks", marks)
    try:
        con.execute(f"INSERT INTO {table} SELECT * FROM new_rows")
        con.execute("INSERT INTO stored_sessions SELECT * FROM new_marks")
    finally:
        con.unregister("new_rows")
        con.unregister("new_marks")


_ID_COLUMNS = {"results": "ruleset_id", "royalties": "royalty_id",
               "fantasylands": "policy_id", "showdowns": "natural_mask"}


@dataclass(frozen=True)
class Filters:
    """Which hands and rows an analysis looks at; None means no restriction."""

    rulesets: Sequence[str] | None = None
    sessions: Sequence[str] | None = None
    players: Sequence[str] | None = None
    variants: Sequence[str] | None = None
    since: datetime | None = None
    until: datetime | None = None


def scored_frame(store: Store, filters: Filters = Filters()) -> pl.DataFrame:
    """Results with what analysis needs: session, game, play order, variant, table size,
    the seat's fantasyland flag and reported points, and the ruleset the hand was played
    under. A player filter keeps that player's rows only."""
    con = store.con
    known = {name for (name,) in con.execute("SELECT name FROM rulesets").fetchall()}
    if filters.rulesets is not None:
        missing = [name for name in filters.rulesets if name not in known]
        if missing:
            raise StoreError(f"not scored under {', '.join(missing)}: run "
                             f"ofcstats rescore --ruleset {missing[0]}")
    where: list[str] = ["true"]
    params: list[object] = []
    for column, values in (("ruleset", filters.rulesets), ("session_id", filters.sessions),
                           ("player", filters.players), ("variant", filters.variants)):
        if values is not None:
            where.append(f"{column} IN (SELECT unnest(?))")
            params.append(list(values))
    if filters.since is not None:
        where.append("played_at >= ?")
        params.append(filters.since)
    if filters.until is not None:
        where.append("played_at < ?")
        params.append(filters.until)
    frame = con.sql(f"SELECT * FROM results_named WHERE {' AND '.join(where)}",
                    params=params).pl()
    if frame.is_empty():
        return frame
    # Games and play order come from whole sessions, whichever rows were asked for.
    con.register("wanted_sessions", frame.select(pl.col("session_id").unique()))
    try:
        hands = con.sql("""
            SELECT h.hand_key, h.session_id, h.played_at, h.n_seats, h.file_id, h.line,
                   bool_or(s.fantasyland) AS fantasyland_hand
            FROM hands h JOIN seats s USING (hand_key)
            WHERE h.session_id IN (SELECT session_id FROM wanted_sessions)
            GROUP BY ALL
        """).pl()
    finally:
        con.unregister("wanted_sessions")
    order = session.hand_order(hands).select("hand_key", "order", "game").collect()
    return frame.join(order, on="hand_key").sort("ruleset", "session_id", "order", "seat")


def stored_rulesets(store: Store, names: Sequence[str] | None = None) -> list[Ruleset]:
    """The rulesets the store has scored (or those named), as they were when scored."""
    rows = store.con.execute("SELECT name, definition FROM rulesets ORDER BY ruleset_id"
                             ).fetchall()
    found = {name: ruleset_from(json.loads(definition), f"the stored ruleset {name}")
             for name, definition in rows}
    if names is None:
        return list(found.values())
    missing = [name for name in names if name not in found]
    if missing:
        raise StoreError(f"not scored under {', '.join(missing)}: run "
                         f"ofcstats rescore --ruleset {missing[0]}")
    return [found[name] for name in names]
