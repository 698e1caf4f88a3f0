"""Distinct n-gram counting: ngramtool's streaming counter against the plain numpy way, in one run.

    python benchmarks/bench_collisions.py                      # 56.4M Zipf tokens, V'=62,330, N=3
    python benchmarks/bench_collisions.py --tokens 20000000 --zipf 1.3 --flush-keys 4194304
    python benchmarks/bench_collisions.py --tokens 2000000 --sweep 16384,262144,2262400
    python benchmarks/bench_collisions.py --text corpus.txt      # also real text, two table sizes

The corpus is synthetic: ids drawn independently with P(rank r) ~ r^-zipf over V' ids (ranks
shuffled onto ids), written once as a uint32 .npy file (``--corpus-dir``). Each method runs in
its own child process, so that each peak RSS is its own, and counts the distinct 2-grams and
3-grams of the same ids with their occurrences (the stream padded with the pad id at its
start, as ``collisions`` counts it):

- ``plain numpy``: the whole token array read at once, 2- and 3-gram keys packed in uint64
  (id digits base V'), ``np.unique(keys, return_counts=True)`` per order;
- ``ngramtool``: ``NgramTypeCounter`` fed 1M-token chunks read from the file (nothing held
  per token), with the compiled kernels when numba is installed: sorted runs spilled to scratch
  files and merged at the end, so its result is on disk, read back a block at a time. Its
  default threads (two on this machine) sort full buffers while the stream goes on and merge
  a key range each, as ``collisions`` counts a token file;
- ``ngramtool (1 thread)``: the same counter with ``threads=1`` (as ``collisions`` counts text,
  whose tokenizer keeps the cores busy);
- ``ngramtool (numpy only)``: the same counter without numba (``compiled=False``).

Reported per method: tokens per wall second, the CPU seconds (of every thread) and the wall
seconds of the counting, each beside the plain numpy way's (which runs in one thread; the
machine may be shared, so compare the ratios of one run), the peak RSS of the counting and the
CPU seconds of each stage (each thread's own; ``spill``: writing runs and the merged file,
``read back``: reading runs into the merge); and whether every method found the same n-grams
and counts (a sha256 of the keys and counts). With ``--sweep`` the ngramtool children also time
the collision analysis of those table sizes (2 layers, 8 heads) on the counted n-grams, with the
process's peak RSS after it.

With ``--text FILE`` the same comparison runs on real text too: the file's canonical ids under
cl100k_base (made once, kept in ``--corpus-dir``), counted by each method; then the whole command
``ngramtool collisions FILE -t cl100k_base --table TABLES --json`` (``--text-tables``, two sizes by
default) in a child process: its CPU seconds and peak RSS, beside the target of 400 MB.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ngramtool import HashSpec
from ngramtool.analysis import counting, scratch
from ngramtool.analysis.counting import NgramTypeCounter, NgramTypes
from ngramtool.analysis.reports import sweep_collisions
from ngramtool.util.profiling import peak_rss_bytes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_overhead import compile_package, timed

CHUNK = 1 << 20
METHODS = ("plain numpy", "ngramtool", "ngramtool (1 thread)", "ngramtool (numpy only)")


def zipf_ids(rng: np.random.Generator, count: int, vocab: int, exponent: float) -> np.ndarray:
    """Ids with P(rank r) ~ r^-exponent over the vocabulary, ranks shuffled onto ids."""
    weights = 1.0 / np.arange(1, vocab + 1) ** exponent
    ranks = rng.choice(vocab, size=count, p=weights / weights.sum())
    return rng.permutation(vocab)[ranks]


def corpus_file(folder: Path, tokens: int, vocab: int, exponent: float) -> Path:
    """The corpus as a uint32 .npy file, made once (seed 0)."""
    path = folder / f"zipf-{exponent}-v{vocab}-{tokens}.npy"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        ids = zipf_ids(np.random.default_rng(0), tokens, vocab, exponent).astype(np.uint32)
        partial = path.with_suffix(".partial.npy")
        np.save(partial, ids)
        partial.rename(path)
    return path


def text_ids(text: Path, folder: Path) -> Path:
    """The canonical ids of ``text`` under cl100k_base as a uint32 .npy file, made once."""
    from ngramtool import NgramHashMapping
    from ngramtool.inputs.stream import open_stream

    path = folder / f"text-{text.stem}-{text.stat().st_size}.npy"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        mapping = NgramHashMapping.build("cl100k_base")
        chunks = open_stream([text], mapping).chunks()
        ids = np.concatenate([mapping.canonical(chunk.tokens) for chunk in chunks]).astype(np.uint32)
        partial = path.with_suffix(".partial.npy")
        np.save(partial, ids)
        partial.rename(path)
    return path


def whole_command(text: Path, tables: str) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of ``ngramtool collisions`` on ``text``."""
    command = [sys.executable, "-m", "ngramtool", "collisions", str(text), "-t", "cl100k_base"]
    command += ["--table", tables, "--json", "--quiet"]
    wall, cpu, stdout = timed(command, Path.cwd(), dict(os.environ))
    return wall, cpu, json.loads(stdout)["run"]["peak_rss_bytes"] / 2**20


