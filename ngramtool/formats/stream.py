"""The pipe stream: an index sent through a pipe as framed binary data (``ngramtool hash -o -``).

Layout (all integers little-endian; see docs/formats.md):

    header   b"NGRMSTRM" | u16 major | u16 minor | u32 crc32 | u64 n | n bytes of manifest JSON
             | u64 m | m bytes: the vocabulary lookup table as int64 [m / 8]
             crc32 = zlib.crc32 of the manifest bytes followed by the table bytes
    chunk    b"CHNK" | u32 crc32 | u64 tokens | u64 doc_starts | payload
             payload = tokens (uint32 [tokens]) | rows ([tokens, L, C] of the row dtype)
                       | doc_starts (int64 [doc_starts], positions within the chunk)
             crc32 = zlib.crc32 of the payload
    trailer  b"TRLR" | u64 total tokens | u64 total documents | u64 chunks | 32 bytes: the
             checksum of every chunk payload in order, of the manifest's "checksum" algorithm
             (XXH3-128: 16 bytes, then 16 zero bytes; sha256, the default of streams before 1.2:
             32 bytes)

A reader yields a chunk only after its CRC matched, and raises when the stream ends before the
trailer or the trailer disagrees, when anything follows the trailer, or when a length field
claims more than a writer ever sends (``MAX_FRAME_BYTES`` per chunk or manifest,
``MAX_TABLE_BYTES`` of table): a truncated or corrupted stream is an error, never short data.
"""

from __future__ import annotations

import io
import json
import os
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ..spec.hashspec import HashSpec
from ..util.atomic import OUTPUT_ERRNOS, attributed, output_error
from ..util.chunks import starts_within
from ..util.errors import NgramToolError
from .checksum import DEFAULT_CHECKSUM, SHA256, check_algorithm, new_digest
from .schema import STREAM_MANIFEST, check_document, spec_from_record

FORMAT_NAME = "ngramtool-stream"
MAGIC = b"NGRMSTRM"
CHUNK_TAG = b"CHNK"
TRAILER_TAG = b"TRLR"
# 1.2: the manifest's "checksum" names the trailer's algorithm (absent: sha256)
STREAM_MAJOR, STREAM_MINOR = 1, 2
_HEADER = struct.Struct("<8sHHIQ")
_CHUNK = struct.Struct("<4sIQQ")
_DIGEST_FIELD = 32  # trailer bytes for the checksum (a sha256; shorter digests are zero-padded)
_TRAILER = struct.Struct(f"<4sQQQ{_DIGEST_FIELD}s")
_U64 = struct.Struct("<Q")
MAX_FRAME_BYTES = 1 << 30  # writers split larger chunks; a bigger claim is a corrupted length field
MAX_TABLE_BYTES = 1 << 34  # the lookup table of 2^31 raw ids
STDOUT = "-"  # the file name that a stream's write errors carry


@dataclass(frozen=True)
class StreamChunk:
    """One verified chunk of a stream, what iterating a :class:`StreamReader` yields.

    Attributes:
        tokens: uint32 [t] raw token ids.
        rows: [t, L, C] their rows (the spec's row dtype); ``rows[i]`` ends at ``tokens[i]``.
        doc_starts: int64, the positions within this chunk where a document starts.
    """

    tokens: np.ndarray
    rows: np.ndarray
    doc_starts: np.ndarray


