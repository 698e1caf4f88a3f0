"""Temporary outputs: the one place where ngramtool creates, publishes and removes them.

Every output (an index directory, a per-layer export, a ``.npy`` file, a token file, saved n-gram
type counts, a spec file, a cached vocabulary table, a manifest, a plot) is written under a
temporary name beside its destination, ``.NAME.XXXX.partial``, and renamed into place only when it
is complete, so a crash or ``kill -9`` never leaves a destination that looks finished. A temporary
output gets the permissions a plain create would give (the umask's), not ``tempfile``'s private
0600 and 0700, so another account (a trainer's) can read what is published.

:class:`Staged` is that temporary output: use it as a context manager, call :meth:`Staged.publish`
when the output is complete; leaving the block without publishing removes it, and an error of the
file system (a full disk, a quota, a read-only file system, a directory removed meanwhile) becomes
one :class:`OutputError` line that names the output with the bytes written, the bytes still needed
and the free space.

**Owners.** While a run writes ``NAME`` it holds ``.NAME.lock`` beside it: a file locked with
``flock`` (the kernel drops the lock when the process dies, however it dies) that records its
owner (pid, host, the process's start time). A second writer to the same destination is refused
with :class:`OutputBusy` ("being written by pid N on HOST"). The writer that takes the lock knows
that every other ``.NAME.*.partial`` (and ``.NAME.replaced-PID``) is a dead run's leftover and
removes it first (an old ``NAME`` set aside by a run that died before its replacement took its
place is put back): leftovers are reclaimed by the next run that writes to the same place. Where the
file system cannot lock, the record decides: a process on this host is alive when a process with
its pid and its start time runs (a reused pid has another start time).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import secrets
import shutil
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .errors import NgramToolError, UsageError
from .signals import shielded
from .wording import byte_size

PARTIAL_SUFFIX = ".partial"
LOCK_SUFFIX = ".lock"
_REPLACED = ".replaced-"
# What a writer's own temporary name adds to the destination's: one component without dots.
_LEFTOVER = r"\.{name}(?:\.[^./]+{partial}|{replaced}[0-9]+)"
# File system errors that a message explains with sizes: a full disk, a quota, a file size limit,
# a read-only file system.
OUTPUT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}
_FIXES = {
    errno.ENOSPC: "free some space or write elsewhere, then run again",
    errno.EDQUOT: "free some of the quota or write elsewhere, then run again",
    errno.EFBIG: "the file system or the file size limit (ulimit -f) allows no larger file: write "
    "elsewhere or raise the limit",
    errno.EROFS: "write to a writable file system",
    errno.EACCES: "write where this user may create files",
    errno.EPERM: "write where this user may create files",
}
_NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}
_RETRIES = 5  # attempts at removing a leftover (a file system may refuse for a moment)
_BUSY_TRIES = 3  # attempts at a lock that is held


def cache_dir() -> Path:
    """Where ngramtool caches what it builds (vocabularies, engines' tokenizer files, kernels'
    machine code): ``NGRAMTOOL_CACHE_DIR``, else ``~/.cache/ngramtool``.

    Raises:
        OSError: neither is set and the user has no home directory (a container run as an
            arbitrary user id): callers then cache nothing, as with a cache they cannot write.
    """
    root = os.environ.get("NGRAMTOOL_CACHE_DIR")
    if root:
        return Path(root)
    try:
        return Path.home() / ".cache" / "ngramtool"
    except RuntimeError:
        raise OSError(errno.ENOENT, "no cache directory: set NGRAMTOOL_CACHE_DIR or HOME") from None


def cache_path(folder: str, name: str) -> Path | None:
    """``cache_dir() / folder / name``, or None where there is no cache directory (then nothing
    is cached)."""
    try:
        return cache_dir() / folder / name
    except OSError:
        return None


def store_cached(path: Path, write: Callable[[Path], object]) -> bool:
    """Write the cache entry ``path`` atomically (``write`` fills its temporary file); False where
    the cache cannot be written (a full disk, a read-only home, another process writing the same
    entry), which is skipped, not an error, and leaves nothing behind."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with staged_file(path) as tmp:
            write(tmp)
    except (OSError, NgramToolError):
        return False
    return True


