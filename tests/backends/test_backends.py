"""Every available hashing backend against the golden vectors and against the numpy backend.

Variants: numpy, the compiled numba kernel, torch on the CPU, and the Triton kernel under Triton's
CPU interpreter (``TRITON_INTERPRET=1``, set here before anything imports Triton). With
``NGRAMTOOL_TEST_CUDA=1`` (benchmarks/gpu_check.sh on a GPU machine) torch and Triton run on
CUDA instead, and a CUDA variant that cannot run fails rather than skips.
"""

from __future__ import annotations

import os

CUDA = os.environ.get("NGRAMTOOL_TEST_CUDA") == "1"
if not CUDA:
    os.environ.setdefault("TRITON_INTERPRET", "1")

import hashlib  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from dataclasses import replace  # noqa: E402
from itertools import pairwise  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from conftest import load_json, run, spec_from_golden  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ngramtool.cli.bench_cmd import render  # noqa: E402
from ngramtool.hashing.backends import (  # noqa: E402
    BACKENDS,
    MASKED_ROW,
    SMALL_INPUT_BYTES,
    BackendChoice,
    choose_backend,
)
from ngramtool.hashing.backends.numpy_backend import BLOCK_TOKENS, rows_from_windows  # noqa: E402
from ngramtool.hashing.hasher import NgramHasher, SequenceHasher, as_hashed, hash_ngrams  # noqa: E402
from ngramtool.model.presets import preset  # noqa: E402
from ngramtool.spec.families import FAMILIES  # noqa: E402
from ngramtool.spec.families.stored import StoredConstants  # noqa: E402
from ngramtool.spec.hashspec import HashSpec  # noqa: E402
from ngramtool.tools.benchmarking import run_bench  # noqa: E402
from ngramtool.util.errors import NgramToolError, UsageError  # noqa: E402

HAS_NUMBA = importlib.util.find_spec("numba") is not None
HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_TRITON = HAS_TORCH and importlib.util.find_spec("triton") is not None


def _variant(backend: str, device: str) -> object:
    """A (backend, device) test parameter, skipped with the reason when it cannot run here."""
    reason = None
    if device == "cuda" and not CUDA:
        reason = "CUDA variants run with NGRAMTOOL_TEST_CUDA=1 (benchmarks/gpu_check.sh)"
    elif not CUDA or device == "cpu":
        if backend == "numba" and not HAS_NUMBA:
            reason = "numba is not installed: pip install 'ngramtool[numba]'"
        elif backend == "torch" and not HAS_TORCH:
            reason = "torch is not installed: pip install 'ngramtool[torch]'"
        elif backend == "triton" and not HAS_TRITON:
            reason = "triton is not installed: pip install 'ngramtool[gpu]'"
        elif not BACKENDS[backend].available(device):
            reason = BACKENDS[backend].unavailable_reason(device)
    marks = [pytest.mark.skip(reason=reason)] if reason else []
    return pytest.param((backend, device), id=f"{backend}-{device}", marks=marks)


VARIANTS = [
    _variant("numpy", "cpu"),
    _variant("numba", "cpu"),
    _variant("torch", "cpu"),
    _variant("triton", "cpu"),
    _variant("torch", "cuda"),
    _variant("triton", "cuda"),
]

each_backend = pytest.mark.parametrize("variant", VARIANTS)


def _rows(variant: tuple[str, str], ids: object, spec: HashSpec, **options: object) -> np.ndarray:
    backend, device = variant
    return hash_ngrams(ids, spec, backend=backend, device=device, **options)


SMALL = HashSpec(max_ngram=3, heads=2, layer_ids=(0, 5), table_sizes=(1000, 1500), pad_id=1, vocab_size=500)


# ------------------------------------------------------------------------------ golden
@each_backend
def test_golden_rows_and_hash_ids(variant, hash_golden):
    for config in hash_golden["configs"]:
        spec = spec_from_golden(config["config"])
        for case in config["cases"]:
            ids = np.asarray(case["compressed_ids"])  # [B, T]: each row its own stream
            rows = _rows(variant, ids, spec)
            hashed = _rows(variant, ids, spec, offsets=False)
            for li, layer in enumerate(case["layers"]):
                assert rows[:, :, li].tolist() == layer["embedding_rows"], case["description"]
                assert hashed[:, :, li].tolist() == layer["hash_ids"], case["description"]


