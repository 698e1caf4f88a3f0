"""Where the distinct n-grams of one order live: sorted keys with occurrence counts, in memory or in
a scratch file, read back block by block.

The compiled counter (:class:`ngramtool.analysis.counting.NgramTypeCounter`) sorts each full
buffer of keys into a run of distinct keys with counts and appends it to a scratch file
(:class:`SortedRuns`); at the end the runs are merged, k ways at once, into one sorted file
(:class:`FileStore`). Memory is the buffer, one window per run and one output block, whatever
the corpus: the distinct n-grams themselves stay on disk, and the analysis reads them in blocks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from types import ModuleType
from typing import Any

import numpy as np

from .scratch import ScratchFile

RUN_WINDOW = 1 << 18  # entries of each run held while merging (3-4 MB: 8-byte key, 4- or 8-byte count)
MERGE_WAYS = 16  # runs merged at once (more: merged in groups first)
MERGED_BLOCK = 1 << 20  # merged entries written at a time (16 MB)
RUN_COUNT = np.uint32  # a run's counts: one buffer's occurrences, fewer than 2^32
COUNT = np.int64  # the counts as read (on disk: uint32 while an order's occurrences fit it)
SPLIT_MIN = 1 << 20  # entries in an order's runs from which threads merge it a key range each
SPLIT_SAMPLES = 64  # keys read from each run to choose where the key ranges meet


class TypeStore:
    """Sorted distinct keys and their int64 occurrence counts (``size`` of them)."""

    size: int
    occurrences: int

    def read(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """(keys, int64 counts) of entries lo..hi, as new arrays."""
        return self.read_keys(lo, hi), self.read_counts(lo, hi)

    def read_keys(self, lo: int, hi: int) -> np.ndarray:
        """The keys of entries lo..hi, as a new array."""
        raise NotImplementedError

    def read_counts(self, lo: int, hi: int) -> np.ndarray:
        """The int64 counts of entries lo..hi, as a new array."""
        raise NotImplementedError

    def blocks(self, block: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(keys, counts) of ``block`` entries at a time, in order."""
        return self._in_blocks(self.read, block)

    def key_blocks(self, block: int) -> Iterator[np.ndarray]:
        """The keys of ``block`` entries at a time, in order (the counts are not read)."""
        return self._in_blocks(self.read_keys, block)

    def count_blocks(self, block: int) -> Iterator[np.ndarray]:
        """The counts of ``block`` entries at a time, in order (the keys are not read)."""
        return self._in_blocks(self.read_counts, block)

    def _in_blocks(self, read: Callable[[int, int], Any], block: int) -> Iterator[Any]:
        """``read(lo, hi)`` over consecutive ranges of ``block`` entries."""
        for lo in range(0, self.size, block):
            yield read(lo, min(lo + block, self.size))


class ArrayStore(TypeStore):
    """Keys and counts held in memory."""

    def __init__(self, keys: np.ndarray, counts: np.ndarray) -> None:
        self.keys = keys
        self.counts = np.asarray(counts, dtype=COUNT)
        self.size = int(keys.shape[0])
        self.occurrences = int(self.counts.sum())

    def read_keys(self, lo: int, hi: int) -> np.ndarray:
        return self.keys[lo:hi].copy()

    def read_counts(self, lo: int, hi: int) -> np.ndarray:
        return self.counts[lo:hi].copy()


