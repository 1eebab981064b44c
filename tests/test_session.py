"""Session logic: play order, games, fantasyland repeat limits, money and the loss cap."""

from __future__ import annotations

import polars as pl
import pytest

from ofcstats import session
from ofcstats.records import hands_of
from ofcstats.rules import load_ruleset
from ofcstats.rules.model import Ruleset


def hands_frame(fantasyland_hands: list[bool], n_seats: int = 2,
                played_at: list[str | None] | None = None,
                timed_out: list[bool] | None = None) -> pl.DataFrame:
    n = len(fantasyland_hands)
    return pl.DataFrame({
        "timed_out_hand": timed_out or [False] * n,
        "hand_id": [f"h{i}" for i in range(n)],
        "session_id": ["s1"] * n,
        "played_at": played_at or [None] * n,
        "source": ["log.jsonl"] * n,
        "line": list(range(1, n + 1)),
        "n_seats": [n_seats] * n,
        "fantasyland_hand": fantasyland_hands,
        "point_value": [None] * n,
        "variant": ["pineapple"] * n,
        "stake": [1.0] * n,
    }, schema_overrides={"played_at": pl.String, "point_value": pl.Float64}).with_columns(
        pl.col("played_at").str.to_datetime(time_zone="UTC"))


def test_a_hand_is_in_fantasyland_or_timed_out_when_any_of_its_seats_is() -> None:
    seats = pl.DataFrame({
        "hand_id": ["h1", "h1", "h2", "h2", "h2", "h3", "h3"],
        "session_id": ["s1"] * 7,
        "fantasyland": [False, True, False, False, False, None, False],
        "timed_out": [False, False, False, False, True, False, False],
    })
    hands = hands_of(seats, ["session_id"])
    assert hands.rows() == [("h1", "s1", True, False), ("h2", "s1", False, True),
                            ("h3", "s1", False, False)]
    # The same hands whether a hand's seats are together or apart, and none from no seats.
    apart = hands_of(seats.sort("fantasyland", "timed_out", nulls_last=True), ["session_id"])
    assert apart.sort("hand_id").equals(hands)
    assert hands_of(seats.clear(), ["session_id"]).columns == hands.columns


def test_a_game_is_one_button_orbit_plus_its_fantasyland_hands() -> None:
    order = session.hand_order(hands_frame(
        [False, False, True, False, True, True, False, False])).collect()
    assert order["game"].to_list() == [0, 0, 0, 1, 1, 1, 1, 2]
    three = session.hand_order(hands_frame([False] * 7, n_seats=3)).collect()
    assert three["game"].to_list() == [0, 0, 0, 1, 1, 1, 2]


def test_no_hands_have_no_games() -> None:
    for hands in (hands_frame([]), hands_frame([True])):
        order = session.hand_order(hands).collect()
        assert order["game"].to_list() == [0] * hands.height


def test_play_order_follows_played_at_then_the_log() -> None:
    frame = hands_frame([False] * 3, played_at=["2026-01-01T10:02:00Z",
                                                 "2026-01-01T10:01:00Z", None])
    order = session.hand_order(frame).collect()
    assert order["hand_id"].to_list() == ["h1", "h0", "h2"]


def _streaks(flags: list[bool], n_seats: int = 2,
             timed_out: list[bool] | None = None) -> pl.DataFrame:
    hands = hands_frame(flags, n_seats=n_seats, timed_out=timed_out)
    seats = pl.DataFrame({"hand_id": hands["hand_id"], "seat": [1] * len(flags),
                          "player": ["ann"] * len(flags), "fantasyland": flags})
    order = session.hand_order(hands).collect()
    return session.fantasyland_streaks(seats, order).sort("order")


def test_fantasyland_streak_counts_hands_in_a_row_in_fantasyland() -> None:
    streaks = _streaks([False, True, True, True, False, True])
    assert streaks["streak"].to_list() == [0, 1, 2, 3, 0, 1]


@pytest.mark.parametrize(("ruleset", "kept"), [("american", [True, False, False]),
                                               ("mercier-deeb", [True, True, True])])
def test_standard_allows_one_repeat_in_a_row_unlimited_any(ruleset: str, kept: list[bool]
                                                           ) -> None:
    # Hand 0 earns entry; hands 1-3 are played in fantasyland and each earns a stay.
    capped = _capped([False, True, True, True], [load_ruleset(ruleset)])
    assert capped["fantasyland_entered"].to_list() == [True, False, False, False]
    # Hand 1 is the first fantasyland: staying makes hand 2 the one repeat standard
    # allows; hand 2 may not stay again. Unlimited keeps every stay.
    assert capped["fantasyland_stayed"].to_list()[1:] == kept
    assert capped.filter(~pl.col("fantasyland_next"))["fantasyland_cards"].to_list() == \
        [0] * kept.count(False)


def _games(flags: list[bool], n_seats: int = 2) -> list[int]:
    return session.hand_order(hands_frame(flags, n_seats=n_seats)).collect()["game"].to_list()


def _capped(flags: list[bool], rulesets: list[Ruleset], n_seats: int = 2,
            timed_out: list[bool] | None = None) -> pl.DataFrame:
    """Every hand earns fantasyland for the next (entry or stay); one player, seat 1."""
    streaks = _streaks(flags, n_seats, timed_out)
    n = len(flags)
    results = pl.concat([pl.DataFrame({
        "ruleset": [r.name] * n, "hand_id": streaks["hand_id"], "seat": [1] * n,
        "fantasyland_next": [True] * n, "fantasyland_cards": [13] * n,
    }, schema_overrides={"fantasyland_cards": pl.Int8}) for r in rulesets])
    return session.apply_repeat_limits(results, streaks, rulesets)


