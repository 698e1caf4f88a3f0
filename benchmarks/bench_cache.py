"""Row-cache statistics: ngramtool's one pass (exact LRU, CLOCK and direct-mapped caches at every
budget, rows per batch) against straightforward simulations, in one run.

    python benchmarks/bench_cache.py                       # 2M Zipf tokens, the engram-demo spec
    python benchmarks/bench_cache.py --tokens 56400000     # the issue's run: 1.8 billion reads
    python benchmarks/bench_cache.py --tokens 500000 --numpy
    python benchmarks/bench_cache.py --policy lru,static   # the pass without CLOCK, direct, batches

The corpus is synthetic, as in bench_collisions.py: ids drawn independently with P(rank r) ~
r^-zipf over V' ids, written once as a uint32 .npy file. The spec is engram-demo's layout (2
layers x 16 columns: 32 row reads per token). Measured, in one process (CPU seconds: the machine
may be shared):

- ``ngramtool``: ``measure_row_cache`` over the token file (read in chunks, hashed; the dense
  ids, the LRU cursors and per-token misses, the CLOCK and direct-mapped caches and the
  distinct rows per batch of ``--batch-tokens`` by the numba kernels), every budget of the
  default sweep (1 MB .. the whole table) at once: reads per CPU second of each policy's
  kernels and of the whole run (and the wall seconds), the CPU seconds of each stage, the
  peak RSS;
- the straightforward simulations of ONE budget (``--budget-rows``) on the first ``--slice``
  tokens' rows (computed beforehand, not timed): LRU (one ``OrderedDict``), CLOCK (a list ring,
  a dict of positions, a list of bits), direct-mapped (a dict of slots), each against the
  compiled kernel on the same rows and budget: the same hits, and the ratio of reads per second
  (a sweep of k budgets costs each simulation k passes);
- with ``--numpy``: the numpy fallback's LRU pass on the slice.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_collisions import StageClock, corpus_file  # the same synthetic corpus

from ngramtool import HashSpec, NgramHashMapping, TokenFileReader, hash_ngrams
from ngramtool.analysis import row_cache, row_cache_policies
from ngramtool.analysis.row_cache import POLICIES, CacheOptions, measure_row_cache
from ngramtool.analysis.row_cache_policies import (
    CompiledClock,
    CompiledDirect,
    CompiledStack,
    LruStack,
    NumpyStack,
    PolicyCaches,
    RowIds,
    Tally,
)
from ngramtool.hashing.hasher import NgramHasher
from ngramtool.util.profiling import peak_rss_bytes


def lru_hits(rows: np.ndarray, budget: int) -> int:
    """Hits of an LRU cache of ``budget`` rows over the reads in order: one OrderedDict."""
    cache: OrderedDict[int, None] = OrderedDict()
    hits = 0
    for row in rows.tolist():
        if row in cache:
            hits += 1
            cache.move_to_end(row)
        else:
            cache[row] = None
            if len(cache) > budget:
                cache.popitem(last=False)
    return hits


def clock_hits(rows: np.ndarray, budget: int) -> int:
    """Hits of a CLOCK cache of ``budget`` slots: a list ring, a dict of each key's slot, a list of bits."""
    ring: list[int] = []
    bits: list[bool] = []
    slot: dict[int, int] = {}
    hand = hits = 0
    for row in rows.tolist():
        if row in slot:
            bits[slot[row]] = True
            hits += 1
        elif len(ring) < budget:
            slot[row] = len(ring)
            ring.append(row)
            bits.append(False)
        else:
            while bits[hand]:
                bits[hand] = False
                hand = (hand + 1) % budget
            del slot[ring[hand]]
            ring[hand], bits[hand], slot[row] = row, False, hand
            hand = (hand + 1) % budget
    return hits


def direct_hits(rows: np.ndarray, budget: int) -> int:
    """Hits of a direct-mapped cache of ``budget`` slots: a list of slots, a row in slot row mod B."""
    slots: list[int] = [-1] * budget
    hits = 0
    for row in rows.tolist():
        hits += slots[row % budget] == row
        slots[row % budget] = row
    return hits


def slice_rows(path: Path, tokens: int, spec: HashSpec) -> np.ndarray:
    """The reads of the first ``tokens`` tokens, layers numbered apart: [T, L x C]."""
    ids = np.load(path, mmap_mode="r")[:tokens].astype(np.int64)
    rows = hash_ngrams(ids, spec)
    offsets = np.concatenate([[0], np.cumsum(spec.rows_per_layer)[:-1]])[None, :, None]
    return (rows + offsets).reshape(rows.shape[0], -1)


