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

from .atomic import cache_path, store_cached


def passed(folder: str, name: str, key: str) -> bool:
    """Whether a pass of check ``name`` under ``key`` was remembered in ``folder``."""
    entry = _entry(folder, name, key)
    try:
        return entry is not None and entry.read_text(encoding="utf-8") == key
    except (OSError, UnicodeDecodeError):
        return False


def remember(folder: str, name: str, key: str) -> None:
    """Remember a pass of check ``name`` under ``key``; a cache that cannot be written is skipped,
    not an error."""
    entry = _entry(folder, name, key)
    if entry is not None:
        store_cached(entry, lambda tmp: tmp.write_text(key, encoding="utf-8"))


def _entry(folder: str, name: str, key: str) -> Path | None:
    return cache_path(folder, f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:32]}")
