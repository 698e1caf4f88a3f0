"""Tokenized: the ids of text inputs as hashing reads them, raw or canonical, saved or listed."""

from __future__ import annotations

import numpy as np
import pytest

from ngramtool import build_vocab, load_tokenizer
from ngramtool.tools.tokenization import Tokenized
from ngramtool.util.errors import NgramToolError, UsageError


def test_saved_ids_and_records(tmp_path):
    tok = load_tokenizer("cl100k_base")
    text = "Hello, World\nsecond line"
    (tmp_path / "t.txt").write_text(text)
    tokens = Tokenized([tmp_path / "t.txt"])
    assert np.concatenate([ids for _, ids in tokens.chunks()]).tolist() == tok.encode(text).tolist()
    out = tmp_path / "ids.npy"
    assert tokens.save(out, canonical=True) == len(tok.encode(text))
    assert np.load(out).tolist() == build_vocab(tok).canonicalize(tok.encode(text)).tolist()
    assert np.load(out).dtype == np.int64
    (tmp_path / "h.txt").write_text("Hello hello")
    records, more = Tokenized([tmp_path / "h.txt"]).first(200)
    assert records[0]["key"] == records[1]["key"] == "hello" and not more
    assert records[0]["canonical_id"] == records[1]["canonical_id"]


def test_first_says_when_there_is_more(tmp_path):
    (tmp_path / "t.txt").write_text("one two three four five")
    records, more = Tokenized([tmp_path / "t.txt"]).first(3)
    assert more is True and len(records) == 3
    (tmp_path / "u.txt").write_text("one two")
    records, more = Tokenized([tmp_path / "u.txt"]).first(50)
    assert more is False and len(records) == 2


def test_outputs_and_inputs_are_checked_before_reading(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("hello there")
    with pytest.raises(UsageError, match="is also an input"):
        Tokenized([text]).save(text)
    assert text.read_text() == "hello there"
    with pytest.raises(UsageError, match="is given twice: name each input once"):
        Tokenized([text, text])
    (tmp_path / "bad.txt").write_bytes(b"ok \xff")
    with pytest.raises(NgramToolError, match="byte offset 3"):
        Tokenized([tmp_path / "bad.txt"]).first(10)
