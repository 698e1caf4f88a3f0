"""Exact counting of distinct n-grams: the windows the hash sees, packed into sortable keys and
counted with how often each occurred, in bounded memory.

Definitions and derivations are in docs/analysis.md. In short:

* The n-gram of order n at position t is the tuple of the last n canonical ids, padded with the
  spec's pad id before the stream start (and, with boundary ``reset``, before each document
  start): exactly the window the hash sees. Masked (negative) ids make no n-gram of their own and
  look like the pad id to their neighbours, as in :class:`ngramtool.hashing.hasher.NgramHasher`.
* Distinct n-grams are counted exactly by sorting packed keys: the n ids as digits base V' in one
  uint64 when V'^n <= 2^64, else in several uint64 words (a structured key, sorted with lexsort).
  Keys stream through a bounded buffer; each full buffer is sorted into a run of distinct keys
  and counts. With the compiled kernels the runs go to unlinked scratch files and are merged k
  ways at the end (:mod:`ngramtool.analysis.type_store`), so memory stays bounded whatever the
  corpus; without, numpy merges them in memory (memory follows the distinct n-grams).

What the hash's tables make of these n-grams is in :mod:`ngramtool.analysis.reports`.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from queue import SimpleQueue
from types import ModuleType

import numpy as np

from ..hashing.backends import use_numba
from ..hashing.backends.numpy_backend import lag_windows
from ..hashing.hasher import as_hashed, start_carried
from ..spec.hashspec import Boundary, HashSpec, check_boundary_policy
from ..util.errors import NgramToolError, UsageError
from .type_store import RUN_COUNT, ArrayStore, SortedRuns, TypeStore

# Keys buffered per order before they are sorted into a run. With the compiled kernels, which
# spill the runs, 32 MiB an order: 2^23 keys of an order whose keys fit 32 bits (2-grams while
# V' <= 65,536), 2^22 of one that needs 64. numpy merges the runs in memory, so fewer, larger
# merges pay: 2^25 keys (256 MiB).
FLUSH_BYTES = 1 << 25
NUMPY_FLUSH_KEYS = 1 << 25
_U32_SPAN = 1 << 32
COUNT_THREADS = 2  # most threads that sort and merge runs (each sort in flight holds a buffer)
MIX_BLOCK = 1 << 19  # distinct n-grams read (and, for the reports, decoded and mixed) at a time
_U64_SPAN = 1 << 64


@dataclass(frozen=True)
class KeyCodec:
    """Exact packing of n-gram windows into sortable keys (equal keys if and only if equal windows).

    The window's ids are digits base ``vocab_size``; ``ids_per_word`` of them share one uint64
    (``vocab_size ** ids_per_word <= 2**64``). One word gives a plain uint64 key; more give a
    structured key of uint64 fields ``w0, w1, ...`` that numpy compares field by field.
    """

    vocab_size: int
    order: int
    ids_per_word: int

    @property
    def words(self) -> int:
        """uint64 words per key."""
        return -(-self.order // self.ids_per_word)

    @property
    def narrow(self) -> bool:
        """Whether every key fits 32 bits (``vocab_size ** order <= 2**32``): the compiled
        counter buffers such keys as uint32, half the memory, and sorts them faster."""
        return self.vocab_size**self.order <= _U32_SPAN

    @property
    def dtype(self) -> np.dtype:
        """uint64 for one word, else a structured dtype of ``words`` uint64 fields."""
        if self.words == 1:
            return np.dtype(np.uint64)
        return np.dtype([(f"w{j}", "<u8") for j in range(self.words)])

    def _lags(self, word: int) -> range:
        return range(word * self.ids_per_word, min((word + 1) * self.ids_per_word, self.order))

    def encode(self, windows: np.ndarray) -> np.ndarray:
        """Keys of ``windows`` (int64 [T, >= order], column k = lag k, ids in [0, V'))."""
        ids = np.asarray(windows, dtype=np.int64)[:, : self.order].view(np.uint64)
        words = [self._pack(ids, j) for j in range(self.words)]
        if self.words == 1:
            return words[0]
        keys = np.empty(ids.shape[0], dtype=self.dtype)
        for j, word in enumerate(words):
            keys[f"w{j}"] = word
        return keys

    def _pack(self, ids: np.ndarray, word: int) -> np.ndarray:
        """sum_k ids[:, k] * V'^(k - first lag) over the word's lags (Horner, highest lag first)."""
        lags = self._lags(word)
        base = np.uint64(self.vocab_size)
        packed = ids[:, lags[-1]].copy()
        for k in reversed(lags[:-1]):
            packed *= base
            packed += ids[:, k]
        return packed

    def decode(self, keys: np.ndarray) -> np.ndarray:
        """The windows (int64 [U, order], column k = lag k) of ``keys``; inverse of :meth:`encode`."""
        out = np.empty((keys.shape[0], self.order), dtype=np.int64)
        base = np.uint64(self.vocab_size)
        for j in range(self.words):
            word = (keys if self.words == 1 else keys[f"w{j}"]).copy()
            for k in self._lags(j):
                out[:, k] = word % base
                word //= base
        return out

    def sort(self, keys: np.ndarray) -> np.ndarray:
        """``keys`` sorted (in place for uint64 keys)."""
        if self.words == 1:
            keys.sort()
            return keys
        return keys[np.lexsort([keys[name] for name in reversed(self.dtype.names)])]


def key_codec(vocab_size: int, order: int) -> KeyCodec:
    """The codec for n-grams of ``order`` over ``vocab_size`` ids: as few uint64 words as possible."""
    per_word = 1
    while per_word < order and vocab_size ** (per_word + 1) <= _U64_SPAN:
        per_word += 1
    return KeyCodec(vocab_size, order, per_word)


def buffer_dtype(codec: KeyCodec, kernels: ModuleType | None) -> np.dtype:
    """The dtype the counter buffers an order's keys in: uint32 where they fit and the compiled
    kernels count (:attr:`KeyCodec.narrow`), else the codec's."""
    return np.dtype(np.uint32) if kernels is not None and codec.narrow else codec.dtype


def _runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys, counts) of sorted keys."""
    size = sorted_keys.shape[0]
    if size == 0:
        return sorted_keys[:0].copy(), np.zeros(0, dtype=np.int64)
    change = np.empty(size, dtype=bool)
    change[0] = True
    change[1:] = sorted_keys[1:] != sorted_keys[:-1]
    starts = np.flatnonzero(change)
    counts = np.empty(starts.shape[0], dtype=np.int64)
    np.subtract(starts[1:], starts[:-1], out=counts[:-1])
    counts[-1] = size - starts[-1]
    return sorted_keys[starts], counts


def _merge(
    keys: np.ndarray, counts: np.ndarray, new_keys: np.ndarray, new_counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Merge two sorted runs of distinct keys with counts (``counts`` is updated in place)."""
    if keys.shape[0] == 0:
        return new_keys, new_counts
    pos = np.searchsorted(keys, new_keys)
    hit = np.zeros(new_keys.shape[0], dtype=bool)
    inside = np.flatnonzero(pos < keys.shape[0])
    hit[inside] = keys[pos[inside]] == new_keys[inside]
    counts[pos[hit]] += new_counts[hit]
    fresh = ~hit
    return np.insert(keys, pos[fresh], new_keys[fresh]), np.insert(counts, pos[fresh], new_counts[fresh])


def worker_threads(threads: int | None) -> int:
    """``threads``, or by default ``COUNT_THREADS`` or the cores this process may use, whichever is
    fewer: the threads that count and analyse distinct n-grams."""
    return threads or min(COUNT_THREADS, len(os.sched_getaffinity(0)))


class _RunSorter:
    """Sorts full buffers into spilled runs on worker threads, at most ``threads`` at once, while
    the counter fills other buffers; then merges the orders' runs a key range a thread.

    Each sort in flight holds its buffer and one of ``threads`` counts scratches (uint32,
    ``scratch_size`` each); a buffer comes back to its counter once sorted. An error in a sort is
    raised from the call that waits for it (the next flush past the limit, or :meth:`drain`).
    """

    def __init__(self, kernels: ModuleType, threads: int, scratch_size: int) -> None:
        self._kernels = kernels
        self.threads = threads
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="ngramtool-runs")
        self._scratches: SimpleQueue[np.ndarray] = SimpleQueue()
        for _ in range(threads):
            self._scratches.put(np.empty(scratch_size, dtype=RUN_COUNT))
        self._pending: deque[tuple[Future[None], _DistinctCounter, np.ndarray]] = deque()

    def submit(self, counter: _DistinctCounter, buffer: np.ndarray, fill: int) -> None:
        """Sort ``buffer[:fill]`` into a run of ``counter`` on a worker thread."""
        while len(self._pending) >= self.threads:
            self._retire()
        future = self.pool.submit(self._sort_run, counter, buffer[:fill])
        self._pending.append((future, counter, buffer))

    def _sort_run(self, counter: _DistinctCounter, keys: np.ndarray) -> None:
        scratch = self._scratches.get()
        try:
            counter.spill(keys, scratch)
        finally:
            self._scratches.put(scratch)

    def _retire(self) -> None:
        """Wait for the oldest sort; its buffer goes back to its counter."""
        future, counter, buffer = self._pending.popleft()
        future.result()
        counter.spare.append(buffer)

    def drain(self) -> None:
        """Wait for every sort in flight."""
        while self._pending:
            self._retire()

    def close(self) -> None:
        """Release the threads and the scratches."""
        self.pool.shutdown(cancel_futures=True)
        while not self._scratches.empty():
            self._scratches.get()


