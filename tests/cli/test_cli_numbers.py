"""Numbers as users type them, in every command: a table size written with thousands separators is
one size (646,400 as the tool prints it), an ambiguous list is refused, budgets carry byte units,
and a value typer cannot read is the tool's own one-line error."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import CORPUS, assert_one_line_error, run, run_json

from ngramtool.analysis.sizing import size_engram, with_table
from ngramtool.model.presets import resolve_spec


@pytest.fixture(scope="module")
def text(tmp_path_factory) -> str:
    """A small text file of the bundled corpus."""
    path = tmp_path_factory.mktemp("numbers") / "t.txt"
    path.write_text(CORPUS.read_text(encoding="utf-8")[:3000], encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("command", "read"),
    [
        (["size"], lambda out: out["spec"]["table_sizes"]),
        (["spec", "show"], lambda out: out["table_sizes"]),
        (["explain", "a b c"], lambda out: out["spec"]["table_sizes"]),
    ],
    ids=["size", "spec show", "explain"],
)
def test_a_size_with_thousands_separators_is_one_size(command, read):
    assert read(run_json(*command, "--table", "646,400")) == [646400, 646400]
    assert read(run_json(*command, "--table", "646_400")) == [646400, 646400]


def test_hash_and_collisions_read_thousands_separators_as_one_size(text, tmp_path):
    out = tmp_path / "o.ngidx"
    result = run("hash", text, "-o", out, "--table", "646,400", "-q")
    assert result.returncode == 0, result.stderr.decode()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["spec"]["table_sizes"] == [646400, 646400]
    report = run_json("collisions", text, "--table", "262,144", "--heads", "1", "--layers", "1")
    assert [r["table_sizes"] for r in report["tables"]] == [[262144, 262144]]


def test_cache_reads_rows_with_separators(text):
    report = run_json("cache", text, "--rows", "1,000", "--heads", "1")
    assert [b["rows"] for b in report["budgets"]] == [1000]


@pytest.mark.parametrize("command", [["size"], ["spec", "show"], ["hash", "x.txt", "-o", "x.ngidx"]])
def test_a_list_that_reads_two_ways_is_refused_in_every_command(tmp_path, command):
    (tmp_path / "x.txt").write_text("some text")
    result = run(*command, "--table", "16384,262,144", cwd=tmp_path)
    assert_one_line_error(result, 2, "262,144 reads as one number with a thousands separator or as 2 values")
    assert not (tmp_path / "x.ngidx").exists()


def test_spec_lint_flags_tables_smaller_than_the_vocabulary():
    result = run("spec", "lint", "--table", "646", "--heads", "2")
    assert result.returncode == 1
    assert "table-below-vocab" in result.stdout.decode() and "V'=62,330" in result.stdout.decode()
    assert run("spec", "lint", "--table", "646,400").returncode == 0


@pytest.mark.parametrize(
    ("budget", "options", "row_bytes"),
    [
        ("10GB", ["--encoding", "bf16"], 128),
        ("1GiB", ["--encoding", "fp8-e8m0"], 66),
        ("3e9B", ["--row-bytes", "100"], 100),
    ],
)
def test_size_fits_a_budget_of_bytes_to_the_largest_table(budget, options, row_bytes):
    fit = run_json("size", "--budget", budget, *options)["budget"]
    assert fit["unit"] == "bytes" and fit["row_bytes"] == row_bytes
    spec = resolve_spec(preset="engram-demo")
    table_bytes = lambda table: int(with_table(spec, table).rows_per_layer.sum()) * row_bytes  # noqa: E731
    assert table_bytes(fit["table"]) <= fit["budget"] < table_bytes(fit["table"] + 1)


def test_size_budget_without_a_unit_stays_parameters():
    assert run_json("size", "--preset", "engram-27b", "--budget", "5.7e9")["budget"] == {
        "budget": 5.7e9,
        "unit": "parameters",
        "table": size_engram("engram-27b", budget=5.7e9).budget["table"],
    }
    assert_one_line_error(
        run("size", "--budget", "5.7e9", "--encoding", "bf16"), 2, "give the budget with a byte unit"
    )
    assert_one_line_error(
        run("size", "--encoding", "bf16"), 2, "--encoding and --row-bytes size a budget of bytes"
    )
    assert_one_line_error(run("size", "--budget", "10XB"), 2, "--budget takes amounts like 10GB")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["size", "--budget", "ten"], "--budget takes amounts like 10GB"),
        (
            ["hash", "--workers", "x"],
            "error: --workers takes a whole number, got 'x' (see 'ngramtool hash --help')",
        ),
        (["size", "--dim", "0"], "error: --dim takes a number of at least 1, got '0'"),
        (["size", "--tokens-per-second", "fast"], "--tokens-per-second takes a number, got 'fast'"),
        (["hash", "--tabel", "5"], "error: No such option: --tabel"),
        (
            ["hash", "x.txt", "--table"],
            "error: Option '--table' requires an argument (see 'ngramtool hash --help')",
        ),
        (["spec", "show", "--heads"], "requires an argument (see 'ngramtool spec show --help')"),
    ],
)
def test_values_typer_cannot_read_are_one_line_errors(args, line):
    result = run(*args)
    assert_one_line_error(result, 2, line)
    assert len(result.stderr.decode().strip().splitlines()) == 1


def test_rows_of_a_size_with_separators_equal_the_plain_size(text, tmp_path):
    for written, out in (("646,400", "a"), ("646400", "b")):
        assert run("hash", text, "-o", tmp_path / out, "--table", written, "-q").returncode == 0
    rows = [np.load(tmp_path / out / "rows.npy") for out in "ab"]
    assert np.array_equal(*rows)
