"""What the numba-compiled kernels share: compilation with an on-disk cache, compile-time sizes.

Imported only by modules that need numba (``ngramtool.hashing.backends.numba_backend``,
``ngramtool.analysis.counting_kernels``), so numba stays an optional dependency.

Compiled code is cached on disk (numba's ``cache``: ``NUMBA_CACHE_DIR`` when set, else
``__pycache__`` beside the source, else numba's user-wide cache directory); when no directory is
writable a kernel is compiled again in every process. Kernels run without the GIL.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
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
    return dispatcher


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