class _DistinctCounter:
    """Distinct keys of one order with occurrence counts: a bounded buffer, sorted when full.

    With ``kernels`` (:mod:`ngramtool.analysis.counting_kernels`, for one-word keys) the buffer
    holds uint32 keys where they fit (:attr:`KeyCodec.narrow`); each sorted buffer is compacted
    to a run of distinct keys and counts (in ``scratch``: uint32, at least the buffer's size,
    shared by the orders) and spilled to a scratch file, the keys as buffered; the runs are
    merged k ways at once at the end (:class:`ngramtool.analysis.type_store.SortedRuns`). Memory is the
    buffer, whatever the corpus. Given a ``sorter``, full buffers are sorted on its threads while
    this one fills another (one of ``spare``, or a new one). Without kernels, numpy merges each
    run into the sorted distinct keys so far, in memory (new arrays: twice the distinct keys for
    a moment). The buffer's pages are touched only as it fills, so a short stream does not pay
    for a large one.
    """

    def __init__(
        self,
        codec: KeyCodec,
        capacity: int,
        kernels: ModuleType | None,
        scratch: np.ndarray | None,
        sorter: _RunSorter | None = None,
    ) -> None:
        self.codec = codec
        self.runs = None
        if kernels is not None and codec.words == 1:
            self.runs = SortedRuns(kernels, buffer_dtype(codec, kernels))
        self._kernels = kernels
        self._scratch = scratch
        self._sorter = sorter
        self._buffer = np.empty(capacity, dtype=buffer_dtype(codec, kernels))
        self.spare: list[np.ndarray] = []
        self._fill = 0
        self._keys = np.empty(0, dtype=codec.dtype)
        self._counts = np.zeros(0, dtype=np.int64)

    def add(self, keys: np.ndarray) -> None:
        while keys.shape[0]:
            take = min(self._buffer.shape[0] - self._fill, keys.shape[0])
            self._buffer[self._fill : self._fill + take] = keys[:take]
            self._fill += take
            keys = keys[take:]
            if self._fill == self._buffer.shape[0]:
                self.flush()

    def release(self) -> None:
        """Drop the buffers (after the last flush)."""
        self._buffer = self._buffer[:0].copy()
        self.spare.clear()

    def close(self) -> TypeStore:
        """Flush, release the buffer, and return the distinct keys with their counts."""
        self.flush()
        self.release()
        if self.runs is not None:
            return self.runs.merged()
        return ArrayStore(self._keys, self._counts)

    def flush(self) -> None:
        if not self._fill:
            return
        if self._sorter is not None:
            self._sorter.submit(self, self._buffer, self._fill)
            self._buffer = self.spare.pop() if self.spare else np.empty_like(self._buffer)
            self._fill = 0
            return
        keys, self._fill = self._buffer[: self._fill], 0
        if self.runs is None:
            self._keys, self._counts = _merge(self._keys, self._counts, *_runs(self.codec.sort(keys)))
            return
        self.spill(keys, self._scratch)  # type: ignore[arg-type]

    def spill(self, keys: np.ndarray, scratch: np.ndarray) -> None:
        """Sort a full buffer's ``keys`` in place into a run of distinct keys and counts (the
        counts in ``scratch``) and spill it."""
        run = self.codec.sort(keys)
        distinct = self._kernels.run_lengths(run, scratch)  # type: ignore[union-attr]
        self.runs.add(run[:distinct], scratch[:distinct])  # type: ignore[union-attr]


