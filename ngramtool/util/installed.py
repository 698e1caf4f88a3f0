"""A key of what an installed package's import depends on, to remember that it imports.

Importing numba takes 0.2 s, and whether it imports depends only on installed files: its own and
those of what it needs (a numba built for another NumPy raises at import). The key holds the
Python build, the file the package's import runs (path, size, modification time) and, for each
directory on ``sys.path`` but the working one, its modification time and a digest of its listing:
installing, upgrading or removing any distribution there renames or adds entries (``*.dist-info``),
so the key changes. :mod:`ngramtool.util.passes` keeps a pass under it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys

_FORMAT = "ngramtool-import-v1"


def import_key(package: str) -> str | None:
    """The key of ``package``'s import in this environment, or None when it cannot be keyed (not
    installed, not a file, or a directory that cannot be read)."""
    spec = importlib.util.find_spec(package)
    origin = spec.origin if spec is not None else None
    if origin is None or not os.path.isfile(origin):
        return None
    here = os.getcwd()
    try:
        stat = os.stat(origin)
        folders = [_listing(path) for path in sys.path if path not in ("", here) and os.path.isdir(path)]
    except OSError:
        return None
    built = [_FORMAT, sys.version, sys.executable]
    return json.dumps([*built, package, origin, stat.st_size, stat.st_mtime_ns, folders])


def _listing(folder: str) -> list[object]:
    """(path, modification time, digest of the sorted entry names) of ``folder``."""
    names = "\n".join(sorted(os.listdir(folder))).encode("utf-8", "surrogateescape")
    return [folder, os.stat(folder).st_mtime_ns, hashlib.sha256(names).hexdigest()]
