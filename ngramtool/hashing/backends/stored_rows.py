"""The numba backend's kernels run from machine code kept on disk, without importing numba.

A process that hashes with numba spends about 0.34 s of the GIL on numba itself before its first
rows: 0.21 s to import it, 0.13 s for its first call to fill its typing and lowering registries,
although the kernel comes from numba's disk cache. The compiled kernel needs neither. So, once a
run has hashed with a spec, :func:`keep` has numba compile an entry point with the spec's
constants in it (:func:`ngramtool.hashing.backends.numba_backend.machine_code`, a C function of
the signature :data:`ENTRY`) and keeps its machine code in ``$NGRAMTOOL_CACHE_DIR/kernels``
(0.6 s, once). A later process loads that code with llvmlite alone (0.03 s, llvmlite is numba's
compiler and installed with it) and calls it through ctypes, which releases the GIL: the rows are
the compiled kernel's, at its speed, and numba is imported only for what has no kept code.

An entry is keyed by everything its code depends on: the spec (all of it), the options, the id and
row types, the kernel's source files, numba's and llvmlite's installed files (path, size,
modification time) and the CPU (LLVM's name and features of the host). Before its first use in a
process it is checked: its header must hold the whole key, fields of the right types and the
digest of its key, symbol, externals and code; every symbol the code calls must resolve; and
canary rows (masked ids, document starts, a context) must equal the numpy backend's. One that
fails is removed (where its canary rows differed, recorded as declined instead), and numba runs,
with the same results. A cache that cannot be written or has no directory keeps nothing.

The code refers to numba's runtime only where a kernel raises, which the row kernels never do
(inlined into the entry point, so that LLVM sees it): those symbols (:data:`RUNTIME_STUBS`)
resolve, where numba is not loaded, to a function that says so and ends the process. Code that
refers to more of numba (a numba that compiles it otherwise) is not kept; its entry records why,
so that later runs do not compile it again. The digest guards against damage, not against
someone who can write the cache directory, who can run code as its owner anyway.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import importlib.util
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...spec.hashspec import HashSpec
from ...util.atomic import cache_path, store_cached
from .filling import FillingRows
from .filling import scratch as kernel_scratch

FORMAT = "ngramtool-kernel-v1"
ENTRY = (
    "void rows(const ID *ids, int64 count, const int64 *context, const int64 *resets, int64 resets_count, "
    "ROW *out, void *scratch, void *more_scratch)"
)
"""The kept entry point: the rows of ``count`` ids (ID: the canonical ids' type) after
``context`` [N-1], documents starting at ``resets``, into ``out`` [count, L*C] (ROW: the spec's
row type); ``scratch`` (8 L N bytes) and ``more_scratch`` (8 L C bytes) are the kernel's scratch
space."""
RUNTIME_STUBS = ("numba_gil_ensure", "numba_gil_release", "NRT_MemInfo_call_dtor")
"""numba's runtime functions an entry point refers to on paths that only an exception takes."""
SOURCES = ("numba_backend.py", "vector_modulo.py", "stored_rows.py", "../../util/jit.py")
"""The files the kept code is compiled from, beside this module."""
CANARY_TOKENS = 300

_C_ENTRY = ctypes.CFUNCTYPE(
    None, *(ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64),
    *(ctypes.c_void_p,) * 3,
)  # fmt: skip
_LOCK = threading.Lock()
_LOADED: dict[str, Any] = {}  # key -> the entry point (None: none kept, or it failed a check)
_KEEP_ALIVE: list[Any] = []  # the llvmlite engines the loaded code lives in


@dataclass(frozen=True)
class MachineCode:
    """A compiled entry point: an object file, the symbol of :data:`ENTRY` in it, and the
    external symbols it refers to."""

    code: bytes
    symbol: str
    externals: tuple[str, ...]


@dataclass(frozen=True)
class Options:
    """What a kept entry point is compiled for besides the ids' type."""

    spec: HashSpec
    offsets: bool
    negative_ids: str
    reference: Callable[[], Any] = field(compare=False, repr=False)
    """Makes the numpy backend's evaluator for the same spec and options: the canary's rows."""

    def key(self, id_dtype: np.dtype) -> str | None:
        """The entry's whole key, or None where it cannot be formed (no llvmlite, numba's files
        unreadable)."""
        numba_files = _numba_files()
        host = _host()
        if numba_files is None or host is None:
            return None
        what = [self.spec.to_json(), self.offsets, self.negative_ids, np.dtype(id_dtype).str]
        return json.dumps([FORMAT, *what, self.spec.row_dtype.str, _sources(), numba_files, host])


def make_kernel(options: Options, compiled: Callable[[], Any]) -> Any:
    """The numba backend's evaluator: :class:`StoredRows` where llvmlite is installed, else
    ``compiled()`` (numba's kernel)."""
    if importlib.util.find_spec("llvmlite") is None:
        return compiled()
    return StoredRows(options, compiled)


class StoredRows(FillingRows):
    """Rows with the kept entry point for the chunk's id type where there is one, else with
    numba's kernel (``compiled()``, made on first need)."""

    def __init__(self, options: Options, compiled: Callable[[], Any]) -> None:
        self.options = options
        self.spec = options.spec
        self._compiled = compiled
        self._numba: Any = None
        self._entries: dict[str, Any] = {}

    def _fill(self, ids: np.ndarray, context: np.ndarray, resets: np.ndarray, flat_out: np.ndarray) -> None:
        """Hash the chunk into ``flat_out`` [T, L*C], C-contiguous."""
        dtype = np.dtype(ids.dtype)
        entry = self._entries.get(dtype.str, False)
        if entry is False:
            entry = self._entries[dtype.str] = load(self.options, dtype)
        if entry is None:
            if self._numba is None:
                self._numba = self._compiled()
            self._numba._fill(ids, context, resets, flat_out)
            return
        _call(entry, self.spec, np.ascontiguousarray(ids), context, resets, flat_out)


def _call(
    entry: Any, spec: HashSpec, ids: np.ndarray, context: np.ndarray, resets: np.ndarray, out: np.ndarray
) -> None:
    """Rows of ``ids`` into ``out`` [T, L*C] with a loaded entry point."""
    context = np.ascontiguousarray(context, dtype=np.int64)
    resets = np.ascontiguousarray(resets, dtype=np.int64)
    scratch, more_scratch = kernel_scratch(spec)
    entry(ids.ctypes.data, ids.shape[0], context.ctypes.data, resets.ctypes.data, resets.shape[0],
          out.ctypes.data, scratch.ctypes.data, more_scratch.ctypes.data)  # fmt: skip


def keep(options: Options, id_dtype: np.dtype, compile_code: Callable[[], MachineCode | None]) -> bool:
    """Keep the entry point's code for ``options`` and ids of ``id_dtype`` (``compile_code()``:
    :func:`ngramtool.hashing.backends.numba_backend.machine_code`), unless an entry is kept for them
    already; True when code is kept now. A cache that cannot be written, or a numba that does not
    give the code, keeps nothing and is not an error."""
    key = options.key(id_dtype)
    path = _entry_path(key)
    if key is None or path is None or path.exists():
        return False
    code = compile_code()
    if code is None:
        return False
    unresolved = sorted(set(code.externals) - _resolvable(code.externals))
    if unresolved:  # recorded as declined, so that later runs do not compile it again
        _decline(path, key, f"the code refers to numba's runtime: {', '.join(unresolved)}")
        return False
    header = {"format": FORMAT, "key": key, "symbol": code.symbol, "externals": list(code.externals),
              "sha256": _digest(key, code.symbol, list(code.externals), code.code)}  # fmt: skip
    return _write_entry(path, header, code.code)


def _decline(path: Path, key: str, why: str) -> bool:
    """Record at ``path`` that no code is kept for ``key``, and why; False where it cannot."""
    return _write_entry(path, {"format": FORMAT, "key": key, "declined": why}, b"")


def _write_entry(path: Path, header: dict[str, Any], body: bytes) -> bool:
    return store_cached(path, lambda tmp: tmp.write_bytes(json.dumps(header).encode() + b"\n" + body))


def _digest(key: str, symbol: str, externals: list[str], code: bytes) -> str:
    """What an entry's ``sha256`` holds: a digest of its key, symbol, externals and code."""
    return hashlib.sha256(json.dumps([FORMAT, key, symbol, externals]).encode() + b"\0" + code).hexdigest()


def load(options: Options, id_dtype: np.dtype) -> Any:
    """The kept entry point for ``options`` and ids of ``id_dtype``, checked (module docstring),
    or None: none is kept, or it failed a check (then it is removed, or, where its canary rows
    differed, recorded as declined)."""
    key = options.key(id_dtype)
    if key is None:
        return None
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = _load_checked(options, np.dtype(id_dtype), key)
        return _LOADED[key]


def _load_checked(options: Options, id_dtype: np.dtype, key: str) -> Any:
    path = _entry_path(key)
    if path is None:
        return None
    try:
        header_line, _, code = path.read_bytes().partition(b"\n")
    except OSError:
        return None
    header = _header(header_line, key)
    if header is not None and "declined" in header:
        return None
    entry = None
    if header is not None and header["sha256"] == _digest(key, header["symbol"], header["externals"], code):
        try:
            entry = _link(code, header["symbol"], header["externals"])
        except Exception:  # llvmlite refused the object: treated as damaged
            entry = None
    if entry is None:
        with contextlib.suppress(OSError):  # a read-only cache: numba runs, as for no entry
            path.unlink(missing_ok=True)
        return None
    if not _canary_holds(entry, options, id_dtype):
        _decline(path, key, "its canary rows differed from the numpy backend's")
        return None
    return entry


def _header(line: bytes, key: str) -> dict[str, Any] | None:
    """An entry's header for ``key``, with fields of the right types, or None."""
    try:
        header = json.loads(line)
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("key") != key:
        return None
    if isinstance(header.get("declined"), str):
        return header
    symbol, externals, digest = header.get("symbol"), header.get("externals"), header.get("sha256")
    fields = isinstance(symbol, str) and isinstance(digest, str) and isinstance(externals, list)
    return header if fields and all(isinstance(name, str) for name in externals) else None


def _link(code: bytes, symbol: str, externals: list[str]) -> Any:
    """The entry point ``symbol`` of the object ``code``, linked into this process by llvmlite."""
    import llvmlite.binding as llvm

    if not set(externals) <= _resolvable(externals):
        return None
    for name in externals:
        if name in RUNTIME_STUBS and llvm.address_of_symbol(name) is None:
            llvm.add_symbol(name, ctypes.cast(_stub(), ctypes.c_void_p).value)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _target_machine())
    engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    address = engine.get_function_address(symbol)
    if not address:
        return None
    _KEEP_ALIVE.append(engine)
    return _C_ENTRY(address)


