"""Collisions measured on a corpus: what ``ngramtool collisions`` does, as one function.

:func:`measure_collisions` reads its input (text tokenized as hashing does, an index or merged
dataset with its own spec and boundary, a token file, or saved n-gram type counts to merge),
counts the distinct n-grams of each independent stream exactly, optionally saves them
(:mod:`ngramtool.analysis.type_counts`), and computes the collision figures of every table size
asked for in one pass (:func:`ngramtool.analysis.reports.sweep_collisions`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..hashing.backends import small_input
from ..inputs.stream import TokenStream, open_stream
from ..model.mapping import NgramHashMapping
from ..model.presets import resolve_spec
from ..spec.hashspec import HashSpec
from ..util.atomic import OutputError, check_output_file, staged_file
from ..util.chunks import canonical_chunks
from ..util.errors import NgramToolError, UsageError
from ..util.profiling import peak_rss_bytes
from ..util.progress import Progress
from . import type_counts
from .counting import NgramTypeCounter, NgramTypes
from .reports import CollisionReport, sweep_collisions
from .type_counts import (
    SUFFIX,
    analysed_specs_record,
    load_and_merge,
    load_types,
    merge_types,
    recorded_specs,
)

MEASURE_CHUNK_TOKENS = 1 << 18
"""Tokens per chunk of a measuring pass: a quarter of ``hash``'s, so that the arrays of a chunk
(its tokens, canonical ids and n-gram keys) hold about 30 MB less at the peak of ``collisions``,
at no measured cost (each chunk is counted and dropped)."""


@dataclass
class CollisionsResult:
    """What :func:`measure_collisions` measured.

    Attributes:
        kind: ``text``, ``index``, ``dataset``, ``stream``, ``tokens`` or ``partial counts``.
        sources: the inputs.
        tokens, documents, skipped_records: what was counted (skipped: bad JSONL records).
        max_tokens: the limit on the tokens counted, if any.
        boundary: the boundary policy of the n-gram windows.
        tokenizer: the tokenizer's name (None for canonical ids).
        specs: the specs analysed (one per table size of a sweep).
        types: the distinct n-grams per order.
        reports: the collision figures of each spec (empty when nothing was counted).
        hard_cuts: text cuts where the ids may differ from tokenizing the text whole.
        assumed_tokenizer: the tokenizer a token file's ids were taken to come from when none was
            named (and ``vocab_size`` was not given either), with its id count; else None.
        seconds_counting, seconds_analysing: how long each part took.
        notes: choices the reading made that a user should know (a headerless file's type).
    """

    kind: str
    sources: list[str]
    tokens: int
    documents: int
    skipped_records: int
    max_tokens: int | None
    boundary: str
    tokenizer: str | None
    specs: list[HashSpec]
    types: dict[int, NgramTypes]
    reports: list[CollisionReport]
    hard_cuts: int
    assumed_tokenizer: tuple[str, int] | None
    seconds_counting: float
    seconds_analysing: float
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON (``ngramtool collisions --json``)."""
        return {
            "input": {
                "kind": self.kind,
                "sources": self.sources,
                "tokens": self.tokens,
                "documents": self.documents,
                "max_tokens": self.max_tokens,
                "boundary": self.boundary,
                "skipped_records": self.skipped_records,
            },
            "tokenizer": self.tokenizer,
            "vocab_size": self.specs[0].vocab_size,
            "spec": analysed_specs_record(self.specs),
            "orders": [
                {"order": n, "types": t.types, "occurrences": t.occurrences} for n, t in self.types.items()
            ],
            "tables": [report.to_dict() for report in self.reports],
            "run": {
                "seconds_counting": round(self.seconds_counting, 3),
                "seconds_analysing": round(self.seconds_analysing, 3),
                "tokens_per_second_counting": round(self.tokens / max(self.seconds_counting, 1e-9)),
                "peak_rss_bytes": peak_rss_bytes(),
            },
        }


class PartNotSaved(OutputError):
    """The figures were measured but the part (``save_types``) could not be written; the message
    says why, ``result`` holds the figures (:class:`CollisionsResult`), so that they are not lost."""

    def __init__(self, error: OutputError, result: CollisionsResult) -> None:
        super().__init__(str(error), error.dest, error.written, error.expected, error.free)
        self.result = result


@dataclass(frozen=True)
class MeasureOptions:
    """How a measuring pass (collisions, the row cache) reads its source.

    Attributes:
        boundary: ``none`` (the default for text and token files) or ``reset``; an index, a
            dataset or a stream has its own.
        max_tokens: read only the first tokens.
        workers: tokenizer threads (default: every core).
    """

    boundary: str | None = None
    max_tokens: int | None = None
    workers: int | None = None

    def open(self, source: Any, mapping: NgramHashMapping | None) -> TokenStream:
        """``source`` as a token stream (:func:`ngramtool.inputs.stream.open_stream`), cut after
        ``max_tokens``; a :class:`~ngramtool.inputs.stream.TokenStream` given is only cut."""
        if isinstance(source, TokenStream):
            if mapping is not None or self.boundary is not None:
                raise UsageError(
                    "a TokenStream is opened already: give `mapping` and `boundary` to open_stream"
                )
            return source.first_tokens(self.max_tokens)
        chunk = min(MEASURE_CHUNK_TOKENS, self.max_tokens or MEASURE_CHUNK_TOKENS)
        opened = open_stream(
            source, mapping, boundary=self.boundary, workers=self.workers, chunk_tokens=chunk
        )
        return opened.first_tokens(self.max_tokens)


def measure_collisions(
    source: Any = (),
    mapping: NgramHashMapping | None = None,
    *,
    table_sizes: Sequence[int] | None = None,
    spec_fields: dict[str, Any] | None = None,
    options: MeasureOptions | None = None,
    save_types: str | Path | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> CollisionsResult:
    """Measure how the n-grams of the input share the rows of each hash table.

    Args:
        source: what :func:`~ngramtool.inputs.stream.open_stream` reads (corpus files or ``-`` in
            any form hashing reads, a :class:`~ngramtool.CorpusReader` with reading options, one
            token file or :class:`~ngramtool.TokenFileReader`, an index, a merged dataset or a
            stream; or a stream opened already), or saved type counts (``*.ngtypes.npz``) to merge.
        mapping: the tokenizer, vocabulary and spec of text or a token file (None: cl100k_base
            and the default spec); an index, a dataset or a stream has its own.
        table_sizes: the base table sizes to analyse, each applied to every order (a sweep in one
            pass); default: the spec's (an index's own, or the parts' recorded ones).
        spec_fields: saved counts only: ``heads``, ``layer_ids``, ``seed`` over the recorded spec,
            or ``spec_file``; the counts fix N, V' and the pad.
        options: the boundary, a token limit, the tokenizer threads (:class:`MeasureOptions`;
            None: the defaults).
        save_types: also save the distinct n-gram counts there; parts of shards merge exactly.
        force: replace an existing ``save_types`` file.
        progress: receives the bytes and tokens counted.

    Raises:
        NgramToolError: the input holds no tokens (unless ``save_types``: an empty part merges).
        PartNotSaved: the part could not be written (a full disk); its ``result`` holds the figures.

    Examples:
        >>> from ngramtool import NgramHashMapping
        >>> from ngramtool.analysis.measurement import measure_collisions
        >>> mapping = NgramHashMapping.build("cl100k_base", heads=2, layer_ids=[1])
        >>> result = measure_collisions("corpus.txt", mapping, table_sizes=[4099, 65537])
        >>> result.tokens, [t.types for t in result.types.values()]
        (158122, [76124, 126098])
        >>> [round(head.collision, 3) for head in result.reports[0].heads[:2]]
        [0.946, 0.946]
    """
    progress = progress or Progress()
    if save_types is not None and not str(save_types).endswith(SUFFIX):
        raise UsageError(f"`save_types` {save_types}: name it *{SUFFIX} so that collisions reads it back")
    options = options or MeasureOptions()
    parts = saved_parts(source)
    if parts:
        if mapping is not None or options != MeasureOptions():
            raise UsageError("saved counts are merged, not counted: drop `mapping` and `options`")
        return _merged(parts, table_sizes, spec_fields or {}, save_types, force, progress)
    if spec_fields:
        raise UsageError("`spec_fields` apply to saved counts; give text a `mapping` of that spec")
    stream = options.open(source, mapping)
    if save_types is not None:
        check_output_file(save_types, force, stream.sources, what="`save_types` file")
    started = time.perf_counter()
    types, documents, tokens, skipped, hard_cuts = _count(stream, progress)
    meta = {**_part_meta(stream), "tokens": tokens, "documents": documents, "skipped_records": skipped}
    assumed = None
    if mapping is None and stream.kind == "tokens" and stream.mapping is not None:
        assumed = (stream.mapping.name.removeprefix("tokenizer "), stream.mapping.raw_size)
    result = _analysed(
        stream.kind, list(stream.sources), stream.spec, types, meta, table_sizes, (), started,
        save_types, progress, hard_cuts, assumed, options.max_tokens,
    )  # fmt: skip
    return replace(result, notes=stream.notes)


def _analysed(
    kind: str,
    sources: list[str],
    spec: HashSpec,
    types: dict[int, NgramTypes],
    meta: dict[str, Any],
    table_sizes: Sequence[int] | None,
    analysed: Sequence[HashSpec],
    started: float,
    save_types: str | Path | None,
    progress: Progress,
    hard_cuts: int = 0,
    assumed: tuple[str, int] | None = None,
    max_tokens: int | None = None,
) -> CollisionsResult:
    """The collision figures of counted (or merged) types at every table size asked for, and the
    part saved when asked."""
    counted = time.perf_counter()
    tokens = meta["tokens"]
    if tokens == 0 and save_types is None:
        raise NgramToolError("the input holds no tokens: nothing to analyse")
    orders = spec.max_ngram - 1
    sweep = sorted(set(table_sizes or ()))
    specs = [replace(spec, table_sizes=(t,) * orders) for t in sweep] or list(analysed) or [spec]
    reports: list[CollisionReport] = []
    if tokens:
        with progress.step(f"analysing {len(specs)} table size{'s' if len(specs) != 1 else ''}"):
            reports = sweep_collisions(types, specs)
    result = CollisionsResult(
        kind=kind,
        sources=sources,
        tokens=tokens,
        documents=meta["documents"],
        skipped_records=meta["skipped_records"],
        max_tokens=max_tokens,
        boundary=meta["boundary"],
        tokenizer=meta.get("tokenizer"),
        specs=specs,
        types=types,
        reports=reports,
        hard_cuts=hard_cuts,
        assumed_tokenizer=assumed,
        seconds_counting=counted - started,
        seconds_analysing=time.perf_counter() - counted,
    )
    if save_types is not None:  # saved once the analysis is done: a failed analysis saves no part
        record = {**meta, "sources": sources, "spec": analysed_specs_record(specs)}
        _save_part(Path(save_types), types, record, result)
    return result


def _save_part(
    path: Path, types: dict[int, NgramTypes], record: dict[str, Any], result: CollisionsResult
) -> None:
    """Write the distinct n-gram counts to ``path``; a file system failure raises
    :class:`PartNotSaved` with ``result``."""
    try:
        with staged_file(path) as tmp:
            type_counts.write_types(tmp, types, record)
    except OutputError as exc:
        raise PartNotSaved(exc, result) from None


def _part_meta(stream: TokenStream) -> dict[str, Any]:
    """What a saved part records of its stream besides its counts: what the ids are and how the
    windows were cut (parts merge only when these agree)."""
    tokenizer = stream.tokenizer or {}
    meta = {
        "max_ngram": stream.spec.max_ngram,
        "vocab_size": stream.spec.vocab_size,
        "pad_id": stream.spec.pad_id,
        "boundary": stream.boundary,
        "vocab_fingerprint": stream.vocab.fingerprint,
        "tokenizer": tokenizer.get("name"),
        "tokenizer_fingerprint": tokenizer.get("fingerprint"),
    }
    if stream.tokenization is not None:
        meta["tokenization"] = stream.tokenization
    return meta


# ------------------------------------------------------------------------- saved counts
def saved_parts(source: Any) -> tuple[Path, ...]:
    """The saved type counts ``source`` names (all of its paths, or none; a mix is refused)."""
    if isinstance(source, str | Path):
        names = [str(source)]
    elif isinstance(source, Sequence) and all(isinstance(name, str | Path) for name in source):
        names = [str(name) for name in source]
    else:
        return ()
    parts = [name.endswith(SUFFIX) for name in names]
    if any(parts) and not all(parts):
        raise UsageError(
            f"partial counts (*{SUFFIX}) are merged alone, not mixed with text, token files or "
            "indexes: give only the parts"
        )
    return tuple(Path(name) for name in names) if names and all(parts) else ()


def _merged(
    paths: tuple[Path, ...],
    table_sizes: Sequence[int] | None,
    fields: dict[str, Any],
    save_types: str | Path | None,
    force: bool,
    progress: Progress,
) -> CollisionsResult:
    """Saved type counts merged instead of counted, analysed at the specs they analysed (one, or
    each table size of a sweep), with the spec fields given (``heads``, ``layer_ids``, ``seed``)
    in place of their values, or ``spec_file``; N, V' and the pad always come from the parts.
    Parts that recorded other specs are refused when merged."""
    unknown = sorted(set(fields) - {"heads", "layer_ids", "seed", "spec_file"})
    if unknown:
        raise UsageError(f"saved counts fix N, V' and the pad: drop `{unknown[0]}`")
    names = [str(path) for path in paths]
    if save_types is not None:
        check_output_file(save_types, force, names, what="`save_types` file")
    meta = load_types(paths[0])[1]
    recorded = recorded_specs(meta)
    spec_file = fields.get("spec_file")
    if spec_file is not None:
        spec = resolve_spec(spec_file=spec_file, vocab_size=meta["vocab_size"])
        analysed: list[HashSpec] = []
    else:
        overrides = {key: fields.get(key) for key in ("heads", "layer_ids", "seed")}
        bases = recorded or [
            HashSpec(max_ngram=meta["max_ngram"], pad_id=meta["pad_id"], vocab_size=meta["vocab_size"],
                     table_sizes=(HashSpec.table_sizes[0],) * (meta["max_ngram"] - 1))
        ]  # fmt: skip
        analysed = [resolve_spec(preset=base, **overrides) for base in bases]
        spec = analysed[0]
        analysed = analysed if recorded else []
    fixed = (meta["max_ngram"], meta["vocab_size"], meta["pad_id"])
    if (spec.max_ngram, spec.vocab_size, spec.pad_id) != fixed:
        raise UsageError("`spec_file` does not match the N, V' and pad the partial counts were made with")
    started = time.perf_counter()
    types, merged = load_and_merge(paths)
    return _analysed(
        "partial counts", names, spec, types, merged, table_sizes, analysed, started, save_types, progress
    )


def _count(stream: TokenStream, progress: Progress) -> tuple[dict[int, NgramTypes], int, int, int, int]:
    """Count each independent stream's distinct n-grams and merge them (exact): (types, documents,
    tokens, skipped bad records, unsafe text cuts)."""
    parts, documents, tokens, hard_cuts, skipped = [], 0, 0, 0, 0
    progress.started(stream.total_bytes, 1, "local")
    # Text keeps every core tokenizing: its runs are sorted in this thread. Ids read from a file
    # leave the cores to the counter.
    threads = 1 if stream.kind == "text" else None
    for chunks in stream.streams():
        counter = NgramTypeCounter(
            stream.spec,
            boundary=stream.boundary,
            compiled=False if small_input(stream.total_bytes) else None,
            threads=threads,
        )
        for _, chunk, canonical in canonical_chunks(chunks, stream.vocab):
            counter.update(canonical, chunk.doc_starts)
            documents += int(chunk.doc_starts.shape[0])
            hard_cuts += chunk.hard_cuts
            skipped += chunk.skipped_records
            progress.advanced(chunk.nbytes, chunk.tokens.shape[0])
        parts.append(counter.result())
        tokens += counter.tokens
    return (parts[0] if len(parts) == 1 else merge_types(parts)), documents, tokens, skipped, hard_cuts
