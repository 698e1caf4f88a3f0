"""Megatron token files: an ``X.bin`` of ids and its ``X.idx`` (MMIDIDX: sequence sizes, byte
pointers and the document index); one sequence per document when written.

Megatron-Core's ``IndexedDataset`` opens the pairs written here, and the pairs its
``IndexedDatasetBuilder`` writes (documents of several sequences included) are read here
(tests/integrations/test_megatron.py)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ...util.errors import NgramToolError
from .base import (
    BLOCK,
    INT32,
    INT64,
    OFFSET_BLOCK,
    UINT16,
    Opened,
    expect_size,
    map_tokens,
    read_head,
    write_array,
)

MEGATRON_UINT16_VOCAB = 65500
"""Megatron's ``optimal_dtype``: uint16 below this vocabulary size, int32 from it on."""
MEGATRON_MAGIC = b"MMIDIDX\x00\x00"
MEGATRON_VERSION = 1
MEGATRON_HEAD = struct.Struct("<9sQBQQ")
MEGATRON_DTYPES = {
    1: np.dtype("u1"),
    2: np.dtype("i1"),
    3: np.dtype("<i2"),
    4: INT32,
    5: INT64,
    6: np.dtype("<f8"),
    7: np.dtype("<f4"),
    8: UINT16,
}
MEGATRON_CODES = {dtype: code for code, dtype in MEGATRON_DTYPES.items()}


def megatron_files(path: Path) -> tuple[Path, ...]:
    """``X.bin, X.idx`` of the Megatron pair named by ``X.bin``, ``X.idx`` or the prefix ``X``."""
    name = str(path)
    prefix = name[: -len(".bin")] if name.endswith((".bin", ".idx")) else name
    return Path(prefix + ".bin"), Path(prefix + ".idx")


def detect_megatron(path: Path) -> bool:
    """Whether the ``.idx`` of the pair ``path`` names starts with ``MMIDIDX``."""
    return read_head(megatron_files(path)[1], len(MEGATRON_MAGIC)) == MEGATRON_MAGIC


def open_megatron(files: tuple[Path, ...]) -> Opened:
    """Map the ids of the ``.bin`` after checking the ``.idx``: its header, that its sequences are
    contiguous, and that its document index rises from 0 to the sequence count."""
    bin_path, idx_path = files
    head = read_head(idx_path, MEGATRON_HEAD.size)
    if not head.startswith(MEGATRON_MAGIC):
        raise NgramToolError(f"{idx_path}: not a Megatron index (it does not start with {MEGATRON_MAGIC!r})")
    if len(head) < MEGATRON_HEAD.size:
        raise NgramToolError(f"{idx_path}: truncated inside its {MEGATRON_HEAD.size}-byte header")
    _, version, code, sequences, entries = MEGATRON_HEAD.unpack(head)
    if version != MEGATRON_VERSION:
        raise NgramToolError(f"{idx_path}: Megatron index version {version}; ngramtool reads version 1")
    dtype = MEGATRON_DTYPES.get(code)
    if dtype is None or dtype.kind == "f":
        raise NgramToolError(
            f"{idx_path}: dtype code {code} ({dtype or 'unknown'}) does not hold token ids; "
            "expected an integer code (1-5 or 8)"
        )
    sizes_at = MEGATRON_HEAD.size
    pointers_at = sizes_at + sequences * INT32.itemsize
    documents_at = pointers_at + sequences * INT64.itemsize
    expect_size(
        idx_path, documents_at + entries * INT64.itemsize, f"a Megatron index of {sequences:,} sequences"
    )
    sizes = map_tokens(idx_path, INT32, sizes_at, sequences)
    pointers = map_tokens(idx_path, INT64, pointers_at, sequences)
    document_index = np.asarray(map_tokens(idx_path, INT64, documents_at, entries))
    if (
        entries == 0
        or document_index[0] != 0
        or document_index[-1] != sequences
        or np.any(np.diff(document_index) < 0)
    ):
        raise NgramToolError(
            f"{idx_path}: the document index must rise from 0 to the sequence count {sequences:,}; "
            "the index is corrupted"
        )
    doc_offsets, total = _megatron_offsets(idx_path, sizes, pointers, document_index, dtype.itemsize)
    expect_size(
        bin_path, total * dtype.itemsize, f"the index of {idx_path.name} ({total:,} {dtype.name} tokens)"
    )
    details = {"header": {"version": version, "dtype_code": code, "num_sequences": sequences}}
    return Opened(files, map_tokens(bin_path, dtype, 0, total), doc_offsets, dtype, details)


