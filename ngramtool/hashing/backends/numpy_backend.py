"""The numpy backend (CPU, one thread), and the definition of the hash on explicit windows.

:class:`NumpyRows` has two code paths that compute the same numbers:

* ``_FastKernel`` (the hot path) works on blocks of ``BLOCK_TOKENS`` tokens that stay in
  cache. It multiplies each lag once per layer and XORs shifted views, divides by each prime with
  numpy's scalar (libdivide) unsigned division, writes head columns into a token-grouped scratch
  buffer and moves it to the token-major output in 16-byte units. It needs every id in [0, V'),
  which keeps every mix non-negative (docs/engram-spec.md §3.1), so unsigned arithmetic is exact.
* :func:`rows_from_windows` evaluates the definition on explicit windows with signed floor
  modulo. It handles the few positions next to a document reset and the demo's negative-id
  semantics (the other backends use it for those positions too).
"""

from __future__ import annotations

import threading

import numpy as np

from ...spec.families.speedrun import speedrun_rows
from ...spec.hashspec import HashSpec
from . import MASKED_ROW, NegativeIds

BLOCK_TOKENS = 16384


def ngram_mixes(windows: np.ndarray, spec: HashSpec) -> np.ndarray:
    """The multiply-XOR mix of every order: int64 [M, L, N-1], entry n-2 for order n.

    Args:
        windows: int64 [M, N]; column k is the canonical id at lag k (k=0 is the current token).
            Any int64 value is accepted; products wrap as int64, as in the Engram demo.
        spec: the hash configuration.
    """
    windows = np.asarray(windows, dtype=np.int64)
    mixes = np.empty((windows.shape[0], spec.num_layers, spec.max_ngram - 1), dtype=np.int64)
    with np.errstate(over="ignore"):
        for li in range(spec.num_layers):
            acc = windows[:, 0] * spec.multipliers[li, 0]
            for n in range(2, spec.max_ngram + 1):
                acc = acc ^ (windows[:, n - 1] * spec.multipliers[li, n - 1])
                mixes[:, li, n - 2] = acc
    return mixes


def column_mixes(windows: np.ndarray, spec: HashSpec) -> np.ndarray:
    """Every column's mix on its own multipliers (any family): int64 [M, L, C].

    ``xor``: the XOR of ``id * multiplier`` over the column's lags; ``sum`` (LongCat): their sum.
    Lags beyond a column's order have multiplier 0 and add nothing either way.
    """
    windows = np.asarray(windows, dtype=np.int64)
    mult = spec.column_multipliers  # [L, C, N]
    mixes = np.zeros((windows.shape[0], spec.num_layers, spec.num_columns), dtype=np.int64)
    with np.errstate(over="ignore"):
        for k in range(spec.max_ngram):
            term = windows[:, k, None, None] * mult[None, :, :, k]
            if spec.mix == "sum":
                mixes += term
            else:
                mixes ^= term
    return mixes


def speedrun_hashes(windows: np.ndarray, spec: HashSpec) -> np.ndarray:
    """The speedrun family's rows without offsets, int64 [M, L, C]: every layer has the same tables
    (:func:`ngramtool.spec.families.speedrun.speedrun_rows`)."""
    tables = spec.primes[0].reshape(-1)
    rows = speedrun_rows(windows, spec.pad_id, tables, spec.first_token or "reserved")
    return np.broadcast_to(rows[:, None, :], (rows.shape[0], spec.num_layers, spec.num_columns))


def rows_from_windows(windows: np.ndarray, spec: HashSpec, *, offsets: bool = True) -> np.ndarray:
    """Rows for explicit windows, straight from the definition (signed floor modulo).

    Args:
        windows: int64 [M, N] lag windows, see :func:`ngram_mixes`.
        spec: the hash configuration.
        offsets: add each layer's column offsets (table rows) or not (per-head hash ids).

    Returns:
        [M, L, C] array of ``spec.row_dtype``.
    """
    if spec.family == "speedrun":
        hashed = speedrun_hashes(windows, spec)
    elif spec.layer_mix:
        mixes = ngram_mixes(windows, spec)
        primes = spec.primes.reshape(1, spec.num_layers, spec.max_ngram - 1, spec.heads)
        hashed = np.mod(mixes[..., None], primes).reshape(mixes.shape[0], spec.num_layers, spec.num_columns)
    else:
        hashed = np.mod(column_mixes(windows, spec), spec.primes.reshape(1, spec.num_layers, -1))
    if offsets:
        hashed = hashed + spec.offsets[None]
    return hashed.astype(spec.row_dtype)


