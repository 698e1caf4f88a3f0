"""Sizing against independent arithmetic: primes found by trial division, bytes counted by hand."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from primes_by_hand import PCIE4, chain_params, prime_chain

from ngramtool import HashSpec, UsageError
from ngramtool.analysis.sizing import (
    bytes_per_row,
    encoding_named,
    fit_table,
    row_parts,
    size_engram,
    size_memory,
    with_table,
)
from ngramtool.model.presets import PRESETS, preset, resolve_spec

# DeepSeek-V4.1-Flash as its config and checkpoint declare it (/work/shared/reference/FAMILIES.md §1).
V41_DECLARED = (384_006_168, 384_016_682)
V41_COLUMNS = 3 * 8  # orders 2..4 x 8 heads: the sub-tables (columns) of one layer's table


def test_tutorial_preset_has_the_chapters_size():
    """The chapter's own hash: one table of 262,144 rows per head, no prime rounding."""
    report = size_memory(PRESETS["tutorial"].spec, PRESETS["tutorial"].dim)
    assert report.params == report.nominal_params == 33_554_432 == 8 * 262_144 * 16  # published figure
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
    # fp8-e8m0: 200 values and a 1-byte scale for each of 7 blocks of 32 (the last one partial);
    # 200 values are not whole blocks of the GGUF formats (32, 256), NVFP4's 16 or MLX's groups
    # (32, 64), so those do not apply; fp8-tensor adds one fp32 scale per layer's tensor.
    whole = {name: None for name in ("NVFP4", "mlx8-g32", "mlx8-g64", "mlx4-g32", "mlx4-g64")}
    gguf = {"Q8_0": None, "Q4_K": None, "Q3_K": None, "IQ4_NL": None, "IQ4_XS": None}
    assert report.table_bytes == {
        "fp32": rows * 800,
        "bf16": rows * 400,
        "fp8": rows * (200 + 2 * 4),
        "fp8-e8m0": rows * (200 + 7),
        "fp8-tensor": rows * 200 + 2 * 4,
        "int8-g128": rows * (200 + 2 * 4),
        **whole,
        **gguf,
    }
    assert report.adamw_bytes == rows * 200 * 8
    assert report.rows_per_token == 18 and report.values_per_token == 3600
    assert report.bytes_per_token == {
        "fp32": 14_400,
        "bf16": 7200,
        "fp8": 18 * 208,
        "fp8-e8m0": 18 * 207,
        "fp8-tensor": 18 * 200,
        "int8-g128": 18 * 208,
        **whole,
        **gguf,
    }
    assert report.touched_fraction == pytest.approx(18 / rows)
    assert report.memory_width == 9 * 200
    offload = report.offload(1e6)
    assert offload["bf16"]["bytes_per_second"] == 7.2e9
    assert offload["bf16"]["link_share"]["PCIe 4.0 x16"] == pytest.approx(7.2e9 / PCIE4)
    assert offload["fp8"]["link_share"]["PCIe 5.0 x16"] == pytest.approx(18 * 208 * 1e6 / (2 * PCIE4))
    assert offload["Q8_0"] is None
    backbone = report.backbone(1e9)
    assert backbone["table_to_backbone"] == pytest.approx(rows * 200 / 1e9)
    assert backbone["table_share"] == pytest.approx(rows * 200 / (rows * 200 + 1e9))


def test_v41_declared_rows_are_the_48_primes_from_16_million():
    # Every order searches from the same base, so the 48 primes are the 48 smallest at or above
    # it: layer 1 takes the first 24, layer 14 the next 24.
    chain = prime_chain(16_000_000, 48)
    assert (sum(chain[:24]), sum(chain[24:])) == V41_DECLARED
    report = size_engram("deepseek-v4.1-flash").report
    assert report.declared_rows == V41_DECLARED and report.declared_rows_match is True
    assert report.spec.rows_per_layer.tolist() == list(V41_DECLARED)
    assert report.rows == 768_022_850 == sum(chain)
    assert report.to_dict()["declared_rows_per_layer"] == list(V41_DECLARED)


def test_v41_bytes_by_encoding():
    report = size_engram("deepseek-v4.1-flash").report
    assert report.dim == 256
    by_hand = {
        "fp8-e8m0": 256 + 256 // 32,  # one e4m3 byte a value, one e8m0 byte per 32 values
        "bf16": 256 * 2,
        "Q8_0": 256 // 32 * 34,
        "Q4_K": 256 // 256 * 144,
        "Q3_K": 256 // 256 * 110,
    }
    assert by_hand == {"fp8-e8m0": 264, "bf16": 512, "Q8_0": 272, "Q4_K": 144, "Q3_K": 110}
    for name, row in by_hand.items():
        assert report.row_bytes[name] == row
        assert report.table_bytes[name] == 768_022_850 * row
    assert report.table_bytes["fp8-e8m0"] == 202_758_032_400  # the checkpoint's published size
    assert round(202_758_032_400 / 2**30, 2) == 188.83
    scales = report.table_bytes["fp8-e8m0"] - report.rows * 256
    assert round(scales / 2**30, 2) == 5.72  # e8m0 scales: [rows, 8] bytes
    assert report.rows_per_token == 48 == 2 * V41_COLUMNS
    assert report.bytes_per_token["fp8-e8m0"] == 48 * 264
    decode = report.offload(2000.0)  # the read bandwidth at 2,000 tokens/s
    assert decode["fp8-e8m0"]["bytes_per_second"] == 48 * 264 * 2000
    assert decode["Q4_K"]["bytes_per_second"] == 48 * 144 * 2000


