"""Token files of other trainers: readers against hand-built bytes, writers against hand-parsed bytes.

The byte layouts here are written with ``struct`` straight from the format descriptions in
docs/token-files.md, never with ngramtool's writer, so reader and writer cannot share a mistake.
"""

from __future__ import annotations

import itertools
import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import run_json
from hypothesis import given, settings
from hypothesis import strategies as st

import ngramtool.formats.tokenfiles as tokenfiles
from ngramtool.formats.artifacts import Kind, detect
from ngramtool.formats.tokenfiles import (
    FORMATS_WITH_DOCUMENTS,
    TOKEN_FORMATS,
    TokenFileWriter,
    detect_token_format,
    iter_token_file_chunks,
    open_token_file,
)
from ngramtool.tools.describe import describe_path
from ngramtool.util.errors import NgramToolError, UsageError

EXTENSIONS = {"npy": ".npy", "nanogpt": ".bin", "llmc": ".bin", "megatron": ".bin", "datatrove": ".ds"}

# ---------------------------------------------------------------------------------------------
# Hand-built layouts (struct only)


def pack(code: str, values: list[int]) -> bytes:
    """Little-endian ``values`` as struct ``code`` items."""
    return struct.pack(f"<{len(values)}{code}", *values)


def llmc_bytes(ids: list[int], magic: int = 20240520, version: int = 1, code: str = "H") -> bytes:
    return struct.pack("<256i", magic, version, len(ids), *[0] * 253) + pack(code, ids)


def megatron_bytes(sequences: list[list[int]], document_index: list[int], dtype_code: int, code: str):
    """(.bin, .idx) bytes of a Megatron MMIDIDX dataset."""
    sizes = [len(sequence) for sequence in sequences]
    pointers, position = [], 0
    for size in sizes:
        pointers.append(position)
        position += size * struct.calcsize(code)
    idx = (
        b"MMIDIDX\x00\x00"
        + struct.pack("<Q", 1)
        + struct.pack("<B", dtype_code)
        + struct.pack("<Q", len(sizes))
        + struct.pack("<Q", len(document_index))
        + pack("i", sizes)
        + pack("q", pointers)
        + pack("q", document_index)
    )
    return b"".join(pack(code, sequence) for sequence in sequences), idx


def datatrove_bytes(documents: list[list[int]], code: str = "H") -> tuple[bytes, bytes]:
    """(.ds, .ds.index) bytes: concatenated tokens and uint64 document ends."""
    ends = np.cumsum([len(document) for document in documents]).tolist()
    return b"".join(pack(code, document) for document in documents), pack("Q", ends)


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def write_megatron(prefix: Path, sequences, document_index, dtype_code=8, code="H") -> Path:
    bin_bytes, idx_bytes = megatron_bytes(sequences, document_index, dtype_code, code)
    write(prefix.with_suffix(".idx"), idx_bytes)
    return write(prefix.with_suffix(".bin"), bin_bytes)


def write_datatrove(path: Path, documents, code="H") -> Path:
    ds_bytes, index_bytes = datatrove_bytes(documents, code)
    write(Path(f"{path}.index"), index_bytes)
    return write(path, ds_bytes)


def collect(path: Path, fmt: str | None = None, chunk_tokens: int = 1 << 20) -> tuple[np.ndarray, list[int]]:
    """All tokens and absolute document starts from iter_token_file_chunks."""
    tokens, starts, position = [], [], 0
    for chunk in iter_token_file_chunks(path, fmt, chunk_tokens=chunk_tokens):
        assert chunk.tokens.dtype == np.uint32 and chunk.doc_starts.dtype == np.int64
        tokens.append(chunk.tokens)
        starts.extend((chunk.doc_starts + position).tolist())
        position += chunk.tokens.shape[0]
    return np.concatenate(tokens) if tokens else np.zeros(0, np.uint32), starts


