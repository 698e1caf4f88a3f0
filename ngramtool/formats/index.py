"""The index directory: ``manifest.json`` plus ``tokens.npy``, ``rows.npy``, ``doc_offsets.npy`` and
the lookup table (``lut.npy``, or for the shards of a sharded run one table their directory shares
in ``vocab/``). A tokens-only index (``rows="lazy"``) has no ``rows.npy`` but the block checksums
of its tokens (``token_crc32.npy``, :mod:`ngramtool.formats.tokenblocks`); its ``rows`` are
computed from the tokens when they are read (:class:`ComputedRows`), by a function that the
layers above hand in (``rows_factory``: these formats compute nothing).

Layout and every manifest field are documented in docs/formats.md. The directory is built under a
temporary name next to its destination and renamed into place only when complete, so a crash
never leaves a directory that looks finished. Opening checks the manifest against the schema and
the arrays' structure against the manifest.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..spec.hashspec import HashSpec
from ..util.atomic import Staged, attributed, fsync_dir, is_output_failure, write_json_durably
from ..util.chunks import CHUNK_TOKENS, TokenChunk, starts_within
from ..util.errors import NgramToolError, UsageError
from ..util.profiling import StageClock
from ..util.version import __version__
from .checksum import DEFAULT_CHECKSUM, SHA256, array_checksum, checksum_record
from .npy import HEADER_BYTES, NpyStreamWriter, SlabNpyWriter, atomic_npy, map_npy
from .ranged import RangeArray
from .schema import INDEX_MANIFEST, load_json_document, spec_from_record
from .tokenblocks import BlockChecksumWriter, TokenBlocks, block_count

FORMAT_NAME = "ngramtool-index"
FORMAT_MAJOR = 1
# 1.1: the "tokenization" record; the lookup table may be the one a dataset directory shares
# 1.2: array checksums named by algorithm: "data_xxh3_128" (the default) or "data_sha256"; the
#      rows' .npy header is padded to 4096 bytes (the data starts block-aligned); "rows.storage":
#      tokens-only indexes ("lazy": no rows array, "token_crc32" block checksums of the tokens);
#      "source_row_groups" for an index of some row groups of one parquet file (a sharded run's part)
FORMAT_VERSION = "1.2"
ROW_STORAGE = ("stored", "lazy")
MANIFEST = "manifest.json"
VOCAB_STORE = "vocab"  # a dataset directory's shared lookup tables, one file per fingerprint
SHARED_LUT_PATTERN = rf"\.\./{VOCAB_STORE}/[0-9a-f]{{64}}\.npy"
ROW_LAYOUT = "token-major [T, L, (N-1)*K]; column (n-2)*K + head; -1 = masked token"


class RowsFunction(Protocol):
    """Rows of a span of raw token ids (:class:`ngramtool.hashing.rawrows.RawRows`)."""

    def __call__(
        self, tokens: np.ndarray, before: np.ndarray, doc_starts: np.ndarray, *, first_position: int
    ) -> np.ndarray:
        """Rows [T, L, C] of ``tokens`` [T], whose windows see ``before`` (the ids preceding them
        in their document, at most N-1) and the pad before each of ``doc_starts`` (positions in
        ``tokens``); ``first_position`` is the stream position of ``tokens[0]``, for messages."""
        ...


# (spec, lookup table, the index's path for messages) -> the function that computes its rows
RowsFactory = Callable[[HashSpec, np.ndarray, str, str], RowsFunction]
"""Makes a tokens-only index's :class:`RowsFunction` from its spec, lookup table, path and
``negative_ids`` (how its DEAD tokens hash)."""


def row_storage(manifest: dict[str, Any]) -> str:
    """``stored`` or ``lazy``: whether the rows are in the index or computed from its tokens
    (manifests before format 1.2 store them)."""
    return manifest["rows"].get("storage", "stored")


def index_repr(kind: str, path: Path, manifest: dict[str, Any], spec: HashSpec, *extra: str) -> str:
    """An index or a merged dataset in one line, from its manifest: ``<Index 'corpus.ngidx'
    tokens=158122 documents=1 rows=int32[158122, 2, 16] stored spec=15f9e7371b9f6f16>``."""
    tokens = manifest["num_tokens"]
    words = [
        repr(str(path)),
        *extra,
        f"tokens={tokens}",
        f"documents={manifest['num_documents']}",
        f"rows={spec.row_dtype.name}[{tokens}, {spec.num_layers}, {spec.num_columns}]",
        row_storage(manifest),
        f"spec={spec.fingerprint[:16]}",
    ]
    return f"<{kind} {' '.join(words)}>"


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
    storage: str = "stored"  # an index's rows: "stored", or "lazy" (computed from its tokens)
    row_groups: tuple[int, int] | None = None  # the row groups [first, stop) of the one parquet source
    negative_ids: str = "mask"  # how masked (DEAD) tokens hash: "mask" (rows -1) or "barrier"
    vocab_mismatch: dict[str, Any] | None = None  # a released model's preset with another V', on purpose

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
            "negative_ids": self.negative_ids,
            **({"vocab_mismatch": self.vocab_mismatch} if self.vocab_mismatch is not None else {}),
            "offsets_added": True,
            "rows": {
                "dtype": self.spec.row_dtype.newbyteorder("<").str,
                "layout": ROW_LAYOUT,
                **({"storage": self.storage} if format_name == FORMAT_NAME else {}),
            },
            "sources": list(self.sources),
            **({"source_row_groups": list(self.row_groups)} if self.row_groups is not None else {}),
        }


def negative_ids_of(manifest: dict[str, Any]) -> str:
    """How an output's masked tokens were hashed (``mask`` unless it says otherwise)."""
    return str(manifest.get("negative_ids", "mask"))


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
            # Strings: 64-bit values that JSON readers may round. Per lag ([L, N]) where a layer's
            # columns share them, else per column ([L, C, N]).
            "multipliers": spec.family_multipliers.astype(str).tolist(),
            "primes": spec.primes.tolist(),
            "offsets": spec.offsets.tolist(),
            "rows_per_layer": spec.rows_per_layer.tolist(),
        },
    }


