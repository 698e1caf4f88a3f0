"""Write a .npy file whose first axis grows while it streams, in bounded memory.

The header is written first with room to spare and rewritten with the final shape on close, so
the file is a plain .npy (version 1.0) that ``numpy.load(mmap_mode="r")`` maps. The sha256 of the
data bytes (everything after the header) is computed as the data streams by.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..errors import NgramToolError
from ..stages import StageClock, timed
from .behind import WriteBehind
from .partial import partial_file

# A fixed header size (a multiple of 64) leaves room for any shape the file can reach.
HEADER_BYTES = 128
SETTLE_BYTES = 256 << 20  # written data flushed to disk and dropped from the page cache at a time
READ_BYTES = 16 << 20  # read at a time by data_sha256
MAGIC = b"\x93NUMPY\x01\x00"
_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def npy_header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """A .npy v1.0 header of exactly HEADER_BYTES bytes for a C-order array."""
    descr = np.lib.format.dtype_to_descr(np.dtype(dtype))
    text = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {shape!r}, }}"
    body_len = HEADER_BYTES - len(MAGIC) - 2
    body = text.ljust(body_len - 1) + "\n"
    if len(body) != body_len:
        raise ValueError(f"npy header for shape {shape} does not fit in {HEADER_BYTES} bytes")
    return MAGIC + body_len.to_bytes(2, "little") + body.encode("latin1")


def data_sha256(path: Path) -> str:
    """sha256 of a .npy file's data bytes (everything after its header, whatever its length)."""
    digest = hashlib.sha256()
    try:
        with Path(path).open("rb") as handle:
            version = np.lib.format.read_magic(handle)
            read_header = _HEADER_READERS.get(version)
            if read_header is None:
                raise ValueError(f".npy version {version} is not supported")
            read_header(handle)
            while block := handle.read(READ_BYTES):
                digest.update(block)
    except (OSError, ValueError) as exc:
        raise NgramToolError(f"{path}: cannot read this array ({exc})") from None
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
        """Close without finishing (the caller removes the file)."""
        self._handle.close()
        if self._digester is not None:
            self._digester.stop()

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape written so far."""
        return (self.rows, *self.inner_shape)


@contextmanager
def atomic_npy(path: Path, dtype: np.dtype, inner_shape: tuple[int, ...] = ()) -> Iterator[NpyStreamWriter]:
    """A :class:`NpyStreamWriter` on a temporary file that replaces ``path`` only on success."""
    path = Path(path)
    try:
        tmp_name = partial_file(path)
        writer = NpyStreamWriter(tmp_name, dtype, inner_shape)
    except OSError as exc:
        raise NgramToolError(f"cannot write {path}: {exc.strerror}") from None
    try:
        yield writer
        writer.close()
        os.replace(tmp_name, path)
    except BaseException:
        writer.abort()
        tmp_name.unlink(missing_ok=True)
        raise
