"""A merged dataset: ``dataset.json`` over a directory of index shards, read as one index.

``ngramtool merge DIR`` writes ``DIR/dataset.json``: the shards in order with their counts and
the sha256 of each shard's manifest (which holds the sha256 of every array), the totals, and the
one tokenizer, HashSpec, vocabulary, boundary policy and tokenization they share (mixing them is
refused, see :mod:`ngramtool.formats.settings`). Hidden entries
(``.NAME.XXXX.partial``, ``.NAME.replaced-PID``: what a killed writer leaves) are never shards.
:func:`ngramtool.open_index` on ``DIR`` returns a :class:`MergedIndex` whose ``tokens``, ``rows``
and ``window`` span the shards as if they were one index.
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
from bisect import bisect_right
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..errors import NgramToolError, UsageError
from ..spec import HashSpec
from .index import MANIFEST, Index, timestamp
from .partial import write_json_durably
from .settings import settings_difference

DATASET = "dataset.json"
FORMAT_NAME = "ngramtool-dataset"
FORMAT_VERSION = "1.1"
_SHARED = ("tokenizer", "spec", "vocab", "boundary", "rows")


def _manifest_sha256(shard: Path) -> str:
    return hashlib.sha256((shard / MANIFEST).read_bytes()).hexdigest()


def _shard_paths(directory: Path) -> list[Path]:
    """The finished index shards in ``directory``, by name; hidden leftovers are skipped."""
    return sorted(p for p in directory.iterdir() if not p.name.startswith(".") and (p / MANIFEST).is_file())


def merge_shards(directory: Path) -> dict[str, Any]:
    """Write ``directory/dataset.json`` over the index shards inside it (sorted by name).

    Entries whose names start with a dot are skipped: they are the leftovers of killed writers.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory of index shards")
    shards = _shard_paths(directory)
    if not shards:
        raise UsageError(f"{directory} holds no finished index shards (directories with {MANIFEST})")
    records, first = [], None
    for path in shards:
        manifest = Index(path).manifest
        if first is None:
            first = manifest
        differs = settings_difference(first, manifest)
        if differs is not None:
            raise NgramToolError(
                f"{path.name} has another {differs.setting} than {shards[0].name} ({differs.theirs} "
                f"vs {differs.ours}): a dataset's shards must be made the same way; rehash the odd shards"
            )
        records.append(
            {
                "path": path.name,
                "num_tokens": manifest["num_tokens"],
                "num_documents": manifest["num_documents"],
                "manifest_sha256": _manifest_sha256(path),
            }
        )
    assert first is not None
    dataset = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "tool_version": __version__,
        "created": timestamp(),
        "num_tokens": sum(r["num_tokens"] for r in records),
        "num_documents": sum(r["num_documents"] for r in records),
        "num_shards": len(records),
        **{key: first[key] for key in _SHARED},
        **({"tokenization": first["tokenization"]} if "tokenization" in first else {}),
        "shards": records,
    }
    write_json_durably(directory / DATASET, dataset)
    return dataset


