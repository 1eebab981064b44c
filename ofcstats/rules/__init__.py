"""Rulesets as data: the model and its TOML presets (docs/rules.md §3-§7)."""

from ofcstats.rules.load import (
    load_policy,
    load_royalty_table,
    load_ruleset,
    load_rulesets,
    policy_names,
    preset_names,
    presets_played_in,
    royalty_names,
)
from ofcstats.rules.model import FantasylandPolicy, HeadToHead, Naturals, RoyaltyTable, Ruleset

__all__ = [
    "FantasylandPolicy",
    "HeadToHead",
    "Naturals",
    "RoyaltyTable",
    "Ruleset",
    "load_policy",
    "load_royalty_table",
    "load_ruleset",
    "load_rulesets",
    "policy_names",
    "preset_names",
    "presets_played_in",
    "royalty_names",
]
