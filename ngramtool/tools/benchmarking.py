"""Measurements behind ``ngramtool bench``: hashing throughput of each backend in one run, next to
the straightforward torch reference and the machine's measured memory copy bandwidth.

Every backend hashes the same random canonical ids, already on its device, into fresh rows
(page faults or allocations included, as ``hash_ngrams`` costs); the best of several runs counts.
Bytes moved per token are the ids read plus the rows written. Copy bandwidth is measured the
same way (bytes read plus bytes written) with one large copy: numpy on the CPU, torch on a GPU.
"""

from __future__ import annotations

import math
import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..hashing.backends import AUTO_ORDER, BACKENDS, device_type
from ..hashing.backends.arrays import to_numpy, to_tensor
from ..hashing.hasher import hash_ngrams
from ..spec.hashspec import HashSpec

COPY_BYTES = {"cpu": 1 << 28, "cuda": 1 << 30}  # far beyond any cache: 256 MiB, 1 GiB
CHECK_TOKENS = 1 << 18  # the prefix whose rows are compared with the numpy backend's
WARMUP_TOKENS = 4096


@dataclass(frozen=True)
class Measurement:
    """One backend's timing: the best of ``repeats`` runs over ``tokens`` tokens."""

    backend: str
    device: str
    threads: int | None  # CPU threads it uses; None on a GPU
    tokens: int
    seconds: float
    bytes_read: int  # per token: the ids
    bytes_written: int  # per token: the rows
    identical: bool  # rows equal to the numpy backend's (the reference's, for the reference)

    @property
    def tokens_per_second(self) -> float:
        """Tokens hashed per second."""
        return self.tokens / self.seconds

    @property
    def output_bytes_per_second(self) -> float:
        """Row bytes written per second."""
        return self.tokens_per_second * self.bytes_written

    @property
    def moved_bytes_per_second(self) -> float:
        """Bytes read plus written per second."""
        return self.tokens_per_second * (self.bytes_read + self.bytes_written)


@dataclass
class BenchReport:
    """All measurements of one ``ngramtool bench`` run."""

    spec: HashSpec
    tokens: int
    device: str
    device_name: str
    copy_bytes_per_second: float  # read + written
    reference: Measurement | None
    results: list[Measurement] = field(default_factory=list)

    def summary(self, result: Measurement) -> dict[str, Any]:
        """A result with its derived figures, as plain JSON types."""
        ref = self.reference
        ratio = result.tokens_per_second / ref.tokens_per_second if ref else None
        per_core = ratio / result.threads if ratio is not None and result.threads else None
        return {
            **asdict(result),
            "tokens_per_second": result.tokens_per_second,
            "output_gb_per_second": result.output_bytes_per_second / 1e9,
            "moved_gb_per_second": result.moved_bytes_per_second / 1e9,
            "percent_of_copy_bandwidth": 100 * result.moved_bytes_per_second / self.copy_bytes_per_second,
            "x_reference": ratio,
            "x_reference_per_core": per_core,
        }

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON types."""
        return {
            "spec": self.spec.to_dict(),
            "tokens": self.tokens,
            "device": self.device,
            "device_name": self.device_name,
            "copy_gb_per_second": self.copy_bytes_per_second / 1e9,
            "reference": self.summary(self.reference) if self.reference else None,
            "results": [self.summary(r) for r in self.results],
        }


def default_backends(device: str) -> list[str]:
    """The backends ``auto`` considers on ``device`` that can run here (never an interpreter)."""
    return [name for name in AUTO_ORDER[device_type(device)] if BACKENDS[name].available(device)]


def device_name(device: str) -> str:
    """The GPU's name, or the CPU model with its core count."""
    if device_type(device) == "cuda":
        import torch

        return torch.cuda.get_device_name(device)
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        lines = cpuinfo.read_text().splitlines()
        model = next((line.split(":", 1)[1].strip() for line in lines if "model name" in line), model)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {cores} cores"


def _synchronizer(device: str) -> Callable[[], None]:
    if device_type(device) == "cuda":
        import torch

        return lambda: torch.cuda.synchronize(device)
    return lambda: None