@each_backend
def test_golden_negative_ids_with_demo_semantics(variant, hash_golden):
    edge = hash_golden["edge_cases"]
    spec = spec_from_golden(edge["config"])
    hashed = _rows(variant, np.asarray(edge["input_ids"]), spec, offsets=False, negative_ids="hash")
    for li, layer_id in enumerate(spec.layer_ids):
        assert hashed[:, :, li].tolist() == edge["hash_ids"][str(layer_id)]


@each_backend
def test_golden_deepseek_v41_rows_with_dead_tokens(variant):
    """families.json: DeepSeek-V4.1's constants, and rows where masked tokens are barriers."""
    golden = load_json("families.json")["families"]["deepseek-v4.1"]
    case = golden["cases"][0]
    spec = preset("deepseek-v4.1-flash").spec
    assert spec.vocab_size == case["compressed_vocab_size"] and spec.pad_id == case["pad_compressed"]
    assert spec.multipliers.tolist() == golden["multipliers"]
    assert spec.primes.reshape(2, -1).tolist() == golden["primes"]
    assert spec.offsets.tolist() == golden["offsets"]
    assert spec.rows_per_layer.tolist() == golden["rows_per_layer"]
    ids = np.where(np.array(case["alive"], dtype=bool), case["canonical_ids"], -1)
    rows = np.asarray(_rows(variant, ids, spec, negative_ids="barrier")).astype("<i8")
    assert list(rows.shape) == case["rows_shape"]
    assert rows[: len(case["rows_first_positions"])].tolist() == case["rows_first_positions"]
    assert hashlib.sha256(rows.tobytes()).hexdigest() == case["rows_sha256"]


# ------------------------------------------------------------------- random vs numpy
@st.composite
def family_specs(draw: st.DrawFn, families: tuple[str, ...] = FAMILIES) -> HashSpec:
    """A small spec of any family (docs/families.md), with constants of its own kind."""
    family = draw(st.sampled_from(families))
    n = draw(st.integers(2, 4))
    vocab = draw(st.integers(1, 3000))
    heads = draw(st.integers(1, 5))
    layers = tuple(draw(st.lists(st.integers(0, 30), min_size=1, max_size=3, unique=True)))
    tables = tuple(draw(st.integers(2, 5000)) for _ in range(n - 1))
    fields = {"max_ngram": n, "heads": heads, "layer_ids": layers, "table_sizes": tables, "vocab_size": vocab}
    if family == "longcat":  # sometimes served as sglang does: the walk stops at an EOS
        stop = draw(st.one_of(st.none(), st.integers(0, vocab - 1)))
        return HashSpec(family="longcat", pad_id=0, stop_token=stop, **fields)
    if family == "speedrun":  # fixed multipliers: one head, orders 2..3
        first = draw(st.sampled_from(["reserved", "kept"]))
        fields = {**fields, "max_ngram": min(n, 3), "heads": 1, "table_sizes": tables[: min(n, 3) - 1]}
        return HashSpec(family="speedrun", first_token=first, **fields)
    pad = draw(st.integers(0, vocab - 1))
    fields["eos_fill"] = draw(st.booleans())  # Qwen3.8's segments after each EOS (the pad id)
    if family == "tutorial":
        return HashSpec(family="tutorial", seed=draw(st.integers(0, 2**32 - 1)), pad_id=pad, **fields)
    if family == "stored":
        columns = (n - 1) * heads
        bound = (2**63 - 1) // max(vocab - 1, 1)
        matrix = st.lists(st.integers(1, min(bound, 2**62)), min_size=n, max_size=n)
        sizes = [draw(st.lists(st.integers(2, 5000), min_size=columns, max_size=columns)) for _ in layers]
        gaps = draw(st.lists(st.integers(0, 3), min_size=columns, max_size=columns))
        offsets = [np.cumsum([0, *(s + g for s, g in zip(row, gaps, strict=True))])[:-1] for row in sizes]
        stored = StoredConstants.from_arrays(
            [draw(matrix) for _ in layers], sizes, offsets, row_multiple=draw(st.sampled_from([1, 128]))
        )
        return HashSpec(family="stored", stored=stored, pad_id=pad, **fields)
    return HashSpec(pad_id=pad, **fields)


