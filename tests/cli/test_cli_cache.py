"""``ngramtool cache`` through a subprocess: tables, --json fields, --plot, presets, policies,
batches, pages, hot sets, refused options (the figures: tests/analysis/test_row_cache.py and
test_row_cache_policies.py; files beside the report: test_cli_measuring.py)."""

from __future__ import annotations

import re

import pytest
from conftest import assert_one_line_error, run, run_json

from ngramtool import NgramHashMapping
from ngramtool.analysis.row_cache import CacheOptions, measure_row_cache
from ngramtool.util.wording import byte_size


def test_cache_prints_the_reads_and_every_budget(files):
    result = run("cache", files["a"], files["b"], "--tokenizer", "bytes", "--heads", "2", "--per-layer")
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()
    assert "2 documents" in out and "layers [1, 15] x 4 columns: 8 reads per token; bf16 rows of 128 B" in out
    for title in (
        "all layers, one cache: hit rate by budget",
        "layer 1: reads",
        "layer 15: hit rate by budget",
    ):
        assert title in out
    assert "LRU hit" in out and "static hit" in out and "Zipf s (r2)" in out


def test_json_holds_the_fields_and_budgets_in_bytes_as_given(files):
    data = run_json("cache", files["a"], "--tokenizer", "bytes", "--heads", "2", "--budget", "1kB,2KiB,0")
    assert {"accesses", "unique_rows", "hit_ceiling", "budgets", "layers"} <= data.keys()
    assert [(b["bytes"], b["rows"]) for b in data["budgets"]] == [(1000, 7), (2048, 16), (0, 0)]
    fields = {
        "bytes",
        "rows",
        "lru_hit_rate",
        "static_hit_rate",
        "misses_per_token_mean",
        "misses_per_token_p99",
        "lru_pages_per_token",
    }
    assert all(b.keys() == fields for b in data["budgets"])
    assert data["accesses"] == data["input"]["tokens"] * 8
    budgets = CacheOptions(budgets=[1000, 2048, 0])
    want = measure_row_cache(files["a"], NgramHashMapping.build("bytes", heads=2), cache=budgets)
    assert data["budgets"] == [b.to_dict() for b in want.shared.budgets]


def test_an_index_a_token_file_and_a_preset(files, tmp_path):
    index = run_json("cache", files["index"], "--rows", "0,10,100000", "--cold-per-document")
    assert (
        index["input"]["kind"] == "index" and index["cold_per_document"] and index["input"]["documents"] == 2
    )
    assert index["budgets"][-1]["lru_hit_rate"] == pytest.approx(index["hit_ceiling"])
    ids = run_json("cache", files["ids"], "--vocab-size", "300", "--row-bytes", "100", "--rows", "5")
    assert ids["row_bytes"] == 100 and ids["encoding"] is None and ids["input"]["kind"] == "tokens"
    tutorial = run_json("cache", files["a"], "--preset", "tutorial", "--encoding", "fp32", "--rows", "5")
    assert tutorial["row_bytes"] == 16 * 4 and tutorial["spec"]["layer_ids"] == [1]
    png = tmp_path / "hits.png"
    drawn = run("cache", files["a"], "--tokenizer", "bytes", "--heads", "2", "--plot", png, "--quiet")
    assert drawn.returncode == 0, drawn.stderr.decode()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("sizes", "unit"),
    [(["--budget", "1kB,2KiB,5MB"], "bytes"), (["--rows", "5,50,5000"], "rows"), ([], "bytes")],
    ids=["--budget", "--rows", "default sweep (bytes)"],
)
def test_the_plot_is_drawn_in_the_unit_the_budgets_are_given_in(files, tmp_path, sizes, unit):
    pytest.importorskip("matplotlib")
    svg = tmp_path / "hits.svg"
    args = ("cache", files["a"], "--tokenizer", "bytes", "--heads", "2", *sizes)
    drawn = run(*args, "--plot", svg, "-q")
    assert drawn.returncode == 0, drawn.stderr.decode()
    texts = re.findall(r"<!-- (.*?) -->", svg.read_text())  # matplotlib's SVG names each text it draws
    budgets = run_json(*args)["budgets"]
    ticks = [byte_size(b["bytes"]) if unit == "bytes" else f"{b['rows']:,}" for b in budgets]
    assert f"budget ({unit})" in texts and set(ticks) <= set(texts), texts


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--budget", "1XB"], "--budget takes amounts like 10GB"),
        (["--budget", "1MB", "--rows", "5"], "not both"),
        (["--row-bytes", "10", "--encoding", "bf16"], "not both"),
        (["--encoding", "q3_k"], "whole blocks of 256"),
        (["--encoding", "int3"], "unknown --encoding"),
        (["--force"], "--force applies only with --plot"),
        (["--plot", "hits.gif"], "use one of"),
        (["--rows", "-1"], "--rows takes numbers of at least 0, got -1"),
        (["--policy", "lru,lfu"], "--policy takes lru, static, clock, direct"),
        (["--policy", "lru,lru"], "each once"),
        (["--split", "head"], "--split takes shared or layer"),
        (["--layout", "tiled"], "--layout takes interleaved or split"),
        (["--batch-tokens", "0"], "--batch-tokens takes numbers of at least 1, got 0"),
        (["--batch-tokens", "2k"], "--batch-tokens takes whole numbers"),
        (["--page-bytes", "0"], "--page-bytes must be at least 1"),
        (["--page-bytes", "4KiB,8KiB"], "--page-bytes takes one amount, got 2"),
        (["--export-hot", "1MB"], "--export-hot and -o go together"),
        (["-o", "hot.npz"], "--export-hot and -o go together"),
        (["--export-hot", "1XB", "-o", "hot.npz"], "--export-hot takes amounts like 10GB"),
        (["--hot", "missing.npz"], "--hot missing.npz: no such file"),
    ],
)
def test_bad_options_are_one_line_usage_errors(files, args, fragment):
    assert_one_line_error(run("cache", files["a"], "--tokenizer", "bytes", *args), 2, fragment)


