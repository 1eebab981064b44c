"""Re-scoring the store: every hand under every ruleset, kept in DuckDB, incrementally.

``rescore`` reads the seats of whole sessions from the store (Arrow into Polars),
scores them under the selected rulesets in one pass (:func:`ofcstats.score.score`, the
same code as ``ofcstats score``), applies what only the session knows (fantasyland
repeat limits: :mod:`ofcstats.session`) and appends the rows to ``results``.

Incremental by session: ``scored_sessions`` remembers how many hands of each variant
of each session each ruleset has scored, and how many hands of every variant the
session held then. A session that has grown (new hands were ingested, of any variant)
is scored again whole, because a repeat limit depends on the hands before and play
order and games are the whole table's (a session may mix variants; a ruleset scores
those it is played under, in the order and games of them all); a ruleset whose
definition changed (same name, edited TOML) is scored again from scratch. Work goes in
batches of whole sessions, each batch in one transaction, so memory stays bounded and
an interrupted run loses only its current batch.

The SQL is the store's (:mod:`ofcstats.store.results`): this module hands it frames and
takes frames back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import polars as pl

from ofcstats import session
from ofcstats.errors import StoreError
from ofcstats.records import hands_of
from ofcstats.rules.load import load_rulesets, preset_names
from ofcstats.rules.model import Ruleset
from ofcstats.score import available_cores, score_with_showdowns
from ofcstats.showdown import differs, showdown_key
from ofcstats.store import Store
from ofcstats.store import results as stored
from ofcstats.store.connect import kept_on_interrupt
from ofcstats.store.results import ALL_VARIANTS

__all__ = ["ALL_VARIANTS", "BATCH_HANDS", "RescoreSummary", "default_rulesets", "fingerprint",
           "read_sessions", "rescore", "score_sessions", "update"]

BATCH_HANDS = 250_000

Progress = Callable[[int, int], None]
"""Called with (hands scored so far, hands to score)."""


@dataclass
class RescoreSummary:
    """What a rescore did."""

    rulesets: list[str] = field(default_factory=list)
    hands: int = 0  # hands scored (each under every ruleset that needed it)
    rows: int = 0  # rows written to results
    sessions: int = 0  # sessions scored (each once, however many groups of rulesets)
    rebuilt: list[str] = field(default_factory=list)  # rulesets scored again from scratch
    seconds: float = 0.0


def fingerprint(ruleset: Ruleset) -> str:
    """A digest of everything the ruleset says, to notice an edited definition."""
    text = json.dumps(ruleset.to_dict(), sort_keys=True, ensure_ascii=False)
    return hashlib.md5(text.encode("utf-8")).hexdigest()  # a digest, not a secret


def _register(store: Store, rulesets: Sequence[Ruleset], rebuild: bool,
              what_if: Collection[str] = ()
              ) -> tuple[dict[str, int], list[str], dict[str, tuple[str, ...]]]:
    """Ids for the rulesets, and the variants each is scored over; drop the results of
    those rebuilt or redefined.

    A ruleset is scored over the variants it is played under; one named in ``what_if``
    over every variant. A what-if, once asked for, stays until the ruleset is rebuilt.
    """
    ids: dict[str, int] = {}
    redo = []
    scopes: dict[str, tuple[str, ...]] = {}
    for ruleset in rulesets:
        declared = [v.value for v in ruleset.variants]
        row = stored.RulesetRow(
            name=ruleset.name, description=ruleset.description,
            natural_mask=showdown_key(ruleset), fingerprint=fingerprint(ruleset),
            definition=json.dumps(ruleset.to_dict(), ensure_ascii=False), variants=declared,
            asked=ALL_VARIANTS if ruleset.name in what_if else tuple(declared))
        ids[ruleset.name], redone, scopes[ruleset.name] = store.register_ruleset(
            row, rebuild)
        if redone:
            redo.append(ruleset.name)
    return ids, redo, scopes


def _batches(sessions: pl.DataFrame, limit: int) -> list[pl.DataFrame]:
    """Whole sessions, grouped into batches of about ``limit`` hands, the first of about a
    quarter of that: nothing is written until the first batch is scored, so a small one
    sets the writing thread to work sooner."""
    if sessions.is_empty():
        return []
    limit = max(limit, 4)
    first = limit // 4
    done = sessions.get_column("hands").cum_sum() - 1
    group = pl.when(done < first).then(0).otherwise((done - first) // limit + 1)
    return [part for _, part in sessions.with_columns(batch=group).group_by(
        "batch", maintain_order=True)]


def read_sessions(store: Store, session_ids: Sequence[str]
                  ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The seats frame (``hand_id`` holding the integer hand key), in hand and seat order,
    of whole sessions, every variant (play order and games are the whole table's), and
    their hands with what play order and games need (:func:`score_sessions` scores the
    hands of the variants asked for among them)."""
    seats = store.session_seats(session_ids)
    # Sorted here rather than by DuckDB: the join returns them nearly in order, and
    # Polars sorts such a frame in a fraction of the time DuckDB's ORDER BY takes.
    seats = seats.sort("hand_id", "seat").cast({
        "seat": pl.Int8, "top": pl.Array(pl.UInt8, 3), "middle": pl.Array(pl.UInt8, 5),
        "bottom": pl.Array(pl.UInt8, 5)})
    hands = hands_of(seats, ("session_id", "played_at", "n_seats", "variant", "stake")
                     ).with_columns(
        hand_key=pl.col("hand_id"))
    return seats, hands


