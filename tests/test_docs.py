"""The documentation lives in the repository and stays true: every relative link of the
README and docs/ resolves (to a file, and to a heading where it names one), docs/cli.md is
what the commands print, and the pages cite sources by title, not by working file names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ofcstats.cli import cli_reference

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"```.*?```", re.DOTALL)


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub makes them."""
    found = set()
    for line in CODE.sub("", page.read_text(encoding="utf-8")).splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def links(page: Path) -> list[str]:
    return LINK.findall(CODE.sub("", page.read_text(encoding="utf-8")))


def test_the_documentation_pages_are_there() -> None:
    assert {p.name for p in PAGES} >= {"README.md", "rules.md", "format.md", "database.md",
                                       "cli.md", "command-line.md", "report.md"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page: Path) -> None:
    checked = 0
    for target in links(page):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: {target} is not in the repository"
        assert resolved.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
        if anchor:
            assert anchor in anchors(resolved), f"{page.name}: no heading for {target}"
        checked += 1
    if page.name in {"README.md", "format.md"}:
        assert checked, f"{page.name} links to no other page"


def test_the_link_check_catches_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A title\n\n[x](nowhere.md) [y](#a-title) [z](#missing)\n")
    assert links(page) == ["nowhere.md", "#a-title", "#missing"]
    assert anchors(page) == {"a-title"}


def test_cli_reference_is_current() -> None:
    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == cli_reference(), "docs/cli.md is out of date: run make docs"


def test_cli_reference_covers_every_command() -> None:
    text = cli_reference()
    for command in ("simulate", "ingest", "sql", "export", "score", "rescore", "compare",
                    "players", "player", "report", "rulesets", "rulesets show", "db info"):
        assert f"\n## ofcstats {command}\n" in text, command
    assert "cli-reference" not in text


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pages_cite_sources_by_title(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for name in ("RULES.md", "FORMAT.md", "DESIGN.md", "STYLE.md"):
        assert name not in text, f"{page.name} cites {name}"
    assert not re.search(r"\bseeds?\s+0\d\d", text), f"{page.name} cites a source by number"


ARCHITECTURE = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "ofcstats"


def named_in(module: Path, text: str) -> bool:
    """Whether a page names a module: by its path under ``ofcstats/`` (a package by its
    folder), or on a line that names its package folder and its file name."""
    rel = module.relative_to(PACKAGE)
    folder = "/".join(rel.parts[:-1]) + "/" if len(rel.parts) > 1 else ""
    target = folder if rel.name == "__init__.py" else rel.as_posix()
    if re.search(rf"(?<![\w/.]){re.escape(target)}(?![\w/])", text.replace("ofcstats/", "")):
        return True
    name = re.compile(rf"(?<![\w/.]){re.escape(rel.name)}\b")
    return bool(folder) and any(folder in line and name.search(line)
                                for line in text.splitlines())


def test_architecture_names_every_module() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    modules = [p for p in sorted(PACKAGE.rglob("*.py")) if p.read_text(encoding="utf-8").strip()]
    missing = [p.relative_to(ROOT).as_posix() for p in modules if not named_in(p, text)]
    assert not missing, f"docs/architecture.md does not name {missing}"


def test_architecture_names_only_modules_that_exist() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    for path in re.findall(r"ofcstats/[\w/]+\.py", text):
        assert (ROOT / path).exists(), f"docs/architecture.md names {path}, which is gone"


def test_the_module_check_catches_an_unnamed_module() -> None:
    board = PACKAGE / "rules" / "board.py"
    assert named_in(board, "`ofcstats/rules/board.py`")
    assert named_in(board, "| rules | `ofcstats/rules/` | `board.py` (the finished board) |")
    assert not named_in(board, "`ofcstats/rules/` | `model.py`\n`board.py` elsewhere")
    assert not named_in(board, "`ofcstats/rules/dashboard.py`")
    assert named_in(PACKAGE / "store" / "__init__.py", "the store (`ofcstats/store/`)")
    assert not named_in(PACKAGE / "store" / "__init__.py", "`ofcstats/store.py`")


SHIPPED = sorted(p for folder in ("ofcstats", "data/rulesets", "notebooks", "bench")
                 for p in (ROOT / folder).rglob("*")
                 if p.suffix in {".py", ".toml", ".ipynb", ".md"} and p.is_file())


def test_code_and_data_cite_sources_by_title() -> None:
    found = [f"{p.relative_to(ROOT)} cites {name}" for p in SHIPPED
             for name in ("RULES.md", "FORMAT.md", "DESIGN.md", "STYLE.md")
             if name in p.read_text(encoding="utf-8")]
    assert SHIPPED
    assert not found, found


def test_the_documented_limits_are_the_codes() -> None:
    """Every limit on what a log or a ruleset file may hold is written once in the code
    and stated, with that value, where users read about it."""
    from ofcstats.formats.lines import KEPT_BYTES, MAX_LINE_BYTES  # noqa: PLC0415
    from ofcstats.formats.nesting import MAX_DEPTH  # noqa: PLC0415
    from ofcstats.stakes import LOSS_CAP, POINT_VALUE, UNIT  # noqa: PLC0415

    formats = (ROOT / "docs" / "format.md").read_text(encoding="utf-8")
    assert f"| a line's length | {MAX_LINE_BYTES:,} bytes (1 MiB)" in formats
    assert f"its first {KEPT_BYTES:,} bytes are its raw text" in formats
    assert f"| {MAX_DEPTH} levels:" in formats
    assert f"| `point_value` (`ofc-hand/1`, Chipzen) | {POINT_VALUE.text} |" in formats
    assert f"| `players[].unit` | {UNIT.text} |" in formats
    assert f"money per point: a number from {POINT_VALUE.text} |" in formats
    assert f"the player's unit, a number from {UNIT.text} (default 1)" in formats
    rules = " ".join((ROOT / "docs" / "rules.md").read_text(encoding="utf-8").split())
    assert f"`point_value` is a number from {POINT_VALUE.text} and `loss_cap` one from " \
           f"{LOSS_CAP.text} points" in rules
    assert f"a `unit` (a number from {UNIT.text}, default 1)" in rules


def test_the_documented_simulate_blocks_are_the_codes() -> None:
    """The block sizes docs/command-line.md gives for simulate (what a stopped run keeps)
    are those it plays."""
    from ofcstats.simulate import FIRST_TABLES, GAMES_PER_SERIES, MAX_TABLES  # noqa: PLC0415

    text = flat("docs/command-line.md")
    assert f"The first block is {FIRST_TABLES} tables ({FIRST_TABLES * GAMES_PER_SERIES} " \
           "games," in text
    assert f"each next block twice as many tables, up to {MAX_TABLES:,}." in text
    games = {4: "four"}.get(GAMES_PER_SERIES, str(GAMES_PER_SERIES))
    assert f"the tables of a block play {games} games each" in text


def option_default(command: str, option: str) -> object:
    """The default of ``ofcstats COMMAND --option``, read from the command itself."""
    import typer.main  # noqa: PLC0415

    from ofcstats.cli import app  # noqa: PLC0415

    group = typer.main.get_command(app)
    found = [p.default for p in group.commands[command].params  # type: ignore[attr-defined]
             if f"--{option}" in p.opts]
    assert len(found) == 1, f"ofcstats {command} has no --{option}"
    return found[0]


def flat(page: str) -> str:
    return " ".join((ROOT / page).read_text(encoding="utf-8").split())


def test_the_documented_review_defaults_are_the_commands() -> None:
    """The rollouts, screen, seed and fantasyland value the docs give as defaults are those
    of ``review`` and ``replay``."""
    rollouts, screen = option_default("review", "rollouts"), option_default("review", "screen")
    seed, value = option_default("review", "seed"), option_default("review", "fantasyland-value")
    for command in ("replay",):
        assert (option_default(command, "rollouts"), option_default(command, "screen"),
                option_default(command, "seed")) == (rollouts, screen, seed)
    review = flat("docs/review.md")
    assert f"`--rollouts N` ({rollouts}), `--screen K` ({screen}), `--seed S` ({seed}) and " \
           f"`--fantasyland-value V` ({value:g})" in review
    assert f"(`R` is `--rollouts`, {rollouts} by default)" in review
    assert f"2. the `--screen` best of them ({screen})" in review
    assert f"`--rollouts`, {rollouts} by default" in flat("docs/command-line.md")
    # No other number of rollouts is given as review's default anywhere a user reads.
    for page in PAGES:
        text = " ".join(page.read_text(encoding="utf-8").split())
        for found in re.finditer(r"(\d[\d,]*) (?:rollouts )?by default", text):
            if "rollouts" in text[max(0, found.start() - 60):found.end()]:
                assert int(found[1].replace(",", "")) == rollouts, (page.name, found[0])


def test_the_documented_bootstrap_defaults_are_the_commands() -> None:
    """The resamples and the seed docs/statistics.md gives are those of every command that
    draws intervals."""
    resamples = option_default("compare", "resamples")
    seed = option_default("compare", "seed")
    for command in ("players", "player", "report"):
        assert option_default(command, "seed") == seed, command
    statistics = flat("docs/statistics.md")
    assert f"{resamples:,} resamples (`--resamples`, 100 to 100,000), seed {seed} " \
           "(`--seed`)" in statistics


def test_the_defaults_check_reads_the_commands() -> None:
    assert option_default("review", "rollouts") != option_default("simulate", "rollouts")
    with pytest.raises(AssertionError, match="has no --resamples"):
        option_default("review", "resamples")


def test_the_short_headers_page_says_what_the_commands_say() -> None:
    """Every column a command explains (its ``--help``, the line under its table) is on
    docs/command-line.md under its short header, in the same words."""
    from ofcstats.analysis import MEANINGS  # noqa: PLC0415
    from ofcstats.cli.columns import HEADERS  # noqa: PLC0415

    page = (ROOT / "docs" / "command-line.md").read_text(encoding="utf-8")
    for name, meaning in MEANINGS.items():
        if not name.startswith("street_"):
            assert f"| `{HEADERS.get(name, name)}` | `{name}` | {meaning} |" in page, name
    assert all(name in MEANINGS for name in HEADERS), set(HEADERS) - set(MEANINGS)
