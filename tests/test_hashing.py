"""Bit-exact hashing: golden vectors, an independent big-integer oracle, and streaming properties."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from conftest import spec_from_golden
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ngramtool.hashing.backends import MASKED_ROW
from ngramtool.hashing.backends.numpy_backend import BLOCK_TOKENS, NumpyRows, rows_from_windows
from ngramtool.hashing.hasher import NgramHasher, SequenceHasher, hash_ngrams
from ngramtool.spec.hashspec import HashSpec
from ngramtool.util.errors import NgramToolError, UsageError

INT64 = 2**64


def oracle_rows(ids: list[int], spec: HashSpec, doc_starts: list[int] | None = None, offsets: bool = True):
    """Rows from the definition with Python integers (int64 wrap emulated), one position at a time."""
    n = spec.max_ngram
    starts = sorted(doc_starts or [0])
    out = np.zeros((len(ids), spec.num_layers, spec.num_columns), dtype=np.int64)
    for t in range(len(ids)):
        start = max([s for s in starts if s <= t], default=0)
        window = [ids[t - k] if t - k >= start else spec.pad_id for k in range(n)]
        for li in range(spec.num_layers):
            acc = 0
            for k in range(n):
                product = (window[k] * int(spec.multipliers[li, k])) % INT64
                acc ^= product
                if k == 0:
                    continue
                signed = acc - INT64 if acc >= 2**63 else acc
                for h in range(spec.heads):
                    col = spec.column(k + 1, h)
                    value = signed % int(spec.primes[li, k - 1, h])
                    out[t, li, col] = value + (int(spec.offsets[li, col]) if offsets else 0)
    return out


# ------------------------------------------------------------------------------ golden
def test_golden_rows_hash_ids_and_mixes(hash_golden):
    for config in hash_golden["configs"]:
        spec = spec_from_golden(config["config"])
        for case in config["cases"]:
            ids = np.asarray(case["compressed_ids"])
            rows = hash_ngrams(ids, spec)
            hashed = hash_ngrams(ids, spec, offsets=False)
            for li, layer in enumerate(case["layers"]):
                assert rows[:, :, li].tolist() == layer["embedding_rows"], case["description"]
                assert hashed[:, :, li].tolist() == layer["hash_ids"], case["description"]
            first = ids[0].tolist()
            windows = np.asarray(case["ngram_token_ids_first_sequence"])
            from ngramtool.hashing.backends.numpy_backend import ngram_mixes

            mixes = ngram_mixes(windows, spec)
            for li, layer in enumerate(case["layers"]):
                assert mixes[:, li].tolist() == [
                    [int(m) for m in per_t] for per_t in layer["mix_by_order"][0]
                ]
            assert windows[:, 0].tolist() == first


def test_golden_negative_ids_with_demo_semantics(hash_golden):
    edge = hash_golden["edge_cases"]
    spec = spec_from_golden(edge["config"])
    hashed = hash_ngrams(np.asarray(edge["input_ids"]), spec, offsets=False, negative_ids="hash")
    for li, layer_id in enumerate(spec.layer_ids):
        assert hashed[:, :, li].tolist() == edge["hash_ids"][str(layer_id)]


def test_spec_example_values():
    spec = HashSpec()
    rows = hash_ngrams(np.array([0]), spec, offsets=False)
    assert rows[0, 0, 0] == 9725389636482 % 646403 == 525894


# ------------------------------------------------------------------------------ oracle
@settings(max_examples=60)
@given(data=st.data(), n=st.integers(2, 4), k=st.integers(1, 3), vocab=st.integers(1, 3000))
def test_matches_bigint_oracle(data, n, k, vocab):
    tables = tuple(data.draw(st.integers(2, 4000)) for _ in range(n - 1))
    spec = HashSpec(
        max_ngram=n, heads=k, layer_ids=(0, 3), table_sizes=tables, pad_id=vocab - 1, vocab_size=vocab
    )
    ids = data.draw(st.lists(st.integers(0, vocab - 1), max_size=40))
    assert hash_ngrams(np.asarray(ids, dtype=np.int64), spec).tolist() == oracle_rows(ids, spec).tolist()


def test_ids_at_the_top_of_the_vocabulary_and_huge_vocab():
    spec = HashSpec(heads=3, vocab_size=2**40, pad_id=5)
    ids = [2**40 - 1, 2**40 - 2, 0, 2**40 - 1, 12345678901]
    assert hash_ngrams(np.asarray(ids), spec).tolist() == oracle_rows(ids, spec).tolist()


def test_tables_past_2_to_31_rows_give_exact_int64_rows():
    spec = HashSpec(heads=2, table_sizes=(2**30, 2**30 + 7), layer_ids=(3,), pad_id=0, vocab_size=50000)
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 50000, 300)
    rows = hash_ngrams(ids, spec)
    assert rows.dtype == np.int64
    assert int(rows.max()) >= 2**31
    assert rows.tolist() == oracle_rows(ids.tolist(), spec).tolist()


def test_fast_path_equals_window_path_across_blocks(small_spec):
    rng = np.random.default_rng(0)
    ids = rng.integers(0, small_spec.vocab_size, 2 * BLOCK_TOKENS + 17)
    n = small_spec.max_ngram
    ext = np.concatenate([np.full(n - 1, small_spec.pad_id), ids])
    windows = np.stack([ext[n - 1 - k : n - 1 - k + ids.shape[0]] for k in range(n)], axis=1)
    assert np.array_equal(hash_ngrams(ids, small_spec), rows_from_windows(windows, small_spec))


def test_group_widths_for_odd_column_counts():
    for heads, layers in ((1, (0,)), (3, (0, 1, 2)), (5, (4,))):
        spec = HashSpec(heads=heads, layer_ids=layers, table_sizes=(97, 101), pad_id=0, vocab_size=300)
        ids = np.random.default_rng(heads).integers(0, 300, 200)
        assert hash_ngrams(ids, spec).tolist() == oracle_rows(ids.tolist(), spec).tolist()


def test_batch_input_hashes_each_row_as_its_own_stream(small_spec):
    batch = np.random.default_rng(3).integers(0, 500, (3, 25))
    rows = hash_ngrams(batch, small_spec)
    assert rows.shape == (3, 25, 2, small_spec.num_columns)
    for b in range(3):
        assert np.array_equal(rows[b], hash_ngrams(batch[b], small_spec))


# ---------------------------------------------------------------------------- streaming
@st.composite
def stream_with_docs(draw):
    ids = draw(st.lists(st.integers(-1, 499), min_size=0, max_size=120))
    starts = sorted(draw(st.sets(st.integers(0, max(len(ids) - 1, 0)), max_size=8))) if ids else []
    cuts = sorted(draw(st.sets(st.integers(0, len(ids)), max_size=6)))
    return ids, starts, cuts


# ------------------------------------------------------------------ independent sequences
@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(stream_with_docs(), st.data())
def test_a_span_with_the_ids_before_it_equals_the_stream(small_spec, case, data):
    """Any span [lo, hi) of a stream, hashed alone with the ids before it (within its document
    under a reset) and the document starts inside it, gives the stream's rows: what a
    tokens-only index and a stream-padded dataset compute."""
    ids, starts, _ = case
    boundary = data.draw(st.sampled_from(["none", "reset"]))
    lo = data.draw(st.integers(0, len(ids)))
    hi = data.draw(st.integers(lo, len(ids)))
    ids_arr = np.asarray(ids, dtype=np.int64)
    stream = NgramHasher(small_spec, boundary=boundary)(ids_arr, starts)
    first = max(lo - (small_spec.max_ngram - 1), 0)
    inside = []
    if boundary == "reset":
        first = max([first, *(s for s in starts if s <= lo)])
        inside = [s - lo for s in starts if lo < s < hi]
    rows = SequenceHasher(small_spec)(ids_arr[lo:hi], before=ids_arr[first:lo], doc_starts=inside)
    assert np.array_equal(rows, stream[lo:hi])


@settings(max_examples=40)
@given(st.integers(1, 4), st.integers(0, 30), st.integers(0, 4), st.data())
def test_a_batch_with_the_ids_before_each_row_equals_each_rows_stream(small_spec, batch, length, k, data):
    ids = np.asarray(
        data.draw(st.lists(st.integers(0, 499), min_size=batch * (length + k), max_size=batch * (length + k)))
    )
    streams = ids.reshape(batch, length + k)
    hasher = SequenceHasher(small_spec)
    rows = hasher(streams[:, k:], before=streams[:, :k])
    assert rows.shape == (batch, length, 2, small_spec.num_columns) and rows.flags.c_contiguous
    for b in range(batch):
        assert np.array_equal(rows[b], hash_ngrams(streams[b], small_spec)[k:])
        assert np.array_equal(rows[b], hasher(streams[b, k:], before=streams[b, :k]))
    assert np.array_equal(hasher(streams), hash_ngrams(streams, small_spec))


def test_missing_and_negative_ids_before_a_sequence_are_the_pad(small_spec):
    ids = np.array([7, 8, 9, 10])
    padded = hash_ngrams(ids, small_spec)
    hasher = SequenceHasher(small_spec)
    assert np.array_equal(hasher(ids, before=[]), padded)
    assert np.array_equal(hasher(ids, before=[-1, -1]), padded)
    with_pad = hash_ngrams(np.array([small_spec.pad_id, 5, *ids]), small_spec)[2:]
    assert np.array_equal(hasher(ids, before=[5]), with_pad)
    assert np.array_equal(hasher(ids, before=[-1, 5]), with_pad)
    assert np.array_equal(hasher(ids[None], before=[[5]]), with_pad[None])


def test_sequence_errors_name_the_batch_row_and_position(small_spec):
    hasher = SequenceHasher(small_spec)
    with pytest.raises(NgramToolError, match="token id 500 at batch row 1, position 2 is not a canonical id"):
        hasher(np.array([[1, 2, 3], [4, 5, 500]]))
    with pytest.raises(NgramToolError, match="`before`: token id 900 at position 0"):
        hasher(np.array([1, 2]), before=[900])
    with pytest.raises(UsageError, match=r"`before` of a batch \[B, T\] must be integer ids \[B, k\]"):
        hasher(np.zeros((2, 3), dtype=np.int64), before=[1, 2])
    with pytest.raises(UsageError, match="doc_starts applies to a 1-D sequence"):
        hasher(np.zeros((2, 3), dtype=np.int64), doc_starts=[0])
    with pytest.raises(UsageError, match="must be integers"):
        hasher(np.zeros((2, 3)))
    with pytest.raises(UsageError, match="expected a 1-D array"):
        hasher(np.zeros((2, 3, 1), dtype=np.int64))


SPEEDRUN = HashSpec(
    family="speedrun", max_ngram=3, heads=1, layer_ids=(0,), table_sizes=(1009, 1013), vocab_size=500
)
"""A family whose first token of each sequence reads as its start marker (``reserved_first``)."""


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(stream_with_docs(), st.sampled_from(["none", "reset"]), st.booleans(), st.data())
def test_any_chunking_gives_identical_rows(small_spec, case, boundary, speedrun, data):
    """Whatever the cuts, and whichever chunk a start at a cut comes with (the end of the chunk
    before it, an empty chunk there, or the start of the chunk after), the rows are the stream's."""
    spec = SPEEDRUN if speedrun else small_spec
    ids, starts, cuts = case
    ids_arr = np.asarray(ids, dtype=np.int64)
    whole = NgramHasher(spec, boundary=boundary)(ids_arr, starts)
    hasher = NgramHasher(spec, boundary=boundary)
    chunks = list(pairwise([0, *cuts, len(ids)]))
    local: list[list[int]] = [[] for _ in chunks]
    for start in starts:
        owners = [i for i, (lo, hi) in enumerate(chunks) if lo <= start <= hi]
        owner = data.draw(st.sampled_from(owners))
        local[owner].append(start - chunks[owner][0])
    parts = [hasher(ids_arr[lo:hi], there) for (lo, hi), there in zip(chunks, local, strict=True)]
    assert np.array_equal(np.concatenate(parts) if parts else whole, whole)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(stream_with_docs())