_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    """The process's umask: from ``/proc/self/status`` where Linux gives it, else set and restored
    under a lock (setting it is process-wide: two threads doing that at once could leave it 0)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0)
        os.umask(mask)
    return mask


class OutputError(NgramToolError):
    """Writing an output failed on the file system; the partial output was removed.

    Attributes:
        dest: the output.
        written: bytes written before the failure.
        expected: the estimated size of the whole output (None: unknown).
        free: bytes free on the output's file system after the partial output was removed
            (None: unknown).
    """

    def __init__(self, message: str, dest: str, written: int, expected: int | None, free: int | None) -> None:
        super().__init__(message)
        self.dest, self.written, self.expected, self.free = dest, written, expected, free


class OutputBusy(NgramToolError):
    """Another live run is writing the same output (its owner record names it)."""


# ------------------------------------------------------------------------------------- owners
@dataclass(frozen=True)
class Owner:
    """Who writes an output: the record in its ``.NAME.lock`` file."""

    pid: int
    host: str
    started: int | None  # the process's start time in clock ticks after boot (/proc/PID/stat)
    boot: str | None  # the boot id of its host: after a reboot, every pid is another process

    def alive(self) -> bool | None:
        """Whether the owner still runs: None when it runs on another host (it cannot be told)."""
        if self.host != socket.gethostname():
            return None
        if self.boot is not None and self.boot != _boot_id():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # another user's process: it exists
        started = _start_ticks(self.pid)
        return self.started is None or started is None or started == self.started

    def describe(self) -> str:
        """``pid N on HOST``."""
        return f"pid {self.pid} on {self.host}"


def _start_ticks(pid: int) -> int | None:
    """A process's start time in clock ticks after boot (field 22 of /proc/PID/stat)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (command)"; the command may hold spaces
    return int(fields[19])


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return None


def this_owner() -> Owner:
    """The owner record of this process."""
    pid = os.getpid()
    return Owner(pid, socket.gethostname(), _start_ticks(pid), _boot_id())


