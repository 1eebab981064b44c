"""The DuckDB store: migrations, reading seats back, SQL helpers, export."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest
from handgen import random_hand, write_jsonl
from polars.testing import assert_frame_equal

from ofcstats import reading
from ofcstats.errors import StoreError
from ofcstats.ingest import ingest
from ofcstats.store import MIGRATIONS, SCHEMA_VERSION, Store

TABLES = {"cards", "hands", "ingested_files", "seat_placements", "rejects", "schema_version",
          "seats"}


def hands_file(tmp_path: Path, n: int = 30, seed: int = 1, name: str = "s.jsonl") -> Path:
    rng = random.Random(seed)
    hands = []
    for i in range(n):
        hand = random_hand(rng, f"{name}-{i}", rng.choice(["pineapple", "ofc-classic"]), 2,
                           fantasyland=(rng.random() < 0.2, False))
        hand["session_id"] = f"s{i % 2}"
        hand["played_at"] = f"2026-11-{1 + i % 28:02d}T10:00:00Z"
        hands.append(hand)
    return write_jsonl(tmp_path / name, hands)


def test_a_new_database_gets_every_migration_and_records_it(tmp_path: Path) -> None:
    with Store(tmp_path / "x.duckdb") as store:
        assert store.version() == SCHEMA_VERSION
        assert set(store.info()["tables"]) >= TABLES  # type: ignore[arg-type]
        versions = store.con.sql("SELECT version FROM schema_version ORDER BY 1").fetchall()
    assert versions == [(m[0],) for m in MIGRATIONS]


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    Store(tmp_path / "x.duckdb").close()
    with Store(tmp_path / "x.duckdb") as store:
        assert store.count("schema_version") == len(MIGRATIONS)
        assert store.count("cards") == 52


def test_a_later_migration_is_applied_in_order(tmp_path: Path) -> None:
    Store(tmp_path / "x.duckdb").close()
    steps: list[str] = []

    def fill(con: duckdb.DuckDBPyConnection) -> None:
        steps.append("fill")
        con.execute("INSERT INTO later_test VALUES (1, 'american', 6)")

    later = [*MIGRATIONS, (SCHEMA_VERSION + 1, "test", (
        "CREATE TABLE later_test (hand_key BIGINT, ruleset VARCHAR, points INTEGER)", fill))]
    with Store(tmp_path / "x.duckdb") as store:
        store.migrate(later)
        store.migrate(later)
        assert store.version() == SCHEMA_VERSION + 1
        store.con.execute("INSERT INTO later_test VALUES (1, 'american', 6)")
        assert store.count("later_test") == 2
    assert steps == ["fill"]


def test_a_database_from_a_newer_ofcstats_is_refused(tmp_path: Path) -> None:
    with Store(tmp_path / "x.duckdb") as store:
        store.con.execute("INSERT INTO schema_version (version) VALUES (99)")
    with pytest.raises(StoreError, match="has schema version 99, newer than this ofcstats "
                                         rf"knows \({SCHEMA_VERSION}\); upgrade ofcstats"):
        Store(tmp_path / "x.duckdb")


def test_seats_read_back_are_the_seats_that_were_loaded(tmp_path: Path) -> None:
    path = hands_file(tmp_path)
    db = tmp_path / "x.duckdb"
    ingest([path], db)
    loaded = reading.read_all([path]).seats_for_scoring()
    with Store(db) as store:
        stored = store.seats_frame()
    assert_frame_equal(stored, loaded)


def test_ingest_compacts_the_store_once_when_it_loaded_hands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge of partly filled row groups happens at the end of a load that added
    hands (not once per file, and not when nothing new came in); the hands are whole
    after it and the marker table it uses is gone."""
    calls: list[Path] = []
    compact = Store.compact
    monkeypatch.setattr(Store, "compact", lambda self: (calls.append(self.path), compact(self)))
    first, second = hands_file(tmp_path, n=40), hands_file(tmp_path, n=40, name="t.jsonl")
    db = tmp_path / "x.duckdb"
    ingest([first, second], db, batch_bytes=4096)
    assert calls == [db]
    ingest([first], db)
    assert calls == [db]
    with Store(db) as store:
        tables = {name for (name,) in store.con.execute(
            "SELECT table_name FROM duckdb_tables()").fetchall()}
        assert "_compact_marker" not in tables
        assert store.count("hands") == 80
        assert store.count("seats") == 160