# ---------------------------------------------------------------------------------------------
# Reading hand-built files


def test_read_nanogpt(tmp_path):
    path = write(tmp_path / "train.bin", pack("H", [50256, 1, 2, 65535]))
    file = open_token_file(path)
    assert file.format == "nanogpt" and file.dtype == np.uint16
    assert file.tokens.tolist() == [50256, 1, 2, 65535]
    assert isinstance(file.tokens, np.memmap)
    assert file.doc_offsets.tolist() == [0, 4]
    assert file.describe()["document_boundaries"] is False


@pytest.mark.parametrize(
    ("magic", "version", "code", "ids"),
    [
        (20240520, 1, "H", [50256, 11, 65535]),
        (20240801, 7, "I", [128000, 9906, 70000]),
        (20240520, 2, "I", [100276, 0]),
    ],
)
def test_read_llmc(tmp_path, magic, version, code, ids):
    path = write(tmp_path / "fineweb_val_000000.bin", llmc_bytes(ids, magic, version, code))
    assert detect_token_format(path) == "llmc"
    file = open_token_file(path)
    assert file.tokens.tolist() == ids
    assert file.dtype.itemsize == struct.calcsize(code)
    assert file.doc_offsets.tolist() == [0, len(ids)]
    assert file.describe()["header"] == {"magic": magic, "version": version}


def test_read_megatron(tmp_path):
    # Documents: sequences 0-1 (a split-sentence document), 2, an empty sequence, none at all, 4.
    sequences = [[1, 2, 3], [4], [5, 6], [], [7]]
    bin_path = write_megatron(tmp_path / "corpus_text_document", sequences, [0, 2, 3, 4, 4, 5])
    for name in (bin_path, bin_path.with_suffix(".idx"), tmp_path / "corpus_text_document"):
        assert detect_token_format(name) == "megatron"
        file = open_token_file(name)
        assert file.path == bin_path and file.dtype == np.uint16
        assert file.tokens.tolist() == [1, 2, 3, 4, 5, 6, 7]
        assert file.doc_offsets.tolist() == [0, 4, 6, 6, 6, 7]
    assert file.describe()["header"] == {"version": 1, "dtype_code": 8, "num_sequences": 5}


def test_a_megatron_prefix_is_a_token_file_to_every_command(tmp_path):
    """``X`` of ``X.bin`` + ``X.idx`` is what Megatron's --data-path takes: inspect reads it too."""
    prefix = tmp_path / "corpus_text_document"
    assert detect(prefix) is Kind.MISSING
    write_megatron(prefix, [[1, 2, 3], [4]], [0, 1, 2])
    assert detect(prefix) is Kind.TOKEN_FILE
    report = run_json("inspect", prefix)
    assert report == describe_path(prefix.with_suffix(".bin"))
    assert (report["format"], report["num_tokens"], report["num_documents"]) == ("megatron", 4, 2)
    assert detect(tmp_path / "corpus") is Kind.MISSING  # a prefix of nothing is still missing


def test_megatron_index_is_walked_in_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr("ngramtool.formats.tokenfiles.megatron.BLOCK", 2)
    sequences = [[1, 2, 3], [4], [5, 6], [], [7], [8, 9]]
    bin_path = write_megatron(tmp_path / "blocks", sequences, [0, 2, 3, 4, 4, 5, 6])
    assert open_token_file(bin_path).doc_offsets.tolist() == [0, 4, 6, 6, 6, 7, 9]
    idx = bytearray(bin_path.with_suffix(".idx").read_bytes())
    struct.pack_into("<q", idx, 34 + 6 * 4 + 5 * 8, 20)  # sequence 5, in the third block
    bin_path.with_suffix(".idx").write_bytes(bytes(idx))
    with pytest.raises(
        NgramToolError, match="sequence 5 points at byte 20 but the sizes before it end at byte 14"
    ):
        open_token_file(bin_path)


