"""Compressed inputs (gzip, bzip2, xz, zstd), known by their first bytes, decompressed on a thread of
their own so that decompression runs beside tokenizing.

:func:`open_decompressed` looks at the first bytes of a stream: compressed data comes back as a
stream of its decompressed bytes, read ahead by a background thread (the decompressors release the
GIL), and anything else comes back as it is. A truncated or corrupt file raises an error that names
the file and how many decompressed bytes were read before the damage.
"""

from __future__ import annotations

import bz2
import gzip
import io
import logging
import lzma
import queue
import threading
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO

from ..util.errors import NgramToolError
from .dependencies import require

log = logging.getLogger(__name__)
BLOCK_BYTES = 1 << 20  # compressed bytes read, and decompressed bytes handed on, at a time
READ_AHEAD_BLOCKS = 8  # decompressed blocks waiting for the reader (bounds memory)

# (first bytes, compression): what a compressed stream starts with. bzip2's magic is followed by the
# block size digit and the magic of a block (or of the end, when it compressed nothing), so plain
# text cannot be mistaken for it.
MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\xfd7zXZ\x00", "xz"),
)
_BZIP2_MARKS = (b"1AY&SY", b"\x17rE8P\x90")  # a block, the end of the stream
COMPRESSION_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd", ".zstd": "zstd"}


def sniff_compression(head: bytes) -> str | None:
    """The compression whose magic ``head`` (the first 10 bytes of a stream) starts with, or None."""
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in _BZIP2_MARKS:
        return "bz2"
    return None


class _Held:
    """Bytes handed on in parts of at most the size asked for, without a copy when the whole
    remainder fits."""

    def __init__(self, data: bytes = b"") -> None:
        self.data, self.at = data, 0

    def __len__(self) -> int:
        return len(self.data) - self.at

    def take(self, size: int) -> bytes:
        """The next ``size`` bytes (all that is left when ``size`` is negative)."""
        if self.at == 0 and (size < 0 or size >= len(self.data)):
            data, self.data = self.data, b""
            return data
        end = len(self.data) if size < 0 else min(len(self.data), self.at + size)
        part = self.data[self.at : end]
        self.at = end
        return part


class DecompressedInput(io.BufferedIOBase):
    """The decompressed bytes of a compressed stream, read ahead on a background thread.

    ``read(size)`` and ``read1(size)`` return up to ``size`` bytes, as soon as a block is there
    (the block itself when it fits: no copy). ``consumed`` is the number of compressed bytes
    read so far (for progress). Errors of the decompressor reach the reader as
    :class:`NgramToolError` at the point where they occurred.
    """

    def __init__(self, raw: BinaryIO, name: str, kind: str) -> None:
        super().__init__()
        self.name, self.kind = name, kind
        self._counted = _Counted(raw)
        self._decompress = _decompressor(kind, self._counted)
        self._queue: queue.Queue[bytes | BaseException] = queue.Queue(READ_AHEAD_BLOCKS)
        self._stop = threading.Event()
        self._pending = _Held()
        self._finished = False
        self._thread = threading.Thread(target=self._fill, name="ngramtool-decompress", daemon=True)
        self._thread.start()

    @property
    def consumed(self) -> int:
        """Compressed bytes read from the source so far."""
        return self._counted.count

    def readable(self) -> bool:
        return True

    def read1(self, size: int | None = -1) -> bytes:
        """Up to ``size`` decompressed bytes (b"" at the end), without waiting for more than one block."""
        if not self._pending:
            if self._finished:
                return b""
            item = self._queue.get()
            if isinstance(item, BaseException):
                self._finished = True
                raise item
            if not item:
                self._finished = True
                return b""
            self._pending = _Held(item)
        return self._pending.take(-1 if size is None else size)

    def read(self, size: int | None = -1) -> bytes:
        """Up to ``size`` decompressed bytes, as :meth:`read1` (a short read is not the end: b""
        is); everything left when ``size`` is negative or None."""
        if size is not None and size >= 0:
            return self.read1(size)
        return b"".join(iter(self.read1, b""))

    def close(self) -> None:
        if not self.closed:
            self._stop.set()
            while self._thread.is_alive():  # let a blocked producer see the stop
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    self._thread.join(0.05)
        super().close()

    def _fill(self) -> None:
        """The background thread: decompress into blocks of ``BLOCK_BYTES`` (the last may be
        shorter), put into the queue; then b"" for the end, or the error after the bytes that came
        before it. A decompressor read gives a few KB (gzip, bzip2, xz) to a few hundred KB (zstd):
        handing on whole blocks saves the reader as many hand-offs and block ends."""
        parts: list[bytes] = []
        delivered = 0
        try:
            while not self._stop.is_set():
                size = 0
                while size < BLOCK_BYTES and (part := self._decompress(BLOCK_BYTES - size)):
                    parts.append(part)
                    size += len(part)
                block = b"".join(parts)
                parts.clear()
                self._put(block)
                if not block:
                    return
                delivered += len(block)
        except Exception as exc:  # every decompressor error becomes one clear line for the reader
            if parts:
                self._put(b"".join(parts))
                delivered += sum(map(len, parts))
            self._put(_damaged(self.name, self.kind, delivered, exc))

    def _put(self, item: bytes | BaseException) -> None:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue


