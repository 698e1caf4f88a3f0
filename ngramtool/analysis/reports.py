"""Per-table collision reports: the rows the distinct n-grams of a corpus occupy on every head of a
spec (or of a sweep of table sizes), measured beside what uniform-random hashing would give.

Definitions and derivations are in docs/analysis.md. A head's row of an n-gram is ``mix mod
prime``; the mixes do not depend on the table sizes, so a sweep over table sizes computes each
distinct n-gram's mix once and reduces it per prime, reading the distinct n-grams a block at a
time. The distinct n-grams come from :mod:`ngramtool.analysis.counting`, the expectations from
:mod:`ngramtool.analysis.expectations`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

import numpy as np

from ..hashing.backends import use_numba
from ..hashing.backends.numpy_backend import column_mixes, ngram_mixes, speedrun_hashes
from ..spec.hashspec import HashSpec
from ..util.errors import UsageError
from .counting import MIX_BLOCK, NgramTypes, _merge, _runs, worker_threads
from .expectations import (
    expected_all_heads_shared,
    expected_collision_ratio,
    expected_indistinguishable,
    expected_max_per_row,
    expected_mean_per_row,
    expected_shared_share,
)
from .repeats import RepeatCounter
from .scratch import ScratchFile

_I64_MAX = (1 << 63) - 1  # mixes of canonical ids lie in [0, 2^63 - 1]


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


def analyse_collisions(
    types: Mapping[int, NgramTypes], spec: HashSpec, *, compiled: bool | None = None
) -> CollisionReport:
    """The collision figures of ``spec`` for the distinct n-grams ``types`` (``compiled``: as for
    :func:`sweep_collisions`)."""
    return sweep_collisions(types, [spec], compiled=compiled)[0]


def sweep_collisions(
    types: Mapping[int, NgramTypes],
    specs: Sequence[HashSpec],
    *,
    compiled: bool | None = None,
    loads_budget: int | None = None,
    threads: int | None = None,
) -> list[CollisionReport]:
    """Collision figures for several specs that differ only in table sizes (heads may differ too).

    The distinct n-grams are read in blocks, twice per order: the first pass computes their mixes
    (kept in a scratch file for the second) and counts every head's row loads, the second finds
    which n-grams share their row (a load above one). The mixes are reduced modulo every spec's
    primes, so the cost per extra table size is a few passes over the distinct n-grams, not the
    corpus. Memory: a block, the heads' loads (4 bytes per row of a table) of as many (spec,
    layer) pairs at a time as fit ``loads_budget`` bytes (default ``LOADS_BUDGET``; a larger
    pair a part of its heads at a time, one head at least), and their counters of repeated
    values (up to 32 MB each, the rest in buckets on disk; in memory where a layer's heads have
    mixes of their own and their tables multiply past 2^63): a sweep past the budget is analysed
    in groups, each reading the kept mixes again.

    ``compiled``: True, numba's passes (an error without numba); False, numpy's; None, numba's
    when it imports and there are :data:`SMALL_SWEEP_TYPES` distinct n-grams or more. The
    figures are the same. ``threads``: with numba's passes, the (spec, layer) pairs of a group
    are counted on this many threads at once (default: ``worker_threads``); the figures are the
    same whatever the threads.
    """
    if not specs:
        raise UsageError("give at least one spec (table size) to analyse")
    first = specs[0]
    if first.family == "speedrun" and len(specs) > 1:
        # Its rows read the pad as each table's reserved id: no mix is shared by the table sizes.
        return [
            report
            for spec in specs
            for report in sweep_collisions(
                types, [spec], compiled=compiled, loads_budget=loads_budget, threads=threads
            )
        ]
    for spec in specs[1:]:
        if spec.max_ngram != first.max_ngram or not np.array_equal(
            spec.column_multipliers, first.column_multipliers
        ):
            raise UsageError(
                "a sweep varies table sizes only: every spec needs the same N, layers, seed and V'"
            )
    missing = [n for n in range(2, first.max_ngram + 1) if n not in types]
    if missing:
        raise UsageError(f"no distinct n-grams were counted for order(s) {missing}")
    heads: list[list[HeadStats]] = [[] for _ in specs]
    orders: list[list[OrderStats]] = [[] for _ in specs]
    kernels = _analysis_kernels(compiled, sum(types[order].types for order in range(2, first.max_ngram + 1)))
    budget = LOADS_BUDGET if loads_budget is None else loads_budget
    threads = worker_threads(threads)
    with ThreadPoolExecutor(threads) if kernels is not None and threads > 1 else nullcontext() as pool:
        for order in range(2, first.max_ngram + 1):
            grams = types[order]
            kept = ScratchFile()  # the mixes, for pass two and for the groups after the first
            # Per layer with a tally by mix: the repeated mixes, counted by the first (None until then).
            same_mix: dict[int, int | None] = {}
            split: dict[tuple[int, int], _Tally] = {}  # the tally whose heads go on in the next group
            for group, parts in enumerate(_budgeted_parts(specs, order, grams.types, budget)):
                figures = _group_figures(
                    specs, parts, grams, kernels, kept, group == 0, same_mix, split, pool
                )
                for si, head_stats, order_stats in figures:
                    heads[si].extend(head_stats)
                    orders[si].append(order_stats)
            kept.close()
    return [
        CollisionReport(
            spec,
            tuple(sorted(heads[si], key=lambda s: (spec.layer_ids.index(s.layer), s.order, s.head))),
            tuple(sorted(orders[si], key=lambda s: (spec.layer_ids.index(s.layer), s.order))),
        )
        for si, spec in enumerate(specs)
    ]


LOADS_BUDGET = 1 << 26
"""Bytes of row loads (:func:`sweep_collisions`) held at once: 64 MiB, e.g. tables of 262,144 and
646,400 rows on 2 layers of 8 heads in one group (55 MiB), one of 1,000,003 rows in two, one of
16,000,000 rows a head at a time."""

Part = tuple[int, int, range]
"""(spec index, layer index, heads): what one tally counts in one group."""


def _budgeted_parts(specs: Sequence[HashSpec], order: int, types: int, budget: int) -> list[list[Part]]:
    """The heads of every (spec, layer index) pair of ``order`` in groups whose loads fit
    ``budget`` bytes, layer by layer: a pair whole where it fits, else its heads in consecutive
    parts that do (a head past it alone), in consecutive groups."""
    groups: list[list[Part]] = [[]]
    held = 0
    for li in range(specs[0].num_layers):
        for si, spec in enumerate(specs):
            sizes = [_loads_bytes(int(prime), types) for prime in spec.primes[li, order - 2]]
            for heads in _head_parts(sizes, budget):
                size = sum(sizes[heads.start : heads.stop])
                if groups[-1] and held + size > budget:
                    groups.append([])
                    held = 0
                groups[-1].append((si, li, heads))
                held += size
    return groups


def _head_parts(sizes: list[int], budget: int) -> list[range]:
    """All heads as one part where their loads fit ``budget``, else consecutive parts that do
    (a head past it alone)."""
    if sum(sizes) <= budget:
        return [range(len(sizes))]
    parts, start, held = [], 0, 0
    for h, size in enumerate(sizes):
        if h > start and held + size > budget:
            parts.append(range(start, h))
            start, held = h, 0
        held += size
    parts.append(range(start, len(sizes)))
    return parts


def _group_figures(
    specs: Sequence[HashSpec],
    parts: list[Part],
    grams: NgramTypes,
    kernels: ModuleType | None,
    kept: ScratchFile,
    fresh: bool,
    same_mix: dict[int, int | None],
    split: dict[tuple[int, int], _Tally],
    pool: Executor | None = None,
) -> list[tuple[int, list[HeadStats], OrderStats]]:
    """(spec index, head figures, order figures) of the (spec, layer index) pairs whose last heads
    are in one group: the group's tallies' two passes over the mixes, computed and appended to
    ``kept`` when ``fresh`` (the first group), else read back from it. A tally whose heads go on
    in the next group waits in ``split``. ``same_mix`` holds each layer's count of repeated mixes
    once its first tally by mix has it. The tallies of a block run on ``pool``'s threads at once
    (each holds its own loads and findings). The loads go when this returns."""
    first = specs[0]
    tallies = [_part_tally(specs, part, grams, kernels, split, same_mix) for part in parts]
    pairs = [(li, tally) for (_, li, _), tally in zip(parts, tallies, strict=True)]
    for mixes in _mix_blocks(grams, first) if fresh else _kept_blocks(kept, grams, first):
        if fresh:
            kept.append(mixes)
        _each(pool, lambda pair, mixes=mixes: pair[1].count_rows(mixes[pair[0]]), pairs)
    for mixes, counts in zip(_kept_blocks(kept, grams, first), grams.count_blocks(MIX_BLOCK), strict=True):
        _each(
            pool, lambda pair, mixes=mixes, counts=counts: pair[1].find_shared(mixes[pair[0]], counts), pairs
        )
    figures = []
    for (si, li, _), tally in zip(parts, tallies, strict=True):
        if not tally.done:
            split[si, li] = tally
            continue
        # Equal rows on every head where the primes' product exceeds 2^63 - 1 are equal mixes:
        # one count answers every such spec of the layer (the one tally that collects them).
        if tally.by_mix and tally.repeats is not None:
            same_mix[li] = tally.repeats.count()
        repeated = same_mix[li] if tally.by_mix else tally.repeats.count()
        figures.append((si, tally.head_stats(), tally.order_stats(repeated)))
    return figures


def _each(pool: Executor | None, work: Callable[[Any], None], items: list[Any]) -> None:
    """``work`` on every item: on ``pool``'s threads at once (an error is raised here), or in turn."""
    if pool is None:
        for item in items:
            work(item)
    else:
        for _ in pool.map(work, items):
            pass


