"""Writing token files of every format: :class:`TokenFileWriter` streams the ids (and the document
offsets, into a scratch file) under temporary names beside the destination, then writes the
format's header and index from the registry and renames every file into place on commit."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ...util.atomic import Staged, attributed, close_quietly, is_output_failure
from ...util.errors import NgramToolError, UsageError
from .base import INT64, write_array
from .reading import TokenFile, open_token_file
from .registry import TokenFormat, check_format


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
        self._layout = check_format(fmt)
        self.format = self._layout.name
        if vocab_size < 1:
            raise UsageError(f"the vocabulary size must be positive (got {vocab_size})")
        self.vocab_size = vocab_size
        self.dtype = _write_dtype(self._layout, vocab_size)
        self.files = self._layout.files(Path(path))
        self.num_tokens = 0
        self.committed = self._finished = False
        self._staged: list[Staged] = []
        self._handle: BinaryIO | None = None
        # Document offsets stream to a scratch file (int64), not into memory, as they come.
        self._offsets: BinaryIO | None = None
        self._offsets_scratch: Staged | None = None
        self._index: BinaryIO | None = None  # the index (Megatron's, datatrove's), written on commit
        self._offset_count = 0
        try:
            for dest in self.files:
                self._staged.append(Staged(dest, expected_bytes=expected_bytes if not self._staged else None))
            self._handle = self._staged[0].path.open("r+b")
            self._handle.write(self._header())
            if self._layout.write_index is not None:
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
        if self._layout.check_count is not None:
            self._layout.check_count(self.files[0], self.num_tokens + ids.shape[0])
        with attributed(self.files[0]):
            if self._offsets is not None:
                first_tokens = ids.shape[0] > 0 and not (self.num_tokens or self._offset_count)
                if first_tokens and not (starts.size and starts[0] == 0):
                    self._add_offsets(np.zeros(1, dtype=np.int64))  # tokens before any start: a document
                self._add_offsets(starts + self.num_tokens)
            assert self._handle is not None
            write_array(self._handle, ids, self.dtype)
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
        write_index = self._layout.write_index
        if write_index is not None and self._offsets is not None and self._offsets_scratch is not None:
            self._add_offsets(np.asarray([self.num_tokens], dtype=np.int64))
            self._offsets.close()
            offsets = np.memmap(self._offsets_scratch.path, dtype=INT64, mode="r")
            self._index = self._staged[1].path.open("wb")
            write_index(self._index, offsets, self.dtype)
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
        return self._layout.header(self.dtype, self.num_tokens)

    def _add_offsets(self, offsets: np.ndarray) -> None:
        """Append document offsets (global token positions) to the scratch file."""
        assert self._offsets is not None
        write_array(self._offsets, offsets, INT64)
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
        if self._layout.too_wide is not None:
            hint = self._layout.too_wide
        elif self.dtype.itemsize == 2:
            hint = (
                f"it lies outside the vocabulary of {self.vocab_size:,} that chose them; give the "
                "tokenizer's full vocabulary size (above 65,536 ids selects 32-bit tokens)"
            )
        else:
            hint = "Megatron stores int32 ids; use `save_format=llmc` or datatrove (uint32)"
        raise UsageError(f"{where}: {hint}")


def token_itemsize(fmt: str, vocab_size: int) -> int:
    """Bytes per token of a token file written in ``fmt`` for ``vocab_size`` ids (the writer's
    dtype, see :class:`TokenFileWriter`)."""
    return _write_dtype(check_format(fmt), vocab_size).itemsize


def _write_dtype(layout: TokenFormat, vocab_size: int) -> np.dtype:
    """The token dtype ``layout`` (one of TOKEN_FORMATS: a format with a writer) writes for
    ``vocab_size`` ids."""
    assert layout.write_dtype is not None
    return layout.write_dtype(vocab_size)


def _close_durably(handle: BinaryIO) -> None:
    handle.flush()
    os.fsync(handle.fileno())
    handle.close()
