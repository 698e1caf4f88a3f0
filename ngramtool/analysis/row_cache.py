"""Row-access statistics: how many rows of fast memory a corpus's reads need (``ngramtool cache``).

Every token reads one row per column of every Engram layer; a row is (layer, row of that layer's
table), so rows of different layers are different rows. Masked tokens read nothing under
``negative_ids="mask"`` (their rows are -1) and read their all-pad rows under ``"barrier"``.

:func:`measure_row_cache` makes one pass over the row stream and gives, for every budget at once:

- the exact LRU hit rate: a read hits a cache of B rows iff its LRU stack distance (the distinct
  rows read since the previous read of its row) is below B (Mattson et al.); each token's misses
  at every budget of a sorted grid give the hit rates and misses per token;
- the best static cache's hit rate: the B most frequent rows pinned, loaded before the first read
  (a pinned row never misses, and ``cold_per_document`` does not empty it);
- a Zipf fit of the row frequencies and the share of reads that the top rows take.

The misses come from :mod:`ngramtool.analysis.row_cache_kernels` (numba: per-row state
indexed by the row, or by a dense id from a hash table for very large row spaces, a bitmap of
each row's last read over read times, renumbered when full, and per budget a cursor on the
bitmap: the read that is the budget's B-th most recent; the tally in the same pass) or, without
numba, from :class:`NumpyStack` (each read's stack distance, chunk by chunk, by counting nested
intervals, tallied with numpy).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..hashing.backends import use_numba
from ..hashing.hasher import NgramHasher
from ..inputs.stream import TokenStream
from ..model.mapping import NgramHashMapping
from ..spec.hashspec import HashSpec
from ..util.chunks import TokenChunk, canonical_chunks, starts_within
from ..util.errors import NgramToolError, UsageError
from ..util.progress import Progress
from .measurement import MeasureOptions
from .sizing import bytes_per_row
from .type_counts import SUFFIX

NOT_READ = -2  # a masked position: no read
FIRST = -1  # a first read (of the stream, or of the document with cold starts)
BLOCK_TOKENS = 1 << 16  # tokens hashed and simulated at a time (bounded memory)
DIRECT_ROWS = 1 << 26  # the compiled pass indexes its per-row state by the row in row spaces up to this
TIME_ROOM = 4  # the compiled pass's read times: this many times the distinct rows, then renumbered
ZIPF_POINTS = 1000  # log-spaced ranks the Zipf law is fitted on


@dataclass(frozen=True)
class CacheBudget:
    """One cache size and how it does.

    Attributes:
        bytes: the budget in bytes as given (None when given in rows).
        rows: the rows it holds.
        lru_hit_rate: the share of reads an LRU cache of ``rows`` serves.
        static_hit_rate: the share of reads the ``rows`` most frequent rows, pinned, serve.
        misses_per_token_mean, misses_per_token_p99: LRU misses per token (masked tokens
            included, with none).
    """

    bytes: int | None
    rows: int
    lru_hit_rate: float
    static_hit_rate: float
    misses_per_token_mean: float
    misses_per_token_p99: int

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON."""
        return {
            "bytes": self.bytes,
            "rows": self.rows,
            "lru_hit_rate": self.lru_hit_rate,
            "static_hit_rate": self.static_hit_rate,
            "misses_per_token_mean": self.misses_per_token_mean,
            "misses_per_token_p99": self.misses_per_token_p99,
        }


