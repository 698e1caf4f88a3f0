"""Sizing against independent arithmetic: primes found by trial division, bytes counted by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from primes_by_hand import PCIE4, chain_params, prime_chain

from ngramtool import HashSpec, UsageError
from ngramtool.analysis.sizing import fit_table, size_memory, with_table
from ngramtool.presets import PRESETS, preset


def test_tutorial_preset_has_the_published_size_before_prime_rounding():
    report = size_memory(PRESETS["tutorial"].spec, PRESETS["tutorial"].dim)
    assert report.nominal_params == 33_554_432 == 8 * 262_144 * 16  # published figure
    assert report.params == chain_params(262_144, 8, 16)
    assert report.tables_in_words == "2 orders x 4 heads = 8 tables (1 layer)"


def test_engram_27b_has_the_published_size():
    report = size_memory(PRESETS["engram-27b"].spec, PRESETS["engram-27b"].dim)
    assert report.params == chain_params(2_262_400, 32, 80)
    assert round(report.params / 1e9, 2) == 5.79  # 2 layers x 16 tables x ~2,262,400 x 80
    assert report.tables_in_words == "2 orders x 8 heads = 16 tables per layer, x 2 layers = 32 tables"
    assert report.memory_width == 1280  # d_mem 1280 split over 16 heads


def test_engram_40b_is_the_largest_layout_of_27b_that_fits_18_5_billion():
    spec = PRESETS["engram-40b"].spec
    base = spec.table_sizes[0]
    assert spec.layer_ids == PRESETS["engram-27b"].spec.layer_ids and spec.heads == 8
    assert chain_params(base, 32, 80) <= 18.5e9 < chain_params(base + 1, 32, 80)
    assert size_memory(spec, 80).params == pytest.approx(18.5e9, rel=1e-4)


def test_every_byte_figure_by_hand():
    spec = HashSpec(max_ngram=4, heads=3, layer_ids=(2, 9), table_sizes=(5000, 5000, 5000))
    report = size_memory(spec, 200, fp8_block=128)
    rows = sum(prime_chain(5000, 18))
    assert report.rows == rows and report.tables == 18 and report.tables_per_layer == 9
    assert report.params == rows * 200
    assert report.table_bytes == {"fp32": rows * 800, "bf16": rows * 400, "fp8": rows * (200 + 2 * 4)}
    assert report.adamw_bytes == rows * 200 * 8
    assert report.rows_per_token == 18 and report.values_per_token == 3600
    assert report.bytes_per_token == {"fp32": 14_400, "bf16": 7200, "fp8": 18 * 208}
    assert report.touched_fraction == pytest.approx(18 / rows)
    assert report.memory_width == 9 * 200
    offload = report.offload(1e6)
    assert offload["bf16"]["bytes_per_second"] == 7.2e9
    assert offload["bf16"]["link_share"]["PCIe 4.0 x16"] == pytest.approx(7.2e9 / PCIE4)
    assert offload["fp8"]["link_share"]["PCIe 5.0 x16"] == pytest.approx(18 * 208 * 1e6 / (2 * PCIE4))
    backbone = report.backbone(1e9)
    assert backbone["table_to_backbone"] == pytest.approx(rows * 200 / 1e9)
    assert backbone["table_share"] == pytest.approx(rows * 200 / (rows * 200 + 1e9))


def test_different_bases_keep_their_own_chains():
    spec = HashSpec(max_ngram=3, heads=2, layer_ids=(0, 1), table_sizes=(1000, 50_000))
    report = size_memory(spec, 4)
    assert report.rows == sum(prime_chain(1000, 4)) + sum(prime_chain(50_000, 4))
    assert report.nominal_params == (1000 + 50_000) * 2 * 2 * 4


@settings(max_examples=15, deadline=None)
@given(
    heads=st.integers(1, 4),
    layers=st.integers(1, 3),
    dim=st.integers(1, 64),
    budget=st.floats(1e4, 1e8),
)
def test_fit_table_is_the_largest_base_that_fits(heads, layers, dim, budget):
    spec = HashSpec(max_ngram=3, heads=heads, layer_ids=tuple(range(layers)))
    tables = 2 * heads * layers
    if chain_params(2, tables, dim) > budget:
        with pytest.raises(UsageError, match="below the smallest"):
            fit_table(spec, dim, budget)
        return
    base = fit_table(spec, dim, budget)
    assert chain_params(base, tables, dim) <= budget < chain_params(base + 1, tables, dim)
    assert size_memory(with_table(spec, base), dim).params == chain_params(base, tables, dim)


def test_bad_values_are_usage_errors():
    with pytest.raises(UsageError, match="known presets"):
        preset("engram-1t")
    with pytest.raises(UsageError, match="`dim`"):
        size_memory(HashSpec(), 0)
    with pytest.raises(UsageError, match="`fp8_block`"):
        size_memory(HashSpec(), 8, fp8_block=0)