def test_seats_frame_filters_whole_hands(tmp_path: Path) -> None:
    path = hands_file(tmp_path)
    db = tmp_path / "x.duckdb"
    ingest([path], db)
    with Store(db) as store:
        session = store.seats_frame(sessions=["s0"])
        assert session.get_column("hand_id").n_unique() == 15
        played = store.seats_frame(since=datetime(2026, 11, 10, tzinfo=UTC),
                                   until=datetime(2026, 11, 12, tzinfo=UTC))
        assert sorted(played.get_column("hand_id").unique()) == ["s.jsonl-10", "s.jsonl-9"]
        by_player = store.seats_frame(players=["p1"], variants=["pineapple"])
        assert (by_player.group_by("hand_id").len().get_column("len") == 2).all()
        assert set(by_player.get_column("variant")) == {"pineapple"}
        one = store.seats_frame(hand_ids=["s.jsonl-3"])
        assert one.height == 2


def test_sql_helpers_show_cards_as_text(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    ingest([hands_file(tmp_path)], db)
    with Store(db) as store:
        assert store.con.sql("SELECT card_text(50), card_text(0)").fetchall() == [("Ah", "2c")]
        board = store.con.sql("SELECT top, middle FROM boards LIMIT 1").fetchall()[0]
        assert len(board[0].split()) == 3
        assert len(board[1].split()) == 5
        rows = store.con.sql('SELECT DISTINCT "row" FROM placements ORDER BY 1').fetchall()
        assert [r[0] for r in rows] == ["top", "middle", "bottom", "discard"]


def test_placements_are_in_playing_order(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    ingest([hands_file(tmp_path)], db)
    with Store(db) as store:
        check = store.con.sql("""
            SELECT count(*) FILTER (WHERE "order" <> expected),
                   count(*) FILTER (WHERE street < previous_street)
            FROM (SELECT "order", street,
                         row_number() OVER w AS expected,
                         lag(street, 1, 0) OVER w AS previous_street
                  FROM placements WINDOW w AS (PARTITION BY hand_key, seat ORDER BY "order"))
        """).fetchall()
    assert check == [(0, 0)]


def test_export_writes_every_table_as_parquet(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    ingest([hands_file(tmp_path)], db)
    with Store(db) as store:
        written = store.export_parquet(tmp_path / "pq")
    assert {p.stem for p in written} >= TABLES | {"boards", "placements", "shards"}
    assert pl.read_parquet(tmp_path / "pq" / "rejects.parquet").height == 0
    hands = pl.read_parquet(tmp_path / "pq" / "hands" / "*" / "*.parquet", hive_partitioning=True)
    assert hands.height == 30


def test_export_shards_hands_seats_and_placements_by_whole_sessions(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    ingest([hands_file(tmp_path, n=40)], db)  # sessions s0 and s1, 20 hands each
    with Store(db) as store:
        store.export_parquet(tmp_path / "pq", shard_hands=15)
        keys = store.con.sql("SELECT hand_key, session_id FROM hands").pl()
    shards = pl.read_parquet(tmp_path / "pq" / "shards.parquet")
    assert shards.rows() == [(0, "s0", 20), (1, "s1", 20)]  # 20 > 15: a session never split
    for table in ("hands", "seats", "seat_placements"):
        frame = pl.read_parquet(tmp_path / "pq" / table / "*" / "*.parquet",
                                hive_partitioning=True)
        sessions = frame.join(keys, on="hand_key", suffix="_").group_by("shard").agg(
            pl.col("session_id_" if table == "hands" else "session_id").unique())
        assert sorted((s, tuple(x)) for s, x in sessions.rows()) == [(0, ("s0",)), (1, ("s1",))]


def test_info_counts_sessions_players_and_dates(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    ingest([hands_file(tmp_path)], db)
    with Store(db) as store:
        info = store.info()
    assert info["sessions"] == 2
    assert info["players"] == 2
    assert info["first_played_at"] == "2026-11-01T10:00:00+00:00"
    assert info["last_played_at"] == "2026-11-28T10:00:00+00:00"
    assert info["tables"]["hands"] == 30  # type: ignore[index]


def _older_store(path: Path, version: int, current: Path,
                 monkeypatch: pytest.MonkeyPatch) -> duckdb.DuckDBPyConnection:
    """A new store at ``path`` with the migrations up to ``version`` only, open with the
    store at ``current`` attached (as ``current``) to copy rows from."""
    migrate = Store.migrate
    monkeypatch.setattr(Store, "migrate", lambda self: migrate(self, MIGRATIONS[:version]))
    Store(path).close()
    monkeypatch.undo()
    con = duckdb.connect(str(path))
    con.execute(f"ATTACH '{current}' AS current (READ_ONLY)")
    return con


def test_version_3_keeps_the_results_of_a_version_2_store(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """Version 3 changes how results are stored (INTEGER counts, fantasyland_next from
    fantasyland_cards); a store scored before reads back the same through the view."""
    from ofcstats.pipeline import rescore  # noqa: PLC0415
    from ofcstats.rules import load_ruleset, load_rulesets  # noqa: PLC0415
    from ofcstats.simulate import Simulation, parse_players, simulate  # noqa: PLC0415
    from ofcstats.variants import Variant  # noqa: PLC0415

    # The aggressive bot reaches fantasyland, so fantasyland_next is sometimes true.
    sim = Simulation(variant=Variant.PINEAPPLE, ruleset=load_ruleset("american"),
                     players=parse_players("ann:aggressive,bob:balanced,cat:safe"),
                     hands=120, seed=5)
    log = write_jsonl(tmp_path / "sim.jsonl", list(simulate(sim)))
    current = tmp_path / "current.duckdb"
    ingest([log], current)
    with Store(current) as store:
        rescore(store, load_rulesets(["american", "russian", "pokerdom"]))
        expected = store.con.sql("SELECT * FROM results_named ORDER BY ALL").pl()

    older = tmp_path / "older.duckdb"
    con = _older_store(older, 2, current, monkeypatch)
    for table in ("hands", "seats", "seat_placements", "rejects",
                  "scored_sessions", "showdown_sessions", "showdowns"):
        # Seats have a unit since version 7; placements are moves since version 8;
        # the progress marks are per variant since version 10.
        later = {"seats": " EXCLUDE (unit)", "scored_sessions": " EXCLUDE (variant, "
                 "session_hands)", "showdown_sessions": " EXCLUDE (variant)"}.get(table, "")
        source = "seat_placement_lists" if table == "seat_placements" else table
        con.execute(f"INSERT INTO {table} SELECT *{later} FROM current.{source}")
    # A version 2 ruleset knows one variant, by the key its definition had then.
    con.execute("""
        INSERT INTO rulesets SELECT ruleset_id, name, description, natural_mask, fingerprint,
            json_merge_patch(definition, json_object('variants', NULL,
                                                     'variant', variants[-1])),
            scored_at
        FROM current.rulesets""")
    con.execute("""
        INSERT INTO ingested_files SELECT file_id, path, sha256, size, format, hands,
            duplicates, conflicts, rejected, started_at, finished_at
        FROM current.ingested_files""")
    con.execute("""
        INSERT INTO results SELECT ruleset_id, hand_key, seat, points, royalty_top,
            royalty_middle, royalty_bottom, royalty_points, fantasyland_earned,
            fantasyland_cards > 0, fantasyland_cards
        FROM current.results""")
    assert con.sql("SELECT max(version) FROM schema_version").fetchall() == [(2,)]
    con.close()

    with Store(older) as store:
        assert store.version() == SCHEMA_VERSION
        migrated = store.con.sql("SELECT * FROM results_named ORDER BY ALL").pl()
        variants = dict(store.con.execute("SELECT name, variants FROM rulesets").fetchall())
    assert expected.height > 0
    assert expected["fantasyland_next"].any()
    assert_frame_equal(migrated, expected)
    # Version 4 reads the variant of the older definitions.
    assert variants == {"american": ["pineapple"], "russian": ["chinese-13"],
                        "pokerdom": ["pineapple"]}


def _writes(monkeypatch: pytest.MonkeyPatch, rows_per_group: int) -> list[tuple[str, int]]:
    """Each write of held rows as (table, rows), with row groups of ``rows_per_group``."""
    from ofcstats.store import hands as adding  # noqa: PLC0415 - patched here alone

    writes: list[tuple[str, int]] = []
    write = adding.Appends._write
    monkeypatch.setattr(adding, "ROW_GROUP_ROWS", rows_per_group)
    monkeypatch.setattr(adding.Appends, "_write", lambda self, table, count: (
        writes.append((table, count)), write(self, table, count)))
    return writes


def test_a_load_appends_whole_row_groups_and_the_rest_before_it_commits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside a file's transaction hands are written a whole number of row groups at a
    time (DuckDB then writes them to the file at once, leaving nothing for the final
    checkpoint to merge); what is left is written before the commit."""
    import ofcstats.ingest  # noqa: PLC0415

    writes = _writes(monkeypatch, 7)
    monkeypatch.setattr(ofcstats.ingest, "APPEND_HANDS", 4)
    path = hands_file(tmp_path, n=40)
    db = tmp_path / "x.duckdb"
    ingest([path], db, batch_bytes=2048)
    for table in ("hands", "seats", "seat_placements"):
        counts = [count for name, count in writes if name == table]
        assert len(counts) > 2, table
        assert all(count % 7 == 0 for count in counts[:-1]), (table, counts)
    assert sum(count for name, count in writes if name == "hands") == 40
    with Store(db) as store:
        stored = store.seats_frame()
        assert store.count("seat_placements") == sum(
            count for name, count in writes if name == "seat_placements")
    assert_frame_equal(stored, reading.read_all([path]).seats_for_scoring())


def test_a_hand_repeated_later_in_a_file_meets_its_first_copy_while_that_is_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hand repeated a few inserts later, while its first copy is still held for a
    whole row group, is a duplicate (the same hand) or a conflict (another), as against
    any stored hand: never stored twice."""
    import ofcstats.ingest  # noqa: PLC0415

    _writes(monkeypatch, 1000)
    monkeypatch.setattr(ofcstats.ingest, "APPEND_HANDS", 3)
    rng = random.Random(5)
    hands = [random_hand(rng, f"h{i}", "pineapple", 2) for i in range(30)]
    other = random_hand(rng, "h2", "pineapple", 2)
    path = write_jsonl(tmp_path / "r.jsonl", [*hands, hands[1], other])
    db = tmp_path / "x.duckdb"
    summary = ingest([path], db, batch_bytes=1024)
    assert (summary.hands, summary.duplicates, summary.conflicts) == (30, 1, 1)
    assert [r.reason for r in summary.first_rejects] == [
        f"hand h2: a different hand with this id is already stored (from {path} line 3)"]
    with Store(db) as store:
        assert store.count("hands") == 30
        assert store.count("seats") == 60


def test_hands_held_in_a_transaction_that_fails_are_dropped_with_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writes = _writes(monkeypatch, 1000)
    batch = reading.read_all([hands_file(tmp_path, n=10)])
    db = tmp_path / "x.duckdb"
    with Store(db) as store:
        file_id = store.begin_file("a", "ofc-hand", 1)

        def fail_after_adding() -> None:
            with store.transaction():
                store.add(batch, file_id)
                raise RuntimeError("stop")

        with pytest.raises(RuntimeError):
            fail_after_adding()
        assert writes == []
        with store.transaction():
            store.begin_file("b", "ofc-hand", 1)
        assert writes == []
        assert store.count("hands") == 0
        store.add(batch, file_id)  # outside a transaction: written at once
        assert [count for _, count in writes] == [10, 20, 20]
        assert store.count("hands") == 10


def test_version_8_keeps_the_placements_of_a_version_7_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Version 8 stores a seat's placements as one list of moves; a store loaded before
    has the same placements after it, and after every later version, in the same order."""
    current = tmp_path / "current.duckdb"
    ingest([hands_file(tmp_path, n=60)], current)
    query = "SELECT * FROM placements ORDER BY hand_key, seat, \"order\""
    lists = "SELECT * FROM seat_placement_lists ORDER BY hand_key, seat"
    with Store(current) as store:
        expected, expected_lists = store.con.sql(query).pl(), store.con.sql(lists).pl()
    assert expected.height > 500
    assert set(expected.get_column("row").unique()) == {"top", "middle", "bottom", "discard"}

    older = tmp_path / "older.duckdb"
    con = _older_store(older, 7, current, monkeypatch)
    con.execute("INSERT INTO hands SELECT * FROM current.hands")
    con.execute("INSERT INTO seat_placements SELECT * FROM current.seat_placement_lists")
    assert con.sql("SELECT max(version) FROM schema_version").fetchall() == [(7,)]
    con.close()
    with Store(older) as store:
        assert store.version() == SCHEMA_VERSION
        assert_frame_equal(store.con.sql(query).pl(), expected)
        assert_frame_equal(store.con.sql(lists).pl(), expected_lists)
        moves = store.con.sql("SELECT moves FROM seat_placements LIMIT 1").fetchall()[0][0]
    assert all(isinstance(m, int) and m < 65536 for m in moves)


def test_hand_keys_past_four_billion_stay_exact(tmp_path: Path) -> None:
    """Keys are the batch's hand numbers (UInt32) plus where the store is: added as 64-bit
    numbers, never wrapped."""
    batch = reading.read_all([hands_file(tmp_path, n=4)])
    with Store(tmp_path / "x.duckdb") as store:
        store._next_key = 5_000_000_000
        store.add(batch, store.begin_file("a", "ofc-hand", 1))
        keys = store.con.sql("""
            SELECT (SELECT list(DISTINCT hand_key ORDER BY hand_key) FROM hands),
                   (SELECT list(DISTINCT hand_key ORDER BY hand_key) FROM seats),
                   (SELECT list(DISTINCT hand_key ORDER BY hand_key) FROM seat_placements)
        """).fetchall()[0]
    expected = [5_000_000_000 + i for i in range(4)]
    assert keys[0] == keys[1] == expected
    assert set(keys[2]) <= set(expected)
    assert keys[2]


def test_a_registered_frame_leaves_the_error_that_aborted_the_transaction(
        tmp_path: Path) -> None:
    """After a query DuckDB refused (or stopped on Ctrl-C) the transaction is aborted and
    unregistering fails too; the block's own error is the one raised."""
    from ofcstats.store.connect import registered  # noqa: PLC0415

    with Store(tmp_path / "x.duckdb") as store:
        store.con.execute("BEGIN TRANSACTION")
        with pytest.raises(duckdb.ConstraintException, match="NOT NULL"), \
                registered(store.con, "rows", pl.DataFrame({"a": [1]})):
            store.con.execute("INSERT INTO cards SELECT NULL, 'x', 'x', 'x' FROM rows")
        store.con.execute("ROLLBACK")
        with registered(store.con, "rows", pl.DataFrame({"a": [1, 2]})):
            assert store.con.sql("SELECT sum(a) FROM rows").fetchall() == [(3,)]
        with pytest.raises(duckdb.CatalogException):
            store.con.sql("SELECT * FROM rows").fetchall()


def _settings(store: Store) -> tuple[str, str]:
    return store.query("SELECT current_setting('threads')::VARCHAR AS t, "
                       "current_setting('write_buffer_row_group_count')::VARCHAR AS w").row(0)


def test_bulk_loading_sets_duckdb_for_the_block_and_back_even_on_an_error(
        tmp_path: Path) -> None:
    with Store(tmp_path / "a.duckdb") as store:
        before = _settings(store)
        with store.bulk_loading():
            assert _settings(store) == ("1", "1")
        assert _settings(store) == before
        with pytest.raises(ValueError, match="stop"), store.bulk_loading():
            raise ValueError("stop")
        assert _settings(store) == before
        assert before != ("1", "1")


def test_a_query_a_person_writes_reads_no_file_outside_the_database(tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    with Store(tmp_path / "a.duckdb") as store:
        assert store.query("SELECT count(*) AS n FROM read_csv(?)", [str(outside)]).item() == 1
        assert store.user_query("SELECT 1 AS a", 10).to_dicts() == [{"a": 1}]
        with pytest.raises(duckdb.Error, match="disabled"):
            store.user_query(f"SELECT * FROM read_csv('{outside}')", 10)


def test_the_writer_writes_on_a_second_connection_seen_after_its_commit(
        tmp_path: Path) -> None:
    with Store(tmp_path / "a.duckdb") as store:
        with store.writer() as writer:
            assert writer.con is not store.con
            writer.con.execute("CREATE TABLE t AS SELECT 1 AS a")
        assert store.query("SELECT a FROM t").item() == 1


@pytest.mark.parametrize("read_only", [False, True])
def test_a_json_file_given_as_the_database_is_refused_not_opened_in_memory(
        tmp_path: Path, read_only: bool) -> None:
    # DuckDB opens an existing JSON file as a database in memory: what a command wrote
    # there would be lost while it said it was stored.
    log = tmp_path / "session.jsonl"
    log.write_text('{"format": "ofc-hand/1", "hand_id": "h1"}\n', encoding="utf-8")
    before = log.read_bytes()
    with pytest.raises(StoreError, match=r"session.jsonl: cannot open the database: the file "
                       r"is not a DuckDB database file \(--db names the database"):
        Store(log, read_only=read_only)
    assert log.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


def test_version_11_view_reads_what_version_4s_read_with_and_without_naturals(
        tmp_path: Path) -> None:
    """``results_named`` joins the showdowns of 13-card naturals alone (version 11): every
    row and column is what version 4's view, joining every showdown, gave, on the sample
    (13-card hands scored under rulesets that pay naturals and under ones that do not,
    beside OFC hands); and a store with no natural at all groups and sorts without
    DuckDB's cast error (see version 3)."""
    from ofcstats.pipeline import rescore  # noqa: PLC0415
    from ofcstats.rules import load_rulesets, preset_names, presets_played_in  # noqa: PLC0415
    from ofcstats.store import schema  # noqa: PLC0415
    from ofcstats.variants import Variant  # noqa: PLC0415

    root = Path(__file__).resolve().parent.parent / "data"
    db = tmp_path / "t.duckdb"
    ingest(sorted((root / "sample").glob("*.jsonl")), db)
    with Store(db) as store:
        rescore(store, load_rulesets([
            *preset_names(), str(root / "rulesets" / "pineapple-progressive.toml")]))
    old = schema._V4.split("CREATE VIEW results_named AS")[1].strip().rstrip(";")
    with Store(db, read_only=True) as store:
        naturals = store.con.sql(
            "SELECT count(*) FROM showdowns WHERE natural_mask <> 0").fetchall()[0][0]
        assert naturals > 0
        now = store.query("SELECT * FROM results_named ORDER BY ALL")
        before = store.query(f"SELECT * FROM ({old}) ORDER BY ALL")
    assert now.height == before.height > 0
    assert_frame_equal(now, before)

    plain = tmp_path / "plain.duckdb"
    ingest([root / "sample" / "pineapple-american.jsonl"], plain)
    with Store(plain) as store:
        rescore(store, load_rulesets(presets_played_in(Variant("pineapple"))))
    with Store(plain, read_only=True) as store:
        assert not store.con.sql("SELECT count(*) FROM rulesets WHERE natural_mask <> 0"
                                 ).fetchall()[0][0]
        rows = store.con.sql("SELECT ruleset, count(*), sum(wins_top), sum(scoops) "
                             "FROM results_named GROUP BY ruleset ORDER BY 1").fetchall()
    assert rows
    assert all(count > 0 for _, count, _, _ in rows)
