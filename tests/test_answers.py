"""Answers per variant: each hand scored under the rulesets of its variant, what-ifs only
on request and marked, every table and report section of one variant, output that does
not depend on the thread count, and the small cases (one hand, one session)."""

from __future__ import annotations

import html
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from ofcstats import analysis
from ofcstats.analysis import Filters, scored_frame
from ofcstats.cli import app
from ofcstats.errors import RulesetError
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.report import collect, write_report
from ofcstats.rules import load_ruleset, load_rulesets, preset_names
from ofcstats.rules.load import ruleset_from
from ofcstats.simulate import Player, Simulation, simulate
from ofcstats.store import Store
from ofcstats.variants import Variant


def _log(path: Path, variant: str, ruleset: str, players: list[str], hands: int,
         seed: int) -> Path:
    sim = Simulation(variant=Variant(variant), ruleset=load_ruleset(ruleset),
                     players=[Player(name, "balanced") for name in players], hands=hands,
                     seed=seed, prefix=f"{variant}-{seed}")
    path.write_text("".join(json.dumps(h) + "\n" for h in simulate(sim)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Pineapple (ann, bob, cy) and 13-card (dee, eve) hands, and solo: a player with one
    hand in a session of one hand."""
    folder = tmp_path_factory.mktemp("answers")
    logs = [_log(folder / "p.jsonl", "pineapple", "american", ["ann", "bob", "cy"], 40, 1),
            _log(folder / "c.jsonl", "chinese-13", "russian", ["dee", "eve"], 40, 2)]
    one = json.loads(_log(folder / "one.jsonl", "pineapple", "american", ["solo", "ann"], 1,
                          3).read_text(encoding="utf-8"))
    one["session_id"] = "just-one"
    (folder / "one.jsonl").write_text(json.dumps(one) + "\n", encoding="utf-8")
    db = folder / "club.duckdb"
    ingest([*logs, folder / "one.jsonl"], db)
    with Store(db) as store:
        rescore(store, load_rulesets(preset_names()))
    return db


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_each_hand_is_scored_only_under_the_rulesets_of_its_variant(database: Path) -> None:
    with Store(database, read_only=True) as store:
        pairs = store.con.sql("""
            SELECT DISTINCT variant, ruleset, what_if FROM results_named ORDER BY ALL
        """).fetchall()
    for variant, ruleset, what_if in pairs:
        assert load_ruleset(ruleset).plays(variant), (variant, ruleset)
        assert not what_if
    assert ("chinese-13", "russian", False) in pairs
    assert ("pineapple", "american", False) in pairs
    assert not any(v == "chinese-13" and r == "american" for v, r, _ in pairs)


def test_a_what_if_is_scored_only_when_asked_for_and_marked(database: Path, tmp_path: Path
                                                           ) -> None:
    db = tmp_path / "copy.duckdb"
    db.write_bytes(database.read_bytes())
    _run("rescore", "--db", str(db), "--what-if", "american", "-q")
    with Store(db, read_only=True) as store:
        rows = dict(store.con.sql("""
            SELECT variant, bool_and(what_if) FROM results_named WHERE ruleset = 'american'
            GROUP BY variant""").fetchall())
    assert rows == {"chinese-13": True, "pineapple": False}
    shown = _run("compare", "--db", str(db), "--variant", "chinese-13")
    assert "american (what-if)" in shown
    data = json.loads(_run("compare", "--db", str(db), "-f", "json"))
    assert {(r["variant"], r["ruleset"], r["what_if"]) for r in data
            if r["ruleset"] == "american"} == {("chinese-13", "american", True),
                                               ("pineapple", "american", False)}
    # A plain rescore afterwards keeps the what-if rather than dropping it.
    _run("rescore", "--db", str(db), "-q")
    with Store(db, read_only=True) as store:
        count = store.con.execute(
            "SELECT count(*) FROM results_named WHERE what_if").fetchone()
    assert count is not None
    assert count[0] > 0


def test_compare_gives_one_table_per_variant_counting_its_hands(database: Path) -> None:
    data = json.loads(_run("compare", "--db", str(database), "-f", "json"))
    hands = {(r["variant"], r["hands"]) for r in data}
    assert hands == {("chinese-13", 40), ("pineapple", 41)}
    text = _run("compare", "--db", str(database))
    assert "chinese-13: 40 hands" in text
    assert "pineapple: 41 hands" in text
    ranks = [(r["variant"], r["skill_rank"]) for r in data if r["skill_rank"] is not None]
    for variant in ("chinese-13", "pineapple"):
        assert sorted(k for v, k in ranks if v == variant) == \
            list(range(1, 1 + sum(v == variant for v, _ in ranks)))


def test_players_rows_are_per_variant_and_carry_money(database: Path) -> None:
    data = json.loads(_run("players", "--db", str(database), "-f", "json"))
    seen = {(r["variant"], r["player"], r["ruleset"]) for r in data}
    assert ("chinese-13", "dee", "russian") in seen
    assert ("pineapple", "ann", "american") in seen
    assert all(r["money"] is not None for r in data)
    for variant in ("chinese-13", "pineapple"):
        assert sum(r["money"] for r in data if r["variant"] == variant) == pytest.approx(0)


@pytest.mark.parametrize("command", [
    ["players"], ["player", "solo"], ["compare"], ["players", "--session", "just-one"],
    ["player", "solo", "--ruleset", "pokerstars"], ["compare", "--ruleset", "pokerstars"],
])
def test_single_hand_players_and_one_hand_sessions_work(database: Path, command: list[str]
                                                        ) -> None:
    for output in ("table", "csv", "json"):
        _run(*command, "--db", str(database), "-f", output)


def test_the_report_works_for_a_single_hand_player(database: Path, tmp_path: Path) -> None:
    page = tmp_path / "solo.html"
    _run("report", "--db", str(database), "--player", "solo", "-o", str(page))
    text = page.read_text(encoding="utf-8")
    assert "<h3>Player: solo</h3>" in text
    assert text.count("<section") == 1


def test_a_player_with_no_hands_under_the_filters_is_told_so(database: Path) -> None:
    result = CliRunner().invoke(app, ["player", "dee", "--db", str(database), "--variant",
                                      "pineapple"])
    assert result.exit_code == 1
    assert "no scored hands match" in result.stderr


def test_the_report_has_one_section_per_variant(database: Path, tmp_path: Path) -> None:
    with Store(database, read_only=True) as store:
        data = collect(store)
    files = write_report(data, tmp_path / "r.html")
    page = files.html.read_text(encoding="utf-8")
    assert page.count("<section") == 2
    assert '<section id="chinese-13"><h2>chinese-13</h2>' in page
    assert '<section id="pineapple"><h2>pineapple</h2>' in page
    assert data.rulesets_shown == {"chinese-13": "russian", "pineapple": "american"}
    chinese = page.split('<section id="chinese-13">')[1].split("</section>")[0]
    assert "Player: dee" in chinese
    assert "Player: ann" not in chinese


def test_compare_prints_the_same_bytes_whatever_the_thread_count(database: Path) -> None:
    outputs = {}
    for threads in ("1", "2"):
        for output in ("table", "json"):
            run = subprocess.run(
                [str(Path(sys.executable).with_name("ofcstats")), "compare", "--db",
                 str(database), "-f", output], capture_output=True, check=True,
                env={**os.environ, "POLARS_MAX_THREADS": threads, "OMP_NUM_THREADS": threads,
                     "OPENBLAS_NUM_THREADS": threads})
            outputs[threads, output] = run.stdout
    assert outputs["1", "table"] == outputs["2", "table"]
    assert outputs["1", "json"] == outputs["2", "json"]


COMPARED = ("sd", "mean_abs_points", "royalty_share", "foul_rate", "fantasyland_entry_rate",
            "skill_signal", "hands_to_tell_apart")


def test_compare_gives_every_statistic_its_interval_and_a_skill_group(database: Path) -> None:
    data = json.loads(_run("compare", "--db", str(database), "-f", "json"))
    for row in data:
        for stat in COMPARED:
            low, value, high = row[f"{stat}_ci_low"], row[stat], row[f"{stat}_ci_high"]
            if stat == "hands_to_tell_apart" and row["skill_shown"] is False:
                # No skill shown: no number of hands, only the fewest it could take.
                assert value is None, row["ruleset"]
                assert high is None, row["ruleset"]
                assert low is not None, row["ruleset"]
                assert row["skill_signal_ci_low"] == 0, row["ruleset"]
            elif value is None:
                assert low is None, (row["ruleset"], stat)
                assert high is None, (row["ruleset"], stat)
            elif stat == "hands_to_tell_apart":  # no upper end where skill may be nil
                assert low <= value, row["ruleset"]
                assert (high is None) == (row["skill_signal_ci_low"] == 0), row["ruleset"]
                assert high is None or value <= high, row["ruleset"]
            else:
                assert low <= value <= high, (row["ruleset"], stat, low, value, high)
    sd = [(r["sd_ci_low"], r["sd_ci_high"]) for r in data if r["sd"] is not None]
    assert sd
    assert all(low < high for low, high in sd)
    for variant in ("chinese-13", "pineapple"):
        ranked = sorted((r["skill_rank"], r["skill_group"], r["ruleset"]) for r in data
                        if r["variant"] == variant and r["skill_rank"] is not None)
        groups = [group for _, group, _ in ranked]
        assert groups[0] == 1
        assert all(b - a in (0, 1) for a, b in itertools.pairwise(groups))
        mine = [r for r in data if r["variant"] == variant]
        assert {r["top_two_first"] for r in mine} == {ranked[0][2]}
        assert {r["top_two_second"] for r in mine} == {ranked[1][2]}
    csv = _run("compare", "--db", str(database), "-f", "csv").splitlines()
    header = csv[0].split(",")
    assert {f"{s}_ci_{end}" for s in COMPARED for end in ("low", "high")} <= set(header)
    assert "skill_group" in header
    assert "top_two_more_hands" in header


def test_compare_shows_the_skill_signal_interval_and_a_line_on_the_top_two(database: Path
                                                                           ) -> None:
    text = _run("compare", "--db", str(database))
    # A number where skill shows, "none" where the interval reaches 0: always the interval.
    cell = r"(\d\.\d{3}|none) \(\d\.\d{3}-\d\.\d{3}\) "
    assert re.search(r"\| 1 +\| [a-z0-9-]+ +\| " + cell, text), text
    assert "| group | ruleset " in text
    wide = _run("compare", "--db", str(database), "--wide")
    assert re.search(r"\| 1 +\| [a-z0-9-]+ +\| \d+ +\| " + cell, wide), wide
    assert "| skill_group |" in wide
    data = json.loads(_run("compare", "--db", str(database), "-f", "json"))
    for variant in ("chinese-13", "pineapple"):
        row = next(r for r in data if r["variant"] == variant)
        apart = {k.removeprefix("top_two_"): v for k, v in row.items()
                 if k.startswith("top_two_")}
        line = analysis.tell_apart_text(apart)
        table = text.split(f"{variant}: ")[1].split("\n\n")[0]
        assert ("cannot be told apart" in line) == (not apart["told_apart"])
        mine = [r for r in data if r["variant"] == variant]
        # The top two are told apart or not only where skill shows under some ruleset;
        # where it shows under none, the table says that instead, and "none" per ruleset.
        shown = any(r["skill_shown"] for r in mine)
        assert (line in table.splitlines()) == shown, table
        assert ("No skill difference" in table) == (not all(r["skill_shown"] for r in mine))
        for r in mine:
            assert (r["skill_signal"] == 0) >= (not r["skill_shown"])
            assert f"| {r['ruleset']} " in table
            assert (f"none ({r['skill_signal_ci_low']:.3f}-" in table) >= (not r["skill_shown"])


def test_compare_seed_moves_the_intervals_not_the_estimates(database: Path) -> None:
    def of(*args: str) -> list[dict[str, object]]:
        return json.loads(_run("compare", "--db", str(database), "-f", "json", *args))

    first, again, other = of("--seed", "3"), of("--seed", "3"), of("--seed", "4")
    assert first == again
    # The skill signal moves only where the seed moves whether skill shows (0 where not).
    assert [r["skill_signal"] for r in first if r["skill_shown"]] == [
        r["skill_signal"] for r in other if r["skill_shown"]] or [
        r["skill_shown"] for r in first] != [r["skill_shown"] for r in other]
    assert [r["spread"] for r in first] == [r["spread"] for r in other]
    assert [r["sd_ci_low"] for r in first] != [r["sd_ci_low"] for r in other]
    fewer = of("--seed", "3", "--resamples", "200")
    assert [r["sd_ci_low"] for r in first] != [r["sd_ci_low"] for r in fewer]
    assert of() == of("--seed", "7", "--resamples", "1000")  # the documented defaults


@pytest.mark.parametrize("value", ["10", "many", "0"])
def test_compare_refuses_a_bad_number_of_resamples(database: Path, value: str) -> None:
    result = CliRunner().invoke(app, ["compare", "--db", str(database), "--resamples", value])
    assert result.exit_code == 2
    assert "--resamples" in result.output


def test_players_and_player_give_every_rate_and_money_per_game_an_interval(
        database: Path) -> None:
    rates = ("foul_rate", "fantasyland_entry_rate", "fantasyland_stay_rate", "scoop_rate",
             "win_rate_top", "win_rate_middle", "win_rate_bottom", "money_per_game")
    for args in (["players"], ["player", "ann"]):
        data = json.loads(_run(*args, "--db", str(database), "-f", "json"))
        assert data
        for row in data:
            for rate in rates:
                low, value, high = row[f"{rate}_ci_low"], row[rate], row[f"{rate}_ci_high"]
                if value is None:
                    assert low is None, (args, rate)
                    assert high is None, (args, rate)
                elif row["hands"] >= 30:
                    assert low <= value <= high, (args, row["player"], rate)
            if row["games"]:
                assert row["money_per_game"] == pytest.approx(row["money"] / row["games"])
        ann = [r for r in data if r["player"] == "ann" and r["variant"] == "pineapple"]
        assert all(r["foul_rate_ci_low"] < r["foul_rate_ci_high"] for r in ann
                   if 0 < r["foul_rate"] < 1)


def test_rulesets_lists_the_variants_each_is_played_under() -> None:
    rows = json.loads(_run("rulesets", "--format", "json"))
    by_name = {r["name"]: r["variants"] for r in rows}
    assert by_name["russian"] == ["chinese-13"]
    assert by_name["american"] == ["ofc-classic", "ofc-turbo", "pineapple"]
    csv = pl.read_csv(_run("rulesets", "--format", "csv").encode())
    assert csv.columns[:3] == ["name", "variants", "description"]
    assert "[chinese-13]" in _run("rulesets")


BASE = {"name": "house", "head_to_head": {"row": 1, "majority": 0, "scoop": 3}}


def test_a_ruleset_file_names_its_variants() -> None:
    ruleset = ruleset_from({**BASE, "variants": ["ofc-classic", "ofc-turbo"]}, "house.toml")
    assert ruleset.plays("ofc-turbo")
    assert not ruleset.plays("pineapple")
    assert ruleset_from({**BASE, "variant": "chinese-13"}, "house.toml").variants == \
        (Variant.CHINESE_13,)


@pytest.mark.parametrize(("extra", "message"), [
    ({"variants": ["pineapple", "poker"]}, "house.toml: variants = 'poker': use one of"),
    ({"variants": []}, "house.toml: variants = []: must be a list of one or more"),
    ({"variants": ["pineapple", "pineapple"]}, "names a variant twice"),
    ({"variants": ["pineapple"], "variant": "pineapple"}, "give variants or variant, not both"),
    ({"point_value": float("nan")}, "point_value = nan: must be a number from 0.000001 to "
                                    "1,000,000"),
    ({"loss_cap": float("inf")}, "loss_cap = inf: must be a number from 1 to 1,000,000"),
])
def test_a_bad_variants_or_money_key_is_refused_by_name(extra: dict[str, object],
                                                        message: str) -> None:
    with pytest.raises(RulesetError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ruleset_from({**BASE, **extra}, "house.toml")


def test_scored_frame_rows_say_whether_they_are_what_ifs(database: Path) -> None:
    with Store(database, read_only=True) as store:
        frame = scored_frame(store, Filters(rulesets=["russian"]), ["variant", "what_if"])
        table = analysis.money(store, Filters(), [load_ruleset("russian")])
    assert set(frame["variant"]) == {"chinese-13"}
    assert not frame["what_if"].any()
    assert set(table["variant"]) == {"chinese-13"}


def test_a_ruleset_whose_scoop_would_pay_over_the_maximum_is_refused_at_load() -> None:
    with pytest.raises(RulesetError, match=r"row = 400: a scoop would pay .* = 1200, more "
                                           r"than 1000"):
        ruleset_from({"name": "house", "head_to_head": {"row": 400, "majority": 0, "scoop": 0}},
                     "house.toml")


def test_a_stored_ruleset_that_no_longer_validates_is_named_not_a_traceback(
        database: Path, tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    db.write_bytes(database.read_bytes())
    with Store(db) as store:
        store.con.execute("""UPDATE rulesets SET definition = json_merge_patch(definition,
            '{"head_to_head": {"row": 400, "majority": 0, "scoop": 0}}') WHERE name = 'american'""")
    for command in (["players"], ["player", "ann"]):
        result = CliRunner().invoke(app, [*command, "--db", str(db)])
        assert result.exit_code == 1, result.output
        assert "the stored ruleset american" in result.stderr
        assert "ofcstats rescore --rebuild" in result.stderr
        assert "Traceback" not in result.output


def test_score_all_rulesets_scores_each_hand_under_its_variants_presets(tmp_path: Path
                                                                       ) -> None:
    log = _log(tmp_path / "c.jsonl", "chinese-13", "russian", ["dee", "eve"], 3, 4)
    rows = pl.read_csv(_run("score", str(log), "--all-rulesets", "-f", "csv").encode())
    assert sorted(set(rows["ruleset"])) == sorted(
        name for name in preset_names() if load_ruleset(name).plays("chinese-13"))
    assert not rows["what_if"].any()
    asked = pl.read_csv(_run("score", str(log), "-r", "american,russian", "-f", "csv").encode())
    assert dict(asked.group_by("ruleset").agg(pl.col("what_if").all()).iter_rows()) == \
        {"american": True, "russian": False}


def test_players_under_a_named_ruleset_shows_the_variants_it_is_played_under(
        database: Path) -> None:
    data = json.loads(_run("players", "--db", str(database), "--ruleset", "russian", "-f",
                           "json"))
    assert {(r["variant"], r["ruleset"]) for r in data} == {("chinese-13", "russian")}


@pytest.mark.parametrize("command", [["compare"], ["players"], ["player", "ann"]])
def test_analysis_commands_write_their_table_to_a_file(database: Path, tmp_path: Path,
                                                       command: list[str]) -> None:
    target = tmp_path / "out.csv"
    assert _run(*command, "--db", str(database), "-f", "csv", "-o", str(target)) == ""
    shown = _run(*command, "--db", str(database), "-f", "csv")
    assert target.read_text(encoding="utf-8") == shown


def test_hands_to_tell_apart_means_the_same_in_the_help_the_report_and_the_docs(
        database: Path, tmp_path: Path) -> None:
    def flat(text: str) -> str:
        return " ".join(text.split())

    sentence = analysis.TELL_APART_MEANING
    assert sentence in flat(_run("compare", "--help"))
    with Store(database, read_only=True) as store:
        page = write_report(collect(store), tmp_path / "r.html").html.read_text("utf-8")
    assert sentence in flat(html.unescape(page))
    docs = Path(__file__).parent.parent / "docs" / "statistics.md"
    assert sentence in flat(docs.read_text(encoding="utf-8"))


def test_compare_says_in_words_where_these_hands_show_no_skill(database: Path) -> None:
    data = json.loads(_run("compare", "--db", str(database), "-f", "json"))
    text = _run("compare", "--db", str(database), "--wide")
    for variant in ("chinese-13", "pineapple"):
        table = pl.DataFrame([r for r in data if r["variant"] == variant])
        words = analysis.no_skill_text(table)
        quiet = table.filter(pl.col("skill_shown").not_()).get_column("ruleset").to_list()
        assert bool(words) == bool(quiet)
        section = text.split(f"{variant}: ")[1].split("\n\n")[0]
        assert words in " ".join(section.split()) if words else \
            "No skill difference" not in section


def test_a_ruleset_without_fantasyland_says_so_instead_of_a_rate_of_0(database: Path) -> None:
    data = json.loads(_run("players", "--db", str(database), "-r", "pokerstars", "-f", "json"))
    assert data
    for row in data:
        for rate in ("fantasyland_entry_rate", "fantasyland_stay_rate"):
            assert row[rate] is None, row
            assert row[f"{rate}_ci_low"] is None, row
    text = _run("players", "--db", str(database), "-r", "pokerstars")
    assert "Fantasyland rates n/a under pokerstars: no fantasyland under this ruleset" in text
    compared = json.loads(_run("compare", "--db", str(database), "-f", "json"))
    stars = [r for r in compared if r["ruleset"] == "pokerstars"]
    assert stars
    assert all(r["fantasyland_entry_rate"] is None for r in stars)
    american = [r for r in compared if r["ruleset"] == "american"]
    assert all(r["fantasyland_entry_rate"] is not None for r in american)
