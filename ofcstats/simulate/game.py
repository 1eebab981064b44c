"""Game flow: deals, turns, timeouts, fantasyland and the button, for many tables at once.

A *series* is one table's run of games; a game lasts one orbit of the button (docs/rules.md
§5), lengthened by one hand for every fantasyland (the button does not move on a
fantasyland hand, §6), so a game never ends with a fantasyland still owed; a timeout
ends it early. :func:`ofcstats.session.game_ends` says where a game ends, here as in
scoring. The series
of a block are played in lockstep: hand by hand, street by street, seat by seat, each
decision made for every table at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ofcstats.rows import BOTTOM, MIDDLE, TOP
from ofcstats.rules import board
from ofcstats.rules.model import Ruleset
from ofcstats.session import game_ends
from ofcstats.simulate.bots import Bot, place_all
from ofcstats.simulate.scoring import RulesetArrays, board_strengths, fouled, qualifies
from ofcstats.simulate.state import Boards, Turn
from ofcstats.simulate.tables import DISCARD
from ofcstats.variants import Variant

_Deal = Callable[[npt.NDArray[np.intp], int], npt.NDArray[np.uint8]]
"""Deal ``count`` cards to each of these tables from their decks."""
_Log = Callable[[npt.NDArray[np.intp], int, int, npt.NDArray[np.uint8], npt.NDArray[np.int8]],
                None]
"""Log a seat's cards and where they went at these tables, on a street (0: set at once)."""
_Act = tuple[int, npt.NDArray[np.intp], npt.NDArray[np.uint8], npt.NDArray[np.int8]]
"""A seat's turn at some tables: (seat, tables, cards, rows)."""


class StepLog:
    """The placements of one round of hands, in the order they were made: each entry is
    one seat's street on a batch of tables (``tables``, ``seat``, ``slot``, ``cards``,
    ``rows``). ``slot`` places the street in a seat's hand: 0 for a set of all cards at
    once (fantasyland, 13-card Chinese poker), then 1 + the street's number."""

    def __init__(self, tables: int):
        self.entries: list[tuple[npt.NDArray[np.intp], int, int, npt.NDArray[np.uint8],
                                 npt.NDArray[np.int8]]] = []
        self.tables = tables
        self._lists: dict[int, list[list[tuple[list[int], list[int]]]]] | None = None
        self.text: dict[int, npt.NDArray[np.int32]] = {}  # the writer's, per seat

    def add(self, tables: npt.NDArray[np.intp], seat: int, slot: int,
            cards: npt.NDArray[np.uint8], rows: npt.NDArray[np.int8]) -> None:
        """Record one seat's placements on the listed tables."""
        self.entries.append((tables, seat, slot, cards, rows))

    def streets(self, table: int, seat: int) -> list[tuple[list[int], list[int]]]:
        """(dealt cards, row of each) per street of one seat at one table."""
        if self._lists is None:
            # Once per round: per seat, per table, the streets in the order played.
            self._lists = {}
            for tables, at, _, cards, rows in self.entries:
                per_table = self._lists.get(at)
                if per_table is None:
                    per_table = self._lists[at] = [[] for _ in range(self.tables)]
                for t, street in zip(tables.tolist(), zip(cards.tolist(), rows.tolist(),
                                                          strict=True), strict=True):
                    per_table[t].append(street)
        return list(self._lists[seat][table]) if seat in self._lists else []


@dataclass
class HandRecord:
    """A played hand, before it is numbered and scored."""

    game: int  # game number within its series
    button: int  # seat index, 0-based
    fantasyland: npt.NDArray[np.bool_]  # (S,)
    timed_out: npt.NDArray[np.bool_]  # (S,)
    boards: npt.NDArray[np.uint8]  # (S, 13) final boards
    log: StepLog
    row: int  # this hand's table in the log
    first: bool = False  # the first hand of its game


@dataclass
class _Series:
    """Per-table game state of a block, as arrays over tables."""

    button: npt.NDArray[np.int64]
    orbit: npt.NDArray[np.int64]  # how many buttons of the orbit came before this one
    games: npt.NDArray[np.int64]  # games finished
    fl_cards: npt.NDArray[np.int64]  # (T, S) cards in fantasyland next hand, 0 for none
    fl_streak: npt.NDArray[np.int64]  # (T, S) fantasyland hands in a row, next one counted
    fl_repeats: npt.NDArray[np.int64]  # (T, S) repeats played in the game, next one counted
    timed: npt.NDArray[np.bool_]  # (T,) someone timed out in this game


