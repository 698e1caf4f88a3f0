"""Pipeline plumbing: splitting chunks keeps document starts; parallel hashing equals serial
hashing; write-behind keeps order and errors."""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ngramtool.run.pipeline as pipeline
from ngramtool import CorpusReader, NgramHashMapping, OutputOptions
from ngramtool.formats.npy import NpyStreamWriter
from ngramtool.hashing.backends.numpy_backend import NumpyRows
from ngramtool.hashing.hasher import NgramHasher
from ngramtool.run.jobs import HashJob, run_hash_job
from ngramtool.run.pipeline import hash_chunks
from ngramtool.tokenizers.vocab import identity_vocab
from ngramtool.util.chunks import TokenChunk, ramp, split_chunk
from ngramtool.util.profiling import StageClock, busy, timed
from ngramtool.util.writeback import WriteBehind


@given(st.integers(0, 40), st.lists(st.integers(0, 40), max_size=6), st.integers(1, 9))
def test_split_chunk_keeps_every_start_in_place(size, raw_starts, piece):
    starts = np.asarray(sorted(min(s, size) for s in raw_starts), dtype=np.int64)
    chunk = TokenChunk(np.arange(size, dtype=np.uint32), starts, nbytes=123, hard_cuts=2)
    pieces = list(split_chunk(chunk, piece))
    assert np.array_equal(np.concatenate([p.tokens for p in pieces]), chunk.tokens)
    offsets = np.cumsum([0] + [p.tokens.shape[0] for p in pieces[:-1]])
    rebuilt = np.concatenate([p.doc_starts + o for p, o in zip(pieces, offsets, strict=True)])
    assert rebuilt.tolist() == starts.tolist()
    assert sum(p.nbytes for p in pieces) == 123 and sum(p.hard_cuts for p in pieces) == 2
    assert not size or all(abs(p.nbytes - 123 * p.tokens.shape[0] / size) < 1 for p in pieces)  # by tokens
    assert all(p.tokens.shape[0] <= piece for p in pieces)


def test_a_ramp_starts_small_doubles_and_stays_full():
    assert list(itertools.islice(ramp(1 << 20), 7)) == [1 << 16, 1 << 17, 1 << 18, 1 << 19, *[1 << 20] * 3]
    assert list(itertools.islice(ramp(100, steps=2), 4)) == [25, 50, 100, 100]
    assert list(itertools.islice(ramp(3), 4)) == [1, 2, 3, 3]  # never below 1, never above full
    assert list(itertools.islice(ramp(1), 2)) == [1, 1]


def test_write_behind_runs_in_order_and_raises_errors():
    seen = []
    with WriteBehind(depth=2) as behind:
        for i in range(50):
            behind.submit(seen.append, i)
    assert seen == list(range(50))

    def fail(_value):
        raise OSError(28, "No space left on device")

    behind = WriteBehind()
    behind.submit(fail, 1)
    with pytest.raises(OSError, match="No space left"):
        for i in range(10):
            behind.submit(seen.append, i)
        behind.drain()


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.integers(0, 60), min_size=1, max_size=8),
    raw_starts=st.lists(st.integers(0, 400), max_size=10),
    threads=st.integers(1, 4),
    boundary=st.sampled_from(["none", "reset"]),
    piece_tokens=st.integers(1, 25),
    seed=st.integers(0, 2**16),
)
def test_parallel_hash_chunks_equal_one_serial_stream(
    monkeypatch, small_spec, sizes, raw_starts, threads, boundary, piece_tokens, seed
):
    """Pieces hashed on several threads at once give the rows of hashing the whole stream."""
    row_bytes = small_spec.num_layers * small_spec.num_columns * small_spec.row_dtype.itemsize
    monkeypatch.setattr(pipeline, "HASH_BYTES", piece_tokens * row_bytes)
    total = sum(sizes)
    ids = np.random.default_rng(seed).integers(0, small_spec.vocab_size, total).astype(np.uint32)
    starts = np.asarray(sorted(min(s, total) for s in raw_starts), dtype=np.int64)
    chunks, lo = [], 0
    for size in sizes:
        hi = lo + size
        within = starts[(starts >= lo) & ((starts < hi) | (hi == total))] - lo
        chunks.append(TokenChunk(ids[lo:hi], within))
        lo = hi
    hasher = NgramHasher(small_spec, boundary=boundary, backend="numpy")
    out = list(hash_chunks(chunks, identity_vocab(small_spec.vocab_size), hasher, threads))
    rows = np.concatenate([r for _, _, r in out]) if out else np.zeros((0,))
    expected = NgramHasher(small_spec, boundary=boundary, backend="numpy")(ids, starts)
    assert np.array_equal(rows.reshape(expected.shape), expected)
    assert all(r.shape[0] <= piece_tokens for _, _, r in out)


def test_one_numpy_kernel_serves_many_threads(small_spec):
    """NumpyRows keeps its block buffers per thread: concurrent chunks do not mix."""
    kernel = NumpyRows(small_spec, offsets=True, negative_ids="mask")
    rng = np.random.default_rng(7)
    chunks = [rng.integers(0, small_spec.vocab_size, 40_000) for _ in range(12)]
    context = np.full(small_spec.max_ngram - 1, small_spec.pad_id, dtype=np.int64)
    no_resets = np.zeros(0, dtype=np.int64)
    serial = [kernel.rows(c, context, no_resets) for c in chunks]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda c: kernel.rows(c, context, no_resets), chunks))
    assert all(np.array_equal(a, b) for a, b in zip(serial, parallel, strict=True))


