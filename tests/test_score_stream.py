"""``score`` streams its input: a part at a time, sessions whole, the same records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from ofcstats import reading
from ofcstats.cli import app
from ofcstats.logscore import ScoredBatch, score_batch, score_files
from ofcstats.rules import load_rulesets, preset_names

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"
LOGS = sorted(SAMPLE.glob("*.jsonl"))


def test_scoring_in_small_parts_gives_the_records_of_scoring_whole() -> None:
    rulesets = load_rulesets(preset_names())
    whole = score_batch(reading.read_all(LOGS), rulesets, own_variants=True).results
    parts = list(score_files(LOGS, rulesets, own_variants=True, batch_bytes=400_000))
    assert len(parts) > 10  # several parts, each of whole sessions
    streamed = pl.concat([part.results for part in parts])
    assert streamed.equals(whole)  # repeat limits and games come out the same


def test_a_session_that_comes_back_after_it_was_scored_is_a_warning(tmp_path: Path) -> None:
    lines = (SAMPLE / "pineapple-american.jsonl").read_text().splitlines()
    first = json.loads(lines[0])["session_id"]
    rest = [line for line in lines if json.loads(line)["session_id"] != first]
    log = tmp_path / "log.jsonl"
    written = [lines[0], *rest[:800], lines[1], *rest[800:]]  # far apart: parts between
    log.write_text("\n".join(written) + "\n")
    warnings: list[str] = []
    parts = list(score_files([log], load_rulesets(["american"]), batch_bytes=400_000,
                             warn=warnings.append))
    hands = {h for part in parts for h in part.results.get_column("hand_id").to_list()}
    assert len(hands) == len(written)  # every hand scored, the one that came back too
    assert len(warnings) == 1
    assert f"session {first} comes back" in warnings[0]


def test_score_writes_the_same_bytes_in_parts_and_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    command = ["score", *map(str, LOGS), "--all-rulesets", "-f"]
    whole = {output: runner.invoke(app, [*command, output]) for output in ("csv", "json")}

    def small(*args: Any, **kwargs: Any) -> Iterator[ScoredBatch]:
        return score_files(*args, **{**kwargs, "batch_bytes": 400_000})

    monkeypatch.setattr("ofcstats.cli.scoring.score_files", small)
    for output, result in whole.items():
        parted = runner.invoke(app, [*command, output])
        assert result.exit_code == parted.exit_code == 0
        assert parted.stdout == result.stdout


def test_score_draws_one_table_over_all_its_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    def small(*args: Any, **kwargs: Any) -> Iterator[ScoredBatch]:
        return score_files(*args, **{**kwargs, "batch_bytes": 400_000})

    monkeypatch.setattr("ofcstats.cli.scoring.score_files", small)
    log = str(SAMPLE / "pineapple-american.jsonl")
    table = CliRunner().invoke(app, ["score", log, "-r", "american", "-f", "table"])
    rows = CliRunner().invoke(app, ["score", log, "-r", "american", "-f", "csv"])
    assert table.exit_code == rows.exit_code == 0
    lines = table.stdout.splitlines()
    header, rule = lines[0], lines[1]
    assert lines.count(header) == 1  # one header for every part
    assert lines.count(rule) == 1
    assert len(lines) - 2 == len(rows.stdout.splitlines()) - 1  # a line per record
    assert all(line.startswith("|") and line.endswith("|") for line in lines)
