"""Where a run's CPU time goes: per-stage thread CPU seconds, to find the bottleneck.

A pipeline stage runs on one or more threads (tokenizer threads, hash threads, the writer, the
checksum thread, whose stage is named by its algorithm: ``xxh3-128`` or ``sha256``).
:class:`StageClock` wraps each stage's unit of work and adds the CPU time of the thread that ran
it (``time.thread_time``), so a stage's total is the core-seconds it used. With the wall time and
the process's CPU time next to them, a run says how many cores it kept busy and which stage would
cap it on a machine with more cores: a stage confined to one thread cannot go faster than its
core-seconds allow.
"""

from __future__ import annotations

import resource
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

R = TypeVar("R")
# How reports list the stages; the checksum stage is named by its algorithm.
STAGE_ORDER = ("tokenize", "canonicalize", "hash", "write", "xxh3-128", "sha256")


def process_cpu_seconds() -> float:
    """User + system CPU seconds of this process so far, all threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_bytes() -> int:
    """The most memory this process has held resident since it started (its own, not a parent's).

    Linux: ``VmHWM`` of ``/proc/self/status``, the high-water mark of this program's own memory
    map. ``getrusage``'s ``ru_maxrss`` is not used there: a process started with fork or vfork
    and exec inherits the peak of the process that started it, so a child of a 2 GB parent would
    report 2 GB. Elsewhere, ``ru_maxrss`` (bytes on macOS, KiB on the other systems).
    """
    try:
        with open("/proc/self/status", "rb") as status:  # bytes: its Name line is the raw name
            for line in status:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


class StageClock:
    """Thread CPU seconds per named stage, summed over the threads that ran it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seconds: dict[str, float] = {}
        self._busy: dict[str, float] = {}  # wall seconds a resource was in use, by name
        self._wall_start = time.perf_counter()
        self._cpu_start = process_cpu_seconds()

    def restart(self) -> None:
        """Measure wall and process CPU time from now on (what came before was loading)."""
        self._wall_start = time.perf_counter()
        self._cpu_start = process_cpu_seconds()

    def add(self, stage: str, seconds: float) -> None:
        """Count ``seconds`` of CPU time for ``stage`` (thread-safe)."""
        self._count(self._seconds, stage, seconds)

    def timed(self, stage: str, fn: Callable[..., R]) -> Callable[..., R]:
        """``fn`` wrapped so that the CPU time of each call, on whatever thread, counts for ``stage``."""
        return self._measured(fn, time.thread_time, self._seconds, stage)

    def busy(self, name: str, fn: Callable[..., R]) -> Callable[..., R]:
        """``fn`` wrapped so that the wall time of each call counts as resource ``name`` in use
        (the disk: a run whose disk was busy most of its wall time was bound by it)."""
        return self._measured(fn, time.perf_counter, self._busy, name)

    def _measured(
        self, fn: Callable[..., R], now: Callable[[], float], table: dict[str, float], name: str
    ) -> Callable[..., R]:
        """``fn`` wrapped so that the ``now`` seconds of each call count for ``name`` in ``table``."""

        def run(*args: Any, **kwargs: Any) -> R:
            start = now()
            try:
                return fn(*args, **kwargs)
            finally:
                self._count(table, name, now() - start)

        return run

    def _count(self, table: dict[str, float], name: str, seconds: float) -> None:
        with self._lock:
            table[name] = table.get(name, 0.0) + seconds

    def report(self) -> dict[str, Any]:
        """Wall and process CPU seconds since the clock started, each stage's CPU seconds (in
        ``STAGE_ORDER``), the CPU seconds no stage accounts for (``other_cpu_seconds``: the
        main thread's reading, cutting and chunking, and threads that no stage wraps, such as a
        tokenizer library's own pool), and the wall seconds each resource timed by :meth:`busy`
        was in use (``disk_busy_seconds``)."""
        wall = time.perf_counter() - self._wall_start
        cpu = process_cpu_seconds() - self._cpu_start
        with self._lock:
            seconds = dict(self._seconds)
            busy = dict(self._busy)
        rank = {name: i for i, name in enumerate(STAGE_ORDER)}
        names = sorted(seconds, key=lambda name: (rank.get(name, len(rank)), name))
        return {
            "wall_seconds": round(wall, 3),
            "cpu_seconds": round(cpu, 3),
            "cores_busy": round(cpu / wall, 2) if wall > 0 else None,
            "stage_cpu_seconds": {name: round(seconds[name], 3) for name in names},
            "other_cpu_seconds": round(max(cpu - sum(seconds.values()), 0.0), 3),
            **{f"{name}_busy_seconds": round(busy[name], 3) for name in sorted(busy)},
        }


def timed(clock: StageClock | None, stage: str, fn: Callable[..., R]) -> Callable[..., R]:
    """``clock.timed(stage, fn)``, or ``fn`` itself without a clock."""
    return fn if clock is None else clock.timed(stage, fn)


def busy(clock: StageClock | None, name: str, fn: Callable[..., R]) -> Callable[..., R]:
    """``clock.busy(name, fn)``, or ``fn`` itself without a clock."""
    return fn if clock is None else clock.busy(name, fn)
