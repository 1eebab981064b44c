"""The notebooks: stored without outputs, and each runs top to bottom on the sample data."""

from __future__ import annotations

import html
import re
import time
from pathlib import Path

import pytest

from ofcstats.ingest import ingest
from ofcstats.pipeline import update
from ofcstats.store import Store

# The notebook stack is the notebooks extra (make test installs it): without it, say so.
nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed: "
                               "pip install -e '.[notebooks]' (make test does)")
NotebookClient = pytest.importorskip(
    "nbclient", reason="the notebooks extra is not installed: pip install -e '.[notebooks]'"
).NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def test_the_three_notebooks_are_there() -> None:
    assert [p.name for p in NOTEBOOKS] == ["01_session_review.ipynb",
                                           "02_scoring_systems.ipynb",
                                           "03_player_styles.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_are_stored_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == []
            assert cell.execution_count is None


ALLOWED = {"os", "ofcstats", "polars", "matplotlib"}
"""What a notebook imports: the Python API, Polars and matplotlib (and ``os``, for the
database a person points it at)."""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_use_the_python_api_alone(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    imported = {name.split(".")[0] for source in code
                for name in re.findall(r"^\s*(?:import|from)\s+([\w.]+)", source, re.MULTILINE)}
    assert imported <= ALLOWED
    assert not re.search(r"from\s+ofcstats|import\s+ofcstats\.", "\n".join(code))
    assert "ofcstats.open(" in code[0]
    assert 'os.environ.get("OFCSTATS_DB")' in code[0]  # the user's database, if named
    assert "ofcstats.sample(" in code[0]  # else the sample data


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom_in_under_a_minute(path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OFCSTATS_DB", raising=False)  # (the sample data, whoever runs it)
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    assert time.perf_counter() - started < 60
    images = sum("image/png" in output.get("data", {}) for cell in notebook.cells
                 if cell.cell_type == "code" for output in cell.outputs)
    assert images >= 1
    pages = [html.unescape(output["data"]["text/html"]) for cell in notebook.cells
             if cell.cell_type == "code" for output in cell.outputs
             if "text/html" in output.get("data", {})]
    if path.stem == "01_session_review":  # the hand list, then a session replayed inline
        assert any("costliest" in cell.source and "hand_id" in cell.source
                   for cell in notebook.cells if cell.cell_type == "code")
        assert any('<table class="hands-list"' in page and '<section class="hand"' in page
                   for page in pages)
    if path.stem == "03_player_styles":  # the decisions part: a replayed mistake per player
        assert any('<table class="street">' in page and 'class="card' in page
                   for page in pages)


@pytest.mark.slow
def test_a_notebook_reads_the_database_ofcstats_db_names(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    sample = Path(__file__).parent.parent / "data" / "sample"
    ingest([sample / "ofc-classic-western.jsonl"], tmp_path / "mine.duckdb")
    with Store(tmp_path / "mine.duckdb") as store:
        update(store)
    monkeypatch.setenv("OFCSTATS_DB", str(tmp_path / "mine.duckdb"))
    path = NOTEBOOKS[0]
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    shown = [output.get("data", {}).get("text/plain", "") for cell in notebook.cells
             if cell.cell_type == "code" for output in cell.outputs]
    assert any(str(tmp_path / "mine.duckdb") in text for text in shown)  # the handle
    assert not any("pineapple" in text for text in shown)  # nothing of the sample