class _FastKernel:
    """Preallocated buffers and constants for ``BLOCK_TOKENS``-sized blocks of one spec."""

    def __init__(self, spec: HashSpec, offsets: bool) -> None:
        self.spec = spec
        n, block = spec.max_ngram, BLOCK_TOKENS
        self.dtype = spec.row_dtype
        width = spec.num_layers * spec.num_columns
        # Group columns into 16-byte units so the transpose to token-major moves few, wide items.
        self.group = next(g for g in (16 // self.dtype.itemsize, 2, 1) if width % g == 0)
        self.unit = np.dtype(f"V{self.group * self.dtype.itemsize}")
        self.scratch = np.empty((width // self.group, block, self.group), dtype=self.dtype)
        self.prod = np.empty((n, block + n - 1), dtype=np.uint64)
        self.acc = np.empty(block, dtype=np.uint64)
        self.tmp = np.empty(block, dtype=np.uint64)
        self.mult = spec.multipliers.astype(np.uint64)
        self.primes = spec.primes.astype(np.uint64)
        self.offsets = spec.offsets.astype(np.uint64) if offsets else None

    def run(self, ext: np.ndarray, out: np.ndarray) -> None:
        """Hash ``ext`` (uint64 [B+N-1], the N-1 context ids then B ids) into ``out`` [B, L, C]."""
        spec, n = self.spec, self.spec.max_ngram
        b = ext.shape[0] - (n - 1)
        acc, tmp = self.acc[:b], self.tmp[:b]
        cols = spec.num_columns
        for li in range(spec.num_layers):
            for k in range(n):
                np.multiply(ext, self.mult[li, k], out=self.prod[k, : b + n - 1])
            np.copyto(acc, self.prod[0, n - 1 : n - 1 + b])
            for order in range(2, n + 1):
                lag = order - 1
                np.bitwise_xor(acc, self.prod[lag, n - 1 - lag : n - 1 - lag + b], out=acc)
                for h in range(spec.heads):
                    j = li * cols + spec.column(order, h)
                    p = self.primes[li, order - 2, h]
                    np.floor_divide(acc, p, out=tmp)
                    np.multiply(tmp, p, out=tmp)
                    np.subtract(acc, tmp, out=tmp)
                    dest = self.scratch[j // self.group, :b, j % self.group]
                    if self.offsets is None:
                        np.copyto(dest, tmp, casting="unsafe")
                    else:
                        np.add(tmp, self.offsets[li, j - li * cols], out=dest, casting="unsafe")
        grouped = self.scratch[:, :b, :].view(self.unit)[..., 0]
        np.copyto(out.reshape(b, -1).view(self.unit), grouped.T)


class NumpyRows:
    """The numpy backend's evaluator of one chunk (see :class:`ngramtool.hashing.backends.RowsKernel`).

    With ``negative_ids="mask"`` and per-layer multipliers (:attr:`HashSpec.layer_mix`) the
    chunk goes through ``_FastKernel``; other families evaluate the whole chunk on its windows. The first N-1
    positions of each document under a reset and every row with ``negative_ids="hash"`` are
    evaluated on explicit windows by :func:`rows_from_windows`. Each thread gets its own
    ``_FastKernel`` buffers, so threads may evaluate chunks at the same time.
    """

    tensors = False
    device = "cpu"
    fills = True  # rows() computes into a given ``out``

    def __init__(self, spec: HashSpec, *, offsets: bool, negative_ids: NegativeIds) -> None:
        self.spec = spec
        self.offsets = offsets
        self.mask = negative_ids == "mask"
        self._per_thread = threading.local()

    def _fast(self) -> _FastKernel:
        """This thread's block kernel (made on first use)."""
        kernel = getattr(self._per_thread, "kernel", None)
        if kernel is None:
            kernel = self._per_thread.kernel = _FastKernel(self.spec, self.offsets)
        return kernel

    def rows(
        self, ids: np.ndarray, context: np.ndarray, resets: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Rows [T, L, C] of the chunk ``ids`` after ``context`` (into ``out`` when given);
        documents start at ``resets``."""
        spec, n = self.spec, self.spec.max_ngram
        ext = np.concatenate([context, ids.astype(np.int64)])
        if out is None:
            out = np.empty((ids.shape[0], spec.num_layers, spec.num_columns), dtype=spec.row_dtype)
        if self.mask:
            ext[ext < 0] = spec.pad_id
        if self.mask and spec.layer_mix:
            ext_u = ext.astype(np.uint64)
            fast = self._fast()
            for lo in range(0, ids.shape[0], BLOCK_TOKENS):
                hi = min(lo + BLOCK_TOKENS, ids.shape[0])
                fast.run(ext_u[lo : hi + n - 1], out[lo:hi])
        else:
            out[:] = rows_from_windows(lag_windows(ext, n), spec, offsets=self.offsets)
        if resets.size:
            self._reset_windows(ext, resets, out)
        if self.mask:
            out[ids < 0] = MASKED_ROW
        return out

    def _reset_windows(self, ext: np.ndarray, starts: np.ndarray, out: np.ndarray) -> None:
        """Recompute the first N-1 positions of each document with pad before its start."""
        n, t_total = self.spec.max_ngram, out.shape[0]
        ends = np.append(starts[1:], t_total)
        positions = np.concatenate(
            [np.arange(s, min(s + n - 1, e)) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        )
        doc_start = starts[np.searchsorted(starts, positions, side="right") - 1]
        lags = np.arange(n)
        windows = ext[positions[:, None] + (n - 1) - lags[None, :]]
        windows[positions[:, None] - lags[None, :] < doc_start[:, None]] = self.spec.pad_id
        out[positions] = rows_from_windows(windows, self.spec, offsets=self.offsets)


def lag_windows(ext: np.ndarray, n: int) -> np.ndarray:
    """[T, N] lag windows from the N-1 context ids followed by T ids."""
    t_total = ext.shape[0] - (n - 1)
    return np.stack([ext[n - 1 - k : n - 1 - k + t_total] for k in range(n)], axis=1)


def devices() -> tuple[str, ...]:
    """numpy computes on the CPU."""
    return ("cpu",)


def unavailable_reason(device_type: str) -> str:
    """Why numpy cannot run on ``device_type`` (anything but the CPU)."""
    return (
        f"the numpy backend runs on the CPU, not {device_type}: use `device=cpu`, "
        "or `backend=torch` or triton for a GPU"
    )


def make_kernel(spec: HashSpec, *, offsets: bool, negative_ids: str, device: str) -> NumpyRows:
    """The numpy evaluator (``device`` is the CPU)."""
    return NumpyRows(spec, offsets=offsets, negative_ids=negative_ids)