@st.composite
def streams(
    draw: st.DrawFn, families: tuple[str, ...] = FAMILIES
) -> tuple[HashSpec, list[int], list[int], list[int]]:
    """A small spec (of any of ``families``), ids (-1 = masked), document starts and chunk cuts."""
    spec = draw(family_specs(families))
    ids = draw(st.lists(st.integers(-1, spec.vocab_size - 1), max_size=300))
    starts = sorted(draw(st.lists(st.integers(0, len(ids)), max_size=10)))
    cuts = sorted(draw(st.sets(st.integers(0, len(ids)), max_size=5)))
    return spec, ids, starts, cuts


def tutorial_spec(table: int) -> HashSpec:
    """The chapter's hash (FAMILIES.md §2): orders 2-3, 4 heads each, one table, raw GPT-2 ids, pad 0."""
    return HashSpec(
        family="tutorial", max_ngram=3, heads=4, layer_ids=(0,), table_sizes=(table, table),
        seed=2026, pad_id=0, vocab_size=50257,
    )  # fmt: skip


@each_backend
def test_golden_tutorial_rows(variant):
    """families.json: the chapter's per-head rows; each sequence of a batch padded with 0 on its own."""
    golden = load_json("families.json")["families"]["tutorial"]
    assert tutorial_spec(16384).column_multipliers[0].tolist() == [
        [*reversed(m), *[0] * (3 - len(m))] for m in golden["multipliers"]
    ]
    for case in golden["cases"]:
        hasher = SequenceHasher(
            tutorial_spec(case["table"]), offsets=False, backend=variant[0], device=variant[1]
        )
        rows = np.asarray(hasher(np.asarray(case["ids"], dtype=np.int64)))[:, :, 0, :].astype("<i8")
        assert list(rows.shape) == case["rows_shape"]
        if "rows" in case:
            assert rows.tolist() == case["rows"]
        else:
            assert rows[0, 0].tolist() == case["rows_first"] and rows[-1, -1].tolist() == case["rows_last"]
            assert hashlib.sha256(rows.tobytes()).hexdigest() == case["rows_sha256"]


@each_backend
def test_golden_longcat_ids(variant):
    """families.json: LongCat's moduli, offsets and ids, the walk stopping at the start and at -1."""
    for case in load_json("families.json")["families"]["longcat"]["cases"]:
        n, k = case["neighbor_num"], case["split_num"]
        spec = HashSpec(
            family="longcat",
            max_ngram=n,
            heads=k,
            table_sizes=(case["m"],) * (n - 1),
            vocab_size=case["vocab_size"],
            layer_ids=(0,),
        )  # fmt: skip  (the issue's own call: LongCat's pad 0 is the family's default)
        assert spec.pad_id == 0 and spec.seed == 0
        assert spec.primes.reshape(-1).tolist() == case["mods"]
        assert spec.offsets[0].tolist() == case["offsets"]
        rows = _rows(variant, np.asarray(case["tokens"]), spec, negative_ids="barrier")
        assert np.asarray(rows)[:, 0, :].tolist() == case["ids"]


def family_rows_by_definition(spec: HashSpec, window: list[int]) -> list[list[int]]:
    """FAMILIES.md read literally, in Python integers, for one lag window (window[0] the current id)."""
    layers = []
    for li in range(spec.num_layers):
        row = []
        for order in range(2, spec.max_ngram + 1):
            gram = window[:order][::-1]  # oldest first
            for h in range(spec.heads):
                c = spec.column(order, h)
                size = int(spec.primes[li, order - 2, h])
                if spec.family == "longcat":
                    mix = sum(tok * pow(spec.vocab_size, j, size) for j, tok in enumerate(window[:order]))
                elif spec.family == "speedrun":  # modded-nanogpt's int32 arithmetic, the pad its reserved id
                    row.append(
                        speedrun_row_by_definition(spec, window[:order], size) + int(spec.offsets[li, c])
                    )
                    continue
                elif spec.family == "tutorial":
                    mix = 0
                    for j, tok in enumerate(gram):
                        mix ^= tok * tutorial_multipliers_by_torch(spec)[c][j]
                else:
                    mix = 0
                    for lag, tok in enumerate(window[:order]):
                        mix ^= tok * int(spec.multipliers[li, lag])
                row.append(mix % size + int(spec.offsets[li, c]))
        layers.append(row)
    return layers


