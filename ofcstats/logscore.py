"""Scoring logs without a database (``ofcstats score``): files read as a stream, their
hands scored session by session under the rulesets asked, or each under its own.

The scorer is :func:`ofcstats.score.score`; what only a session knows (fantasyland repeat
limits over play order and games) is :mod:`ofcstats.session`'s, applied here as
``rescore`` applies it to the store (:mod:`ofcstats.pipeline`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import polars as pl

from ofcstats import reading, session
from ofcstats.errors import HandError, RulesetError
from ofcstats.formats.lines import BATCH_BYTES
from ofcstats.records import REJECTS_SCHEMA, HandBatch, hands_of
from ofcstats.rules.load import load_ruleset
from ofcstats.rules.model import Ruleset
from ofcstats.score import score

DEFAULT_RULESET = "american"
"""The ruleset of a hand whose log names none."""


@dataclass(frozen=True)
class ScoredBatch:
    """Results, one row per hand, seat and ruleset; and the hands that could not be scored."""

    results: pl.DataFrame
    rejects: pl.DataFrame


def score_batch(batch: HandBatch, rulesets: Sequence[Ruleset] | None = None, *,
                own_variants: bool = False) -> ScoredBatch:
    """Score checked hands: under ``rulesets`` when given, else each hand under its own
    ``ruleset`` field (``american`` when it has none). Fantasyland repeat limits are
    applied over the batch's sessions and games, as ``rescore`` applies them.

    ``what_if`` marks a ruleset applied to a hand of a variant it is not played under;
    ``own_variants`` leaves such rows out. A hand naming a ruleset that does not exist is
    not scored; it comes back among ``rejects`` with the reason.
    """
    seats = batch.seats_for_scoring()
    hands = _session_hands(batch)
    if rulesets is not None:
        results = session.limit_repeats(score(seats, rulesets), seats, hands, rulesets)
        results = results.with_columns(pl.col("ruleset").cast(pl.String))
        marked = _mark_what_ifs(_in_log_order(results, batch, rulesets), batch, rulesets)
        return ScoredBatch(results=marked.filter(~pl.col("what_if")) if own_variants
                           else marked, rejects=_no_rejects())
    own = batch.hands.select("hand_id", "source", "line",
                             pl.col("ruleset").fill_null(DEFAULT_RULESET))
    frames, rejects = [], []
    for (name,), group in own.group_by("ruleset", maintain_order=True):
        try:
            ruleset = load_ruleset(str(name))
        except RulesetError as error:
            rejects.append(group.select(
                "source", "line", "hand_id",
                pl.format("hand {}: {}; score it with --ruleset NAME", pl.col("hand_id"),
                          pl.lit(str(error))).alias("reason"),
                pl.lit(None, dtype=pl.String).alias("raw"),
            ))
            continue
        own_seats = seats.join(group.select("hand_id"), on="hand_id", how="semi")
        # Play order, games and streaks over every hand, as rescore takes them.
        scored = session.limit_repeats(score(own_seats, [ruleset]), seats, hands, [ruleset])
        frames.append(scored.with_columns(pl.col("ruleset").cast(pl.String)))
    results = pl.concat(frames) if frames else session.limit_repeats(
        score(seats.clear(), []), seats.clear(), hands.clear(), [])
    used = [load_ruleset(str(name)) for name in results.get_column("ruleset").unique()]
    return ScoredBatch(
        results=_mark_what_ifs(_in_log_order(results, batch, []), batch, used),
        rejects=pl.concat(rejects).cast(REJECTS_SCHEMA) if rejects else _no_rejects(),  # type: ignore[arg-type]
    )


def _session_hands(batch: HandBatch) -> pl.DataFrame:
    """The batch's hands with what play order and games need (:func:`session.hand_order`):
    the variant and logged stake, whether any seat played in fantasyland, whether any
    timed out (:func:`hands_of`)."""
    return batch.hands.select(
        "hand_id", "session_id", "played_at", "n_seats", "source", "line", "variant",
        stake=session.logged_stake(pl.col("point_value")),
    ).join(hands_of(batch.seats), on="hand_id", how="left")


def _in_log_order(results: pl.DataFrame, batch: HandBatch,
                  rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """Hands in the order the logs list them, rulesets in the order asked, then seats."""
    order = batch.hands.select("hand_id", _hand=pl.int_range(pl.len()))
    ranks = {r.name: i for i, r in enumerate(rulesets)}
    return results.join(order, on="hand_id", how="left").with_columns(
        _ruleset=pl.col("ruleset").replace_strict(ranks, default=0, return_dtype=pl.Int32),
    ).sort("_hand", "_ruleset", "seat").drop("_hand", "_ruleset")


def _mark_what_ifs(results: pl.DataFrame, batch: HandBatch, rulesets: Sequence[Ruleset]
                   ) -> pl.DataFrame:
    """Add ``what_if``: the ruleset is not played under the hand's variant."""
    played = pl.DataFrame(
        [(r.name, v.value) for r in rulesets for v in r.variants],
        schema={"ruleset": pl.String, "variant": pl.String}, orient="row",
    ).with_columns(what_if=pl.lit(False))
    variants = batch.hands.select("hand_id", pl.col("variant").cast(pl.String))
    return results.join(variants, on="hand_id", how="left", maintain_order="left").join(
        played, on=["ruleset", "variant"], how="left", maintain_order="left",
    ).with_columns(pl.col("what_if").fill_null(True)).drop("variant")


