"""The import graph is what docs/architecture.md says it is: the package's imports, read
from the source (``ast``), have no circles, run down the floors the page lists (the few
that run back up listed here and there), and along the main path each module imports
what the page says it imports and never what it says it does not.

``python tests/test_architecture.py [TREE]`` prints the measure (modules, floors, import
arrows, arrows running back up, circles) of this tree or of another checkout, by this
page's floors.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"

BACK_ARROWS = {
    # A batch of checked hands keeps the lines it came from, for the raw text of rejects;
    # records.py names their class for type checking only.
    ("records", "formats.lines"),
}
"""Imports that run back up the floors, and stay: at most three, each listed in
docs/architecture.md too."""

KNOWN_BACK_ARROWS: set[tuple[str, str]] = set()
"""Imports running back up that are to go: the test fails when one goes, so that it is
taken off this list."""

KNOWN_MAIN_PATH: set[tuple[str, str]] = set()
"""Main-path claims of docs/architecture.md the code does not keep yet (importer, what it
is said never to import)."""


def module_files(root: Path) -> dict[str, Path]:
    """Every module of the package that holds code, by dotted name without ``ofcstats.``
    (a package's ``__init__.py`` by the package's name)."""
    package = root / "ofcstats"
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts and path.read_text(encoding="utf-8").strip():
            found[".".join(parts)] = path
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Who imports whom: every import statement anywhere in a module (inside functions
    and under ``TYPE_CHECKING`` too). ``from a import b`` is an import of ``a.b`` when
    that is a module, else of ``a``; an import of a module that holds no code (the
    top package's ``__init__.py``) counts for nothing."""
    modules = module_files(root)

    def resolve(name: str) -> str | None:
        name = name.removeprefix("ofcstats").removeprefix(".")
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                named = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                named = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in named:
                if target == "ofcstats" or target.startswith("ofcstats."):
                    imported = resolve(target)
                    if imported is not None and imported != name:
                        graph[name].add(imported)
    return graph


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part = set()
            while True:
                member = stack.pop()
                part.add(member)
                if member == node:
                    break
            if len(part) > 1:
                found.append(part)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _section_rows(heading: str, text: str) -> list[list[str]]:
    """The cells of the table under ``heading`` (a ``##`` or ``###`` title), header and
    rule left out."""
    section = re.split(rf"^#+ {re.escape(heading)}\n", text, maxsplit=1, flags=re.MULTILINE)
    assert len(section) == 2, f"docs/architecture.md has no section {heading!r}"
    rows = []
    for line in section[1].split("\n#", 1)[0].splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows[1:]


def _names(cell: str) -> list[str]:
    """The modules a cell names in backticks: ``x.py`` or a package ``x/``."""
    return [name for name in re.findall(r"`([\w/.]+)`", cell)
            if name.endswith((".py", "/"))]


def floors(text: str) -> dict[str, int]:
    """The floor of each module or package the page's floor table names."""
    table = {}
    for row in _section_rows("Floors", text):
        for name in _names(row[1]):
            assert name not in table, f"{name} is on two floors"
            table[name] = int(row[0])
    return table


def _member(module: str, name: str) -> bool:
    """Whether ``module`` (dotted) is the module or in the package ``name`` (a path)."""
    if name.endswith("/"):
        package = name.rstrip("/").replace("/", ".")
        return module == package or module.startswith(package + ".")
    return module == name.removesuffix(".py").replace("/", ".")


def floor_of(module: str, table: dict[str, int]) -> int | None:
    """A module's floor: that of the most precise name the table gives it under."""
    named = [name for name in table if _member(module, name)]
    return table[max(named, key=len)] if named else None


def arrows_up(graph: dict[str, set[str]], table: dict[str, int]) -> set[tuple[str, str]]:
    """Imports of a module on a higher floor than the importer's."""
    return {(a, b) for a, targets in graph.items() for b in targets
            if (floor_of(a, table) or 0) < (floor_of(b, table) or 0)}


def main_path(text: str) -> list[tuple[str, list[str], list[str]]]:
    """The page's main-path table: (module, what it imports, what it never imports)."""
    return [(_names(row[0])[0], _names(row[1]), _names(row[2]))
            for row in _section_rows("Who imports whom along the main path", text)]


def imports_any(graph: dict[str, set[str]], importer: str, imported: str) -> bool:
    """Whether a module of ``importer`` imports a module of ``imported`` (each a path)."""
    return any(_member(a, importer) and _member(b, imported)
               for a, targets in graph.items() for b in targets)