def _resolvable(externals: tuple[str, ...] | list[str]) -> set[str]:
    """Those of ``externals`` this process resolves (Python's C API), and numba's runtime stubs."""
    try:
        process = ctypes.CDLL(None)
    except (OSError, TypeError):  # no handle on the process's own symbols (Windows): keep nothing
        return set()
    return {name for name in externals if name in RUNTIME_STUBS or hasattr(process, name)}


def _canary_holds(entry: Any, options: Options, id_dtype: np.dtype) -> bool:
    """Whether ``entry``'s rows of a canary chunk equal the numpy backend's."""
    spec = options.spec
    rng = np.random.default_rng(20261205)
    top = min(spec.id_bound, int(np.iinfo(id_dtype).max) + 1)
    ids = rng.integers(0, top, CANARY_TOKENS).astype(id_dtype)
    if np.iinfo(id_dtype).min < 0:
        ids[[7, 8, 150]] = -1
    context = np.array([spec.pad_id, *rng.integers(0, top, spec.max_ngram - 2)], dtype=np.int64)
    resets = np.array([100, 200], dtype=np.int64)
    width = spec.num_layers * spec.num_columns
    rows = np.empty((CANARY_TOKENS, width), spec.row_dtype)
    _call(entry, spec, ids, context, resets, rows)
    reference = options.reference().rows(ids, context, resets)
    return bool(np.array_equal(rows, reference.reshape(CANARY_TOKENS, width)))


