"""Collisions measured on a corpus: what ``ngramtool collisions`` does, as one function.

:func:`measure_collisions` reads its input (text tokenized as hashing does, an index or merged
dataset with its own spec and boundary, a token file, or saved n-gram type counts to merge),
counts the distinct n-grams of each independent stream exactly, optionally saves them
(:mod:`ngramtool.analysis.type_counts`), and computes the collision figures of every table size
asked for in one pass (:func:`ngramtool.analysis.reports.sweep_collisions`).
"""

from __future__ import annotations

import resource
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..formats.artifacts import Kind, expect_kind, open_index
from ..formats.index import iter_index_chunks, negative_ids_of
from ..formats.tokenfiles import check_boundary, format_of_suffix, open_token_file, token_file_chunks
from ..inputs import check_reading, input_form, input_size, record_key, refuse_repeated_inputs, text_key_of
from ..inputs.encoding import iter_token_chunks, tokenization_record, worker_count
from ..inputs.sources import CorpusReader, TokenFileReader
from ..model.mapping import NgramHashMapping
from ..model.presets import resolve_spec
from ..spec.hashspec import HashSpec, check_boundary_policy
from ..tokenizers import DEFAULT_TOKENIZER, load_tokenizer
from ..tokenizers.vocab import table_vocab
from ..util.atomic import OutputError, check_output_file, staged_file
from ..util.chunks import CHUNK_TOKENS, Canonicalizer, TokenChunk, canonical_chunks
from ..util.errors import NgramToolError, UsageError, idle_parameters
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