def _no_rejects() -> pl.DataFrame:
    return pl.DataFrame(schema=REJECTS_SCHEMA)


def score_files(paths: Sequence[Path], rulesets: Sequence[Ruleset] | None = None, *,
                own_variants: bool = False, format_name: str | None = None,
                progress: Callable[[int, int], None] | None = None,
                warn: Callable[[str], None] | None = None,
                batch_bytes: int | None = None) -> Iterator[ScoredBatch]:
    """:func:`score_batch` over logs read as a stream: a part at a time, each part the
    sessions of a file that have ended (none of their hands in the batch just read), so
    that memory holds a few batches of hands, not the logs. A file's sessions are scored
    whole (repeat limits, games); a hand id seen before, in any file, is dropped when the
    hand is the same and rejected as a conflict when it is not (:func:`reading.fresh`).

    Results come session by session as the sessions end, in log order within a part:
    the logs' order when their sessions follow one another. ``warn`` hears of a session
    that comes back after it was scored (its later hands are scored as a new piece).
    ``progress(bytes read, bytes in all files)`` as :func:`reading.read_all` calls it;
    ``batch_bytes`` is the size of a batch read (default: :func:`reading.read`'s).
    """
    seen = pl.DataFrame(schema={"hand_id": pl.String, "fingerprint": pl.String,
                                "source": pl.String, "line": pl.Int64})
    sizes = [path.stat().st_size if path.is_file() else 0 for path in paths]
    total, before = sum(sizes), 0

    def scored(part: HandBatch) -> ScoredBatch:
        result = score_batch(part, rulesets, own_variants=own_variants)
        return ScoredBatch(results=result.results,
                           rejects=pl.concat([part.rejects, result.rejects]))

    for path, size in zip(paths, sizes, strict=True):
        def file_progress(done: int, base: int = before) -> None:
            if progress is not None:
                progress(base + done, total)

        before += size
        pending, ended = HandBatch(), set[str]()
        try:
            for batch in reading.read(path, format_name, file_progress,
                                      batch_bytes or BATCH_BYTES):
                new = reading.fresh(seen, batch)
                seen = pl.concat([seen, new.hands.select(reading.SEEN_COLUMNS)],
                                 how="vertical_relaxed")
                sessions = new.hands.get_column("session_id").unique()
                back = sorted(set(sessions.to_list()) & ended)
                if back and warn is not None:
                    warn(f"{path}: session {back[0]} comes back after its hands were "
                         "scored: its later hands are scored as a new piece of it")
                pending = HandBatch.concat([pending, replace(new, lines=())])
                done = ~pending.hands.get_column("session_id").is_in(sessions.implode())
                if done.any():
                    part = pending.select(done)
                    ended.update(part.hands.get_column("session_id").to_list())
                    pending = replace(pending.select(~done), rejects=pending.rejects.clear(),
                                      duplicates=0)
                    yield scored(part)
        except (HandError, OSError) as error:
            reason = str(error).removeprefix(f"{path}: ")
            pending.rejects = pl.concat([pending.rejects, pl.DataFrame(
                [{"source": str(path), "line": None, "hand_id": None, "reason": reason,
                  "raw": None}], schema=REJECTS_SCHEMA)])
        yield scored(pending)
