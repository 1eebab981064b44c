"""A hand replayed street by street as a self-contained HTML page.

Each seat's streets in order: the board after the play made and after the best
candidate side by side, the cards dealt, and the expected points of both. Every text
that comes from a log (hand id, player names) is escaped; the page needs no network.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from ofcstats.cards import RANKS
from ofcstats.review.store import ReviewError, Selection, Settings, in_memory
from ofcstats.review.summary import decisions_frame, placement_text
from ofcstats.sanitize import html_text
from ofcstats.store import Store
from ofcstats.store import decisions as stored

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
"""
"""The style of the cards, boards and street tables (the report uses it too)."""
_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }
@media (max-width: 600px) { body { margin: 1rem .6rem; } }
table.street { display: block; max-width: 100%; overflow-x: auto; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
""" + CARD_STYLE


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
                 chosen: Sequence[int], verdict: dict[str, Any] | None) -> str:
    """The cells of one street: the cards dealt, the board after the play made and after
    the best candidate with their EVs, and the EV loss (``verdict``: a decisions row, or
    None when the street was not reviewed)."""
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
    return (f"<td>{''.join(card_html(c) for c in dealt)}</td>"
            f"<td>{board_html(placed, dealt, chosen)}{e(placement_text(dealt, chosen))}"
            f"{ev_played}</td><td>{best_cell}</td><td>{loss_cell}</td>")


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
        f"<br>street {int(m['street'])}</td>"
        f"{street_cells(m['placed'], list(m['dealt']), list(m['chosen']), m)}</tr>"
        for m in mistakes]
    return ('<table class="street"><tr><th>Decision</th><th>Dealt</th><th>Played</th>'
            f"<th>Best</th><th>EV loss</th></tr>{''.join(rows)}</table>")


def render(hand: dict[str, object], seats: pl.DataFrame, decisions: pl.DataFrame) -> str:
    """The page of one hand: ``hand`` (hand_id, session_id, variant, played_at),
    ``seats`` (seat, player, fantasyland, timed_out, streets, cards, rows), ``decisions`` (as
    stored, for this hand)."""
    e = html_text
    title = f"Hand {hand['hand_id']}"
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        f"<p>Session {e(str(hand['session_id']))} &middot; {e(str(hand['variant']))}"
        f" &middot; {e(str(hand['played_at'] or ''))}"
        f" &middot; reviewed under {e(str(hand['ruleset']))}</p>",
    ]
    by_street = {(int(r["seat"]), int(r["street"])): r for r in decisions.iter_rows(named=True)}
    for seat in seats.iter_rows(named=True):
        flag = " (fantasyland)" if seat["fantasyland"] else ""
        parts.append(f"<h2>Seat {int(seat['seat'])}: {e(str(seat['player']))}{flag}</h2>")
        if seat.get("timed_out"):
            parts.append("<p>Timed out: the cards were placed for the player from some "
                         "street on, so its streets are not reviewed.</p>")
        if seat["streets"] is None:
            parts.append("<p>Only the final board was logged.</p>")
            continue
        streets, cards = list(seat["streets"]), list(seat["cards"])
        rows = [r - 1 for r in seat["rows"]]
        placed: list[tuple[int, int]] = []
        parts.append('<table class="street"><tr><th>Street</th><th>Dealt</th>'
                     "<th>Played</th><th>Best</th><th>EV loss</th></tr>")
        for street in dict.fromkeys(streets):
            now = [i for i, s in enumerate(streets) if s == street]
            dealt = [cards[i] for i in now]
            chosen = [rows[i] for i in now]
            verdict = by_street.get((int(seat["seat"]), int(street)))
            parts.append(f"<tr><td>{int(street)}</td>"
                         f"{street_cells(placed, dealt, chosen, verdict)}</tr>")
            placed += [(c, r) for c, r in zip(dealt, chosen, strict=True) if r < 3]
        parts.append("</table>")
    parts.append("<p>EV: expected points of the placement against the other seats, the "
                 "later streets played out by rollouts. EV loss: the best candidate's EV "
                 "minus the play made's, measured on rollouts that did not choose the best, "
                 "&plusmn; its standard error; a mistake when above two standard errors."
                 "</p></body></html>")
    return "\n".join(parts) + "\n"


def page(store: Store, hand_id: str, settings: Settings | None = None) -> str:
    """The replay page of a stored hand under ``settings``: the decisions a review stored
    under them, and those of the seats not reviewed under them valued in memory, the same
    numbers a review would store. Nothing is written, so the store may be read-only."""
    settings = settings or Settings()
    found = stored.hand(store, hand_id)
    if found is None:
        raise ReviewError(f"no hand {hand_id!r} in {store.path}: see ofcstats db info")
    selection = Selection(hand_ids=[hand_id])
    kept = decisions_frame(store, selection, settings)
    fresh = in_memory(store, selection, settings)
    decisions = pl.concat([kept.select(fresh.columns), fresh]).sort("seat", "street")
    seats = stored.hand_seats(store, found[4])
    rulesets = sorted(set(decisions["ruleset"].to_list())) if decisions.height else ["-"]
    hand = dict(zip(("hand_id", "session_id", "variant", "played_at"), found[:4],
                    strict=True))
    hand["ruleset"] = f"{', '.join(rulesets)}, opponents {settings.opponents}"
    return render(hand, seats, decisions)
