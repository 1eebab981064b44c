"""A hand replayed street by street as a self-contained HTML page.

Each seat's streets in order: the board after the play made and after the best
candidate side by side, the cards dealt, and the expected points of both. Every text
that comes from a log (hand id, player names) is escaped; the page needs no network.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from ofcstats.cards import RANKS, format_card
from ofcstats.rows import ROW_NAMES
from ofcstats.sanitize import html_text
from ofcstats.store import decisions as stored

if TYPE_CHECKING:
    from ofcstats.review.store import Settings
    from ofcstats.store import Store

PLACES = (*ROW_NAMES, "discard")

_SUIT = {0: ("&clubs;", "black"), 1: ("&diams;", "red"), 2: ("&hearts;", "red"),
         3: ("&spades;", "black")}
CARD_STYLE = """
table.street { border-collapse: collapse; margin: .5rem 0 1rem; }
table.street td, table.street th { border: 1px solid #ccc; padding: .35rem .6rem;
  vertical-align: top; text-align: left; }
.card { display: inline-block; min-width: 2.1em; padding: .1em .2em; margin: .08em;
  border: 1px solid #888; border-radius: .25em; background: #fff; text-align: center;
  font-weight: 600; }
.card.red { color: #c00; } .card.black { color: #111; }
.card.new { background: #fff6c8; } .card.empty { border-style: dashed; color: #bbb; }
.card.gone { text-decoration: line-through; opacity: .6; }
.board div { white-space: nowrap; }
.loss { font-weight: 700; color: #a00; } .ok { color: #070; }
tr.mistake { background: #fff0f0; }
@media (max-width: 760px) {
  table.street, table.street tbody, table.street tr, table.street td { display: block; }
  table.street tr.head { display: none; }
  table.street tr { border-top: 2px solid #bbb; padding: .3rem 0; }
  table.street td { border: none; padding: .15rem 0; }
  table.street td[data-label]::before { content: attr(data-label); display: block;
    font-size: .8em; color: #555; }
  .card { min-width: 1.9em; }
}
"""
"""The style of the cards, boards and street tables (the report uses it too): on a
narrow screen each street's cells stack, the board played above the best one."""
STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }
@media (max-width: 600px) { body { margin: 1rem .6rem; } }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
""" + CARD_STYLE
"""The style of a replay page."""


def placement_text(dealt: Sequence[int], rows: Sequence[int]) -> str:
    """``top Ah Kd, bottom 7c, discard 2s``: where each dealt card went, by row.

    >>> placement_text([51, 47, 20, 0], [0, 0, 2, 3])
    'top As Ks, bottom 7c, discard 2c'
    """
    parts = []
    for row, name in enumerate(PLACES):
        cards = [format_card(c) for c, r in zip(dealt, rows, strict=True) if r == row]
        if cards:
            parts.append(f"{name} {' '.join(cards)}")
    return ", ".join(parts)


def card_html(code: int | None, *extra: str) -> str:
    """One card as a span (an empty slot when ``code`` is None)."""
    if code is None:
        return '<span class="card empty">&middot;</span>'
    symbol, colour = _SUIT[code % 4]
    classes = " ".join(("card", colour, *extra))
    return f'<span class="{classes}">{RANKS[code // 4]}{symbol}</span>'


def board_html(before: Sequence[tuple[int, int]], dealt: Sequence[int],
               rows: Sequence[int]) -> str:
    """A board: the cards placed before (code, row), the street's cards highlighted in
    the rows given, discards struck through below."""
    sizes = (3, 5, 5)
    lines = []
    for row in range(3):
        old = [card_html(c) for c, r in before if r == row]
        new = [card_html(c, "new") for c, r in zip(dealt, rows, strict=True) if r == row]
        empty = [card_html(None)] * (sizes[row] - len(old) - len(new))
        lines.append(f"<div>{''.join(old + new + empty)}</div>")
    gone = [card_html(c, "gone") for c, r in zip(dealt, rows, strict=True) if r == 3]
    if gone:
        lines.append(f"<div>discard {''.join(gone)}</div>")
    return f'<div class="board">{"".join(lines)}</div>'


def street_cells(placed: Sequence[tuple[int, int]], dealt: Sequence[int],
                 chosen: Sequence[int], verdict: dict[str, Any] | None,
                 with_best: bool = True) -> str:
    """The cells of one street: the cards dealt, the board after the play made and after
    the best candidate with their EVs, and the EV loss (``verdict``: a decisions row, or
    None when the street was not reviewed: then, unless ``with_best``, the play made
    alone)."""
    e = html_text
    if verdict is None:
        best_cell, loss_cell, ev_played = "not reviewed", "", ""
    else:
        best = list(verdict["best"])
        ev_played = f"<br>EV {verdict['ev_chosen']:+.2f}"
        best_cell = (board_html(placed, dealt, best)
                     + f"{e(placement_text(dealt, best))}<br>EV {verdict['ev_best']:+.2f}")
        loss = float(verdict["ev_loss"])
        error = verdict.get("ev_loss_se") or 0.0
        spread = f" &plusmn; {error:.2f}" if error else ""
        kind = f" ({e(str(verdict['mistake']))})" if verdict["mistake"] else ""
        loss_cell = (f'<span class="loss">{loss:.2f}{spread}{kind}</span>'
                     if verdict["mistake"] else f'<span class="ok">{loss:.2f}{spread}</span>')
    return (f'<td data-label="Dealt">{"".join(card_html(c) for c in dealt)}</td>'
            f'<td data-label="Played">{board_html(placed, dealt, chosen)}'
            f"{e(placement_text(dealt, chosen))}{ev_played}</td>"
            + ("" if verdict is None and not with_best else
               f'<td data-label="Best">{best_cell}</td>'
               f'<td data-label="EV loss">{loss_cell}</td>'))


def worst_mistakes(store: Store, frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Each player's costliest decision in each variant (rows of ``frame``, a decisions
    frame), with ``placed``: the (card, row) pairs on the board before that street."""
    top = (frame.filter(pl.col("mistake").is_not_null())
           .sort(["variant", "player", "ev_loss", "hand_id", "seat", "street"],
                 descending=[False, False, True, False, False, False])
           .group_by(["variant", "player"], maintain_order=True).head(1))
    if top.is_empty():
        return []
    seats = stored.placements(store, top["hand_key"].to_list())
    logged = {(r["hand_key"], r["seat"]): r for r in seats.iter_rows(named=True)}
    out = []
    for row in top.iter_rows(named=True):
        seat = logged.get((row["hand_key"], row["seat"]))
        placed = [] if seat is None else [
            (c, r - 1) for s, c, r in zip(seat["streets"], seat["cards"], seat["rows"],
                                          strict=True) if s < row["street"] and r - 1 < 3]
        out.append({**row, "placed": placed})
    return out


def mistakes_html(mistakes: Sequence[dict[str, Any]]) -> str:
    """A table of decisions from :func:`worst_mistakes`, each street as the replay page
    shows it; ``CARD_STYLE`` styles its cards."""
    e = html_text
    rows = [
        f"<tr><td>{e(str(m['player']))}<br>{e(str(m['hand_id']))} seat {int(m['seat'])}"
        f" street {int(m['street'])}</td>"
        f"{street_cells(m['placed'], list(m['dealt']), list(m['chosen']), m)}</tr>"
        for m in mistakes]
    return ('<table class="street"><tr class="head"><th>Decision</th><th>Dealt</th>'
            f"<th>Played</th><th>Best</th><th>EV loss</th></tr>{''.join(rows)}</table>")


def final_board_html(top: Sequence[int], middle: Sequence[int], bottom: Sequence[int]
                     ) -> str:
    """A finished board from its three rows (13-card hands, boards logged whole)."""
    rows = (top, middle, bottom)
    return ('<div class="board">'
            + "".join(f"<div>{''.join(card_html(int(c)) for c in row)}</div>" for row in rows)
            + "</div>")


EV_NOTE = ("EV: expected points of the placement against the other seats, the later "
           "streets played out by rollouts. EV loss: the best candidate's EV minus the play "
           "made's, measured on rollouts that did not choose the best, &plusmn; its "
           "standard error; a mistake when above two standard errors.")
"""What the EVs of a replay mean, said under every replay."""


def seat_html(seat: dict[str, Any], verdicts: dict[int, dict[str, Any]], *,
              heading: str = "h2", result: str = "") -> str:
    """One seat of a hand: its heading (``result``: its points and flags, when scored),
    then each street on its board, the play made and, where ``verdicts`` (decisions rows
    by street) has it, the best candidate and the EV loss; a seat logged with its final
    rows only (13-card hands), its finished board."""
    e = html_text
    flag = " (fantasyland)" if seat["fantasyland"] else ""
    parts = [f"<{heading}>Seat {int(seat['seat'])}: {e(str(seat['player']))}{flag}"
             f"{result}</{heading}>"]
    if seat.get("timed_out"):
        parts.append("<p>Timed out: the cards were placed for the player from some "
                     "street on, so its streets are not reviewed.</p>")
    if seat["streets"] is None:
        if seat.get("top") is None:
            parts.append("<p>Only the final board was logged.</p>")
        else:
            parts.append("<p>The final board:</p>"
                         + final_board_html(seat["top"], seat["middle"], seat["bottom"]))
        return "".join(parts)
    streets, cards = list(seat["streets"]), list(seat["cards"])
    rows = [r - 1 for r in seat["rows"]]
    placed: list[tuple[int, int]] = []
    reviewed = bool(verdicts)
    head = "<th>Best</th><th>EV loss</th>" if reviewed else ""
    parts.append('<table class="street"><tr class="head"><th>Street</th><th>Dealt</th>'
                 f"<th>Played</th>{head}</tr>")
    for street in dict.fromkeys(streets):
        now = [i for i, s in enumerate(streets) if s == street]
        dealt = [cards[i] for i in now]
        chosen = [rows[i] for i in now]
        verdict = verdicts.get(int(street))
        marked = ' class="mistake"' if verdict is not None and verdict["mistake"] else ""
        parts.append(f'<tr{marked}><td data-label="Street">{int(street)}</td>'
                     f"{street_cells(placed, dealt, chosen, verdict, reviewed)}</tr>")
        placed += [(c, r) for c, r in zip(dealt, chosen, strict=True) if r < 3]
    parts.append("</table>")
    return "".join(parts)


def by_seat(decisions: pl.DataFrame) -> dict[int, dict[int, dict[str, Any]]]:
    """Decisions rows by seat and street."""
    found: dict[int, dict[int, dict[str, Any]]] = {}
    for row in decisions.iter_rows(named=True):
        found.setdefault(int(row["seat"]), {})[int(row["street"])] = row
    return found


def render(hand: dict[str, object], seats: pl.DataFrame, decisions: pl.DataFrame) -> str:
    """The page of one hand: ``hand`` (hand_id, session_id, variant, played_at),
    ``seats`` (seat, player, fantasyland, timed_out, streets, cards, rows; top, middle,
    bottom for seats without streets), ``decisions`` (as stored, for this hand)."""
    e = html_text
    title = f"Hand {hand['hand_id']}"
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        f"<p>Session {e(str(hand['session_id']))} &middot; {e(str(hand['variant']))}"
        f" &middot; {e(str(hand['played_at'] or ''))}"
        f" &middot; reviewed under {e(str(hand['ruleset']))}</p>",
    ]
    verdicts = by_seat(decisions)
    for seat in seats.iter_rows(named=True):
        parts.append(seat_html(seat, verdicts.get(int(seat["seat"]), {})))
    parts.append(f"<p>{EV_NOTE}</p></body></html>")
    return "\n".join(parts) + "\n"


def page(store: Store, hand_id: str, settings: Settings | None = None) -> str:
    """The replay page of a stored hand under ``settings``: the decisions a review stored
    under them, and those of the seats not reviewed under them valued in memory, the same
    numbers a review would store. Nothing is written, so the store may be read-only."""
    # Imported here: the review's modules load the simulator, which drawing needs not.
    from ofcstats.review.store import (  # noqa: PLC0415
        ReviewError,
        Selection,
        Settings,
        in_memory,
        reviewed_as,
    )

    settings = settings or Settings()
    found = stored.hand(store, hand_id)
    if found is None:
        raise ReviewError(f"no hand {hand_id!r} in {store.path}: see ofcstats db info")
    selection = Selection(hand_ids=[hand_id])
    kept = stored.decisions(store, selection, settings.reviewed(reviewed_as(settings)))
    fresh = in_memory(store, selection, settings)
    decisions = pl.concat([kept.select(fresh.columns), fresh]).sort("seat", "street")
    seats = stored.hand_seats(store, found[4])
    rulesets = sorted(set(decisions["ruleset"].to_list())) if decisions.height else ["-"]
    hand = dict(zip(("hand_id", "session_id", "variant", "played_at"), found[:4],
                    strict=True))
    hand["ruleset"] = f"{', '.join(rulesets)}, opponents {settings.opponents}"
    return render(hand, seats, decisions)
