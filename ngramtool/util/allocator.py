"""Large blocks given back to the system as soon as they are freed (glibc's malloc), for passes
whose peak memory is a promise.

glibc serves a block by ``mmap`` (returned to the system when freed) only above its mmap
threshold, which starts at 128 KiB and rises to the size of each such block freed, up to 32 MiB.
After the first large array is freed, the 1-16 MB arrays a streaming pass allocates per chunk
come from its arenas, whose free space it keeps: in ``collisions`` on 16.6M tokens, 55-80 MB of
the peak RSS. A fixed threshold of 1 MiB gives that back, for more page faults (about 0.5 CPU s
of the kernel's time there).
"""

from __future__ import annotations

import ctypes
import os
import sys

M_MMAP_THRESHOLD = -3  # mallopt's parameter in glibc's malloc.h
UNPOOLED_BYTES = 1 << 20


def unpool_large_blocks(threshold: int = UNPOOLED_BYTES) -> bool:
    """Serve blocks of ``threshold`` bytes or more by ``mmap`` from now on, in this process: each
    given back to the system when freed. True when set; False on another C library (or platform)
    and when the environment tunes malloc already (``MALLOC_*``, ``GLIBC_TUNABLES``), which wins."""
    if not sys.platform.startswith("linux") or "GLIBC_TUNABLES" in os.environ:
        return False
    if any(name.startswith("MALLOC_") for name in os.environ):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, threshold) == 1
