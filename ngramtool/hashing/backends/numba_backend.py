"""The numba backend: the rows of a chunk in one loop compiled by LLVM (through numba), on the CPU.

Per token, the kernel builds the window (the carried context, the pad for lags before a document
start, the pad for masked ids), forms the L*N products ``id * multiplier`` once, and then for each
layer and order the mix, the XOR of the products of the order's lags, shared by the order's K
heads: each head's column is that mix reduced modulo the column's prime, plus its offset. The
row is contiguous in the token-major output, so LLVM vectorizes across the columns and stores
whole vectors: no transposition.

Compiled for the spec's shape. ``layers``, ``lags`` and ``heads`` reach the kernel either as
plain ints (one compilation serves every spec) or as tuples of that length, whose lengths numba
knows when it compiles (:func:`ngramtool.util.jit.static`): then every loop over columns has a
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
unsigned arithmetic is ``x mod p``, all exact in uint64 (the kernel does the same in int64,
:func:`signed_reciprocal_mod`: no step overflows).

Most specs (masked negative ids, primes from 2^15 to 2^52: :data:`MODULO_VECTOR`) reduce each
mix for the order's K heads at once, in LLVM vector instructions with a fused multiply-add
(:func:`ngramtool.hashing.backends.vector_modulo.reduce_heads`, where the proof is): about twice
as fast as the scalar paths below, which remain for the other specs.

Primes below 2^31 (:data:`MODULO_SPLIT`, int32 row spaces) take a path in doubles
that LLVM vectorizes with AVX2 too: ``x = a 2^42 + b 2^21 + d`` with 21-bit parts, once per mix,
and per column ``y = a (2^42 mod p) + b (2^21 mod p) + d``, congruent to ``x`` and below
``2^22 p < 2^53``, so every double in it is an exact integer; ``q = floor(y * inv)`` errs by less
than ``2^22 * 2^-49`` from ``y/p``, so it is ``floor(y/p)`` or one off either way, ``y - q p`` is
exact and lies in [-p, 2p), and adding or subtracting ``p`` once gives ``x mod p``. Other specs
with masked negative ids take the reciprocal when no prime is below :data:`FAST_MIN_PRIME`;
the rest, and ``negative_ids="hash"`` (mixes of negative ids may be negative), use the exact
signed floor modulo ``%`` (a hardware division).

Compiled code is cached on disk (:func:`ngramtool.util.jit.compiled`). The kernel releases the GIL and
keeps no state between calls, so threads may hash chunks at the same time.
"""

from __future__ import annotations

import re

import numba
import numpy as np

from ...spec.hashspec import HashSpec
from ...util.jit import compiled, static
from . import MASKED_ROW
from .filling import FillingRows, scratch
from .stored_rows import MachineCode
from .vector_modulo import reduce_heads, vector_columns, vector_exact

KERNEL_REVISION = 3  # raised with every change of vector_modulo.py: numba's cache is keyed on this file
SPECIALIZE_TOKENS = 4096
FAST_MIN_PRIME = 1 << 14  # 16,384 > 12,288, the smallest prime the reciprocal path is exact for
INVERSE_BIAS = 1.0 - 2.0**-50
SPLIT_BASE = 1 << 21  # MODULO_SPLIT: a mix in 21-bit parts
SPLIT_MAX_PRIME = 1 << 31  # MODULO_SPLIT's sums stay below 2^53 for primes below this
MODULO_EXACT, MODULO_RECIPROCAL, MODULO_SPLIT, MODULO_VECTOR = 0, 1, 2, 3
"""How the Engram kernel reduces a mix modulo a prime (see the module docstring)."""
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


def _split_mix(x):
    """The mix ``x`` in [0, 2^63) as three 21-bit parts, doubles: ``x = a 2^42 + b 2^21 + d``."""
    low = np.uint64(SPLIT_BASE - 1)
    a = np.float64(np.int32(x >> np.uint64(42)))
    b = np.float64(np.int32((x >> np.uint64(21)) & low))
    return a, b, np.float64(np.int32(x & low))


split_mix = numba.njit(inline="always", error_model="numpy")(_split_mix)