def test_gguf_formats_apply_only_to_whole_blocks():
    report = size_memory(HashSpec(), 96)  # three blocks of 32, not whole blocks of 256
    assert report.row_bytes["Q8_0"] == 3 * 34
    assert report.row_bytes["Q4_K"] is None and report.row_bytes["Q3_K"] is None
    assert report.table_bytes["Q4_K"] is None and report.bytes_per_token["Q3_K"] is None
    assert report.row_bytes["fp8-e8m0"] == 96 + 3


@pytest.mark.parametrize("ranks", [1, 2, 3, 4, 6, 8, 12, 24])
def test_tensor_parallel_ranks_tile_each_layer_by_column(ranks):
    chain = prime_chain(16_000_000, 48)
    layers = [chain[:24], chain[24:]]  # each layer's columns in order: (order, head)
    report = size_engram("deepseek-v4.1-flash", tp=ranks).report
    shards = report.split_columns(ranks)
    width = V41_COLUMNS // ranks
    assert [shard.columns for shard in shards] == [(r * width, (r + 1) * width) for r in range(ranks)]
    for layer, primes in enumerate(layers):
        ranges = [shard.row_ranges[layer] for shard in shards]
        assert ranges[0][0] == 0 and ranges[-1][1] == V41_DECLARED[layer]
        assert all(end == start for (_, end), (start, _) in itertools.pairwise(ranges))
        for (start, end), shard in zip(ranges, shards, strict=True):
            first, stop = shard.columns
            assert end - start == sum(primes[first:stop])
    assert sum(shard.rows for shard in shards) == sum(V41_DECLARED)
    for shard in shards:
        assert shard.rows == sum(end - start for start, end in shard.row_ranges)
        assert shard.table_bytes["fp8-e8m0"] == shard.rows * 264
    split = size_engram("deepseek-v4.1-flash", tp=ranks).tensor_parallel
    assert split["ranks"] == ranks and split["rows_read_per_token_per_rank"] == 48 // ranks
    assert [shard["rows"] for shard in split["shards"]] == [shard.rows for shard in shards]


def test_declared_rows_that_differ_are_reported():
    spec = PRESETS["deepseek-v4.1-flash"].spec
    report = size_memory(spec, 256, declared_rows=(384_006_168, 384_016_681))
    assert report.declared_rows_match is False
    assert report.to_dict()["declared_rows_match"] is False
    assert size_memory(spec, 256).declared_rows_match is None
    # Another layout is not the checkpoint's: its declared rows do not apply.
    assert size_engram("deepseek-v4.1-flash", heads=4).report.declared_rows is None
    assert size_engram("deepseek-v4.1-flash", dim=128).report.declared_rows_match is True


def test_different_bases_keep_their_own_chains():
    spec = HashSpec(max_ngram=3, heads=2, layer_ids=(0, 1), table_sizes=(1000, 50_000))
    report = size_memory(spec, 4)
    assert report.rows == sum(prime_chain(1000, 4)) + sum(prime_chain(50_000, 4))
    assert report.nominal_params == (1000 + 50_000) * 2 * 2 * 4


@settings(max_examples=15)
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
    with pytest.raises(UsageError, match="`declared_rows` gives 1 count for 2 layers"):
        size_memory(HashSpec(), 8, declared_rows=(5,))
    report = size_memory(PRESETS["deepseek-v4.1-flash"].spec, 256)
    with pytest.raises(
        UsageError, match=r"`tp` 5 does not divide the 24 columns .* 1, 2, 3, 4, 6, 8, 12, 24$"
    ):
        report.split_columns(5)
    with pytest.raises(UsageError, match="`tp` must be at least 1"):
        report.split_columns(0)


