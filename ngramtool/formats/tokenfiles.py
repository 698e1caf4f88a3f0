"""Token files that trainers already use: nanoGPT, llm.c, Megatron and datatrove binaries, ``.npy``,
and headerless token memmaps (OLMo, Dolma: ``raw`` with a given dtype).

Readers memory-map the tokens (nothing is loaded whole) and give document boundaries as
``doc_offsets`` (int64 [D+1]: document ``d`` spans ``tokens[doc_offsets[d]:doc_offsets[d+1]]``).
A file that records no boundaries is one document, or is cut after every end-of-sequence id
(``eos_id``); a raw file with Dolma's ``.csv.gz`` metadata beside it takes its documents from there.
Writers stream tokens into temporary files beside the destination that are renamed into place by
:meth:`TokenFileWriter.commit`. Every byte layout and the detection rules: docs/token-files.md.
"""

from __future__ import annotations

import csv
import gzip
import mmap
import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ..chunks import CHUNK_TOKENS, TokenChunk, starts_within
from ..errors import NgramToolError, UsageError
from .atomic import Staged, attributed, close_quietly, is_output_failure
from .npy import npy_header

TOKEN_FORMATS = ("npy", "nanogpt", "llmc", "megatron", "datatrove")
"""The formats ngramtool reads and writes."""
READ_FORMATS = (*TOKEN_FORMATS, "raw")
"""The formats ngramtool reads: those it writes, and headerless memmaps (``raw``)."""
FORMATS_WITH_DOCUMENTS = frozenset({"megatron", "datatrove"})
"""Formats that store document boundaries; in the others the whole file is one document."""

UINT16 = np.dtype("<u2")
UINT32 = np.dtype("<u4")
INT32 = np.dtype("<i4")
INT64 = np.dtype("<i8")
UINT16_VOCAB = 1 << 16
"""Vocabularies up to this size are written with uint16 tokens (llmc, datatrove, npy)."""
RAW_DTYPES = {"uint16": np.dtype("<u2"), "uint32": np.dtype("<u4")}
"""The token dtypes of headerless memmaps (``token_format=raw``), by name."""
DOLMA_METADATA = ".csv.gz"
"""The suffix of Dolma's per-document metadata beside a token memmap (rows: start, end, id, ...)."""
NPY_MAGIC = b"\x93NUMPY"
MEGATRON_UINT16_VOCAB = 65500
"""Megatron's ``optimal_dtype``: uint16 below this vocabulary size, int32 from it on."""

LLMC_HEADER = struct.Struct("<256i")
LLMC_DTYPES = {(20240520, 1): UINT16, (20240520, 2): UINT32, (20240801, 7): UINT32}
"""llm.c (magic, version) -> token dtype: GPT-2 uint16, and uint32 as llm.c writes LLaMA-3 tokens."""
LLMC_WRITE = {UINT16: (20240520, 1), UINT32: (20240801, 7)}
LLMC_MAX_TOKENS = (1 << 31) - 1

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

DATATROVE_END = np.dtype("<u8")
OFFSET_BLOCK = 1 << 20  # document offsets handled at a time when an index file is written

BLOCK = 1 << 20
"""Entries processed at a time when validating a Megatron index or scanning ids (bounded memory)."""


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


