"""Checks that passed on this machine, remembered in the cache directory so they need not run again.

A check whose outcome depends only on installed code and on its inputs (an engine's time guard,
whether an installed package imports) is keyed by everything it depends on; a pass is kept as a
file under ``$NGRAMTOOL_CACHE_DIR/FOLDER`` that holds its whole key, which must match. An entry
that cannot be read or written counts as never remembered: the check runs. Failures are never
remembered.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .atomic import cache_dir, staged_file
from .errors import NgramToolError


def passed(folder: str, name: str, key: str) -> bool:
    """Whether a pass of check ``name`` under ``key`` was remembered in ``folder``."""
    try:
        return _entry(folder, name, key).read_text(encoding="utf-8") == key
    except (OSError, UnicodeDecodeError):
        return False


def remember(folder: str, name: str, key: str) -> None:
    """Remember a pass of check ``name`` under ``key``; a cache that cannot be written is skipped,
    not an error."""
    try:
        entry = _entry(folder, name, key)
        entry.parent.mkdir(parents=True, exist_ok=True)
        with staged_file(entry) as tmp:
            tmp.write_text(key, encoding="utf-8")
    except (OSError, NgramToolError):
        return


def _entry(folder: str, name: str, key: str) -> Path:
    return cache_dir() / folder / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:32]}"
