"""docs/rules-sources.md: every test it names exists, and every preset and key it names
is real, so the table cannot drift from the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ofcstats.rules import policy_names, preset_names
from ofcstats.rules.load import _HEAD_TO_HEAD_KEYS, _POLICY_KEYS, _RULESET_KEYS

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "rules-sources.md").read_text(encoding="utf-8")


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_test_the_rules_table_names_exists() -> None:
    named = re.findall(r"`(?:(test_\w+)\.py)?::(test_\w+)`", DOC)
    assert len(named) > 40
    current = None
    for module, test in named:
        current = module or current
        assert current is not None
        assert test in _tests_in(ROOT / "tests" / f"{current}.py"), f"{current}::{test}"


def test_every_preset_policy_and_key_the_rules_table_names_exists() -> None:
    for name in re.findall(r"\(`([a-z0-9-]+)`", DOC) + re.findall(r"`([a-z0-9-]+)` \(`", DOC):
        assert name in preset_names() or name in policy_names(), name
    for key in re.findall(r"`([a-z_]+) = ", DOC):
        assert key in _RULESET_KEYS | _POLICY_KEYS | _HEAD_TO_HEAD_KEYS, key
