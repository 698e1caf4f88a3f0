"""The heads' reductions of one mix, vectorized: ``x mod p + offset`` for an order's K columns at once.

The Engram kernel (:mod:`ngramtool.hashing.backends.numba_backend`) calls :func:`reduce_heads`
once per token, layer and order, with the mix ``x`` in [0, 2^63), which it splits into two exact
doubles: ``hi = (x >> 32) * 2^32`` and ``lo = x mod 2^32``. Per column ``j`` it reads the biased inverse
``columns[0, j]``, the prime ``columns[1, j]`` and the offset ``columns[2, j]`` (doubles) and
stores the row:

    q = floor(fl(hi + lo) * inverse)        # floor(x / p) or one less
    r = fma(-q, p, hi) + lo                 # x - q p, exact, in [0, 2p)
    row = (r if r - p < 0 else r - p) + offset

Why it is exact, for primes ``p`` in [:data:`VECTOR_MIN_PRIME`, :data:`VECTOR_MAX_PRIME`) and
offsets with ``offset + p < 2^53`` (:func:`vector_exact`): the inverse is ``(1/p)(1 - 2^-49)``
rounded, so the product ``fl(fl(hi + lo) * inverse)`` is ``(x/p)(1 - 2^-49)(1 + e)`` with
``|e| < 2^-50`` (four roundings of 2^-53 each). It is below ``x/p``, so ``q <= floor(x/p)``; and
above ``x/p - (x/p) 1.5 * 2^-49 > x/p - 0.75``, as ``x/p < 2^63 / 2^15 = 2^48``, so
``q >= floor(x/p) - 1`` and ``x - q p`` lies in [0, 2p). The fused multiply-add rounds
``hi - q p`` once, and its exact value ``x - q p - lo`` is an integer of magnitude below
``2p + 2^32 < 2^53``: representable, so exact. Every later step is on integers below 2^53.

Emitted as LLVM vector instructions of the order's K lanes (K a compile-time constant: a tuple
of that length, :func:`ngramtool.util.jit.static`), so the loads of the column constants and the
store of the K rows are whole vectors whatever LLVM can prove about aliasing (its SLP vectorizer
cannot move the loads of one column above the store of the previous one, which made the scalar
code of the same steps twice as slow). Given an int, or arrays not C-contiguous, it reduces the
columns one lane at a time.

numba caches the compiled kernels that call :func:`reduce_heads` by their own source file
(``numba_backend.py``): a change here must come with a change there (its ``KERNEL_REVISION``), or
kernels compiled before it stay in the cache.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

VECTOR_MIN_PRIME = 1 << 15  # x/p < 2^48 for every mix, so q is floor(x/p) or one less
VECTOR_MAX_PRIME = 1 << 52  # 2p + 2^32 < 2^53: the fused x - q p is exact
INVERSE_BIAS = 1.0 - 2.0**-49


def vector_exact(primes: np.ndarray, offsets: np.ndarray) -> bool:
    """Whether :func:`reduce_heads` is exact for these primes and offsets (module docstring)."""
    primes = np.asarray(primes, dtype=np.int64)
    top = int(primes.max()) + int(np.asarray(offsets, dtype=np.int64).max())
    return int(primes.min()) >= VECTOR_MIN_PRIME and int(primes.max()) < VECTOR_MAX_PRIME and top < 1 << 53


def vector_columns(primes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The constants [3, columns] :func:`reduce_heads` reads: biased inverses, primes, offsets."""
    primes = np.asarray(primes, dtype=np.float64).reshape(-1)
    inverses = (1.0 / primes) * INVERSE_BIAS
    return np.stack([inverses, primes, np.asarray(offsets, dtype=np.float64).reshape(-1)])


