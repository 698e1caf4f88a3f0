"""Hashing from Python: what ``ngramtool hash`` does, as two functions that return the index.

:func:`hash_files` hashes text files, JSONL or a token file into an index directory (or a pipe
stream, or one shard per input file) exactly as the command line does, byte for byte;
:func:`hash_texts` hashes documents given as Python strings (a list, a generator, an HF
``datasets`` column). Both take the source, the output, an :class:`~ngramtool.NgramHashMapping`
and the option groups (:class:`~ngramtool.OutputOptions`, :class:`~ngramtool.RunOptions`), and
return the written index, opened (memory-mapped).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from .formats.artifacts import IndexLike, open_index
from .inputs.sources import CorpusReader, Source, TokenFileReader
from .model.mapping import NgramHashMapping
from .run.executors import HashEvents, HashOutcome, run_hash
from .run.request import HashRequest, OutputOptions, RunOptions

PathLike = str | Path


def hash_files(
    source: PathLike | Sequence[PathLike] | CorpusReader | TokenFileReader,
    output: PathLike | None = None,
    *,
    mapping: NgramHashMapping | None = None,
    boundary: str = "none",
    outputs: OutputOptions | None = None,
    run: RunOptions | None = None,
    events: HashEvents | None = None,
) -> IndexLike | list[IndexLike] | None:
    """Hash text files (or ``-`` for stdin, or glob patterns), or the ids of a token file, into an
    index directory: what ``ngramtool hash`` does, byte for byte.

    Args:
        source: corpus files (plain text, JSONL, either compressed: ``.gz``, ``.bz2``, ``.xz``,
            ``.zst``; parquet; HF ``datasets.save_to_disk`` directories: docs/inputs.md) as paths
            or a :class:`~ngramtool.CorpusReader` with reading options (``text_key``,
            ``errors``, ``add_eot``, ...), or a :class:`~ngramtool.TokenFileReader` (``.npy``,
            nanoGPT, llm.c or Megatron ``.bin``, datatrove ``.ds``).
        output: the index directory (default: the first input + ``.ngidx``); ``-``: a pipe stream
            on stdout; ``DIR/`` (or an existing directory that is empty or holds shards): one
            index shard per input file (see ``run``).
        mapping: the tokenizer, its vocabulary and the hash spec
            (:meth:`ngramtool.NgramHashMapping.build`); None: cl100k_base and the default spec
            (for a token file: its ids are taken to be cl100k_base's).
        boundary: ``none`` pads only at the stream start (Engram); ``reset`` at every document.
        outputs: what is written and how (:class:`~ngramtool.OutputOptions`: ``rows="lazy"``,
            ``checksum``, ``save_tokens``, ``force``, ...).
        run: where and how the work runs (:class:`~ngramtool.RunOptions`: ``workers``,
            ``backend``, ``device``, shards, ``resume``, ``engine="ray"``, ...).
        events: receives progress (see :class:`ngramtool.run.executors.HashEvents`).

    Returns:
        The index, opened; for a sharded run the list of this worker's shards; None for a stream.

    Examples:
        >>> import ngramtool
        >>> from ngramtool import NgramHashMapping, OutputOptions
        >>> replace = OutputOptions(force=True)
        >>> index = ngramtool.hash_files(["corpus.txt"], "out.ngidx", outputs=replace)
        >>> len(index), index.rows.shape, index.doc_offsets.tolist()
        (158122, (158122, 2, 16), [0, 158122])
        >>> small_spec = NgramHashMapping.build("cl100k_base", heads=2, table_sizes=4099)
        >>> small = ngramtool.hash_files("corpus.txt", "small.ngidx", mapping=small_spec, outputs=replace)
        >>> small.spec.heads, small.rows.shape
        (2, (158122, 2, 4))
        >>> lazy_rows = OutputOptions(rows="lazy", force=True)  # no rows.npy: computed when read
        >>> lazy = ngramtool.hash_files("corpus.txt", "lazy.ngidx", outputs=lazy_rows)
        >>> lazy.stores_rows, bool((lazy.rows[1000:1512] == index.rows[1000:1512]).all())
        (False, True)
    """
    request = HashRequest(
        _source(source),
        None if output is None else str(output),
        mapping,
        boundary,
        outputs or OutputOptions(),
        run or RunOptions(),
    )
    return _opened(run_hash(request, events))


def hash_texts(
    texts: Iterable[str],
    output: PathLike,
    *,
    mapping: NgramHashMapping | None = None,
    boundary: str = "none",
    add_eot: bool = False,
    eot_token: str | None = None,
    outputs: OutputOptions | None = None,
    run: RunOptions | None = None,
    events: HashEvents | None = None,
) -> IndexLike | None:
    """Hash documents given as Python strings into one index directory (``-``: a pipe stream on
    stdout), each string one document; the other parameters are :func:`hash_files`'.

    The strings are read once, in order, a bounded number at a time: any iterable works (a list, a
    generator, an HF ``datasets`` column or stream). The rows equal those of hashing the same
    documents from a JSONL file.

    Examples:
        >>> import ngramtool
        >>> docs = (line for line in ["the cat sat", "on the mat"])
        >>> replace = ngramtool.OutputOptions(force=True)
        >>> index = ngramtool.hash_texts(docs, "texts.ngidx", boundary="reset", outputs=replace)
        >>> index.tokens.tolist(), index.doc_offsets.tolist()
        ([1820, 8415, 7731, 263, 279, 5634], [0, 3, 6])

    Args:
        texts: the documents, one string each.
        output: the index directory, or ``-`` for a pipe stream on stdout.
        add_eot: append the tokenizer's end-of-sequence token after each document.
        eot_token: the token ``add_eot`` appends (None: from the tokenizer's configuration).
    """
    request = HashRequest(
        CorpusReader((), add_eot=add_eot, eot_token=eot_token),
        str(output),
        mapping,
        boundary,
        outputs or OutputOptions(),
        run or RunOptions(),
    )
    opened = _opened(run_hash(request, events, documents=texts))
    assert not isinstance(opened, list)  # strings make one output
    return opened


def _source(source: PathLike | Sequence[PathLike] | Source) -> Source:
    """The reader of ``source``: paths become a :class:`CorpusReader` with default options."""
    if isinstance(source, CorpusReader | TokenFileReader):
        return source
    return CorpusReader((source,) if isinstance(source, str | Path) else tuple(source))


def _opened(outcome: HashOutcome) -> IndexLike | list[IndexLike] | None:
    """The outputs of a run, opened: a sharded run's list (finished before or now, in input
    order), one index, or None for a stream."""
    outputs = outcome.plan.outputs
    if outcome.plan.sharded:
        return [open_index(output) for output in outputs]
    return None if outputs == ("-",) else open_index(outputs[0])