def _engram_rows(
    ids,
    context,
    resets,
    pad,
    mult,
    columns,
    primes,
    inverses,
    offsets,
    layers,
    lags,
    heads,
    modulo,
    mask,
    out,
    products,
    remainders,
):
    """Rows ``out`` [T, L*C] of the chunk ``ids`` after ``context`` (see the module docstring).

    Column j = layer * C + (n - 2) * K + head; the mix of order n is the XOR of the products of
    lags 0..n-1, shared by the order's K heads. ``modulo``: :data:`MODULO_EXACT`,
    :data:`MODULO_RECIPROCAL`, :data:`MODULO_SPLIT` or :data:`MODULO_VECTOR`; ``columns`` [3, L*C],
    doubles: for MODULO_SPLIT 2^42 mod p, 2^21 mod p and p, for MODULO_VECTOR what
    :func:`~ngramtool.hashing.backends.vector_modulo.vector_columns` gives. ``layers``, ``lags``,
    ``heads``, ``modulo`` and ``mask`` (negative ids are masked) are ints or tuples of that length
    (see :func:`ngramtool.util.jit.static`). ``products`` [L, N] (uint64) and ``remainders`` [L*C]
    (float64) are scratch space, given so that the kernel allocates nothing (its machine code then
    runs without numba's runtime: :mod:`ngramtool.hashing.backends.stored_rows`).
    """
    n_layers, n, k_heads = static(layers), static(lags), static(heads)
    how, is_masking = static(modulo), static(mask)
    n1 = n - 1
    cols = n1 * k_heads
    width = n_layers * cols
    doc = -n1  # where the current document starts; the context already holds pads before it
    next_reset = 0
    for t in range(ids.shape[0]):
        if next_reset < resets.shape[0] and resets[next_reset] == t:
            doc = t
            next_reset += 1
        if is_masking and ids[t] < 0:
            for j in range(width):
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
            x = products[layer, 0]
            for order in range(n1):
                x ^= products[layer, order + 1]
                first = layer * cols + order * k_heads
                if how == MODULO_VECTOR:
                    reduce_heads(out, t, first, columns, x, heads)
                elif how == MODULO_SPLIT:
                    a, b, d = split_mix(x)
                    for j in range(first, first + k_heads):
                        y = a * columns[0, j] + b * columns[1, j] + d  # = x mod p, exact: below 2^53
                        remainders[j] = y - np.floor(y * inverses[j]) * columns[2, j]
                else:
                    for j in range(first, first + k_heads):
                        if how == MODULO_RECIPROCAL:
                            out[t, j] = (
                                signed_reciprocal_mod(np.int64(x), primes[j], inverses[j]) + offsets[j]
                            )
                        else:
                            out[t, j] = np.int64(x) % primes[j] + offsets[j]
        if how == MODULO_SPLIT:
            for j in range(width):  # the quotient was floor(y / p) or one off: in [0, p) now
                p, r = columns[2, j], remainders[j]
                r = r + p if r < 0 else r
                r = r - p if r >= p else r
                out[t, j] = np.int64(np.int32(r)) + offsets[j]


engram_rows = compiled(_engram_rows)
engram_rows_inline = numba.njit(inline="always", nogil=True, error_model="numpy")(_engram_rows)
"""The same kernel inlined where it is called (:func:`machine_code`): LLVM then sees that it
returns no error, and the entry point refers to nothing of numba's exception machinery."""


COLUMN_XOR, COLUMN_SUM, SPEEDRUN_RESERVED, SPEEDRUN_KEPT = 0, 1, 2, 3
"""How :func:`_column_rows` mixes a column: XOR or sum of ``id * multiplier``, or the speedrun
family's int32 XOR, its sequence's first token read as the reserved id (or kept)."""


def _speedrun_row(window, mult, table, pad, kept):
    """The speedrun family's row (no offset) of one lag window and column: the int32 XOR of the
    wrapped products modulo ``table - 1``, the pad read as that reserved id; the reserved row where
    the current token is the pad (``kept``: any lag of the column's order)."""
    modulus = table - 1
    reserved = window[0] == pad
    x = np.int32(0)
    for lag in range(window.shape[0]):
        if mult[lag] == 0:
            break
        w = window[lag]
        if w == pad:
            reserved = reserved or kept
            w = modulus
        x ^= np.int32(np.uint32((np.uint64(w) * np.uint64(mult[lag])) & np.uint64(0xFFFFFFFF)))
    return modulus if reserved else np.int64(x) % modulus