@dataclass
class CollisionsResult:
    """What :func:`measure_collisions` measured.

    Attributes:
        kind: ``text``, ``index``, ``dataset``, ``tokens`` or ``partial counts``.
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
                "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            },
        }


class PartNotSaved(OutputError):
    """The figures were measured but the part (``save_types``) could not be written; the message
    says why, ``result`` holds the figures (:class:`CollisionsResult`), so that they are not lost."""

    def __init__(self, error: OutputError, result: CollisionsResult) -> None:
        super().__init__(str(error), error.dest, error.written, error.expected, error.free)
        self.result = result


@dataclass(frozen=True)
class _Source:
    """Raw token chunks, how to canonicalize them, and the settings that go with them."""

    kind: str
    sources: list[str]
    streams: Iterable[Iterator[TokenChunk]]  # independent streams (a dataset's shards, opened in turn)
    vocab: Canonicalizer
    spec: HashSpec
    boundary: str
    total_bytes: int | None
    meta: dict[str, Any]  # what a saved part records besides its counts
    parts: tuple[Path, ...] = ()  # saved type counts to merge instead of counting
    analysed: tuple[HashSpec, ...] = ()  # the specs the parts analysed (a sweep)
    assumed_tokenizer: tuple[str, int] | None = None  # (name, ids) for a token file's ids
    negative_ids: str = "mask"  # what a negative (masked) canonical id is to the hash


def measure_collisions(
    inputs: str | Path | Sequence[str | Path] | CorpusReader | TokenFileReader = (),
    *,
    mapping: NgramHashMapping | None = None,
    tokens_file: str | Path | None = None,
    token_format: str | None = None,
    token_dtype: str | None = None,
    eos_id: int | None = None,
    tokenizer: str | None = None,
    special: str | None = None,
    no_compress: bool = False,
    vocab_size: int | None = None,
    spec_file: str | Path | None = None,
    max_ngram: int | None = None,
    heads: int | None = None,
    layer_ids: Sequence[int] | None = None,
    seed: int | None = None,
    pad_id: int | None = None,
    table_sizes: Sequence[int] | None = None,
    boundary: str | None = None,
    add_eot: bool = False,
    eot_token: str | None = None,
    input_format: str | None = None,
    text_key: str | None = None,
    json_key: str | None = None,
    doc_sep: str | None = None,
    errors: str | None = None,
    chat_template: bool = False,
    workers: int | None = None,
    max_tokens: int | None = None,
    save_types: str | Path | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> CollisionsResult:
    """Measure how the n-grams of the input share the rows of each hash table.

    Args:
        inputs: corpus files or ``-`` in any form hashing reads (tokenized as hashing does, with
            ``tokenizer``, ``special``, ``add_eot``, ``input_format``, ``text_key`` (or its older
            name ``json_key``), ``chat_template``, ...; or a :class:`~ngramtool.CorpusReader`
            holding the reading options), one index or merged dataset (its own spec, vocabulary
            and boundary), one token file (or ``tokens_file``, with ``token_format``,
            ``token_dtype``, ``eos_id``; or a :class:`~ngramtool.TokenFileReader`), or saved type
            counts (``*.ngtypes.npz``).
        mapping: the tokenizer, vocabulary and spec (:class:`~ngramtool.NgramHashMapping`) of
            text or a token file, in place of ``tokenizer``, ``special``, ``no_compress``,
            ``vocab_size``, ``spec_file`` and the spec fields.
        table_sizes: the base table sizes to analyse, each applied to every order (a sweep in one
            pass); default: the spec's (an index's own, or the parts' recorded ones).
        spec_file: the spec as a saved JSON file; or give its fields (the next five; see
            :func:`ngramtool.resolve_spec`). Saved counts fix N, V' and the pad.
        max_ngram: N, the largest n-gram order.
        heads: K, hash heads per order.
        layer_ids: the Engram layers.
        seed: the global seed of the multipliers.
        pad_id: the pad, as a raw id of the tokenizer.
        boundary: ``none`` (the default for text and token files) or ``reset``.
        max_tokens: count only the first tokens.
        save_types: also save the distinct n-gram counts there; parts of shards merge exactly.
        progress: receives the bytes and tokens counted.

    Raises:
        NgramToolError: the input holds no tokens (unless ``save_types``: an empty part merges).
        PartNotSaved: the part could not be written (a full disk); its ``result`` holds the figures.

    Examples:
        >>> from ngramtool.analysis.measurement import measure_collisions
        >>> result = measure_collisions("corpus.txt", heads=2, layer_ids=[1], table_sizes=[4099, 65537])
        >>> result.tokens, [t.types for t in result.types.values()]
        (158122, [76124, 126098])
        >>> [round(head.collision, 3) for head in result.reports[0].heads[:2]]
        [0.946, 0.946]
    """
    progress = progress or Progress()
    if save_types is not None and not str(save_types).endswith(SUFFIX):
        raise UsageError(f"`save_types` {save_types}: name it *{SUFFIX} so that collisions reads it back")
    source = open_source(
        inputs, mapping=mapping, tokens_file=tokens_file, token_format=token_format, token_dtype=token_dtype,
        eos_id=eos_id, tokenizer=tokenizer, special=special, no_compress=no_compress, vocab_size=vocab_size,
        spec_file=spec_file, max_ngram=max_ngram, heads=heads, layer_ids=layer_ids, seed=seed,
        pad_id=pad_id, boundary=boundary, add_eot=add_eot, eot_token=eot_token, input_format=input_format,
        text_key=text_key, json_key=json_key, doc_sep=doc_sep, errors=errors, chat_template=chat_template,
        workers=workers, max_tokens=max_tokens, progress=progress,
    )  # fmt: skip
    if save_types is not None:
        check_output_file(save_types, force, source.sources, what="`save_types` file")
    orders = source.spec.max_ngram - 1
    sweep = sorted(set(table_sizes or ()))
    specs = (
        [replace(source.spec, table_sizes=(t,) * orders) for t in sweep]
        or list(source.analysed)
        or [source.spec]
    )
    streams = _first_tokens(source.streams, max_tokens) if max_tokens else source.streams
    started = time.perf_counter()
    if source.parts:
        types, meta = load_and_merge(source.parts)
        documents, tokens, skipped, hard_cuts = meta["documents"], meta["tokens"], meta["skipped_records"], 0
    else:
        types, documents, tokens, skipped, hard_cuts = _count(source, streams, progress)
    counted = time.perf_counter()
    if tokens == 0 and save_types is None:
        raise NgramToolError("the input holds no tokens: nothing to analyse")
    reports: list[CollisionReport] = []
    if tokens:
        with progress.step(f"analysing {len(specs)} table size{'s' if len(specs) != 1 else ''}"):
            reports = sweep_collisions(types, specs)
    result = CollisionsResult(
        kind=source.kind,
        sources=source.sources,
        tokens=tokens,
        documents=documents,
        skipped_records=skipped,
        max_tokens=max_tokens,
        boundary=source.boundary,
        tokenizer=source.meta.get("tokenizer"),
        specs=specs,
        types=types,
        reports=reports,
        hard_cuts=hard_cuts,
        assumed_tokenizer=source.assumed_tokenizer,
        seconds_counting=counted - started,
        seconds_analysing=time.perf_counter() - counted,
    )
    if save_types is not None:  # saved once the analysis is done: a failed analysis saves no part
        record = {**source.meta, "tokens": tokens, "documents": documents, "skipped_records": skipped,
                  "sources": source.sources, "spec": analysed_specs_record(specs)}  # fmt: skip
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


def open_source(
    inputs: str | Path | Sequence[str | Path] | CorpusReader | TokenFileReader = (),
    *,
    mapping: NgramHashMapping | None = None,
    tokens_file: str | Path | None = None,
    token_format: str | None = None,
    token_dtype: str | None = None,
    eos_id: int | None = None,
    tokenizer: str | None = None,
    special: str | None = None,
    no_compress: bool = False,
    vocab_size: int | None = None,
    spec_file: str | Path | None = None,
    max_ngram: int | None = None,
    heads: int | None = None,
    layer_ids: Sequence[int] | None = None,
    seed: int | None = None,
    pad_id: int | None = None,
    boundary: str | None = None,
    add_eot: bool = False,
    eot_token: str | None = None,
    input_format: str | None = None,
    text_key: str | None = None,
    json_key: str | None = None,
    doc_sep: str | None = None,
    errors: str | None = None,
    chat_template: bool = False,
    workers: int | None = None,
    max_tokens: int | None = None,
    progress: Progress,
) -> _Source:
    """The input of :func:`measure_collisions` (its parameters of the same names), classified and
    opened: the chunks of its streams, their vocabulary, spec and boundary (shared with
    :func:`ngramtool.analysis.row_cache.measure_row_cache`)."""
    if isinstance(inputs, TokenFileReader):
        given = {"tokens_file": tokens_file, "token_format": token_format, "token_dtype": token_dtype,
                 "eos_id": eos_id}  # fmt: skip
        _refuse_given(given, "to a token file given by its path (a TokenFileReader holds its own)")
        tokens_file, token_format, token_dtype, eos_id = (
            inputs.path,
            inputs.format,
            inputs.dtype,
            inputs.eos_id,
        )
        inputs = ()
    elif isinstance(inputs, CorpusReader):
        given = {"input_format": input_format, "text_key": text_key, "json_key": json_key, "doc_sep": doc_sep,
                 "errors": errors, "add_eot": add_eot, "eot_token": eot_token,
                 "chat_template": chat_template}  # fmt: skip
        _refuse_given(given, "to inputs given as paths (a CorpusReader holds its own)")
        input_format, text_key, doc_sep, errors = (
            inputs.input_format,
            inputs.text_key,
            inputs.doc_sep,
            inputs.errors,
        )
        add_eot, eot_token, chat_template = inputs.add_eot, inputs.eot_token, inputs.chat_template
        inputs = inputs.paths
    if mapping is not None:
        held = {"tokenizer": tokenizer, "special": special, "no_compress": no_compress,
                "vocab_size": vocab_size, "spec_file": spec_file, "max_ngram": max_ngram, "heads": heads,
                "layer_ids": layer_ids, "seed": seed, "pad_id": pad_id}  # fmt: skip
        _refuse_given(held, "without a `mapping` (it holds the tokenizer, vocabulary and spec)")
    names = [str(inputs)] if isinstance(inputs, str | Path) else [str(name) for name in inputs]
    refuse_repeated_inputs(names)
    if boundary is not None:
        check_boundary_policy(boundary)
    reading = {"add_eot": add_eot, "eot_token": eot_token, "input_format": input_format,
               "text_key": text_key_of(text_key, json_key, chat_template), "doc_sep": doc_sep,
               "errors": errors, "chat_template": chat_template, "special": special,
               "workers": workers}  # fmt: skip
    counting = {"tokens_file": tokens_file, "token_format": token_format, "token_dtype": token_dtype,
                "eos_id": eos_id, "vocab_size": vocab_size,
                "tokenizer": tokenizer, "no_compress": no_compress, "boundary": boundary, "mapping": mapping,
                "max_ngram": max_ngram, "pad_id": pad_id}  # fmt: skip
    fields = {"max_ngram": max_ngram, "heads": heads, "layer_ids": layer_ids, "seed": seed, "pad_id": pad_id}
    return _open(names, tokens_file, fields, spec_file, reading, counting, max_tokens, progress)


# ---------------------------------------------------------------------------------- inputs
def _open(
    names: list[str],
    tokens_file: str | Path | None,
    fields: dict[str, Any],
    spec_file: str | Path | None,
    reading: dict[str, Any],
    counting: dict[str, Any],
    max_tokens: int | None,
    progress: Progress,
) -> _Source:
    """Classify the input (saved counts, an index, a token file, text) and set up its chunks."""
    parts = [name.endswith(SUFFIX) for name in names]
    if any(parts) and not all(parts):
        raise UsageError(
            f"partial counts (*{SUFFIX}) are merged alone, not mixed with text, token files or "
            "indexes: give only the parts"
        )
    if names and all(parts):
        _refuse_given(
            {**counting, **reading, "max_tokens": max_tokens}, "to counting, not to saved partial counts"
        )
        return _parts_source(names, fields, spec_file)
    if tokens_file is not None and names:
        raise UsageError("give `inputs` or `tokens_file`, not both")
    if (
        tokens_file is None
        and len(names) == 1
        and Path(names[0]).is_dir()
        and not _is_corpus(names[0], reading)
    ):
        expect_kind(names[0], [Kind.INDEX, Kind.DATASET], "give the text files inside it")
        _refuse_given(reading, "to text input, not to an index")
        carried = {**counting, **{k: v for k, v in fields.items()}, "spec_file": spec_file}
        given = sorted(name for name, value in carried.items() if value not in (None, False))
        if given:
            dropped = ", ".join(f"`{name}`" for name in given)
            raise UsageError(
                f"{names[0]} is an index: it carries its own spec, vocabulary and boundary; drop {dropped}"
            )
        return _index_source(names[0])
    token_file_given = counting["token_format"] or counting["token_dtype"]
    if tokens_file is None and len(names) == 1 and (token_file_given or _looks_like_tokens(names[0])):
        tokens_file, names = names[0], []
    if tokens_file is None and not names:
        raise UsageError("give text `inputs` (or -), an index directory, or a token file")
    if any(
        (Path(name).is_dir() and not _is_corpus(name, reading)) or _looks_like_tokens(name) for name in names
    ):
        raise UsageError("an index directory or a token file is analysed alone: give just that one input")
    boundary = counting["boundary"] or "none"
    file_options = {"dtype": counting["token_dtype"], "eos_id": counting["eos_id"]}
    if tokens_file is not None:
        _refuse_given(reading, "to text input, not to a token file")
        check_boundary(boundary, tokens_file, counting["token_format"], **file_options)
    else:
        _refuse_given(
            {key: counting[key] for key in ("token_format", "token_dtype", "eos_id")}, "to a token file"
        )
        check_reading(
            names,
            input_format=reading["input_format"],
            text_key=reading["text_key"],
            doc_sep=reading["doc_sep"],
            errors=reading["errors"] or "strict",
        )
    mapping = _mapping(tokens_file, counting, reading, fields, spec_file, progress)
    tok, vocab, spec = mapping.tokenizer, mapping.vocab, mapping.spec
    meta = {
        "max_ngram": spec.max_ngram,
        "vocab_size": spec.vocab_size,
        "pad_id": spec.pad_id,
        "boundary": boundary,
        "vocab_fingerprint": vocab.fingerprint,
        "tokenizer": tok.name if tok is not None else None,
        "tokenizer_fingerprint": tok.fingerprint if tok is not None else None,
    }
    if tokens_file is not None:
        meta["tokenization"] = tokenization_record(None)
        file = open_token_file(tokens_file, counting["token_format"], **file_options)
        chunks = token_file_chunks(file, vocab_size=vocab.raw_size, vocab_name=mapping.name)
        total = file.nbytes
        assumed = None
        if tok is not None and counting["tokenizer"] is None and counting["mapping"] is None:
            assumed = (tok.name, vocab.raw_size)
        return _Source(
            "tokens",
            [str(tokens_file)],
            [chunks],
            vocab,
            spec,
            boundary,
            total,
            meta,
            assumed_tokenizer=assumed,
            negative_ids=mapping.negative_ids,
        )
    assert tok is not None
    text_options = {
        key: reading[key] for key in ("add_eot", "eot_token", "doc_sep", "input_format", "chat_template")
    }
    errors = reading["errors"] or "strict"
    forms = [input_form(name, reading["input_format"], reading["text_key"]) for name in names]
    meta["tokenization"] = tokenization_record(
        tok, errors=errors, record_key=record_key(forms, reading["text_key"]), **text_options
    )
    chunks = iter_token_chunks(
        names,
        tok,
        errors=errors,
        text_key=reading["text_key"],
        chunk_tokens=min(CHUNK_TOKENS, max_tokens or CHUNK_TOKENS),
        workers=worker_count(reading["workers"]),
        **text_options,
    )
    return _Source(
        "text", names, [chunks], vocab, spec, boundary, input_size(names), meta,
        negative_ids=mapping.negative_ids,
    )  # fmt: skip


def _mapping(
    tokens_file: str | Path | None,
    counting: dict[str, Any],
    reading: dict[str, Any],
    fields: dict[str, Any],
    spec_file: str | Path | None,
    progress: Progress,
) -> NgramHashMapping:
    """The tokenizer (None: canonical ids of ``vocab_size``), vocabulary and spec that read the input:
    the ``mapping`` given, or the one of the parameters."""
    if counting["mapping"] is not None:
        return counting["mapping"]
    if tokens_file is not None and counting["tokenizer"] is None and counting["vocab_size"] is not None:
        _refuse_given(
            {"no_compress": counting["no_compress"]}, "with a tokenizer, and `vocab_size` replaces it"
        )
        return NgramHashMapping.build(None, spec=spec_file, vocab_size=counting["vocab_size"], **fields)
    if counting["vocab_size"] is not None:
        raise UsageError("`vocab_size` applies only to a token file without `tokenizer`")
    name = counting["tokenizer"] or DEFAULT_TOKENIZER
    tok = load_tokenizer(name, reading["special"])  # loaded once: the mapping finds it in the cache
    with progress.step(f"preparing the compressed vocabulary of {tok.name}"):
        return NgramHashMapping.build(
            name, spec=spec_file, special=reading["special"], compress=not counting["no_compress"], **fields
        )


def _parts_source(names: list[str], fields: dict[str, Any], spec_file: str | Path | None) -> _Source:
    """Saved type counts: merged instead of counted.

    The specs are those the parts analysed (one, or each table size of a sweep), with the spec
    fields given (``heads``, ``layer_ids``, ``seed``) in place of their values, or ``spec_file``;
    N, V' and the pad always come from the parts. Parts that recorded other specs are refused when
    merged.
    """
    paths = tuple(Path(name) for name in names)
    meta = load_types(paths[0])[1]
    overrides = {key: fields[key] for key in ("heads", "layer_ids", "seed")}
    recorded = recorded_specs(meta)
    if spec_file is not None:
        spec = resolve_spec(spec_file=spec_file, vocab_size=meta["vocab_size"])
        analysed: list[HashSpec] = []
    else:
        bases = recorded or [
            HashSpec(max_ngram=meta["max_ngram"], pad_id=meta["pad_id"], vocab_size=meta["vocab_size"],
                     table_sizes=(HashSpec.table_sizes[0],) * (meta["max_ngram"] - 1))
        ]  # fmt: skip
        analysed = [resolve_spec(preset=base, **overrides) for base in bases]
        spec = analysed[0]
        analysed = analysed if recorded else []
    if (spec.max_ngram, spec.vocab_size, spec.pad_id) != (
        meta["max_ngram"],
        meta["vocab_size"],
        meta["pad_id"],
    ):
        raise UsageError("`spec_file` does not match the N, V' and pad the partial counts were made with")
    return _Source(
        "partial counts",
        names,
        [],
        table_vocab(()),
        spec,
        meta["boundary"],
        None,
        meta,
        paths,
        tuple(analysed),
    )


def _index_source(path: str) -> _Source:
    """An index or merged dataset: its tokens, lookup table, spec and boundary policy."""
    index = open_index(path)
    manifest = index.manifest
    meta = {
        "max_ngram": index.spec.max_ngram,
        "vocab_size": index.spec.vocab_size,
        "pad_id": index.spec.pad_id,
        "boundary": manifest["boundary"],
        "vocab_fingerprint": manifest["vocab"]["fingerprint"],
        "tokenizer": manifest["tokenizer"].get("name"),
        "tokenizer_fingerprint": manifest["tokenizer"].get("fingerprint"),
    }
    if "tokenization" in manifest:
        meta["tokenization"] = manifest["tokenization"]
    return _Source(
        index.kind,
        [path],
        (iter_index_chunks(shard) for shard in index.shards),  # each shard its own stream, opened in turn
        table_vocab(index.lut),
        index.spec,
        manifest["boundary"],
        int(index.tokens.nbytes),
        meta,
        negative_ids=negative_ids_of(manifest),
    )


def _is_corpus(name: str, reading: dict[str, Any]) -> bool:
    """Whether a directory is read as a corpus (a ``datasets.save_to_disk`` directory)."""
    return input_form(name, reading["input_format"], reading["text_key"]) == "arrow"


def _looks_like_tokens(name: str) -> bool:
    """A token file by its suffix: .npy, .bin (nanoGPT, llm.c, Megatron) or .ds (datatrove)."""
    return format_of_suffix(name) is not None


def _refuse_given(values: dict[str, Any], applies: str) -> None:
    """Refuse the parameters given a value (not None, not False): they would do nothing here."""
    given = [name for name, value in values.items() if value not in (None, False)]
    if given:
        raise idle_parameters([f"`{name}`" for name in given], applies)


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

    for chunks in streams:  # streams after the limit are never opened
        if left <= 0:
            return
        yield cut(chunks)


def _count(
    source: _Source, streams: Iterable[Iterable[TokenChunk]], progress: Progress
) -> tuple[dict[int, NgramTypes], int, int, int, int]:
    """Count each independent stream's distinct n-grams and merge them (exact): (types, documents,
    tokens, skipped bad records, unsafe text cuts)."""
    parts, documents, tokens, hard_cuts, skipped = [], 0, 0, 0, 0
    progress.started(source.total_bytes, 1, "local")
    for chunks in streams:
        counter = NgramTypeCounter(source.spec, boundary=source.boundary)
        for _, chunk, canonical in canonical_chunks(chunks, source.vocab):
            counter.update(canonical, chunk.doc_starts)
            documents += int(chunk.doc_starts.shape[0])
            hard_cuts += chunk.hard_cuts
            skipped += chunk.skipped_records
            progress.advanced(chunk.nbytes, chunk.tokens.shape[0])
        parts.append(counter.result())
        tokens += counter.tokens
    return (parts[0] if len(parts) == 1 else merge_types(parts)), documents, tokens, skipped, hard_cuts
