"""How n-gram hash tables are really used: distinct n-grams, the rows they occupy, and what
uniform-random hashing would give for every figure.

Definitions and derivations are in docs/analysis.md. In short:

* The n-gram of order n at position t is the tuple of the last n canonical ids, padded with the
  spec's pad id before the stream start (and, with boundary ``reset``, before each document
  start): exactly the window the hash sees. Masked (negative) ids make no n-gram of their own and
  look like the pad id to their neighbours, as in :class:`ngramtool.hashing.NgramHasher`.
* Distinct n-grams are counted exactly by sorting packed keys: the n ids as digits base V' in one
  uint64 when V'^n <= 2^64, else in several uint64 words (a structured key, sorted with lexsort).
  Keys stream through a bounded buffer; each full buffer is sorted into a run of distinct keys
  and counts. With the compiled kernels the runs go to unlinked scratch files and are merged k
  ways at the end (:mod:`ngramtool.analysis.type_store`), so memory stays bounded whatever the
  corpus; without, numpy merges them in memory (memory follows the distinct n-grams).
* A head's row of an n-gram is ``mix mod prime``; the mixes do not depend on the table sizes, so
  a sweep over table sizes computes each distinct n-gram's mix once and reduces it per prime,
  reading the distinct n-grams a block at a time.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any, Literal

import numpy as np

from ..errors import NgramToolError, UsageError
from ..hashing import lag_windows, ngram_mixes
from ..spec import HashSpec
from .repeats import RepeatCounter
from .scratch import ScratchFile
from .type_store import RUN_COUNT, ArrayStore, SortedRuns, TypeStore

Boundary = Literal["none", "reset"]
# Keys buffered per order before they are sorted into a run: 64 MiB with the compiled kernels,
# which spill the runs; numpy merges them in memory, so fewer, larger merges pay (256 MiB).
FLUSH_KEYS = 1 << 23
NUMPY_FLUSH_KEYS = 1 << 25
MIX_BLOCK = 1 << 20  # distinct n-grams decoded and mixed at a time
_U64_SPAN = 1 << 64
_I64_MAX = (1 << 63) - 1  # mixes of canonical ids lie in [0, 2^63 - 1]


# ------------------------------------------------------------------------------------ keys
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


class _DistinctCounter:
    """Distinct keys of one order with occurrence counts: a bounded buffer, sorted when full.

    With ``kernels`` (:mod:`ngramtool.analysis.counting_kernels`, for one-word keys) each sorted
    buffer is compacted to a run of distinct keys and counts (in ``scratch``: uint32, the
    buffer's size, shared by the orders) and spilled to a scratch file; the runs are merged k
    ways at once at the end (:class:`ngramtool.analysis.type_store.SortedRuns`). Memory is the
    buffer, whatever the corpus. Without, numpy merges each run into the sorted distinct keys so
    far, in memory (new arrays: twice the distinct keys for a moment). The buffer's pages are
    touched only as it fills, so a short stream does not pay for a large one.
    """

    def __init__(
        self,
        codec: KeyCodec,
        capacity: int,
        kernels: ModuleType | None,
        scratch: np.ndarray | None,
    ) -> None:
        self.codec = codec
        self._runs = SortedRuns(kernels) if kernels is not None and codec.words == 1 else None
        self._kernels = kernels
        self._scratch = scratch
        self._buffer = np.empty(capacity, dtype=codec.dtype)
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

    def close(self) -> TypeStore:
        """Flush, release the buffer, and return the distinct keys with their counts."""
        self.flush()
        self._buffer = np.empty(0, dtype=self.codec.dtype)
        if self._runs is not None:
            return self._runs.merged()
        return ArrayStore(self._keys, self._counts)

    def flush(self) -> None:
        if not self._fill:
            return
        run = self.codec.sort(self._buffer[: self._fill])
        self._fill = 0
        if self._runs is None:
            self._keys, self._counts = _merge(self._keys, self._counts, *_runs(run))
            return
        distinct = self._kernels.run_lengths(run, self._scratch)  # type: ignore[union-attr]
        self._runs.add(run[:distinct], self._scratch[:distinct])  # type: ignore[index]


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
    ones :class:`ngramtool.hashing.NgramHasher` hashes with the same ``boundary``.

    Memory, with the compiled kernels: per order a buffer of ``flush_keys`` keys, one shared uint32
    counts scratch of that size, and the current chunk's keys; the runs of distinct n-grams go to
    scratch files in ``TMPDIR`` (up to 12 bytes per occurrence, then 16 per distinct n-gram once
    merged), so nothing grows with the corpus. Without: the distinct n-grams' keys and counts in
    memory (16 bytes each with one-word keys, twice that during a merge) plus the buffers.

    Args:
        spec: supplies N, V' and the pad id.
        boundary: ``"none"`` pads only at the stream start; ``"reset"`` at every document start.
        flush_keys: keys buffered per order before they are sorted into a run (below 2^32;
            memory vs. the number of runs); None: ``FLUSH_KEYS`` with the compiled kernels,
            ``NUMPY_FLUSH_KEYS`` without.
        compiled: count with the numba kernels (:mod:`ngramtool.analysis.counting_kernels`);
            None (default): when numba is installed and every order's keys fit one uint64 word.
            Both ways give identical results.
    """

    def __init__(
        self,
        spec: HashSpec,
        *,
        boundary: Boundary = "none",
        flush_keys: int | None = None,
        compiled: bool | None = None,
    ) -> None:
        if boundary not in ("none", "reset"):
            raise UsageError(f"boundary must be 'none' or 'reset' (got {boundary!r})")
        if flush_keys is not None and not 1 <= flush_keys < 2**32:
            raise UsageError(f"flush_keys must be at least 1 and below 2^32 (got {flush_keys})")
        self.spec = spec
        self.boundary = boundary
        n = spec.max_ngram
        self._kernels = _counting_kernels(spec, compiled)
        if flush_keys is None:
            flush_keys = FLUSH_KEYS if self._kernels is not None else NUMPY_FLUSH_KEYS
        scratch = np.empty(flush_keys, dtype=RUN_COUNT) if self._kernels is not None else None
        self._chunk_keys = np.empty((n - 1, 0), dtype=np.uint64)  # reused: fresh pages are slow
        self._counters = {
            order: _DistinctCounter(key_codec(spec.vocab_size, order), flush_keys, self._kernels, scratch)
            for order in range(2, n + 1)
        }
        self._context = np.full(n - 1, spec.pad_id, dtype=np.int64)
        self._last_start = 0  # global position of the current document's start
        self.tokens = 0  # positions seen (masked ones included)

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
        if self._kernels is None:
            clean = self._validated(ids, copy=True)
            self._count_with_windows(clean, reset_starts)
        else:
            clean = self._validated(ids, copy=False)
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
        vocab = np.uint64(self.spec.vocab_size)
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
        out = {}
        for order, counter in self._counters.items():
            out[order] = NgramTypes(order, counter.codec, counter.close())
        return out


def _counting_kernels(spec: HashSpec, compiled: bool | None) -> ModuleType | None:
    """The compiled counting kernels, or None for numpy (see :class:`NgramTypeCounter`)."""
    if compiled is False or key_codec(spec.vocab_size, spec.max_ngram).words > 1:
        if compiled:
            raise UsageError(
                f"the compiled counter needs one-word keys: V'^N = {spec.vocab_size}^{spec.max_ngram} "
                "exceeds 2^64 (count with compiled=False)"
            )
        return None
    if importlib.util.find_spec("numba") is None:
        if compiled:
            raise UsageError("counting with compiled kernels needs numba: pip install 'ngramtool[numba]'")
        return None
    from . import counting_kernels

    return counting_kernels


def _analysis_kernels() -> ModuleType | None:
    """The compiled kernels of the analysis' passes when numba is installed, else None (numpy)."""
    if importlib.util.find_spec("numba") is None:
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


# ----------------------------------------------------------------- uniform-random expectations
def expected_rows_used(types: int, table: int) -> float:
    """E[distinct rows] when ``types`` n-grams land uniformly in ``table`` rows: M(1-(1-1/M)^T)."""
    if types == 0:
        return 0.0
    return -table * math.expm1(types * _log1p_neg(1.0 / table))


def expected_collision_ratio(types: int, table: int) -> float:
    """E[1 - rows/types] under uniform hashing: 1 - M(1-(1-1/M)^T)/T, stable for large M."""
    return 0.0 if types == 0 else 1.0 - expected_rows_used(types, table) / types


def expected_shared_share(types: int, table: int) -> float:
    """P(an n-gram's row also holds another of the T-1 others): 1-(1-1/M)^(T-1).

    This is also the expected token-weighted share: the hash ignores how often an n-gram occurs.
    """
    if types < 2:
        return 0.0
    return -math.expm1((types - 1) * _log1p_neg(1.0 / table))


def expected_all_heads_shared(types: int, tables: Sequence[int]) -> float:
    """P(an n-gram shares its row with some other n-gram on every head); heads are independent."""
    return math.prod(expected_shared_share(types, int(m)) for m in tables)


def expected_indistinguishable(types: int, tables: Sequence[int]) -> float:
    """P(some other n-gram has the same row on every head): 1-(1-prod 1/M_h)^(T-1)."""
    if types < 2:
        return 0.0
    same = math.exp(-sum(math.log(int(m)) for m in tables))
    return -math.expm1((types - 1) * _log1p_neg(same))


def expected_mean_per_row(types: int, table: int) -> float:
    """T / E[rows used]: the mean n-grams per used row (ratio of expectations)."""
    used = expected_rows_used(types, table)
    return types / used if used else 0.0


def expected_max_per_row(types: int, table: int) -> float:
    """E[max n-grams in one row], Poisson approximation: rows' loads i.i.d. Poisson(T/M).

    E[max] = sum_{k>=1} 1 - P(Poisson <= k-1)^M. Accurate for large T (within a few percent
    from T ~ 1000); the exact multinomial maximum differs for tiny T.
    """
    if types == 0:
        return 0.0
    lam = types / table
    top = int(lam + 12.0 * math.sqrt(lam) + 40.0)
    k = np.arange(top + 1, dtype=np.float64)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(k[1:]))])
    pmf = np.exp(-lam + k * math.log(lam) - log_fact)
    tail = np.cumsum(pmf[::-1])[::-1]  # tail[k] = P(X >= k)
    with np.errstate(divide="ignore"):
        p_max_at_least = -np.expm1(table * np.log1p(-np.minimum(tail[1:], 1.0)))
    return float(p_max_at_least.sum())


