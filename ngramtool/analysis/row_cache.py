"""Row-access statistics: how many rows of fast memory a corpus's reads need (``ngramtool cache``).

Every token reads one row per column of every Engram layer. A row's **key** is its row within
its layer's table plus the rows of the earlier Engram layers (one key space over all layers), so
rows of different layers are different rows. Masked tokens read nothing under
``negative_ids="mask"`` (their rows are -1) and read their all-pad rows under ``"barrier"``.

:func:`measure_row_cache` makes one pass over the row stream and gives, for every budget at once:

- the hit rates of the caches engines ship, each exact (:data:`POLICIES`): **LRU** (a read hits
  a cache of B rows iff its LRU stack distance is below B, Mattson et al.; with each token's
  misses), the best **static** cache (the B most frequent rows pinned, loaded before the first
  read), **CLOCK** and **direct**-mapped caches; one cache for every layer, or with
  ``split="layer"`` the budget divided evenly among the layers (each layer its own cache);
- the distinct rows each batch of N tokens reads (the rows a prefill ubatch or a training step
  moves once), and the pages a cold read of a row touches on disk (``page_bytes``, ``layout``)
  and the pages LRU misses read per token;
- a Zipf fit of the row frequencies and the share of reads that the top rows take;
- the best static set of one budget, handed out (``export_hot``), or a hot set measured on
  another corpus replayed here (``hot``).

The simulators are in :mod:`ngramtool.analysis.row_cache_policies` (numba kernels in
:mod:`ngramtool.analysis.row_cache_kernels`, or numpy without numba: the same counts).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..hashing.backends import choose_backend, use_numba
from ..hashing.hasher import NgramHasher
from ..inputs.stream import TokenStream
from ..model.mapping import NgramHashMapping
from ..spec.hashspec import HashSpec
from ..util.chunks import TokenChunk, canonical_chunks, starts_within
from ..util.errors import NgramToolError, UsageError
from ..util.progress import Progress
from .hot_sets import FORMAT, VERSION, HotSet, check_spec, hot_set, load_hot_set
from .measurement import MeasureOptions
from .row_cache_policies import (
    BEYOND,
    DIRECT_ROWS,
    FIRST,
    NOT_READ,
    BatchCounter,
    CompiledBatches,
    CompiledClock,
    CompiledDirect,
    CompiledStack,
    LruStack,
    NumpyBatches,
    NumpyClock,
    NumpyDirect,
    NumpyStack,
    PolicyCaches,
    RowIds,
    Tally,
)
from .sizing import encoding_named, row_parts
from .type_counts import SUFFIX

__all__ = [
    "DIRECT_ROWS",
    "FIRST",
    "NOT_READ",
    "CacheBudget",
    "CacheFigures",
    "CacheOptions",
    "CompiledStack",
    "LruStack",
    "NumpyStack",
    "RowCacheResult",
    "Tally",
    "default_budgets",
    "figures",
    "measure_row_cache",
]

POLICIES = ("lru", "static", "clock", "direct")
"""The caches a pass can simulate, in the order they are reported."""
SPLITS = ("shared", "layer")
LAYOUTS = ("interleaved", "split")
BLOCK_TOKENS = 1 << 16  # tokens hashed and simulated at a time (bounded memory)
ZIPF_POINTS = 1000  # log-spaced ranks the Zipf law is fitted on


@dataclass(frozen=True)
class CacheBudget:
    """One cache size and how each policy does.

    Attributes:
        bytes: the budget in bytes as given (None when given in rows).
        rows: the rows it holds; ``rows_per_layer``: each layer's cache with ``split="layer"``.
        hit_rates: the share of reads each policy's cache serves, by policy (None: not measured
            at this size, see docs/analysis.md).
        misses_per_token_mean, misses_per_token_p99: LRU misses per token (masked tokens
            included, with none); ``lru_pages_per_token``: the pages those misses read.
    """

    bytes: int | None
    rows: int
    hit_rates: dict[str, float | None]
    misses_per_token_mean: float | None = None
    misses_per_token_p99: int | None = None
    lru_pages_per_token: float | None = None
    rows_per_layer: int | None = None

    @property
    def lru_hit_rate(self) -> float | None:
        """The LRU cache's hit rate."""
        return self.hit_rates.get("lru")

    @property
    def static_hit_rate(self) -> float | None:
        """The static cache's (the most frequent rows pinned) hit rate."""
        return self.hit_rates.get("static")

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON: ``<policy>_hit_rate`` for each policy measured."""
        out: dict[str, Any] = {"bytes": self.bytes, "rows": self.rows}
        if self.rows_per_layer is not None:
            out["rows_per_layer"] = self.rows_per_layer
        out.update({f"{policy}_hit_rate": rate for policy, rate in self.hit_rates.items()})
        if "lru" in self.hit_rates:
            out["misses_per_token_mean"] = self.misses_per_token_mean
            out["misses_per_token_p99"] = self.misses_per_token_p99
            out["lru_pages_per_token"] = self.lru_pages_per_token
        return out


@dataclass(frozen=True)
class BatchFigures:
    """The distinct rows each whole batch of ``tokens`` consecutive tokens reads.

    Attributes:
        tokens: tokens per batch; ``batches``: whole batches (the last, partial one is left out).
        unique_rows_mean, unique_rows_p50, unique_rows_p99, unique_rows_max: distinct rows per
            batch (percentiles as ``numpy.percentile``'s default; None without a whole batch);
            ``unique_bytes_*`` the same at the row size.
        dedupe_ratio: reads / distinct rows, each summed over the batches.
    """

    tokens: int
    batches: int
    reads: int
    unique_rows_mean: float | None
    unique_rows_p50: float | None
    unique_rows_p99: float | None
    unique_rows_max: int | None
    dedupe_ratio: float | None
    row_bytes: int

    @classmethod
    def of(cls, tokens: int, distinct: np.ndarray, reads: np.ndarray, row_bytes: int) -> BatchFigures:
        """The figures of the batches' distinct rows and reads."""
        if not distinct.shape[0]:
            return cls(tokens, 0, 0, None, None, None, None, None, row_bytes)
        total = int(distinct.sum())
        return cls(
            tokens=tokens,
            batches=int(distinct.shape[0]),
            reads=int(reads.sum()),
            unique_rows_mean=float(distinct.mean()),
            unique_rows_p50=float(np.percentile(distinct, 50)),
            unique_rows_p99=float(np.percentile(distinct, 99)),
            unique_rows_max=int(distinct.max()),
            dedupe_ratio=int(reads.sum()) / total if total else None,
            row_bytes=row_bytes,
        )

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON."""
        names = ("mean", "p50", "p99", "max")
        rows = (self.unique_rows_mean, self.unique_rows_p50, self.unique_rows_p99, self.unique_rows_max)
        return {
            "tokens": self.tokens,
            "batches": self.batches,
            "reads": self.reads,
            **{f"unique_rows_{name}": value for name, value in zip(names, rows, strict=True)},
            "dedupe_ratio": self.dedupe_ratio,
            **{
                f"unique_bytes_{name}": None if value is None else value * self.row_bytes
                for name, value in zip(names, rows, strict=True)
            },
        }


@dataclass(frozen=True)
class CacheFigures:
    """The reads of one cache (all layers together, or one layer) and every budget's hit rates.

    Attributes:
        layer: the Engram layer id; None for every layer (one cache, or one per layer with
            ``split="layer"``).
        accesses: the reads (tokens x layers x columns, masked reads left out).
        unique_rows: the distinct rows read (the working set); ``working_set_bytes`` their bytes.
        hit_ceiling: 1 - first reads / accesses: what a cache of the working set serves (with
            cold starts, first reads per document).
        budgets: each budget's figures, in the order given.
        zipf_exponent, zipf_r2: the law ``frequency ~ rank^-s`` fitted by least squares on
            log-spaced ranks (s, and the share of the log-frequency variance it explains).
        top_1pct_share, top_10pct_share: the share of reads the most frequent 1% / 10% of the
            rows read take.
        pages_per_read: the pages a cold read of a row touches, on average over the reads.
        batches: the distinct rows per batch, one entry per batch size (every layer only).
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
    pages_per_read: float = 0.0
    batches: tuple[BatchFigures, ...] = ()

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
            "pages_per_read": self.pages_per_read,
            **({"batches": [batch.to_dict() for batch in self.batches]} if self.layer is None else {}),
        }


