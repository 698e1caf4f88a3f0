"""``ngramtool hash`` through a subprocess: what it prints, its notes, exit codes and one-line errors
(what it writes: tests/test_api.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import assert_one_line_error, run

from ngramtool import load_tokenizer, open_index


def test_hash_verbose_says_backend_and_where_the_cpu_time_went(sample, tmp_path):
    result = run("hash", str(sample / "a.txt"), "-o", str(tmp_path / "v.ngidx"), "-v")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.decode().splitlines()
    assert lines[0].startswith("backend: numpy on cpu (auto)")  # a small input: numba is not loaded
    assert re.fullmatch(
        r"cpu [\d.]+ s, [\d.]+ cores busy: tokenize [\d.]+ s, canonicalize [\d.]+ s, hash [\d.]+ s, "
        r"write [\d.]+ s, xxh3-128 [\d.]+ s, other [\d.]+ s; disk busy [\d.]+ s of [\d.]+ s",
        lines[-1],
    )


def test_hash_refuses_to_overwrite_without_force(sample, tmp_path):
    out = tmp_path / "idx"
    assert run("hash", str(sample / "a.txt"), "-o", str(out), "-q").returncode == 0
    assert_one_line_error(run("hash", str(sample / "a.txt"), "-o", str(out)), 2, "--force")
    assert run("hash", str(sample / "b.txt"), "-o", str(out), "-q", "--force").returncode == 0
    assert open_index(out).manifest["sources"] == [str(sample / "b.txt")]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary leftovers


def test_hash_from_stdin_and_default_output(sample, tmp_path):
    data = (sample / "a.txt").read_bytes()
    out = tmp_path / "stdin.ngidx"
    assert run("hash", "-", "-o", str(out), "-q", stdin=data).returncode == 0
    copy = tmp_path / "copy.txt"
    copy.write_bytes(data)
    assert run("hash", str(copy), "-q").returncode == 0
    assert np.array_equal(open_index(out).rows, open_index(str(copy) + ".ngidx").rows)


@pytest.mark.parametrize(
    "args, code, fragment",
    [
        (["hash", "missing.txt"], 2, "input file not found: missing.txt"),
        (["hash", "."], 2, "is a directory"),
        (["hash", "x.txt", "--heads", "0"], 2, "error: --heads must be at least 1"),
        (["hash", "x.txt", "--max-ngram", "1"], 2, "error: --max-ngram must be at least 2"),
        (["hash", "x.txt", "--table", "1"], 2, "every size in --table must be at least 2"),
        (["hash", "x.txt", "--tokenizer", "no_such_encoding"], 2, "unknown tokenizer"),
        (["hash", "x.txt", "--table", "12,abc"], 2, "--table takes whole numbers, got 'abc'"),
        (["hash", "x.txt", "--boundary", "sometimes"], 2, "--boundary"),
        (["hash"], 2, "reading stdin: name the output directory with -o"),
        (["hash", "x.txt", "--heads", "many"], 2, "--heads takes a whole number, got 'many'"),
    ],
)
def test_bad_input_is_a_clear_error(tmp_path, args, code, fragment):
    (tmp_path / "x.txt").write_text("some text")
    assert_one_line_error(run(*args, cwd=tmp_path), code, fragment)


def test_spec_file_refuses_explicit_spec_options(tmp_path):
    from ngramtool import HashSpec

    spec_file = tmp_path / "s.json"
    spec_file.write_text(HashSpec(heads=4, vocab_size=62_330, pad_id=0).to_json())
    (tmp_path / "x.txt").write_text("hello")
    result = run(
        "hash", str(tmp_path / "x.txt"), "--spec", str(spec_file), "--heads", "2", "-o", str(tmp_path / "o")
    )
    assert_one_line_error(result, 2, "--spec gives the whole hash spec: drop --heads")


def test_hash_says_when_the_pad_id_was_defaulted(tmp_path):
    np.save(tmp_path / "ids.npy", np.arange(50, dtype=np.uint32))
    args = ("hash", "--tokens", str(tmp_path / "ids.npy"), "--vocab-size", "100", "--force")
    result = run(*args, "-o", str(tmp_path / "a"))
    assert result.returncode == 0, result.stderr.decode()
    assert (
        "canonical pad id is 0 by default" in result.stderr.decode() and "--pad-id" in result.stderr.decode()
    )
    chosen = run(*args, "-o", str(tmp_path / "b"), "--pad-id", "7")
    assert chosen.returncode == 0 and b"pad id" not in chosen.stderr
    assert open_index(tmp_path / "b").spec.pad_id == 7
    named = run("hash", "-", "-o", str(tmp_path / "c"), stdin=b"a tokenizer names its pad")
    assert named.returncode == 0 and b"pad id" not in named.stderr


def test_hash_tokens_names_the_assumed_tokenizer_and_refuses_ids_beyond_it(tmp_path):
    gpt2 = tmp_path / "gpt2.npy"
    np.save(gpt2, np.arange(50_257, dtype=np.uint32))
    result = run("hash", "--tokens", str(gpt2), "-o", str(tmp_path / "a"))
    assert result.returncode == 0, result.stderr.decode()
    note = f"note: no --tokenizer given: the ids of {gpt2} are taken as cl100k_base ids (100,277 of them)"
    assert note in result.stderr.decode() and "--tokenizer NAME" in result.stderr.decode()
    quiet = run("hash", "--tokens", str(gpt2), "-o", str(tmp_path / "b"), "-q")
    assert quiet.returncode == 0 and quiet.stderr == b""
    big = tmp_path / "big.npy"
    np.save(big, np.array([5, 120_000, 7, 150_000, 9], dtype=np.uint32))
    for args in (("-o", str(tmp_path / "c")), ("-o", str(tmp_path / "c"), "--tokenizer", "cl100k_base")):
        result = run("hash", "--tokens", str(big), *args)
        assert_one_line_error(
            result, 1, f"{big}: its largest token id is 150,000 but tokenizer cl100k_base has 100,277 ids"
        )
        assert "--tokenizer NAME" in result.stderr.decode() and "--vocab-size N" in result.stderr.decode()
        assert not (tmp_path / "c").exists() and not list(tmp_path.glob(".c.*"))
    result = run("hash", "--tokens", str(big), "-o", str(tmp_path / "c"), "--vocab-size", "1000")
    assert_one_line_error(
        result, 1, "largest token id is 150,000 but the vocabulary of --vocab-size has 1,000"
    )


def test_force_with_a_stream_applies_to_save_tokens(tmp_path):
    (tmp_path / "x.txt").write_text("some text")
    (tmp_path / "t.npy").write_bytes(b"old")
    result = run("hash", "x.txt", "-o", "-", "--save-tokens", "t.npy", "--force", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    assert np.load(tmp_path / "t.npy").tolist() == load_tokenizer("cl100k_base").encode("some text").tolist()
