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
    if "\x00" not in value:
        assert coercion._path(value) == Path(value)


def test_an_unreadable_path_goes_to_typer(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    secret.chmod(0)
    try:
        if os.access(secret, os.R_OK):
            pytest.skip("running as a user who reads every file")
        assert coercion._path(str(secret)) is coercion._OTHER
    finally:
        secret.chmod(0o600)


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
