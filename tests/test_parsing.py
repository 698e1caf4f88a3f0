"""The one parser per concept (ngramtool/util/parsing.py): sizes with thousands separators, ids,
budgets with byte units; every command reads its numbers through them (tests/cli/test_cli_numbers.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ngramtool.util.errors import UsageError
from ngramtool.util.parsing import parse_amount, parse_amounts, parse_byte_sizes, parse_ids, parse_sizes


@pytest.mark.parametrize(
    ("text", "sizes"),
    [
        ("646,400", [646400]),  # as size, inspect and the README print it: one size
        ("262,144", [262144]),
        ("1,048,576", [1048576]),
        ("646_400", [646400]),
        ("646400", [646400]),
        ("2.2624e6", [2262400]),
        ("262144,1048576", [262144, 1048576]),  # a sweep
        ("1000,500", [1000, 500]),  # a four-digit head is no thousands group
        ("262_144,1_048_576", [262144, 1048576]),
        (" 16384 , 262144 ", [16384, 262144]),
    ],
)
def test_sizes_read_thousands_separators_as_one_number(text, sizes):
    assert parse_sizes(text, "--table") == sizes


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("16384,262,144", "262,144 reads as one number with a thousands separator or as 2 values"),
        ("262,144,1048576", "262,144 reads as one number"),
        ("1,048,576,16384", "1,048,576 reads as one number"),
        ("12,abc", "takes whole numbers, got 'abc'"),
        ("1.5", "takes whole numbers, got '1.5'"),
        ("262144,", "has an empty value"),
        ("0", "at least 1"),
    ],
)
def test_ambiguous_or_bad_sizes_are_refused_saying_how_to_write_them(text, fragment):
    with pytest.raises(UsageError, match="--table") as error:
        parse_sizes(text, "--table")
    assert fragment in str(error.value)
    assert "separate several with commas (262144,1048576)" in str(error.value) or "least" in fragment


@given(st.integers(min_value=1, max_value=10**15))
def test_any_number_as_python_prints_it_reads_back(number):
    for written in (str(number), f"{number:,}", f"{number:_}"):
        assert parse_sizes(written, "--table") == [number]


@given(st.lists(st.integers(min_value=1000, max_value=10**12), min_size=2, max_size=5))
def test_lists_of_plain_sizes_read_as_lists(sizes):
    assert parse_sizes(",".join(map(str, sizes)), "--table") == sizes


def test_ids_are_plain_integers():
    assert parse_ids("1,15", "--layers") == [1, 15]
    for bad in ("1,x", "", "1,,2", "-1", "1e3"):
        with pytest.raises(UsageError, match="--layers takes ids"):
            parse_ids(bad, "--layers")


def test_amounts_with_a_byte_unit_are_bytes_and_others_counts():
    found = [(a.value, a.in_bytes) for a in parse_amounts("10GB,512MiB,5.7e9,1.5TiB", "--budget")]
    assert found == [(10e9, True), (2**29, True), (5.7e9, False), (1.5 * 2**40, True)]
    assert parse_amounts("1,000MB", "--budget")[0].value == 1e9
    assert parse_byte_sizes("1GB,512MiB,1e9,3,0", "--budget") == [10**9, 2**29, 10**9, 3, 0]  # 0: no cache
    for bad, fragment in (
        ("10XB", "units: kB"),
        ("1,000MB,2GB", "reads as one number"),
        (",", "empty value"),
    ):
        with pytest.raises(UsageError, match="--budget") as error:
            parse_amounts(bad, "--budget")
        assert fragment in str(error.value)
    with pytest.raises(UsageError, match="not a whole number of bytes"):
        parse_byte_sizes("0.5B", "--budget")
    with pytest.raises(UsageError, match="takes one amount, got 2"):
        parse_amount("1GB,2GB", "--budget")
