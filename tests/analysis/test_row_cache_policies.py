"""The caches engines ship, rows per batch, pages per read and hot sets: every figure of
measure_row_cache equals a straightforward simulation (a dict of slots for direct, a list ring
for CLOCK, an OrderedDict for LRU, a Python set per batch, pages by integer division), compiled
or numpy, one cache or split by layer, on random streams, specs and budgets."""

from __future__ import annotations

import math
from collections import Counter, OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_row_cache import SPREAD, row_streams  # random row streams, rows spread out

from ngramtool import NgramHashMapping, TokenFileReader
from ngramtool.analysis.hot_sets import load_hot_set, save_hot_set
from ngramtool.analysis.row_cache import CacheOptions, measure_row_cache
from ngramtool.analysis.row_cache_policies import (
    CompiledBatches,
    CompiledClock,
    CompiledDirect,
    NumpyBatches,
    NumpyClock,
    NumpyDirect,
    RowIds,
)
from ngramtool.analysis.sizing import row_parts
from ngramtool.util.errors import NgramToolError, UsageError

numba = pytest.importorskip("numba")

EVERY = ("lru", "static", "clock", "direct")


# ------------------------------------------------------------------------------ the simulations
def clock_hits(reads: list[list[int]], docs: list[int], budget: int, cold: bool) -> int:
    """Hits of a CLOCK cache of ``budget`` slots: a list ring, a list of reference bits, a hand."""
    ring: list[int] = []
    bits: list[bool] = []
    hand = hits = 0
    doc = None
    for token, document in zip(reads, docs, strict=True):
        if cold and document != doc:
            ring, bits, hand = [], [], 0
        doc = document
        for key in token:
            if key in ring:
                bits[ring.index(key)] = True
                hits += 1
            elif budget == 0:
                continue
            elif len(ring) < budget:
                ring.append(key)
                bits.append(False)
            else:
                while bits[hand]:
                    bits[hand] = False
                    hand = (hand + 1) % budget
                ring[hand], bits[hand] = key, False
                hand = (hand + 1) % budget
    return hits


def direct_hits(reads: list[list[int]], docs: list[int], budget: int, cold: bool) -> int:
    """Hits of a direct-mapped cache of ``budget`` slots: a dict of slots, key in slot key mod B."""
    slots: dict[int, int] = {}
    hits = 0
    doc = None
    for token, document in zip(reads, docs, strict=True):
        if cold and document != doc:
            slots = {}
        doc = document
        for key in token:
            if budget == 0:
                continue
            if slots.get(key % budget) == key:
                hits += 1
            slots[key % budget] = key
    return hits


def lru_misses(reads: list[list[int]], docs: list[int], budget: int, cold: bool) -> list[list[int]]:
    """The keys each token misses in an LRU cache of ``budget`` rows (one OrderedDict)."""
    cache: OrderedDict[int, None] = OrderedDict()
    out, doc = [], None
    for token, document in zip(reads, docs, strict=True):
        if cold and document != doc:
            cache.clear()
        doc, missed = document, []
        for key in token:
            if key in cache:
                cache.move_to_end(key)
                continue
            missed.append(key)
            if budget:
                cache[key] = None
                if len(cache) > budget:
                    cache.popitem(last=False)
        out.append(missed)
    return out


