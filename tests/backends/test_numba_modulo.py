"""The Engram kernel's modulo paths are exact: the signed reciprocal and the vectorized reduction
give ``x mod p`` for every mix in [0, 2^63) and every prime they take, and each path gives the
numpy backend's rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

import numba

from ngramtool import HashSpec, NgramHasher
from ngramtool.hashing.backends.numba_backend import (
    FAST_MIN_PRIME,
    MODULO_RECIPROCAL,
    MODULO_SPLIT,
    MODULO_VECTOR,
    SPECIALIZE_TOKENS,
    NumbaRows,
    inverse_of,
    signed_reciprocal_mod,
)
from ngramtool.hashing.backends.vector_modulo import (
    VECTOR_MAX_PRIME,
    VECTOR_MIN_PRIME,
    reduce_heads,
    vector_columns,
    vector_exact,
)

TOP = 2**63 - 1


@numba.njit
def _reduced(xs, columns, heads):
    """reduce_heads on each mix of ``xs``: rows [len(xs), K]."""
    out = np.empty((xs.shape[0], columns.shape[1]), np.int64)
    for t in range(xs.shape[0]):
        reduce_heads(out, t, 0, columns, xs[t], heads)
    return out


@numba.njit
def _reduced_apart(xs, columns, heads):
    """:func:`_reduced` into every other column of a wider array (not C-contiguous): rows [n, K]."""
    wide = np.full((xs.shape[0], 2 * columns.shape[1]), -1, np.int64)
    out = wide[:, ::2]
    for t in range(xs.shape[0]):
        reduce_heads(out, t, 0, columns, xs[t], heads)
    return wide


@settings(max_examples=200)
@given(
    p=st.one_of(
        st.sampled_from([VECTOR_MIN_PRIME, 646403, 2**31 - 1, 2**31 + 11, VECTOR_MAX_PRIME - 1]),
        st.integers(VECTOR_MIN_PRIME, VECTOR_MAX_PRIME - 1),
    ),
    quotients=st.lists(st.integers(0, TOP), min_size=1, max_size=6),
    near=st.integers(-2, 2),
    offset=st.integers(0, 2**40),
)
def test_vectorized_reduction_is_exact(p, quotients, near, offset):
    """Mixes next to multiples of the prime, at 0 and at the top of [0, 2^63), in vector lanes (a
    tuple of K) and one lane at a time (an int K): each row is ``x mod p + offset``."""
    xs = [min(max(q // p * p + near, 0), TOP) for q in quotients] + [0, p - 1, TOP, TOP // p * p]
    primes = np.array([p, p, max(VECTOR_MIN_PRIME, p - 2), p], np.int64)
    offsets = np.array([0, offset, 3, offset + 1], np.int64)
    assert vector_exact(primes, offsets)
    want = [[x % int(q) + int(o) for q, o in zip(primes, offsets, strict=True)] for x in xs]
    columns = vector_columns(primes, offsets)
    mixes = np.array(xs, np.uint64)
    assert _reduced(mixes, columns, (0,) * 4).tolist() == want
    assert _reduced(mixes, columns, 4).tolist() == want
    apart = _reduced_apart(mixes, columns, (0,) * 4)
    assert apart[:, ::2].tolist() == want and (apart[:, 1::2] == -1).all()


def test_vectorized_reduction_is_taken_only_where_exact():
    assert vector_exact(np.array([VECTOR_MIN_PRIME, VECTOR_MAX_PRIME - 1]), np.zeros(2))
    assert not vector_exact(np.array([VECTOR_MIN_PRIME - 1, 646403]), np.zeros(2))
    assert not vector_exact(np.array([646403, VECTOR_MAX_PRIME]), np.zeros(2))
    assert not vector_exact(np.array([646403, 2**51]), np.array([0, 2**52 + 2**51]))


@settings(max_examples=300)
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
    ("table_sizes", "modulo"),
    [
        ((FAST_MIN_PRIME - 500,) * 2, MODULO_SPLIT),  # primes below the reciprocal's bound
        ((VECTOR_MIN_PRIME - 500, 2**31 - 2**16), MODULO_SPLIT),  # sums next to 2^53
        ((VECTOR_MIN_PRIME + 8,) * 2, MODULO_VECTOR),
        ((646400,) * 2, MODULO_VECTOR),
        ((2**31 + 2**16,) * 2, MODULO_VECTOR),  # int64 rows
        ((2**52,) * 2, MODULO_RECIPROCAL),  # primes above the vectorized reduction's bound
    ],
)
def test_each_modulo_path_gives_the_numpy_rows(table_sizes, modulo):
    """Random and extreme ids, masked ids and document starts: the numba rows equal numpy's on
    every path, specialized and generic."""
    spec = HashSpec(heads=4, table_sizes=table_sizes, vocab_size=200_003, pad_id=7)
    rows = NumbaRows(spec, offsets=True, negative_ids="mask")
    assert rows.generic[3] == modulo
    rng = np.random.default_rng(table_sizes[-1])
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
