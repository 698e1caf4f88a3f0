"""The numba backend's own guarantees: the division-free modulo, the kernel compiled for a spec's
shape, compiling without a writable cache directory, and threads.

Its parity with the numpy backend on every spec (golden vectors, random streams, chunkings,
boundaries, masked ids, tables near 2^31 rows) is checked with the other backends in
test_backends.py; there streams are short, so they run the generic compilation, and here the
kernel compiled for each shape is checked on the same cases.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from conftest import spec_from_golden
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("numba", reason="numba is not installed: pip install 'ngramtool[numba]'")

from ngramtool.hashing.backends import numba_backend
from ngramtool.hashing.backends.numba_backend import (
    FAST_MIN_PRIME,
    NumbaRows,
    engram_rows,
    inverse_of,
    reciprocal_mod,
)
from ngramtool.hashing.hasher import NgramHasher, hash_ngrams
from ngramtool.run.pipeline import TokenChunk, hash_chunks
from ngramtool.spec.hashspec import HashSpec
from ngramtool.tokenizers.vocab import identity_vocab
from ngramtool.util.jit import CACHE_LOCK, compiled

TOP = 2**63 - 1  # the largest mix of canonical ids
# The smallest prime the reciprocal path takes, the demo's first prime, 2^31 - 1 and 2^61 - 1
# (HashSpec allows primes below 2^62 / ((N-1)K)).
PRIMES = [16411, 646403, 2**31 - 1, 2**61 - 1]


@st.composite
def mixes_and_primes(draw: st.DrawFn) -> tuple[int, int]:
    """A prime and a mix in [0, 2^63): anywhere, or next to a multiple of the prime or to 2^63."""
    p = draw(st.sampled_from(PRIMES))
    anywhere = st.integers(0, TOP)
    near_multiple = st.builds(
        lambda q, d: min(max(q * p + d, 0), TOP), st.integers(0, TOP // p), st.integers(-2, 2)
    )
    near_top = st.integers(TOP - 3 * p, TOP)
    return draw(st.one_of(anywhere, near_multiple, near_top)), p


@settings(max_examples=500)
@given(case=mixes_and_primes())
def test_reciprocal_modulo_is_exact(case):
    x, p = case
    assert int(reciprocal_mod(np.uint64(x), np.int64(p), inverse_of(np.float64(p)))) == x % p


def test_reciprocal_modulo_on_every_prime_of_the_demo_spec():
    spec = HashSpec(vocab_size=98_627)
    primes = spec.primes.reshape(-1)
    rng = np.random.default_rng(0)
    xs = [0, 1, TOP, TOP - 1, *rng.integers(0, TOP, 200, dtype=np.int64).tolist()]
    for p in primes.tolist():
        xs_here = [*xs, p - 1, p, p + 1, (TOP // p) * p, (TOP // p) * p - 1]
        got = [int(reciprocal_mod(np.uint64(x), np.int64(p), inverse_of(np.float64(p)))) for x in xs_here]
        assert got == [x % p for x in xs_here]


def test_small_primes_and_demo_negative_ids_take_the_exact_modulo():
    fast = HashSpec(heads=2, table_sizes=(FAST_MIN_PRIME, FAST_MIN_PRIME), vocab_size=500, pad_id=0)
    small = HashSpec(heads=2, table_sizes=(FAST_MIN_PRIME - 100, FAST_MIN_PRIME), vocab_size=500, pad_id=0)
    assert NumbaRows(fast, offsets=True, negative_ids="mask").fast
    assert not NumbaRows(small, offsets=True, negative_ids="mask").fast
    assert not NumbaRows(fast, offsets=True, negative_ids="hash").fast


# ------------------------------------------------------------- the kernel compiled per shape
@pytest.fixture
def specialized(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every chunk, however short, runs the kernel compiled for its spec's shape."""
    monkeypatch.setattr(numba_backend, "SPECIALIZE_TOKENS", 0)


def test_specialized_kernel_on_the_golden_vectors(specialized, hash_golden):
    for config in hash_golden["configs"]:
        spec = spec_from_golden(config["config"])
        for case in config["cases"]:
            ids = np.asarray(case["compressed_ids"])
            rows = hash_ngrams(ids, spec, backend="numba")
            hashed = hash_ngrams(ids, spec, offsets=False, backend="numba")
            for li, layer in enumerate(case["layers"]):
                assert rows[:, :, li].tolist() == layer["embedding_rows"], case["description"]
                assert hashed[:, :, li].tolist() == layer["hash_ids"], case["description"]
    edge = hash_golden["edge_cases"]
    spec = spec_from_golden(edge["config"])
    hashed = hash_ngrams(
        np.asarray(edge["input_ids"]), spec, offsets=False, negative_ids="hash", backend="numba"
    )
    for li, layer_id in enumerate(spec.layer_ids):
        assert hashed[:, :, li].tolist() == edge["hash_ids"][str(layer_id)]


