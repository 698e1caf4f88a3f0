"""Block checksums of a tokens-only index's tokens: written with them, checked as they are read.

A tokens-only index (``--rows lazy``) computes its rows from ``tokens.npy`` whenever they are
read, so a damaged token would silently give wrong rows. Its writer records the CRC-32 of every
block of :data:`BLOCK_TOKENS` tokens (``token_crc32.npy``, uint32, one per block; the last block
may be shorter), and every read of rows checks the blocks it touches first, each block once per
process: a read of a 2,048-token window checks at most 32 KiB more than it reads, and nothing
once its blocks were checked. At 4 bytes per 4,096 tokens the checksums add 0.001 bytes per
token to the 4 of the tokens. See docs/formats.md.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ..util.errors import NgramToolError
from .checksum import DEFAULT_CHECKSUM, checksum_record
from .npy import NpyStreamWriter

BLOCK_TOKENS = 4096
FILE = "token_crc32.npy"
CRC_DTYPE = np.dtype("<u4")
TOKEN_DTYPE = np.dtype("<u4")


def block_count(num_tokens: int, block_tokens: int = BLOCK_TOKENS) -> int:
    """How many blocks ``num_tokens`` tokens make (the last one may be shorter)."""
    return -(-num_tokens // block_tokens)


class BlockChecksumWriter:
    """Stream the CRC-32 of each block of the tokens appended into ``token_crc32.npy`` in
    ``directory`` (blocks of ``block_tokens``, default :data:`BLOCK_TOKENS`); :meth:`close` adds
    the last, shorter block. The file's own data is checksummed with ``checksum``; ``out`` is its
    writer (an index aborts it with its other files)."""

    def __init__(
        self, directory: Path, block_tokens: int | None = None, *, checksum: str = DEFAULT_CHECKSUM
    ) -> None:
        self.block_tokens = block_tokens or BLOCK_TOKENS
        self.out = NpyStreamWriter(Path(directory) / FILE, CRC_DTYPE, checksum=checksum)
        self._crc = 0  # of the tokens of the unfinished block
        self._filled = 0  # tokens in the unfinished block

    def append(self, tokens: np.ndarray) -> None:
        """Add tokens (any integer array; they are checksummed as the index stores them, uint32 LE)."""
        data = np.ascontiguousarray(tokens, dtype=TOKEN_DTYPE)
        finished = []
        at = 0
        while at < data.shape[0]:
            take = min(self.block_tokens - self._filled, data.shape[0] - at)
            self._crc = zlib.crc32(data[at : at + take], self._crc)
            self._filled += take
            at += take
            if self._filled == self.block_tokens:
                finished.append(self._crc)
                self._crc = self._filled = 0
        if finished:
            self.out.append(np.asarray(finished, dtype=CRC_DTYPE))

    def close(self) -> dict[str, Any]:
        """Finish the file; returns its manifest record (an ``arrays`` entry with ``block_tokens``)."""
        if self._filled:
            self.out.append(np.asarray([self._crc], dtype=CRC_DTYPE))
        self.out.close()
        return {
            "file": FILE,
            "dtype": CRC_DTYPE.str,
            "shape": list(self.out.shape),
            **checksum_record("data", self.out.algorithm, self.out.checksum),
            "block_tokens": self.block_tokens,
        }


class TokenBlocks:
    """Checks reads of ``tokens`` against their block checksums, each block once per process.

    Args:
        tokens: the index's uint32 tokens (a memory map).
        checksums: uint32, the CRC-32 of each block.
        block_tokens: tokens per block.
        path: the tokens' file, for messages.
    """

    def __init__(self, tokens: np.ndarray, checksums: np.ndarray, block_tokens: int, path: Path) -> None:
        self.tokens = tokens
        self.checksums = checksums
        self.block_tokens = block_tokens
        self.path = path
        self.checked = np.zeros(checksums.shape[0], dtype=bool)

    def check(self, lo: int, hi: int) -> None:
        """Check the blocks that hold positions [lo, hi) (those not checked yet); raise
        NgramToolError naming the first block whose tokens do not match its checksum."""
        if hi <= lo:
            return
        size, checked = self.block_tokens, self.checked
        for block in range(lo // size, (hi - 1) // size + 1):
            if not checked[block]:
                self._check_block(block)
                checked[block] = True

    def check_all(self) -> None:
        """Check every block (``ngramtool verify``)."""
        for block in np.flatnonzero(~self.checked):
            self._check_block(int(block))
        self.checked[:] = True

    def _check_block(self, block: int) -> None:
        lo = block * self.block_tokens
        hi = min(lo + self.block_tokens, self.tokens.shape[0])
        actual = zlib.crc32(np.ascontiguousarray(self.tokens[lo:hi], dtype=TOKEN_DTYPE))
        expected = int(self.checksums[block])
        if actual != expected:
            raise NgramToolError(
                f"{self.path}: tokens {lo:,} to {hi - 1:,} fail their checksum (crc32 {actual:08x}, "
                f"recorded {expected:08x}): the tokens-only index is damaged and its rows cannot be "
                "computed from them; hash its input again"
            )
