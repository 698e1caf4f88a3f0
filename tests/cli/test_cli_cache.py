"""``ngramtool cache`` through a subprocess: tables, --json fields, --plot, presets, refused
options (the figures: tests/analysis/test_row_cache.py; files beside the report:
test_cli_measuring.py)."""

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