def test_reset_equals_hashing_each_document_alone(small_spec, case):
    ids, starts, _ = case
    starts = sorted({0, *starts}) if ids else []
    ids_arr = np.asarray(ids, dtype=np.int64)
    together = hash_ngrams(ids_arr, small_spec, doc_starts=starts)
    bounds = [*starts, len(ids)]
    alone = [hash_ngrams(ids_arr[lo:hi], small_spec) for lo, hi in pairwise(bounds)]
    expected = np.concatenate(alone) if alone else together
    assert np.array_equal(together, expected)


@settings(max_examples=60)
@given(st.lists(st.integers(0, 499), min_size=1, max_size=60), st.lists(st.integers(0, 499), max_size=20))
def test_appending_never_changes_earlier_rows(small_spec, head, tail):
    before = hash_ngrams(np.asarray(head), small_spec)
    after = hash_ngrams(np.asarray(head + tail), small_spec)
    assert np.array_equal(after[: len(head)], before)


@settings(max_examples=60)
@given(st.lists(st.integers(0, 499), min_size=2, max_size=60), st.data())
def test_row_t_depends_only_on_the_last_n_tokens(small_spec, ids, data):
    t = data.draw(st.integers(0, len(ids) - 1))
    changed = list(ids)
    for pos in range(len(ids)):
        if pos > t or pos <= t - small_spec.max_ngram:
            changed[pos] = data.draw(st.integers(0, 499))
    a = hash_ngrams(np.asarray(ids), small_spec)[t]
    b = hash_ngrams(np.asarray(changed), small_spec)[t]
    if t >= small_spec.max_ngram - 1:
        assert np.array_equal(a, b)
    else:  # before the window is full, only tokens <= t matter
        prefix_a = hash_ngrams(np.asarray(ids[: t + 1]), small_spec)[t]
        assert np.array_equal(a, prefix_a)