@functools.cache
def _stub() -> Any:
    """The C function :data:`RUNTIME_STUBS` resolve to where numba is not loaded: reached only if
    the kept code reported an error, which the row kernels cannot, it says so and ends the
    process (kept alive by the cache)."""

    def unreachable(_state: int | None) -> None:
        message = (
            "ngramtool: kept kernel code reported an error; remove the cache directory's kernels folder\n"
        )
        os.write(2, message.encode())
        os._exit(1)

    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(unreachable)


@functools.cache
def _target_machine() -> Any:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm.Target.from_default_triple().create_target_machine()


@functools.cache
def _host() -> list[str] | None:
    """The process's triple, and the host CPU's name and features as LLVM (numba's target) sees them."""
    try:
        import llvmlite.binding as llvm

        _target_machine()
        return [llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()]
    except Exception:  # a broken llvmlite raises anything (ImportError, OSError, RuntimeError)
        return None


@functools.cache
def _numba_files() -> list[object] | None:
    """numba's and llvmlite's installed files (each package's path, size and modification time)."""
    files: list[object] = []
    for package in ("numba", "llvmlite"):
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            return None
        try:
            stat = Path(spec.origin).stat()
        except OSError:
            return None
        files += [spec.origin, stat.st_size, stat.st_mtime_ns]
    return files


@functools.cache
def _sources() -> str:
    """A digest of :data:`SOURCES`."""
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()


def _entry_path(key: str | None) -> Path | None:
    """Where the entry of ``key`` is kept; None without a key or a cache directory."""
    if key is None:
        return None
    return cache_path("kernels", f"rows-{hashlib.sha256(key.encode()).hexdigest()[:32]}")