def _read_owner(fd: int) -> Owner | None:
    """The record in an open lock file; None when it is empty or unreadable."""
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        return Owner(int(data["pid"]), str(data["host"]), data.get("started"), data.get("boot"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def lock_path(dest: Path) -> Path:
    """The owner record of ``dest``: ``.NAME.lock`` beside it."""
    return dest.with_name(f".{dest.name}{LOCK_SUFFIX}")


class OutputLock:
    """The lock on one destination (see the module docstring); :meth:`release` removes it.

    Raises :class:`OutputBusy` when another live run holds it (``wait``: waits for it instead) and
    OSError when the lock file cannot be made (a read-only file system, a full disk).
    """

    def __init__(self, dest: Path, *, wait: bool = False) -> None:
        self.path = lock_path(dest)
        self.dest = dest
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666 & ~_umask())
            try:
                if self._take(fd, wait) and _same_file(fd, self.path):
                    break
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # the lock file was replaced meanwhile: take the new one
        self.fd = fd
        try:
            record = json.dumps(this_owner().__dict__).encode("utf-8")
            os.ftruncate(fd, 0)
            os.pwrite(fd, record, 0)
        except BaseException:
            self.release()
            raise

    def _take(self, fd: int, wait: bool) -> bool:
        """Lock ``fd`` (or raise OutputBusy); a lock held only for a moment (another run looking
        whether the output is taken, :func:`owner_of`) is waited for."""
        try:
            for attempt in range(_BUSY_TRIES):
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                    return True
                except BlockingIOError:
                    if attempt == _BUSY_TRIES - 1:
                        raise
                    time.sleep(0.02)
        except BlockingIOError:
            raise busy_error(self.dest, _read_owner_settled(fd)) from None
        except OSError as exc:
            if exc.errno not in _NO_LOCKS:
                raise
        owner = _read_owner(fd)  # no locks on this file system: the record decides
        if owner is not None and owner.alive() is not False and owner != this_owner():
            raise OutputBusy(
                f"{self.dest} is being written by {owner.describe()} (this file system has no locks: "
                f"if that run is gone, remove {self.path}): wait for it to finish, or stop it"
            )
        return True

    def release(self) -> None:
        """Remove the lock file and drop the lock (removed first: a writer that opened it
        meanwhile sees that it is gone and makes a new one)."""
        with shielded():
            try:
                if _same_file(self.fd, self.path):
                    self.path.unlink()
            except OSError:
                pass
            os.close(self.fd)


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        here, there = os.fstat(fd), path.stat()
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _read_owner_settled(fd: int) -> Owner | None:
    """The record of a lock held by another process, which may be writing it this very moment."""
    for _ in range(20):
        owner = _read_owner(fd)
        if owner is not None:
            return owner
        time.sleep(0.01)
    return None


def busy_error(dest: Path, owner: Owner | None) -> OutputBusy:
    """The error for a second writer of ``dest``, which ``owner`` writes."""
    who = owner.describe() if owner is not None else "another process"
    return OutputBusy(
        f"{dest} is being written by {who}: wait for that run to finish, or stop it "
        "(a second run never writes the same output at once)"
    )


def refuse_busy(dests: Sequence[str | Path]) -> None:
    """Raise :class:`OutputBusy` before any work when a live run writes one of ``dests`` (writing
    takes the lock in any case: this only says so sooner)."""
    for dest in dests:
        if str(dest) != "-" and (owner := owner_of(Path(dest))) is not None:
            raise busy_error(Path(dest), owner)


def owner_of(dest: Path) -> Owner | None:
    """The live run writing ``dest``, if any (its lock is held); None when no run is."""
    try:
        fd = os.open(lock_path(dest), os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_owner_settled(fd)
        except OSError:
            owner = _read_owner(fd)
            return owner if owner is not None and owner.alive() is not False else None
        return None
    finally:
        os.close(fd)  # closing drops a lock taken here


# ------------------------------------------------------------------------------- leftovers
def leftovers_of(dest: Path) -> list[Path]:
    """What dead writers of ``dest`` left beside it: ``.NAME.XXXX.partial`` and
    ``.NAME.replaced-PID`` (only those of this very name, not of ``NAME.more``)."""
    pattern = re.compile(
        _LEFTOVER.format(
            name=re.escape(dest.name), partial=re.escape(PARTIAL_SUFFIX), replaced=re.escape(_REPLACED)
        )
    )
    try:
        with os.scandir(dest.parent) as entries:
            return [dest.parent / e.name for e in entries if pattern.fullmatch(e.name)]
    except OSError:
        return []


def remove_path(path: Path) -> bool:
    """Remove a file or a directory tree, trying again when the file system refuses for a moment;
    returns whether it is gone. Removing needs no free space, so it works on a full disk."""
    with shielded():
        for attempt in range(_RETRIES):
            try:
                info = path.lstat()
                if stat.S_ISDIR(info.st_mode):
                    shutil.rmtree(path)
                else:
                    path.unlink()
            except FileNotFoundError:
                return True
            except OSError:
                time.sleep(0.02 * (attempt + 1))
                continue
            return True
        return not os.path.lexists(path)


def reclaim_leftovers(directory: Path, suffix: str) -> list[Path]:
    """Remove the dead writers' leftovers in ``directory`` (partial outputs, set-aside old
    outputs, lock files) of the destinations whose names end with ``suffix`` and that no live run
    holds; returns what was removed."""
    names: set[str] = set()
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                leftover = unfinished_destination(entry.name)
                final = leftover[0] if leftover is not None else locked_destination(entry.name)
                if final is not None:
                    names.add(final)
    except OSError:
        return []
    names = {name for name in names if name.endswith(suffix)}
    removed: list[Path] = []
    for name in sorted(names):
        try:
            lock = OutputLock(directory / name)
        except (OutputBusy, OSError):
            continue  # a live run's, or a directory this run cannot write
        try:
            removed += _reclaim(directory / name)
        finally:
            lock.release()
    return removed


def _reclaim(dest: Path) -> list[Path]:
    """Deal with what dead writers of ``dest`` left (the caller holds its lock): an old output set
    aside while being replaced goes back to ``dest`` when ``dest`` is missing (the run died between
    its two renames); everything else is removed. Returns what was removed."""
    removed: list[Path] = []
    for leftover in sorted(leftovers_of(dest), key=lambda path: _REPLACED not in path.name):
        if _REPLACED in leftover.name and not os.path.lexists(dest):
            with suppress(OSError):  # where it cannot go back, it stays: it is never removed
                os.replace(leftover, dest)
        elif remove_path(leftover):
            removed.append(leftover)
    return removed


# ----------------------------------------------------------------------------- staged outputs
class Staged:
    """A new, empty temporary file (or directory) beside ``dest``, published by rename or discarded.

    Creating it takes the destination's lock (:class:`OutputLock`; ``wait``: wait for another
    writer instead of refusing) and removes dead writers' leftovers. ``expected_bytes``, the
    estimated size of the whole output, may be set (and refined) while writing: messages about a
    full disk use it.

    Attributes:
        dest: where the output goes.
        path: the temporary file or directory to write, ``.NAME.XXXX.partial`` beside ``dest``.
        published: whether :meth:`publish` renamed it into place.
        expected_bytes: the estimated size of the finished output, or None.
    """

    def __init__(
        self,
        dest: str | Path,
        *,
        directory: bool = False,
        wait: bool = False,
        expected_bytes: int | None = None,
    ) -> None:
        self.dest = Path(dest)
        self.directory = directory
        self.expected_bytes = expected_bytes
        self.published = self.created = False
        self.path = self.dest.with_name(f".{self.dest.name}.{secrets.token_hex(4)}{PARTIAL_SUFFIX}")
        self._lock: OutputLock | None = None
        try:
            self._lock = OutputLock(self.dest, wait=wait)
            _reclaim(self.dest)
            if directory:
                os.mkdir(self.path, 0o777 & ~_umask())
            else:
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 & ~_umask()))
            self.created = True
        except OSError as exc:
            raise self.failure(exc) from None
        except BaseException:
            self.discard()
            raise

    def publish(self) -> None:
        """Rename the finished output to ``dest`` and make the rename durable; the lock is released.

        A directory replaces an old ``dest`` in one step and removes it after (see
        :func:`_publish_dir`), so ``dest`` is never half-written, and never missing where the file
        system can swap two names.
        """
        try:
            with shielded():
                if self.directory:
                    _publish_dir(self.path, self.dest)
                else:
                    os.replace(self.path, self.dest)
                    fsync_dir(self.dest.parent)
                self.published = True
                self._release()
        except OSError as exc:
            raise self.failure(exc) from None

    def discard(self) -> None:
        """Remove the temporary output and release the lock (once published, only the lock)."""
        if not self.published:
            remove_path(self.path)
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            lock, self._lock = self._lock, None
            lock.release()

    def written_bytes(self) -> int:
        """Bytes in the temporary output now (0 once it is gone)."""
        return tree_bytes(self.path)

    def failure(self, exc: OSError, written: int = 0) -> Exception:
        """Discard the output and describe why writing it failed (see :func:`output_error`):
        ``written``, the bytes its writer handed to the files, or what the files hold if more (a
        write that failed halfway wrote part of its bytes). A file inside another output's
        temporary directory (an index's manifest) is that output's: its error is returned as it
        is, naming the file, for that output to report."""
        if unfinished_destination(self.dest.parent.name) is not None:
            self.discard()
            exc.filename = exc.filename or str(self.dest)
            return exc
        written = max(written, self.written_bytes())
        gone = _vanished(self.dest, self.path if self.created and not self.published else None, self.created)
        self.discard()
        left = None if self.published or not os.path.lexists(self.path) else self.path
        folder = self.dest.parent if self.dest.parent.is_dir() else None
        return output_error(str(self.dest), exc, written, self.expected_bytes, folder, gone, left)

    def __enter__(self) -> Staged:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, OSError) and not self.published and is_output_failure(exc, self.dest):
            raise self.failure(exc) from None
        self.discard()


