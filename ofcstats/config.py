"""The configuration file: ``--config PATH``, else ``./ofcstats.toml`` when there is one.

Only the ``[engine]`` table is read (``docs/scale.md``)::

    [engine]
    engine = "ray"              # local or ray
    jobs = 8                    # worker processes (local) or CPUs of the local Ray cluster
    address = "ray://head:10001"  # a running Ray cluster; default: start one here
    retries = 3                 # times a task whose worker died is run again
    shard_hands = 50000         # hands per shard of whole sessions (rescore)
    review_shard_hands = 400    # ... for review

An option given on the command line wins over the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ofcstats.errors import UsageError

DEFAULT_CONFIG = Path("ofcstats.toml")

_ENGINE_KEYS: dict[str, type] = {"engine": str, "jobs": int, "address": str, "retries": int,
                                 "shard_hands": int, "review_shard_hands": int}
_AT_LEAST = {"jobs": 1, "retries": 0, "shard_hands": 1, "review_shard_hands": 1}


def engine_config(path: Path | None = None) -> dict[str, Any]:
    """The ``[engine]`` table of ``path`` (which must exist), else of ``./ofcstats.toml``
    when there is one, else nothing; every key and value checked."""
    if path is None:
        if not DEFAULT_CONFIG.is_file():
            return {}
        path = DEFAULT_CONFIG
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such configuration file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: cannot read the configuration: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{path}: not valid TOML: {error}") from None
    table = data.get("engine", {})
    if not isinstance(table, dict):
        raise UsageError(f"{path}: engine must be a table ([engine])")
    for key, value in table.items():
        kind = _ENGINE_KEYS.get(key)
        if kind is None:
            raise UsageError(f"{path}: [engine] has no key {key!r}; known keys: "
                             f"{', '.join(_ENGINE_KEYS)}")
        if not isinstance(value, kind) or isinstance(value, bool):
            raise UsageError(f"{path}: [engine] {key} must be a {kind.__name__}, "
                             f"not {value!r}")
        if isinstance(value, int) and key in _AT_LEAST and value < _AT_LEAST[key]:
            raise UsageError(f"{path}: [engine] {key} must be at least {_AT_LEAST[key]}, "
                             f"not {value}")
    if table.get("engine", "local") not in ("local", "ray"):
        raise UsageError(f"{path}: [engine] engine must be local or ray, "
                         f"not {table['engine']!r}")
    return dict(table)
