"""Opening and reading token files of every format: :class:`TokenFile`, :func:`open_token_file`
(the format's opener from the registry, then documents cut at ``eos_id`` if asked), and reading the
ids in chunks."""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...util.chunks import CHUNK_TOKENS, TokenChunk, starts_within
from ...util.errors import NgramToolError, UsageError
from .base import BLOCK
from .registry import FORMATS_WITH_DOCUMENTS, READ_FORMATS, check_format, detect_token_format


@dataclass
class TokenFile:
    """An opened token file (read-only, memory-mapped).

    Attributes:
        path: the file holding the tokens (``X.bin`` of a Megatron pair, ``X.ds`` of datatrove).
        format: one of :data:`READ_FORMATS`.
        tokens: [T] token ids in the file's dtype, a memory map (empty files give an empty array).
        doc_offsets: int64 [D+1]; document ``d`` spans ``tokens[doc_offsets[d]:doc_offsets[d+1]]``.
        dtype: the stored token dtype (little-endian).
        files: every file of the token file, tokens first.
        details: what the format's header or index says beyond the above (for ``describe``).
    """

    path: Path
    format: str
    tokens: np.ndarray
    doc_offsets: np.ndarray
    dtype: np.dtype
    files: tuple[Path, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        documents = f" documents={self.num_documents}" if self.has_documents else ""  # else not recorded
        kind = f"format={self.format!r} dtype={self.dtype.name}"
        return f"<TokenFile {str(self.path)!r} {kind} tokens={self.num_tokens}{documents}>"

    @property
    def num_tokens(self) -> int:
        """T, the number of tokens."""
        return int(self.tokens.shape[0])

    @property
    def num_documents(self) -> int:
        """D, the number of documents (empty ones included)."""
        return int(self.doc_offsets.shape[0]) - 1

    @property
    def has_documents(self) -> bool:
        """Whether the documents are known (the format records them, or ``eos_id`` or Dolma's
        metadata cut them); otherwise the file is one document."""
        return self.format in FORMATS_WITH_DOCUMENTS or "documents_from" in self.details

    @property
    def nbytes(self) -> int:
        """Bytes of token data (headers and index files excluded); the chunks' ``nbytes`` add up to it."""
        return self.num_tokens * self.dtype.itemsize

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary: format, dtype, counts, files and their sizes, header fields."""
        return {
            "path": str(self.path),
            "format": self.format,
            "dtype": self.dtype.name,
            "num_tokens": self.num_tokens,
            "num_documents": self.num_documents,
            "document_boundaries": self.has_documents,
            "files": {str(file): file.stat().st_size for file in self.files},
            **self.details,
        }


def open_token_file(
    path: str | Path, fmt: str | None = None, *, dtype: str | None = None, eos_id: int | None = None
) -> TokenFile:
    """Open a token file, detecting its format unless ``fmt`` names one of :data:`READ_FORMATS`.

    Args:
        path: the file (of a Megatron pair, its ``.bin``; of datatrove, its ``.ds``).
        fmt: ``npy``, ``nanogpt``, ``llmc``, ``megatron``, ``datatrove`` or ``raw``; None:
            detect it.
        dtype: the token type (``uint16`` or ``uint32``) of a headerless memmap (``raw``,
            implied by ``dtype``).
        eos_id: cut a file that records no documents after every end-of-sequence id (else a
            raw file's Dolma metadata, ``X.csv.gz`` beside ``X.npy``, gives its documents).

    Examples:
        >>> import numpy as np
        >>> from ngramtool import open_token_file
        >>> np.arange(5, dtype=np.uint16).tofile("train.bin")  # a nanoGPT file: headerless uint16
        >>> tokens = open_token_file("train.bin")
        >>> tokens.format, tokens.num_tokens, tokens.doc_offsets.tolist()
        ('nanogpt', 5, [0, 5])
    """
    path = Path(path)
    if fmt is None and dtype is not None:
        fmt = "raw"
    found = check_format(detect_token_format(path) if fmt is None else fmt, READ_FORMATS)
    if dtype is not None and not found.dtype_given:
        raise UsageError(
            f"`token_dtype` applies to headerless files (`token_format=raw`); {path} is {found.name}"
        )
    files = found.files(path)
    for file in files:
        if not file.is_file():
            raise UsageError(f"token file not found: {file}")
    try:
        opened = found.open(files, dtype) if found.dtype_given else found.open(files)
        read = TokenFile(
            opened.files[0],
            found.name,
            opened.tokens,
            opened.doc_offsets,
            opened.dtype,
            opened.files,
            opened.details,
        )
        return read if eos_id is None else _cut_at_eos(read, eos_id)
    except OSError as exc:
        raise NgramToolError(f"cannot read {files[0]}: {exc.strerror}") from None


def check_boundary(boundary: str, path: str | Path, fmt: str | None = None, **options: Any) -> None:
    """Refuse ``boundary="reset"`` on a token file whose documents are unknown (nanoGPT, llm.c,
    ``.npy``, raw, without ``eos_id``): it reads as one document, so reset would change nothing.
    ``options``: those of :func:`open_token_file`."""
    if boundary == "reset":
        refuse_reset_without_documents(open_token_file(path, fmt, **options), path)


def refuse_reset_without_documents(file: TokenFile, path: str | Path) -> None:
    """:func:`check_boundary` of ``boundary="reset"`` on a token file already open (``path``: the
    name it was given by)."""
    if not file.has_documents:
        raise UsageError(
            f"`boundary=reset` restarts the windows at document starts, but {path} ({file.format}) "
            "records none: it reads as one document; drop `boundary=reset`, pass `eos_id` to cut "
            "documents after each end-of-sequence id, or use a token file that keeps documents "
            "(Megatron or datatrove)"
        )


def iter_token_file_chunks(
    path: str | Path,
    fmt: str | None = None,
    chunk_tokens: int = CHUNK_TOKENS,
    *,
    vocab_size: int | None = None,
    vocab_name: str = "the vocabulary",
    dtype: str | None = None,
    eos_id: int | None = None,
) -> Iterator[TokenChunk]:
    """Chunks of about ``chunk_tokens`` uint32 ids, with document starts taken from the file
    (``dtype``, ``eos_id``: see :func:`open_token_file`).

    A document starting at the end of a chunk is placed at the start of the next one; starts at the
    end of the file (empty trailing documents) stay in the last chunk. A file without tokens but
    with (empty) documents gives one empty chunk holding their starts.

    With ``vocab_size``, a chunk holding an id at or above it raises NgramToolError naming the file,
    its largest id, and ``vocab_name`` with its size: the ids were made by another tokenizer.
    """
    file = open_token_file(path, fmt, dtype=dtype, eos_id=eos_id)
    yield from token_file_chunks(file, chunk_tokens, vocab_size=vocab_size, vocab_name=vocab_name)


def token_file_chunks(
    file: TokenFile,
    chunk_tokens: int = CHUNK_TOKENS,
    *,
    vocab_size: int | None = None,
    vocab_name: str = "the vocabulary",
) -> Iterator[TokenChunk]:
    """:func:`iter_token_file_chunks` of a token file already open."""
    starts = file.doc_offsets[:-1]
    total = file.num_tokens
    if total == 0:
        if starts.size:
            yield TokenChunk(np.zeros(0, dtype=np.uint32), starts.copy(), 0)
        return
    for lo in range(0, total, chunk_tokens):
        hi = min(lo + chunk_tokens, total)
        part = np.asarray(file.tokens[lo:hi])
        _check_ids(part, lo, file.path)
        if vocab_size is not None and part.max() >= vocab_size:
            raise NgramToolError(
                f"{file.path}: its largest token id is {largest_id(file):,} but {vocab_name} has "
                f"{vocab_size:,} ids (0 to {vocab_size - 1:,}), so another tokenizer made them: name "
                "it with `tokenizer=NAME`, or give `vocab_size=N` for ids that are canonical already"
            )
        ids = part.astype(np.uint32)
        release_pages(file.tokens, lo, hi)
        yield TokenChunk(ids, starts_within(starts, lo, hi, total), part.nbytes)


def release_pages(array: np.ndarray, lo: int, hi: int) -> None:
    """Let the kernel take back the pages of ``array[lo:hi]`` that reading it mapped, when the
    array is a memory map: read once in order, a large file would otherwise count whole in the
    process's resident memory. The data stays in the page cache; reading it again maps it again."""
    owner: Any = array
    while owner is not None and not isinstance(getattr(owner, "_mmap", None), mmap.mmap):
        owner = owner.base if isinstance(owner, np.ndarray) else None
    if owner is None or hi <= lo or not hasattr(mmap, "MADV_DONTNEED"):
        return
    mapping = owner._mmap
    start = array[lo:hi].__array_interface__["data"][0] - np.frombuffer(mapping, np.uint8).ctypes.data
    first = start - start % mmap.PAGESIZE
    mapping.madvise(mmap.MADV_DONTNEED, first, start + (hi - lo) * array.itemsize - first)


def largest_id(file: TokenFile) -> int:
    """The largest token id in ``file`` (-1 when it holds none), read in blocks."""
    largest = -1
    for lo in range(0, file.num_tokens, BLOCK):
        largest = max(largest, int(np.asarray(file.tokens[lo : lo + BLOCK]).max()))
    return largest


def _check_ids(part: np.ndarray, first: int, path: Path) -> None:
    """Refuse ids outside [0, 2^32) in a chunk read from a signed or 64-bit file."""
    if part.size == 0 or (part.dtype.kind == "u" and part.dtype.itemsize <= 4):
        return
    bad = (part < 0) | (part > np.iinfo(np.uint32).max)
    if bad.any():
        position = int(np.argmax(bad))
        raise NgramToolError(
            f"{path}: the token at position {first + position:,} is {int(part[position])}; token ids "
            "must lie in [0, 2^32): the file is corrupted or does not hold token ids"
        )


def _cut_at_eos(file: TokenFile, eos_id: int) -> TokenFile:
    """``file`` cut into documents after every ``eos_id`` (read in blocks)."""
    if file.format in FORMATS_WITH_DOCUMENTS:
        raise UsageError(
            f"{file.path} ({file.format}) records its documents: `eos_id` applies to token files without "
            "document boundaries"
        )
    if eos_id < 0:
        raise UsageError(f"`eos_id` must be a token id (>= 0), got {eos_id}")
    total = file.num_tokens
    ends = [np.zeros(1, dtype=np.int64)]
    for lo in range(0, total, BLOCK):
        hits = np.flatnonzero(np.asarray(file.tokens[lo : lo + BLOCK]) == eos_id) + lo + 1
        ends.append(hits[hits < total].astype(np.int64))
    ends.append(np.asarray([total], dtype=np.int64))
    details = {**file.details, "documents_from": f"eos_id {eos_id}"}
    return TokenFile(
        file.path, file.format, file.tokens, np.concatenate(ends), file.dtype, file.files, details
    )
