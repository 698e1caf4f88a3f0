"""Masked tokens as a barrier (DeepSeek-V4.1's reference): any backend's kernel, wrapped.

``negative_ids="barrier"`` (docs/hash-spec.md, "Masked tokens"): a negative id is a DEAD token.
Each position reads its lookbacks from the current token backwards; once one is DEAD (or before
the stream or document start) it and every older one are the pad. So a DEAD position hashes as an
all-pad window and gets ordinary rows, and a position after a DEAD token sees the pad before it,
exactly as if a document started right after the DEAD token.

That equivalence is how every backend gets the rule, bit-identically: :class:`BarrierRows` hands
the backend's masking kernel (``negative_ids="mask"``, where a negative id is the pad in other
windows) a document start after each DEAD position and a context cut at its last DEAD id, then
writes the all-pad row at the DEAD positions. The kernels themselves are unchanged. Finding the
DEAD positions of a tensor on a GPU reads them back to the host: one synchronization per chunk,
and only under ``barrier``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ...spec.hashspec import HashSpec
from .arrays import is_tensor, to_numpy


def barrier_context(context: np.ndarray, pad_id: int, *, stop: int | None = None) -> np.ndarray:
    """The carried context with the pad at and before its last DEAD (negative) id (``stop``: its
    last id equal to ``stop``, an EOS after which a segment starts).

    >>> barrier_context(np.array([5, -1, 7]), 2).tolist()
    [2, 2, 7]
    >>> barrier_context(np.array([9, 4, 7]), 0, stop=4).tolist()
    [0, 0, 7]
    """
    dead = np.flatnonzero(context == stop if stop is not None else context < 0)
    if not dead.size:
        return context
    cut = context.copy()
    cut[: int(dead[-1]) + 1] = pad_id
    return cut


def pad_row(spec: HashSpec, *, offsets: bool) -> np.ndarray:
    """The rows ``[L, C]`` of an all-pad window: what a DEAD position gets."""
    from .numpy_backend import rows_from_windows  # the definition on explicit windows

    window = np.full((1, spec.max_ngram), spec.pad_id, dtype=np.int64)
    return rows_from_windows(window, spec, offsets=offsets)[0]


class BarrierRows:
    """A backend's masking kernel with DEAD tokens as barriers (see the module docstring).

    It is a :class:`ngramtool.hashing.backends.RowsKernel` of the same kind (numpy or tensors, its device,
    ``out=`` when the inner kernel fills one). With ``eos=True`` it is the segment rule of
    :attr:`ngramtool.HashSpec.segment_stop` instead: a segment starts after each stop id (Qwen3.8's
    EOS, the spec's pad id, whose lookbacks before it hold the EOS id; LongCat's ``stop_token`` as
    sglang serves it, where the walk back stops: a pad of 0); the stop id itself hashes as any token.
    """

    def __init__(self, inner: Any, spec: HashSpec, *, offsets: bool, eos: bool = False) -> None:
        self.inner = inner
        self.spec = spec
        self.eos = eos
        self.stop = spec.segment_stop if eos else None
        self.tensors = inner.tensors
        self.device = inner.device
        self.fills = getattr(inner, "fills", False)
        self._pad_row = pad_row(spec, offsets=offsets)
        self._pad_row_tensor: Any = None

    def rows(self, ids: Any, context: np.ndarray, resets: np.ndarray, out: np.ndarray | None = None) -> Any:
        """Rows ``[T, L, C]`` of the chunk ``ids`` after ``context``, DEAD ids (or EOS) as barriers."""
        dead = ids == self.stop if self.eos else ids < 0
        positions = to_numpy(dead.nonzero(as_tuple=True)[0]) if is_tensor(ids) else np.flatnonzero(dead)
        if positions.size:
            after = positions[positions + 1 < ids.shape[0]] + 1
            resets = np.union1d(resets, after).astype(np.int64)
        context = barrier_context(context, self.spec.pad_id, stop=self.stop)
        if out is None:
            rows = self.inner.rows(ids, context, resets)
        else:
            rows = self.inner.rows(ids, context, resets, out=out)
        if positions.size and not self.eos:
            rows[dead] = self._pad_rows_like(rows)
        return rows

    def _pad_rows_like(self, rows: Any) -> Any:
        """The all-pad row as ``rows``' kind: a numpy array, or a tensor on its device."""
        if not is_tensor(rows):
            return self._pad_row
        if self._pad_row_tensor is None:
            torch = sys.modules["torch"]
            self._pad_row_tensor = torch.from_numpy(self._pad_row.astype(self.spec.row_dtype)).to(rows.device)
        return self._pad_row_tensor
