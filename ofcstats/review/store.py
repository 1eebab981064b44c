"""Reviewing stored hands: positions from the store, verdicts into ``decisions``.

:func:`run` reviews the seats of the chosen hands that have no decisions yet under the
same settings (ruleset, rollouts, seed, fantasyland value), a batch of hands at a time,
each batch in its own transaction: an interrupted review resumes where it stopped, and
the same seed gives the same numbers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt
import polars as pl

from ofcstats.errors import OfcstatsError
from ofcstats.review.core import (
    DEFAULT_OPPONENTS,
    DEFAULT_ROLLOUTS,
    DEFAULT_SCREEN,
    DEFAULT_SEED,
    FANTASYLAND_VALUE,
    METHOD,
    SE_MULTIPLE,
    Plan,
    Position,
    Verdict,
    review,
)
from ofcstats.review.situations import situations
from ofcstats.rules import load_ruleset
from ofcstats.rules.model import Ruleset
from ofcstats.store import Store
from ofcstats.store import decisions as stored
from ofcstats.store.connect import kept_on_interrupt
from ofcstats.store.decisions import Selection
from ofcstats.variants import Variant

DEFAULT_RULESET = "american"
_HANDS_AT_ONCE = 400  # hands per transaction at the default rollouts (fewer past them)
_HANDS_FOR_JOBS = 100  # fewer hands are reviewed in one process by default
_MOST_JOBS = 2


class ReviewError(OfcstatsError, ValueError):
    """A review that cannot be run as asked; the message says what to change."""


@dataclass(frozen=True)
class Settings:
    """What a review's numbers depend on besides the hands."""

    ruleset: str | None = None  # None: each hand's own ruleset where it fits the variant
    rollouts: int = DEFAULT_ROLLOUTS
    seed: int = DEFAULT_SEED
    fantasyland_value: float = FANTASYLAND_VALUE
    screen: int = DEFAULT_SCREEN  # 0: every candidate on every selection rollout
    opponents: str = DEFAULT_OPPONENTS

    def reviewed(self, reviewed_as: str) -> stored.Reviewed:
        """The settings its rows of ``decisions`` are kept under."""
        return stored.Reviewed(self.rollouts, self.seed, self.fantasyland_value,
                               self.screen, reviewed_as, self.opponents, METHOD)

    def plan(self) -> Plan:
        """The numbers the valuing needs (checked: a :class:`ReviewError` says what to
        change)."""
        try:
            return Plan(rollouts=self.rollouts, seed=self.seed, screen=self.screen,
                        opponents=self.opponents, fantasyland_value=self.fantasyland_value)
        except ValueError as error:
            raise ReviewError(f"--{error}") from None

    def as_dict(self, reviewed_as: str) -> dict[str, object]:
        """The settings as JSON output shows them."""
        return {"opponents": self.opponents, "rollouts": self.rollouts, "seed": self.seed,
                "screen": self.screen, "ruleset": reviewed_as or "each hand's own",
                "fantasyland_value": self.fantasyland_value, "method": METHOD,
                "mistake_above_se": SE_MULTIPLE}


@dataclass(frozen=True)
class Summary:
    """What :func:`run` did."""

    hands: int
    decisions: int


@cache
def _ruleset(source: str) -> Ruleset:
    return load_ruleset(source)


def resolve_ruleset(played: str | None, variant: Variant, asked: str | None) -> Ruleset:
    """The ruleset a hand is reviewed under: the one asked for, else the one it was
    played under when that ruleset is played under the hand's variant, else american."""
    if asked is not None:
        return _ruleset(asked)
    if played:
        try:
            ruleset = _ruleset(played)
        except OfcstatsError:
            ruleset = None
        if ruleset is not None and ruleset.plays(variant):
            return ruleset
    return _ruleset(DEFAULT_RULESET)


def acting_order(seats: Sequence[int], button: int | None) -> list[int]:
    """The seats in the order they act on a street: from the button's left (the next
    seat number up, going round), the button last; with no button logged, in seat order.

    >>> acting_order([1, 2, 3], 2), acting_order([1, 2, 3], None), acting_order([2, 5], 9)
    ([3, 1, 2], [1, 2, 3], [2, 5])
    """
    ordered = sorted(seats)
    if button is None:
        return ordered
    return [s for s in ordered if s > button] + [s for s in ordered if s <= button]


@dataclass(frozen=True)
class _Seat:
    """A seat's logged placements: each card's street (its place among the seat's
    streets), card and row (0 top .. 3 discard)."""

    ordinal: npt.NDArray[np.int64]
    cards: npt.NDArray[np.uint8]
    rows: npt.NDArray[np.int8]
    fantasyland: bool
    logged: bool  # its streets are logged