class _Counted:
    """A binary stream that counts the bytes read from it."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.count += len(data)
        return data


def _decompressor(kind: str, raw: _Counted) -> Callable[[int], bytes]:
    """``read(size)`` of the decompressed bytes of ``raw``: up to ``size`` bytes, b"" at the end."""
    if kind == "zstd":
        return _ZstdFrames(raw).read
    opener: Any = {"gzip": gzip.GzipFile, "bz2": bz2.BZ2File, "xz": lzma.LZMAFile}[kind]
    reader = opener(fileobj=raw) if kind == "gzip" else opener(raw)
    return reader.read1  # type: ignore[no-any-return]  # one compressed read at a time: an error names
    # the offset reached to within one read


ZSTD_INPUT_BYTES = 1 << 16  # compressed bytes decompressed at a time: text expands 3 to 10 times


class _ZstdFrames:
    """zstd decompression across frames that notices a truncated last frame (``zstandard``'s
    stream reader ends silently there). ``read(size)`` returns at most ``size`` bytes, whatever the
    compression ratio: the read-ahead queue stays bounded."""

    def __init__(self, raw: _Counted) -> None:
        zstandard = require("zstandard", "reading zstd-compressed input")
        self.raw = raw
        self.context = zstandard.ZstdDecompressor()
        self.frame: Any = None
        self.pending = _Held()

    def read(self, size: int) -> bytes:
        while not self.pending:
            data = self.raw.read(min(BLOCK_BYTES, ZSTD_INPUT_BYTES))
            if not data:
                if self.frame is not None and not self.frame.eof:
                    raise EOFError("the last zstd frame is incomplete")
                return b""
            out = []
            while data:
                if self.frame is None or self.frame.eof:
                    self.frame = self.context.decompressobj()
                out.append(self.frame.decompress(data))
                data = self.frame.unused_data if self.frame.eof else b""
            self.pending = _Held(b"".join(out))
        return self.pending.take(size)


_NAMES = {"gzip": "gzip", "bz2": "bzip2", "xz": "xz", "zstd": "zstd"}


def _damaged(name: str, kind: str, delivered: int, exc: Exception) -> NgramToolError:
    """The error for a compressed input that cannot be decompressed to its end."""
    where = f"after {delivered:,} decompressed bytes"
    if isinstance(exc, NgramToolError):
        return exc
    if isinstance(exc, EOFError):
        return NgramToolError(
            f"{name}: the {_NAMES[kind]} data ends early, {where}: the file is truncated (an interrupted "
            "download or copy?); get it again"
        )
    if isinstance(exc, OSError | zlib.error | lzma.LZMAError) or type(exc).__name__ == "ZstdError":
        detail = str(exc) or type(exc).__name__
        return NgramToolError(f"{name}: corrupt {_NAMES[kind]} data {where} ({detail}); the file is damaged")
    return NgramToolError(f"{name}: cannot decompress the {_NAMES[kind]} data {where}: {exc}")


def open_decompressed(stream: BinaryIO, name: str) -> tuple[BinaryIO, Callable[[], int]]:
    """(readable stream, source bytes read so far): the decompressed bytes of a compressed stream
    (known by its first bytes) read ahead on a thread, or ``stream`` itself."""
    peek = getattr(stream, "peek", None)
    head = peek(10)[:10] if peek is not None else b""
    kind = sniff_compression(head)
    if kind is None:
        counted = _CountedReader(stream)
        return io.BufferedReader(counted, BLOCK_BYTES), lambda: counted.count  # type: ignore[return-value]
    log.debug("%s: %s data, decompressed on a background thread", name, _NAMES[kind])
    source = DecompressedInput(stream, name, kind)
    return source, lambda: source.consumed  # type: ignore[return-value]


class _CountedReader(io.RawIOBase):
    """A readable raw stream over ``stream`` that counts the bytes read (plain inputs)."""

    def __init__(self, stream: BinaryIO) -> None:
        super().__init__()
        self._stream = stream
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = self._stream.readinto(buffer)  # type: ignore[attr-defined]
        self.count += size or 0
        return size or 0