def speedrun_row_by_definition(spec: HashSpec, window: list[int], table: int) -> int:
    """modded-nanogpt's ``(36313 x[t] ^ 27191 x[t-1]) % (T - 1)`` (parameter-golf's 18731 x[t-2] for
    a trigram) in torch int32: products wrap to 32 bits, ``%`` takes the divisor's sign; the pad
    (before the start) reads as the reserved id T - 1, a window starting there gets row T - 1."""
    modulus = table - 1
    at_pad = [tok == spec.pad_id for tok in window]
    if at_pad[0] or (spec.first_token == "kept" and any(at_pad)):
        return modulus
    mix = 0
    for tok, multiplier in zip(window, (36313, 27191, 18731), strict=False):
        product = ((modulus if tok == spec.pad_id else tok) * multiplier) & 0xFFFFFFFF
        mix ^= product - (1 << 32) if product >= 1 << 31 else product
    return mix % modulus


def tutorial_multipliers_by_torch(spec: HashSpec) -> list[list[int]]:
    """The chapter's own code: torch.randint(1, 2**20, (order,), generator=g) * 2 + 1."""
    import torch

    g = torch.Generator().manual_seed(spec.seed)
    return [
        (torch.randint(1, 2**20, (order,), generator=g) * 2 + 1).tolist()
        for order in range(2, spec.max_ngram + 1)
        for _ in range(spec.heads)
    ]


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed: pip install 'ngramtool[torch]'")
@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(spec=family_specs(), data=st.data())
def test_every_family_by_its_definition(spec, data):
    """rows_from_windows (the definition every backend is held to) equals FAMILIES.md in Python ints."""
    ids = st.integers(0, spec.vocab_size - 1)
    windows = data.draw(st.lists(st.lists(ids, min_size=spec.max_ngram, max_size=spec.max_ngram), max_size=8))
    for window in windows:
        got = rows_from_windows(np.asarray([window]), spec)[0].tolist()
        assert got == family_rows_by_definition(spec, window)


def test_stored_constants_equal_to_derived_ones_give_the_same_rows():
    """A checkpoint that stores Engram's own constants hashes exactly as Engram."""
    spec = HashSpec(heads=3, layer_ids=(1, 4), table_sizes=(1000, 1200), pad_id=1, vocab_size=700)
    stored = StoredConstants.from_arrays(spec.multipliers, spec.primes.reshape(2, -1), spec.offsets)
    fields = {"heads": 3, "layer_ids": (1, 4), "table_sizes": (1000, 1200), "pad_id": 1, "vocab_size": 700}
    twin = HashSpec(family="stored", stored=stored, **fields)
    ids = np.random.default_rng(0).integers(-1, 700, 5000)
    for negative_ids in ("mask", "barrier"):
        assert np.array_equal(
            hash_ngrams(ids, twin, negative_ids=negative_ids),
            hash_ngrams(ids, spec, negative_ids=negative_ids),
        )
    assert twin.rows_per_layer.tolist() == spec.rows_per_layer.tolist()
    assert twin.fingerprint != spec.fingerprint
    padded = StoredConstants.from_arrays(
        spec.multipliers, spec.primes.reshape(2, -1), spec.offsets, row_multiple=128
    )
    assert [r % 128 for r in padded.rows] == [0, 0] and padded.rows[0] - spec.rows_per_layer[0] < 128


def _stream_rows(variant, spec, ids, starts, cuts, **options):
    """Rows of ``ids`` fed in the chunks ``cuts`` makes (a start at a cut goes with the later chunk)."""
    backend, device = variant
    hasher = NgramHasher(spec, backend=backend, device=device, **options)
    bounds = [0, *cuts, len(ids)]
    parts = []
    for lo, hi in pairwise(bounds):
        last = hi == len(ids)
        local = [s - lo for s in starts if lo <= s < hi or (last and s == hi)]
        parts.append(hasher(np.asarray(ids[lo:hi], dtype=np.int64), local))
    return np.concatenate(parts)


