"""Tokens per second delivered to a training loop: stored rows, rows computed in the loader, rows
hashed in the model's forward, and the bytes each needs on disk per token.

    python benchmarks/bench_loader.py                          # 16M tokens, 150 batches a run
    python benchmarks/bench_loader.py --tokens 32000000 --workers 0 1 2

The corpus is the bundled corpus's cl100k_base ids repeated to ``--tokens`` tokens, hashed with
the Engram demo spec (N=3, 8 heads, layers 1 and 15: 32 int32 rows, 128 bytes per token) into an
index with its rows and a tokens-only one (``rows="lazy"``), and kept as a ``.npy`` token file.
Each row of the table is one way to feed the loop windows of ``--seq-len`` 2048 positions
(``random=True`` windows, batch ``--batch`` 8) through a ``torch.utils.data.DataLoader`` with 0, 1
and 2 worker processes:

- ``stored, warm``: ``IndexDataset`` over the stored index, its files in the page cache;
- ``stored, cold``: the same after ``posix_fadvise(POSIX_FADV_DONTNEED)`` on ``tokens.npy`` and
  ``rows.npy`` (after an ``fsync``), which drops their pages from the page cache without root,
  so the windows are read from the disk (left out where ``os.posix_fadvise`` is missing);
- ``lazy``: ``IndexDataset`` over the tokens-only index: rows computed in the workers;
- ``TokenFileDataset``: the ``.npy`` token file, rows computed in the workers (``sequence``);
- ``NgramRows in forward``: the workers deliver token windows only and the loop hashes each
  batch with ``NgramRows`` on the CPU, in the training process.

A run times ``--batches`` batches after the first (which carries the workers' start and the
numba kernel's compilation or cache load). The training loop does nothing else, so the figures
are what the input pipeline can deliver. Load averages before and after are printed: the
machine may be shared.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

import ngramtool
from ngramtool import NgramHashMapping, OutputOptions, TokenFileReader
from ngramtool.torch import IndexDataset, NgramRows, TokenFileDataset

CORPUS = Path(__file__).resolve().parent.parent / "examples" / "corpus.txt"
TOKENIZER = "cl100k_base"


class TokenWindows(Dataset):
    """Random windows of seq_len + 1 token ids of a ``.npy`` file (what a model that hashes in its
    forward needs from the loader)."""

    def __init__(self, path: Path, seq_len: int, seed: int = 0) -> None:
        self.path, self.seq_len, self.seed = path, seq_len, seed
        self.tokens: np.ndarray | None = None
        self.count = np.load(path, mmap_mode="r").shape[0]

    def __len__(self) -> int:
        return (self.count - 1) // self.seq_len

    def __getitem__(self, i: int) -> torch.Tensor:
        if self.tokens is None:  # opened in the worker
            self.tokens = np.load(self.path, mmap_mode="r")
        start = int(np.random.default_rng([self.seed, i]).integers(0, self.count - self.seq_len))
        return torch.from_numpy(self.tokens[start : start + self.seq_len + 1].astype(np.int64))

    def __getstate__(self) -> dict:
        return {**self.__dict__, "tokens": None}


def build(folder: Path, tokens: int) -> dict[str, Path]:
    """The token file, the stored index and the tokens-only index of ``tokens`` tokens."""
    ids = ngramtool.load_tokenizer(TOKENIZER).encode(CORPUS.read_text(encoding="utf-8"))
    repeated = np.resize(np.asarray(ids, dtype=np.uint32), tokens)
    paths = {"npy": folder / "tokens.npy", "stored": folder / "stored.ngidx", "lazy": folder / "lazy.ngidx"}
    np.save(paths["npy"], repeated)
    for storage in ("stored", "lazy"):
        ngramtool.hash_files(
            TokenFileReader(paths["npy"]),
            paths[storage],
            mapping=NgramHashMapping.build(TOKENIZER),
            outputs=OutputOptions(rows=storage),
        )
    return paths


def disk_bytes(path: Path) -> int:
    """Bytes of a file, or of every file in a directory."""
    if path.is_file():
        return path.stat().st_size
    return sum(file.stat().st_size for file in path.iterdir() if file.is_file())


def drop_from_page_cache(index: Path) -> None:
    """Drop the clean pages of an index's tokens and rows from the page cache."""
    for name in ("tokens.npy", "rows.npy"):
        fd = os.open(index / name, os.O_RDONLY)
        try:
            os.fsync(fd)  # dirty pages would stay cached
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def time_loop(batches: Iterator, count: int, consume: Callable) -> float:
    """Tokens per second over ``count`` batches after the first."""
    consume(next(batches))
    started = time.perf_counter()
    tokens = 0
    for _ in range(count):
        tokens += consume(next(batches))
    return tokens / (time.perf_counter() - started)


