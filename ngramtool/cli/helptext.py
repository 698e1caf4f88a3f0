"""Help screens that fit the terminal: one formatter for every command and command group.

The help of a command is its usage line, its text, and panels of arguments, options (and, for a
group, commands). At any width (``COLUMNS``, the terminal's, 80 when output is not a terminal):

- a paragraph of prose is reflowed and wraps at word boundaries;
- an indented paragraph (the examples) keeps its lines: comments are aligned at one column where
  they fit, a comment that does not fit goes on its own line above its command, and a command
  longer than the width continues on the next line after `` \\``, as a shell reads it;
- an option shows its names and, when it takes a value, one uppercase placeholder (``TEXT``,
  ``INTEGER``, ``FLOAT``, ``PATH`` or the ``metavar`` it declares); a flag shows none;
- the usage line names arguments as the Arguments panel does (``[INPUT]...``, ``INDEX``).
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import typer
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.theme import Theme
from typer.core import TyperArgument, TyperCommand, TyperGroup

_THEME = Theme({"option": "bold cyan", "switch": "bold green", "usage": "yellow", "types": "bold yellow"})
_COMMENT = re.compile(r"^(?P<command>\s*\S.*?)\s{2,}(?P<comment># .*)$")
_PLACEHOLDERS = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "path": "PATH", "file": "PATH"}
_MIN_COMMENT_GAP = 3
_CONTINUATION_INDENT = 4


def _highlighter() -> Any:
    """typer's option highlighter, imported when help is rendered (``typer.rich_utils`` loads
    rich's markdown and pygments: about 0.1 s that no command run needs)."""
    from typer.rich_utils import highlighter

    return highlighter


def _highlight(text: Text) -> Text:
    """``text`` with typer's option names highlighted."""
    return _highlighter()(text)


class HelpCommand(TyperCommand):
    """A command whose ``--help`` is :func:`render_help`'s."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        render_help(self, ctx)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return usage_pieces(self, ctx)


class HelpGroup(TyperGroup):
    """A command group whose ``--help`` is :func:`render_help`'s."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        render_help(self, ctx)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [*usage_pieces(self, ctx), "COMMAND [ARGS]..."]


class App(typer.Typer):
    """A typer app whose groups and commands render their help with :func:`render_help`."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("cls", HelpGroup)
        options.setdefault("rich_markup_mode", "rich")
        super().__init__(**options)

    def command(self, *args: Any, cls: type[TyperCommand] | None = None, **options: Any) -> Any:
        return super().command(*args, cls=cls or HelpCommand, **options)


# ------------------------------------------------------------------------------ rendering
def render_help(command: TyperCommand | TyperGroup, ctx: Any) -> None:
    """Print the help of ``command`` on standard output, fitted to the terminal's width."""
    console = Console(theme=_THEME, highlighter=_highlighter())
    console.print(Padding(_highlight(Text(command.get_usage(ctx))), 1), style="bold")
    text = inspect.cleandoc(command.help or "").partition("\f")[0]
    if text:
        first, _, rest = text.partition("\n\n")
        body: list[RenderableType] = [Text.from_markup(" ".join(first.split()))]
        if rest:
            lines = layout_help(rest, console.width - 2)
            body += [Text(""), _highlight(Text.from_markup("\n".join(lines), style="dim"))]
        console.print(Padding(Group(*body), (0, 1, 1, 1)))
    arguments = [p for p in command.get_params(ctx) if isinstance(p, TyperArgument) and not p.hidden]
    options = [p for p in command.get_params(ctx) if not isinstance(p, TyperArgument) and not p.hidden]
    _panel(console, "Arguments", [(argument_label(p), parameter_help(p, ctx)) for p in arguments])
    _panel(console, "Options", [(option_label(p, ctx), parameter_help(p, ctx)) for p in options])
    if isinstance(command, TyperGroup):
        rows = []
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                summary = inspect.cleandoc(sub.help or "").split("\n\n")[0]
                rows.append((Text(name, style="bold cyan"), Text.from_markup(" ".join(summary.split()))))
        _panel(console, "Commands", rows)


def _panel(console: Console, title: str, rows: list[tuple[Text, Text]]) -> None:
    """A titled box of two columns: names, and help that wraps at word boundaries."""
    if not rows:
        return
    table = Table(show_header=False, box=None, expand=True, padding=(0, 1), pad_edge=False)
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    for name, help_text in rows:
        table.add_row(name, help_text)
    console.print(Panel(table, title=title, title_align="left", border_style="dim"))


# ------------------------------------------------------------------------------ text layout
def layout_help(text: str, width: int) -> list[str]:
    """The lines of a help text's paragraphs (rich markup kept): prose becomes one line (the
    console wraps it at word boundaries), examples are fitted to ``width`` by
    :func:`layout_examples`."""
    lines: list[str] = []
    for paragraph in text.split("\n\n"):
        rows = paragraph.split("\n")
        if any(row[:1].isspace() for row in rows):
            lines += layout_examples(rows, width)
        else:
            lines.append(" ".join(paragraph.split()))
        lines.append("")
    return lines[:-1]