@each_backend
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(case=streams(), boundary=st.sampled_from(["none", "reset"]))
def test_streams_match_numpy(variant, case, boundary):
    spec, ids, starts, cuts = case
    expected = NgramHasher(spec, boundary=boundary)(np.asarray(ids, dtype=np.int64), starts)
    assert np.array_equal(_stream_rows(variant, spec, ids, starts, cuts, boundary=boundary), expected)


@each_backend
@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(case=streams(("engram",)), boundary=st.sampled_from(["none", "reset"]), offsets=st.booleans())
def test_demo_negative_ids_and_hash_ids_match_numpy(variant, case, boundary, offsets):
    spec, ids, starts, cuts = case
    ids = [i * 7 if i < 0 else i for i in ids]  # some larger negative ids
    options = {"boundary": boundary, "negative_ids": "hash", "offsets": offsets}
    expected = NgramHasher(spec, **options)(np.asarray(ids, dtype=np.int64), starts)
    assert np.array_equal(_stream_rows(variant, spec, ids, starts, cuts, **options), expected)


def barrier_rows_by_definition(spec: HashSpec, ids: list[int], starts: list[int]) -> np.ndarray:
    """FAMILIES.md §1 read literally: each position walks its lookbacks back from the current token;
    from the first that is DEAD (negative) or before its document's start, the pad. LongCat's walk
    as sglang serves it also stops after a lookback j > 0 that is its stop token; the speedrun
    family's first token of each document reads as the pad (``first_token="reserved"``)."""
    windows = np.full((len(ids), spec.max_ngram), spec.pad_id, dtype=np.int64)
    for t in range(len(ids)):
        doc = max([0, *(s for s in starts if s <= t)])
        for lag in range(spec.max_ngram):
            if t - lag < doc or ids[t - lag] < 0:
                break
            if lag and ids[t - lag] == spec.stop_token:
                break
            read_as_pad = spec.reserved_first and t - lag == doc
            windows[t, lag] = spec.pad_id if read_as_pad else ids[t - lag]
    return rows_from_windows(windows, spec)


def eos_rows_by_definition(spec: HashSpec, ids: list[int], starts: list[int]) -> np.ndarray:
    """FAMILIES.md §4 read literally: a segment starts after each EOS (the pad id) and at each document
    start; lookbacks before the segment hold the EOS id. Masked (negative) ids look like the pad."""
    windows = np.full((len(ids), spec.max_ngram), spec.pad_id, dtype=np.int64)
    for t in range(len(ids)):
        segment = max(
            [0, *(s for s in starts if s <= t), *(p + 1 for p in range(t) if ids[p] == spec.pad_id)]
        )
        for lag in range(spec.max_ngram):
            if t - lag >= segment and ids[t - lag] >= 0:
                windows[t, lag] = ids[t - lag]
    rows = rows_from_windows(windows, spec)
    rows[np.asarray(ids) < 0] = MASKED_ROW
    return rows


@each_backend
@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=family_specs(("engram", "tutorial", "stored")),
    data=st.data(),
    boundary=st.sampled_from(["none", "reset"]),
)
def test_eos_segments_are_filled_as_defined(variant, spec, data, boundary):
    spec = replace(spec, eos_fill=True)
    ids = data.draw(st.lists(st.integers(-1, spec.vocab_size - 1), max_size=200))
    starts = sorted(data.draw(st.lists(st.integers(0, len(ids)), max_size=6)))
    cuts = sorted(data.draw(st.sets(st.integers(0, len(ids)), max_size=4)))
    expected = eos_rows_by_definition(spec, ids, starts if boundary == "reset" else [])
    assert np.array_equal(_stream_rows(variant, spec, ids, starts, cuts, boundary=boundary), expected)


