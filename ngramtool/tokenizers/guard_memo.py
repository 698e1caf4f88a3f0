"""The time guard's passes, remembered on this machine: an engine build that encoded the long runs
in time once is not timed again.

:func:`~ngramtool.tokenizers.guard.startup_problem` times a 300,000-character run of each of two
characters (0.1 s of a start-up with splintr, 0.2 s with fastokens). How long that takes depends
only on the engine's code and on what it was built from, so a pass is kept in
``$NGRAMTOOL_CACHE_DIR/engines``, keyed by the engine's name and version, its compiled library
files (name, size, modification time), what it was built from (the encoder's ``build``: a
digest of the reference tokenizer's fingerprint, the pattern or special-token rule and the special
tokens given to it) and the guard's limits (:mod:`ngramtool.util.passes`: an entry holds its
whole key, which must match; one that cannot be read or written is ignored, and the runs are
timed). The canaries are encoded on every start-up, remembered or not.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..util import passes

_FORMAT = "ngramtool-time-guard-v1"
_LIBRARY_SUFFIXES = (".so", ".pyd", ".dylib")


def memo_key(encoder: Any, limits: tuple[int, float]) -> str | None:
    """The key of ``encoder``'s pass under the guard's ``limits`` (characters, CPU seconds), or
    None when it cannot be keyed (no ``build``, or no compiled library of its name is loaded)."""
    build = getattr(encoder, "build", None)
    module = sys.modules.get(getattr(encoder, "name", ""))
    if not isinstance(build, str) or module is None or getattr(module, "__file__", None) is None:
        return None
    try:
        folder = Path(module.__file__).parent
        files = sorted(
            (path.name, stat.st_size, stat.st_mtime_ns)
            for path in folder.iterdir()
            if path.name.endswith(_LIBRARY_SUFFIXES) and (stat := path.stat())
        )
    except OSError:
        return None
    if not files:
        return None
    return json.dumps([_FORMAT, encoder.name, encoder.version, files, build, list(limits)])


def passed(key: str) -> bool:
    """Whether a pass under ``key`` was remembered."""
    return passes.passed("engines", "time-guard", key)


def remember(key: str) -> None:
    """Remember a pass under ``key``; a cache that cannot be written is skipped, not an error."""
    passes.remember("engines", "time-guard", key)