def layout_examples(rows: list[str], width: int) -> list[str]:
    """Example lines fitted to ``width``: comments aligned at the column that keeps the most of
    them beside their commands, any other comment on its own line above its command, and a
    command that does not fit continued after `` \\``."""
    parsed = [_COMMENT.match(row) for row in rows]
    commands = [m["command"] if m else row.rstrip() for m, row in zip(parsed, rows, strict=True)]
    commented = [i for i, m in enumerate(parsed) if m]

    def inline_at(column: int) -> set[int]:
        return {
            i
            for i in commented
            if _length(commands[i]) + _MIN_COMMENT_GAP <= column <= width - _length(parsed[i]["comment"])
        }

    columns = sorted({_length(commands[i]) + _MIN_COMMENT_GAP for i in commented})
    column = max(columns, key=lambda c: (len(inline_at(c)), -c), default=0)
    fitting = inline_at(column)
    lines: list[str] = []
    for i, (match, command) in enumerate(zip(parsed, commands, strict=True)):
        if i in fitting:
            lines.append(command + " " * (column - _length(command)) + match["comment"])
            continue
        indent = command[: len(command) - len(command.lstrip())]
        if match:
            lines.append(indent + match["comment"])
        lines += continue_command(command, width)
    return lines


def continue_command(command: str, width: int) -> list[str]:
    """A shell command split at spaces into lines of at most ``width``, each but the last ending
    in `` \\`` (a word longer than a line stays whole)."""
    if _length(command) <= width:
        return [command]
    indent = command[: len(command) - len(command.lstrip())]
    words = command.split()
    lines: list[str] = []
    line = indent + words[0]
    for word in words[1:]:
        if _length(line) + 1 + len(word) + 2 > width:
            lines.append(line + " \\")
            line = indent + " " * _CONTINUATION_INDENT + word
        else:
            line += " " + word
    return [*lines, line]


def _length(markup: str) -> int:
    """The cells a line of rich markup takes on the screen."""
    return Text.from_markup(markup).cell_len


# ------------------------------------------------------------------------------ parameters
def placeholder(param: Any, ctx: Any) -> str:
    """What an option's value is called: its metavar, or an uppercase type name; a flag has none."""
    if param.is_flag or param.count:
        return ""
    if param.metavar:
        return param.metavar
    shown = param.display_type(ctx).strip("<>")
    if "|" in shown:  # a choice
        return f"[{shown}]"
    shown = shown.removeprefix("list[").removesuffix("]").removesuffix(" range")
    return _PLACEHOLDERS.get(shown, shown.upper())


def argument_name(param: Any) -> str:
    """An argument as usage lines show it: ``INDEX``, ``[INPUT]...``."""
    name = param.metavar or param.name.upper()
    if not param.required:
        name = f"[{name}]"
    return name + ("..." if param.nargs != 1 else "")


def usage_pieces(command: TyperCommand | TyperGroup, ctx: Any) -> list[str]:
    """``[OPTIONS]`` and the arguments, as :func:`argument_name` writes them."""
    arguments = [argument_name(p) for p in command.get_params(ctx) if isinstance(p, TyperArgument)]
    return ["[OPTIONS]", *arguments]


def argument_label(param: Any) -> Text:
    """The name column of an argument."""
    return Text(argument_name(param).strip("[]").replace("]", ""), style="bold cyan")


def option_label(param: Any, ctx: Any) -> Text:
    """The name column of an option: its long names first, then short ones, then a placeholder."""
    names = sorted(param.opts, key=lambda name: not name.startswith("--"))
    label = ", ".join(names)
    if param.secondary_opts:
        label += " / " + ", ".join(param.secondary_opts)
    value = placeholder(param, ctx)
    text = _highlight(Text(label))
    if value:
        text.append(" " + value, style="bold yellow")
    return text


def parameter_help(param: Any, ctx: Any) -> Text:
    """A parameter's help, then its range, its default and whether it is required."""
    parts = [" ".join((param.help or "").split())]
    bounds = _range(param)
    if bounds:
        parts.append(f"[{bounds}]")
    default = _default(param)
    if default:
        parts.append(f"[default: {default}]")
    if param.required and not isinstance(param, TyperArgument):
        parts.append("[required]")
    text = Text.from_markup(parts[0])
    for extra in parts[1:]:
        text.append(" " + extra, style="dim")
    return _highlight(text)


def _range(param: Any) -> str:
    """``x>=1``, ``0<=x<=9``, or nothing for an unbounded parameter."""
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is not None and high is not None:
        return f"{low}<=x<={high}"
    if low is not None:
        return f"x>={low}"
    return f"x<={high}" if high is not None else ""


def _default(param: Any) -> str:
    """The default shown in help: a ``show_default`` text, or a non-empty value of an option that
    is not a flag (arguments and flags say theirs in their help)."""
    if isinstance(param.show_default, str):
        return param.show_default
    if isinstance(param, TyperArgument) or param.is_flag or not param.show_default:
        return ""
    value = param.default
    if value is None or callable(value) or value in ((), []):
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(getattr(value, "value", value))