@each_backend
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(case=streams(), boundary=st.sampled_from(["none", "reset"]))
def test_dead_tokens_are_barriers_as_defined(variant, case, boundary):
    spec, ids, starts, cuts = case
    spec = replace(spec, eos_fill=False)  # EOS segments: test_eos_segments_are_filled_as_defined
    expected = barrier_rows_by_definition(spec, ids, starts if boundary == "reset" else [])
    rows = _stream_rows(variant, spec, ids, starts, cuts, boundary=boundary, negative_ids="barrier")
    assert np.array_equal(rows, expected)


@each_backend
@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(case=streams(), split=st.integers(0, 300), width=st.integers(1, 4))
def test_dead_tokens_in_the_context_before_and_in_batches(variant, case, split, width):
    """A sequence after ``before`` (with DEAD ids in it) continues the stream; a batch's rows are
    each their own stream; ids as tensors give the same rows."""
    spec, ids, _, _ = case
    spec = replace(spec, eos_fill=False)
    backend, device = variant
    hasher = SequenceHasher(spec, negative_ids="barrier", backend=backend, device=device)
    whole = barrier_rows_by_definition(spec, ids, [])
    split = min(split, len(ids))
    array = np.asarray(ids, dtype=np.int64)
    before = as_hashed(spec, array[:split], np.array([0]))  # as the hash reads them
    tail = hasher(array[split:], before=before if split else None)
    assert np.array_equal(np.asarray(tail), whole[split:])
    usable = len(ids) // width * width
    if usable:
        batch = array[:usable].reshape(width, -1)
        expected = np.stack([barrier_rows_by_definition(spec, row.tolist(), []) for row in batch])
        assert np.array_equal(np.asarray(hasher(batch)), expected)


# ----------------------------------------------------------------------------- edges
def block_tokens(variant: tuple[str, str]) -> int:
    """The tokens a backend computes at a time on its device (chunk edges inside it matter)."""
    backend, device = variant
    if backend == "torch":
        from ngramtool.hashing.backends import torch_backend

        return torch_backend.CUDA_BLOCK_TOKENS if device == "cuda" else torch_backend.CPU_BLOCK_TOKENS
    if backend == "triton":
        from ngramtool.hashing.backends import triton_backend

        return triton_backend.BLOCK_TOKENS
    if backend == "numba":  # the first chunks run the generic compilation, later ones the specialized
        from ngramtool.hashing.backends import numba_backend

        return numba_backend.SPECIALIZE_TOKENS
    return BLOCK_TOKENS


@each_backend
def test_chunk_edges_across_blocks(variant):
    b = block_tokens(variant)
    ids = np.random.default_rng(0).integers(-1, SMALL.vocab_size, 2 * b + 17)
    starts = [0, 5, b - 1, b, b + 1, 2 * b + 16]
    cuts = [1, 2, b - 1, b, b + 1, 2 * b, 2 * b + 16, 2 * b + 17]
    for boundary in ("none", "reset"):
        expected = NgramHasher(SMALL, boundary=boundary)(ids, starts)
        got = _stream_rows(variant, SMALL, ids.tolist(), starts, cuts, boundary=boundary)
        assert np.array_equal(got, expected)


@each_backend
def test_documents_of_length_zero_and_one(variant):
    ids = np.array([7, 8, 9, 10, 11, 12], dtype=np.int64)
    starts = [0, 0, 1, 2, 2, 3, 5, 6]  # empty documents at 0 and 2 and at the end; lengths 1, 1, 2, 1
    rows = _rows(variant, ids, SMALL, doc_starts=starts)
    alone = [hash_ngrams(ids[lo:hi], SMALL) for lo, hi in pairwise([0, 1, 2, 3, 5, 6])]
    assert np.array_equal(rows, np.concatenate(alone))
    every = _rows(variant, ids, SMALL, doc_starts=np.arange(6))
    assert np.array_equal(every, np.concatenate([hash_ngrams(ids[i : i + 1], SMALL) for i in range(6)]))
    empty = _rows(variant, np.zeros(0, dtype=np.int64), SMALL, doc_starts=[0])
    assert empty.shape == (0, 2, SMALL.num_columns)


@each_backend
def test_ids_at_the_top_of_the_vocabulary(variant):
    for spec in (HashSpec(), HashSpec(heads=3, vocab_size=2**40, pad_id=5)):
        top = spec.vocab_size - 1
        ids = np.array([top, top, 0, top, top - 1, spec.pad_id, top], dtype=np.int64)
        assert np.array_equal(_rows(variant, ids, spec), hash_ngrams(ids, spec))


