"""What a path holds, and one way to open an index or a merged dataset.

:func:`detect` tells an index directory, a merged dataset, a pipe stream, a token file, saved
n-gram type counts and text apart (without reading more than a file's first bytes);
:func:`expect_kind` is the one "what is this" error of every command that reads a path.
:func:`open_index` opens an index or a merged dataset as an :class:`IndexLike`: both have the same
attributes, so no caller needs to know which one it holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..hashing.rawrows import RawRows
from ..spec.hashspec import HashSpec
from ..util.errors import UsageError
from .dataset import DATASET, MergedIndex
from .index import MANIFEST, Index
from .stream import file_is_stream
from .tokenfiles.registry import TOKEN_FILE_SUFFIXES

TYPE_COUNTS_SUFFIX = ".ngtypes.npz"


class Kind(StrEnum):
    """What a path holds."""

    INDEX = "index"
    DATASET = "dataset"
    STREAM = "stream"
    TOKEN_FILE = "token file"
    TYPE_COUNTS = "type counts"
    TEXT = "text"
    DIRECTORY = "directory"
    MISSING = "missing"


# How a message names each kind: what to give, and what a path was found to be.
_WANTED = {
    Kind.INDEX: "an index directory (with manifest.json)",
    Kind.DATASET: "a merged dataset (with dataset.json)",
    Kind.STREAM: "a stream file",
    Kind.TOKEN_FILE: "a token file (.npy, .bin, .ds)",
    Kind.TYPE_COUNTS: f"saved n-gram type counts (*{TYPE_COUNTS_SUFFIX})",
    Kind.TEXT: "text files",
}
_FOUND = {
    **_WANTED,
    Kind.TOKEN_FILE: "a token file",
    Kind.TEXT: "a text file",
    Kind.DIRECTORY: "a directory that holds neither an index nor a merged dataset",
}


def detect(path: str | Path) -> Kind:
    """What ``path`` holds: a directory by the manifest in it, a file by its name and first bytes
    (a stream starts with the stream's magic; token files and saved type counts are known by
    their suffix; any other file is text). The prefix ``X`` of a Megatron pair ``X.bin`` +
    ``X.idx`` (what Megatron's ``--data-path`` takes) is a token file."""
    path = Path(path)
    if path.is_dir():
        if (path / DATASET).is_file():
            return Kind.DATASET
        return Kind.INDEX if (path / MANIFEST).is_file() else Kind.DIRECTORY
    if not path.exists():
        pair = [path.with_name(path.name + suffix) for suffix in (".bin", ".idx")]
        return Kind.TOKEN_FILE if all(part.is_file() for part in pair) else Kind.MISSING
    if path.name.endswith(TYPE_COUNTS_SUFFIX):
        return Kind.TYPE_COUNTS
    if file_is_stream(path):
        return Kind.STREAM
    return Kind.TOKEN_FILE if path.name.endswith(TOKEN_FILE_SUFFIXES) else Kind.TEXT


def expect_kind(path: str | Path, wanted: Sequence[Kind], hint: str = "") -> Kind:
    """``detect(path)`` when it is one of ``wanted``; otherwise the usage error that says what the
    path is, what was wanted, and ``hint`` (what to do instead)."""
    kind = detect(path)
    if kind in wanted:
        return kind
    names = [_WANTED[k] for k in wanted]
    choices = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    tail = f"; {hint}" if hint else ""
    if kind is Kind.MISSING:
        raise UsageError(f"{path} does not exist: give {choices}{tail}")
    raise UsageError(f"{path} is not {choices}: it is {_FOUND[kind]}{tail}")


class IndexLike(Protocol):
    """An index or a merged dataset: what :func:`open_index` returns.

    Attributes:
        kind: ``"index"`` or ``"dataset"``.
        path: the directory.
        manifest: the index's manifest, or the dataset's ``dataset.json``.
        spec: the HashSpec of the rows.
        tokens: uint32 [T] raw ids (a memory map, or a view across shards).
        checked_tokens: the same ids, each read of a tokens-only index's checked against their
            block checksums first (what computes rows from them reads these).
        rows: [T, L, C] rows (likewise; computed from the tokens when read, for tokens-only
            indexes).
        doc_offsets: int64 [D+1]; document d spans ``tokens[doc_offsets[d]:doc_offsets[d+1]]``.
        lut: int64 [V], the raw -> canonical table the rows were made with.
        shards: the indexes it is made of (an index: itself).
    """

    kind: str
    path: Path
    manifest: dict[str, Any]
    spec: HashSpec

    @property
    def tokens(self) -> Any: ...

    @property
    def checked_tokens(self) -> Any: ...

    @property
    def rows(self) -> Any: ...

    @property
    def doc_offsets(self) -> np.ndarray: ...

    @property
    def lut(self) -> np.ndarray: ...

    @property
    def shards(self) -> Sequence[Index]: ...

    @property
    def stores_rows(self) -> bool: ...

    def __len__(self) -> int: ...

    def window(self, start: int, length: int) -> tuple[np.ndarray, np.ndarray]: ...


def open_index(path: str | Path) -> IndexLike:
    """Open an index directory (``ngramtool hash``) or a merged dataset of shards (``ngramtool
    merge``), memory-mapped; nothing is read whole. The rows of a tokens-only index (``hash
    --rows lazy``) are computed from its tokens as they are read
    (:class:`~ngramtool.hashing.rawrows.RawRows`).

    Args:
        path: the index directory (with ``manifest.json``) or the dataset directory (with
            ``dataset.json``).

    Examples:
        >>> import ngramtool
        >>> index = ngramtool.open_index("corpus.ngidx")  # ngramtool hash corpus.txt -o corpus.ngidx
        >>> index.kind, len(index), index.rows.shape
        ('index', 158122, (158122, 2, 16))
        >>> tokens, rows = index.window(1000, 512)
        >>> tokens.shape, rows.shape
        ((512,), (512, 2, 16))
    """
    kind = expect_kind(path, [Kind.INDEX, Kind.DATASET])
    if kind is Kind.DATASET:
        return MergedIndex(Path(path), rows_factory=RawRows)
    return Index(Path(path), rows_factory=RawRows)