def _with_policy(policy: str) -> Ruleset:
    from dataclasses import replace  # noqa: PLC0415

    from ofcstats.rules import load_policy  # noqa: PLC0415
    return replace(load_ruleset("american"), name=f"american-{policy}",
                   fantasyland=load_policy(policy))


def test_a_change_of_the_logged_stakes_ends_the_game_its_fantasyland_repeats_count_in(
        ) -> None:
    """Games are what happened at the table (docs/rules.md §5): the stakes change before
    hand 3, so the fantasyland on hand 4 is the new game's first and may stay, where in
    one game (the test below) "one repeat per game" refuses it."""
    flags = [False, True, True, False, True, False]
    ruleset = _with_policy("standard")
    stakes = {"same": [1.0] * 6, "changed": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]}
    stayed = {}
    for name, stake in stakes.items():
        hands = hands_frame(flags, n_seats=4).with_columns(stake=pl.Series(stake))
        seats = pl.DataFrame({"hand_id": hands["hand_id"], "seat": [1] * 6,
                              "player": ["ann"] * 6, "fantasyland": flags})
        results = pl.DataFrame({
            "ruleset": [ruleset.name] * 6, "hand_id": hands["hand_id"], "seat": [1] * 6,
            "fantasyland_next": [True] * 6, "fantasyland_cards": [13] * 6,
        }, schema_overrides={"fantasyland_cards": pl.Int8})
        limited = session.limit_repeats(results, seats, hands, [ruleset])
        stayed[name] = limited["fantasyland_stayed"].to_list()
    assert stayed == {"same": [False, True, False, False, False, False],
                      "changed": [False, True, False, False, True, False]}


def test_fantasyland_repeat_scope_game_counts_every_repeat_in_the_game() -> None:
    """A player repeats (hand 2), leaves (hand 3 earns no stay: it is the second repeat),
    is out on hand 4, re-enters and plays fantasyland on hand 5, all in one game of four
    seats. "One repeat per game" refuses a stay on hand 5; "one in a row" allows it."""
    flags = [False, True, True, False, True, False]
    game, streak = _with_policy("standard"), _with_policy("standard-streak")
    capped = _capped(flags, [game, streak], n_seats=4)
    assert _games(flags, n_seats=4) == [0] * 6
    by = {name: frame for (name,), frame in capped.partition_by("ruleset", as_dict=True)
          .items()}
    assert by[game.name]["fantasyland_stayed"].to_list() == [False, True, False, False,
                                                             False, False]
    assert by[streak.name]["fantasyland_stayed"].to_list() == [False, True, False, False,
                                                               True, False]
    # Both readings let the player enter again on hand 3 (a seat out of fantasyland).
    assert by[game.name]["fantasyland_entered"].to_list()[3] is True


def test_fantasyland_repeat_scope_game_starts_afresh_in_the_next_game() -> None:
    """Two seats: hands 0-3 are one game (two button moves, two fantasyland hands); the
    repeat on hand 2 uses the game's one; in the next game (hand 4 on) the player may
    repeat again."""
    flags = [False, True, True, False, False, True, True]
    assert _games(flags) == [0, 0, 0, 0, 1, 1, 1]
    capped = _capped(flags, [_with_policy("standard")])
    assert capped["fantasyland_stayed"].to_list() == [False, True, False, False, False,
                                                      True, False]


def test_fantasyland_repeat_scope_is_validated() -> None:
    from ofcstats.errors import RulesetError  # noqa: PLC0415
    from ofcstats.rules.load import policy_from  # noqa: PLC0415
    with pytest.raises(RulesetError, match=r"x.toml: repeat_scope = 'session': use one of "
                                           r"game, streak"):
        policy_from({"entry": "QQ", "stay": {}, "repeat_limit": 1, "repeat_scope": "session"},
                    "x.toml")
    assert policy_from({"entry": "QQ", "stay": {}, "repeat_limit": 1},
                       "y.toml").repeat_scope == "game"


def test_a_timeout_ends_the_game_right_after_its_hand() -> None:
    """Three seats: a timeout on the second hand ends the game there; the next game is a
    full orbit again."""
    order = session.hand_order(hands_frame(
        [False] * 6, n_seats=3, timed_out=[False, True, False, False, False, False])
    ).collect()
    assert order["game"].to_list() == [0, 0, 1, 1, 1, 2]


def test_a_timeout_with_fantasyland_owed_ends_the_game_after_every_fantasyland() -> None:
    """A timeout on hand 1 while another player earned fantasyland: the game goes on
    through the fantasyland hands (2 and 3, a stay), and ends after them."""
    order = session.hand_order(hands_frame(
        [False, False, True, True, False, False], n_seats=3,
        timed_out=[False, True, False, False, False, False])).collect()
    assert order["game"].to_list() == [0, 0, 0, 0, 1, 1]
    # A timeout in a fantasyland hand ends the game after it, as in any other.
    order = session.hand_order(hands_frame(
        [False, True, False, False, False], n_seats=3,
        timed_out=[False, True, False, False, False])).collect()
    assert order["game"].to_list() == [0, 0, 1, 1, 1]


def test_game_ends_is_the_one_rule_for_numpy_and_polars() -> None:
    import numpy as np  # noqa: PLC0415
    done = np.array([True, True, False, False, True])
    timed = np.array([False, True, True, False, False])
    owed = np.array([False, False, False, False, True])
    assert session.game_ends(done, timed, owed).tolist() == [True, True, True, False, False]
    frame = pl.DataFrame({"d": done, "t": timed, "o": owed})
    ends = session.game_ends(pl.col("d"), pl.col("t"), pl.col("o")).alias("ends")
    assert frame.select(ends)["ends"].to_list() == [True, True, True, False, False]