def test_read_megatron_int32_and_empty(tmp_path):
    bin_path = write_megatron(tmp_path / "big", [[100000, 5], [127999]], [0, 1, 2], dtype_code=4, code="i")
    file = open_token_file(bin_path)
    assert file.dtype == np.int32 and file.tokens.tolist() == [100000, 5, 127999]
    assert file.doc_offsets.tolist() == [0, 2, 3]
    empty = write_megatron(tmp_path / "empty", [], [0])
    assert open_token_file(empty).doc_offsets.tolist() == [0]
    assert collect(empty)[1] == []


@pytest.mark.parametrize(("code", "ids"), [("H", [[7, 8], [], [65535]]), ("I", [[7, 100000], [], [1]])])
def test_read_datatrove(tmp_path, code, ids):
    path = write_datatrove(tmp_path / "000_shuffled.ds", ids, code)
    assert detect_token_format(path) == detect_token_format(Path(f"{path}.index")) == "datatrove"
    file = open_token_file(path)
    assert file.dtype.itemsize == struct.calcsize(code)
    assert file.tokens.tolist() == [token for document in ids for token in document]
    assert file.doc_offsets.tolist() == [0, 2, 2, 3]


def test_read_npy(tmp_path):
    np.save(tmp_path / "ids.npy", np.array([3, 1, 4, 1, 5], dtype=np.int64))
    file = open_token_file(tmp_path / "ids.npy")
    assert file.format == "npy" and file.dtype == np.int64
    assert file.tokens.tolist() == [3, 1, 4, 1, 5] and file.doc_offsets.tolist() == [0, 5]
    np.save(tmp_path / "none.npy", np.zeros(0, dtype=np.uint16))
    read, starts = collect(tmp_path / "none.npy")
    assert read.size == 0 and starts == [0]


def test_chunks_carry_document_starts(tmp_path):
    bin_path = write_megatron(tmp_path / "d", [[1, 2], [3, 4, 5], [], [6], []], [0, 1, 2, 3, 4, 5])
    chunks = list(iter_token_file_chunks(bin_path, chunk_tokens=2))
    assert [chunk.tokens.tolist() for chunk in chunks] == [[1, 2], [3, 4], [5, 6]]
    # a start on a chunk boundary opens the next chunk; empty documents repeat a start; an
    # empty last document starts at the end of the last chunk
    assert [chunk.doc_starts.tolist() for chunk in chunks] == [[0], [0], [1, 1, 2]]
    assert [chunk.nbytes for chunk in chunks] == [4, 4, 4]


def test_negative_ids_name_their_position(tmp_path):
    bin_path = write_megatron(tmp_path / "neg", [[1, 2, 3, -5]], [0, 1], dtype_code=4, code="i")
    with pytest.raises(NgramToolError, match="position 3 is -5"):
        collect(bin_path, chunk_tokens=2)
    np.save(tmp_path / "neg.npy", np.array([0, -1], dtype=np.int16))
    with pytest.raises(NgramToolError, match="position 1 is -1"):
        collect(tmp_path / "neg.npy")


# ---------------------------------------------------------------------------------------------
# Detection and damaged files


def test_detection(tmp_path):
    assert detect_token_format(write(tmp_path / "plain.bin", pack("H", [1, 2, 3, 4]))) == "nanogpt"
    with pytest.raises(UsageError, match="`token_format`"):
        detect_token_format(write(tmp_path / "tokens.txt", b"1 2 3"))
    with pytest.raises(UsageError, match="not found"):
        detect_token_format(tmp_path / "missing.bin")
    with pytest.raises(UsageError, match=r"no lonely\.ds\.index"):
        detect_token_format(write(tmp_path / "lonely.ds", b"\0\0"))
    # an .idx that is not Megatron's leaves the .bin to the other rules
    write(tmp_path / "other.idx", b"not megatron")
    assert detect_token_format(write(tmp_path / "other.bin", llmc_bytes([1]))) == "llmc"
    with pytest.raises(UsageError, match="unknown token format"):
        open_token_file(tmp_path / "other.bin", "gguf")