def _log1p_neg(x: float) -> float:
    """log(1 - x), -inf at x = 1."""
    return -math.inf if x >= 1.0 else math.log1p(-x)


# ----------------------------------------------------------------------------- measurement
@dataclass(frozen=True)
class HeadStats:
    """Measured and expected use of one head's table by the n-grams of one order in one layer.

    ``table`` is the head's real size M (a prime); ``rows`` the distinct rows the ``types``
    distinct n-grams occupy; ``collision`` = 1 - rows/types; ``shared_*`` the share of distinct
    n-grams (types) and of occurrences (tokens) whose row holds at least one other distinct n-gram.
    """

    layer: int
    order: int
    head: int
    table: int
    types: int
    occurrences: int
    rows: int
    collision: float
    expected_collision: float
    shared_types: float
    shared_tokens: float
    expected_shared: float
    mean_per_row: float
    expected_mean_per_row: float
    max_per_row: int
    expected_max_per_row: float

    @property
    def collision_vs_expected(self) -> float | None:
        """measured / expected collision ratio (None when nothing is expected)."""
        return self.collision / self.expected_collision if self.expected_collision > 0 else None

    def to_dict(self) -> dict[str, Any]:
        """Every field plus ``collision_vs_expected``, as plain JSON types."""
        return {**asdict(self), "collision_vs_expected": self.collision_vs_expected}


