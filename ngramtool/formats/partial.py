"""Temporary outputs next to their destination, with the permissions a plain create would give.

``tempfile`` makes private files (0600) and directories (0700); published outputs should instead
follow the user's umask like any file they write, so another account (a trainer's) can read them.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def partial_dir(dest: Path) -> Path:
    """A new empty directory beside ``dest``, named ``.NAME.XXXX.partial``, mode 0777 & ~umask."""
    path = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent))
    path.chmod(0o777 & ~_umask())
    return path


def partial_file(dest: Path) -> Path:
    """A new empty file beside ``dest``, named ``.NAME.XXXX.partial``, mode 0666 & ~umask."""
    fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent)
    os.close(fd)
    path = Path(name)
    path.chmod(0o666 & ~_umask())
    return path
