"""Constants a checkpoint stores (Qwen3.8's ``ple_embedding.*``): read, not derived.

A spec of family ``stored`` carries :class:`StoredConstants`: per layer, the multipliers by lag
(the current token at lag 0, as Engram), each column's table size and offset, and the rows of the
layer's table (the sum of its sizes, or more where the checkpoint pads its table, e.g. to a
multiple of 128). :func:`read_stored_constants` reads them from a safetensors checkpoint (or an
``.npz`` / JSON file of the same names).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...util.errors import NgramToolError, UsageError

Matrix = tuple[tuple[int, ...], ...]

TENSOR_NAMES = {
    "multipliers": "ple_embedding.layer_multipliers",
    "table_sizes": "ple_embedding.ngram_heads_vocab_sizes",
    "offsets": "ple_embedding.ngram_heads_offsets",
}
"""Where Qwen3.8-Flash-Next's checkpoint keeps each constant (I64 tensors)."""


def _matrix(value: Any, name: str) -> Matrix:
    """A rectangular integer matrix as nested tuples; a usage error names ``name`` otherwise."""
    array = np.asarray(value)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.size == 0 or not np.issubdtype(array.dtype, np.integer):
        raise UsageError(
            f"stored `{name}` must be a non-empty integer matrix [layers, values] (got {value!r})"
        )
    return tuple(tuple(int(x) for x in row) for row in array.tolist())


