"""The numba backend: the rows of a chunk in one loop compiled by LLVM (through numba), on the CPU.

Per token, the kernel builds the window (the carried context, the pad for lags before a document
start, the pad for masked ids), forms the L*N products ``id * multiplier`` once, and then computes
every column of the token's row in one pass: a column's mix is the XOR of the products of its
order's lags (the lags beyond the order are masked off, so no column branches), reduced modulo
the column's prime, plus its offset. The row is contiguous in the token-major output, so LLVM
vectorizes across the columns and stores whole vectors: no transposition.

Compiled for the spec's shape. ``layers``, ``lags`` and ``heads`` reach the kernel either as
plain ints (one compilation serves every spec) or as tuples of that length, whose lengths numba
knows when it compiles (:func:`ngramtool.backends.jit.static`): then every loop over columns has a
constant trip count, is unrolled and becomes straight-line AVX code (4-6x faster). Once an
evaluator has hashed :data:`SPECIALIZE_TOKENS` tokens in all (one long chunk, or a few windows
of a data loader) it uses a kernel specialized that way (compiled once per shape, in about a
second, then loaded from the disk cache); until then it uses the generic one, so a test suite of
many small specs does not compile each of them.

Modulo without division. With masked ids replaced by the pad every mix ``x`` is in [0, 2^63)
(docs/engram-spec.md §3.1). :func:`reciprocal_mod` takes ``q = trunc(double(x) * inv)`` with
``inv = (1/p)(1 - 2^-50)`` rounded to double. Four roundings (``1/p``, the bias, ``double(x)``,
the product) err by at most 4 * 2^-53 = 2^-51 relative, less than the bias, so ``q <= x/p``; and
``x/p - q < 1 + 1.5 * 2^-50 * 2^63 / p``, so ``q`` is ``floor(x/p)`` or one less while
``p > 1.5 * 2^13 = 12,288``. Then ``r = x - q*p`` lies in [0, 2p), and ``min(r, r - p)`` in
unsigned arithmetic is ``x mod p``, all exact in uint64. Specs with a prime below
:data:`FAST_MIN_PRIME` and ``negative_ids="hash"`` (mixes of negative ids may be negative) use
the exact signed floor modulo ``%`` instead (a hardware division).

Compiled code is cached on disk (:func:`ngramtool.backends.jit.compiled`). The kernel releases the GIL and
keeps no state between calls, so threads may hash chunks at the same time.
"""

from __future__ import annotations

import numba
import numpy as np

from ..spec import HashSpec
from . import MASKED_ROW
from .jit import compiled, static

SPECIALIZE_TOKENS = 4096
FAST_MIN_PRIME = 1 << 14  # 16,384 > 12,288, the smallest prime the reciprocal path is exact for
INVERSE_BIAS = 1.0 - 2.0**-50
NATIVE_ID_DTYPES = (np.dtype(np.int64), np.dtype(np.int32), np.dtype(np.uint32), np.dtype(np.uint16))


def devices() -> tuple[str, ...]:
    """numba compiles for the CPU."""
    return ("cpu",)


def unavailable_reason(device_type: str) -> str:
    """Why numba cannot run on ``device_type`` (anything but the CPU)."""
    return (
        f"the numba backend runs on the CPU, not {device_type}: use `device=cpu`, "
        "or `backend=torch` or triton for a GPU"
    )


def make_kernel(spec: HashSpec, *, offsets: bool, negative_ids: str, device: str) -> NumbaRows:
    """The numba evaluator (``device`` is the CPU)."""
    return NumbaRows(spec, offsets=offsets, negative_ids=negative_ids)


def _reciprocal_mod(x, p, inverse):
    """``x mod p`` for uint64 ``x < 2^63`` and ``p >= FAST_MIN_PRIME``, ``inverse = inverse_of(p)``."""
    q = np.uint64(np.float64(np.int64(x)) * inverse)
    r = x - q * np.uint64(p)
    return min(r, r - np.uint64(p))


reciprocal_mod = numba.njit(inline="always", error_model="numpy")(_reciprocal_mod)


def _signed_reciprocal_mod(x, p, inverse):
    """:func:`reciprocal_mod` in int64 for int64 ``x`` in [0, 2^63): the same ``q``, ``r`` and
    result (no step overflows), with signed conversions and a compare, about 30% faster on CPUs
    without AVX-512, where unsigned conversions to and from double take several instructions."""
    q = np.int64(np.float64(x) * inverse)
    r = x - q * p
    return r - p if r >= p else r


signed_reciprocal_mod = numba.njit(inline="always", error_model="numpy")(_signed_reciprocal_mod)


def inverse_of(primes: np.ndarray) -> np.ndarray:
    """The biased reciprocals :func:`reciprocal_mod` multiplies by, float64 like ``primes``."""
    return (1.0 / np.asarray(primes, dtype=np.float64)) * INVERSE_BIAS


