"""The index directory: ``manifest.json`` plus ``tokens.npy``, ``rows.npy``, ``doc_offsets.npy`` and
the lookup table (``lut.npy``, or for the shards of a sharded run one table their directory shares
in ``vocab/``).

Layout and every manifest field are documented in docs/formats.md. The directory is built under a
temporary name next to its destination and renamed into place only when complete, so a crash
never leaves a directory that looks finished. Opening checks the manifest against the schema and
the arrays' structure against the manifest.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..chunks import CHUNK_TOKENS, TokenChunk, starts_within
from ..errors import NgramToolError, UsageError
from ..profiling import StageClock
from ..spec import HashSpec
from ..version import __version__
from .atomic import Staged, fsync_dir, write_json_durably
from .npy import NpyStreamWriter, array_sha256, atomic_npy, map_npy
from .schema import INDEX_MANIFEST, load_json_document, spec_from_record

FORMAT_NAME = "ngramtool-index"
FORMAT_MAJOR = 1
# 1.1: the "tokenization" record; the lookup table may be the one a dataset directory shares
# 1.2: "source_row_groups" for an index of some row groups of one parquet file (a sharded run's part)
FORMAT_VERSION = "1.2"
MANIFEST = "manifest.json"
VOCAB_STORE = "vocab"  # a dataset directory's shared lookup tables, one file per fingerprint
SHARED_LUT_PATTERN = rf"\.\./{VOCAB_STORE}/[0-9a-f]{{64}}\.npy"
ROW_LAYOUT = "token-major [T, L, (N-1)*K]; column (n-2)*K + head; -1 = masked token"


@dataclass(frozen=True)
class IndexMeta:
    """What a manifest records besides the arrays, and the vocabulary table stored with them."""

    spec: HashSpec
    tokenizer: dict[str, Any]
    vocab: dict[str, Any]
    boundary: str
    lut: np.ndarray
    sources: tuple[str, ...] = ()
    created: str | None = None  # ISO time recorded in the manifest; None: now
    tokenization: dict[str, Any] | None = None  # how the input became ids (None: not recorded)
    row_groups: tuple[int, int] | None = None  # the row groups [first, stop) of the one parquet source

    def manifest(self, format_name: str = FORMAT_NAME, version: str = FORMAT_VERSION) -> dict[str, Any]:
        """The manifest fields every output shares (counts and arrays are added by the writer)."""
        return {
            "format": format_name,
            "format_version": version,
            "tool_version": __version__,
            "created": self.created or timestamp(),
            "tokenizer": self.tokenizer,
            "vocab": self.vocab,
            "spec": spec_record(self.spec),
            "boundary": self.boundary,
            **({"tokenization": self.tokenization} if self.tokenization is not None else {}),
            "negative_ids": "mask",
            "offsets_added": True,
            "rows": {"dtype": self.spec.row_dtype.newbyteorder("<").str, "layout": ROW_LAYOUT},
            "sources": list(self.sources),
            **({"source_row_groups": list(self.row_groups)} if self.row_groups is not None else {}),
        }


def timestamp() -> str:
    """Now in UTC, or SOURCE_DATE_EPOCH when set (reproducible outputs: same inputs, same bytes)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = _dt.datetime.fromtimestamp(int(epoch), _dt.UTC) if epoch else _dt.datetime.now(_dt.UTC)
    return moment.isoformat(timespec="seconds")


def spec_record(spec: HashSpec) -> dict[str, Any]:
    """The manifest record of a spec: its fields, fingerprint and derived constants."""
    return {
        **spec.to_dict(),
        "fingerprint": spec.fingerprint,
        "derived": {
            "multipliers": [[str(m) for m in row] for row in spec.multipliers.tolist()],
            "primes": spec.primes.tolist(),
            "offsets": spec.offsets.tolist(),
            "rows_per_layer": spec.rows_per_layer.tolist(),
        },
    }


