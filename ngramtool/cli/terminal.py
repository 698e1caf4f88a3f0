"""What reaches the terminal: input text with its control characters escaped, and how a command
ends when standard output is closed or its reader goes away (see docs/commands.md, Exit codes)."""

from __future__ import annotations

import os
import re
import signal
import sys
from typing import Any

import rich.console
import typer

from .helptext import HelpGroup

READER_GONE_EXIT = 128 + signal.SIGPIPE
"""141: the status a shell reports for a command that a closed pipe stopped (``yes | head -1``)."""

# C0 controls but line feed and tab, DEL, C1 controls, and the bidirectional marks and overrides
# that reorder what follows them on screen.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# What json.dumps leaves unescaped of those (it escapes every C0 control itself).
_JSON_CONTROLS = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    """``text`` safe to print on a terminal: each control character but line feed and tab (C0, DEL,
    C1) and each bidirectional override becomes the escape Python writes for it (``\\x1b``,
    ``\\r``, ``\\u202e``), so input text cannot move the cursor, recolour or retitle the terminal."""
    return _CONTROLS.sub(lambda match: repr(match.group())[1:-1], text)


def escape_json_controls(document: str) -> str:
    """A JSON document with DEL, C1 controls and bidirectional overrides written as ``\\uXXXX``
    escapes (the same JSON: those characters occur only inside strings)."""
    return _JSON_CONTROLS.sub(lambda match: f"\\u{ord(match.group()):04x}", document)


# Typer's copy of click raises these for what it parses itself (unknown options, bad numbers).
ClickUsageError = typer._click.exceptions.UsageError
NoArgsIsHelpError = typer._click.exceptions.NoArgsIsHelpError
# Typer's wording of a value that is not a number, or out of its range, as a usage error reads.
_TYPER_WORDS = (
    (re.compile(r"Input should be a valid integer"), "takes a whole number"),
    (re.compile(r"Input should be a finite number"), "takes a finite number"),
    (re.compile(r"Input should be a valid number"), "takes a number"),
    (re.compile(r"Input should be greater than or equal to (\S+)"), r"takes a number of at least \1"),
    (re.compile(r"Input should be less than or equal to (\S+)"), r"takes a number of at most \1"),
    (re.compile(r"Input should be greater than (\S+)"), r"takes a number above \1"),
    (re.compile(r"Input should be less than (\S+)"), r"takes a number below \1"),
)


def click_error_line(exc: Any, args: list[str], command_path: str = "ngramtool") -> str:
    """One line for a usage error that typer's click found (the option, what it takes, the value
    given in ``args``, and where the help is), in place of click's boxed message.
    ``command_path``: the command ``args`` name, for an error that click raises without its
    context (an option without its value)."""
    command = exc.ctx.command_path if exc.ctx is not None else command_path
    see = f" (see '{command} --help')"
    param = getattr(exc, "param", None)
    message = str(exc.message) if param is not None else ""
    if not message or not getattr(param, "opts", None):  # no parameter, or a missing one
        return exc.format_message().rstrip(".") + see
    option = max(param.opts, key=len)
    for typer_words, ours in _TYPER_WORDS:
        found = typer_words.match(message)
        if found:
            given = _given_value(param.opts, args)
            return f"{option} {found.expand(ours)}" + (f", got {given!r}" if given is not None else "") + see
    return f"{option}: {message.rstrip('.')}{see}"


def _given_value(opts: list[str], args: list[str]) -> str | None:
    """The value given to an option (``--x v`` or ``--x=v``) on the command line ``args``."""
    for i, arg in enumerate(args):
        if arg in opts and i + 1 < len(args):
            return args[i + 1]
        name, equals, value = arg.partition("=")
        if equals and name in opts:
            return value
    return None


class ReaderGone(Exception):
    """Standard output's reader went away (a broken pipe) while a command wrote to it."""


class Console(rich.console.Console):
    """A rich console that reports a reader that went away as :class:`ReaderGone` (rich's own
    console exits with status 1)."""

    def on_broken_pipe(self) -> None:
        """Drop what is left to print and stop the command."""
        self.quiet = True
        raise ReaderGone()


class Commands(HelpGroup):
    """The command group; a broken pipe leaves a command as :class:`ReaderGone`, which click does
    not turn into its own silent exit status 1."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise ReaderGone() from None


def stdout_closed() -> bool:
    """Whether the process started with standard output closed (``>&-``): Python then sets
    ``sys.stdout`` to None."""
    return sys.stdout is None


def silence_stdout() -> None:
    """Point standard output at the null device, so that what is still buffered for the reader
    that went away cannot fail again when the interpreter flushes it at exit."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, sys.stdout.fileno())
    finally:
        os.close(null)