def test_damaged_llmc(tmp_path):
    data = llmc_bytes([1, 2, 3])
    truncated = write(tmp_path / "t.bin", data[:-2])
    with pytest.raises(NgramToolError, match=r"needs 1,030 bytes but the file has 1,028: it is truncated"):
        open_token_file(truncated)
    bad_version = write(tmp_path / "v.bin", struct.pack("<2i", 20240520, 3) + data[8:])
    assert detect_token_format(bad_version) == "nanogpt"
    with pytest.raises(NgramToolError, match="magic 20240520, version 3"):
        open_token_file(bad_version, "llmc")
    with pytest.raises(NgramToolError, match="too short"):
        open_token_file(write(tmp_path / "s.bin", b"\0" * 6), "llmc")


def test_damaged_megatron(tmp_path):
    bin_bytes, idx_bytes = megatron_bytes([[1, 2], [3]], [0, 1, 2], 8, "H")
    prefix = tmp_path / "m"
    write(prefix.with_suffix(".bin"), bin_bytes[:-2])
    write(prefix.with_suffix(".idx"), idx_bytes)
    with pytest.raises(NgramToolError, match=r"needs 6 bytes but the file has 4: it is truncated"):
        open_token_file(prefix)
    write(prefix.with_suffix(".bin"), bin_bytes)
    write(prefix.with_suffix(".idx"), idx_bytes[:-8])
    with pytest.raises(NgramToolError, match="truncated"):
        open_token_file(prefix, "megatron")
    write(prefix.with_suffix(".idx"), idx_bytes[:20])
    with pytest.raises(NgramToolError, match="header"):
        open_token_file(prefix, "megatron")
    write(prefix.with_suffix(".idx"), b"XXIDIDX\0\0" + idx_bytes[9:])
    with pytest.raises(NgramToolError, match="not a Megatron index"):
        open_token_file(prefix, "megatron")
    float_idx = megatron_bytes([[1]], [0, 1], 6, "d")[1]
    write(prefix.with_suffix(".idx"), float_idx)
    with pytest.raises(NgramToolError, match="dtype code 6"):
        open_token_file(prefix)
    gap = bytearray(idx_bytes)
    struct.pack_into("<q", gap, 34 + 2 * 4 + 8, 6)  # pointer of sequence 1: 6 instead of 4
    write(prefix.with_suffix(".idx"), bytes(gap))
    with pytest.raises(NgramToolError, match="sequence 1 points at byte 6"):
        open_token_file(prefix)
    write(prefix.with_suffix(".idx"), megatron_bytes([[1, 2], [3]], [0, 2, 1], 8, "H")[1])
    with pytest.raises(NgramToolError, match="document index"):
        open_token_file(prefix)
    with pytest.raises(UsageError, match="not found"):
        open_token_file(tmp_path / "nothing", "megatron")


def test_damaged_datatrove(tmp_path):
    path = write_datatrove(tmp_path / "d.ds", [[1, 2], [3]])
    write(path, path.read_bytes()[:-1])
    with pytest.raises(NgramToolError, match=r"5 bytes for the 3 tokens .* neither 2 \(uint16\) nor 4"):
        open_token_file(path)
    write(path, b"\0" * 9)
    with pytest.raises(NgramToolError, match="neither 2"):
        open_token_file(path)
    write(Path(f"{path}.index"), pack("Q", [2, 1]))
    with pytest.raises(NgramToolError, match="decrease"):
        open_token_file(path)
    write(Path(f"{path}.index"), b"\0" * 12)
    with pytest.raises(NgramToolError, match="whole number of uint64"):
        open_token_file(path)


