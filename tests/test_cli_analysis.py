"""collisions, size and spec through the command line: figures equal brute force; bad options exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, run, run_json
from test_collisions import brute_stats, brute_types
from test_sizing import PCIE4, chain_params
from typer.testing import CliRunner

import ngramtool.inputs.text as text_input
import ngramtool.textcuts as textcuts
from ngramtool import HashSpec
from ngramtool.cli.app import app


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """Two small text files (ASCII, so bytes are ids), an index of both, and a token file."""
    folder = tmp_path_factory.mktemp("analysis")
    text = CORPUS.read_text(encoding="utf-8").encode("ascii", "ignore").decode()
    (folder / "a.txt").write_text(text[1000:4000], encoding="ascii")
    (folder / "b.txt").write_text(text[9000:10500], encoding="ascii")
    np.save(folder / "ids.npy", np.random.default_rng(2).integers(0, 300, 2000).astype(np.uint32))
    index = folder / "ab.ngidx"
    result = run(
        "hash", folder / "a.txt", folder / "b.txt", "-o", index, "--tokenizer", "bytes", "--no-compress",
        "--boundary", "reset", "--heads", "2", "--layers", "0,9", "--table", "101", "-q",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    return {"a": folder / "a.txt", "b": folder / "b.txt", "index": index, "ids": folder / "ids.npy"}


def assert_tables_match(data: dict, ids: list[int], specs: list[HashSpec], doc_starts=None) -> None:
    assert [t["table_sizes"] for t in data["tables"]] == [list(s.table_sizes) for s in specs]
    for table, spec in zip(data["tables"], specs, strict=True):
        assert table["spec_fingerprint"] == spec.fingerprint
        types = brute_types(ids, spec, doc_starts)
        heads, orders = brute_stats(types, spec)
        for h in table["heads"]:
            want = heads[(h["layer"], h["order"], h["head"])]
            assert {k: h[k] for k in want} == pytest.approx(want, rel=1e-12)
            t, m = want["types"], want["table"]
            assert h["expected_collision"] == pytest.approx(1 - m * (1 - (1 - 1 / m) ** t) / t, rel=1e-9)
            assert h["expected_shared"] == pytest.approx(1 - (1 - 1 / m) ** (t - 1), rel=1e-9)
        for o in table["orders"]:
            want = orders[(o["layer"], o["order"])]
            assert {k: o[k] for k in want} == pytest.approx(want, rel=1e-12)
        assert data["orders"] == [
            {"order": n, "types": len(c), "occurrences": sum(c.values())} for n, c in types.items()
        ]


def test_collisions_on_text_sweep_equal_brute_force(files):
    data = run_json(
        "collisions", files["a"], "--tokenizer", "bytes", "--no-compress", "--heads", "2", "--layers", "3",
        "--table", "257,61",
    )  # fmt: skip
    ids = list(files["a"].read_bytes())
    specs = [
        HashSpec(heads=2, layer_ids=(3,), table_sizes=(t, t), pad_id=0, vocab_size=256) for t in (61, 257)
    ]
    assert data["input"]["tokens"] == len(ids) and data["input"]["kind"] == "text"
    assert data["vocab_size"] == 256 and data["tokenizer"] == "bytes"
    assert_tables_match(data, ids, specs)


def test_collisions_on_an_index_use_its_spec_and_boundary(files):
    data = run_json("collisions", files["index"])
    a, b = files["a"].read_bytes(), files["b"].read_bytes()
    spec = HashSpec(heads=2, layer_ids=(0, 9), table_sizes=(101, 101), pad_id=0, vocab_size=256)
    assert data["input"] == {
        "kind": "index",
        "sources": [str(files["index"])],
        "tokens": len(a) + len(b),
        "documents": 2,
        "max_tokens": None,
        "boundary": "reset",
        "skipped_records": 0,
    }
    assert_tables_match(data, list(a + b), [spec], doc_starts=[0, len(a)])


def test_collisions_on_a_token_file_with_max_tokens(files):
    data = run_json(
        "collisions", files["ids"], "--vocab-size", "300", "--max-tokens", "500", "--heads", "3",
        "--layers", "0", "--table", "97", "--max-ngram", "4",
    )  # fmt: skip
    ids = np.load(files["ids"])[:500].tolist()
    spec = HashSpec(max_ngram=4, heads=3, layer_ids=(0,), table_sizes=(97,) * 3, pad_id=0, vocab_size=300)
    assert data["input"]["tokens"] == 500 and data["input"]["kind"] == "tokens"
    assert_tables_match(data, ids, [spec])


def test_collisions_prints_tables_and_draws_a_plot(files, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sweep.png"
    result = run(
        "collisions", files["a"], "--tokenizer", "bytes", "--heads", "2", "--table", "61,257", "--plot", png
    )
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()
    assert "2 orders x 2 heads = 4 tables per layer" in out and "collision (exp)" in out
    assert "base table 61" in out and "base table 257" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_how_to_install_it(files, tmp_path):
    blocker = tmp_path / "no-matplotlib" / "matplotlib"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('blocked for this test')\n")
    result = subprocess.run(
        [sys.executable, "-m", "ngramtool", "collisions", str(files["a"]), "--tokenizer", "bytes",
         "--plot", str(tmp_path / "x.png")],
        capture_output=True, timeout=120, env={**os.environ, "PYTHONPATH": str(blocker.parent)},
    )  # fmt: skip
    err = result.stderr.decode()
    assert result.returncode == 1 and "pip install 'ngramtool[plot]'" in err and "Traceback" not in err
    assert not (tmp_path / "x.png").exists()


def test_size_figures(files):
    data = run_json(
        "size", "--preset", "engram-27b", "--tokens-per-second", "2e6", "--backbone-params", "21e9"
    )
    params = chain_params(2_262_400, 32, 80)
    assert data["params"] == params and data["nominal_params"] == 2 * 2 * 8 * 2_262_400 * 80
    assert data["tables_in_words"] == "2 orders x 8 heads = 16 tables per layer, x 2 layers = 32 tables"
    assert data["rows_per_token"] == 32 and data["bytes_per_token"]["bf16"] == 32 * 80 * 2
    assert data["offload"]["bf16"]["bytes_per_second"] == 2e6 * 32 * 80 * 2
    assert data["offload"]["bf16"]["link_share"]["PCIe 4.0 x16"] == pytest.approx(2e6 * 5120 / PCIE4)
    assert data["backbone"]["table_share"] == pytest.approx(params / (params + 21e9))
    fitted = run_json("size", "--preset", "engram-27b", "--budget", "5.7e9")
    base = fitted["budget"]["table"]
    assert chain_params(base, 32, 80) == fitted["params"] <= 5.7e9 < chain_params(base + 1, 32, 80)
    override = run_json("size", "--preset", "tutorial", "--heads", "2", "--dim", "8")
    assert override["params"] == chain_params(262_144, 4, 8) and override["tables"] == 4
    text = run("size", "--preset", "tutorial").stdout.decode()
    assert "2 orders x 4 heads = 8 tables (1 layer)" in text and "33,554,432" in text


def test_spec_save_show_and_lint(files, tmp_path):
    saved = tmp_path / "small.json"
    options = ("--vocab-size", "1000", "--heads", "2", "--table", "5003", "--layers", "7", "--max-ngram", "2")
    assert run("spec", "save", saved, *options, "-q").returncode == 0
    expected = HashSpec(max_ngram=2, heads=2, layer_ids=(7,), table_sizes=(5003,), pad_id=0, vocab_size=1000)
    assert HashSpec.from_json(saved.read_text()) == expected
    shown = run_json("spec", "show", "--spec", saved)
    assert shown["fingerprint"] == expected.fingerprint
    assert shown["derived"]["primes"] == [[[5003, 5009]]]  # the two smallest primes >= 5003
    assert [int(m) % 2 for m in shown["derived"]["multipliers"][0]] == [1, 1]
    lint = run("spec", "lint", "--spec", saved, "--json")
    assert lint.returncode == 1  # 5003 lies 3 rows from 5 x V' = 5000
    assert [f["code"] for f in json.loads(lint.stdout)["findings"]] == ["near-vocab-multiple"]
    clean = tmp_path / "shown.json"
    clean.write_bytes(run("spec", "show", "--preset", "engram-27b", "--json").stdout)
    for target in (clean, files["index"], files["index"] / "manifest.json"):
        result = run("spec", "lint", target)
        assert result.returncode == 0 and "no findings" in result.stdout.decode(), target
    assert run("spec", "lint", "--preset", "tutorial").returncode == 0


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (("collisions",), 2, "give text INPUT"),
        (("collisions", "{a}", "--table", "abc"), 2, "--table takes comma-separated integers"),
        (("collisions", "{a}", "--table", "1", "--tokenizer", "bytes"), 2, "at least 2"),
        (("collisions", "{a}", "--boundary", "weird"), 2, "--boundary must be"),
        (("collisions", "{a}", "--max-tokens", "0"), 2, "--max-tokens"),
        (("collisions", "{a}", "{ids}"), 2, "analysed alone"),
        (("collisions", "{index}", "--heads", "4"), 2, "drop --heads"),
        (("collisions", "{ids}", "--vocab-size", "10"), 1, "but the vocabulary of --vocab-size has 10 ids"),
        (("size", "--preset", "nope"), 2, "known presets"),
        (("size", "--budget", "10"), 2, "below the smallest"),
        (("size", "--budget", "1e9", "--table", "5"), 2, "drop --table"),
        (("size", "--budget", "1e30"), 2, "--budget 1e+30 asks for tables of more than"),
        (("size", "--tokens-per-second", "-1"), 2, "positive"),
        (("size", "--dim", "0"), 2, "--dim"),
        (("spec", "lint", "{index}", "--heads", "2"), 2, "drop --heads"),
        (("spec", "save", "{a}", "--vocab-size", "9"), 2, "already exists"),
        (("spec", "show", "--vocab-size", "9", "--tokenizer", "bytes"), 2, "one of --vocab-size"),
        (("collisions", "{a}", "--force"), 2, "--force applies only with --plot or --save-types"),
        (("collisions", "{ids}", "--vocab-size", "300", "--json-key", "t"), 2, "--json-key applies only"),
        (("collisions", "{ids}", "--vocab-size", "300", "--no-compress"), 2, "--no-compress applies only"),
        (("collisions", "{a}", "{b}", "--token-format", "npy"), 2, "--token-format applies only"),
        (("collisions", "{index}", "--doc-sep", "x"), 2, "--doc-sep applies only to text input"),
        (("collisions", "{a}", "{a}"), 2, "is given twice"),
        (("collisions", "p.ngtypes.npz", "{a}"), 2, "partial counts (*.ngtypes.npz) are merged alone"),
        (("collisions", "{index}", "p.ngtypes.npz"), 2, "not mixed with text, token files or indexes"),
        (("spec", "lint", "--dim", "32"), 2, "--dim applies only with --hidden-size too"),
        (("spec", "show", "--vocab-size", "9", "--no-compress"), 2, "--no-compress applies only"),
        (("spec", "lint", "{index}", "--no-compress"), 2, "drop --no-compress"),
    ],
)
def test_bad_options_are_one_line_errors(files, args, code, fragment):
    result = run(*(a.format(**files) for a in args))
    err = result.stderr.decode()
    assert result.returncode == code, err
    assert "Traceback" not in err and fragment in err, err


def test_counting_options_do_not_apply_to_saved_partial_counts(files, tmp_path):
    parts = tmp_path / "a.ngtypes.npz"
    made = run("collisions", files["a"], "--tokenizer", "bytes", "--save-types", parts, "--json")
    assert made.returncode == 0, made.stderr.decode()
    result = run("collisions", parts, "--max-tokens", "10", "--boundary", "reset")
    err = result.stderr.decode()
    assert result.returncode == 2 and "Traceback" not in err, err
    assert "--boundary, --max-tokens apply only to counting, not to saved partial counts: drop them" in err
    fixed = run("collisions", parts, "--pad-id", "5", "-n", "4")
    assert fixed.returncode == 2 and "--max-ngram, --pad-id apply only to counting" in fixed.stderr.decode()


def test_spec_options_on_partial_counts_replace_only_what_they_name(files, tmp_path):
    parts = tmp_path / "a.ngtypes.npz"
    options = ("--tokenizer", "bytes", "--heads", "2", "--save-types", parts, "--json")
    made = run("collisions", files["a"], *options)
    assert made.returncode == 0, made.stderr.decode()
    recorded = json.loads(made.stdout)["spec"]
    merged = json.loads(run("collisions", parts, "--seed", "7", "--json").stdout)["spec"]
    assert (merged["heads"], merged["seed"], merged["layer_ids"]) == (2, 7, recorded["layer_ids"])


def test_a_plain_directory_is_not_taken_for_an_index(tmp_path):
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "a.txt").write_text("hello world\n")
    result = run("collisions", tmp_path / "texts", "--workers", "2")
    err = result.stderr.decode()
    assert result.returncode == 2 and "give the text files inside it" in err, err


def test_spec_commands_refuse_options_that_spec_files_override(tmp_path):
    saved = tmp_path / "s.json"
    assert run("spec", "save", saved, "--heads", "2", "--tokenizer", "bytes", "-q").returncode == 0
    for args, fragment in [
        (("spec", "save", tmp_path / "o.json", "--spec", saved, "--heads", "4"), "drop --heads"),
        (("spec", "lint", "--spec", saved, "--seed", "3"), "drop --seed"),
        (("spec", "show", "--spec", saved, "--preset", "tutorial"), "drop --preset"),
        (("spec", "show", "--spec", saved, "--no-compress"), "--no-compress applies only with --tokenizer"),
    ]:
        result = run(*args)
        err = result.stderr.decode()
        assert result.returncode == 2 and fragment in err and "Traceback" not in err, (args, err)
    assert not (tmp_path / "o.json").exists()
    assert run_json("spec", "show", "--spec", saved)["heads"] == 2


def table_sizes(data: dict) -> tuple[list, list]:
    """The base table sizes the top-level "spec" reports, and those of the analysed tables."""
    spec = data["spec"]
    reported = [s["table_sizes"] for s in spec] if isinstance(spec, list) else [spec["table_sizes"]]
    return reported, [t["table_sizes"] for t in data["tables"]]


def test_parts_record_and_merge_the_analysed_tables(files, tmp_path):
    one, sweep = tmp_path / "one.ngtypes.npz", tmp_path / "sweep.ngtypes.npz"
    counted = run_json("collisions", files["a"], "--tokenizer", "bytes", "--heads", "2", "--table", "4099",
                       "--save-types", one)  # fmt: skip
    assert table_sizes(counted) == ([[4099, 4099]], [[4099, 4099]]) and counted["spec"]["heads"] == 2
    merged = run_json("collisions", one)
    assert table_sizes(merged) == table_sizes(counted) and merged["tables"] == counted["tables"]
    swept = run_json(
        "collisions", files["b"], "--tokenizer", "bytes", "--table", "4099,257", "--save-types", sweep
    )
    assert table_sizes(swept) == ([[257, 257], [4099, 4099]],) * 2
    assert table_sizes(run_json("collisions", sweep)) == table_sizes(swept)
    assert table_sizes(run_json("collisions", sweep, "--table", "300")) == ([[300, 300]],) * 2
    for parts in ([one, sweep], [sweep, one]):
        result = run("collisions", *parts)
        err = result.stderr.decode()
        assert result.returncode == 2 and "was counted with another spec than" in err, err


def test_an_empty_shard_saves_its_part_and_succeeds(files, tmp_path):
    empty, part, full = tmp_path / "empty.txt", tmp_path / "e.ngtypes.npz", tmp_path / "a.ngtypes.npz"
    empty.write_text("")
    common = ("--tokenizer", "bytes", "--heads", "2")
    saved = run("collisions", empty, *common, "--save-types", part)
    assert saved.returncode == 0 and saved.stdout == b"", saved.stderr.decode()
    assert f"note: the input holds no tokens: saved the empty part {part}" in saved.stderr.decode()
    quiet = run("collisions", empty, *common, "--save-types", part, "--force", "-q")
    assert quiet.returncode == 0 and quiet.stderr == b""
    failed = run("collisions", empty, *common)
    assert failed.returncode == 1 and "holds no tokens" in failed.stderr.decode()
    alone = run_json("collisions", files["a"], *common, "--save-types", full)
    merged = run_json("collisions", part, full)
    assert merged["tables"] == alone["tables"] and merged["input"]["tokens"] == alone["input"]["tokens"]


def test_unsafe_text_cuts_are_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(text_input, "TARGET_PIECE_CHARS", 16)  # a run of 600 characters without spaces
    monkeypatch.setattr(textcuts, "MAX_PIECE_CHARS", 256)  # is then cut hard twice
    path = tmp_path / "run.txt"
    path.write_text("x" * 600)
    result = CliRunner().invoke(
        app, ["collisions", str(path), "--tokenizer", "bytes", "--table", "257", "-q"]
    )
    assert result.exit_code == 0, result.output
    assert "warning: 2 text cuts fell inside very long runs" in result.stderr