def auto_rows(filled: npt.NDArray[np.int8], count: int, discards: int) -> npt.NDArray[np.int8]:
    """A timed-out seat's cards, bottom row first, then middle, then top (docs/rules.md §5);
    the last ``discards`` cards of the street are thrown away. ``filled`` is (m, 3)."""
    counts = filled.astype(np.int64).copy()
    out = np.full((filled.shape[0], count), DISCARD, dtype=np.int8)
    for j in range(count - discards):
        row = np.where(counts[:, BOTTOM] < 5, BOTTOM, np.where(counts[:, MIDDLE] < 5, MIDDLE,
                                                                 TOP))
        out[:, j] = row
        counts[np.arange(len(row)), row] += 1
    return out


class Dealer:
    """Plays blocks of series: one generator for the cards and timeouts, one per bot."""

    def __init__(self, variant: Variant, ruleset: Ruleset, arrays: RulesetArrays,
                 bots: list[Bot], rng: np.random.Generator, timeout_rate: float = 0.0):
        self.variant = variant
        self.ruleset = ruleset
        self.arrays = arrays
        self.bots = bots
        self.rng = rng
        self.timeout_rate = timeout_rate
        self.seats = len(bots)
        self.repeat_limit = ruleset.fantasyland.repeat_limit
        self.per_game = ruleset.fantasyland.repeat_scope == "game"
        self.entry_steps = ruleset.fantasyland.entry_card_steps(variant)
        self._turn_taken: Callable[[float], None] | None = None  # (set by play)

    def play(self, tables: int, games: int,
             progress: Callable[[int], None] | None = None) -> list[list[HandRecord]]:
        """``games`` games at each of ``tables`` tables; hands per table, in order.

        ``progress`` gets the count of hands played so far after each round of hands, and
        within a round after each seat's turn on each street, in proportion (rounded
        down): a slow bot's round moves the count as its turns are taken.
        """
        s = self.seats
        state = _Series(button=np.full(tables, s - 1), orbit=np.zeros(tables, np.int64),
                        games=np.zeros(tables, np.int64),
                        fl_cards=np.zeros((tables, s), np.int64),
                        fl_streak=np.zeros((tables, s), np.int64),
                        fl_repeats=np.zeros((tables, s), np.int64),
                        timed=np.zeros(tables, dtype=bool))
        records: list[list[HandRecord]] = [[] for _ in range(tables)]
        played = 0
        while True:
            idx = np.flatnonzero(state.games < games)
            if not idx.size:
                return records
            if progress is not None:
                def turn_taken(share: float, base: int = played, size: int = idx.size) -> None:
                    progress(base + int(size * share))
                self._turn_taken = turn_taken
            hands, next_fl, timed = self._hand(idx, state)
            for i, t in enumerate(idx):
                hands[i].game = int(state.games[t])
                hands[i].first = not records[t] or records[t][-1].game != hands[i].game
                records[t].append(hands[i])
            self._advance(idx, state, next_fl, timed)
            played += idx.size
            if progress is not None:
                progress(played)

    def _may_stay(self, state: _Series, idx: npt.NDArray[np.intp]) -> npt.NDArray[np.bool_]:
        """(tables, seats): whether a seat in fantasyland may stay after this hand, by the
        repeat limit counted per game or in a row (as :func:`session.apply_repeat_limits`)."""
        if self.repeat_limit is None:
            return np.ones((idx.size, self.seats), dtype=bool)
        if self.per_game:
            return state.fl_repeats[idx] < self.repeat_limit
        return state.fl_streak[idx] <= self.repeat_limit

    def _advance(self, idx: npt.NDArray[np.intp], state: _Series,
                 next_fl: npt.NDArray[np.int64], timed: npt.NDArray[np.bool_]) -> None:
        """Button, orbit and games after a hand (docs/rules.md §5, §6)."""
        in_fl = state.fl_cards[idx] > 0
        entering = next_fl > 0
        state.fl_streak[idx] = np.where(entering, np.where(in_fl, state.fl_streak[idx] + 1, 1),
                                        0)
        state.fl_repeats[idx] += in_fl & entering
        state.fl_cards[idx] = next_fl
        owed = entering.any(axis=1)
        state.timed[idx] |= timed
        ends = game_ends(state.orbit[idx] == self.seats - 1, state.timed[idx], owed)
        moves = ~owed & ~ends
        state.fl_repeats[idx[ends]] = 0
        state.timed[idx[ends]] = False
        state.button[idx] = np.where(moves, (state.button[idx] + 1) % self.seats,
                                     np.where(ends, self.seats - 1, state.button[idx]))
        state.orbit[idx] = np.where(moves, state.orbit[idx] + 1,
                                    np.where(ends, 0, state.orbit[idx]))
        state.games[idx] += ends

    def _timeouts(self, m: int, streets: int) -> npt.NDArray[np.int64]:
        """The street at which each seat runs out of time (``streets``: never)."""
        late = self.rng.random((m, self.seats)) < self.timeout_rate
        when = self.rng.integers(0, streets, size=(m, self.seats))
        return np.where(late, when, streets)

    def _hand(self, idx: npt.NDArray[np.intp],
              state: _Series
              ) -> tuple[list[HandRecord], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        m, s = idx.size, self.seats
        allowed = self._may_stay(state, idx)
        deck = np.argsort(self.rng.random((m, 52)), axis=1).astype(np.uint8)
        cursor = np.zeros(m, dtype=np.int64)
        boards = Boards.empty(m, s)
        fl_cards = state.fl_cards[idx]
        in_fl = fl_cards > 0
        streets = self.variant.streets
        timeout = self._timeouts(m, len(streets))
        seen = np.zeros((m, s, 52), dtype=bool)
        visible = np.zeros((m, 53), dtype=bool)  # column 52: discards, never read
        step = StepLog(m)
        log = step.add

        def deal(tables: npt.NDArray[np.intp], count: int) -> npt.NDArray[np.uint8]:
            cards = deck[tables[:, None], cursor[tables][:, None] + np.arange(count)]
            cursor[tables] += count
            return cards

        self._set_fantasyland(deal, log, boards, fl_cards, allowed, timeout)
        if self.variant is Variant.CHINESE_13:
            self._set_thirteen(deal, log, boards, seen)
        else:
            self._streets(idx, state, deal, log, boards, in_fl, timeout, seen, visible)
        next_fl = self._next_fantasyland(boards, in_fl, allowed)

        timed_out = timeout < len(streets)
        hands = [HandRecord(game=0, button=int(state.button[t]), fantasyland=in_fl[i],
                            timed_out=timed_out[i], boards=boards.cards[i], log=step, row=i)
                 for i, t in enumerate(idx)]
        return hands, next_fl, np.asarray(timed_out.any(axis=1), dtype=bool)

    def _set_fantasyland(self, deal: _Deal, log: _Log, boards: Boards,
                         fl_cards: npt.NDArray[np.int64], allowed: npt.NDArray[np.bool_],
                         timeout: npt.NDArray[np.int64]) -> None:
        """Fantasyland seats set all their cards at once, face down, before the others."""
        in_fl = fl_cards > 0
        streets = len(self.variant.streets)
        for seat in range(self.seats):
            for count in np.unique(fl_cards[:, seat][in_fl[:, seat]]):
                tables = np.flatnonzero(fl_cards[:, seat] == count)
                cards = deal(tables, int(count))
                may_stay = allowed[tables, seat]
                actions = self.bots[seat].set_fantasyland(cards, self.arrays, may_stay)
                late = timeout[tables, seat] < streets
                if late.any():
                    actions[late] = auto_rows(boards.filled[tables[late], seat], int(count),
                                              int(count) - 13)
                boards.place(tables, seat, cards, actions)
                log(tables, seat, 0, cards, actions)

    def _set_thirteen(self, deal: _Deal, log: _Log, boards: Boards,
                      seen: npt.NDArray[np.bool_]) -> None:
        """13-card Chinese poker: each seat in turn is dealt 13 cards and sets them."""
        s = self.seats
        rows_all = np.arange(seen.shape[0])
        for seat in range(s):
            cards = deal(rows_all, 13)
            seen[rows_all[:, None], seat, cards] = True
            actions = self.bots[seat].set_thirteen(cards, self.arrays, seen[:, seat], s - 1)
            boards.place(rows_all, seat, cards, actions)
            log(rows_all, seat, 0, cards, actions)

    def _next_fantasyland(self, boards: Boards, in_fl: npt.NDArray[np.bool_],
                          allowed: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """(tables, seats): the cards each seat is dealt in fantasyland next hand, 0 for
        none (docs/rules.md §6)."""
        strengths = board_strengths(boards.cards)
        # Where misses are not counted a misset hand plays as set, into fantasyland too.
        foul = fouled(strengths) if self.ruleset.misset != "not-counted" \
            else np.zeros(in_fl.shape, dtype=bool)
        qualified = qualifies(self.arrays, strengths, foul, in_fl, allowed)
        base = self.variant.fantasyland_base_cards
        entry_cards = board.entry_cards(strengths[..., TOP], self.entry_steps, base, np.int64)
        return np.where(qualified, np.where(in_fl, base, entry_cards), 0)

    def _streets(self, idx: npt.NDArray[np.intp], state: _Series,
                 deal: Callable[[npt.NDArray[np.intp], int], npt.NDArray[np.uint8]],
                 log: Callable[[npt.NDArray[np.intp], int, int, npt.NDArray[np.uint8],
                                npt.NDArray[np.int8]], None],
                 boards: Boards, in_fl: npt.NDArray[np.bool_], timeout: npt.NDArray[np.int64],
                 seen: npt.NDArray[np.bool_], visible: npt.NDArray[np.bool_]) -> None:
        """The streets of the seats not in fantasyland, in turn from the button's left."""
        s = self.seats
        streets = self.variant.streets
        remaining = np.cumsum([st.dealt for st in streets][::-1])[::-1]
        playing = ~in_fl
        button = state.button[idx]
        for number, street in enumerate(streets):
            future = int(remaining[number + 1]) if number + 1 < len(streets) else 0
            dealt = self._deal_street(deal, street.dealt, playing, seen)
            for position in range(s):
                acting = (button + 1 + position) % s
                # The seats acting in one position play disjoint tables, so every bot
                # decides before any card is placed (the heuristic ones together).
                acts = []
                asked: list[tuple[Bot, int, npt.NDArray[np.intp], npt.NDArray[np.int8],
                                  npt.NDArray[np.bool_]]] = []
                for seat in range(s):
                    tables = np.flatnonzero((acting == seat) & playing[:, seat])
                    if not tables.size:
                        continue
                    cards = dealt[seat][tables]
                    late = timeout[tables, seat] <= number
                    actions = np.empty(cards.shape, dtype=np.int8)
                    if late.any():
                        actions[late] = auto_rows(boards.filled[tables[late], seat],
                                                  street.dealt, street.discard)
                    if (~late).any():
                        asked.append((self.bots[seat], seat, tables[~late], actions, ~late))
                    acts.append((seat, tables, cards, actions))
                turns = self._turns([(seat, tables) for _, seat, tables, *_ in asked],
                                    [bot.needs_opponents for bot, *_ in asked], number, dealt,
                                    street.discard, future, boards, seen, visible, in_fl)
                answers = place_all([bot for bot, *_ in asked], turns)
                for (*_, actions, on_time), rows in zip(asked, answers, strict=True):
                    actions[on_time] = rows
                if acts:
                    self._place(acts, number, boards, visible, log)
                if self._turn_taken is not None:
                    self._turn_taken((number * s + position + 1) / (len(streets) * s))

    def _deal_street(self, deal: _Deal, count: int, playing: npt.NDArray[np.bool_],
                     seen: npt.NDArray[np.bool_]) -> dict[int, npt.NDArray[np.uint8]]:
        """A street's cards for each seat playing it, by seat: (tables, count), zeros at
        the tables where the seat does not play the street."""
        dealt = {}
        for seat in range(self.seats):
            tables = np.flatnonzero(playing[:, seat])
            cards = deal(tables, count)
            full = np.zeros((playing.shape[0], count), dtype=np.uint8)
            full[tables] = cards
            dealt[seat] = full
            seen[tables[:, None], seat, cards] = True
        return dealt

    @staticmethod
    def _place(acts: list[_Act], number: int, boards: Boards, visible: npt.NDArray[np.bool_],
               log: _Log) -> None:
        """One placement for the seats acting in one position (their tables differ): the
        cards go on the boards, face up for all, and into the log."""
        tables = np.concatenate([t for _, t, _, _ in acts])
        cards = np.concatenate([c for _, _, c, _ in acts])
        actions = np.concatenate([a for _, _, _, a in acts])
        boards.place(tables, np.repeat([seat for seat, *_ in acts],
                                       [t.size for _, t, _, _ in acts]),
                     cards, actions)
        placed = np.where(actions != DISCARD, cards, 52)
        visible[tables[:, None], placed] = True
        for seat, seat_tables, seat_cards, seat_actions in acts:
            log(seat_tables, seat, number + 1, seat_cards, seat_actions)

    def _turns(self, asked: list[tuple[int, npt.NDArray[np.intp]]], opponents: list[bool],
               number: int, dealt: dict[int, npt.NDArray[np.uint8]], discards: int,
               future: int, boards: Boards, seen: npt.NDArray[np.bool_],
               visible: npt.NDArray[np.bool_], in_fl: npt.NDArray[np.bool_]) -> list[Turn]:
        """The turns of the seats of one position (their tables differ). The seats whose
        bots do not look at the opponents share one turn, each taking its part."""
        plain = [i for i, needs in enumerate(opponents) if not needs]
        out: list[Turn | None] = [None] * len(asked)
        if plain:
            tables = np.concatenate([asked[i][1] for i in plain])
            seats = np.repeat([asked[i][0] for i in plain], [asked[i][1].size for i in plain])
            joint = self._turn(tables, seats, number,
                               np.concatenate([dealt[asked[i][0]][asked[i][1]] for i in plain]),
                               discards, future, boards, seen, visible, in_fl, False)
            start = 0
            for i in plain:
                out[i] = joint.part(start, start + asked[i][1].size, asked[i][0])
                start += asked[i][1].size
        for i, (seat, tables) in enumerate(asked):
            if out[i] is None:
                out[i] = self._turn(tables, seat, number, dealt[seat][tables], discards, future,
                                    boards, seen, visible, in_fl, True)
        return [turn for turn in out if turn is not None]

    def _turn(self, tables: npt.NDArray[np.intp], seat: int | npt.NDArray[np.intp], number: int,
              cards: npt.NDArray[np.uint8], discards: int, future: int, boards: Boards,
              seen: npt.NDArray[np.bool_], visible: npt.NDArray[np.bool_],
              in_fl: npt.NDArray[np.bool_], opponents: bool) -> Turn:
        """The view of ``seat`` (or, without the opponents, of several seats: one a table)
        on the listed tables."""
        if opponents:
            others = [o for o in range(self.seats) if o != seat]
            hidden = in_fl[tables][:, others]
            opp_cards = boards.cards[tables][:, others]
            opp_cards[hidden] = 52
            opp_filled = boards.filled[tables][:, others]
            opp_filled[hidden] = 0
            opp_keys = boards.keys[tables][:, others]
            opp_keys[hidden] = 0
            # Cards each opponent will still receive: by how many rows it has filled.
            placed = opp_filled.sum(axis=2).astype(np.int64)
            opp_future = np.where(hidden, 13, self._future_cards(placed))
        else:  # bots that do not look at the opponents' boards get empty ones
            m = tables.size
            hidden = np.zeros((m, 0), dtype=bool)
            opp_cards = np.zeros((m, 0, 13), dtype=np.uint8)
            opp_filled = np.zeros((m, 0, 3), dtype=np.int8)
            opp_keys = np.zeros((m, 0, 3), dtype=np.int64)
            opp_future = np.zeros((m, 0), dtype=np.int64)
        return Turn(
            variant=self.variant, arrays=self.arrays, seat=seat if isinstance(seat, int) else -1,
            street=number, cards=cards,
            discards=discards, board=boards.cards[tables, seat], keys=boards.keys[tables, seat],
            filled=boards.filled[tables, seat], future=np.full(tables.size, future),
            seen=seen[tables, seat] | visible[tables, :52],
            opponents=opp_cards, opponent_filled=opp_filled, opponent_keys=opp_keys,
            opponent_hidden=hidden, opponent_future=opp_future,
        )

    def _future_cards(self, placed: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Cards an opponent with ``placed`` cards on its board will still be dealt."""
        kept = np.cumsum([st.dealt - st.discard for st in self.variant.streets])
        dealt = np.cumsum([st.dealt for st in self.variant.streets])
        total = dealt[-1]
        done = np.searchsorted(kept, placed, side="right")  # streets fully played
        before = np.concatenate([[0], dealt])[np.minimum(done, len(dealt))]
        return (total - before).astype(np.int64)
