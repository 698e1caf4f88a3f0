"""Raw token chunks -> canonical ids -> rows, in stream order, hashing on several threads.

The stage between reading (:mod:`ngramtool.inputs.encoding`, token files, indexes) and writing
(:mod:`ngramtool.run.jobs`): each chunk is mapped through the compressed vocabulary and hashed by a
:class:`~ngramtool.hashing.hasher.NgramHasher`, in bounded memory. The hasher's backend is a
planned job's, resolved once (a name of ``BACKENDS``, never ``auto``).
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

import numpy as np

from ..hashing.backends import BACKENDS
from ..hashing.hasher import NgramHasher
from ..tokenizers.vocab import CompressedVocab
from ..util.chunks import TokenChunk, canonical_chunks, split_chunk
from ..util.profiling import StageClock, timed

HASH_BYTES = 16 << 20  # rows hashed at a time (see hash_chunks)
WARM_TOKENS = 4096  # tokens hashed to load a kernel: the numba backend's specialized one from here on


class RowsDestination(Protocol):
    """Where rows go, offering the memory to compute them in (an
    :class:`~ngramtool.formats.index.IndexWriter`)."""

    @property
    def rows_block(self) -> int:
        """Rows written at a time: a :meth:`rows_out` range never crosses a multiple of it."""
        ...

    def rows_out(self, position: int, count: int) -> np.ndarray:
        """The array the rows of stream positions ``[position, position + count)`` go into."""
        ...


def _pieces(chunks: Iterable[TokenChunk], step: int) -> Iterator[TokenChunk]:
    """The chunks cut at every multiple of ``step`` stream positions (pieces of at most ``step``)."""
    position = 0
    for whole in chunks:
        for piece in split_chunk(whole, step, first=step - position % step):
            position += piece.tokens.shape[0]
            yield piece


@contextlib.contextmanager
def warm_kernel(hasher: NgramHasher, id_dtype: np.dtype) -> Iterator[None]:
    """Load the compiled kernel of ``hasher``'s spec for canonical ids of ``id_dtype`` on a
    thread while the block runs (joined when it ends; nothing to load for backends other than
    numba).

    Importing numba and loading the kernels from their disk cache takes about a second, which
    this overlaps with what a run does before it hashes (a fast tokenizer engine builds its
    tables without holding the GIL); where numba imported before with the same installed files,
    the plan did not import it (:func:`ngramtool.hashing.backends.import_failure`) and this
    thread does. A hasher of its own hashes a few pad ids: ``hasher``'s stream is not touched.
    Where the kernel's machine code is kept from an earlier run, no numba is imported at all;
    where it is not, this thread keeps it for the next run
    (:mod:`ngramtool.hashing.backends.stored_rows`, once per spec and machine: 0.6 s). An error
    here is left to the run's own hashing, which raises it.
    """
    if hasher.backend != "numba":
        yield
        return
    twin = NgramHasher(hasher.spec, offsets=hasher.offsets, negative_ids=hasher.negative_ids,
                       backend=hasher.backend, device=hasher.device)  # fmt: skip
    pads = np.full(WARM_TOKENS, hasher.spec.pad_id, dtype=id_dtype)

    def warm() -> None:
        with contextlib.suppress(Exception):  # the run's own hashing raises it, worded
            twin(pads)
            BACKENDS[hasher.backend].keep_code(
                hasher.spec, offsets=hasher.offsets, negative_ids=hasher.negative_ids, id_dtype=pads.dtype
            )

    thread = threading.Thread(target=warm, name="ngramtool-warm", daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()


def hash_chunks(
    chunks: Iterable[TokenChunk],
    vocab: CompressedVocab,
    hasher: NgramHasher,
    threads: int = 1,
    clock: StageClock | None = None,
    destination: RowsDestination | None = None,
) -> Iterator[tuple[TokenChunk, np.ndarray, np.ndarray]]:
    """(chunk, canonical ids, rows) in stream order, hashing on ``threads`` threads.

    Chunks are hashed in pieces of at most ``HASH_BYTES`` of rows: outputs of that size are
    recycled by the allocator instead of being faulted in fresh for every chunk, which measured
    2.3x faster here (fresh pages are expensive, in virtual machines above all). The numpy and
    numba backends hash consecutive pieces on several threads at once (each piece carries its own
    context, see :meth:`NgramHasher.deferred`); other backends parallelize inside their kernels
    and get one thread. At most ``threads + 1`` pieces are in flight, which bounds memory.
    ``clock`` counts the hashing's CPU time as ``hash``, the vocabulary mapping's as
    ``canonicalize``. With a ``destination`` the pieces are
    cut at its blocks and hashed straight into the memory it will write from (no copy).
    """
    spec = hasher.spec
    row_bytes = spec.num_layers * spec.num_columns * spec.row_dtype.itemsize
    max_tokens = max(1, HASH_BYTES // row_bytes)
    if not BACKENDS[hasher.backend].threadsafe:
        threads = 1
    if destination is not None:
        pieces = _pieces(chunks, destination.rows_block)
    else:
        pieces = (chunk for whole in chunks for chunk in split_chunk(whole, max_tokens))
    pending: deque[tuple[TokenChunk, np.ndarray, Future[np.ndarray]]] = deque()
    with ThreadPoolExecutor(max(1, threads), thread_name_prefix="ngramtool-hash") as pool:
        for position, chunk, canonical in canonical_chunks(pieces, vocab, clock):
            out = None if destination is None else destination.rows_out(position, chunk.tokens.shape[0])
            compute = timed(clock, "hash", hasher.deferred(canonical, chunk.doc_starts, out=out))
            pending.append((chunk, canonical, pool.submit(compute)))
            if len(pending) > threads:
                done, ids, rows = pending.popleft()
                yield done, ids, rows.result()
        while pending:
            done, ids, rows = pending.popleft()
            yield done, ids, rows.result()
