"""Ending the ``ngramtool`` process once a command has returned, without tearing Python down.

At exit, Python frees every module and object it holds, one by one: 0.04-0.06 s after a tiny
``hash`` and 0.1-0.3 s after 60 MB of text (docs/performance.md). Nothing ngramtool writes
depends on it: every output is committed, or removed, before a command returns. So
:func:`leave` does only what an exit must, in Python's order: it waits for threads (where a
non-daemon thread still runs, it leaves by ``sys.exit`` instead, which waits as Python does),
runs the ``atexit`` handlers (logging, temporary directories, multiprocessing, Ray), flushes
standard output and error, and ends the process with ``os._exit``.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn, TextIO

FLUSH_FAILED_EXIT = 120  # Python's own status when flushing standard output fails at exit


def leave(code: object) -> NoReturn:
    """End the process with ``code`` as ``sys.exit(code)`` would (None: 0; a string: printed on
    standard error, status 1), skipping the interpreter's teardown."""
    current = threading.current_thread()
    if any(thread is not current and not thread.daemon for thread in threading.enumerate()):
        sys.exit(code)
    status = _status(code)
    atexit._run_exitfuncs()  # CPython's own exit runs them here; os._exit would skip them
    if not _flushed(sys.stdout):
        status = status or FLUSH_FAILED_EXIT
    _flushed(sys.stderr)
    os._exit(status)


def _flushed(stream: TextIO | None) -> bool:
    """Whether ``stream`` flushed (None: a stream closed before Python started, nothing to flush);
    a full disk, a reader that left or a closed file is False."""
    try:
        if stream is not None:
            stream.flush()
    except (OSError, ValueError):
        return False
    return True


def _status(code: object) -> int:
    """The exit status ``sys.exit(code)`` gives (a string is printed on standard error)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