def score_sessions(seats: pl.DataFrame, hands: pl.DataFrame, rulesets: Sequence[Ruleset],
                   variants: Sequence[str] = ALL_VARIANTS
                   ) -> tuple[pl.DataFrame, dict[int, pl.DataFrame], pl.DataFrame]:
    """Score the hands of ``variants`` of whole sessions (:func:`read_sessions`), apply
    their fantasyland repeat limits (over every hand of the sessions), and keep the
    showdowns to store: every seat for natural mask 0, and for another mask only the
    hands in which it changes something (a seat holds one of its naturals, is fouled
    where misses are not counted, or holds a straight where straights rank in the wheel
    order). Also the hands scored: (hand_key, session_id, variant, session_hands), what
    the progress marks count."""
    counted = hands.with_columns(session_hands=pl.len().over("session_id").cast(pl.Int32))
    scored_hands = counted.filter(pl.col("variant").is_in(list(variants))).select(
        "hand_key", "session_id", "variant", "session_hands")
    own = seats
    if scored_hands.height < hands.height:
        own = seats.filter(pl.col("variant").is_in(list(variants)))
    # One core is left to the thread writing the previous batch: the writes take longer.
    scored = score_with_showdowns(own, rulesets, cores=max(1, available_cores() - 1))
    # Within a batch hands are known by their integer key, in ``hand_id`` too.
    capped = session.limit_repeats(scored.results, seats, hands, rulesets)
    showdowns = {}
    for mask, rows in scored.showdowns.items():
        kept = rows
        if mask:
            changed = rows.get_column("hand_id").filter(
                differs(scored.showdown_bits.to_numpy(), mask)).unique()
            kept = rows.filter(pl.col("hand_id").is_in(changed.implode()))
        showdowns[mask] = kept.rename({"hand_id": "hand_key"})
    return capped.rename({"hand_id": "hand_key"}), showdowns, scored_hands


@dataclass(frozen=True)
class _Work:
    """Rulesets that need the same sessions of the same variants, scored together."""

    rulesets: list[Ruleset]
    ruleset_ids: list[int]
    variants: tuple[str, ...]
    sessions: pl.DataFrame  # session_id, hands, session_hands, was_scored


@dataclass
class Plan:
    """What a rescore has to do: the rulesets' ids, those scored again from scratch, and
    the work, grouped (:class:`_Work`)."""

    ids: dict[str, int]
    rebuilt: list[str]
    work: list[_Work]

    @property
    def groups(self) -> list[tuple[list[Ruleset], tuple[str, ...], pl.DataFrame]]:
        """(rulesets, variants, sessions to score: session_id, hands, session_hands,
        was_scored)"""
        return [(item.rulesets, item.variants, item.sessions) for item in self.work]

    @property
    def total(self) -> int:
        """Hands to score (a hand counted once per group that scores it)."""
        return sum(int(item.sessions.get_column("hands").sum()) for item in self.work)


