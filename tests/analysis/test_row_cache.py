"""measure_row_cache: every figure equals a straightforward simulation (an ordered-dict LRU per
budget, a sorted frequency list for the static cache), compiled or numpy, shared or per layer,
warm or cold per document, with masked tokens under both conventions."""

from __future__ import annotations

import math
from collections import Counter, OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ngramtool import NgramHashMapping, TokenFileReader
from ngramtool.analysis.row_cache import (
    CacheOptions,
    CompiledStack,
    NumpyStack,
    Tally,
    default_budgets,
    figures,
    measure_row_cache,
)
from ngramtool.analysis.sizing import bytes_per_row
from ngramtool.util.errors import NgramToolError, UsageError

numba = pytest.importorskip("numba")

SPREAD = 7919  # row_streams' rows are multiples of it, up to 40 * SPREAD


def direct(cold: bool) -> CompiledStack:
    """The compiled stack indexing its per-row state by the row (every row below the bound)."""
    return CompiledStack(cold, rows=40 * SPREAD + 1)


STACKS = (CompiledStack, direct, NumpyStack)  # hash table, direct index, numpy


def simulate(reads: list[list[int]], docs: list[int], budget: int, cold: bool) -> tuple[int, list[int]]:
    """(hits, misses of each token) of an LRU cache of ``budget`` rows, one OrderedDict."""
    cache: OrderedDict[int, None] = OrderedDict()
    hits, misses, doc = 0, [], None
    for token, document in zip(reads, docs, strict=True):
        if cold and document != doc:
            cache.clear()
        doc, missed = document, 0
        for row in token:
            if row in cache:
                hits += 1
                cache.move_to_end(row)
                continue
            missed += 1
            if budget:
                cache[row] = None
                if len(cache) > budget:
                    cache.popitem(last=False)
        misses.append(missed)
    return hits, misses


def reference(reads: list[list[int]], docs: list[int], budgets: list[int], cold: bool) -> dict:
    """The figures of a cache, simulated."""
    frequency = Counter(row for token in reads for row in token)
    accesses, top = sum(frequency.values()), sorted(frequency.values(), reverse=True)
    unique = len(top)
    ceiling, _ = simulate(reads, docs, unique + 1, cold)
    out = {
        "accesses": accesses,
        "unique_rows": unique,
        "hit_ceiling": ceiling / accesses if accesses else 0.0,
    }
    out["budgets"] = []
    for budget in budgets:
        hits, misses = simulate(reads, docs, budget, cold)
        ordered = sorted(misses)
        out["budgets"].append(
            {
                "rows": budget,
                "lru_hit_rate": hits / accesses if accesses else 0.0,
                "static_hit_rate": sum(top[:budget]) / accesses if accesses else 0.0,
                "misses_per_token_mean": (accesses - hits) / len(reads),
                "misses_per_token_p99": ordered[math.ceil(0.99 * len(reads)) - 1],
            }
        )
    return out


def measured(
    rows: np.ndarray, docs: np.ndarray, budgets: list[int], cold: bool, kind: type, blocks: int
) -> dict:
    """The figures of :class:`Tally` over the reads counted by ``kind``, fed in ``blocks`` pieces."""
    stack, tally = kind(cold), Tally(np.unique([*budgets, np.iinfo(np.int64).max]), rows.shape[1])
    for part, part_docs in zip(np.array_split(rows, blocks), np.array_split(docs, blocks), strict=True):
        stack.count(np.ascontiguousarray(part), part_docs, tally)
    data = figures(tally, stack.frequencies(), [(None, b) for b in budgets], 1, None).to_dict()
    return {key: data[key] for key in ("accesses", "unique_rows", "hit_ceiling", "budgets")}


def assert_same(got: dict, want: dict) -> None:
    assert (got["accesses"], got["unique_rows"]) == (want["accesses"], want["unique_rows"])
    assert got["hit_ceiling"] == pytest.approx(want["hit_ceiling"], abs=1e-12)
    for g, w in zip(got["budgets"], want["budgets"], strict=True):
        assert {k: g[k] for k in w} == pytest.approx(w, abs=1e-12)


