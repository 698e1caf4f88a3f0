"""Write a .npy file whose first axis grows while it streams, in bounded memory; map one cheaply.

The header is written first with room to spare and rewritten with the final shape on close, so
the file is a plain .npy (version 1.0) that ``numpy.load(mmap_mode="r")`` maps. The sha256 of the
data bytes (everything after the header) is computed as the data streams by. :func:`map_npy`
maps any .npy file read-only, reading the fixed header written here without numpy's general
header parser (a dataset of thousands of shards opens thousands of files).
"""

from __future__ import annotations

import hashlib
import math
import mmap
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..profiling import StageClock, timed
from ..writeback import WriteBehind
from .atomic import Staged, close_quietly

# A fixed header size (a multiple of 64) leaves room for any shape the file can reach.
HEADER_BYTES = 128
SETTLE_BYTES = 256 << 20  # written data flushed to disk and dropped from the page cache at a time
READ_BYTES = 16 << 20  # hashed at a time by array_sha256
MAGIC = b"\x93NUMPY\x01\x00"
# The header npy_header writes (C order), with the dtype and the shape to capture.
_OWN_HEADER = re.compile(
    rb"\{'descr': '([<>|=][a-zA-Z][0-9]*)', 'fortran_order': False, 'shape': \(([0-9, ]*)\), \} *\n"
)
_OWN_PREFIX = MAGIC + (HEADER_BYTES - len(MAGIC) - 2).to_bytes(2, "little")
# Python 3.13 can map without keeping a descriptor open; older versions keep one per map.
_MMAP_OPTIONS = {"trackfd": False} if sys.version_info >= (3, 13) else {}


def npy_header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """A .npy v1.0 header of exactly HEADER_BYTES bytes for a C-order array."""
    descr = np.lib.format.dtype_to_descr(np.dtype(dtype))
    text = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {shape!r}, }}"
    body_len = HEADER_BYTES - len(MAGIC) - 2
    body = text.ljust(body_len - 1) + "\n"
    if len(body) != body_len:
        raise ValueError(f"npy header for shape {shape} does not fit in {HEADER_BYTES} bytes")
    return MAGIC + body_len.to_bytes(2, "little") + body.encode("latin1")


def _read_header(handle: BinaryIO) -> tuple[np.dtype, tuple[int, ...], int]:
    """(dtype, shape, data offset) of the .npy file open in ``handle``; raises ValueError."""
    head = handle.read(HEADER_BYTES)
    own = _OWN_HEADER.fullmatch(head, len(MAGIC) + 2) if head.startswith(_OWN_PREFIX) else None
    if own is not None:
        shape = tuple(int(n) for n in own.group(2).split(b",") if n.strip())
        return np.dtype(own.group(1).decode("ascii")), shape, HEADER_BYTES
    handle.seek(0)
    version = np.lib.format.read_magic(handle)
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    if version not in readers:
        raise ValueError(f".npy version {version} is not supported")
    shape, fortran_order, dtype = readers[version](handle)
    if fortran_order:
        raise ValueError("a Fortran-order array; ngramtool writes C order")
    return dtype, tuple(shape), handle.tell()


def map_npy(path: Path) -> np.ndarray:
    """A read-only view of a .npy file's array, memory-mapped (an array of no bytes is not mapped).

    Like ``numpy.load(path, mmap_mode="r")`` for C-order files, for a fraction of its cost. Raises
    OSError when the file cannot be opened, ValueError when it is not a whole .npy file.
    """
    with Path(path).open("rb") as handle:
        dtype, shape, offset = _read_header(handle)
        nbytes = math.prod(shape) * dtype.itemsize
        size = os.fstat(handle.fileno()).st_size
        if size < offset + nbytes:
            raise ValueError(
                f"the file holds {size - offset} data bytes, not the {nbytes} of {dtype.str} {list(shape)}"
            )
        if nbytes == 0:
            empty = np.zeros(shape, dtype)
            empty.setflags(write=False)
            return empty
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ, **_MMAP_OPTIONS)
    return np.frombuffer(mapped, dtype, math.prod(shape), offset).reshape(shape)


def array_sha256(array: np.ndarray) -> str:
    """sha256 of a C-order array's bytes, as the data of its .npy file (a memory map is read in
    blocks of READ_BYTES, never whole)."""
    flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    digest = hashlib.sha256()
    for lo in range(0, flat.shape[0], READ_BYTES):
        digest.update(flat[lo : lo + READ_BYTES])
    return digest.hexdigest()


