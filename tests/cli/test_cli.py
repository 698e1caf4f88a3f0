"""The command line across its commands, through a subprocess: help, refused options, outputs that
would clobber something, and summaries (each command's own tests: tests/test_cli_<command>.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import assert_one_line_error, run

from ngramtool import open_index


def test_help_has_examples_for_every_command():
    for command in ("hash", "tokenize", "explain", "vocab"):
        result = run(command, "--help")
        assert result.returncode == 0
        assert "Examples" in result.stdout.decode(), command


def test_outputs_never_clobber_inputs_or_existing_files(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("hello there")
    assert_one_line_error(run("tokenize", str(text), "-o", str(text)), 2, "is also an input")
    assert text.read_text() == "hello there"
    lut = tmp_path / "lut.npy"
    lut.write_text("keep")
    assert_one_line_error(run("vocab", "--export", str(lut)), 2, "--force")
    assert lut.read_text() == "keep"
    keep = tmp_path / "precious"
    keep.mkdir()
    (keep / "thesis.txt").write_text("important")
    index = tmp_path / "i.ngidx"
    assert run("hash", str(text), "-o", str(index), "-q").returncode == 0
    assert_one_line_error(run("export", str(index), "-o", str(keep), "--force"), 2, "not a per-layer export")
    assert (keep / "thesis.txt").read_text() == "important"
    assert_one_line_error(run("export", str(index), "-o", str(index), "--force"), 2, "its own index")


@pytest.mark.parametrize(
    "args, fragment",
    [
        (
            ["hash", "x.txt", "y.txt", "--token-format", "npy"],
            "--token-format applies only to a token file (--tokens FILE, or one INPUT)",
        ),
        (["hash", "x.txt", "--ray-address", "auto"], "--ray-address applies only with --engine ray"),
        (["hash", "x.txt", "--save-format", "llmc"], "--save-format applies only with --save-tokens FILE"),
        (
            ["hash", "--tokens", "ids.npy", "--json-key", "text"],
            "--text-key applies only to text INPUT files",
        ),
        (["hash", "--tokens", "ids.npy", "--add-eot", "--doc-sep", "x"], "--doc-sep, --add-eot apply only"),
        (["hash", "--tokens", "ids.npy", "--vocab-size", "9", "--no-compress"], "--no-compress applies only"),
        (["hash", "x.txt", "-o", "out/", "--engine", "ray", "--workers", "2"], "--workers applies only"),
        (["tokenize", "x.txt", "--limit", "5"], "--limit applies only with --show or --json"),
        (["tokenize", "x.txt", "--force"], "--force applies only with -o FILE"),
        (["tokenize", "x.txt", "--show", "--canonical"], "--canonical applies only to printed or saved ids"),
        (["vocab", "--force"], "--force applies only with --export FILE"),
        (["inspect", "-", "--token-format", "npy"], "--token-format applies only to a token file"),
    ],
)
def test_options_that_would_do_nothing_are_usage_errors(tmp_path, args, fragment):
    (tmp_path / "x.txt").write_text("some text")
    (tmp_path / "y.txt").write_text("more text")
    np.save(tmp_path / "ids.npy", np.arange(5, dtype=np.uint32))
    result = run(*args, cwd=tmp_path)
    assert_one_line_error(result, 2, fragment)
    assert len(result.stderr.decode().strip().splitlines()) == 1
    assert "drop " in result.stderr.decode()  # the fix
    assert not (tmp_path / "x.txt.ngidx").exists() and not (tmp_path / "out").exists()


def test_a_repeated_input_is_refused(tmp_path):
    data = b"read me once"
    result = run("hash", "-", "-", "-o", str(tmp_path / "o"), stdin=data)
    assert_one_line_error(result, 2, "input stdin (-) is given twice")
    (tmp_path / "a.txt").write_bytes(data)
    result = run("hash", "a.txt", "./a.txt", "-o", "o", cwd=tmp_path)
    assert_one_line_error(result, 2, "input ./a.txt is given twice (also as a.txt)")
    assert_one_line_error(run("tokenize", "a.txt", "a.txt", cwd=tmp_path), 2, "input a.txt is given twice")
    assert not (tmp_path / "o").exists()


def test_bench_has_no_short_option_for_tokens():
    result = run("bench", "-n", "1000")
    assert result.returncode == 2 and b"No such option: -n" in result.stderr


@pytest.mark.parametrize(
    "args, what",
    [
        (["tokenize", "x.txt", "-o", "no/dir/ids.npy"], "the output no/dir/ids.npy"),
        (["vocab", "--tokenizer", "bytes", "--export", "no/dir/lut.npy"], "the --export file no/dir/lut.npy"),
        (["hash", "x.txt", "-o", "i.ngidx", "--save-tokens", "no/dir/t.npy"], "the --save-tokens file"),
        (["collisions", "x.txt", "--plot", "no/dir/x.png", "--tokenizer", "bytes"], "the --plot file"),
        (
            ["collisions", "x.txt", "--save-types", "no/dir/p.ngtypes.npz", "--tokenizer", "bytes"],
            "the --save-types file",
        ),
    ],
)
def test_single_file_outputs_refuse_a_missing_directory(tmp_path, args, what):
    (tmp_path / "x.txt").write_text("some text")
    result = run(*args, cwd=tmp_path)
    assert_one_line_error(result, 2, f"the directory of {what}")
    assert "does not exist: create it first (mkdir -p no/dir)" in result.stderr.decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]


def test_an_output_file_under_a_file_is_refused(tmp_path):
    (tmp_path / "x.txt").write_text("some text")
    result = run("tokenize", "x.txt", "-o", "x.txt/ids.npy", cwd=tmp_path)
    assert_one_line_error(result, 2, "lies under x.txt, which is not a directory")


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["hash", "x.txt", "-o", "-", "--force"], "--force applies only to an output that may exist"),
        (["tokenize", "x.txt", "--show", "--json"], "--show renders the tokens for reading and --json"),
        (["hash", "--tokens", "ids.npy", "--boundary", "reset", "-o", "o"], "ids.npy (npy) records none"),
        (["hash", "--tokens", "ids.bin", "--boundary", "reset", "-o", "o"], "ids.bin (nanogpt) records none"),
        (
            ["collisions", "ids.npy", "--boundary", "reset", "--vocab-size", "50"],
            "ids.npy (npy) records none",
        ),
    ],
)
def test_options_that_were_silently_ignored_are_usage_errors(tmp_path, args, fragment):
    (tmp_path / "x.txt").write_text("some text")
    np.save(tmp_path / "ids.npy", np.arange(50, dtype=np.uint32))
    (tmp_path / "ids.bin").write_bytes(np.arange(50, dtype=np.uint16).tobytes())
    result = run(*args, cwd=tmp_path)
    assert_one_line_error(result, 2, fragment)
    assert result.stdout == b"" and not (tmp_path / "o").exists()


def test_errors_skip_counts_bad_records_in_every_summary(tmp_path):
    lines = ['{"text": "one"}', "not json", '{"body": "x"}', '{"text": "two"}', '{"text": 3}']
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    strict = run("hash", "d.jsonl", "--json-key", "text", "-o", "a", cwd=tmp_path)
    assert_one_line_error(strict, 1, "d.jsonl:2: not valid JSON: Expecting value at column 1")
    args = ["d.jsonl", "--json-key", "text", "--errors", "skip", "--tokenizer", "bytes"]
    human = run("hash", *args, "-o", "a", cwd=tmp_path)
    assert human.returncode == 0, human.stderr.decode()
    assert "6 tokens, 2 documents (3 bad records skipped)" in human.stderr.decode()
    summary = json.loads(run("hash", *args, "-o", "b", "--json", cwd=tmp_path).stdout)
    assert summary["skipped_records"] == 3 and summary["num_documents"] == 2
    assert open_index(tmp_path / "b").tokens.tolist() == list(b"onetwo")
    printed = run("tokenize", *args, cwd=tmp_path)
    assert printed.stdout.decode().split("\n")[:2] == [" ".join(map(str, b"one")), " ".join(map(str, b"two"))]
    assert "note: skipped 3 bad records (--errors skip)" in printed.stderr.decode()
    saved = run("tokenize", *args, "-o", "ids.npy", cwd=tmp_path)
    assert "wrote 6 raw ids to ids.npy (3 bad records skipped)" in saved.stderr.decode()
    report = json.loads(run("collisions", *args, "--heads", "1", "--json", cwd=tmp_path).stdout)
    assert report["input"]["skipped_records"] == 3
    by_suffix = run("hash", "d.jsonl", "--errors", "skip", "-o", "c", "--tokenizer", "bytes", cwd=tmp_path)
    assert (
        by_suffix.returncode == 0
        and "6 tokens, 2 documents (3 bad records skipped)" in by_suffix.stderr.decode()
    )
    (tmp_path / "d.txt").write_text("plain")
    refused = run("hash", "d.txt", "--errors", "skip", "-o", "e", cwd=tmp_path)
    assert_one_line_error(
        refused, 2, "--errors skip skips bad records (JSONL lines, parquet or dataset rows)"
    )


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (("collisions", "{a}", "--table", "abc"), 2, "--table takes whole numbers, got 'abc'"),
        (("collisions", "{a}", "--table", "1", "--tokenizer", "bytes"), 2, "at least 2"),
        (("collisions", "{a}", "--boundary", "weird"), 2, "--boundary must be"),
        (("collisions", "{a}", "--max-tokens", "0"), 2, "--max-tokens"),
        (("collisions", "{a}", "{ids}"), 2, "is a token file: it is read alone"),
        (("collisions", "{index}", "--heads", "4"), 2, "--heads applies only to text and token files"),
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
        (("collisions", "{ids}", "--vocab-size", "300", "--json-key", "t"), 2, "--text-key applies only"),
        (("collisions", "{ids}", "--vocab-size", "300", "--no-compress"), 2, "--no-compress applies only"),
        (("collisions", "{a}", "{b}", "--token-format", "npy"), 2, "--token-format applies only"),
        (("collisions", "{index}", "--doc-sep", "x"), 2, "--doc-sep applies only to text"),
        (("collisions", "{a}", "{a}"), 2, "is given twice"),
        (("collisions", "p.ngtypes.npz", "{a}"), 2, "partial counts (*.ngtypes.npz) are merged alone"),
        (("collisions", "{index}", "p.ngtypes.npz"), 2, "not mixed with text, token files or indexes"),
        (("spec", "lint", "--dim", "32"), 2, "--dim applies only with --hidden-size too"),
        (("spec", "show", "--vocab-size", "9", "--no-compress"), 2, "--no-compress applies only"),
        (("spec", "lint", "{index}", "--no-compress"), 2, "drop --no-compress"),
    ],
)
def test_bad_analysis_options_are_one_line_errors(files, args, code, fragment):
    result = run(*(a.format(**files) for a in args))
    err = result.stderr.decode()
    assert result.returncode == code, err
    assert "Traceback" not in err and fragment in err, err
