"""The Triton backend: one ``@triton.jit`` launch computes every row of a chunk.

Each program takes ``BLOCK_TOKENS`` consecutive tokens and loops (unrolled at compile time) over
layers, lags and orders; the K heads of an order are one [tokens, K] tile, stored as contiguous
runs of the token-major output. The kernel does everything in one pass: the lag windows from the
carried context and the chunk, the pad for lags before a document start (a byte per token
marks document starts), masked ids (negative: the pad for their neighbours, -1 rows for
themselves), the multiply-XOR mixes, the modulo, the offsets, and int32 or int64 stores.

Modulo. With masked ids replaced by the pad every id is in [0, V'), so every mix is in
[0, 2^63) (docs/engram-spec.md §3.1) and the kernel needs no division: with ``M = floor(2^64 / p)``
per prime, ``q = umulhi(x, M)`` is ``floor(x / p)`` or one less, so ``r = x - q*p`` lies in
[0, 2p) and one conditional subtraction gives ``x mod p`` (Barrett reduction). For int32 rows
(every prime < 2^31, so 2p < 2^32) ``r`` is formed in 32-bit arithmetic, exact modulo 2^32.
With ``negative_ids="hash"`` mixes may be negative: that path uses ``%``, which in Triton (as
in C) truncates toward zero, and adds p to negative remainders, which is floor modulo.

On the CPU the kernel runs only under ``TRITON_INTERPRET=1`` (Triton's interpreter, for tests);
Triton reads that variable when this module is imported.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import torch
import triton
import triton.language as tl
from triton.runtime.jit import JITFunction

from ...spec.hashspec import HashSpec
from .torch_backend import chunk_ext, empty

BLOCK_TOKENS = 128
NUM_WARPS = 4


def interpreting() -> bool:
    """Whether the kernel runs in Triton's CPU interpreter (``TRITON_INTERPRET=1`` at import)."""
    return not isinstance(engram_rows_kernel, JITFunction)


def devices() -> tuple[str, ...]:
    """CUDA when torch sees a GPU; the CPU instead under ``TRITON_INTERPRET=1``."""
    if interpreting():
        return ("cpu",)
    return ("cuda",) if torch.cuda.is_available() else ()


def unavailable_reason(device_type: str) -> str:
    """Why the kernel cannot run on ``device_type``, and what to do instead."""
    if interpreting():
        return "TRITON_INTERPRET=1 runs the triton backend on the CPU only: unset it to use a GPU"
    if not torch.cuda.is_available():
        return (
            "the triton backend needs a CUDA GPU and torch sees none: use `backend=numpy` or torch "
            "(or set TRITON_INTERPRET=1 to run it, slowly, on the CPU for testing)"
        )
    return "the triton backend runs on the GPU: use `device=cuda`, or `backend=numpy` or torch for the CPU"


def make_kernel(spec: HashSpec, *, offsets: bool, negative_ids: str, device: str) -> TritonRows:
    """The Triton evaluator on ``device``."""
    return TritonRows(spec, offsets=offsets, negative_ids=negative_ids, device=device)


@triton.jit
def _lag_window(
    ext_ptr,
    starts_ptr,
    t,
    live,
    cut,
    pad_id,
    lag: tl.constexpr,
    N: tl.constexpr,
    RESET: tl.constexpr,
    MASK: tl.constexpr,
):
    """The ids at lag ``lag`` of tokens ``t``: the pad for masked ids and, from the first lag that
    reaches before a document start on (``cut``, returned updated), the pad."""
    window = tl.load(ext_ptr + t + (N - 1 - lag), mask=live, other=0)
    if MASK:
        window = tl.where(window < 0, pad_id, window)
    if RESET and lag > 0:
        # Lag k reaches before a document that starts at one of t-k+1 .. t.
        back = t - (lag - 1)
        here = tl.load(starts_ptr + back, mask=live & (back >= 0), other=0)
        cut = cut | (here != 0)
        window = tl.where(cut, pad_id, window)
    return window, cut


