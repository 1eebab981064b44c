"""Scoring: final boards in, points under every ruleset out (RULES.md §2-§4, §6).

One Polars plan scores any number of rulesets. The stages, each a function from
``LazyFrame`` to ``LazyFrame``:

1. :func:`row_strengths` evaluates every row once (numpy lookup tables).
2. :func:`fouls` applies the ordering rule, 3-card top against 5-card middle included.
3. :func:`table_positions` finds each seat's opponents as row positions in the frame.
4. :func:`naturals` finds the 13-card naturals (three straights, three flushes, six
   pairs, a dragon).
5. :func:`head_to_head` compares each seat with each opponent once and keeps the
   ruleset-independent counts the scoring formula is linear in: net rows, net
   majorities, net scoops, fouls, surrenders, rows that beat the whole table.
6. :func:`royalty_exchange` settles royalties per distinct royalty table (netted
   pairwise, the 2♠ row doubled where the ruleset says so).
7. :func:`ruleset_results` turns those counts into points for each ruleset with a
   handful of multiplications, then stacks the rulesets.

Every ruleset shares stages 1-5; a ruleset adds only arithmetic. Input is one row per
seat (see :data:`SEAT_SCHEMA`); output one row per hand, seat and ruleset.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from ofcstats import evaluate
from ofcstats.cards import TWO_OF_SPADES
from ofcstats.errors import RulesetError
from ofcstats.evaluate import Category
from ofcstats.records import REJECTS_SCHEMA, HandBatch
from ofcstats.rules.load import load_ruleset
from ofcstats.rules.model import Naturals, RoyaltyTable, Ruleset
from ofcstats.variants import Variant

MAX_SEATS = 4
ROWS = ("top", "middle", "bottom")

SEAT_SCHEMA: dict[str, pl.DataType] = {
    "hand_id": pl.String(),
    "variant": pl.String(),
    "seat": pl.Int8(),
    "player": pl.String(),
    "fantasyland": pl.Boolean(),
    "timed_out": pl.Boolean(),
    "surrendered": pl.Boolean(),
    "top": pl.Array(pl.UInt8, 3),
    "middle": pl.Array(pl.UInt8, 5),
    "bottom": pl.Array(pl.UInt8, 5),
}
"""The seats frame: one row per seat of a hand, final rows as card codes."""

RESULT_SCHEMA: dict[str, pl.DataType] = {
    "ruleset": pl.String(),
    "hand_id": pl.String(),
    "seat": pl.Int8(),
    "player": pl.String(),
    "points": pl.Int32(),
    "royalties": pl.Int16(),  # collected from all opponents, after spade doubling; 0 if fouled
    "royalty_top": pl.Int16(),
    "royalty_middle": pl.Int16(),
    "royalty_bottom": pl.Int16(),
    "rows_top": pl.Int8(),  # rows won minus rows lost, summed over opponents
    "rows_middle": pl.Int8(),
    "rows_bottom": pl.Int8(),
    "fouled": pl.Boolean(),
    "scoops": pl.Int8(),  # opponents this seat beat in all three rows (a fouled one included)
    "scooped": pl.Int8(),  # opponents that beat this seat in all three rows
    "fantasyland_next": pl.Boolean(),
    "fantasyland_cards": pl.Int8(),
}
"""One row per hand, seat and ruleset."""

# Natural bits (RULES.md §4, 13-card Chinese poker).
_THREE_STRAIGHTS, _THREE_FLUSHES, _SIX_PAIRS, _DRAGON = 1, 2, 4, 8


def _strength_expr(column: str, width: int) -> pl.Expr:
    fn = evaluate.strength3 if width == 3 else evaluate.strength5
    return pl.col(column).map_batches(
        lambda s: pl.Series(fn(s.to_numpy()), dtype=pl.UInt16), return_dtype=pl.UInt16
    )


def row_strengths(seats: pl.LazyFrame) -> pl.LazyFrame:
    """Add ``s_top``, ``s_middle``, ``s_bottom``: one comparable strength per row."""
    return seats.with_columns(
        s_top=_strength_expr("top", 3),
        s_middle=_strength_expr("middle", 5),
        s_bottom=_strength_expr("bottom", 5),
        spade_row=pl.when(pl.col("top").arr.contains(TWO_OF_SPADES)).then(1)
        .when(pl.col("middle").arr.contains(TWO_OF_SPADES)).then(2)
        .when(pl.col("bottom").arr.contains(TWO_OF_SPADES)).then(3)
        .otherwise(0).cast(pl.Int8),
    )


def fouls(seats: pl.LazyFrame) -> pl.LazyFrame:
    """Add ``fouled``: bottom weaker than middle or middle weaker than top (RULES.md §2).

    Equal rows are legal; the strength scale already ranks a top row's missing kickers
    below any card, so ``QQ5`` under ``QQ532`` is legal and ``QQ6`` over it fouls.
    """
    return seats.with_columns(
        fouled=(pl.col("s_top") > pl.col("s_middle")) | (pl.col("s_middle") > pl.col("s_bottom"))
    )


def table_positions(seats: pl.LazyFrame) -> pl.LazyFrame:
    """Sort by hand and seat; add ``n_seats`` and ``opp1..opp3``, opponents' row positions.

    Opponent ``k`` of the seat in slot ``s`` sits in slot ``(s + k) % n``; for ``k >= n``
    the position points at the seat itself and ``has_opp{k}`` is false.
    """
    index = pl.int_range(pl.len(), dtype=pl.UInt32)
    hand = pl.col("hand_id")
    positioned = seats.sort("hand_id", "seat").with_columns(_row=index).with_columns(
        _first=pl.when(hand != hand.shift(1)).then(pl.col("_row")).forward_fill().fill_null(0),
        _last=pl.when(hand != hand.shift(-1)).then(pl.col("_row")).backward_fill()
        .fill_null(pl.len() - 1),
    ).with_columns(
        n_seats=(pl.col("_last") - pl.col("_first") + 1).cast(pl.UInt8),
        _slot=(pl.col("_row") - pl.col("_first")).cast(pl.UInt32),
    )
    n = pl.col("n_seats").cast(pl.UInt32)
    return positioned.with_columns(
        **{f"opp{k}": pl.when(k < n).then(pl.col("_first") + (pl.col("_slot") + k) % n)
           .otherwise(pl.col("_row")) for k in range(1, MAX_SEATS)},
        **{f"has_opp{k}": k < n for k in range(1, MAX_SEATS)},
    )


def _natural_bits(boards: pl.Series) -> pl.Series:
    top = boards.struct.field("top").to_numpy().astype(np.int16)
    middle = boards.struct.field("middle").to_numpy().astype(np.int16)
    bottom = boards.struct.field("bottom").to_numpy().astype(np.int16)
    s_middle = boards.struct.field("s_middle").to_numpy()
    s_bottom = boards.struct.field("s_bottom").to_numpy()
    cat_mid, cat_bot = evaluate.category(s_middle), evaluate.category(s_bottom)
    straights = (Category.STRAIGHT, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH)
    flushes = (Category.FLUSH, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH)
    ranks = np.sort(top >> 2, axis=1)
    distinct = (ranks[:, 0] != ranks[:, 1]) & (ranks[:, 1] != ranks[:, 2])
    run = distinct & (ranks[:, 2] - ranks[:, 0] == 2)
    wheel = (ranks[:, 0] == 0) & (ranks[:, 1] == 1) & (ranks[:, 2] == 12)  # A-2-3
    top_straight = run | wheel
    suits = top & 3
    top_flush = (suits[:, 0] == suits[:, 1]) & (suits[:, 1] == suits[:, 2])
    three_straights = top_straight & np.isin(cat_mid, straights) & np.isin(cat_bot, straights)
    three_flushes = top_flush & np.isin(cat_mid, flushes) & np.isin(cat_bot, flushes)
    all_ranks = np.concatenate([top, middle, bottom], axis=1) >> 2
    counts = np.stack([(all_ranks == r).sum(axis=1) for r in range(13)], axis=1)
    six_pairs = (counts // 2).sum(axis=1) >= 6
    dragon = (counts == 1).all(axis=1)
    bits = (three_straights * _THREE_STRAIGHTS + three_flushes * _THREE_FLUSHES
            + six_pairs * _SIX_PAIRS + dragon * _DRAGON)
    return pl.Series(bits.astype(np.uint8))


def naturals(seats: pl.LazyFrame) -> pl.LazyFrame:
    """Add ``natural_bits``: which 13-card naturals a seat holds (0 outside ``chinese-13``)."""
    boards = pl.struct("top", "middle", "bottom", "s_middle", "s_bottom")
    bits = boards.map_batches(_natural_bits, return_dtype=pl.UInt8)
    return seats.with_columns(
        natural_bits=pl.when(pl.col("variant") == Variant.CHINESE_13.value).then(bits)
        .otherwise(pl.lit(0, dtype=pl.UInt8))
    )


def _opp(column: str, k: int) -> pl.Expr:
    return pl.col(column).gather(pl.col(f"opp{k}"))


def _natural_mask(naturals_rule: Naturals) -> int:
    return (
        (naturals_rule.three_straights > 0) * _THREE_STRAIGHTS
        + (naturals_rule.three_flushes > 0) * _THREE_FLUSHES
        + (naturals_rule.six_pairs > 0) * _SIX_PAIRS
        + (naturals_rule.dragon > 0) * _DRAGON
    )


def _out_of_showdown(natural_mask: int, k: int | None = None) -> pl.Expr:
    """A seat that surrendered, or holds a natural the ruleset pays, shows down with no one."""
    surrendered = pl.col("surrendered") if k is None else _opp("surrendered", k)
    bits = pl.col("natural_bits") if k is None else _opp("natural_bits", k)
    if natural_mask == 0:
        return surrendered
    return surrendered | ((bits & natural_mask) != 0)


def _pair_terms(k: int) -> dict[str, pl.Expr]:
    """Ruleset-independent outcome of the seat against its k-th opponent (both showing down)."""
    mine_alive = ~pl.col("fouled")
    theirs_alive = ~_opp("fouled", k)
    both = mine_alive & theirs_alive
    wins = [pl.col(f"s_{r}") > _opp(f"s_{r}", k) for r in ROWS]
    losses = [pl.col(f"s_{r}") < _opp(f"s_{r}", k) for r in ROWS]
    # Against a fouled hand a live one wins every row (RULES.md §2).
    row_sign = {
        r: pl.when(both).then(w.cast(pl.Int8) - lo.cast(pl.Int8))
        .otherwise(mine_alive.cast(pl.Int8) - theirs_alive.cast(pl.Int8))
        for r, w, lo in zip(ROWS, wins, losses, strict=True)
    }
    w = pl.sum_horizontal(*[x.cast(pl.Int8) for x in wins])
    lo = pl.sum_horizontal(*[x.cast(pl.Int8) for x in losses])
    zero = pl.lit(0, dtype=pl.Int8)
    return {
        "d_rows": pl.when(both).then(w - lo).otherwise(zero),
        "d_majority": pl.when(both).then((w >= 2).cast(pl.Int8) - (lo >= 2).cast(pl.Int8))
        .otherwise(zero),
        "d_scoop": pl.when(both).then((w == 3).cast(pl.Int8) - (lo == 3).cast(pl.Int8))
        .otherwise(zero),
        "d_foul": mine_alive.cast(pl.Int8) - theirs_alive.cast(pl.Int8),
        "scoops": pl.when(both).then(w == 3).otherwise(mine_alive & ~theirs_alive).cast(pl.Int8),
        "scooped": pl.when(both).then(lo == 3).otherwise(~mine_alive & theirs_alive)
        .cast(pl.Int8),
        **{f"rows_{r}": row_sign[r] for r in ROWS},
        **{f"beat_{r}": row_sign[r] > 0 for r in ROWS},
    }


_COUNT_TERMS = ("d_rows", "d_majority", "d_scoop", "d_foul", "scoops", "scooped",
                "rows_top", "rows_middle", "rows_bottom")


def head_to_head(seats: pl.LazyFrame, natural_masks: Iterable[int]) -> pl.LazyFrame:
    """Add the per-seat sums over opponents that every ruleset's points are linear in.

    For each natural mask ``m`` (which naturals the ruleset pays; 0 for none) the
    columns ``{term}_m{m}`` sum over the opponents the seat shows down with:
    ``d_rows`` (rows won minus lost), ``d_majority``, ``d_scoop``, ``d_foul`` (opponents'
    fouls minus own), ``scoops``/``scooped``, ``rows_{row}``; ``beat_all_m{m}`` counts
    rows in which the seat beats every showdown opponent, ``table_beat_m{m}`` the same
    count summed over those opponents; ``surrender`` nets surrender payments.
    """
    masks = sorted(set(natural_masks))
    frame = seats.with_columns(
        **{f"t{k}_{name}": expr for k in range(1, MAX_SEATS)
           for name, expr in _pair_terms(k).items()}
    )
    columns: dict[str, pl.Expr] = {}
    for m in masks:
        mine_in = ~_out_of_showdown(m)
        show = [pl.col(f"has_opp{k}") & mine_in & ~_out_of_showdown(m, k)
                for k in range(1, MAX_SEATS)]
        for name in _COUNT_TERMS:
            columns[f"{name}_m{m}"] = pl.sum_horizontal(
                *[pl.when(show[k - 1]).then(pl.col(f"t{k}_{name}")).otherwise(0)
                  for k in range(1, MAX_SEATS)]
            ).cast(pl.Int16)
        beats_all = [
            mine_in & ~pl.col("fouled") & pl.all_horizontal(
                *[~show[k - 1] | pl.col(f"t{k}_beat_{r}") for k in range(1, MAX_SEATS)]
            )
            for r in ROWS
        ]
        columns[f"beat_all_m{m}"] = pl.sum_horizontal(*[b.cast(pl.Int8) for b in beats_all])
        columns[f"showdown_opps_m{m}"] = pl.sum_horizontal(
            *[s.cast(pl.Int8) for s in show]
        )
    frame = frame.with_columns(**columns)
    opponents_surrendered = pl.sum_horizontal(
        *[(pl.col(f"has_opp{k}") & _opp("surrendered", k)).cast(pl.Int8)
          for k in range(1, MAX_SEATS)]
    )
    opponents_standing = (pl.col("n_seats").cast(pl.Int8) - 1) - opponents_surrendered
    extra: dict[str, pl.Expr] = {
        # A surrendered seat pays every opponent that did not surrender (RULES.md §5).
        "surrender": pl.when(pl.col("surrendered")).then(-opponents_standing)
        .otherwise(opponents_surrendered).cast(pl.Int16),
    }
    for m in masks:
        beat = f"beat_all_m{m}"
        mine_in = ~_out_of_showdown(m)
        # Table bonus: each row that beats the table is collected from every showdown
        # opponent; the seat pays each opponent's such rows in turn.
        paid = pl.sum_horizontal(
            *[pl.when(pl.col(f"has_opp{k}") & mine_in & ~_out_of_showdown(m, k))
              .then(_opp(beat, k).cast(pl.Int16)).otherwise(0) for k in range(1, MAX_SEATS)]
        )
        extra[f"table_bonus_m{m}"] = (
            pl.col(beat).cast(pl.Int16) * pl.col(f"showdown_opps_m{m}").cast(pl.Int16) - paid
        ).cast(pl.Int16)
    return frame.with_columns(**extra)


@dataclass(frozen=True)
class _RoyaltyKey:
    table: RoyaltyTable
    spade_bonus: bool
    natural_mask: int

    @property
    def suffix(self) -> str:
        return f"{abs(hash(self.table)) % 10**8}_{int(self.spade_bonus)}_m{self.natural_mask}"


def _royalty_key(ruleset: Ruleset) -> _RoyaltyKey:
    return _RoyaltyKey(ruleset.royalties, ruleset.spade_bonus, _natural_mask(ruleset.naturals))


def _lookup(values: np.ndarray, column: str) -> pl.Expr:
    table = pl.Series(values.astype(np.int16))
    return pl.col(column).map_batches(
        lambda s: pl.Series(table.to_numpy()[s.to_numpy()], dtype=pl.Int16),
        return_dtype=pl.Int16,
    )


def royalty_exchange(seats: pl.LazyFrame, keys: Iterable[_RoyaltyKey]) -> pl.LazyFrame:
    """Per distinct royalty table: what each seat collects per row and its net royalty points.

    A fouled or out-of-showdown seat has no royalties but still pays its showdown
    opponents'. Pairwise exchange is netted (RULES.md §4); with the spade bonus the row
    holding the 2♠ (in either seat of the pair) is exchanged twice over.
    """
    frame = seats
    for key in {k for k in keys if not k.table.is_empty}:
        sfx = key.suffix
        values = key.table.values()
        m = key.natural_mask
        mine_in = ~_out_of_showdown(m)
        frame = frame.with_columns(
            **{f"own_{r}_{sfx}": pl.when(~pl.col("fouled") & mine_in)
               .then(_lookup(values[i], f"s_{r}")).otherwise(0).cast(pl.Int16)
               for i, r in enumerate(ROWS)}
        )
        collected = {r: [] for r in ROWS}
        paid = {r: [] for r in ROWS}
        for k in range(1, MAX_SEATS):
            show = pl.col(f"has_opp{k}") & mine_in & ~_out_of_showdown(m, k)
            for i, r in enumerate(ROWS):
                factor: pl.Expr | int = 1
                if key.spade_bonus:
                    spade_here = (pl.col("spade_row") == i + 1) | (
                        _opp("spade_row", k) == i + 1)
                    factor = pl.when(spade_here).then(2).otherwise(1)
                mine = pl.col(f"own_{r}_{sfx}") * factor
                theirs = _opp(f"own_{r}_{sfx}", k) * factor
                collected[r].append(pl.when(show).then(mine).otherwise(0))
                paid[r].append(pl.when(show).then(theirs).otherwise(0))
        frame = frame.with_columns(
            **{f"collect_{r}_{sfx}": pl.sum_horizontal(*collected[r]).cast(pl.Int16)
               for r in ROWS},
            **{f"pay_{r}_{sfx}": pl.sum_horizontal(*paid[r]).cast(pl.Int16) for r in ROWS},
        )
    return frame


def _natural_value(naturals_rule: Naturals, bits: pl.Expr) -> pl.Expr:
    values = [
        pl.when((bits & flag) != 0).then(value).otherwise(0)
        for flag, value in ((_THREE_STRAIGHTS, naturals_rule.three_straights),
                            (_THREE_FLUSHES, naturals_rule.three_flushes),
                            (_SIX_PAIRS, naturals_rule.six_pairs), (_DRAGON, naturals_rule.dragon))
    ]
    return pl.max_horizontal(*values)


def _natural_points(naturals_rule: Naturals) -> pl.Expr:
    """Naturals are paid by every opponent at once; two naturals net against each other."""
    mine = _natural_value(naturals_rule, pl.col("natural_bits"))
    terms = [
        pl.when(pl.col(f"has_opp{k}") & ((mine > 0) | (_natural_value(
            naturals_rule, _opp("natural_bits", k)) > 0)))
        .then(mine - _natural_value(naturals_rule, _opp("natural_bits", k))).otherwise(0)
        for k in range(1, MAX_SEATS)
    ]
    return pl.sum_horizontal(*terms)


def _fantasyland(ruleset: Ruleset) -> dict[str, pl.Expr]:
    """``fantasyland_next`` and ``fantasyland_cards`` by the ruleset's policy (RULES.md §6).

    Entry for a seat not in fantasyland, stay for one in it; the repeat limit needs the
    session and is applied there.
    """
    policy = ruleset.fantasyland
    limits = policy.thresholds()
    has_fantasyland = pl.col("variant") != Variant.CHINESE_13.value
    if limits["entry"] is None:
        return {"fantasyland_next": pl.lit(False), "fantasyland_cards": pl.lit(0, pl.Int8)}
    alive = ~pl.col("fouled") & ~pl.col("surrendered") & has_fantasyland
    entry = alive & ~pl.col("fantasyland") & (pl.col("s_top") >= limits["entry"])
    stay_rows = [pl.col(f"s_{row}") >= limits[f"stay_{row}"] for row in ROWS
                 if limits[f"stay_{row}"] is not None]
    stay = alive & pl.col("fantasyland") & pl.any_horizontal(*stay_rows) if stay_rows \
        else pl.lit(False)
    base = pl.when(pl.col("variant") == Variant.PINEAPPLE.value).then(14).otherwise(13)
    entry_cards: pl.Expr = base
    for variant in (Variant.PINEAPPLE, Variant.OFC_CLASSIC):
        steps = policy.entry_card_steps(variant)
        if not steps:
            continue
        chosen: pl.Expr = base
        for threshold, cards in steps:
            chosen = pl.when(pl.col("s_top") >= threshold).then(cards).otherwise(chosen)
        on_variant = pl.col("variant") == Variant.PINEAPPLE.value
        if variant is Variant.PINEAPPLE:
            entry_cards = pl.when(on_variant).then(chosen).otherwise(entry_cards)
        else:
            entry_cards = pl.when(~on_variant).then(chosen).otherwise(entry_cards)
    return {
        "fantasyland_next": entry | stay,
        "fantasyland_cards": pl.when(entry).then(entry_cards).when(stay).then(base)
        .otherwise(0).cast(pl.Int8),
    }


def ruleset_results(seats: pl.LazyFrame, rulesets: Sequence[Ruleset]) -> pl.LazyFrame:
    """One row per seat and ruleset: points and the facts behind them."""
    frames = []
    for ruleset in rulesets:
        h = ruleset.head_to_head
        m = _natural_mask(ruleset.naturals)
        key = _royalty_key(ruleset)
        points = (
            h.row * pl.col(f"d_rows_m{m}").cast(pl.Int32)
            + h.majority * pl.col(f"d_majority_m{m}").cast(pl.Int32)
            + h.scoop * pl.col(f"d_scoop_m{m}").cast(pl.Int32)
            + ruleset.foul_points * pl.col(f"d_foul_m{m}").cast(pl.Int32)
            + ruleset.surrender_points * pl.col("surrender").cast(pl.Int32)
        )
        if h.table_bonus:
            points = points + h.table_bonus * pl.col(f"table_bonus_m{m}").cast(pl.Int32)
        if ruleset.naturals.played:
            points = points + _natural_points(ruleset.naturals).cast(pl.Int32)
        if key.table.is_empty:
            royalty_rows = {r: pl.lit(0, dtype=pl.Int16) for r in ROWS}
        else:
            sfx = key.suffix
            royalty_rows = {r: pl.col(f"collect_{r}_{sfx}") for r in ROWS}
            for r in ROWS:
                points = points + (pl.col(f"collect_{r}_{sfx}").cast(pl.Int32)
                                   - pl.col(f"pay_{r}_{sfx}").cast(pl.Int32))
        frames.append(
            seats.select(
                pl.lit(ruleset.name).alias("ruleset"),
                "hand_id",
                "seat",
                "player",
                points.alias("points"),
                pl.sum_horizontal(*royalty_rows.values()).cast(pl.Int16).alias("royalties"),
                *[e.cast(pl.Int16).alias(f"royalty_{r}") for r, e in royalty_rows.items()],
                *[pl.col(f"rows_{r}_m{m}").cast(pl.Int8).alias(f"rows_{r}") for r in ROWS],
                "fouled",
                pl.col(f"scoops_m{m}").cast(pl.Int8).alias("scoops"),
                pl.col(f"scooped_m{m}").cast(pl.Int8).alias("scooped"),
                **_fantasyland(ruleset),
            )
        )
    return pl.concat(frames, how="vertical").cast(RESULT_SCHEMA)  # type: ignore[arg-type]


def prepare(seats: pl.LazyFrame | pl.DataFrame, rulesets: Sequence[Ruleset]) -> pl.LazyFrame:
    """Stages 1-6: everything the rulesets share, as one lazy plan."""
    lf = seats.lazy()
    lf = row_strengths(lf)
    lf = fouls(lf)
    lf = table_positions(lf)
    lf = naturals(lf)
    lf = head_to_head(lf, [0, *(_natural_mask(r.naturals) for r in rulesets)])
    return royalty_exchange(lf, [_royalty_key(r) for r in rulesets])


def score(seats: pl.LazyFrame | pl.DataFrame, rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """Score every hand in ``seats`` under every ruleset: the whole pipeline, collected once."""
    if not rulesets or (isinstance(seats, pl.DataFrame) and seats.is_empty()):
        return pl.DataFrame(schema=RESULT_SCHEMA)
    prepared = prepare(seats, rulesets)
    return ruleset_results(prepared, rulesets).collect()


DEFAULT_RULESET = "american"


def score_batch(batch: HandBatch, rulesets: Sequence[Ruleset] | None = None) -> ScoredBatch:
    """Score checked hands: under ``rulesets`` when given, else each hand under its own
    ``ruleset`` field (``american`` when it has none).

    A hand naming a ruleset that does not exist is not scored; it comes back among
    ``rejects`` with the reason.
    """
    seats = batch.seats_for_scoring()
    if rulesets is not None:
        return ScoredBatch(results=_in_log_order(score(seats, rulesets), batch, rulesets),
                           rejects=_no_rejects())
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
        frames.append(score(seats.join(group.select("hand_id"), on="hand_id", how="semi"),
                            [ruleset]))
    results = pl.concat(frames) if frames else score(seats.clear(), [])
    return ScoredBatch(
        results=_in_log_order(results, batch, []),
        rejects=pl.concat(rejects).cast(REJECTS_SCHEMA) if rejects else _no_rejects(),  # type: ignore[arg-type]
    )


def _in_log_order(results: pl.DataFrame, batch: HandBatch,
                  rulesets: Sequence[Ruleset]) -> pl.DataFrame:
    """Hands in the order the logs list them, rulesets in the order asked, then seats."""
    order = batch.hands.select("hand_id", _hand=pl.int_range(pl.len()))
    ranks = {r.name: i for i, r in enumerate(rulesets)}
    return results.join(order, on="hand_id", how="left").with_columns(
        _ruleset=pl.col("ruleset").replace_strict(ranks, default=0, return_dtype=pl.Int32),
    ).sort("_hand", "_ruleset", "seat").drop("_hand", "_ruleset")


def _no_rejects() -> pl.DataFrame:
    return pl.DataFrame(schema=REJECTS_SCHEMA)


@dataclass(frozen=True)
class ScoredBatch:
    """Results, one row per hand, seat and ruleset; and the hands that could not be scored."""

    results: pl.DataFrame
    rejects: pl.DataFrame
