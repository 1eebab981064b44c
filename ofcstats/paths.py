"""Checks on the places a command will write, made before anything is written."""

from __future__ import annotations

import os
from pathlib import Path

from ofcstats.errors import UsageError


def writable_file(path: Path, what: str = "output", *, make_parents: bool = False) -> None:
    """Raise :class:`UsageError` unless ``path`` can be written: an existing writable file,
    or a new one in a writable directory (with ``make_parents``, in a directory that can
    be made). Nothing is created.

    >>> writable_file(Path("/etc/passwd/report.html"), "report")
    Traceback (most recent call last):
    ...
    ofcstats.errors.UsageError: /etc/passwd/report.html: cannot write the report: /etc/passwd
    is a file, not a directory
    """
    if path.is_dir():
        raise UsageError(f"{path}: is a directory; name a file to write the {what} to")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise UsageError(f"{path}: cannot write the {what}: the file is read-only")
        return
    parent = path.parent
    for above in (parent, *parent.parents):
        if not above.exists():
            continue
        if not above.is_dir():
            raise UsageError(f"{path}: cannot write the {what}: {above} is a file, "
                             "not a directory")
        if above != parent and not make_parents:
            raise UsageError(f"{path}: cannot write the {what}: no directory {parent}")
        if not os.access(above, os.W_OK | os.X_OK):
            raise UsageError(f"{path}: cannot write the {what}: the directory {above} is "
                             "not writable")
        return
    raise UsageError(f"{path}: cannot write the {what} here")


def writable_directory(path: Path, what: str = "output") -> None:
    """Raise :class:`UsageError` unless ``path`` is a directory, or one that can be made."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path}: is a file; name a directory to write the {what} to")
    if not path.exists():
        writable_file(path, what, make_parents=True)