class ConcatArray:
    """Read-only concatenation of memory-mapped arrays along axis 0; indexing returns numpy arrays.

    Indexes like the memory maps of a plain index for the usual reads: an int or a contiguous
    slice on the first axis, optionally followed by indices of the other axes in a tuple
    (``rows[:10, 0]``, ``rows[5, 1, 2]``). Only the shards the first axis selects are read.
    """

    def __init__(self, parts: list[np.ndarray]) -> None:
        self.parts = parts
        self.starts = np.cumsum([0] + [p.shape[0] for p in parts]).tolist()
        inner = parts[0].shape[1:]
        self.shape = (self.starts[-1], *inner)
        self.dtype = parts[0].dtype

    @property
    def ndim(self) -> int:
        """Number of axes, as ``numpy.ndarray.ndim``."""
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the whole array, as ``numpy.ndarray.nbytes`` (nothing is read)."""
        return math.prod(self.shape) * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: int | slice | tuple[Any, ...]) -> np.ndarray:
        first, rest = (key[0], key[1:]) if isinstance(key, tuple) and key else (key, ())
        if isinstance(first, slice):
            lo, hi, step = first.indices(len(self))
            if step != 1:
                raise NgramToolError("a merged dataset supports contiguous slices only")
            return self._range(lo, max(hi, lo))[(slice(None), *rest)]
        if isinstance(first, bool | np.bool_) or not isinstance(first, int | np.integer):
            raise TypeError(
                f"a merged dataset's arrays take an int or a contiguous slice on the first axis, "
                f"optionally followed by more indices in a tuple (rows[:10, 0]); got {type(first).__name__}"
            )
        position, size = operator.index(first), len(self)
        if not -size <= position < size:
            raise IndexError(f"index {position} is out of bounds for axis 0 with size {size}")
        position %= size
        part = bisect_right(self.starts, position) - 1
        return self.parts[part][position - self.starts[part]][rest]

    def _range(self, lo: int, hi: int) -> np.ndarray:
        pieces = []
        part = bisect_right(self.starts, lo) - 1
        while lo < hi:
            end = min(hi, self.starts[part + 1])
            pieces.append(self.parts[part][lo - self.starts[part] : end - self.starts[part]])
            lo, part = end, part + 1
        if not pieces:
            return np.zeros((0, *self.shape[1:]), dtype=self.dtype)
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        whole = self._range(0, len(self))
        return whole if dtype is None else whole.astype(dtype)


class MergedIndex:
    """Several index shards read as one: the same attributes as :class:`Index`.

    ``tokens`` and ``rows`` are :class:`ConcatArray` views (slices are read from the shards'
    memory maps); ``doc_offsets`` is global; ``shards`` are the member indexes. Each shard was
    hashed as its own stream, so the first N-1 positions of a shard see the pad, not the end of
    the shard before it.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.manifest = read_dataset(self.path)
        self.shards = []
        listed = {record["path"] for record in self.manifest["shards"]}
        unlisted = [p.name for p in _shard_paths(self.path) if p.name not in listed]
        if unlisted:
            raise NgramToolError(
                f"{self.path} holds shards that dataset.json does not list ({', '.join(unlisted[:3])}); "
                "run ngramtool merge again"
            )
        for record in self.manifest["shards"]:
            shard_path = self.path / record["path"]
            if not (shard_path / MANIFEST).is_file():
                raise NgramToolError(
                    f"{shard_path}, listed in dataset.json, is missing; run ngramtool merge again"
                )
            if _manifest_sha256(shard_path) != record["manifest_sha256"]:
                raise NgramToolError(
                    f"{shard_path} changed since the dataset was merged; run ngramtool merge again"
                )
            self.shards.append(Index(shard_path))
        first = self.shards[0]
        self.spec: HashSpec = first.spec
        self.lut = first.lut
        self.tokens = ConcatArray([s.tokens for s in self.shards])
        self.rows = ConcatArray([s.rows for s in self.shards])
        offsets = [np.zeros(1, dtype=np.int64)]
        base = 0
        for shard in self.shards:
            offsets.append(np.asarray(shard.doc_offsets[1:]) + base)
            base += len(shard)
        self.doc_offsets = np.concatenate(offsets)

    def __len__(self) -> int:
        return len(self.tokens)

    def window(self, start: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, rows) of positions [start, start+length), across shard boundaries."""
        if start < 0 or length < 0 or start + length > len(self):
            raise NgramToolError(f"window [{start}, {start + length}) is outside the {len(self)} tokens")
        return self.tokens[start : start + length], self.rows[start : start + length]


def read_dataset(path: Path) -> dict[str, Any]:
    """Parse and check ``dataset.json``."""
    try:
        dataset = json.loads((Path(path) / DATASET).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise NgramToolError(f"{path}/{DATASET}: unreadable ({exc})") from None
    if dataset.get("format") != FORMAT_NAME:
        raise NgramToolError(f"{path}/{DATASET} is not an {FORMAT_NAME} manifest")
    if str(dataset.get("format_version", "0")).split(".")[0] != FORMAT_VERSION.split(".")[0]:
        raise NgramToolError(f"{path} uses dataset format {dataset.get('format_version')}: upgrade ngramtool")
    if not dataset.get("shards"):
        raise NgramToolError(f"{path}/{DATASET} lists no shards")
    return dataset