class IndexWriter:
    """Stream tokens, rows and document starts into an index directory; :meth:`commit` publishes it.

    Use as a context manager: leaving the block without ``commit`` (an error, Ctrl-C) removes the
    temporary directory and leaves the destination untouched. ``clock`` times the rows' sha256.
    With ``shared_vocab`` (the shards of a sharded run) the lookup table is not written into the
    index but stored once in its parent directory (:func:`store_shared_lut`).
    """

    def __init__(
        self,
        dest: Path,
        meta: IndexMeta,
        *,
        force: bool = False,
        clock: StageClock | None = None,
        shared_vocab: bool = False,
    ) -> None:
        self.dest = Path(dest)
        self.meta = meta
        self.shared_vocab = shared_vocab
        if self.dest.exists() and not force:
            raise UsageError(f"{self.dest} already exists; pass `force=True` to replace it")
        if self.dest.exists() and not (self.dest / MANIFEST).is_file():
            raise UsageError(f"{self.dest} exists and is not an ngramtool index; refusing to replace it")
        parent = self.dest.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.staged = Staged(self.dest, directory=True)
        except OSError as exc:
            raise NgramToolError(f"cannot create the output next to {self.dest}: {exc.strerror}") from None
        self.tmp = self.staged.path
        spec = meta.spec
        self.tokens = NpyStreamWriter(self.tmp / "tokens.npy", np.dtype(np.uint32))
        self.rows = NpyStreamWriter(
            self.tmp / "rows.npy",
            spec.row_dtype,
            (spec.num_layers, spec.num_columns),
            digest_behind=True,
            clock=clock,
        )
        # Document starts stream to disk as they come (a list would grow with the corpus).
        self.doc_offsets = NpyStreamWriter(self.tmp / "doc_offsets.npy", np.dtype(np.int64))
        self.committed = False

    def __enter__(self) -> IndexWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if not self.committed:
            for writer in (self.tokens, self.rows, self.doc_offsets):
                writer.abort()
            self.staged.discard()

    def append(self, tokens: np.ndarray, rows: np.ndarray, doc_starts: np.ndarray) -> None:
        """Append a chunk: raw ids [n], rows [n, L, C], document starts as positions in the chunk."""
        self.doc_offsets.append(np.asarray(doc_starts, dtype=np.int64).reshape(-1) + self.tokens.rows)
        self.tokens.append(tokens)
        self.rows.append(rows)

    def commit(self) -> dict[str, Any]:
        """Finish every file, write the manifest, and rename the directory into place."""
        num_tokens = self.tokens.rows
        num_documents = self.doc_offsets.rows
        self.doc_offsets.append(np.asarray([num_tokens], dtype=np.int64))
        writers = [("tokens", self.tokens), ("rows", self.rows), ("doc_offsets", self.doc_offsets)]
        if not self.shared_vocab:
            lut_writer = NpyStreamWriter(self.tmp / "lut.npy", np.dtype(np.int64))
            lut_writer.append(self.meta.lut)
            writers.append(("lut", lut_writer))
        arrays = {}
        for name, writer in writers:
            writer.close()
            arrays[name] = {
                "file": writer.path.name,
                "dtype": writer.dtype.str,
                "shape": list(writer.shape),
                "data_sha256": writer.sha256,
            }
        if self.shared_vocab:  # stored before the index is published: it never points at nothing
            arrays["lut"] = store_shared_lut(self.dest.parent, self.meta.lut)
        manifest = self.meta.manifest()
        manifest.update(num_tokens=num_tokens, num_documents=num_documents, arrays=arrays)
        write_json_durably(self.tmp / MANIFEST, manifest)
        self.staged.publish()
        self.committed = True
        return manifest


# Shared tables this process found intact, with the file's identity then: a sharded run's
# shards find the table in place without reading it again for each shard.
_TABLES_FOUND: set[tuple[str, str, int, int, int]] = set()


def _holds_table(path: Path, fingerprint: str) -> bool:
    """Whether ``path`` is a readable int64 table whose data has this sha256."""
    try:
        info = path.stat()
        seen = (str(path), fingerprint, info.st_ino, info.st_size, info.st_mtime_ns)
        if seen in _TABLES_FOUND:
            return True
        table = np.load(path)
    except (OSError, ValueError, EOFError):
        return False
    if table.dtype.str == "<i8" and table.ndim == 1 and array_sha256(table) == fingerprint:
        _TABLES_FOUND.add(seen)
        return True
    return False


