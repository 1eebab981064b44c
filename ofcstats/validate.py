"""Checking parsed hands against FORMAT.md, column-wise: a :class:`RawBatch` in, a
:class:`HandBatch` of valid hands and reasoned rejects out.

A hand is valid when every seat ends with 3/5/5 placed cards, no card appears twice
anywhere in the hand, each street places exactly its dealt cards less the discards,
and the street sizes fit the variant (fantasyland seats: one street of 13 to 17 cards,
13 placed). A fouled hand is valid: fouls are data, not errors.

Every reason names the seat and street at fault, e.g.
``Qs appears twice (seat 1 street 3, seat 2 street 1)``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import polars as pl

from ofcstats.cards import RANKS, SUITS, spellings
from ofcstats.records import (
    HANDS_SCHEMA,
    PLACEMENTS_SCHEMA,
    REJECTS_SCHEMA,
    SEATS_SCHEMA,
    HandBatch,
    RawBatch,
)
from ofcstats.variants import FANTASYLAND_MAX_CARDS, MIN_PLAYERS, Variant

ROWS = ("top", "middle", "bottom")
ROW_SIZES = {"top": 3, "middle": 5, "bottom": 5}
_KIND_ORDER = {"dealt": 0, "top": 1, "middle": 2, "bottom": 3, "discard": 4}
_CARD_CODES = spellings()
_CARD_NAMES = [RANKS[c >> 2] + SUITS[c & 3] for c in range(52)]
_TIMES = {1: "", 2: "twice", 3: "three times", 4: "four times"}


def _plans() -> pl.DataFrame:
    """Expected streets per variant for a seat not in fantasyland."""
    rows = [
        {"variant": v.value, "street": i + 1, "want_dealt": s.dealt, "want_discard": s.discard,
         "want_streets": len(v.streets)}
        for v in Variant for i, s in enumerate(v.streets)
    ]
    return pl.DataFrame(rows, schema={"variant": pl.String, "street": pl.Int64,
                                      "want_dealt": pl.Int64, "want_discard": pl.Int64,
                                      "want_streets": pl.Int64})


def _seat_label() -> pl.Expr:
    return pl.when(pl.col("seat").is_not_null()).then(pl.format("seat {}", pl.col("seat"))) \
        .otherwise(pl.format("player {} of the list", pl.col("seat_index")))


def _card_name(code: pl.Expr) -> pl.Expr:
    return code.cast(pl.Int64).replace_strict(list(range(52)), _CARD_NAMES,
                                              return_dtype=pl.String)


def _problems(frame: pl.DataFrame, message: pl.Expr, rank: int) -> pl.DataFrame:
    return frame.select(pl.col("key"), pl.lit(rank).alias("rank"), message.alias("message"))


def validate(raw: RawBatch, con: duckdb.DuckDBPyConnection) -> HandBatch:
    """Split a parsed batch into valid hands and rejects, with a reason for each reject.

    A hand id repeated within the batch keeps its first hand: an exact repeat is
    counted in ``duplicates``, a different hand under the same id is rejected.
    """
    hands = raw.hands.with_columns(
        variant_ok=pl.col("variant").is_in([v.value for v in Variant]),
    )
    seats = raw.seats.join(hands.select("key", "variant"), on="key", how="left").with_columns(
        label=_seat_label()
    )
    cards = raw.cards.join(
        seats.select("key", "seat_index", "seat", "label", "variant", "fantasyland",
                     "has_streets"),
        on=["key", "seat_index"], how="left",
    ).with_columns(
        code=pl.col("text").str.strip_chars().replace_strict(
            _CARD_CODES, default=None, return_dtype=pl.UInt8),
    )
    problems: list[pl.DataFrame] = []
    add = problems.append

    # The hand as a whole.
    add(_problems(hands.filter(pl.col("error").is_not_null()), pl.col("error"), 0))
    add(_problems(
        hands.filter(pl.col("variant").is_not_null() & ~pl.col("variant_ok")),
        pl.format("unknown variant '{}': use one of {}", pl.col("variant"),
                  pl.lit(", ".join(v.value for v in Variant))), 1))
    add(_problems(seats.filter(pl.col("error").is_not_null()),
                  pl.format("{}: {}", pl.col("label"), pl.col("error")), 2))

    # Seats: how many, numbered once each, named once each, the button among them.
    max_players = pl.col("variant").replace_strict(
        [v.value for v in Variant], [v.max_players for v in Variant], default=4,
        return_dtype=pl.Int64)
    counts = seats.group_by("key").agg(
        n=pl.len(), variant=pl.col("variant").first(),
        seats=pl.col("seat").drop_nulls().sort().cast(pl.String).str.join(", "),
    )
    add(_problems(
        counts.filter((pl.col("n") < MIN_PLAYERS) | (pl.col("n") > max_players)),
        pl.format("{} seats {} to {} players, this hand has {}", pl.col("variant"),
                  pl.lit(MIN_PLAYERS), max_players, pl.col("n")), 3))
    no_players = hands.join(counts, on="key", how="anti").filter(pl.col("error").is_null())
    add(_problems(no_players, pl.lit("players is an empty list"), 3))
    doubled_seats = seats.filter(pl.col("seat").is_not_null()).group_by("key", "seat").agg(
        n=pl.len()).filter(pl.col("n") > 1)
    add(_problems(doubled_seats, pl.format("seat {} appears {} times", pl.col("seat"),
                                           pl.col("n")), 4))
    doubled_names = seats.filter(pl.col("player").is_not_null()).group_by("key", "player").agg(
        where=pl.col("seat").cast(pl.String).str.join(" and "), n=pl.len(),
    ).filter(pl.col("n") > 1)
    add(_problems(doubled_names, pl.format("player {} sits in seats {}", pl.col("player"),
                                           pl.col("where")), 4))
    seat_lists = seats.group_by("key").agg(pl.col("seat"))
    button = hands.filter(pl.col("button").is_not_null()).join(seat_lists, on="key")
    add(_problems(
        button.filter(~pl.col("seat").list.contains(pl.col("button"))),
        pl.format("button is seat {}, which is not at the table", pl.col("button")), 5))
    add(_problems(
        seats.filter(pl.col("fantasyland") & (pl.col("variant") == Variant.CHINESE_13.value)),
        pl.format("{}: fantasyland is not part of chinese-13", pl.col("label")), 5))

    # Card texts.
    bad_cards = cards.filter(pl.col("code").is_null())
    add(_problems(bad_cards, pl.format(
        "{}{}: '{}' is not a card (a rank 2-9, T, J, Q, K, A and a suit s, h, d, c)",
        pl.col("label"), _where(), pl.col("text")), 6))
    cards = cards.filter(pl.col("code").is_not_null())

    street_cards = cards.filter(pl.col("street") > 0)
    _check_streets(street_cards, seats, add)
    final = _final_rows(cards, seats)
    add(_problems(final["bad_counts"], pl.format(
        "{} ends with {} cards in the {} row, not {}", pl.col("label"), pl.col("n"),
        pl.col("kind"), pl.col("want")), 9))
    add(_problems(final["disagree"], pl.format(
        "{}: the final {} row given ({}) is not what its streets placed ({})", pl.col("label"),
        pl.col("kind"), pl.col("given"), pl.col("placed")), 9))

    # No card twice in a hand: dealt to two seats, dealt twice, or written twice.
    occurrences = pl.concat([
        street_cards.filter(pl.col("kind") == "dealt"),
        cards.filter((pl.col("street") == 0) & ~pl.col("has_streets")),
    ]).with_columns(place=pl.format("{}{}", pl.col("label"), _where()))
    doubled = occurrences.group_by("key", "code").agg(
        n=pl.len(), places=pl.col("place").sort().str.join(", "))
    add(_problems(doubled.filter(pl.col("n") > 1), pl.format(
        "{} appears {} ({})", _card_name(pl.col("code")),
        pl.col("n").replace_strict(list(_TIMES), list(_TIMES.values()), default="many times",
                                   return_dtype=pl.String),
        pl.col("places")), 10))

    return _assemble(raw, hands, seats, final["rows"], street_cards, pl.concat(problems), con)


def _where() -> pl.Expr:
    return pl.when(pl.col("street") > 0).then(pl.format(" street {}", pl.col("street"))) \
        .otherwise(pl.format(" {}", pl.col("kind")))


def _check_streets(street_cards: pl.DataFrame, seats: pl.DataFrame,
                   append: Callable[[pl.DataFrame], None]) -> None:
    """Street sizes against the variant, and each street's dealt cards all accounted for."""
    per_street = street_cards.group_by("key", "seat_index", "street").agg(
        dealt=(pl.col("kind") == "dealt").sum(),
        discard=(pl.col("kind") == "discard").sum(),
        label=pl.col("label").first(), variant=pl.col("variant").first(),
        fantasyland=pl.col("fantasyland").first(),
    )
    streets_of_seat = seats.filter(pl.col("has_streets")).join(
        per_street.group_by("key", "seat_index").agg(n_streets=pl.col("street").max()),
        on=["key", "seat_index"], how="left",
    ).with_columns(pl.col("n_streets").fill_null(0))
    regular = streets_of_seat.filter(~pl.col("fantasyland") & pl.col("variant").is_in(
        [v.value for v in Variant]))
    plans = _plans()
    want = plans.group_by("variant").agg(want_streets=pl.col("want_streets").first())
    wrong_count = regular.join(want, on="variant").filter(
        pl.col("n_streets") != pl.col("want_streets"))
    append(_problems(wrong_count, pl.format(
        "{} has {} streets; {} deals {}", pl.col("label"), pl.col("n_streets"),
        pl.col("variant"), pl.col("want_streets")), 7))
    sized = per_street.filter(~pl.col("fantasyland")).join(
        plans, on=["variant", "street"], how="inner")
    append(_problems(sized.filter(pl.col("dealt") != pl.col("want_dealt")), pl.format(
        "{} street {}: {} cards dealt; {} deals {} on that street", pl.col("label"),
        pl.col("street"), pl.col("dealt"), pl.col("variant"), pl.col("want_dealt")), 7))
    append(_problems(
        sized.filter((pl.col("dealt") == pl.col("want_dealt"))
                     & (pl.col("discard") != pl.col("want_discard"))),
        pl.format("{} street {}: {} discarded; {} discards {} on that street", pl.col("label"),
                  pl.col("street"), pl.col("discard"), pl.col("variant"),
                  pl.col("want_discard")), 7))
    fantasy = streets_of_seat.filter(pl.col("fantasyland"))
    append(_problems(fantasy.filter(pl.col("n_streets") != 1), pl.format(
        "{} plays fantasyland, so sets all its cards on one street; the log has {}",
        pl.col("label"), pl.col("n_streets")), 7))
    fl_street = per_street.filter(pl.col("fantasyland") & (pl.col("street") == 1))
    append(_problems(
        fl_street.filter((pl.col("dealt") < 13) | (pl.col("dealt") > FANTASYLAND_MAX_CARDS)),
        pl.format("{} plays fantasyland with {} cards dealt; fantasyland deals 13 to {}",
                  pl.col("label"), pl.col("dealt"), pl.lit(FANTASYLAND_MAX_CARDS)), 7))
    append(_problems(
        fl_street.filter(pl.col("dealt").is_between(13, FANTASYLAND_MAX_CARDS)
                         & (pl.col("discard") != pl.col("dealt") - 13)),
        pl.format("{} plays fantasyland with {} cards: it places 13 and discards {}, "
                  "the log discards {}", pl.col("label"), pl.col("dealt"),
                  pl.col("dealt") - 13, pl.col("discard")), 7))

    # Accounting: each street's dealt cards, each placed or discarded exactly once.
    tally = street_cards.group_by("key", "seat_index", "street", "code").agg(
        dealt=(pl.col("kind") == "dealt").sum(),
        used=(pl.col("kind") != "dealt").sum(),
        kinds=pl.col("kind").filter(pl.col("kind") != "dealt").str.join(" and "),
        label=pl.col("label").first(),
    ).filter(pl.col("dealt") != pl.col("used"))
    where = pl.format("{} street {}: {}", pl.col("label"), pl.col("street"),
                      _card_name(pl.col("code")))
    append(_problems(tally.filter(pl.col("dealt") == 0), pl.format(
        "{} is put in {} but was not dealt on that street", where, pl.col("kinds")), 8))
    append(_problems(tally.filter((pl.col("used") == 0)), pl.format(
        "{} was dealt but neither placed nor discarded", where), 8))
    append(_problems(
        tally.filter((pl.col("dealt") > 0) & (pl.col("used") > 0)),
        pl.format("{} is dealt {} times and put down {} times ({})", where, pl.col("dealt"),
                  pl.col("used"), pl.col("kinds")), 8))


