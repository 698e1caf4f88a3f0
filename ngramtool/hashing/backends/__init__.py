"""Hashing backends: interchangeable implementations of the Engram rows, all bit-identical.

A backend only evaluates chunks: its kernel maps (the ids of one chunk, the N-1 ids carried
from the previous chunk, the positions where a document starts) to rows ``[T, L, C]``.
:class:`ngramtool.hashing.hasher.NgramHasher` keeps everything else (validation, the carried context,
input and output kinds), so streaming semantics are the same whatever computes the rows.

==========  ==========  ==============================================================
backend     devices     implementation
==========  ==========  ==============================================================
``numba``   cpu         one loop compiled by LLVM, vectorized across a token's columns; a
                        modulo by a biased float reciprocal, no division (``numba`` extra)
``numpy``   cpu         a cache-blocked uint64 kernel, one thread (numpy_backend.py)
``torch``   cpu, cuda   blocks of int64 tensor ops; torch's intra-op threads on the CPU
``triton``  cuda        one ``@triton.jit`` launch per chunk; on the CPU only under
                        ``TRITON_INTERPRET=1`` (tests)
==========  ==========  ==============================================================

``auto`` takes the first available backend of :data:`AUTO_ORDER` for the device, fastest
first as measured (docs/performance.md); it never picks the Triton interpreter. Told the input's
size, it takes numpy on the CPU for an input below :data:`SMALL_INPUT_BYTES`, where loading
numba and its compiled kernel (0.7 s) costs more than numpy's slower kernel saves. A backend whose
package is installed but does not import (numba built for another NumPy) is passed over with one
:class:`FallbackWarning` per process that names the cause; asked for by name, it is a usage error
that names it. A package is imported once, when a backend that needs it is chosen; one that
imported before with the same installed files is remembered (:func:`import_failure`) and imported
when the backend first hashes.

For a command line: :func:`choose_backend` turns ``--backend``/``--device`` into a
:class:`BackendChoice` (a usage error names what is missing and how to fix it), whose
:meth:`~BackendChoice.describe` is the line to print with ``--verbose``; pass its ``name`` and
``device`` to :class:`~ngramtool.hashing.hasher.NgramHasher` or :func:`~ngramtool.hashing.hasher.hash_ngrams`.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from ...util import passes
from ...util.errors import UsageError
from ...util.installed import import_key

if TYPE_CHECKING:
    from ...spec.hashspec import HashSpec

NAMES = ("numpy", "numba", "torch", "triton")
MASKED_ROW = -1  # the row of a masked token, in every column
# What a negative id is: a masked token whose rows are -1 (TileKernels), a DEAD token that cuts every
# window reaching it (DeepSeek-V4.1's reference, barrier.py), or an id hashed as the Engram demo does.
NegativeIds = Literal["mask", "barrier", "hash"]
NEGATIVE_IDS: tuple[NegativeIds, ...] = ("mask", "barrier", "hash")
MASKED_CONVENTIONS: dict[str, NegativeIds] = {"barrier": "barrier", "minus-one": "mask"}
"""The masking conventions by the names commands give them (``--masked``), and their ``negative_ids``."""


def check_negative_ids(value: str) -> NegativeIds:
    """``value`` when it is one of :data:`NEGATIVE_IDS`; else a usage error naming them."""
    if value not in NEGATIVE_IDS:
        raise UsageError(f"`negative_ids` must be 'mask', 'barrier' or 'hash' (got {value!r})")
    return value  # type: ignore[return-value]


CHOICES = ("auto", *NAMES)
# Fastest first, per device type (docs/performance.md). On the CPU the compiled numba kernel beats
# the numpy kernel, which beats torch's int64 remainder; on a GPU the Triton kernel's
# division-free modulo beats torch.
AUTO_ORDER = {"cpu": ("numba", "numpy", "torch"), "cuda": ("triton", "torch")}
DEVICE_TYPES = tuple(AUTO_ORDER)
SMALL_INPUT_BYTES = 4 << 20
"""Below this many input bytes (about a million tokens) ``auto`` hashes with numpy on the CPU:
numba's import and kernel load (0.7 s) exceed numpy's extra 0.33 us per token there
(docs/performance.md)."""


class FallbackWarning(UserWarning):
    """A faster implementation is installed but does not import: a slower one with the same
    results runs instead (the message names the cause and the fix). The command line shows it
    as one ``warning:`` line."""


@functools.cache
def import_failure(package: str) -> str | None:
    """Why the installed ``package`` does not import (the first line of the error its import
    raised), or None: it imports, or it is not installed.

    The import is tried once per process, and not at all where it passed before with the same
    installed files (:func:`ngramtool.util.installed.import_key`, remembered by
    :mod:`ngramtool.util.passes`): whatever uses the package imports it then, off the critical
    path (a hash run's kernel loads on a thread while the tokenizer engine builds), and
    :meth:`Backend.kernel` words a failure there as this function would have.
    """
    if importlib.util.find_spec(package) is None:
        return None
    key = import_key(package)
    if key is not None and passes.passed("imports", package, key):
        return None
    why = _import_error(package)
    if why is None and key is not None:
        passes.remember("imports", package, key)
    return why


def _import_error(package: str) -> str | None:
    """The first line of the error importing ``package`` raises, or None when it imports."""
    try:
        importlib.import_module(package)
    except Exception as error:  # a broken install raises anything: ImportError, AttributeError, OSError
        lines = str(error).strip().splitlines()
        return lines[0].rstrip(".") if lines else type(error).__name__
    return None


def broken_line(package: str, why: str) -> str:
    """``numba is installed but does not import (CAUSE)``."""
    return f"{package} is installed but does not import ({why})"


_WARNED: set[str] = set()


def warn_fallback(package: str, why: str, fallback: str) -> None:
    """The :class:`FallbackWarning` that ``fallback`` runs instead of what needs ``package``: once
    per package and process."""
    _warn_once(
        package,
        f"{broken_line(package, why)}: using {fallback} instead (the same results, slower); "
        f"pip install -U {package}",
    )


def warn_not_installed(package: str, fallback: str, extra: str) -> None:
    """The :class:`FallbackWarning` that ``package`` is not installed, so ``fallback`` (what runs
    instead, and how much slower), with the extra that brings it; once per package and process."""
    _warn_once(
        package,
        f"{package} is not installed: {fallback} (the same results): pip install 'ngramtool[{extra}]'",
    )


def _warn_once(package: str, message: str) -> None:
    """``message`` as a :class:`FallbackWarning` for the caller of the ``warn_*`` function,
    unless one was given for ``package`` already in this process."""
    if package not in _WARNED:
        _WARNED.add(package)
        warnings.warn(message, FallbackWarning, stacklevel=3)


def small_input(input_bytes: int | None) -> bool:
    """Whether an input of ``input_bytes`` (None: unknown, stdin) is below
    :data:`SMALL_INPUT_BYTES`: there numpy's kernels finish before numba would have loaded.

    >>> from ngramtool.hashing.backends import small_input
    >>> small_input(1_000), small_input(100 << 20), small_input(None)
    (True, False, False)
    """
    return input_bytes is not None and input_bytes < SMALL_INPUT_BYTES


def use_numba(compiled: bool | None, what: str, *, slow_without: str | None = None) -> bool:
    """Whether ``what`` (a pass with compiled kernels) runs them: ``compiled`` None when numba
    imports (a :class:`FallbackWarning` when it is installed but does not, and, given
    ``slow_without`` (what runs instead, e.g. ``the row-cache pass runs in numpy, several times
    slower``), when it is not installed), True always (else a usage error that says what to
    install), False never (numba is not imported).

    >>> from ngramtool.hashing.backends import use_numba
    >>> use_numba(False, "counting with compiled kernels")
    False
    """
    if compiled is False:
        return False
    if importlib.util.find_spec("numba") is None:
        if compiled:
            raise UsageError(f"{what} needs numba: pip install 'ngramtool[numba]'")
        if slow_without is not None:
            warn_not_installed("numba", slow_without, "numba")
        return False
    why = import_failure("numba")
    if why is not None:
        if compiled:
            raise UsageError(f"{what} needs numba, but {broken_line('numba', why)}: pip install -U numba")
        warn_fallback("numba", why, "numpy")
        return False
    return True


class RowsKernel(Protocol):
    """A backend's evaluator for one spec, option set and device."""

    tensors: bool
    """True: :meth:`rows` takes and returns torch tensors on ``device``; False: numpy arrays."""
    device: str
    # Optional ``fills = True``: ``rows`` takes ``out=``, a numpy array [T, L, C] of the row dtype,
    # computes into it and returns it (numba, numpy); the hasher copies other kernels' rows.

    def rows(self, ids: Any, context: np.ndarray, resets: np.ndarray) -> Any:
        """Rows ``[T, L, C]`` of ``spec.row_dtype`` for one chunk.

        Args:
            ids: the chunk's T ids, each below V'; negative ids are masked tokens (or, with
                ``negative_ids="hash"``, hashed as they are).
            context: int64 [N-1], the ids before the chunk (negative ones as in ``ids``), with
                pads in place of anything before the current document.
            resets: sorted distinct positions in [0, T) where a document starts: windows of
                later tokens see the pad id before them. Empty for boundary ``none``.
        """
        ...


@dataclass(frozen=True)
class Backend:
    """A registry entry; the implementation module is imported only when the backend is used."""

    name: str
    module: str
    requires: tuple[str, ...]
    extra: str
    threadsafe: bool = False
    """Its kernels release the GIL and keep no state between chunks: chunks may hash on several
    threads at once (``ngramtool.run.pipeline.hash_chunks``). Others parallelize inside a chunk."""
    cpu_only: bool = False
    """It runs on the CPU whenever its packages import: choosing it checks that they do (numba:
    0.2 s to import, once per machine and installation, then remembered), not its implementation
    module, whose kernels load when it first hashes."""
    kept: bool = False
    """Its compiled kernels' machine code is kept in the cache directory and run from there
    without importing its packages (:mod:`ngramtool.hashing.backends.stored_rows`)."""

    def _impl(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module}")

    def missing_packages(self) -> list[str]:
        """The packages this backend needs that are not installed."""
        return [name for name in self.requires if importlib.util.find_spec(name) is None]

    def broken_packages(self) -> dict[str, str]:
        """The installed packages this backend needs that do not import, with why
        (:func:`import_failure`: each is imported once per process)."""
        return {name: why for name in self.requires if (why := import_failure(name)) is not None}

    def devices(self) -> tuple[str, ...]:
        """Device types (``cpu``, ``cuda``) it can run on in this process, usable first."""
        if self.missing_packages() or self.broken_packages():
            return ()
        return ("cpu",) if self.cpu_only else self._impl().devices()

    def available(self, device: str | None = None) -> bool:
        """Whether it can run at all (``device=None``) or on ``device``."""
        devices = self.devices()
        return bool(devices) if device is None else device_type(device) in devices

    def unavailable_reason(self, device: str) -> str:
        """One line: why it cannot run on ``device``, and how to fix that."""
        missing = self.missing_packages()
        if missing:
            return (
                f"the {self.name} backend needs {' and '.join(missing)}, which is not installed: "
                f"pip install 'ngramtool[{self.extra}]'"
            )
        broken = self.broken_packages()
        if broken:
            return self._broken_reason(broken)
        return self._impl().unavailable_reason(device_type(device))

    def _broken_reason(self, broken: dict[str, str]) -> str:
        causes = "; ".join(broken_line(name, why) for name, why in broken.items())
        return f"the {self.name} backend cannot run: {causes}: pip install -U {' '.join(broken)}"

    def kernel(self, spec: HashSpec, *, offsets: bool, negative_ids: str, device: str) -> RowsKernel:
        """The evaluator of ``spec`` on ``device`` (constants moved there once); ``barrier`` is the
        backend's masking kernel wrapped (:class:`ngramtool.hashing.backends.barrier.BarrierRows`), as is
        every kernel of a spec with segments (:attr:`HashSpec.segment_stop`: Qwen3.8's EOS fill,
        LongCat's stop token)."""
        if negative_ids == "hash" and spec.family != "engram":
            raise UsageError(
                f"negative ids hashed as they are is the Engram demo's rule, not family {spec.family!r}'s: "
                "mark ignored tokens with negative_ids='barrier' (LongCat's rule) or 'mask'"
            )
        inner_ids = _inner_negative_ids(negative_ids)
        kernel = self._kernel(spec, offsets=offsets, negative_ids=inner_ids, device=device)
        if negative_ids != "barrier" and spec.segment_stop is None:
            return kernel
        barrier = importlib.import_module(f"{__name__}.barrier")
        if negative_ids == "barrier":
            kernel = barrier.BarrierRows(kernel, spec, offsets=offsets)
        if spec.segment_stop is not None:
            kernel = barrier.BarrierRows(kernel, spec, offsets=offsets, eos=True)
        return kernel

    def _kernel(self, spec: HashSpec, *, offsets: bool, negative_ids: str, device: str) -> RowsKernel:
        """The implementation's evaluator, or, for a backend whose code is kept, the evaluator
        that runs the kept code (:mod:`ngramtool.hashing.backends.stored_rows`) and makes the
        implementation's when it needs it."""

        def compiled() -> RowsKernel:
            broken = {name: why for name in self.requires if (why := _import_error(name)) is not None}
            if broken:  # a remembered import that no longer passes (import_failure)
                raise UsageError(self._broken_reason(broken))
            return self._impl().make_kernel(spec, offsets=offsets, negative_ids=negative_ids, device=device)

        if not self.kept:
            return compiled()
        from . import stored_rows

        return stored_rows.make_kernel(_kept_options(spec, offsets, negative_ids), compiled)

    def keep_code(self, spec: HashSpec, *, offsets: bool, negative_ids: str, id_dtype: np.dtype) -> bool:
        """Keep the machine code of this backend's kernel for ``spec``, the options and ids of
        ``id_dtype``, so that later processes run it without importing the backend's packages
        (numba: :func:`ngramtool.hashing.backends.stored_rows.keep`); True when kept now."""
        if not self.kept:
            return False
        from . import stored_rows

        inner_ids = _inner_negative_ids(negative_ids)
        options = _kept_options(spec, offsets, inner_ids)
        implementation = self._impl

        def compile_code() -> stored_rows.MachineCode | None:
            kernel = implementation().make_kernel(spec, offsets=offsets, negative_ids=inner_ids, device="cpu")
            return implementation().machine_code(kernel, np.dtype(id_dtype))

        return stored_rows.keep(options, id_dtype, compile_code)


def _kept_options(spec: HashSpec, offsets: bool, negative_ids: str) -> Any:
    """What kept code is compiled for (:class:`ngramtool.hashing.backends.stored_rows.Options`),
    checked against the numpy backend's rows."""
    from . import stored_rows

    def reference() -> RowsKernel:
        numpy_backend = BACKENDS["numpy"]._impl()
        return numpy_backend.make_kernel(spec, offsets=offsets, negative_ids=negative_ids, device="cpu")

    return stored_rows.Options(spec, offsets, negative_ids, reference)


def _inner_negative_ids(negative_ids: str) -> str:
    """What a backend's own kernel does with negative ids: ``barrier`` masks them in the kernel,
    and the wrapper (:class:`ngramtool.hashing.backends.barrier.BarrierRows`) restarts windows there."""
    return "mask" if negative_ids == "barrier" else negative_ids


BACKENDS: dict[str, Backend] = {
    "numpy": Backend("numpy", "numpy_backend", (), "", threadsafe=True, cpu_only=True),
    "numba": Backend(
        "numba", "numba_backend", ("numba",), "numba", threadsafe=True, cpu_only=True, kept=True
    ),
    "torch": Backend("torch", "torch_backend", ("torch",), "torch"),
    "triton": Backend("triton", "triton_backend", ("torch", "triton"), "gpu"),
}


@dataclass(frozen=True)
class BackendChoice:
    """A resolved backend: its name, the device it computes on, and whether ``auto`` chose it."""

    name: str
    device: str
    auto: bool = False

    def describe(self) -> str:
        """A line for ``--verbose``, e.g. ``backend: triton on cuda (NVIDIA H200)``."""
        where = self.device
        if device_type(self.device) == "cuda":
            import torch

            where += f" ({torch.cuda.get_device_name(self.device)})"
        elif self.name == "triton":
            where += " (Triton interpreter)"
        return f"backend: {self.name} on {where}{' (auto)' if self.auto else ''}"


def device_type(device: str) -> str:
    """``cpu`` or ``cuda`` for ``cpu``, ``cuda``, ``cuda:N``; anything else is a usage error."""
    kind, _, index = str(device).partition(":")
    if kind not in DEVICE_TYPES or (index and not (kind == "cuda" and index.isdigit())):
        raise UsageError(f"unknown device {device!r}: use cpu, cuda or cuda:N")
    return kind


def choose_backend(
    backend: str = "auto",
    device: str | None = None,
    *,
    input_device: str | None = None,
    input_bytes: int | None = None,
) -> BackendChoice:
    """Resolve ``--backend`` and ``--device`` (the function a command line calls).

    Args:
        backend: ``auto`` or one of :data:`NAMES`.
        device: ``cpu``, ``cuda`` or ``cuda:N``; None: the input's device when the backend can
            run there, else the backend's first usable device (``auto``: the CPU).
        input_device: where the input lives (a tensor's device), when known.
        input_bytes: the input's size, when known: ``auto`` on the CPU takes numpy below
            :data:`SMALL_INPUT_BYTES`.

    Raises:
        UsageError: an unknown name or device, or a backend that cannot run there (the message
            says what to install or which option to change).
    """
    if backend not in CHOICES:
        raise UsageError(f"unknown backend {backend!r}: choose one of {', '.join(CHOICES)}")
    if device is not None:
        device_type(device)
    if backend == "auto":
        where = device or input_device or "cpu"
        if small_input(input_bytes) and device_type(where) == "cpu":
            return BackendChoice("numpy", where, auto=True)
        return _auto_backend(where)
    entry = BACKENDS[backend]
    if device is None:
        usable = entry.devices()
        if input_device is not None and device_type(input_device) in usable:
            device = input_device
        else:
            device = usable[0] if usable else (input_device or "cpu")
    if not entry.available(device):
        raise UsageError(entry.unavailable_reason(device))
    return BackendChoice(backend, device)


def check_backend(backend: str = "auto", device: str | None = None) -> None:
    """The usage error :func:`choose_backend` would raise, without importing a backend's packages
    where nothing can be wrong: ``auto`` on the CPU always has numpy. (A hasher checks its options
    when it is made and chooses its backend when it first hashes.)"""
    if backend == "auto" and device_type(device or "cpu") == "cpu":
        return
    choose_backend(backend, device)


def _auto_backend(where: str) -> BackendChoice:
    """The first backend of :data:`AUTO_ORDER` that runs on ``where``; passing over one whose
    packages are installed but do not import warns (:func:`warn_fallback`)."""
    order = AUTO_ORDER[device_type(where)]
    for rank, name in enumerate(order):
        if BACKENDS[name].available(where):
            for passed in order[:rank]:
                for package, why in BACKENDS[passed].broken_packages().items():
                    warn_fallback(package, why, name)
            return BackendChoice(name, where, auto=True)
    raise UsageError(f"no backend can hash on {where}: {BACKENDS[order[-1]].unavailable_reason(where)}")