def detect_token_format(path: str | Path) -> str:
    """The format of the token file at ``path``, from its name, its first bytes and its siblings.

    ``.npy`` is npy; ``.ds`` (or ``.ds.index``) is datatrove; a ``.bin`` (or ``.idx``, or the
    common prefix) whose ``.idx`` starts with ``MMIDIDX`` is megatron; a ``.bin`` that starts with
    a known llm.c magic and version is llmc; any other ``.bin`` is nanogpt (headerless files carry
    no type; uint16 is nanoGPT's convention).
    """
    path = Path(path)
    name = path.name
    if name.endswith(".npy"):
        head = _read_head(path, len(NPY_MAGIC))
        if head and head != NPY_MAGIC:
            raise UsageError(
                f"{path} has no .npy header: OLMo and Dolma write headerless token memmaps under .npy "
                "names; read it with `token_format=raw` and its `token_dtype` (uint16 or uint32)"
            )
        return "npy"
    if name.endswith((".ds", ".ds.index")):
        tokens, index = _files_of(path, "datatrove")
        if not index.is_file():
            raise UsageError(
                f"{tokens} has no {index.name} beside it: datatrove token files come with their "
                "document index; copy it along (or pass `token_format`)"
            )
        return "datatrove"
    tokens, index = _files_of(path, "megatron")
    if _read_head(index, len(MEGATRON_MAGIC)) == MEGATRON_MAGIC:
        return "megatron"
    if not path.exists():
        raise UsageError(f"token file not found: {path}")
    if path.suffix == ".bin":
        head = _read_head(path, 8)
        if len(head) == 8 and struct.unpack("<2i", head) in LLMC_DTYPES:
            return "llmc"
        return "nanogpt"
    raise UsageError(
        f"cannot tell the token format of {path}: supported are .npy (npy), .bin (nanogpt, llmc, or "
        f"megatron with its .idx) and .ds (datatrove); pass `token_format` ({', '.join(READ_FORMATS)})"
    )


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
    fmt = detect_token_format(path) if fmt is None else _check_format(fmt, READ_FORMATS)
    if dtype is not None and fmt != "raw":
        raise UsageError(f"`token_dtype` applies to headerless files (`token_format=raw`); {path} is {fmt}")
    files = _files_of(path, fmt)
    for file in files:
        if not file.is_file():
            raise UsageError(f"token file not found: {file}")
    try:
        opened = _open_raw(path, dtype) if fmt == "raw" else _OPENERS[fmt](files)
        return opened if eos_id is None else _cut_at_eos(opened, eos_id)
    except OSError as exc:
        raise NgramToolError(f"cannot read {files[0]}: {exc.strerror}") from None