@each_backend
def test_tables_near_2_to_31_rows(variant):
    rng = np.random.default_rng(1)
    below = HashSpec(heads=2, table_sizes=(2**29 - 1000, 2**29 - 1000), layer_ids=(3,), vocab_size=50000)
    above = HashSpec(heads=2, table_sizes=(2**30, 2**30 + 7), layer_ids=(3,), pad_id=0, vocab_size=50000)
    # int64 rows with primes whose 2^64 mod p is large: the Barrett estimate is often one short.
    wide = HashSpec(heads=4, table_sizes=(3 * 10**8, 3 * 10**8), layer_ids=(3,), pad_id=0, vocab_size=50000)
    tiny = HashSpec(heads=3, table_sizes=(2, 2), layer_ids=(0, 1), pad_id=0, vocab_size=50000)  # prime 2
    assert below.row_dtype == np.int32 and int(below.rows_per_layer.max()) > 2**31 - 5000
    assert above.row_dtype == np.int64 and wide.row_dtype == np.int64
    for spec in (below, above, wide, tiny):
        ids = rng.integers(-1, 50000, 700)
        assert np.array_equal(_rows(variant, ids, spec), hash_ngrams(ids, spec))


@each_backend
def test_masked_ids_give_minus_one_rows_and_act_as_pad(variant):
    ids = np.array([5, 6, -1, 7, 8, -3], dtype=np.int64)
    rows = _rows(variant, ids, SMALL)
    assert (rows[[2, 5]] == MASKED_ROW).all()
    padded = np.array([5, 6, SMALL.pad_id, 7, 8, SMALL.pad_id])
    assert np.array_equal(rows[[0, 1, 3, 4]], hash_ngrams(padded, SMALL)[[0, 1, 3, 4]])


@each_backend
def test_ids_outside_the_vocabulary_name_the_position(variant):
    backend, device = variant
    hasher = NgramHasher(SMALL, backend=backend, device=device)
    hasher(np.array([1, 2, 3]))
    with pytest.raises(NgramToolError, match="position 4"):
        hasher(np.array([4, 500]))


# ----------------------------------------------------------------- kinds and devices
@each_backend
def test_tensors_in_tensors_out_on_the_same_device(variant):
    torch = pytest.importorskip("torch")
    backend, device = variant
    ids = np.random.default_rng(2).integers(-1, SMALL.vocab_size, 600)
    expected = hash_ngrams(ids, SMALL)
    for where in {"cpu", device}:
        for dtype in (torch.int64, torch.int32):
            tensor = torch.from_numpy(ids).to(dtype).to(where)
            rows = hash_ngrams(tensor, SMALL, backend=backend, device=device)
            assert isinstance(rows, torch.Tensor) and rows.device == tensor.device
            assert rows.dtype == torch.int32 and np.array_equal(rows.cpu().numpy(), expected)
    unsigned = np.abs(ids).astype(np.uint32)
    rows = hash_ngrams(unsigned, SMALL, backend=backend, device=device)
    assert isinstance(rows, np.ndarray) and np.array_equal(rows, hash_ngrams(unsigned, SMALL))


def test_auto_picks_the_fastest_usable_backend():
    fastest = "numba" if HAS_NUMBA else "numpy"
    assert choose_backend("auto") == BackendChoice(fastest, "cpu", auto=True)
    assert choose_backend("auto", "cpu").describe() == f"backend: {fastest} on cpu (auto)"
    if CUDA:
        expected = "triton" if HAS_TRITON else "torch"
        assert choose_backend("auto", "cuda").name == expected
    # an input known to be small hashes with numpy on the CPU (numba's load would cost more)
    small = choose_backend("auto", input_bytes=SMALL_INPUT_BYTES - 1)
    assert small == BackendChoice("numpy", "cpu", auto=True)
    assert choose_backend("auto", input_bytes=SMALL_INPUT_BYTES).name == fastest
    assert choose_backend("auto", input_bytes=None).name == fastest  # stdin: the size is unknown
    if HAS_NUMBA:
        assert choose_backend("numba", input_bytes=10).name == "numba"  # asked for by name


