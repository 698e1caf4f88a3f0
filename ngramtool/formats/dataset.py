"""A merged dataset: ``dataset.json`` over a directory of index shards, read as one index.

``ngramtool merge DIR`` writes ``DIR/dataset.json``: the shards in order with their counts and
the checksum of each shard's manifest (which holds the checksum of every array; XXH3-128 or
sha256, :mod:`ngramtool.formats.checksum`), the totals, and the
one tokenizer, HashSpec, vocabulary, boundary policy and tokenization they share (mixing them is
refused, see :mod:`ngramtool.formats.settings`). What is not a finished shard (a writer's
``.NAME.XXXX.partial`` directory, a directory without a valid manifest) is reported and refused,
or with ``allow_missing`` left out and recorded in ``left_out``. :func:`ngramtool.open_index` on
``DIR`` returns a :class:`MergedIndex` whose ``tokens``, ``rows`` and ``window`` span the shards as
if they were one index; it opens shards when they are read and keeps a bounded number open, so any
number of shards can be read.
"""

from __future__ import annotations

import operator
import resource
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..spec.hashspec import HashSpec
from ..util.atomic import owner_of, unfinished_destination, write_json_durably
from ..util.errors import NgramToolError, UsageError
from ..util.version import __version__
from ..util.wording import plural
from .checksum import DEFAULT_CHECKSUM, bytes_checksum, check_algorithm, checksum_record, recorded
from .index import MANIFEST, VOCAB_STORE, Index, RowsFactory, index_repr, row_storage, timestamp
from .ranged import RangeArray
from .schema import DATASET as DATASET_SCHEMA
from .schema import load_json_document, spec_from_record
from .settings import settings_difference

DATASET = "dataset.json"
FORMAT_NAME = "ngramtool-dataset"
FORMAT_MAJOR = 1
# 1.1: "tokenization" shared by the shards; "left_out" (merge --allow-missing)
# 1.2: each shard's manifest checksum named by algorithm, "manifest_xxh3_128" or "manifest_sha256"
FORMAT_VERSION = "1.2"
_SHARED = ("tokenizer", "spec", "vocab", "boundary", "rows")
MAX_OPEN_SHARDS = 64  # shards a MergedIndex keeps open at most (each holds up to 4 memory maps)
FILES_PER_SHARD = 4  # descriptors an open shard may hold: one per mapped array (Python < 3.13)
_SHOWN = 3  # left-out entries named in a one-line message
_MERGE_AGAIN = "run ngramtool merge again"