@dataclass(frozen=True)
class CacheFigures:
    """The reads of one cache (all layers together, or one layer) and every budget's hit rates.

    Attributes:
        layer: the Engram layer id; None for one cache shared by all layers.
        accesses: the reads (tokens x layers x columns, masked reads left out).
        unique_rows: the distinct rows read (the working set); ``working_set_bytes`` their bytes.
        hit_ceiling: 1 - first reads / accesses: what a cache of the working set serves (with
            cold starts, first reads per document).
        budgets: each budget's figures, in the order given.
        zipf_exponent, zipf_r2: the law ``frequency ~ rank^-s`` fitted by least squares on
            log-spaced ranks (s, and the share of the log-frequency variance it explains).
        top_1pct_share, top_10pct_share: the share of reads the most frequent 1% / 10% of the
            rows read take.
    """

    layer: int | None
    accesses: int
    unique_rows: int
    working_set_bytes: int
    hit_ceiling: float
    budgets: tuple[CacheBudget, ...]
    zipf_exponent: float
    zipf_r2: float
    top_1pct_share: float
    top_10pct_share: float

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON."""
        return {
            **({} if self.layer is None else {"layer": self.layer}),
            "accesses": self.accesses,
            "unique_rows": self.unique_rows,
            "working_set_bytes": self.working_set_bytes,
            "hit_ceiling": self.hit_ceiling,
            "budgets": [budget.to_dict() for budget in self.budgets],
            "zipf": {"exponent": self.zipf_exponent, "r2": self.zipf_r2},
            "top_1pct_share": self.top_1pct_share,
            "top_10pct_share": self.top_10pct_share,
        }


@dataclass(frozen=True)
class RowCacheResult:
    """What :func:`measure_row_cache` measured: the shared cache's figures and, with
    ``per_layer``, each layer's.

    Attributes:
        kind, sources, tokens, documents, boundary, tokenizer: the input, as for
            :class:`~ngramtool.analysis.measurement.CollisionsResult`.
        spec: the hash spec; ``negative_ids`` how its masked tokens read.
        row_bytes: bytes per row; ``encoding`` its name (None when given in bytes).
        cold_per_document: whether the LRU cache was emptied at each document.
        shared: one cache for every layer; ``layers``: one cache per layer (empty without
            ``per_layer``).
        engine: ``numba`` or ``numpy``; ``seconds``: the pass, hashing included.
        notes: choices the reading made that a user should know (a headerless file's type).
    """

    kind: str
    sources: list[str]
    tokens: int
    documents: int
    boundary: str
    tokenizer: str | None
    spec: HashSpec
    negative_ids: str
    row_bytes: int
    encoding: str | None
    cold_per_document: bool
    shared: CacheFigures
    layers: tuple[CacheFigures, ...]
    engine: str
    seconds: float
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON (``ngramtool cache --json``): the shared cache's at the top level."""
        return {
            "input": {
                "kind": self.kind,
                "sources": self.sources,
                "tokens": self.tokens,
                "documents": self.documents,
                "boundary": self.boundary,
            },
            "tokenizer": self.tokenizer,
            "spec": self.spec.to_dict(),
            "negative_ids": self.negative_ids,
            "row_bytes": self.row_bytes,
            "encoding": self.encoding,
            "cold_per_document": self.cold_per_document,
            **self.shared.to_dict(),
            "layers": [figures.to_dict() for figures in self.layers],
            "run": {
                "engine": self.engine,
                "seconds": round(self.seconds, 3),
                "reads_per_second": round(self.shared.accesses / max(self.seconds, 1e-9)),
            },
        }


# ------------------------------------------------------------------------------ LRU stacks
class LruStack(Protocol):
    """One LRU cache's state over a stream of reads, counting each token's misses at every budget."""

    def count(self, rows: np.ndarray, docs: np.ndarray, tally: Tally) -> None:
        """Count the reads ``rows`` [T, A] (-1: not a read) of tokens of documents ``docs`` [T]
        into ``tally`` (always the same tally: its budgets are part of the state)."""
        ...

    def frequencies(self) -> np.ndarray:
        """The reads of every distinct row so far (in no particular order)."""
        ...


class CompiledStack:
    """The budgets each read misses, by the numba kernels (:mod:`ngramtool.analysis.row_cache_kernels`).

    With ``rows`` (every row read is below it) up to :data:`DIRECT_ROWS`, a row is its own index
    into the per-row state (allocated zeroed: the OS backs only the pages rows are read from);
    otherwise a hash table gives each distinct row a dense id and the state grows with them.
    """

    def __init__(self, cold: bool, rows: int | None = None) -> None:
        from . import row_cache_kernels

        self._kernels = row_cache_kernels
        self._cold = cold
        self._direct = rows is not None and rows <= DIRECT_ROWS
        columns = 3 if cold else 2  # last read time + 1, reads, document of the last read
        self._state = np.zeros((rows if self._direct else 1 << 10, columns), dtype=np.int64)
        self._table = np.full((1 << 10, 2), row_cache_kernels.EMPTY, dtype=np.int64)  # row, dense id
        self._shift, self._known = 64 - 10, np.zeros(1, dtype=np.int64)  # hash shift, ids given
        self._clock = np.zeros(3, dtype=np.int64)  # the next read time, the rows marked, the first budget
        self._bits = np.zeros(8, dtype=np.uint64)  # with no cursor; the marks of the last reads
        self._budgets: np.ndarray | None = None
        self._cursors = np.zeros(0, dtype=np.int64)

    def count(self, rows: np.ndarray, docs: np.ndarray, tally: Tally) -> None:
        self._run(rows, docs, tally, np.zeros((0, 0), dtype=np.int64))

    def budgets_missed(self, rows: np.ndarray, docs: np.ndarray, tally: Tally) -> np.ndarray:
        """:meth:`count`, and how many of ``tally``'s budgets each read misses [T, A] (-1: not a read)."""
        out = np.empty(rows.shape, dtype=np.int64)
        self._run(rows, docs, tally, out)
        return out

    def frequencies(self) -> np.ndarray:
        reads = self._state[:, self._kernels.READS]
        return reads[reads > 0]

    def _run(self, rows: np.ndarray, docs: np.ndarray, tally: Tally, out: np.ndarray) -> None:
        if self._direct and rows.size and int(rows.max()) >= self._state.shape[0]:
            raise ValueError(f"a row of {int(rows.max())} is beyond the {self._state.shape[0]} rows given")
        if self._budgets is None or not np.array_equal(self._budgets, tally.budgets):
            self._budgets = tally.budgets
            self._cursors = np.empty(tally.budgets.shape[0], dtype=np.int64)
            self._place_cursors()
        ids = rows if self._direct else self._identify(rows)
        start = 0
        while True:
            start = self._kernels.count_misses(
                ids,
                start,
                docs,
                self._cold,
                self._state,
                self._clock,
                self._bits,
                self._cursors,
                self._budgets,
                tally.counters,
                tally.token_misses,
                out,
            )
            if start == rows.shape[0]:
                return
            self._renumber(rows.shape[1])

    def _place_cursors(self) -> None:
        self._clock[2] = self._kernels.place_cursors(self._budgets, self._bits, self._clock[0], self._cursors)

    def _renumber(self, width: int) -> None:
        """Renumber the read times 0, 1, ... (each row's last read only) into room for
        :data:`TIME_ROOM` times the rows marked, and place the cursors again."""
        marked = self._kernels.renumber(self._state, self._bits)
        self._bits = np.empty(-(-TIME_ROOM * (marked + width) // 64), dtype=np.uint64)
        self._kernels.fill(marked, self._bits)
        self._clock[0] = marked
        if self._budgets is not None:
            self._place_cursors()

    def _identify(self, rows: np.ndarray) -> np.ndarray:
        """The dense ids of ``rows``, the hash table and the state grown to hold them."""
        ids = np.empty(rows.shape, dtype=np.int64)
        start = 0
        while (
            start := self._kernels.identify(rows, start, self._table, self._shift, self._known, ids)
        ) < rows.shape[0]:
            size = self._table.shape[0] * 2
            while int(self._known[0]) + rows.shape[1] > size // 2:
                size *= 2
            table = np.full((size, 2), self._kernels.EMPTY, dtype=np.int64)
            self._shift = 64 - size.bit_length() + 1
            self._kernels.rehash(self._table, table, self._shift)
            self._table = table
        if int(self._known[0]) > self._state.shape[0]:
            state = np.zeros((self._table.shape[0] // 2, self._state.shape[1]), dtype=np.int64)
            state[: self._state.shape[0]] = self._state
            self._state = state
        return ids


class NumpyStack:
    """Stack distances with numpy, a chunk at a time (the same counts as :class:`CompiledStack`).

    The state is each distinct row's last read, in time order. Within a chunk, the distance of a
    read at ``q`` whose row was read last at ``p`` is ``q - p - 1`` minus the reads in between
    that are not the last of their row before ``q``: the intervals (previous read, read) nested
    in ``(p, q)``, counted by a merge-sort count of inversions.
    """

    def __init__(self, cold: bool) -> None:
        self._cold = cold
        self._rows = np.zeros(0, dtype=np.int64)  # the distinct rows, by their last read's time
        self._docs = np.zeros(0, dtype=np.int64)  # the document of each one's last read
        self._freq = np.zeros(0, dtype=np.int64)

    def count(self, rows: np.ndarray, docs: np.ndarray, tally: Tally) -> None:
        tally.add(tally.budgets_missed(self.distances(rows, docs)), self._rows.shape[0])

    def distances(self, rows: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """Each read's stack distance [T, A]: :data:`NOT_READ`, :data:`FIRST` (a first read, of the
        stream or of its document with cold starts) or the distinct rows read since the previous
        read of its row."""
        flat = rows.reshape(-1)
        out = np.full(flat.shape[0], NOT_READ, dtype=np.int64)
        where = np.flatnonzero(flat >= 0)
        read, doc = flat[where], np.repeat(docs, rows.shape[1])[where]
        order = np.argsort(read, kind="stable")
        ordered = read[order]
        same = ordered[1:] == ordered[:-1]
        before = np.full(read.shape[0], -1, dtype=np.int64)  # the previous read of the row in the chunk
        before[order[1:][same]] = order[:-1][same]
        held = self._rows.shape[0]
        sorter = np.argsort(self._rows)
        found = np.searchsorted(self._rows, read, sorter=sorter)
        found = sorter[np.minimum(found, max(held - 1, 0))] if held else found
        in_history = (before < 0) & (self._rows[found] == read) if held else np.zeros(read.shape, bool)
        prev = np.where(before >= 0, held + before, -1)
        prev[in_history] = found[in_history]
        prev_doc = np.where(before >= 0, doc[np.maximum(before, 0)], -1)
        prev_doc[in_history] = self._docs[found[in_history]]
        seen = np.flatnonzero(prev >= 0)
        nested = _earlier_greater(prev[seen])
        distance = np.full(read.shape[0], FIRST, dtype=np.int64)
        distance[seen] = held + seen - prev[seen] - 1 - nested
        if self._cold:
            distance[(prev >= 0) & (prev_doc != doc)] = FIRST
        out[where] = distance
        self._advance(read, doc, order, ordered)
        return out.reshape(rows.shape)

    def frequencies(self) -> np.ndarray:
        return self._freq.copy()

    def _advance(self, read: np.ndarray, doc: np.ndarray, order: np.ndarray, ordered: np.ndarray) -> None:
        """The state after the chunk: rows not read in it, then its rows by their last read."""
        if not read.shape[0]:
            return
        ends = np.flatnonzero(np.append(ordered[1:] != ordered[:-1], True))  # each row's last read
        reads = np.diff(np.append(-1, ends))
        last = order[ends]
        by_time = np.argsort(last)
        chunk_rows = ordered[ends]
        read_before = np.isin(self._rows, chunk_rows)
        earlier = np.zeros(chunk_rows.shape[0], dtype=np.int64)
        position = np.searchsorted(chunk_rows, self._rows[read_before])
        earlier[position] = self._freq[read_before]
        self._rows = np.concatenate([self._rows[~read_before], chunk_rows[by_time]])
        self._docs = np.concatenate([self._docs[~read_before], doc[last][by_time]])
        self._freq = np.concatenate([self._freq[~read_before], (reads + earlier)[by_time]])


def _earlier_greater(values: np.ndarray) -> np.ndarray:
    """For each of the distinct ``values``, how many values before it are greater (bottom-up merge
    sort: at each width, the right half of a block counts the greater values of its left half)."""
    n = values.shape[0]
    rank = np.empty(n, dtype=np.int64)
    rank[np.argsort(values)] = np.arange(n)
    index = np.arange(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    width = 1
    while width < n:
        block = index // (2 * width)
        right = (index // width) % 2 == 1
        left = np.sort(block[~right] * n + rank[~right])
        key = block[right] * n
        out[right] += np.searchsorted(left, key + n) - np.searchsorted(left, key + rank[right], side="right")
        width *= 2
    return out


def stack(cold: bool, compiled: bool | None, rows: int | None = None) -> LruStack:
    """The compiled stack (numba imports and ``compiled`` is not False) or the numpy one; ``rows``:
    every row read is below it (None: unknown)."""
    if not use_numba(compiled, "the compiled row-cache pass"):
        return NumpyStack(cold)
    return CompiledStack(cold, rows)


# ------------------------------------------------------------------------------ tallying
class Tally:
    """Per-token misses at sorted budgets (rows; the last beyond any count of rows) of one cache.

    ``token_misses[b, m]``: the tokens with ``m`` misses in a cache of ``budgets[b]`` rows;
    ``counters``: [tokens, reads, distinct rows read]. The compiled pass counts into them
    itself; :meth:`add` counts the numpy pass's reads.
    """

    def __init__(self, budgets: np.ndarray, width: int) -> None:
        self.budgets = budgets
        self.token_misses = np.zeros((budgets.shape[0], width + 1), dtype=np.int64)
        self.counters = np.array([0, 0, 0], dtype=np.int64)

    def budgets_missed(self, distances: np.ndarray) -> np.ndarray:
        """How many of the budgets each read of stack ``distances`` misses (-1: not a read)."""
        far = np.where(distances == FIRST, np.iinfo(np.int64).max, distances)
        missed = np.searchsorted(self.budgets, far, side="right")  # the budgets at or below the distance
        missed[distances == NOT_READ] = -1
        return missed

    def add(self, missed: np.ndarray, distinct: int) -> None:
        """Count a block of tokens' reads by the budgets each misses ([T, A], -1: not a read);
        ``distinct``: the distinct rows read so far."""
        tokens, width = missed.shape
        sweep = self.budgets.shape[0]
        slots = np.arange(tokens)[:, None] * (sweep + 1) + np.maximum(missed, 0)
        per_token = np.bincount(slots.reshape(-1), minlength=tokens * (sweep + 1)).reshape(tokens, sweep + 1)
        misses = per_token[:, ::-1].cumsum(axis=1)[:, ::-1]  # column b+1: misses at budget b
        for b in range(sweep):
            self.token_misses[b] += np.bincount(misses[:, b + 1], minlength=width + 1)
        self.counters[0] += tokens
        self.counters[1] += int(np.count_nonzero(missed >= 0))
        self.counters[2] = distinct

    @property
    def tokens(self) -> int:
        """Tokens counted."""
        return int(self.counters[0])

    @property
    def accesses(self) -> int:
        """Reads counted."""
        return int(self.counters[1])

    @property
    def first(self) -> int:
        """Reads with no finite distance: the misses of a cache beyond every distance."""
        return self._misses(self.budgets.shape[0] - 1)

    def lru_hits(self, rows: int) -> int:
        """Hits of a cache of ``rows``: the reads at a distance below it."""
        return self.accesses - self._misses(self._budget(rows))

    def misses_per_token(self, rows: int) -> np.ndarray:
        """Tokens by their misses in a cache of ``rows``."""
        return self.token_misses[self._budget(rows)]

    def _misses(self, budget: int) -> int:
        return int(self.token_misses[budget] @ np.arange(self.token_misses.shape[1]))

    def _budget(self, rows: int) -> int:
        """The budget counted for a cache of ``rows``: one of the budgets, or the last for a cache
        of every distinct row (only first reads miss)."""
        at = int(np.searchsorted(self.budgets, rows))
        if at < self.budgets.shape[0] and self.budgets[at] == rows:
            return at
        if rows >= self.counters[2]:
            return self.budgets.shape[0] - 1
        raise ValueError(f"no misses were counted for a cache of {rows} rows")


def figures(
    tally: Tally,
    frequencies: np.ndarray,
    given: Sequence[tuple[int | None, int]] | None,
    row_bytes: int,
    layer: int | None,
) -> CacheFigures:
    """The figures of one cache; ``given``: (bytes or None, rows) of each budget, in order (None:
    the default sweep up to this cache's working set)."""
    accesses = tally.accesses
    share = 1 / accesses if accesses else 0.0
    top = np.sort(frequencies)[::-1]
    pinned = np.concatenate([[0], np.cumsum(top)])
    unique = int(top.shape[0])
    if given is None:
        given = [(size, size // row_bytes) for size in default_budgets(unique * row_bytes)]
    budgets = []
    for size, rows in given:
        misses = tally.misses_per_token(rows)
        p99 = int(np.searchsorted(np.cumsum(misses), math.ceil(0.99 * tally.tokens))) if tally.tokens else 0
        hits = tally.lru_hits(rows)
        budgets.append(
            CacheBudget(
                bytes=size,
                rows=rows,
                lru_hit_rate=hits * share,
                static_hit_rate=int(pinned[min(rows, unique)]) * share,
                misses_per_token_mean=(accesses - hits) / max(tally.tokens, 1),
                misses_per_token_p99=p99,
            )
        )
    exponent, r2 = zipf_fit(top)
    return CacheFigures(
        layer=layer,
        accesses=accesses,
        unique_rows=unique,
        working_set_bytes=unique * row_bytes,
        hit_ceiling=(accesses - tally.first) * share,
        budgets=tuple(budgets),
        zipf_exponent=exponent,
        zipf_r2=r2,
        top_1pct_share=_top_share(pinned, 0.01) * share,
        top_10pct_share=_top_share(pinned, 0.10) * share,
    )


def _top_share(pinned: np.ndarray, fraction: float) -> int:
    """Reads of the most frequent ``fraction`` of the rows (at least one row)."""
    rows = pinned.shape[0] - 1
    return int(pinned[min(rows, max(1, math.ceil(fraction * rows)))]) if rows else 0


def zipf_fit(descending: np.ndarray) -> tuple[float, float]:
    """(s, r2) of ``log f = c - s log rank`` fitted on up to :data:`ZIPF_POINTS` log-spaced ranks of
    the frequencies (descending); (0.0, 0.0) with fewer than two ranks to fit."""
    ranks = np.unique(np.geomspace(1, max(descending.shape[0], 1), ZIPF_POINTS).round().astype(np.int64))
    if ranks.shape[0] < 2:
        return 0.0, 0.0
    x, y = np.log(ranks), np.log(descending[ranks - 1].astype(np.float64))
    slope, intercept = np.polyfit(x, y, 1)
    spread = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - float(((y - (slope * x + intercept)) ** 2).sum()) / spread if spread else 1.0
    return float(-slope), r2


def default_budgets(working_set_bytes: int) -> list[int]:
    """1 MB, 2 MB, 5 MB, 10 MB, ... below the working set, then the working set itself (bytes)."""
    sweep, scale = [], 10**6
    while True:
        for step in (1, 2, 5):
            if step * scale >= working_set_bytes:
                return [*sweep, working_set_bytes]
            sweep.append(step * scale)
        scale *= 10


# ---------------------------------------------------------------------------------- pass
@dataclass(frozen=True)
class CacheOptions:
    """What caches a row-cache pass simulates and how big a row is.

    Attributes:
        budgets: cache sizes in bytes; ``budget_rows``: in rows (not both). Default: 1 MB, 2 MB,
            5 MB, ... up to the working set, and the working set.
        row_bytes: bytes per row; or ``encoding`` (``fp32``, ``bf16`` (default), ``fp8``,
            ``fp8-e8m0``, ``q8_0``, ``q4_k``, ``q3_k``) of rows of ``dim`` values (default 64).
        per_layer: also measure one cache per layer.
        cold_per_document: empty the LRU cache at each document (a serving session's cold
            start); pinned rows stay.
    """

    budgets: Sequence[int] | None = None
    budget_rows: Sequence[int] | None = None
    row_bytes: int | None = None
    encoding: str | None = None
    dim: int | None = None
    per_layer: bool = False
    cold_per_document: bool = False

    def __post_init__(self) -> None:
        if self.budgets is not None and self.budget_rows is not None:
            raise UsageError("give `budgets` (bytes) or `budget_rows`, not both")
        if any(value < 0 for value in (*(self.budgets or ()), *(self.budget_rows or ()))):
            raise UsageError("a budget must be 0 or more")
        bytes_per_row(self.row_bytes, self.encoding, self.dim)  # checked when made


def measure_row_cache(
    source: Any = (),
    mapping: NgramHashMapping | None = None,
    *,
    cache: CacheOptions = CacheOptions(),
    options: MeasureOptions | None = None,
    compiled: bool | None = None,
    progress: Progress | None = None,
) -> RowCacheResult:
    """Measure the row reads of the input: working set, exact LRU and best static hit rates per
    budget, misses per token, and how Zipf-like the row frequencies are.

    Args:
        source: what :func:`~ngramtool.inputs.stream.open_stream` reads (text in any form, a token
            file, an index, a merged dataset, a stream; or a stream opened already).
        mapping: the tokenizer, vocabulary, spec and masking convention of text or a token file
            (None: cl100k_base and the default spec); an artifact has its own.
        cache: the budgets, the row size, per-layer caches, cold starts (:class:`CacheOptions`).
        options: the boundary, a token limit, the tokenizer threads
            (:class:`~ngramtool.analysis.measurement.MeasureOptions`; None: the defaults).
        compiled: True: the numba pass (an error without numba); False: numpy; None: numba when
            installed. Both give the same numbers.
        progress: receives the bytes and tokens read.

    Examples:
        >>> from ngramtool import NgramHashMapping
        >>> from ngramtool.analysis.row_cache import CacheOptions, measure_row_cache
        >>> mapping = NgramHashMapping.build("cl100k_base", heads=2, layer_ids=[1])
        >>> budgets = CacheOptions(budget_rows=[0, 1000, 100000])
        >>> result = measure_row_cache("corpus.txt", mapping, cache=budgets)
        >>> result.shared.accesses, result.shared.unique_rows, round(result.shared.hit_ceiling, 3)
        (632488, 372694, 0.411)
        >>> [(b.rows, round(b.lru_hit_rate, 3), round(b.static_hit_rate, 3)) for b in result.shared.budgets]
        [(0, 0.0, 0.0), (1000, 0.104, 0.13), (100000, 0.331, 0.569)]
    """
    progress = progress or Progress()
    size, encoding_name = bytes_per_row(cache.row_bytes, cache.encoding, cache.dim)
    names = [source] if isinstance(source, str | Path) else source
    if isinstance(names, Sequence) and any(str(name).endswith(SUFFIX) for name in names):
        raise UsageError(f"saved type counts ({SUFFIX}) hold no order of reads: give the corpus itself")
    stream = (options or MeasureOptions()).open(source, mapping)
    spec = stream.spec
    given = [(b, b // size) for b in cache.budgets] if cache.budgets is not None else None
    given = [(None, r) for r in cache.budget_rows] if cache.budget_rows is not None else given
    sweep = [rows for _, rows in given] if given is not None else _default_grid(spec, size)
    grid = np.unique(np.array([*sweep, np.iinfo(np.int64).max], dtype=np.int64))
    caches: list[int | None] = [None, *(range(spec.num_layers) if cache.per_layer else ())]
    space = [int(spec.rows_per_layer.sum()), *(int(rows) for rows in spec.rows_per_layer)]
    stacks = [
        stack(cache.cold_per_document, compiled, space[0 if layer is None else layer + 1]) for layer in caches
    ]
    width = spec.num_layers * spec.num_columns
    tallies = [Tally(grid, width if layer is None else spec.num_columns) for layer in caches]
    offsets = np.concatenate([[0], np.cumsum(spec.rows_per_layer)[:-1]])[None, :, None]
    started = time.perf_counter()
    tokens = documents = 0
    progress.started(stream.total_bytes, 1, "local")
    for rows, docs, chunk in _row_blocks(stream):
        tokens += rows.shape[0]
        for layer, simulator, tally in zip(caches, stacks, tallies, strict=True):
            if layer is None:  # rows of every layer, numbered apart
                block = np.where(rows >= 0, rows + offsets, -1).reshape(rows.shape[0], width)
            else:
                block = np.ascontiguousarray(rows[:, layer, :])
            simulator.count(block, docs, tally)
        if chunk is not None:
            documents += int(chunk.doc_starts.shape[0])
            progress.advanced(chunk.nbytes, chunk.tokens.shape[0])
    if tokens == 0:
        raise NgramToolError("the input holds no tokens: nothing to measure")
    measured = [
        figures(tally, simulator.frequencies(), given, size, None if layer is None else spec.layer_ids[layer])
        for layer, simulator, tally in zip(caches, stacks, tallies, strict=True)
    ]
    return RowCacheResult(
        kind=stream.kind,
        sources=list(stream.sources),
        tokens=tokens,
        documents=documents,
        boundary=stream.boundary,
        tokenizer=(stream.tokenizer or {}).get("name"),
        spec=spec,
        negative_ids=stream.negative_ids,
        row_bytes=size,
        encoding=encoding_name,
        cold_per_document=cache.cold_per_document,
        shared=measured[0],
        layers=tuple(measured[1:]),
        engine="numpy" if isinstance(stacks[0], NumpyStack) else "numba",
        seconds=time.perf_counter() - started,
        notes=stream.notes,
    )


def _default_grid(spec: HashSpec, row_bytes: int) -> list[int]:
    """The rows of every budget a default sweep may show: up to all the rows of the spec."""
    return [budget // row_bytes for budget in default_budgets(int(spec.rows_per_layer.sum()) * row_bytes)]


def _row_blocks(stream: TokenStream) -> Iterator[tuple[np.ndarray, np.ndarray, TokenChunk | None]]:
    """(rows [T, L, C], the document number of each token, the chunk when its last block) of
    blocks of at most :data:`BLOCK_TOKENS` tokens of every stream, in order."""
    documents = 0
    for chunks in stream.streams():
        hasher = NgramHasher(stream.spec, boundary=stream.boundary, negative_ids=stream.negative_ids)
        for _, chunk, canonical in canonical_chunks(chunks, stream.vocab):
            total = canonical.shape[0]
            starts = np.asarray(chunk.doc_starts, dtype=np.int64)
            docs = documents - 1 + np.searchsorted(starts, np.arange(total), side="right")
            documents += starts.shape[0]
            for lo in range(0, max(total, 1), BLOCK_TOKENS):
                hi = min(lo + BLOCK_TOKENS, total)
                rows = hasher(canonical[lo:hi], starts_within(starts, lo, hi, total))
                yield rows, docs[lo:hi], chunk if hi == total else None