@st.composite
def row_streams(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    tokens = draw(st.integers(1, 60))
    width = draw(st.integers(1, 4))
    distinct = draw(st.integers(1, 40))
    rows = draw(st.lists(st.integers(-1, distinct), min_size=tokens * width, max_size=tokens * width))
    breaks = draw(st.lists(st.booleans(), min_size=tokens, max_size=tokens))
    docs = np.cumsum(breaks).astype(np.int64)
    return np.array(rows, dtype=np.int64).reshape(tokens, width) * SPREAD, docs  # spread-out row ids


@settings(max_examples=120)
@given(row_streams(), st.booleans(), st.integers(1, 4), st.lists(st.integers(0, 50), max_size=4))
def test_figures_equal_an_ordered_dict_lru_and_a_sorted_frequency_list(stream, cold, blocks, extra):
    rows, docs = stream
    reads = [[int(r) for r in token if r >= 0] for token in rows]
    unique = len({r for token in reads for r in token})
    budgets = sorted({0, 1, unique, unique + 3, *extra})
    want = reference(reads, docs.tolist(), budgets, cold)
    for kind in STACKS:
        assert_same(measured(rows, docs, budgets, cold, kind, blocks), want)


def tally_of(budgets: list[int], width: int) -> Tally:
    return Tally(np.unique(np.array([*budgets, np.iinfo(np.int64).max], dtype=np.int64)), width)


@settings(max_examples=40)
@given(row_streams(), st.booleans(), st.lists(st.integers(0, 50), max_size=5))
def test_each_read_misses_the_budgets_its_numpy_stack_distance_says(stream, cold, budgets):
    rows, docs = stream
    hashed, indexed, numpy = CompiledStack(cold), direct(cold), NumpyStack(cold)
    tallies = [tally_of(budgets, rows.shape[1]) for _ in range(3)]
    for part, part_docs in zip(np.array_split(rows, 3), np.array_split(docs, 3), strict=True):
        part = np.ascontiguousarray(part)
        distances = numpy.distances(part, part_docs)
        want = tallies[2].budgets_missed(distances)
        assert np.array_equal(hashed.budgets_missed(part, part_docs, tallies[0]), want)
        assert np.array_equal(indexed.budgets_missed(part, part_docs, tallies[1]), want)
        tallies[2].add(want, numpy.frequencies().shape[0])
    for tally in tallies[:2]:
        assert np.array_equal(tally.token_misses, tallies[2].token_misses)
        assert np.array_equal(tally.counters, tallies[2].counters)
    assert sorted(hashed.frequencies()) == sorted(indexed.frequencies()) == sorted(numpy.frequencies())


def test_a_read_misses_a_budget_iff_its_stack_distance_reaches_it():
    """The numpy distances themselves, on a stream worked out by hand: a b c a b b d a."""
    rows = np.array([[1], [2], [3], [1], [2], [2], [4], [1]], dtype=np.int64)
    distances = NumpyStack(False).distances(rows, np.zeros(8, dtype=np.int64))
    assert distances.ravel().tolist() == [-1, -1, -1, 2, 2, 0, -1, 2]
    tally = tally_of([0, 1, 3], 1)
    assert tally.budgets_missed(distances).ravel().tolist() == [4, 4, 4, 2, 2, 1, 4, 2]
    assert CompiledStack(False).budgets_missed(rows, np.zeros(8, dtype=np.int64), tally).ravel().tolist() == [
        4, 4, 4, 2, 2, 1, 4, 2
    ]  # fmt: skip


@pytest.mark.parametrize("cold", [False, True])
def test_the_compiled_stack_grows_and_renumbers_over_a_long_stream(cold):
    rng = np.random.default_rng(7)
    rows = (rng.zipf(1.3, size=(6000, 3)) % 5000).astype(np.int64)
    docs = np.arange(6000, dtype=np.int64) // 1000
    budgets = [0, 1, 2, 10, 100, 1000, 4000]
    want = tally_of(budgets, 3).budgets_missed(NumpyStack(cold).distances(rows, docs))
    for compiled in (CompiledStack(cold), CompiledStack(cold, rows=5000)):
        assert np.array_equal(compiled.budgets_missed(rows, docs, tally_of(budgets, 3)), want)
    with pytest.raises(ValueError, match=f"beyond the {rows.max()} rows given"):
        CompiledStack(cold, rows=int(rows.max())).count(rows, docs, tally_of(budgets, 3))


def mapping(negative_ids: str = "mask") -> NgramHashMapping:
    return NgramHashMapping.build(
        None, vocab_size=50, heads=2, layer_ids=[1, 4], table_sizes=(31, 37), mask_tokens=[3],
        negative_ids=negative_ids,
    )  # fmt: skip


@pytest.mark.parametrize("negative_ids", ["mask", "barrier"])
@pytest.mark.parametrize("cold", [False, True])
def test_a_token_file_measures_as_simulated_shared_and_per_layer(tmp_path, negative_ids, cold):
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 12, size=700).astype(np.uint16)
    ids[::9] = 3  # a masked (DEAD) token
    ids[::50] = 49  # the end of a document
    path = tmp_path / "ids.npy"
    np.save(path, ids)
    chosen = mapping(negative_ids)
    reader = TokenFileReader(path, eos_id=49)
    budgets = [0, 1, 10, 40, 1000]
    results = {
        compiled: measure_row_cache(
            reader,
            chosen,
            cache=CacheOptions(budget_rows=budgets, per_layer=True, cold_per_document=cold),
            compiled=compiled,
        )
        for compiled in (True, False)
    }
    assert results[True].to_dict()["layers"] == results[False].to_dict()["layers"]
    result = results[True]
    starts = np.flatnonzero(np.concatenate([[True], ids[:-1] == 49]))
    rows = chosen.rows(ids.astype(np.int64))
    docs = (np.searchsorted(starts, np.arange(ids.shape[0]), side="right") - 1).tolist()
    offsets = np.concatenate([[0], np.cumsum(chosen.spec.rows_per_layer)[:-1]])
    shared = [
        [int(r + offsets[layer]) for layer in range(2) for r in token[layer] if r >= 0] for token in rows
    ]
    assert (negative_ids == "mask") == any(len(token) == 0 for token in shared)
    assert_same(result.shared.to_dict(), reference(shared, docs, budgets, cold))
    assert [f.layer for f in result.layers] == [1, 4]
    for layer, got in enumerate(result.layers):
        reads = [[int(r) for r in token[layer] if r >= 0] for token in rows]
        assert_same(got.to_dict(), reference(reads, docs, budgets, cold))
    assert result.documents == starts.shape[0] and result.tokens == ids.shape[0]


