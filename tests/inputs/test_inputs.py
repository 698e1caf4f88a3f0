"""Streaming text input: chunked tokenization equals whole-text tokenization; clear input errors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ngramtool.inputs.jsonl as jsonl_input
import ngramtool.inputs.text as text_input
import ngramtool.tokenizers.textcuts as textcuts
from ngramtool.inputs import Documents, TextPiece, check_reading, iter_text_pieces
from ngramtool.inputs import encoding as encode
from ngramtool.inputs.encoding import iter_token_chunks
from ngramtool.inputs.pieces import record_runs
from ngramtool.tokenizers import ByteTokenizer, HFTokenizer, load_tokenizer
from ngramtool.util.chunks import ramp
from ngramtool.util.errors import NgramToolError, UsageError

WORDS = ["ab", "The", "x", "é", "ß", "文字", "Ω", "42", "7", "'s", "’", "--", "/", "!?"]
GAPS = [" ", "\n", "\n\n", "  ", "\t", ". ", ".\n", " \n", "\r\n", "\u00a0", "", "\n ", ",\n\n"]
texts = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(GAPS)), max_size=80).map(
    lambda pairs: "".join(w + g for w, g in pairs)
)


@pytest.fixture()
def tiny_pieces(monkeypatch):
    """Force many cuts: pieces of ~16 characters (HF's own size too), read blocks of 7 bytes."""
    monkeypatch.setattr(text_input, "TARGET_PIECE_CHARS", 16)
    monkeypatch.setattr(textcuts, "MAX_PIECE_CHARS", 256)
    monkeypatch.setattr(text_input, "READ_BLOCK_BYTES", 7)
    monkeypatch.setattr(HFTokenizer, "piece_chars", 16)


def _chunked_ids(path, tokenizer) -> np.ndarray:
    chunks = list(iter_token_chunks([str(path)], tokenizer, chunk_tokens=10))
    return np.concatenate([c.tokens for c in chunks]), sum(c.hard_cuts for c in chunks)


@pytest.mark.parametrize("name", ["cl100k_base", "r50k", "deepseek", "bytes"])
@settings(max_examples=60, suppress_health_check=list(HealthCheck))
@given(text=texts)
def test_chunked_ids_equal_whole_text_ids(
    tiny_pieces, tmp_path, name, text, r50k_path, deepseek_tokenizer_path
):
    source = {"r50k": str(r50k_path), "deepseek": str(deepseek_tokenizer_path)}.get(name, name)
    tokenizer = load_tokenizer(source)
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8", newline="")
    ids, hard = _chunked_ids(path, tokenizer)
    if hard == 0:
        assert ids.tolist() == tokenizer.encode(text).tolist()


@pytest.mark.parametrize("name", ["cl100k_base", "deepseek"])
def test_bundled_corpus_chunks_exactly(monkeypatch, name, deepseek_tokenizer_path):
    """Many real-sized pieces (HF: its own 16K pieces, encoded as batches) give the whole-text ids."""
    from conftest import CORPUS

    monkeypatch.setattr(text_input, "TARGET_PIECE_CHARS", 2000)
    tokenizer = load_tokenizer(str(deepseek_tokenizer_path) if name == "deepseek" else name)
    assert len(list(iter_text_pieces(str(CORPUS), piece_chars=tokenizer.piece_chars))) > 10
    ids, hard = _chunked_ids(CORPUS, tokenizer)
    assert hard == 0
    assert np.array_equal(ids, tokenizer.encode(CORPUS.read_text(encoding="utf-8")))


def test_a_long_run_without_breaks_is_a_reported_hard_cut(tiny_pieces, tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("x" * 500)
    pieces = list(iter_text_pieces(str(path)))
    assert "".join(p.text for p in pieces) == "x" * 500
    assert any(p.hard_cut for p in pieces)


def test_invalid_utf8_names_the_byte_offset(tiny_pieces, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"hello world, fine so far\xff tail")
    with pytest.raises(NgramToolError, match="byte offset 24"):
        list(iter_text_pieces(str(path)))
    text = "".join(p.text for p in iter_text_pieces(str(path), errors="replace"))
    assert text == "hello world, fine so far\ufffd tail"


def test_invalid_utf8_split_across_reads(tiny_pieces, tmp_path):
    path = tmp_path / "bad2.txt"
    path.write_bytes("abcdé".encode()[:-1] + b"Z")  # truncated two-byte sequence at offset 4
    with pytest.raises(NgramToolError, match="byte offset 4"):
        list(iter_text_pieces(str(path)))


def test_jsonl_documents(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"text": "one"}) + "\n\n" + json.dumps({"text": "two", "id": 2}) + "\n")
    pieces = list(iter_text_pieces(str(path), text_key="text"))
    assert [(p.text, p.doc_start) for p in pieces] == [("one", True), ("two", True)]
    with pytest.raises(NgramToolError, match="no key 'body'"):
        list(iter_text_pieces(str(path), text_key="body"))
    path.write_text("not json\n")
    with pytest.raises(NgramToolError, match=":1: not valid JSON"):
        list(iter_text_pieces(str(path), text_key="text"))


