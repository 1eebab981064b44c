"""The DuckDB schema: every table and view, as migrations applied in order.

Migrations are an ordered list of ``(version, step)``, a step being SQL or a function
of the connection; :meth:`ofcstats.store.Store.migrate` applies the missing ones in
order, each in its own transaction, and records it in ``schema_version``. A later
version appends, never edits: a database made by any earlier ofcstats is brought up
to date. The tables are documented for users in ``docs/database.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import duckdb
import polars as pl

from ofcstats.cards import RANKS, SUITS
from ofcstats.records import ROW_STEP, STREET_STEP

Step = str | Callable[[duckdb.DuckDBPyConnection], None]

_V1 = """
CREATE TYPE row_kind AS ENUM ('top', 'middle', 'bottom', 'discard');

CREATE TABLE cards (
    code UTINYINT NOT NULL,   -- rank * 4 + suit: 0 = 2c ... 51 = As
    card VARCHAR NOT NULL,    -- 'As'
    rank VARCHAR NOT NULL,    -- '2'..'9', 'T', 'J', 'Q', 'K', 'A'
    suit VARCHAR NOT NULL     -- 'c', 'd', 'h', 's'
);

CREATE TABLE ingested_files (
    file_id INTEGER NOT NULL,
    path VARCHAR NOT NULL,
    sha256 VARCHAR,
    size BIGINT,
    format VARCHAR,
    hands INTEGER NOT NULL DEFAULT 0,       -- hands added by this load
    duplicates INTEGER NOT NULL DEFAULT 0,  -- hands already stored (or repeated), skipped
    conflicts INTEGER NOT NULL DEFAULT 0,   -- a different hand under a stored id, rejected
    rejected INTEGER NOT NULL DEFAULT 0,    -- rows written to rejects (conflicts included)
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ
);

CREATE TABLE hands (
    hand_key BIGINT NOT NULL,      -- integer key used by seats and placements
    hand_id VARCHAR NOT NULL,      -- the id the log gives; unique in the store
    session_id VARCHAR NOT NULL,
    played_at TIMESTAMPTZ,
    variant VARCHAR NOT NULL,
    ruleset VARCHAR,
    point_value DOUBLE,
    button UTINYINT,
    n_seats UTINYINT NOT NULL,
    extra JSON,
    file_id INTEGER NOT NULL,
    line BIGINT NOT NULL,
    fingerprint VARCHAR NOT NULL
);

CREATE TABLE seats (
    hand_key BIGINT NOT NULL,
    seat UTINYINT NOT NULL,
    player VARCHAR NOT NULL,
    fantasyland BOOLEAN NOT NULL,
    timed_out BOOLEAN NOT NULL,
    surrendered BOOLEAN NOT NULL,
    reported_points DOUBLE,
    dealt UTINYINT NOT NULL,
    top UTINYINT[3] NOT NULL,
    middle UTINYINT[5] NOT NULL,
    bottom UTINYINT[5] NOT NULL
);

-- A seat's placements as three parallel lists (half the cost of a row per card to
-- load); the placements view below gives them a row per card.
CREATE TABLE seat_placements (
    hand_key BIGINT NOT NULL,
    seat UTINYINT NOT NULL,
    streets UTINYINT[] NOT NULL,
    cards UTINYINT[] NOT NULL,
    rows UTINYINT[] NOT NULL      -- 1 top, 2 middle, 3 bottom, 4 discard
);

CREATE VIEW placements AS
SELECT hand_key, seat, street, CAST("order" AS UTINYINT) AS "order", card,
       CAST(enum_range(NULL::row_kind)[r] AS row_kind) AS "row"
FROM (SELECT hand_key, seat, unnest(streets) AS street,
             unnest(range(1, len(cards) + 1)) AS "order", unnest(cards) AS card,
             unnest(rows) AS r
      FROM seat_placements);

CREATE TABLE rejects (
    file_id INTEGER,
    path VARCHAR NOT NULL,
    line BIGINT,
    hand_id VARCHAR,
    reason VARCHAR NOT NULL,
    raw VARCHAR
);