def store_shared_lut(directory: Path, lut: np.ndarray) -> dict[str, Any]:
    """Store ``lut`` once in ``directory/vocab/FINGERPRINT.npy``; returns an index's array record
    that points at it (``"file": "../vocab/FINGERPRINT.npy"``).

    The file is named by the sha256 of its data (the vocabulary fingerprint), so the shards of a
    sharded run share one file per vocabulary, and writers running at once (Ray tasks) write the
    same bytes: a missing or damaged file is written under a temporary name and renamed into place.
    """
    table = np.ascontiguousarray(lut, dtype="<i8")
    fingerprint = array_sha256(table)
    store = Path(directory) / VOCAB_STORE
    path = store / f"{fingerprint}.npy"
    if not _holds_table(path, fingerprint):
        try:
            if not store.is_dir():
                store.mkdir(exist_ok=True)
                fsync_dir(store.parent)
            with atomic_npy(path, table.dtype) as writer:
                writer.append(table)
            fsync_dir(store)
        except OSError as exc:
            raise NgramToolError(f"cannot write the shared vocabulary table {path}: {exc.strerror}") from None
    return {
        "file": f"../{VOCAB_STORE}/{path.name}",
        "dtype": table.dtype.str,
        "shape": [int(table.shape[0])],
        "data_sha256": fingerprint,
    }


