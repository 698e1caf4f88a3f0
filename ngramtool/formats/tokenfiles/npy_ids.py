"""``.npy`` token files: a 1-D integer array of token ids behind numpy's header."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...util.errors import NgramToolError, UsageError
from ..npy import npy_header
from .base import Opened, expect_size, map_tokens, read_head, whole

NPY_MAGIC = b"\x93NUMPY"


def detect_npy(path: Path) -> bool:
    """Whether ``path`` is named as a .npy file; one that exists but lacks the .npy magic is refused
    (a headerless memmap under a .npy name)."""
    if not path.name.endswith(".npy"):
        return False
    head = read_head(path, len(NPY_MAGIC))
    if head and head != NPY_MAGIC:
        raise UsageError(
            f"{path} has no .npy header: OLMo and Dolma write headerless token memmaps under .npy "
            "names; read it with `token_format=raw` and its `token_dtype` (uint16 or uint32)"
        )
    return True


def open_npy(files: tuple[Path, ...]) -> Opened:
    """Map the ids of a .npy file (version 1 or 2 header), checking its size against the header."""
    (path,) = files
    with path.open("rb") as handle:
        try:
            version = np.lib.format.read_magic(handle)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(handle)
            else:
                shape, _, dtype = np.lib.format.read_array_header_2_0(handle)
        except ValueError as exc:
            raise NgramToolError(f"{path}: not a readable .npy file ({exc})") from None
        offset = handle.tell()
    if len(shape) != 1 or not np.issubdtype(dtype, np.integer):
        raise NgramToolError(f"{path}: expected a 1-D integer array of token ids, got {dtype} {shape}")
    expect_size(path, offset + shape[0] * dtype.itemsize, f"a .npy header of {shape[0]:,} {dtype} ids")
    return Opened(files, map_tokens(path, dtype, offset, shape[0]), whole(shape[0]), dtype)


def npy_ids_header(dtype: np.dtype, count: int) -> bytes:
    """The .npy header of ``count`` ids of ``dtype`` (the same size whatever the count)."""
    return npy_header(dtype, (count,))
