"""Row-cache statistics: ngramtool's one-pass exact LRU against an OrderedDict simulation, in one run.

    python benchmarks/bench_cache.py                       # 2M Zipf tokens, the engram-demo spec
    python benchmarks/bench_cache.py --tokens 56400000     # the issue's run: 1.8 billion reads
    python benchmarks/bench_cache.py --tokens 500000 --numpy

The corpus is synthetic, as in bench_collisions.py: ids drawn independently with P(rank r) ~
r^-zipf over V' ids, written once as a uint32 .npy file. The spec is engram-demo's layout (2
layers x 16 columns: 32 row reads per token). Measured, in one process (CPU seconds: the machine
may be shared):

- ``ngramtool``: ``measure_row_cache`` over the token file (read in chunks, hashed, the
  budgets each read misses and per-token misses at every budget by the numba kernel): reads per CPU second of
  the kernel and of the whole run (and the wall seconds), the CPU seconds of each stage, the
  peak RSS; every budget of the default sweep (1 MB .. the working set) at once;
- ``OrderedDict``: the straightforward LRU simulation (one ``OrderedDict``, ``move_to_end``,
  ``popitem``) of ONE budget on the first ``--slice`` tokens' rows (computed beforehand, not
  timed), against the compiled pass on the same rows and budget: the same hits, and the ratio
  of reads per second (a sweep of k budgets costs the simulation k passes);
- with ``--numpy``: the numpy fallback's pass on the slice.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_collisions import StageClock, corpus_file  # the same synthetic corpus

from ngramtool import HashSpec, NgramHashMapping, TokenFileReader, hash_ngrams
from ngramtool.analysis import row_cache
from ngramtool.analysis.row_cache import CompiledStack, LruStack, NumpyStack, Tally, measure_row_cache
from ngramtool.hashing.hasher import NgramHasher


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


def slice_rows(path: Path, tokens: int, spec: HashSpec) -> np.ndarray:
    """The reads of the first ``tokens`` tokens, layers numbered apart: [T, L x C]."""
    ids = np.load(path, mmap_mode="r")[:tokens].astype(np.int64)
    rows = hash_ngrams(ids, spec)
    offsets = np.concatenate([[0], np.cumsum(spec.rows_per_layer)[:-1]])[None, :, None]
    return (rows + offsets).reshape(rows.shape[0], -1)


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
    CompiledStack(False, space).count(np.zeros((1, 1), dtype=np.int64), np.zeros(1, dtype=np.int64),
                                      Tally(np.array([1]), 1))  # fmt: skip

    clock = StageClock()
    clock.wrap(NgramHasher, "__call__", "hash")
    clock.wrap(CompiledStack, "count", "LRU pass and tally")
    clock.wrap(row_cache, "figures", "figures")
    start, wall = time.process_time(), time.perf_counter()
    canonical = NgramHashMapping.build(None, vocab_size=args.vocab_size, pad_id=spec.pad_id)
    result = measure_row_cache(TokenFileReader(corpus), canonical)
    total, wall = time.process_time() - start, time.perf_counter() - wall
    shared = result.shared
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    kernel = shared.accesses / clock.seconds["LRU pass and tally"] / 1e6
    print(
        f"distinct rows {shared.unique_rows:,}, hit ceiling {shared.hit_ceiling:.2%}, "
        f"{len(shared.budgets)} budgets up to the working set ({shared.working_set_bytes / 1e9:.2f} GB bf16)"
    )
    stages = ", ".join(f"{name} {seconds:.2f}" for name, seconds in clock.seconds.items())
    print(
        f"ngramtool: {total:.2f} CPU s ({wall:.2f} s wall), peak RSS {rss:.0f} MB; CPU s by stage: {stages}"
    )
    print(
        f"  LRU pass and tally {kernel:.2f}M reads/CPU s (target 10M/s: {kernel / 10:.2f}x); "
        f"whole run {shared.accesses / total / 1e6:.2f}M reads/CPU s"
    )

    rows = slice_rows(corpus, min(args.slice, args.tokens), spec)
    start = time.process_time()
    simulated = lru_hits(rows.reshape(-1), args.budget_rows)
    plain = time.process_time() - start
    hits, seconds = compiled_hits(rows, args.budget_rows, CompiledStack(False, space))
    reads = rows.size
    print(
        f"slice of {rows.shape[0]:,} tokens ({reads:,} reads), one budget of {args.budget_rows:,} rows: "
        f"OrderedDict {reads / plain / 1e6:.2f}M reads/s ({plain:.2f} CPU s), compiled pass "
        f"{reads / seconds / 1e6:.2f}M reads/s ({seconds:.2f} CPU s, every budget): {plain / seconds:.1f}x; "
        f"same hits: {hits == simulated}"
    )
    if args.numpy:
        fallback, seconds = compiled_hits(rows, args.budget_rows, NumpyStack(False))
        rate = reads / seconds / 1e6
        print(f"numpy fallback on the slice: {rate:.2f}M reads/s; same hits: {fallback == simulated}")
    if hits != simulated:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
