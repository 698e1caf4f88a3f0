"""Token files: saved beside an index (save_tokens), read back in (tokens_file), and on the command
line --save-tokens, its warnings and inspect."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import run

from ngramtool import CorpusReader, OutputOptions, TokenFileReader, hash_files
from ngramtool.formats.tokenfiles import open_token_file


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("docs")
    path = folder / "docs.jsonl"
    texts = ["first document, short", "", "the second one\nhas two lines", "x" * 300]
    path.write_text("\n".join(json.dumps({"text": t}) for t in texts) + "\n")
    return path


@pytest.mark.parametrize(
    "name, fmt, keeps_docs",
    [("t.bin", "llmc", False), ("t.bin", "megatron", True), ("t.ds", None, True), ("t.npy", None, False)],
)
def test_save_tokens_then_hash_them_back(docs, tmp_path, name, fmt, keeps_docs):
    saved = tmp_path / name
    index = hash_files(
        CorpusReader(docs, text_key="text"),
        tmp_path / "a.ngidx",
        boundary="reset",
        outputs=OutputOptions(save_tokens=saved, save_format=fmt),
    )
    token_file = open_token_file(saved)
    assert np.array_equal(np.asarray(token_file.tokens), index.tokens)
    if keeps_docs:
        assert token_file.doc_offsets.tolist() == index.doc_offsets.tolist()
    reset = "reset" if keeps_docs else "none"  # one document: reset would change nothing
    back = hash_files(TokenFileReader(saved), tmp_path / "b.ngidx", boundary=reset)
    assert np.array_equal(back.tokens, index.tokens)
    if keeps_docs:
        assert np.array_equal(back.rows, index.rows)
    else:  # one document: equal to the first document's rows only up to its end
        first_end = int(index.doc_offsets[1])
        assert np.array_equal(back.rows[:first_end], index.rows[:first_end])


def test_nanogpt_refuses_a_large_vocabulary_upfront(docs, tmp_path):
    result = run("hash", str(docs), "-o", str(tmp_path / "x"), "--save-tokens", str(tmp_path / "t.bin"))
    assert result.returncode == 2
    assert b"uint16" in result.stderr and b"--save-format llmc" in result.stderr
    assert not (tmp_path / "x").exists()


def test_nanogpt_with_bytes_and_inspect(docs, tmp_path):
    saved = tmp_path / "bytes.bin"
    result = run(
        "hash",
        str(docs),
        "--json-key",
        "text",
        "-o",
        str(tmp_path / "x"),
        "-q",
        "--tokenizer",
        "bytes",
        "--save-tokens",
        str(saved),
    )
    assert result.returncode == 0, result.stderr.decode()
    report = json.loads(run("inspect", str(saved), "--json").stdout)
    assert report["kind"] == "token file" and report["format"] == "nanogpt" and report["dtype"] == "uint16"
    assert report["first_tokens"][:5] == list(b"first")
    assert "no document boundaries" in run("inspect", str(saved)).stdout.decode()


def test_save_tokens_warns_when_the_format_drops_document_boundaries(docs, tmp_path):
    args = ["hash", str(docs), "--json-key", "text", "--tokenizer", "bytes", "--save-tokens"]
    lost = run(*args, str(tmp_path / "t.bin"), "--save-format", "llmc", "-o", str(tmp_path / "a"))
    assert lost.returncode == 0, lost.stderr.decode()
    warning = lost.stderr.decode().splitlines()[0]
    assert warning.startswith("warning: ") and "(llmc) records no document boundaries" in warning
    assert "4 documents read back as one" in warning
    assert f"--save-tokens {tmp_path / 't'}.ds)" in warning and "--save-format megatron" in warning
    kept = run(*args, str(tmp_path / "t.ds"), "-o", str(tmp_path / "b"))
    assert kept.returncode == 0 and b"warning" not in kept.stderr
    quiet = run(*args, str(tmp_path / "q.npy"), "-o", str(tmp_path / "c"), "-q")
    assert quiet.returncode == 0 and quiet.stderr == b""
    piped = run(*args, str(tmp_path / "j.npy"), "-o", "-", "--json")  # the summary goes to stderr
    assert piped.returncode == 0 and json.loads(piped.stderr)["num_documents"] == 4