class StreamWriter:
    """Write a stream to a binary file object; :meth:`commit` writes the trailer.

    Used as a context manager: a full disk under the file (or a quota, a read-only file system)
    becomes one :class:`~ngramtool.util.atomic.OutputError` line with the bytes written, the
    bytes still needed (``expected_bytes``, the estimated size of the whole stream, may be set
    while writing) and the free space. The trailer's checksum is of the ``checksum`` algorithm,
    which the header's manifest records.
    """

    def __init__(
        self,
        out: BinaryIO,
        manifest: dict[str, Any],
        lut: np.ndarray,
        spec: HashSpec,
        *,
        checksum: str = DEFAULT_CHECKSUM,
    ) -> None:
        self.out = out
        self.spec = spec
        self.num_tokens = 0
        self.num_documents = 0
        self.chunks = 0
        self.bytes_written = 0
        self.expected_bytes: int | None = None
        self._start = _position(out)
        self._digest = new_digest(check_algorithm(checksum))
        body = json.dumps({**manifest, "checksum": checksum}, ensure_ascii=False).encode("utf-8")
        table = np.ascontiguousarray(lut, dtype="<i8").tobytes()
        crc = zlib.crc32(table, zlib.crc32(body))
        self._write(_HEADER.pack(MAGIC, STREAM_MAJOR, STREAM_MINOR, crc, len(body)) + body)
        self._write(_U64.pack(len(table)) + table)

    def _write(self, data: bytes) -> None:
        with attributed(STDOUT):  # not another output's error (a --save-tokens file's)
            self.out.write(data)
        self.bytes_written += len(data)

    def __enter__(self) -> StreamWriter:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        # Without commit() no trailer is written, so a reader reports the stream as truncated.
        failure = exc
        try:
            with attributed(STDOUT):
                self.out.flush()
        except OSError as error:  # a full disk fails again: the first error is the one to report
            failure = failure or error
        if isinstance(failure, OSError) and failure.errno in OUTPUT_ERRNOS:
            fd = _descriptor(self.out)
            where = f"the stream to {_file_name(fd)}"
            end = _position(self.out)  # a file: what reached it (a failed write may leave part)
            written = end - self._start if end is not None and self._start is not None else None
            raise output_error(
                where,
                failure,
                self.bytes_written if written is None else written,
                self.expected_bytes,
                fd,
                outcome="it ends without its trailer, so readers reject it",
            ) from None
        if failure is not exc and failure is not None:
            raise failure

    def append(self, tokens: np.ndarray, rows: np.ndarray, doc_starts: np.ndarray) -> None:
        """Write a chunk: one frame, or several when its payload would pass ``MAX_FRAME_BYTES``."""
        row_bytes = self.spec.num_layers * self.spec.num_columns * self.spec.row_dtype.itemsize
        per_frame = max(1, MAX_FRAME_BYTES // 2 // (4 + row_bytes))  # the other half: doc starts
        total = tokens.shape[0]
        if total <= per_frame:
            self._frame(tokens, rows, np.asarray(doc_starts, dtype=np.int64))
            return
        for lo in range(0, total, per_frame):
            hi = min(lo + per_frame, total)
            self._frame(tokens[lo:hi], rows[lo:hi], starts_within(doc_starts, lo, hi, total))

    def _frame(self, tokens: np.ndarray, rows: np.ndarray, doc_starts: np.ndarray) -> None:
        """Write one chunk frame."""
        arrays = [
            np.ascontiguousarray(tokens, dtype="<u4"),
            np.ascontiguousarray(rows, dtype=self.spec.row_dtype.newbyteorder("<")),
            np.ascontiguousarray(doc_starts, dtype="<i8"),
        ]
        parts = [memoryview(array.reshape(-1).view(np.uint8)) for array in arrays]
        crc = 0
        for part in parts:
            crc = zlib.crc32(part, crc)
            self._digest.update(part)
        self._write(_CHUNK.pack(CHUNK_TAG, crc, tokens.shape[0], len(doc_starts)))
        for part in parts:
            self._write(part)
        self.num_tokens += tokens.shape[0]
        self.num_documents += len(doc_starts)
        self.chunks += 1

    def commit(self) -> dict[str, int]:
        """Write the trailer and flush; returns the counts."""
        self._write(
            _TRAILER.pack(
                TRAILER_TAG, self.num_tokens, self.num_documents, self.chunks, _trailer_digest(self._digest)
            )
        )
        self.out.flush()
        return {"num_tokens": self.num_tokens, "num_documents": self.num_documents, "chunks": self.chunks}


def _descriptor(out: BinaryIO) -> int | None:
    """The file descriptor under ``out``, if it has one."""
    try:
        return out.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return None


def _position(out: BinaryIO) -> int | None:
    """Where the file under ``out`` stands (None for a pipe or a terminal)."""
    fd = _descriptor(out)
    try:
        return None if fd is None else os.lseek(fd, 0, os.SEEK_CUR)
    except OSError:
        return None


def _file_name(fd: int | None) -> str:
    """``standard output`` (with the file it is, when it is a file), or the file of ``fd``."""
    what = "standard output" if fd == 1 else "its file"
    try:
        return f"{what} ({os.readlink(f'/proc/self/fd/{fd}')})"
    except (OSError, TypeError):
        return what


def _trailer_digest(digest: Any) -> bytes:
    """The trailer's 32 bytes: the digest, zero-padded (XXH3-128's is 16 bytes)."""
    return digest.digest().ljust(_DIGEST_FIELD, b"\0")


def _read_exact(src: BinaryIO, size: int, what: str, position: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        part = src.read(size - len(data))
        if not part:
            raise NgramToolError(
                f"stream truncated: it ended inside the {what} after {position} tokens; "
                "the writer stopped early (check the producing command's error)"
            )
        data += part
    return bytes(data)


class StreamReader:
    """The chunks of a stream (made by :func:`read_stream`), each verified before it is yielded.

    Iterating yields one :class:`StreamChunk` per chunk the writer sent, in order. When the
    iteration ends, the trailer's counts and the checksum of the whole stream have been checked;
    a truncated or damaged stream raises :class:`NgramToolError` when the reader reaches the
    damage. A stream can be iterated once.

    Attributes:
        manifest: the stream's manifest: what an index's manifest.json records, without the
            counts and arrays (the trailer carries the counts).
        spec: the HashSpec of the rows.
        lut: int64 [V], the raw -> canonical table the rows were made with.
        num_tokens: the tokens yielded so far (all of them once the iteration has ended).
        num_documents: the documents started so far (likewise).
        chunks: the chunks yielded so far (likewise).
        checksum: the algorithm of the trailer's checksum (``xxh3-128``, or ``sha256``).
    """

    def __init__(self, src: BinaryIO) -> None:
        self.src = src
        head = src.read(_HEADER.size)
        if len(head) < _HEADER.size or head[:8] != MAGIC:
            raise NgramToolError(
                "not an ngramtool stream (bad magic); was it written by `ngramtool hash -o -`?"
            )
        _, major, _minor, crc, length = _HEADER.unpack(head)
        if major != STREAM_MAJOR:
            raise NgramToolError(
                f"stream format {major}.x is not supported (this ngramtool reads "
                f"{STREAM_MAJOR}.x): upgrade ngramtool"
            )
        if length > MAX_FRAME_BYTES:
            raise NgramToolError(f"stream corrupted: the header claims a manifest of {length:,} bytes")
        body = _read_exact(src, length, "header", 0)
        (table_len,) = _U64.unpack(_read_exact(src, _U64.size, "header", 0))
        if table_len > MAX_TABLE_BYTES or table_len % 8:
            raise NgramToolError(f"stream corrupted: the header claims a lookup table of {table_len:,} bytes")
        table = _read_exact(src, table_len, "header", 0)
        if zlib.crc32(table, zlib.crc32(body)) != crc:
            raise NgramToolError(
                "stream corrupted: CRC mismatch in the header (manifest or vocabulary table)"
            )
        try:
            document = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise NgramToolError(f"the stream's manifest is unreadable ({exc})") from None
        self.manifest: dict[str, Any] = check_document(
            document,
            STREAM_MANIFEST,
            source="the stream's manifest",
            format_name=FORMAT_NAME,
            major=STREAM_MAJOR,
            fix="the writer is not ngramtool's, or is broken",
        )
        self.checksum: str = self.manifest.get("checksum", SHA256)
        self.lut = np.frombuffer(table, dtype="<i8")
        self.spec = spec_from_record(self.manifest["spec"])
        if self.lut.shape[0] != self.manifest["vocab"]["raw_size"]:
            raise NgramToolError(
                f"the stream's lookup table holds {self.lut.shape[0]} ids but its manifest's vocab.raw_size "
                f"is {self.manifest['vocab']['raw_size']}"
            )
        self.num_tokens = 0
        self.num_documents = 0
        self.chunks = 0

    def __iter__(self) -> Iterator[StreamChunk]:
        spec = self.spec
        digest = new_digest(self.checksum)
        row_dtype = spec.row_dtype.newbyteorder("<")
        row_bytes = spec.num_layers * spec.num_columns * row_dtype.itemsize
        while True:
            tag = _read_exact(self.src, 4, "next frame", self.num_tokens)
            if tag == TRAILER_TAG:
                rest = _read_exact(self.src, _TRAILER.size - 4, "trailer", self.num_tokens)
                _, total, docs, count, checksum = _TRAILER.unpack(tag + rest)
                if (total, docs, count) != (self.num_tokens, self.num_documents, self.chunks):
                    raise NgramToolError(
                        f"stream trailer says {total} tokens, {docs} documents, {count} chunks but "
                        f"{self.num_tokens}, {self.num_documents}, {self.chunks} arrived"
                    )
                if checksum != _trailer_digest(digest):
                    raise NgramToolError(
                        f"stream checksum ({self.checksum}) mismatch: the data was corrupted in transit"
                    )
                if self.src.read(1):
                    raise NgramToolError(
                        "data follows the stream's end: streams cannot be concatenated; hash all "
                        "inputs in one run, or read each stream on its own"
                    )
                return
            if tag != CHUNK_TAG:
                raise NgramToolError(
                    f"stream corrupted: unknown frame {tag!r} after {self.num_tokens} tokens"
                )
            rest = _read_exact(self.src, _CHUNK.size - 4, "chunk header", self.num_tokens)
            _, crc, n_tokens, n_starts = _CHUNK.unpack(tag + rest)
            sizes = (n_tokens * 4, n_tokens * row_bytes, n_starts * 8)
            if sum(sizes) > MAX_FRAME_BYTES:
                raise NgramToolError(
                    f"stream corrupted: a chunk header after {self.num_tokens} tokens claims {n_tokens:,} "
                    f"tokens and {n_starts:,} document starts, more than any writer sends in one chunk"
                )
            payload = _read_exact(self.src, sum(sizes), "chunk", self.num_tokens)
            if zlib.crc32(payload) != crc:
                raise NgramToolError(
                    f"stream corrupted: CRC mismatch in the chunk after {self.num_tokens} tokens"
                )
            digest.update(payload)
            tokens = np.frombuffer(payload, dtype="<u4", count=n_tokens)
            rows = np.frombuffer(
                payload, dtype=row_dtype, offset=sizes[0], count=n_tokens * row_bytes // row_dtype.itemsize
            )
            starts = np.frombuffer(payload, dtype="<i8", offset=sizes[0] + sizes[1], count=n_starts)
            self.chunks += 1
            self.num_tokens += n_tokens
            self.num_documents += n_starts
            yield StreamChunk(tokens, rows.reshape(n_tokens, spec.num_layers, spec.num_columns), starts)


def read_stream(src: BinaryIO) -> StreamReader:
    """Open a stream from a binary file object (e.g. ``sys.stdin.buffer``); iterate it for chunks.

    Args:
        src: the stream, opened for reading in binary mode; its header is read at once.

    Returns:
        A reader whose iteration yields each :class:`StreamChunk`, verified.

    Examples:
        >>> import io, subprocess, sys
        >>> from ngramtool import read_stream
        >>> piped = subprocess.run([sys.executable, "-m", "ngramtool", "hash", "corpus.txt", "-o", "-"],
        ...                        capture_output=True, check=True).stdout
        >>> reader = read_stream(io.BytesIO(piped))
        >>> sum(chunk.tokens.shape[0] for chunk in reader), reader.num_documents, reader.spec.heads
        (158122, 1, 8)
    """
    return StreamReader(src)


def is_stream(head: bytes) -> bool:
    """True when ``head`` (the first bytes of a file) starts an ngramtool stream."""
    return head.startswith(MAGIC)


def file_is_stream(path: Path) -> bool:
    """True when ``path`` is a file that starts like an ngramtool stream."""
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        return is_stream(handle.read(len(MAGIC)))
