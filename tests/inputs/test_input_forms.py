"""The same documents in every form give the same tokens and document offsets, byte for byte:
JSONL plain and compressed, parquet, Arrow, ``datasets.save_to_disk``, strings; text plain and
compressed; from files and from stdin."""

from __future__ import annotations

import io
import os
import pty
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, NGRAMTOOL, run
from corpus_forms import COMPRESSORS, jsonl_bytes, write_record_forms, write_text_forms
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ngramtool
import ngramtool.inputs.compressed as compressed
import ngramtool.inputs.jsonl as jsonl_input
import ngramtool.inputs.text as text_input
from ngramtool import CorpusReader, NgramHashMapping, OutputOptions
from ngramtool.inputs.encoding import iter_text_chunks, iter_token_chunks
from ngramtool.tokenizers import load_tokenizer
from ngramtool.tools.tokenization import Tokenized

TOKENIZER = load_tokenizer("cl100k_base")
characters = st.characters(blacklist_categories=("Cs",))
# A text file holds no zero byte: one makes the file binary data, refused in every command
# (tests/test_one_reading.py); in JSONL it is an escape like any other.
file_characters = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
documents = st.lists(st.text(characters, max_size=60), min_size=1, max_size=25)
EXAMPLES = settings(max_examples=20, suppress_health_check=list(HealthCheck))


def ids_and_offsets(chunks) -> tuple[list[int], list[int]]:
    """All tokens, and every document start counted from the stream start."""
    tokens, starts, position = [], [], 0
    for chunk in chunks:
        tokens += chunk.tokens.tolist()
        starts += (chunk.doc_starts + position).tolist()
        position += chunk.tokens.shape[0]
    return tokens, starts


def read(source: Path | str, **reading) -> tuple[list[int], list[int]]:
    return ids_and_offsets(iter_token_chunks([str(source)], TOKENIZER, chunk_tokens=7, **reading))


@pytest.fixture()
def small_blocks(monkeypatch):
    """Decompressed and plain text read a few bytes at a time: blocks end inside characters, lines."""
    monkeypatch.setattr(compressed, "BLOCK_BYTES", 5)
    monkeypatch.setattr(jsonl_input, "READ_BYTES", 11)
    monkeypatch.setattr(text_input, "READ_BLOCK_BYTES", 3)
    monkeypatch.setattr(text_input, "TARGET_PIECE_CHARS", 8)


@EXAMPLES
@given(docs=documents)
def test_every_record_form_reads_like_plain_jsonl_and_like_strings(small_blocks, tmp_path_factory, docs):
    paths = write_record_forms(tmp_path_factory.mktemp("forms"), docs)
    expected = read(paths["jsonl"])
    assert expected == ids_and_offsets(iter_text_chunks(docs, TOKENIZER, chunk_tokens=7))
    assert len(expected[1]) == len(docs)
    for form, path in paths.items():
        assert read(path) == expected, form


@EXAMPLES
@given(text=st.text(file_characters, max_size=400))
def test_every_compressed_text_reads_like_plain_text(small_blocks, tmp_path_factory, text):
    paths = write_text_forms(tmp_path_factory.mktemp("text"), text)
    expected = read(paths["txt"])
    assert expected[0] == TOKENIZER.encode(text).tolist()  # a byte-order mark is text, as to the tokenizer
    for form, path in paths.items():
        assert read(path) == expected, form
        assert read(path, doc_sep="\n") == read(paths["txt"], doc_sep="\n"), form


def _index_files(index) -> dict[str, bytes]:
    return {
        name: (Path(index.path) / name).read_bytes() for name in ("tokens.npy", "rows.npy", "doc_offsets.npy")
    }


@pytest.fixture(scope="module")
def corpus_docs() -> list[str]:
    """The bundled corpus as documents (its paragraphs), with an empty one and a long one."""
    paragraphs = CORPUS.read_text(encoding="utf-8").split("\n\n")
    return [*paragraphs[:40], "", "\n".join(paragraphs[40:80])]


def test_hash_writes_the_same_index_bytes_for_every_form(tmp_path, corpus_docs):
    paths = write_record_forms(tmp_path / "forms", corpus_docs)
    options = {"boundary": "reset", "mapping": NgramHashMapping.build("cl100k_base", heads=2),
               "outputs": OutputOptions(force=True)}  # fmt: skip
    expected = _index_files(ngramtool.hash_files(paths["jsonl"], tmp_path / "plain.ngidx", **options))
    from_strings = ngramtool.hash_texts(corpus_docs, tmp_path / "strings.ngidx", **options)
    assert _index_files(from_strings) == expected
    for form, path in paths.items():
        index = ngramtool.hash_files(path, tmp_path / f"{form}.ngidx", **options)
        assert _index_files(index) == expected, form
        assert index.manifest["tokenization"]["json_key"] == "text"
    text = CORPUS.read_text(encoding="utf-8")[:30000]
    text_paths = write_text_forms(tmp_path / "text", text)
    plain = _index_files(ngramtool.hash_files(text_paths["txt"], tmp_path / "txt.ngidx", **options))
    for form, path in text_paths.items():
        assert _index_files(ngramtool.hash_files(path, tmp_path / f"{form}.ngidx", **options)) == plain, form


def test_a_column_named_by_text_key(tmp_path):
    paths = write_record_forms(tmp_path, ["alpha beta", "gamma"], key="content")
    expected = read(paths["jsonl"], text_key="content")
    for form, path in paths.items():
        assert read(path, text_key="content") == expected, form
    older_name = Tokenized(CorpusReader([paths["jsonl"]], text_key="content"))
    assert ids_and_offsets(chunk for chunk, _ in older_name.chunks())[0] == expected[0]


