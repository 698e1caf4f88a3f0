"""Throughput of the numpy hash against the straightforward torch reference, in one run.

    python benchmarks/bench_hash.py                 # 10M tokens, demo spec (N=3, K=8, 2 layers)
    python benchmarks/bench_hash.py --tokens 2000000 --reference-tokens 1000000

Both run on one thread (torch.set_num_threads(1); numpy's ufuncs are single-threaded) over the
same random canonical ids and produce token-major int64/int32 rows [T, L, (N-1)*K]. Reported:
tokens/s and output GB/s of each, their ratio, and whether the rows are identical. Two numpy
figures are printed: into one fresh array (page faults of 1.28 GB included, what ``hash_ngrams`` on
the whole input costs) and streaming pieces of 16 MB of rows, whose memory the allocator recycles
(what ``ngramtool hash`` does).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ngramtool import HashSpec, NgramHasher, hash_ngrams
from ngramtool.pipeline import HASH_BYTES


def best_of(repeats: int, fn) -> float:
    """The fastest of ``repeats`` timed calls, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=10_000_000)
    parser.add_argument(
        "--reference-tokens",
        type=int,
        default=2_000_000,
        help="tokens for the (slow) torch reference; its rate is per token",
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    spec = HashSpec(vocab_size=98_627)
    ids = np.random.default_rng(0).integers(0, spec.vocab_size, args.tokens)
    out_bytes = spec.num_layers * spec.num_columns * spec.row_dtype.itemsize
    print(
        f"spec: N={spec.max_ngram}, K={spec.heads}, layers={list(spec.layer_ids)}, "
        f"{out_bytes} output bytes/token; {args.tokens:,} tokens, 1 thread"
    )

    fresh = best_of(args.repeats, lambda: hash_ngrams(ids, spec))
    piece = HASH_BYTES // out_bytes  # what `ngramtool hash` does (ngramtool.pipeline.hash_chunks)

    def streamed() -> None:
        hasher = NgramHasher(spec)
        for lo in range(0, ids.shape[0], piece):
            hasher(ids[lo : lo + piece])

    stream = best_of(args.repeats, streamed)
    rows = {"numpy (one 10M-token array)": fresh, f"numpy ({piece:,}-token pieces)": stream}

    try:
        import torch

        from ngramtool.reference import torch_reference_rows

        torch.set_num_threads(1)
        ref_ids = ids[: args.reference_tokens]
        reference = best_of(1, lambda: torch_reference_rows(ref_ids, spec)) * args.tokens / ref_ids.shape[0]
        identical = np.array_equal(
            torch_reference_rows(ref_ids[:200_000], spec), hash_ngrams(ref_ids[:200_000], spec)
        )
        rows["torch reference (scaled)"] = reference
    except ImportError:
        reference, identical = None, None
        print("torch is not installed: pip install 'ngramtool[torch]' to compare with the reference")

    print(f"{'backend':34s} {'Mtok/s':>8s} {'GB/s out':>9s} {'x reference':>12s}")
    for name, seconds in rows.items():
        rate = args.tokens / seconds
        ratio = f"{reference / seconds:12.1f}" if reference else f"{'-':>12s}"
        print(f"{name:34s} {rate / 1e6:8.2f} {rate * out_bytes / 1e9:9.2f} {ratio}")
    if identical is not None:
        print(f"rows identical to the reference: {identical}")


if __name__ == "__main__":
    main()
