"""The ``ofcstats`` command group: its errors as one line and an exit code, its own
options (``--debug``, ``--version``) and the ``rulesets`` and ``db`` subgroups.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar

import duckdb
import typer
import typer.core
import typer.main
from typer._click import exceptions as usage
from typer.exceptions import TyperException

from ofcstats.errors import DatabaseInUseError, Interrupted, OfcstatsError, StoreError
from ofcstats.store.connect import interrupted, storage_full


class _Settings:
    """Options of the ``ofcstats`` command itself, before the subcommand."""

    debug: bool = False
    command: ClassVar[list[str]] = []  # the command's words after the program: db, info


def exit_code(error: BaseException) -> int:
    """2 for a usage error, 1 for a failure (the store, the file system, anything else)."""
    return 1 if isinstance(error, StoreError | OSError) or not isinstance(
        error, OfcstatsError) else 2


def _one_line(error: BaseException) -> str:
    if isinstance(error, DatabaseInUseError):
        return error.advice(f"{_command_name()} --wait SECONDS")
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _command_name() -> str:
    """The command being run: ``ofcstats db info``."""
    return " ".join(["ofcstats", *_Settings.command])


def _damaged(error: BaseException) -> bool:
    """DuckDB finding the database file cut short or its blocks not what it wrote (its
    message names the file, or the block, and the cause)."""
    return isinstance(error, duckdb.Error) and (
        (isinstance(error, duckdb.IOException) and "Could not read enough bytes" in str(error))
        or "Corrupt database file" in str(error))


def _given_value(option: str, words: Sequence[str]) -> str | None:
    """The value given to ``option`` on the command line (its last use), if any."""
    found = None
    for index, word in enumerate(words):
        if word == option and index + 1 < len(words):
            found = words[index + 1]
        elif word.startswith(f"{option}="):
            found = word.split("=", 1)[1]
    return found


_AT_LEAST = re.compile(r"[Ii]nput should be greater than or equal to (\S+)")
_OUT_OF_RANGE = re.compile(r"[Ii]nput should be (?:greater|less) than")


def _range_rule(param: object) -> str | None:
    """``must be from 1 to 10,000``: the range of an option with both bounds, else None."""
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is None or high is None:
        return None
    return f"must be from {_bound(low)} to {_bound(high)}"


def _bound(value: float) -> str:
    """``10,000``, ``86,400``, ``0.5``."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def usage_line(error: usage.UsageError, words: Sequence[str]) -> str:
    """A usage error of the command line as one line: the option and the value given, what
    is wrong, and where the help is (``--since yesterday: not a date ...``).

    >>> _Settings.command[:] = ["compare"]  # (the command the line named)
    >>> usage_line(usage.UsageError("No such option: --bogus"), ["compare", "--bogus"])
    'no such option: --bogus (see ofcstats compare --help)'
    """
    see = f" (see {_command_name()} --help)"
    if isinstance(error, usage.BadParameter) and not isinstance(error, usage.MissingParameter):
        opts = list(getattr(error.param, "opts", None) or [])
        name = next((o for o in opts if o.startswith("--")), opts[0] if opts else "")
        given = None
        for option in opts:  # (named as the command line gave it)
            if (value := _given_value(option, words)) is not None:
                name, given = option, value
        reason = error.message.strip().removeprefix("Value error, ").rstrip(".")
        if "datetime" in reason or "date" in reason.split():
            reason = "not a date: give one in ISO 8601, e.g. 2026-01-31 or 2026-01-31T18:00"
        elif _OUT_OF_RANGE.search(reason) and (rule := _range_rule(error.param)):
            reason = rule
        elif match := _AT_LEAST.search(reason):
            reason = f"must be {match.group(1)} or more"
        elif " is not one of " in reason:
            choices = reason.split(" is not one of ", 1)[1].replace("'", "")
            reason = f"use one of {choices}"
        else:
            reason = reason[:1].lower() + reason[1:]
        where = f"{name} {given}" if given is not None and name else name or "a value"
        return f"{where}: {reason}{see}"
    text = " ".join(error.format_message().split()).rstrip(".")
    return f"{text[:1].lower()}{text[1:]}{see}"


