"""The pipe stream: an index sent through a pipe as framed binary data (``ngramtool hash -o -``).

Layout (all integers little-endian; see docs/formats.md):

    header   b"NGRMSTRM" | u16 major | u16 minor | u32 crc32 | u64 n | n bytes of manifest JSON
             | u64 m | m bytes: the vocabulary lookup table as int64 [m / 8]
             crc32 = zlib.crc32 of the manifest bytes followed by the table bytes
    chunk    b"CHNK" | u32 crc32 | u64 tokens | u64 doc_starts | payload
             payload = tokens (uint32 [tokens]) | rows ([tokens, L, C] of the row dtype)
                       | doc_starts (int64 [doc_starts], positions within the chunk)
             crc32 = zlib.crc32 of the payload
    trailer  b"TRLR" | u64 total tokens | u64 total documents | u64 chunks | 32-byte sha256 of
             every chunk payload in order

A reader yields a chunk only after its CRC matched, and raises when the stream ends before the
trailer or the trailer disagrees, when anything follows the trailer, or when a length field
claims more than a writer ever sends (``MAX_FRAME_BYTES`` per chunk or manifest,
``MAX_TABLE_BYTES`` of table): a truncated or corrupted stream is an error, never short data.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ..chunks import starts_within
from ..errors import NgramToolError
from ..spec import HashSpec
from .schema import STREAM_MANIFEST, check_document, spec_from_record

FORMAT_NAME = "ngramtool-stream"
MAGIC = b"NGRMSTRM"
CHUNK_TAG = b"CHNK"
TRAILER_TAG = b"TRLR"
STREAM_MAJOR, STREAM_MINOR = 1, 1
_HEADER = struct.Struct("<8sHHIQ")
_CHUNK = struct.Struct("<4sIQQ")
_TRAILER = struct.Struct("<4sQQQ32s")
_U64 = struct.Struct("<Q")
MAX_FRAME_BYTES = 1 << 30  # writers split larger chunks; a bigger claim is a corrupted length field
MAX_TABLE_BYTES = 1 << 34  # the lookup table of 2^31 raw ids


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
    """Write a stream to a binary file object; :meth:`commit` writes the trailer."""

    def __init__(self, out: BinaryIO, manifest: dict[str, Any], lut: np.ndarray, spec: HashSpec) -> None:
        self.out = out
        self.spec = spec
        self.num_tokens = 0
        self.num_documents = 0
        self.chunks = 0
        self._digest = hashlib.sha256()
        body = json.dumps(manifest, ensure_ascii=False).encode("utf-8")
        table = np.ascontiguousarray(lut, dtype="<i8").tobytes()
        crc = zlib.crc32(table, zlib.crc32(body))
        out.write(_HEADER.pack(MAGIC, STREAM_MAJOR, STREAM_MINOR, crc, len(body)) + body)
        out.write(_U64.pack(len(table)) + table)

    def __enter__(self) -> StreamWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        # Without commit() no trailer is written, so a reader reports the stream as truncated.
        self.out.flush()

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
        parts = [
            np.ascontiguousarray(tokens, dtype="<u4").tobytes(),
            np.ascontiguousarray(rows, dtype=self.spec.row_dtype.newbyteorder("<")).tobytes(),
            np.ascontiguousarray(doc_starts, dtype="<i8").tobytes(),
        ]
        crc = 0
        for part in parts:
            crc = zlib.crc32(part, crc)
            self._digest.update(part)
        self.out.write(_CHUNK.pack(CHUNK_TAG, crc, tokens.shape[0], len(doc_starts)))
        for part in parts:
            self.out.write(part)
        self.num_tokens += tokens.shape[0]
        self.num_documents += len(doc_starts)
        self.chunks += 1

    def commit(self) -> dict[str, int]:
        """Write the trailer and flush; returns the counts."""
        self.out.write(
            _TRAILER.pack(
                TRAILER_TAG, self.num_tokens, self.num_documents, self.chunks, self._digest.digest()
            )
        )
        self.out.flush()
        return {"num_tokens": self.num_tokens, "num_documents": self.num_documents, "chunks": self.chunks}


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
        self.lut = np.frombuffer(table, dtype="<i8")
        self.spec = spec_from_record(self.manifest["spec"])
        if self.lut.shape[0] != self.manifest["vocab"]["raw_size"]:
            raise NgramToolError(
                f"the stream's lookup table holds {self.lut.shape[0]} ids but its manifest's vocab.raw_size "
                f"is {self.manifest['vocab']['raw_size']}"
            )
        self.num_tokens = 0
        self.num_documents = 0

    def __iter__(self) -> Iterator[StreamChunk]:
        spec = self.spec
        digest = hashlib.sha256()
        chunks = 0
        row_dtype = spec.row_dtype.newbyteorder("<")
        row_bytes = spec.num_layers * spec.num_columns * row_dtype.itemsize
        while True:
            tag = _read_exact(self.src, 4, "next frame", self.num_tokens)
            if tag == TRAILER_TAG:
                rest = _read_exact(self.src, _TRAILER.size - 4, "trailer", self.num_tokens)
                _, total, docs, count, checksum = _TRAILER.unpack(tag + rest)
                if (total, docs, count) != (self.num_tokens, self.num_documents, chunks):
                    raise NgramToolError(
                        f"stream trailer says {total} tokens, {docs} documents, {count} chunks but "
                        f"{self.num_tokens}, {self.num_documents}, {chunks} arrived"
                    )
                if checksum != digest.digest():
                    raise NgramToolError("stream checksum mismatch: the data was corrupted in transit")
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
            chunks += 1
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