class NpyStreamWriter:
    """Append arrays of shape [n, *inner] to a .npy file; :meth:`close` fixes the header.

    With ``digest_behind`` the sha256 runs on a thread of its own, overlapped with the writes
    (both release the GIL): for the rows, the bulk of an index, that halves the work of the
    thread that writes, which caps a run's throughput on machines with many tokenizer threads.
    Appended arrays must then stay unchanged until :meth:`close`. ``clock`` counts that thread's
    CPU time as ``sha256``.

    Attributes:
        rows: items written along the first axis so far.
        sha256: hex digest of the data bytes (valid after close).
    """

    def __init__(
        self,
        path: Path,
        dtype: np.dtype,
        inner_shape: tuple[int, ...] = (),
        *,
        digest_behind: bool = False,
        clock: StageClock | None = None,
    ) -> None:
        self.path = path
        self.dtype = np.dtype(dtype).newbyteorder("<")
        self.inner_shape = tuple(inner_shape)
        self.rows = 0
        self._digest = hashlib.sha256()
        self._digester = WriteBehind(name="ngramtool-sha256") if digest_behind else None
        self._update = timed(clock, "sha256", self._digest.update)
        self._handle: BinaryIO = path.open("wb")
        self._handle.write(npy_header(self.dtype, (0, *self.inner_shape)))
        self.sha256 = ""
        self._written = self._settled = HEADER_BYTES

    def append(self, array: np.ndarray) -> None:
        """Append ``array`` (its shape must be [n, *inner_shape]); it is converted to the file dtype."""
        if tuple(array.shape[1:]) != self.inner_shape:
            raise ValueError(f"shape {array.shape} does not continue [n, {self.inner_shape}]")
        data = np.ascontiguousarray(array, dtype=self.dtype)
        view = memoryview(data.reshape(-1).view(np.uint8))
        if self._digester is None:
            self._digest.update(view)
        else:
            self._digester.submit(self._update, view)
        self._handle.write(view)
        self.rows += array.shape[0]
        self._written += view.nbytes
        if self._written - self._settled >= SETTLE_BYTES:
            self._settle()

    def _settle(self) -> None:
        """Write what is buffered to disk and drop it from the page cache.

        A streaming writer's output is not read back soon, and letting gigabytes of it pile up
        in the page cache costs more than the disk writes (fresh pages are slow to come by,
        in virtual machines above all): writing 1.6 GB measured 0.36 GB/s into a growing page
        cache and 1.8 GB/s when each 256 MB was settled like this.
        """
        self._handle.flush()
        fd = self._handle.fileno()
        os.fdatasync(fd)
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, self._settled, self._written - self._settled, os.POSIX_FADV_DONTNEED)
        self._settled = self._written

    def close(self) -> None:
        """Write the final shape into the header, flush and fsync."""
        self._handle.seek(0)
        self._handle.write(npy_header(self.dtype, (self.rows, *self.inner_shape)))
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        if self._digester is not None:
            self._digester.drain()
        self.sha256 = self._digest.hexdigest()

    def abort(self) -> None:
        """Close without finishing (the caller removes the file); what is still buffered is
        dropped, and an error in writing it (a full disk, again) too."""
        close_quietly(self._handle)
        if self._digester is not None:
            self._digester.stop()

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape written so far."""
        return (self.rows, *self.inner_shape)

    @property
    def bytes_written(self) -> int:
        """Bytes handed to the file so far, header included."""
        return self._written


@contextmanager
def atomic_npy(
    path: Path,
    dtype: np.dtype,
    inner_shape: tuple[int, ...] = (),
    *,
    wait: bool = False,
    expected_bytes: int | None = None,
) -> Iterator[NpyStreamWriter]:
    """A :class:`NpyStreamWriter` on a temporary file that replaces ``path`` only on success
    (``wait`` and ``expected_bytes``: see :class:`~ngramtool.formats.atomic.Staged`)."""
    with Staged(path, wait=wait, expected_bytes=expected_bytes) as staged:
        writer = NpyStreamWriter(staged.path, dtype, inner_shape)
        try:
            yield writer
            writer.close()
        except BaseException:
            writer.abort()
            raise
        staged.publish()
