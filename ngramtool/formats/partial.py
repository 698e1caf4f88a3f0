"""Temporary outputs next to their destination, with the permissions a plain create would give,
and durable JSON replacement (temporary file, fsync, rename, directory fsync).

``tempfile`` makes private files (0600) and directories (0700); published outputs should instead
follow the user's umask like any file they write, so another account (a trainer's) can read them.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any


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


def write_json_durably(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` as JSON atomically and durably.

    The text goes to a temporary file in the same directory, which is fsynced and renamed over
    ``path``; the directory is fsynced too, so after a crash ``path`` holds the old or the new
    JSON, whole.
    """
    path = Path(path)
    tmp = partial_file(path)
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    """fsync a directory, making the renames and creations inside it durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish_dir(tmp: Path, dest: Path) -> None:
    """Rename the finished ``tmp`` to ``dest``; an old ``dest`` is set aside first, removed last."""
    old = dest.with_name(f".{dest.name}.replaced-{os.getpid()}") if dest.exists() else None
    if old is not None:
        os.replace(dest, old)
    try:
        os.replace(tmp, dest)
    except OSError:
        if old is not None:
            os.replace(old, dest)
        raise
    fsync_dir(dest.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
