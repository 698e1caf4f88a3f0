"""The index directory: ``manifest.json`` plus ``tokens.npy``, ``rows.npy`` and ``doc_offsets.npy``.

Layout and every manifest field are documented in docs/formats.md. The directory is built under a
temporary name next to its destination and renamed into place only when complete, so a crash
never leaves a directory that looks finished.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..errors import NgramToolError, UsageError
from ..spec import HashSpec
from ..stages import StageClock
from .npy import HEADER_BYTES, NpyStreamWriter
from .partial import partial_dir, publish_dir, write_json_durably

FORMAT_NAME = "ngramtool-index"
FORMAT_VERSION = "1.1"
MANIFEST = "manifest.json"
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
    """

    def __init__(
        self, dest: Path, meta: IndexMeta, *, force: bool = False, clock: StageClock | None = None
    ) -> None:
        self.dest = Path(dest)
        self.meta = meta
        if self.dest.exists() and not force:
            raise UsageError(f"{self.dest} already exists; pass --force to replace it")
        if self.dest.exists() and not (self.dest / MANIFEST).is_file():
            raise UsageError(f"{self.dest} exists and is not an ngramtool index; refusing to replace it")
        parent = self.dest.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.tmp = partial_dir(self.dest)
        except OSError as exc:
            raise NgramToolError(f"cannot create the output next to {self.dest}: {exc.strerror}") from None
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
            shutil.rmtree(self.tmp, ignore_errors=True)

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
        lut_writer = NpyStreamWriter(self.tmp / "lut.npy", np.dtype(np.int64))
        lut_writer.append(self.meta.lut)
        arrays = {}
        writers = (
            ("tokens", self.tokens),
            ("rows", self.rows),
            ("doc_offsets", self.doc_offsets),
            ("lut", lut_writer),
        )
        for name, writer in writers:
            writer.close()
            arrays[name] = {
                "file": writer.path.name,
                "dtype": writer.dtype.str,
                "shape": list(writer.shape),
                "data_sha256": writer.sha256,
            }
        manifest = self.meta.manifest()
        manifest.update(num_tokens=num_tokens, num_documents=num_documents, arrays=arrays)
        write_json_durably(self.tmp / MANIFEST, manifest)
        publish_dir(self.tmp, self.dest)
        self.committed = True
        return manifest


class Index:
    """A read-only, memory-mapped view of an index directory (nothing is loaded whole).

    Attributes:
        path: the directory.
        manifest: the parsed manifest.json.
        spec: the HashSpec that made the rows.
        tokens: uint32 [T] raw token ids (memory map).
        rows: [T, L, C] row indices (memory map).
        doc_offsets: int64 [D+1]; document d spans tokens[doc_offsets[d]:doc_offsets[d+1]].
        lut: int64 [V], the raw -> canonical id table the rows were made with.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.manifest = read_manifest(self.path)
        try:
            fields = {k: v for k, v in self.manifest["spec"].items() if k not in ("fingerprint", "derived")}
            self.spec = HashSpec.from_dict(fields)
            arrays = self.manifest["arrays"]
            self.tokens = self._map(arrays["tokens"])
            self.rows = self._map(arrays["rows"])
            self.doc_offsets = self._map(arrays["doc_offsets"])
            self.lut = self._map(arrays["lut"])
        except (KeyError, TypeError, AttributeError, ValueError, UsageError) as exc:
            detail = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
            raise NgramToolError(f"{self.path / MANIFEST} is damaged: {detail}") from None

    def _map(self, record: dict[str, Any]) -> np.ndarray:
        name = record["file"]
        if not isinstance(name, str) or name in ("", ".", "..") or Path(name).name != name:
            raise ValueError(f"array file {name!r} is not a file name inside the index")
        path = self.path / name
        try:
            array = np.load(path, mmap_mode="r") if path.stat().st_size > HEADER_BYTES else np.load(path)
        except (OSError, ValueError, EOFError) as exc:
            raise NgramToolError(f"{path}: cannot read this array ({exc or 'empty file'})") from None
        if list(array.shape) != record["shape"] or array.dtype.str != record["dtype"]:
            raise NgramToolError(
                f"{path}: holds {array.dtype.str} {list(array.shape)} but the manifest says "
                f"{record['dtype']} {record['shape']}; the index is damaged"
            )
        return array

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    def window(self, start: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, rows) of positions [start, start+length) as memory-mapped slices."""
        if start < 0 or length < 0 or start + length > len(self):
            raise NgramToolError(f"window [{start}, {start + length}) is outside the {len(self)} tokens")
        return self.tokens[start : start + length], self.rows[start : start + length]


def read_manifest(path: Path) -> dict[str, Any]:
    """Parse and check an index manifest (format name and major version)."""
    manifest_path = Path(path) / MANIFEST
    if not manifest_path.is_file():
        raise NgramToolError(f"{path} is not an ngramtool index (no {MANIFEST})")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise NgramToolError(f"{manifest_path}: unreadable manifest ({exc})") from None
    if not isinstance(manifest, dict):
        raise NgramToolError(f"{manifest_path} is damaged: not a JSON object")
    if manifest.get("format") != FORMAT_NAME:
        raise NgramToolError(f"{manifest_path}: not an {FORMAT_NAME} manifest")
    major = str(manifest.get("format_version", "0")).split(".")[0]
    if major != FORMAT_VERSION.split(".")[0]:
        raise NgramToolError(
            f"{path} uses index format {manifest.get('format_version')}; this ngramtool reads "
            f"{FORMAT_VERSION.split('.')[0]}.x: upgrade ngramtool"
        )
    return manifest


def open_index(path: str | Path) -> Index:
    """Open an index directory written by ``ngramtool hash``, or a merged dataset of shards
    (``ngramtool merge``), memory-mapped; a dataset returns a MergedIndex with the same attributes."""
    from .dataset import DATASET, MergedIndex  # a dataset is made of indexes: import on demand

    if (Path(path) / DATASET).is_file():
        return MergedIndex(Path(path))  # type: ignore[return-value]
    return Index(Path(path))
