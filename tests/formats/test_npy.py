"""Streaming .npy writers (formats/npy.py): the rows writer's aligned slabs, O_DIRECT or not, and
headers of any size read by map_npy."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
import xxhash

import ngramtool.formats.npy as npy
from ngramtool.formats.directio import ALIGN
from ngramtool.formats.npy import NpyStreamWriter, SlabNpyWriter, map_npy
from ngramtool.hashing.hasher import NgramHasher
from ngramtool.run.pipeline import hash_chunks
from ngramtool.spec.hashspec import HashSpec
from ngramtool.tokenizers.vocab import identity_vocab
from ngramtool.util.chunks import TokenChunk

INNER = (2, 3)  # 24 bytes per row: slabs need a whole number of 4096-byte blocks (512 rows)


@pytest.fixture(params=["direct", "page cache"])
def io_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of writing: O_DIRECT where the disk takes it, and the forced fallback."""
    if request.param == "page cache":
        monkeypatch.setenv("NGRAMTOOL_DIRECT_IO", "0")
    monkeypatch.setattr(npy, "SLAB_BYTES", 3 * ALIGN)  # small slabs: many boundaries
    return request.param


def _rows(count: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-(2**31), 2**31, (count, *INNER)).astype(np.int32)


def _data_bytes(path: Path) -> bytes:
    return path.read_bytes()[np.load(path, mmap_mode="r").offset :]


@pytest.mark.parametrize("algorithm", ["xxh3-128", "sha256"])
def test_slabs_write_rows_computed_in_place_and_copied_alike(
    tmp_path: Path, io_path: str, algorithm: str
) -> None:
    path = tmp_path / "rows.npy"
    writer = SlabNpyWriter(path, np.dtype(np.int32), INNER, checksum=algorithm, digest_behind=True)
    assert writer.slab_rows == 512
    assert writer.direct or io_path == "page cache" or not Path("/proc/mounts").exists()
    if io_path == "page cache":
        assert not writer.direct
    parts = []
    for i, count in enumerate([0, 100, 412, 512, 1, 900, 300, 2000, 7]):
        part = _rows(count, i)
        parts.append(part)
        position = writer.rows
        if i % 2 and (position % 512) + count <= 512:  # computed in the slab's own memory
            view = writer.out(position, count)
            view[:] = part
            writer.append(view)
        else:  # rows from elsewhere (and across slab boundaries) are copied in
            writer.append(part)
    writer.close()
    expected = np.concatenate(parts)
    assert np.array_equal(np.load(path), expected)
    assert np.array_equal(map_npy(path), expected)
    assert np.load(path, mmap_mode="r").offset == ALIGN  # the data starts block-aligned
    data = _data_bytes(path)
    assert data == expected.tobytes()
    reference = xxhash.xxh3_128 if algorithm == "xxh3-128" else hashlib.sha256
    assert writer.checksum == reference(data).hexdigest()


def test_an_empty_slab_file_is_a_valid_npy(tmp_path: Path, io_path: str) -> None:
    writer = SlabNpyWriter(tmp_path / "rows.npy", np.dtype(np.int32), INNER)
    writer.close()
    assert np.load(tmp_path / "rows.npy").shape == (0, *INNER)
    assert writer.checksum == xxhash.xxh3_128(b"").hexdigest()


def test_slab_views_do_not_cross_a_slab(tmp_path: Path, io_path: str) -> None:
    writer = SlabNpyWriter(tmp_path / "rows.npy", np.dtype(np.int32), INNER)
    assert writer.out(500, 12).shape == (12, *INNER)
    with pytest.raises(ValueError, match="cross a slab boundary"):
        writer.out(500, 13)
    writer.abort()


@pytest.mark.parametrize("digest_behind", [False, True])
def test_slabs_are_reused_once_written(
    tmp_path: Path, io_path: str, digest_behind: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many slabs are written, the memory allocated stays what is in flight at once: the
    slab being filled, those waiting for the disk thread, the one it writes, the one digested."""
    made, aligned = [], npy.aligned_bytes
    monkeypatch.setattr(npy, "aligned_bytes", lambda nbytes: made.append(nbytes) or aligned(nbytes))
    path = tmp_path / "rows.npy"
    writer = SlabNpyWriter(path, np.dtype(np.int32), INNER, digest_behind=digest_behind)
    rows = _rows(40 * 512, 0)
    for lo in range(0, rows.shape[0], 512):
        slab = writer.out(lo, 512)
        slab[:] = rows[lo : lo + 512]
        writer.append(slab)
    writer.close()
    assert made.count(3 * ALIGN) <= npy.DISK_QUEUE + 3 + digest_behind * 4
    assert np.array_equal(np.load(path), rows)


def test_map_npy_reads_every_header_size_written_here(tmp_path: Path) -> None:
    array = _rows(10, 3)
    small = NpyStreamWriter(tmp_path / "small.npy", np.dtype(np.int32), INNER)
    small.append(array)
    small.close()
    large = SlabNpyWriter(tmp_path / "large.npy", np.dtype(np.int32), INNER)
    large.append(array)
    large.close()
    for name, offset in (("small.npy", 128), ("large.npy", ALIGN)):
        assert np.load(tmp_path / name, mmap_mode="r").offset == offset
        assert np.array_equal(map_npy(tmp_path / name), array)


def test_the_pipeline_hashes_into_the_writers_slabs(tmp_path: Path, io_path: str) -> None:
    """Pieces are cut at the slab boundaries and hashed in place: the rows equal a plain run."""
    spec = HashSpec(heads=2, table_sizes=(1009, 1013), layer_ids=(1,), vocab_size=500, pad_id=0)
    rng = np.random.default_rng(7)
    chunks = [
        TokenChunk(
            rng.integers(0, 500, n).astype(np.uint32), np.asarray([0] if n == 700 else [], dtype=np.int64)
        )
        for n in (700, 37, 1500, 0, 513)
    ]
    vocab = identity_vocab(500)
    writer = SlabNpyWriter(tmp_path / "rows.npy", spec.row_dtype, (spec.num_layers, spec.num_columns))

    class Destination:
        rows_block = writer.slab_rows

        def rows_out(self, position: int, count: int) -> np.ndarray:
            return writer.out(position, count)

    copies = []
    pieces = []
    hasher = NgramHasher(spec, backend="numpy")
    for piece, _, rows in hash_chunks(chunks, vocab, hasher, threads=3, destination=Destination()):
        start = writer.rows
        assert start // writer.slab_rows == (start + len(rows) - 1) // writer.slab_rows or len(rows) == 0
        copies.append(
            rows.__array_interface__["data"][0] != writer.out(start, len(rows)).__array_interface__["data"][0]
        )
        writer.append(rows)
        pieces.append(piece)
    writer.close()
    assert not any(copies)
    ids = np.concatenate([c.tokens for c in chunks]).astype(np.int64)
    expected = NgramHasher(spec, backend="numpy")(ids)
    assert np.array_equal(np.load(tmp_path / "rows.npy"), expected)
    assert sum(p.tokens.shape[0] for p in pieces) == ids.shape[0]
