"""What every token format's module shares: the token dtypes, block sizes, :class:`Opened` (what an
opener reads from a token file) and the helpers that map, size-check and write token files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ...util.errors import NgramToolError

UINT16 = np.dtype("<u2")
UINT32 = np.dtype("<u4")
INT32 = np.dtype("<i4")
INT64 = np.dtype("<i8")
UINT16_VOCAB = 1 << 16
"""Vocabularies up to this size are written with uint16 tokens (llmc, datatrove, npy)."""

OFFSET_BLOCK = 1 << 20  # document offsets handled at a time when an index file is written
BLOCK = 1 << 20
"""Entries processed at a time when validating a Megatron index or scanning ids (bounded memory)."""


@dataclass
class Opened:
    """What a format's opener read from the files of a token file (the fields of
    :class:`~ngramtool.formats.tokenfiles.TokenFile` but its path and format).

    Attributes:
        files: every file of the token file, tokens first.
        tokens: [T] token ids in the file's dtype, a memory map (empty files give an empty array).
        doc_offsets: int64 [D+1]; document ``d`` spans ``tokens[doc_offsets[d]:doc_offsets[d+1]]``.
        dtype: the stored token dtype (little-endian).
        details: what the format's header or index says beyond the above (for ``describe``).
    """

    files: tuple[Path, ...]
    tokens: np.ndarray
    doc_offsets: np.ndarray
    dtype: np.dtype
    details: dict[str, Any] = field(default_factory=dict)


def single_file(path: Path) -> tuple[Path, ...]:
    """The files of a token file that is one file: ``path`` itself."""
    return (path,)


def no_header(dtype: np.dtype, count: int) -> bytes:
    """The header of a headerless token file: none."""
    return b""


def vocab_dtype(vocab_size: int) -> np.dtype:
    """The token dtype written for ``vocab_size`` ids: uint16 up to 65,536 ids, else uint32."""
    return UINT16 if vocab_size <= UINT16_VOCAB else UINT32


def read_head(path: Path, size: int) -> bytes:
    """Up to ``size`` bytes from the start of ``path`` (empty when it is not a readable file)."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def map_tokens(path: Path, dtype: np.dtype, offset: int, count: int) -> np.ndarray:
    """A read-only memory map of ``count`` items at byte ``offset`` (numpy cannot map zero bytes)."""
    if count == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=(count,))


def whole(count: int) -> np.ndarray:
    """Document offsets of a file that is one document."""
    return np.array([0, count], dtype=np.int64)


def expect_size(path: Path, expected: int, layout: str) -> None:
    """Refuse a file that is not ``expected`` bytes long, as ``layout`` (what the header or index
    describes) says it must be."""
    actual = path.stat().st_size
    if actual != expected:
        state = "truncated" if actual < expected else "longer than that (trailing bytes)"
        raise NgramToolError(
            f"{path}: {layout} needs {expected:,} bytes but the file has {actual:,}: it is {state}; "
            "rewrite it (or check `token_format`)"
        )


def whole_tokens(path: Path, dtype: np.dtype, why: str) -> int:
    """The number of ``dtype`` tokens in the headerless file ``path``; an error ending in ``why``
    when its size is not a whole number of them."""
    size = path.stat().st_size
    if size % dtype.itemsize:
        raise NgramToolError(f"{path}: {size:,} bytes is not a whole number of {dtype.name} tokens{why}")
    return size // dtype.itemsize


def write_array(handle: BinaryIO, values: np.ndarray, dtype: np.dtype) -> None:
    """Write ``values`` converted to ``dtype`` (little-endian) without an extra copy when they match."""
    handle.write(memoryview(np.ascontiguousarray(values, dtype=dtype).view(np.uint8)))