SHAPES = [
    # N=2, one head, one layer: the reciprocal modulo, int32 rows
    HashSpec(max_ngram=2, heads=1, layer_ids=(0,), table_sizes=(20_000,), pad_id=2, vocab_size=3000),
    # N=4, 3 heads: tiny primes, so the exact modulo
    HashSpec(max_ngram=4, heads=3, layer_ids=(1, 9), table_sizes=(5, 17, 40_000), pad_id=0, vocab_size=3000),
    # int64 rows (a layer past 2^31 rows) with the reciprocal modulo
    HashSpec(heads=2, table_sizes=(2**30, 2**30 + 7), layer_ids=(3,), pad_id=0, vocab_size=50_000),
]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    spec=st.sampled_from(SHAPES),
    boundary=st.sampled_from(["none", "reset"]),
    negative_ids=st.sampled_from(["mask", "hash"]),
)
def test_specialized_kernel_streams_match_numpy(specialized, data, spec, boundary, negative_ids):
    ids = data.draw(st.lists(st.integers(-3, spec.vocab_size - 1), max_size=200))
    starts = sorted(data.draw(st.lists(st.integers(0, len(ids)), max_size=8)))
    cuts = sorted(data.draw(st.sets(st.integers(0, len(ids)), max_size=4)))
    options = {"boundary": boundary, "negative_ids": negative_ids}
    expected = NgramHasher(spec, backend="numpy", **options)(np.asarray(ids, dtype=np.int64), starts)
    hasher = NgramHasher(spec, backend="numba", **options)
    parts, bounds = [], [0, *cuts, len(ids)]
    for lo, hi in pairwise(bounds):
        local = [s - lo for s in starts if lo <= s < hi or (hi == len(ids) and s == hi)]
        parts.append(hasher(np.asarray(ids[lo:hi], dtype=np.int64), local))
    assert np.array_equal(np.concatenate(parts), expected)


def test_many_short_windows_switch_to_the_specialized_kernel(monkeypatch):
    """A data loader hashes windows shorter than SPECIALIZE_TOKENS: once an evaluator has hashed
    that many tokens in all, it runs the kernel compiled for its shape, with the same rows."""
    shapes = []
    kernel = numba_backend.engram_rows

    def recording(*args):
        shapes.append(args[9])  # `layers`: an int (generic) or a tuple (specialized)
        return kernel(*args)

    monkeypatch.setattr(numba_backend, "engram_rows", recording)
    spec = HashSpec(vocab_size=500, pad_id=0)
    rows = NumbaRows(spec, offsets=True, negative_ids="mask")
    window = numba_backend.SPECIALIZE_TOKENS // 2
    ids = np.random.default_rng(5).integers(0, 500, 3 * window)
    context, none = np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int64)
    for lo in range(0, ids.shape[0], window):
        got = rows.rows(ids[lo : lo + window], context, none)
        expected = NgramHasher(spec, backend="numpy")(ids[lo : lo + window])
        assert np.array_equal(got, expected)
    assert [isinstance(shape, tuple) for shape in shapes] == [False, True, True]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint32", "uint16", "uint8", "int8", "uint64"])
def test_every_integer_dtype_and_strided_ids(dtype):
    spec = HashSpec(vocab_size=120, pad_id=3)
    ids = np.random.default_rng(4).integers(0, 120, 2 * numba_backend.SPECIALIZE_TOKENS + 10).astype(dtype)
    for chunk in (ids, ids[::2], ids[:50]):
        assert np.array_equal(
            hash_ngrams(chunk, spec, backend="numba"), hash_ngrams(chunk, spec, backend="numpy")
        )


@pytest.mark.parametrize("layout", ["every other column", "Fortran order"])
def test_rows_into_an_output_of_another_layout(specialized, layout):
    """An ``out`` that is not C-contiguous gets the same rows as numpy's, and nothing beside them
    is written (the vector path stores a head's K rows side by side)."""
    spec = HashSpec(vocab_size=98_627)
    ids = np.random.default_rng(7).integers(0, spec.vocab_size, 5000)
    expected = hash_ngrams(ids, spec, backend="numpy")
    shape = (ids.shape[0], spec.num_layers, spec.num_columns)
    if layout == "Fortran order":
        whole = np.full(shape, -7, dtype=spec.row_dtype, order="F")
        out = whole
    else:
        whole = np.full((*shape[:2], 2 * shape[2]), -7, dtype=spec.row_dtype)
        out = whole[:, :, ::2]
    hasher = NgramHasher(spec, backend="numba")
    got = hasher.deferred(ids, [], out=out)()
    assert np.array_equal(got, expected) and np.array_equal(out, expected)
    if layout != "Fortran order":
        assert (whole[:, :, 1::2] == -7).all()


# --------------------------------------------------------------------- compiling and caching
def test_a_function_without_a_cache_location_still_compiles():
    namespace: dict = {}
    exec("def triple(x):\n    return 3 * x\n", namespace)  # no source file: numba has nowhere to cache it
    assert compiled(namespace["triple"])(14) == 42


