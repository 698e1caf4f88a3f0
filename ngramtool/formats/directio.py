"""Output files written with ``O_DIRECT`` where the filesystem takes it, and aligned buffers.

Writing 128 bytes of rows per token through the page cache costs a kernel copy of every byte,
then the flushes and the dropping of written pages that keep the cache from filling (see
:meth:`OutputFile.settle`): about 1 CPU second per 2 GB here. With ``O_DIRECT`` the disk reads the
caller's buffer itself: 0.17 CPU seconds for the same 2 GB, and faster. ``O_DIRECT`` wants the
buffer's address, the length and the file offset aligned (:data:`ALIGN` covers the usual 512- and
4096-byte blocks); the rows writer (:class:`ngramtool.formats.npy.SlabNpyWriter`) hashes into
aligned buffers so that nothing is copied.

Filesystems that refuse ``O_DIRECT`` (tmpfs, some network and FUSE filesystems) refuse it when the
file is opened or at the first write; :class:`OutputFile` then writes through the page cache as
before. ``NGRAMTOOL_DIRECT_IO=0`` turns ``O_DIRECT`` off.
"""

from __future__ import annotations

import errno
import mmap
import os
from pathlib import Path

import numpy as np

ALIGN = 4096  # address, length and offset alignment of O_DIRECT writes (a page: any block size)
SETTLE_BYTES = 256 << 20  # buffered output flushed to disk and dropped from the page cache at a time
_REFUSALS = (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP)


def direct_io_enabled() -> bool:
    """Whether outputs try ``O_DIRECT`` (the platform has it and ``NGRAMTOOL_DIRECT_IO`` is not 0)."""
    return hasattr(os, "O_DIRECT") and os.environ.get("NGRAMTOOL_DIRECT_IO", "1") != "0"


def aligned_bytes(nbytes: int) -> np.ndarray:
    """A uint8 array of ``nbytes`` (rounded up to :data:`ALIGN`) whose address is page-aligned
    (anonymous memory, zero-filled; freed when the last view of it goes)."""
    size = max(ALIGN, -(-nbytes // ALIGN) * ALIGN)
    return np.frombuffer(mmap.mmap(-1, size), dtype=np.uint8)


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


class OutputFile:
    """A new file written at given offsets, with ``O_DIRECT`` when ``direct`` and the filesystem
    takes it (:attr:`direct` says which way it writes).

    Direct writes must be aligned (:meth:`write` checks it). Through the page cache, every
    :data:`SETTLE_BYTES` written are flushed and dropped from the cache.
    """

    def __init__(self, path: Path, *, direct: bool = True) -> None:
        self.path = Path(path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
        self.direct = direct and direct_io_enabled()
        self.fd = -1
        if self.direct:
            try:
                self.fd = os.open(self.path, flags | os.O_DIRECT, 0o666)
            except OSError as exc:
                if exc.errno not in _REFUSALS:
                    raise
                self.direct = False
        if self.fd < 0:
            self.fd = os.open(self.path, flags, 0o666)
        self._written = self._settled = 0
        self._tried = False  # whether a direct write went through yet

    @property
    def written(self) -> int:
        """Bytes written to the file so far (the end of the furthest write)."""
        return self._written

    def aligned(self, buffer: np.ndarray, offset: int) -> bool:
        """Whether ``buffer`` at ``offset`` meets ``O_DIRECT``'s alignment."""
        return (_address(buffer) | buffer.nbytes | offset) % ALIGN == 0

    def write(self, buffer: np.ndarray, offset: int) -> None:
        """Write all of the contiguous ``buffer`` at ``offset``."""
        view = memoryview(np.ascontiguousarray(buffer).reshape(-1).view(np.uint8))
        if self.direct and not self.aligned(buffer, offset):
            raise ValueError(f"an O_DIRECT write needs {ALIGN}-byte alignment (offset {offset})")
        done = 0
        while done < view.nbytes:
            try:
                done += os.pwrite(self.fd, view[done:], offset + done)
            except OSError as exc:
                if not (self.direct and not self._tried and exc.errno in _REFUSALS):
                    raise
                self._stop_direct()  # refused at the first write: through the page cache instead
        self._tried = True
        self._written = max(self._written, offset + view.nbytes)
        if not self.direct and self._written - self._settled >= SETTLE_BYTES:
            self.settle()

    def write_end(self, buffer: np.ndarray, offset: int, size: int) -> None:
        """Write the last ``size`` bytes of the file from the aligned ``buffer`` at ``offset``: a
        direct write rounds the length up to a block and the file is cut to ``offset + size``."""
        if not self.direct:
            self.write(buffer[:size], offset)
            return
        padded = -(-size // ALIGN) * ALIGN
        buffer[size:padded] = 0
        self.write(buffer[:padded], offset)
        os.ftruncate(self.fd, offset + size)

    def _stop_direct(self) -> None:
        import fcntl

        fcntl.fcntl(self.fd, fcntl.F_SETFL, fcntl.fcntl(self.fd, fcntl.F_GETFL) & ~os.O_DIRECT)
        self.direct = False

    def settle(self) -> None:
        """Write what is cached to disk and drop it from the page cache.

        A streaming writer's output is not read back soon, and letting gigabytes of it pile up in
        the page cache costs more than the disk writes (fresh pages are slow to come by, in
        virtual machines above all): writing 1.6 GB measured 0.36 GB/s into a growing page cache
        and 1.8 GB/s when each 256 MB was settled like this.
        """
        os.fdatasync(self.fd)
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(self.fd, self._settled, self._written - self._settled, os.POSIX_FADV_DONTNEED)
        self._settled = self._written

    def close(self, *, sync: bool = True) -> None:
        """fsync (unless not ``sync``) and close."""
        if self.fd < 0:
            return
        try:
            if sync:
                os.fsync(self.fd)
        finally:
            os.close(self.fd)
            self.fd = -1