def _seat(row: dict[str, object]) -> _Seat:
    if row["streets"] is None:
        empty = np.zeros(0, dtype=np.int64)
        return _Seat(empty, empty.astype(np.uint8), empty.astype(np.int8),
                     bool(row["fantasyland"]), False)
    streets = np.array(row["streets"], dtype=np.int64)
    _, ordinal = np.unique(streets, return_inverse=True)
    return _Seat(ordinal.ravel(), np.array(row["cards"], dtype=np.uint8),
                 (np.array(row["rows"], dtype=np.int8) - 1).astype(np.int8),
                 bool(row["fantasyland"]), True)


def _seen_of(others: list[_Seat], before: list[bool], ordinal: int, in_fantasyland: bool
             ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int8], npt.NDArray[np.int8],
                        npt.NDArray[np.int8]]:
    """What a seat deciding its street ``ordinal`` (in fantasyland: before anyone acts)
    has seen of the others (``before``: each acts earlier on a street): their cards
    placed face up and rows, the street each plays next, the cards of those in
    fantasyland (face down until the showdown)."""
    count = len(others)
    seen = np.full((count, 13), 52, dtype=np.uint8)
    rows = np.full((count, 13), -1, dtype=np.int8)
    after = np.zeros(count, dtype=np.int8)
    dealt = np.zeros(count, dtype=np.int8)
    for o, other in enumerate(others):
        if other.fantasyland:
            dealt[o] = max(other.cards.size, 13)
            continue
        if in_fantasyland or not other.logged:
            continue
        upto = ordinal + (1 if before[o] else 0)
        shown = (other.ordinal < upto) & (other.rows < 3)
        seen[o, :int(shown.sum())] = other.cards[shown]
        rows[o, :int(shown.sum())] = other.rows[shown]
        after[o] = upto
    return seen, rows, after, dealt


def positions(frame: pl.DataFrame, seats: set[tuple[int, int]] | None,
              asked: str | None) -> list[Position]:
    """Every logged street of the seats of ``frame`` (one row per seat, every seat of a
    hand present, placements as lists) listed in ``seats`` as (hand key, seat) (None: all).

    13-card Chinese poker hands and seats logged without their streets have no
    decisions to review, and a seat that timed out had its placements made for it (the
    log does not say from which street on): all are left out (see :func:`skipped`).
    Each position carries what the player had seen of the others at that moment
    (:func:`acting_order`).
    """
    out: list[Position] = []
    for (hand_key,), hand in frame.group_by("hand_key", maintain_order=True):
        variant = Variant(hand["variant"][0])
        if not variant.has_fantasyland:
            continue
        ruleset = resolve_ruleset(hand["ruleset"][0], variant, asked)
        boards = np.array([[*t, *m, *b] for t, m, b in zip(
            hand["top"], hand["middle"], hand["bottom"], strict=True)], dtype=np.uint8)
        rows_of = list(hand.iter_rows(named=True))
        logged = [_seat(r) for r in rows_of]
        button = hand["button"][0] if "button" in hand.columns else None
        order = acting_order([int(r["seat"]) for r in rows_of],
                             None if button is None else int(button))
        turn = {seat: i for i, seat in enumerate(order)}
        for i, row in enumerate(rows_of):
            if row["streets"] is None or row["timed_out"] or (
                    seats is not None and (hand_key, row["seat"]) not in seats):
                continue
            opponents = np.delete(boards, i, axis=0)
            others = [x for j, x in enumerate(logged) if j != i]
            before = [turn[int(r["seat"])] < turn[int(row["seat"])]
                      for j, r in enumerate(rows_of) if j != i]
            mine = logged[i]
            seen = np.zeros(52, dtype=bool)
            for number in range(int(mine.ordinal.max()) + 1 if mine.ordinal.size else 0):
                now = mine.ordinal == number
                placed = (mine.ordinal < number) & (mine.rows < 3)
                seen[mine.cards[now]] = True
                index = -1 if mine.fantasyland else number
                if index >= len(variant.streets):
                    raise ReviewError(f"hand {row['hand_id']} seat {row['seat']}: more "
                                      f"streets than {variant.value} deals")
                o_seen, o_rows, o_next, o_dealt = _seen_of(others, before, number,
                                                           mine.fantasyland)
                street = int(np.array(row["streets"])[now][0])
                out.append(Position(
                    hand_key=int(hand_key), hand_id=row["hand_id"], seat=int(row["seat"]),
                    player=row["player"], street=street, index=index, variant=variant,
                    ruleset=ruleset, dealt=mine.cards[now], chosen=mine.rows[now],
                    board=mine.cards[placed], board_rows=mine.rows[placed],
                    seen=seen.copy(), opponents=opponents, opponent_seen=o_seen,
                    opponent_rows=o_rows, opponent_next=o_next, opponent_dealt=o_dealt))
    return out