@triton.jit
def engram_rows_kernel(
    ext_ptr,  # int64 [N-1+T]: the carried context ids, then the chunk's ids
    starts_ptr,  # int8 [T]: 1 where a document starts (read only when RESET)
    mult_ptr,  # int64 [L, N]
    prime_ptr,  # int64 [L, N-1, K]
    magic_ptr,  # int64 [L, N-1, K]: floor(2^64 / prime) as a bit pattern
    offset_ptr,  # int32 or int64 (the row dtype) [L, C]
    out_ptr,  # int32 or int64 [T, L, C]
    num_tokens,
    pad_id,
    LAYERS: tl.constexpr,
    N: tl.constexpr,
    K: tl.constexpr,
    K_POW2: tl.constexpr,
    RESET: tl.constexpr,
    MASK: tl.constexpr,
    OFFSETS: tl.constexpr,
    NARROW: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Rows of ``BLOCK`` tokens: all layers, orders and heads."""
    cols: tl.constexpr = (N - 1) * K
    t = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    live = t < num_tokens
    heads = tl.arange(0, K_POW2)
    head_ok = heads < K
    store_ok = live[:, None] & head_ok[None, :]
    if MASK:
        masked = tl.load(ext_ptr + t + (N - 1), mask=live, other=0) < 0
    for layer in tl.static_range(LAYERS):
        acc = tl.zeros([BLOCK], dtype=tl.int64)
        cut = t < 0
        for lag in tl.static_range(N):
            window, cut = _lag_window(ext_ptr, starts_ptr, t, live, cut, pad_id, lag, N, RESET, MASK)
            acc = acc ^ (window * tl.load(mult_ptr + layer * N + lag))
            if lag > 0:
                param = (layer * (N - 1) + lag - 1) * K + heads
                prime = tl.load(prime_ptr + param, mask=head_ok, other=1)
                x, p = tl.broadcast(acc[:, None], prime[None, :])
                if MASK:
                    q = tl.umulhi(x, tl.load(magic_ptr + param, mask=head_ok, other=0)[None, :])
                    if NARROW:
                        p32 = p.to(tl.uint32)
                        r = x.to(tl.uint32) - q.to(tl.uint32) * p32
                        r = tl.where(r >= p32, r - p32, r).to(tl.int32)
                    else:
                        r = x - q * p
                        r = tl.where(r >= p, r - p, r)
                else:
                    r = x % p
                    r = tl.where(r < 0, r + p, r)
                col = layer * cols + (lag - 1) * K + heads
                if OFFSETS:
                    r = r + tl.load(offset_ptr + col, mask=head_ok, other=0)[None, :]
                if MASK:
                    r = tl.where(masked[:, None], -1, r)  # hashing.MASKED_ROW
                dest = out_ptr + t[:, None] * (LAYERS * cols) + col[None, :]
                tl.store(dest, r.to(out_ptr.dtype.element_ty), mask=store_ok)


@triton.jit
def column_rows_kernel(
    ext_ptr,  # int64 [N-1+T]: the carried context ids, then the chunk's ids
    starts_ptr,  # int8 [T]: 1 where a document starts (read only when RESET)
    mult_ptr,  # int64 [L, C, N]: each column's multiplier by lag, 0 past its order
    prime_ptr,  # int64 [L, C]: each column's table size
    magic_ptr,  # int64 [L, C]: floor(2^64 / size) as a bit pattern
    offset_ptr,  # int32 or int64 (the row dtype) [L, C]
    out_ptr,  # int32 or int64 [T, L, C]
    num_tokens,
    pad_id,
    LAYERS: tl.constexpr,
    N: tl.constexpr,
    K: tl.constexpr,
    K_POW2: tl.constexpr,
    RESET: tl.constexpr,
    MASK: tl.constexpr,
    OFFSETS: tl.constexpr,
    SUM: tl.constexpr,
    SPEEDRUN: tl.constexpr,
    KEPT: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Rows of ``BLOCK`` tokens for families whose columns have their own multipliers: each
    order's K heads are a [tokens, K] tile mixed by XOR (``SUM``: a sum) over the order's lags.
    Every mix is in [0, 2^63) (the spec's validation), so Barrett reduction is exact.

    ``SPEEDRUN`` (:mod:`ngramtool.spec.families.speedrun`): ``prime_ptr`` holds tables of T rows,
    hashed modulo T - 1; each product truncated to int32 (``.to(tl.int32)`` keeps the low 32
    bits), XORed, floor modulo (a division: the mix may be negative); the pad is read as the
    reserved id T - 1, and a window whose current token (``KEPT``: any lag) is the pad gets it."""
    cols: tl.constexpr = (N - 1) * K
    t = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    live = t < num_tokens
    heads = tl.arange(0, K_POW2)
    head_ok = heads < K
    store_ok = live[:, None] & head_ok[None, :]
    if MASK:
        masked = tl.load(ext_ptr + t + (N - 1), mask=live, other=0) < 0
    for layer in tl.static_range(LAYERS):
        for order in tl.static_range(2, N + 1):
            col = layer * cols + (order - 2) * K + heads
            acc = tl.zeros([BLOCK, K_POW2], dtype=tl.int32 if SPEEDRUN else tl.int64)
            size = tl.load(prime_ptr + col, mask=head_ok, other=2)[None, :]
            reserved = tl.zeros([BLOCK, K_POW2], dtype=tl.int1)
            cut = t < 0
            for lag in tl.static_range(order):
                window, cut = _lag_window(ext_ptr, starts_ptr, t, live, cut, pad_id, lag, N, RESET, MASK)
                mult = tl.load(mult_ptr + col * N + lag, mask=head_ok, other=0)[None, :]
                if SPEEDRUN:
                    at_pad = (window == pad_id)[:, None]
                    if KEPT or lag == 0:
                        reserved = reserved | at_pad
                    acc = acc ^ (tl.where(at_pad, size - 1, window[:, None]) * mult).to(tl.int32)
                elif SUM:
                    acc = acc + window[:, None] * mult
                else:
                    acc = acc ^ (window[:, None] * mult)
            if SPEEDRUN:
                r = acc.to(tl.int64) % (size - 1)
                r = tl.where(r < 0, r + size - 1, r)
                r = tl.where(reserved, size - 1, r)
            else:
                q = tl.umulhi(acc, tl.load(magic_ptr + col, mask=head_ok, other=0)[None, :])
                r = acc - q * size
                r = tl.where(r >= size, r - size, r)
            if OFFSETS:
                r = r + tl.load(offset_ptr + col, mask=head_ok, other=0)[None, :]
            if MASK:
                r = tl.where(masked[:, None], -1, r)  # hashing.MASKED_ROW
            dest = out_ptr + t[:, None] * (LAYERS * cols) + col[None, :]
            tl.store(dest, r.to(out_ptr.dtype.element_ty), mask=store_ok)


class TritonRows:
    """Rows of one chunk in one kernel launch (see :class:`ngramtool.hashing.backends.RowsKernel`)."""

    tensors = True

    def __init__(self, spec: HashSpec, *, offsets: bool, negative_ids: str, device: str) -> None:
        self.spec = spec
        self.device = device
        self.offsets = offsets
        self.mask = negative_ids == "mask"
        magic = [(1 << 64) // int(p) for p in spec.primes.reshape(-1)]
        self.magic = torch.from_numpy(np.array(magic, dtype=np.uint64).view(np.int64)).to(device)
        multipliers = spec.multipliers if spec.layer_mix else spec.column_multipliers
        self.multipliers = torch.from_numpy(multipliers.copy()).to(device)
        self.primes = torch.from_numpy(spec.primes.copy()).to(device)
        self.offset_table = torch.from_numpy(spec.offsets.astype(spec.row_dtype)).to(device)

    def rows(self, ids: torch.Tensor, context: np.ndarray, resets: np.ndarray) -> torch.Tensor:
        """Rows [T, L, C] of the chunk ``ids`` after ``context``; documents start at ``resets``."""
        spec, t_total = self.spec, ids.shape[0]
        out = empty((t_total, spec.num_layers, spec.num_columns), spec.row_dtype, ids.device)
        if t_total == 0:
            return out
        ext = chunk_ext(ids, context)
        starts = torch.zeros(t_total if resets.size else 1, dtype=torch.int8, device=ids.device)
        if resets.size:
            starts[torch.from_numpy(resets).to(ids.device)] = 1
        grid = (triton.cdiv(t_total, BLOCK_TOKENS),)
        # Triton launches on the current CUDA device: make it the one that holds the tensors.
        on_device = torch.cuda.device(ids.device) if ids.device.type == "cuda" else nullcontext()
        tensors = (ext, starts, self.multipliers, self.primes, self.magic, self.offset_table, out)
        shape = {
            "LAYERS": spec.num_layers,
            "N": spec.max_ngram,
            "K": spec.heads,
            "K_POW2": triton.next_power_of_2(spec.heads),
            "RESET": bool(resets.size),
            "MASK": self.mask,
            "OFFSETS": self.offsets,
            "BLOCK": BLOCK_TOKENS,
            "num_warps": NUM_WARPS,
        }
        with on_device:
            if spec.layer_mix:
                engram_rows_kernel[grid](
                    *tensors, t_total, spec.pad_id, NARROW=out.dtype == torch.int32, **shape
                )
            else:
                speedrun = {"SPEEDRUN": spec.family == "speedrun", "KEPT": spec.first_token == "kept"}
                column_rows_kernel[grid](
                    *tensors, t_total, spec.pad_id, SUM=spec.mix == "sum", **speedrun, **shape
                )
        return out
