"""Temporary outputs: the one place where ngramtool creates, publishes and removes them.

Every output (an index directory, a per-layer export, a ``.npy`` file, a token file, saved n-gram
type counts, a spec file, a cached vocabulary table, a manifest) is written under a temporary name
beside its destination, ``.NAME.XXXX.partial``, and renamed into place only when it is complete,
so a crash or ``kill -9`` never leaves a destination that looks finished. A temporary output gets
the permissions a plain create would give (the umask's), not ``tempfile``'s private 0600 and 0700,
so another account (a trainer's) can read what is published.

:class:`Staged` is that temporary output: use it as a context manager, call :meth:`Staged.publish`
when the output is complete; leaving the block without publishing removes it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import UsageError

PARTIAL_SUFFIX = ".partial"
_REPLACED = ".replaced-"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class Staged:
    """A new, empty temporary file (or directory) beside ``dest``, published by rename or discarded.

    Attributes:
        dest: where the output goes.
        path: the temporary file or directory to write, ``.NAME.XXXX.partial`` beside ``dest``.
        published: whether :meth:`publish` renamed it into place.
    """

    def __init__(self, dest: str | Path, *, directory: bool = False) -> None:
        self.dest = Path(dest)
        self.directory = directory
        prefix, parent = f".{self.dest.name}.", self.dest.parent
        if directory:
            self.path = Path(tempfile.mkdtemp(prefix=prefix, suffix=PARTIAL_SUFFIX, dir=parent))
            self.path.chmod(0o777 & ~_umask())
        else:
            fd, name = tempfile.mkstemp(prefix=prefix, suffix=PARTIAL_SUFFIX, dir=parent)
            os.close(fd)
            self.path = Path(name)
            self.path.chmod(0o666 & ~_umask())
        self.published = False

    def publish(self) -> None:
        """Rename the finished output to ``dest`` and make the rename durable.

        A directory replaces an old ``dest`` by setting it aside first (``.NAME.replaced-PID``)
        and removing it last, so ``dest`` is never missing and never half-written.
        """
        if self.directory:
            _publish_dir(self.path, self.dest)
        else:
            os.replace(self.path, self.dest)
            fsync_dir(self.dest.parent)
        self.published = True

    def discard(self) -> None:
        """Remove the temporary output (nothing happens once it is published)."""
        if self.published:
            return
        if self.directory:
            shutil.rmtree(self.path, ignore_errors=True)
        else:
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> Staged:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.discard()


@contextmanager
def staged_file(dest: str | Path) -> Iterator[Path]:
    """The path of a temporary file that replaces ``dest`` when the block ends without an error
    (and is removed when it raises)."""
    with Staged(dest) as staged:
        yield staged.path
        staged.publish()


def check_output_file(
    path: str | Path, force: bool, inputs: Sequence[str] = (), what: str = "output"
) -> None:
    """Refuse, before any work, an output file that would clobber an input, a directory or (without
    ``force``) an existing file, or whose directory does not exist (a mistyped directory is not
    created; index directories, which are not files, are). ``what`` names the output in messages."""
    path = Path(path)
    if str(path) == "-":
        raise UsageError(f"the {what} must be a file path; '-' (stdout) is not supported here")
    if path.is_dir():
        raise UsageError(f"the {what} {path} is a directory; give a file path")
    if path.exists() and not path.is_file():
        raise UsageError(
            f"the {what} {path} is not a regular file (a device or a pipe): outputs are written to a "
            "temporary file and renamed into place; give a file path"
        )
    for name in inputs:
        if name != "-" and Path(name).exists() and path.exists() and path.resolve() == Path(name).resolve():
            raise UsageError(f"the {what} {path} is also an input: it would be overwritten")
    if path.exists() and not force:
        raise UsageError(f"{path} already exists; pass `force=True` to replace it")
    folder = path.parent
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"the {what} {path} lies under {folder}, which is not a directory: fix the path")
    if not folder.exists():
        raise UsageError(
            f"the directory of the {what} {path} does not exist: create it first (mkdir -p {folder}) "
            "or fix the path"
        )


def write_json_durably(path: str | Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` as JSON atomically and durably: after a crash ``path`` holds
    the old or the new JSON, whole (the file is fsynced before the rename, the directory after)."""
    with staged_file(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())


def fsync_dir(path: Path) -> None:
    """fsync a directory, making the renames and creations inside it durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _publish_dir(tmp: Path, dest: Path) -> None:
    """Rename the finished ``tmp`` to ``dest``; an old ``dest`` is set aside first, removed last."""
    old = dest.with_name(f".{dest.name}{_REPLACED}{os.getpid()}") if dest.exists() else None
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


def partial_pattern(name: str) -> str:
    """The glob of the temporary outputs made for a destination named ``name``."""
    return f".{name}.*{PARTIAL_SUFFIX}"


def unfinished_destination(name: str) -> tuple[str, str] | None:
    """For the name of a leftover temporary output: (the destination it was made for, how it was
    left: ``"partial"`` while being written, ``"replaced"`` while being replaced); None for any
    other name."""
    if name.startswith(".") and name.endswith(PARTIAL_SUFFIX) and name.count(".") >= 3:
        return name[1:].rsplit(".", 2)[0], "partial"
    if name.startswith(".") and _REPLACED in name:
        return name[1 : name.rindex(_REPLACED)], "replaced"
    return None