def skipped(store: Store, selection: Selection | None = None) -> dict[str, int]:
    """Seats of the selection a review leaves out, by why: ``timed_out`` (placed for the
    player once its time ran out, from a street the log does not give), ``chinese_13``
    (13 cards set at once: no streets), ``final_rows`` (logged with the final rows only)."""
    row = stored.skipped_seats(store, selection or Selection())
    return dict(zip(("timed_out", "chinese_13", "final_rows"), row, strict=True))


def run(store: Store, selection: Selection | None = None, settings: Settings | None = None,
        progress: Callable[[int, int], None] | None = None, jobs: int = 0) -> Summary:
    """Review the selected seats not yet reviewed under ``settings``, into ``decisions``;
    ``progress(done, total)`` counts hands. ``jobs`` > 1 shares the rollouts among that
    many threads (the numbers do not change: each decision is seeded on its own); 0
    picks :func:`auto_jobs`."""
    hands = decisions = 0
    total = [0]

    def told(done: int, to_review: int) -> None:
        total[0] = to_review
        if progress is not None:
            progress(done, to_review)

    def kept() -> str:
        # Counted again from the store: Ctrl-C may come between a batch's commit and
        # its count here.
        with suppress(Exception):  # (the store may refuse after DuckDB's interrupt)
            asked = settings or Settings()
            left = {key for key, _, _ in pending_seats(store, selection or Selection(), asked,
                                                       reviewed_as(asked))}
            return stopped_text(total[0] - len(left), total[0])
        return stopped_text(hands, total[0])

    with kept_on_interrupt(kept):
        for batch, rows in _reviewed(store, selection, settings, told, jobs):
            stored.replace_decisions(store, rows)
            hands, decisions = hands + batch, decisions + rows.height
    return Summary(hands=hands, decisions=decisions)


def stopped_text(hands: int, total: int) -> str:
    """What a review stopped by Ctrl-C kept, and what to run next.

    >>> print(stopped_text(800, 1_000))  # doctest: +NORMALIZE_WHITESPACE
    800 of 1,000 hands reviewed, kept in the decisions table; run the same ofcstats review
    again to review the rest (what is reviewed is not reviewed again)
    """
    return (f"{hands:,} of {total:,} hands reviewed, kept in the decisions table; run the "
            "same ofcstats review again to review the rest (what is reviewed is not "
            "reviewed again)")


def in_memory(store: Store, selection: Selection | None = None,
              settings: Settings | None = None, jobs: int = 1) -> pl.DataFrame:
    """The rows :func:`run` would write for the selected seats not yet reviewed under
    ``settings``, valued in memory: nothing is written, so the store may be read-only."""
    parts = [rows for _, rows in _reviewed(store, selection, settings, None, jobs)]
    return pl.concat(parts) if parts else _rows([], settings or Settings(), "")


def _reviewed(store: Store, selection: Selection | None, settings: Settings | None,
              progress: Callable[[int, int], None] | None, jobs: int
              ) -> Iterator[tuple[int, pl.DataFrame]]:
    """(hands, rows of ``decisions``) of each batch of the selected seats not yet
    reviewed under ``settings``."""
    selection = selection or Selection()
    settings = settings or Settings()
    if jobs < 0:
        raise ReviewError(f"--jobs must be 0 (automatic) or more, not {jobs}")
    settings.plan()
    name = reviewed_as(settings)
    todo = pending_seats(store, selection, settings, name)
    pending = {(int(k), int(seat)) for k, seat, _ in todo}
    keys = sorted({k for k, _ in pending})
    jobs = jobs or auto_jobs(len(keys))
    done = 0
    if progress is not None:
        progress(0, len(keys))
    at_once = hands_at_once(settings.rollouts)
    with _pool(jobs if len(keys) > 1 else 1) as pool:
        for start in range(0, len(keys), at_once):
            batch = keys[start:start + at_once]
            found = positions(stored.review_seats(store, batch), pending, settings.ruleset)
            verdicts = _review(found, settings, pool, jobs)
            yield len(batch), _rows(verdicts, settings, name)
            done += len(batch)
            if progress is not None:
                progress(done, len(keys))


