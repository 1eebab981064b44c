"""Each command's table: its columns, those a narrow terminal keeps, their short
headers, and the words that say what they mean (``--help``'s end, the line under a
table), from :data:`ofcstats.analysis.MEANINGS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ofcstats.analysis import MEANINGS


@dataclass(frozen=True)
class TableColumns:
    """The columns of a command's table, in order; those in ``wide_only`` only with
    ``--wide`` (CSV and JSON always give every column)."""

    columns: tuple[str, ...]
    wide_only: frozenset[str] = frozenset()
    when_any: frozenset[str] = frozenset()
    """Columns shown only in a table where they hold a value (the streets a variant has)."""
    kept: tuple[str, ...] = ()
    """The columns the table exists for: on a terminal too narrow for every column, the
    others are left out first (from the last)."""

    def shown(self, present: Sequence[str], wide: bool) -> list[str]:
        """The columns to show of those ``present``: with ``wide``, all of them, the
        declared ones first."""
        have = set(present)
        declared = [c for c in self.columns if c in have and (wide or c not in self.wide_only)]
        return declared + ([c for c in present if c not in self.columns] if wide else [])


TABLES = {
    "compare": TableColumns(
        ("skill_group", "ruleset", "hands", "skill_signal", "sd", "foul_rate",
         "fantasyland_entry_rate", "hands_to_tell_apart", "skill_rank", "mean_abs_points",
         "royalty_share"),
        frozenset({"hands", "skill_rank", "mean_abs_points", "royalty_share"}),
        kept=("ruleset", "skill_signal", "hands_to_tell_apart")),
    "players": TableColumns(
        ("player", "ruleset", "hands", "total", "mean", "sd", "ci_low", "ci_high", "money",
         "foul_rate", "fantasyland_entry_rate", "fantasyland_stay_rate", "scoop_rate",
         "hands_for_1"),
        frozenset({"ruleset", "total", "sd", "fantasyland_entry_rate",
                   "fantasyland_stay_rate", "scoop_rate", "hands_for_1"})),
    "player": TableColumns(
        ("ruleset", "hands", "total", "mean", "sd", "ci_low", "ci_high", "money", "foul_rate",
         "fantasyland_entry_rate", "fantasyland_stay_rate", "royalties_top",
         "royalties_middle", "royalties_bottom", "scoop_rate"),
        frozenset({"total", "sd", "fantasyland_stay_rate", "royalties_top",
                   "royalties_middle", "royalties_bottom", "scoop_rate"})),
    "review": TableColumns(
        ("player", "decisions", "mean_ev_loss", *(f"street_{n}" for n in range(1, 10)),
         "fantasyland_set", "total_ev_loss"),
        frozenset({"total_ev_loss"}), frozenset(f"street_{n}" for n in range(6, 10))),
    "mistakes": TableColumns(
        ("player", "hand_id", "seat", "street", "mistake", "ev_loss", "ev_loss_se", "chosen",
         "best"),
        frozenset({"seat", "ev_loss_se", "chosen", "best"})),
    "score": TableColumns(
        ("ruleset", "hand_id", "seat", "player", "points", "royalties", "royalty_top",
         "royalty_middle", "royalty_bottom", "royalty_points", "rows_top", "rows_middle",
         "rows_bottom", "wins_top", "wins_middle", "wins_bottom", "fouled", "scoops", "scooped",
         "fantasyland_next", "fantasyland_cards", "unit_points", "fantasyland_earned",
         "fantasyland_entered", "fantasyland_stayed", "what_if"),
        frozenset({"royalty_top", "royalty_middle", "royalty_bottom", "royalty_points",
                   "rows_top", "rows_middle", "rows_bottom", "wins_top", "wins_middle",
                   "wins_bottom", "scooped", "fantasyland_cards", "unit_points",
                   "fantasyland_earned", "fantasyland_entered", "fantasyland_stayed"})),
    "hands": TableColumns(
        ("hand_id", "player", "points", "money", "ev_loss", "mistakes", "fouled",
         "fantasyland", "fantasyland_entered", "royalties", "seat", "timed_out",
         "session_id", "played_at"),
        frozenset({"royalties", "seat", "timed_out", "session_id", "played_at"}),
        frozenset({"ev_loss", "mistakes"})),
    "situations": TableColumns(
        ("player", "situation", "decisions", "mean_ev_loss", "95% interval",
         "table_mean_ev_loss", "vs_table"),
        kept=("player", "situation", "mean_ev_loss", "table_mean_ev_loss", "vs_table")),
}
"""Each command's table: a new column needs only declaring here (and in ``wide_only``
unless a player reads it first)."""


HEADERS = {"skill_rank": "rank", "skill_group": "group", "skill_signal": "skill (95%)",
           "foul_rate": "fouls", "fantasyland_entry_rate": "fl_entry",
           "fantasyland_stay_rate": "fl_stay", "hands_to_tell_apart": "hands_to_tell",
           "mean_ev_loss": "ev_loss", "table_mean_ev_loss": "table_ev_loss",
           "fantasyland_set": "fl_set", "fantasyland_next": "fl_next",
           "fantasyland": "in_fl", "fantasyland_entered": "enters_fl",
           **{f"street_{n}": f"st{n}" for n in range(1, 10)}}
"""Short headers of a table that is not ``--wide`` (docs/command-line.md lists them)."""


def columns_help(*tables: str) -> str:
    """The end of a command's ``--help``: what the short headers of its tables
    (:data:`TABLES`) mean, in a player's words (:data:`MEANINGS`)."""
    said: dict[str, str] = {}
    for table in tables:
        for name in TABLES[table].columns:
            if name in MEANINGS and not name.startswith("street_"):
                said.setdefault(HEADERS.get(name, name), MEANINGS[name])
            elif name == "street_1":
                said.setdefault("st1 ... st9", "points given up per decision on that street")
    return "Columns: " + "; ".join(f"{header}: {meaning}" for header, meaning in said.items()) \
        + "."


