"""Saved n-gram type counts: the distinct n-grams of one shard, saved, loaded and merged exactly.

The distinct n-grams of several independent streams (the shards of a sharded run) are the union
of each stream's distinct n-grams, with occurrence counts added. Counting each shard where it
lives (``ngramtool collisions SHARD --save-types part.ngtypes.npz``) and merging the parts
(``ngramtool collisions part*.ngtypes.npz``) therefore gives exactly the single-machine answer.
Distinct n-grams do not depend on table sizes; a part still records the spec(s) its run analysed
(``spec``: one spec, or a list for a sweep of table sizes), which the merge analyses again unless
told otherwise, so parts that recorded different specs are refused rather than merged in an order
that would pick one of them.

A part also records how its ids were made: the tokenizer's fingerprint, the vocabulary's, the
boundary policy and the tokenization (the ``tokenization`` record of index manifests). Parts that
differ in any of them are refused, asked of :func:`ngramtool.formats.settings.settings_difference`
as merging index shards is.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..formats.artifacts import TYPE_COUNTS_SUFFIX
from ..formats.settings import settings_difference
from ..spec.hashspec import HashSpec
from ..util.atomic import staged_file
from ..util.errors import NgramToolError, UsageError
from .counting import NgramTypes, _merge, key_codec

SUFFIX = TYPE_COUNTS_SUFFIX
FORMAT_NAME = "ngramtool-ngram-types"
# 2: the tokenizer's fingerprint and the tokenization are recorded.
FORMAT_VERSION = 2
# What the n-gram windows depend on: parts must agree on all of it to merge.
IDENTITY = ("max_ngram", "vocab_size", "pad_id", "boundary", "vocab_fingerprint")
# What parts must also agree on to merge: the spec(s) analysed, which the merge analyses again.
MERGED_ALIKE = ("max_ngram", "vocab_size", "pad_id", "spec")


def analysed_specs_record(specs: Sequence[HashSpec]) -> dict[str, Any] | list[dict[str, Any]]:
    """The analysed spec(s) as JSON: one spec's fields, or a list of them for a sweep of tables."""
    if len(specs) == 1:
        return specs[0].to_dict()
    return [spec.to_dict() for spec in specs]


def recorded_specs(meta: Mapping[str, Any]) -> list[HashSpec]:
    """The specs a part's ``spec`` record names (see :func:`analysed_specs_record`); empty when it
    has none."""
    record = meta.get("spec")
    if record is None:
        return []
    return [HashSpec.from_dict(fields) for fields in (record if isinstance(record, list) else [record])]


def merge_types(parts: Sequence[Mapping[int, NgramTypes]]) -> dict[int, NgramTypes]:
    """The union of several parts' distinct n-grams per order, counts added (exact)."""
    if not parts:
        raise UsageError("no partial counts to merge")
    merged: dict[int, NgramTypes] = {}
    for order in parts[0]:
        keys, counts = parts[0][order].keys, parts[0][order].counts  # fresh arrays
        for part in parts[1:]:
            keys, counts = _merge(keys, counts, part[order].keys, part[order].counts)
        merged[order] = NgramTypes.from_arrays(order, keys, counts, parts[0][order].codec)
    return merged


def save_types(path: Path, types: Mapping[int, NgramTypes], meta: Mapping[str, Any]) -> None:
    """Write one part (see :func:`write_types`) under a temporary name and rename it into place."""
    with staged_file(path) as tmp:
        write_types(tmp, types, meta)