@dataclass(frozen=True)
class OrderStats:
    """All heads of one order in one layer together.

    ``all_heads_shared``: share of distinct n-grams whose row is shared with some other n-gram on
    every head. ``indistinguishable``: share of distinct n-grams whose rows on every head equal
    those of one other n-gram, so their concatenated memory vectors are identical.
    """

    layer: int
    order: int
    tables: tuple[int, ...]
    types: int
    all_heads_shared: float
    expected_all_heads_shared: float
    indistinguishable: float
    expected_indistinguishable: float

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON types."""
        return {**asdict(self), "tables": list(self.tables)}


@dataclass(frozen=True)
class CollisionReport:
    """The collision figures of one spec (one table size of a sweep)."""

    spec: HashSpec
    heads: tuple[HeadStats, ...]
    orders: tuple[OrderStats, ...]

    def to_dict(self) -> dict[str, Any]:
        """The spec, its fingerprint and every figure."""
        return {
            "table_sizes": list(self.spec.table_sizes),
            "spec_fingerprint": self.spec.fingerprint,
            "heads": [h.to_dict() for h in self.heads],
            "orders": [o.to_dict() for o in self.orders],
        }


def analyse_collisions(types: Mapping[int, NgramTypes], spec: HashSpec) -> CollisionReport:
    """The collision figures of ``spec`` for the distinct n-grams ``types``."""
    return sweep_collisions(types, [spec])[0]


def sweep_collisions(types: Mapping[int, NgramTypes], specs: Sequence[HashSpec]) -> list[CollisionReport]:
    """Collision figures for several specs that differ only in table sizes (heads may differ too).

    The distinct n-grams are read in blocks, twice per order: the first pass computes their mixes
    (kept in a scratch file for the second) and counts every head's row loads, the second finds
    which n-grams share their row (a load above one). The mixes are reduced modulo every spec's
    primes, so the cost per extra table size is a few passes over the distinct n-grams, not the
    corpus. Memory: a block, and each head's loads (4 bytes per row of its table).
    """
    if not specs:
        raise UsageError("give at least one spec (table size) to analyse")
    first = specs[0]
    for spec in specs[1:]:
        if spec.max_ngram != first.max_ngram or not np.array_equal(spec.multipliers, first.multipliers):
            raise UsageError(
                "a sweep varies table sizes only: every spec needs the same N, layers, seed and V'"
            )
    missing = [n for n in range(2, first.max_ngram + 1) if n not in types]
    if missing:
        raise UsageError(f"no distinct n-grams were counted for order(s) {missing}")
    heads: list[list[HeadStats]] = [[] for _ in specs]
    orders: list[list[OrderStats]] = [[] for _ in specs]
    kernels = _analysis_kernels()
    for order in range(2, first.max_ngram + 1):
        grams = types[order]
        tallies = [_layer_tallies(specs, li, order, grams, kernels) for li in range(first.num_layers)]
        kept = ScratchFile()  # the mixes, for pass two
        for mixes in _mix_blocks(grams, first):
            kept.append(mixes)
            for li, layer in enumerate(tallies):
                for tally in layer:
                    tally.count_rows(mixes[li])
        at = 0
        for counts in grams.count_blocks(MIX_BLOCK):
            mixes = kept.read(np.uint64, first.num_layers * counts.shape[0], at).reshape(first.num_layers, -1)
            at += mixes.nbytes
            for li, layer in enumerate(tallies):
                for tally in layer:
                    tally.find_shared(mixes[li], counts)
        kept.close()
        for layer in tallies:
            # Equal rows on every head where the primes' product exceeds 2^63 - 1 are equal mixes:
            # one count answers every such spec of the layer (the first one's).
            same_mix = next((tally.repeats.count() for tally in layer if tally.by_mix), None)
            for si, tally in enumerate(layer):
                heads[si].extend(tally.head_stats())
                orders[si].append(tally.order_stats(same_mix if tally.by_mix else tally.repeats.count()))
    return [
        CollisionReport(
            spec,
            tuple(sorted(heads[si], key=lambda s: (spec.layer_ids.index(s.layer), s.order, s.head))),
            tuple(sorted(orders[si], key=lambda s: (spec.layer_ids.index(s.layer), s.order))),
        )
        for si, spec in enumerate(specs)
    ]


def _layer_tallies(
    specs: Sequence[HashSpec], li: int, order: int, grams: NgramTypes, kernels: ModuleType | None
) -> list[_Tally]:
    """One tally per spec for layer index ``li``. Of the specs whose primes multiply past 2^63 - 1
    only the first collects repeated mixes: its count answers for the others (see :class:`_Tally`)."""
    sizes = (grams.types, grams.occurrences)
    tallies = [
        _Tally(spec.layer_ids[li], order, spec.primes[li, order - 2], *sizes, kernels) for spec in specs
    ]
    for tally in [tally for tally in tallies if tally.by_mix][1:]:
        tally.repeats = None
    return tallies


def _mix_blocks(grams: NgramTypes, spec: HashSpec) -> Iterator[np.ndarray]:
    """uint64 [L, b]: the mixes of the distinct n-grams in every layer, a block at a time (mixes
    are never negative)."""
    for keys in grams.key_blocks(MIX_BLOCK):
        windows = np.zeros((keys.shape[0], spec.max_ngram), dtype=np.int64)
        windows[:, : grams.order] = grams.codec.decode(keys)
        mixes = ngram_mixes(windows, spec)[:, :, grams.order - 2].T
        yield np.ascontiguousarray(mixes).view(np.uint64)


class _Tally:
    """What one spec's heads make of one order's n-grams in one layer, gathered block by block.

    Pass one counts each head's row loads; pass two marks the n-grams whose row holds another
    (shared), per head and on every head, and feeds those shared on every head to a
    :class:`ngramtool.analysis.repeats.RepeatCounter`: two n-grams have the same row on every
    head when their mixes agree modulo every prime, so modulo their product. When the product
    exceeds 2^63 - 1, the largest difference of two mixes, that means equal mixes (Chinese
    remainder theorem; ``by_mix``, the same answer for every such spec of the layer, so the others
    drop their ``repeats``); otherwise the rows of all heads pack into one uint64 (mixed radix).
    """

    def __init__(
        self,
        layer: int,
        order: int,
        primes: Sequence[int],
        types: int,
        occurrences: int,
        kernels: ModuleType | None = None,
    ) -> None:
        self.layer, self.order = layer, order
        self.types, self.occurrences = types, occurrences
        self.primes = [int(p) for p in primes]
        self.loads = [_row_loads(prime, types, kernels) for prime in self.primes]
        product = math.prod(self.primes)
        self.by_mix = product > _I64_MAX
        bound = _I64_MAX + 1 if self.by_mix else product
        self.repeats: RepeatCounter | None = RepeatCounter(bound, types)
        self.shared_types = [0] * len(self.primes)
        self.shared_tokens = [0] * len(self.primes)
        self.all_shared = 0

    def count_rows(self, mixes: np.ndarray) -> None:
        """Pass one: add a block's n-grams to each head's row loads."""
        for load in self.loads:
            load.add(mixes)

    def find_shared(self, mixes: np.ndarray, counts: np.ndarray) -> None:
        """Pass two (the loads complete): the block's shared n-grams, per head and on every head."""
        everywhere = np.ones(mixes.shape[0], dtype=bool)
        packed = np.zeros(0 if self.by_mix else mixes.shape[0], dtype=np.uint64)
        for h, load in enumerate(self.loads):
            types, tokens = load.mark_shared(mixes, counts, everywhere, packed)
            self.shared_types[h] += types
            self.shared_tokens[h] += tokens
        self.all_shared += int(np.count_nonzero(everywhere))
        if self.repeats is not None:
            self.repeats.add((mixes if self.by_mix else packed)[everywhere])

    def head_stats(self) -> list[HeadStats]:
        """Each head's figures (after both passes)."""
        t, stats = self.types, []
        for h, (prime, load) in enumerate(zip(self.primes, self.loads, strict=True)):
            stats.append(
                HeadStats(
                    layer=self.layer,
                    order=self.order,
                    head=h,
                    table=prime,
                    types=t,
                    occurrences=self.occurrences,
                    rows=load.used,
                    collision=1.0 - load.used / t if t else 0.0,
                    expected_collision=expected_collision_ratio(t, prime),
                    shared_types=self.shared_types[h] / t if t else 0.0,
                    shared_tokens=self.shared_tokens[h] / self.occurrences if t else 0.0,
                    expected_shared=expected_shared_share(t, prime),
                    mean_per_row=t / load.used if load.used else 0.0,
                    expected_mean_per_row=expected_mean_per_row(t, prime),
                    max_per_row=load.top,
                    expected_max_per_row=expected_max_per_row(t, prime),
                )
            )
        return stats

    def order_stats(self, indistinguishable: int) -> OrderStats:
        """The all-heads figures, given how many n-grams are indistinguishable."""
        t = self.types
        return OrderStats(
            layer=self.layer,
            order=self.order,
            tables=tuple(self.primes),
            types=t,
            all_heads_shared=self.all_shared / t if t else 0.0,
            expected_all_heads_shared=expected_all_heads_shared(t, self.primes),
            indistinguishable=indistinguishable / t if t else 0.0,
            expected_indistinguishable=expected_indistinguishable(t, self.primes),
        )