@intrinsic
def reduce_heads(typingctx, out, t, first, columns, mix, heads):
    """Store ``mix mod p_j + offset_j`` into ``out[t, first:first + K]`` (module docstring), for a
    64-bit ``mix`` in [0, 2^63); ``heads``: K as a tuple of that length (vector code) or an int
    (a loop)."""
    if isinstance(heads, types.BaseTuple):
        lanes = len(heads)
    elif isinstance(heads, types.Integer):
        lanes = None
    else:
        return None
    if not isinstance(mix, types.Integer) or mix.bitwidth != 64:
        return None
    signature = types.none(out, t, first, columns, mix, heads)

    def codegen(context, builder, sig, args):
        out_value, t_value, first_value, columns_value, mix_value, heads_value = args
        out_type, columns_type = sig.args[0], sig.args[3]
        out_array = context.make_array(out_type)(context, builder, out_value)
        columns_array = context.make_array(columns_type)(context, builder, columns_value)
        row = context.cast(builder, t_value, sig.args[1], types.intp)
        start = context.cast(builder, first_value, sig.args[2], types.intp)
        row_type = context.get_value_type(out_type.dtype)
        word = ir.IntType(32)  # x >> 32 below 2^31 and x mod 2^32: each converted from 32 bits
        hi_value = builder.fmul(
            builder.sitofp(
                builder.trunc(builder.lshr(mix_value, ir.Constant(mix_value.type, 32)), word), ir.DoubleType()
            ),
            ir.Constant(ir.DoubleType(), float(1 << 32)),
        )
        lo_value = builder.uitofp(builder.trunc(mix_value, word), ir.DoubleType())

        def pointer(array, array_type, index):
            return cgutils.get_item_pointer2(
                context,
                builder,
                array.data,
                cgutils.unpack_tuple(builder, array.shape),
                cgutils.unpack_tuple(builder, array.strides),
                array_type.layout,
                index,
            )

        def emit(width: int, column) -> None:
            double = ir.VectorType(ir.DoubleType(), width)
            undefined = ir.Constant(double, ir.Undefined)
            zeros = ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width)

            def constants(which: int):
                at = pointer(columns_array, columns_type, [ir.Constant(column.type, which), column])
                return builder.load(builder.bitcast(at, double.as_pointer()), align=8)

            def broadcast(value):
                one = builder.insert_element(undefined, value, ir.Constant(ir.IntType(32), 0))
                return builder.shuffle_vector(one, undefined, zeros)

            def call(name: str, operands):
                function_type = ir.FunctionType(double, [double] * len(operands))
                function = cgutils.get_or_insert_function(
                    builder.module, function_type, f"{name}.v{width}f64"
                )
                return builder.call(function, operands)

            inverse, prime, offset = constants(0), constants(1), constants(2)
            mix = broadcast(builder.fadd(hi_value, lo_value))
            quotient = call("llvm.floor", [builder.fmul(mix, inverse)])
            low = builder.fadd(
                call("llvm.fma", [builder.fneg(quotient), prime, broadcast(hi_value)]), broadcast(lo_value)
            )
            high = builder.fsub(low, prime)
            below = builder.fcmp_ordered("<", high, ir.Constant(double, [0.0] * width))
            rows = builder.fadd(builder.select(below, low, high), offset)
            rows_type = ir.VectorType(row_type, width)
            at = pointer(out_array, out_type, [row, column])
            builder.store(
                builder.fptosi(rows, rows_type),
                builder.bitcast(at, rows_type.as_pointer()),
                align=row_type.width // 8,
            )

        if lanes is not None and out_type.layout == "C" and columns_type.layout == "C":
            emit(lanes, start)
        elif lanes is not None:  # lanes apart in memory: one at a time
            for lane in range(lanes):
                emit(1, builder.add(start, ir.Constant(start.type, lane)))
        else:
            count = context.cast(builder, heads_value, sig.args[5], types.intp)
            with cgutils.for_range(builder, count) as loop:
                emit(1, builder.add(start, loop.index))
        return context.get_dummy_value()

    return signature, codegen
