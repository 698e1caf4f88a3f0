"""The Engram compressed vocabulary against the golden tables of DeepSeek-V3 and cl100k_base."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from conftest import load_json
from hypothesis import given, settings
from hypothesis import strategies as st

from ngramtool.tokenizers import load_tokenizer
from ngramtool.tokenizers.normalize import normalize, token_key
from ngramtool.tokenizers.vocab import CompressedVocab, build_vocab, identity_vocab
from ngramtool.util.errors import NgramToolError


@pytest.fixture(scope="module")
def deepseek_golden():
    return load_json("compress_deepseek_v3.json")


def test_normalizer_examples(deepseek_golden):
    for example in deepseek_golden["normalizer_examples"]:
        assert normalize(example["input"]) == example["normalized"], example
        key = token_key(example["input"], "raw")
        if "\ufffd" in example["input"]:  # partial UTF-8: the raw byte-level string is the key
            assert key == "raw"
        else:
            assert key == (example["input"] if example["empty_so_key_is_input"] else example["normalized"])


def test_normalization_details():
    assert normalize("ΣΑΣ") == "σασ"  # per-character lowercase, no final-sigma rule
    assert normalize("\x1c") == "\x1c"  # not White_Space, so not stripped
    assert normalize(" \t\n ") == " "
    assert normalize("ﬁ") == "fi"
    assert normalize("\u093e") == ""  # a spacing mark (Mc) is removed


def test_deepseek_v3_lut_matches_golden(deepseek_golden, deepseek_vocab):
    golden = deepseek_golden["deepseek_v3"]
    vocab = deepseek_vocab
    assert vocab.raw_size == golden["len_tokenizer"] == 128_815
    assert vocab.size == golden["compressed_vocab_size"] == 98_627
    assert round(vocab.reduction, 6) == golden["reduction"]
    assert vocab.fingerprint == golden["lut_sha256_int64_le"]
    import hashlib

    assert hashlib.sha256(vocab.lut.astype("<i4").tobytes()).hexdigest() == golden["lut_sha256_int32_le"]
    for sample in golden["samples"]:
        assert int(vocab.lut[sample["raw_id"]]) == sample["canonical_id"], sample
        assert vocab.keys[sample["canonical_id"]] == sample["key"], sample
    assert int(vocab.lut[golden["pad_id_raw"]]) == golden["pad_id_compressed"]


def test_deepseek_demo_sentence(hash_golden, deepseek_vocab):
    case = hash_golden["configs"][0]["cases"][0]
    raw = np.asarray(case["input_ids"][0])
    assert deepseek_vocab.canonicalize(raw).tolist() == case["compressed_ids"][0]


def test_cl100k_lut_matches_golden():
    golden = load_json("compress_cl100k.json")
    vocab = build_vocab(load_tokenizer("cl100k_base"))
    assert vocab.raw_size == golden["n_vocab"]
    assert vocab.assigned == golden["assigned_ids"]
    assert vocab.size == golden["compressed_vocab_size"] == 62_330
    assert vocab.fingerprint == golden["lut_sha256_int64_le_with_minus1_for_unassigned"]
    assert np.flatnonzero(vocab.lut < 0).tolist() == golden["unassigned_ids"]
    for sample in golden["samples"]:
        assert int(vocab.lut[sample["raw_id"]]) == sample["canonical_id"], sample


def test_cache_round_trip_gives_the_same_table(deepseek_tokenizer_path):
    tokenizer = load_tokenizer(str(deepseek_tokenizer_path))
    cached = build_vocab(tokenizer)  # built by the fixture above or now; then read from disk
    fresh = build_vocab(tokenizer, cache=False)
    assert np.array_equal(cached.lut, fresh.lut)
    assert cached.keys == fresh.keys


def test_a_truncated_cache_entry_is_rebuilt(deepseek_tokenizer_path):
    from ngramtool.tokenizers.vocab import _cache_path

    tokenizer = load_tokenizer(str(deepseek_tokenizer_path))
    built = build_vocab(tokenizer)
    path = _cache_path(tokenizer)
    path.write_bytes(path.read_bytes()[:1000])  # a zip archive cut short (a full disk, a crash)
    again = build_vocab(tokenizer)
    assert np.array_equal(again.lut, built.lut) and path.stat().st_size > 1000


def test_without_a_cache_directory_the_vocabulary_is_built_and_nothing_cached(
    deepseek_tokenizer_path, monkeypatch
):
    """No NGRAMTOOL_CACHE_DIR and no home directory (a container run as an arbitrary user id)."""
    from pathlib import Path

    from ngramtool.util.atomic import cache_dir

    tokenizer = load_tokenizer(str(deepseek_tokenizer_path))
    expected = build_vocab(tokenizer, cache=False)
    monkeypatch.delenv("NGRAMTOOL_CACHE_DIR")
    monkeypatch.setattr(Path, "home", lambda: (_ for _ in ()).throw(RuntimeError("no home directory")))
    with pytest.raises(OSError, match="no cache directory: set NGRAMTOOL_CACHE_DIR or HOME"):
        cache_dir()
    assert np.array_equal(build_vocab(tokenizer).lut, expected.lut)


def test_no_compress_is_the_identity():
    tokenizer = load_tokenizer("cl100k_base")
    vocab = build_vocab(tokenizer, compress=False)
    assert vocab.size == 100_277
    assert vocab.canonicalize(np.array([0, 100276])).tolist() == [0, 100276]


def test_canonicalize_errors_and_masking():
    vocab = build_vocab(load_tokenizer("cl100k_base"))
    with pytest.raises(NgramToolError, match="position 11"):
        vocab.canonicalize(np.array([1, 2**20]), first_position=10)
    with pytest.raises(NgramToolError, match="unassigned"):
        vocab.canonicalize(np.array([100256]))
    assert vocab.canonicalize(np.array([-1, 0])).tolist() == [-1, 0]
    assert identity_vocab(5).canonicalize(np.array([4])).tolist() == [4]


def test_largest_merge_group_is_whitespace(deepseek_vocab):
    canonical, members = deepseek_vocab.merge_groups(1)[0]
    assert deepseek_vocab.keys[canonical] == " "
    assert canonical == 174 and len(members) == 163


@given(
    st.lists(st.integers(0, 100_290) | st.integers(100_250, 100_290), max_size=60),
    st.sampled_from([np.uint32, np.uint16]),
)
@settings(max_examples=80)
def test_unsigned_ids_map_as_signed_ones_do(ids: list[int], dtype: type) -> None:
    """Token ids (unsigned) take a shorter path: same canonical ids, same error, same position."""
    vocab = _cl100k_vocab()
    ids = [i for i in ids if i <= np.iinfo(dtype).max]
    outcomes = []
    for raw in (np.asarray(ids, dtype=dtype), np.asarray(ids, dtype=np.int64)):
        try:
            outcomes.append(vocab.canonicalize(raw, first_position=7).tolist())
        except NgramToolError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


@given(
    st.lists(st.integers(-3, 100_290) | st.integers(100_250, 100_290), max_size=60),
    st.sampled_from([np.uint32, np.uint16, np.int64]),
    st.integers(0, 1 << 40),
)
@settings(max_examples=80)
def test_checking_ids_raises_exactly_where_mapping_them_does(ids: list[int], dtype: type, first: int) -> None:
    """``check`` (a tokens-only index, ``verify``) takes no map: it accepts what ``canonicalize``
    maps and refuses what it refuses, with the same message and position."""
    vocab = _cl100k_vocab()
    info = np.iinfo(dtype)
    raw = np.asarray([i for i in ids if info.min <= i <= info.max], dtype=dtype)
    outcomes = []
    for way in (vocab.canonicalize, vocab.check):
        try:
            way(raw, first_position=first)
            outcomes.append(None)
        except NgramToolError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


def test_a_table_without_holes_is_checked_by_the_maximum_alone():
    vocab = identity_vocab(5)
    assert vocab._holes is None
    vocab.check(np.array([4, 0], dtype=np.uint32))
    with pytest.raises(NgramToolError, match="id 5 at position 3 is outside"):
        vocab.check(np.array([4, 0, 5], dtype=np.uint32), first_position=1)
    assert int(_cl100k_vocab()._holes.sum()) == 16


@functools.cache
def _cl100k_vocab() -> CompressedVocab:
    """cl100k_base's compressed vocabulary: 100,277 raw ids, 16 of them without a token."""
    return build_vocab(load_tokenizer("cl100k_base"))