def tree_bytes(path: Path) -> int:
    """The bytes of the files in a file or directory tree (0 when it does not exist)."""
    try:
        info = path.lstat()
    except OSError:
        return 0
    if not stat.S_ISDIR(info.st_mode):
        return info.st_size
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def free_bytes(path: Path | int) -> int | None:
    """Bytes free to this user on the file system of ``path`` (a path, or an open descriptor)."""
    try:
        info = os.fstatvfs(path) if isinstance(path, int) else os.statvfs(path)
    except OSError:
        return None
    return info.f_bavail * info.f_frsize


@contextmanager
def attributed(dest: str | Path) -> Iterator[None]:
    """Name ``dest`` as the file of the file system errors raised in the block that name none (a
    write to an open file names none): where several outputs are written at once, each one's
    error is then reported as that output's."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(dest)
        raise


def is_output_failure(exc: OSError, dest: Path) -> bool:
    """Whether an error met while writing ``dest`` is the file system's about this output (a full
    disk, a quota, a read-only file system, its directory removed), not a reader's or another
    output's (:func:`attributed`)."""
    if exc.filename is not None and not _belongs(Path(exc.filename), dest):
        return False
    return exc.errno in OUTPUT_ERRNOS or not dest.parent.is_dir()


def _belongs(path: Path, dest: Path) -> bool:
    """Whether ``path`` is ``dest``, or one of its temporary files (``.NAME.*`` beside it), or
    lies in one."""
    return any(
        part.parent == dest.parent and (part.name == dest.name or part.name.startswith(f".{dest.name}."))
        for part in (path, *path.parents)
    )


