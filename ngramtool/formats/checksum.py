"""Checksums of the data ngramtool writes: XXH3-128 by default, sha256 on request.

XXH3-128 (the ``xxhash`` package) is a non-cryptographic hash made for data integrity: it detects
corruption (bit flips, truncation, a torn write) at memory speed, 15-20 GB/s per core here against
0.8-1.8 GB/s for sha256, which over the 128 bytes of rows per token cost as much as hashing them.
sha256 is the choice when the digest must also stand against deliberate tampering (``checksum=
"sha256"``). Either way the algorithm is named in the field that holds the digest
(``data_xxh3_128`` or ``data_sha256``; ``manifest_xxh3_128`` or ``manifest_sha256``), so readers
verify files written with either, and indexes from before XXH3 (sha256 only) stay readable.

Digests are lowercase hex: XXH3-128 with seed 0 in its canonical (big-endian) form, 32 digits, as
``xxhsum -H2`` prints it; sha256, 64 digits.
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

import numpy as np
import xxhash

from ..util.errors import NgramToolError, UsageError

XXH3_128 = "xxh3-128"
SHA256 = "sha256"
ALGORITHMS = (XXH3_128, SHA256)
DEFAULT_CHECKSUM = XXH3_128
HEX_DIGITS = {XXH3_128: 32, SHA256: 64}
_FIELD_SUFFIX = {XXH3_128: "xxh3_128", SHA256: "sha256"}
READ_BYTES = 16 << 20  # digested at a time from a memory map


class Digest(Protocol):
    """What hashlib's and xxhash's running digests share."""

    def update(self, data: Any, /) -> None: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...


def check_algorithm(algorithm: str) -> str:
    """``algorithm`` when ngramtool knows it; raises UsageError naming the `checksum` parameter."""
    if algorithm not in ALGORITHMS:
        raise UsageError(f"`checksum` must be one of {', '.join(ALGORITHMS)} (got {algorithm!r})")
    return algorithm


def new_digest(algorithm: str) -> Digest:
    """A running digest of ``algorithm`` (``update`` releases the GIL for large buffers)."""
    if check_algorithm(algorithm) == XXH3_128:
        return xxhash.xxh3_128()
    return hashlib.sha256()


def field_name(prefix: str, algorithm: str) -> str:
    """The field that holds a digest of ``algorithm``: ``data_xxh3_128``, ``manifest_sha256``, ..."""
    return f"{prefix}_{_FIELD_SUFFIX[check_algorithm(algorithm)]}"


def field_names(prefix: str) -> dict[str, str]:
    """Every algorithm's field for ``prefix``: ``{"xxh3-128": "data_xxh3_128", "sha256": ...}``."""
    return {algorithm: field_name(prefix, algorithm) for algorithm in ALGORITHMS}


def recorded(record: dict[str, Any], prefix: str) -> tuple[str, str]:
    """(algorithm, hex digest) of the one checksum field ``record`` holds for ``prefix`` (the
    schema makes sure there is exactly one)."""
    for algorithm, name in field_names(prefix).items():
        if name in record:
            return algorithm, record[name]
    raise NgramToolError(f"no {prefix}_* checksum field in {sorted(record)}")


def checksum_record(prefix: str, algorithm: str, digest: str) -> dict[str, str]:
    """``{FIELD: digest}``, the record entry of a digest."""
    return {field_name(prefix, algorithm): digest}


def array_checksum(array: np.ndarray, algorithm: str) -> str:
    """The digest of a C-order array's bytes, as the data of its .npy file (a memory map is read
    in blocks of READ_BYTES, never whole)."""
    flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    digest = new_digest(algorithm)
    for lo in range(0, flat.shape[0], READ_BYTES):
        digest.update(flat[lo : lo + READ_BYTES])
    return digest.hexdigest()


def bytes_checksum(data: bytes, algorithm: str) -> str:
    """The digest of ``data``."""
    digest = new_digest(algorithm)
    digest.update(data)
    return digest.hexdigest()