def test_deterministic_across_calls_and_hashers(small_spec):
    ids = np.random.default_rng(9).integers(0, 500, 5000)
    assert np.array_equal(hash_ngrams(ids, small_spec), hash_ngrams(ids.copy(), small_spec))


def test_masked_tokens_give_minus_one_and_act_as_pad(small_spec):
    ids = np.array([5, 6, -1, 7, 8])
    rows = hash_ngrams(ids, small_spec)
    assert (rows[2] == MASKED_ROW).all()
    padded = np.array([5, 6, small_spec.pad_id, 7, 8])
    expected = hash_ngrams(padded, small_spec)
    assert np.array_equal(rows[[0, 1, 3, 4]], expected[[0, 1, 3, 4]])


def test_ids_outside_the_vocabulary_are_an_error_naming_the_position(small_spec):
    hasher = NgramHasher(small_spec)
    hasher(np.array([1, 2, 3]))
    with pytest.raises(NgramToolError, match="position 4"):
        hasher(np.array([4, 500]))


def test_a_failed_chunk_leaves_the_stream_where_it_was(small_spec, monkeypatch):
    """A chunk whose hashing fails (say, out of memory) can be given again, whole or in parts."""
    ids = np.random.default_rng(1).integers(0, small_spec.vocab_size, 3000)
    hasher = NgramHasher(small_spec, backend="numpy")
    hasher(ids[:100])
    real_rows, calls = NumpyRows.rows, []

    def fail_once(self, *args):
        calls.append(1)
        if len(calls) == 1:
            raise MemoryError("out of memory")
        return real_rows(self, *args)

    monkeypatch.setattr(NumpyRows, "rows", fail_once)
    with pytest.raises(MemoryError):
        hasher(ids[100:])
    again = np.concatenate([hasher(ids[100:1500]), hasher(ids[1500:])])
    assert np.array_equal(again, hash_ngrams(ids, small_spec)[100:])


