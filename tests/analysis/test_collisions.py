"""Collision analysis against brute force: every figure recomputed with Python dicts and big integers."""

from __future__ import annotations

import decimal
import itertools
import math
import tracemalloc
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ngramtool import HashSpec, NgramToolError, UsageError, hash_ngrams
from ngramtool.analysis import counting, expectations, repeats, reports, type_store
from ngramtool.analysis.counting import NgramTypeCounter, count_ngram_types, key_codec
from ngramtool.analysis.reports import _DenseLoads, _SparseLoads, _Tally, analyse_collisions, sweep_collisions


# --------------------------------------------------------------------------- brute force
def brute_types(ids, spec: HashSpec, doc_starts=None) -> dict[int, Counter]:
    """{order: Counter(window tuple (lag 0 first) -> occurrences)} straight from the definition.

    Position t's window takes ids[t-k] while t-k is in t's document (the whole stream when
    ``doc_starts`` is None), else the pad id; negative ids are masked: no n-gram, seen as pad.
    """
    ids = [int(i) for i in ids]
    starts = sorted({0, *(int(s) for s in (doc_starts if doc_starts is not None else []))})
    out = {n: Counter() for n in range(2, spec.max_ngram + 1)}
    for t, current in enumerate(ids):
        if current < 0:
            continue
        start = max(s for s in starts if s <= t)
        window = []
        for k in range(spec.max_ngram):
            j = t - k
            window.append(ids[j] if j >= start and ids[j] >= 0 else spec.pad_id)
        for n in out:
            out[n][tuple(window[:n])] += 1
    return out


def brute_mix(window: tuple[int, ...], multipliers) -> int:
    """XOR over lags of id * multiplier, in Python integers (no wraparound)."""
    acc = 0
    for k, w in enumerate(window):
        acc ^= w * int(multipliers[k])
    return acc


def brute_stats(types: dict[int, Counter], spec: HashSpec) -> tuple[dict, dict]:
    """Per (layer, order, head) and per (layer, order) figures, from Python dicts."""
    heads, orders = {}, {}
    for li, layer in enumerate(spec.layer_ids):
        for n, counts in types.items():
            grams = list(counts)
            total = sum(counts.values())
            mixes = {g: brute_mix(g, spec.multipliers[li]) for g in grams}
            tuples = {g: [] for g in grams}
            shared_every = dict.fromkeys(grams, True)
            for h in range(spec.heads):
                prime = int(spec.primes[li, n - 2, h])
                row = {g: mixes[g] % prime for g in grams}
                load = Counter(row.values())
                shared = {g: load[row[g]] > 1 for g in grams}
                for g in grams:
                    tuples[g].append(row[g])
                    shared_every[g] = shared_every[g] and shared[g]
                heads[(layer, n, h)] = {
                    "table": prime,
                    "types": len(grams),
                    "occurrences": total,
                    "rows": len(load),
                    "collision": 1 - len(load) / len(grams),
                    "shared_types": sum(shared.values()) / len(grams),
                    "shared_tokens": sum(counts[g] for g in grams if shared[g]) / total,
                    "mean_per_row": len(grams) / len(load),
                    "max_per_row": max(load.values()),
                }
            same = Counter(tuple(v) for v in tuples.values())
            orders[(layer, n)] = {
                "all_heads_shared": sum(shared_every.values()) / len(grams),
                "indistinguishable": sum(1 for g in grams if same[tuple(tuples[g])] > 1) / len(grams),
            }
    return heads, orders


def assert_report_matches(report, types: dict[int, Counter], spec: HashSpec) -> None:
    heads, orders = brute_stats(types, spec)
    assert len(report.heads) == len(heads) and len(report.orders) == len(orders)
    for h in report.heads:
        want = heads[(h.layer, h.order, h.head)]
        got = {name: getattr(h, name) for name in want}
        assert got == pytest.approx(want, rel=1e-12), (h.layer, h.order, h.head)
    for o in report.orders:
        want = orders[(o.layer, o.order)]
        assert {name: getattr(o, name) for name in want} == pytest.approx(want, rel=1e-12)