def _vanished(dest: Path, partial: Path | None, began: bool) -> str | None:
    """What was removed from under a writer (once it ``began``): its directory, or its partial
    output; or the directory that never existed."""
    if not dest.parent.is_dir():
        if not began:
            return f"its directory {dest.parent} does not exist"
        return f"its directory {dest.parent} was removed while it was being written"
    if partial is not None and not os.path.lexists(partial):
        return f"its partial output {partial.name} was removed while it was being written"
    return None


def output_error(
    dest: str,
    exc: OSError,
    written: int,
    expected: int | None,
    where: Path | int | None,
    vanished: str | None = None,
    left: Path | None = None,
    outcome: str | None = None,
    fix: str | None = None,
) -> OutputError:
    """The one-line error for a failed output: what failed, the bytes written, the bytes still
    needed (when ``expected`` is known) and the bytes free on the file system of ``where`` (a
    path or a descriptor), what is left (``left``: a partial output that could not be removed;
    ``outcome`` says it in other words) and how to fix it (``fix``: instead of the usual fix of
    the error).

    >>> import errno, textwrap
    >>> error = output_error("x.ngidx", OSError(errno.ENOSPC, "No space left on device"), 1_200_000,
    ...                      21_700_000, None)  # where=None: the free space is not shown
    >>> print(textwrap.fill(str(error), 100))
    cannot write x.ngidx: no space left on device (wrote 1.2 MB of about 21.7 MB: about 20.5 MB more
    needed); nothing was left behind: free some space or write elsewhere, then run again
    """
    reason = vanished or (exc.strerror or str(exc)).lower().rstrip(".")
    free = free_bytes(where) if where is not None else None
    sizes = f"wrote {byte_size(written)}"
    if expected is not None:
        sizes += f" of about {byte_size(expected)}: about {byte_size(max(expected - written, 0))} more needed"
    if free is not None:
        sizes += f"; {byte_size(free)} free"
    if fix is None:
        fix = "recreate it and run again" if vanished else _FIXES.get(exc.errno or 0, "fix it and run again")
    if outcome is None:
        outcome = f"{left} could not be removed" if left is not None else "nothing was left behind"
    message = f"cannot write {dest}: {reason} ({sizes}); {outcome}: {fix}"
    return OutputError(message, dest, written, expected, free)