class Index:
    """A read-only, memory-mapped view of an index directory (nothing is loaded whole).

    Opening checks the manifest against the schema (:mod:`ngramtool.formats.schema`) and the
    arrays' structure against the manifest (dtypes, shapes, document offsets); ``ngramtool
    verify`` checks the data itself.

    Attributes:
        kind: ``"index"`` (a merged dataset's is ``"dataset"``).
        path: the directory.
        manifest: the parsed manifest.json.
        spec: the HashSpec that made the rows.
        tokens: uint32 [T] raw token ids (memory map).
        rows: [T, L, C] row indices (memory map).
        doc_offsets: int64 [D+1]; document d spans tokens[doc_offsets[d]:doc_offsets[d+1]].
        lut: int64 [V], the raw -> canonical id table the rows were made with (the index's own
            ``lut.npy``, or the table its dataset directory shares, see :func:`store_shared_lut`).
    """

    kind = "index"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.manifest = read_manifest(self.path)
        self.spec = spec_from_record(self.manifest["spec"])
        arrays = self.manifest["arrays"]
        self.tokens = self._map("tokens", arrays["tokens"])
        self.rows = self._map("rows", arrays["rows"])
        self.doc_offsets = self._map("doc_offsets", arrays["doc_offsets"])
        self.lut = self._map("lut", arrays["lut"])
        self._check_structure()

    def array_path(self, name: str) -> Path:
        """The file of array ``name`` (``tokens``, ``rows``, ``doc_offsets``, ``lut``)."""
        file = self.manifest["arrays"][name]["file"]
        if name == "lut" and re.fullmatch(SHARED_LUT_PATTERN, file):
            return self.path / file
        if file in ("", ".", "..") or Path(file).name != file:
            raise NgramToolError(
                f"{self.path / MANIFEST} is damaged: field 'arrays.{name}.file' {file!r} is not a file "
                "name inside the index"
            )
        return self.path / file

    def _map(self, name: str, record: dict[str, Any]) -> np.ndarray:
        path = self.array_path(name)
        try:
            array = map_npy(path)
        except FileNotFoundError:
            if name == "lut" and path.parent.name == VOCAB_STORE:
                raise NgramToolError(
                    f"{self.path}: its vocabulary table {path.resolve()} is missing: an index of a sharded "
                    f"run shares the {VOCAB_STORE}/ folder of the directory it was written in; keep the "
                    f"index in that directory, or copy that folder's {path.name} into a {VOCAB_STORE}/ "
                    "folder beside the index"
                ) from None
            raise NgramToolError(f"{path}: missing; the index is damaged") from None
        except (OSError, ValueError, EOFError) as exc:
            raise NgramToolError(f"{path}: cannot read this array ({exc or 'empty file'})") from None
        if list(array.shape) != record["shape"] or array.dtype.str != record["dtype"]:
            raise NgramToolError(
                f"{path}: holds {array.dtype.str} {list(array.shape)} but the manifest says "
                f"{record['dtype']} {record['shape']}; the index is damaged"
            )
        return array

    def _check_structure(self) -> None:
        """What the manifest says against the arrays' dtypes and shapes, and the document offsets
        (O(documents); the rows are not read)."""
        manifest, spec = self.manifest, self.spec
        where = f"{self.path / MANIFEST} is damaged"
        if spec.fingerprint != manifest["spec"]["fingerprint"]:
            raise NgramToolError(f"{where}: the HashSpec fields do not match the spec fingerprint")
        row_dtype = spec.row_dtype.newbyteorder("<").str
        if manifest["rows"]["dtype"] != row_dtype:
            raise NgramToolError(f"{where}: the manifest's row dtype is not the spec's {spec.row_dtype}")
        vocab = manifest["vocab"]
        if (vocab["size"], vocab["raw_size"]) != (spec.vocab_size, self.lut.shape[0]):
            raise NgramToolError(
                f"{where}: the manifest's vocabulary sizes {vocab['size']}/{vocab['raw_size']} disagree "
                f"with the spec's V'={spec.vocab_size} and the lookup table's {self.lut.shape[0]} raw ids"
            )
        counts = (manifest["num_tokens"], manifest["num_documents"])
        held = (self.tokens.shape[0], self.doc_offsets.shape[0] - 1)
        if counts != held:
            raise NgramToolError(
                f"{where}: the manifest counts {counts[0]} tokens and {counts[1]} documents but the arrays "
                f"hold {held[0]} and {held[1]}"
            )
        expected = {
            "tokens": ("<u4", (counts[0],)),
            "rows": (row_dtype, (counts[0], spec.num_layers, spec.num_columns)),
            "doc_offsets": ("<i8", (counts[1] + 1,)),
            "lut": ("<i8", (vocab["raw_size"],)),
        }
        for name, (dtype, shape) in expected.items():
            array = getattr(self, name)
            if (array.dtype.str, tuple(array.shape)) != (dtype, shape):
                raise NgramToolError(
                    f"{where}: {name} is {array.dtype.str} {list(array.shape)} but the manifest's counts "
                    f"and spec make it {dtype} {list(shape)}"
                )
        offsets = np.asarray(self.doc_offsets)
        if offsets[0] != 0 or offsets[-1] != counts[0] or np.any(offsets[1:] < offsets[:-1]):
            raise NgramToolError(
                f"{self.array_path('doc_offsets')}: the document offsets must rise from 0 to the token "
                f"count {counts[0]} (they start at {int(offsets[0])} and end at {int(offsets[-1])}); "
                "the index is damaged"
            )

    @property
    def shards(self) -> tuple[Index]:
        """The indexes it is made of: itself (a merged dataset has several)."""
        return (self,)

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    def window(self, start: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, rows) of positions [start, start+length) as memory-mapped slices."""
        if start < 0 or length < 0 or start + length > len(self):
            raise NgramToolError(f"window [{start}, {start + length}) is outside the {len(self)} tokens")
        return self.tokens[start : start + length], self.rows[start : start + length]


def read_manifest(path: Path) -> dict[str, Any]:
    """Parse an index manifest and check it against the schema (format name, major version and
    every field's type and range); raises NgramToolError naming the file and the field."""
    manifest_path = Path(path) / MANIFEST
    if not manifest_path.is_file():
        raise NgramToolError(f"{path} is not an ngramtool index (no {MANIFEST})")
    return load_json_document(
        manifest_path,
        schema=INDEX_MANIFEST,
        format_name=FORMAT_NAME,
        major=FORMAT_MAJOR,
        fix="hash its input again to rewrite it",
    )


def iter_index_chunks(index: Index, chunk_tokens: int = CHUNK_TOKENS) -> Iterator[TokenChunk]:
    """An index's raw ids in chunks, with the document starts that fall in each (memory maps read
    a chunk at a time). An index of no tokens but some (empty) documents gives one empty chunk
    with their starts, so every document is counted."""
    starts, total = np.asarray(index.doc_offsets[:-1]), len(index)
    if total == 0 and starts.size:
        yield TokenChunk(np.zeros(0, dtype=np.uint32), starts.astype(np.int64), 0)
        return
    for lo in range(0, total, chunk_tokens):
        hi = min(lo + chunk_tokens, total)
        tokens = np.asarray(index.tokens[lo:hi])
        yield TokenChunk(tokens, starts_within(starts, lo, hi, total), tokens.nbytes)
