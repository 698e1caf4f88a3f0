"""Read-only arrays served a range of their first axis at a time, indexed like memory maps.

A merged dataset's ``tokens`` and ``rows`` (:class:`ngramtool.formats.dataset.ConcatArray`) and a
tokens-only index's ``rows`` (:class:`ngramtool.formats.index.ComputedRows`) are not arrays on
disk: each read gathers or computes the positions it asks for. They share the indexing of the
memory maps of a plain index for the usual reads: an int or a contiguous slice on the first axis,
optionally followed by indices of the other axes in a tuple (``rows[:10, 0]``, ``rows[5, 1, 2]``),
``len``, ``shape``, ``dtype``, ``ndim``, ``nbytes`` and ``numpy.asarray``.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..util.errors import NgramToolError


class RangeArray:
    """The indexing of a read-only array whose subclass reads positions ``[lo, hi)`` of the first
    axis in :meth:`_range` (``0 <= lo < hi <= len``); indexing returns numpy arrays.

    Attributes:
        shape: the whole array's shape.
        dtype: its dtype.
    """

    what = "array"  # how error messages name it

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)

    def _range(self, lo: int, hi: int) -> np.ndarray:
        """Positions [lo, hi) of the first axis, as an array of shape ``[hi - lo, *shape[1:]]``."""
        raise NotImplementedError

    @property
    def ndim(self) -> int:
        """Number of axes, as ``numpy.ndarray.ndim``."""
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the whole array, as ``numpy.ndarray.nbytes`` (nothing is read)."""
        return math.prod(self.shape) * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: int | slice | tuple[Any, ...]) -> np.ndarray:
        first, rest = (key[0], key[1:]) if isinstance(key, tuple) and key else (key, ())
        if isinstance(first, slice):
            lo, hi, step = first.indices(len(self))
            if step != 1:
                raise NgramToolError(f"a {self.what} supports contiguous slices only")
            if lo >= hi:
                return np.zeros((0, *self.shape[1:]), dtype=self.dtype)[(slice(None), *rest)]
            return self._range(lo, hi)[(slice(None), *rest)]
        if isinstance(first, bool | np.bool_) or not isinstance(first, int | np.integer):
            raise TypeError(
                f"a {self.what} takes an int or a contiguous slice on the first axis, optionally "
                f"followed by more indices in a tuple (rows[:10, 0]); got {type(first).__name__}"
            )
        position, size = operator.index(first), len(self)
        if not -size <= position < size:
            raise IndexError(f"index {position} is out of bounds for axis 0 with size {size}")
        position %= size
        return self._range(position, position + 1)[0][rest]

    def __repr__(self) -> str:
        """One line: the kind, the shape and the dtype (nothing is read)."""
        return f"<{type(self).__name__} {self.what} shape={list(self.shape)} dtype={self.dtype}>"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        whole = self[:]
        return whole if dtype is None else whole.astype(dtype)
