"""Shards of a Parquet export (``ofcstats export --parquet``) read back: the files of a
shard, an in-memory store of some of its sessions, and the check that an export holds
the store's hands under the store's keys.

An export writes :data:`~ofcstats.store.SHARDED_TABLES` in shards of whole sessions,
as ``TABLE/shard=N/*.parquet``; a sharded rescore or review reads each shard in its
own worker from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ofcstats.errors import StoreError, UsageError
from ofcstats.store import SHARDED_TABLES, Store


def check_export(source: Path) -> Path:
    """The listing of the Parquet export at ``source`` (its ``shards.parquet``); a usage
    error when ``source`` is not one."""
    listing = source / "shards.parquet"
    if not listing.is_file():
        raise UsageError(f"{source}: not a Parquet export of ofcstats (no shards.parquet): "
                         "make one with ofcstats export --parquet DIR")
    return listing


def shard_files(source: Path, shard: int) -> dict[str, list[str]]:
    """The Parquet files of one shard of an export, by table (no placements for a shard
    of hands logged with their final rows only)."""
    found = {table: sorted(str(p) for p in (source / table / f"shard={shard}").glob("*.parquet"))
             for table in SHARDED_TABLES}
    missing = [table for table, files in found.items()
               if not files and table != "seat_placements"]
    if missing:
        raise StoreError(f"{source}: no {missing[0]} files for shard {shard}: export the "
                         "store again (ofcstats export --parquet DIR)")
    return found


def shard_store(files: dict[str, list[str]], sessions: Sequence[str]) -> Store:
    """An in-memory store holding the hands (with their seats and placements) of
    ``sessions``, from a shard of a Parquet export."""
    store = Store(":memory:")
    con = store.con
    con.execute("""
        INSERT INTO hands BY NAME SELECT * EXCLUDE (shard)
        FROM read_parquet($files, hive_partitioning = true)
        WHERE list_contains($sessions, session_id)
    """, {"files": files["hands"], "sessions": list(sessions)})
    for table in ("seats", "seat_placements"):
        if not files[table]:
            continue
        con.execute(f"""
            INSERT INTO {table} BY NAME SELECT * EXCLUDE (shard)
            FROM read_parquet($files, hive_partitioning = true)
            WHERE hand_key IN (SELECT hand_key FROM hands)
        """, {"files": files[table]})
    return store


def foreign_hands(source: Path, store: Store) -> tuple[int, str | None]:
    """How many hands of the export at ``source`` are not the store's hand under the
    same key, and the least of their ids (None when there are none)."""
    pattern = str(source / "hands" / "*" / "*.parquet")
    row = store.con.execute("""
        SELECT count(*) FILTER (WHERE h.hand_id IS DISTINCT FROM x.hand_id), min(x.hand_id)
            FILTER (WHERE h.hand_id IS DISTINCT FROM x.hand_id)
        FROM read_parquet(?, hive_partitioning = true) x
        LEFT JOIN hands h USING (hand_key)
    """, [pattern]).fetchall()  # every row fetched: a result left open blocks the next query
    return (int(row[0][0]), row[0][1]) if row else (0, None)
