"""What the hand list reads: one row per hand and seat under the ruleset shown, with the
seat's money and, once reviewed, its EV loss and mistakes.

The SQL of :func:`ofcstats.analysis.hands` lives here; analysis hands over the filters
and the rulesets shown and gets a frame back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from ofcstats.store.decisions import SEAT_REVIEW
from ofcstats.store.results import Filters
from ofcstats.store.schema import NATURAL_SHOWDOWNS

if TYPE_CHECKING:
    from ofcstats.store import Store

SORTS = {
    "played": "session_id, played_at NULLS LAST, hand_key, seat",
    "points": "points, session_id, played_at NULLS LAST, hand_key, seat",
    "ev_loss": "ev_loss DESC NULLS LAST, session_id, played_at NULLS LAST, hand_key, seat",
}
"""The orders of the hand list: play order (each session's hands as
:func:`ofcstats.session.hand_order` orders them), the largest loss of points first, the
largest EV loss first (seats not reviewed last); ties in play order."""

COLUMNS = ("hand_id", "session_id", "played_at", "variant", "ruleset", "player", "seat",
           "points", "money", "fouled", "royalties", "fantasyland", "fantasyland_entered",
           "timed_out", "ev_loss", "mistakes", "hand_key")
"""The hand list's columns, in order."""


@dataclass(frozen=True)
class HandFilters:
    """The hand list's own filters (None: no filter): the seat fouled, played in or
    entered fantasyland, made a mistake (reviewed), scored at least / at most so many
    points."""

    fouled: bool | None = None
    fantasyland: bool | None = None
    mistakes: bool | None = None
    min_points: int | None = None
    max_points: int | None = None

    def sql(self) -> tuple[str, list[object]]:
        """The filters as a SQL condition on the list's columns, and its parameters."""
        where: list[str] = ["true"]
        params: list[object] = []
        if self.fouled is not None:
            where.append("fouled = ?")
            params.append(self.fouled)
        if self.fantasyland is not None:
            where.append("(fantasyland OR fantasyland_entered) = ?")
            params.append(self.fantasyland)
        if self.mistakes is not None:
            where.append("coalesce(mistakes > 0, false) = ?")
            params.append(self.mistakes)
        if self.min_points is not None:
            where.append("points >= ?")
            params.append(self.min_points)
        if self.max_points is not None:
            where.append("points <= ?")
            params.append(self.max_points)
        return " AND ".join(where), params


def hand_rows(store: Store, filters: Filters, shown: Mapping[str, str],
              stakes: Mapping[str, float | None], own: HandFilters, *, sort: str = "played",
              limit: int | None = None, per_player: int | None = None) -> pl.DataFrame:
    """The rows of the hand list (:data:`COLUMNS`): each seat of the hands ``filters``
    keep, under the ruleset ``shown`` for its variant (variant to ruleset), kept by
    ``own`` and ordered by ``sort`` (:data:`SORTS`), at most ``limit`` rows and
    ``per_player`` rows of each player and variant (the first in that order).

    ``money`` is the seat's points weighted by its units (the points themselves where
    every unit is 1) times the stake: the ruleset's (``stakes``, None where it has none),
    else the hand's logged point value, else 1; a game's loss cap settles whole games, not
    hands. ``ev_loss`` and ``mistakes`` come from the seat's review
    (:data:`ofcstats.store.decisions.SEAT_REVIEW`), null when it was not reviewed."""
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
    pairs = sorted(shown.items())
    if not pairs:
        return pl.DataFrame(schema=_EMPTY)
    where, params = Filters(sessions=filters.sessions, players=filters.players,
                            variants=filters.variants, since=filters.since,
                            until=filters.until).sql(
        {"session_id": "h.session_id", "player": "s.player", "variant": "h.variant"},
        times="h.played_at")
    picked = " OR ".join(["(h.variant = ? AND r.name = ?)"] * len(pairs))
    params += [value for pair in pairs for value in pair]
    kept, own_params = own.sql()
    stake_rows = ", ".join(["(?, ?::DOUBLE)"] * len(pairs))
    stake_params = [value for _, name in pairs for value in (name, stakes.get(name))]
    limited = "" if limit is None else f"LIMIT {int(limit)}"
    first = "" if per_player is None else (
        f"QUALIFY row_number() OVER (PARTITION BY variant, player ORDER BY {SORTS[sort]}) "
        f"<= {int(per_player)}")
    # From the tables rather than ``results_named`` (twice as fast on a million hands);
    # fouled and fantasyland_entered as the view defines them, which the tests hold it to.
    return store.query(f"""
        WITH stakes(ruleset, stake) AS (VALUES {stake_rows}),
        shown_seats AS (
            SELECT h.hand_id, h.session_id, h.played_at, h.variant, r.name AS ruleset,
                   s.player, x.seat, x.points, coalesce(m.fouled, z.fouled) AS fouled,
                   (x.royalty_top + x.royalty_middle + x.royalty_bottom)::INTEGER
                       AS royalties,
                   s.fantasyland, x.fantasyland_cards > 0 AND NOT s.fantasyland
                       AS fantasyland_entered,
                   coalesce(s.timed_out, false) AS timed_out, x.hand_key,
                   coalesce(x.unit_points, x.points)
                       * coalesce(k.stake, h.point_value, 1.0) AS money
            FROM results x JOIN rulesets r USING (ruleset_id)
            JOIN stakes k ON k.ruleset = r.name
            JOIN hands h USING (hand_key) JOIN seats s USING (hand_key, seat)
            JOIN showdowns z ON z.hand_key = x.hand_key AND z.seat = x.seat
                AND z.natural_mask = 0
            LEFT JOIN {NATURAL_SHOWDOWNS} m ON m.hand_key = x.hand_key
                AND m.seat = x.seat AND m.natural_mask = r.natural_mask
            WHERE {where} AND ({picked})
        ), listed AS (
            SELECT s.*, d.ev_loss, d.mistakes::INTEGER AS mistakes
            FROM shown_seats s
            LEFT JOIN ({SEAT_REVIEW}) d ON d.hand_key = s.hand_key AND d.seat = s.seat
        )
        SELECT {', '.join(COLUMNS)} FROM listed
        WHERE {kept} {first}
        ORDER BY {SORTS[sort]} {limited}
    """, [*stake_params, *params, *own_params])


_EMPTY: dict[str, pl.DataType | type[pl.DataType]] = {"hand_id": pl.String, "session_id": pl.String,
          "played_at": pl.Datetime("us", "UTC"), "variant": pl.String, "ruleset": pl.String,
          "player": pl.String, "seat": pl.UInt8, "points": pl.Int32, "money": pl.Float64,
          "fouled": pl.Boolean, "royalties": pl.Int32, "fantasyland": pl.Boolean,
          "fantasyland_entered": pl.Boolean, "timed_out": pl.Boolean, "ev_loss": pl.Float64,
          "mistakes": pl.Int32, "hand_key": pl.Int64}