def hands_at_once(rollouts: int) -> int:
    """Hands reviewed (and written) in one batch: fewer as the rollouts grow past the
    default, so that a batch's rollouts, and the memory they take, stay about the
    default's whatever ``--rollouts`` asks.

    >>> hands_at_once(DEFAULT_ROLLOUTS), hands_at_once(10 * DEFAULT_ROLLOUTS), hands_at_once(10**6)
    (400, 40, 1)
    """
    return max(1, _HANDS_AT_ONCE * DEFAULT_ROLLOUTS // max(rollouts, DEFAULT_ROLLOUTS))


def reviewed_as(settings: Settings) -> str:
    """The name the settings' ruleset is kept under in ``decisions`` (empty: each hand's
    own); a ruleset that cannot be loaded is a :class:`ReviewError`."""
    if settings.ruleset is None:
        return ""
    try:
        return _ruleset(settings.ruleset).name
    except OfcstatsError as error:
        raise ReviewError(str(error)) from None


def auto_jobs(hands: int) -> int:
    """Threads for a review of ``hands`` hands: one per core, at most two, once there
    are enough hands to keep both busy; else one."""
    if hands <= _HANDS_FOR_JOBS:
        return 1
    return max(1, min(_MOST_JOBS, len(os.sched_getaffinity(0))))


def pending_seats(store: Store, selection: Selection, settings: Settings, reviewed_as: str
                  ) -> list[tuple[int, int, str]]:
    """(hand key, seat, session) of the selected seats with streets to review and no
    decisions yet under ``settings``, in hand and seat order."""
    return stored.pending_seats(store, selection, settings.reviewed(reviewed_as))


@contextmanager
def _pool(jobs: int) -> Iterator[ThreadPoolExecutor | None]:
    """Threads sharing the rollouts: the compiled play-outs and numpy's array steps run
    outside the interpreter's lock, so threads use the cores as processes would, but
    start at once and share the lookup tables and the compiled code (a process would
    import, build and compile them again, seconds each)."""
    if jobs == 1:
        yield None
        return
    with ThreadPoolExecutor(jobs, thread_name_prefix="review") as pool:
        yield pool


def _review(found: list[Position], settings: Settings, pool: ThreadPoolExecutor | None,
            jobs: int) -> list[Verdict]:
    """Verdicts of ``found`` in order, shared among the threads of ``pool`` if any."""
    options = settings.plan()
    try:
        if pool is None:
            return _review_part(found, options)
        # Every thread takes every jobs-th position, so each gets some of every street.
        parts = list(pool.map(_review_part, [found[j::jobs] for j in range(jobs)],
                              [options] * jobs))
    except ValueError as error:
        raise ReviewError(str(error)) from None
    out: list[Verdict] = [None] * len(found)  # type: ignore[list-item]
    for j, part in enumerate(parts):
        out[j::jobs] = part
    return out


def _review_part(found: list[Position], plan: Plan) -> list[Verdict]:
    """:func:`review` with the settings' numbers."""
    return review(found, rollouts=plan.rollouts, seed=plan.seed,
                  fantasyland_value=plan.fantasyland_value, screen=plan.screen,
                  opponents=plan.opponents)


def _rows(verdicts: Sequence[Verdict], settings: Settings, reviewed_as: str) -> pl.DataFrame:
    def codes(values: list[np.ndarray]) -> pl.Series:
        return pl.Series([v.astype(int).tolist() for v in values], dtype=pl.List(pl.UInt8))

    p = [v.position for v in verdicts]
    return pl.DataFrame({
        "hand_key": pl.Series([x.hand_key for x in p], dtype=pl.Int64),
        "seat": pl.Series([x.seat for x in p], dtype=pl.UInt8),
        "player": [x.player for x in p],
        "street": pl.Series([x.street for x in p], dtype=pl.UInt8),
        "fantasyland": pl.Series([x.fantasyland for x in p], dtype=pl.Boolean),
        "ruleset": [x.ruleset.name for x in p],
        "reviewed_as": [reviewed_as] * len(p),
        "dealt": codes([x.dealt for x in p]),
        "chosen": codes([x.chosen for x in p]),
        "best": codes([v.best for v in verdicts]),
        "ev_chosen": pl.Series([v.ev_chosen for v in verdicts], dtype=pl.Float64),
        "ev_best": pl.Series([v.ev_best for v in verdicts], dtype=pl.Float64),
        "ev_loss": pl.Series([v.ev_loss for v in verdicts], dtype=pl.Float64),
        "ev_loss_se": pl.Series([v.ev_loss_se for v in verdicts], dtype=pl.Float64),
        "se_chosen": pl.Series([v.se_chosen for v in verdicts], dtype=pl.Float64),
        "candidates": pl.Series([v.candidates for v in verdicts], dtype=pl.Int32),
        "mistake": pl.Series([v.mistake for v in verdicts], dtype=pl.String),
        "exact": pl.Series([v.rollouts == 0 for v in verdicts], dtype=pl.Boolean),
        "rollouts": pl.Series([settings.rollouts] * len(p), dtype=pl.Int32),
        "screen": pl.Series([settings.screen] * len(p), dtype=pl.Int32),
        "opponents": [settings.opponents] * len(p),
        "method": [METHOD] * len(p),
        "situations": pl.Series([situations(x) for x in p], dtype=pl.List(pl.String)),
        "seed": pl.Series([settings.seed] * len(p), dtype=pl.Int64),
        "fantasyland_value": pl.Series([settings.fantasyland_value] * len(p),
                                       dtype=pl.Float64),
    })
