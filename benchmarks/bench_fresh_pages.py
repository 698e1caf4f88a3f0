"""What a byte written to a new file costs on this machine, against one written where pages were just
freed, and against rewriting pages already there: the floor under every stage that writes.

    python benchmarks/bench_fresh_pages.py                 # 800 MiB in the temporary directory
    python benchmarks/bench_fresh_pages.py --mib 256 --dir /dev/shm

Three writes of ``--mib`` MiB each, 4 MiB a call (``os.pwrite``), into unlinked files in ``--dir``:

- ``fresh``: a new file, after nothing was freed: each page is new to the process and, on a
  virtual machine, may be new to the host too;
- ``just freed``: a new file written right after the first one was closed (its pages freed);
- ``rewrite``: the second file written again over its own pages.

Printed per write: CPU seconds and CPU nanoseconds per byte, and the ratio to ``rewrite``. The
collision counter's scratch files and ``ngramtool hash``'s outputs write fresh pages, which is
why the counter's merge gives back the pages it has read before it writes (docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

BLOCK = 1 << 22


def write(handle: tempfile._TemporaryFileWrapper, block: np.ndarray, count: int) -> float:
    """CPU seconds to write ``block`` ``count`` times from the start of ``handle``."""
    data = memoryview(block).cast("B")
    start = time.process_time()
    for i in range(count):
        os.pwrite(handle.fileno(), data, i * BLOCK)
    return time.process_time() - start


def page_prices(directory: Path, nbytes: int) -> dict[str, float]:
    """CPU seconds of the three writes of ``nbytes`` (rounded up to whole 4 MiB calls) into
    unlinked files in ``directory``: ``fresh``, ``just freed`` and ``rewrite``."""
    block = np.arange(BLOCK // 8, dtype=np.uint64)
    count = max(1, -(-nbytes // BLOCK))
    with tempfile.TemporaryFile(dir=directory, buffering=0) as first:
        fresh = write(first, block, count)
    with tempfile.TemporaryFile(dir=directory, buffering=0) as second:
        freed = write(second, block, count)
        again = write(second, block, count)
    return {"fresh": fresh, "just freed": freed, "rewrite": again}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=800, help="MiB per write")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()), help="where the files go")
    args = parser.parse_args()
    nbytes = max(1, args.mib * (1 << 20) // BLOCK) * BLOCK
    prices = page_prices(args.dir, nbytes)
    print(f"{nbytes / 2**20:,.0f} MiB a write, {BLOCK >> 20} MiB a call, in {args.dir}")
    print(f"{'write':>12s} {'CPU s':>7s} {'ns/byte':>8s} {'x rewrite':>10s}")
    for name, seconds in prices.items():
        print(f"{name:>12s} {seconds:7.3f} {seconds / nbytes * 1e9:8.3f} {seconds / prices['rewrite']:10.1f}")


if __name__ == "__main__":
    main()