class IndexWriter:
    """Stream tokens, rows and document starts into an index directory; :meth:`commit` publishes it.

    Use as a context manager: leaving the block without ``commit`` (an error, Ctrl-C) removes the
    temporary directory and leaves the destination untouched; a full disk (or a quota, a read-only
    file system) becomes an :class:`~ngramtool.util.atomic.OutputError` that says how much was
    written and how much more was needed (``expected_bytes``, the estimated size of the whole
    index, may be set while writing). Each array's data is checksummed with ``checksum``
    (:mod:`ngramtool.formats.checksum`); ``clock`` times the rows' checksum, under the algorithm's
    name. With ``shared_vocab`` (the shards of a sharded run) the lookup table is not written into
    the index but stored once in its parent directory (:func:`store_shared_lut`). The rows are
    written from aligned slabs that the hashing can fill in place (:meth:`rows_out`). With
    ``meta.storage == "lazy"`` it writes a tokens-only index: no rows (``append`` takes None for
    them), the block checksums of the tokens instead.
    """

    def __init__(
        self,
        dest: Path,
        meta: IndexMeta,
        *,
        force: bool = False,
        clock: StageClock | None = None,
        shared_vocab: bool = False,
        expected_bytes: int | None = None,
        checksum: str = DEFAULT_CHECKSUM,
    ) -> None:
        if meta.storage not in ROW_STORAGE:
            raise UsageError(f"`rows` must be 'stored' or 'lazy' (got {meta.storage!r})")
        self.dest = Path(dest)
        self.checksum = checksum
        self.meta = meta
        self.shared_vocab = shared_vocab
        self._refuse_to_replace(force)
        try:
            self.dest.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise NgramToolError(f"cannot write {self.dest}: {exc.strerror}") from None
        self.staged = Staged(self.dest, directory=True, expected_bytes=expected_bytes)
        self.writers: list[NpyStreamWriter] = []
        self.committed = False
        self._manifest: dict[str, Any] | None = None
        with self._discarded_on_error():
            self._refuse_to_replace(force)  # again, holding the lock: a run may have finished meanwhile
            self.tmp = self.staged.path
            spec = meta.spec
            self.tokens = self._writer("tokens.npy", np.dtype(np.uint32))
            self.rows: SlabNpyWriter | None = None
            self.token_crc32: BlockChecksumWriter | None = None
            if meta.storage == "stored":
                self.rows = self._writer(
                    "rows.npy",
                    spec.row_dtype,
                    (spec.num_layers, spec.num_columns),
                    kind=SlabNpyWriter,
                    digest_behind=True,
                    clock=clock,
                )
            else:
                self.token_crc32 = BlockChecksumWriter(self.tmp, checksum=self.checksum)
                self.writers.append(self.token_crc32.out)
            # Document starts stream to disk as they come (a list would grow with the corpus).
            self.doc_offsets = self._writer("doc_offsets.npy", np.dtype(np.int64))

    def _refuse_to_replace(self, force: bool) -> None:
        """An existing index is replaced only with ``force``; anything else that exists, never."""
        if not self.dest.exists():
            return
        if not (self.dest / MANIFEST).is_file():
            what = "a directory" if self.dest.is_dir() else "a file"
            raise UsageError(
                f"{self.dest} is {what} that is not an ngramtool index, and ngramtool never replaces it: "
                "choose another `output`"
            )
        if not force:
            raise UsageError(f"{self.dest} already exists; pass `force=True` to replace it")

    def _writer(
        self,
        name: str,
        dtype: np.dtype,
        inner: tuple[int, ...] = (),
        *,
        kind: type[NpyStreamWriter] = NpyStreamWriter,
        **options: Any,
    ) -> NpyStreamWriter:
        """A writer of one array file in the temporary directory (aborted with the index), its
        data checksummed with the index's algorithm."""
        writer = kind(self.tmp / name, dtype, inner, checksum=self.checksum, **options)
        self.writers.append(writer)
        return writer

    @property
    def expected_bytes(self) -> int | None:
        """The estimated size of the whole index (for messages about a full disk)."""
        return self.staged.expected_bytes

    @expected_bytes.setter
    def expected_bytes(self, value: int | None) -> None:
        self.staged.expected_bytes = value

    @property
    def bytes_written(self) -> int:
        """Bytes handed to the index's files so far."""
        return sum(writer.bytes_written for writer in self.writers)

    @contextlib.contextmanager
    def _discarded_on_error(self) -> Iterator[None]:
        try:
            yield
        except BaseException as exc:
            self._abort(exc)
            raise

    def __enter__(self) -> IndexWriter:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        if not self.committed:
            self._abort(exc)

    def _abort(self, exc: BaseException | None) -> None:
        """Close every file and remove the temporary directory; a file system error about the
        output is raised as one line with the sizes."""
        for writer in self.writers:
            writer.abort()
        written = self.bytes_written  # once every thread that writes has stopped
        if isinstance(exc, OSError) and is_output_failure(exc, self.dest):
            raise self.staged.failure(exc, written) from None
        self.staged.discard()

    @property
    def rows_block(self) -> int:
        """Rows the writer writes at a time: :meth:`rows_out` ranges must not cross a multiple of it."""
        return self._stored_rows().slab_rows

    def rows_out(self, position: int, count: int) -> np.ndarray:
        """Where the rows of tokens ``[position, position + count)`` will be written from: an
        array to compute them into, which :meth:`append` then writes without a copy."""
        return self._stored_rows().out(position, count)

    def _stored_rows(self) -> SlabNpyWriter:
        if self.rows is None:
            raise ValueError("a tokens-only index has no rows to write")
        return self.rows

    def append(self, tokens: np.ndarray, rows: np.ndarray | None, doc_starts: np.ndarray) -> None:
        """Append a chunk: raw ids [n], rows [n, L, C] (None for a tokens-only index), document
        starts as positions in the chunk."""
        with attributed(self.dest):
            self.doc_offsets.append(np.asarray(doc_starts, dtype=np.int64).reshape(-1) + self.tokens.rows)
            self.tokens.append(tokens)
            if self.rows is not None:
                if rows is None:
                    raise ValueError("an index that stores its rows needs the rows of every chunk")
                self.rows.append(rows)
            if self.token_crc32 is not None:
                self.token_crc32.append(tokens)

    def commit(self) -> dict[str, Any]:
        """Finish every file, write the manifest (:meth:`finish`), and rename the directory into
        place; returns the manifest."""
        manifest = self.finish()
        with attributed(self.dest):
            self.staged.publish()
        self.committed = True
        return manifest

    def finish(self) -> dict[str, Any]:
        """Finish every file and write the manifest, all but publishing (a run that writes several
        outputs finishes them all before it publishes any); returns the manifest."""
        if self._manifest is None:
            with attributed(self.dest):
                self._manifest = self._finish()
        return self._manifest

    def _finish(self) -> dict[str, Any]:
        num_tokens = self.tokens.rows
        num_documents = self.doc_offsets.rows
        self.doc_offsets.append(np.asarray([num_tokens], dtype=np.int64))
        writers = [("tokens", self.tokens), ("doc_offsets", self.doc_offsets)]
        if self.rows is not None:
            writers.insert(1, ("rows", self.rows))
        if not self.shared_vocab:
            lut_writer = self._writer("lut.npy", np.dtype(np.int64))
            lut_writer.append(self.meta.lut)
            writers.append(("lut", lut_writer))
        arrays = {}
        for name, writer in writers:
            writer.close()
            arrays[name] = {
                "file": writer.path.name,
                "dtype": writer.dtype.str,
                "shape": list(writer.shape),
                **checksum_record("data", writer.algorithm, writer.checksum),
            }
        if self.token_crc32 is not None:
            arrays["token_crc32"] = self.token_crc32.close()
        if self.shared_vocab:  # stored before the index is published: it never points at nothing
            arrays["lut"] = store_shared_lut(self.dest.parent, self.meta.lut)
        manifest = self.meta.manifest()
        manifest.update(num_tokens=num_tokens, num_documents=num_documents, arrays=arrays)
        write_json_durably(self.tmp / MANIFEST, manifest)
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
    if table.dtype.str == "<i8" and table.ndim == 1 and array_checksum(table, SHA256) == fingerprint:
        _TABLES_FOUND.add(seen)
        return True
    return False


