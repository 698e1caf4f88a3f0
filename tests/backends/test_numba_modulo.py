"""The Engram kernel's modulo paths are exact: the signed reciprocal gives ``x mod p`` for every
mix in [0, 2^63) and every prime it takes, and each path gives the numpy backend's rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

from ngramtool import HashSpec, NgramHasher
from ngramtool.hashing.backends.numba_backend import (
    FAST_MIN_PRIME,
    MODULO_RECIPROCAL,
    MODULO_SPLIT,
    SPECIALIZE_TOKENS,
    NumbaRows,
    inverse_of,
    signed_reciprocal_mod,
)


@settings(max_examples=300, deadline=None)
@given(x=st.integers(0, 2**63 - 1), p=st.integers(FAST_MIN_PRIME, 2**61), near=st.integers(-2, 2))
def test_signed_reciprocal_modulo_is_exact(x, p, near):
    x = min(max(x // p * p + near, 0), 2**63 - 1)  # next to a multiple of the prime
    assert int(signed_reciprocal_mod(np.int64(x), np.int64(p), inverse_of(np.float64(p)))) == x % p


def test_signed_reciprocal_modulo_at_the_edges():
    """Mixes next to multiples of the prime and at the top of the range."""
    for p in (FAST_MIN_PRIME, 646403, 2**31 - 1, 2**61 - 1):
        inverse = inverse_of(np.float64(p))
        top = (2**63 - 1) // p * p
        for x in (0, 1, p - 1, p, p + 1, top - 1, top, 2**63 - 1):
            assert int(signed_reciprocal_mod(np.int64(x), np.int64(p), inverse)) == x % p, (x, p)


@pytest.mark.parametrize(
    ("table_size", "modulo"),
    [
        (FAST_MIN_PRIME - 500, MODULO_SPLIT),  # primes below the reciprocal's bound
        (646400, MODULO_SPLIT),
        (2**31 - 2**16, MODULO_SPLIT),  # primes just below 2^31: sums next to 2^53
        (2**31 + 2**16, MODULO_RECIPROCAL),
    ],
)
def test_each_modulo_path_gives_the_numpy_rows(table_size, modulo):
    """Random and extreme ids, masked ids and document starts: the numba rows equal numpy's on
    every path, specialized and generic."""
    spec = HashSpec(heads=4, table_sizes=(table_size, table_size), vocab_size=200_003, pad_id=7)
    rows = NumbaRows(spec, offsets=True, negative_ids="mask")
    assert rows.generic[3] == modulo
    rng = np.random.default_rng(table_size)
    ids = rng.integers(0, spec.vocab_size, 3 * SPECIALIZE_TOKENS)
    ids[rng.integers(0, ids.shape[0], 200)] = spec.vocab_size - 1
    ids[rng.integers(0, ids.shape[0], 50)] = -1
    starts = sorted(rng.integers(0, ids.shape[0], 20).tolist())
    for piece in (ids[:100], ids):
        expected = NgramHasher(spec, backend="numpy", boundary="reset")(
            piece, [s for s in starts if s < len(piece)]
        )
        got = NgramHasher(spec, backend="numba", boundary="reset")(
            piece, [s for s in starts if s < len(piece)]
        )
        assert np.array_equal(got, expected)
