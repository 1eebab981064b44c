"""Checks on the places a command will write, made before anything is written."""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ofcstats.errors import UsageError


def no_loop(path: Path, what: str = "file") -> None:
    """Raise :class:`UsageError` when ``path`` is a symbolic link that loops (or leads
    through too many links), which would otherwise read as a missing file.

    >>> no_loop(Path("/"))
    """
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UsageError(f"{path}: cannot use it for the {what}: a symbolic link "
                             "that loops back on itself") from None


def writable_file(path: Path, what: str = "output", *, make_parents: bool = True) -> None:
    """Raise :class:`UsageError` unless ``path`` can be written: an existing writable file,
    or a new one in a writable directory, or in one that can be made (every output: its
    folders are made when it is written, by :func:`written_whole`; without
    ``make_parents``, the directory must exist). Nothing is created.

    >>> writable_file(Path("/etc/passwd/report.html"), "report")
    Traceback (most recent call last):
    ...
    ofcstats.errors.UsageError: /etc/passwd/report.html: cannot write the report: /etc/passwd
    is a file, not a directory
    """
    no_loop(path, what)
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
        if not os.access(above, os.W_OK | os.X_OK) or not _can_create_in(above):
            raise UsageError(f"{path}: cannot write the {what}: the directory {above} is "
                             "not writable; choose a place you can write to")
        return
    raise UsageError(f"{path}: cannot write the {what} here")


def writable_database(path: Path) -> None:
    """Raise :class:`UsageError` unless a program may write the database file ``path``:
    the file, when it exists, and the directory it is in (DuckDB writes its write-ahead
    log beside the file), or, for a new one, a directory that exists and can be written.
    Every command that writes the database asks this first, so that each is refused the
    same way. Nothing is created."""
    no_loop(path, "database")
    if path.is_file() and not os.access(path, os.W_OK):
        raise UsageError(f"{path}: cannot write the database: the file is read-only; "
                         f"{FIX_DATABASE}")
    writable_file(path, "database", make_parents=False)
    folder = path.parent
    if path.exists() and (not os.access(folder, os.W_OK | os.X_OK)
                          or not _can_create_in(folder)):
        raise UsageError(f"{path}: cannot write the database: the directory {folder} is not "
                         f"writable (the database's log is written beside it); {FIX_DATABASE}")


FIX_DATABASE = ("give yourself write permission, or copy the file to a place you can write "
                "and name the copy with --db")
"""What to do about a database that cannot be written."""


def _can_create_in(directory: Path) -> bool:
    """Whether a file can be made in ``directory``: tried, since permission bits do not
    tell (a superuser passes every check, yet cannot make files in ``/proc``); the trial
    file is removed at once."""
    try:
        handle, name = tempfile.mkstemp(prefix=".ofcstats-", dir=directory)
    except OSError:
        return False
    os.close(handle)
    os.unlink(name)
    return True


def writable_directory(path: Path, what: str = "output") -> None:
    """Raise :class:`UsageError` unless ``path`` is a directory, or one that can be made."""
    no_loop(path, what)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path}: is a file; name a directory to write the {what} to")
    if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{path}: cannot write the {what}: the directory is not writable")
    if not path.exists():
        writable_file(path, what, make_parents=True)


@contextmanager
def written_whole(path: Path) -> Iterator[Path]:
    """Write ``path`` whole or not at all: the block writes the file it is given (beside
    ``path``), which then takes ``path``'s name. On a failure (a full disk, say) the
    partial file is removed and the error names ``path``, so that nothing half-written
    is left and the message says where. The folders above ``path`` are made if missing.
    """
    partial = path.with_name(path.name + ".partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        yield partial
        partial.replace(path)
    except OSError as error:
        raise OSError(error.errno, error.strerror or str(error), str(path)) from None
    finally:
        partial.unlink(missing_ok=True)


def _errno(error: BaseException) -> int | None:
    """The system error number of a failed file operation: an :class:`OSError`'s, or
    the one DuckDB writes into its message (``"errno":"28"``); None for other errors."""
    number = getattr(error, "errno", None)
    if isinstance(number, int):
        return number
    found = re.search(r'"errno":\s*"?(\d+)', str(error))
    return int(found.group(1)) if found else None


def replace_directory_files(directory: Path, write: Callable[[Path], list[Path]],
                            what: str) -> list[Path]:
    """Files (or folders) written by ``write`` into a fresh folder inside ``directory``,
    then moved into ``directory`` under their names. On a failure none of them is left
    (files already in ``directory`` stay as they were); a failed write (a full disk)
    becomes an :class:`OSError` naming ``directory``, any other error goes on as it was."""
    made = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir()
        written = write(partial)
        moved = []
        for file in written:
            if file.is_dir():  # a folder of files replaces the one before it whole
                shutil.rmtree(directory / file.name, ignore_errors=True)
            file.replace(directory / file.name)
            moved.append(directory / file.name)
        return moved
    except Exception as error:
        shutil.rmtree(partial, ignore_errors=True)
        if made and not any(directory.iterdir()):
            directory.rmdir()
        number = _errno(error)
        if number is None:
            raise
        raise OSError(number, f"cannot write the {what}: {os.strerror(number)}",
                      str(directory)) from None
    finally:
        shutil.rmtree(partial, ignore_errors=True)
