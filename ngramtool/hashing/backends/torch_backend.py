"""The torch backend: blocks of int64 tensor ops, on the CPU (intra-op threads) or a CUDA device.

Per block of tokens: the lag windows (pads past a document start, masked ids as the pad), the
multiply-XOR mix of each order, and the heads of an order in one broadcast ``remainder``
written straight into the token-major block. ``remainder`` on int64 is floor modulo, exact for
any mix, so the same code serves ``negative_ids="hash"``. Speed: docs/performance.md.
"""

from __future__ import annotations

import numpy as np
import torch

from ...spec.hashspec import HashSpec
from . import MASKED_ROW

# CPU: torch's intra-op threads wait for each other after every parallel op, and on a busy machine
# a descheduled thread stalls the others; 64K-token blocks make 4x fewer such waits than 16K ones
# and ran as fast on an idle machine. CUDA: blocks that amortise launches within 64 MiB of scratch.
CPU_BLOCK_TOKENS = 1 << 16
CUDA_BLOCK_TOKENS = 1 << 18


def devices() -> tuple[str, ...]:
    """The CPU, and CUDA when torch sees a GPU."""
    return ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",)


def unavailable_reason(device_type: str) -> str:
    """Why torch cannot run on ``device_type`` (a CUDA device torch does not see)."""
    return (
        f"torch {torch.__version__} sees no {device_type} device (torch.cuda.is_available() is False): "
        "use `device=cpu`, or install a CUDA build of torch on a machine with a GPU"
    )


def make_kernel(spec: HashSpec, *, offsets: bool, negative_ids: str, device: str) -> TorchRows:
    """The torch evaluator on ``device``."""
    return TorchRows(spec, offsets=offsets, negative_ids=negative_ids, device=device)


TORCH_DTYPES = {np.dtype(np.int32): torch.int32, np.dtype(np.int64): torch.int64}


def empty(shape: tuple[int, ...], dtype: np.dtype, device: torch.device) -> torch.Tensor:
    """An uninitialised int32/int64 tensor. On the CPU its memory comes from numpy, which asks the
    kernel for huge pages: the first writes into a fresh 128 MB output then spend a quarter of
    the time in page faults that they spend with torch's own allocation."""
    if device.type == "cpu":
        return torch.from_numpy(np.empty(shape, dtype=dtype))
    return torch.empty(shape, dtype=TORCH_DTYPES[np.dtype(dtype)], device=device)


def chunk_ext(ids: torch.Tensor, context: np.ndarray) -> torch.Tensor:
    """int64 [N-1+T] on the ids' device: the carried context ids, then the chunk's ids."""
    n1 = context.shape[0]
    ext = empty((n1 + ids.shape[0],), np.dtype(np.int64), ids.device)
    ext[:n1] = torch.from_numpy(context)
    ext[n1:] = ids
    return ext


