"""``ngramtool size`` through a subprocess: its figures as JSON and as a table, and its errors (the
figures themselves: tests/analysis/test_sizing.py)."""

from __future__ import annotations

import pytest
from conftest import assert_one_line_error, run, run_json
from primes_by_hand import PCIE4, chain_params, prime_chain

import ngramtool.cli.size_cmd as size_cmd
from ngramtool.analysis.sizing import MemorySizing, size_engram, size_memory
from ngramtool.model.presets import PRESETS


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
    # The tutorial's own hash: one table of 262,144 rows per head (not prime), 16 dims.
    override = run_json("size", "--preset", "tutorial", "--heads", "2", "--dim", "8")
    assert override["params"] == 4 * 262_144 * 8 and override["tables"] == 4
    assert run_json("size", "--preset", "tutorial")["params"] == 33_554_432 == 8 * 262_144 * 16
    text = run("size", "--preset", "tutorial").stdout.decode()
    assert "2 orders x 4 heads = 8 tables (1 layer)" in text and "33,554,432" in text
    assert "one size per order, not prime" in text


def test_size_of_the_v41_tables_as_they_ship():
    data = run_json("size", "--preset", "deepseek-v4.1-flash", "--tp", "8", "--tokens-per-second", "2000")
    declared = [384_006_168, 384_016_682]
    assert data["declared_rows_per_layer"] == declared and data["declared_rows_match"] is True
    assert data["rows"] == 768_022_850 == sum(prime_chain(16_000_000, 48))
    assert data["encodings"]["fp8-e8m0"]["row_bytes"] == 256 + 8
    assert data["table_bytes"]["fp8-e8m0"] == 202_758_032_400 == 768_022_850 * 264
    assert data["rows_per_token"] == 48 and data["bytes_per_token"]["fp8-e8m0"] == 48 * 264
    assert data["offload"]["fp8-e8m0"]["bytes_per_second"] == 48 * 264 * 2000
    split = data["tensor_parallel"]
    assert (
        split["ranks"] == 8 and split["columns_per_rank"] == 3 and split["rows_read_per_token_per_rank"] == 6
    )
    for layer, rows in enumerate(declared):
        ranges = [shard["row_ranges"][layer] for shard in split["shards"]]
        assert [start for start, _ in ranges] == [0] + [end for _, end in ranges[:-1]]
        assert ranges[-1][1] == rows
    assert sum(shard["rows"] for shard in split["shards"]) == sum(declared)
    text = run("size", "--preset", "deepseek-v4.1-flash", "--tp", "8").stdout.decode()
    assert "384,006,168, 384,016,682  equal to the derived rows" in text
    assert "tensor parallel over 8 ranks: 3 of the 24 columns each, 6 rows read per token" in text
    last = sum(prime_chain(16_000_000, 48)[21:24])  # rank 7: columns 21-23 of layer 1
    assert f"21-23    {384_006_168 - last:,}..384,006,168" in text


@pytest.mark.parametrize(
    ("ranks", "fragment"),
    [("5", "--tp 5 does not divide the 24 columns"), ("0", "--tp must be at least 1 (got 0)")],
)
def test_tp_that_does_not_split_the_columns_is_refused(ranks, fragment):
    result = run("size", "--preset", "deepseek-v4.1-flash", "--tp", ranks)
    assert_one_line_error(result, 2, fragment)
    assert len(result.stderr.decode().splitlines()) == 1 and not result.stdout
    if ranks == "5":
        assert result.stderr.decode().rstrip().endswith("use one of 1, 2, 3, 4, 6, 8, 12, 24")


def test_declared_rows_the_spec_does_not_derive_are_shown(capsys):
    report = size_memory(PRESETS["deepseek-v4.1-flash"].spec, 256, declared_rows=(1000, 2000))
    sized = MemorySizing(
        report, "inconsistent", budget=None, offload=None, backbone=None, tensor_parallel=None
    )
    size_cmd._render("inconsistent", report, sized.to_dict())
    text = capsys.readouterr().out
    assert "1,000, 2,000  NOT the derived rows" in text


def test_the_released_tables_and_every_encoding():
    qwen = run_json("size", "--preset", "qwen3.8-flash-next")
    assert qwen["rows_per_layer"] == [320_001_536] and qwen["row_multiple"] == 128
    assert qwen["declared_rows_match"] is True and qwen["dim"] == 160
    nvfp4 = qwen["encodings"]["NVFP4"]
    assert nvfp4["row_bytes"] == 90 and nvfp4["row_parts"] == {"values": 80, "scales": 10, "biases": 0}
    assert nvfp4["tensor_bytes"] == 4 and qwen["table_bytes"]["NVFP4"] == 320_001_536 * 90 + 4
    assert qwen["encodings"]["IQ4_XS"]["row_bytes"] is None  # 160 values: no whole block of 256
    text = run("size", "--preset", "qwen3.8-flash-next").stdout.decode()
    assert "padded to a" in text and "equal to the derived rows" in text and "IQ4_NL" in text
    longcat = run_json("size", "--preset", "longcat-flash", "--budget", "10GB", "--encoding", "nvfp4")
    assert longcat["budget"]["encoding"] == "NVFP4" and longcat["budget"]["row_bytes"] == 16 * 9
    assert longcat["table_bytes"]["NVFP4"] <= 10e9
    mlx = run_json("size", "--dim", "128", "--budget", "1GB", "--encoding", "mlx4-g64")
    assert mlx["budget"]["row_bytes"] == 2 * (32 + 2 + 2)
    assert run_json("size", "--budget", "1GB", "--encoding", "int8-g32")["budget"]["row_bytes"] == 64 + 2 * 4


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["size", "--budget", "1GB", "--encoding", "fp4"], "unknown --encoding 'fp4'; known: fp32, bf16"),
        (["size", "--budget", "1GB", "--encoding", "mlx4-g64", "--dim", "96"], "whole blocks of 64"),
        (["hash", "-", "-o", "x.ngidx", "--preset", "qwen3.8-flash-next"], "multipliers are stored"),
        (["spec", "show", "--preset", "qwen3.8-flash-next"], "--preset qwen3.8-flash-next gives the tables'"),
    ],
)
def test_encodings_and_sizes_only_presets_refuse_in_one_line(args, fragment, tmp_path):
    assert_one_line_error(run(*args, cwd=tmp_path), 2, fragment)
