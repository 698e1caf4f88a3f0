"""The rank file cache: the ranks and the fingerprint equal tiktoken's own parse and the
fingerprint's definition, whether parsed or read back, and a damaged entry is rebuilt."""

from __future__ import annotations

import base64
import gzip

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ngramtool.tokenizers.tiktoken_files import BUNDLED_RANKS, _tiktoken_by_name, _tiktoken_fingerprint
from ngramtool.tokenizers.tiktoken_ranks import load_ranks, parse_ranks

tiktoken_load = pytest.importorskip("tiktoken.load")


def _gpt2_bytes() -> bytes:
    return gzip.decompress(BUNDLED_RANKS["gpt2"].read_bytes())


def test_ranks_equal_tiktokens_parse_fresh_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("NGRAMTOOL_CACHE_DIR", str(tmp_path))
    contents = _gpt2_bytes()
    source = tmp_path / "r50k_base.tiktoken"
    source.write_bytes(contents)
    expected = tiktoken_load.load_tiktoken_bpe(str(source))
    fresh = load_ranks(contents)
    (entry,) = (tmp_path / "tiktoken").iterdir()
    again = load_ranks(contents)
    assert fresh.ranks == expected and again.ranks == expected
    assert fresh.lines == again.lines == contents  # the official file is already canonical
    # a damaged entry (a flipped byte, a cut) is read as absent and rebuilt
    for damaged in (entry.read_bytes()[:-1] + b"\x00", entry.read_bytes()[:1000], b""):
        entry.write_bytes(damaged)
        assert load_ranks(contents).ranks == expected
        assert load_ranks(contents).lines == contents


def test_the_fingerprint_is_the_same_with_or_without_the_cached_lines():
    tokenizer = _tiktoken_by_name("cl100k_base", None)
    assert tokenizer.fingerprint == _tiktoken_fingerprint(tokenizer._enc)  # recomputed from the ranks
    assert tokenizer.fingerprint.startswith("483ae1f5e1151981")  # as recorded in every index's manifest


@given(st.dictionaries(st.binary(min_size=1, max_size=8), st.integers(0, 10**6), max_size=40))
def test_parse_reads_what_tiktoken_writes(ranks):
    lines = b"".join(b"%s %d\n" % (base64.b64encode(t), r) for t, r in ranks.items())
    parsed = parse_ranks(lines)
    assert parsed.ranks == ranks
    ordered = sorted(ranks.items(), key=lambda kv: kv[1])
    assert parsed.lines == b"".join(b"%s %d\n" % (base64.b64encode(t), r) for t, r in ordered)


def test_a_malformed_file_is_named():
    with pytest.raises(ValueError, match=r"x\.tiktoken: a line without its rank"):
        parse_ranks(b"YQ== 0\nYg==\n", "x.tiktoken")
    with pytest.raises(ValueError, match="not a tiktoken rank file"):
        parse_ranks(b"YQ== zero\n", "x.tiktoken")


def test_a_cache_that_cannot_be_written_is_skipped(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory would be")
    monkeypatch.setenv("NGRAMTOOL_CACHE_DIR", str(blocked))
    contents = _gpt2_bytes()
    assert load_ranks(contents).lines == contents
    assert blocked.read_text() == "a file where the cache directory would be"
