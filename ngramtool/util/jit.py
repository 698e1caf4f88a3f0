"""What the numba-compiled kernels share: compilation with an on-disk cache, compile-time sizes.

Imported only by modules that need numba (``ngramtool.hashing.backends.numba_backend``,
``ngramtool.analysis.counting_kernels``), so numba stays an optional dependency.

Compiled code is cached on disk (numba's ``cache``: ``NUMBA_CACHE_DIR`` when set, else
``__pycache__`` beside the source, else numba's user-wide cache directory); when no directory is
writable a kernel is compiled again in every process. Processes read and write that cache one at
a time (:func:`_one_at_a_time`). Kernels run without the GIL.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

import numba
from numba import types
from numba.extending import overload


def compiled(function: Callable[..., Any]) -> Any:
    """``function`` compiled by numba without the GIL, cached on disk where a directory is writable.

    numba looks for a writable cache directory when caching is enabled and raises when there is
    none (e.g. a read-only install run by a user without a home directory): then the function is
    compiled in every process instead. Integer division and modulo follow numpy (no
    ZeroDivisionError checks in the loops).
    """
    dispatcher = numba.njit(nogil=True, error_model="numpy")(function)
    with contextlib.suppress(RuntimeError):  # no writable cache directory
        dispatcher.enable_caching()
        _one_at_a_time(dispatcher._cache)
    return dispatcher


CACHE_LOCK = ".ngramtool-numba.lock"
"""The file in numba's cache directory that its readers and writers lock."""


def _one_at_a_time(cache: Any) -> None:
    """Make each save to a kernel's numba ``cache`` (its files: numba's ``IndexDataCacheFile``)
    exclusive, and each load shared, with a lock on :data:`CACHE_LOCK` in its directory.

    numba saves without a lock: it reads the index, takes the first free data file number, and
    writes the index and the data. Two processes that compile two signatures of one kernel at once
    can take the same number, and the index then gives one signature the other's machine code
    (a kernel that fails, or worse). Nothing is changed where numba's files are not what this
    expects."""
    files, folder = getattr(cache, "_cache_file", None), getattr(cache, "cache_path", None)
    if not (
        isinstance(folder, str)
        and callable(getattr(files, "save", None))
        and callable(getattr(files, "load", None))
    ):
        return
    lock = os.path.join(folder, CACHE_LOCK)
    save, load = files.save, files.load

    @functools.wraps(save)
    def locked_save(key: Any, data: Any) -> None:
        with _locked(lock, fcntl.LOCK_EX):
            save(key, data)

    @functools.wraps(load)
    def locked_load(key: Any) -> Any:
        with _locked(lock, fcntl.LOCK_SH):
            return load(key)

    files.save, files.load = locked_save, locked_load


@contextlib.contextmanager
def _locked(path: str, how: int) -> Iterator[None]:
    """Hold ``flock(how)`` on ``path`` (created if missing; a lock needs no write access); where it
    cannot be opened or locked (no cache directory yet, a file system without locks), go on
    without it, as numba does."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, how)
        yield
    finally:
        os.close(fd)  # closing drops the lock


def static(value: Any) -> int:
    """An int as it is, or the length of a tuple: inside compiled code, a compile-time constant.

    A kernel given ``(0,) * n`` instead of ``n`` is compiled for that ``n``: loops over it have a
    constant trip count, which LLVM unrolls and vectorizes.
    """
    return value if isinstance(value, int) else len(value)


@overload(static)
def _static_overload(value):  # numba compares this signature with static's: no annotations
    if isinstance(value, types.BaseTuple):
        size = len(value)
        return lambda value: size
    return lambda value: value