def read_chunks(path: Path) -> Iterator[np.ndarray]:
    """The file's ids in chunks of CHUNK tokens, read (not memory-mapped: RSS stays per chunk)."""
    with open(path, "rb") as handle:
        version = np.lib.format.read_magic(handle)
        read_header = {
            (1, 0): np.lib.format.read_array_header_1_0,
            (2, 0): np.lib.format.read_array_header_2_0,
        }
        shape, _, dtype = read_header[version](handle)
        left = shape[0]
        while left:
            part = np.fromfile(handle, dtype=dtype, count=min(CHUNK, left))
            left -= part.shape[0]
            yield part


class StageClock:
    """CPU seconds per stage, summed over calls of wrapped functions: the calling thread's CPU
    time, so that stages running on several threads at once are each counted once."""

    def __init__(self) -> None:
        self.seconds: Counter[str] = Counter()
        self._lock = threading.Lock()

    def wrap(self, owner: Any, name: str, stage: str) -> None:
        function = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent = time.thread_time() - start
                with self._lock:
                    self.seconds[stage] += spent

        setattr(owner, name, timed)


def digest(types: dict[int, Iterator[tuple[np.ndarray, np.ndarray]]]) -> str:
    """sha256 over every order's sorted keys, then its int64 counts, given in blocks (so that
    ngramtool's n-grams are read from its scratch files a block at a time: no copy adds to RSS)."""
    sha = hashlib.sha256()
    for order in sorted(types):
        counts = hashlib.sha256()
        for keys, block_counts in types[order]:
            sha.update(np.ascontiguousarray(keys, dtype=np.uint64).data)
            counts.update(np.ascontiguousarray(block_counts, dtype=np.int64).data)
        sha.update(counts.digest())
    return sha.hexdigest()


