"""One vocabulary and clean errors: exit code 2 for usage errors, found before anything is
created, each in one line naming the path or value; 1 for failures; read-only commands
share the database; a writer waits a bounded time for it, then names its holder."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ofcstats import cli
from ofcstats.cli import app
from ofcstats.ingest import ingest
from ofcstats.pipeline import rescore
from ofcstats.rules import load_rulesets
from ofcstats.store import Store

runner = CliRunner()
SAMPLE = Path(__file__).parent.parent / "data" / "sample"


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("usage") / "club.duckdb"
    ingest([SAMPLE / "ofc-turbo-classic-kush.jsonl", SAMPLE / "chinese-13-russian.jsonl"], db)
    with Store(db) as store:
        # (classic-kush: the ruleset the Turbo hands were logged under, which checks them)
        rescore(store, load_rulesets(["american", "russian", "classic-kush"]))
    return db


def one_line_error(result: object, code: int) -> str:
    assert result.exit_code == code, result.output  # type: ignore[attr-defined]
    text = result.stderr.strip()  # type: ignore[attr-defined]
    assert len(text.splitlines()) == 1, text
    assert "Traceback" not in text
    return text


def test_ingest_of_a_missing_file_creates_no_database(tmp_path: Path) -> None:
    db = tmp_path / "new.duckdb"
    result = runner.invoke(app, ["ingest", str(tmp_path / "no-such-file.jsonl"), "--db",
                                 str(db)])
    text = one_line_error(result, 2)
    assert "no-such-file.jsonl: no such file or directory" in text
    assert not db.exists()
    assert list(tmp_path.iterdir()) == []


def test_ingest_of_a_folder_without_logs_creates_no_database(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    db = tmp_path / "new.duckdb"
    text = one_line_error(runner.invoke(app, ["ingest", str(tmp_path / "empty"), "--db",
                                              str(db)]), 2)
    assert "no log files" in text
    assert not db.exists()


def test_ingest_into_a_database_under_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    text = one_line_error(runner.invoke(app, [
        "ingest", str(SAMPLE / "ofc-turbo-classic-kush.jsonl"), "--db",
        str(tmp_path / "afile" / "x.duckdb")]), 2)
    assert "afile is a file, not a directory" in text


def test_report_under_a_file_is_a_clean_usage_error(database: Path, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    target = tmp_path / "afile" / "report.html"
    text = one_line_error(runner.invoke(app, ["report", "--db", str(database), "-o",
                                              str(target)]), 2)
    assert text == (f"ofcstats: {target}: cannot write the report: {tmp_path / 'afile'} is a "
                    "file, not a directory")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs a /proc file system")
def test_report_into_a_directory_that_takes_no_files_is_a_usage_error(database: Path) -> None:
    # /proc takes no new files, even for a superuser whom every permission check lets in.
    text = one_line_error(runner.invoke(app, ["report", "--db", str(database), "-o",
                                              "/proc/report.html"]), 2)
    assert text == ("ofcstats: /proc/report.html: cannot write the report: the directory "
                    "/proc is not writable; choose a place you can write to")
    assert not Path("/proc/report.html").exists()


def test_unknown_player_lists_the_known_ones(database: Path) -> None:
    text = one_line_error(runner.invoke(app, ["players", "--db", str(database), "--ruleset",
                                              "american", "--player", "nobody"]), 2)
    assert text == ("ofcstats: no player named nobody; known players: kim, lee, max, nora, "
                    "omar, pia, quin")


def test_unknown_values_suggest_the_closest(database: Path) -> None:
    player = one_line_error(runner.invoke(app, ["player", "nor", "--db", str(database)]), 2)
    assert "no player named nor (did you mean nora?)" in player
    variant = one_line_error(runner.invoke(app, ["compare", "--db", str(database),
                                                 "--variant", "ofc-turbos"]), 2)
    assert "no variant named ofc-turbos (did you mean ofc-turbo?)" in variant
    session = one_line_error(runner.invoke(app, ["compare", "--db", str(database),
                                                 "--session", "nope"]), 2)
    assert "no session named nope" in session
    ruleset = one_line_error(runner.invoke(app, ["compare", "--db", str(database), "-r",
                                                 "russain"]), 2)
    # Not a ruleset rescore could load either: the nearest names, no command that fails.
    assert "no ruleset named russain (did you mean russian?)" in ruleset
    assert "rescore" not in ruleset
    report = one_line_error(runner.invoke(app, ["report", "--db", str(database), "-r",
                                                "western", "-o", "never.html"]), 2)
    assert "not scored under western" in report
    assert not Path("never.html").exists()


def test_lists_are_repeated_or_comma_separated(database: Path) -> None:
    def rows(*args: str) -> list[tuple[object, ...]]:
        result = runner.invoke(app, ["players", "--db", str(database), "-f", "json", *args])
        assert result.exit_code == 0, result.output
        return sorted((r["player"], r["hands"], r["total"]) for r in json.loads(result.stdout))

    both = rows("--player", "kim,lee")
    assert [r[0] for r in both] == ["kim", "lee"]
    assert rows("--player", "kim", "--player", "lee") == both


def test_version_and_help_name_the_program() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.startswith("ofcstats 0.")


def test_summaries_print_as_json_with_format_and_the_old_flag(database: Path) -> None:
    new = runner.invoke(app, ["db", "info", "--db", str(database), "--format", "json"])
    old = runner.invoke(app, ["db", "info", "--db", str(database), "--json"])
    assert new.exit_code == old.exit_code == 0
    assert json.loads(new.stdout) == json.loads(old.stdout)
    assert "--json" not in runner.invoke(app, ["db", "info", "--help"]).stdout


def test_an_unexpected_error_is_one_line_unless_debug(
        database: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object, **__: object) -> object:
        raise RuntimeError("something broke\nsecond line")

    monkeypatch.setattr(cli.questions.analysis, "comparison", broken)
    result = runner.invoke(app, ["compare", "--db", str(database)])
    text = one_line_error(result, 1)
    assert text == ("ofcstats: something broke (RuntimeError; run with --debug for the "
                    "traceback)")
    debugged = runner.invoke(app, ["--debug", "compare", "--db", str(database)])
    assert isinstance(debugged.exception, RuntimeError)


def test_sql_reads_the_store_in_every_format(database: Path, tmp_path: Path) -> None:
    query = "SELECT variant, count(*) AS hands FROM hands GROUP BY 1 ORDER BY 1"
    as_json = runner.invoke(app, ["sql", query, "--db", str(database), "-f", "json"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == [{"variant": "chinese-13", "hands": 400},
                                          {"variant": "ofc-turbo", "hands": 600}]
    csv = runner.invoke(app, ["sql", query, "--db", str(database), "-f", "csv"])
    assert csv.stdout.splitlines() == ["variant,hands", "chinese-13,400", "ofc-turbo,600"]
    table = runner.invoke(app, ["sql", query, "--db", str(database)]).stdout
    assert "| chinese-13 | 400   |" in table
    out = tmp_path / "rows.jsonl"
    written = runner.invoke(app, ["sql", query, "--db", str(database), "-f", "jsonl", "-o",
                                  str(out)])
    assert written.exit_code == 0
    assert [json.loads(line)["hands"] for line in out.read_text().splitlines()] == [400, 600]


def test_sql_as_csv_of_list_columns_says_which_format_holds_them(
        database: Path, tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    query = "SELECT hand_key, top, middle FROM seats LIMIT 2"
    text = one_line_error(runner.invoke(app, ["sql", query, "--db", str(database), "-f", "csv",
                                              "-o", str(out)]), 2)
    assert text.startswith("ofcstats: CSV cannot hold the lists in top, middle: use -f json")
    assert not out.exists()
    as_json = runner.invoke(app, ["sql", query, "--db", str(database), "-f", "json"])
    assert as_json.exit_code == 0
    assert len(json.loads(as_json.stdout)[0]["middle"]) == 5


def test_sql_cannot_change_the_store_or_touch_files(database: Path, tmp_path: Path) -> None:
    before = database.stat().st_mtime_ns
    for query in ("DELETE FROM hands", "CREATE TABLE x (a INTEGER)",
                  f"COPY hands TO '{tmp_path / 'out.csv'}'",
                  f"SELECT * FROM read_csv('{SAMPLE / 'x.csv'}')"):
        text = one_line_error(runner.invoke(app, ["sql", query, "--db", str(database)]), 2)
        assert text.startswith("ofcstats: the query failed: ")
    assert database.stat().st_mtime_ns == before
    assert not (tmp_path / "out.csv").exists()
    missing = one_line_error(runner.invoke(app, ["sql", "SELECT * FROM nothing", "--db",
                                                 str(database)]), 2)
    assert "nothing" in missing


HOLD = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == "read")
print("holding", flush=True)
time.sleep(float(sys.argv[3]))
"""