def test_doc_separator(tiny_pieces, tmp_path):
    path = tmp_path / "sep.txt"
    path.write_text("first doc<|sep|>second<|sep|><|sep|>last")
    pieces = list(iter_text_pieces(str(path), doc_sep="<|sep|>"))
    docs, current = [], None
    for piece in pieces:
        if piece.doc_start:
            current = []
            docs.append(current)
        current.append(piece.text)
    assert ["".join(d) for d in docs] == ["first doc", "second", "", "last"]


def test_empty_file_is_one_empty_document(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("")
    assert [(p.text, p.doc_start) for p in iter_text_pieces(str(path))] == [("", True)]


def test_missing_and_directory_inputs(tmp_path):
    with pytest.raises(UsageError, match="not found"):
        list(iter_text_pieces(str(tmp_path / "nope.txt")))
    with pytest.raises(UsageError, match="is a directory"):
        list(iter_text_pieces(str(tmp_path)))
    with pytest.raises(
        UsageError, match="is read as jsonl, whose records are documents already: drop `doc_sep`"
    ):
        list(iter_text_pieces(str(tmp_path / "a.txt"), text_key="a", doc_sep="b"))


def test_add_eot_between_and_after_documents(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"t": "a"}\n{"t": "b"}\n')
    tok = load_tokenizer("bytes")
    chunk = next(iter_token_chunks([str(path)], tok, text_key="t", add_eot=True, eot_token="|"))
    assert chunk.tokens.tolist() == [ord("a"), ord("|"), ord("b"), ord("|")]
    assert chunk.doc_starts.tolist() == [0, 2]


def test_add_eot_survives_a_chunk_boundary_at_a_document_end(tmp_path):
    """A chunk that fills up exactly at a document's end used to drop that document's EOS."""
    path = tmp_path / "docs.jsonl"
    path.write_text('{"t": "ab"}\n{"t": "cd"}\n{"t": "e"}\n')
    tok = load_tokenizer("cl100k_base")
    eos = tok.special_tokens["<|endoftext|>"]
    expected = [*tok.encode("ab"), eos, *tok.encode("cd"), eos, *tok.encode("e"), eos]
    for size in range(1, len(expected) + 1):
        chunks = list(iter_token_chunks([str(path)], tok, text_key="t", add_eot=True, chunk_tokens=size))
        assert np.concatenate([c.tokens for c in chunks]).tolist() == expected, size


def test_byte_order_mark_and_lone_surrogates(tmp_path):
    plain = tmp_path / "bom.txt"
    plain.write_bytes("\ufeffhello".encode())
    assert "".join(p.text for p in iter_text_pieces(str(plain))) == "\ufeffhello"  # kept, as tokenizers do
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_bytes(b'\xef\xbb\xbf{"t": "a\\ud800b"}\n')
    with pytest.raises(NgramToolError, match="lone surrogate"):
        list(iter_text_pieces(str(jsonl), text_key="t"))
    assert [p.text for p in iter_text_pieces(str(jsonl), text_key="t", errors="replace")] == ["a\ufffdb"]


@settings(max_examples=80, suppress_health_check=list(HealthCheck))
@given(
    docs=st.lists(texts, min_size=1, max_size=6),
    sep=st.sampled_from(["\nEND\n", "<|sep|>", "\n\n", "END OF DOC"]),
)
def test_doc_separators_split_documents_wherever_blocks_and_cuts_fall(tiny_pieces, tmp_path, docs, sep):
    """A separator that straddles a read block or a piece cut still starts a document."""
    text = sep.join(docs)
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8", newline="")
    found: list[str] = []
    for piece in iter_text_pieces(str(path), doc_sep=sep):
        if piece.doc_start:
            found.append("")
        found[-1] += piece.text
    assert found == text.split(sep)


@settings(max_examples=80, suppress_health_check=list(HealthCheck))
@given(
    docs=st.lists(texts, min_size=1, max_size=4),
    sep=st.sampled_from([None, "\n\n", "END OF DOC"]),
    gz=st.booleans(),
)
def test_pieces_count_the_bytes_they_were_read_from(tiny_pieces, tmp_path, docs, sep, gz):
    """The pieces' byte counts add up to the input's bytes (compressed ones for a .gz), however
    the blocks, separators and cuts fall."""
    data = (sep or "").join(docs).encode("utf-8")
    path = tmp_path / ("t.txt.gz" if gz else "t.txt")
    path.write_bytes(gzip.compress(data) if gz else data)
    pieces = list(iter_text_pieces(str(path), doc_sep=sep))
    assert sum(p.nbytes for p in pieces) == path.stat().st_size


def test_a_read_block_is_counted_among_the_pieces_cut_from_it(tmp_path):
    """A stream's first pieces are smaller than a read block: each counts about its own bytes (the
    block's bytes shared by characters; the reader's look-ahead aside), not the whole block, so
    the first chunks' progress is not ahead of the text tokenized."""
    path = tmp_path / "t.txt"
    path.write_text("words and more words.\n" * 150_000, encoding="ascii")  # 3.3 MB
    pieces = list(iter_text_pieces(str(path)))
    assert len(pieces[0].text) < text_input.READ_BLOCK_BYTES // 4  # the ramp's first piece
    assert all(abs(p.nbytes - len(p.text)) <= text_input.HEAD_BYTES for p in pieces)
    assert sum(p.nbytes for p in pieces) == path.stat().st_size


def _jsonl(tmp_path, *lines: bytes):
    path = tmp_path / "docs.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return str(path)


def test_jsonl_errors_keep_the_parsers_message_and_name_the_line(tmp_path):
    path = _jsonl(tmp_path, b'{"text": "a"}', b'{"text": "b" "c"}')
    with pytest.raises(
        NgramToolError, match=r"docs.jsonl:2: not valid JSON: Expecting ',' delimiter at column 14"
    ):
        list(iter_text_pieces(path, text_key="text"))
    path = _jsonl(tmp_path, b'{"text": "a"}', b'["text"]')
    with pytest.raises(NgramToolError, match=r":2: the line holds a JSON array, not an object"):
        list(iter_text_pieces(path, text_key="text"))
    path = _jsonl(tmp_path, b'{"text": "a"}', b'{"text": null}')
    with pytest.raises(NgramToolError, match=r":2: 'text' holds a JSON null, not text"):
        list(iter_text_pieces(path, text_key="text"))


def test_a_record_without_the_key_that_earlier_records_have_is_named(tmp_path):
    path = _jsonl(tmp_path, b'{"text": "a"}', b"", b'{"body": "b", "id": 7}')
    with pytest.raises(NgramToolError) as caught:
        list(iter_text_pieces(path, text_key="text"))
    message = str(caught.value)
    assert (
        ":3: this record has no key 'text' (its keys: 'body', 'id') though earlier records have it" in message
    )
    assert "`errors=skip`" in message and "`text_key`" not in message
    with pytest.raises(
        NgramToolError, match=r":1: no key 'body' in this record \(its keys: 'text'\); name the key"
    ):
        list(iter_text_pieces(path, text_key="body"))


def test_errors_skip_skips_and_counts_bad_records(tmp_path):
    path = _jsonl(
        tmp_path,
        b'{"t": "one"}',
        b"not json",
        b"[1]",
        b"",
        b'{"t": 5}',
        b'{"u": "x"}',
        b'{"t": "bad \xff utf-8"}',
        b'{"t": "lone \\ud800"}',
        b'{"t": "two"}',
        b'{"t": "cut sh',
    )
    pieces = list(iter_text_pieces(path, text_key="t", errors="skip"))
    assert [(p.text, p.doc_start, p.skipped) for p in pieces] == [
        ("one", True, 0),
        ("two", True, 6),
        ("", False, 1),  # the bad last line: counted, no document
    ]
    assert sum(p.nbytes for p in pieces) == Path(path).stat().st_size
    chunks = list(iter_token_chunks([path], load_tokenizer("bytes"), text_key="t", errors="skip"))
    assert sum(c.skipped_records for c in chunks) == 7
    assert np.concatenate([c.tokens for c in chunks]).tolist() == list(b"onetwo")
    assert np.concatenate([c.doc_starts for c in chunks]).tolist() == [0, 3]


def test_errors_skip_needs_jsonl_and_other_values_are_refused(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("plain text has no records")
    with pytest.raises(UsageError, match=r"`errors=skip` skips bad records .* and applies only to them"):
        check_reading([str(path)], errors="skip")
    with pytest.raises(UsageError, match="'strict', 'replace' or 'skip'"):
        list(iter_text_pieces(str(path), errors="ignore"))


JSONL_LINES = [
    b'{"t": "plain"}',
    b'{"t": "crlf"}\r',
    b'  {"t": "padded"} ',
    b'{"t": "emoji \\ud83d\\ude00 pair"}',
    b'{"t": "lone \\ud800"}',
    b'{"t": "caf\xc3\xa9", "n": [1, {"t": 2}]}',
    b'{"t": "bad \xff utf-8"}',
    b'{"t": "two"} {"t": "values"}',
    b'{"t": "open',
    b'{"u": "no key"}',
    b'{"t": 5}',
    b"[1]",
    b'\xef\xbb\xbf{"t": "bom"}',
    b"",
    b"   ",
]


def _no_value(line: str, index: int) -> tuple[object, int]:
    raise StopIteration(index)


def _outcome(path: str, errors: str) -> tuple[list[tuple[str, bool, int]], int] | str:
    """What reading a JSONL file gives: (text, doc_start, skipped) of its documents and skips and
    the bytes of all pieces, or the error's message."""
    try:
        pieces = list(iter_text_pieces(path, text_key="t", errors=errors))
    except NgramToolError as exc:
        return str(exc)
    told = [(p.text, p.doc_start, p.skipped) for p in pieces if p.doc_start or p.skipped]
    return told, sum(p.nbytes for p in pieces)  # (pieces of bytes alone come where reads end)


@settings(max_examples=150, suppress_health_check=list(HealthCheck))
@given(
    lines=st.lists(st.sampled_from(JSONL_LINES), min_size=1, max_size=12),
    last_feed=st.booleans(),
    errors=st.sampled_from(["strict", "replace", "skip"]),
    read_bytes=st.sampled_from([1, 3, 16, 1 << 20]),
)
def test_jsonl_blocks_read_every_line_as_the_line_by_line_parser_does(
    monkeypatch, tmp_path_factory, lines, last_feed, errors, read_bytes
):
    """Lines read in blocks of any size, records parsed by the JSON scanner alone where they can
    be, give what parsing every line on its own gives: the same texts, skips, bytes and errors
    (with their line numbers and offsets)."""
    path = tmp_path_factory.mktemp("jsonl") / "d.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if last_feed else b""))
    monkeypatch.setattr(jsonl_input, "READ_BYTES", read_bytes)
    got = _outcome(str(path), errors)
    monkeypatch.setattr(jsonl_input, "READ_BYTES", 1 << 20)
    monkeypatch.setattr(jsonl_input, "json_scanner", lambda: _no_value)  # every line read on its own
    assert got == _outcome(str(path), errors)


def _one_piece_at_a_time(pieces, tok, eot: int | None, chunk_tokens: int) -> list[tuple]:
    """The chunks of encode_documents as a piece-by-piece model makes them: a document's opening
    where it starts (after the previous one's closing), a chunk taken once a piece's ids bring it
    to its limit: ``chunk_tokens``, the first ones' ramping up to it."""
    closing = [*tok.document_suffix.tolist(), *([] if eot is None else [eot])]
    chunks, tokens, starts, counts, open_ = [], [], [], [0, 0, 0], False
    limits = ramp(chunk_tokens)
    limit = next(limits)
    pieces = [
        one for piece in pieces for one in (piece.pieces() if isinstance(piece, Documents) else [piece])
    ]
    for piece in pieces:
        if piece.doc_start:
            tokens += closing if open_ else []
            starts.append(len(tokens))
            tokens += tok.document_prefix.tolist()
            open_ = True
        tokens += tok.encode(piece.text).tolist()
        counts = [counts[0] + piece.nbytes, counts[1] + piece.hard_cut, counts[2] + piece.skipped]
        if len(tokens) >= limit:
            chunks.append((tokens, starts, *counts))
            tokens, starts, counts, limit = [], [], [0, 0, 0], next(limits)
    tokens += closing if open_ else []
    if tokens or starts or counts[0] or counts[2]:
        chunks.append((tokens, starts, *counts))
    return chunks


TEXTS = st.sampled_from(["", "a", "bc d", "ef\n", "<|x|>"])


@settings(max_examples=100, suppress_health_check=list(HealthCheck))
@given(
    pieces=st.lists(
        st.builds(TextPiece, TEXTS, st.booleans(), st.integers(0, 9), st.booleans(), st.integers(0, 2))
        | st.builds(Documents, st.lists(TEXTS, min_size=1, max_size=5), st.integers(0, 9), st.integers(0, 2)),
        max_size=40,
    ),
    marks=st.sampled_from([((), ()), ((1,), ()), ((1, 2), (3,))]),
    eot=st.sampled_from([None, 4]),
    chunk_tokens=st.integers(1, 200),
    batch_chars=st.integers(1, 40),
)
def test_batches_become_the_chunks_that_one_piece_at_a_time_would(
    monkeypatch, pieces, marks, eot, chunk_tokens, batch_chars
):
    """Documents laid out a batch at a time (their marks placed with numpy; many records at once
    as Documents) give the chunks a piece-by-piece builder gives: the same ids, document starts,
    byte, cut and skip counts, and chunks that end after the same pieces."""
    monkeypatch.setattr(encode, "BATCH_CHARS", batch_chars)
    tok = ByteTokenizer()
    tok.document_prefix, tok.document_suffix = (np.asarray(mark, dtype=np.uint32) for mark in marks)
    chunks = encode.encode_documents(
        pieces,
        tok,
        add_eot=eot is not None,
        eot_token=None if eot is None else chr(eot),
        chunk_tokens=chunk_tokens,
    )
    got = [
        (c.tokens.tolist(), c.doc_starts.tolist(), c.nbytes, c.hard_cuts, c.skipped_records) for c in chunks
    ]
    assert got == [tuple(chunk) for chunk in _one_piece_at_a_time(pieces, tok, eot, chunk_tokens)]


def test_records_come_many_at_a_time_between_skipped_ones():
    """A run of good records is one Documents carrying the bytes and skips since the previous
    one; what comes after the last record is an empty piece."""
    blocks = [(["a", None, None, "b", "c"], 5), ([None], 2), (["d"], 0), ([], 1)]
    assert list(record_runs(blocks)) == [
        Documents(["a"], 5, 0),
        Documents(["b", "c"], 0, 2),
        Documents(["d"], 2, 1),
        TextPiece("", False, 1),
    ]
    assert [(p.text, p.nbytes, p.skipped) for p in Documents(["b", "c"], 4, 2).pieces()] == [
        ("b", 4, 2),
        ("c", 0, 0),
    ]