def measure(kind: str, paths: dict[str, Path], args: argparse.Namespace, workers: int) -> float:
    """Tokens/s the loop receives for one kind of input and worker count."""
    seq, batch = args.seq_len, args.batch
    common = {"batch_size": batch, "num_workers": workers, "shuffle": True, "drop_last": True}
    if kind == "NgramRows in forward":
        spec = ngramtool.open_index(paths["lazy"]).spec
        ngram_rows = NgramRows(spec, ngramtool.open_index(paths["lazy"]).lut)
        loader = DataLoader(TokenWindows(paths["npy"], seq), **common)

        def consume(window: torch.Tensor) -> int:
            rows = ngram_rows(window[:, :-1])
            return rows.shape[0] * rows.shape[1]

        return time_loop(iter(loader), args.batches, consume)
    if kind == "TokenFileDataset":
        dataset = TokenFileDataset(paths["npy"], seq, tokenizer=TOKENIZER, random=True)
    else:
        dataset = IndexDataset(paths["lazy" if kind == "lazy" else "stored"], seq, random=True, seed=0)
    if kind == "stored, cold":
        drop_from_page_cache(paths["stored"])
    loader = DataLoader(dataset, **common)
    return time_loop(iter(loader), args.batches, lambda item: item["rows"].shape[0] * item["rows"].shape[1])


KINDS = tuple(
    kind
    for kind in ("stored, warm", "stored, cold", "lazy", "TokenFileDataset", "NgramRows in forward")
    if kind != "stored, cold" or hasattr(os, "posix_fadvise")  # no cold run where it is missing (macOS)
)
ON_DISK = {"stored, warm": "stored", "stored, cold": "stored", "lazy": "lazy"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=16_000_000, help="corpus size (default 16M)")
    parser.add_argument("--seq-len", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--batches", type=int, default=150, help="batches timed per run (default 150)")
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--dir", type=Path, help="where to build the corpus (default: a temporary directory)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-loader-") as tmp:
        paths = build(Path(tmp), args.tokens)
        results = {kind: [measure(kind, paths, args, w) for w in args.workers] for kind in KINDS}
        per_token = {kind: disk_bytes(paths[ON_DISK.get(kind, "npy")]) / args.tokens for kind in KINDS}
    load_after = os.getloadavg()
    print(
        f"{dt.date.today()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]}, torch {torch.__version__}"
    )
    print(
        f"python benchmarks/bench_loader.py --tokens {args.tokens} --seq-len {args.seq_len} "
        f"--batch {args.batch} --batches {args.batches} --workers {' '.join(map(str, args.workers))}"
    )
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min)\n")
    head = " | ".join(f"{w} worker{'s' if w != 1 else ''}" for w in args.workers)
    print(f"| input | bytes on disk / token | {head} (Mtok/s) |")
    print("|---|---:|" + "---:|" * len(args.workers))
    for kind in KINDS:
        speeds = " | ".join(f"{value / 1e6:.4f}" for value in results[kind])
        print(f"| {kind} | {per_token[kind]:.2f} | {speeds} |")


if __name__ == "__main__":
    main()
