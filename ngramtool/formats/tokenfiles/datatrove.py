"""datatrove token files: an ``X.ds`` of ids and its ``X.ds.index`` of uint64 document ends; the
token size is not stored but derived from the two files' sizes."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import numpy as np

from ...util.errors import NgramToolError, UsageError
from .base import OFFSET_BLOCK, UINT16, UINT32, Opened, map_tokens, write_array

DATATROVE_END = np.dtype("<u8")


def datatrove_files(path: Path) -> tuple[Path, ...]:
    """``X.ds, X.ds.index`` of the datatrove pair named by ``X.ds`` or ``X.ds.index``."""
    name = str(path)
    tokens = name.removesuffix(".index") if name.endswith(".ds.index") else name
    return Path(tokens), Path(tokens + ".index")


def detect_datatrove(path: Path) -> bool:
    """Whether ``path`` is named as a datatrove file; one without its index beside it is refused."""
    if not path.name.endswith((".ds", ".ds.index")):
        return False
    tokens, index = datatrove_files(path)
    if not index.is_file():
        raise UsageError(
            f"{tokens} has no {index.name} beside it: datatrove token files come with their "
            "document index; copy it along (or pass `token_format`)"
        )
    return True


def open_datatrove(files: tuple[Path, ...]) -> Opened:
    """Map the ids of the ``.ds`` with the documents its index ends, the token size derived from
    the two files."""
    ds_path, index_path = files
    index_size = index_path.stat().st_size
    if index_size % 8:
        raise NgramToolError(
            f"{index_path}: {index_size:,} bytes is not a whole number of uint64 document ends; "
            "it is truncated"
        )
    ends = np.asarray(map_tokens(index_path, DATATROVE_END, 0, index_size // 8))
    if np.any(ends[1:] < ends[:-1]):
        raise NgramToolError(f"{index_path}: document ends decrease; the index is corrupted")
    size = ds_path.stat().st_size
    last = int(ends[-1]) if ends.size else 0
    if last == 0:
        if size:
            raise NgramToolError(
                f"{ds_path}: holds {size:,} bytes but {index_path.name} ends every document at token 0; "
                "the files do not belong together"
            )
        dtype = UINT16
    elif size % last or size // last not in (2, 4):
        raise NgramToolError(
            f"{ds_path}: {size:,} bytes for the {last:,} tokens that {index_path.name} ends at is neither "
            "2 (uint16) nor 4 (uint32) bytes per token; datatrove stores no token size, so it is derived "
            "from these two files: one is truncated or they do not belong together"
        )
    else:
        dtype = UINT16 if size // last == 2 else UINT32
    doc_offsets = np.concatenate([np.zeros(1, dtype=np.int64), ends.astype(np.int64)])
    details = {"header": {"token_bytes": dtype.itemsize, "token_bytes_derived_from": "file size / last end"}}
    return Opened(files, map_tokens(ds_path, dtype, 0, last), doc_offsets, dtype, details)


def write_datatrove_index(handle: BinaryIO, doc_offsets: np.ndarray, dtype: np.dtype) -> None:
    """Write a datatrove .ds.index: the document ends (``doc_offsets`` but its leading 0),
    ``OFFSET_BLOCK`` at a time; ``dtype``, the tokens', is not stored."""
    for lo in range(1, doc_offsets.shape[0], OFFSET_BLOCK):
        write_array(handle, doc_offsets[lo : lo + OFFSET_BLOCK], DATATROVE_END)
