"""Text as files hold it: a UTF-8 byte-order mark is text (the tokenizers keep it, so the command
line does too: its ids are the trainer's), and UTF-16 or UTF-32 input is named as such with the
command that converts it, in every command that reads text."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import assert_one_line_error, run

from ngramtool import NgramHashMapping, hash_texts

TEXT = "\ufeffThe hacker ethic.\nInformation wants to be free.\n"


def test_a_byte_order_mark_is_hashed_as_the_tokenizer_and_the_library_read_it(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    mapping = NgramHashMapping.build("cl100k_base")
    expected = mapping.encode(TEXT)
    assert expected[0] != mapping.encode(TEXT[1:])[0]  # the mark changes the first ids
    printed = run("tokenize", path)
    assert printed.stdout.decode().split() == [str(i) for i in expected]
    result = run("hash", path, "-o", tmp_path / "cli.ngidx", "-q")
    assert result.returncode == 0, result.stderr.decode()
    library = hash_texts([TEXT], tmp_path / "lib.ngidx")
    for name in ("tokens.npy", "rows.npy"):
        assert np.array_equal(np.load(tmp_path / "cli.ngidx" / name), np.load(library.path / name)), name
    assert np.load(tmp_path / "cli.ngidx" / "tokens.npy").tolist() == expected.tolist()


def test_hf_encode_keeps_it_too(tmp_path, deepseek_tokenizer_path):
    import gzip

    from tokenizers import Tokenizer

    tokenizer_json = tmp_path / "tokenizer.json"
    tokenizer_json.write_bytes(gzip.decompress(deepseek_tokenizer_path.read_bytes()))
    path = tmp_path / "bom.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    printed = run("tokenize", path, "-t", tokenizer_json)
    assert printed.returncode == 0, printed.stderr.decode()
    expected = Tokenizer.from_file(str(tokenizer_json)).encode(TEXT).ids
    assert printed.stdout.decode().split() == [str(i) for i in expected]


@pytest.mark.parametrize(
    ("command", "encoding", "named", "iconv"),
    [
        ("tokenize", "utf-16", "UTF-16LE text", "iconv -f UTF-16 -t UTF-8"),
        ("tokenize", "utf-16-be", "UTF-16BE (no byte-order mark) text", "iconv -f UTF-16BE -t UTF-8"),
        ("tokenize", "utf-16-le", "UTF-16LE (no byte-order mark) text", "iconv -f UTF-16LE -t UTF-8"),
        ("tokenize", "utf-32", "UTF-32LE text", "iconv -f UTF-32 -t UTF-8"),
        ("hash", "utf-16", "UTF-16LE text", "iconv -f UTF-16 -t UTF-8"),
        ("collisions", "utf-16-le", "UTF-16LE (no byte-order mark) text", "iconv -f UTF-16LE -t UTF-8"),
    ],
)
def test_utf16_and_utf32_are_named_with_the_conversion(tmp_path, command, encoding, named, iconv):
    path = tmp_path / "wide.txt"
    path.write_bytes(TEXT.lstrip("\ufeff").encode(encoding))
    args = ["-o", tmp_path / "o.ngidx"] if command == "hash" else []
    result = run(command, path, *args)
    assert_one_line_error(result, 2, f"{path} is {named}, not UTF-8: convert it first: {iconv} {path}")
    assert not (tmp_path / "o.ngidx").exists()


def test_utf16_on_stdin_says_to_pipe_it_through_iconv():
    result = run("tokenize", stdin=TEXT.encode("utf-16"))
    assert_one_line_error(result, 2, "is UTF-16LE text, not UTF-8: pipe it through iconv -f UTF-16 -t UTF-8")


def test_jsonl_keeps_stripping_the_mark_before_its_first_record(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"text": "hello"}).encode() + b"\n")
    printed = run("tokenize", path)
    assert printed.returncode == 0, printed.stderr.decode()
    assert printed.stdout.decode().split() == [str(i) for i in NgramHashMapping.build().encode("hello")]