def test_saved_type_counts_are_refused(tmp_path):
    assert_one_line_error(run("cache", tmp_path / "part.ngtypes.npz"), 2, "no order of reads")


def test_an_index_refuses_a_preset_and_table_sizes(files):
    own = "applies only to text and token files: {} carries its own: drop it".format(files["index"])
    assert_one_line_error(run("cache", files["index"], "--preset", "tutorial"), 2, f"--preset {own}")
    assert_one_line_error(run("cache", files["index"], "--table", "1009"), 2, f"--table {own}")


def test_policies_batches_and_pages_in_the_report_and_json(files):
    args = ("cache", files["a"], "--tokenizer", "bytes", "--heads", "2", "--rows", "5,50,5000")
    more = (
        "--policy",
        "direct,lru,clock",
        "--batch-tokens",
        "32,1024",
        "--page-bytes",
        "4KiB",
        "--layout",
        "split",
    )
    out = run(*args, *more, "--encoding", "mlx4-g32", "--dim", "96", "--split", "layer")
    text = out.stdout.decode()
    assert out.returncode == 0, out.stderr.decode()
    assert "all layers, a cache per layer: hit rate by budget" in text and "(--split layer)" in text
    assert "CLOCK" in text and "direct" in text and "static" not in text.split("hit rate by budget")[1]
    assert "distinct rows per batch" in text and "pages of 4,096 B (rows split)" in text
    data = run_json(*args, *more, "--encoding", "mlx4-g32", "--dim", "96", "--split", "layer")
    assert data["policies"] == ["lru", "clock", "direct"] and data["split"] == "layer"
    assert data["row_bytes"] == 48 + 6 + 6 and data["page_bytes"] == 4096 and data["layout"] == "split"
    budget = data["budgets"][1]
    assert set(budget) == {
        "bytes", "rows", "rows_per_layer", "lru_hit_rate", "clock_hit_rate", "direct_hit_rate",
        "misses_per_token_mean", "misses_per_token_p99", "lru_pages_per_token",
    }  # fmt: skip
    assert budget["rows_per_layer"] == 25
    assert 3 < data["pages_per_read"] < 3.1  # values, scales, biases: 48-byte rows straddle some pages
    assert [b["tokens"] for b in data["batches"]] == [32, 1024]  # (64,256 would read as 64,256 tokens)
    tokens = data["input"]["tokens"]
    assert data["batches"][0]["batches"] == tokens // 32
    fields = {"batches", "reads", "dedupe_ratio", "unique_rows_mean", "unique_rows_p50", "unique_rows_p99"}
    assert fields <= data["batches"][1].keys()
    assert data["batches"][0]["unique_bytes_max"] == data["batches"][0]["unique_rows_max"] * 60


def test_a_hot_set_is_exported_and_replayed(files, tmp_path):
    hot = tmp_path / "hot.npz"
    args = ("cache", files["a"], "--tokenizer", "bytes", "--heads", "2")
    written = run(*args, "--budget", "4kB", "--export-hot", "4kB", "-o", hot)
    assert written.returncode == 0, written.stderr.decode()
    assert (
        f"wrote {hot}" in written.stderr.decode() and "hot set of 4 kB (31 rows)" in written.stdout.decode()
    )
    assert_one_line_error(run(*args, "--export-hot", "4kB", "-o", hot), 2, "already exists")
    data = run_json(*args, "--budget", "4kB", "--export-hot", "4kB", "-o", hot, "--force")
    assert data["exported_hot"]["rows"] == 31
    assert data["exported_hot"]["static_hit_rate"] == pytest.approx(data["budgets"][0]["static_hit_rate"])
    again = run_json(*args, "--rows", "1", "--hot", hot)
    assert again["hot"]["hit_rate"] == pytest.approx(data["budgets"][0]["static_hit_rate"])
    other = run_json("cache", files["b"], "--tokenizer", "bytes", "--heads", "2", "--rows", "1", "--hot", hot)
    assert (
        0 <= other["hot"]["hit_rate"] <= 1
        and other["hot"]["static_hit_rate_claimed"] == again["hot"]["static_hit_rate_claimed"]
    )
    refused = run("cache", files["b"], "--tokenizer", "bytes", "--heads", "4", "--hot", hot)
    assert_one_line_error(refused, 2, "its row ids are another table's")