def _engram_rows(
    ids,
    context,
    resets,
    pad,
    mult,
    lag_masks,
    primes,
    inverses,
    offsets,
    layers,
    lags,
    heads,
    fast,
    mask,
    out,
):
    """Rows ``out`` [T, L*C] of the chunk ``ids`` after ``context`` (see the module docstring).

    ``lag_masks[k, j]`` is all ones when column j's order reaches lag k, else 0; ``layers``,
    ``lags``, ``heads``, ``fast`` (reciprocal modulo) and ``mask`` (negative ids are masked) are
    ints or tuples of that length (see :func:`ngramtool.backends.jit.static`).
    """
    n_layers, n, k_heads = static(layers), static(lags), static(heads)
    is_fast, is_masking = static(fast), static(mask)
    n1 = n - 1
    cols = n1 * k_heads
    products = np.empty((n_layers, n), np.uint64)
    doc = -n1  # where the current document starts; the context already holds pads before it
    next_reset = 0
    for t in range(ids.shape[0]):
        if next_reset < resets.shape[0] and resets[next_reset] == t:
            doc = t
            next_reset += 1
        if is_masking and ids[t] < 0:
            for j in range(n_layers * cols):
                out[t, j] = MASKED_ROW
            continue
        for lag in range(n):
            pos = t - lag
            if pos < doc:
                w = pad
            elif pos >= 0:
                w = np.int64(ids[pos])
            else:
                w = context[n1 + pos]
            if is_masking and w < 0:
                w = pad
            for layer in range(n_layers):
                products[layer, lag] = np.uint64(w) * mult[layer, lag]
        for layer in range(n_layers):
            for c in range(cols):
                j = layer * cols + c
                x = products[layer, 0]
                for lag in range(1, n):
                    x ^= products[layer, lag] & lag_masks[lag, j]
                p = primes[j]
                if is_fast:
                    out[t, j] = signed_reciprocal_mod(np.int64(x), p, inverses[j]) + offsets[j]
                else:
                    out[t, j] = np.int64(x) % p + offsets[j]


engram_rows = compiled(_engram_rows)


def _column_rows(ids, context, resets, pad, mult, moduli, offsets, summed, mask, out):
    """Rows ``out`` [T, L*C] for families whose columns have their own multipliers
    (``mult`` [L*C, N], 0 past a column's order): each column's mix is the XOR (``summed``: the
    sum) of ``id * mult[j, lag]``, in [0, 2^63) by the spec's validation, then an exact ``%``."""
    n1 = mult.shape[1] - 1
    width = mult.shape[0]
    window = np.empty(n1 + 1, np.int64)
    doc = -n1
    next_reset = 0
    for t in range(ids.shape[0]):
        if next_reset < resets.shape[0] and resets[next_reset] == t:
            doc = t
            next_reset += 1
        if mask and ids[t] < 0:
            for j in range(width):
                out[t, j] = MASKED_ROW
            continue
        for lag in range(n1 + 1):
            pos = t - lag
            if pos < doc:
                w = pad
            elif pos >= 0:
                w = np.int64(ids[pos])
            else:
                w = context[n1 + pos]
            if mask and w < 0:
                w = pad
            window[lag] = w
        for j in range(width):
            x = np.int64(0)
            for lag in range(n1 + 1):
                if summed:
                    x += window[lag] * mult[j, lag]
                else:
                    x ^= window[lag] * mult[j, lag]
            out[t, j] = x % moduli[j] + offsets[j]


column_rows = compiled(_column_rows)


class NumbaRows:
    """Rows of one chunk with the compiled kernel (see :class:`ngramtool.backends.RowsKernel`)."""

    tensors = False
    device = "cpu"
    fills = True  # rows() computes into a given ``out``

    def __init__(self, spec: HashSpec, *, offsets: bool, negative_ids: str) -> None:
        self.spec = spec
        n, k, layers = spec.max_ngram, spec.heads, spec.num_layers
        self.mask = negative_ids == "mask"
        self.fast = self.mask and int(spec.primes.min()) >= FAST_MIN_PRIME
        # int64 wrap-around = uint64 arithmetic; families with per-column multipliers use column_rows
        self.multipliers = spec.multipliers.view(np.uint64) if spec.layer_mix else None
        order = np.tile(np.repeat(np.arange(2, n + 1), k), layers)  # each column's n
        reaches = np.arange(n)[:, None] < order[None, :]
        self.lag_masks = np.where(reaches, np.uint64(np.iinfo(np.uint64).max), np.uint64(0))
        self.primes = spec.primes.reshape(-1).astype(np.int64)
        self.inverses = inverse_of(self.primes)
        self.offsets = spec.offsets.reshape(-1).astype(np.int64) if offsets else np.zeros_like(self.primes)
        self.column_multipliers = spec.column_multipliers.reshape(layers * spec.num_columns, n)
        self.generic = (layers, n, k, int(self.fast), int(self.mask))
        self.specialized = tuple((0,) * size for size in self.generic)
        self.hashed = 0  # tokens hashed so far (approximate under threads: it only picks a kernel)

    def rows(
        self, ids: np.ndarray, context: np.ndarray, resets: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Rows [T, L, C] of the chunk ``ids`` after ``context`` (into ``out`` when given, a
        C-contiguous array); documents start at ``resets``."""
        spec, t_total = self.spec, ids.shape[0]
        if ids.dtype not in NATIVE_ID_DTYPES:
            ids = ids.astype(np.int64)
        if out is None:
            out = np.empty((t_total, spec.num_layers, spec.num_columns), dtype=spec.row_dtype)
        self.hashed += t_total
        chunk = (
            np.ascontiguousarray(ids),
            np.ascontiguousarray(context, dtype=np.int64),
            np.ascontiguousarray(resets, dtype=np.int64),
            spec.pad_id,
        )
        flat_out = out.reshape(t_total, spec.num_layers * spec.num_columns)
        if not spec.layer_mix:
            summed = spec.mix == "sum"
            column_rows(
                *chunk, self.column_multipliers, self.primes, self.offsets, summed, self.mask, flat_out
            )
            return out
        shape = self.specialized if self.hashed >= SPECIALIZE_TOKENS else self.generic
        engram_rows(
            *chunk,
            self.multipliers,
            self.lag_masks,
            self.primes,
            self.inverses,
            self.offsets,
            *shape,
            flat_out,
        )
        return out
