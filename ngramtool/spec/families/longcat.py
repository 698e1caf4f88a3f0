"""LongCat-Flash's n-gram embedding (Over-Encoding): polynomial ids, not multiply-XOR.

Sub-table i = (n-2)*K + k (order n, split k) has ``m_n + 2i + 1`` rows, ``m_n`` the spec's table
size for order n (LongCat's ``ngram_vocab_size_ratio * V`` for every order); the id of a position
is ``(sum_j tok[t-j] * (V**j mod mod_i)) mod mod_i`` over j = 0..n-1, plus the sub-table's offset.
The walk stops at the sequence start or at an ignored (negative) token: the older terms are
dropped, which is a pad of 0 (a zero term), so LongCat's pad is 0 and its ignored tokens are
``negative_ids="barrier"`` (docs/families.md). Every term and sum is exact in int64:
:func:`check_exact` refuses sizes where ``N * V * mod`` could reach 2^63.
"""

from __future__ import annotations

import numpy as np

from ...util.errors import UsageError

INT64_LIMIT = 2**63


def moduli(table_sizes: tuple[int, ...], heads: int) -> np.ndarray:
    """int64 [N-1, K]: ``m_n + 2i + 1`` rows for sub-table i = (n-2)*K + k.

    >>> moduli((5003, 5003), 2).tolist()
    [[5004, 5006], [5008, 5010]]
    """
    index = np.arange(len(table_sizes) * heads, dtype=np.int64).reshape(len(table_sizes), heads)
    return np.asarray(table_sizes, dtype=np.int64)[:, None] + 2 * index + 1


def column_weights(vocab_size: int, table_sizes: tuple[int, ...], heads: int) -> np.ndarray:
    """int64 [C, N]: column c's weight ``V**j mod mod_c`` for lag j below its order, else 0.

    >>> column_weights(1000, (5003,), 1).tolist()
    [[1, 1000]]
    """
    mods = moduli(table_sizes, heads).reshape(-1).tolist()
    n = len(table_sizes) + 1
    out = np.zeros((len(mods), n), dtype=np.int64)
    for c, mod in enumerate(mods):
        order = c // heads + 2
        out[c, :order] = [pow(vocab_size, j, mod) for j in range(order)]
    return out


def check_exact(vocab_size: int, table_sizes: tuple[int, ...], heads: int) -> None:
    """A usage error when a sum of N terms ``tok * weight`` could reach 2^63 (int64 would wrap)."""
    largest = int(moduli(table_sizes, heads).max())
    terms = len(table_sizes) + 1
    if terms * (vocab_size - 1) * (largest - 1) >= INT64_LIMIT:
        raise UsageError(
            f"LongCat ids with V={vocab_size:,} and sub-tables up to {largest:,} rows could exceed "
            "2^63 before the modulo: use smaller tables (ngram_vocab_size_ratio)"
        )