def test_stdin_takes_every_text_form_and_is_the_default(tmp_path, corpus_docs):
    data = jsonl_bytes(corpus_docs)
    (tmp_path / "d.jsonl").write_bytes(data)
    expected = run("tokenize", "d.jsonl", cwd=tmp_path)
    assert expected.returncode == 0, expected.stderr.decode()
    ways = (["--format", "jsonl"], ["--text-key", "text"], ["-", "--json-key", "text"])
    for i, (suffix, compress) in enumerate([("", bytes), *COMPRESSORS.items()]):
        args = ways[i % len(ways)]
        got = run("tokenize", *args, stdin=compress(data), cwd=tmp_path)
        assert got.returncode == 0, (suffix, args, got.stderr.decode())
        assert got.stdout == expected.stdout, (suffix, args)
    text = CORPUS.read_bytes()[:20000]
    plain = run("hash", "-", "-o", "a.ngidx", "-q", stdin=text, cwd=tmp_path)
    packed = run("hash", "-o", "b.ngidx", "-q", stdin=COMPRESSORS[".zst"](text), cwd=tmp_path)
    assert plain.returncode == packed.returncode == 0, packed.stderr.decode()
    for name in ("tokens.npy", "rows.npy", "doc_offsets.npy"):
        assert (tmp_path / "a.ngidx" / name).read_bytes() == (tmp_path / "b.ngidx" / name).read_bytes()
    counted = run("collisions", "--table", "4099", "--heads", "1", "--json", stdin=COMPRESSORS[".gz"](text))
    assert counted.returncode == 0, counted.stderr.decode()
    assert b'"sources": [\n      "-"\n    ]' in counted.stdout


def test_without_input_on_a_terminal_the_usage_error_says_what_to_give(tmp_path):
    for command in (["hash", "-o", "x.ngidx"], ["tokenize"], ["collisions"]):
        primary, secondary = pty.openpty()
        try:
            result = subprocess.run(
                [*NGRAMTOOL, *command],
                stdin=secondary,
                capture_output=True,
                cwd=tmp_path,
                timeout=120,
            )
        finally:
            for fd in (primary, secondary):
                os.close(fd)
        err = result.stderr.decode()
        assert result.returncode == 2, err
        assert (
            "give INPUT files" in err
            and "- for stdin, or pipe the text in: cat corpus.txt | ngramtool" in err
        )
    assert not (tmp_path / "x.ngidx").exists()


def test_the_streaming_example_of_the_docs(tmp_path, corpus_docs):
    """docs/inputs.md: hash_texts over datasets.load_dataset(..., streaming=True), built offline."""
    import datasets

    (tmp_path / "d.jsonl.zst").write_bytes(COMPRESSORS[".zst"](jsonl_bytes(corpus_docs)))
    stream = datasets.load_dataset(
        "json", data_files=str(tmp_path / "d.jsonl.zst"), split="train", streaming=True
    )
    index = ngramtool.hash_texts((row["text"] for row in stream), tmp_path / "s.ngidx", boundary="reset")
    direct = ngramtool.hash_files(tmp_path / "d.jsonl.zst", tmp_path / "f.ngidx", boundary="reset")
    assert np.array_equal(index.tokens, direct.tokens)
    assert np.array_equal(index.doc_offsets, direct.doc_offsets)


def test_parquet_is_read_a_page_at_a_time_not_a_row_group_at_a_time(tmp_path):
    """One 12 MB row group: the reader's Arrow memory stays a few MB (the buffer, a page, a batch)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ngramtool.inputs import iter_text_pieces

    rng = np.random.default_rng(0)
    texts = [rng.bytes(500).hex() for _ in range(12_500)]  # incompressible, no repeated values
    path = tmp_path / "one_group.parquet"
    pq.write_table(
        pa.table({"text": texts}), path, row_group_size=len(texts), use_dictionary=False, compression="none"
    )
    assert path.stat().st_size > 12_000_000
    held, rows = [], 0
    for piece in iter_text_pieces(str(path)):
        held.append(pa.total_allocated_bytes())
        rows += piece.doc_start
    assert rows == len(texts)
    assert max(held) < 6_000_000, max(held)  # a whole row group: over 12 MB


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
def test_decompressed_input_comes_in_whole_blocks(suffix, monkeypatch):
    """The decompressor gives a few KB at a time; the reader gets blocks of BLOCK_BYTES (the
    last shorter), each byte once and in order."""
    monkeypatch.setattr(compressed, "BLOCK_BYTES", 1 << 16)
    rng = random.Random(0)
    data = "".join(rng.choice("ab \né") for _ in range(300_000)).encode()
    stream, consumed = compressed.open_decompressed(
        io.BufferedReader(io.BytesIO(COMPRESSORS[suffix](data))), "d"
    )
    blocks = list(iter(lambda: stream.read1(1 << 30), b""))
    assert b"".join(blocks) == data
    assert [len(block) for block in blocks[:-1]] == [1 << 16] * (len(blocks) - 1)
    assert 0 < len(blocks[-1]) <= 1 << 16
    assert consumed() == len(COMPRESSORS[suffix](data))
    stream.close()


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
def test_decompressed_blocks_stay_bounded_whatever_the_ratio(suffix):
    """8 MB of one byte compresses over 1000 times: each block handed on is still at most a block."""
    data = b"a" * (8 << 20)
    kind = compressed.COMPRESSION_SUFFIXES[suffix]
    read = compressed._decompressor(kind, compressed._Counted(io.BytesIO(COMPRESSORS[suffix](data))))
    blocks = list(iter(lambda: read(compressed.BLOCK_BYTES), b""))
    assert b"".join(blocks) == data
    assert max(len(block) for block in blocks) <= compressed.BLOCK_BYTES
