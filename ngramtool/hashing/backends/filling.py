"""What the CPU kernels that compute into a given array share: rows into C-ordered memory."""

from __future__ import annotations

import numpy as np

from ...spec.hashspec import HashSpec


def scratch(spec: HashSpec) -> tuple[np.ndarray, np.ndarray]:
    """The row kernels' scratch space for one call: 8 L N bytes (the Engram kernel's products
    [L, N], uint64; the per-column kernel's window [N], int64) and 8 L C bytes (the Engram
    kernel's remainders, float64)."""
    return np.empty(spec.num_layers * spec.max_ngram, np.uint64), np.empty(
        spec.num_layers * spec.num_columns, np.float64
    )


class FillingRows:
    """An evaluator that hashes a chunk into a C-contiguous [T, L*C] array (:meth:`_fill`);
    :meth:`rows` gives it one (see :class:`ngramtool.hashing.backends.RowsKernel`)."""

    tensors = False
    device = "cpu"
    fills = True  # rows() computes into a given ``out``
    spec: HashSpec

    def rows(
        self, ids: np.ndarray, context: np.ndarray, resets: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Rows [T, L, C] of the chunk ``ids`` after ``context`` (into ``out`` when given); documents
        start at ``resets``. The kernels write C-ordered rows of the spec's row type into writable
        memory: an ``out`` of another layout or type gets them copied in (cast), and a read-only
        one is refused by numpy."""
        spec = self.spec
        target = out
        if out is None or not (out.flags.c_contiguous and out.flags.writeable) or out.dtype != spec.row_dtype:
            target = np.empty((ids.shape[0], spec.num_layers, spec.num_columns), dtype=spec.row_dtype)
        self._fill(ids, context, resets, target.reshape(ids.shape[0], spec.num_layers * spec.num_columns))
        if out is not None and out is not target:
            out[...] = target
            return out
        return target

    def _fill(self, ids: np.ndarray, context: np.ndarray, resets: np.ndarray, flat_out: np.ndarray) -> None:
        """Hash the chunk into ``flat_out`` [T, L*C], C-contiguous."""
        raise NotImplementedError
