"""ngramtool.run.space: the estimates behind the free-space check."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from conftest import CORPUS

from ngramtool.run.space import expected_tokens, text_bytes_per_token
from ngramtool.tokenizers import load_tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer("cl100k_base")


def test_plain_text_is_sampled_for_its_bytes_per_token(tokenizer) -> None:
    per_token = text_bytes_per_token([str(CORPUS)], tokenizer)
    assert per_token is not None and 2.0 < per_token < 8.0
    size = CORPUS.stat().st_size
    estimate = expected_tokens(size, per_token)
    actual = len(tokenizer.encode(CORPUS.read_text(encoding="utf-8")))
    assert 0.7 * actual < estimate < 1.3 * actual


def test_compressed_inputs_give_no_estimate(tokenizer, tmp_path: Path) -> None:
    named = tmp_path / "c.txt.gz"
    named.write_bytes(gzip.compress(CORPUS.read_bytes()))
    unnamed = tmp_path / "c.txt"  # gzip data without the suffix: sniffed
    unnamed.write_bytes(named.read_bytes())
    assert text_bytes_per_token([str(named)], tokenizer) is None
    assert text_bytes_per_token([str(unnamed)], tokenizer) is None
    assert text_bytes_per_token([str(CORPUS), str(named)], tokenizer) is None
    assert expected_tokens(None, 4.0) is None and expected_tokens(100, None) is None
