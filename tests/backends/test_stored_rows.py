"""The numba kernel's machine code kept in the cache directory and run without numba
(:mod:`ngramtool.hashing.backends.stored_rows`): the same rows as numba's kernel and the numpy
backend on every modulo path, no numba import in a process that has kept code, code for another id
type or a damaged or wrong entry never used, and a cache that cannot be written is no error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba", reason="numba is not installed: pip install 'ngramtool[numba]'")
pytest.importorskip("llvmlite", reason="llvmlite comes with numba")

from ngramtool import HashSpec
from ngramtool.hashing.backends import BACKENDS, numba_backend, stored_rows
from ngramtool.hashing.backends.numpy_backend import make_kernel as numpy_kernel
from ngramtool.model.presets import preset
from ngramtool.util.errors import UsageError

SPECS = {
    "vector": (HashSpec(vocab_size=98_627), "mask", numba_backend.MODULO_VECTOR),
    "split": (HashSpec(heads=2, table_sizes=(16_000, 16_400), vocab_size=500, pad_id=0), "mask",
              numba_backend.MODULO_SPLIT),
    "reciprocal": (HashSpec(heads=2, table_sizes=(2**53, 2**53 + 2**20), vocab_size=70_000), "mask",
                   numba_backend.MODULO_RECIPROCAL),
    "exact": (HashSpec(vocab_size=98_627), "hash", numba_backend.MODULO_EXACT),
    "longcat": (HashSpec(family="longcat", heads=2, layer_ids=(0,), table_sizes=(5003, 5003),
                         vocab_size=50257, pad_id=0), "mask", None),
    "tutorial": (preset("tutorial").spec, "mask", None),
    "speedrun": (HashSpec(family="speedrun", max_ngram=3, heads=1, layer_ids=(0,), table_sizes=(200, 1000),
                          vocab_size=40, first_token="kept"), "mask", None),
}  # fmt: skip
"""Every modulo path of the Engram kernel, and each family of the per-column kernel (None)."""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache directory of the test's own, and no entry point loaded in this process yet."""
    monkeypatch.setenv("NGRAMTOOL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(stored_rows, "_LOADED", {})
    return tmp_path / "kernels"


def _stream(spec: HashSpec, dtype: type, tokens: int = 5000, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Ids of ``dtype`` (some masked where it is signed), a context and document starts."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, min(spec.id_bound, np.iinfo(dtype).max), tokens).astype(dtype)
    if np.iinfo(dtype).min < 0:
        ids[rng.integers(0, tokens, 20)] = -1
    context = np.array([spec.pad_id, *rng.integers(0, 400, spec.max_ngram - 2)], dtype=np.int64)
    return ids, context, np.array([0, 17, 2500], dtype=np.int64)


def _options(spec: HashSpec, negative_ids: str) -> stored_rows.Options:
    def reference():
        return numpy_kernel(spec, offsets=True, negative_ids=negative_ids, device="cpu")

    return stored_rows.Options(spec, True, negative_ids, reference)


def _compiled(spec: HashSpec, negative_ids: str):
    return lambda: numba_backend.make_kernel(spec, offsets=True, negative_ids=negative_ids, device="cpu")


def _keep(spec: HashSpec, negative_ids: str, dtype: type) -> bool:
    """Compile and keep the entry point, as a hash run does after it hashed."""
    numba_rows = _compiled(spec, negative_ids)()
    code = lambda: numba_backend.machine_code(numba_rows, np.dtype(dtype))  # noqa: E731
    return stored_rows.keep(_options(spec, negative_ids), np.dtype(dtype), code)


def _hashes_with_numba(spec: HashSpec, negative_ids: str, dtype: type = np.int32) -> None:
    """A fresh evaluator of ``spec`` hashes ids of ``dtype`` with numba, and its rows are numpy's."""
    stored_rows._LOADED.clear()
    kernel = stored_rows.make_kernel(_options(spec, negative_ids), _compiled(spec, negative_ids))
    ids, context, resets = _stream(spec, dtype)
    rows = kernel.rows(ids, context, resets)
    assert kernel._numba is not None
    reference = numpy_kernel(spec, offsets=True, negative_ids=negative_ids, device="cpu")
    assert np.array_equal(rows, reference.rows(ids, context, resets))


@pytest.mark.parametrize("path", SPECS)
def test_kept_code_gives_numbas_rows_on_every_path_and_family(cache, path):
    spec, negative_ids, modulo = SPECS[path]
    numba_rows = _compiled(spec, negative_ids)()
    assert modulo is None or numba_rows.generic[3] == modulo
    dtype = np.int64 if path == "exact" else np.int32
    assert _keep(spec, negative_ids, dtype)
    compile_again = pytest.fail  # a kept entry is not compiled again
    assert not stored_rows.keep(_options(spec, negative_ids), np.dtype(dtype), compile_again)

    kernel = stored_rows.make_kernel(_options(spec, negative_ids), _compiled(spec, negative_ids))
    ids, context, resets = _stream(spec, dtype)
    rows = kernel.rows(ids, context, resets)
    assert kernel._numba is None  # the kept code hashed, not numba
    numba_rows.hashed = numba_backend.SPECIALIZE_TOKENS
    assert np.array_equal(rows, numba_rows.rows(ids, context, resets))
    reference = numpy_kernel(spec, offsets=True, negative_ids=negative_ids, device="cpu")
    assert np.array_equal(rows, reference.rows(ids, context, resets))


def test_code_that_refers_to_more_of_numba_is_declined_once(cache):
    """Code that would call numba's exception machinery is not kept; its entry says why, so the
    next run does not compile it again, and numba hashes."""
    spec, negative_ids, _ = SPECS["vector"]
    code = stored_rows.MachineCode(b"\x7fELF", "rows", ("PyErr_Clear", "numba_do_raise"))
    assert not stored_rows.keep(_options(spec, negative_ids), np.dtype(np.int32), lambda: code)
    (entry,) = cache.iterdir()
    header = json.loads(entry.read_bytes().partition(b"\n")[0])
    assert header["declined"] == "the code refers to numba's runtime: numba_do_raise"
    assert not stored_rows.keep(_options(spec, negative_ids), np.dtype(np.int32), pytest.fail)
    _hashes_with_numba(spec, negative_ids)
    assert entry.exists()


def test_ids_of_a_type_without_kept_code_hash_with_numba(cache):
    spec, negative_ids, _ = SPECS["vector"]
    _keep(spec, negative_ids, np.int32)
    _hashes_with_numba(spec, negative_ids, np.uint16)


def test_a_process_with_kept_code_does_not_import_numba(cache):
    spec, negative_ids, _ = SPECS["vector"]
    _keep(spec, negative_ids, np.int32)
    ids, context, resets = _stream(spec, np.int32)
    expected = numpy_kernel(spec, offsets=True, negative_ids=negative_ids, device="cpu").rows(
        ids, context, resets
    )
    np.savez(cache.parent / "stream.npz", ids=ids, context=context, resets=resets)
    script = f"""
import sys, numpy as np
from ngramtool import HashSpec
from ngramtool.hashing.backends import BACKENDS
data = np.load({str(cache.parent / "stream.npz")!r})
spec = HashSpec(vocab_size=98_627)
kernel = BACKENDS["numba"].kernel(spec, offsets=True, negative_ids="mask", device="cpu")
rows = kernel.rows(data["ids"], data["context"], data["resets"])
np.save({str(cache.parent / "rows.npy")!r}, rows)
print("numba" in sys.modules)
"""
    env = {**os.environ, "NGRAMTOOL_CACHE_DIR": str(cache.parent)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    assert np.array_equal(np.load(cache.parent / "rows.npy"), expected)


def _entry(cache: Path) -> Path:
    (entry,) = cache.iterdir()
    return entry


def _damage_code(entry: Path) -> None:
    data = bytearray(entry.read_bytes())
    data[-100] ^= 0xFF
    entry.write_bytes(bytes(data))


def _edit_header(change):
    def damage(entry: Path) -> None:
        header_line, _, code = entry.read_bytes().partition(b"\n")
        entry.write_bytes(json.dumps(change(json.loads(header_line))).encode() + b"\n" + code)

    return damage


DAMAGES = {
    "a code byte": _damage_code,
    "a header that is not an object": _edit_header(lambda header: [1, 2]),
    "a symbol that is not text": _edit_header(lambda header: {**header, "symbol": 5}),
    "externals left out": _edit_header(lambda header: {**header, "externals": []}),
    "a truncated file": lambda entry: entry.write_bytes(entry.read_bytes()[:500]),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_entry_is_removed_and_numba_hashes(cache, damage):
    """The digest covers the key, symbol, externals and code: no damaged entry is linked."""
    spec, negative_ids, _ = SPECS["vector"]
    _keep(spec, negative_ids, np.int32)
    entry = _entry(cache)
    DAMAGES[damage](entry)
    assert stored_rows.load(_options(spec, negative_ids), np.dtype(np.int32)) is None
    assert not entry.exists()
    _hashes_with_numba(spec, negative_ids)


def test_code_that_gives_other_rows_fails_its_canary_and_is_declined(cache):
    """Code for another spec, filed under this spec's key with a whole header and digest, is
    caught by the canary rows and recorded as declined (not compiled again); numba hashes."""
    spec, negative_ids, _ = SPECS["vector"]
    other = HashSpec(vocab_size=98_627, seed=1)
    _keep(other, negative_ids, np.int32)
    header_line, _, code = _entry(cache).read_bytes().partition(b"\n")
    header = json.loads(header_line)
    key = _options(spec, negative_ids).key(np.dtype(np.int32))
    digest = stored_rows._digest(key, header["symbol"], header["externals"], code)
    forged = stored_rows._entry_path(key)
    forged.write_bytes(json.dumps({**header, "key": key, "sha256": digest}).encode() + b"\n" + code)

    kernel = BACKENDS["numba"].kernel(spec, offsets=True, negative_ids=negative_ids, device="cpu")
    ids, context, resets = _stream(spec, np.int32)
    rows = kernel.rows(ids, context, resets)
    declined = json.loads(forged.read_bytes().partition(b"\n")[0])
    assert declined["declined"] == "its canary rows differed from the numpy backend's"
    assert not stored_rows.keep(_options(spec, negative_ids), np.dtype(np.int32), pytest.fail)
    reference = numpy_kernel(spec, offsets=True, negative_ids=negative_ids, device="cpu")
    assert np.array_equal(rows, reference.rows(ids, context, resets))


def test_a_bad_entry_in_a_read_only_cache_is_left_and_numba_hashes(cache, monkeypatch):
    spec, negative_ids, _ = SPECS["vector"]
    _keep(spec, negative_ids, np.int32)
    _damage_code(_entry(cache))

    def refuse(self, missing_ok=False):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(Path, "unlink", refuse)
    _hashes_with_numba(spec, negative_ids)


def test_a_cache_that_cannot_be_written_keeps_nothing(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("NGRAMTOOL_CACHE_DIR", str(blocker))
    spec, negative_ids, _ = SPECS["vector"]
    compiled = []

    def compile_code():
        compiled.append(True)
        return numba_backend.machine_code(_compiled(spec, negative_ids)(), np.dtype(np.int32))

    assert not stored_rows.keep(_options(spec, negative_ids), np.dtype(np.int32), compile_code)
    assert compiled and blocker.read_text() == "not a directory"


def test_without_a_cache_directory_nothing_is_kept_and_numba_hashes(monkeypatch):
    """No NGRAMTOOL_CACHE_DIR and no home directory (a container run as an arbitrary user id)."""
    monkeypatch.delenv("NGRAMTOOL_CACHE_DIR")
    monkeypatch.setattr(Path, "home", lambda: (_ for _ in ()).throw(RuntimeError("no home directory")))
    spec, negative_ids, _ = SPECS["vector"]
    assert not stored_rows.keep(_options(spec, negative_ids), np.dtype(np.int32), pytest.fail)
    _hashes_with_numba(spec, negative_ids)


def test_rows_into_an_out_of_another_type_or_read_only(cache):
    """The kept code writes the spec's row type: another type gets the rows cast, as numba's
    kernel gives them, and read-only memory is refused, not written."""
    spec, negative_ids, _ = SPECS["vector"]
    _keep(spec, negative_ids, np.int32)
    kernel = stored_rows.make_kernel(_options(spec, negative_ids), _compiled(spec, negative_ids))
    ids, context, resets = _stream(spec, np.int32)
    numpy_rows = numpy_kernel(spec, offsets=True, negative_ids=negative_ids, device="cpu")
    expected = numpy_rows.rows(ids, context, resets)
    wide = np.zeros(expected.shape, np.int64)
    assert kernel.rows(ids, context, resets, out=wide) is wide
    assert np.array_equal(wide, expected) and kernel._numba is None
    read_only = np.zeros(expected.shape, spec.row_dtype)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kernel.rows(ids, context, resets, out=read_only)
    assert not read_only.any()


def test_a_broken_numba_is_worded_only_where_no_code_is_kept(cache, monkeypatch):
    spec, negative_ids, _ = SPECS["vector"]
    _keep(spec, negative_ids, np.int32)
    monkeypatch.setattr("ngramtool.hashing.backends._import_error", lambda package: "Numba needs NumPy 2.2")
    kernel = BACKENDS["numba"].kernel(spec, offsets=True, negative_ids=negative_ids, device="cpu")
    assert kernel.rows(*_stream(spec, np.int32)).shape == (5000, spec.num_layers, spec.num_columns)
    with pytest.raises(UsageError, match="numba is installed but does not import"):
        kernel.rows(*_stream(spec, np.int64))


def test_a_hash_run_keeps_the_code_and_the_next_run_does_not_import_numba(cache, tmp_path):
    text = tmp_path / "corpus.txt"
    text.write_text("The quick brown fox jumps over the lazy dog.\n" * 200, encoding="utf-8")
    script = """
import sys
from ngramtool.cli.app import main
sys.argv = ["ngramtool", "hash", sys.argv[1], "-o", sys.argv[2], "--backend", "numba", "--force", "-q"]
try:
    main()
except SystemExit as stop:
    assert not stop.code, stop.code
print("numba" in sys.modules)
"""
    env = {**os.environ, "NGRAMTOOL_CACHE_DIR": str(cache.parent)}

    def run(out: str) -> str:
        command = [sys.executable, "-c", script, str(text), str(tmp_path / out)]
        return subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout.strip()

    assert run("first.ngidx") == "True"
    assert len(list(cache.iterdir())) == 1
    assert run("second.ngidx") == "False"
    first = np.load(tmp_path / "first.ngidx" / "rows.npy")
    assert np.array_equal(first, np.load(tmp_path / "second.ngidx" / "rows.npy"))
