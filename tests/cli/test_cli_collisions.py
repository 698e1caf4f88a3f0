"""``ngramtool collisions`` through a subprocess: tables, --plot, refused options, notes (the
figures: tests/analysis/test_measurement.py)."""

from __future__ import annotations

import json
import os

import pytest
from conftest import run, run_json
from typer.testing import CliRunner

import ngramtool.inputs.text as text_input
import ngramtool.tokenizers.textcuts as textcuts
from ngramtool.cli.app import app


def test_collisions_prints_tables_and_draws_a_plot(files, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sweep.png"
    result = run(
        "collisions",
        *(files["a"], "--tokenizer", "bytes", "--heads", "2", "--table", "61,257", "--plot", png),
        env={"COLUMNS": "200"},  # wide enough for every column on one line
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
    path = os.pathsep.join([str(blocker.parent), *filter(None, [os.environ.get("PYTHONPATH")])])
    result = run(
        "collisions",
        files["a"],
        "--tokenizer",
        "bytes",
        "--plot",
        tmp_path / "x.png",
        env={"PYTHONPATH": path},
    )
    err = result.stderr.decode()
    assert result.returncode == 1 and "pip install 'ngramtool[plot]'" in err and "Traceback" not in err
    assert not (tmp_path / "x.png").exists()


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


def test_a_plain_directory_is_not_taken_for_an_index(tmp_path):
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "a.txt").write_text("hello world\n")
    result = run("collisions", tmp_path / "texts", "--workers", "2")
    err = result.stderr.decode()
    assert result.returncode == 2 and "give the text files inside it" in err, err


def test_an_empty_shard_saves_its_part_and_succeeds(tmp_path):
    empty, part = tmp_path / "empty.txt", tmp_path / "e.ngtypes.npz"
    empty.write_text("")
    common = ("--tokenizer", "bytes", "--heads", "2")
    saved = run("collisions", empty, *common, "--save-types", part)
    assert saved.returncode == 0 and saved.stdout == b"", saved.stderr.decode()
    assert f"note: the input holds no tokens: saved the empty part {part}" in saved.stderr.decode()
    quiet = run("collisions", empty, *common, "--save-types", part, "--force", "-q")
    assert quiet.returncode == 0 and quiet.stderr == b""
    failed = run("collisions", empty, *common)
    assert failed.returncode == 1 and "holds no tokens" in failed.stderr.decode()


def test_parts_that_recorded_other_specs_are_named_with_options(files, tmp_path):
    one, sweep = tmp_path / "one.ngtypes.npz", tmp_path / "sweep.ngtypes.npz"
    assert (
        run_json("collisions", files["a"], "--tokenizer", "bytes", "--save-types", one)["spec"]["heads"] == 8
    )
    run_json("collisions", files["a"], "--tokenizer", "bytes", "--table", "257,4099", "--save-types", sweep)
    result = run("collisions", one, sweep)
    err = result.stderr.decode()
    assert result.returncode == 2 and "was counted with another spec than" in err and "--table" in err, err
    merged = json.loads(run("collisions", one, "--json").stdout)
    assert merged["input"]["kind"] == "partial counts"


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