def best_seconds(fn: Callable[[], object], repeats: int, sync: Callable[[], None]) -> float:
    """The fastest of ``repeats`` timed calls of ``fn``, with ``sync`` around each."""
    best = math.inf
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def copy_bandwidth(device: str, repeats: int = 5) -> float:
    """Bytes read plus bytes written per second by one large copy on ``device``."""
    nbytes = COPY_BYTES[device_type(device)]
    if device_type(device) == "cuda":
        import torch

        src = torch.ones(nbytes // 8, dtype=torch.int64, device=device)
        dst = torch.empty_like(src)
        seconds = best_seconds(lambda: dst.copy_(src), repeats, _synchronizer(device))
    else:
        src = np.ones(nbytes // 8, dtype=np.int64)
        dst = np.empty_like(src)
        dst.fill(0)  # fault the pages in before timing
        seconds = best_seconds(lambda: np.copyto(dst, src), repeats, lambda: None)
    return 2 * nbytes / seconds


def measure_backend(
    ids: np.ndarray, spec: HashSpec, backend: str, device: str, *, repeats: int, expected: np.ndarray
) -> Measurement:
    """Time ``hash_ngrams`` on ``backend`` with the ids already on ``device``.

    ``expected`` holds the numpy backend's rows of the first ``len(expected)`` ids.
    """
    data: Any = ids if backend == "numpy" else to_tensor(ids, device)
    sync = _synchronizer(device)

    def run(tokens: Any) -> Any:
        return hash_ngrams(tokens, spec, backend=backend, device=device)

    identical = bool(np.array_equal(to_numpy(run(data[: expected.shape[0]])), expected))
    run(data[:WARMUP_TOKENS])
    seconds = best_seconds(lambda: run(data), repeats, sync)
    return Measurement(
        backend=backend,
        device=device,
        threads=_threads(backend, device),
        tokens=ids.shape[0],
        seconds=seconds,
        bytes_read=ids.dtype.itemsize,
        bytes_written=spec.num_layers * spec.num_columns * spec.row_dtype.itemsize,
        identical=identical,
    )


def _threads(backend: str, device: str) -> int | None:
    if device_type(device) == "cuda":
        return None
    if backend == "torch":
        import torch

        return torch.get_num_threads()
    return 1


def measure_reference(ids: np.ndarray, spec: HashSpec, expected: np.ndarray) -> Measurement | None:
    """Time the straightforward torch reference on one CPU thread (None without torch)."""
    if not BACKENDS["torch"].available():
        return None
    import torch

    from ..hashing.backends.reference import torch_reference_rows

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        check = min(ids.shape[0], expected.shape[0])
        identical = bool(np.array_equal(torch_reference_rows(ids[:check], spec), expected[:check]))
        seconds = best_seconds(lambda: torch_reference_rows(ids, spec), 1, lambda: None)
    finally:
        torch.set_num_threads(threads)
    return Measurement(
        backend="reference",
        device="cpu",
        threads=1,
        tokens=ids.shape[0],
        seconds=seconds,
        bytes_read=ids.dtype.itemsize,
        bytes_written=spec.num_layers * spec.num_columns * 8,  # int64 rows
        identical=identical,
    )


def run_bench(
    spec: HashSpec,
    *,
    tokens: int,
    backends: list[str],
    device: str,
    repeats: int = 3,
    reference_tokens: int = 10_000_000,
    seed: int = 0,
) -> BenchReport:
    """Measure ``backends`` on ``device`` over ``tokens`` random canonical ids, plus the reference
    (on its first ``reference_tokens`` ids, one CPU thread) and the copy bandwidth of ``device``."""
    ids = np.random.default_rng(seed).integers(0, spec.vocab_size, tokens, dtype=np.int64)
    expected = hash_ngrams(ids[:CHECK_TOKENS], spec, backend="numpy")
    report = BenchReport(
        spec=spec,
        tokens=tokens,
        device=device,
        device_name=device_name(device),
        copy_bytes_per_second=copy_bandwidth(device),
        reference=measure_reference(ids[:reference_tokens], spec, expected),
    )
    for backend in backends:
        report.results.append(measure_backend(ids, spec, backend, device, repeats=repeats, expected=expected))
    return report
