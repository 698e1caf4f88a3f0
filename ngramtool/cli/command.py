"""A command of the ``ngramtool`` table: each ``NAME_cmd.py`` module names its own as ``COMMAND``,
and :data:`ngramtool.cli.app.COMMANDS` lists the modules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """A command of the table: its name, its help text, and what runs it: a function, or the
    subcommands of a command group (``spec show``)."""

    name: str
    help: str
    function: Callable[..., None] | None = None
    subcommands: tuple[Command, ...] = ()