@contextmanager
def hold(database: Path, mode: str, seconds: float = 60) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the database open (``read`` or ``write``)."""
    with subprocess.Popen([sys.executable, "-c", HOLD, str(database), mode, str(seconds)],
                          stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding"
        try:
            yield holder
        finally:
            holder.kill()


def test_readers_share_the_database_with_a_reading_notebook(database: Path) -> None:
    with hold(database, "read"):
        before = database.stat().st_mtime_ns
        for args in (["compare"], ["players", "-r", "american"], ["player", "kim"],
                     ["db", "info"], ["sql", "SELECT count(*) FROM seats"]):
            result = runner.invoke(app, [*args, "--db", str(database)])
            assert result.exit_code == 0, (args, result.output)
        assert database.stat().st_mtime_ns == before


def test_a_writer_waits_then_names_who_holds_the_database(database: Path) -> None:
    with hold(database, "write") as holder:
        started = time.monotonic()
        result = runner.invoke(app, ["rescore", "--db", str(database), "-r", "american",
                                     "--wait", "0.6"])
        waited = time.monotonic() - started
        text = one_line_error(result, 1)
        assert f"in use by python{sys.version_info.major}" in text
        assert f"(PID {holder.pid}: python" in text  # what the holder runs, where known
        assert "waited 0.6 s" in text
        assert text.endswith("or wait longer: ofcstats rescore --wait SECONDS (or "
                             "$OFCSTATS_LOCK_WAIT)")
        assert 0.6 <= waited < 10


def _readers(database: Path, out: Path) -> dict[str, list[str]]:
    """Every command that only reads the database, as a person runs it (replay on a hand
    reviewed with its settings)."""
    at = ["--db", str(database)]
    return {"compare": ["compare", *at], "players": ["players", "-r", "american", *at],
            "player": ["player", "kim", *at], "report": ["report", "-o", str(out / "r.html"), *at],
            "sql": ["sql", "SELECT count(*) FROM seats", *at], "db info": ["db", "info", *at],
            "export": ["export", "--parquet", str(out / "pq"), *at],
            "replay": ["replay", "turbo-kush-00001-01", "-o", str(out / "h.html"),
                       "--rollouts", "2", *at]}


@pytest.fixture(scope="module")
def reviewed(database: Path) -> Path:
    """The database with the hand ``replay`` shows reviewed under its settings."""
    done = runner.invoke(app, ["review", "--db", str(database), "--session",
                               "turbo-kush-00001", "--rollouts", "2"])
    assert done.exit_code == 0, done.output
    return database


@pytest.mark.parametrize("name", ["compare", "players", "player", "report", "sql", "db info",
                                  "export", "replay"])
def test_every_reader_waits_for_a_writer_that_lets_go_in_time(
        reviewed: Path, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OFCSTATS_LOCK_WAIT", "0")  # only --wait lets it wait
    notes: list[str] = []
    with hold(reviewed, "write") as holder:
        def let_go(_: object, note: str) -> None:  # the writer ends once the reader waits
            notes.append(note)
            holder.kill()
        monkeypatch.setattr(cli.common._WaitNote, "__call__", let_go)
        result = runner.invoke(app, [*_readers(reviewed, tmp_path)[name], "--wait", "30"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert len(notes) == 1
    assert notes[0].startswith(f"waiting up to 30 s for {reviewed}, in use by ")


def test_every_command_gives_up_after_its_wait_naming_the_holder_and_its_option(
        reviewed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = ["--db", str(reviewed)]
    commands = {**_readers(reviewed, tmp_path), "ingest": ["ingest", str(SAMPLE), *at],
                "rescore": ["rescore", "-r", "american", *at],
                "review": ["review", "--rollouts", "2", *at]}
    before = reviewed.stat().st_mtime_ns
    with hold(reviewed, "write") as holder:
        for name, args in commands.items():
            started = time.monotonic()
            text = one_line_error(runner.invoke(app, [*args, "--wait", "0.3"]), 1)
            assert 0.3 <= time.monotonic() - started < 10
            assert text.startswith(f"ofcstats: {reviewed}: the database is in use by "), text
            assert f"(PID {holder.pid}: " in text
            assert "; waited 0.3 s. Close that program or its connection (a notebook: " \
                "con.close()), or wait longer: " in text
            assert text.endswith(f"ofcstats {name} --wait SECONDS (or $OFCSTATS_LOCK_WAIT)")
        monkeypatch.setenv("OFCSTATS_LOCK_WAIT", "0.2")  # the same default as the writers'
        text = one_line_error(runner.invoke(app, ["players", *at]), 1)
        assert "; waited 0.2 s. " in text
    assert reviewed.stat().st_mtime_ns == before
    assert list(tmp_path.iterdir()) == []  # no report, Parquet file or page begun


def test_a_wait_that_is_not_a_number_of_seconds_is_a_usage_error(
        database: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OFCSTATS_LOCK_WAIT", "soon")
    for args in (["players"], ["rescore", "-r", "american"]):
        text = one_line_error(runner.invoke(app, [*args, "--db", str(database)]), 2)
        assert text == ("ofcstats: OFCSTATS_LOCK_WAIT='soon' is not a number of seconds: give "
                        "one, such as 30")


def test_a_writer_goes_on_when_the_holder_lets_go_in_time(
        database: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OFCSTATS_LOCK_WAIT", "30")
    with hold(database, "write", seconds=1.0):
        result = runner.invoke(app, ["rescore", "--db", str(database), "-r", "american"])
    assert result.exit_code == 0, result.output


def test_ingest_names_its_input_format_with_input_format(tmp_path: Path) -> None:
    log = SAMPLE / "ofc-turbo-classic-kush.jsonl"
    new = runner.invoke(app, ["ingest", str(log), "--db", str(tmp_path / "a.duckdb"),
                              "--input-format", "ofc-hand", "--format", "json"])
    assert new.exit_code == 0, new.output
    assert json.loads(new.stdout)["hands"] == 600
    # --format once named the input format: an input format's name still means that.
    old = runner.invoke(app, ["ingest", str(log), "--db", str(tmp_path / "b.duckdb"),
                              "--format", "ofc-hand"])
    assert old.exit_code == 0, old.output
    assert old.stdout.startswith("1 file: 600 hands loaded")
    wrong = one_line_error(runner.invoke(app, ["ingest", str(log), "--db",
                                               str(tmp_path / "c.duckdb"), "-f", "yaml"]), 2)
    assert "--format yaml: use one of table, json" in wrong
    assert not (tmp_path / "c.duckdb").exists()


def test_score_prints_json_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "scored.json"
    result = runner.invoke(app, ["score", str(SAMPLE / "chinese-13-russian.jsonl"), "-f",
                                 "json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    rows = json.loads(out.read_text())
    assert len(rows) == 400 * 4
    assert {r["ruleset"] for r in rows} == {"russian"}


def test_report_output_named_pdf_is_a_usage_error(tmp_path: Path) -> None:
    target = tmp_path / "r.pdf"
    result = CliRunner().invoke(app, ["report", "--db", str(tmp_path / "none.duckdb"),
                                      "-o", str(target)])
    assert result.exit_code == 2
    assert "--pdf" in result.output
    assert not target.exists()


_ENTRY_PROBE = """
import gc, os, sys
sys.argv = ["ofcstats", "--version"]
from ofcstats.entry import main
try:
    main()
except SystemExit as done:
    assert not done.code, done.code
print(gc.isenabled(), gc.get_freeze_count() > 1000, os.environ["OPENBLAS_THREAD_TIMEOUT"])
"""


@pytest.mark.parametrize(("given", "kept"), [(None, "4"), ("12", "12")])
def test_the_command_starts_with_its_imports_set_aside_and_blas_threads_sleeping(
        given: str | None, kept: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if given is None:
        monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", given)
    done = subprocess.run([sys.executable, "-c", _ENTRY_PROBE], capture_output=True,
                          text=True, check=True)
    version, answer = done.stdout.strip().splitlines()
    assert version.startswith("ofcstats ")
    # collecting again, the imports' objects frozen, the user's setting kept
    assert answer == f"True True {kept}"
