"""The straightforward torch hash, written the way the Engram reference code computes it.

It is the yardstick of the benchmarks (``benchmarks/bench_hash.py``, ``ngramtool bench``) and an
independent oracle in the parity tests: int64 tensors, lag windows built with ``cat``, a
``remainder`` per head, ``stack`` and offsets added at the end (TileKernels' ``engram_hash_ref``
applied to demo-style windows). Requires the ``torch`` extra.
"""

from __future__ import annotations

import numpy as np

from ...spec.hashspec import HashSpec
from ...util.errors import NgramToolError


def torch_reference_rows(canonical_ids: np.ndarray, spec: HashSpec) -> np.ndarray:
    """Rows [T, L, C] (int64) for one stream of canonical ids, pad only at the stream start."""
    try:
        import torch
    except ImportError:
        raise NgramToolError("the torch reference needs PyTorch: pip install 'ngramtool[torch]'") from None
    ids = torch.as_tensor(np.asarray(canonical_ids, dtype=np.int64))
    n = spec.max_ngram
    pad = torch.full((n - 1,), spec.pad_id, dtype=torch.int64)
    padded = torch.cat([pad, ids])
    t_total = ids.shape[0]
    windows = [padded[n - 1 - k : n - 1 - k + t_total] for k in range(n)]
    multipliers = torch.tensor(spec.multipliers)
    primes = torch.tensor(spec.primes)
    offsets = torch.tensor(spec.offsets)
    layers = []
    for li in range(spec.num_layers):
        acc = windows[0] * multipliers[li, 0]
        heads = []
        for order in range(2, n + 1):
            acc = torch.bitwise_xor(acc, windows[order - 1] * multipliers[li, order - 1])
            for h in range(spec.heads):
                heads.append(torch.remainder(acc, primes[li, order - 2, h]))
        layers.append(torch.stack(heads, dim=-1) + offsets[li])
    return torch.stack(layers, dim=1).numpy()