NOTHING_CHANGED = "nothing was stored or written to a file; run the command again"
"""What Ctrl-C kept of a command that keeps nothing as it goes (a reader, or a file
written whole at its end)."""


def interrupted_line(error: BaseException) -> str:
    """Ctrl-C as one line: what the command kept and what to run next (the words of an
    :class:`Interrupted`), else that nothing was changed."""
    return f"interrupted: {error.kept if isinstance(error, Interrupted) else NOTHING_CHANGED}"


class _Group(typer.core.TyperGroup):
    """Every command's errors as one line and an exit code; a traceback only with --debug."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             windows_expand_args: bool = True, **extra: Any) -> Any:
        """The command line run, its usage errors (a bad value, an unknown option) one
        line each, exit code 2, instead of a usage block."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode,
                                windows_expand_args, **extra)
        words = list(sys.argv[1:] if args is None else args)
        _Settings.command.clear()
        try:
            result = super().main(words, prog_name, complete_var, False, windows_expand_args,
                                  **extra)
        except usage.NoArgsIsHelpError as error:
            error.show()
            sys.exit(error.exit_code)
        except usage.UsageError as error:
            typer.echo(f"ofcstats: {usage_line(error, words)}", err=True)
            sys.exit(error.exit_code)
        except usage.ClickException as error:
            error.show()
            sys.exit(error.exit_code)
        except typer.Abort:
            typer.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        _Settings.command.append(name or "")
        return name, command, rest

    def invoke(self, ctx: Any) -> Any:
        if ctx.parent is None:
            _Settings.command.clear()
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, TyperException, BrokenPipeError):
            raise  # typer's own handling: a closed pipe ends the command quietly
        except KeyboardInterrupt as error:
            typer.echo(f"ofcstats: {interrupted_line(error)}", err=True)
            raise typer.Exit(130) from None
        except Exception as error:
            if interrupted(error):  # Ctrl-C while DuckDB ran a query
                typer.echo(f"ofcstats: {interrupted_line(error)}", err=True)
                raise typer.Exit(130) from None
            if _Settings.debug:
                raise
            known = isinstance(error, OfcstatsError | OSError)
            hint = "" if known else \
                f" ({type(error).__name__}; run with --debug for the traceback)"
            if isinstance(error, duckdb.Error) and storage_full(error):
                # DuckDB names the file and the cause; the step it stopped was undone.
                hint = ("; free some space on that disk, then run this again (what was "
                        "stored before is kept)")
            if _damaged(error):
                hint = ("; the database file is damaged: use a copy of it, or load the "
                        "logs into a new one")
            typer.echo(f"ofcstats: {_one_line(error)}{hint}", err=True)
            raise typer.Exit(exit_code(error)) from None


app = typer.Typer(
    name="ofcstats",
    help="Hand-history analytics for Open Face Chinese poker and 13-card Chinese poker.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    cls=_Group,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ofcstats {importlib.metadata.version('ofcstats')}")
        raise typer.Exit


@app.callback()
def _main(
    debug: Annotated[bool, typer.Option(
        "--debug", help="Show the traceback of an unexpected error (or set "
        "$OFCSTATS_DEBUG).")] = False,
    version: Annotated[bool, typer.Option(
        "--version", help="Print the version and exit.", callback=_version,
        is_eager=True)] = False,
) -> None:
    """Hand-history analytics for Open Face Chinese poker and 13-card Chinese poker.

    Example: ofcstats ingest logs/ --db club.duckdb && ofcstats rescore --db club.duckdb
    """
    _Settings.debug = debug or bool(os.environ.get("OFCSTATS_DEBUG"))


rulesets_app = typer.Typer(
    help="List the built-in rulesets and fantasyland policies, or show one in full.\n\n"
    "Example: ofcstats rulesets show pokerstars",
    invoke_without_command=True,
    no_args_is_help=False,
    cls=_Group,
)


db_app = typer.Typer(
    help="Look into a hand database.\n\nExample: ofcstats db info --db club.duckdb",
    no_args_is_help=True,
    cls=_Group,
)


app.add_typer(rulesets_app, name="rulesets")


app.add_typer(db_app, name="db")
