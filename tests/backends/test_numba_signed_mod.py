"""The Engram kernel's signed reciprocal modulo is exact: ``x mod p`` for every mix in [0, 2^63)
and every prime the fast path takes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

from ngramtool.backends.numba_backend import FAST_MIN_PRIME, inverse_of, signed_reciprocal_mod


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
