"""The tutorial chapter's hash: multipliers per (order, head) from torch's CPU generator.

The chapter draws, from one ``torch.Generator`` seeded with the spec's seed (2026 in the chapter),
orders 2..N in turn and K heads each, ``torch.randint(1, 2**20, (order,), generator=g) * 2 + 1``:
one odd multiplier per window position, the OLDEST token first. torch's CPU generator is the
32-bit Mersenne Twister (MT19937) seeded as ``std::mt19937(seed)``, and ``randint`` over a range
below 2^32 takes one 32-bit output ``x`` and returns ``x % range + low``
(ATen's ``uniform_int_from_to``). :func:`torch_randint_stream` reproduces that without torch.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

MULTIPLIER_LOW = 1
MULTIPLIER_HIGH = 2**20  # exclusive: torch.randint(1, 2**20, ...)
_N, _M = 624, 397
_MATRIX_A, _UPPER, _LOWER = 0x9908B0DF, 0x80000000, 0x7FFFFFFF


def mt19937_outputs(seed: int) -> Iterator[int]:
    """The 32-bit outputs of MT19937 seeded like ``std::mt19937(seed)`` (and torch's CPU generator).

    >>> from itertools import islice
    >>> list(islice(mt19937_outputs(5489), 2))  # the C++ standard's default seed
    [3499211612, 581869302]
    """
    state = [seed & 0xFFFFFFFF]
    for i in range(1, _N):
        previous = state[-1]
        state.append((1812433253 * (previous ^ (previous >> 30)) + i) & 0xFFFFFFFF)
    while True:
        for i in range(_N):
            y = (state[i] & _UPPER) | (state[(i + 1) % _N] & _LOWER)
            state[i] = state[(i + _M) % _N] ^ (y >> 1) ^ (_MATRIX_A if y & 1 else 0)
        for y in state:
            y ^= y >> 11
            y ^= (y << 7) & 0x9D2C5680
            y ^= (y << 15) & 0xEFC60000
            yield y ^ (y >> 18)


def tutorial_multipliers(seed: int, max_ngram: int, heads: int) -> list[list[int]]:
    """The chapter's multiplier lists, one per column ((n-2)*K + h), each of n values, oldest first.

    >>> tutorial_multipliers(2026, 3, 4)[0]
    [923913, 70551]
    """
    outputs = mt19937_outputs(seed)
    span = MULTIPLIER_HIGH - MULTIPLIER_LOW
    return [
        [(next(outputs) % span + MULTIPLIER_LOW) * 2 + 1 for _ in range(order)]
        for order in range(2, max_ngram + 1)
        for _ in range(heads)
    ]


def column_multipliers(seed: int, max_ngram: int, heads: int) -> np.ndarray:
    """int64 [C, N]: column c's multiplier for lag k (k=0 the current token), 0 past its order.

    The chapter's list is oldest first, so lag k of an order-n column takes entry n-1-k.
    """
    lists = tutorial_multipliers(seed, max_ngram, heads)
    out = np.zeros((len(lists), max_ngram), dtype=np.int64)
    for c, values in enumerate(lists):
        out[c, : len(values)] = values[::-1]
    return out
