"""The chunk of tokens every stage passes on, and the one walk that canonicalizes a stream of them.

A stream of tokens (a corpus, an index, a token file, a pipe stream) travels in chunks of about
``CHUNK_TOKENS`` raw ids with the positions in the chunk where a document starts. Positions in
errors count from the start of the stream, so :func:`canonical_chunks` carries the first position
of each chunk along (:func:`checked_chunks` checks the ids without mapping them).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np

from .profiling import StageClock, timed

CHUNK_TOKENS = 1 << 20
RAMP_STEPS = 4  # a stream's first pieces of text, batches and chunks are up to 2**4 times smaller


def ramp(full: int, steps: int = RAMP_STEPS) -> Iterator[int]:
    """Sizes for the parts of a stream: ``full >> steps`` first, each next twice the last, then
    ``full`` on.

    A stream's first rows reach the disk once the first text has been read, tokenized, cut into
    a chunk and hashed; at full size that took 0.12-0.18 s of a 60 MB run, during which the disk
    waited (docs/performance.md). Starting small, it waits 0.07-0.10 s, and the stream runs at
    full size after ``steps`` parts. The sizes never change the ids or the rows.
    """
    size = max(1, full >> steps)
    while size < full:
        yield size
        size *= 2
    yield from itertools.repeat(full)


@dataclass
class TokenChunk:
    """A run of raw token ids from the stream.

    Attributes:
        tokens: uint32 raw ids.
        doc_starts: int64 positions within ``tokens`` where a document starts.
        nbytes: input bytes this chunk accounts for (for progress).
        hard_cuts: text cuts inside it that were not provably safe (see :mod:`ngramtool.tokenizers.textcuts`).
        skipped_records: bad JSONL records skipped (``errors="skip"``) while reading it.
    """

    tokens: np.ndarray
    doc_starts: np.ndarray
    nbytes: int = 0
    hard_cuts: int = 0
    skipped_records: int = 0


def starts_within(starts: np.ndarray, lo: int, hi: int, total: int) -> np.ndarray:
    """The document starts in [lo, hi), relative to ``lo``; starts at ``total`` (empty trailing
    documents) belong to the range that ends there."""
    starts = np.asarray(starts, dtype=np.int64)
    return starts[(starts >= lo) & ((starts < hi) | (hi == total))] - lo


def split_chunk(chunk: TokenChunk, max_tokens: int, first: int | None = None) -> Iterator[TokenChunk]:
    """``chunk`` in pieces of at most ``max_tokens`` tokens (the first of at most ``first``, by
    default ``max_tokens``), document starts kept in place.

    The chunk's bytes are shared among the pieces by tokens (they add up to the chunk's: progress
    moves with the tokens); the first piece carries its cut and skipped-record counts; starts at
    the very end of the chunk (empty trailing documents) go with the last piece.
    """
    total = chunk.tokens.shape[0]
    first = max_tokens if first is None else first
    if total <= first:
        yield chunk
        return
    starts = chunk.doc_starts
    cuts = [0, *range(first, total, max_tokens), total]
    for lo, hi in itertools.pairwise(cuts):
        opening = lo == 0
        yield TokenChunk(
            chunk.tokens[lo:hi],
            starts_within(starts, lo, hi, total),
            chunk.nbytes * hi // total - chunk.nbytes * lo // total,
            chunk.hard_cuts if opening else 0,
            chunk.skipped_records if opening else 0,
        )


class Canonicalizer(Protocol):
    """Maps raw ids to canonical ids (a :class:`~ngramtool.tokenizers.vocab.CompressedVocab`)."""

    def canonicalize(self, raw_ids: np.ndarray, *, first_position: int = 0) -> np.ndarray:
        """Canonical ids of ``raw_ids``; errors name positions counted from ``first_position``."""
        ...

    def check(self, raw_ids: np.ndarray, *, first_position: int = 0) -> None:
        """Raise as :meth:`canonicalize` would, without mapping the ids."""
        ...


class HasTokens(Protocol):
    """A chunk of a stream: :class:`TokenChunk`, or a pipe stream's chunk."""

    @property
    def tokens(self) -> np.ndarray:
        """The chunk's raw ids."""
        ...


Chunk = TypeVar("Chunk", bound=HasTokens)


def canonical_chunks(
    chunks: Iterable[Chunk], vocab: Canonicalizer, clock: StageClock | None = None
) -> Iterator[tuple[int, Chunk, np.ndarray]]:
    """(first position, chunk, canonical ids) for each chunk of one stream, in order.

    An id that the vocabulary cannot map raises an error naming its position in the stream.
    ``clock`` counts the mapping's CPU time as the ``canonicalize`` stage.
    """
    canonicalize = timed(clock, "canonicalize", vocab.canonicalize)
    position = 0
    for chunk in chunks:
        yield position, chunk, canonicalize(chunk.tokens, first_position=position)
        position += chunk.tokens.shape[0]


def checked_chunks(chunks: Iterable[Chunk], vocab: Canonicalizer) -> Iterator[Chunk]:
    """The chunks of one stream, in order, each once every id in it has a canonical id (the
    error names the position of the first that has none): :func:`canonical_chunks` for a reader
    that keeps the raw ids (a tokens-only index, a check)."""
    position = 0
    for chunk in chunks:
        vocab.check(chunk.tokens, first_position=position)
        yield chunk
        position += chunk.tokens.shape[0]