def _final_rows(cards: pl.DataFrame, seats: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Each seat's final rows (from its streets, else as given) and the checks on them."""
    placed = cards.filter((pl.col("street") > 0) & pl.col("kind").is_in(ROWS))
    given = cards.filter((pl.col("street") == 0) & pl.col("kind").is_in(ROWS))
    from_streets = placed.sort("street", "pos").group_by("key", "seat_index", "kind").agg(
        codes=pl.col("code"))
    from_rows = given.sort("pos").group_by("key", "seat_index", "kind").agg(
        given=pl.col("code"))
    base = seats.select("key", "seat_index", "label", "has_streets").join(
        pl.DataFrame({"kind": list(ROWS), "want": [ROW_SIZES[r] for r in ROWS]}), how="cross")
    rows = base.join(from_streets, on=["key", "seat_index", "kind"], how="left").join(
        from_rows, on=["key", "seat_index", "kind"], how="left",
    ).with_columns(
        codes=pl.when(pl.col("has_streets")).then(pl.col("codes")).otherwise(pl.col("given")),
    ).with_columns(n=pl.col("codes").list.len().fill_null(0))
    names = pl.col("codes").list.eval(_card_name(pl.element())).list.join(" ")
    given_names = pl.col("given").list.eval(_card_name(pl.element())).list.join(" ")
    disagree = rows.filter(
        pl.col("has_streets") & pl.col("given").is_not_null()
        & (pl.col("given").list.sort() != pl.col("codes").list.sort()).fill_null(True)
    ).with_columns(placed=names.fill_null(""), given=given_names)
    return {
        "rows": rows,
        "bad_counts": rows.filter(pl.col("n") != pl.col("want")),
        "disagree": disagree,
    }


def _session_default(source: str) -> str:
    name = Path(source).name
    for suffix in (".gz", ".zst", ".jsonl", ".json", ".ndjson", ".csv", ".txt"):
        name = name.removesuffix(suffix)
    return name or source


def _fingerprints(hands: pl.DataFrame, seats: pl.DataFrame, rows: pl.DataFrame,
                  street_cards: pl.DataFrame, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """An md5 per hand of everything that makes it this hand (not its file or session)."""
    codes = pl.col("codes").cast(pl.List(pl.String)).list.join(",")
    row_text = rows.sort("kind").group_by("key", "seat_index").agg(
        rows=pl.format("{}:{}", pl.col("kind"), codes).str.join("/"))
    moves = street_cards.sort("street", "kind", "pos").group_by("key", "seat_index").agg(
        moves=pl.format("{}{}{}", pl.col("street"), pl.col("kind").str.slice(0, 1),
                        pl.col("code")).str.join(","))
    seat_text = seats.join(row_text, on=["key", "seat_index"], how="left").join(
        moves, on=["key", "seat_index"], how="left",
    ).sort("seat", "seat_index").group_by("key").agg(text=pl.concat_str(
        [pl.col(c).cast(pl.String).fill_null("") for c in (
            "seat", "player", "fantasyland", "timed_out", "surrendered", "reported_points",
            "rows", "moves")], separator="|").str.join("\n"))
    text = hands.select("key", pl.concat_str(
        [pl.col(c).cast(pl.String).fill_null("") for c in (
            "variant", "played_at", "ruleset", "point_value", "button")], separator="|",
    ).alias("head")).join(seat_text, on="key", how="left").select(
        "key", pl.concat_str("head", pl.col("text").fill_null(""), separator="\n").alias("text"))
    con.register("fingerprint_text", text)
    try:
        return con.sql("SELECT key, md5(text) AS fingerprint FROM fingerprint_text").pl()
    finally:
        con.unregister("fingerprint_text")


def _assemble(raw: RawBatch, hands: pl.DataFrame, seats: pl.DataFrame, rows: pl.DataFrame,
              street_cards: pl.DataFrame, problems: pl.DataFrame,
              con: duckdb.DuckDBPyConnection) -> HandBatch:
    played_at = pl.col("played_at").str.to_datetime(time_zone="UTC", strict=False,
                                                   time_unit="us")
    hands = hands.with_columns(played=played_at)
    problems = pl.concat([problems, _problems(
        hands.filter(pl.col("played_at").is_not_null() & pl.col("played").is_null()),
        pl.format("played_at '{}' is not an ISO 8601 time such as 2026-11-29T18:03:11Z",
                  pl.col("played_at")), 1)])
    reasons = problems.sort("key", "rank").group_by("key", maintain_order=True).agg(
        reason=pl.col("message").unique(maintain_order=True).str.join("; "))
    rejected = hands.join(reasons, on="key", how="inner").select(
        "line", "hand_id",
        pl.when(pl.col("hand_id").is_not_null())
        .then(pl.format("hand {}: {}", pl.col("hand_id"), pl.col("reason")))
        .otherwise(pl.col("reason")).alias("reason"),
        "raw",
    )
    good = hands.join(reasons, on="key", how="anti")
    good = good.join(_fingerprints(good, seats, rows, street_cards, con), on="key")

    # The same id twice in one batch: the first stands; an exact repeat is dropped and
    # counted, a different hand is a conflict.
    good = good.sort("key").with_columns(
        first_key=pl.col("key").first().over("hand_id"),
        first_line=pl.col("line").first().over("hand_id"),
        first_print=pl.col("fingerprint").first().over("hand_id"),
    )
    repeats = good.filter(pl.col("key") != pl.col("first_key"))
    conflicts = repeats.filter(pl.col("fingerprint") != pl.col("first_print")).select(
        "line", "hand_id",
        pl.format("hand {}: a different hand with this id is at line {}", pl.col("hand_id"),
                  pl.col("first_line")).alias("reason"),
        "raw",
    )
    good = good.filter(pl.col("key") == pl.col("first_key"))
    keys = good.select("key", "hand_id")
    n_seats = seats.group_by("key").agg(n_seats=pl.len())
    out_hands = good.join(n_seats, on="key").select(
        "hand_id",
        pl.col("session_id").fill_null(_session_default(raw.source)),
        pl.col("played").alias("played_at"),
        "variant", "ruleset", "point_value", "button", "n_seats", "extra",
        pl.lit(raw.source).alias("source"), "line", "fingerprint",
    )
    wide = rows.join(keys, on="key")
    dealt = street_cards.filter(pl.col("kind") == "dealt").group_by("key", "seat_index").agg(
        dealt=pl.len())
    out_seats = seats.join(keys, on="key")
    for row in ROWS:
        out_seats = out_seats.join(
            wide.filter(pl.col("kind") == row).select("key", "seat_index", pl.col("codes")
                                                      .alias(row)), on=["key", "seat_index"])
    out_seats = out_seats.join(dealt, on=["key", "seat_index"], how="left").select(
        "hand_id", "seat", "player", "fantasyland", "timed_out", "surrendered",
        "reported_points", pl.col("dealt").fill_null(13),
        *[pl.col(r).list.to_array(ROW_SIZES[r]).alias(r) for r in ROWS],
    )
    placements = street_cards.filter(pl.col("kind") != "dealt").join(keys, on="key").with_columns(
        kind_order=pl.col("kind").replace_strict(_KIND_ORDER, return_dtype=pl.Int8),
    ).sort("key", "seat_index", "street", "kind_order", "pos").select(
        "hand_id", "seat", "street",
        (pl.int_range(pl.len()) - pl.int_range(pl.len()).min().over("key", "seat_index") + 1)
        .alias("order"),
        pl.col("code").alias("card"),
        pl.col("kind").alias("row"),
    )
    rejects = pl.concat([rejected, conflicts]).select(
        pl.lit(raw.source).alias("source"), "line", "hand_id", "reason", "raw")
    return HandBatch(
        hands=out_hands.cast(HANDS_SCHEMA).sort("line"),  # type: ignore[arg-type]
        seats=out_seats.cast(SEATS_SCHEMA).sort("hand_id", "seat"),  # type: ignore[arg-type]
        placements=placements.cast(PLACEMENTS_SCHEMA),  # type: ignore[arg-type]
        rejects=pl.concat([raw.rejects, rejects.cast(REJECTS_SCHEMA)]).sort("line"),  # type: ignore[arg-type]
        duplicates=repeats.height - conflicts.height,
    )