def default_open_shards() -> int:
    """How many shards a MergedIndex keeps open: as many as an eighth of this process's limit of
    open files can hold, between 2 and MAX_OPEN_SHARDS (so several datasets, the DataLoader and
    the files a program opens itself still fit)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_OPEN_SHARDS
    return max(2, min(MAX_OPEN_SHARDS, soft // 8 // FILES_PER_SHARD))


def _manifest_checksum(shard: Path, algorithm: str) -> str:
    return bytes_checksum((shard / MANIFEST).read_bytes(), algorithm)


def _shard_paths(directory: Path) -> list[Path]:
    """The directories in ``directory`` that hold a manifest, by name; hidden leftovers are skipped."""
    return sorted(p for p in directory.iterdir() if not p.name.startswith(".") and (p / MANIFEST).is_file())


def _leftover_reason(entry: Path) -> str | None:
    """Why a hidden entry is an unfinished shard, or None when it is nothing to report.

    Writers build ``NAME`` as ``.NAME.XXXX.partial`` and set an old ``NAME`` aside as
    ``.NAME.replaced-PID`` while replacing it; either is left out only when ``NAME`` itself does
    not exist (otherwise the finished ``NAME`` is the shard, and the leftover is garbage).
    """
    leftover = unfinished_destination(entry.name) if entry.is_dir() else None
    if leftover is None:
        return None
    final, how = leftover
    if (entry.parent / final).exists():
        return None
    owner = owner_of(entry.parent / final)
    if owner is not None:
        return f"unfinished: {final} is being written by {owner.describe()}"
    if how == "partial":
        return f"unfinished: {final} does not exist; a hash run was killed while writing it, or still is"
    return f"set aside while being replaced: {final} does not exist; the replacement never finished"


def survey_shards(directory: Path) -> tuple[list[tuple[Path, dict[str, Any]]], list[dict[str, str]]]:
    """(the finished index shards in ``directory`` by name with their manifests, what is there but
    is not one).

    Left out, each as ``{"path", "reason"}``: unfinished shards (see :func:`_leftover_reason`) and
    directories that are not readable indexes (no manifest, a damaged manifest, damaged arrays).
    ``dataset.json``, the shared ``vocab/`` folder, plain files and other hidden entries are
    neither.
    """
    shards, left_out = [], []
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith("."):
            reason = _leftover_reason(entry)
            if reason is not None:
                left_out.append({"path": entry.name, "reason": reason})
            continue
        if not entry.is_dir() or entry.name == VOCAB_STORE:
            continue
        if not (entry / MANIFEST).is_file():
            left_out.append({"path": entry.name, "reason": f"no {MANIFEST}: not a finished index"})
            continue
        try:
            manifest = Index(entry).manifest  # opened, checked and closed again
        except NgramToolError as exc:
            left_out.append({"path": entry.name, "reason": str(exc)})
            continue
        shards.append((entry, manifest))
    return shards, left_out


def _left_out_line(left_out: list[dict[str, str]]) -> str:
    """``a (reason); b (reason); and 3 more``."""
    named = "; ".join(f"{entry['path']} ({entry['reason']})" for entry in left_out[:_SHOWN])
    return named + (f"; and {len(left_out) - _SHOWN} more" if len(left_out) > _SHOWN else "")


def merge_shards(
    directory: Path, *, allow_missing: bool = False, checksum: str = DEFAULT_CHECKSUM
) -> dict[str, Any]:
    """Write ``directory/dataset.json`` over the index shards inside it (sorted by name).

    Entries that are not finished shards (see :func:`survey_shards`) are refused with an error
    naming them; with ``allow_missing`` the finished shards are merged without them and the
    dataset records them under ``left_out``. Each shard's manifest is recorded with its
    ``checksum`` (``"xxh3-128"`` or ``"sha256"``).

    Args:
        directory: the directory that holds the shards (``ngramtool hash ... -o DIR/``).
        allow_missing: merge the finished shards and record the other entries as left out,
            instead of refusing.
        checksum: the algorithm of each shard's manifest checksum in ``dataset.json``,
            ``"xxh3-128"`` (default) or ``"sha256"``.

    Returns:
        What was written to ``dataset.json``.

    Examples:
        >>> import ngramtool
        >>> from pathlib import Path
        >>> for i in range(2):
        ...     _ = Path(f"part{i}.txt").write_text(f"part {i} of a corpus " * 40)
        >>> byte_ids = ngramtool.NgramHashMapping.build("bytes")
        >>> replace = ngramtool.OutputOptions(force=True)
        >>> shards = ngramtool.hash_files("part*.txt", "parts/", mapping=byte_ids, outputs=replace)
        >>> dataset = ngramtool.merge_shards("parts")
        >>> dataset["num_shards"], dataset["num_tokens"], len(ngramtool.open_index("parts"))
        (2, 1520, 1520)
    """
    directory = Path(directory)
    check_algorithm(checksum)
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory of index shards")
    shards, left_out = survey_shards(directory)
    if left_out and not allow_missing:
        raise NgramToolError(
            f"{directory}: {plural(len(left_out), 'entry', 'entries')} would be left out of the dataset: "
            f"{_left_out_line(left_out)}; finish them (hash the inputs into {directory}/ again with "
            "`resume=True`) or remove them, or pass `allow_missing=True` to merge the finished shards "
            "without them"
        )
    if not shards:
        raise UsageError(f"{directory} holds no finished index shards (directories with {MANIFEST})")
    records, first = [], None
    for path, manifest in shards:
        if first is None:
            first = manifest
        differs = settings_difference(first, manifest)
        if differs is not None:
            raise NgramToolError(
                f"{path.name} has another {differs.setting} than {shards[0][0].name} ({differs.theirs} "
                f"vs {differs.ours}): a dataset's shards must be made the same way; rehash the odd shards"
            )
        records.append(
            {
                "path": path.name,
                "num_tokens": manifest["num_tokens"],
                "num_documents": manifest["num_documents"],
                **checksum_record("manifest", checksum, _manifest_checksum(path, checksum)),
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
    if left_out:
        dataset["left_out"] = left_out
    write_json_durably(directory / DATASET, dataset)
    return dataset


class ConcatArray(RangeArray):
    """Read-only concatenation along axis 0 of arrays fetched on demand; indexing returns numpy arrays.

    ``part(i)`` returns the i-th array (a shard's memory map), whose length is ``lengths[i]``; it
    is called only for the parts a read touches. Indexed as :class:`RangeArray` says.
    """

    what = "merged dataset's array"

    def __init__(
        self,
        lengths: Sequence[int],
        part: Callable[[int], np.ndarray],
        inner_shape: tuple[int, ...],
        dtype: np.dtype,
    ) -> None:
        self.part = part
        self.starts = np.cumsum([0, *lengths]).tolist()
        super().__init__((self.starts[-1], *inner_shape), dtype)

    def _range(self, lo: int, hi: int) -> np.ndarray:
        """Positions [lo, hi): a view of one part's array, or a copy gathered from several (each
        piece is copied at once, so a read over many parts never holds their maps all at once)."""
        part, last = bisect_right(self.starts, lo) - 1, bisect_right(self.starts, hi - 1) - 1
        if part == last:
            return self.part(part)[lo - self.starts[part] : hi - self.starts[part]]
        out = np.empty((hi - lo, *self.shape[1:]), dtype=self.dtype)
        for index in range(part, last + 1):
            base = self.starts[index]
            start, end = max(lo, base), min(hi, self.starts[index + 1])
            if end > start:  # empty parts are never opened
                out[start - lo : end - lo] = self.part(index)[start - base : end - base]
        return out


class ShardSequence(Sequence[Index]):
    """The shards of a :class:`MergedIndex` in order, each opened when it is taken (int indices)."""

    def __init__(self, dataset: MergedIndex) -> None:
        self._dataset = dataset

    def __len__(self) -> int:
        return len(self._dataset.manifest["shards"])

    def __getitem__(self, i: int) -> Index:  # type: ignore[override]
        i = operator.index(i)
        if not -len(self) <= i < len(self):
            raise IndexError(f"shard {i} is outside the {len(self)} shards")
        return self._dataset.shard(i % len(self))

    def __iter__(self) -> Iterator[Index]:
        return (self[i] for i in range(len(self)))


class MergedIndex:
    """Several index shards read as one: the same attributes as :class:`Index`.

    ``tokens``, ``checked_tokens`` and ``rows`` are :class:`ConcatArray` views (slices are read
    from the shards' memory maps); ``doc_offsets`` is global (read from every shard on first
    use); ``shards`` are the member indexes, opened when taken. Opening the dataset checks
    ``dataset.json`` and that the directory holds exactly the listed shards (one listing, no
    shard is read); a shard is opened when it is first read, after checking that its manifest
    is the one merged. At most ``max_open_shards`` shards stay open (the least recently read are
    closed; default :func:`default_open_shards`), so a dataset of any number of shards fits a
    process's limit of open files and of memory maps. Each shard was hashed as its own stream,
    so the first N-1 positions of a shard see the pad, not the end of the shard before it.
    """

    kind = "dataset"

    def __init__(
        self, path: Path, *, max_open_shards: int | None = None, rows_factory: RowsFactory | None = None
    ) -> None:
        self.path = Path(path)
        self.rows_factory = rows_factory
        self.manifest = read_dataset(self.path)
        self.max_open_shards = max(1, max_open_shards or default_open_shards())
        self._open: OrderedDict[int, Index] = OrderedDict()
        records = self.manifest["shards"]
        present = {p.name for p in _shard_paths(self.path)}
        missing = [record["path"] for record in records if record["path"] not in present]
        if missing:
            raise NgramToolError(
                f"{self.path / missing[0]}, listed in {DATASET}, is missing"
                f"{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}; {_MERGE_AGAIN}"
            )
        left_out = {entry["path"] for entry in self.manifest.get("left_out", [])}
        unlisted = sorted(present - {record["path"] for record in records} - left_out)
        if unlisted:
            raise NgramToolError(
                f"{self.path} holds shards that dataset.json does not list ({', '.join(unlisted[:3])}); "
                + _MERGE_AGAIN
            )
        self.spec: HashSpec = spec_from_record(self.manifest["spec"])
        lengths = [record["num_tokens"] for record in records]
        self.shards = ShardSequence(self)
        self.tokens = ConcatArray(lengths, lambda i: self.shard(i).tokens, (), np.dtype("<u4"))
        self.checked_tokens = ConcatArray(
            lengths, lambda i: self.shard(i).checked_tokens, (), np.dtype("<u4")
        )
        self.rows = ConcatArray(
            lengths,
            lambda i: self.shard(i).rows,
            (self.spec.num_layers, self.spec.num_columns),
            self.spec.row_dtype.newbyteorder("<"),
        )

    def shard(self, i: int) -> Index:
        """Shard ``i``, opened on first use and kept among the ``max_open_shards`` last used.

        Raises NgramToolError when the shard is gone or is not the one merged (its manifest changed).
        """
        index = self._open.get(i)
        if index is not None:
            self._open.move_to_end(i)
            return index
        record = self.manifest["shards"][i]
        shard_path = self.path / record["path"]
        try:
            algorithm, digest = recorded(record, "manifest")
            unchanged = _manifest_checksum(shard_path, algorithm) == digest
        except OSError:
            raise NgramToolError(f"{shard_path}, listed in {DATASET}, is missing; {_MERGE_AGAIN}") from None
        if not unchanged:
            raise NgramToolError(f"{shard_path} changed since the dataset was merged; {_MERGE_AGAIN}")
        index = Index(shard_path, rows_factory=self.rows_factory)
        if (len(index), index.manifest["num_documents"]) != (record["num_tokens"], record["num_documents"]):
            raise NgramToolError(
                f"{self.path / DATASET} says {record['path']} holds {record['num_tokens']} tokens in "
                f"{record['num_documents']} documents, but it holds {len(index)} in "
                f"{index.manifest['num_documents']}; {_MERGE_AGAIN}"
            )
        self._open[i] = index
        if len(self._open) > self.max_open_shards:
            self._open.popitem(last=False)
        return index

    @cached_property
    def lut(self) -> np.ndarray:
        """int64 [V], the lookup table the shards share (read once, held in memory)."""
        return np.array(self.shard(0).lut)

    @cached_property
    def doc_offsets(self) -> np.ndarray:
        """int64 [D+1], the document offsets of the whole dataset (read from every shard once)."""
        offsets = [np.zeros(1, dtype=np.int64)]
        base = 0
        for shard in self.shards:
            offsets.append(np.asarray(shard.doc_offsets[1:]) + base)
            base += len(shard)
        return np.concatenate(offsets)

    def __repr__(self) -> str:
        shards = f"shards={len(self.manifest['shards'])}"
        return index_repr(type(self).__name__, self.path, self.manifest, self.spec, shards)

    @property
    def stores_rows(self) -> bool:
        """Whether the shards store their rows rather than compute them from their tokens."""
        return row_storage(self.manifest) == "stored"

    def __len__(self) -> int:
        return len(self.tokens)

    def window(self, start: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, rows) of positions [start, start+length), across shard boundaries."""
        if start < 0 or length < 0 or start + length > len(self):
            raise NgramToolError(f"window [{start}, {start + length}) is outside the {len(self)} tokens")
        return self.tokens[start : start + length], self.rows[start : start + length]


def read_dataset(path: Path) -> dict[str, Any]:
    """Parse ``dataset.json`` and check it against the schema and its own totals."""
    source = Path(path) / DATASET
    dataset = load_json_document(
        source,
        schema=DATASET_SCHEMA,
        format_name=FORMAT_NAME,
        major=FORMAT_MAJOR,
        fix=_MERGE_AGAIN,
    )
    shards = dataset["shards"]
    totals = (len(shards), sum(s["num_tokens"] for s in shards), sum(s["num_documents"] for s in shards))
    if totals != (dataset["num_shards"], dataset["num_tokens"], dataset["num_documents"]):
        raise NgramToolError(
            f"{source} is damaged: it counts {dataset['num_shards']} shards, {dataset['num_tokens']} tokens "
            f"and {dataset['num_documents']} documents but its shards add up to {totals[0]}, {totals[1]} and "
            f"{totals[2]}; {_MERGE_AGAIN}"
        )
    for record in shards:
        if record["path"] in ("", ".", "..") or Path(record["path"]).name != record["path"]:
            raise NgramToolError(
                f"{source} is damaged: shard {record['path']!r} is not a directory name inside {path}"
            )
    return dataset
