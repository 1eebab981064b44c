"""``ofcstats cli-reference``: docs/cli.md from the commands themselves.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
import typer.core
import typer.main

from ofcstats.cli.app import app
from ofcstats.cli.output import emit, output_file

REFERENCE_WIDTH = 92  # columns of the help text in docs/cli.md


def cli_reference() -> str:
    """docs/cli.md: every command's help, as ``ofcstats COMMAND --help`` prints it."""
    root = typer.main.get_command(app)
    parts = ["# Command line reference", "",
             "Every command of `ofcstats` with its options, as `--help` prints them. This "
             "page is generated from the commands themselves (`make docs` writes it; a test "
             "checks that it is current). Exit codes: 0 done; 1 some input skipped (each "
             "skip on stderr as `FILE:LINE: reason`) or the command failed; 2 a usage error "
             "(a missing input, an unknown option or filter value, a bad option value, an output "
             "that cannot be written), found before anything is created, in one line. "
             "Tables show the main columns under short headers, fitted to the terminal, "
             "counts with thousands separators (`1,000,000`); "
             "`--wide` shows every column under its full name; CSV and JSON always give "
             "every column. A file to write (`-o`, `--pdf`) named by a folder (a path ending "
             "in `/`, or an existing directory) is written in that folder under the "
             "command's name: `report.html`, `report.pdf`, `hand.html`, `hands.jsonl`, or "
             "`compare`, `players`, `player`, `scores`, `query` (sql) with the format's "
             "ending (`.txt` for a table, `.csv`, `.json`, `.jsonl`); missing folders are "
             "made.", ""]

    def add(command: Any, name: str, parent: Any = None) -> None:
        ctx = command.context_class(command, parent=parent, info_name=name,
                                    terminal_width=REFERENCE_WIDTH,
                                    max_content_width=REFERENCE_WIDTH)
        parts.extend([f"## {ctx.command_path}", "", "```text", command.get_help(ctx).rstrip(),
                      "```", ""])
        for sub_name, sub in getattr(command, "commands", {}).items():
            if not sub.hidden:
                add(sub, sub_name, ctx)

    add(root, "ofcstats")
    return "\n".join(parts)


@app.command("cli-reference", hidden=True)
def cli_reference_command(
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write it to this file. Default: stdout.", metavar="<path>")]
        = None,
) -> None:
    """Print docs/cli.md, the reference of every command, from the commands themselves.

    Example: ofcstats cli-reference -o docs/cli.md
    """
    emit(cli_reference(), output_file(output, "cli.md", "reference"))