def depth(graph: dict[str, set[str]]) -> int:
    """The longest chain of imports, a circle counted as one module."""
    part_of = {m: frozenset(part) for part in circles(graph) for m in part}
    longest: dict[frozenset[str], int] = {}

    def chain(part: frozenset[str]) -> int:
        if part not in longest:
            longest[part] = 0  # a circle's own imports lead back to it
            below = {part_of.get(b, frozenset([b])) for a in part for b in graph[a]} - {part}
            longest[part] = 1 + max(map(chain, below), default=0)
        return longest[part]

    return max((chain(part_of.get(m, frozenset([m]))) for m in graph), default=0)


def measure(root: Path = ROOT) -> dict[str, int]:
    """The import graph's figures, by this page's floors."""
    graph = import_graph(root)
    table = floors(ARCHITECTURE.read_text(encoding="utf-8"))
    return {"modules": len(graph), "floors": len(set(table.values())),
            "arrows": sum(len(targets) for targets in graph.values()),
            "arrows up": len(arrows_up(graph, table)), "circles": len(circles(graph)),
            "longest chain": depth(graph)}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


@pytest.fixture(scope="module")
def page() -> str:
    return ARCHITECTURE.read_text(encoding="utf-8")


def test_every_module_sits_on_a_floor(graph: dict[str, set[str]], page: str) -> None:
    table = floors(page)
    assert not [m for m in graph if floor_of(m, table) is None], "modules on no floor"
    for name in table:
        assert any(_member(m, name) for m in graph), f"the floors name {name}, which is gone"


def test_no_module_imports_in_a_circle(graph: dict[str, set[str]]) -> None:
    assert circles(graph) == []


def test_imports_run_down_the_floors(graph: dict[str, set[str]], page: str) -> None:
    assert len(BACK_ARROWS) <= 3
    assert arrows_up(graph, floors(page)) == BACK_ARROWS | KNOWN_BACK_ARROWS
    listed = page.split("## Floors", 1)[1]
    for importer, imported in BACK_ARROWS:
        assert f"`{importer.replace('.', '/')}.py` imports `{imported.replace('.', '/')}.py`" \
            in listed, f"docs/architecture.md does not list {importer} -> {imported}"


def test_the_main_path_imports_as_the_page_says(graph: dict[str, set[str]], page: str
                                                ) -> None:
    claims = main_path(page)
    assert len(claims) >= 8
    broken = []
    for module, wanted, never in claims:
        broken += [f"{module} does not import {name}" for name in wanted
                   if not imports_any(graph, module, name)]
        broken += [f"{module} imports {name}" for name in never
                   if imports_any(graph, module, name) and (module, name) not in KNOWN_MAIN_PATH]
    assert not broken
    still = {(m, n) for m, n in KNOWN_MAIN_PATH if imports_any(graph, m, n)}
    assert still == KNOWN_MAIN_PATH, f"no longer so: {KNOWN_MAIN_PATH - still}"


MAX_COMMAND_LINES = 600
"""The longest a module of the command line may be: each reads in one sitting."""


def test_every_module_of_the_command_line_is_short() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines())
             for name, path in module_files(ROOT).items() if name.split(".")[0] == "cli"}
    assert len(sizes) > 1, "the command line is one module again"
    assert {name: size for name, size in sizes.items() if size >= MAX_COMMAND_LINES} == {}


def test_the_measure_finds_a_circle_and_an_arrow_up(tmp_path: Path) -> None:
    package = tmp_path / "ofcstats"
    (package / "store").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text("from ofcstats import store\n")
    (package / "store" / "__init__.py").write_text("from ofcstats.store.tables import T\n")
    (package / "store" / "tables.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from ofcstats.store import Store\nT = 1\n")
    graph = import_graph(tmp_path)
    assert graph == {"base": {"store"}, "store": {"store.tables"}, "store.tables": {"store"}}
    assert circles(graph) == [{"store", "store.tables"}]
    table = {"base.py": 0, "store/": 1}
    assert arrows_up(graph, table) == {("base", "store")}
    assert floor_of("store.tables", table) == 1
    assert imports_any(graph, "base.py", "store/")
    assert not imports_any(graph, "store/", "base.py")


if __name__ == "__main__":
    tree = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    found = import_graph(tree)
    print(", ".join(f"{key} {value}" for key, value in measure(tree).items()))
    table = floors(ARCHITECTURE.read_text(encoding="utf-8"))
    for importer, imported in sorted(arrows_up(found, table)):
        print(f"  up: {importer} -> {imported}")
    for part in circles(found):
        print(f"  circle: {' <-> '.join(sorted(part))}")
