"""``ngramtool size`` through a subprocess: its figures as JSON and as a table, and its errors (the
figures themselves: tests/analysis/test_sizing.py)."""

from __future__ import annotations

import pytest
from conftest import run, run_json
from primes_by_hand import PCIE4, chain_params

from ngramtool.analysis.sizing import size_engram


def test_size_figures():
    data = size_engram("engram-27b", tokens_per_second=2e6, backbone_params=21e9).to_dict()
    params = chain_params(2_262_400, 32, 80)
    assert data["params"] == params and data["nominal_params"] == 2 * 2 * 8 * 2_262_400 * 80
    assert data["tables_in_words"] == "2 orders x 8 heads = 16 tables per layer, x 2 layers = 32 tables"
    assert data["rows_per_token"] == 32 and data["bytes_per_token"]["bf16"] == 32 * 80 * 2
    assert data["offload"]["bf16"]["bytes_per_second"] == 2e6 * 32 * 80 * 2
    assert data["offload"]["bf16"]["link_share"]["PCIe 4.0 x16"] == pytest.approx(2e6 * 5120 / PCIE4)
    assert data["backbone"]["table_share"] == pytest.approx(params / (params + 21e9))
    fitted = size_engram("engram-27b", budget=5.7e9).to_dict()
    base = fitted["budget"]["table"]
    assert chain_params(base, 32, 80) == fitted["params"] <= 5.7e9 < chain_params(base + 1, 32, 80)
    override = run_json("size", "--preset", "tutorial", "--heads", "2", "--dim", "8")
    assert override["params"] == chain_params(262_144, 4, 8) and override["tables"] == 4
    text = run("size", "--preset", "tutorial").stdout.decode()
    assert "2 orders x 4 heads = 8 tables (1 layer)" in text and "33,554,432" in text