def policy_hits(rows: np.ndarray, caches: PolicyCaches) -> tuple[int, float]:
    """(hits at the one budget, CPU seconds) of one pass of CLOCK or direct-mapped ``caches``."""
    start = time.process_time()
    for part in np.array_split(rows, max(1, rows.shape[0] // 65536)):
        caches.count(np.ascontiguousarray(part), np.zeros(part.shape[0], dtype=np.int64))
    return int(caches.hits[0]), time.process_time() - start


def compiled_hits(rows: np.ndarray, budget: int, stack: LruStack) -> tuple[int, float]:
    """(hits at ``budget``, CPU seconds) of one pass of ``stack`` over ``rows``."""
    tally = Tally(np.array([budget, np.iinfo(np.int64).max]), rows.shape[1])
    start = time.process_time()
    stack.count(rows, np.zeros(rows.shape[0], dtype=np.int64), tally)
    seconds = time.process_time() - start
    return tally.lru_hits(budget), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=2_000_000)
    parser.add_argument("--vocab-size", type=int, default=62_330, help="V' (cl100k_base compressed: 62,330)")
    parser.add_argument("--zipf", type=float, default=1.1, help="exponent of the id distribution")
    parser.add_argument("--slice", type=int, default=100_000, help="tokens of the OrderedDict comparison")
    parser.add_argument("--budget-rows", type=int, default=1 << 16, help="the OrderedDict's one budget")
    parser.add_argument("--numpy", action="store_true", help="also time the numpy fallback on the slice")
    parser.add_argument("--policy", default=",".join(POLICIES), help="the caches of the pass")
    parser.add_argument("--batch-tokens", type=int, default=2048, help="tokens per batch (0: none)")
    parser.add_argument("--corpus-dir", default=os.path.join(tempfile.gettempdir(), "ngramtool-bench"))
    args = parser.parse_args()

    corpus = corpus_file(Path(args.corpus_dir), args.tokens, args.vocab_size, args.zipf)
    spec = HashSpec(vocab_size=args.vocab_size, pad_id=args.vocab_size - 1)
    width = spec.num_layers * spec.num_columns
    print(
        f"{args.tokens:,} tokens of Zipf({args.zipf}) ids over V'={args.vocab_size:,}; engram-demo layout, "
        f"{width} reads per token: {args.tokens * width:,} reads; one thread"
    )
    space = int(spec.rows_per_layer.sum())
    policies = args.policy.split(",")
    batches = [args.batch_tokens] if args.batch_tokens else []
    options = CacheOptions(policies=policies, batch_tokens=batches)
    warm = np.zeros((1, 1), dtype=np.int64)
    CompiledStack(False, space).count(warm, np.zeros(1, dtype=np.int64), Tally(np.array([1]), 1))
    CompiledClock(np.array([2]), False, RowIds(space)).count(warm, np.zeros(1, dtype=np.int64))
    CompiledDirect(np.array([2]), space, False).count(warm, np.zeros(1, dtype=np.int64))

    clock = StageClock()
    clock.wrap(NgramHasher, "__call__", "hash")
    clock.wrap(RowIds, "__call__", "dense ids")
    clock.wrap(CompiledStack, "count", "LRU pass and tally")
    clock.wrap(row_cache_policies.CompiledClock, "count", "CLOCK")
    clock.wrap(row_cache_policies.CompiledDirect, "count", "direct")
    clock.wrap(row_cache_policies.CompiledBatches, "count", "batches")
    clock.wrap(row_cache._Cache, "figures", "figures")
    start, wall = time.process_time(), time.perf_counter()
    canonical = NgramHashMapping.build(None, vocab_size=args.vocab_size, pad_id=spec.pad_id)
    result = measure_row_cache(TokenFileReader(corpus), canonical, cache=options)
    total, wall = time.process_time() - start, time.perf_counter() - wall
    shared = result.shared
    rss = peak_rss_bytes() / 2**20
    print(
        f"distinct rows {shared.unique_rows:,}, hit ceiling {shared.hit_ceiling:.2%}, "
        f"{len(shared.budgets)} budgets up to the working set ({shared.working_set_bytes / 1e9:.2f} GB "
        f"bf16); policies {','.join(result.policies)}"
    )
    stages = ", ".join(f"{name} {seconds:.2f}" for name, seconds in clock.seconds.items())
    print(
        f"ngramtool: {total:.2f} CPU s ({wall:.2f} s wall), peak RSS {rss:.0f} MB; CPU s by stage: {stages}"
    )
    ids = clock.seconds["dense ids"]  # found once per block, by the first simulator; shared by all
    for stage in ("LRU pass and tally", "CLOCK", "direct", "batches"):
        if clock.seconds[stage]:
            seconds = clock.seconds[stage] - (ids if stage == "LRU pass and tally" else 0)
            rate = shared.accesses / seconds / 1e6
            print(f"  {stage}: {rate:.2f}M reads/CPU s (target 10M/s: {rate / 10:.2f}x)")
    print(f"  dense ids (shared): {shared.accesses / max(ids, 1e-9) / 1e6:.2f}M reads/CPU s")
    print(f"  whole run {shared.accesses / total / 1e6:.2f}M reads/CPU s")

    rows = slice_rows(corpus, min(args.slice, args.tokens), spec)
    reads, budget = rows.size, args.budget_rows
    same = True
    for name, simulate, kernel in (
        ("LRU (OrderedDict)", lambda: lru_hits(rows.reshape(-1), budget), lambda: compiled_hits(
            rows, budget, CompiledStack(False, space))),
        ("CLOCK (list ring)", lambda: clock_hits(rows.reshape(-1), budget), lambda: policy_hits(
            rows, CompiledClock(np.array([budget]), False, RowIds(space), space))),
        ("direct (list of slots)", lambda: direct_hits(rows.reshape(-1), budget), lambda: policy_hits(
            rows, CompiledDirect(np.array([budget]), space, False))),
    ):  # fmt: skip
        start = time.process_time()
        simulated = simulate()
        plain = time.process_time() - start
        hits, seconds = kernel()
        same &= hits == simulated
        print(
            f"slice of {rows.shape[0]:,} tokens ({reads:,} reads), one budget of {budget:,} rows: {name} "
            f"{reads / plain / 1e6:.2f}M reads/s ({plain:.2f} CPU s), compiled {reads / seconds / 1e6:.2f}M "
            f"reads/s ({seconds:.2f} CPU s): {plain / seconds:.1f}x; same hits: {hits == simulated}"
        )
    if args.numpy:
        fallback, seconds = compiled_hits(rows, budget, NumpyStack(False))
        rate, same_hits = reads / seconds / 1e6, fallback == lru_hits(rows.reshape(-1), budget)
        print(f"numpy fallback on the slice: {rate:.2f}M reads/s; same hits: {same_hits}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
