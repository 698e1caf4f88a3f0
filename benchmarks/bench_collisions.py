"""Distinct n-gram counting: ngramtool's sort-and-merge counter against a Python set, in one run.

    python benchmarks/bench_collisions.py                   # 10M tokens, V'=62,330, N=3
    python benchmarks/bench_collisions.py --tokens 2000000 --sweep 16384,262144,2262400

Both count the distinct 2-grams and 3-grams of the same canonical ids, fed in 1M-token chunks,
on one thread. The counter (``NgramTypeCounter``) builds the lag windows, packs each n-gram into a
uint64 key, sorts buffered keys in place and merges them into a sorted run of distinct keys with
their occurrence counts. The baseline packs the same keys with numpy and adds them to a Python
set (distinct keys only, no counts). Two inputs: uniform random ids (nearly every n-gram is new:
the worst case) and Zipf-distributed ids (repetitive, like text). With ``--sweep``, the collision
analysis of those table sizes on the counted n-grams is timed too.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ngramtool import HashSpec
from ngramtool.analysis.collisions import NgramTypeCounter, key_codec, sweep_collisions
from ngramtool.hashing import lag_windows

CHUNK = 1 << 20


def chunks(ids: np.ndarray):
    for lo in range(0, ids.shape[0], CHUNK):
        yield ids[lo : lo + CHUNK]


def count_with_ngramtool(ids: np.ndarray, spec: HashSpec) -> tuple[float, dict[int, int], dict]:
    start = time.perf_counter()
    counter = NgramTypeCounter(spec)
    for part in chunks(ids):
        counter.update(part)
    types = counter.result()
    return time.perf_counter() - start, {n: t.types for n, t in types.items()}, types


def count_with_python_set(ids: np.ndarray, spec: HashSpec) -> tuple[float, dict[int, int]]:
    start = time.perf_counter()
    n = spec.max_ngram
    seen: dict[int, set[int]] = {order: set() for order in range(2, n + 1)}
    codecs = {order: key_codec(spec.vocab_size, order) for order in seen}
    context = np.full(n - 1, spec.pad_id, dtype=np.int64)
    for part in chunks(ids):
        ext = np.concatenate([context, part])
        windows = lag_windows(ext, n)
        for order, keys in seen.items():
            keys.update(codecs[order].encode(windows[:, :order]).tolist())
        context = ext[-(n - 1) :]
    return time.perf_counter() - start, {order: len(keys) for order, keys in seen.items()}


def zipf_ids(rng: np.random.Generator, count: int, vocab: int, exponent: float) -> np.ndarray:
    """Ids with P(rank r) ~ r^-exponent over the vocabulary, ranks shuffled onto ids."""
    weights = 1.0 / np.arange(1, vocab + 1) ** exponent
    ranks = rng.choice(vocab, size=count, p=weights / weights.sum())
    return rng.permutation(vocab)[ranks]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=10_000_000)
    parser.add_argument("--vocab-size", type=int, default=62_330, help="V' (cl100k_base compressed: 62,330)")
    parser.add_argument("--zipf", type=float, default=1.1, help="exponent of the repetitive input")
    parser.add_argument(
        "--sweep", default="", help="table sizes to analyse after counting, e.g. 16384,262144"
    )
    args = parser.parse_args()

    spec = HashSpec(vocab_size=args.vocab_size, pad_id=0)
    rng = np.random.default_rng(0)
    inputs = {
        "uniform": rng.integers(0, args.vocab_size, args.tokens),
        f"zipf {args.zipf}": zipf_ids(rng, args.tokens, args.vocab_size, args.zipf),
    }
    print(f"{args.tokens:,} tokens, V'={args.vocab_size:,}, orders 2..{spec.max_ngram}, one thread")
    print(f"{'input':12s} {'method':22s} {'Mtok/s':>8s} {'seconds':>8s}  distinct n-grams")
    for name, ids in inputs.items():
        ours, our_counts, types = count_with_ngramtool(ids, spec)
        base, base_counts = count_with_python_set(ids, spec)
        assert our_counts == base_counts, (our_counts, base_counts)
        counts = ", ".join(f"{n}: {c:,}" for n, c in our_counts.items())
        for method, seconds in (("ngramtool sort+merge", ours), ("python set", base)):
            print(f"{name:12s} {method:22s} {args.tokens / seconds / 1e6:8.2f} {seconds:8.2f}  {counts}")
        print(f"{'':12s} speed-up over the set: {base / ours:.1f}x (identical counts)")
        if args.sweep:
            tables = [int(t) for t in args.sweep.split(",")]
            specs = [HashSpec(vocab_size=args.vocab_size, pad_id=0, table_sizes=(t, t)) for t in tables]
            start = time.perf_counter()
            sweep_collisions(types, specs)
            seconds = time.perf_counter() - start
            print(f"{'':12s} collision analysis of {len(tables)} table size(s): {seconds:.2f} s")


if __name__ == "__main__":
    main()
