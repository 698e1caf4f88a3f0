"""Where the distinct n-grams of one order live: sorted keys with occurrence counts, in memory or in
a scratch file, read back block by block.

The compiled counter (:class:`ngramtool.analysis.counting.NgramTypeCounter`) sorts each full
buffer of keys into a run of distinct keys with counts and appends it to a scratch file
(:class:`SortedRuns`); at the end the runs are merged, k ways at once, into one sorted file
(:class:`FileStore`). Memory is the buffer, one window per run and one output block, whatever
the corpus: the distinct n-grams themselves stay on disk, and the analysis reads them in blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np

from .scratch import ScratchFile

RUN_WINDOW = 1 << 18  # entries of each run held while merging (3-4 MB: 8-byte key, 4- or 8-byte count)
MERGE_WAYS = 16  # runs merged at once (more: merged in groups first)
MERGED_BLOCK = 1 << 20  # merged entries written at a time (16 MB)
RUN_COUNT = np.uint32  # a run's counts: one buffer's occurrences, fewer than 2^32
WIDEN_BLOCK = 1 << 20  # uint32 keys of a run widened to uint64 at a time as they are spilled (8 MB)
COUNT = np.int64  # the merged counts


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
    """Keys and counts in scratch files: ``size`` uint64 keys at ``keys_at`` of ``keys_file``, their
    counts (of ``count_dtype``) at ``counts_at`` of ``counts_file`` (the same file or another)."""

    def __init__(
        self,
        keys_file: ScratchFile,
        keys_at: int,
        counts_file: ScratchFile,
        counts_at: int,
        *,
        size: int,
        occurrences: int,
        count_dtype: type = COUNT,
    ) -> None:
        self._keys_file, self._keys_at = keys_file, keys_at
        self._counts_file, self._counts_at = counts_file, counts_at
        self._count_dtype = np.dtype(count_dtype)
        self.size = size
        self.occurrences = occurrences

    @property
    def count_dtype(self) -> np.dtype:
        """The dtype of the counts on disk."""
        return self._count_dtype

    def read_keys(self, lo: int, hi: int) -> np.ndarray:
        return self._keys_file.read(np.uint64, hi - lo, self._keys_at + 8 * lo)

    def read_counts(self, lo: int, hi: int) -> np.ndarray:
        at = self._counts_at + lo * self._count_dtype.itemsize
        return self._counts_file.read(self._count_dtype, hi - lo, at).astype(COUNT, copy=False)

    def read_into(self, keys: np.ndarray, counts: np.ndarray, lo: int) -> None:
        """Fill ``keys`` and ``counts`` with the entries from ``lo`` on."""
        self._keys_file.read_into(keys, self._keys_at + 8 * lo)
        at = self._counts_at + lo * self._count_dtype.itemsize
        if counts.dtype == self._count_dtype:
            self._counts_file.read_into(counts, at)
        else:
            counts[:] = self._counts_file.read(self._count_dtype, counts.shape[0], at)

    @property
    def files(self) -> tuple[ScratchFile, ScratchFile]:
        """The files of the keys and of the counts (runs of one level share one)."""
        return self._keys_file, self._counts_file


class SortedRuns:
    """Runs of sorted distinct uint64 keys with counts, spilled to a scratch file as they come and
    merged into one sorted :class:`FileStore` at the end (``kernels``:
    :mod:`ngramtool.analysis.counting_kernels`).

    The merge takes up to ``MERGE_WAYS`` runs at once, one window of ``RUN_WINDOW`` entries each;
    more runs (a corpus many times the buffer) are merged in groups first, level by level, so
    memory stays the same whatever the number of runs.
    """

    def __init__(self, kernels: ModuleType) -> None:
        self._kernels = kernels
        self._file: ScratchFile | None = None
        self._runs: list[FileStore] = []
        self.occurrences = 0

    def add(self, keys: np.ndarray, counts: np.ndarray) -> None:
        """Spill one run (``keys`` sorted and distinct, uint64 or uint32; ``counts`` uint32). The
        file holds uint64 keys: uint32 ones are widened a block at a time."""
        if not keys.shape[0]:
            return
        if self._file is None:
            self._file = ScratchFile()
        keys_at = self._file.size
        for lo in range(0, keys.shape[0], WIDEN_BLOCK):
            self._file.append(keys[lo : lo + WIDEN_BLOCK].astype(np.uint64, copy=False))
        counts_at = self._file.append(counts)
        occurrences = int(counts.sum(dtype=np.int64))
        self._runs.append(
            FileStore(
                self._file,
                keys_at,
                self._file,
                counts_at,
                size=int(keys.shape[0]),
                occurrences=occurrences,
                count_dtype=RUN_COUNT,
            )
        )
        self.occurrences += occurrences

    def merged(self) -> TypeStore:
        """Every run merged (equal keys once, counts added); each level's files are closed once
        the next holds their entries."""
        if not self._runs:
            return ArrayStore(np.empty(0, dtype=np.uint64), np.empty(0, dtype=COUNT))
        runs = self._runs
        while len(runs) > 1:
            merged = [self._merge(runs[i : i + MERGE_WAYS]) for i in range(0, len(runs), MERGE_WAYS)]
            kept = {id(file) for run in merged for file in run.files}  # a group of one stays as it is
            for file in {id(file): file for run in runs for file in run.files}.values():
                if id(file) not in kept:
                    file.close()
            runs = merged
        return runs[0]

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
            count = min(window, runs[way].size - taken[way])
            runs[way].read_into(keys[way, :count], counts[way, :count], taken[way])
            taken[way] += count
            positions[way], fills[way], more[way] = 0, count, taken[way] < runs[way].size

        for way in range(ways):
            refill(way)
        merged_keys, merged_counts = ScratchFile(), ScratchFile()
        size = 0
        block = min(MERGED_BLOCK, sum(run.size for run in runs))
        block_keys = np.empty(block, dtype=np.uint64)
        block_counts = np.empty(block, dtype=COUNT)
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
            merged_keys.append(block_keys[:kept])
            merged_counts.append(block_counts[:kept])
            size += kept
            if done:
                break
            block_keys[0], block_counts[0] = block_keys[kept], block_counts[kept]
            filled = 1
        occurrences = sum(run.occurrences for run in runs)
        return FileStore(merged_keys, 0, merged_counts, 0, size=size, occurrences=occurrences)
