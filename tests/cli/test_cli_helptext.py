"""Help screens fit an 80-column terminal: prose wraps at word boundaries, examples keep their
comments, flags show no type, placeholders and usage lines are spelled one way."""

from __future__ import annotations

import functools
import io
import re

import pytest
import typer
from rich.console import Console
from typer.main import get_command

from ngramtool.cli.app import app
from ngramtool.cli.helptext import continue_command, layout_examples, layout_help, render_help

WIDTH = 80


def every_command() -> list[tuple[str, typer.Context]]:
    """(command path, context) for the app, every command and every subcommand."""
    root = get_command(app)
    found = []

    def walk(command, parent: typer.Context | None, name: str) -> None:
        ctx = typer.Context(command, info_name=name, parent=parent)
        found.append((ctx.command_path, ctx))
        for sub_name in command.list_commands(ctx) if hasattr(command, "list_commands") else []:
            walk(command.get_command(ctx, sub_name), ctx, sub_name)  # commands are made when asked for

    walk(root, None, "ngramtool")
    return found


COMMANDS = every_command()


@pytest.fixture(scope="module")
def screens() -> dict[str, str]:
    """Every help screen as printed at 80 columns."""
    rendered = {}
    for path, ctx in COMMANDS:
        buffer = io.StringIO()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(
                "ngramtool.cli.helptext.Console", functools.partial(Console, file=buffer, width=WIDTH)
            )
            render_help(ctx.command, ctx)
        rendered[path] = buffer.getvalue()
    return rendered


def test_every_command_and_subcommand_has_a_help_screen(screens):
    assert {"ngramtool", "ngramtool hash", "ngramtool spec", "ngramtool spec lint"} <= set(screens)
    assert len(screens) >= 16


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS])
def test_help_fits_80_columns(screens, path):
    for line in screens[path].splitlines():
        assert len(line) <= WIDTH, f"{path}: {len(line)} columns: {line}"


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS])
def test_example_comments_stay_with_their_commands(screens, path):
    lines = screens[path].splitlines()
    for number, line in enumerate(lines):
        if line.lstrip().startswith("# "):  # a comment on its own line: indented, above a command
            indent = len(line) - len(line.lstrip())
            assert indent > 1, f"{path}: a comment fell to the margin: {line}"
            following = lines[number + 1]
            starts = ("ngramtool", "cat ", "echo ", "head ")
            assert following[:indent].isspace() and following[indent:].startswith(starts), line


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS])
def test_flags_and_values_are_spelled_one_way(screens, path):
    screen = screens[path]
    assert not re.search(r"<(bool|str|int|float|path|list)", screen), screen  # no typer type names
    assert "{" not in screen.splitlines()[1]  # usage: no {text}-style arguments
    assert re.search(r"Usage: ngramtool[ a-z-]* \[OPTIONS\]", screen)


def test_a_flag_has_no_placeholder_and_an_option_has_one(screens):
    hash_help = screens["ngramtool hash"]
    assert re.search(r"│ --force +Replace an existing index", hash_help)
    assert "--output, -o TEXT " in hash_help
    assert "--workers, -j INTEGER " in hash_help
    assert "[x>=1]" in hash_help and "[default: 646400]" in hash_help
    assert "Usage: ngramtool hash [OPTIONS] [INPUT]..." in hash_help
    assert "Usage: ngramtool export [OPTIONS] INDEX" in screens["ngramtool export"]
    assert "Usage: ngramtool spec [OPTIONS] COMMAND [ARGS]..." in screens["ngramtool spec"]


def test_hash_help_keeps_its_text(screens):
    """The formatter lays text out; it does not change what the command says."""
    hash_help = " ".join(screens["ngramtool hash"].split())
    for phrase in (
        "The index holds manifest.json, tokens.npy (raw ids), rows.npy ([T, L, (N-1)*K] table rows) and "
        "doc_offsets.npy; see docs/formats.md.",
        "# one index shard per file",
        "ngramtool hash corpus.txt --preset tutorial",
    ):
        assert phrase in hash_help


def test_prose_is_reflowed_and_examples_keep_their_lines():
    text = (
        "First line of a\nparagraph that goes on.\n\n  ngramtool hash a.txt   # one\n  ngramtool hash b.txt"
    )
    assert layout_help(text, WIDTH) == [
        "First line of a paragraph that goes on.",
        "",
        "  ngramtool hash a.txt   # one",
        "  ngramtool hash b.txt",
    ]


def test_comments_align_where_they_fit_and_go_above_where_they_do_not():
    rows = [
        "  ngramtool hash a.txt                 # short",
        "  ngramtool hash 'shards/*.txt' -o out/ --shard-index 3 --num-shards 8   # this worker's subset",
        "  ngramtool hash b.txt --json          # json",
    ]
    assert layout_examples(rows, 60) == [
        "  ngramtool hash a.txt          # short",
        "  # this worker's subset",
        "  ngramtool hash 'shards/*.txt' -o out/ --shard-index 3 \\",
        "      --num-shards 8",
        "  ngramtool hash b.txt --json   # json",
    ]


def test_a_long_command_continues_after_a_backslash():
    command = "  ngramtool hash corpus.txt --tokenizer tokenizer.json --heads 4 --table 262144 --layers 2,15"
    lines = continue_command(command, 40)
    assert all(len(line) <= 40 for line in lines)
    assert all(line.endswith(" \\") for line in lines[:-1])
    assert " ".join(line.removesuffix(" \\").strip() for line in lines) == command.strip()
    assert continue_command("  ngramtool vocab", 40) == ["  ngramtool vocab"]
