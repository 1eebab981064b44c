"""A session replayed on one self-contained page: the list of its hands on top, sorted
and filtered in the page, then each hand street by street, one at a time, with previous
and next by button and by key.

Each seat is drawn by :func:`ofcstats.review.replay.seat_html`, as the single hand's
page draws it; what the page shows is gathered by :func:`ofcstats.analysis.replayed`:
the points, money, fouls and fantasyland of the hand list, the decisions of each seat's
review as stored (nothing is valued here: a seat not reviewed shows the play made only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from ofcstats.review.replay import EV_NOTE, STYLE, by_seat, seat_html
from ofcstats.sanitize import html_text

_PAGE_STYLE = """
.hands-list { width: 100%; table-layout: fixed; border-collapse: collapse;
  font-size: .9rem; }
.hands-list th, .hands-list td { border-bottom: 1px solid #ddd; padding: .25rem .3rem;
  text-align: right; overflow-wrap: anywhere; }
.hands-list th:nth-child(2), .hands-list td:nth-child(2) { text-align: left; }
.hands-list th button { font: inherit; font-weight: 700; border: 0; background: none;
  padding: 0; cursor: pointer; text-align: inherit; overflow-wrap: anywhere; }
.hands-list tbody tr { cursor: pointer; }
.hands-list tbody tr.at { background: #e8f0ff; }
.hands-list tr.bad td:first-child { border-left: 3px solid #a00; }
.hands-list small { color: #666; }
.neg { color: #a00; } .pos { color: #070; }
.filters label { margin-right: .8rem; white-space: nowrap; }
.filters input[type=search] { max-width: 100%; }
.nav { position: sticky; top: 0; background: #fff; padding: .4rem 0;
  border-bottom: 1px solid #ccc; display: flex; gap: .5rem; align-items: center;
  flex-wrap: wrap; }
.nav button { font-size: 1rem; padding: .3rem .8rem; }
section.hand h2 { margin-top: 1rem; overflow-wrap: anywhere; }
.totals, .meta { color: #444; overflow-wrap: anywhere; }
@media (max-width: 600px) { .hands-list { font-size: .8rem; } }
"""

_SCRIPT = """
(function () {
  const hands = Array.from(document.querySelectorAll('section.hand'));
  const body = document.querySelector('.hands-list tbody');
  const rows = Array.from(body.rows);
  const where = document.getElementById('where');
  let at = 0;
  function order() {
    return Array.from(body.rows).filter(r => !r.hidden).map(r => +r.dataset.i);
  }
  function show(i, scroll, mark = true) {
    at = Math.max(0, Math.min(hands.length - 1, i));
    hands.forEach((h, j) => { h.hidden = j !== at; });
    rows.forEach(r => r.classList.toggle('at', +r.dataset.i === at));
    where.textContent = 'hand ' + (at + 1) + ' of ' + hands.length;
    if (scroll) { hands[at].scrollIntoView(); }
    // (shown inline in a notebook, the page has no address of its own to keep it in)
    // (not on opening with no hand named: an address with a hand in it when the page has
    // loaded would scroll the browser past the list to it)
    if (mark && location.protocol !== 'about:') {
      history.replaceState(null, '', '#' + hands[at].id);
    }
  }
  function step(by) {
    const shown = order();
    const k = shown.indexOf(at);
    if (!shown.length) { return; }
    const next = k < 0 ? shown[0] : shown[Math.max(0, Math.min(shown.length - 1, k + by))];
    show(next, false);
  }
  document.getElementById('prev').addEventListener('click', () => step(-1));
  document.getElementById('next').addEventListener('click', () => step(1));
  document.addEventListener('keydown', event => {
    if (event.target.tagName === 'INPUT' || event.altKey || event.ctrlKey || event.metaKey) {
      return;
    }
    if (event.key === 'ArrowRight' || event.key === 'j' || event.key === 'n') { step(1); }
    else if (event.key === 'ArrowLeft' || event.key === 'k' || event.key === 'p') {
      step(-1);
    } else { return; }
    event.preventDefault();
  });
  rows.forEach(r => r.addEventListener('click', () => show(+r.dataset.i, true)));
  let sorted = {column: -1, up: true};
  document.querySelectorAll('.hands-list th button').forEach((button, column) => {
    button.addEventListener('click', () => {
      const up = sorted.column === column ? !sorted.up : button.dataset.first !== 'down';
      sorted = {column: column, up: up};
      const value = r => {
        const v = r.cells[column].dataset.v;
        return v === undefined || v === '' ? null : (isNaN(+v) ? v : +v);
      };
      Array.from(body.rows).sort((a, b) => {
        const x = value(a), y = value(b);
        if (x === null || y === null) {
          return x === y ? +a.dataset.i - +b.dataset.i : (x === null ? 1 : -1);
        }
        const c = x < y ? -1 : x > y ? 1 : 0;
        return (up ? c : -c) || +a.dataset.i - +b.dataset.i;
      }).forEach(r => body.appendChild(r));
      document.querySelectorAll('.hands-list th').forEach((th, k) => {
        th.setAttribute('aria-sort', k === column ? (up ? 'ascending' : 'descending')
                                                  : 'none');
      });
    });
  });
  const text = document.getElementById('find');
  const boxes = Array.from(document.querySelectorAll('.filters input[type=checkbox]'));
  function filter() {
    const words = text.value.trim().toLowerCase();
    rows.forEach(r => {
      r.hidden = (words && !r.dataset.text.includes(words))
        || boxes.some(b => b.checked && r.dataset[b.name] !== '1');
    });
    document.getElementById('count').textContent = order().length + ' of ' + rows.length;
  }
  text.addEventListener('input', filter);
  boxes.forEach(b => b.addEventListener('change', filter));
  const start = hands.findIndex(h => '#' + h.id === location.hash);
  show(start < 0 ? 0 : start, start >= 0, start >= 0);
})();
"""


@dataclass(frozen=True)
class Replayed:
    """What a page of several hands shows (:func:`ofcstats.analysis.replayed` gathers it):
    the ``hands`` in play order (hand_key, hand_id, session_id, variant, played_at), their
    ``seats`` (:func:`ofcstats.store.decisions.replay_seats`), each seat's line of the hand
    list (``listed``: :func:`ofcstats.analysis.hands`), the ``decisions`` of each seat's
    review, the page's ``title``, and the ``player`` followed (None: every seat)."""

    hands: pl.DataFrame
    listed: pl.DataFrame
    seats: pl.DataFrame
    decisions: pl.DataFrame
    title: str
    player: str | None = None


def _signed(value: float | int | None, decimals: int = 0) -> str:
    """``+6``, ``-3``, ``0``, ``1.25`` (decimals), ``-`` for none."""
    if value is None:
        return "-"
    text = f"{value:+.{decimals}f}"
    return text[1:] if float(value) == 0 else text


def _points_class(value: float | None) -> str:
    return "" if not value else (' class="neg"' if value < 0 else ' class="pos"')


def render(data: Replayed) -> str:
    """The page of the hands :func:`ofcstats.analysis.replayed` gathered."""
    e = html_text
    hands, listed, follow = data.hands, data.listed, data.player
    players = sorted(set(listed["player"].to_list())) if follow is None else [follow]
    per_hand = {key: part for (key,), part in listed.group_by("hand_key")}
    seats_of = {key: part for (key,), part in data.seats.group_by("hand_key")}
    decisions_of = {key: part for (key,), part in data.decisions.group_by("hand_key")}
    totals = dict.fromkeys(players, 0)
    money = dict.fromkeys(players, 0.0)
    head = "".join(f'<th><button data-first="down">{e(p)}</button></th>' for p in players)
    list_rows: list[str] = []
    sections: list[str] = []
    count = hands.height
    rulesets = sorted(set(listed["ruleset"].to_list()))
    for index, hand in enumerate(hands.iter_rows(named=True)):
        key = hand["hand_key"]
        lines = per_hand.get(key, listed.clear())
        by_player = {r["player"]: r for r in lines.iter_rows(named=True)}
        mine = [by_player[p] for p in players if p in by_player] if follow else \
            list(by_player.values())
        for row in lines.iter_rows(named=True):
            if row["player"] in totals:
                totals[row["player"]] += int(row["points"])
                money[row["player"]] += float(row["money"])
        fouls = sum(bool(r["fouled"]) for r in mine)
        fantasyland = any(r["fantasyland"] or r["fantasyland_entered"] for r in mine)
        reviewed = [r for r in mine if r["ev_loss"] is not None]
        ev_loss = sum(float(r["ev_loss"]) for r in reviewed) if reviewed else None
        mistakes = sum(int(r["mistakes"]) for r in reviewed)
        cells = "".join(
            f'<td data-v="{by_player[p]["points"] if p in by_player else ""}"'
            f'{_points_class(by_player[p]["points"] if p in by_player else None)}>'
            f'{_signed(by_player[p]["points"]) if p in by_player else ""}</td>'
            for p in players)
        text = " ".join([hand["hand_id"], *by_player]).lower()
        bad = ' class="bad"' if mistakes else ""
        list_rows.append(
            f'<tr data-i="{index}" data-fouled="{int(fouls > 0)}" '
            f'data-fantasyland="{int(fantasyland)}" data-mistakes="{int(mistakes > 0)}" '
            f'data-text="{e(text)}"{bad}>'
            f'<td data-v="{index}">{index + 1}</td>'
            f'<td data-v="{e(hand["hand_id"])}"><small>{e(hand["hand_id"])}</small></td>'
            f"{cells}<td data-v=\"{fouls}\">{fouls or ''}</td>"
            f'<td data-v="{int(fantasyland)}">{"FL" if fantasyland else ""}</td>'
            f'<td data-v="{"" if ev_loss is None else round(ev_loss, 4)}">'
            f'{"-" if ev_loss is None else f"{ev_loss:.2f}"}'
            f'{f" ({mistakes})" if mistakes else ""}</td></tr>')
        sections.append(_hand_section(index, count, hand, by_player, seats_of.get(key),
                                      decisions_of.get(key), totals, follow))
    total_row = "".join(f"<td{_points_class(totals[p])}>{_signed(totals[p])}</td>"
                        for p in players)
    stakes = ", ".join(f"{e(p)} {_signed(money[p], 2)}" for p in players)
    title = data.title
    return "".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title><style>{STYLE}{_PAGE_STYLE}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        f'<p class="meta">{count} hands &middot; points under {e(", ".join(rulesets))}'
        f"{f' &middot; following {e(follow)}' if follow else ''} &middot; money: {stakes}"
        "</p>",
        '<div class="filters"><input type="search" id="find" placeholder="hand or player"'
        ' aria-label="find a hand or player"> '
        '<label><input type="checkbox" name="fouled"> fouls</label>'
        '<label><input type="checkbox" name="fantasyland"> fantasyland</label>'
        '<label><input type="checkbox" name="mistakes"> mistakes</label>'
        '<span id="count"></span></div>',
        '<table class="hands-list"><thead><tr><th><button>#</button></th>'
        f"<th><button>hand</button></th>{head}"
        '<th><button data-first="down">fouls</button></th>'
        '<th><button data-first="down">FL</button></th>'
        '<th><button data-first="down">EV loss</button></th></tr></thead><tbody>',
        *list_rows,
        f"</tbody><tfoot><tr><td></td><td>total</td>{total_row}<td></td><td></td><td></td>"
        "</tr></tfoot></table>",
        "<p><small>Points per hand under the ruleset shown; fouls: seats that fouled; FL: "
        "fantasyland played or entered; EV loss: the reviewed seats' loss on the hand (its "
        "mistakes in brackets; - not reviewed: ofcstats review). Tap a column to sort, a "
        "hand to replay it.</small></p>",
        '<div class="nav"><button id="prev" title="previous (left arrow, k)">&larr; prev'
        '</button><button id="next" title="next (right arrow, j)">next &rarr;</button>'
        '<span id="where"></span></div>',
        *sections,
        f"<p><small>{EV_NOTE}</small></p>",
        f"<script>{_SCRIPT}</script></body></html>\n"])


def _hand_section(index: int, count: int, hand: dict[str, Any],
                  by_player: dict[str, dict[str, Any]], seats: pl.DataFrame | None,
                  decisions: pl.DataFrame | None, totals: dict[str, int],
                  follow: str | None) -> str:
    """One hand: its heading, each seat (the one followed first) on its streets, and the
    running totals after it."""
    e = html_text
    shown = ", ".join(f"{e(p)} {_signed(t)}" for p, t in totals.items())
    return "".join([
        f'<section class="hand" id="hand-{index + 1}">',
        f"<h2>Hand {index + 1} of {count}: {e(hand['hand_id'])}</h2>",
        f'<p class="meta">{e(hand["variant"])} &middot; {e(str(hand["played_at"] or ""))}</p>',
        seats_html(by_player, seats, decisions, follow),
        f'<p class="totals">After this hand: {shown}</p></section>'])


def seats_html(by_player: dict[str, dict[str, Any]], seats: pl.DataFrame | None,
               decisions: pl.DataFrame | None, follow: str | None = None,
               heading: str = "h3") -> str:
    """A hand's seats (the one followed first, the others then on their final boards),
    each with its line of the hand list (``by_player``: points, fouls, EV loss)."""
    e = html_text
    verdicts = by_seat(decisions) if decisions is not None else {}
    parts = []
    rows = [] if seats is None else list(seats.iter_rows(named=True))
    if follow is not None:
        rows.sort(key=lambda s: s["player"] != follow)
    for seat in rows:
        line = by_player.get(seat["player"])
        result = ""
        if line is not None:
            flags = [word for word, on in (("fouled", line["fouled"]),
                                           ("enters fantasyland", line["fantasyland_entered"]))
                     if on]
            loss = "" if line["ev_loss"] is None else \
                f", EV loss {line['ev_loss']:.2f}" + (
                    f" ({line['mistakes']} mistakes)" if line["mistakes"] else "")
            result = (f": {_signed(line['points'])} points"
                      f"{''.join(f', {w}' for w in flags)}{loss}")
        # Another seat when following one: its finished board, no streets.
        drawn = {**seat, "streets": None} if follow not in (None, seat["player"]) else seat
        parts.append(seat_html(drawn, verdicts.get(int(seat["seat"]), {}), heading=heading,
                               result=e(result)))
    return "".join(parts)


def hand_replays(data: Replayed, heading: str = "h4") -> dict[str, str]:
    """Each hand of :func:`ofcstats.analysis.replayed`'s as its seats are drawn on the
    page, by hand id, to embed elsewhere (the report's costliest hands); style them with
    :data:`ofcstats.review.replay.CARD_STYLE`."""
    listed = data.listed
    seats_of = {key: part for (key,), part in data.seats.group_by("hand_key")}
    decisions_of = {key: part for (key,), part in data.decisions.group_by("hand_key")}
    found = {}
    for hand in data.hands.iter_rows(named=True):
        key = hand["hand_key"]
        lines = listed.filter(pl.col("hand_key") == key)
        found[str(hand["hand_id"])] = seats_html(
            {r["player"]: r for r in lines.iter_rows(named=True)}, seats_of.get(key),
            decisions_of.get(key), heading=heading)
    return found