@dataclass(frozen=True)
class HotReplay:
    """A hot set measured elsewhere, replayed here: ``hit_rate`` is the share of this input's reads
    whose row it holds (a static cache preloaded with it)."""

    path: str | None
    rows: int
    budget: dict[str, Any]
    static_hit_rate_claimed: float
    hits: int
    hit_rate: float

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON."""
        return {
            "path": self.path,
            "rows": self.rows,
            "budget": self.budget,
            "static_hit_rate_claimed": self.static_hit_rate_claimed,
            "hits": self.hits,
            "hit_rate": self.hit_rate,
        }


@dataclass(frozen=True)
class RowCacheResult:
    """What :func:`measure_row_cache` measured: the figures of every layer's reads and, with
    ``per_layer``, each layer's.

    Attributes:
        kind, sources, tokens, documents, boundary, tokenizer: the input, as for
            :class:`~ngramtool.analysis.measurement.CollisionsResult`.
        spec: the hash spec; ``negative_ids`` how its masked tokens read.
        row_bytes: bytes per row; ``encoding`` its name (None when given in bytes).
        cold_per_document: whether the dynamic caches were emptied at each document.
        policies, split, page_bytes, layout: as asked (:class:`CacheOptions`).
        shared: every layer's reads (one cache, or one per layer with ``split="layer"``);
            ``layers``: each layer's cache (empty without ``per_layer``).
        hot: the replayed hot set (None without ``hot``); ``hot_set``: the best static set of
            the ``export_hot`` budget (None without it), for
            :func:`~ngramtool.analysis.hot_sets.save_hot_set`.
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
    policies: tuple[str, ...] = ("lru", "static")
    split: str = "shared"
    page_bytes: int = 4096
    layout: str = "interleaved"
    hot: HotReplay | None = None
    hot_set: HotSet | None = None

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON (``ngramtool cache --json``): every layer's at the top level."""
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
            "policies": list(self.policies),
            "split": self.split,
            "page_bytes": self.page_bytes,
            "layout": self.layout,
            **self.shared.to_dict(),
            "layers": [figures.to_dict() for figures in self.layers],
            **({} if self.hot is None else {"hot": self.hot.to_dict()}),
            **({} if self.hot_set is None else {"exported_hot": self.hot_set.summary()}),
            "run": {
                "engine": self.engine,
                "seconds": round(self.seconds, 3),
                "reads_per_second": round(self.shared.accesses / max(self.seconds, 1e-9)),
            },
        }


