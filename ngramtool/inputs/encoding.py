"""Documents -> raw token ids, in chunks: the text pieces of the inputs encoded on threads.

Every document is the tokenizer's document prefix, its text's ids and its document suffix (for an
HF tokenizer.json exactly ``encode(document).ids``), optionally followed by the end-of-sequence
token (``add_eot``); a chat rendered through the tokenizer's chat template carries the template's
own marks instead (HF's ``apply_chat_template(..., tokenize=True)``). The ids never depend on how
many threads encode or how the text was cut.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from typing import Any

import numpy as np

from ..tokenizers import Tokenizer, encode_each, joined_ids, resolve_eot, special_record
from ..tokenizers.guard import EngineMismatch
from ..util.chunks import CHUNK_TOKENS, TokenChunk, ramp
from ..util.profiling import StageClock, timed
from . import ChatTemplate, Documents, Errors, TextPiece, iter_string_pieces, iter_text_items

BATCH_CHARS = 1 << 20


NO_STARTS = np.zeros(0, dtype=np.int64)
NO_IDS = np.zeros(0, dtype=np.uint32)


@dataclass
class _ChunkBuilder:
    """The ids of the chunk being built; :attr:`limit` is the size it is taken at, each of the
    ``limits`` in turn."""

    limits: Iterator[int]
    limit: int = 0
    parts: list[np.ndarray] = field(default_factory=list)
    starts: list[np.ndarray] = field(default_factory=list)
    size: int = 0
    nbytes: int = 0
    hard_cuts: int = 0
    skipped: int = 0

    def __post_init__(self) -> None:
        self.limit = next(self.limits)

    def add(
        self, ids: np.ndarray, starts: np.ndarray, nbytes: int = 0, hard_cuts: int = 0, skipped: int = 0
    ) -> None:
        """Append ``ids``, documents starting at ``starts`` (positions in ``ids``)."""
        if starts.shape[0]:
            self.starts.append(starts + self.size)
        self.parts.append(ids)
        self.size += ids.shape[0]
        self.nbytes += nbytes
        self.hard_cuts += hard_cuts
        self.skipped += skipped

    def take(self) -> TokenChunk:
        tokens = np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.uint32)
        chunk = TokenChunk(
            tokens.astype(np.uint32, copy=False),
            np.concatenate(self.starts).astype(np.int64, copy=False) if self.starts else NO_STARTS,
            self.nbytes,
            self.hard_cuts,
            self.skipped,
        )
        self.parts, self.starts, self.size, self.nbytes, self.hard_cuts, self.skipped = [], [], 0, 0, 0, 0
        self.limit = next(self.limits)
        return chunk


Piece = TextPiece | Documents
"""What the readers give: a piece of text, or many whole documents at once."""


def _batches(pieces: Iterable[Piece], chars: int) -> Iterator[list[Piece]]:
    """Group pieces into lists of about ``chars`` characters (many small documents, few tasks),
    the first lists of fewer (:func:`~ngramtool.util.chunks.ramp`)."""
    limits = ramp(chars)
    limit = next(limits)
    batch: list[Piece] = []
    size = 0
    for piece in pieces:
        batch.append(piece)
        size += sum(map(len, piece.texts)) if isinstance(piece, Documents) else len(piece.text)
        if size >= limit:
            yield batch
            batch, size, limit = [], 0, next(limits)
    if batch:
        yield batch


def _texts(batch: list[Piece]) -> list[str]:
    """The texts of a batch, one per piece and per document."""
    texts: list[str] = []
    for piece in batch:
        if isinstance(piece, Documents):
            texts += piece.texts
        else:
            texts.append(piece.text)
    return texts


def _piece_table(batch: list[Piece]) -> np.ndarray:
    """(doc_start, nbytes, hard_cut, skipped) of each text of a batch, as int64 rows."""
    tables, rows = [], []
    for piece in batch:
        if isinstance(piece, Documents):
            table = np.zeros((len(piece.texts), 4), dtype=np.int64)
            table[:, 0] = 1
            table[0, 1], table[0, 3] = piece.nbytes, piece.skipped
            tables.append(np.asarray(rows, dtype=np.int64).reshape(-1, 4))
            tables.append(table)
            rows = []
        else:
            rows.append((piece.doc_start, piece.nbytes, piece.hard_cut, piece.skipped))
    tables.append(np.asarray(rows, dtype=np.int64).reshape(-1, 4))
    return np.concatenate(tables)


class InputPlaces:
    """Where each input begins among the bytes its pieces account for, to say where a piece is."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._names: list[str] = []
        self._total = 0

    def read(self, name: str, pieces: Iterable[Piece]) -> Iterator[Piece]:
        """``pieces`` of the input ``name``, counted."""
        self._starts.append(self._total)
        self._names.append(name)
        for piece in pieces:
            self._total += piece.nbytes
            yield piece

    def where(self, offset: int) -> str:
        """The input and the offset in it of byte ``offset`` of all the inputs."""
        index = bisect_right(self._starts, offset) - 1
        if index < 0:
            return f"the input, near byte {offset:,}"
        return f"{self._names[index]}, near byte {offset - self._starts[index]:,}"