def store_shared_lut(directory: Path, lut: np.ndarray) -> dict[str, Any]:
    """Store ``lut`` once in ``directory/vocab/FINGERPRINT.npy``; returns an index's array record
    that points at it (``"file": "../vocab/FINGERPRINT.npy"``).

    The file is named by the sha256 of its data (the vocabulary fingerprint), so the shards of a
    sharded run share one file per vocabulary, and writers running at once (Ray tasks) write the
    same bytes: a missing or damaged file is written under a temporary name and renamed into place.
    Its record's checksum is that sha256, whatever the index's checksum is.
    """
    table = np.ascontiguousarray(lut, dtype="<i8")
    fingerprint = array_checksum(table, SHA256)
    store = Path(directory) / VOCAB_STORE
    path = store / f"{fingerprint}.npy"
    if not _holds_table(path, fingerprint):
        try:
            if not store.is_dir():
                store.mkdir(exist_ok=True)
                fsync_dir(store.parent)
            with atomic_npy(
                path, table.dtype, wait=True, expected_bytes=HEADER_BYTES + table.nbytes, checksum=SHA256
            ) as writer:
                writer.append(table)
            fsync_dir(store)
        except OSError as exc:
            raise NgramToolError(f"cannot write the shared vocabulary table {path}: {exc.strerror}") from None
    return {
        "file": f"../{VOCAB_STORE}/{path.name}",
        "dtype": table.dtype.str,
        "shape": [int(table.shape[0])],
        **checksum_record("data", SHA256, fingerprint),
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
        storage: ``"stored"`` (``rows.npy``) or ``"lazy"`` (a tokens-only index).
        tokens: uint32 [T] raw token ids (memory map).
        rows: [T, L, C] row indices: a memory map, or for a tokens-only index a
            :class:`ComputedRows` that computes the rows read from the tokens (indexed alike).
        doc_offsets: int64 [D+1]; document d spans tokens[doc_offsets[d]:doc_offsets[d+1]].
        lut: int64 [V], the raw -> canonical id table the rows were made with (the index's own
            ``lut.npy``, or the table its dataset directory shares, see :func:`store_shared_lut`).
        token_blocks: the tokens' block checksums (:class:`TokenBlocks`) of a tokens-only index,
            else None.
        checked_tokens: the tokens, each read of a tokens-only index's checked against their
            block checksums first (:class:`CheckedTokens`); a stored index's ``tokens``.

    Args:
        path: the directory.
        rows_factory: makes the function that computes a tokens-only index's rows (given by
            :func:`ngramtool.open_index`); None: reading them raises an error that says so.
    """

    kind = "index"

    def __init__(self, path: Path, *, rows_factory: RowsFactory | None = None) -> None:
        self.path = Path(path)
        self.manifest = read_manifest(self.path)
        self.spec = spec_from_record(self.manifest["spec"])
        self.storage = row_storage(self.manifest)
        arrays = self.manifest["arrays"]
        self.tokens = self._map("tokens", arrays["tokens"])
        self.doc_offsets = self._map("doc_offsets", arrays["doc_offsets"])
        self.lut = self._map("lut", arrays["lut"])
        self.token_blocks: TokenBlocks | None = None
        self.rows: np.ndarray | ComputedRows
        self.checked_tokens: np.ndarray | CheckedTokens = self.tokens
        self._check_arrays(arrays)
        if self.storage == "stored":
            self.rows = self._map("rows", arrays["rows"])
        else:
            checksums = arrays["token_crc32"]
            block_crcs = self._map("token_crc32", checksums)
            self.token_blocks = TokenBlocks(
                self.tokens, block_crcs, checksums["block_tokens"], self.array_path("tokens")
            )
            self.rows = ComputedRows(self, rows_factory)
            self.checked_tokens = CheckedTokens(self.tokens, self.token_blocks)
        self._check_structure()

    def __repr__(self) -> str:
        return index_repr(type(self).__name__, self.path, self.manifest, self.spec)

    def _check_arrays(self, arrays: dict[str, Any]) -> None:
        """The arrays the manifest lists are those of its row storage."""
        wanted = {"stored": ("rows", "token_crc32"), "lazy": ("token_crc32", "rows")}[self.storage]
        if wanted[0] not in arrays or wanted[1] in arrays:
            raise NgramToolError(
                f"{self.path / MANIFEST} is damaged: an index whose rows are {self.storage} lists "
                f"'arrays.{wanted[0]}' and no 'arrays.{wanted[1]}'"
            )

    def array_path(self, name: str) -> Path:
        """The file of array ``name`` (``tokens``, ``rows`` or ``token_crc32``, ``doc_offsets``, ``lut``)."""
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
        if self.token_blocks is not None:
            block = self.token_blocks.block_tokens
            expected["token_crc32"] = ("<u4", (block_count(counts[0], block),))
        for name, (dtype, shape) in expected.items():
            array = self.mapped(name) if name != "rows" else self.rows
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

    @property
    def stores_rows(self) -> bool:
        """Whether its rows are stored (``rows.npy``) rather than computed from its tokens."""
        return self.storage == "stored"

    def mapped(self, name: str) -> np.ndarray:
        """The memory map of array ``name`` of ``manifest["arrays"]``."""
        if name == "token_crc32" and self.token_blocks is not None:
            return self.token_blocks.checksums
        if name == "rows" and not self.stores_rows:
            raise NgramToolError(f"{self.path} is a tokens-only index: it stores no rows")
        return getattr(self, name)

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    def window(self, start: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, rows) of positions [start, start+length) as memory-mapped slices."""
        if start < 0 or length < 0 or start + length > len(self):
            raise NgramToolError(f"window [{start}, {start + length}) is outside the {len(self)} tokens")
        return self.tokens[start : start + length], self.rows[start : start + length]