CREATE MACRO card_text(code) AS
    substr('23456789TJQKA', (code // 4) + 1, 1) || substr('cdhs', (code % 4) + 1, 1);
CREATE MACRO cards_text(codes) AS
    array_to_string(list_transform(codes, lambda c: card_text(c)), ' ');

CREATE VIEW boards AS
SELECT h.hand_id, h.session_id, h.played_at, h.variant, s.seat, s.player, s.fantasyland,
       cards_text(s.top) AS top, cards_text(s.middle) AS middle,
       cards_text(s.bottom) AS bottom, s.reported_points
FROM hands h JOIN seats s USING (hand_key);
"""


def _fill_cards(con: duckdb.DuckDBPyConnection) -> None:
    codes = list(range(52))
    frame = pl.DataFrame({
        "code": pl.Series(codes, dtype=pl.UInt8),
        "card": [RANKS[c >> 2] + SUITS[c & 3] for c in codes],
        "rank": [RANKS[c >> 2] for c in codes],
        "suit": [SUITS[c & 3] for c in codes],
    })
    con.register("card_rows", frame)
    con.execute("INSERT INTO cards SELECT * FROM card_rows")
    con.unregister("card_rows")


_V2 = """
CREATE TABLE rulesets (
    ruleset_id SMALLINT NOT NULL,   -- the key results use
    name VARCHAR NOT NULL,          -- preset name, or the name a user's TOML file gives
    description VARCHAR,
    natural_mask UTINYINT NOT NULL, -- which 13-card naturals it pays (picks the showdown)
    fingerprint VARCHAR NOT NULL,   -- md5 of the definition: an edit means a rescore
    definition JSON NOT NULL,       -- everything the ruleset says, as JSON
    scored_at TIMESTAMPTZ
);

CREATE TABLE scored_sessions (      -- how far rescoring got, per ruleset and session
    ruleset_id SMALLINT NOT NULL,
    session_id VARCHAR NOT NULL,
    hands INTEGER NOT NULL
);

CREATE TABLE showdown_sessions (    -- the same for showdowns, per natural mask
    natural_mask UTINYINT NOT NULL,
    session_id VARCHAR NOT NULL,
    hands INTEGER NOT NULL
);

-- What every ruleset shares: each seat against each opponent, once. A ruleset that pays
-- 13-card naturals leaves out the pairs with a natural: for such a natural mask, the
-- hands it changes have rows of their own; the others use mask 0's.
CREATE TABLE showdowns (
    hand_key BIGINT NOT NULL,
    seat UTINYINT NOT NULL,
    natural_mask UTINYINT NOT NULL,
    fouled BOOLEAN NOT NULL,
    rows_top TINYINT NOT NULL,      -- rows won minus rows lost, over all opponents
    rows_middle TINYINT NOT NULL,
    rows_bottom TINYINT NOT NULL,
    wins_top TINYINT NOT NULL,      -- opponents beaten in the row (a fouled one included)
    wins_middle TINYINT NOT NULL,
    wins_bottom TINYINT NOT NULL,
    scoops TINYINT NOT NULL,        -- opponents beaten in all three rows
    scooped TINYINT NOT NULL        -- opponents that beat this seat in all three rows
);

-- What each ruleset adds: one row per ruleset, hand and seat.
CREATE TABLE results (
    ruleset_id SMALLINT NOT NULL,   -- rulesets.ruleset_id
    hand_key BIGINT NOT NULL,       -- hands.hand_key
    seat UTINYINT NOT NULL,         -- seats.seat
    points INTEGER NOT NULL,        -- net points of the seat (each hand sums to zero)
    royalty_top SMALLINT NOT NULL,  -- royalties collected from all opponents; 0 if fouled
    royalty_middle SMALLINT NOT NULL,
    royalty_bottom SMALLINT NOT NULL,
    royalty_points SMALLINT NOT NULL,     -- the royalties' part of points (collected - paid)
    fantasyland_earned BOOLEAN NOT NULL,  -- the boards earn entry or stay, by the policy
    fantasyland_next BOOLEAN NOT NULL,    -- ... and the session's repeat limit allows it
    fantasyland_cards TINYINT NOT NULL    -- cards the next hand deals in fantasyland
);

-- Everything about a seat's result in one place, by name.
CREATE VIEW results_named AS
SELECT r.name AS ruleset, h.hand_id, h.session_id, h.played_at, h.variant, x.seat,
       s.player, x.points,
       (x.royalty_top + x.royalty_middle + x.royalty_bottom)::SMALLINT AS royalties,
       x.royalty_top, x.royalty_middle, x.royalty_bottom, x.royalty_points,
       coalesce(m.rows_top, z.rows_top) AS rows_top,
       coalesce(m.rows_middle, z.rows_middle) AS rows_middle,
       coalesce(m.rows_bottom, z.rows_bottom) AS rows_bottom,
       coalesce(m.wins_top, z.wins_top) AS wins_top,
       coalesce(m.wins_middle, z.wins_middle) AS wins_middle,
       coalesce(m.wins_bottom, z.wins_bottom) AS wins_bottom,
       coalesce(m.fouled, z.fouled) AS fouled, coalesce(m.scoops, z.scoops) AS scoops,
       coalesce(m.scooped, z.scooped) AS scooped, x.fantasyland_earned, x.fantasyland_next,
       x.fantasyland_cards,
       x.fantasyland_next AND NOT s.fantasyland AS fantasyland_entered,
       x.fantasyland_next AND s.fantasyland AS fantasyland_stayed,
       -- what analysis needs besides: the seat, the hand, and the ruleset the log names
       s.fantasyland, s.reported_points, h.hand_key, h.n_seats, h.point_value,
       h.ruleset AS played_ruleset, h.file_id, h.line
FROM results x
JOIN rulesets r USING (ruleset_id)
JOIN hands h USING (hand_key)
JOIN seats s USING (hand_key, seat)
JOIN showdowns z ON z.hand_key = x.hand_key AND z.seat = x.seat AND z.natural_mask = 0
LEFT JOIN showdowns m ON m.hand_key = x.hand_key AND m.seat = x.seat
                      AND m.natural_mask = r.natural_mask AND r.natural_mask <> 0;
"""


# Version 3: the same results, written a third faster. DuckDB 2.0 appends and bit-packs
# SMALLINT and TINYINT columns markedly slower than INTEGER ones (measured: 9.75 million
# result rows took 2.25 s in the version 2 layout and 1.7 s in this one; the file is the
# same size, since bit-packing stores only the bits used), so the counts become INTEGER.
# ``fantasyland_next`` is not stored: it holds exactly when ``fantasyland_cards`` > 0.
# The view keeps every column's name; its counts are INTEGER now.
_V3 = """
DROP VIEW results_named;
ALTER TABLE results ALTER royalty_top TYPE INTEGER;
ALTER TABLE results ALTER royalty_middle TYPE INTEGER;
ALTER TABLE results ALTER royalty_bottom TYPE INTEGER;
ALTER TABLE results ALTER royalty_points TYPE INTEGER;
ALTER TABLE results ALTER fantasyland_cards TYPE INTEGER;
ALTER TABLE results DROP COLUMN fantasyland_next;
ALTER TABLE showdowns ALTER rows_top TYPE INTEGER;
ALTER TABLE showdowns ALTER rows_middle TYPE INTEGER;
ALTER TABLE showdowns ALTER rows_bottom TYPE INTEGER;
ALTER TABLE showdowns ALTER wins_top TYPE INTEGER;
ALTER TABLE showdowns ALTER wins_middle TYPE INTEGER;
ALTER TABLE showdowns ALTER wins_bottom TYPE INTEGER;
ALTER TABLE showdowns ALTER scoops TYPE INTEGER;
ALTER TABLE showdowns ALTER scooped TYPE INTEGER;

CREATE VIEW results_named AS
SELECT r.name AS ruleset, h.hand_id, h.session_id, h.played_at, h.variant, x.seat,
       s.player, x.points, x.royalty_top + x.royalty_middle + x.royalty_bottom AS royalties,
       x.royalty_top, x.royalty_middle, x.royalty_bottom, x.royalty_points,
       coalesce(m.rows_top, z.rows_top) AS rows_top,
       coalesce(m.rows_middle, z.rows_middle) AS rows_middle,
       coalesce(m.rows_bottom, z.rows_bottom) AS rows_bottom,
       coalesce(m.wins_top, z.wins_top) AS wins_top,
       coalesce(m.wins_middle, z.wins_middle) AS wins_middle,
       coalesce(m.wins_bottom, z.wins_bottom) AS wins_bottom,
       coalesce(m.fouled, z.fouled) AS fouled, coalesce(m.scoops, z.scoops) AS scoops,
       coalesce(m.scooped, z.scooped) AS scooped, x.fantasyland_earned,
       x.fantasyland_cards > 0 AS fantasyland_next, x.fantasyland_cards,
       x.fantasyland_cards > 0 AND NOT s.fantasyland AS fantasyland_entered,
       x.fantasyland_cards > 0 AND s.fantasyland AS fantasyland_stayed,
       -- what analysis needs besides: the seat, the hand, and the ruleset the log names
       s.fantasyland, s.reported_points, h.hand_key, h.n_seats, h.point_value,
       h.ruleset AS played_ruleset, h.file_id, h.line
FROM results x
JOIN rulesets r USING (ruleset_id)
JOIN hands h USING (hand_key)
JOIN seats s USING (hand_key, seat)
JOIN showdowns z ON z.hand_key = x.hand_key AND z.seat = x.seat AND z.natural_mask = 0
-- The CASE and not "AND r.natural_mask <> 0": with that condition, when the statistics
-- show no stored showdown can match, DuckDB 2.0.1 misjudges the join's row count and an
-- aggregate over the view sorted afterwards (GROUP BY ruleset ORDER BY 1) fails with
-- "Type INT128 with value ... can't be cast ... INT8".
LEFT JOIN showdowns m ON m.hand_key = x.hand_key AND m.seat = x.seat
    AND m.natural_mask = CASE WHEN r.natural_mask <> 0 THEN r.natural_mask END;
"""


# Version 4: rulesets are played under variants. ``variants`` is what the ruleset
# declares; ``scope`` the variants whose hands are scored under it here (its own, or
# every variant when a what-if was asked for by name). Rows of a hand whose variant the
# ruleset is not played under are what-ifs, and the view says so. Rulesets scored before
# were scored over every variant.
_V4 = """
ALTER TABLE rulesets ADD COLUMN variants VARCHAR[];
ALTER TABLE rulesets ADD COLUMN scope VARCHAR[];
UPDATE rulesets SET
    variants = coalesce(CAST(json_extract(definition, '$.variants') AS VARCHAR[]),
                        [json_extract_string(definition, '$.variant')]),
    scope = ['chinese-13', 'ofc-classic', 'ofc-turbo', 'pineapple'];
DROP VIEW results_named;
CREATE VIEW results_named AS
SELECT r.name AS ruleset, h.hand_id, h.session_id, h.played_at, h.variant, x.seat,
       s.player, x.points, x.royalty_top + x.royalty_middle + x.royalty_bottom AS royalties,
       x.royalty_top, x.royalty_middle, x.royalty_bottom, x.royalty_points,
       coalesce(m.rows_top, z.rows_top) AS rows_top,
       coalesce(m.rows_middle, z.rows_middle) AS rows_middle,
       coalesce(m.rows_bottom, z.rows_bottom) AS rows_bottom,
       coalesce(m.wins_top, z.wins_top) AS wins_top,
       coalesce(m.wins_middle, z.wins_middle) AS wins_middle,
       coalesce(m.wins_bottom, z.wins_bottom) AS wins_bottom,
       coalesce(m.fouled, z.fouled) AS fouled, coalesce(m.scoops, z.scoops) AS scoops,
       coalesce(m.scooped, z.scooped) AS scooped, x.fantasyland_earned,
       x.fantasyland_cards > 0 AS fantasyland_next, x.fantasyland_cards,
       x.fantasyland_cards > 0 AND NOT s.fantasyland AS fantasyland_entered,
       x.fantasyland_cards > 0 AND s.fantasyland AS fantasyland_stayed,
       -- what analysis needs besides: the seat, the hand, and the ruleset the log names
       s.fantasyland, s.reported_points, h.hand_key, h.n_seats, h.point_value,
       h.ruleset AS played_ruleset, h.file_id, h.line,
       -- a ruleset applied to a hand of a variant it is not played under
       NOT list_contains(r.variants, h.variant) AS what_if
FROM results x
JOIN rulesets r USING (ruleset_id)
JOIN hands h USING (hand_key)
JOIN seats s USING (hand_key, seat)
JOIN showdowns z ON z.hand_key = x.hand_key AND z.seat = x.seat AND z.natural_mask = 0
-- The CASE: see version 3.
LEFT JOIN showdowns m ON m.hand_key = x.hand_key AND m.seat = x.seat
    AND m.natural_mask = CASE WHEN r.natural_mask <> 0 THEN r.natural_mask END;
"""


_V5 = """
-- What each logged placement cost (ofcstats review): one row per street of a seat and
-- review settings. Rows are 0 top, 1 middle, 2 bottom, 3 discard, one per dealt card.
CREATE TABLE decisions (
    hand_key BIGINT NOT NULL,
    seat UTINYINT NOT NULL,
    player VARCHAR NOT NULL,
    street UTINYINT NOT NULL,        -- the street number as logged
    fantasyland BOOLEAN NOT NULL,    -- a fantasyland set (every card at once)
    ruleset VARCHAR NOT NULL,        -- the ruleset the candidates were scored under
    reviewed_as VARCHAR NOT NULL,    -- the --ruleset asked for; '' for each hand's own
    dealt UTINYINT[] NOT NULL,
    chosen UTINYINT[] NOT NULL,      -- the row of each dealt card, as played
    best UTINYINT[] NOT NULL,        -- ... in the best candidate
    ev_chosen DOUBLE NOT NULL,       -- expected points of the play made
    ev_best DOUBLE NOT NULL,
    ev_loss DOUBLE NOT NULL,         -- ev_best - ev_chosen, never negative
    se_chosen DOUBLE NOT NULL,       -- standard error of ev_chosen (0: valued exactly)
    candidates INTEGER NOT NULL,     -- legal placements compared
    mistake VARCHAR,                 -- foul, fantasyland, royalties, discard, rows; NULL: none
    exact BOOLEAN NOT NULL,          -- valued without sampling (nothing left to deal)
    rollouts INTEGER NOT NULL,       -- rollouts per candidate asked for
    screen INTEGER NOT NULL,         -- candidates kept after screening; 0: no screening
    seed BIGINT NOT NULL,
    fantasyland_value DOUBLE NOT NULL
);

CREATE VIEW decisions_named AS
SELECT h.hand_id, h.session_id, h.played_at, h.variant, d.*
FROM decisions d JOIN hands h USING (hand_key);
"""


# Version 6: what loading needs to skip a file already loaded, continue a file that has
# grown and notice one that has changed. The content hash is BLAKE3 (several times
# faster than SHA-256, so a file already loaded is recognised in well under a second per
# million hands); ``sha256`` stays for the loads made before.
_V6 = """
ALTER TABLE ingested_files ADD COLUMN content_hash VARCHAR;
ALTER TABLE ingested_files ADD COLUMN lines BIGINT;
ALTER TABLE ingested_files ADD COLUMN first_line BIGINT;
"""


# Version 7: per-player units (docs/rules.md §5). A seat's ``unit`` is what a point is worth
# to its player, in point values (null: 1); ``unit_points`` is a seat's points weighted by
# the unit each opponent pair settles at (the smaller of the two), filled only in hands
# where some unit is not 1 (null: the points themselves): results stay as small as before.
_V7 = """
ALTER TABLE seats ADD COLUMN unit DOUBLE;
ALTER TABLE results ADD COLUMN unit_points DOUBLE;
"""


# Version 8: a seat's placements as one list of moves instead of three parallel lists,
# a move being street * STREET_STEP + row * ROW_STEP + card (row 1 top, 2 middle,
# 3 bottom, 4 discard): a third of the cost to load. The view ``seat_placement_lists``
# gives the three lists back, ``placements`` a row per card as before.
_V8 = f"""
CREATE MACRO move_street(m) AS CAST(m // {STREET_STEP} AS UTINYINT);
CREATE MACRO move_row(m) AS CAST((m % {STREET_STEP}) // {ROW_STEP} AS UTINYINT);
CREATE MACRO move_card(m) AS CAST(m % {ROW_STEP} AS UTINYINT);

DROP VIEW placements;
CREATE TABLE seat_moves (
    hand_key BIGINT NOT NULL,
    seat UTINYINT NOT NULL,
    moves USMALLINT[] NOT NULL  -- playing order: street * {STREET_STEP} + row * {ROW_STEP} + card
);
INSERT INTO seat_moves
SELECT hand_key, seat, list_transform(range(len(cards)), lambda i:
           CAST(streets[i + 1] AS USMALLINT) * {STREET_STEP}
           + CAST(rows[i + 1] AS USMALLINT) * {ROW_STEP} + cards[i + 1])
FROM seat_placements ORDER BY hand_key, seat;
DROP TABLE seat_placements;
ALTER TABLE seat_moves RENAME TO seat_placements;

CREATE VIEW seat_placement_lists AS
SELECT hand_key, seat, list_transform(moves, lambda m: move_street(m)) AS streets,
       list_transform(moves, lambda m: move_card(m)) AS cards,
       list_transform(moves, lambda m: move_row(m)) AS rows
FROM seat_placements;

CREATE VIEW placements AS
SELECT hand_key, seat, move_street(m) AS street, CAST("order" AS UTINYINT) AS "order",
       move_card(m) AS card, CAST(enum_range(NULL::row_kind)[move_row(m)] AS row_kind) AS "row"
FROM (SELECT hand_key, seat, unnest(moves) AS m,
             unnest(range(1, len(moves) + 1)) AS "order"
      FROM seat_placements);
"""


# Version 9: decisions that a player can act on (docs/review.md). Each row keeps how its
# opponents were valued (``drawn`` from what the player could not see, or ``logged``: their
# final boards, the only reading before), the method (``double-sampling``: the loss
# measured on rollouts that did not choose the best; ``best-mean`` before), the standard
# error of the loss and the situations the decision is in. The rows written before keep
# their numbers under ``logged`` and ``best-mean``; a review reads only its own method's.
_V9 = """
ALTER TABLE decisions ADD COLUMN opponents VARCHAR DEFAULT 'logged';
ALTER TABLE decisions ADD COLUMN method VARCHAR DEFAULT 'best-mean';
ALTER TABLE decisions ADD COLUMN ev_loss_se DOUBLE;
ALTER TABLE decisions ADD COLUMN situations VARCHAR[];
UPDATE decisions SET opponents = 'logged', method = 'best-mean';
CREATE OR REPLACE VIEW decisions_named AS
SELECT h.hand_id, h.session_id, h.played_at, h.variant, d.*
FROM decisions d JOIN hands h USING (hand_key);
"""


# Version 10: rescoring's progress per variant of a session. A session may mix variants,
# and a ruleset scores only those it is played under, so the marks of one variant's
# hands must not stand for another's: before, one variant's batch found the session's
# showdowns "stale" and replaced those of every variant with its own, and the view
# dropped the other variants' results. A mark now also holds the session's hands of
# every variant (``session_hands``): its play order, games and fantasyland repeat limits
# are the whole table's, so a session that grows by hands of any variant is scored again.
_V10 = """
CREATE TABLE scored_sessions_v10 (   -- how far rescoring got, per ruleset, session, variant
    ruleset_id SMALLINT NOT NULL,
    session_id VARCHAR NOT NULL,
    variant VARCHAR NOT NULL,
    hands INTEGER NOT NULL,         -- the session's hands of the variant, scored
    session_hands INTEGER NOT NULL  -- the session's hands of every variant then
);
CREATE TABLE showdown_sessions_v10 ( -- the same for showdowns, per natural mask
    natural_mask UTINYINT NOT NULL,
    session_id VARCHAR NOT NULL,
    variant VARCHAR NOT NULL,
    hands INTEGER NOT NULL
);
"""


NATURAL_SHOWDOWNS = """(SELECT s.* FROM showdowns s
        SEMI JOIN rulesets q ON q.natural_mask = s.natural_mask AND q.natural_mask <> 0)"""
"""The showdowns of rulesets that pay 13-card naturals: what a result row under such a
ruleset reads in place of the plain showdown (``natural_mask`` 0). A join to these alone
builds its hash table over them only (none at all in a store without 13-card naturals),
not over every showdown; the semi join, not ``natural_mask <> 0``, so that DuckDB 2.0.1's
statistics never prove the join empty (see version 3)."""

_V4_JOIN = """LEFT JOIN showdowns m ON m.hand_key = x.hand_key AND m.seat = x.seat
    AND m.natural_mask = CASE WHEN r.natural_mask <> 0 THEN r.natural_mask END;"""
assert _V4_JOIN in _V4
_V11 = "CREATE OR REPLACE VIEW results_named AS" + _V4.split(
    "CREATE VIEW results_named AS")[1].replace(
    "-- The CASE: see version 3.\n", "-- The showdowns of 13-card naturals alone.\n").replace(
    _V4_JOIN, f"""LEFT JOIN {NATURAL_SHOWDOWNS} m
    ON m.hand_key = x.hand_key AND m.seat = x.seat AND m.natural_mask = r.natural_mask;""")
"""Version 11: ``results_named`` as version 4 has it, its left join to the showdowns of
13-card naturals reading those alone (:data:`NATURAL_SHOWDOWNS`): on a million Pineapple
hands the sums of the read commands take a third of the time, and DuckDB no longer holds a
hash table of every showdown (which a 256 MB limit could not hold)."""


def _progress_per_variant(con: duckdb.DuckDBPyConnection) -> None:
    """Carry the marks of sessions of one variant and one stake over; forget the results,
    showdowns and marks of every other session, which the next rescore scores whole.

    Those sessions' rows are not to be trusted (a session of several variants lost the
    showdowns of all but one), and their games now change with the logged stake as with
    the variant, which the fantasyland repeat limits depend on."""
    con.execute("""
        CREATE TEMP TABLE plain_sessions AS
        SELECT session_id, any_value(variant) AS variant, count(*)::INTEGER AS hands
        FROM hands GROUP BY session_id
        HAVING count(DISTINCT variant) = 1 AND count(DISTINCT coalesce(point_value, 1)) = 1
    """)
    con.execute("""
        CREATE TEMP TABLE redone_hands AS
        SELECT hand_key FROM hands
        WHERE session_id NOT IN (SELECT session_id FROM plain_sessions)
    """)
    con.execute("DELETE FROM results WHERE hand_key IN (SELECT hand_key FROM redone_hands)")
    con.execute("DELETE FROM showdowns WHERE hand_key IN (SELECT hand_key FROM redone_hands)")
    con.execute("""
        INSERT INTO scored_sessions_v10
        SELECT s.ruleset_id, s.session_id, p.variant, s.hands,
               CASE WHEN s.hands = p.hands THEN p.hands ELSE -1 END
        FROM scored_sessions s JOIN plain_sessions p USING (session_id)
    """)
    con.execute("""
        INSERT INTO showdown_sessions_v10
        SELECT s.natural_mask, s.session_id, p.variant, s.hands
        FROM showdown_sessions s JOIN plain_sessions p USING (session_id)
    """)
    for table in ("scored_sessions", "showdown_sessions"):
        con.execute(f"DROP TABLE {table}")
        con.execute(f"ALTER TABLE {table}_v10 RENAME TO {table}")
    con.execute("DROP TABLE plain_sessions")
    con.execute("DROP TABLE redone_hands")


MIGRATIONS: list[tuple[int, str, Sequence[Step]]] = [
    (1, "hands, seats, placements, ingested files, rejects", (_V1, _fill_cards)),
    (2, "rulesets, scored sessions and results of rescoring", (_V2,)),
    (3, "results and showdowns in INTEGER columns, for faster writes", (_V3,)),
    (4, "rulesets know their variants; results say which rows are what-ifs", (_V4,)),
    (5, "decisions: what each logged placement cost, from ofcstats review", (_V5,)),
    (6, "content hash, lines and first line of each file load", (_V6,)),
    (7, "per-player units: the seat's unit, the results' unit-weighted points", (_V7,)),
    (8, "a seat's placements as one list of moves, a third of the cost to load", (_V8,)),
    (9, "decisions: opponents drawn or logged, the method, the loss's standard error, "
        "situations", (_V9,)),
    (10, "rescoring's progress per variant of a session; sessions of several variants or "
        "stakes scored again", (_V10, _progress_per_variant)),
    (11, "results_named reads the showdowns of 13-card naturals alone for them", (_V11,)),
]
"""``(version, description, steps)`` in order; a later stage appends, never edits."""

SCHEMA_VERSION = MIGRATIONS[-1][0]
