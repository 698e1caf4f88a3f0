"""How many values of a long stream equal another value of the stream, exactly, in bounded memory.

The collision analysis asks it of the n-grams that share a row on every head: how many of them
are indistinguishable (the same row on every head as some other n-gram), a question about equal
mixes or equal packed rows (:mod:`ngramtool.analysis.reports`). Up to ``BUCKET_VALUES`` values
are sorted in memory. A longer stream is cut by value range into buckets as it arrives (each
block sorted, its slices appended to a scratch file); equal values fall in the same bucket, so
each bucket is then sorted and counted on its own.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .scratch import ScratchFile

BUCKET_VALUES = 1 << 22  # values per bucket aimed at (32 MB of uint64)


class RepeatCounter:
    """Counts the values that occur more than once among those added (each such value counts
    every time it occurs).

    Args:
        bound: every value added lies in [0, bound).
        expected: at most how many values will be added (sets the number of buckets).
    """

    def __init__(self, bound: int, expected: int) -> None:
        buckets = 1 << max(0, math.ceil(math.log2(max(expected, 1) / BUCKET_VALUES)))
        bits = max(bound - 1, 1).bit_length()
        self._shift = max(0, bits - buckets.bit_length() + 1)
        self._edges = (
            (np.arange(1, buckets, dtype=np.uint64) << np.uint64(self._shift)) if buckets > 1 else None
        )
        self._held: list[np.ndarray] = []
        self._file: ScratchFile | None = None
        self._segments: list[list[tuple[int, int]]] = [[] for _ in range(buckets)]

    def add(self, values: np.ndarray) -> None:
        """Add uint64 values."""
        if not values.shape[0]:
            return
        if self._edges is None:
            self._held.append(values.astype(np.uint64, copy=True))
            return
        ordered = np.sort(values.astype(np.uint64, copy=False))
        cuts = [0, *np.searchsorted(ordered, self._edges).tolist(), ordered.shape[0]]
        if self._file is None:
            self._file = ScratchFile()
        for bucket, (lo, hi) in enumerate(itertools.pairwise(cuts)):
            if hi > lo:
                self._segments[bucket].append((self._file.append(ordered[lo:hi]), hi - lo))

    def count(self) -> int:
        """How many of the values added equal another one (call once, after the last add)."""
        if self._edges is None:
            return _repeated(np.concatenate(self._held)) if self._held else 0
        total = 0
        for segments in self._segments:
            if not segments:
                continue
            bucket = np.empty(sum(size for _, size in segments), dtype=np.uint64)
            at = 0
            for offset, size in segments:
                self._file.read_into(bucket[at : at + size], offset)  # type: ignore[union-attr]
                at += size
            total += _repeated(bucket)
        if self._file is not None:
            self._file.close()
        return total


def _repeated(values: np.ndarray) -> int:
    """How many entries of ``values`` (sorted here, in place) equal another entry."""
    values.sort()
    same = np.zeros(values.shape[0] + 1, dtype=bool)
    same[1:-1] = values[1:] == values[:-1]
    return int(np.count_nonzero(same[:-1] | same[1:]))
