"""The ``ngramtool`` command: a typer app whose commands live one per module."""

from __future__ import annotations

import sys

import typer
from rich.text import Text

from ..errors import NgramToolError
from . import (
    bench_cmd,
    collisions_cmd,
    explain_cmd,
    export_cmd,
    hash_cmd,
    inspect_cmd,
    merge_cmd,
    size_cmd,
    spec_cmd,
    tokenize_cmd,
    verify_cmd,
    vocab_cmd,
)
from .common import stderr

app = typer.Typer(
    name="ngramtool",
    help="Engram-style n-gram hash memory: tokenize, canonicalize, hash, analyse and size tables.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
for module in (
    hash_cmd,
    tokenize_cmd,
    explain_cmd,
    vocab_cmd,
    inspect_cmd,
    verify_cmd,
    export_cmd,
    merge_cmd,
    collisions_cmd,
    size_cmd,
    spec_cmd,
    bench_cmd,
):
    module.register(app)


def main() -> None:
    """Entry point: run the app; user errors become one line on stderr and an exit code.

    Typer reports its own usage errors (exit 2); ngramtool's errors are caught here.
    """
    try:
        app()
    except NgramToolError as exc:
        stderr.print(Text("error: ", style="bold red") + Text(str(exc)))
        sys.exit(exc.exit_code)
    except MemoryError:
        stderr.print(
            Text("error: ", style="bold red")
            + Text(
                "out of memory: this spec needs larger arrays than the machine has; use fewer heads or layers"
            )
        )
        sys.exit(1)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        sys.stderr.close()
        sys.exit(1)
    except OSError as exc:  # a file system problem the commands did not anticipate: still one line
        where = f"{exc.filename}: " if exc.filename else ""
        stderr.print(Text("error: ", style="bold red") + Text(f"{where}{exc.strerror or exc}"))
        sys.exit(1)