def write_types(path: Path, types: Mapping[int, NgramTypes], meta: Mapping[str, Any]) -> None:
    """Write one part to ``path`` as it is: per order its sorted keys and counts, and ``meta``
    (see IDENTITY) as JSON.

    The file is an ``.npz`` archive (``keys_N``, ``counts_N``, ``meta``); the arrays are written a
    block at a time, so saving holds no more of them in memory than counting did.
    """
    missing = [key for key in IDENTITY if key not in meta]
    if missing:
        raise ValueError(f"partial counts need {missing} in their metadata")
    header = json.dumps({"format": FORMAT_NAME, "version": FORMAT_VERSION, **meta}).encode("utf-8")
    with zipfile.ZipFile(path, "w", allowZip64=True) as archive:
        for order, grams in types.items():
            _write_member(archive, f"keys_{order}", grams.codec.dtype, grams.types, grams.key_blocks())
            _write_member(archive, f"counts_{order}", np.dtype(np.int64), grams.types, grams.count_blocks())
        _write_member(
            archive, "meta", np.dtype(np.uint8), len(header), [np.frombuffer(header, dtype=np.uint8)]
        )


def _write_member(
    archive: zipfile.ZipFile, name: str, dtype: np.dtype, size: int, blocks: Iterable[np.ndarray]
) -> None:
    """One ``.npy`` member of ``size`` items of ``dtype``, its data written block by block."""
    with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
        np.lib.format.write_array_header_2_0(
            member, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (size,)}
        )
        for block in blocks:
            member.write(np.ascontiguousarray(block, dtype=dtype).data)


def load_types(path: Path) -> tuple[dict[int, NgramTypes], dict[str, Any]]:
    """Read one part written by :func:`save_types`: (types per order, metadata)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode("utf-8"))
            if meta.get("format") != FORMAT_NAME:
                raise NgramToolError(f"{path} is not a partial n-gram count file")
            types = {}
            for order in range(2, meta["max_ngram"] + 1):
                codec = key_codec(meta["vocab_size"], order)
                keys = data[f"keys_{order}"]
                if keys.dtype != codec.dtype:
                    raise NgramToolError(
                        f"{path}: keys of order {order} are {keys.dtype}, expected {codec.dtype}"
                    )
                types[order] = NgramTypes.from_arrays(order, keys, data[f"counts_{order}"], codec)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise NgramToolError(f"{path}: not a readable partial count file ({exc})") from None
    return types, meta


def load_and_merge(paths: Sequence[Path]) -> tuple[dict[int, NgramTypes], dict[str, Any]]:
    """Load parts, check they count the same windows, merge; meta sums tokens, documents and
    skipped records."""
    parts, metas = [], []
    for path in paths:
        types, meta = load_types(path)
        parts.append(types)
        metas.append(meta)
    first = metas[0]
    for path, meta in zip(paths[1:], metas[1:], strict=True):
        settings = settings_difference(_settings(first), _settings(meta))
        if settings is not None:
            raise UsageError(
                f"{path} was counted with another {settings.setting} than {paths[0]} ({settings.theirs} vs "
                f"{settings.ours}): cannot merge; count every part the same way"
            )
        differ = [key for key in MERGED_ALIKE if meta.get(key) != first.get(key)]
        if differ:
            hint = " (give every shard the same spec options and `table_sizes`)" if "spec" in differ else ""
            raise UsageError(
                f"{path} was counted with another {', '.join(differ)} than {paths[0]}: cannot merge{hint}"
            )
    merged_meta = {
        **first,
        "tokens": sum(m.get("tokens", 0) for m in metas),
        "documents": sum(m.get("documents", 0) for m in metas),
        "skipped_records": sum(m.get("skipped_records", 0) for m in metas),
        "parts": [str(p) for p in paths],
    }
    return merge_types(parts), merged_meta


def _settings(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A part's settings as :func:`settings_difference` reads a manifest's (the spec analysed is
    compared on its own: parts of one sweep share the windows, not one spec)."""
    settings = {
        "tokenizer": {"fingerprint": meta.get("tokenizer_fingerprint")},
        "vocab": {"fingerprint": meta["vocab_fingerprint"]},
        "spec": {"fingerprint": None},
        "boundary": meta["boundary"],
    }
    if "tokenization" in meta:
        settings["tokenization"] = meta["tokenization"]
    return settings
