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
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import numpy as np
import polars as pl

from ofcstats.errors import OfcstatsError
from ofcstats.review.core import (
    DEFAULT_ROLLOUTS,
    DEFAULT_SCREEN,
    DEFAULT_SEED,
    FANTASYLAND_VALUE,
    Position,
    Verdict,
    review,
)
from ofcstats.rules import load_ruleset
from ofcstats.rules.model import Ruleset
from ofcstats.store import Store
from ofcstats.store import decisions as stored
from ofcstats.store.decisions import Selection
from ofcstats.variants import Variant

DEFAULT_RULESET = "american"
_HANDS_AT_ONCE = 400  # hands per transaction
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
    screen: int | None = DEFAULT_SCREEN  # None: every candidate on every rollout

    def reviewed(self, reviewed_as: str) -> stored.Reviewed:
        """The settings its rows of ``decisions`` are kept under."""
        return stored.Reviewed(self.rollouts, self.seed, self.fantasyland_value,
                               self.screen or 0, reviewed_as)


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


def positions(frame: pl.DataFrame, seats: set[tuple[int, int]] | None,
              asked: str | None) -> list[Position]:
    """Every logged street of the seats of ``frame`` (one row per seat, every seat of a
    hand present, placements as lists) listed in ``seats`` as (hand key, seat) (None: all).

    13-card Chinese poker hands and seats logged without their streets have no
    decisions to review, and a seat that timed out had its placements made for it (the
    log does not say from which street on): all are left out (see :func:`skipped`).
    """
    out: list[Position] = []
    for (hand_key,), hand in frame.group_by("hand_key", maintain_order=True):
        variant = Variant(hand["variant"][0])
        if not variant.has_fantasyland:
            continue
        ruleset = resolve_ruleset(hand["ruleset"][0], variant, asked)
        boards = np.array([[*t, *m, *b] for t, m, b in zip(
            hand["top"], hand["middle"], hand["bottom"], strict=True)], dtype=np.uint8)
        for i, row in enumerate(hand.iter_rows(named=True)):
            if row["streets"] is None or row["timed_out"] or (
                    seats is not None and (hand_key, row["seat"]) not in seats):
                continue
            opponents = np.delete(boards, i, axis=0)
            streets = np.array(row["streets"], dtype=np.int64)
            cards = np.array(row["cards"], dtype=np.uint8)
            rows = (np.array(row["rows"], dtype=np.int8) - 1).astype(np.int8)
            numbers = list(dict.fromkeys(streets.tolist()))
            seen = np.zeros(52, dtype=bool)
            for number, street in enumerate(numbers):
                now = streets == street
                before = streets < street
                seen[cards[now]] = True
                placed = before & (rows < 3)
                index = -1 if row["fantasyland"] else number
                if index >= len(variant.streets):
                    raise ReviewError(f"hand {row['hand_id']} seat {row['seat']}: more "
                                      f"streets than {variant.value} deals")
                out.append(Position(
                    hand_key=int(hand_key), hand_id=row["hand_id"], seat=int(row["seat"]),
                    player=row["player"], street=int(street), index=index, variant=variant,
                    ruleset=ruleset, dealt=cards[now], chosen=rows[now], board=cards[placed],
                    board_rows=rows[placed], seen=seen.copy(), opponents=opponents))
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
    for batch, rows in _reviewed(store, selection, settings, progress, jobs):
        stored.replace_decisions(store, rows)
        hands, decisions = hands + batch, decisions + rows.height
    return Summary(hands=hands, decisions=decisions)


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
    if settings.rollouts < 1:
        raise ReviewError(f"--rollouts must be at least 1, not {settings.rollouts}")
    name = reviewed_as(settings)
    todo = pending_seats(store, selection, settings, name)
    pending = {(int(k), int(seat)) for k, seat, _ in todo}
    keys = sorted({k for k, _ in pending})
    jobs = jobs or auto_jobs(len(keys))
    done = 0
    if progress is not None:
        progress(0, len(keys))
    with _pool(jobs if len(keys) > 1 else 1) as pool:
        for start in range(0, len(keys), _HANDS_AT_ONCE):
            batch = keys[start:start + _HANDS_AT_ONCE]
            found = positions(stored.review_seats(store, batch), pending, settings.ruleset)
            verdicts = _review(found, settings, pool, jobs)
            yield len(batch), _rows(verdicts, settings, name)
            done += len(batch)
            if progress is not None:
                progress(done, len(keys))


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
    options = (settings.rollouts, settings.seed, settings.fantasyland_value, settings.screen)
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


def _review_part(found: list[Position], options: tuple[int, int, float, int | None]
                 ) -> list[Verdict]:
    """:func:`review` with the settings' numbers (rollouts, seed, fantasyland value,
    screen)."""
    rollouts, seed, value, screen = options
    return review(found, rollouts=rollouts, seed=seed, fantasyland_value=value, screen=screen)


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
        "se_chosen": pl.Series([v.se_chosen for v in verdicts], dtype=pl.Float64),
        "candidates": pl.Series([v.candidates for v in verdicts], dtype=pl.Int32),
        "mistake": pl.Series([v.mistake for v in verdicts], dtype=pl.String),
        "exact": pl.Series([v.rollouts == 0 for v in verdicts], dtype=pl.Boolean),
        "rollouts": pl.Series([settings.rollouts] * len(p), dtype=pl.Int32),
        "screen": pl.Series([settings.screen or 0] * len(p), dtype=pl.Int32),
        "seed": pl.Series([settings.seed] * len(p), dtype=pl.Int64),
        "fantasyland_value": pl.Series([settings.fantasyland_value] * len(p),
                                       dtype=pl.Float64),
    })
