"""Tables fit the terminal: at 80 columns no table line is longer, no number is cut, rows carry
no padding, and what a narrow table leaves out is named (and stays in --json)."""

from __future__ import annotations

import io
import json
import re

import pytest
from conftest import CORPUS, run
from rich.console import Console
from rich.table import Table

import ngramtool.cli.render as render

WIDTH = 80
BOX = re.compile("[─━│┃┏┗└┌]")


def table_lines(output: str) -> list[str]:
    """The lines of the tables in a command's output: those with borders, and every line of a
    blank-line-separated block that holds a rule under a header (a table without borders)."""
    lines = []
    for block in re.split(r"\n\s*\n", output):
        ruled = re.search(r"^ ─+$", block, re.M)
        lines += [line for line in block.splitlines() if ruled or BOX.search(line)]
    return lines


def at_80_columns(*args: object, cwd=None) -> str:
    """``ngramtool ARGS...`` at COLUMNS=80 (output not a terminal); its standard output."""
    result = run(*args, cwd=cwd, env={"COLUMNS": str(WIDTH)})
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("tables")
    result = run("hash", CORPUS, "-o", folder / "corpus.ngidx", "-q")
    assert result.returncode == 0, result.stderr.decode()
    return folder / "corpus.ngidx"


COMMANDS = {
    "collisions": ("collisions", CORPUS, "--heads", "4", "--layers", "1", "--table", "16384,262144"),
    "size": ("size", "--preset", "engram-27b", "--tokens-per-second", "2e6", "--backbone-params", "21e9"),
    "size --budget": ("size", "--preset", "engram-27b", "--budget", "5.7e9"),
    "spec show": ("spec", "show", "--preset", "engram-27b"),
    "explain": ("explain", "the horse", "--layers", "1"),
    "vocab": ("vocab", "--top", "10"),
    "tokenize --show": ("tokenize", "-", "--show"),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_tables_fit_80_columns(name):
    args = COMMANDS[name]
    if name == "tokenize --show":
        result = run(*args, stdin=b"The Jargon File is in the public domain.\n", env={"COLUMNS": "80"})
        output = result.stdout.decode()
    else:
        output = at_80_columns(*args)
    lines = table_lines(output)
    assert lines, output
    for line in lines:
        assert len(line) <= WIDTH, f"{name}: {len(line)} columns: {line}"
        assert line == line.rstrip(), f"{name}: padded: {line!r}"


def test_inspect_fits_80_columns_without_padding(index):
    output = at_80_columns("inspect", index, "--rows", "2")
    for line in output.splitlines():
        assert len(line) <= WIDTH, line
        assert line == line.rstrip(), repr(line)
    # The long spec line wraps under its value column, at a word boundary.
    spec = re.search(r"^spec {10}(.*)\n((?: {14}.*\n)+)", output, re.M)
    assert spec, output
    assert "(fingerprint 15f9e7371b9f6f16)" in " ".join(output.split())


def test_collisions_stacks_measured_over_expected_at_80_columns_and_keeps_every_figure():
    output = at_80_columns(*COMMANDS["collisions"], "--per-head")
    # Headers and `measured (expected)` cells stack; the expectation sits under its figure.
    assert re.search(r"78\.\d\d%.*\n.*\(78\.\d\d%\)", output), output
    wide = run(*COMMANDS["collisions"], "--per-head", env={"COLUMNS": "200"}).stdout.decode()
    assert "collision (exp)" in wide and "max/row (exp)" in wide
    assert max(map(len, table_lines(wide))) > WIDTH  # the wide layout needs more than 80 columns
    figures = json.loads(run(*COMMANDS["collisions"], "--json").stdout)
    head = figures["tables"][0]["heads"][0]
    assert {"max_per_row", "mean_per_row", "shared_tokens", "expected_max_per_row"} <= set(head)


def test_size_stacks_long_headers_and_wraps_notes():
    output = at_80_columns(*COMMANDS["size"])
    assert re.search(r"PCIe 4\.0.*\n.*x16 \(31\.51.*\n.*GB/s\)", output), output  # stacked
    assert "paper: 20-25% of the sparse" in output and "65.0%" in output


HEADLINES = {
    "collisions": COMMANDS["collisions"],  # the input summary carries the input's path
    "size (modified)": ("size", "--preset", "engram-27b", "--max-ngram", "5"),
}


@pytest.mark.parametrize("name", list(HEADLINES))
def test_lines_above_the_tables_wrap_at_80_columns(name):
    output = at_80_columns(*HEADLINES[name])
    for line in output.splitlines():
        assert len(line) <= WIDTH, f"{name}: {len(line)} columns: {line}"
        assert line == line.rstrip(), f"{name}: padded: {line!r}"
    headline = run(*HEADLINES[name], env={"COLUMNS": "200"}).stdout.decode().splitlines()[0]
    assert len(headline) > WIDTH  # one line where it fits
    assert output.split()[: len(headline.split())] == headline.split()  # wrapped at spaces, whole


# ------------------------------------------------------------------------------ the helper itself
def printed(table: Table, width: int, drop=()) -> str:
    """What :func:`ngramtool.cli.render.print_table` prints at ``width`` columns."""
    buffer = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render, "stdout", Console(file=buffer, width=width, soft_wrap=True, highlight=False))
        render.print_table(table, drop=drop)
    return buffer.getvalue()


def figures_table() -> Table:
    table = render.report_table("figures")
    table.add_column("name")
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("measured (expected)", justify="right")
    table.add_column("extra figure", justify="right")
    table.add_row("rows per table", "2,262,409 .. 2,262,859", "78.66% (78.65%)", "4.69 (4.68)")
    return table


def test_a_table_that_fits_is_printed_whole_without_padding():
    output = printed(figures_table(), 200)
    assert re.search(
        r"^ rows per table  2,262,409 \.\. 2,262,859 +78\.66% \(78\.65%\) +4\.69 \(4\.68\)$", output, re.M
    )
    assert all(line == line.rstrip() for line in output.splitlines())


def test_a_narrow_table_stacks_and_never_cuts_a_no_wrap_column():
    output = printed(figures_table(), 50)
    assert all(len(line) <= 50 for line in output.splitlines()), output
    assert "2,262,409 .. 2,262,859" in output  # no_wrap: whole
    assert "…" not in output
    assert re.search(r"78\.66%.*\n.*\(78\.65%\)", output)


def test_columns_are_dropped_in_order_only_when_stacking_is_not_enough():
    assert "not shown" not in printed(figures_table(), 60, drop=("extra figure",))
    output = printed(figures_table(), 45, drop=("extra figure",))
    assert "4.69" not in output
    table, note = output.rstrip("\n").rsplit("\n", 1)
    assert note == "(not shown at this width: extra figure; see --json)"
    assert all(len(line) <= 45 for line in table.splitlines()), output


def test_a_table_that_cannot_fit_is_printed_at_the_width_it_needs():
    output = printed(figures_table(), 20)
    assert "2,262,409 .. 2,262,859" in output and "…" not in output
