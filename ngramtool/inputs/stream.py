"""The one way in: any source becomes a :class:`TokenStream` of document-aware raw id chunks.

:func:`open_stream` decides what a source is once (:func:`ngramtool.formats.artifacts.detect`: a
directory by its manifest, a file by its first bytes and name), runs every check of that kind once,
measures the input once, lets a fast tokenizer engine decide once for that size, and records what
the chunks are ids of. Every command and function that reads a corpus (``hash``, ``tokenize``,
``collisions``, ``cache``, ``hash_files``, ``measure_collisions``, ``measure_row_cache``, the
datatrove step) reads it through here, so a file is never one thing to one command and another to
the next:

========================  ================================================================
source                    chunks
========================  ================================================================
text, JSONL, compressed,  tokenized with the mapping's tokenizer (:mod:`.encoding`), each input
parquet, Arrow, saved     a document (records: each record)
datasets, stdin
strings (``documents``)   tokenized likewise, each string a document
a token file              its ids, checked against the mapping's raw ids; a headerless ``.bin``
                          reads as nanoGPT's uint16 ids, and the stream says so (:attr:`notes`)
an index, a merged        its tokens, canonical through its own lookup table; its spec,
dataset                   boundary and masking (a dataset: each shard an independent stream)
a pipe stream             its tokens, likewise (a file, or stdin that starts with its magic)
========================  ================================================================
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Any

from ..formats.artifacts import Kind, detect, open_index
from ..formats.index import iter_index_chunks, negative_ids_of
from ..formats.stream import is_stream, read_stream
from ..formats.tokenfiles import TokenFile, open_token_file, token_file_chunks
from ..formats.tokenfiles.reading import refuse_reset_without_documents
from ..formats.tokenfiles.registry import detect_token_format
from ..model.mapping import NgramHashMapping
from ..spec.hashspec import HashSpec, check_boundary_policy
from ..tokenizers import tokenizer_record
from ..tokenizers.engine_choice import EngineTokenizer, engine_record
from ..tokenizers.vocab import CompressedVocab, table_vocab
from ..util.chunks import CHUNK_TOKENS, TokenChunk
from ..util.errors import UsageError
from ..util.profiling import StageClock
from .columnar import parquet_share
from .encoding import iter_text_chunks, iter_token_chunks, tokenization_record, worker_count
from .forms import check_reading
from .pieces import input_size, refuse_repeated_inputs
from .sources import CorpusReader, Source, TokenFileReader

HEADERLESS_NOTE = (
    "{path} has no header: read as nanoGPT's headerless uint16 ids (--token-format raw --token-dtype "
    "uint32 reads uint32 ids)"
)


@dataclass(frozen=True)
class TokenStream:
    """A source opened: its raw id chunks (read when iterated) and what they are ids of.

    Attributes:
        kind: ``text`` (any text form, or strings), ``tokens`` (a token file), ``index``,
            ``dataset`` or ``stream``.
        sources: the inputs' names.
        vocab: raw -> canonical ids: the mapping's vocabulary, or the artifact's lookup table.
        spec: the spec of the rows: the mapping's, or the artifact's own.
        boundary: ``none`` or ``reset``: the source's (an artifact's), else the one asked for.
        negative_ids: what a negative canonical id is to the hash (an artifact's masking, or the
            mapping's).
        total_bytes: the input's size, measured once (None: stdin or strings).
        tokenizer: the tokenizer's record (name, fingerprint, and the engine that encodes the
            text), None for canonical ids; an artifact's as it recorded it.
        tokenization: the manifest's ``tokenization`` record of how the input became ids.
        mapping: the mapping that tokenizes text or reads a token file (None for an artifact).
        notes: choices the stream made that a user should know (one line each).
    """

    kind: str
    sources: tuple[str, ...]
    vocab: CompressedVocab
    spec: HashSpec
    boundary: str
    negative_ids: str
    total_bytes: int | None
    tokenizer: dict[str, Any] | None
    tokenization: dict[str, Any] | None
    mapping: NgramHashMapping | None = None
    notes: tuple[str, ...] = ()
    _open: Callable[[], Iterable[Iterator[TokenChunk]]] = field(default=lambda: (), repr=False)

    def streams(self) -> Iterable[Iterator[TokenChunk]]:
        """The independent streams of chunks (one, or a merged dataset's shards, opened in turn):
        n-gram windows never cross from one to the next."""
        return self._open()

    def chunks(self) -> Iterator[TokenChunk]:
        """Every chunk, the streams one after another."""
        return chain.from_iterable(self.streams())

    def first_tokens(self, limit: int | None) -> TokenStream:
        """The stream cut after ``limit`` tokens in all (later streams are never opened)."""
        if limit is None:
            return self
        return replace(self, _open=lambda: _first_tokens(self._open(), limit))


def open_stream(
    source: str | Path | Sequence[str | Path] | Source,
    mapping: NgramHashMapping | None = None,
    *,
    boundary: str | None = None,
    workers: int | None = None,
    chunk_tokens: int = CHUNK_TOKENS,
    documents: Iterable[str] | None = None,
    clock: StageClock | None = None,
    total_bytes: int | None = None,
) -> TokenStream:
    """Open any source as a :class:`TokenStream` (see the module's table).

    Args:
        source: paths (or ``-``) of text in any form, one token file, index, merged dataset or
            stream; a :class:`~ngramtool.CorpusReader` (paths with their reading options) or a
            :class:`~ngramtool.TokenFileReader`.
        mapping: the tokenizer, vocabulary and spec of text or a token file (None: cl100k_base
            and the default spec); an index, a dataset or a stream carries its own.
        boundary: ``none`` or ``reset`` for text and token files (default ``none``).
        workers: tokenizer threads (default: every core).
        chunk_tokens: the ids per chunk.
        documents: strings, each one document, read in place of the source's paths (the
            source's reading options still apply).
        clock: where the encoding threads account their CPU time.
        total_bytes: the input's size when the caller measured it already (a planned job);
            None: measured here.

    Raises:
        UsageError: a source that is not what it claims, or options its kind does not take.
    """
    if boundary is not None:
        check_boundary_policy(boundary)
    if documents is not None:
        reader = _reader(source)
        assert isinstance(reader, CorpusReader)
        return _text(reader, _text_mapping(mapping), boundary, workers, chunk_tokens, clock, documents, None)
    reader, kind = decide_source(source)
    if isinstance(reader, TokenFileReader):
        return _token_file(reader, mapping, boundary, chunk_tokens)
    if kind is not Kind.TEXT:
        if mapping is not None or boundary is not None:
            raise UsageError(
                f"{reader.paths[0]} is {_named(kind)}: it carries its own spec, vocabulary and boundary; "
                "drop `mapping` and `boundary`"
            )
        return _stream(reader.paths[0]) if kind is Kind.STREAM else _index(reader.paths[0], chunk_tokens)
    return _text(reader, _text_mapping(mapping), boundary, workers, chunk_tokens, clock, None, total_bytes)


def decide_source(source: str | Path | Sequence[str | Path] | Source) -> tuple[Source, Kind]:
    """What a source is, decided once: a token file (as a :class:`~ngramtool.TokenFileReader`),
    an index, a merged dataset, a stream (each read alone), or text; reading options given to
    something that is not text are refused."""
    reader = _reader(source)
    if isinstance(reader, TokenFileReader):
        return reader, Kind.TOKEN_FILE
    names = list(reader.paths)
    if not names:
        raise UsageError("give text `inputs` (or -), an index directory, a stream or a token file")
    refuse_repeated_inputs(names)
    kinds = [_kind(name, reader) for name in names]
    alone = [(name, kind) for name, kind in zip(names, kinds, strict=True) if kind is not Kind.TEXT]
    if alone and len(names) > 1:
        raise UsageError(
            f"{alone[0][0]} is {_named(alone[0][1])}: it is read alone, not with other inputs; give just "
            "that one"
        )
    if kinds[0] is Kind.TEXT:
        return reader, Kind.TEXT
    _refuse_text_options(reader, f"to text, not to {_named(kinds[0])}")
    if kinds[0] is Kind.TOKEN_FILE:
        return TokenFileReader(names[0]), Kind.TOKEN_FILE
    return reader, kinds[0]


# ---------------------------------------------------------------------------------- kinds
def _reader(source: str | Path | Sequence[str | Path] | Source) -> Source:
    if isinstance(source, CorpusReader | TokenFileReader):
        return source
    names = [source] if isinstance(source, str | Path) else list(source)
    return CorpusReader(tuple(str(name) for name in names))


def _kind(name: str, reader: CorpusReader) -> Kind:
    """What one input is: stdin is a stream when it starts with a stream's magic; a path is what
    :func:`~ngramtool.formats.artifacts.detect` finds, a saved ``datasets`` directory being text
    (records), as is any file when ``input_format`` names a text form."""
    if name == "-":
        head = sys.stdin.buffer.peek(8)[:8] if hasattr(sys.stdin.buffer, "peek") else b""
        return Kind.STREAM if is_stream(head) else Kind.TEXT
    if reader.input_format is not None:
        return Kind.TEXT
    kind = detect(name)
    if kind is Kind.DIRECTORY:
        return Kind.TEXT  # a datasets.save_to_disk directory, or the reader's own error
    if kind is Kind.TYPE_COUNTS:
        raise UsageError(
            f"{name} holds saved n-gram type counts: collisions merges them (give only the parts)"
        )
    return Kind.TEXT if kind is Kind.MISSING else kind


def _named(kind: Kind) -> str:
    return {Kind.TOKEN_FILE: "a token file", Kind.INDEX: "an index", Kind.DATASET: "a merged dataset",
            Kind.STREAM: "a stream"}.get(kind, "text")  # fmt: skip


def _refuse_text_options(reader: CorpusReader, applies: str) -> None:
    """Reading options set on a reader whose one input is no text would do nothing."""
    given = [
        f"`{name}`"
        for name, value in reader.reading.items()
        if value not in (None, False, "strict") and name != "row_groups"
    ]
    if given:
        raise UsageError(f"{', '.join(given)} applies only {applies}: drop it")


# ---------------------------------------------------------------------------------- text
def _text_mapping(mapping: NgramHashMapping | None) -> NgramHashMapping:
    mapping = mapping if mapping is not None else NgramHashMapping.build()
    if mapping.tokenizer is None:
        raise UsageError("text needs a `tokenizer`: this mapping holds canonical ids only")
    return mapping


def _text(
    reader: CorpusReader,
    mapping: NgramHashMapping,
    boundary: str | None,
    workers: int | None,
    chunk_tokens: int,
    clock: StageClock | None,
    documents: Iterable[str] | None,
    total_bytes: int | None,
) -> TokenStream:
    tokenizer = mapping.tokenizer
    assert tokenizer is not None
    names = list(reader.paths)
    encoding = {"workers": worker_count(workers), "chunk_tokens": chunk_tokens, "clock": clock}
    if documents is None:
        check_reading(
            names,
            input_format=reader.input_format,
            text_key=reader.text_key,
            doc_sep=reader.doc_sep,
            errors=reader.errors,
        )
        size = total_bytes if total_bytes is not None else text_bytes(reader)
        reading = reader.reading

        def streams() -> Iterable[Iterator[TokenChunk]]:
            return [iter_token_chunks(names, tokenizer, **reading, **encoding)]
    else:
        size = sum(map(len, documents)) if isinstance(documents, list | tuple) else None
        texts = documents
        ending = {"add_eot": reader.add_eot, "eot_token": reader.eot_token}

        def streams() -> Iterable[Iterator[TokenChunk]]:
            return [iter_text_chunks(texts, tokenizer, **ending, **encoding)]

    notes: tuple[str, ...] = ()
    if isinstance(tokenizer, EngineTokenizer):  # the engine is chosen once, for this input's size
        notes = () if tokenizer.decide(size) is not None else tokenizer.unverified
    record = tokenizer_record(tokenizer)
    record["engine"] = engine_record(tokenizer)  # provenance: not compared by resume or merge
    tokenization = tokenization_record(
        tokenizer,
        add_eot=reader.add_eot,
        eot_token=reader.eot_token,
        record_key=reader.record_key() if documents is None else None,
        doc_sep=reader.doc_sep,
        errors=reader.errors,
        input_format=reader.input_format,
        chat_template=reader.chat_template,
    )
    return TokenStream(
        "text",
        tuple(names),
        mapping.vocab,
        mapping.spec,
        boundary or "none",
        mapping.negative_ids,
        size,
        record,
        tokenization,
        mapping,
        notes,
        _open=streams,
    )


def text_bytes(reader: CorpusReader) -> int | None:
    """The bytes text inputs will read (for progress, estimates and the engine's choice); None
    when reading stdin."""
    if reader.row_groups is not None:
        return parquet_share(reader.paths[0], reader.row_groups)
    return input_size(reader.paths)


# ---------------------------------------------------------------------------- token files
def _token_file(
    reader: TokenFileReader, mapping: NgramHashMapping | None, boundary: str | None, chunk_tokens: int
) -> TokenStream:
    mapping = mapping if mapping is not None else NgramHashMapping.build()
    file = opened_token_file(reader)
    if boundary == "reset":
        refuse_reset_without_documents(file, reader.path)
    notes = ()
    if reader.format is None and reader.dtype is None and _headerless(reader.path):
        notes = (HEADERLESS_NOTE.format(path=reader.path),)

    def streams() -> Iterable[Iterator[TokenChunk]]:
        return [token_file_chunks(file, chunk_tokens, vocab_size=mapping.raw_size, vocab_name=mapping.name)]

    tokenizer = tokenizer_record(mapping.tokenizer) if mapping.tokenizer is not None else None
    return TokenStream(
        "tokens",
        (reader.path,),
        mapping.vocab,
        mapping.spec,
        boundary or "none",
        mapping.negative_ids,
        file.nbytes,
        tokenizer,
        tokenization_record(None),
        mapping,
        notes,
        _open=streams,
    )


def opened_token_file(source: TokenFileReader) -> TokenFile:
    """The source's token file, opened once per process while it is unchanged (with ``eos_id``,
    opening scans the whole file for document ends)."""
    try:
        stat = os.stat(source.path)
    except OSError:  # a Megatron prefix, or no such file: open_token_file says what is wrong
        return open_token_file(source.path, source.format, **source.options)
    return _opened_token_file(source, (stat.st_ino, stat.st_size, stat.st_mtime_ns))


@lru_cache(maxsize=8)
def _opened_token_file(source: TokenFileReader, _version: tuple[int, int, int]) -> TokenFile:
    return open_token_file(source.path, source.format, **source.options)


def _headerless(path: str) -> bool:
    """A ``.bin`` that is neither Megatron's (with its ``.idx``) nor llm.c's (a header)."""
    return Path(path).suffix == ".bin" and detect_token_format(path) == "nanogpt"


# ------------------------------------------------------------------------------ artifacts
def _index(path: str, chunk_tokens: int) -> TokenStream:
    """An index or a merged dataset: its tokens, lookup table, spec, boundary and masking."""
    index = open_index(path)
    manifest = index.manifest

    def streams() -> Iterable[Iterator[TokenChunk]]:
        # each shard is its own stream, opened in turn
        return (iter_index_chunks(shard, chunk_tokens) for shard in index.shards)

    return TokenStream(
        index.kind,
        (path,),
        table_vocab(index.lut),
        index.spec,
        manifest["boundary"],
        negative_ids_of(manifest),
        int(index.tokens.nbytes),
        manifest.get("tokenizer"),
        manifest.get("tokenization"),
        _open=streams,
    )


def _stream(path: str) -> TokenStream:
    """A pipe stream (a file, or stdin): its tokens, read once, each chunk verified."""
    handle = sys.stdin.buffer if path == "-" else Path(path).open("rb")  # noqa: SIM115
    reader = read_stream(handle)
    manifest = reader.manifest

    def chunks() -> Iterator[TokenChunk]:
        try:
            for chunk in reader:
                yield TokenChunk(chunk.tokens, chunk.doc_starts.astype("int64"), chunk.tokens.nbytes)
        finally:
            if handle is not sys.stdin.buffer:
                handle.close()

    size = None if path == "-" else Path(path).stat().st_size
    return TokenStream(
        "stream",
        (path,),
        table_vocab(reader.lut),
        reader.spec,
        manifest["boundary"],
        negative_ids_of(manifest),
        size,
        manifest.get("tokenizer"),
        manifest.get("tokenization"),
        _open=lambda: [chunks()],
    )


def _first_tokens(streams: Iterable[Iterator[TokenChunk]], limit: int) -> Iterator[Iterator[TokenChunk]]:
    """The streams cut after ``limit`` tokens in all (later streams are left out)."""
    left = limit

    def cut(chunks: Iterator[TokenChunk]) -> Iterator[TokenChunk]:
        nonlocal left
        for chunk in chunks:
            if left <= 0:
                return
            size = chunk.tokens.shape[0]
            take = min(left, size)
            starts = chunk.doc_starts if take == size else chunk.doc_starts[chunk.doc_starts < take]
            yield replace(chunk, tokens=chunk.tokens[:take], doc_starts=starts)
            left -= take

    for chunks in streams:
        if left <= 0:
            return
        yield cut(chunks)