def _unplaced(offset: int) -> str:
    return f"the text given, near byte {offset:,}"


def _located(
    mismatch: EngineMismatch, batch: list[Piece], first_byte: int, where: Callable[[int], str]
) -> str:
    """The mismatch's message, led by where the piece it names is (``first_byte``: where the
    batch begins among the bytes of all the inputs)."""
    offset, text = first_byte, 0
    for piece in batch:
        texts = len(piece.texts) if isinstance(piece, Documents) else 1
        if text + texts > mismatch.text_index:
            place = where(offset)
            if isinstance(piece, Documents):
                place += f" (record {mismatch.text_index - text + 1:,} of the records read there)"
            return f"{place}: {mismatch}"
        offset, text = offset + piece.nbytes, text + texts
    return f"{where(first_byte)}: {mismatch}"


def encode_batches(
    pieces: Iterable[Piece],
    tokenizer: Tokenizer,
    workers: int = 1,
    clock: StageClock | None = None,
    where: Callable[[int], str] = _unplaced,
) -> Iterator[tuple[list[Piece], np.ndarray, np.ndarray]]:
    """(pieces, their ids one after another, how many ids each text has: :func:`_texts`) for
    batches of pieces, in input order, encoding in the background (``tokenizer.encode_joined``:
    one call per batch).

    Batches of pieces are encoded on ``workers`` threads when the tokenizer releases the GIL
    (tiktoken, bytes). A tokenizer that holds it (HF ``tokenizers``) gets one thread: with more
    than one worker its ``encode_batch`` runs on the library's own thread pool (all cores, or
    ``RAYON_NUM_THREADS``, which :func:`worker_count` sets to the worker count); with one worker it
    encodes piece by piece on that thread, using one core. Either way encoding overlaps whatever
    the caller does with the ids (hashing, writing), and at most ``2*threads`` batches are in
    flight, which bounds memory. ``clock`` counts the encoding's CPU time as ``tokenize`` (not
    the library pool's threads: that time shows as the run's unattributed CPU). When a fast
    engine's ids differ from the reference's, the error names the place of the piece (``where``
    of its first byte among all the inputs' bytes).
    """
    threads = 1 if tokenizer.parallel_batches else max(1, workers)
    batch_encoder = tokenizer.encode_joined
    if tokenizer.parallel_batches and workers <= 1:
        batch_encoder = partial(_encode_each_joined, tokenizer)
    encode = timed(clock, "tokenize", batch_encoder)
    with ThreadPoolExecutor(threads, thread_name_prefix="ngramtool-encode") as pool:
        pending: deque[tuple[list[Piece], int, Future[tuple[np.ndarray, np.ndarray]]]] = deque()
        first_byte = 0
        for batch in _batches(pieces, BATCH_CHARS):
            pending.append((batch, first_byte, pool.submit(encode, _texts(batch))))
            first_byte += sum(piece.nbytes for piece in batch)
            if len(pending) >= 2 * threads:
                yield _result(*pending.popleft(), where)
        while pending:
            yield _result(*pending.popleft(), where)


