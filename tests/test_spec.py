"""HashSpec derivation against the golden vectors, validation and identity."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import spec_from_golden
from hypothesis import given
from hypothesis import strategies as st

from ngramtool.spec.hashspec import HashSpec
from ngramtool.util.errors import UsageError
from ngramtool.util.primes import is_prime, next_prime


def _brute_is_prime(n: int) -> bool:
    return n >= 2 and all(n % d for d in range(2, int(n**0.5) + 1))


def test_is_prime_matches_trial_division_below_20000():
    assert [n for n in range(20000) if is_prime(n)] == [n for n in range(20000) if _brute_is_prime(n)]


@pytest.mark.parametrize("n", [2**61 - 1, 2**31 - 1, 1_000_000_007, 646403, 2**89 - 1])
def test_is_prime_known_primes(n):
    assert is_prime(n)


@pytest.mark.parametrize("n", [561, 1105, 1729, 2465, 3215031751, 3825123056546413051, 2**61 + 1])
def test_is_prime_rejects_strong_pseudoprimes(n):
    assert not is_prime(n)


def test_next_prime_skips_seen():
    assert next_prime(10, set()) == 11
    assert next_prime(10, {11, 13}) == 17


def test_golden_multipliers_primes_offsets(hash_golden):
    for config in hash_golden["configs"]:
        spec = spec_from_golden(config["config"])
        assert spec.half_bound == config["config"].get("half_bound", spec.half_bound)
        for li, layer in enumerate(config["layers"]):
            assert spec.multipliers[li].tolist() == [int(m) for m in layer["multipliers"]]
            assert spec.primes[li].tolist() == layer["primes"]
            assert spec.offsets[li].tolist() == layer["offsets"]
            assert int(spec.rows_per_layer[li]) == layer["total_rows"]


def test_demo_primes_from_the_spec_text():
    spec = HashSpec()
    assert spec.primes[0, 0].tolist() == [646403, 646411, 646421, 646423, 646433, 646453, 646519, 646523]
    assert spec.primes[1, 1].tolist() == [646781, 646823, 646831, 646837, 646843, 646859, 646873, 646879]
    assert spec.rows_per_layer.tolist() == [10_344_164, 10_348_242]


def test_multipliers_are_odd_and_cannot_overflow():
    spec = HashSpec(vocab_size=98627)
    assert np.all(spec.multipliers % 2 == 1)
    assert int(spec.multipliers.max()) * (spec.vocab_size - 1) < 2**63 - 1


@given(
    st.integers(2, 5),
    st.integers(1, 4),
    st.lists(st.integers(0, 40), min_size=1, max_size=3, unique=True),
    st.integers(2, 5000),
)
def test_primes_are_distinct_and_above_base(n, k, layers, base):
    spec = HashSpec(max_ngram=n, heads=k, layer_ids=tuple(layers), table_sizes=(base,) * (n - 1), pad_id=0)
    flat = spec.primes.reshape(-1).tolist()
    assert len(set(flat)) == len(flat)
    assert all(is_prime(p) and p >= base for p in flat)
    assert spec.offsets[:, 0].tolist() == [0] * len(layers)
    assert np.array_equal(np.diff(spec.offsets, axis=1), spec.primes.reshape(len(layers), -1)[:, :-1])


def test_json_round_trip_and_fingerprint():
    spec = HashSpec(
        max_ngram=4, heads=3, layer_ids=(2, 9), table_sizes=(100, 200, 300), seed=7, pad_id=3, vocab_size=999
    )
    again = HashSpec.from_json(spec.to_json())
    assert again == spec
    assert again.fingerprint == spec.fingerprint
    assert HashSpec(seed=1).fingerprint != HashSpec(seed=0).fingerprint


def test_row_dtype_switches_to_int64_past_2_to_31_rows():
    small = HashSpec(heads=2, table_sizes=(2**28, 2**28), pad_id=0, vocab_size=10)
    assert small.row_dtype == np.int32
    big = HashSpec(heads=2, table_sizes=(2**30, 2**30), pad_id=0, vocab_size=10)
    assert int(big.rows_per_layer.max()) >= 2**31
    assert big.row_dtype == np.int64


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"heads": 0}, "heads"),
        ({"max_ngram": 1, "table_sizes": ()}, "max_ngram"),
        ({"table_sizes": (646400, 1)}, "every size in `table_sizes`"),
        ({"table_sizes": (2**62, 2**62)}, "more than 2\\^63 rows"),
        ({"table_sizes": (646400,)}, "one base size per order"),
        ({"layer_ids": ()}, "layer"),
        ({"layer_ids": (1, 1)}, "distinct"),
        ({"pad_id": 98627}, "pad_id"),
        ({"vocab_size": 0, "pad_id": 0}, "vocab_size"),
    ],
)
def test_invalid_specs_are_usage_errors(kwargs, fragment):
    with pytest.raises(UsageError, match=fragment):
        HashSpec(**kwargs)


def test_unknown_json_field_is_an_error():
    with pytest.raises(UsageError, match="unknown HashSpec field"):
        HashSpec.from_dict({"heads": 2, "bogus": 1})


@pytest.mark.parametrize(
    "data", [{"heads": "4"}, {"table_sizes": [10, "x"]}, {"layer_ids": None}, {"seed": True}]
)
def test_json_fields_of_the_wrong_type_are_usage_errors(data):
    with pytest.raises(UsageError, match="must be"):
        HashSpec.from_dict(data)