def test_a_read_only_install_without_a_cache_directory_hashes(tmp_path):
    """No writable __pycache__ beside the module, no user cache directory, no NUMBA_CACHE_DIR:
    the kernel is compiled in the process and gives numpy's rows."""
    package = Path(numba_backend.__file__).parents[2]  # ngramtool/hashing/backends/numba_backend.py
    site = tmp_path / "site"
    shutil.copytree(package, site / "ngramtool", ignore=shutil.ignore_patterns("__pycache__"))
    for folder in [site / "ngramtool", *(p for p in (site / "ngramtool").rglob("*") if p.is_dir())]:
        (folder / "__pycache__").write_text("not a directory")  # nothing can be created in there
    blocked = tmp_path / "blocked"
    blocked.write_text("not a directory")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(blocked / "cache"), HOME=str(blocked / "home"))
    script = (
        "import numpy as np\n"
        "from ngramtool import HashSpec, hash_ngrams\n"
        "spec = HashSpec(vocab_size=500, pad_id=0)\n"
        "ids = np.random.default_rng(0).integers(-1, 500, 5000)\n"
        "rows = [hash_ngrams(ids, spec, backend=name) for name in ('numba', 'numpy')]\n"
        "print(np.array_equal(*rows))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
    assert not [p for p in tmp_path.rglob("*") if p.suffix in (".nbi", ".nbc")]


def _plus_one(x):
    return x + 1


def test_two_processes_saving_to_one_kernels_cache_take_turns(tmp_path, monkeypatch):
    """numba saves to its cache unlocked: it reads the index, takes the first free data file, and
    writes both. Two saves that both read the index before either writes it take the same file,
    and the index gives one signature the other's code (a clean CI run's two workers compiling
    two specs at once). Saves take turns: here the first holds the lock while it waits (in vain) for
    the second to read the index too. Without the lock both read an empty index and wait for each
    other."""
    import numba.core.config

    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(tmp_path))
    files = compiled(_plus_one)._cache._cache_file
    read_index = files._load_index
    both_read = threading.Barrier(2, timeout=1)

    def read_then_wait_for_the_other():
        index = read_index()
        with contextlib.suppress(threading.BrokenBarrierError):
            both_read.wait()
        return index

    monkeypatch.setattr(files, "_load_index", read_then_wait_for_the_other)
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(files.save, ["signature a", "signature b"], [b"code of a", b"code of b"]))
    monkeypatch.setattr(files, "_load_index", read_index)
    assert (files.load("signature a"), files.load("signature b")) == (b"code of a", b"code of b")
    assert sorted(p.name for p in tmp_path.rglob("*.nbc"))[-1].endswith(".2.nbc")
    assert any(tmp_path.rglob(CACHE_LOCK))


# ----------------------------------------------------------------------------------- threads
def test_the_kernel_releases_the_gil():
    assert engram_rows.targetoptions["nogil"]


def test_one_kernel_serves_many_threads(small_spec):
    kernel = NumbaRows(small_spec, offsets=True, negative_ids="mask")
    rng = np.random.default_rng(7)
    chunks = [rng.integers(-1, small_spec.vocab_size, 40_000) for _ in range(12)]
    context = np.full(small_spec.max_ngram - 1, small_spec.pad_id, dtype=np.int64)
    resets = np.array([0, 3, 20_000], dtype=np.int64)
    serial = [kernel.rows(c, context, resets) for c in chunks]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda c: kernel.rows(c, context, resets), chunks))
    assert all(np.array_equal(a, b) for a, b in zip(serial, parallel, strict=True))


def test_the_pipeline_hashes_numba_pieces_on_several_threads(monkeypatch, small_spec):
    import ngramtool.run.pipeline as pipeline

    row_bytes = small_spec.num_layers * small_spec.num_columns * small_spec.row_dtype.itemsize
    monkeypatch.setattr(pipeline, "HASH_BYTES", 5000 * row_bytes)
    rng = np.random.default_rng(9)
    ids = rng.integers(0, small_spec.vocab_size, 60_000).astype(np.uint32)
    starts = np.array([0, 4999, 5000, 31_234], dtype=np.int64)
    chunks = [
        TokenChunk(ids[:30_000], starts[starts < 30_000]),
        TokenChunk(ids[30_000:], starts[3:] - 30_000),
    ]
    threads_seen = set()
    rows_of = NumbaRows.rows

    def recording(self, *args):
        threads_seen.add(__import__("threading").current_thread().name)
        return rows_of(self, *args)

    monkeypatch.setattr(NumbaRows, "rows", recording)
    hasher = NgramHasher(small_spec, boundary="reset", backend="numba")
    out = list(hash_chunks(chunks, identity_vocab(small_spec.vocab_size), hasher, threads=3))
    expected = NgramHasher(small_spec, boundary="reset", backend="numpy")(ids, starts)
    assert np.array_equal(np.concatenate([rows for _, _, rows in out]), expected)
    assert len(out) == 12 and all(name.startswith("ngramtool-hash") for name in threads_seen)
