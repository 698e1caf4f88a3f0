"""Write a .npy file whose first axis grows while it streams, in bounded memory; map one cheaply.

The header is written first with room to spare and rewritten with the final shape on close, so
the file is a plain .npy (version 1.0) that ``numpy.load(mmap_mode="r")`` maps. The checksum of
the data bytes (everything after the header; :mod:`ngramtool.formats.checksum`) is computed as
the data streams by. :class:`SlabNpyWriter` writes the rows of an index from aligned buffers the
hashing fills in place, with ``O_DIRECT`` where the filesystem takes it
(:mod:`ngramtool.formats.directio`). :func:`map_npy` maps any .npy file read-only, reading the
headers written here without numpy's general header parser (a dataset of thousands of shards
opens thousands of files).
"""

from __future__ import annotations

import math
import mmap
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..util.atomic import Staged
from ..util.profiling import StageClock, busy, timed
from ..util.writeback import WriteBehind
from .checksum import DEFAULT_CHECKSUM, check_algorithm, new_digest
from .directio import ALIGN, OutputFile, aligned_bytes

# A fixed header size (a multiple of 64) leaves room for any shape the file can reach.
HEADER_BYTES = 128
SLAB_BYTES = 16 << 20  # rows written at a time by SlabNpyWriter (one direct write each)
DISK_QUEUE = 2  # full slabs waiting for the disk thread (each SLAB_BYTES of memory)
MAGIC = b"\x93NUMPY\x01\x00"
# The header npy_header writes (C order), with the dtype and the shape to capture.
_OWN_HEADER = re.compile(
    rb"\{'descr': '([<>|=][a-zA-Z][0-9]*)', 'fortran_order': False, 'shape': \(([0-9, ]*)\), \} *\n"
)
# Python 3.13 can map without keeping a descriptor open; older versions keep one per map.
_MMAP_OPTIONS = {"trackfd": False} if sys.version_info >= (3, 13) else {}


def npy_header(dtype: np.dtype, shape: tuple[int, ...], size: int = HEADER_BYTES) -> bytes:
    """A .npy v1.0 header of exactly ``size`` bytes (a multiple of 64, below 64 KiB) for a
    C-order array."""
    descr = np.lib.format.dtype_to_descr(np.dtype(dtype))
    text = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {shape!r}, }}"
    body_len = size - len(MAGIC) - 2
    body = text.ljust(body_len - 1) + "\n"
    if len(body) != body_len:
        raise ValueError(f"npy header for shape {shape} does not fit in {size} bytes")
    return MAGIC + body_len.to_bytes(2, "little") + body.encode("latin1")


def _read_header(handle: BinaryIO) -> tuple[np.dtype, tuple[int, ...], int]:
    """(dtype, shape, data offset) of the .npy file open in ``handle``; raises ValueError."""
    head = handle.read(len(MAGIC) + 2)
    own = None
    if len(head) == len(MAGIC) + 2 and head.startswith(MAGIC):
        offset = len(head) + int.from_bytes(head[len(MAGIC) :], "little")
        if offset % 64 == 0:  # the headers written here (numpy's own parser reads any other)
            own = _OWN_HEADER.fullmatch(handle.read(offset - len(head)))
    if own is not None:
        shape = tuple(int(n) for n in own.group(2).split(b",") if n.strip())
        return np.dtype(own.group(1).decode("ascii")), shape, offset
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