def _part_tally(
    specs: Sequence[HashSpec],
    part: Part,
    grams: NgramTypes,
    kernels: ModuleType | None,
    split: dict[tuple[int, int], _Tally],
    same_mix: dict[int, int | None],
) -> _Tally:
    """The tally of a part: the pair's, waiting in ``split``, on to these heads, or a new one. Of
    the specs whose primes multiply past 2^63 - 1 only a layer's first collects repeated mixes
    (and enters the layer in ``same_mix``): its count answers for the others (see
    :class:`_Tally`), so a layer's later ones collect none."""
    si, li, heads = part
    waiting = split.pop((si, li), None)
    if waiting is not None:
        waiting.next_heads(heads)
        return waiting
    spec, order = specs[si], grams.order
    primes = spec.primes[li, order - 2]
    tally = _Tally(
        spec.layer_ids[li], order, primes, grams.types, grams.occurrences, kernels, spec.layer_mix, heads
    )
    if tally.by_mix:
        if li in same_mix:
            tally.repeats = None
        else:
            same_mix[li] = None
    return tally


def _kept_blocks(kept: ScratchFile, grams: NgramTypes, spec: HashSpec) -> Iterator[np.ndarray]:
    """The mixes :func:`_mix_blocks` gave, read back from ``kept`` block by block."""
    per_gram = spec.num_layers if spec.layer_mix else spec.num_layers * spec.heads
    shape = (spec.num_layers, -1) if spec.layer_mix else (spec.num_layers, spec.heads, -1)
    at = 0
    for lo in range(0, grams.types, MIX_BLOCK):
        size = min(MIX_BLOCK, grams.types - lo)
        mixes = kept.read(np.uint64, per_gram * size, at).reshape(shape)
        at += mixes.nbytes
        yield mixes