def test_backend_and_device_errors_say_how_to_fix_them():
    with pytest.raises(UsageError, match="choose one of auto, numpy, numba, torch, triton"):
        choose_backend("jax")
    with pytest.raises(UsageError, match="use cpu, cuda or cuda:N"):
        choose_backend("auto", "tpu")
    with pytest.raises(UsageError, match="numpy backend runs on the CPU"):
        choose_backend("numpy", "cuda")
    if HAS_NUMBA:
        with pytest.raises(UsageError, match="numba backend runs on the CPU"):
            choose_backend("numba", "cuda")
    with pytest.raises(UsageError, match="choose one of"):
        NgramHasher(SMALL, backend="gpu")
    if not CUDA and HAS_TORCH:
        with pytest.raises(UsageError, match="`device=cpu`"):
            choose_backend("torch", "cuda")
        with pytest.raises(UsageError, match="triton backend"):
            choose_backend("triton", "cuda")


def test_triton_kernel_compiles_for_nvidia_gpus(tmp_path):
    """Every kernel variant compiles to PTX and a cubin for sm_80 and sm_90 without a GPU, and the
    masked path's modulo is Barrett reduction (a 64-bit mul.hi, no division instruction)."""
    if not HAS_TRITON or importlib.util.find_spec("triton.backends.nvidia") is None:
        pytest.skip("triton with its NVIDIA backend is not installed: pip install 'ngramtool[gpu]'")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(tmp_path)
    script = Path(__file__).parent.parent / "triton_aot.py"
    result = subprocess.run(
        [sys.executable, str(script), "80", "90"], capture_output=True, text=True, env=env, timeout=600
    )
    assert result.returncode == 0, result.stderr
    variants = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(variants) == 16 and {v["arch"] for v in variants} == {"sm_80", "sm_90"}
    kernels = {"engram", "column xor", "column sum", "speedrun", "speedrun-kept"}
    assert {v["kernel"] for v in variants} == kernels
    assert all(v["cubin_bytes"] > 0 for v in variants)
    for v in variants:
        # The per-head kernel always reduces so; the speedrun family's int32 mix may be negative.
        barrett = (v["mask"] or v["kernel"] != "engram") and not v["kernel"].startswith("speedrun")
        assert (v["mul_hi_u64"], v["divisions"] == []) == ((True, True) if barrett else (False, False))


# ----------------------------------------------------------------------------- bench
def bench(*args: str) -> subprocess.CompletedProcess:
    """``ngramtool bench`` on a few tokens, in a subprocess as users run it."""
    return run("bench", "--tokens", "5000", "--reference-tokens", "2000", "--repeats", "1", *args)


def test_bench_measures_and_checks_every_backend():
    pytest.importorskip("torch")
    result = bench("--backend", "numpy", "--backend", "torch", "--json")
    assert result.returncode == 0, result.stderr.decode()
    report = json.loads(result.stdout)
    assert [r["backend"] for r in report["results"]] == ["numpy", "torch"]
    assert all(r["identical"] and r["tokens_per_second"] > 0 for r in report["results"])
    assert report["reference"]["identical"] and report["copy_gb_per_second"] > 0


def test_bench_lists_every_usable_cpu_backend_fastest_first():
    result = bench("--json")
    assert result.returncode == 0, result.stderr
    usable = [name for name, there in (("numba", HAS_NUMBA), ("numpy", True), ("torch", HAS_TORCH)) if there]
    report = json.loads(result.stdout)
    assert [r["backend"] for r in report["results"]] == usable
    assert all(r["identical"] for r in report["results"])


def test_bench_table():
    report = run_bench(
        HashSpec(), tokens=3000, backends=["numpy"], device="cpu", repeats=1, reference_tokens=1000
    )
    table = render(report)
    assert "| numpy | cpu | 1 |" in table and table.count("| yes |") == 1 + (report.reference is not None)


def test_bench_refuses_a_backend_that_cannot_run():
    result = bench("--backend", "numpy", "--device", "cuda")
    assert result.returncode == 2 and b"numpy backend runs on the CPU" in result.stderr
    assert b"--device cpu" in result.stderr and b"Traceback" not in result.stderr
