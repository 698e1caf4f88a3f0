"""A small file system simulated inside one process, for where tmpfs cannot be mounted (not root).

``python tests/fakedisk.py ROOT CAPACITY ngramtool ARGS...`` runs ``ngramtool ARGS...`` as if the
directory ROOT were a file system of CAPACITY bytes (``ro``: a read-only one): a write under ROOT
beyond the capacity writes what fits and fails with ENOSPC, as a filling disk does, and
``statvfs`` there reports the capacity less the bytes of the files under ROOT. Files are written
through ``open`` (every ngramtool output is), and standard output when it is a file under ROOT.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import runpy
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

_REAL_OPEN = io.open
_REAL_STATVFS = os.statvfs
_REAL_FSTATVFS = os.fstatvfs
_REAL_OS_OPEN = os.open
_REAL_MKDIR = os.mkdir
_REAL_PWRITE = os.pwrite
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT


class FakeDisk:
    """ROOT's simulated file system: ``capacity`` bytes, or None when read-only."""

    def __init__(self, root: str, capacity: int | None) -> None:
        self.root = os.path.realpath(root)
        self.capacity = capacity

    def holds(self, path: Any) -> bool:
        """Whether ``path`` (a path or a descriptor) lies on this file system."""
        try:
            if isinstance(path, int):
                path = os.readlink(f"/proc/self/fd/{path}")
            full = os.path.realpath(os.fspath(path))
        except (OSError, TypeError):
            return False
        return full == self.root or full.startswith(self.root + os.sep)

    def used(self) -> int:
        """The bytes of the files under ROOT now."""
        total = 0
        for folder, _, files in os.walk(self.root):
            for name in files:
                with suppress(OSError):
                    total += os.lstat(os.path.join(folder, name)).st_size
        return total

    def refuse_read_only(self, path: Any) -> None:
        if self.capacity is None and self.holds(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))

    def room(self) -> int:
        return max((self.capacity or 0) - self.used(), 0)

    def install(self) -> None:
        """Route opens, creations, ``pwrite`` and ``statvfs`` under ROOT through this file system."""
        disk = self

        def opened(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            writing = bool(set(mode) & set("wax+"))
            if writing:
                disk.refuse_read_only(file)
            handle = _REAL_OPEN(file, mode, *args, **kwargs)
            return _Filling(handle, disk) if writing and disk.holds(file) else handle

        def os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if flags & _WRITING:
                disk.refuse_read_only(path)
            return _REAL_OS_OPEN(path, flags, *args, **kwargs)

        def pwrite(fd: int, data: Any, offset: int) -> int:  # the O_DIRECT writers' way
            if disk.capacity is not None and disk.holds(fd):
                growth = offset + memoryview(data).nbytes - os.fstat(fd).st_size
                if growth > disk.room():
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return _REAL_PWRITE(fd, data, offset)

        def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
            disk.refuse_read_only(path)
            _REAL_MKDIR(path, *args, **kwargs)

        def statvfs(path: Any) -> os.statvfs_result:
            real = _REAL_FSTATVFS(path) if isinstance(path, int) else _REAL_STATVFS(path)
            if not disk.holds(path):
                return real
            fields = list(real)
            fields[4] = fields[3] = disk.room() // real.f_frsize  # f_bfree, f_bavail
            return os.statvfs_result(fields)

        io.open = builtins.open = opened  # type: ignore[assignment]
        os.open, os.mkdir, os.pwrite = os_open, mkdir, pwrite  # type: ignore[assignment]
        os.statvfs = os.fstatvfs = statvfs  # type: ignore[assignment]
        if self.holds(1):
            sys.stdout = _Stdout(_Filling(sys.stdout.buffer, disk), sys.stdout)  # type: ignore[assignment]


class _Filling:
    """An open file on the simulated file system: writes beyond its room fail with ENOSPC."""

    def __init__(self, handle: Any, disk: FakeDisk) -> None:
        self._handle, self._disk = handle, disk

    def write(self, data: Any) -> int:
        size = len(data) if isinstance(data, str) else memoryview(data).nbytes
        self._handle.flush()
        room = self._disk.room()
        if size > room:
            self._handle.write(data[:room] if isinstance(data, str) else memoryview(data).cast("B")[:room])
            self._handle.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self._handle.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __iter__(self) -> Any:
        return iter(self._handle)

    def __enter__(self) -> _Filling:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._handle.__exit__(*exc_info)


class _Stdout:
    """``sys.stdout`` whose ``buffer`` is on the simulated file system."""

    def __init__(self, buffer: _Filling, text: Any) -> None:
        self.buffer, self._text = buffer, text

    def __getattr__(self, name: str) -> Any:
        return getattr(self._text, name)


def main() -> None:
    """``fakedisk.py ROOT CAPACITY|ro ngramtool ARGS...``."""
    root, capacity, program, *args = sys.argv[1:]
    FakeDisk(root, None if capacity == "ro" else int(capacity)).install()
    sys.argv = [program, *args]
    runpy.run_module(program, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    sys.path[0] = str(Path(__file__).resolve().parents[1])  # the package beside tests/, not tests/
    main()