def test_budgets_in_bytes_and_the_default_sweep(tmp_path):
    path = tmp_path / "ids.npy"
    np.save(path, np.arange(400, dtype=np.uint16) % 37)
    ids50 = NgramHashMapping.build(None, vocab_size=50)
    given = measure_row_cache(
        path, ids50, cache=CacheOptions(budgets=[0, 1280, 10**9], encoding="fp32", dim=32)
    )
    assert given.row_bytes == 128 and given.encoding == "fp32"
    assert [(b.bytes, b.rows) for b in given.shared.budgets] == [(0, 0), (1280, 10), (10**9, 7812500)]
    assert given.shared.budgets[-1].lru_hit_rate == pytest.approx(given.shared.hit_ceiling)
    assert given.shared.budgets[-1].static_hit_rate == 1.0
    swept = measure_row_cache(path, ids50, cache=CacheOptions(row_bytes=10**5), compiled=False)
    working_set = swept.shared.working_set_bytes
    assert [b.bytes for b in swept.shared.budgets] == default_budgets(working_set)
    assert default_budgets(working_set)[-1] == working_set and swept.engine == "numpy"
    assert 0 < swept.shared.top_1pct_share <= swept.shared.top_10pct_share <= 1


def test_default_budgets_run_1_2_5_up_to_the_working_set():
    assert default_budgets(12 * 10**6) == [10**6, 2 * 10**6, 5 * 10**6, 10**7, 12 * 10**6]
    assert default_budgets(10**6) == [10**6] and default_budgets(5) == [5]


def test_row_bytes_follow_the_sizing_encodings():
    assert bytes_per_row(None, None, None) == (128, "bf16")
    assert bytes_per_row(None, "q4_k", 256) == (144, "Q4_K")
    assert bytes_per_row(None, "fp8-e8m0", 64) == (66, "fp8-e8m0")
    assert bytes_per_row(300, None, None) == (300, None)
    with pytest.raises(UsageError, match="whole blocks of 256"):
        bytes_per_row(None, "q3_k", 64)
    with pytest.raises(UsageError, match="unknown `encoding`"):
        bytes_per_row(None, "fp4", 64)
    with pytest.raises(UsageError, match="not both"):
        bytes_per_row(100, "bf16", None)


def test_bad_requests_are_usage_errors(tmp_path):
    path = tmp_path / "ids.npy"
    np.save(path, np.arange(10, dtype=np.uint16))
    ids50 = NgramHashMapping.build(None, vocab_size=50)
    with pytest.raises(UsageError, match="not both"):
        CacheOptions(budgets=[1], budget_rows=[1])
    with pytest.raises(UsageError, match="0 or more"):
        CacheOptions(budget_rows=[-1])
    with pytest.raises(UsageError, match="unknown `encoding`"):
        CacheOptions(encoding="fp4")
    with pytest.raises(UsageError, match="no order of reads"):
        measure_row_cache("part.ngtypes.npz")
    with pytest.raises(TypeError, match="layer_ids"):
        measure_row_cache(path, ids50, layer_ids=[1])  # spec fields belong to the mapping
    np.save(path, np.zeros(0, dtype=np.uint16))
    with pytest.raises(NgramToolError, match="no tokens"):
        measure_row_cache(path, ids50)