def _row_loads(table: int, types: int, kernels: ModuleType | None) -> _DenseLoads | _SparseLoads:
    """Row loads of a table for ``types`` n-grams: one count per row (by the compiled kernels when
    given), or, for a table far larger than the n-grams, counts of the rows hit only."""
    if table > 4 * types + (1 << 22):
        return _SparseLoads(table)
    return _DenseLoads(table, types, kernels)


class _Loads:
    """How many n-grams each row of one head's table holds, counted from mixes block by block."""

    table: int
    loads: np.ndarray

    @property
    def top(self) -> int:
        """Most n-grams in one row."""
        return int(self.loads.max()) if self.loads.shape[0] else 0

    def add(self, mixes: np.ndarray) -> None:
        """Pass one: count the rows (``mix mod table``) of a block's mixes."""
        raise NotImplementedError

    def shared(self, rows: np.ndarray) -> np.ndarray:
        """Per row given (each one counted): does it hold more than one n-gram?"""
        raise NotImplementedError

    def mark_shared(
        self, mixes: np.ndarray, counts: np.ndarray, everywhere: np.ndarray, packed: np.ndarray
    ) -> tuple[int, int]:
        """Pass two: clear ``everywhere`` where an n-gram's row holds no other; append the row to
        ``packed`` (mixed radix) unless it is empty; return (shared n-grams, their occurrences)."""
        rows = mixes % np.uint64(self.table)
        shared = self.shared(rows)
        everywhere &= shared
        if packed.shape[0]:
            packed *= np.uint64(self.table)
            packed += rows
        return int(np.count_nonzero(shared)), int(counts.sum(where=shared))


