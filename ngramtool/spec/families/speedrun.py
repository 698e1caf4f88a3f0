"""The speedrun bigram hash: fixed multipliers, XOR in int32, one modulus, raw ids (docs/families.md).

modded-nanogpt's ``get_bigram_hash`` (its PR #201, ``train_gpt.py``) hashes a batch's token
sequence ``x`` into a table of ``T`` rows (``5 V`` there): row ``T - 1`` is reserved, position 0
gets it, and position ``t >= 1`` gets ``(36313 * x[t] XOR 27191 * x[t-1]) mod (T - 1)``. The code
writes the reserved row into position 0 *before* it reads ``x[t-1]``, so position 1 hashes the
reserved id ``T - 1`` in place of ``x[0]``: the sequence's first token reads as the reserved id
(``first_token="reserved"``). parameter-golf's ``TrigramHashEmbedding`` (the TrigramHash record)
adds the third multiplier 18731 for ``x[t-2]`` and gives every position whose window reaches before
the start the reserved row, reading ``x[0]`` as itself (``first_token="kept"``).

Both compute in torch int32: a product wraps to 32 bits (``27191 * (T - 1)`` does for ``T`` of 5 V
rows), the XOR is of int32 values and ``%`` is floor modulo (the sign of the divisor).
:func:`speedrun_rows` is that definition on explicit lag windows; before a sequence start a window
holds the pad, which for this family is the start marker ``V`` (one past the last raw id, never a
token), read as the reserved id wherever a row is hashed.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ...util.errors import UsageError

MULTIPLIERS = (36313, 27191, 18731)
"""By lag: 36313 for the current token (modded-nanogpt), 27191 for the one before it, 18731 for the
one before that (parameter-golf's trigram)."""
FirstToken = Literal["reserved", "kept"]
FIRST_TOKENS: tuple[FirstToken, ...] = ("reserved", "kept")
"""What later windows read for a sequence's first token: the reserved id (modded-nanogpt) or the
token itself (parameter-golf)."""
_LOW32 = np.uint64(0xFFFFFFFF)


def check(max_ngram: int, heads: int, first_token: str | None) -> None:
    """The speedrun family's constraints, each a usage error that says the fix."""
    if max_ngram > len(MULTIPLIERS):
        raise UsageError(
            f"family 'speedrun' has multipliers for orders 2..{len(MULTIPLIERS)} "
            f"({', '.join(map(str, MULTIPLIERS))}): give max_ngram 2 or 3 (got {max_ngram})"
        )
    if heads != 1:
        raise UsageError(f"family 'speedrun' has one fixed hash per order: give heads=1 (got {heads})")
    if first_token not in FIRST_TOKENS:
        raise UsageError(
            "`first_token` must be 'reserved' (modded-nanogpt) or 'kept' (parameter-golf), "
            f"got {first_token!r}"
        )


def column_multipliers(max_ngram: int) -> np.ndarray:
    """int64 [C, N]: column c (order c + 2) multiplies lag k by ``MULTIPLIERS[k]``, 0 past its order.

    >>> column_multipliers(3).tolist()
    [[36313, 27191, 0], [36313, 27191, 18731]]
    """
    out = np.zeros((max_ngram - 1, max_ngram), dtype=np.int64)
    for c in range(max_ngram - 1):
        out[c, : c + 2] = MULTIPLIERS[: c + 2]
    return out


def wrap32(values: np.ndarray) -> np.ndarray:
    """int64 values (any) reduced to the int32 they wrap to, sign-extended to int64.

    >>> wrap32(np.array([27191 * 251519, 5])).tolist()
    [-1750881463, 5]
    """
    low = np.asarray(values, dtype=np.int64).view(np.uint64) & _LOW32
    return low.astype(np.uint32).view(np.int32).astype(np.int64)


def speedrun_rows(windows: np.ndarray, pad: int, tables: np.ndarray, first_token: str) -> np.ndarray:
    """Rows without offsets, int64 [M, C], of lag windows [M, N] (``pad`` before the start).

    Column c (order n = c + 2) of table ``tables[c]`` (modulus ``tables[c] - 1``): the reserved row
    ``tables[c] - 1`` where the current token is the pad (``reserved``) or any of the n lags is
    (``kept``); else the floor modulo of the int32 XOR of ``wrap32(m_k * w_k)`` over lags k < n,
    the pad read as the reserved id.

    >>> speedrun_rows(np.array([[5, 7], [7, 9]]), 9, np.array([46]), "reserved").ravel().tolist()
    [27, 10]
    """
    windows = np.asarray(windows, dtype=np.int64)
    out = np.empty((windows.shape[0], len(tables)), dtype=np.int64)
    for c, table in enumerate(int(t) for t in tables):
        order, modulus = c + 2, table - 1
        lags = windows[:, :order]
        at_pad = lags == pad
        reserved = at_pad.any(axis=1) if first_token == "kept" else at_pad[:, 0]
        read = np.where(at_pad, modulus, lags).view(np.uint64)
        mix = np.zeros(windows.shape[0], dtype=np.int64)
        with np.errstate(over="ignore"):
            for lag in range(order):
                mix ^= wrap32((read[:, lag] * np.uint64(MULTIPLIERS[lag])).view(np.int64))
        out[:, c] = np.where(reserved, modulus, np.mod(mix, modulus))
    return out