def test_damaged_nanogpt_and_npy(tmp_path):
    with pytest.raises(NgramToolError, match="whole number of uint16"):
        open_token_file(write(tmp_path / "odd.bin", b"\0\0\0"))
    np.save(tmp_path / "two_d.npy", np.zeros((2, 2), dtype=np.int32))
    with pytest.raises(NgramToolError, match="1-D integer"):
        open_token_file(tmp_path / "two_d.npy")
    np.save(tmp_path / "float.npy", np.zeros(3))
    with pytest.raises(NgramToolError, match="1-D integer"):
        open_token_file(tmp_path / "float.npy")
    np.save(tmp_path / "cut.npy", np.arange(10, dtype=np.uint16))
    write(tmp_path / "cut.npy", (tmp_path / "cut.npy").read_bytes()[:-4])
    with pytest.raises(NgramToolError, match="truncated"):
        open_token_file(tmp_path / "cut.npy")
    with pytest.raises(UsageError, match=r"has no \.npy header: .* `token_format=raw`"):
        open_token_file(write(tmp_path / "junk.npy", b"junk"))


# ---------------------------------------------------------------------------------------------
# Writers, parsed by hand

STREAM = (np.array([5, 6, 7, 8, 9], dtype=np.uint32), np.array([0, 2, 2], dtype=np.int64))


def write_stream(path: Path, fmt: str, vocab_size: int, tokens=STREAM[0], starts=STREAM[1]):
    with TokenFileWriter(path, fmt, vocab_size) as writer:
        writer.append(tokens[:3], starts)
        writer.append(tokens[3:], np.array([], dtype=np.int64))
        return writer.commit()


def test_write_nanogpt_bytes(tmp_path):
    write_stream(tmp_path / "o.bin", "nanogpt", 50257)
    assert (tmp_path / "o.bin").read_bytes() == pack("H", [5, 6, 7, 8, 9])


@pytest.mark.parametrize(
    ("vocab", "magic", "version", "code"), [(50257, 20240520, 1, "H"), (128256, 20240801, 7, "I")]
)
def test_write_llmc_bytes(tmp_path, vocab, magic, version, code):
    write_stream(tmp_path / "o.bin", "llmc", vocab)
    data = (tmp_path / "o.bin").read_bytes()
    header = struct.unpack_from("<256i", data)
    assert header[:3] == (magic, version, 5) and not any(header[3:])
    assert data[1024:] == pack(code, [5, 6, 7, 8, 9])


@pytest.mark.parametrize(("vocab", "dtype_code", "code"), [(50257, 8, "H"), (65500, 4, "i")])
def test_write_megatron_bytes(tmp_path, vocab, dtype_code, code):
    file = write_stream(tmp_path / "o", "megatron", vocab)
    assert file.files == (tmp_path / "o.bin", tmp_path / "o.idx")
    assert (tmp_path / "o.bin").read_bytes() == pack(code, [5, 6, 7, 8, 9])
    idx = (tmp_path / "o.idx").read_bytes()
    magic, version, dtype, sequences, entries = struct.unpack_from("<9sQBQQ", idx)
    assert (magic, version, dtype, sequences, entries) == (b"MMIDIDX\x00\x00", 1, dtype_code, 3, 4)
    itemsize = struct.calcsize(code)
    rest = struct.unpack_from("<3i3q4q", idx, 34)
    assert rest == (2, 0, 3, 0, 2 * itemsize, 2 * itemsize, 0, 1, 2, 3)
    assert len(idx) == 34 + 3 * 4 + 3 * 8 + 4 * 8


@pytest.mark.parametrize(("vocab", "code"), [(65536, "H"), (65537, "I")])
def test_write_datatrove_bytes(tmp_path, vocab, code):
    write_stream(tmp_path / "o.ds", "datatrove", vocab)
    assert (tmp_path / "o.ds").read_bytes() == pack(code, [5, 6, 7, 8, 9])
    assert (tmp_path / "o.ds.index").read_bytes() == pack("Q", [2, 2, 5])