def _result(
    batch: list[Piece],
    first_byte: int,
    future: Future[tuple[np.ndarray, np.ndarray]],
    where: Callable[[int], str],
) -> tuple[list[Piece], np.ndarray, np.ndarray]:
    """(the batch, its ids, their counts) once encoded; an engine's mismatch names its place."""
    try:
        ids, counts = future.result()
    except EngineMismatch as mismatch:
        raise EngineMismatch(_located(mismatch, batch, first_byte, where)) from None
    return batch, ids, counts


def _encode_each_joined(tokenizer: Tokenizer, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~ngramtool.tokenizers.encode_each` on the calling thread, its ids joined."""
    return joined_ids(encode_each(tokenizer, texts))


@dataclass(frozen=True)
class _LaidOut:
    """A batch of pieces as the chunks take it: its ids with the marks around each document. A
    piece here is each text of the batch (:func:`_texts`): a whole document of a
    :class:`~ngramtool.inputs.Documents` counts as a piece that starts a document.

    Attributes:
        tokens: the ids, each document's opening before it and the previous one's closing.
        ends: for each piece, the position in ``tokens`` after its ids.
        starts: where each document starts in ``tokens``.
        start_pieces: the piece each of ``starts`` belongs to.
        totals: row k: the (nbytes, hard cuts, skipped records) of the pieces before piece k.
    """

    tokens: np.ndarray
    ends: np.ndarray
    starts: np.ndarray
    start_pieces: np.ndarray
    totals: np.ndarray


def _lay_out(
    pieces: list[Piece],
    ids: np.ndarray,
    counts: np.ndarray,
    marks: tuple[np.ndarray, np.ndarray],
    open_before: bool,
) -> _LaidOut:
    """The tokens of a batch (``ids``: each piece's ``counts`` ids one after another) with the
    document marks (opening, closing) that :func:`encode_documents` puts around each document;
    ``open_before``: whether a document is open before the batch (the first start closes it)."""
    opening, closing = marks
    info = _piece_table(pieces)
    starting = info[:, 0].astype(bool)
    closes = starting & ((np.cumsum(starting) - starting > 0) | open_before)
    after_close = closes * closing.shape[0]
    lengths = counts + after_close + starting * opening.shape[0]
    ends = np.cumsum(lengths)
    begins = ends - lengths
    starts = (begins + after_close)[starting]
    tokens = ids
    if lengths.sum() != ids.shape[0]:  # marks to place
        tokens = np.empty(int(ends[-1]), dtype=np.uint32)
        is_mark = np.zeros(tokens.shape[0], dtype=bool)
        for mark, where in ((closing, begins[closes]), (opening, starts)):
            at = (where[:, None] + np.arange(mark.shape[0])).ravel()
            tokens[at] = np.tile(mark, where.shape[0])
            is_mark[at] = True
        tokens[~is_mark] = ids
    totals = np.zeros((info.shape[0] + 1, 3), dtype=np.int64)
    np.cumsum(info[:, 1:], axis=0, out=totals[1:])
    return _LaidOut(tokens, ends, starts, np.flatnonzero(starting), totals)


def _fill(builder: _ChunkBuilder, laid: _LaidOut) -> Iterator[TokenChunk]:
    """Add a laid-out batch to ``builder``, taking a chunk after each piece that brings it to
    its limit of tokens (chunks end after a piece's ids, as one piece at a time would)."""
    count = laid.ends.shape[0]
    first = 0  # the first piece not added yet
    while first < count:
        position = int(laid.ends[first - 1]) if first else 0
        reach = int(np.searchsorted(laid.ends, position + max(builder.limit - builder.size, 1)))
        last = min(reach, count - 1)
        end = int(laid.ends[last])
        lo, hi = np.searchsorted(laid.start_pieces, (first, last + 1))
        nbytes, hard_cuts, skipped = (laid.totals[last + 1] - laid.totals[first]).tolist()
        builder.add(laid.tokens[position:end], laid.starts[lo:hi] - position, nbytes, hard_cuts, skipped)
        first = last + 1
        if reach < count:
            yield builder.take()


def iter_token_chunks(
    inputs: Sequence[str],
    tokenizer: Tokenizer,
    *,
    input_format: str | None = None,
    text_key: str | None = None,
    doc_sep: str | None = None,
    errors: Errors = "strict",
    row_groups: tuple[int, int] | None = None,
    chat_template: bool = False,
    **encoding: Any,
) -> Iterator[TokenChunk]:
    """Tokenize inputs (paths, saved dataset directories or ``-``, read by
    :func:`ngramtool.inputs.iter_text_items` with the reading options given) into chunks; each
    input starts a document. ``chat_template``: each record's chat is rendered through the
    tokenizer's chat template (:class:`~ngramtool.inputs.ChatTemplate`). ``encoding``: the options
    of :func:`encode_documents`."""
    chat = ChatTemplate.of(tokenizer) if chat_template else None
    reading = {"input_format": input_format, "text_key": text_key, "doc_sep": doc_sep, "errors": errors,
               "row_groups": row_groups, "chat": chat, **_cutting(tokenizer)}  # fmt: skip
    places = InputPlaces()
    pieces = chain.from_iterable(places.read(source, iter_text_items(source, **reading)) for source in inputs)
    return encode_documents(pieces, tokenizer, where=places.where, chat_template=chat_template, **encoding)


def iter_text_chunks(texts: Iterable[str], tokenizer: Tokenizer, **encoding: Any) -> Iterator[TokenChunk]:
    """Tokenize documents given as strings (any iterable: a generator, an HF ``datasets`` column)
    into chunks, each string one document. ``encoding``: the options of :func:`encode_documents`."""
    return encode_documents(iter_string_pieces(texts, **_cutting(tokenizer)), tokenizer, **encoding)


def _cutting(tokenizer: Tokenizer) -> dict[str, Any]:
    """How text is cut into pieces for ``tokenizer`` (its piece size, whether the cut rules keep its
    ids, its special tokens, which no cut splits)."""
    return {
        "piece_chars": tokenizer.piece_chars,
        "safe_cuts": tokenizer.cut_safe,
        "keep_whole": tuple(tokenizer.special_tokens),
    }


def encode_documents(
    pieces: Iterable[Piece],
    tokenizer: Tokenizer,
    *,
    add_eot: bool = False,
    eot_token: str | None = None,
    chunk_tokens: int = CHUNK_TOKENS,
    workers: int = 1,
    clock: StageClock | None = None,
    where: Callable[[int], str] = _unplaced,
    chat_template: bool = False,
) -> Iterator[TokenChunk]:
    """Encode text pieces into chunks of about ``chunk_tokens`` raw ids (the first chunks of fewer:
    :func:`~ngramtool.util.chunks.ramp`).

    Every document is ``tokenizer.document_prefix`` + its text's ids + ``document_suffix`` (an HF
    post-processor's tokens; none for tiktoken and bytes), so a document's ids equal the tokenizer
    library's encoding of it; with ``chat_template`` (the texts are rendered chats) just its
    text's ids. ``add_eot`` then appends the end-of-sequence token after each
    document (:func:`ngramtool.tokenizers.resolve_eot`, ``eot_token`` names it), unless the
    suffix already ends with it. ``workers`` threads encode in parallel (the ids do not depend on
    it); ``clock`` times them; ``where`` names the place of a piece (:func:`encode_batches`).
    """
    marks = document_marks(tokenizer, add_eot, eot_token, chat_template)
    builder = _ChunkBuilder(ramp(chunk_tokens))
    in_document = False
    for batch, ids, counts in encode_batches(pieces, tokenizer, workers, clock, where):
        laid = _lay_out(batch, ids, counts, marks, in_document)
        in_document = in_document or laid.starts.shape[0] > 0
        yield from _fill(builder, laid)
    if in_document:
        builder.add(marks[1], NO_STARTS)
    if builder.size or builder.starts or builder.nbytes or builder.skipped:
        yield builder.take()


def tokenization_record(
    tokenizer: Tokenizer | None,
    *,
    add_eot: bool = False,
    eot_token: str | None = None,
    record_key: str | None = None,
    doc_sep: str | None = None,
    errors: str = "strict",
    input_format: str | None = None,
    chat_template: bool = False,
) -> dict[str, Any]:
    """The manifest's ``tokenization``: every setting besides the tokenizer, vocabulary, spec and
    boundary that decides which ids (and so which rows) the input becomes (docs/formats.md).
    ``tokenizer`` None: ids read from a token file. ``record_key``: the key or column records were
    read under (None: no input has records), recorded as ``json_key``; ``input_format``: the form
    forced on every input (None: each input's name decides), recorded as ``format``;
    ``chat_template``: the template's record (:meth:`~ngramtool.inputs.ChatTemplate.record`),
    recorded only when records' chats were rendered through it."""
    if tokenizer is None:
        return {"input": "tokens", "special": None, "add_eot": False, "eot": None, "document_prefix": [],
                "document_suffix": [], "json_key": None, "doc_sep": None, "errors": None,
                "format": None}  # fmt: skip
    eot = resolve_eot(tokenizer, eot_token).record() if add_eot else None
    opening, closing = _around_documents(tokenizer, chat_template)
    return {
        "input": "text",
        "special": special_record(tokenizer.special),
        "add_eot": add_eot,
        "eot": eot,
        "document_prefix": opening.tolist(),
        "document_suffix": closing.tolist(),
        "json_key": record_key,
        "doc_sep": doc_sep,
        "errors": errors,
        "format": input_format,
        **({"chat_template": ChatTemplate.of(tokenizer).record()} if chat_template else {}),
    }


def document_marks(
    tokenizer: Tokenizer, add_eot: bool = False, eot_token: str | None = None, chat_template: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(ids before, ids after) every document: the tokenizer's document prefix, and its suffix
    followed by the end-of-sequence id with ``add_eot`` (not twice when the suffix ends with it);
    no prefix or suffix for chats rendered through a chat template (:func:`_around_documents`)."""
    opening, closing = _around_documents(tokenizer, chat_template)
    if add_eot:
        eot = resolve_eot(tokenizer, eot_token).token_id
        if not (closing.shape[0] and int(closing[-1]) == eot):
            closing = np.concatenate([closing, np.asarray([eot], dtype=np.uint32)])
    return opening, closing


def _around_documents(tokenizer: Tokenizer, chat_template: bool) -> tuple[np.ndarray, np.ndarray]:
    """The tokenizer's document prefix and suffix; none for chats rendered through its chat
    template, which writes its own marks (HF encodes the rendered text with
    ``add_special_tokens=False``)."""
    if chat_template:
        return NO_IDS, NO_IDS
    return tokenizer.document_prefix, tokenizer.document_suffix


def worker_count(requested: int | None = None) -> int:
    """Tokenizer threads: ``requested``, else the cores this process may use.

    The HF ``tokenizers`` library sizes its own thread pool (``RAYON_NUM_THREADS``, every core
    by default).
    """
    if requested is not None:
        return requested
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