def stack(cold: bool, compiled: bool | None, rows: int | None = None) -> LruStack:
    """The compiled stack (numba imports and ``compiled`` is not False) or the numpy one; ``rows``:
    every row read is below it (None: unknown)."""
    if not use_numba(compiled, "the compiled row-cache pass"):
        return NumpyStack(cold)
    return CompiledStack(cold, rows)


# ------------------------------------------------------------------------------ figures
def figures(
    tally: Tally,
    frequencies: np.ndarray | Sequence[np.ndarray],
    given: Sequence[tuple[int | None, int]] | None,
    row_bytes: int,
    layer: int | None,
) -> CacheFigures:
    """The LRU and static figures of one cache; ``given``: (bytes or None, rows) of each budget, in
    order (None: the default sweep up to this cache's working set). ``frequencies``: the reads of
    every distinct row, or one such array per part of a cache split by layer (each part then
    holds ``rows // parts`` rows)."""
    parts = [frequencies] if isinstance(frequencies, np.ndarray) else list(frequencies)
    split = len(parts) if len(parts) > 1 else 0
    return _Cache(tally, parts, row_bytes, layer, split=split).figures(given, ("lru", "static"))


@dataclass
class _Cache:
    """What one reported cache measured: the LRU tally and each part's row frequencies (one part,
    or one per layer with ``split="layer"``), the other policies' hits at ``budgets`` (rows of one
    part), the row space of each part, pages and batches."""

    tally: Tally
    parts: list[np.ndarray]
    row_bytes: int
    layer: int | None
    budgets: np.ndarray | None = None
    hits: dict[str, np.ndarray] | None = None
    spaces: tuple[int, ...] = ()
    pages: tuple[int, float | None] = (
        0,
        None,
    )  # all reads' pages; pages per read when every row touches as many
    batches: tuple[BatchFigures, ...] = ()
    split: int = 0  # with split="layer": the layers the budget is divided among (each cache's share)

    def figures(
        self, given: Sequence[tuple[int | None, int]] | None, policies: Sequence[str]
    ) -> CacheFigures:
        tally, accesses = self.tally, self.tally.accesses
        share = 1 / accesses if accesses else 0.0
        tops = [np.sort(part)[::-1] for part in self.parts]
        pinned = [np.concatenate([[0], np.cumsum(top)]) for top in tops]
        unique = sum(int(top.shape[0]) for top in tops)
        if given is None:
            given = [(size, size // self.row_bytes) for size in default_budgets(unique * self.row_bytes)]
        budgets = []
        for size, rows in given:
            each = rows // max(self.split, 1)
            rates: dict[str, float | None] = {}
            lru = "lru" in policies and tally.counted(each)
            for policy in policies:
                hits = self._hits(policy, each, pinned)
                rates[policy] = None if hits is None else hits * share
            misses = tally.misses_per_token(each) if lru else None
            budgets.append(
                CacheBudget(
                    bytes=size,
                    rows=rows,
                    hit_rates=rates,
                    misses_per_token_mean=(accesses - tally.lru_hits(each)) / max(tally.tokens, 1)
                    if lru
                    else None,
                    misses_per_token_p99=_p99(misses, tally.tokens) if misses is not None else None,
                    lru_pages_per_token=self._lru_pages(each) if lru else None,
                    rows_per_layer=each if self.split else None,
                )
            )
        top = tops[0] if len(tops) == 1 else np.sort(np.concatenate(tops))[::-1]
        everything = pinned[0] if len(tops) == 1 else np.concatenate([[0], np.cumsum(top)])
        exponent, r2 = zipf_fit(top)
        total_pages, _ = self.pages
        return CacheFigures(
            layer=self.layer,
            accesses=accesses,
            unique_rows=unique,
            working_set_bytes=unique * self.row_bytes,
            hit_ceiling=(accesses - tally.first) * share,
            budgets=tuple(budgets),
            zipf_exponent=exponent,
            zipf_r2=r2,
            top_1pct_share=_top_share(everything, 0.01) * share,
            top_10pct_share=_top_share(everything, 0.10) * share,
            pages_per_read=total_pages * share,
            batches=self.batches,
        )

    def _hits(self, policy: str, rows: int, pinned: list[np.ndarray]) -> int | None:
        """The hits of ``policy``'s cache of ``rows`` per part; None where it was not simulated."""
        if policy == "static":
            return sum(int(part[min(rows, part.shape[0] - 1)]) for part in pinned)
        if policy == "lru":
            return self.tally.lru_hits(rows) if self.tally.counted(rows) else None
        assert self.hits is not None and self.budgets is not None
        at = int(np.searchsorted(self.budgets, rows))
        if at < self.budgets.shape[0] and self.budgets[at] == rows:
            return int(self.hits[policy][at])
        # A CLOCK cache that holds every distinct row never evicts; a direct-mapped cache of the
        # whole row space gives every row a slot of its own: only first reads miss.
        full = max(part.shape[0] - 1 for part in pinned) if policy == "clock" else max(self.spaces)
        return self.tally.accesses - self.tally.first if rows >= full else None

    def _lru_pages(self, rows: int) -> float:
        """Pages read by the LRU misses of a cache of ``rows``, per token."""
        tally = self.tally
        _, each = self.pages
        pages = tally.pages_missed(rows) if each is None else (tally.accesses - tally.lru_hits(rows)) * each
        return pages / max(tally.tokens, 1)


def _p99(misses: np.ndarray, tokens: int) -> int:
    """The 99th percentile of the misses per token (``misses[m]``: the tokens with m misses)."""
    return int(np.searchsorted(np.cumsum(misses), math.ceil(0.99 * tokens))) if tokens else 0


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


def pages_touched(rows: np.ndarray, parts: Sequence[int], page_bytes: int, layout: str) -> np.ndarray:
    """The pages a read of each of ``rows`` (a layer's own numbering; -1: not a read, 0 pages)
    touches: ``interleaved``, row r at byte r x row bytes; ``split``, its values at r x value
    bytes in one region, its scales and its biases each in a region of their own (each region
    starting on a page)."""
    regions = [sum(parts)] if layout == "interleaved" else [size for size in parts if size]
    read = rows >= 0
    out = np.zeros(rows.shape, dtype=np.int64)
    for size in regions:
        start = rows * size
        out += np.where(read, (start + size - 1) // page_bytes - start // page_bytes + 1, 0)
    return out


def even_pages(parts: Sequence[int], page_bytes: int, layout: str) -> int | None:
    """The pages every row touches when that is the same for every row (each region's size divides
    the page or the page divides it), else None."""
    regions = [sum(parts)] if layout == "interleaved" else [size for size in parts if size]
    if all(page_bytes % size == 0 or size % page_bytes == 0 for size in regions):
        return sum(max(1, size // page_bytes) for size in regions)
    return None


# ---------------------------------------------------------------------------------- pass
@dataclass(frozen=True)
class CacheOptions:
    """What caches a row-cache pass simulates and how big a row is.

    Attributes:
        budgets: cache sizes in bytes; ``budget_rows``: in rows (not both). Default: 1 MB, 2 MB,
            5 MB, ... up to the working set, and the working set.
        row_bytes: bytes per row; or ``encoding`` (any of
            :func:`~ngramtool.analysis.sizing.encodings`, ``bf16`` by default) of rows of ``dim``
            values (default 64).
        per_layer: also measure one cache per layer.
        cold_per_document: empty the LRU, CLOCK and direct caches at each document (a serving
            session's cold start); pinned rows stay.
        policies: the caches simulated (:data:`POLICIES`; default LRU and static).
        split: ``shared`` (one cache for every layer) or ``layer`` (the budget divided evenly
            among the layers, rows rounded down, each layer its own cache).
        batch_tokens: batch sizes (tokens): the distinct rows of every whole batch.
        page_bytes, layout: the pages a read touches: rows ``interleaved`` (one layer's rows one
            after another) or ``split`` (all values, then all scales, then all biases).
        export_hot: keep the best static set of this many bytes (``RowCacheResult.hot_set``).
        hot: a hot set (a file from ``export_hot``, or loaded) to replay: its hit rate here.
    """

    budgets: Sequence[int] | None = None
    budget_rows: Sequence[int] | None = None
    row_bytes: int | None = None
    encoding: str | None = None
    dim: int | None = None
    per_layer: bool = False
    cold_per_document: bool = False
    policies: Sequence[str] = ("lru", "static")
    split: str = "shared"
    batch_tokens: Sequence[int] = ()
    page_bytes: int = 4096
    layout: str = "interleaved"
    export_hot: int | None = None
    hot: str | Path | HotSet | None = None

    def __post_init__(self) -> None:
        if self.budgets is not None and self.budget_rows is not None:
            raise UsageError("give `budgets` (bytes) or `budget_rows`, not both")
        if any(value < 0 for value in (*(self.budgets or ()), *(self.budget_rows or ()))):
            raise UsageError("a budget must be 0 or more")
        row_parts(self.row_bytes, self.encoding, self.dim)  # checked when made
        unknown = [policy for policy in self.policies if policy not in POLICIES]
        if unknown or not self.policies or len(set(self.policies)) != len(self.policies):
            raise UsageError(
                f"`policies` takes one or more of {', '.join(POLICIES)}, each once "
                f"(got {', '.join(self.policies)})"
            )
        object.__setattr__(self, "policies", tuple(p for p in POLICIES if p in self.policies))
        for name, value, known in (("split", self.split, SPLITS), ("layout", self.layout, LAYOUTS)):
            if value not in known:
                raise UsageError(f"`{name}` takes {' or '.join(known)} (got {value!r})")
        if any(size < 1 for size in self.batch_tokens):
            raise UsageError("`batch_tokens` takes batch sizes of 1 token or more")
        if self.page_bytes < 1:
            raise UsageError(f"`page_bytes` must be at least 1 (got {self.page_bytes})")
        if self.export_hot is not None and self.export_hot < 1:
            raise UsageError(f"`export_hot` must be a budget of 1 byte or more (got {self.export_hot})")


def measure_row_cache(
    source: Any = (),
    mapping: NgramHashMapping | None = None,
    *,
    cache: CacheOptions = CacheOptions(),
    options: MeasureOptions | None = None,
    compiled: bool | None = None,
    progress: Progress | None = None,
) -> RowCacheResult:
    """Measure the row reads of the input: working set, the hit rates of LRU, static, CLOCK and
    direct-mapped caches per budget, misses and pages per token, rows per batch, and how
    Zipf-like the row frequencies are.

    Args:
        source: what :func:`~ngramtool.inputs.stream.open_stream` reads (text in any form, a token
            file, an index, a merged dataset, a stream; or a stream opened already).
        mapping: the tokenizer, vocabulary, spec and masking convention of text or a token file
            (None: cl100k_base and the default spec); an artifact has its own.
        cache: the budgets, the row size, the policies, the split, batches, pages, per-layer
            caches, cold starts and hot sets (:class:`CacheOptions`).
        options: the boundary, a token limit, the tokenizer threads
            (:class:`~ngramtool.analysis.measurement.MeasureOptions`; None: the defaults).
        compiled: True: the numba pass (an error without numba); False: numpy; None: numba when
            installed. Both give the same numbers.
        progress: receives the bytes and tokens read.

    Examples:
        >>> from ngramtool import NgramHashMapping
        >>> from ngramtool.analysis.row_cache import CacheOptions, measure_row_cache
        >>> mapping = NgramHashMapping.build("cl100k_base", heads=2, layer_ids=[1])
        >>> every = ["lru", "static", "clock", "direct"]
        >>> budgets = CacheOptions(budget_rows=[0, 1000, 100000], policies=every)
        >>> result = measure_row_cache("corpus.txt", mapping, cache=budgets)
        >>> result.shared.accesses, result.shared.unique_rows, round(result.shared.hit_ceiling, 3)
        (632488, 372694, 0.411)
        >>> [(b.rows, *(round(rate, 3) for rate in b.hit_rates.values())) for b in result.shared.budgets]
        [(0, 0.0, 0.0, 0.0, 0.0), (1000, 0.104, 0.13, 0.106, 0.09), (100000, 0.331, 0.569, 0.337, 0.295)]
    """
    progress = progress or Progress()
    parts = row_parts(cache.row_bytes, cache.encoding, cache.dim)
    size = sum(parts)
    names = [source] if isinstance(source, str | Path) else source
    if isinstance(names, Sequence) and any(str(name).endswith(SUFFIX) for name in names):
        raise UsageError(f"saved type counts ({SUFFIX}) hold no order of reads: give the corpus itself")
    hot = load_hot_set(cache.hot) if isinstance(cache.hot, str | Path) else cache.hot
    stream = (options or MeasureOptions()).open(source, mapping)
    spec = stream.spec
    if hot is not None:
        check_spec(hot, spec, str(cache.hot) if isinstance(cache.hot, str | Path) else "(given)")
    slow = "the row-cache pass runs in numpy, several times slower"
    engine = "numba" if use_numba(compiled, "the compiled row-cache pass", slow_without=slow) else "numpy"
    plan = _Plan(spec, cache, size, engine)
    pass_ = _Pass(plan, parts, cache, None if hot is None else hot.member_bits(spec))
    started = time.perf_counter()
    progress.started(stream.total_bytes, 1, "local")
    for rows, docs, chunk in _row_blocks(stream):
        pass_.count(rows, docs)
        if chunk is not None:
            pass_.documents += int(chunk.doc_starts.shape[0])
            progress.advanced(chunk.nbytes, chunk.tokens.shape[0])
    if pass_.tokens == 0:
        raise NgramToolError("the input holds no tokens: nothing to measure")
    reported = pass_.reported()
    measured = [cache_.figures(plan.given, cache.policies) for cache_ in reported]
    exported = None
    if cache.export_hot is not None:
        exported = pass_.hot_set(cache.export_hot, size, _manifest(stream, pass_, cache, size, measured[0]))
    replay = None
    if hot is not None:
        replay = HotReplay(
            path=str(cache.hot) if isinstance(cache.hot, str | Path) else None,
            rows=hot.size,
            budget=hot.manifest.get("budget", {}),
            static_hit_rate_claimed=float(hot.manifest.get("static_hit_rate", float("nan"))),
            hits=pass_.hot_hits,
            hit_rate=pass_.hot_hits / max(measured[0].accesses, 1),
        )
    return RowCacheResult(
        kind=stream.kind,
        sources=list(stream.sources),
        tokens=pass_.tokens,
        documents=pass_.documents,
        boundary=stream.boundary,
        tokenizer=(stream.tokenizer or {}).get("name"),
        spec=spec,
        negative_ids=stream.negative_ids,
        row_bytes=size,
        encoding=None if cache.row_bytes is not None else encoding_named(cache.encoding).name,
        cold_per_document=cache.cold_per_document,
        shared=measured[0],
        layers=tuple(measured[1:]),
        engine=engine,
        seconds=time.perf_counter() - started,
        notes=stream.notes,
        policies=tuple(cache.policies),
        split=cache.split,
        page_bytes=cache.page_bytes,
        layout=cache.layout,
        hot=replay,
        hot_set=exported,
    )


class _Plan:
    """The budgets of a pass: ``given`` (bytes or None, rows) as asked (None: the default sweep,
    decided after the pass), the rows of one cache (``part_rows``: a layer's share with
    ``split="layer"``) simulated, and the LRU grid."""

    def __init__(self, spec: HashSpec, cache: CacheOptions, row_bytes: int, engine: str) -> None:
        self.spec, self.engine = spec, engine
        given = [(b, b // row_bytes) for b in cache.budgets] if cache.budgets is not None else None
        self.given = [(None, r) for r in cache.budget_rows] if cache.budget_rows is not None else given
        self.parts = spec.num_layers if cache.split == "layer" else 1
        sweep = [rows for _, rows in self.given] if self.given is not None else _default_grid(spec, row_bytes)
        self.part_rows = np.unique(np.array([rows // self.parts for rows in sweep], dtype=np.int64))
        with_lru = "lru" in cache.policies
        self.grid = np.unique(np.array([*(self.part_rows if with_lru else ()), BEYOND], dtype=np.int64))


@dataclass
class _Simulated:
    """The simulators of one cache: every layer's reads (``layer`` None) or one layer's."""

    layer: int | None
    space: int
    lru: LruStack
    tally: Tally
    policies: dict[str, PolicyCaches]
    batches: BatchCounter | None
    pages: int = 0

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        return self.lru.counts()


class _Pass:
    """One pass over the row blocks: every cache simulated, pages, batches, a hot set's hits."""

    def __init__(self, plan: _Plan, parts: tuple[int, int, int], cache: CacheOptions, hot: np.ndarray | None):
        spec = plan.spec
        self.plan, self.cache, self.spec, self.parts = plan, cache, spec, parts
        self.tokens = self.documents = self.hot_hits = 0
        self.hot_bits = hot
        self.offsets = np.concatenate([[0], np.cumsum(spec.rows_per_layer)[:-1]]).astype(np.int64)
        self.even = even_pages(parts, cache.page_bytes, cache.layout)
        split = cache.split == "layer"
        layers: list[int | None] = list(range(spec.num_layers)) if split or cache.per_layer else []
        self.caches = [self._simulated(layer, batches=split) for layer in layers]
        self.shared = None if split else self._simulated(None, batches=True)
        width = spec.num_layers * spec.num_columns
        self.combined = Tally(plan.grid, width) if split else None

    def _simulated(self, layer: int | None, batches: bool) -> _Simulated:
        spec, cache, compiled = self.spec, self.cache, self.plan.engine == "numba"
        space = int(spec.rows_per_layer.sum() if layer is None else spec.rows_per_layer[layer])
        width = spec.num_columns * (spec.num_layers if layer is None else 1)
        ids = RowIds(space) if compiled else None
        cold = cache.cold_per_document
        policies: dict[str, PolicyCaches] = {}
        budgets = self.plan.part_rows
        if "clock" in cache.policies:
            policies["clock"] = (
                CompiledClock(budgets, cold, ids, space) if ids is not None else NumpyClock(budgets, cold)
            )
        if "direct" in cache.policies:
            policies["direct"] = (CompiledDirect if compiled else NumpyDirect)(budgets, space, cold)
        counter: BatchCounter | None = None
        if batches and cache.batch_tokens:
            sizes = np.array(sorted(set(cache.batch_tokens)), dtype=np.int64)
            counter = CompiledBatches(sizes, ids) if ids is not None else NumpyBatches(sizes)
        lru = CompiledStack(cold, ids=ids) if ids is not None else NumpyStack(cold)
        return _Simulated(layer, space, lru, Tally(self.plan.grid, width), policies, counter)

    def count(self, rows: np.ndarray, docs: np.ndarray) -> None:
        """Count a block of tokens' rows [T, L, C] (-1: not a read) of documents ``docs``."""
        tokens, layers, columns = rows.shape
        self.tokens += tokens
        pages = (
            None
            if self.even is not None
            else pages_touched(rows, self.parts, self.cache.page_bytes, self.cache.layout)
        )
        if self.shared is not None or self.hot_bits is not None:
            keys = np.where(rows >= 0, rows + self.offsets[None, :, None], -1).reshape(
                tokens, layers * columns
            )
            if self.hot_bits is not None:
                read = keys[keys >= 0]
                self.hot_hits += int(np.count_nonzero((self.hot_bits[read >> 3] >> (read & 7)) & 1))
            if self.shared is not None:
                flat = None if pages is None else pages.reshape(tokens, layers * columns)
                self._count(self.shared, keys, docs, flat)
        missed = []
        for simulated in self.caches:
            layer = simulated.layer
            block = np.ascontiguousarray(rows[:, layer, :])
            block_pages = None if pages is None else np.ascontiguousarray(pages[:, layer, :])
            missed.append(self._count(simulated, block, docs, block_pages, keep=self.combined is not None))
        if self.combined is not None:
            distinct = sum(int(simulated.tally.counters[2]) for simulated in self.caches)
            self.combined.add(
                np.concatenate(missed, axis=1), distinct, None if pages is None else pages.reshape(tokens, -1)
            )

    def _count(
        self,
        simulated: _Simulated,
        keys: np.ndarray,
        docs: np.ndarray,
        pages: np.ndarray | None,
        keep: bool = False,
    ) -> np.ndarray | None:
        simulated.pages += int(np.count_nonzero(keys >= 0)) * self.even if pages is None else int(pages.sum())
        missed = None
        if keep:
            missed = simulated.lru.budgets_missed(keys, docs, simulated.tally, pages)
        else:
            simulated.lru.count(keys, docs, simulated.tally, pages)
        for caches in simulated.policies.values():
            caches.count(keys, docs)
        if simulated.batches is not None:
            simulated.batches.count(keys)
        return missed

    def reported(self) -> list[_Cache]:
        """Every layer's cache (one, or the layers' together), then each layer's with ``per_layer``."""
        row_bytes = sum(self.parts)
        each = [self._cache(simulated) for simulated in self.caches]
        if self.shared is not None:
            first = self._cache(self.shared)
            return [first, *(each if self.cache.per_layer else [])]
        assert self.combined is not None
        self.combined.saturated = max(int(simulated.tally.counters[2]) for simulated in self.caches)
        whole = _Cache(
            tally=self.combined,
            parts=[simulated.lru.frequencies() for simulated in self.caches],
            row_bytes=row_bytes,
            layer=None,
            budgets=self.plan.part_rows,
            hits={name: sum(self._hits(s)[name] for s in self.caches) for name in self.caches[0].policies},
            spaces=tuple(simulated.space for simulated in self.caches),
            pages=(sum(simulated.pages for simulated in self.caches), self.even),
            batches=self._batches(self.caches),
            split=self.spec.num_layers,
        )
        return [whole, *(each if self.cache.per_layer else [])]

    def _cache(self, simulated: _Simulated) -> _Cache:
        return _Cache(
            tally=simulated.tally,
            parts=[simulated.lru.frequencies()],
            row_bytes=sum(self.parts),
            layer=None if simulated.layer is None else self.spec.layer_ids[simulated.layer],
            budgets=self.plan.part_rows,
            hits=self._hits(simulated),
            spaces=(simulated.space,),
            pages=(simulated.pages, self.even),
            batches=self._batches([simulated]) if simulated.layer is None else (),
            split=self.spec.num_layers if self.cache.split == "layer" else 0,
        )

    def _hits(self, simulated: _Simulated) -> dict[str, np.ndarray]:
        """Each policy's hits at every budget of one cache: a cache of its whole row space (not
        simulated) misses only first reads."""
        tally = simulated.tally
        out = {}
        for name, caches in simulated.policies.items():
            out[name] = np.where(
                self.plan.part_rows >= simulated.space, tally.accesses - tally.first, caches.hits
            )
        return out

    def _batches(self, simulated: list[_Simulated]) -> tuple[BatchFigures, ...]:
        """Each batch size's figures, the distinct rows of the caches' reads added batch by batch."""
        counters = [s.batches for s in simulated if s.batches is not None]
        if not counters:
            return ()
        out = []
        for j, tokens in enumerate(counters[0].sizes.tolist()):
            distinct = sum(counter.batches(j)[0] for counter in counters)
            reads = sum(counter.batches(j)[1] for counter in counters)
            out.append(BatchFigures.of(tokens, distinct, reads, sum(self.parts)))
        return tuple(out)

    def hot_set(self, budget_bytes: int, row_bytes: int, manifest: dict[str, Any]) -> HotSet:
        """The best static set of ``budget_bytes`` (per layer ``rows // layers`` with ``split="layer"``)."""
        rows = budget_bytes // row_bytes
        if rows < 1:
            raise UsageError(f"`export_hot` {budget_bytes:,} bytes holds no row of {row_bytes:,} bytes")
        if self.shared is not None:
            keys, reads = self.shared.counts()
        else:  # each layer's best rows // layers, in the keys of every layer
            keys_each, reads_each = [], []
            for simulated in self.caches:
                rows_of, counts = simulated.counts()
                best = np.lexsort((rows_of, -counts))[: rows // len(self.caches)]
                keys_each.append(rows_of[best] + self.offsets[simulated.layer])
                reads_each.append(counts[best])
            keys, reads = np.concatenate(keys_each), np.concatenate(reads_each)
        chosen = hot_set(keys, reads, self.spec, rows, manifest)
        hits = int(sum(int(r.sum()) for r in chosen.reads))
        chosen.manifest["rows_per_layer"] = [int(r.shape[0]) for r in chosen.rows]
        chosen.manifest["static_hit_rate"] = hits / max(manifest["accesses"], 1)
        chosen.manifest["budget"] = {"bytes": budget_bytes, "rows": rows}
        return chosen


def _manifest(
    stream: TokenStream, pass_: _Pass, cache: CacheOptions, row_bytes: int, figures_: CacheFigures
) -> dict[str, Any]:
    """What a hot set was measured on (its file's manifest)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "spec_fingerprint": stream.spec.fingerprint,
        "spec": stream.spec.to_dict(),
        "layers": list(stream.spec.layer_ids),
        "tokenizer": stream.tokenizer,
        "tokenization": stream.tokenization,
        "corpus": [{"path": name, "bytes": _file_size(name)} for name in stream.sources],
        "tokens": pass_.tokens,
        "documents": pass_.documents,
        "accesses": figures_.accesses,
        "row_bytes": row_bytes,
        "encoding": None if cache.row_bytes is not None else encoding_named(cache.encoding).name,
        "split": cache.split,
    }


def _file_size(name: str) -> int | None:
    """The size of a corpus file (None: not a file, e.g. standard input)."""
    path = Path(name)
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())
    return None


def _default_grid(spec: HashSpec, row_bytes: int) -> list[int]:
    """The rows of every budget a default sweep may show: up to all the rows of the spec."""
    return [budget // row_bytes for budget in default_budgets(int(spec.rows_per_layer.sum()) * row_bytes)]


def _row_blocks(stream: TokenStream) -> Iterator[tuple[np.ndarray, np.ndarray, TokenChunk | None]]:
    """(rows [T, L, C], the document number of each token, the chunk when its last block) of
    blocks of at most :data:`BLOCK_TOKENS` tokens of every stream, in order."""
    documents = 0
    for chunks in stream.streams():
        hasher = NgramHasher(
            stream.spec,
            boundary=stream.boundary,
            negative_ids=stream.negative_ids,
            backend=choose_backend(input_bytes=stream.total_bytes).name,
        )
        for _, chunk, canonical in canonical_chunks(chunks, stream.vocab):
            total = canonical.shape[0]
            starts = np.asarray(chunk.doc_starts, dtype=np.int64)
            docs = documents - 1 + np.searchsorted(starts, np.arange(total), side="right")
            documents += starts.shape[0]
            for lo in range(0, max(total, 1), BLOCK_TOKENS):
                hi = min(lo + BLOCK_TOKENS, total)
                rows = hasher(canonical[lo:hi], starts_within(starts, lo, hi, total))
                yield rows, docs[lo:hi], chunk if hi == total else None