BRIEF = {
    "skill_signal": "how much results follow skill", "hands_to_tell_apart": "to tell players "
    "apart", "skill_group": "same: not ranked apart", "skill_rank": "1: skill shows first",
    "foul_rate": "share fouled", "fantasyland_entry_rate": "into fantasyland",
    "fantasyland_stay_rate": "fantasyland kept", "mean_ev_loss": "points lost a decision",
    "table_mean_ev_loss": "the table's", "vs_table": "yours minus table's",
    "sd": "swing a hand", "fantasyland_set": "fantasyland sets",
    "fantasyland_next": "into fantasyland next", "hands_for_1": "hands to ±1 point",
    "fantasyland": "played in fantasyland", "fantasyland_entered": "earned fantasyland",
    **{f"street_{n}": "by street" for n in range(1, 10)},
}
"""The few words of :data:`MEANINGS` a terminal's line under a table has room for."""


def legend(names: Sequence[str], width: int, command: str,
           first: Sequence[str] = ()) -> str:
    """One line under a terminal's table: what its short headers mean, as many as fit in
    ``width`` columns (whole entries; those of ``first``, then the table's order), and
    where the rest is said; or nothing.

    >>> legend(["player", "fouls", "fl_entry"], 80, "players")
    'fouls: share fouled · fl_entry: into fantasyland · more: ofcstats players --help\\n'
    """
    full = {HEADERS.get(name, name): name for name in HEADERS}
    named = [full.get(header, header) for header in names]
    order = [n for n in first if n in named] + [n for n in named if n not in first]
    entries = []
    for name in order:
        if name.startswith("street_") and name != "street_1":
            continue  # st1... says it for every street
        if name in BRIEF:
            header = HEADERS.get(name, name)
            entries.append(f"{header}{'...' if name == 'street_1' else ''}: {BRIEF[name]}")
    tail = f"more: ofcstats {command} --help"
    line = ""
    for entry in entries:
        longer = f"{line} · {entry}" if line else entry
        if len(f"{longer} · {tail}") > width:
            break
        line = longer
    return f"{line} · {tail}\n" if line else ""
