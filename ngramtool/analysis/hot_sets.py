"""Hot sets: the rows a static cache pins, handed out as a file an engine preloads (``cache
--export-hot``) and replayed against another corpus (``cache --hot``).

A hot set file is an uncompressed ``.npz`` (numpy's zip of ``.npy`` arrays; no pickles):

- ``layer_<id>_rows`` (int64): the rows of Engram layer ``<id>``'s table, in that table's own
  numbering (what the engine indexes its ``[rows, dim]`` tensor with), most read first;
- ``layer_<id>_reads`` (int64): how often each was read on the corpus measured;
- ``manifest``: a JSON string: ``format`` (``ngramtool-hot-set``), ``version``, the spec (its
  fingerprint and fields), the tokenizer, the corpus (files and their sizes), the tokens and
  reads measured, the budget (rows and bytes), the row size, the split and the static hit rate
  the set gives on that corpus.

docs/analysis.md ("The hot set, handed out") shows an engine loading one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..spec.hashspec import HashSpec
from ..util.atomic import staged_file
from ..util.errors import NgramToolError, UsageError

FORMAT = "ngramtool-hot-set"
VERSION = 1


@dataclass(frozen=True)
class HotSet:
    """Rows to preload, per Engram layer (layer ids in the spec's order), with their reads on the
    corpus measured, and the manifest that says what they were measured on."""

    layers: tuple[int, ...]
    rows: tuple[np.ndarray, ...]
    reads: tuple[np.ndarray, ...]
    manifest: dict[str, Any]

    @property
    def size(self) -> int:
        """Rows in the set, all layers together."""
        return sum(int(rows.shape[0]) for rows in self.rows)

    def summary(self) -> dict[str, Any]:
        """What ``--json`` says about the set: its rows per layer, budget and static hit rate."""
        return {
            "rows": self.size,
            "rows_per_layer": {
                str(layer): int(rows.shape[0]) for layer, rows in zip(self.layers, self.rows, strict=True)
            },
            "budget": self.manifest["budget"],
            "static_hit_rate": self.manifest["static_hit_rate"],
        }

    def member_bits(self, spec: HashSpec) -> np.ndarray:
        """A bitmap over the keys of ``spec`` (each layer's rows numbered after the earlier
        layers'): the bit of every row in the set is set."""
        offsets = _layer_offsets(spec)
        bits = np.zeros((int(spec.rows_per_layer.sum()) + 7) // 8, dtype=np.uint8)
        for layer, rows in zip(self.layers, self.rows, strict=True):
            keys = rows + offsets[spec.layer_ids.index(layer)]
            np.bitwise_or.at(bits, keys >> 3, (1 << (keys & 7)).astype(np.uint8))
        return bits


def _layer_offsets(spec: HashSpec) -> np.ndarray:
    """Where each layer's rows start among the keys: the rows of the layers before it."""
    return np.concatenate([[0], np.cumsum(spec.rows_per_layer)[:-1]]).astype(np.int64)


def hot_set(
    keys: np.ndarray, reads: np.ndarray, spec: HashSpec, rows: int, manifest: dict[str, Any]
) -> HotSet:
    """The ``rows`` most read of ``keys`` (ties: the lower key first), by layer, most read first."""
    order = np.lexsort((keys, -reads))[:rows]
    chosen, counts = keys[order], reads[order]
    offsets = _layer_offsets(spec)
    layer = np.searchsorted(offsets, chosen, side="right") - 1
    return HotSet(
        layers=tuple(spec.layer_ids),
        rows=tuple(chosen[layer == i] - offsets[i] for i in range(spec.num_layers)),
        reads=tuple(counts[layer == i] for i in range(spec.num_layers)),
        manifest=manifest,
    )


def save_hot_set(hot: HotSet, path: str | Path) -> None:
    """Write ``hot`` to ``path`` (an ``.npz``), beside it and renamed into place."""
    arrays: dict[str, np.ndarray] = {"manifest": np.array(json.dumps(hot.manifest, sort_keys=True))}
    for layer, rows, reads in zip(hot.layers, hot.rows, hot.reads, strict=True):
        arrays[f"layer_{layer}_rows"] = rows.astype(np.int64)
        arrays[f"layer_{layer}_reads"] = reads.astype(np.int64)
    try:
        with staged_file(path) as tmp, tmp.open("wb") as handle:
            np.savez(handle, **arrays)
    except OSError as exc:
        raise NgramToolError(f"cannot write the hot set {path}: {exc.strerror}") from None


def load_hot_set(path: str | Path) -> HotSet:
    """The hot set saved in ``path``; a one-line error for anything else."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"`hot` {path}: no such file (a hot set is written by ngramtool cache --export-hot)")
    try:
        with np.load(path, allow_pickle=False) as data:
            manifest = json.loads(str(data["manifest"]))
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                raise ValueError("not a hot set")
            if manifest.get("version") != VERSION:
                raise NgramToolError(
                    f"{path} is hot set format version {manifest.get('version')}; this ngramtool reads "
                    f"version {VERSION}: export it again"
                )
            layers = tuple(int(layer) for layer in manifest["layers"])
            rows = tuple(np.asarray(data[f"layer_{layer}_rows"], dtype=np.int64) for layer in layers)
            reads = tuple(np.asarray(data[f"layer_{layer}_reads"], dtype=np.int64) for layer in layers)
    except NgramToolError:
        raise
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError, EOFError):
        raise NgramToolError(
            f"{path} is not a readable hot set file (written by ngramtool cache --export-hot)"
        ) from None
    return HotSet(layers, rows, reads, manifest)


def check_spec(hot: HotSet, spec: HashSpec, where: str) -> None:
    """A usage error unless ``hot`` was measured with ``spec`` (its rows are that spec's)."""
    if hot.manifest.get("spec_fingerprint") != spec.fingerprint:
        raise UsageError(
            f"`hot` {where} was measured with spec {str(hot.manifest.get('spec_fingerprint'))[:16]} but "
            f"this input hashes with spec {spec.fingerprint[:16]}: its row ids are another table's; "
            "measure both with the same spec (preset, table sizes, tokenizer)"
        )
