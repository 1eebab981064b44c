"""Rescore and review in shards of whole sessions, on a process pool or a Ray cluster.

A *shard* is a set of whole sessions (a session is never split: fantasyland repeat
limits need all of it). Each shard is one task: it reads its hands, scores (or
reviews) them, and hands the rows back; this process writes each shard's rows in one
transaction, together with the record that the shard is done (``scored_sessions`` for
rescore; for review the decisions themselves), with the same functions the default
path uses. So the results are the rows the default path writes, a shard is in the
database whole or not at all, and a run started again after an interruption does only
the sessions still missing.

- ``local``: a pool of worker processes on this machine (``jobs``); a worker that dies
  breaks the pool, which is made again and the unfinished shards sent again.
- ``ray``: one Ray task per shard (``ray.remote(max_retries=...)``) on the cluster at
  ``address``, or on one started here with ``jobs`` CPUs.

A task reads its hands from what it is given: the rows this process read from the
store, or, with a Parquet export (``ofcstats export --parquet DIR``; ``source``), the
files of the export's shards, read by the worker itself, so that machines that can
reach DIR need nothing from this one but the task. Results are written in the order
the shards were planned, whatever order they finish in: same inputs, same rows.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from ofcstats.config import engine_config
from ofcstats.errors import OfcstatsError, StoreError, UsageError
from ofcstats.paths import no_loop
from ofcstats.pipeline import (
    Progress,
    RescoreSummary,
    finish,
    plan,
    read_sessions,
    score_sessions,
    with_ruleset_ids,
    write_batch,
)
from ofcstats.rules.load import ruleset_from
from ofcstats.rules.model import Ruleset
from ofcstats.score import available_cores
from ofcstats.store import SHARD_HANDS, Store, decisions
from ofcstats.store.shards import check_export, foreign_hands, shard_files, shard_store

ENGINES = ("local", "ray")
RESCORE_IN_FLIGHT = 16
"""Rescore shards scored ahead of the writer, at most (each holds its rows in memory)."""
REVIEW_SHARD_HANDS = 400
"""Hands per review shard: a few minutes of work for one worker at the default settings."""


RAY_SYSTEM_CONFIG = {"enable_metrics_collection": False, "agent_register_timeout_ms": 300_000}
"""For a Ray cluster started here: no metrics (nothing reads them), and patience with
agents slow to start on a busy machine."""


class EngineError(StoreError):
    """A sharded run that could not finish: a task kept dying, or the engine is missing."""


@dataclass(frozen=True)
class Engine:
    """Where and how a sharded run goes."""

    kind: str = "local"  # local or ray
    jobs: int = 0  # worker processes, or CPUs of a Ray cluster started here; 0: the cores
    address: str | None = None  # a running Ray cluster; None: start one here
    retries: int = 3  # times a shard whose worker died is run again
    shard_hands: int = SHARD_HANDS  # hands per rescore shard
    review_shard_hands: int = REVIEW_SHARD_HANDS
    source: Path | None = None  # a Parquet export to read the hands from; None: the store
    fault_marker: Path | None = None
    """For the tests of recovery: the first task that finds no file here makes it and
    kills its worker."""

    def __post_init__(self) -> None:
        if self.kind not in ENGINES:
            raise UsageError(f"--engine must be local or ray, not {self.kind!r}")
        if self.jobs < 0:
            raise UsageError(f"--jobs must be at least 1, not {self.jobs}")
        if self.retries < 0:
            raise UsageError(f"retries must be 0 or more, not {self.retries}")
        if self.shard_hands < 1 or self.review_shard_hands < 1:
            raise UsageError("shards must hold at least one hand")

    @property
    def workers(self) -> int:
        """Worker processes (or CPUs of a Ray cluster started here)."""
        return self.jobs or available_cores()


# Running tasks.


class _Runner:
    """Tasks in flight: ``submit`` returns a handle, ``result`` waits for its value;
    ``width`` tasks run at once."""

    width = 1

    def submit(self, task: Callable[[Any], Any], payload: Any) -> Any:
        raise NotImplementedError

    def result(self, handle: Any) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        """Stop the workers."""


class _Inline(_Runner):
    """One worker: this process, each task run when its result is asked for."""

    def submit(self, task: Callable[[Any], Any], payload: Any) -> Any:
        return task, payload

    def result(self, handle: Any) -> Any:
        task, payload = handle
        return task(payload)


@dataclass
class _Ticket:
    task: Callable[[Any], Any]
    payload: Any
    future: Future[Any]
    attempts: int = 1


class _Local(_Runner):
    """A pool of worker processes (started fresh, not forked: the store's threads stay
    here). A worker that dies breaks the whole pool: it is made again and every shard
    still in flight sent again, each at most ``retries`` more times."""

    def __init__(self, jobs: int, retries: int) -> None:
        self.jobs = self.width = jobs
        self.retries = retries
        self.pool = self._pool()
        self.tickets: dict[int, _Ticket] = {}
        self.next = 0

    def _pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("spawn"))

    def submit(self, task: Callable[[Any], Any], payload: Any) -> Any:
        self.next += 1
        self.tickets[self.next] = _Ticket(task, payload, self.pool.submit(task, payload))
        return self.next

    def result(self, handle: Any) -> Any:
        while True:
            ticket = self.tickets[handle]
            try:
                value = ticket.future.result()
            except BrokenProcessPool:
                self._restart()
                continue
            del self.tickets[handle]
            return value

    def _restart(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.pool = self._pool()
        for ticket in self.tickets.values():
            future = ticket.future
            if future.done() and not future.cancelled() and not isinstance(
                    future.exception(), BrokenProcessPool):
                continue  # finished before the pool broke: its value (or error) stands
            if ticket.attempts > self.retries:
                raise EngineError(f"a worker running a shard died ({_times(ticket.attempts)}"
                                  f", {self.retries} retries); nothing of the shard was written")
            ticket.attempts += 1
            ticket.future = self.pool.submit(ticket.task, ticket.payload)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class _Ray(_Runner):
    """One Ray task per shard, retried by Ray when its worker dies."""

    def __init__(self, engine: Engine) -> None:
        os.environ.setdefault("RAY_DISABLE_IMPORT_WARNING", "1")
        try:
            import ray  # noqa: PLC0415 - an optional extra
        except ImportError:
            raise EngineError("the ray engine needs Ray: pip install 'ofcstats[ray]'"
                              ) from None
        self.ray = ray
        self.started = not ray.is_initialized()
        if self.started:
            try:
                if engine.address:
                    ray.init(address=engine.address, log_to_driver=False)
                else:
                    ray.init(num_cpus=engine.workers, include_dashboard=False,
                             log_to_driver=False, _system_config=RAY_SYSTEM_CONFIG)
            except Exception as error:  # Ray raises bare Exceptions when it cannot start
                where = engine.address or "a local cluster"
                raise EngineError(f"cannot start Ray on {where}: "
                                  f"{str(error).splitlines()[0]}") from None
        self.retries = engine.retries
        self.remote: dict[Callable[[Any], Any], Any] = {}
        self.width = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def submit(self, task: Callable[[Any], Any], payload: Any) -> Any:
        if task not in self.remote:
            self.remote[task] = self.ray.remote(num_cpus=1, max_retries=self.retries)(task)
        return self.remote[task].remote(payload)

    def result(self, handle: Any) -> Any:
        exceptions = self.ray.exceptions
        try:
            return self.ray.get(handle)
        except exceptions.RayTaskError as error:
            cause = error.cause
            raise (cause if isinstance(cause, OfcstatsError) else error) from None
        except (exceptions.WorkerCrashedError, exceptions.NodeDiedError) as error:
            raise EngineError(f"a Ray worker running a shard died "
                              f"({_times(self.retries + 1)}, {self.retries} retries); nothing "
                              f"of the shard was written ({type(error).__name__})") from None

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


def _runner(engine: Engine) -> _Runner:
    if engine.kind == "ray":
        return _Ray(engine)
    return _Inline() if engine.workers == 1 else _Local(engine.workers, engine.retries)


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _in_order(engine: Engine, tasks: Iterable[tuple[Callable[[Any], Any], Any, Any]],
              done: Callable[[Any, Any], None], most: int | None = None) -> None:
    """Run ``(task, payload, note)`` triples, two per worker in flight (at most ``most``),
    and call ``done(note, value)`` in the order they were given."""
    runner = _runner(engine)
    window = min(2 * runner.width, most or 2 * runner.width)
    try:
        flight: deque[tuple[Any, Any]] = deque()
        for task, payload, note in tasks:
            flight.append((runner.submit(task, payload), note))
            if len(flight) >= window:
                handle, first = flight.popleft()
                done(first, runner.result(handle))
        while flight:
            handle, first = flight.popleft()
            done(first, runner.result(handle))
    finally:
        runner.close()


def _fault(marker: str | None) -> None:
    """Kill this worker the first time (see :attr:`Engine.fault_marker`)."""
    if marker is None:
        return
    try:
        Path(marker).touch(exist_ok=False)
    except FileExistsError:
        return
    os._exit(17)


def engine_for(kind: str | None, jobs: int | None, address: str | None,
               source: Path | None, config: Path | None, *, jobs_shard: bool
               ) -> Engine | None:
    """The engine the options (``kind``: local or ray; then the ``[engine]`` table of the
    configuration file) ask for; None for the one-process path. ``source``: a Parquet
    export to read the hands from; ``jobs_shard``: ``jobs`` alone asks for the local
    engine. Raises :class:`UsageError` for a ``source`` that is not an export or
    ``jobs`` below 1."""
    table = engine_config(config)
    chosen = kind if kind is not None else table.get("engine")
    if chosen is None and (source is not None or address is not None
                           or (jobs_shard and jobs is not None)):
        chosen = "ray" if address is not None else "local"
    if chosen is None:
        return None
    if source is not None:
        no_loop(source, "Parquet export")
        check_export(source)
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}")
    return Engine(
        kind=chosen, jobs=jobs or table.get("jobs", 0),
        address=address or table.get("address"), retries=table.get("retries", 3),
        shard_hands=table.get("shard_hands", SHARD_HANDS),
        review_shard_hands=table.get("review_shard_hands", REVIEW_SHARD_HANDS),
        source=source)


# Where a task's hands come from.


def export_shards(source: Path, sessions: pl.DataFrame, store: Store) -> pl.DataFrame:
    """``sessions`` (session_id, hands, ...) with the shard of the export at ``source``
    that holds each; an error when the export is missing a session or holds a different
    number of its hands (it was made before later hands were loaded), or holds other
    hands under the store's keys."""
    known = pl.read_parquet(check_export(source)).rename({"hands": "exported"})
    stored = store.session_shards().select("session_id", pl.col("hands").alias("stored"))
    found = sessions.join(stored, on="session_id", how="left").join(
        known, on="session_id", how="left")
    wrong = found.filter(pl.col("exported").is_null()
                         | (pl.col("exported") != pl.col("stored")))
    if not wrong.is_empty():
        session, hands, exported = wrong.select("session_id", "stored", "exported").row(0)
        held = "does not hold" if exported is None else f"holds {exported} hands of"
        raise UsageError(f"{source} {held} session {session} ({hands} hands in the "
                         f"store): export the store again (ofcstats export --parquet DIR)")
    _same_hands(source, store)
    return found.drop("stored", "exported")