def test_bad_arguments(small_spec):
    with pytest.raises(UsageError):
        hash_ngrams(np.zeros((2, 2, 2), dtype=np.int64), small_spec)
    with pytest.raises(UsageError):
        hash_ngrams(np.array([1.5]), small_spec)
    with pytest.raises(UsageError):
        hash_ngrams(np.array([1, 2]), small_spec, doc_starts=[1, 0])
    with pytest.raises(UsageError):
        hash_ngrams(np.array([1, 2]), small_spec, doc_starts=[3])
    with pytest.raises(UsageError, match="integer positions"):
        hash_ngrams(np.array([1, 2]), small_spec, doc_starts=[1.5])
    with pytest.raises(UsageError, match="1-D"):
        hash_ngrams(np.array([1, 2]), small_spec, doc_starts=[[0], [1]])
    with pytest.raises(UsageError):
        NgramHasher(small_spec, boundary="sometimes")


def test_empty_input(small_spec):
    rows = hash_ngrams(np.zeros(0, dtype=np.int64), small_spec)
    assert rows.shape == (0, 2, small_spec.num_columns)


def test_torch_reference_agrees(small_spec):
    pytest.importorskip("torch")
    from ngramtool.hashing.backends.reference import torch_reference_rows

    ids = np.random.default_rng(5).integers(0, 500, 3000)
    assert np.array_equal(torch_reference_rows(ids, small_spec), hash_ngrams(ids, small_spec))