def as_counters(result) -> dict[int, Counter]:
    return {
        n: Counter({tuple(w): int(c) for w, c in zip(t.windows().tolist(), t.counts.tolist(), strict=True)})
        for n, t in result.items()
    }


SMALL = HashSpec(max_ngram=3, heads=3, layer_ids=(0, 7), table_sizes=(13, 29), pad_id=1, vocab_size=9)


# ------------------------------------------------------------------------ distinct n-grams
# compiled=None: numba's kernels when installed (and every order's keys fit one uint64), else
# numpy; compiled=False: always numpy. Both must give the brute-force counts.
COUNTING = [pytest.param(False, id="numpy"), pytest.param(None, id="default")]


@pytest.mark.parametrize("compiled", COUNTING)
@settings(max_examples=60)
@given(
    data=st.data(),
    vocab=st.sampled_from([2, 3, 5, 12, 62_330, 2**21]),
    n=st.integers(2, 5),
    reset=st.booleans(),
    flush=st.integers(1, 9),
)
def test_counter_equals_brute_force_for_any_chunking(compiled, data, vocab, n, reset, flush):
    """A plain Python Counter of the windows against the counter, over random streams (ids from a
    few symbols anywhere in [0, V'), so n-grams repeat; -1 masked), chunkings, boundaries and
    buffer sizes (a buffer of 1 to 9 keys: many merges)."""
    symbols = data.draw(st.lists(st.integers(0, vocab - 1), min_size=1, max_size=5, unique=True))
    ids = data.draw(st.lists(st.sampled_from([-1, *symbols]), max_size=80))
    length = len(ids)
    starts = sorted(set(data.draw(st.lists(st.integers(0, length), max_size=6))))
    cuts = sorted(set(data.draw(st.lists(st.integers(0, length), max_size=5))))
    spec = HashSpec(
        max_ngram=n, heads=1, layer_ids=(0,), table_sizes=(7,) * (n - 1), pad_id=symbols[0], vocab_size=vocab
    )
    counter = NgramTypeCounter(
        spec, boundary="reset" if reset else "none", flush_keys=flush, compiled=compiled
    )
    bounds = [0, *cuts, length]
    for lo, hi in itertools.pairwise(bounds):
        local = [s - lo for s in starts if lo <= s < hi or (s == hi == length and hi > lo)]
        counter.update(np.asarray(ids[lo:hi], dtype=np.int64), np.asarray(local, dtype=np.int64))
    got = as_counters(counter.result())
    assert got == brute_types(ids, spec, starts if reset else None)
    assert counter.tokens == length


@pytest.mark.parametrize("compiled", COUNTING)
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint32", "uint16", "uint8"])
def test_long_streams_of_any_id_dtype_with_many_merges(compiled, dtype):
    spec = HashSpec(max_ngram=3, heads=1, layer_ids=(0,), table_sizes=(7, 7), pad_id=3, vocab_size=200)
    rng = np.random.default_rng(11)
    ids = rng.zipf(1.3, 20_000) % 200
    starts = np.sort(rng.choice(20_000, 40, replace=False))
    counter = NgramTypeCounter(spec, boundary="reset", flush_keys=777, compiled=compiled)
    for lo in range(0, 20_000, 3000):
        within = starts[(starts >= lo) & (starts < lo + 3000)] - lo
        counter.update(ids[lo : lo + 3000].astype(dtype), within)
    assert as_counters(counter.result()) == brute_types(ids.tolist(), spec, starts.tolist())


def test_the_compiled_buffers_hold_32_bit_keys_where_they_fit():
    """cl100k_base's V' = 62,330: 2-gram keys fit 32 bits (V'^2 < 2^32), 3-gram keys do not. Each
    order's buffer takes FLUSH_BYTES by default: twice the 2-gram keys; given ``flush_keys``,
    that many of each."""
    pytest.importorskip("numba")
    spec = HashSpec(max_ngram=3, vocab_size=62_330, pad_id=0)
    buffers = {n: c._buffer for n, c in NgramTypeCounter(spec, compiled=True)._counters.items()}
    assert [buffers[n].dtype for n in (2, 3)] == [np.uint32, np.uint64]
    assert buffers[2].nbytes == buffers[3].nbytes == counting.FLUSH_BYTES
    sized = NgramTypeCounter(spec, compiled=True, flush_keys=1000)._counters
    assert [sized[n]._buffer.shape[0] for n in (2, 3)] == [1000, 1000]
    numpy_only = NgramTypeCounter(spec, compiled=False)._counters[2]._buffer
    assert numpy_only.dtype == np.uint64 and numpy_only.shape[0] == counting.NUMPY_FLUSH_KEYS


