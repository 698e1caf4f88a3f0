"""Scratch files of the collision analysis: what it would otherwise hold in memory, on disk.

Counting distinct n-grams spills sorted runs of keys and counts (:mod:`ngramtool.analysis.type_store`)
and finding repeated values spills them by value range (:mod:`ngramtool.analysis.repeats`), so that
memory stays bounded whatever the corpus. A scratch file is created unlinked in the temporary
directory (``TMPDIR``; ``O_TMPFILE`` on Linux): the process holds the only reference to it, so
nothing outlives the process, however it ends (``kill -9`` included), and a later run has nothing
to reclaim.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import tempfile
import threading
from pathlib import Path

import numpy as np

from ..util.atomic import output_error
from ..util.errors import NgramToolError

_PUNCH_HOLE = 0x02 | 0x01  # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE (linux/falloc.h)


def _fallocate() -> ctypes._CFuncPtr | None:
    """libc's ``fallocate``, or None where there is none (not Linux)."""
    try:
        function = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True).fallocate
    except (AttributeError, OSError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    function.restype = ctypes.c_int
    return function


_FALLOCATE = _fallocate()


class ScratchFile:
    """An unlinked temporary file that arrays are appended to and read back from by offset.

    Threads may write to it at once: each reserves its bytes (:meth:`reserve`), then writes them
    where they were reserved (:meth:`write_at`)."""

    def __init__(self) -> None:
        # Held for the object's lifetime, not a block: closed by close() or with the process.
        self._file = tempfile.TemporaryFile(prefix="ngramtool-scratch-", buffering=0)  # noqa: SIM115
        self._fd = self._file.fileno()
        self._lock = threading.Lock()
        self.size = 0  # bytes appended or reserved

    def append(self, array: np.ndarray) -> int:
        """Append ``array``'s bytes; returns the offset they start at. A full disk is a one-line
        error that names the temporary directory and how to give it room."""
        offset = self.reserve(array.nbytes)
        self.write_at(array, offset)
        return offset

    def reserve(self, nbytes: int) -> int:
        """The offset of ``nbytes`` more bytes at the end of the file, kept for one writer."""
        with self._lock:
            offset = self.size
            self.size += nbytes
        return offset

    def write_at(self, array: np.ndarray, offset: int) -> None:
        """Write ``array``'s bytes at ``offset`` (bytes reserved for them); a full disk is
        :meth:`append`'s error."""
        data = memoryview(np.ascontiguousarray(array)).cast("B")
        done = 0
        try:
            while done < len(data):
                done += os.pwrite(self._fd, data[done:], offset + done)
        except OSError as exc:
            folder = tempfile.gettempdir()
            raise output_error(
                f"the collision analysis's scratch files in {folder}",
                exc,
                offset + done,
                None,
                Path(folder),
                fix="set TMPDIR to a file system with more room (they take up to 12 bytes per n-gram "
                "occurrence)",
            ) from None

    def discard(self, offset: int, nbytes: int) -> None:
        """Give back the pages of ``nbytes`` at ``offset`` that will not be read again (a hole is
        punched: they read as zeros). Pages freed this way are the cheapest the next writes can
        get; where the file system cannot punch holes, nothing happens."""
        if _FALLOCATE is None or nbytes <= 0 or self._file.closed:
            return
        _FALLOCATE(self._fd, _PUNCH_HOLE, offset, nbytes)  # a failure only keeps the pages

    def read_into(self, array: np.ndarray, offset: int) -> None:
        """Fill the contiguous ``array`` with the bytes at ``offset``."""
        view = memoryview(array).cast("B")
        done = 0
        while done < len(view):
            got = os.preadv(self._fd, [view[done:]], offset + done)
            if got == 0:
                raise NgramToolError(f"a scratch file ended at byte {offset + done} (expected {len(view)})")
            done += got

    def read(self, dtype: np.dtype | type, count: int, offset: int) -> np.ndarray:
        """``count`` items of ``dtype`` from ``offset``, as a new array."""
        array = np.empty(count, dtype=dtype)
        self.read_into(array, offset)
        return array

    def close(self) -> None:
        """Release the file (its space is freed at once)."""
        self._file.close()