def test_deferred_chunks_may_run_in_any_order(small_spec):
    ids = np.random.default_rng(3).integers(0, small_spec.vocab_size, 100)
    hasher = NgramHasher(small_spec, boundary="reset", backend="numpy")
    later = [hasher.deferred(ids[lo : lo + 10], [0] if lo == 50 else None) for lo in range(0, 100, 10)]
    rows = [fn() for fn in reversed(later)][::-1]
    expected = NgramHasher(small_spec, boundary="reset", backend="numpy")(ids, [50])
    assert np.array_equal(np.concatenate(rows), expected)


@pytest.mark.parametrize(
    ("algorithm", "reference"),
    [
        ("xxh3-128", lambda data: xxhash.xxh3_128(data).hexdigest()),
        ("sha256", lambda data: hashlib.sha256(data).hexdigest()),
    ],
)
def test_background_digest_equals_inline_digest_and_the_file(tmp_path, algorithm, reference):
    rng = np.random.default_rng(5)
    parts = [rng.integers(-(2**31), 2**31, (n, 2, 3)).astype(np.int32) for n in (0, 7, 4000, 1, 900)]
    digests = []
    for behind in (False, True):
        path = tmp_path / f"{behind}.npy"
        writer = NpyStreamWriter(path, np.dtype(np.int32), (2, 3), checksum=algorithm, digest_behind=behind)
        for part in parts:
            writer.append(part)
        writer.close()
        assert np.array_equal(np.load(writer.path), np.concatenate(parts))
        digests.append(writer.checksum)
    data = (tmp_path / "True.npy").read_bytes()[128:]
    assert digests[0] == digests[1] == reference(data)


def test_stage_clock_sums_thread_cpu_time_per_stage():
    clock = StageClock()

    def spin(seconds: float) -> int:
        end, n = time.thread_time() + seconds, 0
        while time.thread_time() < end:
            n += 1
        return n

    with ThreadPoolExecutor(2) as pool:
        assert all(pool.map(timed(clock, "busy", spin), [0.05, 0.05, 0.05]))
    assert timed(None, "busy", spin) is spin
    report = clock.report()
    assert 0.15 <= report["stage_cpu_seconds"]["busy"] < 1.0
    assert report["cpu_seconds"] >= 0.15 and report["wall_seconds"] > 0
    assert not [key for key in report if key.endswith("_busy_seconds")]  # no resource timed


def test_stage_clock_counts_the_wall_time_a_resource_was_busy():
    """busy() sums each call's wall time, sleeping included (a disk's write waits, using no CPU)."""
    clock = StageClock()
    began = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(busy(clock, "disk", time.sleep), [0.05, 0.05]))
    took = time.perf_counter() - began  # two threads: each call's wall time is within it
    report = clock.report()
    assert 0.1 <= report["disk_busy_seconds"] <= 2 * took
    assert report["stage_cpu_seconds"] == {}
    assert busy(None, "disk", time.sleep) is time.sleep


def test_a_hash_run_reports_where_its_cpu_time_went(tmp_path):
    from conftest import CORPUS

    text = tmp_path / "corpus8.txt"  # big enough that every stage takes milliseconds, not a rounded 0
    text.write_text(CORPUS.read_text(encoding="utf-8") * 8, encoding="utf-8")
    job = HashJob(CorpusReader((str(text),)), str(tmp_path / "x.ngidx"), NgramHashMapping.build(), workers=2)
    profile = run_hash_job(job).profile
    assert list(profile["stage_cpu_seconds"]) == ["tokenize", "canonicalize", "hash", "write", "xxh3-128"]
    assert all(seconds > 0 for seconds in profile["stage_cpu_seconds"].values())
    accounted = sum(profile["stage_cpu_seconds"].values()) + profile["other_cpu_seconds"]
    assert profile["cpu_seconds"] == pytest.approx(accounted, abs=0.01) or profile["other_cpu_seconds"] == 0
    assert 0 < profile["disk_busy_seconds"] <= profile["wall_seconds"]  # the rows' writes, timed


def test_a_job_that_fails_while_setting_up_leaves_no_threads_or_files(tmp_path):
    from conftest import CORPUS

    from ngramtool.util.errors import UsageError

    job = HashJob(
        CorpusReader((str(CORPUS),)),
        str(tmp_path / "out" / "x.ngidx"),
        NgramHashMapping.build("bytes", compress=False),
        outputs=OutputOptions(save_tokens=str(tmp_path / "ids.unknown")),
    )
    before = set(threading.enumerate())
    with pytest.raises(UsageError, match="`save_format`"):
        run_hash_job(job)
    assert not [t for t in set(threading.enumerate()) - before if t.name.startswith("ngramtool-")]
    assert not any((tmp_path / "out").glob("*"))  # nothing begun, not even the directory


def test_hash_threads_follow_the_tokenizer_threads():
    from ngramtool.run.jobs import MAX_HASH_THREADS, hash_threads

    assert [hash_threads(w, "numba") for w in (1, 2, 8, 9, 16, 64)] == [1, 1, 1, 2, 2, MAX_HASH_THREADS]
    assert [hash_threads(w, "numpy") for w in (1, 4, 5, 12)] == [1, 1, 2, 3]
    assert hash_threads(16, "torch") == MAX_HASH_THREADS  # one in hash_chunks: torch has its own threads


def test_hash_threads_follow_the_backend_the_job_resolved():
    from ngramtool.run.jobs import MAX_HASH_THREADS, hash_threads

    assert [hash_threads(w, "numba") for w in (2, 9, 16, 64)] == [1, 2, 2, MAX_HASH_THREADS]
    assert [hash_threads(w, "numpy") for w in (2, 9, 16)] == [1, 3, 4]
