"""``ngramtool tokenize`` through a subprocess: printed ids, --show, --json, warnings (the ids:
tests/tools/test_tokenization.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import CORPUS, assert_one_line_error, run

from ngramtool import build_vocab, load_tokenizer


def test_tokenize_prints_saves_and_shows(tmp_path):
    tok = load_tokenizer("cl100k_base")
    text = "Hello, World\nsecond line"
    result = run("tokenize", "-", "--canonical", stdin=text.encode())
    assert result.returncode == 0
    assert [int(x) for x in result.stdout.split()] == build_vocab(tok).canonicalize(tok.encode(text)).tolist()
    out = tmp_path / "ids.npy"
    saved = run("tokenize", "-", "-o", str(out), stdin=text.encode())
    assert saved.returncode == 0 and f"wrote 6 raw ids to {out}".encode() in saved.stderr
    assert np.load(out).tolist() == tok.encode(text).tolist()
    shown = run("tokenize", "-", "--json", stdin=b"Hello hello")
    records = json.loads(shown.stdout)["tokens"]
    assert records[0]["key"] == records[1]["key"] == "hello"
    assert "normalized key" in run("tokenize", "-", "--show", stdin=b"Hi there").stdout.decode()


def test_tokenize_prints_one_line_per_document_even_empty_leading_ones(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "one.txt").write_text("a")
    separated = run("tokenize", "-", "--doc-sep", "@@@", "--tokenizer", "bytes", stdin=b"@@@a@@@b")
    assert separated.stdout == b"\n97\n98\n"
    files = run("tokenize", str(tmp_path / "empty.txt"), str(tmp_path / "one.txt"), "--tokenizer", "bytes")
    assert files.stdout == b"\n97\n"


def test_tokenize_warns_about_unsafe_cuts(tmp_path):
    from ngramtool.tokenizers.textcuts import MAX_PIECE_CHARS

    (tmp_path / "run.txt").write_text("a" * (MAX_PIECE_CHARS + 10))
    result = run(
        "tokenize", str(tmp_path / "run.txt"), "-o", str(tmp_path / "ids.npy"), "--tokenizer", "bytes"
    )
    assert result.returncode == 0 and b"warning: 1 text cut fell inside very long runs" in result.stderr


def test_tokenize_json_says_when_it_is_truncated():
    text = b"one two three four five"
    report = json.loads(run("tokenize", "-", "--json", "--limit", "3", stdin=text).stdout)
    assert report["truncated"] is True and len(report["tokens"]) == 3
    report = json.loads(run("tokenize", "-", "--json", "--limit", "50", stdin=b"one two").stdout)
    assert report["truncated"] is False and len(report["tokens"]) == 2


def test_tokenizer_engine_options_through_the_command_line(tmp_path):
    """hash --tokenizer-engine fastokens writes the reference's index bytes and the manifest names
    the engine (--no-engine-check: no sample recorded); auto keeps the reference for small input;
    an unknown engine, or one for a tokenizer no engine serves, is a one-line usage error."""
    pytest.importorskip("fastokens")
    text = CORPUS.read_text(encoding="utf-8")[:30000]
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    made = {}
    for name, options in (("auto", []), ("fast", ["--tokenizer-engine", "fastokens", "--no-engine-check"])):
        index = tmp_path / f"{name}.ngidx"
        result = run("hash", tmp_path / "a.txt", "-o", index, *options)
        assert result.returncode == 0, result.stderr.decode()
        made[name] = json.loads((index / "manifest.json").read_text())["tokenizer"]["engine"]
        for array in ("tokens", "rows", "doc_offsets"):
            assert (index / f"{array}.npy").read_bytes() == (
                tmp_path / "auto.ngidx" / f"{array}.npy"
            ).read_bytes()
    assert made["auto"]["name"] == "reference"
    assert made["fast"] == {"name": "fastokens", "version": "0.3.5", "checked_every": None}
    assert_one_line_error(run("tokenize", "-", "--tokenizer-engine", "quick", stdin=b"x"), 2, "use one of")
    refused = run("tokenize", "-", "-t", "bytes", "--tokenizer-engine", "fastokens", stdin=b"x")
    assert_one_line_error(refused, 2, "no engine serves bytes")
