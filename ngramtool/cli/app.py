"""The ``ngramtool`` command: a typer app, and the table of its commands (:data:`COMMANDS`).

Each command lives in its own module (``hash_cmd.py`` ...), which names it as ``COMMAND`` (its name,
help text and function: :class:`.command.Command`); :data:`COMMANDS` names the modules, and a
command's module is imported when that command runs (or when ``--help`` lists them all), so a
command loads only what it uses.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Iterable
from typing import Annotated, Any

import typer
from rich.text import Text

from ..util import signals
from ..util.errors import NgramToolError
from ..util.version import __version__
from . import coercion
from .command import Command
from .exiting import leave
from .helptext import App
from .terminal import (
    READER_GONE_EXIT,
    ClickUsageError,
    Commands,
    NoArgsIsHelpError,
    ReaderGone,
    click_error_line,
    escape_controls,
    silence_stdout,
    stdout_closed,
)

coercion.install()  # plain option values without a pydantic validator each

COMMANDS = {
    "hash": "hash_cmd",
    "tokenize": "tokenize_cmd",
    "explain": "explain_cmd",
    "vocab": "vocab_cmd",
    "inspect": "inspect_cmd",
    "verify": "verify_cmd",
    "export": "export_cmd",
    "merge": "merge_cmd",
    "collisions": "collisions_cmd",
    "cache": "cache_cmd",
    "size": "size_cmd",
    "spec": "spec_cmd",
    "bench": "bench_cmd",
}
"""Every command and its module, in the order help lists them."""


def command_of(name: str) -> Command:
    """The :class:`.command.Command` called ``name`` (its module imported now)."""
    return importlib.import_module(f"{__package__}.{COMMANDS[name]}").COMMAND


class LazyCommands(Commands):
    """The command group: each command is made when it is asked for."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, name: str) -> Any:
        if name not in COMMANDS:
            return None
        command = command_of(name)
        single = App(name=command.name, help=command.help, no_args_is_help=bool(command.subcommands))
        add_commands(single, [command] if not command.subcommands else command.subcommands)
        return typer.main.get_command(single)  # one command's app is that command; else a group


app = App(
    name="ngramtool",
    cls=LazyCommands,
    help="Engram-style n-gram hash memory: tokenize, canonicalize, hash, analyse and size tables.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        print(f"ngramtool {__version__}")
        raise typer.Exit()


@app.callback()
def _main_options(
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=_print_version, is_eager=True),
    ] = False,
) -> None:
    """Engram-style n-gram hash memory: tokenize, canonicalize, hash, analyse and size tables."""


def add_commands(group: typer.Typer, commands: Iterable[Command]) -> None:
    """Add ``commands`` to ``group``: a function as a command, subcommands as a group of their own."""
    for command in commands:
        if command.subcommands:
            subgroup = App(help=command.help, no_args_is_help=True)
            add_commands(subgroup, command.subcommands)
            group.add_typer(subgroup, name=command.name)
        else:
            group.command(command.name, help=command.help)(command.function)


def main() -> None:
    """Entry point: run the app; user errors become one line on stderr and an exit code.

    Typer reports its own usage errors (exit 2); ngramtool's errors are caught here. When the
    reader of standard output goes away (``| head``), the command stops quietly with status 141
    (after the context managers removed what it had begun); a closed standard output (``>&-``)
    is refused before any work. SIGINT, SIGTERM and SIGHUP stop the command the same way, with
    status 130, 143 and 129 and one line saying so; a second signal exits at once
    (:mod:`ngramtool.util.signals`).
    """
    signals.install()
    _log_to_stderr()
    if stdout_closed():
        _error(
            "standard output is closed (>&-): ngramtool writes its results there; "
            "redirect it to a file or to /dev/null instead"
        )
        sys.exit(1)
    try:
        code = _run()
        sys.stdout.flush()  # a reader that left shows here, not as a warning when Python exits
    except (ReaderGone, BrokenPipeError):
        silence_stdout()
        code = READER_GONE_EXIT
    except signals.Interrupted as stop:
        _error(f"{stop}: stopped, and removed the outputs it had begun")
        code = stop.exit_code
    sys.exit(code)


def entry() -> None:
    """The console script and ``python -m ngramtool``: :func:`main`, then the process ends at
    once, without Python's teardown (:func:`.exiting.leave`, which keeps Python's whole exit
    for a profiler or tracer, or a thread still running)."""
    try:
        main()
    except SystemExit as done:
        leave(done.code)


def _command_path(args: list[str]) -> str:
    """``ngramtool``, then the command and subcommand that ``args`` start with (``ngramtool spec
    show``), as click names them in help."""
    words = ["ngramtool"]
    if args and args[0] in COMMANDS:
        words.append(args[0])
        subcommands = {command.name for command in command_of(args[0]).subcommands}
        if len(args) > 1 and args[1] in subcommands:
            words.append(args[1])
    return " ".join(words)


def _run() -> int:
    """Run the app; returns its exit status."""
    try:
        status = app(prog_name="ngramtool", standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except NoArgsIsHelpError:
        return 2  # the help is printed already
    except ClickUsageError as exc:
        _error(click_error_line(exc, sys.argv[1:], _command_path(sys.argv[1:])))
        return exc.exit_code
    except NgramToolError as exc:
        from .options import option_for  # the error path alone needs it

        _error(exc.spelled(option_for))  # the library names parameters; here they are options
        return exc.exit_code
    except MemoryError:
        _error("out of memory: this spec needs larger arrays than the machine has; use fewer heads or layers")
        return 1
    except BrokenPipeError:
        raise  # the reader went away: main ends quietly
    except OSError as exc:  # a file system problem the commands did not anticipate: still one line
        where = f"{exc.filename}: " if exc.filename else ""
        _error(f"{where}{exc.strerror or exc}")
        return 1
    return status if isinstance(status, int) else 0  # an exit status (--help, --version) or nothing


LOG_LEVEL_VARIABLE = "NGRAMTOOL_LOG_LEVEL"


def _log_to_stderr() -> None:
    """Show the library's log messages (stdlib ``logging``, logger ``ngramtool``) on stderr from
    ``NGRAMTOOL_LOG_LEVEL`` up (``INFO``, ``DEBUG``); by default none: the commands report what the
    library logs (skipped records, unsafe cuts) in their own words."""
    level = os.environ.get(LOG_LEVEL_VARIABLE, "").upper()
    if not level:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("ngramtool")
    logger.addHandler(handler)
    if level not in logging.getLevelNamesMapping():
        level = "WARNING"
    logger.setLevel(level)


def _error(message: str) -> None:
    """``error: <message>`` on stderr, its control characters escaped (it may quote input)."""
    from .render import stderr

    stderr.print(Text("error: ", style="bold red") + Text(escape_controls(message)))