class CheckedTokens(RangeArray):
    """A tokens-only index's tokens, each read checked against their block checksums first (a
    damaged token raises NgramToolError instead of giving wrong rows): what computes rows from
    them reads ``checked_tokens``."""

    what = "tokens-only index's tokens"

    def __init__(self, tokens: np.ndarray, blocks: TokenBlocks) -> None:
        super().__init__(tokens.shape, tokens.dtype)
        self.tokens = tokens
        self.blocks = blocks

    def _range(self, lo: int, hi: int) -> np.ndarray:
        self.blocks.check(lo, hi)
        return self.tokens[lo:hi]


class ComputedRows(RangeArray):
    """The rows of a tokens-only index, computed from its tokens when read; indexed like the
    memory map of a stored index's rows (see :class:`~ngramtool.formats.ranged.RangeArray`).

    A read of positions [lo, hi) checks the block checksums of the tokens it uses and computes
    their rows with the N-1 tokens before ``lo`` as context (only those of ``lo``'s document when
    the index's boundary is ``reset``), so the rows are those a stored index holds, byte for byte.
    """

    what = "tokens-only index's rows"

    def __init__(self, index: Index, factory: RowsFactory | None) -> None:
        spec = index.spec
        super().__init__((len(index), spec.num_layers, spec.num_columns), spec.row_dtype.newbyteorder("<"))
        self.index = index
        self._factory = factory
        self._compute: RowsFunction | None = None

    def _range(self, lo: int, hi: int) -> np.ndarray:
        index = self.index
        first = max(lo - (index.spec.max_ngram - 1), 0)  # where the context begins
        resets = np.zeros(0, dtype=np.int64)
        if index.manifest["boundary"] == "reset":
            offsets = index.doc_offsets
            after = int(np.searchsorted(offsets, lo, side="right"))
            first = max(first, int(offsets[after - 1]))  # within lo's document
            resets = np.asarray(offsets[after : int(np.searchsorted(offsets, hi, side="left"))]) - lo
        assert index.token_blocks is not None
        index.token_blocks.check(first, hi)
        tokens = np.asarray(index.tokens[first:hi])
        return self.compute(tokens[lo - first :], tokens[: lo - first], resets, first_position=lo)

    @property
    def compute(self) -> RowsFunction:
        """The function that computes the rows (made on first use)."""
        if self._compute is None:
            if self._factory is None:
                raise NgramToolError(
                    f"{self.index.path} is a tokens-only index: its rows are computed from its tokens "
                    "when read; open it with ngramtool.open_index to read them"
                )
            index = self.index
            negative_ids = negative_ids_of(index.manifest)
            self._compute = self._factory(index.spec, index.lut, str(index.path), negative_ids)
        return self._compute


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
