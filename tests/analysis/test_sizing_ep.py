"""``size --ep R``: each expert-parallel rank's contiguous rows of every table, as Megatron-LM splits
its Engram tables: ``start(r) = r (R_t // EP) + min(r, R_t mod EP)``, beside the column split ``--tp``."""

from __future__ import annotations

import pytest
from conftest import assert_one_line_error, run, run_json
from hypothesis import given
from hypothesis import strategies as st

from ngramtool.analysis.sizing import size_engram


@given(ranks=st.integers(1, 17), table=st.integers(2, 10**6), heads=st.integers(1, 4))
def test_every_table_is_split_by_megatrons_formula(ranks, table, heads):
    sized = size_engram("engram-demo", heads=heads, table_sizes=table, ep=ranks)
    spec, split = sized.report.spec, sized.expert_parallel
    assert len(split["tables"]) == spec.num_layers * spec.num_columns
    for entry in split["tables"]:
        rows = entry["rows"]
        starts = [r * (rows // ranks) + min(r, rows % ranks) for r in range(ranks)]
        assert [lo for lo, _ in entry["ranges"]] == starts
        assert entry["ranges"][-1][1] == rows and all(
            hi - lo in (rows // ranks, rows // ranks + 1) for lo, hi in entry["ranges"]
        )
        layer = spec.layer_ids.index(entry["layer"])
        offset = int(spec.offsets[layer, spec.column(entry["order"], entry["head"])])
        assert entry["layer_ranges"] == [[offset + lo, offset + hi] for lo, hi in entry["ranges"]]
    assert sum(split["rank_rows"]) == sized.report.rows


def test_the_command_shows_the_split(tmp_path):
    result = run("size", "--preset", "deepseek-v4.1-flash", "--ep", "3")
    text = result.stdout.decode()
    assert result.returncode == 0 and "expert parallel over 3 ranks" in text
    assert "16,000,057  0..5,333,353  5,333,353..10,666,705  10,666,705..16,000,057" in text
    data = run_json("size", "--preset", "deepseek-v4.1-flash", "--ep", "8", "--tp", "8")
    assert data["expert_parallel"]["ranks"] == 8 and data["tensor_parallel"]["ranks"] == 8
    assert len(data["expert_parallel"]["tables"]) == 48
    assert_one_line_error(run("size", "--ep", "0"), 2, "--ep takes numbers of at least 1")


@pytest.mark.parametrize("ranks", [1, 40])
def test_more_ranks_than_the_table_shows(ranks):
    text = run("size", "--table", "1000", "--heads", "1", "--ep", str(ranks)).stdout.decode()
    assert ("in --json" in text) == (ranks > 8)