SMALL_SWEEP_TYPES = 1 << 18
"""Below this many distinct n-grams (all orders) the analysis runs numpy's passes: they end
before numba would have loaded (0.7 s)."""


def _analysis_kernels(compiled: bool | None, types: int) -> ModuleType | None:
    """The compiled kernels of the analysis' passes, or None (numpy): see :func:`sweep_collisions`."""
    if compiled is None and types < SMALL_SWEEP_TYPES:
        return None
    if not use_numba(compiled, "the compiled analysis"):
        return None
    from . import counting_kernels

    return counting_kernels


def _mix_blocks(grams: NgramTypes, spec: HashSpec) -> Iterator[np.ndarray]:
    """uint64 [L, b] (a layer's heads share the mix: :attr:`HashSpec.layer_mix`) or [L, K, b]
    (each head its own): the mixes of the distinct n-grams, a block at a time (mixes are never
    negative). The speedrun family's are its rows (below each table's size, the mix of one spec)."""
    for keys in grams.key_blocks(MIX_BLOCK):
        windows = np.zeros((keys.shape[0], spec.max_ngram), dtype=np.int64)
        windows[:, : grams.order] = grams.codec.decode(keys)
        first = spec.column(grams.order, 0)
        if spec.family == "speedrun":
            mixes = speedrun_hashes(windows, spec)[:, :, first : first + spec.heads].transpose(1, 2, 0)
        elif spec.layer_mix:
            mixes = ngram_mixes(windows, spec)[:, :, grams.order - 2].T
        else:
            mixes = column_mixes(windows, spec)[:, :, first : first + spec.heads].transpose(1, 2, 0)
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

    The heads may come a part at a time (``heads``, then :meth:`next_heads`), so that only that
    part's loads are held: both passes run once per part, and what pass two has found of the
    heads so far (shared on every head, the packed rows) waits in a scratch file for the next
    part, a block at a time.
    """

    def __init__(
        self,
        layer: int,
        order: int,
        primes: Sequence[int],
        types: int,
        occurrences: int,
        kernels: ModuleType | None = None,
        shared_mix: bool = True,
        heads: range | None = None,
    ) -> None:
        self.layer, self.order = layer, order
        self.types, self.occurrences = types, occurrences
        self.primes = [int(p) for p in primes]
        self.shared_mix = shared_mix  # False: each head has its own mix ([K, b] blocks)
        product = math.prod(self.primes)
        self.by_mix = shared_mix and product > _I64_MAX
        self.tuples = not shared_mix and product > _I64_MAX
        bound = _I64_MAX + 1 if self.by_mix else product
        self.repeats: RepeatCounter | _RowTupleRepeats | None = (
            _RowTupleRepeats() if self.tuples else RepeatCounter(bound, types)
        )
        self.shared_types = [0] * len(self.primes)
        self.shared_tokens = [0] * len(self.primes)
        self.used: list[int] = [0] * len(self.primes)  # rows holding an n-gram, per head
        self.top: list[int] = [0] * len(self.primes)  # most n-grams in a row, per head
        self.all_shared = 0
        self._kernels = kernels
        self._carry_in: ScratchFile | None = None  # pass two's findings of the heads before the part
        self._carry_out: ScratchFile | None = None
        self._read_at = 0
        self.loads: dict[int, _DenseLoads | _SparseLoads] = {}
        self.next_heads(range(len(self.primes)) if heads is None else heads)

    @property
    def done(self) -> bool:
        """Whether the current part holds the last head."""
        return self.heads.stop == len(self.primes)

    def next_heads(self, heads: range) -> None:
        """Count the heads ``heads`` from now on (the part after the last one, or the first)."""
        self._end_part()
        self.heads = heads
        self.loads = {h: _row_loads(self.primes[h], self.types, self._kernels) for h in heads}
        if self._carry_in is not None:
            self._carry_in.close()
        self._carry_in, self._carry_out, self._read_at = self._carry_out, None, 0
        if not self.done:
            self._carry_out = ScratchFile()

    def _end_part(self) -> None:
        """Keep the part's rows used and fullest row per head, and let its loads go."""
        for h, load in self.loads.items():
            self.used[h], self.top[h] = load.used, load.top
        self.loads = {}

    def _head_mixes(self, mixes: np.ndarray, head: int) -> np.ndarray:
        """One head's mixes of a block: the layer's ([b]) or its own row of ``mixes`` ([K, b])."""
        return mixes if self.shared_mix else mixes[head]

    def count_rows(self, mixes: np.ndarray) -> None:
        """Pass one: add a block's n-grams to the part's row loads."""
        for h, load in self.loads.items():
            load.add(self._head_mixes(mixes, h))

    def find_shared(self, mixes: np.ndarray, counts: np.ndarray) -> None:
        """Pass two (the part's loads complete): the block's shared n-grams, per head, and, with
        the last part, on every head."""
        size = counts.shape[0]
        packs = not (self.by_mix or self.tuples)
        if self._carry_in is None:
            everywhere = np.ones(size, dtype=bool)
            packed = np.zeros(size if packs else 0, dtype=np.uint64)
        else:
            everywhere = self._carry_in.read(np.bool_, size, self._read_at)
            packed = self._carry_in.read(np.uint64, size if packs else 0, self._read_at + size)
            self._read_at += size + packed.nbytes
        for h, load in self.loads.items():
            types, tokens = load.mark_shared(self._head_mixes(mixes, h), counts, everywhere, packed)
            self.shared_types[h] += types
            self.shared_tokens[h] += tokens
        if self._carry_out is not None:
            self._carry_out.append(everywhere)
            self._carry_out.append(packed)
            return
        self.all_shared += int(np.count_nonzero(everywhere))
        if self.tuples:
            rows = [mixes[h][everywhere] % np.uint64(p) for h, p in enumerate(self.primes)]
            self.repeats.add(np.stack(rows, axis=1))
        elif self.repeats is not None:
            self.repeats.add((mixes if self.by_mix else packed)[everywhere])

    def head_stats(self) -> list[HeadStats]:
        """Each head's figures (after both passes of the last part)."""
        self._end_part()
        if self._carry_in is not None:
            self._carry_in.close()
            self._carry_in = None
        t, stats = self.types, []
        for h, prime in enumerate(self.primes):
            used = self.used[h]
            stats.append(
                HeadStats(
                    layer=self.layer,
                    order=self.order,
                    head=h,
                    table=prime,
                    types=t,
                    occurrences=self.occurrences,
                    rows=used,
                    collision=1.0 - used / t if t else 0.0,
                    expected_collision=expected_collision_ratio(t, prime),
                    shared_types=self.shared_types[h] / t if t else 0.0,
                    shared_tokens=self.shared_tokens[h] / self.occurrences if t else 0.0,
                    expected_shared=expected_shared_share(t, prime),
                    mean_per_row=t / used if used else 0.0,
                    expected_mean_per_row=expected_mean_per_row(t, prime),
                    max_per_row=self.top[h],
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


class _RowTupleRepeats:
    """:class:`RepeatCounter` for heads with mixes of their own whose tables multiply past 2^63 - 1:
    the rows of every head (one tuple per n-gram shared on every head), counted in memory."""

    def __init__(self) -> None:
        self._blocks: list[np.ndarray] = []

    def add(self, rows: np.ndarray) -> None:
        """Add ``rows`` [m, K]: the rows on every head of m n-grams."""
        self._blocks.append(rows)

    def count(self) -> int:
        """How many of the tuples added occur more than once (each counted every time)."""
        if not self._blocks:
            return 0
        _, times = np.unique(np.concatenate(self._blocks), axis=0, return_counts=True)
        return int(times[times > 1].sum())


def _row_loads(table: int, types: int, kernels: ModuleType | None) -> _DenseLoads | _SparseLoads:
    """Row loads of a table for ``types`` n-grams: one count per row (by the compiled kernels when
    given), or, for a table far larger than the n-grams, counts of the rows hit only."""
    if _sparse(table, types):
        return _SparseLoads(table)
    return _DenseLoads(table, types, kernels)


def _sparse(table: int, types: int) -> bool:
    """Whether a table is so much larger than the n-grams that only the rows hit are counted."""
    return table > 4 * types + (1 << 22)


def _loads_bytes(table: int, types: int) -> int:
    """The most memory one head's row loads take: 4 bytes a row (8 from 2^31 n-grams on), or 32
    a row hit for a sparse table (16, twice while a block is merged in)."""
    if _sparse(table, types):
        return 32 * types
    return table * _load_dtype(types).itemsize


def _load_dtype(types: int) -> np.dtype:
    """A dense row load's dtype: int32, int64 from 2^31 n-grams on."""
    return np.dtype(np.int32 if types < 2**31 else np.int64)


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
        self.loads = np.zeros(table, dtype=_load_dtype(types))
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
