"""The ``ngramtool`` command: a typer app whose commands live one per module."""

from __future__ import annotations

import sys

import click
import typer
from rich.text import Text

from ..errors import NgramToolError
from . import explain_cmd, hash_cmd, tokenize_cmd, vocab_cmd
from .common import stderr

app = typer.Typer(
    name="ngramtool",
    help="Engram-style n-gram hash memory: tokenize, canonicalize, hash, analyse and size tables.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
for module in (hash_cmd, tokenize_cmd, explain_cmd, vocab_cmd):
    module.register(app)


def main() -> None:
    """Entry point: run the app; user errors become one line on stderr and an exit code."""
    try:
        app(standalone_mode=False)
    except NgramToolError as exc:
        stderr.print(Text("error: ", style="bold red") + Text(str(exc)))
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        stderr.print("aborted")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        stderr.print("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(1)