def check_boundary(boundary: str, path: str | Path, fmt: str | None = None, **options: Any) -> None:
    """Refuse ``boundary="reset"`` on a token file whose documents are unknown (nanoGPT, llm.c,
    ``.npy``, raw, without ``eos_id``): it reads as one document, so reset would change nothing.
    ``options``: those of :func:`open_token_file`."""
    if boundary != "reset":
        return
    found = open_token_file(path, fmt, **options)
    if not found.has_documents:
        raise UsageError(
            f"`boundary=reset` restarts the windows at document starts, but {path} ({found.format}) "
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


class TokenFileWriter:
    """Stream tokens and document starts into a token file; :meth:`commit` publishes it.

    The token dtype follows ``vocab_size``: uint16 up to 65,536 ids, else uint32 (llmc, datatrove,
    npy); nanogpt is always uint16; megatron is uint16 below 65,500 ids, else int32 (Megatron's rule).
    An id that does not fit is refused with an error that says which format or vocabulary to use.
    Every file is written under a temporary name beside its destination and renamed into place on
    commit; leaving the ``with`` block without commit removes them (the destination is untouched).

    Attributes:
        files: the destination files, tokens first (``X.bin, X.idx`` for Megatron, ``X.ds, X.ds.index``
            for datatrove).
        format: the format written.
        dtype: the token dtype written.
        num_tokens: tokens appended so far.
    """

    def __init__(
        self, path: str | Path, fmt: str, vocab_size: int, *, expected_bytes: int | None = None
    ) -> None:
        self.format = _check_format(fmt)
        if vocab_size < 1:
            raise UsageError(f"the vocabulary size must be positive (got {vocab_size})")
        self.vocab_size = vocab_size
        self.dtype = _write_dtype(self.format, vocab_size)
        self.files = _files_of(Path(path), self.format)
        self.num_tokens = 0
        self.committed = self._finished = False
        self._staged: list[Staged] = []
        self._handle: BinaryIO | None = None
        # Document offsets stream to a scratch file (int64), not into memory, as they come.
        self._offsets: BinaryIO | None = None
        self._offsets_scratch: Staged | None = None
        self._index: BinaryIO | None = None  # the Megatron or datatrove index, written on commit
        self._offset_count = 0
        try:
            for dest in self.files:
                self._staged.append(Staged(dest, expected_bytes=expected_bytes if not self._staged else None))
            self._handle = self._staged[0].path.open("r+b")
            self._handle.write(self._header())
            if self.format in FORMATS_WITH_DOCUMENTS:
                self._offsets_scratch = Staged(self.files[0].with_name(self.files[0].name + ".offsets"))
                self._offsets = self._offsets_scratch.path.open("wb")
        except BaseException as exc:
            self.abort(exc)
            raise

    @property
    def expected_bytes(self) -> int | None:
        """The estimated size of the token file (for messages about a full disk)."""
        return self._staged[0].expected_bytes

    @expected_bytes.setter
    def expected_bytes(self, value: int | None) -> None:
        self._staged[0].expected_bytes = value

    def __enter__(self) -> TokenFileWriter:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        if not self.committed:
            self.abort(exc)

    def append(self, tokens: np.ndarray, doc_starts: np.ndarray) -> None:
        """Append token ids [n] and the positions in them (0..n, non-decreasing) where documents start.

        Tokens before the first document start form a document of their own. Formats without
        document boundaries (nanogpt, llmc, npy) ignore ``doc_starts``.
        """
        if self.committed:
            raise ValueError("append after commit")
        ids = np.asarray(tokens)
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise TypeError(f"tokens must be a 1-D integer array, got {ids.dtype} {ids.shape}")
        starts = np.asarray(doc_starts, dtype=np.int64).reshape(-1)
        if starts.size and (starts[0] < 0 or starts[-1] > ids.shape[0] or np.any(np.diff(starts) < 0)):
            raise ValueError(f"doc_starts must be non-decreasing positions in [0, {ids.shape[0]}]")
        self._check_fits(ids)
        if self.format == "llmc" and self.num_tokens + ids.shape[0] > LLMC_MAX_TOKENS:
            raise UsageError(
                f"{self.files[0]}: an llm.c .bin holds at most {LLMC_MAX_TOKENS:,} tokens (its count is an "
                "int32); split the output into shards or use `save_format=megatron` or datatrove"
            )
        with attributed(self.files[0]):
            if self._offsets is not None:
                first_tokens = ids.shape[0] > 0 and not (self.num_tokens or self._offset_count)
                if first_tokens and not (starts.size and starts[0] == 0):
                    self._add_offsets(np.zeros(1, dtype=np.int64))  # tokens before any start: a document
                self._add_offsets(starts + self.num_tokens)
            assert self._handle is not None
            _write_array(self._handle, ids, self.dtype)
        self.num_tokens += ids.shape[0]

    def commit(self) -> TokenFile:
        """Finish the header and index (:meth:`finish`), rename every file into place; returns
        the file reopened."""
        if self.committed:
            raise ValueError("commit called twice")
        self.finish()
        with attributed(self.files[0]):
            for staged in self._staged:
                staged.publish()
        self.committed = True
        return open_token_file(self.files[0], self.format)

    def finish(self) -> None:
        """Write the header and the index, all but publishing (a run that writes several outputs
        finishes them all before it publishes any)."""
        if self._finished:
            return
        with attributed(self.files[0]):
            self._finish()
        self._finished = True

    def _finish(self) -> None:
        assert self._handle is not None
        self._handle.seek(0)
        self._handle.write(self._header())
        _close_durably(self._handle)
        if self._offsets is not None and self._offsets_scratch is not None:
            self._add_offsets(np.asarray([self.num_tokens], dtype=np.int64))
            self._offsets.close()
            offsets = np.memmap(self._offsets_scratch.path, dtype=INT64, mode="r")
            self._index = self._staged[1].path.open("wb")
            if self.format == "megatron":
                _write_megatron_index(self._index, offsets, self.dtype)
            else:
                for lo in range(1, offsets.shape[0], OFFSET_BLOCK):
                    _write_array(self._index, offsets[lo : lo + OFFSET_BLOCK], DATATROVE_END)
            _close_durably(self._index)
            del offsets
            self._offsets_scratch.discard()

    def abort(self, exc: BaseException | None = None) -> None:
        """Close and remove the temporary files (the destination is untouched). ``exc``, the
        error that stopped the writer, is raised as one line with the sizes when it is the file
        system's about the output (a full disk, a quota, a read-only file system)."""
        for handle in (self._handle, self._offsets, self._index):
            close_quietly(handle)
        staged = [*self._staged, *([self._offsets_scratch] if self._offsets_scratch else [])]
        if staged and isinstance(exc, OSError) and is_output_failure(exc, self.files[0]):
            written = sum(part.written_bytes() for part in staged)
            for part in staged[1:]:
                part.discard()
            raise staged[0].failure(exc, written) from None
        for part in staged:
            part.discard()

    def _header(self) -> bytes:
        """The header for the tokens written so far (the same size whatever the count)."""
        if self.format == "npy":
            return npy_header(self.dtype, (self.num_tokens,))
        if self.format == "llmc":
            return LLMC_HEADER.pack(*LLMC_WRITE[self.dtype], self.num_tokens, *[0] * 253)
        return b""

    def _add_offsets(self, offsets: np.ndarray) -> None:
        """Append document offsets (global token positions) to the scratch file."""
        assert self._offsets is not None
        _write_array(self._offsets, offsets, INT64)
        self._offset_count += offsets.shape[0]

    def _check_fits(self, ids: np.ndarray) -> None:
        if ids.size == 0:
            return
        limit = np.iinfo(self.dtype).max
        if ids.min() < 0:
            position = int(np.argmax(ids < 0))
            raise NgramToolError(
                f"{self.files[0]}: token id {int(ids[position])} at position {self.num_tokens + position:,} "
                "is negative; token ids are >= 0"
            )
        if ids.max() <= limit:
            return
        position = int(np.argmax(ids > limit))
        where = (
            f"{self.files[0]}: token id {int(ids[position]):,} at position {self.num_tokens + position:,} "
            f"does not fit the {self.dtype.name} tokens of this {self.format} file"
        )
        if self.format == "nanogpt":
            hint = "nanoGPT .bin files hold uint16 ids; use `save_format=llmc`, megatron or datatrove"
        elif self.dtype.itemsize == 2:
            hint = (
                f"it lies outside the vocabulary of {self.vocab_size:,} that chose them; give the "
                "tokenizer's full vocabulary size (above 65,536 ids selects 32-bit tokens)"
            )
        else:
            hint = "Megatron stores int32 ids; use `save_format=llmc` or datatrove (uint32)"
        raise UsageError(f"{where}: {hint}")


def _check_format(fmt: str, formats: tuple[str, ...] = TOKEN_FORMATS) -> str:
    if fmt not in formats:
        raise UsageError(f"unknown token format {fmt!r}; choose one of {', '.join(formats)}")
    return fmt


def token_itemsize(fmt: str, vocab_size: int) -> int:
    """Bytes per token of a token file written in ``fmt`` for ``vocab_size`` ids (the writer's
    dtype, see :class:`TokenFileWriter`)."""
    return _write_dtype(_check_format(fmt), vocab_size).itemsize


def _write_dtype(fmt: str, vocab_size: int) -> np.dtype:
    if fmt == "nanogpt":
        return UINT16
    if fmt == "megatron":
        return UINT16 if vocab_size < MEGATRON_UINT16_VOCAB else INT32
    return UINT16 if vocab_size <= UINT16_VOCAB else UINT32


def _files_of(path: Path, fmt: str) -> tuple[Path, ...]:
    """The files of a token file in ``fmt``, tokens first; Megatron accepts X.bin, X.idx or the prefix X."""
    name = str(path)
    if fmt == "megatron":
        prefix = name[: -len(".bin")] if name.endswith((".bin", ".idx")) else name
        return Path(prefix + ".bin"), Path(prefix + ".idx")
    if fmt == "datatrove":
        tokens = name.removesuffix(".index") if name.endswith(".ds.index") else name
        return Path(tokens), Path(tokens + ".index")
    return (path,)


def _read_head(path: Path, size: int) -> bytes:
    """Up to ``size`` bytes from the start of ``path`` (empty when it is not a readable file)."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def _map(path: Path, dtype: np.dtype, offset: int, count: int) -> np.ndarray:
    """A read-only memory map of ``count`` items at byte ``offset`` (numpy cannot map zero bytes)."""
    if count == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=(count,))


def _whole(count: int) -> np.ndarray:
    """Document offsets of a file that is one document."""
    return np.array([0, count], dtype=np.int64)


def _expect_size(path: Path, expected: int, layout: str) -> None:
    actual = path.stat().st_size
    if actual != expected:
        state = "truncated" if actual < expected else "longer than that (trailing bytes)"
        raise NgramToolError(
            f"{path}: {layout} needs {expected:,} bytes but the file has {actual:,}: it is {state}; "
            "rewrite it (or check `token_format`)"
        )


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


def _open_npy(files: tuple[Path, ...]) -> TokenFile:
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
    _expect_size(path, offset + shape[0] * dtype.itemsize, f"a .npy header of {shape[0]:,} {dtype} ids")
    return TokenFile(path, "npy", _map(path, dtype, offset, shape[0]), _whole(shape[0]), dtype, files)


def _whole_tokens(path: Path, dtype: np.dtype, why: str) -> int:
    """The number of ``dtype`` tokens in the headerless file ``path``; an error ending in ``why``
    when its size is not a whole number of them."""
    size = path.stat().st_size
    if size % dtype.itemsize:
        raise NgramToolError(f"{path}: {size:,} bytes is not a whole number of {dtype.name} tokens{why}")
    return size // dtype.itemsize


def _open_nanogpt(files: tuple[Path, ...]) -> TokenFile:
    (path,) = files
    count = _whole_tokens(
        path,
        UINT16,
        "; a nanoGPT .bin is headerless uint16, so the file is truncated or in another "
        "format (pass `token_format`)",
    )
    return TokenFile(path, "nanogpt", _map(path, UINT16, 0, count), _whole(count), UINT16, files)


def _open_llmc(files: tuple[Path, ...]) -> TokenFile:
    (path,) = files
    head = _read_head(path, 12)
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
    _expect_size(
        path, LLMC_HEADER.size + count * dtype.itemsize, f"an llm.c header of {count:,} {dtype.name} tokens"
    )
    tokens = _map(path, dtype, LLMC_HEADER.size, count)
    details = {"header": {"magic": magic, "version": version}}
    return TokenFile(path, "llmc", tokens, _whole(count), dtype, files, details)


def _open_megatron(files: tuple[Path, ...]) -> TokenFile:
    bin_path, idx_path = files
    head = _read_head(idx_path, MEGATRON_HEAD.size)
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
    _expect_size(
        idx_path, documents_at + entries * INT64.itemsize, f"a Megatron index of {sequences:,} sequences"
    )
    sizes = _map(idx_path, INT32, sizes_at, sequences)
    pointers = _map(idx_path, INT64, pointers_at, sequences)
    document_index = np.asarray(_map(idx_path, INT64, documents_at, entries))
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
    _expect_size(
        bin_path, total * dtype.itemsize, f"the index of {idx_path.name} ({total:,} {dtype.name} tokens)"
    )
    details = {"header": {"version": version, "dtype_code": code, "num_sequences": sequences}}
    return TokenFile(
        bin_path, "megatron", _map(bin_path, dtype, 0, total), doc_offsets, dtype, files, details
    )


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


def _open_datatrove(files: tuple[Path, ...]) -> TokenFile:
    ds_path, index_path = files
    index_size = index_path.stat().st_size
    if index_size % 8:
        raise NgramToolError(
            f"{index_path}: {index_size:,} bytes is not a whole number of uint64 document ends; "
            "it is truncated"
        )
    ends = np.asarray(_map(index_path, DATATROVE_END, 0, index_size // 8))
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
    return TokenFile(ds_path, "datatrove", _map(ds_path, dtype, 0, last), doc_offsets, dtype, files, details)


def _open_raw(path: Path, dtype_name: str | None) -> TokenFile:
    """A headerless token memmap; its documents from Dolma's metadata beside it, if there."""
    if dtype_name is None:
        raise UsageError(
            f"{path}: a raw token file stores no token type: pass `token_dtype` (uint16 for vocabularies "
            "up to 65,536 ids, as OLMo and Dolma write them, else uint32)"
        )
    dtype = RAW_DTYPES.get(dtype_name)
    if dtype is None:
        raise UsageError(f"`token_dtype` must be one of {', '.join(RAW_DTYPES)} (got {dtype_name!r})")
    count = _whole_tokens(path, dtype, ": the file is truncated, or `token_dtype` is not its type")
    tokens = _map(path, dtype, 0, count)
    metadata = dolma_metadata(path)
    if not metadata.is_file():
        return TokenFile(path, "raw", tokens, _whole(count), dtype, (path,))
    details = {"documents_from": metadata.name}
    offsets = _dolma_offsets(metadata, path, count)
    return TokenFile(path, "raw", tokens, offsets, dtype, (path, metadata), details)


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


def _write_megatron_index(handle: BinaryIO, doc_offsets: np.ndarray, dtype: np.dtype) -> None:
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
        _write_array(handle, sizes, INT32)
    for lo in range(0, count, OFFSET_BLOCK):
        _write_array(handle, doc_offsets[lo : min(lo + OFFSET_BLOCK, count)] * dtype.itemsize, INT64)
    for lo in range(0, count + 1, OFFSET_BLOCK):
        _write_array(handle, np.arange(lo, min(lo + OFFSET_BLOCK, count + 1)), INT64)


def _write_array(handle: BinaryIO, values: np.ndarray, dtype: np.dtype) -> None:
    """Write ``values`` converted to ``dtype`` (little-endian) without an extra copy when they match."""
    handle.write(memoryview(np.ascontiguousarray(values, dtype=dtype).view(np.uint8)))


def _close_durably(handle: BinaryIO) -> None:
    handle.flush()
    os.fsync(handle.fileno())
    handle.close()


_OPENERS: dict[str, Callable[[tuple[Path, ...]], TokenFile]] = {
    "npy": _open_npy,
    "nanogpt": _open_nanogpt,
    "llmc": _open_llmc,
    "megatron": _open_megatron,
    "datatrove": _open_datatrove,
}