class TorchRows:
    """Rows of one chunk with torch tensor ops (see :class:`ngramtool.hashing.backends.RowsKernel`)."""

    tensors = True

    def __init__(self, spec: HashSpec, *, offsets: bool, negative_ids: str, device: str) -> None:
        self.spec = spec
        self.device = device
        self.mask = negative_ids == "mask"
        self.block = CUDA_BLOCK_TOKENS if device.startswith("cuda") else CPU_BLOCK_TOKENS
        self.multipliers = spec.multipliers.tolist() if spec.layer_mix else None
        self.column_multipliers = torch.from_numpy(spec.column_multipliers.copy()).to(device)
        self.primes = torch.from_numpy(spec.primes.copy()).to(device)
        self.offsets = torch.from_numpy(spec.offsets.astype(spec.row_dtype)).to(device) if offsets else None

    def rows(self, ids: torch.Tensor, context: np.ndarray, resets: np.ndarray) -> torch.Tensor:
        """Rows [T, L, C] of the chunk ``ids`` after ``context``; documents start at ``resets``."""
        spec, n, t_total = self.spec, self.spec.max_ngram, ids.shape[0]
        ext = chunk_ext(ids, context)
        masked = None
        if self.mask:
            masked = ext[n - 1 :] < 0
            ext.masked_fill_(ext < 0, spec.pad_id)
        starts = None
        if resets.size:
            # starts[i]: a document starts at ext position i (chunk position i - (N-1)).
            starts = torch.zeros(ext.shape[0], dtype=torch.bool, device=ids.device)
            starts[torch.from_numpy(resets + (n - 1)).to(ids.device)] = True
        out = empty((t_total, spec.num_layers, spec.num_columns), spec.row_dtype, ids.device)
        # int32 rows: each block's int64 remainders go through a scratch block first.
        scratch = None
        if out.dtype != torch.int64:
            scratch = torch.empty_like(out[: self.block], dtype=torch.int64)
        for lo in range(0, t_total, self.block):
            hi = min(lo + self.block, t_total)
            windows = self._windows(ext, starts, lo, hi)
            if scratch is None:
                self.hash_block(windows, out[lo:hi])
            else:
                self.hash_block(windows, scratch[: hi - lo])
                out[lo:hi] = scratch[: hi - lo]
            if self.offsets is not None:
                out[lo:hi] += self.offsets
        if masked is not None:
            out[masked] = MASKED_ROW
        return out

    def _windows(
        self, ext: torch.Tensor, starts: torch.Tensor | None, lo: int, hi: int
    ) -> list[torch.Tensor]:
        """The N lag windows of tokens lo..hi-1; a lag that reaches before a document start is pad."""
        n, pad = self.spec.max_ngram, self.spec.pad_id
        windows = [ext[lo + n - 1 : hi + n - 1]]
        cut = None
        for lag in range(1, n):
            window = ext[lo + n - 1 - lag : hi + n - 1 - lag]
            if starts is not None:
                # Lag k is cut when a document starts at one of positions t-k+1 .. t.
                here = starts[lo + n - lag : hi + n - lag]
                cut = here if cut is None else cut | here
                window = torch.where(cut, pad, window)
            windows.append(window)
        return windows

    def hash_block(self, windows: list[torch.Tensor], dest: torch.Tensor) -> None:
        """The per-head hashes (no offsets) of one block of windows, into int64 ``dest`` [b, L, C]."""
        spec, k = self.spec, self.spec.heads
        if self.multipliers is None:
            self._hash_columns(windows, dest)
            return
        for li, mult in enumerate(self.multipliers):
            acc = windows[0] * mult[0]
            for order in range(2, spec.max_ngram + 1):
                acc = acc ^ (windows[order - 1] * mult[order - 1])
                first = spec.column(order, 0)
                torch.remainder(acc[:, None], self.primes[li, order - 2], out=dest[:, li, first : first + k])

    def _hash_speedrun(self, windows: list[torch.Tensor], dest: torch.Tensor) -> None:
        """:meth:`hash_block` for the speedrun family (:mod:`ngramtool.spec.families.speedrun`):
        int32 products (``to(int32)`` keeps the low 32 bits) XORed, floor modulo ``T - 1``, the pad
        read as the reserved id ``T - 1`` and the reserved row where the window starts before the
        sequence."""
        spec = self.spec
        at_pad = [window == spec.pad_id for window in windows]
        for li in range(spec.num_layers):
            for c in range(spec.num_columns):
                order, modulus = c // spec.heads + 2, int(spec.primes[li, c // spec.heads, 0]) - 1
                reserved = at_pad[0] if spec.reserved_first else torch.stack(at_pad[:order]).any(dim=0)
                mix = torch.zeros_like(windows[0], dtype=torch.int32)
                for lag in range(order):
                    read = torch.where(at_pad[lag], modulus, windows[lag])
                    mix ^= (read * int(spec.column_multipliers[li, c, lag])).to(torch.int32)
                hashed = torch.remainder(mix.to(torch.int64), modulus)
                dest[:, li, c] = torch.where(reserved, modulus, hashed)

    def _hash_columns(self, windows: list[torch.Tensor], dest: torch.Tensor) -> None:
        """:meth:`hash_block` for families whose columns have their own multipliers (sum or XOR)."""
        spec = self.spec
        if spec.family == "speedrun":
            self._hash_speedrun(windows, dest)
            return
        moduli = self.primes.reshape(spec.num_layers, spec.num_columns)
        for li in range(spec.num_layers):
            mult = self.column_multipliers[li]  # [C, N]
            acc = windows[0][:, None] * mult[:, 0]
            for lag in range(1, spec.max_ngram):
                term = windows[lag][:, None] * mult[:, lag]
                acc = acc + term if spec.mix == "sum" else acc ^ term
            torch.remainder(acc, moduli[li], out=dest[:, li])