@contextmanager
def staged_file(dest: str | Path, *, wait: bool = False) -> Iterator[Path]:
    """The path of a temporary file that replaces ``dest`` when the block ends without an error
    (and is removed when it raises)."""
    with Staged(dest, wait=wait) as staged:
        yield staged.path
        staged.publish()


def close_quietly(handle: IO[Any] | None) -> None:
    """Close a file that is being abandoned: an error while flushing what it buffered (a full
    disk fails again) is dropped, and the descriptor is closed all the same."""
    if handle is None or handle.closed:
        return
    try:
        handle.close()
    except OSError:
        with suppress(OSError, ValueError):
            os.close(handle.fileno())


def check_output_file(
    path: str | Path, force: bool, inputs: Sequence[str] = (), what: str = "output"
) -> None:
    """Refuse, before any work, an output file that would clobber an input, a directory or (without
    ``force``) an existing file, or whose directory does not exist (a mistyped directory is not
    created; index directories, which are not files, are) or refuses new files (read-only, no
    permission). ``what`` names the output in messages."""
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
    try:  # can this user create a file there? (nothing is left: the probe has no name, or loses it)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        fix = _FIXES.get(exc.errno or 0, "write elsewhere")
        raise UsageError(
            f"the {what} {path} cannot be written: its directory {folder} refuses new files ({reason}): {fix}"
        ) from None


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
    """Rename the finished ``tmp`` to ``dest``. An old ``dest`` trades places with ``tmp`` in one
    step (:func:`_exchanged`) and is removed after, so ``dest`` is never missing, however the run
    dies; where the file system cannot trade places, the old ``dest`` is set aside first."""
    replacing = dest.exists()
    if replacing and _exchanged(tmp, dest):
        fsync_dir(dest.parent)
        remove_path(tmp)  # the old output, now under the temporary name (a dead run's is reclaimed)
    elif replacing:
        _set_aside_then_replace(tmp, dest)
    else:
        os.replace(tmp, dest)
        fsync_dir(dest.parent)


def _set_aside_then_replace(tmp: Path, dest: Path) -> None:
    """Replace ``dest`` with ``tmp`` in two renames: the old ``dest`` goes to ``.NAME.replaced-PID``
    first and is removed last. A run that dies between the renames leaves ``dest`` missing; the
    next writer of ``dest`` puts the old one back (:class:`Staged`)."""
    old = dest.with_name(f".{dest.name}{_REPLACED}{os.getpid()}")
    os.replace(dest, old)
    try:
        os.replace(tmp, dest)
    except BaseException:
        os.replace(old, dest)
        raise
    fsync_dir(dest.parent)
    remove_path(old)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # renameat2's flag: swap the two names atomically


def _exchanged(a: Path, b: Path) -> bool:
    """Swap the names ``a`` and ``b`` in one atomic step (Linux's ``renameat2`` with
    ``RENAME_EXCHANGE``); False where the C library or the file system cannot (then nothing moved)."""
    import ctypes  # only a run that replaces a directory needs it

    try:
        rename = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    if rename(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def unfinished_destination(name: str) -> tuple[str, str] | None:
    """For the name of a leftover temporary output: (the destination it was made for, how it was
    left: ``"partial"`` while being written, ``"replaced"`` while being replaced); None for any
    other name."""
    if name.startswith(".") and name.endswith(PARTIAL_SUFFIX) and name.count(".") >= 3:
        return name[1:].rsplit(".", 2)[0], "partial"
    if name.startswith(".") and _REPLACED in name:
        return name[1 : name.rindex(_REPLACED)], "replaced"
    return None


def locked_destination(name: str) -> str | None:
    """For the name of a lock file (``.NAME.lock``): the destination it is for; else None."""
    if name.startswith(".") and name.endswith(LOCK_SUFFIX) and len(name) > len(LOCK_SUFFIX) + 1:
        return name[1 : -len(LOCK_SUFFIX)]
    return None