class NpyStreamWriter:
    """Append arrays of shape [n, *inner] to a .npy file; :meth:`close` fixes the header.

    The data's checksum (``checksum``: ``"xxh3-128"`` or ``"sha256"``) is computed as it is
    written. With ``digest_behind`` it runs on a thread of its own, overlapped with the writes
    (both release the GIL), and ``clock`` counts that thread's CPU time under the algorithm's
    name; appended arrays must then stay unchanged until :meth:`close`.

    Attributes:
        rows: items written along the first axis so far.
        algorithm: the checksum's algorithm.
        checksum: hex digest of the data bytes (valid after close).
    """

    header_bytes = HEADER_BYTES

    def __init__(
        self,
        path: Path,
        dtype: np.dtype,
        inner_shape: tuple[int, ...] = (),
        *,
        checksum: str = DEFAULT_CHECKSUM,
        digest_behind: bool = False,
        clock: StageClock | None = None,
        direct: bool = False,
    ) -> None:
        self.path = path
        self.dtype = np.dtype(dtype).newbyteorder("<")
        self.inner_shape = tuple(inner_shape)
        self.rows = 0
        self.algorithm = check_algorithm(checksum)
        self.checksum = ""
        self._digest = new_digest(self.algorithm)
        self._digester = WriteBehind(name="ngramtool-checksum") if digest_behind else None
        self._clock = clock
        self._update = (
            timed(clock, self.algorithm, self._digest.update) if digest_behind else self._digest.update
        )
        self._file = OutputFile(path, direct=direct)
        self._write_header()

    @property
    def direct(self) -> bool:
        """Whether the data goes to disk with ``O_DIRECT`` (else through the page cache)."""
        return self._file.direct

    def _write_header(self) -> None:
        header = aligned_bytes(self.header_bytes)[: self.header_bytes]
        header[:] = np.frombuffer(npy_header(self.dtype, self.shape, self.header_bytes), np.uint8)
        self._file.write(header, 0)

    def _digest_data(self, data: np.ndarray) -> None:
        """Add bytes to the checksum (on the digest thread, if there is one)."""
        if self._digester is None:
            self._update(data)
        else:
            self._digester.submit(self._update, data)

    def _check_shape(self, array: np.ndarray) -> None:
        if tuple(array.shape[1:]) != self.inner_shape:
            raise ValueError(f"shape {array.shape} does not continue [n, {self.inner_shape}]")

    def append(self, array: np.ndarray) -> None:
        """Append ``array`` (its shape must be [n, *inner_shape]); it is converted to the file dtype."""
        self._check_shape(array)
        data = np.ascontiguousarray(array, dtype=self.dtype).reshape(-1).view(np.uint8)
        self._digest_data(data)
        self._file.write(data, self.header_bytes + self.rows * self._row_bytes)
        self.rows += array.shape[0]

    @property
    def _row_bytes(self) -> int:
        return self.dtype.itemsize * math.prod(self.inner_shape)

    def close(self) -> None:
        """Write the final shape into the header, fsync, and finish the checksum."""
        self._write_header()
        self._file.close()
        if self._digester is not None:
            self._digester.drain()
        self.checksum = self._digest.hexdigest()

    def abort(self) -> None:
        """Close without finishing (the caller removes the file); nothing is buffered, and
        the file is closed without a sync."""
        self._file.close(sync=False)
        if self._digester is not None:
            self._digester.stop()

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape written so far."""
        return (self.rows, *self.inner_shape)

    @property
    def bytes_written(self) -> int:
        """Bytes written to the file so far, header included (not those still in memory)."""
        return self._file.written


class SlabNpyWriter(NpyStreamWriter):
    """A :class:`NpyStreamWriter` that writes from aligned slabs of ``SLAB_BYTES``, with
    ``O_DIRECT`` where the filesystem takes it, for the rows of an index.

    :meth:`out` gives the slab memory that rows at a position will be written from, so a producer
    (the hashing) computes them in place and nothing is copied; :meth:`append` copies only arrays
    that are elsewhere. A full slab is checksummed (on the digest thread) and written whole on a
    thread of its own, at once, then reused once both are done (its pages stay faulted in). The
    writes then follow one another on that thread, at most :data:`DISK_QUEUE` waiting, instead of
    each waiting for the appending thread to be scheduled again: 60 MB of text hashed 5% faster
    on 2 busy cores (docs/performance.md). ``clock`` counts the disk thread's CPU time as
    ``write`` and its writes' wall time as the disk busy (``disk_busy_seconds``). The data starts
    at ``ALIGN`` bytes (the header is padded to it), so every slab lands at an aligned offset.
    Appends come from one thread; :meth:`out` may be called from another.
    """

    header_bytes = ALIGN

    def __init__(self, path: Path, dtype: np.dtype, inner_shape: tuple[int, ...], **options: object) -> None:
        super().__init__(path, dtype, inner_shape, direct=True, **options)  # type: ignore[arg-type]
        per_align = ALIGN // math.gcd(ALIGN, self._row_bytes)  # rows whose bytes fill whole blocks
        self.slab_rows = max(per_align, SLAB_BYTES // self._row_bytes // per_align * per_align)
        self._slab_bytes = self.slab_rows * self._row_bytes
        self._slabs: dict[int, np.ndarray] = {}  # slab number -> its aligned bytes
        self._free: list[np.ndarray] = []
        self._users: dict[int, int] = {}  # a slab given out: its number -> threads still using it
        self._lock = threading.Lock()
        self._disk = WriteBehind(DISK_QUEUE, name="ngramtool-disk")
        # Its CPU time counts as the index's writing, its wall time as the disk busy.
        self._timed_write = busy(self._clock, "disk", timed(self._clock, "write", self._write))

    def _slab(self, number: int) -> np.ndarray:
        with self._lock:
            if number not in self._slabs:
                self._slabs[number] = self._free.pop() if self._free else aligned_bytes(self._slab_bytes)
            return self._slabs[number]

    def _rows_of(self, slab: np.ndarray) -> np.ndarray:
        return slab[: self._slab_bytes].view(self.dtype).reshape(self.slab_rows, *self.inner_shape)

    def out(self, position: int, count: int) -> np.ndarray:
        """The memory rows ``[position, position + count)`` will be written from (within one slab:
        ``position // slab_rows == (position + count - 1) // slab_rows``)."""
        number, lo = divmod(position, self.slab_rows)
        if lo + count > self.slab_rows:
            raise ValueError(f"rows [{position}, {position + count}) cross a slab boundary")
        return self._rows_of(self._slab(number))[lo : lo + count]

    def append(self, array: np.ndarray) -> None:
        """Append ``array`` [n, *inner_shape]: rows computed in :meth:`out`'s memory stay where they
        are, others are copied into the slab; full slabs are written."""
        self._check_shape(array)
        done, total = 0, array.shape[0]
        while done < total:
            number, lo = divmod(self.rows, self.slab_rows)
            take = min(total - done, self.slab_rows - lo)
            target = self._rows_of(self._slab(number))[lo : lo + take]
            part = array[done : done + take]
            if part.__array_interface__["data"][0] != target.__array_interface__["data"][0]:
                np.copyto(target, part)
            done += take
            self.rows += take
            if lo + take == self.slab_rows:
                self._write_slab(number, self._slab_bytes)

    def _write_slab(self, number: int, nbytes: int) -> None:
        """Checksum and write the first ``nbytes`` of slab ``number`` (each on its thread), then
        free it for reuse."""
        with self._lock:
            slab = self._slabs.pop(number)
            self._users[number] = 1 if self._digester is None else 2
        self._digest_data(slab[:nbytes])
        if self._digester is not None:  # after the digest: the digest thread runs calls in order
            self._digester.submit(self._release, number, slab)
        self._disk.submit(self._timed_write, number, slab, nbytes)

    def _write(self, number: int, slab: np.ndarray, nbytes: int) -> None:
        """Write the first ``nbytes`` of slab ``number`` where it belongs (on the disk thread)."""
        offset = self.header_bytes + number * self._slab_bytes
        if nbytes == self._slab_bytes:
            self._file.write(slab, offset)
        else:
            self._file.write_end(slab, offset, nbytes)
        self._release(number, slab)

    def _release(self, number: int, slab: np.ndarray) -> None:
        """One of the threads using slab ``number`` is done with it; the last frees it for reuse."""
        with self._lock:
            self._users[number] -= 1
            if not self._users[number]:
                del self._users[number]
                self._free.append(slab)

    def close(self) -> None:
        """Write the last, partial slab, then finish as :meth:`NpyStreamWriter.close`."""
        number, rest = divmod(self.rows, self.slab_rows)
        if rest:
            self._write_slab(number, rest * self._row_bytes)
        self._disk.drain()
        with self._lock:
            self._slabs.clear()
            self._free.clear()
        super().close()

    def abort(self) -> None:
        """Stop the disk thread, then close as :meth:`NpyStreamWriter.abort`."""
        self._disk.stop()
        super().abort()


@contextmanager
def atomic_npy(
    path: Path,
    dtype: np.dtype,
    inner_shape: tuple[int, ...] = (),
    *,
    wait: bool = False,
    expected_bytes: int | None = None,
    checksum: str = DEFAULT_CHECKSUM,
) -> Iterator[NpyStreamWriter]:
    """A :class:`NpyStreamWriter` on a temporary file that replaces ``path`` only on success
    (``wait`` and ``expected_bytes``: see :class:`~ngramtool.util.atomic.Staged`)."""
    with Staged(path, wait=wait, expected_bytes=expected_bytes) as staged:
        writer = NpyStreamWriter(staged.path, dtype, inner_shape, checksum=checksum)
        try:
            yield writer
            writer.close()
        except BaseException:
            writer.abort()
            raise
        staged.publish()