speedrun_row = numba.njit(inline="always", error_model="numpy")(_speedrun_row)


def _column_rows(ids, context, resets, pad, mult, moduli, offsets, how, mask, out, window):
    """Rows ``out`` [T, L*C] for families whose columns have their own multipliers
    (``mult`` [L*C, N], 0 past a column's order): each column's mix is the XOR (``how`` 1: the
    sum) of ``id * mult[j, lag]``, in [0, 2^63) by the spec's validation, then an exact ``%``; or
    the speedrun family's row (``how`` 2 or 3, ``moduli`` its tables; :func:`_speedrun_row`).
    ``window`` [N] (int64) is scratch space, as in :func:`_engram_rows`."""
    n1 = mult.shape[1] - 1
    width = mult.shape[0]
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
            if how >= SPEEDRUN_RESERVED:
                out[t, j] = speedrun_row(window, mult[j], moduli[j], pad, how == SPEEDRUN_KEPT) + offsets[j]
                continue
            x = np.int64(0)
            for lag in range(n1 + 1):
                if how == COLUMN_SUM:
                    x += window[lag] * mult[j, lag]
                else:
                    x ^= window[lag] * mult[j, lag]
            out[t, j] = x % moduli[j] + offsets[j]


column_rows = compiled(_column_rows)
column_rows_inline = numba.njit(inline="always", nogil=True, error_model="numpy")(_column_rows)


def modulo_path(primes: np.ndarray, offsets: np.ndarray, mask: bool) -> int:
    """How the Engram kernel reduces the mixes for these primes and offsets (the module docstring):
    with masked negative ids (every mix in [0, 2^63)) the vector reduction where it is exact, else
    the split doubles for primes below 2^31, else the reciprocal from :data:`FAST_MIN_PRIME`; the
    exact ``%`` otherwise."""
    if not mask:
        return MODULO_EXACT
    if vector_exact(primes, offsets):
        return MODULO_VECTOR
    if int(primes.max()) < SPLIT_MAX_PRIME:
        return MODULO_SPLIT
    return MODULO_RECIPROCAL if int(primes.min()) >= FAST_MIN_PRIME else MODULO_EXACT


class NumbaRows(FillingRows):
    """Rows of one chunk with the compiled kernel (see :class:`ngramtool.hashing.backends.RowsKernel`)."""

    def __init__(self, spec: HashSpec, *, offsets: bool, negative_ids: str) -> None:
        self.spec = spec
        n, k, layers = spec.max_ngram, spec.heads, spec.num_layers
        self.mask = negative_ids == "mask"
        self.fast = self.mask and int(spec.primes.min()) >= FAST_MIN_PRIME
        # int64 wrap-around = uint64 arithmetic; families with per-column multipliers use column_rows
        self.multipliers = spec.multipliers.view(np.uint64) if spec.layer_mix else None
        self.primes = spec.primes.reshape(-1).astype(np.int64)
        self.inverses = inverse_of(self.primes)
        self.offsets = spec.offsets.reshape(-1).astype(np.int64) if offsets else np.zeros_like(self.primes)
        modulo = modulo_path(self.primes, self.offsets, self.mask)
        if modulo == MODULO_VECTOR:
            self.columns = vector_columns(self.primes, self.offsets)
        else:
            self.columns = np.stack([(1 << 42) % self.primes, (1 << 21) % self.primes, self.primes]).astype(
                float
            )
        self.column_multipliers = spec.column_multipliers.reshape(layers * spec.num_columns, n)
        self.how = COLUMN_SUM if spec.mix == "sum" else COLUMN_XOR
        if spec.family == "speedrun":
            self.how = SPEEDRUN_KEPT if spec.first_token == "kept" else SPEEDRUN_RESERVED
        self.generic = (layers, n, k, modulo, int(self.mask))
        self.specialized = tuple((0,) * size for size in self.generic)
        self.hashed = 0  # tokens hashed so far (approximate under threads: it only picks a kernel)

    def _fill(self, ids: np.ndarray, context: np.ndarray, resets: np.ndarray, flat_out: np.ndarray) -> None:
        """Hash the chunk into ``flat_out`` [T, L*C], C-contiguous."""
        spec = self.spec
        if ids.dtype not in NATIVE_ID_DTYPES:
            ids = ids.astype(np.int64)
        self.hashed += ids.shape[0]
        chunk = (
            np.ascontiguousarray(ids),
            np.ascontiguousarray(context, dtype=np.int64),
            np.ascontiguousarray(resets, dtype=np.int64),
            spec.pad_id,
        )
        if not spec.layer_mix:
            constants = (self.column_multipliers, self.primes, self.offsets, self.how, self.mask)
            window = scratch(spec)[0].view(np.int64)[: spec.max_ngram]
            column_rows(*chunk, *constants, flat_out, window)
            return
        shape = self.specialized if self.hashed >= SPECIALIZE_TOKENS else self.generic
        products, remainders = scratch(spec)
        engram_rows(
            *chunk,
            self.multipliers,
            self.columns,
            self.primes,
            self.inverses,
            self.offsets,
            *shape,
            flat_out,
            products.reshape(spec.num_layers, spec.max_ngram),
            remainders,
        )


