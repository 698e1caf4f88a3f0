"""Streaming stages: inputs -> raw token chunks -> canonical ids -> rows, in bounded memory.

Each stage is a generator over chunks, so the CLI, the Python API and later parallel or
distributed runners compose the same functions. A chunk holds about ``CHUNK_TOKENS`` tokens.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from .backends import BACKENDS, choose_backend
from .errors import UsageError
from .hashing import NgramHasher
from .stages import StageClock, timed
from .textio import Errors, TextPiece, iter_text_pieces
from .tokenizers import Tokenizer, encode_each
from .vocab import CompressedVocab

if TYPE_CHECKING:
    from .formats.index import Index

CHUNK_TOKENS = 1 << 20
BATCH_CHARS = 1 << 20
HASH_BYTES = 16 << 20  # rows hashed at a time (see hash_chunks)


@dataclass
class TokenChunk:
    """A run of raw token ids from the stream.

    Attributes:
        tokens: uint32 raw ids.
        doc_starts: int64 positions within ``tokens`` where a document starts.
        nbytes: input bytes this chunk accounts for (for progress).
        hard_cuts: text cuts inside it that were not provably safe (see ngramtool.textio).
    """

    tokens: np.ndarray
    doc_starts: np.ndarray
    nbytes: int = 0
    hard_cuts: int = 0


@dataclass
class _ChunkBuilder:
    parts: list[np.ndarray] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    size: int = 0
    nbytes: int = 0
    hard_cuts: int = 0

    def add(self, ids: np.ndarray, doc_start: bool, nbytes: int, hard_cut: bool) -> None:
        if doc_start:
            self.starts.append(self.size)
        self.parts.append(ids)
        self.size += ids.shape[0]
        self.nbytes += nbytes
        self.hard_cuts += int(hard_cut)

    def take(self) -> TokenChunk:
        tokens = np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.uint32)
        chunk = TokenChunk(
            tokens.astype(np.uint32, copy=False),
            np.asarray(self.starts, dtype=np.int64),
            self.nbytes,
            self.hard_cuts,
        )
        self.parts, self.starts, self.size, self.nbytes, self.hard_cuts = [], [], 0, 0, 0
        return chunk


def _batches(pieces: Iterable[TextPiece], chars: int) -> Iterator[list[TextPiece]]:
    """Group pieces into lists of about ``chars`` characters (many small documents, few tasks)."""
    batch: list[TextPiece] = []
    size = 0
    for piece in pieces:
        batch.append(piece)
        size += len(piece.text)
        if size >= chars:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def encode_pieces(
    pieces: Iterable[TextPiece], tokenizer: Tokenizer, workers: int = 1, clock: StageClock | None = None
) -> Iterator[tuple[TextPiece, np.ndarray]]:
    """(piece, ids) in input order, encoding in the background.

    Batches of pieces are encoded on ``workers`` threads when the tokenizer releases the GIL
    (tiktoken, bytes). A tokenizer that holds it (HF ``tokenizers``) gets one thread: with more
    than one worker its ``encode_batch`` runs on the library's own thread pool (all cores, or
    ``RAYON_NUM_THREADS``, which the command line sets to ``--workers``); with one worker it
    encodes piece by piece on that thread, using one core. Either way encoding overlaps whatever
    the caller does with the ids (hashing, writing), and at most ``2*threads`` batches are in
    flight, which bounds memory. ``clock`` counts the encoding's CPU time as ``tokenize`` (not
    the library pool's threads: that time shows as the run's unattributed CPU).
    """
    threads = 1 if tokenizer.parallel_batches else max(1, workers)
    batch_encoder = tokenizer.encode_batch
    if tokenizer.parallel_batches and workers <= 1:
        batch_encoder = partial(encode_each, tokenizer)
    encode = timed(clock, "tokenize", batch_encoder)
    with ThreadPoolExecutor(threads, thread_name_prefix="ngramtool-encode") as pool:
        pending: deque[tuple[list[TextPiece], Future[list[np.ndarray]]]] = deque()
        for batch in _batches(pieces, BATCH_CHARS):
            pending.append((batch, pool.submit(encode, [piece.text for piece in batch])))
            if len(pending) >= 2 * threads:
                done, future = pending.popleft()
                yield from zip(done, future.result(), strict=True)
        while pending:
            done, future = pending.popleft()
            yield from zip(done, future.result(), strict=True)


def iter_token_chunks(
    inputs: Sequence[str],
    tokenizer: Tokenizer,
    *,
    json_key: str | None = None,
    doc_sep: str | None = None,
    errors: Errors = "strict",
    add_eot: bool = False,
    chunk_tokens: int = CHUNK_TOKENS,
    workers: int = 1,
    clock: StageClock | None = None,
) -> Iterator[TokenChunk]:
    """Tokenize inputs (paths or ``-``) into chunks; each input file starts a document.

    ``add_eot`` appends the tokenizer's end-of-text id (its pad/eot token) after each document;
    ``workers`` threads encode in parallel (the ids do not depend on it); ``clock`` times them.
    """
    eot = None
    if add_eot:
        if tokenizer.pad_token_id is None:
            raise UsageError(f"tokenizer {tokenizer.name} has no end-of-text token for --add-eot")
        eot = np.asarray([tokenizer.pad_token_id], dtype=np.uint32)
    builder = _ChunkBuilder()
    pieces = (
        piece
        for source in inputs
        for piece in iter_text_pieces(
            source,
            json_key=json_key,
            doc_sep=doc_sep,
            errors=errors,
            piece_chars=tokenizer.piece_chars,
            safe_cuts=tokenizer.cut_safe,
        )
    )
    for piece, ids in encode_pieces(pieces, tokenizer, workers, clock):
        if piece.doc_start and eot is not None and builder.size + len(builder.starts) > 0:
            builder.add(eot, False, 0, False)
        builder.add(ids, piece.doc_start, piece.nbytes, piece.hard_cut)
        if builder.size >= chunk_tokens:
            yield builder.take()
    if eot is not None and (builder.size or builder.starts):
        builder.add(eot, False, 0, False)
    if builder.size or builder.starts or builder.nbytes:
        yield builder.take()


def starts_within(starts: np.ndarray, lo: int, hi: int, total: int) -> np.ndarray:
    """The document starts in [lo, hi), relative to ``lo``; starts at ``total`` (empty trailing
    documents) belong to the range that ends there."""
    starts = np.asarray(starts, dtype=np.int64)
    return starts[(starts >= lo) & ((starts < hi) | (hi == total))] - lo


def iter_index_chunks(index: Index, chunk_tokens: int = CHUNK_TOKENS) -> Iterator[TokenChunk]:
    """An index's raw ids in chunks, with the document starts that fall in each (memory maps read
    a chunk at a time)."""
    starts, total = np.asarray(index.doc_offsets[:-1]), len(index)
    for lo in range(0, total, chunk_tokens):
        hi = min(lo + chunk_tokens, total)
        tokens = np.asarray(index.tokens[lo:hi])
        yield TokenChunk(tokens, starts_within(starts, lo, hi, total), tokens.nbytes)


def split_chunk(chunk: TokenChunk, max_tokens: int) -> Iterator[TokenChunk]:
    """``chunk`` in pieces of at most ``max_tokens`` tokens, document starts kept in place.

    The first piece carries the chunk's byte count and cut count; starts at the very end of the
    chunk (empty trailing documents) go with the last piece.
    """
    total = chunk.tokens.shape[0]
    if total <= max_tokens:
        yield chunk
        return
    starts = chunk.doc_starts
    for lo in range(0, total, max_tokens):
        hi = min(lo + max_tokens, total)
        first = lo == 0
        yield TokenChunk(
            chunk.tokens[lo:hi],
            starts_within(starts, lo, hi, total),
            chunk.nbytes if first else 0,
            chunk.hard_cuts if first else 0,
        )


def hash_chunks(
    chunks: Iterable[TokenChunk],
    vocab: CompressedVocab,
    hasher: NgramHasher,
    threads: int = 1,
    clock: StageClock | None = None,
) -> Iterator[tuple[TokenChunk, np.ndarray, np.ndarray]]:
    """(chunk, canonical ids, rows) in stream order, hashing on ``threads`` threads.

    Chunks are hashed in pieces of at most ``HASH_BYTES`` of rows: outputs of that size are
    recycled by the allocator instead of being faulted in fresh for every chunk, which measured
    2.3x faster here (fresh pages are expensive, in virtual machines above all). The numpy and
    numba backends hash consecutive pieces on several threads at once (each piece carries its own
    context, see :meth:`NgramHasher.deferred`); other backends parallelize inside their kernels
    and get one thread. At most ``threads + 1`` pieces are in flight, which bounds memory.
    ``clock`` counts the hashing's CPU time as ``hash``.
    """
    spec = hasher.spec
    row_bytes = spec.num_layers * spec.num_columns * spec.row_dtype.itemsize
    max_tokens = max(1, HASH_BYTES // row_bytes)
    if not BACKENDS[choose_backend(hasher.backend, hasher.device).name].threadsafe:
        threads = 1
    position = 0
    pending: deque[tuple[TokenChunk, np.ndarray, Future[np.ndarray]]] = deque()
    with ThreadPoolExecutor(max(1, threads), thread_name_prefix="ngramtool-hash") as pool:
        for whole in chunks:
            for chunk in split_chunk(whole, max_tokens):
                canonical = vocab.canonicalize(chunk.tokens, first_position=position)
                compute = timed(clock, "hash", hasher.deferred(canonical, chunk.doc_starts))
                pending.append((chunk, canonical, pool.submit(compute)))
                position += chunk.tokens.shape[0]
                if len(pending) > threads:
                    done, ids, rows = pending.popleft()
                    yield done, ids, rows.result()
        while pending:
            done, ids, rows = pending.popleft()
            yield done, ids, rows.result()