@pytest.mark.parametrize("vocab", [1625, 1626, 65_536, 65_537])
def test_keys_at_the_top_of_32_bits_count_as_in_numpy(vocab):
    """V'^n around 2^32: 1,625^3 and 65,536^2 fit 32 bits (the compiled buffers hold them as
    uint32), 1,626^3 and 65,537^2 do not; ids at the top of the range, many spilled runs."""
    pytest.importorskip("numba")
    spec = HashSpec(max_ngram=3, vocab_size=vocab, pad_id=vocab - 1)
    rng = np.random.default_rng(vocab)
    ids = vocab - 1 - rng.integers(0, 5, 5000)
    found = []
    for compiled in (True, False):
        counter = NgramTypeCounter(spec, flush_keys=97, compiled=compiled)
        for lo in range(0, ids.shape[0], 700):
            counter.update(ids[lo : lo + 700])
        found.append(as_counters(counter.result()))
    assert found[0] == found[1] == brute_types(ids.tolist(), spec)


@pytest.mark.parametrize("compiled", COUNTING)
def test_memory_follows_the_distinct_ngrams_not_the_tokens(compiled):
    """Four times the tokens over the same few distinct n-grams: the same peak of traced memory,
    a few MB, where holding anything per token would take 16 bytes a token (64 MB). The 4M
    tokens make 64 runs per order, merged in two levels."""
    spec = HashSpec(max_ngram=3, heads=1, layer_ids=(0,), table_sizes=(7, 7), pad_id=0, vocab_size=30)
    chunk = 1 << 16

    def peak(tokens: int) -> int:
        rng = np.random.default_rng(5)
        tracemalloc.start()
        counter = NgramTypeCounter(spec, flush_keys=chunk, compiled=compiled)
        for _ in range(tokens // chunk):
            counter.update(rng.integers(0, spec.vocab_size, chunk))
        counter.result()
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return top

    peak(1 << 16)  # loads (or compiles) the kernels, which tracemalloc would count
    small, large = peak(1 << 20), peak(1 << 22)
    assert large < 1.25 * small and large < 16 << 20, (small, large)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("seed", range(2))
def test_runs_sorted_and_merged_on_threads_equal_brute_force(threads, seed, monkeypatch):
    """Full buffers sorted on worker threads while the stream goes on, and the runs merged a key
    range a thread (from any size on, in levels of three runs, through windows of three entries):
    the brute-force n-grams and counts, every key once and in order across the ranges."""
    pytest.importorskip("numba")
    monkeypatch.setattr(type_store, "SPLIT_MIN", 0)
    monkeypatch.setattr(type_store, "MERGE_WAYS", 3)
    monkeypatch.setattr(type_store, "RUN_WINDOW", 3)
    monkeypatch.setattr(type_store, "SPLIT_SAMPLES", 5)
    spec = HashSpec(max_ngram=3, heads=1, layer_ids=(0,), table_sizes=(7, 7), pad_id=2, vocab_size=40)
    rng = np.random.default_rng(seed)
    ids = rng.zipf(1.2, 6000) % 40
    counter = NgramTypeCounter(spec, flush_keys=211, compiled=True, threads=threads)
    for lo in range(0, ids.shape[0], 500):
        counter.update(ids[lo : lo + 500])
    types = counter.result()
    brute = brute_types(ids.tolist(), spec)
    assert as_counters(types) == brute
    for order, grams in types.items():
        assert isinstance(grams.store, type_store.ChainedStore) == (threads > 1)
        keys = grams.keys
        assert keys.shape[0] == grams.types == len(brute[order]) and np.all(keys[1:] > keys[:-1])
        assert grams.occurrences == ids.shape[0] == int(grams.counts.sum())


def test_merged_counts_past_32_bits_are_stored_as_int64():
    """The merged counts are uint32 on disk while an order's occurrences fit 32 bits; past that,
    int64, and a count summed from runs past 2^32 is exact."""
    pytest.importorskip("numba")
    runs = type_store.SortedRuns(_compiled_kernels(), np.uint32)
    runs.add(np.array([1, 2], dtype=np.uint32), np.array([2**32 - 1, 5], dtype=np.uint32))
    runs.add(np.array([1, 3], dtype=np.uint32), np.array([10, 1], dtype=np.uint32))
    merged = runs.merged()
    assert merged.count_dtype == np.int64 and merged.occurrences == 2**32 + 15
    assert merged.read_keys(0, 3).tolist() == [1, 2, 3]
    assert merged.read_counts(0, 3).tolist() == [2**32 + 9, 5, 1]
    small = type_store.SortedRuns(_compiled_kernels(), np.uint32)
    small.add(np.array([4], dtype=np.uint32), np.array([7], dtype=np.uint32))
    small.add(np.array([4], dtype=np.uint32), np.array([3], dtype=np.uint32))
    merged = small.merged()
    assert merged.count_dtype == np.uint32 and merged.read_counts(0, 1).tolist() == [10]


def test_a_chained_store_reads_any_range_across_its_parts():
    parts = [
        type_store.ArrayStore(np.arange(a, b, dtype=np.uint64), np.arange(a, b))
        for a, b in [(0, 5), (5, 5), (5, 12), (12, 13)]
    ]
    chained = type_store.ChainedStore(parts)
    assert chained.size == 13 and chained.occurrences == sum(range(13))
    for lo, hi in itertools.combinations(range(14), 2):
        assert chained.read_keys(lo, hi).tolist() == list(range(lo, hi))
        assert chained.read_counts(lo, hi).tolist() == list(range(lo, hi))
    assert [k.tolist() for k in chained.key_blocks(4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12]]


def test_counting_threads_must_be_at_least_one():
    spec = HashSpec(max_ngram=3, heads=1, layer_ids=(0,), table_sizes=(7, 7), pad_id=0, vocab_size=30)
    with pytest.raises(UsageError, match="threads must be at least 1"):
        NgramTypeCounter(spec, threads=0)


def test_compiled_counting_needs_one_word_keys():
    spec = HashSpec(max_ngram=4, heads=1, layer_ids=(0,), table_sizes=(7, 7, 7), pad_id=0, vocab_size=70_000)
    with pytest.raises(UsageError, match="one-word keys"):
        NgramTypeCounter(spec, compiled=True)
    assert NgramTypeCounter(spec)._kernels is None  # the default counts these with numpy


def test_empty_documents_and_a_start_at_the_chunk_end_reset_the_window():
    spec = HashSpec(max_ngram=3, heads=1, layer_ids=(0,), table_sizes=(7, 7), pad_id=0, vocab_size=10)
    counter = NgramTypeCounter(spec, boundary="reset")
    counter.update(np.array([5, 6, 7]), np.array([0, 3]))  # a document starts right after this chunk
    counter.update(np.array([8, 9]), np.array([0, 0]))  # and an empty one at its start
    assert as_counters(counter.result()) == brute_types([5, 6, 7, 8, 9], spec, [0, 3])


@settings(max_examples=40)
@given(
    data=st.data(), vocab=st.sampled_from([2, 255, 65_536, 70_000, 98_627, 2**31 - 1]), n=st.integers(2, 6)
)
def test_keys_round_trip_and_preserve_distinctness(data, vocab, n):
    codec = key_codec(vocab, n)
    assert vocab**codec.ids_per_word <= 2**64 and codec.words == -(-n // codec.ids_per_word)
    if codec.ids_per_word < n:
        assert vocab ** (codec.ids_per_word + 1) > 2**64
    rows = data.draw(st.lists(st.lists(st.integers(0, vocab - 1), min_size=n, max_size=n), max_size=20))
    windows = np.asarray(rows, dtype=np.int64).reshape(-1, n)
    keys = codec.encode(windows)
    assert np.array_equal(codec.decode(keys), windows)
    assert len({k.tobytes() for k in keys}) == len({tuple(r) for r in rows})


def test_multiword_keys_count_like_brute_force():
    spec = HashSpec(
        max_ngram=4, heads=2, layer_ids=(3,), table_sizes=(11, 13, 17), pad_id=5, vocab_size=70_000
    )
    assert key_codec(spec.vocab_size, 4).words == 2
    ids = np.random.default_rng(3).choice([0, 1, 69_999, 12_345], size=400)
    types = count_ngram_types(ids, spec)
    assert as_counters(types) == brute_types(ids, spec)
    assert_report_matches(analyse_collisions(types, spec), brute_types(ids, spec), spec)


def test_ids_outside_the_vocabulary_and_bad_starts_are_errors():
    counter = NgramTypeCounter(SMALL)
    with pytest.raises(NgramToolError, match="position 2"):
        counter.update(np.array([1, 2, 9]))
    with pytest.raises(UsageError, match="non-decreasing"):
        NgramTypeCounter(SMALL, boundary="reset").update(np.array([1, 2]), np.array([1, 0]))
    with pytest.raises(UsageError):
        NgramTypeCounter(SMALL, boundary="sometimes")


# ---------------------------------------------------------------------- measured figures
@settings(max_examples=25)
@given(
    ids=st.lists(st.integers(0, 8), min_size=1, max_size=300),
    starts=st.lists(st.integers(0, 300), max_size=4),
)
def test_every_figure_equals_brute_force(ids, starts):
    starts = sorted({s for s in starts if s <= len(ids)})
    types = count_ngram_types(np.asarray(ids), SMALL, doc_starts=np.asarray(starts, dtype=np.int64))
    assert_report_matches(analyse_collisions(types, SMALL), brute_types(ids, SMALL, starts), SMALL)


def test_figures_on_text_bytes_and_rows_agree_with_the_hasher():
    text = b"the cat sat on the mat; the cat ate the rat. " * 20 + b"a different tail"
    ids = np.frombuffer(text, dtype=np.uint8).astype(np.int64)
    spec = HashSpec(
        max_ngram=4, heads=4, layer_ids=(1, 15), table_sizes=(61, 127, 257), pad_id=0, vocab_size=256
    )
    types = count_ngram_types(ids, spec)
    brute = brute_types(ids, spec)
    assert_report_matches(analyse_collisions(types, spec), brute, spec)
    # The rows of the real hasher at each position are the brute-force rows of that position's n-gram.
    rows = hash_ngrams(ids, spec, offsets=False)
    for t in range(0, len(ids), 37):
        window = [int(ids[t - k]) if t - k >= 0 else 0 for k in range(4)]
        for li in range(2):
            for n in (2, 3, 4):
                mix = brute_mix(tuple(window[:n]), spec.multipliers[li])
                for h in range(4):
                    assert rows[t, li, spec.column(n, h)] == mix % int(spec.primes[li, n - 2, h])


def _compiled_kernels():
    return pytest.importorskip("ngramtool.analysis.counting_kernels")


@pytest.mark.parametrize(
    ("loads", "table"),
    [
        (lambda table: _DenseLoads(table, 3000), 1009),  # numpy: bincount of each block
        (lambda table: _DenseLoads(table, 3000), 8_000_009),  # numpy, a table far above the block
        (lambda table: _DenseLoads(table, 3000, _compiled_kernels()), 1009),  # by division
        (lambda table: _DenseLoads(table, 3000, _compiled_kernels()), 100_003),  # by reciprocal
        (lambda table: _SparseLoads(table), 10**12 + 39),  # a table far above the n-grams
    ],
)
def test_row_loads_of_every_kind_equal_a_counter(loads, table):
    """Loads from mixes (some repeated, some in one row), then per n-gram: shared or not, with the
    occurrences of the shared, the every-head mask and the packed rows."""
    rng = np.random.default_rng(5)
    mixes = rng.integers(0, 2**62, 3000, dtype=np.uint64)
    mixes[1000:1400] = mixes[:400]  # the same n-gram's row twice
    mixes[2000:2100] = mixes[2100:2200] % np.uint64(table) + np.uint64(table) * np.uint64(7)  # same row
    rows = [m % table for m in mixes.tolist()]
    load = Counter(rows)
    counts = rng.integers(1, 9, 3000)
    counted = loads(table)
    for block in np.array_split(mixes, 7):
        counted.add(block)
    assert (counted.used, counted.top) == (len(load), max(load.values()))
    everywhere = rng.random(3000) < 0.8
    packed = rng.integers(0, 50, 3000).astype(np.uint64)
    want_everywhere = everywhere & np.array([load[r] > 1 for r in rows])
    want_packed = [int(p) * table + r for p, r in zip(packed.tolist(), rows, strict=True)]
    shared = [load[r] > 1 for r in rows]
    got = counted.mark_shared(mixes, counts, everywhere, packed)
    assert got == (sum(shared), int(counts[shared].sum()))
    assert np.array_equal(everywhere, want_everywhere)
    assert packed.tolist() == [p % 2**64 for p in want_packed]


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Blocks, merge windows and repeat buckets of a few entries: every spill and refill happens."""
    monkeypatch.setattr(reports, "MIX_BLOCK", 7)
    monkeypatch.setattr(type_store, "RUN_WINDOW", 3)
    monkeypatch.setattr(type_store, "MERGE_WAYS", 3)  # levels of merges, groups of one left over
    monkeypatch.setattr(type_store, "MERGED_BLOCK", 5)
    monkeypatch.setattr(repeats, "BUCKET_VALUES", 4)


@pytest.mark.parametrize("bucketed", [False, True])
@pytest.mark.parametrize(
    "primes",
    [
        [8209, 8219, 8221, 8231, 8233],  # product > 2^63: equal rows on every head <=> equal mixes
        [7, 11, 13],  # product 1001: rows packed into one key, mixes 1001 apart collide
    ],
)
@pytest.mark.parametrize("compiled", [False, True])
def test_indistinguishable_counts_equal_brute_force(primes, bucketed, compiled, monkeypatch):
    kernels = _compiled_kernels() if compiled else None
    if bucketed:
        monkeypatch.setattr(repeats, "BUCKET_VALUES", 64)
    rng = np.random.default_rng(7)
    mix = rng.integers(0, 2**62, 3000, dtype=np.uint64)
    mix[100:140] = mix[:40]  # 40 pairs of identical mixes: same row on every head
    mix[500:503] = mix[600]  # and a group of four
    if math.prod(primes) < 2**32:  # distinct mixes that agree modulo every prime
        mix[700:710] = mix[800:810] + np.uint64(math.prod(primes) * 3)
    rows = [tuple(int(m) % p for p in primes) for m in mix.tolist()]
    tuples = Counter(rows)
    want = sum(1 for r in rows if tuples[r] > 1)
    assert want >= 84
    tally = _Tally(0, 2, primes, mix.shape[0], mix.shape[0], kernels)
    blocks = np.array_split(np.arange(mix.shape[0]), 5)
    for block in blocks:
        tally.count_rows(mix[block])
    for block in blocks:
        tally.find_shared(mix[block], np.ones(block.shape[0], dtype=np.int64))
    assert tally.by_mix == (math.prod(primes) > 2**63 - 1)
    assert tally.repeats.count() == want


@pytest.mark.parametrize("budget", [None, 1], ids=["one group", "a group a pair"])
@pytest.mark.parametrize("analysis", ["compiled", "numpy"])
@pytest.mark.parametrize("seed", range(3))
def test_spilled_runs_blocks_and_buckets_equal_brute_force(tiny_blocks, seed, analysis, budget, monkeypatch):
    """Counting in many spilled runs merged through windows of three entries, and the analysis in
    blocks of seven n-grams with repeats cut into buckets of four: the brute-force figures, for
    tables whose primes multiply past 2^63 and below it, rows by reciprocal (20,011) and by
    division, with the compiled passes and with numpy's; the loads of every (spec, layer) pair
    at once, or of one pair at a time (the later groups read the kept mixes back, and the third
    spec's layers use the repeated mixes counted in an earlier group)."""
    if analysis == "numpy":
        monkeypatch.setattr(reports, "_analysis_kernels", lambda compiled, types: None)
    else:  # compiled even for these few n-grams
        monkeypatch.setattr(reports, "SMALL_SWEEP_TYPES", 0)
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 9, 500)
    starts = np.sort(rng.choice(500, 6, replace=False))
    base = dict(max_ngram=3, layer_ids=(0, 7), pad_id=1, vocab_size=9)
    specs = [
        HashSpec(heads=5, table_sizes=(20011, 8209), **base),
        HashSpec(heads=5, table_sizes=(31, 61), **base),
        HashSpec(heads=5, table_sizes=(16411, 9001), **base),  # shares the first one's repeated mixes
    ]
    counter = NgramTypeCounter(specs[0], boundary="reset", flush_keys=13)
    for lo in range(0, 500, 60):
        within = starts[(starts >= lo) & (starts < lo + 60)] - lo
        counter.update(ids[lo : lo + 60], within)
    types = counter.result()
    brute = brute_types(ids.tolist(), specs[0], starts.tolist())
    assert as_counters(types) == brute
    for report, spec in zip(sweep_collisions(types, specs, loads_budget=budget), specs, strict=True):
        assert_report_matches(report, brute, spec)


def test_a_table_past_the_budget_is_counted_a_few_heads_at_a_time():
    """8 heads of a 1M-row table (4 MB of loads each) under a 9 MB budget: two heads at a time,
    the same figures, and a quarter of the loads held (traced memory; numpy's pass adds one
    8 MB bincount)."""
    ids = np.random.default_rng(4).integers(0, 9, 3000)
    spec = HashSpec(**{**SMALL.to_dict(), "heads": 8, "table_sizes": (1 << 20, 1 << 20)})
    types = count_ngram_types(ids, spec)
    assert reports._head_parts([4 << 20] * 8, 9 << 20) == [range(h, h + 2) for h in range(0, 8, 2)]

    def traced(budget):
        tracemalloc.start()
        report = sweep_collisions(types, [spec], loads_budget=budget, compiled=False)[0]
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return report.to_dict(), peak

    whole, whole_peak = traced(None)
    parts, parts_peak = traced(9 << 20)
    assert parts == whole
    assert whole_peak > 40 << 20 and parts_peak < 20 << 20, (whole_peak, parts_peak)
    assert_report_matches(
        sweep_collisions(types, [spec], loads_budget=9 << 20)[0], brute_types(ids, spec), spec
    )


def test_a_sweep_equals_separate_analyses():
    ids = np.random.default_rng(1).integers(0, 9, 700)
    specs = [HashSpec(**{**SMALL.to_dict(), "table_sizes": (t, t)}) for t in (5, 31, 101)]
    types = count_ngram_types(ids, SMALL)
    for report, spec in zip(sweep_collisions(types, specs), specs, strict=True):
        assert report.to_dict() == analyse_collisions(types, spec).to_dict()
        assert_report_matches(report, brute_types(ids, spec), spec)
    other_seed = HashSpec(**{**SMALL.to_dict(), "seed": 1})
    with pytest.raises(UsageError, match="same N"):
        sweep_collisions(types, [SMALL, other_seed])


@pytest.mark.parametrize("threads", [1, 3])
def test_a_sweep_on_threads_equals_brute_force(tiny_blocks, threads, monkeypatch):
    """Every (spec, layer) pair of a group counted on its own thread (the compiled passes, blocks
    of seven n-grams, a group a pair): the brute-force figures, whatever the threads."""
    pytest.importorskip("numba")
    monkeypatch.setattr(reports, "SMALL_SWEEP_TYPES", 0)
    ids = np.random.default_rng(3).integers(0, 9, 600)
    specs = [HashSpec(**{**SMALL.to_dict(), "table_sizes": (t, t)}) for t in (5, 31, 8209)]
    types = count_ngram_types(ids, SMALL)
    for budget in (None, 1):
        found = sweep_collisions(types, specs, threads=threads, loads_budget=budget)
        for report, spec in zip(found, specs, strict=True):
            assert_report_matches(report, brute_types(ids, spec), spec)


# ---------------------------------------------------------------------------- expectations
def test_published_uniform_random_figures():
    # ngramtool's reference README: 111,302 distinct 2-grams.
    assert round(expectations.expected_collision_ratio(111_302, 262_144), 4) == 0.1852
    assert round(expectations.expected_collision_ratio(111_302, 16_384), 4) == 0.8530


def test_stable_for_huge_tables():
    # 1 - (1-1/M)^T computed naively loses every digit at M = 1e15.
    assert expectations.expected_collision_ratio(1000, 10**15) == pytest.approx(999 / 2 / 10**15, rel=1e-6)
    assert expectations.expected_shared_share(1000, 10**15) == pytest.approx(999 / 10**15, rel=1e-6)


@pytest.mark.parametrize(("types", "table"), [(1, 3), (2, 2), (3, 3), (4, 3), (5, 2)])
def test_one_table_expectations_equal_exact_enumeration(types, table):
    outcomes = list(itertools.product(range(table), repeat=types))
    rows = [len(set(o)) for o in outcomes]
    shared = [sum(Counter(o)[r] > 1 for r in o) / types for o in outcomes]
    biggest = [max(Counter(o).values()) for o in outcomes]
    assert expectations.expected_rows_used(types, table) == pytest.approx(sum(rows) / len(outcomes))
    assert expectations.expected_collision_ratio(types, table) == pytest.approx(
        1 - sum(rows) / len(outcomes) / types
    )
    assert expectations.expected_shared_share(types, table) == pytest.approx(sum(shared) / len(outcomes))
    assert expectations.expected_mean_per_row(types, table) == pytest.approx(
        types * len(outcomes) / sum(rows)
    )
    assert 1 <= sum(biggest) / len(outcomes) <= types


def test_all_heads_expectations_equal_exact_enumeration():
    types, tables = 3, (2, 3)
    cells = list(itertools.product(range(tables[0]), range(tables[1])))
    every, same = [], []
    for outcome in itertools.product(cells, repeat=types):
        per_head = [Counter(cell[h] for cell in outcome) for h in range(2)]
        every.append(sum(all(per_head[h][c[h]] > 1 for h in range(2)) for c in outcome) / types)
        same.append(sum(Counter(outcome)[c] > 1 for c in outcome) / types)
    assert expectations.expected_all_heads_shared(types, tables) == pytest.approx(sum(every) / len(every))
    assert expectations.expected_indistinguishable(types, tables) == pytest.approx(sum(same) / len(same))


@pytest.mark.parametrize(("types", "table"), [(300, 7), (2000, 1000), (20_000, 65_537)])
def test_expected_max_matches_simulation(types, table):
    rng = np.random.default_rng(11)
    simulated = np.mean([np.bincount(rng.integers(0, table, types)).max() for _ in range(400)])
    assert expectations.expected_max_per_row(types, table) == pytest.approx(simulated, rel=0.03)


def _poisson_max_exactly(types: int, table: int, digits: int = 40) -> float:
    """E[max] = sum_k 1 - P(Poisson <= k-1)^M in 40-digit decimals: the reference for the float code."""
    with decimal.localcontext() as context:
        context.prec = digits
        lam = decimal.Decimal(types) / table
        below, pmf, total, k = decimal.Decimal(0), (-lam).exp(), decimal.Decimal(0), 0
        while True:
            below += pmf  # P(X <= k)
            term = 1 - below**table  # P(max >= k + 1)
            total += term
            k += 1
            pmf = pmf * lam / k
            if k > lam and term < decimal.Decimal(10) ** -30:
                return float(total)


@pytest.mark.parametrize(("types", "table"), [(697, 5003), (1, 10), (5, 5), (50_000, 101), (10**6, 262144)])
def test_expected_max_is_the_exact_sum_to_the_last_digits(types, table):
    """The float code agrees with the sum done in 40-digit decimals, to 1e-12 (it uses math's
    scalar functions and an exact sum, so the figure is the same on every CPU)."""
    exact = _poisson_max_exactly(types, table)
    assert expectations.expected_max_per_row(types, table) == pytest.approx(exact, rel=1e-12)