class _DenseLoads(_Loads):
    """One count per row: 4 bytes per row (8 from 2^31 n-grams on)."""

    def __init__(self, table: int, types: int, kernels: ModuleType | None = None) -> None:
        self.table = table
        self.loads = np.zeros(table, dtype=np.int32 if types < 2**31 else np.int64)
        self._kernels = kernels
        self._divisor = kernels.divisor(table) if kernels is not None else (table, 0.0, False)

    def add(self, mixes: np.ndarray) -> None:
        if self._kernels is not None:
            self._kernels.count_rows(mixes, *self._divisor, self.loads)
            return
        rows = (mixes % np.uint64(self.table)).view(np.int64)  # rows < table < 2^63
        if self.table <= 8 * rows.shape[0] + (1 << 22):
            np.add(self.loads, np.bincount(rows, minlength=self.table), out=self.loads, casting="unsafe")
        else:  # a table far larger than the block: count the rows it hit
            hit, times = np.unique(rows, return_counts=True)
            self.loads[hit] += times.astype(self.loads.dtype)

    def shared(self, rows: np.ndarray) -> np.ndarray:
        return self.loads[rows.view(np.int64)] > 1

    def mark_shared(
        self, mixes: np.ndarray, counts: np.ndarray, everywhere: np.ndarray, packed: np.ndarray
    ) -> tuple[int, int]:
        if self._kernels is None:
            return super().mark_shared(mixes, counts, everywhere, packed)
        args = (self.loads, counts, everywhere, packed)
        types, tokens = self._kernels.find_shared(mixes, *self._divisor, *args)
        return int(types), int(tokens)

    @property
    def used(self) -> int:
        """Rows holding an n-gram."""
        return int(np.count_nonzero(self.loads))


class _SparseLoads(_Loads):
    """The loads of the rows hit only, sorted by row: memory follows the n-grams, not the table."""

    def __init__(self, table: int) -> None:
        self.table = table
        self.rows = np.empty(0, dtype=np.uint64)
        self.loads = np.zeros(0, dtype=np.int64)

    def add(self, mixes: np.ndarray) -> None:
        rows = np.sort(mixes % np.uint64(self.table))
        self.rows, self.loads = _merge(self.rows, self.loads, *_runs(rows))

    def shared(self, rows: np.ndarray) -> np.ndarray:
        return self.loads[np.searchsorted(self.rows, rows)] > 1

    @property
    def used(self) -> int:
        """Rows holding an n-gram."""
        return int(self.rows.shape[0])