def _megatron_offsets(
    idx_path: Path, sizes: np.ndarray, pointers: np.ndarray, document_index: np.ndarray, itemsize: int
) -> tuple[np.ndarray, int]:
    """Document offsets in tokens and the token count, checking that the sequences are contiguous.

    Walks the sizes and pointers in blocks so that memory stays bounded by the document count.
    """
    doc_offsets = np.empty(document_index.shape[0], dtype=np.int64)
    total = 0
    for lo in range(0, sizes.shape[0], BLOCK):
        block = np.asarray(sizes[lo : lo + BLOCK], dtype=np.int64)
        if block.min() < 0:
            raise NgramToolError(f"{idx_path}: sequence {lo + int(np.argmin(block)):,} has a negative size")
        starts = total + np.cumsum(block) - block
        mismatch = np.flatnonzero(np.asarray(pointers[lo : lo + BLOCK]) != starts * itemsize)
        if mismatch.size:
            sequence = lo + int(mismatch[0])
            raise NgramToolError(
                f"{idx_path}: sequence {sequence:,} points at byte {int(pointers[sequence]):,} but the sizes "
                f"before it end at byte {int(starts[mismatch[0]]) * itemsize:,}; ngramtool reads only "
                "contiguous .bin files (as Megatron writes them)"
            )
        first, last = np.searchsorted(document_index, [lo, lo + block.shape[0]], side="left")
        doc_offsets[first:last] = starts[document_index[first:last] - lo]
        total += int(block.sum())
    doc_offsets[np.searchsorted(document_index, sizes.shape[0], side="left") :] = total
    return doc_offsets, total


def megatron_dtype(vocab_size: int) -> np.dtype:
    """The token dtype written for ``vocab_size`` ids: Megatron's rule, uint16 below 65,500, else int32."""
    return UINT16 if vocab_size < MEGATRON_UINT16_VOCAB else INT32


def write_megatron_index(handle: BinaryIO, doc_offsets: np.ndarray, dtype: np.dtype) -> None:
    """Write a Megatron .idx with one sequence per document, ``OFFSET_BLOCK`` documents at a time
    (``doc_offsets`` may be a memory map of any length)."""
    count = doc_offsets.shape[0] - 1
    handle.write(
        MEGATRON_HEAD.pack(MEGATRON_MAGIC, MEGATRON_VERSION, MEGATRON_CODES[dtype], count, count + 1)
    )
    for lo in range(0, count, OFFSET_BLOCK):
        sizes = np.diff(doc_offsets[lo : lo + OFFSET_BLOCK + 1])
        if sizes.max() > np.iinfo(INT32).max:
            raise NgramToolError(
                f"a document of {int(sizes.max()):,} tokens exceeds Megatron's int32 sequence size; "
                "split it into documents (or use `save_format=datatrove`)"
            )
        write_array(handle, sizes, INT32)
    for lo in range(0, count, OFFSET_BLOCK):
        write_array(handle, doc_offsets[lo : min(lo + OFFSET_BLOCK, count)] * dtype.itemsize, INT64)
    for lo in range(0, count + 1, OFFSET_BLOCK):
        write_array(handle, np.arange(lo, min(lo + OFFSET_BLOCK, count + 1)), INT64)
