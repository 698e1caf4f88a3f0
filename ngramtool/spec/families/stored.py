"""Constants a checkpoint stores (Qwen3.8's ``ple_embedding.*``): read, not derived.

A spec of family ``stored`` carries :class:`StoredConstants`: per layer, the multipliers by lag
(the current token at lag 0, as Engram), each column's table size and offset, and the rows of the
layer's table (the sum of its sizes, or more where the checkpoint pads its table, e.g. to a
multiple of 128). :func:`read_stored_constants` reads them from a safetensors checkpoint (or an
``.npz`` / JSON file of the same names).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
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
    layer's table."""

    multipliers: Matrix
    table_sizes: Matrix
    offsets: Matrix
    rows: tuple[int, ...]

    def __repr__(self) -> str:
        """One line: the layers, columns and rows (the constants themselves are in :meth:`to_dict`)."""
        columns = len(self.table_sizes[0]) if self.table_sizes else 0
        return f"<StoredConstants layers={len(self.rows)} columns={columns} rows={list(self.rows)}>"

    def __post_init__(self) -> None:
        for name in ("multipliers", "table_sizes", "offsets"):
            object.__setattr__(self, name, _matrix(getattr(self, name), name))
        object.__setattr__(self, "rows", tuple(int(x) for x in self.rows))

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

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types."""
        return {
            "multipliers": [list(row) for row in self.multipliers],
            "table_sizes": [list(row) for row in self.table_sizes],
            "offsets": [list(row) for row in self.offsets],
            "rows": list(self.rows),
        }

    @classmethod
    def from_dict(cls, data: Any) -> StoredConstants:
        """Inverse of :meth:`to_dict`; missing or unknown keys are an error."""
        keys = {"multipliers", "table_sizes", "offsets", "rows"}
        if not isinstance(data, dict) or set(data) != keys:
            raise UsageError(f"stored constants must be an object with exactly the keys {sorted(keys)}")
        return cls(**data)


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