def plan(store: Store, rulesets: Sequence[Ruleset], *, rebuild: bool = False,
         what_if: Collection[str] = ()) -> Plan:
    """Register the rulesets (dropping the results of those rebuilt or redefined) and
    find the sessions each group of them has still to score."""
    unknown = sorted(set(what_if) - {r.name for r in rulesets})
    if unknown:
        raise StoreError(f"what-if {unknown[0]!r} is not among the rulesets being scored")
    with store.transaction():
        ids, rebuilt, scopes = _register(store, rulesets, rebuild, what_if)
    return Plan(ids, rebuilt, _work(store, rulesets, ids, scopes))


def rescore(store: Store, rulesets: Sequence[Ruleset], *, rebuild: bool = False,
            what_if: Collection[str] = (), progress: Progress | None = None,
            batch_hands: int = BATCH_HANDS) -> RescoreSummary:
    """Score every hand not yet scored under each ruleset, session by session.

    A ruleset scores the hands of the variants it is played under; those named in
    ``what_if`` score every hand, the rows of other variants marked as what-ifs.

    Batches are read and scored on this thread while the previous batch is written on
    another (DuckDB writes without holding Python's lock), so the two overlap; at most
    two batches are in memory.
    """
    started = datetime.now()
    summary = RescoreSummary(rulesets=[r.name for r in rulesets])
    written = [0, -1]  # hands of the batches written (each one transaction), hands to score
    with kept_on_interrupt(lambda: stopped_text(*written)):
        _rescore(store, rulesets, rebuild, what_if, progress, batch_hands, summary, written)
    summary.seconds = (datetime.now() - started).total_seconds()
    return summary


def _rescore(store: Store, rulesets: Sequence[Ruleset], rebuild: bool,
             what_if: Collection[str], progress: Progress | None, batch_hands: int,
             summary: RescoreSummary, written: list[int]) -> None:
    """:func:`rescore`'s work, into ``summary``; ``written``: the hands of the batches
    written so far and the hands to score, as it goes."""
    work = plan(store, rulesets, rebuild=rebuild, what_if=what_if)
    summary.rebuilt = work.rebuilt
    total = written[1] = work.total
    done = 0
    seen: set[str] = set()
    with store.writer() as writer, ThreadPoolExecutor(max_workers=1) as pool:
        pending: Future[None] | None = None
        for item in work.work:
            for sessions in _batches(item.sessions, batch_hands):
                scored, results, showdowns = _scored_batch(store, item, sessions)
                if pending is not None:
                    pending.result()  # the previous batch is written; its errors surface here
                pending = pool.submit(_written, written, int(sessions.get_column("hands").sum()),
                                      writer, item.ruleset_ids, sessions, scored, results,
                                      showdowns)
                done += int(sessions.get_column("hands").sum())
                summary.hands += scored.height
                summary.rows += results.height
                seen.update(sessions.get_column("session_id").to_list())
                summary.sessions = len(seen)
                if progress is not None:
                    progress(done, total)
        if pending is not None:
            pending.result()
    finish(store, work.ids.values())


def _written(count: list[int], hands: int, writer: stored.Writer, ruleset_ids: list[int],
             sessions: pl.DataFrame, scored: pl.DataFrame, results: pl.DataFrame,
             showdowns: dict[int, pl.DataFrame]) -> None:
    """:func:`write_batch`, then ``hands`` added to ``count[0]``: the hands written."""
    write_batch(writer, ruleset_ids, sessions, scored, results, showdowns)
    count[0] += hands


def stopped_text(written: int, total: int) -> str:
    """What a rescore stopped by Ctrl-C kept, and what to run next (``total`` -1: not
    known yet, as nothing was scored).

    >>> print(stopped_text(62_496, 100_200))  # doctest: +NORMALIZE_WHITESPACE
    62,496 of 100,200 hands scored, each batch kept whole; run ofcstats rescore to score
    the rest
    """
    if total < 0:
        return f"nothing scored yet; run {stored.RESCORE} to score the hands"
    return (f"{written:,} of {total:,} hands scored, each batch kept whole; run "
            f"{stored.RESCORE} to score the rest")


