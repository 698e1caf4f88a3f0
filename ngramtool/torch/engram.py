"""Torch modules of one Engram memory: table read-out, gate and ShortConv (extra ``torch``).

Follows docs/engram-spec.md §5 and §6 (the DeepSeek Engram demo):

* read-out: the rows ``[B, S, C]`` of one layer gather ``[B, S, C, d]`` vectors from that layer's
  table, flattened to ``e [B, S, C*d]`` (columns in index order: order-2 heads, then order 3, ...);
* gate, per hyper-connection branch ``i``: ``k = RMSNorm(key_proj_i(e))``,
  ``q = RMSNorm(hidden_i)``, ``s = <k, q> / sqrt(D)``, ``g = sigmoid(sign(s) sqrt(max(|s|, clamp)))``,
  and the value ``g * value_proj(e)``;
* ShortConv: per-branch RMSNorm (eps 1e-5), a depthwise causal Conv1d (kernel 4, dilation N, no
  bias) over the branch-major channels, SiLU; the layer's output is ``value + ShortConv(value)``,
  which the block adds to the residual stream.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch  # the package's __init__ ran first: without torch, an ImportError with the install hint

nn = torch.nn
F = torch.nn.functional

DEMO_CLAMP = 1e-6
SHORT_CONV_EPS = 1e-5


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float | None) -> torch.Tensor:
    """``x * rsqrt(mean(x^2) + eps) * weight`` over the last dimension; eps None = ``finfo(x.dtype).eps``."""
    eps = torch.finfo(x.dtype).eps if eps is None else eps
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


class RMSNorm(nn.Module):
    """RMSNorm over the last dimension with a learnable weight of ``shape`` (e.g. ``(hc, D)``).

    ``eps=None`` is the dtype's machine epsilon, like ``torch.nn.RMSNorm(eps=None)`` in the demo.
    """

    def __init__(self, shape: int | tuple[int, ...], eps: float | None = None) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(shape))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalize ``x [..., *shape]``."""
        return rms_norm(x, self.weight, self.eps)


