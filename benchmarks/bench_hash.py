"""Throughput of the CPU hashing backends against the straightforward torch reference, in one run.

    python benchmarks/bench_hash.py                 # 10M tokens, demo spec (N=3, K=8, 2 layers)
    python benchmarks/bench_hash.py --tokens 2000000 --reference-tokens 1000000 --threads 2

Every backend and the reference hash the same random canonical ids into token-major int32 rows
[T, L, (N-1)*K], on one thread (torch.set_num_threads(1); numpy's ufuncs and the numba kernel are
single-threaded). Reported: tokens/s, output GB/s, the ratio to the reference and to the numpy
backend measured the same way, and whether the rows are identical to numpy's. Per backend:

- into one fresh array (page faults of 1.28 GB included: what ``hash_ngrams`` on the whole
  input costs);
- streaming pieces of 16 MB of rows, whose memory the allocator recycles (what ``ngramtool hash``
  does, ``ngramtool.run.pipeline.hash_chunks``);
- with ``--threads T`` > 1, those pieces on T threads at once as the pipeline hashes them (the
  wall-clock rate: it needs T idle cores to scale).

Then the numba kernel alone, in CPU ns per token: each piece into one reused output (no
allocation, no page faults), beside the target of 30 ns per token for this spec.

The numba backend is measured only when numba is installed (``pip install 'ngramtool[numba]'``);
its compilation is done (or loaded from numba's cache) before the timing starts.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ngramtool import HashSpec, NgramHasher, hash_ngrams
from ngramtool.hashing.backends import BACKENDS
from ngramtool.run.pipeline import HASH_BYTES


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    """The fastest of ``repeats`` timed calls, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def streamer(ids: np.ndarray, spec: HashSpec, backend: str, piece: int, threads: int) -> Callable[[], None]:
    """Hash ``ids`` in pieces of ``piece`` tokens on ``threads`` threads, at most threads + 1 in flight."""

    def run() -> None:
        hasher = NgramHasher(spec, backend=backend)
        with ThreadPoolExecutor(threads) as pool:
            pending = []
            for lo in range(0, ids.shape[0], piece):
                pending.append(pool.submit(hasher.deferred(ids[lo : lo + piece])))
                if len(pending) > threads:
                    pending.pop(0).result()
            for future in pending:
                future.result()

    return run


def kernel_alone(ids: np.ndarray, spec: HashSpec, piece: int, repeats: int) -> float:
    """The numba kernel's CPU seconds over ``ids`` in pieces, each into one reused output: per
    piece the best of ``repeats`` calls (this machine is shared), summed."""
    from ngramtool.hashing.backends.numba_backend import NumbaRows

    kernel = NumbaRows(spec, offsets=True, negative_ids="mask")
    out = np.empty((piece, spec.num_layers, spec.num_columns), spec.row_dtype)
    context = np.full(spec.max_ngram - 1, spec.pad_id, np.int64)
    no_starts = np.zeros(0, np.int64)
    kernel.rows(ids[:piece], context, no_starts, out)  # compile (or load) the specialized kernel
    total = 0.0
    for lo in range(0, ids.shape[0] - piece + 1, piece):
        best = float("inf")
        for _ in range(repeats):
            start = time.process_time()
            kernel.rows(ids[lo : lo + piece], context, no_starts, out)
            best = min(best, time.process_time() - start)
        total += best
    return total


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
    parser.add_argument("--threads", type=int, default=1, help="also stream pieces on this many threads")
    args = parser.parse_args()

    spec = HashSpec(vocab_size=98_627)
    ids = np.random.default_rng(0).integers(0, spec.vocab_size, args.tokens)
    out_bytes = spec.num_layers * spec.num_columns * spec.row_dtype.itemsize
    piece = HASH_BYTES // out_bytes  # what `ngramtool hash` does (ngramtool.run.pipeline.hash_chunks)
    print(
        f"spec: N={spec.max_ngram}, K={spec.heads}, layers={list(spec.layer_ids)}, "
        f"{out_bytes} output bytes/token; {args.tokens:,} tokens, 1 thread unless said"
    )

    expected = hash_ngrams(ids[:200_000], spec, backend="numpy")
    rows: dict[str, tuple[float, str, bool]] = {}  # name -> (seconds, way, rows identical to numpy's)
    backends = ["numpy"] + (["numba"] if BACKENDS["numba"].available("cpu") else [])
    for backend in backends:
        identical = np.array_equal(hash_ngrams(ids[:200_000], spec, backend=backend), expected)
        hash_ngrams(ids[:piece], spec, backend=backend)  # compile (or load) every kernel first
        fresh = best_of(args.repeats, lambda b=backend: hash_ngrams(ids, spec, backend=b))
        rows[f"{backend} (one {args.tokens:,}-token array)"] = (fresh, "array", identical)
        stream = best_of(args.repeats, streamer(ids, spec, backend, piece, 1))
        rows[f"{backend} ({piece:,}-token pieces)"] = (stream, "pieces", identical)
        if args.threads > 1:
            parallel = best_of(args.repeats, streamer(ids, spec, backend, piece, args.threads))
            rows[f"{backend} (pieces, {args.threads} threads)"] = (
                parallel,
                f"{args.threads} threads",
                identical,
            )
    if "numba" not in backends:
        print("numba is not installed: pip install 'ngramtool[numba]' to measure the compiled kernel")

    reference = None
    try:
        import torch

        from ngramtool.hashing.backends.reference import torch_reference_rows

        torch.set_num_threads(1)
        ref_ids = ids[: args.reference_tokens]
        reference = best_of(1, lambda: torch_reference_rows(ref_ids, spec)) * args.tokens / ref_ids.shape[0]
        same = np.array_equal(torch_reference_rows(ref_ids[:200_000], spec), expected)
        rows["torch reference (scaled)"] = (reference, "reference", same)
    except ImportError:
        print("torch is not installed: pip install 'ngramtool[torch]' to compare with the reference")

    numpy_way = {way: seconds for name, (seconds, way, _) in rows.items() if name.startswith("numpy")}
    print(f"{'backend':36s} {'Mtok/s':>8s} {'GB/s out':>9s} {'x reference':>12s} {'x numpy':>8s}  identical")
    for name, (seconds, way, identical) in rows.items():
        rate = args.tokens / seconds
        ratio = f"{reference / seconds:12.1f}" if reference else f"{'-':>12s}"
        versus = f"{numpy_way[way] / seconds:8.2f}" if way in numpy_way else f"{'-':>8s}"
        print(f"{name:36s} {rate / 1e6:8.2f} {rate * out_bytes / 1e9:9.2f} {ratio} {versus}  {identical}")
    if "numba" in backends:
        whole = ids.shape[0] // piece * piece
        per_token = kernel_alone(ids, spec, piece, args.repeats) / whole * 1e9
        verdict = "met" if per_token <= 30 else "not met"
        print(
            f"numba kernel alone, reused {piece:,}-token output: "
            f"{per_token:.1f} CPU ns/token (target 30: {verdict})"
        )


if __name__ == "__main__":
    main()
