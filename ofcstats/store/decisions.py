"""What a review reads and writes: the seats it values, and the ``decisions`` table.

The SQL of :mod:`ofcstats.review` lives here; the review hands over frames and gets
frames back. A decision row is kept under the settings its numbers depend on
(:class:`Reviewed`): a review under other settings adds rows, it never mixes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import polars as pl

from ofcstats.store.connect import registered
from ofcstats.variants import Variant

if TYPE_CHECKING:
    from ofcstats.store import Store


@dataclass(frozen=True)
class Selection:
    """Which hands and seats to review (None: no filter)."""

    players: Sequence[str] | None = None
    sessions: Sequence[str] | None = None
    hand_ids: Sequence[str] | None = None
    since: datetime | None = None
    until: datetime | None = None

    def where(self, hands: str = "h", seats: str = "s") -> tuple[str, list[object]]:
        """A SQL condition on ``hands`` and ``seats`` aliases, and its parameters."""
        where: list[str] = ["true"]
        params: list[object] = []
        for column, values in ((f"{hands}.hand_id", self.hand_ids),
                               (f"{hands}.session_id", self.sessions),
                               (f"{seats}.player", self.players)):
            if values is not None:
                where.append(f"{column} IN (SELECT unnest(?))")
                params.append(list(values))
        if self.since is not None:
            where.append(f"{hands}.played_at >= ?")
            params.append(self.since)
        if self.until is not None:
            where.append(f"{hands}.played_at < ?")
            params.append(self.until)
        return " AND ".join(where), params


@dataclass(frozen=True)
class Reviewed:
    """The settings a row of ``decisions`` is kept under (``reviewed_as``: the ruleset
    asked for, empty when each hand was reviewed under its own)."""

    rollouts: int
    seed: int
    fantasyland_value: float
    screen: int  # 0: every candidate on every selection rollout
    reviewed_as: str
    opponents: str  # drawn, logged
    method: str  # how the numbers were made (ofcstats.review.core.METHOD)

    def params(self) -> list[object]:
        return [self.rollouts, self.seed, self.fantasyland_value, self.screen,
                self.reviewed_as, self.opponents, self.method]


SETTINGS_COLUMNS = ("rollouts", "seed", "fantasyland_value", "screen", "reviewed_as",
                    "opponents", "method")
"""The columns of ``decisions`` that hold its settings (:class:`Reviewed`)."""

_SAME_SETTINGS = " AND ".join(f"d.{c} = ?" for c in SETTINGS_COLUMNS)


def review_seats(store: Store, hand_keys: Sequence[int]) -> pl.DataFrame:
    """Every seat of these hands with its final rows and logged placements, in hand and
    seat order: what a review makes its positions from."""
    return store.con.sql("""
        SELECT h.hand_key, h.hand_id, h.variant, h.ruleset, h.button, s.seat, s.player,
               s.fantasyland, coalesce(s.timed_out, false) AS timed_out, s.top, s.middle,
               s.bottom, p.streets, p.cards, p.rows
        FROM hands h JOIN seats s USING (hand_key)
        LEFT JOIN seat_placement_lists p USING (hand_key, seat)
        WHERE h.hand_key IN (SELECT unnest(?))
        ORDER BY h.hand_key, s.seat
    """, params=[list(hand_keys)]).pl()


_THIRTEEN = "h.variant IN ({})".format(
    ", ".join(f"'{v.value}'" for v in Variant if v.thirteen_card))
"""A hand of 13-card Chinese poker or its criss-cross: 13 cards set at once, no streets to
review."""


def skipped_seats(store: Store, selection: Selection) -> tuple[int, int, int]:
    """Seats of the selection a review leaves out: (timed out, of 13-card hands, logged
    with the final rows only)."""
    where, params = selection.where()
    row = store.con.sql(f"""
        SELECT count(*) FILTER (WHERE NOT {_THIRTEEN} AND coalesce(s.timed_out, false)),
               count(*) FILTER (WHERE {_THIRTEEN}),
               count(*) FILTER (WHERE NOT {_THIRTEEN}
                                  AND NOT coalesce(s.timed_out, false) AND p.seat IS NULL)
        FROM hands h JOIN seats s USING (hand_key)
        LEFT JOIN seat_placements p USING (hand_key, seat)
        WHERE {where}
    """, params=params).fetchall()[0]
    return int(row[0]), int(row[1]), int(row[2])


def pending_seats(store: Store, selection: Selection, reviewed: Reviewed
                  ) -> list[tuple[int, int, str]]:
    """(hand key, seat, session) of the selected seats with streets to review and no
    decisions yet under ``reviewed``, in hand and seat order."""
    where, params = selection.where()
    return store.con.sql(f"""
        SELECT h.hand_key, s.seat, h.session_id FROM hands h JOIN seats s USING (hand_key)
        JOIN seat_placements p USING (hand_key, seat)
        WHERE {where} AND NOT {_THIRTEEN} AND NOT coalesce(s.timed_out, false)
          AND NOT EXISTS (
            SELECT 1 FROM decisions d WHERE d.hand_key = s.hand_key AND d.seat = s.seat
              AND {_SAME_SETTINGS})
        ORDER BY h.hand_key, s.seat
    """, params=[*params, *reviewed.params()]).fetchall()


def replace_decisions(store: Store, rows: pl.DataFrame) -> None:
    """Replace these rows of ``decisions`` (same decision and settings), in one
    transaction."""
    with store.transaction(), registered(store.con, "new_decisions", rows.to_arrow()):
        store.con.execute("""
                DELETE FROM decisions d USING new_decisions n
                WHERE d.hand_key = n.hand_key AND d.seat = n.seat AND d.street = n.street
                  AND """ + " AND ".join(f"d.{c} = n.{c}" for c in SETTINGS_COLUMNS))
        store.con.execute("INSERT INTO decisions BY NAME SELECT * FROM new_decisions")


def decisions(store: Store, selection: Selection, reviewed: Reviewed) -> pl.DataFrame:
    """The stored decisions (``decisions_named``) of the selected hands and seats under
    ``reviewed``, in hand, seat and street order."""
    where, params = selection.where("d", "d")
    return store.con.sql(f"""
        SELECT * FROM decisions_named d
        WHERE {where} AND {_SAME_SETTINGS}
        ORDER BY d.hand_key, d.seat, d.street
    """, params=[*params, *reviewed.params()]).pl()


def placements(store: Store, hand_keys: Sequence[int]) -> pl.DataFrame:
    """The logged placements (``seat_placements``) of these hands' seats."""
    return store.con.sql("""
        SELECT hand_key, seat, streets, cards, rows FROM seat_placement_lists
        WHERE hand_key IN (SELECT unnest(?))""", params=[list(hand_keys)]).pl()