class EngramGate(nn.Module):
    """The demo's gate for ``hc_mult`` branches: ``[..., hc, D]`` hidden and keys -> gates ``[..., hc]``.

    Args:
        hidden_size: D.
        hc_mult: hyper-connection branches; each has its own key and query RMSNorm weight.
        eps: the RMSNorms' epsilon (None: the dtype's epsilon, as in the demo).
        clamp: the floor of ``|s|`` under the signed square root.
    """

    def __init__(
        self, hidden_size: int, *, hc_mult: int = 1, eps: float | None = None, clamp: float = DEMO_CLAMP
    ) -> None:
        super().__init__()
        self.key_norm = RMSNorm((hc_mult, hidden_size), eps)
        self.query_norm = RMSNorm((hc_mult, hidden_size), eps)
        self.clamp = clamp

    def forward(self, hidden: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        """Gates in (0, 1) for ``hidden`` (the queries) and ``key`` (``key_proj(e)``), both ``[..., hc, D]``.

        ``s = 0`` (e.g. an all-zero hidden state) gives exactly 0.5, as in the torch references.
        """
        score = (self.key_norm(key) * self.query_norm(hidden)).sum(-1) / math.sqrt(hidden.shape[-1])
        return torch.sigmoid(torch.sign(score) * torch.sqrt(score.abs().clamp(min=self.clamp)))


class ShortConv(nn.Module):
    """The demo's ShortConv on ``[B, S, hc, D]``: RMSNorm, depthwise causal Conv1d, SiLU.

    Output position ``t`` reads inputs ``t - (kernel_size-1)*dilation, ..., t - dilation, t``
    (zeros before the sequence start). Channels are branch-major: channel ``i*D + d``.

    Args:
        hidden_size: D.
        hc_mult: hyper-connection branches (each its own RMSNorm weight; one conv over all).
        kernel_size: taps of the convolution (the demo: 4).
        dilation: spacing of the taps; the demo uses the hash's N (``max_ngram``).
        eps: the RMSNorm epsilon (the demo: 1e-5).
    """

    def __init__(
        self,
        hidden_size: int,
        *,
        hc_mult: int = 1,
        kernel_size: int = 4,
        dilation: int = 3,
        eps: float = SHORT_CONV_EPS,
    ) -> None:
        super().__init__()
        channels = hc_mult * hidden_size
        self.norm = RMSNorm((hc_mult, hidden_size), eps)
        self.conv = nn.Conv1d(channels, channels, kernel_size, dilation=dilation, groups=channels, bias=False)
        self.left_pad = (kernel_size - 1) * dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``SiLU(conv(RMSNorm(x)))`` with the shape of ``x [B, S, hc, D]``."""
        batch, length, hc, dim = x.shape
        channels = self.norm(x).reshape(batch, length, hc * dim).transpose(1, 2)
        mixed = self.conv(F.pad(channels, (self.left_pad, 0)))
        return F.silu(mixed).transpose(1, 2).reshape(batch, length, hc, dim)


class EngramMemory(nn.Module):
    """One Engram layer for a single residual branch (``hc_mult = 1``): table, gate and ShortConv.

    ``forward(hidden [B, S, D], rows [B, S, C]) -> [B, S, D]``, to be added to the residual stream
    (``hidden = hidden + memory(hidden, rows)``) before the block's attention.

    The table (an ``nn.Embedding`` of ``rows_per_layer`` x ``dim_per_head``) stays on the CPU: the
    rows are gathered there and only ``e`` moves to the device and dtype of ``hidden``. Module
    conversions (``.to``, ``.cuda``, ``.half``, ``.share_memory``, ...) apply to every other
    parameter and leave the table as it is (convert ``memory.table`` itself if you must). A
    masked token (its rows are -1) reads zero vectors, and the memory adds nothing at it and
    feeds no value from it to the ShortConv of later tokens (the TileKernels fork's image-token
    mask leaves the hidden state unchanged, docs/engram-spec.md §6.3).

    Args:
        rows_per_layer: the rows of this layer's table (``spec.rows_per_layer[l]``).
        columns: C = (N-1)*K, the rows per token (``spec.num_columns``).
        dim_per_head: d, the width of one table row; ``e`` has C*d features.
        hidden_size: D, the model width.
        max_ngram: N of the hash; the ShortConv dilation.
        kernel_size: the ShortConv taps.
        sparse: sparse table gradients (``nn.Embedding(sparse=True)``; needs e.g. ``SparseAdam``).
        eps: the gate RMSNorms' epsilon (None: the dtype's epsilon, as in the demo).
    """

    def __init__(
        self,
        rows_per_layer: int,
        columns: int,
        dim_per_head: int,
        hidden_size: int,
        *,
        max_ngram: int = 3,
        kernel_size: int = 4,
        sparse: bool = False,
        eps: float | None = None,
    ) -> None:
        super().__init__()
        self.table = nn.Embedding(int(rows_per_layer), dim_per_head, sparse=sparse)
        engram_size = columns * dim_per_head
        self.key_proj = nn.Linear(engram_size, hidden_size)
        self.value_proj = nn.Linear(engram_size, hidden_size)
        self.gate = EngramGate(hidden_size, eps=eps)
        self.short_conv = ShortConv(hidden_size, kernel_size=kernel_size, dilation=max_ngram)

    def _apply(self, fn: Callable[[torch.Tensor], torch.Tensor], recurse: bool = True) -> EngramMemory:
        # Convert everything except the table, which keeps its CPU storage; restore the module order.
        children = dict(self._modules)
        del self._modules["table"]
        try:
            return super()._apply(fn, recurse)
        finally:
            self._modules.clear()
            self._modules.update(children)

    def read(self, rows: torch.Tensor) -> torch.Tensor:
        """``e [B, S, C*d]`` for ``rows [B, S, C]``, gathered on the table's device (the CPU)."""
        rows = rows.to(self.table.weight.device)
        vectors = self.table(rows.clamp(min=0)) * (rows >= 0).unsqueeze(-1)
        return vectors.flatten(-2)

    def forward(self, hidden: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """``value + ShortConv(value)`` [B, S, D], where ``value = gate * value_proj(e)``."""
        e = self.read(rows).to(device=hidden.device, dtype=hidden.dtype)
        present = (rows[..., :1] >= 0).to(device=hidden.device, dtype=hidden.dtype)  # [B, S, 1]
        gate = self.gate(hidden.unsqueeze(-2), self.key_proj(e).unsqueeze(-2)) * present  # [B, S, 1]
        value = gate.unsqueeze(-1) * self.value_proj(e).unsqueeze(-2)  # [B, S, 1, D]
        return (value + self.short_conv(value)).squeeze(-2) * present
