"""Plain option values taken without typer's pydantic validators (ngramtool.cli.coercion): the same
values as typer's own coercion, typer's wording for the others, and no pydantic at start-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ngramtool.cli.coercion as coercion

pydantic = pytest.importorskip("pydantic")
typer_adapters = pytest.importorskip("typer._adapters", reason="a typer that coerces through pydantic")
typer_models = pytest.importorskip("typer.models")

NUMBERISH = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.from_regex(r"[ +\-0-9_.e٣x]{0,8}", fullmatch=True),
    st.text(max_size=6),
    st.integers(3990, 4400).map(lambda digits: "1" * digits),  # past int()'s 4,300 digits
    st.integers(3990, 4400).map(lambda digits: "0" * digits + "7"),
)


def typer_way(annotation, value, **option):
    """What typer's own coercion makes of ``value``: the value, or "error"."""
    info = typer_models.OptionInfo(**option)
    adapter = typer_adapters.build_adapter(annotation, info)
    try:
        return adapter.validate_python(value)
    except Exception:  # pydantic.ValidationError, or a value typer rejects otherwise
        return "error"


@given(NUMBERISH)
def test_a_whole_number_taken_plainly_is_the_one_typer_reads(value):
    plain = coercion._whole(value)
    if plain is not coercion._OTHER:
        assert typer_way(int, value) == plain


@given(st.integers(-5, 5).map(str), st.integers(-2, 2), st.integers(-2, 2))
def test_a_number_out_of_range_goes_to_typer_for_its_wording(value, least, most):
    plain = coercion._whole(value, least=least, most=most)
    typer = typer_way(int, value, min=least, max=most)
    assert typer == "error" if plain is coercion._OTHER else typer == plain


@given(st.text(max_size=8))
def test_text_and_paths_are_typers(value):
    assert coercion._text(value) == typer_way(str, value)
    for given_as in (value, Path(value)):
        plain = coercion._path(given_as)
        if plain is not coercion._OTHER:
            assert plain == typer_way(Path, given_as)


def test_typer_takes_the_plain_way_here():
    """Installed on this typer (so the start-up saving is not lost without notice), once."""
    from typer import core

    import ngramtool.cli.app  # noqa: F401  (installs it)

    assert getattr(core.build_runtime_param, "plain_values", False)
    assert coercion.install() is False


def test_a_typer_whose_coercion_cannot_be_extended_is_left_alone(monkeypatch):
    """A RuntimeParam that is not a frozen dataclass, or that takes other fields: typer's own."""
    from dataclasses import dataclass

    from typer import _coercion, core

    sentinel = object()

    @dataclass
    class Unfrozen:
        parameter_info: object
        annotation: object

        def coerce(self, value, param, ctx):
            return value

        def _coerce_value(self, value, param, ctx):
            return value

    monkeypatch.setattr(core, "build_runtime_param", lambda descriptor: sentinel)
    monkeypatch.setattr(_coercion, "RuntimeParam", Unfrozen)
    assert coercion.install() is False
    assert core.build_runtime_param(None) is sentinel

    @dataclass(frozen=True)
    class OtherFields:
        required_field: object

        def coerce(self, value, param, ctx):
            return value

        def _coerce_value(self, value, param, ctx):
            return value

    monkeypatch.setattr(_coercion, "RuntimeParam", OtherFields)
    assert coercion.install() is True
    descriptor = type("Descriptor", (), {"annotation": str, "parameter_info": typer_models.OptionInfo()})()
    descriptor.is_file = descriptor.is_choice = False
    assert core.build_runtime_param(descriptor) is sentinel  # typer's own, not a broken plain one


def test_an_unreadable_path_goes_to_typer(tmp_path, monkeypatch):
    """A path that exists but cannot be read is typer's to word (its check is os.access, which a
    root user passes: the refusal is simulated for that one path)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    monkeypatch.setattr(os, "access", lambda path, mode: os.fspath(path) != str(secret))
    assert coercion._path(str(secret)) is coercion._OTHER
    assert coercion._path(secret) is coercion._OTHER
    assert coercion._path(str(tmp_path)) == tmp_path
    assert typer_way(Path, str(secret)) == "error"


RUN = """
import sys
from ngramtool.cli.app import main
sys.argv = ["ngramtool", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print("pydantic" in sys.modules, file=sys.stderr)
"""


def test_a_command_runs_without_importing_pydantic(tmp_path):
    text = tmp_path / "tiny.txt"
    text.write_text("a few words of text\n")
    args = ["hash", str(text), "-o", str(tmp_path / "tiny.ngidx"), "--quiet", "--workers", "1"]
    done = subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "False"
    assert (tmp_path / "tiny.ngidx").is_dir()
