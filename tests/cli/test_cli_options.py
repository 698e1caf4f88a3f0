"""Option groups: a command declares a group at one point of its signature; typer sees the group's
options at that point, and the command receives them as one value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

from ngramtool.cli.options import OptionGroup, option_groups


@dataclass(frozen=True)
class Pair(OptionGroup):
    first: Annotated[int, typer.Option("--first")] = 1
    second: Annotated[str | None, typer.Option("--second")] = None


@dataclass(frozen=True)
class Made:
    first: int
    third: str


PAIR = Pair.placeholder()
SWAPPED = Pair.placeholder("second", "first")


def invoke(command, *args: str) -> list[str]:
    """Run ``command`` as a typer app with ``args``; the names of its parameters, in order."""
    app = typer.Typer(add_completion=False)
    app.command()(option_groups(command))
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return [param.name for param in get_command(app).params]


def test_a_group_takes_its_placeholders_place_and_reaches_the_command_as_one_value():
    seen = []

    def command(
        before: Annotated[int, typer.Option("--before")] = 0,
        pair: Pair = PAIR,
        after: Annotated[bool, typer.Option("--after")] = False,
    ) -> None:
        seen.append((before, pair, after))

    assert invoke(command, "--first", "5", "--after") == ["before", "first", "second", "after"]
    assert seen == [(0, Pair(first=5), True)]


def test_a_placeholder_may_order_the_options_otherwise():
    seen = []

    def command(pair: Pair = SWAPPED) -> None:
        seen.append(pair)

    assert invoke(command, "--second", "x") == ["second", "first"]
    assert seen == [Pair(second="x")]


def test_a_placeholder_orders_every_option_of_its_group_and_no_other():
    with pytest.raises(TypeError, match="Pair"):
        Pair.placeholder("first")
    with pytest.raises(TypeError, match="Pair"):
        Pair.placeholder("first", "second", "third")


def test_a_group_makes_a_dataclass_of_the_options_named_as_its_fields():
    assert Pair(first=3, second="y").make(Made, third="z") == Made(first=3, third="z")
    assert Pair(first=3).values() == {"first": 3, "second": None}
