"""Reports of what things hold, as plain JSON values: an index, a merged dataset, a pipe stream or
a token file (:func:`describe_path`, ``ngramtool inspect``), and a tokenizer's compressed
vocabulary (:func:`describe_vocab`, ``ngramtool vocab``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from ..formats.artifacts import Kind, detect, expect_kind, open_index
from ..formats.index import MANIFEST, Index
from ..formats.npy import atomic_npy
from ..formats.stream import StreamReader, read_stream
from ..formats.tokenfiles import open_token_file
from ..spec.hashspec import HashSpec
from ..tokenizers import load_tokenizer, tokenizer_record
from ..tokenizers.vocab import build_vocab, vocab_record
from ..util.atomic import check_output_file

_MANIFEST_KEYS = (
    "format",
    "format_version",
    "tool_version",
    "created",
    "num_tokens",
    "num_documents",
    "tokenizer",
    "vocab",
    "boundary",
    "tokenization",
    "sources",
)


def describe_path(path: str | Path, rows: int = 3, token_format: str | None = None) -> dict[str, Any]:
    """What ``path`` holds (``-``: a stream on stdin): its manifest, spec and first ``rows`` rows
    for an index, a dataset or a stream; format, dtype, counts and first ids for a token file
    (read as ``token_format`` when given).

    >>> from ngramtool.tools.describe import describe_path
    >>> report = describe_path("corpus.ngidx", rows=1)
    >>> report["kind"], report["num_tokens"], report["spec"]["tables_per_layer"]
    ('index', 158122, 16)
    >>> report["first"][0]["token"]
    5291
    """
    if str(path) == "-":
        return _describe_stream(read_stream(sys.stdin.buffer), "-", rows)
    kind = detect(path)
    if kind is not Kind.TEXT:  # any other file is read as a token file (its format named or detected)
        expect_kind(path, [Kind.INDEX, Kind.DATASET, Kind.STREAM, Kind.TOKEN_FILE])
    if kind in (Kind.INDEX, Kind.DATASET):
        index = open_index(path)
        report = _description(index.manifest, index.spec)
        report.update(kind=index.kind, path=str(path))
        report["rows_storage"] = "stored" if index.stores_rows else "lazy"
        if index.kind == "dataset":
            report["shards"] = index.manifest["shards"]
        else:
            report["arrays"] = index.manifest["arrays"]
            report["bytes_on_disk"] = _bytes_on_disk(index.shards[0])
        report["first"] = _first_rows(np.asarray(index.tokens[:rows]), np.asarray(index.rows[:rows]))
        return report
    if kind is Kind.STREAM and token_format is None:
        with Path(path).open("rb") as source:
            return _describe_stream(read_stream(source), str(path), rows)
    token_file = open_token_file(path, token_format)
    return {
        "kind": "token file",
        **token_file.describe(),
        "first_tokens": np.asarray(token_file.tokens[: max(rows, 16)]).tolist(),
    }


def _bytes_on_disk(index: Index) -> dict[str, Any]:
    """The bytes of an index's files: in all, of its lookup table (one per vocabulary, shared by
    the shards of a sharded run), and per token without the table."""
    files = [index.path / MANIFEST, *(index.array_path(name) for name in index.manifest["arrays"])]
    total = sum(file.stat().st_size for file in files)
    table = index.array_path("lut").stat().st_size
    return {
        "total": total,
        "lookup_table": table,
        "per_token": round((total - table) / len(index), 3) if len(index) else None,
    }


def _describe_stream(reader: StreamReader, path: str, rows: int) -> dict[str, Any]:
    """A stream's report: it is read to its end (which checks it) for the counts; it carries its
    rows (``rows_storage`` is ``stored``), in ``stream.chunks`` frames."""
    first_tokens, first_rows = [], []
    for chunk in reader:
        have = sum(len(t) for t in first_tokens)
        if have < rows:
            first_tokens.append(chunk.tokens[: rows - have])
            first_rows.append(chunk.rows[: rows - have])
    report = _description(reader.manifest, reader.spec)
    report.update(kind="stream", path=path, num_tokens=reader.num_tokens, num_documents=reader.num_documents)
    report["rows_storage"] = "stored"
    report["stream"] = {"chunks": reader.chunks, "checksum": reader.checksum}
    if first_tokens:
        report["first"] = _first_rows(np.concatenate(first_tokens), np.concatenate(first_rows))
    else:
        report["first"] = []
    return report


def _description(manifest: dict[str, Any], spec: HashSpec) -> dict[str, Any]:
    """The manifest fields every report shows, and the spec with its derived sizes."""
    report = {key: manifest.get(key) for key in _MANIFEST_KEYS}
    report["spec"] = {
        **spec.to_dict(),
        "fingerprint": spec.fingerprint,
        "tables_per_layer": (spec.max_ngram - 1) * spec.heads,
        "rows_per_layer": spec.rows_per_layer.tolist(),
        "row_dtype": spec.row_dtype.name,
    }
    return report


def _first_rows(tokens: np.ndarray, rows: np.ndarray) -> list[dict[str, Any]]:
    return [
        {"position": t, "token": int(tokens[t]), "rows": rows[t].tolist()} for t in range(tokens.shape[0])
    ]


def describe_vocab(
    tokenizer: str = "cl100k_base",
    *,
    no_compress: bool = False,
    top: int = 10,
    export: str | Path | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """A tokenizer's compressed vocabulary: V, V', the reduction, the ``top`` largest merge groups
    (their first 8 members); ``export`` also writes the lookup table (int64 [V], -1 = no token).

    >>> from ngramtool.tools.describe import describe_vocab
    >>> report = describe_vocab("cl100k_base", top=1)
    >>> report["vocab"]["size"], report["assigned_ids"], report["largest_groups"][0]["key"]
    (62330, 100261, ' ')
    """
    if export is not None:
        check_output_file(export, force, what="`export` file")
    tok = load_tokenizer(tokenizer)
    vocab = build_vocab(tok, compress=not no_compress)
    groups = []
    for canonical, members in vocab.merge_groups(top if vocab.compressed else 0):
        groups.append(
            {
                "canonical_id": canonical,
                "key": vocab.keys[canonical],
                "size": len(members),
                "members": [
                    {"raw_id": m, "text": tok.token_bytes(m).decode("utf-8", "replace")} for m in members[:8]
                ],
            }
        )
    if export is not None:
        with atomic_npy(Path(export), vocab.lut.dtype) as writer:
            writer.append(vocab.lut)
    return {
        "tokenizer": tokenizer_record(tok),
        "vocab": vocab_record(vocab),
        "assigned_ids": vocab.assigned,
        "reduction": round(vocab.reduction, 6),
        "largest_groups": groups,
        "exported": str(export) if export else None,
    }
