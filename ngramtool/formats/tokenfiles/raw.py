"""Headerless token memmaps (OLMo, Dolma: ``raw``): ids of a given dtype, one document, or the
documents of Dolma's ``.csv.gz`` metadata beside the file. Read only."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import numpy as np

from ...util.errors import NgramToolError, UsageError
from .base import Opened, map_tokens, whole, whole_tokens

RAW_DTYPES = {"uint16": np.dtype("<u2"), "uint32": np.dtype("<u4")}
"""The token dtypes of headerless memmaps (``token_format=raw``), by name."""
DOLMA_METADATA = ".csv.gz"
"""The suffix of Dolma's per-document metadata beside a token memmap (rows: start, end, id, ...)."""


def open_raw(files: tuple[Path, ...], dtype_name: str | None) -> Opened:
    """A headerless token memmap of the ``token_dtype`` named ``dtype_name``; its documents from
    Dolma's metadata beside it, if there."""
    (path,) = files
    if dtype_name is None:
        raise UsageError(
            f"{path}: a raw token file stores no token type: pass `token_dtype` (uint16 for vocabularies "
            "up to 65,536 ids, as OLMo and Dolma write them, else uint32)"
        )
    dtype = RAW_DTYPES.get(dtype_name)
    if dtype is None:
        raise UsageError(f"`token_dtype` must be one of {', '.join(RAW_DTYPES)} (got {dtype_name!r})")
    count = whole_tokens(path, dtype, ": the file is truncated, or `token_dtype` is not its type")
    tokens = map_tokens(path, dtype, 0, count)
    metadata = dolma_metadata(path)
    if not metadata.is_file():
        return Opened(files, tokens, whole(count), dtype)
    details = {"documents_from": metadata.name}
    offsets = _dolma_offsets(metadata, path, count)
    return Opened((path, metadata), tokens, offsets, dtype, details)


def dolma_metadata(path: Path) -> Path:
    """Where Dolma writes the metadata of the token memmap ``path`` (``X.npy`` -> ``X.csv.gz``)."""
    return path.with_name(path.name.removesuffix(path.suffix) + DOLMA_METADATA)


def _dolma_offsets(metadata: Path, path: Path, count: int) -> np.ndarray:
    """Document offsets from Dolma's metadata (one ``start,end,id,src,loc`` row per document, in
    order, contiguous from 0 to the token count)."""
    ends = [0]
    try:
        with gzip.open(metadata, "rt", encoding="utf-8", newline="") as handle:
            for row_no, row in enumerate(csv.reader(handle), start=1):
                start, end = _metadata_span(row, metadata, row_no)
                if start != ends[-1] or end < start:
                    raise NgramToolError(
                        f"{metadata}:{row_no}: the document spans tokens {start:,} to {end:,} but the one "
                        f"before it ends at {ends[-1]:,}: the metadata does not describe {path.name} in order"
                    )
                ends.append(end)
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as exc:
        raise NgramToolError(
            f"{metadata}: unreadable Dolma metadata ({exc}); remove it or get it again"
        ) from None
    if ends[-1] != count:
        raise NgramToolError(
            f"{metadata}: its documents end at token {ends[-1]:,} but {path.name} holds {count:,} tokens: "
            "they do not belong together (or `token_dtype` is not the file's type)"
        )
    return np.asarray(ends if len(ends) > 1 else [0, count], dtype=np.int64)


def _metadata_span(row: list[str], metadata: Path, row_no: int) -> tuple[int, int]:
    """(start, end) of one metadata row."""
    try:
        return int(row[0]), int(row[1])
    except (IndexError, ValueError):
        raise NgramToolError(
            f"{metadata}:{row_no}: expected Dolma's start,end,id,... columns, got {row[:3]!r}"
        ) from None
