"""One hash job: a source -> one index directory (or a stream), as a value and a function.

A run (:mod:`ngramtool.run.executors`) plans one :class:`HashJob` per output (one for a plain run,
one per input file for a sharded run) and runs :func:`run_hash_job` in this process or as Ray
tasks. In this process the job holds what the plan loaded (the mapping: tokenizer, vocabulary and
spec; the resolved save format and backend); it travels to other processes as JSON
(:meth:`HashJob.to_payload`), where only the mapping is rebuilt, from its disk cache.

The data flow of one job, top to bottom: read text pieces (:mod:`ngramtool.inputs`) -> raw ids in
chunks (:mod:`ngramtool.inputs.encoding`; or the chunks of a token file) -> canonical ids and
rows (:func:`ngramtool.run.pipeline.hash_chunks`) -> the writer (an index directory or a pipe
stream, and optionally a token file), on a write-behind thread.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..formats.index import IndexMeta, IndexWriter
from ..formats.stream import FORMAT_NAME as STREAM_FORMAT
from ..formats.stream import STREAM_MAJOR, STREAM_MINOR, StreamWriter
from ..formats.tokenfiles import (
    TOKEN_FORMATS,
    TokenFileWriter,
    format_of_suffix,
)
from ..hashing.backends import BACKENDS, choose_backend
from ..hashing.hasher import NgramHasher
from ..inputs.encoding import tokenization_record
from ..inputs.sources import Source, TokenFileReader, source_from_dict
from ..inputs.stream import TokenStream, open_stream, opened_token_file, text_bytes
from ..model.mapping import NgramHashMapping
from ..spec.hashspec import HashSpec
from ..tokenizers import tokenizer_record
from ..tokenizers.engine_choice import engine_record
from ..tokenizers.vocab import vocab_record
from ..util.chunks import checked_chunks
from ..util.errors import UsageError
from ..util.profiling import StageClock, timed
from ..util.writeback import WriteBehind
from .pipeline import hash_chunks, warm_kernel
from .request import OutputOptions
from .space import OutputSize, index_size, token_file_size
from .summary import JobSummary

log = logging.getLogger(__name__)
UINT16_IDS = 1 << 16
# Tokenizer threads one hash thread keeps up with: a numba thread hashes 20-40M tokens/s, a numpy
# thread 6-14M, a tiktoken thread encodes 1-2.5M (docs/performance.md).
WORKERS_PER_HASH_THREAD = {"numba": 8, "numpy": 4}
# With a fast tokenizer engine a token costs about 140 CPU ns to encode and 80 to hash
# (docs/performance.md): a hash thread for every two tokenizer threads.
WORKERS_PER_HASH_THREAD_FAST = 2
MAX_HASH_THREADS = 4
Progress = Callable[[int, int], None]  # (bytes consumed, tokens written) since the last call


@dataclass(frozen=True)
class HashJob:
    """Everything one output needs, planned: the source, the mapping, the option groups.

    ``dest`` is an index directory, or ``-`` for a stream on stdout. The job holds the loaded
    :class:`~ngramtool.NgramHashMapping` (nothing is loaded again in this process) and crosses to
    other processes as JSON (:meth:`to_payload`), where the mapping is rebuilt from its disk cache.
    """

    source: Source
    dest: str
    mapping: NgramHashMapping
    boundary: str = "none"
    outputs: OutputOptions = field(default_factory=OutputOptions)  # save_format resolved
    workers: int = 1
    backend: str = "auto"
    device: str | None = None
    created: str | None = None  # the manifest's creation time; one value for all shards of a run
    shared_vocab: bool = False  # a shard: its lookup table is stored once in the directory's vocab/
    expected_tokens: int | None = None  # the estimated token count (messages about a full disk)
    input_bytes: int | None = None  # the input's size, measured once when planned (None: stdin, strings)

    @property
    def spec(self) -> HashSpec:
        """The spec of the job's rows."""
        return self.mapping.spec

    def to_payload(self) -> dict[str, Any]:
        """The job as plain JSON values, to send to another process (:meth:`from_payload`)."""
        return {
            **{f.name: getattr(self, f.name) for f in fields(self)},
            "source": self.source.to_dict(),
            "mapping": self.mapping.to_payload(),
            "outputs": asdict(self.outputs),
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> HashJob:
        """The job :meth:`to_payload` describes, its mapping loaded in this process."""
        return cls(
            **{
                **payload,
                "source": source_from_dict(payload["source"]),
                "mapping": NgramHashMapping.from_payload(payload["mapping"]),
                "outputs": OutputOptions(**payload["outputs"]),
            }
        )


def job_meta(job: HashJob, stream: TokenStream | None = None) -> IndexMeta:
    """What the job's manifest records besides counts and arrays; with the job's ``stream``, the
    engine that encodes its text (provenance: not compared by resume or merge)."""
    mapping, source = job.mapping, job.source
    tokenizer = tokenizer_record(mapping.tokenizer)
    if isinstance(source, TokenFileReader):
        tokenization = tokenization_record(None)
        sources: tuple[str, ...] = (source.path,)
        row_groups = None
    else:
        tokenizer["engine"] = (stream.tokenizer or {}).get("engine") if stream else engine_record(None)
        tokenization = tokenization_record(
            mapping.tokenizer,
            add_eot=source.add_eot,
            eot_token=source.eot_token,
            record_key=source.record_key(),
            doc_sep=source.doc_sep,
            errors=source.errors,
            input_format=source.input_format,
            chat_template=source.chat_template,
        )
        sources, row_groups = source.paths, source.row_groups
    return IndexMeta(
        spec=mapping.spec,
        tokenizer=tokenizer,
        vocab=vocab_record(mapping.vocab),
        boundary=job.boundary,
        tokenization=tokenization,
        lut=mapping.vocab.lut,
        sources=sources,
        created=job.created,
        storage=job.outputs.rows,
        row_groups=row_groups,
        negative_ids=mapping.negative_ids,
        vocab_mismatch=mapping.vocab_mismatch,
    )


def save_format(path: str, given: str | None, raw_size: int) -> str:
    """The format of ``save_tokens``: as given, else from the suffix; nanoGPT's uint16 must hold
    every id."""
    fmt = given or format_of_suffix(path)
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


def output_sizes(job: HashJob) -> list[OutputSize]:
    """The sizes of the job's outputs as functions of its token count: the index (or stream),
    then the saved token file if any."""
    raw_size = job.mapping.raw_size
    sizes = [index_size(job.dest, job.spec, raw_size, shared_vocab=job.shared_vocab)]
    if job.outputs.save_tokens is not None:
        sizes.append(token_file_size(job.outputs.save_tokens, saved_format(job), raw_size))
    return sizes


def saved_format(job: HashJob) -> str:
    """The format of the job's ``save_tokens`` file: the one its plan resolved, else (a job made
    by hand) the one of :func:`save_format`."""
    saved = job.outputs
    assert saved.save_tokens is not None
    return saved.save_format or save_format(saved.save_tokens, None, job.mapping.raw_size)


def hash_threads(workers: int, backend: str, fast_engine: bool = False) -> int:
    """Threads that hash for ``workers`` tokenizer threads: as few as keep up with them (every
    other core tokenizes), at most MAX_HASH_THREADS; one per tokenizer thread with a fast
    tokenizer engine (``fast_engine``). ``backend``: the job's, resolved when it was planned.
    Backends other than numba and numpy parallelize inside their kernels
    (:func:`ngramtool.run.pipeline.hash_chunks` gives them one)."""
    per_thread = WORKERS_PER_HASH_THREAD.get(backend, 1)
    if fast_engine:
        per_thread = min(per_thread, WORKERS_PER_HASH_THREAD_FAST)
    return max(1, min(MAX_HASH_THREADS, -(-workers // per_thread)))


def source_bytes(source: Source) -> int | None:
    """The bytes a source will read (for progress and estimates), or None when reading stdin;
    measured once, when a job is planned."""
    if isinstance(source, TokenFileReader):
        return opened_token_file(source).nbytes
    return text_bytes(source)


def _size_at(size: OutputSize, tokens: int | None) -> int | None:
    return None if tokens is None else size.at(tokens)


def _expect(sinks: list[Any], sizes: list[OutputSize], tokens: int | None) -> None:
    """Tell each output writer its estimated size (for the message if a disk fills)."""
    for sink, size in zip(sinks, sizes, strict=True):
        sink.expected_bytes = _size_at(size, tokens)


def run_hash_job(
    job: HashJob, progress: Progress | None = None, documents: Iterable[str] | None = None
) -> JobSummary:
    """Run one job to completion; returns its summary. The output is published atomically.

    ``documents`` (strings, each one document) replace the job's input files; ``progress`` is
    called after each chunk with the input bytes and tokens it accounts for.
    """
    mapping = job.mapping
    if job.backend not in BACKENDS and job.outputs.rows != "lazy":  # a job made by hand, not planned
        choice = choose_backend(job.backend, job.device)
        job = replace(job, backend=choice.name, device=choice.device)
    log.info("hashing %s -> %s", ", ".join(job.source.paths) or "strings", job.dest)
    clock = StageClock()  # the streaming part of the run, after tokenizer, engine and vocabulary loading
    hasher = NgramHasher(
        job.spec,
        boundary=job.boundary,  # type: ignore[arg-type]
        negative_ids=mapping.negative_ids,
        backend=job.backend,
        device=job.device,
    )
    hashes = job.outputs.rows != "lazy"
    with warm_kernel(hasher, mapping.vocab.lut.dtype) if hashes else contextlib.nullcontext():
        return _run_hash_job(job, hasher, clock, progress, documents)


def _run_hash_job(
    job: HashJob,
    hasher: NgramHasher,
    clock: StageClock,
    progress: Progress | None,
    documents: Iterable[str] | None,
) -> JobSummary:
    """:func:`run_hash_job` with its hasher and clock made (the kernel loading meanwhile)."""
    mapping, spec, saved = job.mapping, job.spec, job.outputs
    stream = open_stream(
        job.source,
        mapping,
        workers=job.workers,
        documents=documents,
        clock=clock,
        total_bytes=job.input_bytes,
    )  # chooses the tokenizer engine the manifest names
    clock.restart()  # loading a tokenizer engine is loading, not streaming
    meta = job_meta(job, stream)
    sizes = output_sizes(job)
    total_bytes = stream.total_bytes
    chunks = stream.chunks()
    hard_cuts = nbytes = skipped = ntokens = 0
    # Each output is entered as soon as it exists, so a failure anywhere removes what was begun.
    with contextlib.ExitStack() as outputs:
        if job.dest == "-":
            stream_manifest = meta.manifest(STREAM_FORMAT, f"{STREAM_MAJOR}.{STREAM_MINOR}")
            writer: IndexWriter | StreamWriter = outputs.enter_context(
                StreamWriter(
                    sys.stdout.buffer, stream_manifest, mapping.vocab.lut, spec, checksum=saved.checksum
                )
            )
            destination = None
        else:
            writer = destination = outputs.enter_context(
                IndexWriter(
                    Path(job.dest),
                    meta,
                    force=saved.force,
                    clock=clock,
                    shared_vocab=job.shared_vocab,
                    expected_bytes=_size_at(sizes[0], job.expected_tokens),
                    checksum=saved.checksum,
                )
            )
        token_sink = None
        if saved.save_tokens is not None:
            token_sink = outputs.enter_context(
                TokenFileWriter(
                    saved.save_tokens,
                    saved_format(job),
                    mapping.raw_size,
                    expected_bytes=_size_at(sizes[1], job.expected_tokens),
                )
            )
        sinks = [writer, *([token_sink] if token_sink is not None else [])]
        _expect(sinks, sizes, job.expected_tokens)
        behind = outputs.enter_context(WriteBehind())
        write = timed(clock, "write", writer.append)
        save = timed(clock, "write", token_sink.append) if token_sink is not None else None
        if saved.rows == "lazy":  # a tokens-only index: every id is checked, nothing is hashed
            hashed = ((chunk, None, None) for chunk in checked_chunks(chunks, mapping.vocab))
        else:
            fast_engine = meta.tokenizer.get("engine", {}).get("name", "reference") != "reference"
            threads = hash_threads(job.workers, job.backend, fast_engine)
            hashed = hash_chunks(chunks, mapping.vocab, hasher, threads, clock, destination)
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
    summary = JobSummary(
        output=job.dest,
        num_tokens=manifest["num_tokens"],
        num_documents=manifest["num_documents"],
        input_bytes=nbytes,
        seconds=profile["wall_seconds"],
        rows_shape=(manifest["num_tokens"], spec.num_layers, spec.num_columns),
        rows_dtype=spec.row_dtype.name,
        rows=saved.rows,
        tokenizer=meta.tokenizer["name"],
        vocab_size=mapping.vocab_size,
        spec_fingerprint=spec.fingerprint,
        boundary=job.boundary,
        unsafe_text_cuts=hard_cuts,
        skipped_records=skipped,
        profile=profile,
        notes=stream.notes,
    )
    log.info("wrote %s: %d tokens, %d documents in %.2f s", job.dest, summary.num_tokens,
             summary.num_documents, summary.seconds)  # fmt: skip
    if skipped:
        log.warning("%s: skipped %d bad records (errors=skip)", job.dest, skipped)
    if hard_cuts:
        log.warning("%s: %d text cuts where the ids may differ from the whole text's", job.dest, hard_cuts)
    return summary