class FileStore(TypeStore):
    """Keys and counts in scratch files: ``size`` keys (of ``key_dtype``, read as uint64) at
    ``keys_at`` of ``keys_file``, their counts (of ``count_dtype``, read as int64) at ``counts_at``
    of ``counts_file`` (the same file or another). Fewer bytes on disk are fewer fresh pages to
    write, which is most of what spilling costs."""

    def __init__(
        self,
        keys_file: ScratchFile,
        keys_at: int,
        counts_file: ScratchFile,
        counts_at: int,
        *,
        size: int,
        occurrences: int,
        count_dtype: type | np.dtype = COUNT,
        key_dtype: type | np.dtype = np.uint64,
    ) -> None:
        self._keys_file, self._keys_at = keys_file, keys_at
        self._counts_file, self._counts_at = counts_file, counts_at
        self._count_dtype = np.dtype(count_dtype)
        self._key_dtype = np.dtype(key_dtype)
        self.size = size
        self.occurrences = occurrences

    @property
    def count_dtype(self) -> np.dtype:
        """The dtype of the counts on disk."""
        return self._count_dtype

    def _key_at(self, entry: int) -> int:
        """The byte offset of entry ``entry``'s key in the keys file."""
        return self._keys_at + entry * self._key_dtype.itemsize

    def _count_at(self, entry: int) -> int:
        """The byte offset of entry ``entry``'s count in the counts file."""
        return self._counts_at + entry * self._count_dtype.itemsize

    def read_keys(self, lo: int, hi: int) -> np.ndarray:
        keys = self._keys_file.read(self._key_dtype, hi - lo, self._key_at(lo))
        return keys.astype(np.uint64, copy=False)

    def read_counts(self, lo: int, hi: int) -> np.ndarray:
        return self._counts_file.read(self._count_dtype, hi - lo, self._count_at(lo)).astype(
            COUNT, copy=False
        )

    def read_into(self, keys: np.ndarray, counts: np.ndarray, lo: int) -> None:
        """Fill ``keys`` and ``counts`` with the entries from ``lo`` on."""
        _read_as(self._keys_file, keys, self._key_dtype, self._key_at(lo))
        _read_as(self._counts_file, counts, self._count_dtype, self._count_at(lo))

    def discard(self, lo: int, hi: int) -> None:
        """Give back the disk pages of entries lo..hi, read for the last time."""
        self._keys_file.discard(self._key_at(lo), self._key_at(hi) - self._key_at(lo))
        self._counts_file.discard(self._count_at(lo), self._count_at(hi) - self._count_at(lo))

    @property
    def files(self) -> tuple[ScratchFile, ScratchFile]:
        """The files of the keys and of the counts (runs of one level share one)."""
        return self._keys_file, self._counts_file

    def search(self, key: int) -> int:
        """The position of the first key at or above ``key`` (binary search, a key read a step)."""
        lo, hi = 0, self.size
        while lo < hi:
            mid = (lo + hi) // 2
            if int(self.read_keys(mid, mid + 1)[0]) < key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def part(self, lo: int, hi: int) -> FileStore:
        """Entries lo..hi as a store of their own (the same files; occurrences unknown, -1, until
        :meth:`counted`)."""
        return FileStore(
            self._keys_file,
            self._key_at(lo),
            self._counts_file,
            self._count_at(lo),
            size=hi - lo,
            occurrences=-1,
            count_dtype=self._count_dtype,
            key_dtype=self._key_dtype,
        )

    def counted(self) -> FileStore:
        """This store, its occurrences summed from the counts where unknown."""
        if self.occurrences < 0:
            self.occurrences = sum(int(counts.sum()) for counts in self.count_blocks(MERGED_BLOCK))
        return self


def _read_as(file: ScratchFile, out: np.ndarray, dtype: np.dtype, offset: int) -> None:
    """Fill ``out`` with the items of ``dtype`` at ``offset`` (converted where ``out`` differs)."""
    if out.dtype == dtype:
        file.read_into(out, offset)
    else:
        out[:] = file.read(dtype, out.shape[0], offset)


class ChainedStore(TypeStore):
    """Stores one after the other, as one: every key of a part below every key of the next."""

    def __init__(self, parts: list[TypeStore]) -> None:
        self.parts = parts
        self._starts = np.cumsum([0] + [part.size for part in parts])
        self.size = int(self._starts[-1])
        self.occurrences = sum(part.occurrences for part in parts)

    def read_keys(self, lo: int, hi: int) -> np.ndarray:
        return self._gather(lambda part, a, b: part.read_keys(a, b), lo, hi, np.uint64)

    def read_counts(self, lo: int, hi: int) -> np.ndarray:
        return self._gather(lambda part, a, b: part.read_counts(a, b), lo, hi, COUNT)

    def _gather(
        self, read: Callable[[TypeStore, int, int], np.ndarray], lo: int, hi: int, dtype: type
    ) -> np.ndarray:
        """``read`` of each part's share of entries lo..hi, concatenated."""
        pieces = [np.empty(0, dtype=dtype)]
        for part, start in zip(self.parts, self._starts[:-1].tolist(), strict=True):
            a, b = max(lo - start, 0), min(hi - start, part.size)
            if a < b:
                pieces.append(read(part, a, b))
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)