def pages_of(row: int, parts: tuple[int, int, int], page: int, layout: str) -> int:
    """Pages a read of ``row`` touches: the first and last byte of each region, integer division."""
    regions = [sum(parts)] if layout == "interleaved" else [size for size in parts if size]
    return sum((row * size + size - 1) // page - (row * size) // page + 1 for size in regions)


def batch_sets(reads: list[list[int]], tokens: int) -> tuple[list[int], list[int]]:
    """(distinct rows, reads) of each whole batch of ``tokens`` tokens: a Python set per batch."""
    distinct, counts = [], []
    for start in range(0, len(reads) - tokens + 1, tokens):
        batch = [key for token in reads[start : start + tokens] for key in token]
        distinct.append(len(set(batch)))
        counts.append(len(batch))
    return distinct, counts


# ------------------------------------------------------------------------------ one simulator
def reads_of(rows: np.ndarray) -> list[list[int]]:
    return [[int(key) for key in token if key >= 0] for token in rows]


@settings(max_examples=60)
@given(row_streams(), st.booleans(), st.integers(1, 3), st.lists(st.integers(0, 50), min_size=1, max_size=4))
def test_clock_and_direct_caches_equal_a_list_ring_and_a_dict_of_slots(stream, cold, blocks, extra):
    rows, docs = stream
    reads = reads_of(rows)
    unique = len({key for token in reads for key in token})
    budgets = np.array(sorted({0, 1, unique, unique + 3, *extra}), dtype=np.int64)
    space = 41 * SPREAD  # the row space (every row below it; the budgets too)
    simulators = {
        "clock": [CompiledClock(budgets, cold, RowIds(space)), CompiledClock(budgets, cold, RowIds(None)),
                  NumpyClock(budgets, cold)],
        "direct": [CompiledDirect(budgets, space, cold), NumpyDirect(budgets, space, cold)],
    }  # fmt: skip
    for part, part_docs in zip(np.array_split(rows, blocks), np.array_split(docs, blocks), strict=True):
        for each in simulators.values():
            for simulator in each:
                simulator.count(np.ascontiguousarray(part), part_docs)
    docs_list = docs.tolist()
    want_clock = [clock_hits(reads, docs_list, int(b), cold) for b in budgets]
    want_direct = [direct_hits(reads, docs_list, int(b), cold) for b in budgets]
    for simulator in simulators["clock"]:
        assert simulator.hits.tolist() == want_clock
    for simulator in simulators["direct"]:
        assert simulator.hits.tolist() == want_direct


@pytest.mark.parametrize("space", [1 << 30, 1 << 34])  # keys below 2^32: remainders by multiplication
def test_large_direct_caches_and_large_keys(space):
    rng = np.random.default_rng(5)
    rows = rng.integers(0, space, size=(3000, 4)).astype(np.int64)
    rows[::7] = rows[::7] % 1000  # some rows read again
    budgets = np.array([1, 10, 999_983, (1 << 26) + 1, 1 << 29], dtype=np.int64)  # arrays, then hash tables
    docs = np.arange(3000, dtype=np.int64) // 500
    for cold in (False, True):
        compiled, plain = CompiledDirect(budgets, space, cold), NumpyDirect(budgets, space, cold)
        for part, part_docs in zip(np.array_split(rows, 3), np.array_split(docs, 3), strict=True):
            compiled.count(np.ascontiguousarray(part), part_docs)
            plain.count(np.ascontiguousarray(part), part_docs)
        want = [direct_hits(reads_of(rows), docs.tolist(), int(b), cold) for b in budgets]
        assert compiled.hits.tolist() == plain.hits.tolist() == want


@settings(max_examples=60)
@given(row_streams(), st.integers(1, 4), st.lists(st.integers(1, 12), min_size=1, max_size=3))
def test_distinct_rows_per_batch_equal_a_set_per_batch(stream, blocks, sizes):
    rows, _ = stream
    sizes = np.array(sorted(set(sizes)), dtype=np.int64)
    counters = [
        CompiledBatches(sizes, RowIds(None)),
        CompiledBatches(sizes, RowIds(41 * SPREAD)),
        NumpyBatches(sizes),
    ]
    for part in np.array_split(rows, blocks):
        for counter in counters:
            counter.count(np.ascontiguousarray(part))
    reads = reads_of(rows)
    for j, size in enumerate(sizes.tolist()):
        want = batch_sets(reads, size)
        for counter in counters:
            distinct, counts = counter.batches(j)
            assert (distinct.tolist(), counts.tolist()) == want


# ------------------------------------------------------------------------------ the whole pass
def reference(ids, mapping, docs, budgets, split, cold, parts, page, layout, batch_tokens):
    """Every figure, simulated: the reads in the pass's order (layers, then columns)."""
    rows = mapping.rows(ids.astype(np.int64))
    spec = mapping.spec
    offsets = np.concatenate([[0], np.cumsum(spec.rows_per_layer)[:-1]])
    layers = range(spec.num_layers)
    keyed = [[int(r + offsets[layer]) for layer in layers for r in token[layer] if r >= 0] for token in rows]
    caches = (
        [[[int(r) for r in token[layer] if r >= 0] for token in rows] for layer in layers]
        if split
        else [keyed]
    )
    pages = {
        int(r + offsets[layer]): pages_of(int(r), parts, page, layout)
        for token in rows for layer in layers for r in token[layer] if r >= 0
    }  # fmt: skip
    accesses = sum(len(token) for token in keyed)
    frequency = [Counter(key for token in cache for key in token) for cache in caches]
    tops = [sorted(counts.values(), reverse=True) for counts in frequency]
    out = {"accesses": accesses, "unique_rows": sum(len(counts) for counts in frequency), "budgets": []}
    out["pages_per_read"] = sum(pages[key] for token in keyed for key in token) / accesses
    for budget in budgets:
        each = budget // len(caches)
        missed = [lru_misses(cache, docs, each, cold) for cache in caches]
        per_token = [sum(len(m[t]) for m in missed) for t in range(len(rows))]
        missed_pages = 0
        for layer, m in enumerate(missed):
            shift = int(offsets[layer]) if split else 0
            missed_pages += sum(pages[key + shift] for token in m for key in token)
        out["budgets"].append(
            {
                "rows": budget,
                "lru_hit_rate": 1 - sum(per_token) / accesses,
                "static_hit_rate": sum(sum(top[:each]) for top in tops) / accesses,
                "clock_hit_rate": sum(clock_hits(cache, docs, each, cold) for cache in caches) / accesses,
                "direct_hit_rate": sum(direct_hits(cache, docs, each, cold) for cache in caches) / accesses,
                "misses_per_token_mean": sum(per_token) / len(rows),
                "misses_per_token_p99": sorted(per_token)[math.ceil(0.99 * len(rows)) - 1],
                "lru_pages_per_token": missed_pages / len(rows),
            }
        )
    out["batches"] = []
    for tokens in sorted(set(batch_tokens)):
        distinct, counts = batch_sets(keyed, tokens)
        out["batches"].append(
            {"tokens": tokens, "batches": len(distinct), "reads": sum(counts)}
            | ({"unique_rows_max": max(distinct), "unique_rows_p99": float(np.percentile(distinct, 99)),
                "dedupe_ratio": sum(counts) / sum(distinct) if sum(distinct) else None} if distinct else {})
        )  # fmt: skip
    return out


def assert_figures(got: dict, want: dict) -> None:
    assert (got["accesses"], got["unique_rows"]) == (want["accesses"], want["unique_rows"])
    assert got["pages_per_read"] == pytest.approx(want["pages_per_read"], abs=1e-12)
    for g, w in zip(got["budgets"], want["budgets"], strict=True):
        assert {k: g[k] for k in w} == pytest.approx(w, abs=1e-12), (g, w)
    for g, w in zip(got["batches"], want["batches"], strict=True):
        assert {k: g[k] for k in w} == pytest.approx(w, abs=1e-12), (g, w)


@st.composite
def corpora(draw: st.DrawFn):
    heads = draw(st.integers(1, 2))
    layers = draw(st.sampled_from([(1,), (1, 4), (0, 2, 5)]))
    tables = draw(st.sampled_from([(11, 13), (31, 37), (101, 103)]))
    size = draw(st.integers(5, 300))
    ids = np.array(draw(st.lists(st.integers(0, 11), min_size=size, max_size=size)), dtype=np.uint16)
    ids[:: draw(st.integers(3, 40))] = 49  # document ends
    return heads, layers, tables, ids


@settings(max_examples=25)
@given(
    corpora(),
    st.booleans(),
    st.booleans(),
    st.lists(st.integers(0, 700), min_size=1, max_size=3),
    st.sampled_from([(None, "fp8-e8m0", 64), (None, "mlx4-g32", 96), (None, "bf16", 16), (100, None, None)]),
    st.sampled_from([64, 100, 4096]),
    st.sampled_from(["interleaved", "split"]),
    st.lists(st.integers(1, 40), max_size=2),
)
def test_every_figure_equals_the_simulations(
    tmp_path_factory, corpus, split, cold, extra, row, page, layout, batches
):
    heads, layer_ids, tables, ids = corpus
    path = tmp_path_factory.mktemp("corpus") / "ids.npy"
    np.save(path, ids)
    mapping = NgramHashMapping.build(
        None, vocab_size=50, heads=heads, layer_ids=list(layer_ids), table_sizes=tables
    )
    rows = mapping.rows(ids.astype(np.int64))
    unique = len({(layer, int(r)) for token in rows for layer in range(len(layer_ids)) for r in token[layer]})
    budgets = sorted({1, unique, unique + 5, 2 * unique + 1, *extra})  # 1 row, the working set, beyond
    row_bytes, encoding, dim = row
    parts = row_parts(row_bytes, encoding, dim)
    starts = np.flatnonzero(np.concatenate([[True], ids[:-1] == 49]))
    docs = (np.searchsorted(starts, np.arange(ids.shape[0]), side="right") - 1).tolist()
    want = reference(ids, mapping, docs, budgets, split, cold, parts, page, layout, batches)
    options = CacheOptions(
        budget_rows=budgets, row_bytes=row_bytes, encoding=encoding, dim=dim, policies=EVERY,
        split="layer" if split else "shared", cold_per_document=cold, page_bytes=page, layout=layout,
        batch_tokens=batches,
    )  # fmt: skip
    for compiled in (True, False):
        result = measure_row_cache(
            TokenFileReader(path, eos_id=49), mapping, cache=options, compiled=compiled
        )
        assert_figures(result.shared.to_dict(), want)
        if split:
            assert [b.rows_per_layer for b in result.shared.budgets] == [b // len(layer_ids) for b in budgets]


def test_per_layer_caches_under_a_split_are_the_layers_shares(tmp_path):
    ids = (np.arange(400) * 7 % 23).astype(np.uint16)
    path = tmp_path / "ids.npy"
    np.save(path, ids)
    mapping = NgramHashMapping.build(None, vocab_size=50, heads=2, layer_ids=[1, 4], table_sizes=(31, 37))
    options = CacheOptions(budget_rows=[7, 50], policies=EVERY, split="layer", per_layer=True)
    result = measure_row_cache(path, mapping, cache=options)
    assert [f.layer for f in result.layers] == [1, 4]
    for b, budget in enumerate(result.shared.budgets):  # 7 rows: 3 a layer; 50: 25 a layer
        for policy in EVERY:
            hits = sum(f.budgets[b].hit_rates[policy] * f.accesses for f in result.layers)
            assert budget.hit_rates[policy] * result.shared.accesses == pytest.approx(hits)
        assert [f.budgets[b].rows for f in result.layers] == [budget.rows] * 2  # as given; each holds:
        assert budget.rows_per_layer == budget.rows // 2


def test_the_default_sweep_says_what_it_did_not_simulate(tmp_path):
    path = tmp_path / "ids.npy"
    np.save(path, (np.arange(3000) % 97).astype(np.uint16))
    mapping = NgramHashMapping.build(None, vocab_size=100)
    result = measure_row_cache(path, mapping, cache=CacheOptions(row_bytes=1000, policies=EVERY))
    last = result.shared.budgets[-1]  # the working set: its size is known only after the pass
    assert last.rows == result.shared.unique_rows
    assert last.hit_rates["lru"] == pytest.approx(result.shared.hit_ceiling)
    assert last.hit_rates["clock"] == pytest.approx(result.shared.hit_ceiling)  # holds every row read
    assert last.hit_rates["direct"] is None and last.to_dict()["direct_hit_rate"] is None
    assert all(b.hit_rates["direct"] is not None for b in result.shared.budgets[:-1])


# ------------------------------------------------------------------------------ hot sets
def test_an_exported_hot_set_replays_to_the_static_hit_rate_it_claims(tmp_path):
    rng = np.random.default_rng(11)
    one, other = tmp_path / "one.npy", tmp_path / "other.npy"
    np.save(one, rng.zipf(1.4, 5000).clip(max=49).astype(np.uint16))
    np.save(other, rng.zipf(1.2, 4000).clip(max=49).astype(np.uint16))
    mapping = NgramHashMapping.build(None, vocab_size=50, heads=2, layer_ids=[1, 4], table_sizes=(101, 103))
    for split in ("shared", "layer"):
        options = CacheOptions(budgets=[128 * 61], export_hot=128 * 61, split=split, row_bytes=128)
        measured = measure_row_cache(one, mapping, cache=options)
        hot = measured.hot_set
        assert hot.manifest["static_hit_rate"] == pytest.approx(measured.shared.budgets[0].static_hit_rate)
        assert hot.manifest["budget"] == {"bytes": 128 * 61, "rows": 61} and hot.manifest["tokens"] == 5000
        assert hot.size == (61 if split == "shared" else 60)  # 30 rows a layer
        assert [r.tolist() for r in hot.reads] == [sorted(r.tolist(), reverse=True) for r in hot.reads]
        saved = tmp_path / f"hot-{split}.npz"
        save_hot_set(hot, saved)
        loaded = load_hot_set(saved)
        assert loaded.manifest == hot.manifest and all(
            np.array_equal(a, b) for a, b in zip(loaded.rows, hot.rows, strict=True)
        )
        again = measure_row_cache(one, mapping, cache=CacheOptions(budget_rows=[1], hot=saved))
        assert again.hot.hit_rate == pytest.approx(hot.manifest["static_hit_rate"], abs=1e-12)
        elsewhere = measure_row_cache(other, mapping, cache=CacheOptions(budget_rows=[1], hot=saved))
        rows = mapping.rows(np.load(other).astype(np.int64))
        held = {(layer, int(r)) for layer, rs in zip(hot.layers, hot.rows, strict=True) for r in rs}
        reads = [
            (layer_id, int(r))
            for token in rows
            for layer_id, row in zip((1, 4), token, strict=True)
            for r in row
        ]
        assert elsewhere.hot.hits == sum((layer, r) in held for layer, r in reads)
        assert elsewhere.hot.hit_rate == pytest.approx(elsewhere.hot.hits / len(reads))


def test_a_hot_set_of_another_spec_or_no_hot_set_is_refused(tmp_path):
    path = tmp_path / "ids.npy"
    np.save(path, (np.arange(500) % 31).astype(np.uint16))
    mapping = NgramHashMapping.build(None, vocab_size=50, heads=2, layer_ids=[1], table_sizes=(31, 37))
    hot = measure_row_cache(path, mapping, cache=CacheOptions(export_hot=1280, row_bytes=128)).hot_set
    save_hot_set(hot, tmp_path / "hot.npz")
    other = NgramHashMapping.build(None, vocab_size=50, heads=2, layer_ids=[1], table_sizes=(41, 43))
    with pytest.raises(UsageError, match="another table's"):
        measure_row_cache(path, other, cache=CacheOptions(hot=tmp_path / "hot.npz"))
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(NgramToolError, match="not a readable hot set"):
        load_hot_set(tmp_path / "junk.npz")
    with pytest.raises(UsageError, match="no such file"):
        load_hot_set(tmp_path / "missing.npz")
    with pytest.raises(UsageError, match="holds no row"):
        measure_row_cache(path, mapping, cache=CacheOptions(export_hot=100, row_bytes=128))


def test_bad_options_are_usage_errors():
    for bad, fragment in (
        ({"policies": ["lfu"]}, "`policies` takes one or more of lru, static, clock, direct"),
        ({"policies": []}, "`policies`"),
        ({"policies": ["lru", "lru"]}, "each once"),
        ({"split": "head"}, "`split` takes shared or layer"),
        ({"layout": "tiled"}, "`layout` takes interleaved or split"),
        ({"batch_tokens": [0]}, "`batch_tokens`"),
        ({"page_bytes": 0}, "`page_bytes`"),
        ({"export_hot": 0}, "`export_hot`"),
    ):
        with pytest.raises(UsageError, match=fragment):
            CacheOptions(**bad)
    assert CacheOptions(policies=["direct", "lru"]).policies == ("lru", "direct")  # reported in one order