def default_rulesets(store: Store, *, as_stored: bool) -> list[Ruleset]:
    """What a rescore scores when no ruleset is named: the built-in presets and every
    other ruleset the store holds (as it was defined when scored).

    ``as_stored``: a preset the store holds is scored as it was defined then too, and the
    presets it does not hold only when played under a variant of its hands (what
    :func:`update` scores: new hands under the store's rulesets, never a ruleset scored
    again from scratch); else the presets as this ofcstats defines them, all of them
    (what ``ofcstats rescore`` scores: an edited preset is scored again)."""
    held = {r.name: r for r in store.scored_rulesets()}
    presets = load_rulesets(preset_names())
    if as_stored:
        variants = set(store.known_values("variant"))
        presets = [held.get(r.name, r) for r in presets
                   if r.name in held or variants & {v.value for v in r.variants}]
    names = {r.name for r in presets}
    return [*presets, *(r for name, r in held.items() if name not in names)]


def update(store: Store, rulesets: Sequence[Ruleset] = (), *,
           progress: Progress | None = None, batch_hands: int = BATCH_HANDS
           ) -> RescoreSummary:
    """Score every hand the store holds and has not scored (or scored before its session
    grew) under the rulesets it holds and the presets played under its variants
    (:func:`default_rulesets`, as stored), and ``rulesets`` too (``ingest -r``: a house
    ruleset its logs name, registered with the load), so that every question can be
    answered: what ``ofcstats ingest`` does after loading. What-ifs asked for before
    stay."""
    given = {r.name: r for r in rulesets}
    held = [given.pop(r.name, r) for r in default_rulesets(store, as_stored=True)]
    return rescore(store, [*held, *given.values()], progress=progress,
                   batch_hands=batch_hands)


def register(store: Store, rulesets: Sequence[Ruleset]) -> None:
    """Have the store hold ``rulesets`` without scoring them yet (``ingest -r
    --no-rescore``): the next rescore scores them, as every ruleset the store holds."""
    with store.transaction():
        _register(store, rulesets, rebuild=False)


def _work(store: Store, rulesets: Sequence[Ruleset], ids: dict[str, int],
          scopes: dict[str, tuple[str, ...]]) -> list[_Work]:
    """What is left to score, grouped: rulesets that need the same sessions of the same
    variants go together, so those sessions are read and scored once for all of them."""
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[Ruleset]] = {}
    todo: dict[tuple[tuple[str, ...], tuple[str, ...]], pl.DataFrame] = {}
    for ruleset in rulesets:
        scope = scopes[ruleset.name]
        sessions = store.sessions_to_score(ids[ruleset.name])
        key = (tuple(sessions.get_column("session_id").to_list()), scope)
        if key[0]:
            groups.setdefault(key, []).append(ruleset)
            todo[key] = sessions
    return [_Work(group, [ids[r.name] for r in group], key[1], todo[key])
            for key, group in groups.items()]


def _scored_batch(store: Store, work: _Work, sessions: pl.DataFrame
                  ) -> tuple[pl.DataFrame, pl.DataFrame, dict[int, pl.DataFrame]]:
    """One batch of whole sessions read and scored under the work's rulesets: the hands
    scored (:func:`score_sessions`), the results (with their ``ruleset_id``) and the
    showdowns."""
    names = sessions.get_column("session_id").to_list()
    seats, hands = read_sessions(store, names)
    results, showdowns, scored = score_sessions(seats, hands, work.rulesets, work.variants)
    return scored, with_ruleset_ids(results, work.ruleset_ids), showdowns


def with_ruleset_ids(results: pl.DataFrame, ruleset_ids: Sequence[int]) -> pl.DataFrame:
    """The scored rows (one block per ruleset, in order) with their rulesets' ids."""
    block = results.height // len(ruleset_ids)
    return results.with_columns(ruleset_id=pl.Series(
        np.repeat(np.array(ruleset_ids, dtype=np.int16), block)))


def write_batch(target: Store | stored.Writer, ruleset_ids: list[int], sessions: pl.DataFrame,
                scored: pl.DataFrame, results: pl.DataFrame,
                showdowns: dict[int, pl.DataFrame]) -> None:
    """Store one scored batch of whole sessions in one transaction (``scored``: the
    hands scored, as :func:`score_sessions` gives them), on the store or a writer of it."""
    target.write_scored(ruleset_ids, sessions, scored, results, showdowns)


def finish(store: Store, ids: Collection[int]) -> None:
    """Note when the rulesets were last scored."""
    with store.transaction():
        store.mark_rulesets_scored(ids)
