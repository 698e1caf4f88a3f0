"""Hashing from Python: what ``ngramtool hash`` does, as two functions that return the index.

:func:`hash_files` hashes text files, JSONL or a token file into an index directory (or a pipe
stream, or one shard per input file) exactly as the command line does, byte for byte;
:func:`hash_texts` hashes documents given as Python strings (a list, a generator, an HF
``datasets`` column). Both return the written index, opened (memory-mapped).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .artifacts import IndexLike, open_index
from .executors import HashEvents, HashOutcome, HashRequest, run_hash
from .formats.checksum import DEFAULT_CHECKSUM
from .inputs import text_key_of
from .presets import PRESETS
from .spec import HashSpec

PathLike = str | Path


def hash_files(
    inputs: PathLike | Sequence[PathLike],
    output: PathLike | None = None,
    *,
    tokenizer: str | None = "cl100k_base",
    spec: HashSpec | str | None = None,
    tokens_file: PathLike | None = None,
    token_format: str | None = None,
    token_dtype: str | None = None,
    eos_id: int | None = None,
    vocab_size: int | None = None,
    no_compress: bool = False,
    max_ngram: int | None = None,
    heads: int | None = None,
    layer_ids: Sequence[int] | None = None,
    table_sizes: int | Sequence[int] | None = None,
    seed: int | None = None,
    pad_id: int | None = None,
    boundary: str = "none",
    special: str | None = None,
    add_eot: bool = False,
    eot_token: str | None = None,
    input_format: str | None = None,
    text_key: str | None = None,
    json_key: str | None = None,
    doc_sep: str | None = None,
    errors: str = "strict",
    rows: str = "stored",
    row_groups_per_shard: int | None = None,
    save_tokens: PathLike | None = None,
    save_format: str | None = None,
    workers: int | None = None,
    force: bool = False,
    backend: str = "auto",
    device: str | None = None,
    shard_index: int | None = None,
    num_shards: int | None = None,
    resume: bool = False,
    engine: str = "local",
    ray_address: str | None = None,
    no_space_check: bool = False,
    checksum: str = DEFAULT_CHECKSUM,
    events: HashEvents | None = None,
) -> IndexLike | list[IndexLike] | None:
    """Hash text files (or ``-`` for stdin, or glob patterns), or the ids of ``tokens_file``,
    into an index directory: what ``ngramtool hash`` does, with the same parameters.

    Args:
        inputs: corpus files: plain text, JSONL, either compressed (``.gz``, ``.bz2``, ``.xz``,
            ``.zst``), parquet, HF ``datasets.save_to_disk`` directories (docs/inputs.md); empty
            with ``tokens_file``.
        output: the index directory (default: the first input + ``.ngidx``); ``-``: a pipe stream
            on stdout; ``DIR/`` (or an existing directory that is empty or holds shards): one
            index shard per input file (``shard_index``/``num_shards``, ``resume``, ``engine``).
        tokenizer: a tiktoken name, a ``*.tiktoken`` file, an HF ``tokenizer.json`` or ``bytes``;
            None for a token file whose ids are canonical already, below ``vocab_size``.
        spec: the whole hash spec: a HashSpec, a preset name (``engram-demo``, ``engram-27b``,
            ``engram-40b``, ``tutorial``: the fields given override it) or a spec file's path.
            None: the fields given over HashSpec's defaults (:func:`ngramtool.resolve_spec`).
        tokens_file: hash the ids of this token file (``.npy``, nanoGPT, llm.c or Megatron
            ``.bin``, datatrove ``.ds``) instead of text; ``inputs`` must then be empty.
        token_format: the token file's format (default: detected from its name and header).
        vocab_size: V' of a token file whose ids are canonical already (``tokenizer=None``).
        no_compress: hash raw ids (the identity vocabulary) instead of canonical ids.
        max_ngram: N, the largest n-gram order; orders 2..N are hashed.
        heads: K, hash heads per order.
        layer_ids: the Engram layers, one table each.
        table_sizes: the base table size per order 2..N, or one size for every order.
        seed: the global seed of the multipliers.
        pad_id: the id before a stream (or document) start, as a raw id of the tokenizer;
            default: its pad or end-of-text id.
        boundary: ``none`` pads only at the stream start (Engram); ``reset`` at every document.
        special: which special-token strings in the text become their ids: ``none``, ``all``
            or names separated by commas; None: what the tokenizer library does.
        add_eot: append the tokenizer's end-of-sequence token after each document.
        eot_token: the token ``add_eot`` appends (default: from the tokenizer's configuration).
        input_format: the form of every input (``text``, ``jsonl``, ``parquet``, ``arrow``);
            default: from each input's name.
        text_key: the key (JSONL) or column (parquet, datasets) that holds the text; default
            ``text``. Naming it reads inputs of no known form as JSONL.
        json_key: the same as ``text_key`` (its older name).
        doc_sep: plain text: this literal string separates documents.
        errors: bad input: stop (``strict``), replace invalid UTF-8 by U+FFFD (``replace``), or
            skip and count bad records (``skip``, records only).
        token_dtype: a headerless token file's dtype (``uint16`` or ``uint32``;
            ``token_format="raw"``).
        eos_id: the id that ends each document of a token file that records no documents.
        row_groups_per_shard: a sharded run splits a parquet file with more row groups into
            shards of this many.
        rows: ``stored`` (``rows.npy``) or ``lazy``: a tokens-only index (at most 5 bytes per
            token) whose rows are computed from its tokens when read, byte for byte the same.
        save_tokens: also write the raw ids as a token file at this path.
        save_format: its format (``npy``, ``nanogpt``, ``llmc``, ``megatron``, ``datatrove``;
            default: from the suffix).
        workers: tokenizer threads (default: all cores); the ids never depend on it.
        force: replace existing outputs.
        backend: what computes the rows (``auto``, ``numba``, ``numpy``, ``torch``,
            ``triton``); every backend gives the same rows.
        device: where the hash runs (``cpu``, ``cuda``, ``cuda:N``); None: ``cpu`` for ``auto``,
            else the backend's first usable device.
        shard_index: with ``num_shards``, hash only this worker's share of the inputs.
        num_shards: the number of workers sharing a sharded run (default: from ``RANK`` and
            ``WORLD_SIZE``, or ``SLURM_ARRAY_*``).
        resume: skip the shards already finished with the same settings.
        engine: ``local``, or ``ray`` to run the shards as Ray tasks.
        ray_address: the Ray cluster (``auto``, ``ray://...``, ``HOST:PORT``) for ``engine="ray"``;
            None: ``RAY_ADDRESS``, else a local Ray instance.
        no_space_check: start even when the outputs' estimated size (from the input size and the
            spec) exceeds the free space of their file systems; by default such a run is
            refused before it starts.
        checksum: the outputs' data checksum, ``"xxh3-128"`` (fast, for integrity) or
            ``"sha256"`` (cryptographic); see docs/formats.md.
        events: receives progress (see :class:`ngramtool.executors.HashEvents`).

    Returns:
        The index, opened; for a sharded run the list of this worker's shards; None for a stream.

    Examples:
        >>> import ngramtool
        >>> index = ngramtool.hash_files(["corpus.txt"], "out.ngidx", tokenizer="cl100k_base", force=True)
        >>> len(index), index.rows.shape, index.doc_offsets.tolist()
        (158122, (158122, 2, 16), [0, 158122])
        >>> small = ngramtool.hash_files("corpus.txt", "small.ngidx", heads=2, table_sizes=4099, force=True)
        >>> small.spec.heads, small.rows.shape
        (2, (158122, 2, 4))
        >>> lazy = ngramtool.hash_files("corpus.txt", "lazy.ngidx", rows="lazy", force=True)  # no rows.npy
        >>> lazy.stores_rows, bool((lazy.rows[1000:1512] == index.rows[1000:1512]).all())
        (False, True)
    """
    names = [inputs] if isinstance(inputs, str | Path) else list(inputs)
    request = _request(
        spec,
        inputs=tuple(str(name) for name in names),
        output=None if output is None else str(output),
        tokens_file=None if tokens_file is None else str(tokens_file),
        token_format=token_format,
        token_dtype=token_dtype,
        eos_id=eos_id,
        tokenizer=tokenizer,
        no_compress=no_compress,
        vocab_size=vocab_size,
        max_ngram=max_ngram,
        heads=heads,
        layer_ids=None if layer_ids is None else tuple(layer_ids),
        table_sizes=_tables(table_sizes),
        seed=seed,
        pad_id=pad_id,
        boundary=boundary,
        special=special,
        add_eot=add_eot,
        eot_token=eot_token,
        input_format=input_format,
        text_key=text_key_of(text_key, json_key),
        doc_sep=doc_sep,
        errors=errors,
        rows=rows,
        row_groups_per_shard=row_groups_per_shard,
        save_tokens=None if save_tokens is None else str(save_tokens),
        save_format=save_format,
        workers=workers,
        force=force,
        backend=backend,
        device=device,
        shard_index=shard_index,
        num_shards=num_shards,
        resume=resume,
        engine=engine,
        ray_address=ray_address,
        no_space_check=no_space_check,
        checksum=checksum,
    )
    return _opened(run_hash(request, events))


def hash_texts(
    texts: Iterable[str],
    output: PathLike,
    *,
    tokenizer: str = "cl100k_base",
    spec: HashSpec | str | None = None,
    no_compress: bool = False,
    max_ngram: int | None = None,
    heads: int | None = None,
    layer_ids: Sequence[int] | None = None,
    table_sizes: int | Sequence[int] | None = None,
    seed: int | None = None,
    pad_id: int | None = None,
    boundary: str = "none",
    special: str | None = None,
    add_eot: bool = False,
    eot_token: str | None = None,
    rows: str = "stored",
    workers: int | None = None,
    force: bool = False,
    backend: str = "auto",
    device: str | None = None,
    checksum: str = DEFAULT_CHECKSUM,
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
        >>> index = ngramtool.hash_texts(docs, "texts.ngidx", boundary="reset", force=True)
        >>> index.tokens.tolist(), index.doc_offsets.tolist()
        ([1820, 8415, 7731, 263, 279, 5634], [0, 3, 6])

    Args:
        texts: the documents, one string each.
        output: the index directory, or ``-`` for a pipe stream on stdout.
    """
    request = _request(
        spec,
        output=str(output),
        tokenizer=tokenizer,
        no_compress=no_compress,
        max_ngram=max_ngram,
        heads=heads,
        layer_ids=None if layer_ids is None else tuple(layer_ids),
        table_sizes=_tables(table_sizes),
        seed=seed,
        pad_id=pad_id,
        boundary=boundary,
        special=special,
        add_eot=add_eot,
        eot_token=eot_token,
        rows=rows,
        workers=workers,
        force=force,
        backend=backend,
        device=device,
        checksum=checksum,
    )
    opened = _opened(run_hash(request, events, documents=texts))
    assert not isinstance(opened, list)  # strings make one output
    return opened


def _request(spec: HashSpec | str | None, **fields: Any) -> HashRequest:
    """The request of the given fields, with ``spec`` as a HashSpec, a preset or a spec file."""
    if isinstance(spec, HashSpec):
        return HashRequest(spec=spec, **fields)
    if isinstance(spec, str) and spec in PRESETS:
        return HashRequest(preset=spec, **fields)
    return HashRequest(spec_file=None if spec is None else str(spec), **fields)


def _tables(sizes: int | Sequence[int] | None) -> tuple[int, ...] | None:
    """Table sizes as a tuple (one size applies to every order)."""
    if sizes is None:
        return None
    return (sizes,) if isinstance(sizes, int) else tuple(sizes)


def _opened(outcome: HashOutcome) -> IndexLike | list[IndexLike] | None:
    """The outputs of a run, opened: a sharded run's list (finished before or now, in input
    order), one index, or None for a stream."""
    outputs = outcome.plan.outputs if outcome.plan is not None else ()
    if outcome.sharded:
        return [open_index(output) for output in outputs]
    return None if outputs == ("-",) else open_index(outputs[0])
