"""llm.c ``.bin`` token files: a 256-int32 header (magic, version, token count), then the ids."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from ...util.errors import NgramToolError, UsageError
from .base import UINT16, UINT32, Opened, expect_size, map_tokens, read_head, whole

LLMC_HEADER = struct.Struct("<256i")
LLMC_DTYPES = {(20240520, 1): UINT16, (20240520, 2): UINT32, (20240801, 7): UINT32}
"""llm.c (magic, version) -> token dtype: GPT-2 uint16, and uint32 as llm.c writes LLaMA-3 tokens."""
LLMC_WRITE = {UINT16: (20240520, 1), UINT32: (20240801, 7)}
LLMC_MAX_TOKENS = (1 << 31) - 1


def detect_llmc(path: Path) -> bool:
    """Whether ``path`` is a ``.bin`` that starts with a known llm.c magic and version."""
    if path.suffix != ".bin":
        return False
    head = read_head(path, 8)
    return len(head) == 8 and struct.unpack("<2i", head) in LLMC_DTYPES


def open_llmc(files: tuple[Path, ...]) -> Opened:
    """Map the ids of an llm.c file, checking its header and its size against the header's count."""
    (path,) = files
    head = read_head(path, 12)
    if len(head) < 12:
        raise NgramToolError(
            f"{path}: {len(head)} bytes is too short for an llm.c header ({LLMC_HEADER.size})"
        )
    magic, version, count = struct.unpack("<3i", head)
    dtype = LLMC_DTYPES.get((magic, version))
    if dtype is None:
        raise NgramToolError(
            f"{path}: not an llm.c token file (magic {magic}, version {version}); llm.c .bin files start "
            "with 20240520 version 1 (uint16) or 20240801 version 7 (uint32) (check `token_format`)"
        )
    if count < 0:
        raise NgramToolError(
            f"{path}: the llm.c header gives a negative token count ({count}); it is corrupted"
        )
    expect_size(
        path, LLMC_HEADER.size + count * dtype.itemsize, f"an llm.c header of {count:,} {dtype.name} tokens"
    )
    tokens = map_tokens(path, dtype, LLMC_HEADER.size, count)
    details = {"header": {"magic": magic, "version": version}}
    return Opened(files, tokens, whole(count), dtype, details)


def llmc_header(dtype: np.dtype, count: int) -> bytes:
    """The llm.c header of ``count`` ids of ``dtype``."""
    return LLMC_HEADER.pack(*LLMC_WRITE[dtype], count, *[0] * 253)


def check_llmc_count(path: Path, count: int) -> None:
    """Refuse to write more tokens than the header's int32 count holds."""
    if count > LLMC_MAX_TOKENS:
        raise UsageError(
            f"{path}: an llm.c .bin holds at most {LLMC_MAX_TOKENS:,} tokens (its count is an "
            "int32); split the output into shards or use `save_format=megatron` or datatrove"
        )