def _same_hands(source: Path, store: Store) -> None:
    """Raise unless the export's hands are the store's under the same keys."""
    foreign, first = foreign_hands(source, store)
    if foreign:
        raise UsageError(f"{source}: hand {first} is not the store's hand under the same "
                         "key: the export was made from another database; export this one "
                         "(ofcstats export --parquet DIR)")


def _shards(sessions: pl.DataFrame, hands: int, by: str | None = None
            ) -> Iterator[pl.DataFrame]:
    """Consecutive whole sessions in shards of about ``hands`` hands (within each value of
    ``by``, an export's shard, when given)."""
    groups = [sessions] if by is None else [
        part for _, part in sessions.group_by(by, maintain_order=True)]
    for group in groups:
        before = group.get_column("hands").cum_sum() - group.get_column("hands")
        yield from (part.drop("_shard") for _, part in group.with_columns(
            _shard=before // max(1, hands)).group_by("_shard", maintain_order=True))


# Rescore.


@dataclass(frozen=True)
class _ScoreTask:
    rulesets: list[dict[str, Any]]
    ruleset_ids: list[int]
    variants: tuple[str, ...]
    sessions: list[str]
    seats: pl.DataFrame | None  # with ``hands``: read here; else from ``files``
    hands: pl.DataFrame | None
    files: dict[str, list[str]] | None
    fault: str | None


def _score_shard(task: _ScoreTask
                 ) -> tuple[pl.DataFrame, dict[int, pl.DataFrame], pl.DataFrame]:
    """In a worker: one shard scored, its rows labelled with the rulesets' ids, with the
    hands scored (:func:`ofcstats.pipeline.score_sessions`)."""
    _fault(task.fault)
    rulesets = [ruleset_from(data, f"the ruleset {data['name']}") for data in task.rulesets]
    if task.seats is not None and task.hands is not None:
        seats, hands = task.seats, task.hands
    else:
        assert task.files is not None
        with shard_store(task.files, task.sessions) as store:
            seats, hands = read_sessions(store.con, task.sessions)
    results, showdowns, scored = score_sessions(seats, hands, rulesets, task.variants)
    return with_ruleset_ids(results, task.ruleset_ids), showdowns, scored


def rescore(store: Store, rulesets: Sequence[Ruleset], engine: Engine, *,
            rebuild: bool = False, what_if: Sequence[str] = (),
            progress: Progress | None = None) -> RescoreSummary:
    """:func:`ofcstats.pipeline.rescore` in shards on ``engine``: the same rows."""
    started = datetime.now()
    summary = RescoreSummary(rulesets=[r.name for r in rulesets])
    work = plan(store, rulesets, rebuild=rebuild, what_if=what_if)
    summary.rebuilt = work.rebuilt
    total = work.total
    fault = None if engine.fault_marker is None else str(engine.fault_marker)
    seen: set[str] = set()

    def tasks() -> Iterator[tuple[Callable[[Any], Any], Any, Any]]:
        for group, variants, todo in work.groups:
            ids = [work.ids[r.name] for r in group]
            definitions = [r.to_dict() for r in group]
            sessions = todo
            if engine.source is not None:
                sessions = export_shards(engine.source, todo, store)
            for shard in _shards(sessions, engine.shard_hands,
                                 None if engine.source is None else "shard"):
                names = shard.get_column("session_id").to_list()
                seats: pl.DataFrame | None = None
                hands: pl.DataFrame | None = None
                files = None
                if engine.source is None:
                    seats, hands = read_sessions(store.con, names)
                else:
                    files = shard_files(engine.source, int(shard.get_column("shard")[0]))
                payload = _ScoreTask(definitions, ids, variants, names, seats, hands, files,
                                     fault)
                yield _score_shard, payload, (ids, shard.select(todo.columns))

    def write(note: tuple[list[int], pl.DataFrame],
              value: tuple[pl.DataFrame, dict[int, pl.DataFrame], pl.DataFrame]) -> None:
        ids, sessions = note
        results, showdowns, scored = value
        write_batch(store.con, ids, sessions, scored, results, showdowns)
        summary.hands += scored.height
        summary.rows += results.height
        seen.update(sessions.get_column("session_id").to_list())
        summary.sessions = len(seen)
        if progress is not None:
            progress(summary.hands, total)

    # The one writer is the limit: more shards in flight would only wait, in memory.
    _in_order(engine, tasks(), write, most=RESCORE_IN_FLIGHT)
    finish(store, work.ids.values())
    summary.seconds = (datetime.now() - started).total_seconds()
    return summary


# Review.


@dataclass(frozen=True)
class _ReviewTask:
    hand_keys: list[int]
    seats: list[tuple[int, int]]  # (hand key, seat) to review
    sessions: list[str]
    settings: Any  # ofcstats.review.store.Settings
    reviewed_as: str
    frame: pl.DataFrame | None  # the hands as the review reads them; else from ``files``
    files: dict[str, list[str]] | None
    fault: str | None


def _review_shard(task: _ReviewTask) -> pl.DataFrame:
    """In a worker: the decisions of one shard, as rows of ``decisions``."""
    from ofcstats.review import store as reviewing  # noqa: PLC0415 - loads the simulator

    _fault(task.fault)
    settings = task.settings
    frame = task.frame
    if frame is None:
        assert task.files is not None
        with shard_store(task.files, task.sessions) as shard:
            frame = decisions.review_seats(shard, task.hand_keys)
    found = reviewing.positions(frame, set(task.seats), settings.ruleset)
    options = settings.plan()
    try:
        verdicts = reviewing._review_part(found, options)
    except ValueError as error:
        raise reviewing.ReviewError(str(error)) from None
    return reviewing._rows(verdicts, settings, task.reviewed_as)


@dataclass
class ReviewSummary:
    """What a sharded review did."""

    hands: int = 0
    decisions: int = 0
    shards: list[int] = field(default_factory=list)  # hands per shard


def review(store: Store, selection: Any, settings: Any, engine: Engine,
           progress: Callable[[int, int], None] | None = None) -> ReviewSummary:
    """:func:`ofcstats.review.store.run` in shards on ``engine``: the same decisions."""
    from ofcstats.review import store as reviewing  # noqa: PLC0415 - loads the simulator

    settings.plan()
    name = reviewing.reviewed_as(settings)
    todo = pl.DataFrame(reviewing.pending_seats(store, selection, settings, name),
                        schema={"hand_key": pl.Int64, "seat": pl.Int64, "session_id": pl.String},
                        orient="row")
    sessions = todo.group_by("session_id").agg(
        hands=pl.col("hand_key").n_unique().cast(pl.Int32)).sort("session_id")
    if engine.source is not None:
        sessions = export_shards(engine.source, sessions, store)
    summary = ReviewSummary(hands=todo.get_column("hand_key").n_unique())
    fault = None if engine.fault_marker is None else str(engine.fault_marker)
    if progress is not None:
        progress(0, summary.hands)

    def tasks() -> Iterator[tuple[Callable[[Any], Any], Any, Any]]:
        for shard in _shards(sessions, engine.review_shard_hands,
                             None if engine.source is None else "shard"):
            names = shard.get_column("session_id").to_list()
            part = todo.filter(pl.col("session_id").is_in(names))
            keys = part.get_column("hand_key").unique(maintain_order=True).to_list()
            seats = list(zip(part.get_column("hand_key").to_list(),
                             part.get_column("seat").to_list(), strict=True))
            frame = decisions.review_seats(store, keys) if engine.source is None else None
            files = None if engine.source is None else shard_files(
                engine.source, int(shard.get_column("shard")[0]))
            payload = _ReviewTask(keys, seats, names, settings, name, frame, files, fault)
            yield _review_shard, payload, len(keys)

    done = 0

    def write(hands: int, rows: pl.DataFrame) -> None:
        nonlocal done
        decisions.replace_decisions(store, rows)
        done += hands
        summary.decisions += rows.height
        summary.shards.append(hands)
        if progress is not None:
            progress(done, summary.hands)

    _in_order(engine, tasks(), write)
    return summary