class NgramTypes:
    """The distinct n-grams of one order and how often each occurred, sorted by key.

    They may be many more than fit in memory: the counter leaves them in a scratch file, and
    :meth:`blocks` reads them a block at a time. :attr:`keys` and :attr:`counts` read them all.

    Attributes:
        order: n.
        codec: how the keys pack the windows (see :class:`KeyCodec`).
        store: where the keys and counts are.
    """

    def __init__(self, order: int, codec: KeyCodec, store: TypeStore) -> None:
        self.order = order
        self.codec = codec
        self.store = store

    @classmethod
    def from_arrays(cls, order: int, keys: np.ndarray, counts: np.ndarray, codec: KeyCodec) -> NgramTypes:
        """Sorted distinct ``keys`` with their ``counts``, held in memory."""
        return cls(order, codec, ArrayStore(keys, counts))

    @property
    def types(self) -> int:
        """Distinct n-grams."""
        return self.store.size

    @property
    def occurrences(self) -> int:
        """n-gram occurrences (positions)."""
        return self.store.occurrences

    @property
    def keys(self) -> np.ndarray:
        """Every sorted distinct key, in memory."""
        return self.store.read_keys(0, self.types)

    @property
    def counts(self) -> np.ndarray:
        """Every key's int64 occurrences, in memory."""
        return self.store.read_counts(0, self.types)

    def blocks(self, block: int = MIX_BLOCK) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(keys, counts) of ``block`` distinct n-grams at a time, in key order."""
        return self.store.blocks(block)

    def key_blocks(self, block: int = MIX_BLOCK) -> Iterator[np.ndarray]:
        """The keys of :meth:`blocks` alone (the counts are not read)."""
        return self.store.key_blocks(block)

    def count_blocks(self, block: int = MIX_BLOCK) -> Iterator[np.ndarray]:
        """The counts of :meth:`blocks` alone (the keys are not read)."""
        return self.store.count_blocks(block)

    def windows(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """int64 [U, order] windows of the distinct n-grams lo..hi; column k is lag k."""
        hi = self.types if hi is None else min(hi, self.types)
        return self.codec.decode(self.store.read_keys(lo, hi))


class NgramTypeCounter:
    """Streaming exact count of distinct n-grams of orders 2..N, with occurrence counts.

    Feed canonical ids chunk by chunk (any chunking gives the same result); the windows are the
    ones :class:`ngramtool.hashing.hasher.NgramHasher` hashes with the same ``boundary``.

    Memory, with the compiled kernels: per order a buffer of ``FLUSH_BYTES`` (or ``flush_keys``
    keys, uint32 where they fit), one uint32 counts scratch of the largest buffer's keys, and
    the current chunk's keys; with ``threads`` > 1, one more buffer and one more scratch per
    thread (the sorts in flight). The runs of distinct n-grams go to scratch files in ``TMPDIR``
    (up to 12 bytes per occurrence, then up to 12 per distinct n-gram once merged), so nothing grows
    with the corpus. Without: the distinct n-grams' keys and counts in memory (16 bytes each with
    one-word keys, twice that during a merge) plus the buffers.

    Args:
        spec: supplies N, V' and the pad id.
        boundary: ``"none"`` pads only at the stream start; ``"reset"`` at every document start.
        flush_keys: keys buffered per order before they are sorted into a run (below 2^32;
            memory vs. the number of runs); None: ``FLUSH_BYTES`` of keys per order with the
            compiled kernels, ``NUMPY_FLUSH_KEYS`` without.
        compiled: count with the numba kernels (:mod:`ngramtool.analysis.counting_kernels`);
            None (default): when numba is installed and every order's keys fit one uint64 word.
            Both ways give identical results.
        threads: with the compiled kernels, threads that sort full buffers into runs while the
            stream goes on, and merge the runs a key range each; 1 does it all in the caller's
            thread; None (default): ``COUNT_THREADS`` or the cores this process may use, whichever
            is fewer. Any number gives identical results.
    """

    def __init__(
        self,
        spec: HashSpec,
        *,
        boundary: Boundary = "none",
        flush_keys: int | None = None,
        compiled: bool | None = None,
        threads: int | None = None,
    ) -> None:
        check_boundary_policy(boundary)
        if flush_keys is not None and not 1 <= flush_keys < 2**32:
            raise UsageError(f"flush_keys must be at least 1 and below 2^32 (got {flush_keys})")
        if threads is not None and threads < 1:
            raise UsageError(f"threads must be at least 1 (got {threads})")
        self.spec = spec
        self.boundary = boundary
        n = spec.max_ngram
        self._kernels = _counting_kernels(spec, compiled)
        codecs = {order: key_codec(spec.id_bound, order) for order in range(2, n + 1)}
        capacity = {order: flush_keys or self._capacity(codec) for order, codec in codecs.items()}
        scratch, self._sorter = None, None
        threads = worker_threads(threads)
        if self._kernels is not None and threads > 1:
            self._sorter = _RunSorter(self._kernels, threads, max(capacity.values()))
        elif self._kernels is not None:
            scratch = np.empty(max(capacity.values()), dtype=RUN_COUNT)
        self._chunk_keys = np.empty((n - 1, 0), dtype=np.uint64)  # reused: fresh pages are slow
        self._counters = {
            order: _DistinctCounter(codec, capacity[order], self._kernels, scratch, self._sorter)
            for order, codec in codecs.items()
        }
        self._context = np.full(n - 1, spec.pad_id, dtype=np.int64)
        self._last_start = 0  # global position of the current document's start
        self._start_next = False  # a document starts at the next chunk's first token (reset)
        self.tokens = 0  # positions seen (masked ones included)

    def _capacity(self, codec: KeyCodec) -> int:
        """The default buffer of an order: ``FLUSH_BYTES`` of its keys, compiled; else
        ``NUMPY_FLUSH_KEYS``."""
        if self._kernels is None:
            return NUMPY_FLUSH_KEYS
        return FLUSH_BYTES // buffer_dtype(codec, self._kernels).itemsize

    def update(self, ids: np.ndarray, doc_starts: np.ndarray | None = None) -> None:
        """Count the n-grams of the next canonical ids of the stream.

        ``doc_starts`` are non-decreasing positions within ``ids`` (0..T; repeats and T stand for
        empty documents) where a document starts; they matter only with ``boundary="reset"``.
        """
        ids = np.asarray(ids)
        if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
            raise UsageError(f"expected a 1-D array of integer token ids, got {ids.dtype} {ids.shape}")
        starts = np.zeros(0, dtype=np.int64) if doc_starts is None else np.asarray(doc_starts, np.int64)
        if starts.size and (starts[0] < 0 or starts[-1] > ids.size or np.any(np.diff(starts) < 0)):
            raise UsageError(f"doc_starts must be non-decreasing positions in [0, {ids.size}]")
        reset_starts = starts if self.boundary == "reset" else starts[:0]
        clean = self._validated(ids, copy=self._kernels is None)
        if self.spec.reserved_first:  # the speedrun family: each sequence's first token reads as the pad
            firsts = reset_starts[reset_starts < ids.shape[0]]
            first_here = not self.tokens or (self._start_next and ids.shape[0] > 0)
            clean = as_hashed(self.spec, clean, np.union1d(0, firsts) if first_here else firsts)
        if self.boundary == "reset":  # a start at the chunk's end: the next chunk's first token
            self._start_next = start_carried(reset_starts, ids.shape[0], self._start_next)
        stop = self.spec.segment_stop
        if stop is not None:  # segments: one starts after each stop id (Qwen3.8's EOS, LongCat's stop)
            after_eos = np.flatnonzero(clean == stop) + 1
            reset_starts = np.union1d(reset_starts, after_eos).astype(np.int64)
        if self._kernels is None:
            self._count_with_windows(clean, reset_starts)
        else:
            self._count_with_kernels(clean, reset_starts)
        n = self.spec.max_ngram
        self._context = np.concatenate([self._context, clean[-(n - 1) :]])[-(n - 1) :].astype(np.int64)
        if reset_starts.size:
            self._last_start = self.tokens + int(reset_starts[-1])
        self.tokens += ids.shape[0]

    def _count_with_kernels(self, ids: np.ndarray, reset_starts: np.ndarray) -> None:
        """Compiled: the keys of every order straight from the ids (masked positions left out)."""
        if self._chunk_keys.shape[1] < ids.shape[0]:
            self._chunk_keys = np.empty((self.spec.max_ngram - 1, ids.shape[0]), dtype=np.uint64)
        keys = self._chunk_keys
        doc_start = self._last_start - self.tokens
        vocab = np.uint64(self.spec.id_bound)
        kept = self._kernels.ngram_keys(
            ids, self._context, reset_starts, doc_start, self.spec.pad_id, vocab, keys
        )
        for order, counter in self._counters.items():
            counter.add(keys[order - 2, :kept])

    def _count_with_windows(self, clean: np.ndarray, reset_starts: np.ndarray) -> None:
        """numpy: the lag windows [T, N] of the chunk, packed per order (masked positions left out)."""
        masked = clean < 0
        clean[masked] = self.spec.pad_id
        ext = np.concatenate([self._context, clean])
        windows = lag_windows(ext, self.spec.max_ngram)
        self._pad_before_starts(windows, np.append(self._last_start - self.tokens, reset_starts))
        keep = None if not masked.any() else ~masked
        for order, counter in self._counters.items():
            keys = counter.codec.encode(windows[:, :order])
            counter.add(keys if keep is None else keys[keep])

    def _validated(self, ids: np.ndarray, *, copy: bool) -> np.ndarray:
        """The ids, int64 (a copy when ``copy``, else as they are when the kernels take their
        dtype); an id at or above V' is an error naming its position."""
        native = not copy and ids.dtype in (np.int64, np.int32, np.uint32, np.uint16)
        clean = ids if native else ids.astype(np.int64)
        if clean.size and int(clean.max()) >= self.spec.vocab_size:
            first = int(np.argmax(clean >= self.spec.vocab_size))
            raise NgramToolError(
                f"token id {int(clean[first])} at position {self.tokens + first} is not a canonical id: "
                f"ids must be below vocab_size={self.spec.vocab_size}; map raw ids through the vocabulary"
            )
        return clean

    def _pad_before_starts(self, windows: np.ndarray, starts: np.ndarray) -> None:
        """Set lag k of position p to the pad id where p - k falls before a start s <= p."""
        for lag in range(1, windows.shape[1]):
            positions = (starts[:, None] + np.arange(lag)[None, :]).ravel()
            positions = positions[(positions >= 0) & (positions < windows.shape[0])]
            windows[positions, lag] = self.spec.pad_id

    def result(self) -> dict[int, NgramTypes]:
        """The distinct n-grams per order (call once, after the last update)."""
        if self._sorter is None:
            return {order: NgramTypes(order, c.codec, c.close()) for order, c in self._counters.items()}
        sorter = self._sorter
        try:
            for counter in self._counters.values():
                counter.flush()
            sorter.drain()
            for counter in self._counters.values():
                counter.release()
            return {
                order: NgramTypes(order, c.codec, c.runs.merged(sorter.pool, sorter.threads))  # type: ignore[union-attr]
                for order, c in self._counters.items()
            }
        finally:
            sorter.close()


def _counting_kernels(spec: HashSpec, compiled: bool | None) -> ModuleType | None:
    """The compiled counting kernels, or None for numpy (see :class:`NgramTypeCounter`)."""
    if compiled is False or key_codec(spec.id_bound, spec.max_ngram).words > 1:
        if compiled:
            raise UsageError(
                f"the compiled counter needs one-word keys: V'^N = {spec.id_bound}^{spec.max_ngram} "
                "exceeds 2^64 (count with compiled=False)"
            )
        return None
    if not use_numba(compiled, "counting with compiled kernels"):
        return None
    from . import counting_kernels

    return counting_kernels


def count_ngram_types(
    canonical_ids: np.ndarray, spec: HashSpec, *, doc_starts: np.ndarray | None = None
) -> dict[int, NgramTypes]:
    """Distinct n-grams of one stream; ``doc_starts`` given means boundary ``reset`` (as hash_ngrams)."""
    counter = NgramTypeCounter(spec, boundary="none" if doc_starts is None else "reset")
    counter.update(canonical_ids, doc_starts)
    return counter.result()
