"""``ngramtool collisions`` through a subprocess: tables, --per-head, --plot, refused options, notes
(the figures: tests/analysis/test_measurement.py; files beside the report: test_cli_measuring.py)."""

from __future__ import annotations

import errno
import json
import os
import statistics

import pytest
from conftest import run, run_json
from typer.testing import CliRunner

import ngramtool.analysis.type_counts as type_counts
import ngramtool.inputs.text as text_input
import ngramtool.tokenizers.textcuts as textcuts
from ngramtool import NgramHashMapping
from ngramtool.analysis.measurement import PartNotSaved, measure_collisions
from ngramtool.cli.app import app
from ngramtool.util.atomic import OutputError


def test_collisions_prints_tables_and_draws_a_plot(files, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sweep.png"
    result = run(
        "collisions",
        *(files["a"], "--tokenizer", "bytes", "--heads", "2", "--table", "61,1031", "--plot", png),
        "--per-head",
        env={"COLUMNS": "200"},  # wide enough for every column on one line
    )
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()
    assert "2 orders x 2 heads = 4 tables per layer" in out and "collision (exp)" in out
    assert "base table 61: per head" in out and "base table 1,031: per head" in out
    assert out.count("all heads of an order together") == 2
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


SWEEP = ("--tokenizer", "bytes", "--heads", "2", "--table", "61,1031,4099")


def summary_rows(output: str) -> list[str]:
    """The rows of the table titled ``collision ratio over ...`` (below its rule)."""
    table = output.split("collision ratio over", 1)[1].split("\n\n")[1].splitlines()
    rule = next(i for i, line in enumerate(table) if set(line.strip()) == {"─"})
    return table[rule + 1 :]


def test_the_default_is_one_line_per_table_size_and_order_within_80_columns(files):
    result = run("collisions", files["a"], *SWEEP, env={"COLUMNS": "80"})
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()
    assert all(len(line) <= 80 for line in out.splitlines()), out
    assert ": per head, measured" not in out and "all heads of an order together" not in out
    assert "(per head and on every head of an order: --per-head; every figure: --json)" in out
    rows = summary_rows(out)
    figures = run_json("collisions", files["a"], *SWEEP)  # per head, as before
    assert len(rows) == len(figures["tables"]) * len(figures["orders"]) == 6, out
    for table, lines in zip(figures["tables"], (rows[0:2], rows[2:4], rows[4:6]), strict=True):
        for line, order in zip(lines, (2, 3), strict=True):
            heads = [h for h in table["heads"] if h["order"] == order]  # both layers
            measured = [h["collision"] for h in heads]
            mean, expected = (
                statistics.mean(measured),
                statistics.mean(h["expected_collision"] for h in heads),
            )
            cells = [f"{mean:.2%}", f"({expected:.2%})", f"{min(measured):.2%}", f"{max(measured):.2%}"]
            assert line.split()[-6:] == [str(order), *cells, f"{mean / expected:.3f}"], line
    assert rows[0].split()[0] == "61" and rows[2].split()[0] == "1,031" and rows[4].split()[0] == "4,099"


def test_a_part_that_cannot_be_saved_keeps_the_figures(files, tmp_path, monkeypatch):
    def full_disk(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(type_counts, "write_types", full_disk)
    part = tmp_path / "a.ngtypes.npz"
    with pytest.raises(PartNotSaved) as caught:
        measure_collisions(
            files["a"], NgramHashMapping.build("bytes", heads=2), table_sizes=[257], save_types=part
        )
    assert isinstance(caught.value, OutputError)
    assert f"cannot write {part}: no space left on device" in str(caught.value)
    assert caught.value.result.tokens > 0 and caught.value.result.reports[0].heads
    assert list(tmp_path.iterdir()) == []


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
    assert result.returncode == 2 and "give the files inside it" in err, err


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