@dataclass(frozen=True)
class StoredConstants:
    """A checkpoint's hash constants, per layer: ``multipliers`` (``[L, N]``) by lag, ``table_sizes``
    and ``offsets`` (``[L, C]``) by column ((n-2)*K + h), ``rows`` (``[L]``) the height of each
    layer's table.

    ``module_indices`` and ``seed_indices`` (Qwen3.8, when read from a config): each layer's module
    index (``ple_layer_ids: [2]`` is ``layers.1.ple``, the ids are 1-based) and the index its
    multipliers and tables were generated with (its position in ``ple_layer_ids``). They describe
    the constants and change no row, so the spec's fingerprint leaves them out.
    """

    multipliers: Matrix
    table_sizes: Matrix
    offsets: Matrix
    rows: tuple[int, ...]
    module_indices: tuple[int, ...] | None = None
    seed_indices: tuple[int, ...] | None = None

    def __repr__(self) -> str:
        """One line: the layers, columns and rows (the constants themselves are in :meth:`to_dict`)."""
        columns = len(self.table_sizes[0]) if self.table_sizes else 0
        return f"<StoredConstants layers={len(self.rows)} columns={columns} rows={list(self.rows)}>"

    def __post_init__(self) -> None:
        for name in ("multipliers", "table_sizes", "offsets"):
            object.__setattr__(self, name, _matrix(getattr(self, name), name))
        object.__setattr__(self, "rows", tuple(int(x) for x in self.rows))
        for name in ("module_indices", "seed_indices"):
            value = getattr(self, name)
            if value is None:
                continue
            if (
                not isinstance(value, list | tuple)
                or len(value) != len(self.rows)
                or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in value)
            ):
                raise UsageError(
                    f"stored `{name}` must be one index >= 0 per layer ({len(self.rows)}), got {value!r}"
                )
            object.__setattr__(self, name, tuple(value))

    def numbered(self, module_indices: Sequence[int], seed_indices: Sequence[int]) -> StoredConstants:
        """These constants with each layer's module index and seed index recorded."""
        return replace(self, module_indices=tuple(module_indices), seed_indices=tuple(seed_indices))

    @classmethod
    def from_arrays(
        cls, multipliers: Any, table_sizes: Any, offsets: Any, *, row_multiple: int = 1
    ) -> StoredConstants:
        """The constants of three arrays, each layer's rows the end of its last sub-table rounded
        up to ``row_multiple`` (the checkpoint's padding; 1: none)."""
        if row_multiple < 1:
            raise UsageError(f"`row_multiple` must be at least 1 (got {row_multiple})")
        ends = np.asarray(offsets, dtype=np.int64) + np.asarray(table_sizes, dtype=np.int64)
        ends = ends.reshape(-1, ends.shape[-1]).max(axis=1)
        rows = tuple(int(-(-int(end) // row_multiple) * row_multiple) for end in ends)
        return cls(multipliers, table_sizes, offsets, rows)

    def to_dict(self, *, numbering: bool = True) -> dict[str, Any]:
        """Plain JSON types; ``numbering``: with the layer numbers when they are recorded."""
        record: dict[str, Any] = {
            "multipliers": [list(row) for row in self.multipliers],
            "table_sizes": [list(row) for row in self.table_sizes],
            "offsets": [list(row) for row in self.offsets],
            "rows": list(self.rows),
        }
        for name in NUMBERING if numbering else ():
            if getattr(self, name) is not None:
                record[name] = list(getattr(self, name))
        return record

    @classmethod
    def from_dict(cls, data: Any) -> StoredConstants:
        """Inverse of :meth:`to_dict`; missing or unknown keys are an error."""
        keys = {"multipliers", "table_sizes", "offsets", "rows"}
        if not isinstance(data, dict) or not keys <= set(data) <= keys | set(NUMBERING):
            raise UsageError(
                f"stored constants must be an object with exactly the keys {sorted(keys)} "
                f"(and optionally {', '.join(NUMBERING)})"
            )
        return cls(**data)


NUMBERING = ("module_indices", "seed_indices")
"""The layer numbers a spec records beside stored constants (Qwen3.8): descriptive, not hashed."""

# ---------------------------------------------------------------- Qwen3.8's generator
_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_LAYER_SEED_PRIME = 10007
INT64_MAX = (1 << 63) - 1


def _splitmix64(value: int) -> int:
    """splitmix64's output for the state ``value`` (the state advanced by gamma, then mixed)."""
    value = (value + _GAMMA) & _MASK64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK64
    return value ^ (value >> 31)


def qwen_multipliers(vocab_size: int, max_ngram: int, index: int, seed: int) -> tuple[int, ...]:
    """The multipliers Qwen3.8's ``ple`` module generates for the layer of ``index`` (its position
    in ``ple_layer_ids``, per transformers' Qwen4Exp model and Megatron-LM's Qwen variant):
    ``2 (splitmix64(seed + 10007 index + gamma (k + 1)) mod h) + 1`` for lag k, ``h`` half of
    ``(2^63 - 1) // V`` (at least 1), V the raw vocabulary.

    >>> qwen_multipliers(248320, 3, 0, 0)[0] % 2
    1
    """
    half_bound = max(1, (INT64_MAX // max(vocab_size, 1)) // 2)
    base = seed + _LAYER_SEED_PRIME * index
    return tuple(
        2 * (_splitmix64((base + _GAMMA * (k + 1)) & _MASK64) % half_bound) + 1 for k in range(max_ngram)
    )


@dataclass(frozen=True)
class LayerReading:
    """One way to read a config's layer number ``config_id`` (a 1-based id of ``ple_layer_ids``)
    as the index Qwen3.8's generator is seeded with: ``position`` (its place in the list, what
    the model does), ``module`` (``config_id - 1``, the module's index in ``layers``) or
    ``config`` (the id itself)."""

    name: str
    indices: tuple[int, ...]


READING_WORDS = {
    "position": "their position in ple_layer_ids (what the model does)",
    "module": "the module index (layers.{i}.ple: the 1-based id minus one)",
    "config": "the config's own layer number",
}
"""How messages name each reading of :class:`LayerReading`."""


def layer_readings(config_ids: Sequence[int]) -> list[LayerReading]:
    """The three readings of ``config_ids`` (see :class:`LayerReading`), the model's first.

    >>> [(r.name, r.indices) for r in layer_readings([2])]
    [('position', (0,)), ('module', (1,)), ('config', (2,))]
    """
    ids = tuple(int(x) for x in config_ids)
    return [
        LayerReading("position", tuple(range(len(ids)))),
        LayerReading("module", tuple(x - 1 for x in ids)),
        LayerReading("config", ids),
    ]


def seeding_reading(
    stored: StoredConstants, config_ids: Sequence[int], vocab_size: int, seeds: Sequence[int]
) -> tuple[str, int] | None:
    """(reading, seed) of the first reading of ``config_ids`` (:func:`layer_readings`, the model's
    first) and seed of ``seeds`` whose generated multipliers equal the stored ones; None when none
    does (constants not made by Qwen3.8's generator, or with another seed or vocabulary)."""
    stored_rows = [tuple(row) for row in stored.multipliers]
    n = len(stored_rows[0]) if stored_rows else 0
    for reading in layer_readings(config_ids):
        if min(reading.indices, default=0) < 0:
            continue
        for seed in seeds:
            if all(
                qwen_multipliers(vocab_size, n, index, seed) == row
                for index, row in zip(reading.indices, stored_rows, strict=True)
            ):
                return reading.name, seed
    return None


def read_stored_constants(path: str | Path, *, row_multiple: int = 1) -> StoredConstants:
    """The constants stored in ``path``: a safetensors checkpoint (one file, or a shard that holds
    the three ``ple_embedding.*`` tensors), an ``.npz``, or a JSON object, by the names of
    :data:`TENSOR_NAMES` (or their short names ``multipliers``, ``table_sizes``, ``offsets``)."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"--constants {path}: no such file (give the checkpoint's .safetensors file)")
    tensors = _read_tensors(path)
    found = {}
    for short, full in TENSOR_NAMES.items():
        for name in (full, short):
            if name in tensors:
                found[short] = tensors[name]
                break
        else:
            raise NgramToolError(
                f"{path} holds no {full} (nor {short}): the stored constants are "
                f"{', '.join(TENSOR_NAMES.values())}; give the checkpoint shard that holds them"
            )
    return StoredConstants.from_arrays(**found, row_multiple=row_multiple)


def _read_tensors(path: Path) -> dict[str, Any]:
    """The arrays of a safetensors, npz or JSON file, by name."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".npz":
            with np.load(path) as data:
                return {name: data[name] for name in data.files}
        if suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        try:
            from safetensors.numpy import load_file
        except ImportError:
            raise NgramToolError(
                "reading safetensors needs the safetensors package: pip install 'ngramtool[engines]'"
            ) from None
        return load_file(str(path))
    except (OSError, ValueError, json.JSONDecodeError) as exc:
        raise NgramToolError(f"cannot read the constants in {path}: {exc}") from None