def count_plain(path: Path, spec: HashSpec, clock: StageClock) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The plain numpy way over the whole token array."""
    start = time.process_time()
    ids = np.load(path)
    clock.seconds["read"] += time.process_time() - start
    base = np.uint64(spec.vocab_size)
    out = {}
    for order in range(2, spec.max_ngram + 1):
        start = time.process_time()
        ext = np.concatenate([np.full(order - 1, spec.pad_id, dtype=np.uint64), ids.astype(np.uint64)])
        t_total = ids.shape[0]
        keys = ext[order - 1 : order - 1 + t_total].copy()  # lag 0
        scale = np.uint64(1)
        for lag in range(1, order):
            scale *= base
            keys += ext[order - 1 - lag : order - 1 - lag + t_total] * scale
        del ext
        clock.seconds["pack keys"] += time.process_time() - start
        start = time.process_time()
        out[order] = np.unique(keys, return_counts=True)
        clock.seconds["np.unique"] += time.process_time() - start
    return out


def count_streaming(
    path: Path,
    spec: HashSpec,
    clock: StageClock,
    flush_keys: int | None,
    compiled: bool | None,
    threads: int | None,
) -> dict[int, NgramTypes]:
    """NgramTypeCounter over chunks read from the file."""
    kernels = counting._counting_kernels(spec, compiled)
    if kernels is not None:
        clock.wrap(kernels, "ngram_keys", "keys")
        clock.wrap(kernels, "run_lengths", "run lengths")
        clock.wrap(kernels, "merge_windows", "merge")
        clock.wrap(scratch.ScratchFile, "write_at", "spill")
        clock.wrap(scratch.ScratchFile, "read_into", "read back")
    clock.wrap(counting.KeyCodec, "sort", "sort")
    counter = NgramTypeCounter(spec, flush_keys=flush_keys, compiled=compiled, threads=threads)
    start = time.process_time()
    for part in read_chunks(path):
        counter.update(part)
    types = counter.result()
    total = time.process_time() - start
    clock.seconds["other"] += total - sum(clock.seconds.values())
    return types


def child(args: argparse.Namespace) -> None:
    """One method, measured in this process; prints one JSON line."""
    spec = HashSpec(vocab_size=args.vocab_size, pad_id=0)
    clock = StageClock()
    # Compile (or load) the kernels before timing: a few tokens through a throw-away counter.
    compiled = False if args.child == "ngramtool (numpy only)" else None
    if args.child != "plain numpy":
        warm = NgramTypeCounter(spec, flush_keys=1000, compiled=compiled)
        warm.update(np.arange(5000) % spec.vocab_size)
        warm.result()
    wall = time.perf_counter()
    cpu = time.process_time()
    analysis = None
    if args.child == "plain numpy":
        found = count_plain(Path(args.corpus), spec, clock)
        blocks = {order: iter([arrays]) for order, arrays in found.items()}
        distinct = {order: int(keys.shape[0]) for order, (keys, _) in found.items()}
        occurrences = {order: int(counts.sum()) for order, (_, counts) in found.items()}
    else:
        threads = 1 if args.child == "ngramtool (1 thread)" else None
        types = count_streaming(Path(args.corpus), spec, clock, args.flush_keys, compiled, threads)
        blocks = {order: grams.blocks() for order, grams in types.items()}
        distinct = {order: grams.types for order, grams in types.items()}
        occurrences = {order: grams.occurrences for order, grams in types.items()}
    cpu = time.process_time() - cpu
    counting_wall = time.perf_counter() - wall
    counting_rss = peak_rss_bytes()
    stages = dict(clock.seconds)  # of the counting (the analysis writes scratch files too)
    if args.child != "plain numpy" and args.sweep:
        tables = [int(t) for t in args.sweep.split(",")]
        specs = [HashSpec(vocab_size=args.vocab_size, pad_id=0, table_sizes=(t, t)) for t in tables]
        start = time.process_time()
        sweep_collisions(types, specs)
        analysis = time.process_time() - start
    wall = time.perf_counter() - wall
    result = {
        "method": args.child,
        "cpu_seconds": cpu,
        "counting_wall_seconds": counting_wall,
        "wall_seconds": wall,
        "stages": stages,
        "distinct": distinct,
        "occurrences": occurrences,
        "digest": digest(blocks),
        "peak_rss_bytes": counting_rss,
        "analysis_cpu_seconds": analysis,
        "analysis_peak_rss_bytes": peak_rss_bytes(),
    }
    print(json.dumps(result))


def run_child(method: str, corpus: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--child",
        method,
        "--corpus",
        str(corpus),
        "--vocab-size",
        str(args.vocab_size),
        *(["--flush-keys", str(args.flush_keys)] if args.flush_keys else []),
        "--sweep",
        args.sweep,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{method} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=56_400_000)
    parser.add_argument("--vocab-size", type=int, default=62_330, help="V' (cl100k_base compressed: 62,330)")
    parser.add_argument("--zipf", type=float, default=1.1, help="exponent of the id distribution")
    parser.add_argument("--flush-keys", type=int, help="the counter's buffer [default: the counter's]")
    parser.add_argument("--methods", default=",".join(METHODS[:3]), help=f"any of: {', '.join(METHODS)}")
    parser.add_argument(
        "--sweep", default="", help="table sizes to analyse after counting, e.g. 16384,262144"
    )
    parser.add_argument("--corpus-dir", default=os.path.join(tempfile.gettempdir(), "ngramtool-bench"))
    parser.add_argument(
        "--text", type=Path, help="also this real text (cl100k_base), and the whole command on it"
    )
    parser.add_argument("--text-tables", default="262144,646400", help="the table sizes of the whole command")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    corpus = corpus_file(Path(args.corpus_dir), args.tokens, args.vocab_size, args.zipf)
    print(
        f"{args.tokens:,} tokens of Zipf({args.zipf}) ids over V'={args.vocab_size:,}, orders 2..3, "
        "each method in its own process; counter buffer "
        + (f"{args.flush_keys:,} keys" if args.flush_keys else "its default")
    )
    same = compare(corpus, args)
    if args.text is not None:
        compile_package(Path(counting.__file__).resolve().parents[2])  # as installed (bench_overhead)
        ids = text_ids(args.text, Path(args.corpus_dir))
        print(f"\n{args.text} under cl100k_base: {np.load(ids, mmap_mode='r').shape[0]:,} tokens, V'=62,330")
        same = compare(ids, args) and same
        wall, cpu, peak = whole_command(args.text, args.text_tables)
        tables = len(args.text_tables.split(","))
        verdict = "met" if peak <= 400 else "not met"
        print(
            f"ngramtool collisions (the whole command, {tables} table sizes): {wall:.2f} s, {cpu:.2f} CPU s, "
            f"peak RSS {peak:.0f} MB (target 400: {verdict})"
        )
    if not same:
        raise SystemExit(1)


def compare(corpus: Path, args: argparse.Namespace) -> bool:
    """Each method on ``corpus`` in its own process, printed as a table; whether all agree."""
    results = [run_child(method, corpus, args) for method in args.methods.split(",")]
    plain = next((r for r in results if r["method"] == "plain numpy"), None)
    tokens = sum(results[0]["occurrences"].values()) // len(results[0]["occurrences"])
    distinct = sum(results[0]["distinct"].values())
    counts = ", ".join(f"{n}-grams {c:,}" for n, c in results[0]["distinct"].items())
    print(f"distinct n-grams: {counts} ({distinct:,} in all)")
    print(
        f"{'method':24s} {'Mtok/s':>7s} {'CPU s':>6s} {'x plain':>7s} {'wall s':>6s} {'x plain':>7s} "
        f"{'peak RSS':>9s}  CPU s by stage"
    )
    for result in results:
        cpu, wall = result["cpu_seconds"], result["counting_wall_seconds"]
        ratio = f"{plain['cpu_seconds'] / cpu:7.2f}" if plain else f"{'-':>7s}"
        wall_ratio = f"{plain['counting_wall_seconds'] / wall:7.2f}" if plain else f"{'-':>7s}"
        rss = result["peak_rss_bytes"] / 2**20
        stages = ", ".join(f"{name} {seconds:.2f}" for name, seconds in result["stages"].items())
        rate = tokens / wall / 1e6
        figures = f"{rate:7.2f} {cpu:6.2f} {ratio} {wall:6.2f} {wall_ratio} {rss:6.0f} MB"
        print(f"{result['method']:24s} {figures}  {stages}")
        if result["analysis_cpu_seconds"] is not None:
            analysis_rss = result["analysis_peak_rss_bytes"] / 2**20
            seconds = result["analysis_cpu_seconds"]
            print(f"{'':24s} then --sweep analysis: {seconds:.2f} CPU s, peak RSS {analysis_rss:.0f} MB")
    same = len({r["digest"] for r in results}) == 1
    print(f"identical n-grams and counts in every method: {same}")
    return same


if __name__ == "__main__":
    main()
