"""One hash job: inputs -> one index directory (or a stream), as a picklable value and a function.

A run (:mod:`ngramtool.executors`) builds one :class:`HashJob` per output (one for a plain run,
one per input file for a sharded run) and runs :func:`run_hash_job` in this process or as Ray
tasks. The job carries plain values and its HashSpec, so it travels to other processes and
machines (as JSON at the Ray boundary, :meth:`HashJob.to_payload`); each process rebuilds the
tokenizer and vocabulary (from its disk cache) itself.

The data flow of one job, top to bottom: read text pieces (:mod:`ngramtool.inputs`) -> raw ids in
chunks (:mod:`ngramtool.encode`; or the chunks of a token file) -> canonical ids and rows
(:func:`ngramtool.pipeline.hash_chunks`) -> the writer (an index directory or a pipe stream, and
optionally a token file), on a write-behind thread.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .backends import choose_backend
from .chunks import TokenChunk, canonical_chunks
from .encode import iter_text_chunks, iter_token_chunks, tokenization_record
from .errors import UsageError
from .formats.checksum import DEFAULT_CHECKSUM
from .formats.index import IndexMeta, IndexWriter
from .formats.stream import FORMAT_NAME as STREAM_FORMAT
from .formats.stream import STREAM_MAJOR, STREAM_MINOR, StreamWriter
from .formats.tokenfiles import (
    TOKEN_FORMATS,
    TokenFile,
    TokenFileWriter,
    iter_token_file_chunks,
    open_token_file,
)
from .hashing import NgramHasher
from .inputs import input_form, input_size, parquet_share, record_key
from .pipeline import hash_chunks
from .profiling import StageClock, timed
from .space import OutputSize, index_size, token_file_size
from .spec import HashSpec
from .tokenizers import DEFAULT_TOKENIZER, Tokenizer, load_tokenizer, tokenizer_record
from .vocab import CompressedVocab, build_vocab, identity_vocab, vocab_record
from .writeback import WriteBehind

log = logging.getLogger(__name__)
SUFFIX_FORMATS = {".npy": "npy", ".ds": "datatrove", ".bin": "nanogpt"}
UINT16_IDS = 1 << 16
# Tokenizer threads one hash thread keeps up with: a numba thread hashes 20-40M tokens/s, a numpy
# thread 6-14M, a tiktoken thread encodes 1-2.5M (docs/performance.md).
WORKERS_PER_HASH_THREAD = {"numba": 8, "numpy": 4}
MAX_HASH_THREADS = 4
Progress = Callable[[int, int], None]  # (bytes consumed, tokens written) since the last call


@dataclass(frozen=True)
class HashJob:
    """Everything one output needs: plain values and the HashSpec.

    ``dest`` is an index directory, or ``-`` for a stream on stdout. ``tokenizer`` None means the
    ids (``tokens_file``) are canonical already, below ``vocab_size``.
    """

    inputs: tuple[str, ...]
    dest: str
    spec: HashSpec
    tokenizer: str | None = DEFAULT_TOKENIZER
    no_compress: bool = False
    vocab_size: int | None = None
    boundary: str = "none"
    input_format: str | None = None  # the form of every input (None: each input's name decides)
    text_key: str | None = None  # the records' text key or column (None: "text")
    doc_sep: str | None = None
    errors: str = "strict"
    add_eot: bool = False
    special: str | None = None  # --special as given (None: the tokenizer library's own way)
    eot_token: str | None = None  # --eot-token: the end-of-sequence token --add-eot appends
    tokens_file: str | None = None
    token_format: str | None = None
    token_dtype: str | None = None  # a raw token file's dtype
    eos_id: int | None = None  # cut a token file without documents after each of these ids
    row_groups: tuple[int, int] | None = None  # the row groups (first, stop) of a parquet input
    save_tokens: str | None = None
    save_format: str | None = None
    workers: int = 1
    force: bool = False
    backend: str = "auto"
    device: str | None = None
    created: str | None = None  # the manifest's creation time; one value for all shards of a run
    shared_vocab: bool = False  # a shard: its lookup table is stored once in the directory's vocab/
    expected_tokens: int | None = None  # the estimated token count (messages about a full disk)
    checksum: str = DEFAULT_CHECKSUM  # of the outputs' data: "xxh3-128" or "sha256"
    rows: str = "stored"  # "lazy": a tokens-only index, whose rows are computed when read

    def to_payload(self) -> dict[str, Any]:
        """The job as plain JSON values (the spec as its JSON), to send to another process."""
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "spec": self.spec.to_json()}

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> HashJob:
        """The job :meth:`to_payload` describes."""
        groups = payload.get("row_groups")
        return cls(
            **{
                **payload,
                "inputs": tuple(payload["inputs"]),
                "row_groups": None if groups is None else (groups[0], groups[1]),
                "spec": HashSpec.from_json(payload["spec"]),
            }
        )


def job_vocab(job: HashJob) -> tuple[Tokenizer | None, CompressedVocab]:
    """The tokenizer (None for canonical ids) and vocabulary a job uses."""
    if job.tokenizer is None:
        if job.vocab_size is None:
            raise UsageError("pre-tokenized ids without a tokenizer need `vocab_size`")
        return None, identity_vocab(job.vocab_size)
    tokenizer = load_tokenizer(job.tokenizer, job.special)
    return tokenizer, build_vocab(tokenizer, compress=not job.no_compress)


def vocab_name(tokenizer: Tokenizer | None) -> str:
    """How messages name the raw id space: the tokenizer's, or the one of ``vocab_size``."""
    return f"tokenizer {tokenizer.name}" if tokenizer is not None else "the vocabulary of `vocab_size`"