# Each layout from its definition (docs/analysis.md, "The encodings"): bytes of one row of `dim`
# values, or None where a row must be whole blocks and is not.
def _by_hand(name: str, dim: int) -> int | None:
    def whole(block: int, block_bytes: int) -> int | None:
        return dim // block * block_bytes if dim % block == 0 else None

    if name == "NVFP4":  # 16 e2m1 values (two per byte) and one e4m3 scale byte a block
        return whole(16, 16 // 2 + 1)
    if name == "IQ4_NL":  # block_iq4_nl: ggml_half d; uint8_t qs[QK4_NL/2], QK4_NL = 32
        return whole(32, 2 + 32 // 2)
    if name == "IQ4_XS":  # block_iq4_xs: d (fp16), scales_h (u16), scales_l[QK_K/64], qs[QK_K/2]
        return whole(256, 2 + 2 + 256 // 64 + 256 // 2)
    if name.startswith("mlx"):  # bits-bit codes packed in uint32 words, fp16 scale and bias a group
        bits, group = (int(part) for part in name[3:].split("-g"))
        return whole(group, group * bits // 32 * 4 + 2 + 2)
    if name.startswith("int8-g"):  # int8 values, fp32 scale per group (the last may be partial)
        group = int(name[6:])
        return dim + 4 * -(-dim // group)
    if name == "fp8-tensor":  # one e4m3 byte a value; the fp32 scale is the tensor's, not the row's
        return dim
    raise AssertionError(name)


NEW_ENCODINGS = ("NVFP4", "IQ4_NL", "IQ4_XS", "mlx4-g32", "mlx4-g64", "mlx8-g32", "mlx8-g64", "int8-g128")


@pytest.mark.parametrize("dim", [16, 32, 64, 96, 160, 200, 256, 512, 2560])
def test_new_encodings_by_hand(dim):
    report = size_memory(HashSpec(heads=2, layer_ids=(1, 4), table_sizes=(1000, 1000)), dim)
    for name in (*NEW_ENCODINGS, "fp8-tensor", "int8-g32"):
        encoding = encoding_named(name)
        assert encoding.row_bytes(dim) == _by_hand(name, dim), (name, dim)
        if name in report.row_bytes:
            assert report.row_bytes[name] == _by_hand(name, dim)
    tensor_scales = 2 * 4  # one fp32 scale per layer's tensor
    assert report.table_bytes["fp8-tensor"] == report.rows * dim + tensor_scales
    if dim % 16 == 0:
        assert report.table_bytes["NVFP4"] == report.rows * dim * 9 // 16 + tensor_scales


def test_the_issue_figures_of_a_160_value_row():
    assert encoding_named("nvfp4").row_bytes(160) == 90  # 80 B of e2m1 + 10 e4m3 scales
    assert encoding_named("IQ4_NL").row_bytes(160) == 5 * 18
    assert encoding_named("IQ4_XS").row_bytes(160) is None  # not whole blocks of 256
    assert row_parts(None, "mlx4-g32", 160) == (80, 10, 10)
    assert row_parts(None, "mlx8-g32", 256) == (256, 16, 16)
    assert row_parts(None, "NVFP4", 256) == (128, 16, 0)
    assert row_parts(None, "fp8-e8m0", 256) == (256, 8, 0)
    assert row_parts(None, "Q4_K", 256) == (144, 0, 0)  # a GGUF block is one struct
    assert bytes_per_row(None, "int8-g64", 100) == (100 + 2 * 4, "int8-g64")
    with pytest.raises(UsageError, match="unknown `encoding` 'int8-g0'"):
        encoding_named("int8-g0")
    with pytest.raises(UsageError, match="whole blocks of 64"):
        bytes_per_row(None, "mlx4-g64", 160)


def test_qwen38_flash_next_is_the_checkpoint_table():
    primes = prime_chain(20_000_000, 16)  # consecutive primes from ngram_vocab_size_base
    assert sum(primes) == 320_001_446
    padded = -(-sum(primes) // 128) * 128  # make_ngram_vocab_size_divisible_by 128
    assert padded == 320_001_536
    report = size_engram("qwen3.8-flash-next").report
    assert report.spec.primes.ravel().tolist() == primes
    assert report.rows_per_layer == [320_001_536] and report.rows == 320_001_536
    assert report.declared_rows_match is True and report.dim == 160 and report.memory_width == 2560
    assert report.table_bytes["NVFP4"] == 320_001_536 * 90 + 4
    assert round(report.table_bytes["NVFP4"] / 2**30, 3) == 26.822
    assert round(report.table_bytes["bf16"] / 2**30, 2) == 95.37
    # Another layout is not the checkpoint's: neither its declared rows nor its padding apply.
    other = size_engram("qwen3.8-flash-next", heads=4).report
    assert other.declared_rows is None and other.rows == sum(prime_chain(20_000_000, 8))
    with pytest.raises(UsageError, match="multipliers are stored in the checkpoint"):
        resolve_spec(preset="qwen3.8-flash-next")


def test_longcat_flash_is_its_config():
    m = 78 * 131_072  # ngram_vocab_size_ratio x vocab_size
    report = size_engram("longcat-flash").report
    sizes = [m + 2 * i + 1 for i in range(3 * 4)]  # (N-1) x K = 12 sub-tables
    assert report.spec.primes.ravel().tolist() == sizes
    assert report.rows == sum(sizes) == 12 * m + 144
    assert report.dim * 12 == 3072 == report.memory_width  # hidden_size split over the sub-tables
    assert report.params == (12 * m + 144) * 256