def test_write_npy(tmp_path):
    file = write_stream(tmp_path / "o.npy", "npy", 200_000)
    loaded = np.load(tmp_path / "o.npy")
    assert loaded.dtype == np.uint32 and loaded.tolist() == [5, 6, 7, 8, 9]
    assert file.describe()["num_documents"] == 1


def test_tokens_before_the_first_start_form_a_document(tmp_path):
    with TokenFileWriter(tmp_path / "o.ds", "datatrove", 100) as writer:
        writer.append(np.array([1, 2, 3]), np.array([2]))
        writer.commit()
    assert open_token_file(tmp_path / "o.ds").doc_offsets.tolist() == [0, 2, 3]


# ---------------------------------------------------------------------------------------------
# Refusals and cleanup


@pytest.mark.parametrize(
    ("fmt", "vocab", "message"),
    [
        (
            "nanogpt",
            100277,
            r"token id 70,000 at position 4 does not fit the uint16 .*use `save_format=llmc`",
        ),
        ("llmc", 50257, r"token id 70,000 at position 4 .*vocabulary of 50,257"),
        ("datatrove", 50257, r"token id 70,000 at position 4 .*vocabulary of 50,257"),
        ("megatron", 65499, r"token id 70,000 at position 4 .*uint16"),
    ],
)
def test_refuses_ids_that_do_not_fit(tmp_path, fmt, vocab, message):
    path = tmp_path / f"out{EXTENSIONS[fmt]}"
    write(path, b"previous")
    with pytest.raises(UsageError, match=message), TokenFileWriter(path, fmt, vocab) as writer:
        writer.append(np.array([1, 2], dtype=np.uint32), np.array([0]))
        writer.append(np.array([3, 4, 70000], dtype=np.uint32), np.array([], dtype=np.int64))
    assert path.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_leaving_without_commit_removes_partial_files(tmp_path):
    with TokenFileWriter(tmp_path / "o", "megatron", 1000) as writer:
        writer.append(np.arange(10), np.array([0]))
        names = sorted(p.name for p in tmp_path.iterdir())  # .bin, .idx and the offsets scratch file
        partials = [name for name in names if name.endswith(".partial")]
        locks = [name for name in names if name.endswith(".lock")]  # each one's owner record
        assert len(partials) == 3 and len(locks) == 3 and len(names) == 6
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["megatron", "datatrove"])
def test_document_offsets_are_written_in_blocks_with_the_same_bytes(tmp_path, monkeypatch, fmt):
    """Offsets stream to a scratch file and the index is written a block at a time: any block size
    gives the same files, and nothing is left beside them."""
    rng = np.random.default_rng(4)
    chunks = [(rng.integers(0, 900, n), np.sort(rng.integers(0, n + 1, n // 3))) for n in (40, 0, 75, 3)]
    outputs = {}
    for block in (1 << 20, 7, 1):
        monkeypatch.setattr(getattr(tokenfiles, fmt), "OFFSET_BLOCK", block)
        folder = tmp_path / str(block)
        folder.mkdir()
        with TokenFileWriter(folder / "t", fmt, 1000) as writer:
            for ids, starts in chunks:
                writer.append(ids, starts)
            writer.commit()
        outputs[block] = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert outputs[7] == outputs[1] == outputs[1 << 20] and len(outputs[1]) == 2


def test_writer_rejects_bad_input(tmp_path, monkeypatch):
    with pytest.raises(UsageError, match="unknown token format"):
        TokenFileWriter(tmp_path / "o.bin", "bin", 10)
    with pytest.raises(NgramToolError, match="cannot write"):
        TokenFileWriter(tmp_path / "missing" / "o.bin", "nanogpt", 10)
    with TokenFileWriter(tmp_path / "o.bin", "llmc", 10) as writer:
        with pytest.raises(NgramToolError, match="position 1 is negative"):
            writer.append(np.array([1, -1]), np.array([0]))
        with pytest.raises(ValueError, match="doc_starts"):
            writer.append(np.array([1]), np.array([2]))
        monkeypatch.setattr("ngramtool.formats.tokenfiles.llmc.LLMC_MAX_TOKENS", 3)
        writer.append(np.array([1, 2]), np.array([0]))
        with pytest.raises(UsageError, match="at most 3 tokens"):
            writer.append(np.array([1, 2]), np.array([0]))
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# Round trips


@st.composite
def streams(draw, vocab_size: int):
    """(tokens, document offsets, append pieces as (tokens, local starts), read chunk size)."""
    documents = draw(st.lists(st.lists(st.integers(0, vocab_size - 1), max_size=12), min_size=0, max_size=8))
    tokens = np.array([token for document in documents for token in document], dtype=np.uint32)
    offsets = np.concatenate([[0], np.cumsum([len(document) for document in documents])]).astype(np.int64)
    starts = offsets[:-1]
    cuts = sorted(draw(st.lists(st.integers(0, tokens.shape[0]), max_size=4)))
    bounds = [0, *cuts, tokens.shape[0]]
    pieces = []
    for number, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        last = number == len(bounds) - 2
        mask = (starts >= lo) & ((starts <= hi) if last else (starts < hi))
        pieces.append((tokens[lo:hi], starts[mask] - lo))
    return tokens, offsets, pieces, draw(st.integers(1, 16))


def round_trip(fmt: str, vocab_size: int, stream) -> None:
    tokens, offsets, pieces, chunk_tokens = stream
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"t{EXTENSIONS[fmt]}"
        with TokenFileWriter(path, fmt, vocab_size) as writer:
            for piece, starts in pieces:
                writer.append(piece, starts)
            writer.commit()
        assert detect_token_format(path) == fmt
        file = open_token_file(path)
        read, starts = collect(path, chunk_tokens=chunk_tokens)
        assert read.tolist() == tokens.tolist() == file.tokens.tolist()
        expected = offsets if fmt in FORMATS_WITH_DOCUMENTS else np.array([0, tokens.shape[0]])
        assert file.doc_offsets.tolist() == expected.tolist()
        assert starts == expected[:-1].tolist()
        assert sorted(Path(folder).iterdir()) == sorted(file.files)


@pytest.mark.parametrize("fmt", TOKEN_FORMATS)
@settings(max_examples=40)
@given(stream=streams(65536))
def test_round_trip_small_vocabulary(fmt, stream):
    round_trip(fmt, 65536, stream)


@pytest.mark.parametrize("fmt", [fmt for fmt in TOKEN_FORMATS if fmt != "nanogpt"])
@settings(max_examples=40)
@given(stream=streams(200_000))
def test_round_trip_large_vocabulary(fmt, stream):
    round_trip(fmt, 200_000, stream)


def _mapped_file_kb() -> int:
    """This process's resident pages of mapped files (kB), from /proc."""
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("RssFile:")))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_reading_a_token_file_in_chunks_keeps_few_of_its_pages_mapped(tmp_path):
    """64 MB of uint32 ids read chunk by chunk: the pages each chunk mapped are given back, so the
    resident mapped pages stay near one chunk's, not the file's; and every id is read right."""
    ids = np.arange(16 << 20, dtype=np.uint32)
    path = tmp_path / "t.npy"
    np.save(path, ids)
    before, grown, total = _mapped_file_kb(), 0, 0
    for chunk in iter_token_file_chunks(path, chunk_tokens=1 << 20):
        assert chunk.tokens[0] == total and chunk.tokens[-1] == total + chunk.tokens.shape[0] - 1
        total += chunk.tokens.shape[0]
        grown = max(grown, _mapped_file_kb() - before)
    assert total == ids.shape[0]
    assert grown < 16 << 10, f"{grown} kB of the 64 MB file stayed mapped"