def job_meta(job: HashJob, tokenizer: Tokenizer | None, vocab: CompressedVocab, spec: HashSpec) -> IndexMeta:
    """What the job's manifest records besides counts and arrays."""
    return IndexMeta(
        spec=spec,
        tokenizer=tokenizer_record(tokenizer),
        vocab=vocab_record(vocab),
        boundary=job.boundary,
        tokenization=tokenization_record(
            None if job.tokens_file is not None else tokenizer,
            add_eot=job.add_eot,
            eot_token=job.eot_token,
            record_key=record_key(
                [input_form(s, job.input_format, job.text_key) for s in job.inputs], job.text_key
            ),
            doc_sep=job.doc_sep,
            errors=job.errors,
            input_format=job.input_format,
        ),
        lut=vocab.lut,
        sources=(job.tokens_file,) if job.tokens_file is not None else job.inputs,
        created=job.created,
        storage=job.rows,
        row_groups=job.row_groups,
    )


def save_format(path: str, given: str | None, raw_size: int) -> str:
    """The format of ``save_tokens``: as given, else from the suffix; nanoGPT's uint16 must hold
    every id."""
    fmt = given or SUFFIX_FORMATS.get(Path(path).suffix)
    if fmt is None:
        raise UsageError(
            f"cannot tell the format of `save_tokens` {path}: pass `save_format` ({', '.join(TOKEN_FORMATS)})"
        )
    if fmt == "nanogpt" and raw_size > UINT16_IDS:
        raise UsageError(
            f"nanoGPT .bin files hold uint16 ids but this tokenizer has {raw_size:,} ids: "
            "pass `save_format=llmc` or megatron (they store uint32/int32 ids)"
        )
    return fmt


def output_sizes(job: HashJob, raw_size: int) -> list[OutputSize]:
    """The sizes of the job's outputs as functions of its token count: the index (or stream),
    then the saved token file if any."""
    sizes = [index_size(job.dest, job.spec, raw_size, shared_vocab=job.shared_vocab)]
    if job.save_tokens is not None:
        fmt = save_format(job.save_tokens, job.save_format, raw_size)
        sizes.append(token_file_size(job.save_tokens, fmt, raw_size))
    return sizes