def machine_code(kernel: NumbaRows, id_dtype: np.dtype) -> MachineCode | None:
    """``kernel``'s rows for its spec and options as machine code with every constant in it, for
    canonical ids of ``id_dtype``: a C function (:data:`ngramtool.hashing.backends.stored_rows.ENTRY`)
    that runs without numba, the kernel inlined into it. None where numba does not give its code
    (what it keeps private changed)."""
    spec, pad = kernel.spec, kernel.spec.pad_id
    layers, lags = spec.num_layers, spec.max_ngram
    width = kernel.primes.shape[0]
    primes, offsets, mask = kernel.primes, kernel.offsets, kernel.mask
    if spec.layer_mix:
        multipliers, columns, inverses = kernel.multipliers, kernel.columns, kernel.inverses
        layers_shape, lags_shape, heads_shape, modulo, masking = kernel.specialized

        def rows(ids, count, context, resets, resets_count, out, scratch, more_scratch):
            engram_rows_inline(numba.carray(ids, (count,)), numba.carray(context, (lags - 1,)),
                               numba.carray(resets, (resets_count,)), pad, multipliers, columns, primes,
                               inverses, offsets, layers_shape, lags_shape, heads_shape, modulo, masking,
                               numba.carray(out, (count, width)),
                               numba.carray(scratch, (layers, lags), np.uint64),
                               numba.carray(more_scratch, (width,), np.float64))  # fmt: skip
    else:
        multipliers, how = kernel.column_multipliers, kernel.how

        def rows(ids, count, context, resets, resets_count, out, scratch, more_scratch):
            column_rows_inline(numba.carray(ids, (count,)), numba.carray(context, (lags - 1,)),
                               numba.carray(resets, (resets_count,)), pad, multipliers, primes, offsets,
                               how, mask, numba.carray(out, (count, width)),
                               numba.carray(scratch, (lags,), np.int64))  # fmt: skip

    types = numba.types
    signature = types.void(
        types.CPointer(numba.from_dtype(id_dtype)), types.int64, types.CPointer(types.int64),
        types.CPointer(types.int64), types.int64, types.CPointer(numba.from_dtype(spec.row_dtype)),
        types.voidptr, types.voidptr,
    )  # fmt: skip
    try:
        entry = numba.cfunc(signature, error_model="numpy")(rows)
        library = entry._library  # numba keeps these private: a change there gives no stored code
        external = r'^(?:declare [^@]*@"?([\w.$]+)|@"?([\w.$]+)"? = external )'
        found = re.findall(external, library.get_llvm_str(), flags=re.MULTILINE)
        declared = {name for pair in found for name in pair}
        return MachineCode(
            library._get_compiled_object(),
            entry.native_name,
            tuple(sorted(name for name in declared if name and not name.startswith("llvm."))),
        )
    except (AttributeError, TypeError):
        return None