class SortedRuns:
    """Runs of sorted distinct keys (of ``key_dtype``: uint32 where an order's keys fit it, else
    uint64) with counts, spilled to a scratch file as they come and merged into one sorted store
    at the end (``kernels``: :mod:`ngramtool.analysis.counting_kernels`). The merged counts are
    uint32 on disk while the order's occurrences fit it.

    Threads may add runs at once. The merge takes up to ``MERGE_WAYS`` runs at once, one window
    of ``RUN_WINDOW`` entries each; more runs (a corpus many times the buffer) are merged in
    groups first, level by level, so memory stays the same whatever the number of runs. Given
    threads, each merges a key range of every run, and the ranges' stores make one
    (:class:`ChainedStore`).
    """

    def __init__(self, kernels: ModuleType, key_dtype: type | np.dtype = np.uint64) -> None:
        self._kernels = kernels
        self._key_dtype = np.dtype(key_dtype)
        self._file: ScratchFile | None = None
        self._runs: list[FileStore] = []
        self._lock = threading.Lock()
        self.occurrences = 0

    def add(self, keys: np.ndarray, counts: np.ndarray) -> None:
        """Spill one run (``keys`` sorted and distinct, of the key dtype; ``counts`` uint32)."""
        size = int(keys.shape[0])
        if not size:
            return
        if keys.dtype != self._key_dtype or counts.dtype != RUN_COUNT:
            raise TypeError(
                f"a run holds {self._key_dtype} keys and uint32 counts, not {keys.dtype}, {counts.dtype}"
            )
        with self._lock:
            if self._file is None:
                self._file = ScratchFile()
            file = self._file
        keys_at = file.reserve(keys.nbytes + counts.nbytes)
        file.write_at(keys, keys_at)
        counts_at = keys_at + keys.nbytes
        file.write_at(counts, counts_at)
        occurrences = int(counts.sum(dtype=np.int64))
        run = FileStore(
            file,
            keys_at,
            file,
            counts_at,
            size=size,
            occurrences=occurrences,
            count_dtype=RUN_COUNT,
            key_dtype=self._key_dtype,
        )
        with self._lock:
            self._runs.append(run)
            self.occurrences += occurrences

    def merged(self, pool: Executor | None = None, parts: int = 1) -> TypeStore:
        """Every run merged (equal keys once, counts added); each level's files are closed once
        the next holds their entries. With ``pool`` and ``parts`` > 1 (and at least
        ``SPLIT_MIN`` entries), ``parts`` key ranges are merged on the pool's threads at once."""
        if not self._runs:
            return ArrayStore(np.empty(0, dtype=np.uint64), np.empty(0, dtype=COUNT))
        entries = sum(run.size for run in self._runs)
        if pool is None or parts < 2 or len(self._runs) < 2 or entries < SPLIT_MIN:
            return self._levels(self._runs, shared=set())
        ranges = self._key_ranges(parts)
        shared = {id(self._file)}  # the parts read it: closed once every part is merged
        futures = [pool.submit(self._levels, runs, shared) for runs in ranges if runs]
        stores = [future.result() for future in futures]
        if not any(id(file) in shared for store in stores for file in store.files):
            self._file.close()  # type: ignore[union-attr]
        return ChainedStore(stores)  # type: ignore[arg-type]

    def _key_ranges(self, parts: int) -> list[list[FileStore]]:
        """Each run cut where ``parts`` key ranges meet (chosen from keys sampled evenly from every
        run): per range, the runs' entries in it."""
        samples = []
        for run in self._runs:
            for at in np.linspace(0, run.size - 1, min(SPLIT_SAMPLES, run.size)).astype(np.int64).tolist():
                samples.append(int(run.read_keys(at, at + 1)[0]))
        samples.sort()
        bounds = [samples[len(samples) * j // parts] for j in range(1, parts)]
        cuts = [[0, *(run.search(bound) for bound in bounds), run.size] for run in self._runs]
        return [
            [
                run.part(cut[j], cut[j + 1])
                for run, cut in zip(self._runs, cuts, strict=True)
                if cut[j] < cut[j + 1]
            ]
            for j in range(parts)
        ]

    def _levels(self, runs: list[FileStore], shared: set[int]) -> FileStore:
        """``runs`` merged level by level (``MERGE_WAYS`` at a time); files of a level are closed
        once the next holds their entries, except the ``shared`` ones (ids)."""
        while len(runs) > 1:
            merged = [self._merge(runs[i : i + MERGE_WAYS]) for i in range(0, len(runs), MERGE_WAYS)]
            kept = {
                id(file) for run in merged for file in run.files
            } | shared  # a group of one stays as it is
            for file in {id(file): file for run in runs for file in run.files}.values():
                if id(file) not in kept:
                    file.close()
            runs = merged
        return runs[0].counted()

    def _merge(self, runs: list[FileStore]) -> FileStore:
        """The k-way merge of ``runs``: one window per run, refilled from its file when the kernel
        empties it (a run with more on disk must be refilled before the merge can go on)."""
        if len(runs) == 1:
            return runs[0]
        ways = len(runs)
        window = min(RUN_WINDOW, max(run.size for run in runs))
        keys = np.empty((ways, window), dtype=np.uint64)
        alike = len({run.count_dtype for run in runs}) == 1  # else a group of one left from a level
        counts = np.empty((ways, window), dtype=runs[0].count_dtype if alike else COUNT)
        positions = np.zeros(ways, dtype=np.int64)
        fills = np.zeros(ways, dtype=np.int64)
        more = np.ones(ways, dtype=np.bool_)
        taken = [0] * ways

        def refill(way: int) -> None:
            # The window just merged is read for the last time: its pages go back to the system,
            # and the merged entries' writes take them (fresh pages cost several times more).
            runs[way].discard(taken[way] - fills[way], taken[way])
            count = min(window, runs[way].size - taken[way])
            runs[way].read_into(keys[way, :count], counts[way, :count], taken[way])
            taken[way] += count
            positions[way], fills[way], more[way] = 0, count, taken[way] < runs[way].size

        for way in range(ways):
            refill(way)
        merged_keys, merged_counts = ScratchFile(), ScratchFile()
        size = occurrences = 0
        block = min(MERGED_BLOCK, sum(run.size for run in runs))
        block_keys = np.empty(block, dtype=np.uint64)
        block_counts = np.empty(block, dtype=COUNT)
        count_dtype = RUN_COUNT if self.occurrences <= np.iinfo(RUN_COUNT).max else COUNT
        stored_keys = np.empty(block, dtype=self._key_dtype)  # what is written: as few bytes as fit
        stored_counts = np.empty(block, dtype=count_dtype)
        filled = 0
        while True:
            filled, status = self._kernels.merge_windows(
                keys, counts, positions, fills, more, block_keys, block_counts, filled
            )
            if status >= 0:
                refill(status)
                continue
            done = status == -2
            # A full block keeps its last entry: the next run's first key may equal it.
            kept = filled if done else filled - 1
            stored_keys[:kept] = block_keys[:kept]
            stored_counts[:kept] = block_counts[:kept]
            merged_keys.append(stored_keys[:kept])
            merged_counts.append(stored_counts[:kept])
            size += kept
            occurrences += int(block_counts[:kept].sum())
            if done:
                break
            block_keys[0], block_counts[0] = block_keys[kept], block_counts[kept]
            filled = 1
        return FileStore(
            merged_keys,
            0,
            merged_counts,
            0,
            size=size,
            occurrences=occurrences,
            count_dtype=count_dtype,
            key_dtype=self._key_dtype,
        )