def hash_threads(workers: int, backend: str, device: str | None = None) -> int:
    """Threads that hash for ``workers`` tokenizer threads: as few as keep up with them (every
    other core tokenizes), at most MAX_HASH_THREADS. ``backend`` (``auto`` or a name) is resolved
    as the hasher resolves it. Backends other than numba and numpy parallelize inside their
    kernels (:func:`ngramtool.pipeline.hash_chunks` gives them one)."""
    per_thread = WORKERS_PER_HASH_THREAD.get(choose_backend(backend, device).name, 1)
    return max(1, min(MAX_HASH_THREADS, -(-workers // per_thread)))


def input_bytes(job: HashJob) -> int | None:
    """Bytes the job will read (for progress), or None when reading stdin."""
    if job.tokens_file is not None:
        return token_file(job).nbytes
    if job.row_groups is not None:
        return parquet_share(job.inputs[0], job.row_groups)
    return input_size(job.inputs)


def token_file(job: HashJob) -> TokenFile:
    """The job's token file, opened with its reading options."""
    assert job.tokens_file is not None
    return open_token_file(job.tokens_file, job.token_format, dtype=job.token_dtype, eos_id=job.eos_id)


def _job_chunks(
    job: HashJob,
    tokenizer: Tokenizer | None,
    vocab: CompressedVocab,
    clock: StageClock,
    documents: Iterable[str] | None,
) -> Iterator[TokenChunk]:
    """The raw id chunks of the job's input: a token file's, or the encoded text's."""
    if job.tokens_file is not None:
        return iter_token_file_chunks(
            job.tokens_file,
            job.token_format,
            vocab_size=vocab.raw_size,
            vocab_name=vocab_name(tokenizer),
            dtype=job.token_dtype,
            eos_id=job.eos_id,
        )
    if tokenizer is None:
        raise UsageError("text input needs a `tokenizer`")
    if documents is not None:
        return iter_text_chunks(
            documents,
            tokenizer,
            add_eot=job.add_eot,
            eot_token=job.eot_token,
            workers=job.workers,
            clock=clock,
        )
    return iter_token_chunks(
        list(job.inputs),
        tokenizer,
        input_format=job.input_format,
        text_key=job.text_key,
        doc_sep=job.doc_sep,
        errors=job.errors,  # type: ignore[arg-type]
        row_groups=job.row_groups,
        add_eot=job.add_eot,
        eot_token=job.eot_token,
        workers=job.workers,
        clock=clock,
    )


def _size_at(size: OutputSize, tokens: int | None) -> int | None:
    return None if tokens is None else size.at(tokens)


def _expect(sinks: list[Any], sizes: list[OutputSize], tokens: int | None) -> None:
    """Tell each output writer its estimated size (for the message if a disk fills)."""
    for sink, size in zip(sinks, sizes, strict=True):
        sink.expected_bytes = _size_at(size, tokens)


def run_hash_job(
    job: HashJob, progress: Progress | None = None, documents: Iterable[str] | None = None
) -> dict[str, Any]:
    """Run one job to completion; returns its summary. The output is published atomically.

    ``documents`` (strings, each one document) replace the job's input files; ``progress`` is
    called after each chunk with the input bytes and tokens it accounts for.
    """
    tokenizer, vocab = job_vocab(job)
    spec = job.spec
    log.info("hashing %s -> %s", job.tokens_file or ", ".join(job.inputs) or "strings", job.dest)
    if spec.vocab_size != vocab.size:
        raise UsageError(f"the spec was made for V'={spec.vocab_size} but the vocabulary has V'={vocab.size}")
    meta = job_meta(job, tokenizer, vocab, spec)
    clock = StageClock()  # the streaming part of the run, after tokenizer and vocabulary loading
    chunks = _job_chunks(job, tokenizer, vocab, clock, documents)
    hasher = NgramHasher(spec, boundary=job.boundary, backend=job.backend, device=job.device)  # type: ignore[arg-type]
    sizes = output_sizes(job, vocab.raw_size)
    total_bytes = input_bytes(job) if documents is None else None
    hard_cuts = nbytes = skipped = ntokens = 0
    # Each output is entered as soon as it exists, so a failure anywhere removes what was begun.
    with contextlib.ExitStack() as outputs:
        if job.dest == "-":
            stream_manifest = meta.manifest(STREAM_FORMAT, f"{STREAM_MAJOR}.{STREAM_MINOR}")
            writer: IndexWriter | StreamWriter = outputs.enter_context(
                StreamWriter(sys.stdout.buffer, stream_manifest, vocab.lut, spec, checksum=job.checksum)
            )
            destination = None
        else:
            writer = destination = outputs.enter_context(
                IndexWriter(
                    Path(job.dest),
                    meta,
                    force=job.force,
                    clock=clock,
                    shared_vocab=job.shared_vocab,
                    expected_bytes=_size_at(sizes[0], job.expected_tokens),
                    checksum=job.checksum,
                )
            )
        token_sink = None
        if job.save_tokens is not None:
            fmt = save_format(job.save_tokens, job.save_format, vocab.raw_size)
            token_sink = outputs.enter_context(
                TokenFileWriter(
                    job.save_tokens,
                    fmt,
                    vocab.raw_size,
                    expected_bytes=_size_at(sizes[1], job.expected_tokens),
                )
            )
        sinks = [writer, *([token_sink] if token_sink is not None else [])]
        _expect(sinks, sizes, job.expected_tokens)
        behind = outputs.enter_context(WriteBehind())
        write = timed(clock, "write", writer.append)
        save = timed(clock, "write", token_sink.append) if token_sink is not None else None
        if job.rows == "lazy":  # a tokens-only index: every id is checked, nothing is hashed
            hashed = ((chunk, ids, None) for _, chunk, ids in canonical_chunks(chunks, vocab))
        else:
            threads = hash_threads(job.workers, job.backend, job.device)
            hashed = hash_chunks(chunks, vocab, hasher, threads, clock, destination)
        for chunk, _, rows in hashed:
            behind.submit(write, chunk.tokens, rows, chunk.doc_starts)
            if save is not None:
                behind.submit(save, chunk.tokens, chunk.doc_starts)
            hard_cuts += chunk.hard_cuts
            skipped += chunk.skipped_records
            nbytes += chunk.nbytes
            ntokens += chunk.tokens.shape[0]
            if total_bytes and nbytes:  # the tokens per input byte so far, over the whole input
                _expect(sinks, sizes, max(ntokens, round(ntokens * total_bytes / nbytes)))
            if progress is not None:
                progress(chunk.nbytes, chunk.tokens.shape[0])
        behind.drain()
        if token_sink is not None:  # every output finished before any is published
            token_sink.finish()
        manifest = writer.commit()
        if token_sink is not None:
            token_sink.commit()
    profile = clock.report()
    seconds = profile["wall_seconds"]
    log.info(
        "wrote %s: %d tokens, %d documents in %.2f s",
        job.dest,
        manifest["num_tokens"],
        manifest["num_documents"],
        seconds,
    )
    if skipped:
        log.warning("%s: skipped %d bad records (errors=skip)", job.dest, skipped)
    if hard_cuts:
        log.warning("%s: %d text cuts where the ids may differ from the whole text's", job.dest, hard_cuts)
    return {
        "output": job.dest,
        "num_tokens": manifest["num_tokens"],
        "num_documents": manifest["num_documents"],
        "input_bytes": nbytes,
        "seconds": seconds,
        "tokens_per_second": round(manifest["num_tokens"] / seconds) if seconds > 0 else None,
        "rows_shape": [manifest["num_tokens"], spec.num_layers, spec.num_columns],
        "rows_dtype": spec.row_dtype.name,
        "rows": job.rows,
        "tokenizer": meta.tokenizer["name"],
        "vocab_size": vocab.size,
        "spec_fingerprint": spec.fingerprint,
        "boundary": job.boundary,
        "unsafe_text_cuts": hard_cuts,
        "skipped_records": skipped,
        "profile": profile,
    }