def hand(store: Store, hand_id: str) -> tuple[str, str, str, datetime, int] | None:
    """(hand id, session, variant, time played, hand key) of a stored hand; None when
    there is no such hand."""
    found = store.con.sql("SELECT hand_id, session_id, variant, played_at, hand_key FROM hands "
                          "WHERE hand_id = ?", params=[hand_id]).fetchall()
    return found[0] if found else None


def hand_seats(store: Store, hand_key: int) -> pl.DataFrame:
    """A hand's seats in order with their logged placements, for its replay."""
    return replay_seats(store, [hand_key]).drop("hand_key")


def replay_seats(store: Store, hand_keys: Sequence[int]) -> pl.DataFrame:
    """These hands' seats in hand and seat order, with their final rows and logged
    placements (null when only the final rows were logged), for their replay."""
    return store.con.sql("""
        SELECT s.hand_key, s.seat, s.player, s.fantasyland,
               coalesce(s.timed_out, false) AS timed_out, s.top, s.middle, s.bottom,
               p.streets, p.cards, p.rows
        FROM seats s LEFT JOIN seat_placement_lists p USING (hand_key, seat)
        WHERE s.hand_key IN (SELECT unnest(?)) ORDER BY s.hand_key, s.seat""",
                         params=[list(hand_keys)]).pl()


def replay_hands(store: Store, *, hand_ids: Sequence[str] | None = None,
                 sessions: Sequence[str] | None = None) -> pl.DataFrame:
    """(hand key, hand id, session, variant, time played, ruleset played, button) of the
    hands named or of the sessions named, in play order."""
    where, params = Selection(hand_ids=hand_ids, sessions=sessions).where("h", "h")
    return store.con.sql(f"""
        SELECT h.hand_key, h.hand_id, h.session_id, h.variant, h.played_at,
               h.ruleset AS played_ruleset
        FROM hands h WHERE {where}
        ORDER BY h.session_id, h.played_at NULLS LAST, h.hand_key""", params=params).pl()


SEAT_REVIEW = f"""
SELECT hand_key, seat, ev_loss, mistakes, {', '.join(SETTINGS_COLUMNS)} FROM (
    SELECT hand_key, seat, {', '.join(SETTINGS_COLUMNS)}, sum(ev_loss) AS ev_loss,
           count(mistake) AS mistakes
    FROM decisions GROUP BY ALL
) QUALIFY row_number() OVER (
    PARTITION BY hand_key, seat
    ORDER BY opponents = 'drawn' DESC, rollouts DESC, {', '.join(SETTINGS_COLUMNS)}) = 1
"""
"""Each reviewed seat's review: its EV loss on the hand (summed over its streets) and its
mistakes, under one review's settings when it was reviewed under several: what the
player could know (opponents drawn) before hindsight, then the most rollouts (the
closest numbers), then the settings in order, so the choice is always the same."""


def seat_decisions(store: Store, hand_keys: Sequence[int]) -> pl.DataFrame:
    """The decisions of these hands' seats under each seat's review
    (:data:`SEAT_REVIEW`), in hand, seat and street order."""
    return store.con.sql(f"""
        SELECT d.* FROM decisions d
        JOIN ({SEAT_REVIEW}) r ON r.hand_key = d.hand_key AND r.seat = d.seat
            AND {' AND '.join(f"r.{c} = d.{c}" for c in SETTINGS_COLUMNS)}
        WHERE d.hand_key IN (SELECT unnest(?))
        ORDER BY d.hand_key, d.seat, d.street
    """, params=[list(hand_keys)]).pl()
