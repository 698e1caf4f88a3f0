"""Ending the ``ngramtool`` process once a command has returned, without tearing Python down.

At exit, Python frees every module and object it holds, one by one: 0.04-0.06 s after a tiny
``hash`` and 0.1-0.3 s after 60 MB of text (docs/performance.md). Nothing ngramtool writes
depends on it: every output is committed, or removed, before a command returns. So
:func:`leave` does only what an exit must, in Python's order: it runs the ``atexit`` handlers
(logging, temporary directories, multiprocessing, Ray), flushes standard output and error, and
ends the process with ``os._exit``, with the status Python's exit would give. A stop signal
that arrives meanwhile changes nothing: the command has ended (a second one still ends the
process at once, :mod:`ngramtool.util.signals`).

It leaves by ``sys.exit`` instead, Python's whole exit, where that is what something else
relies on: a non-daemon thread still runs (Python waits for it), or a profiler or tracer
(``python -m cProfile -m ngramtool``, ``coverage run``, ``pdb``) writes its results at exit.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn, TextIO

from ..util import signals

FLUSH_FAILED_EXIT = 120  # Python's own status when flushing standard output or error fails at exit
_C_LONG = 1 << 63


def leave(code: object) -> NoReturn:
    """End the process with ``code`` as ``sys.exit(code)`` would (None: 0; a string: printed on
    standard error, status 1), skipping the interpreter's teardown."""
    current = threading.current_thread()
    others = any(thread is not current and not thread.daemon for thread in threading.enumerate())
    if others or sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)
    status = _status(code)
    with signals.shielded():  # a first signal is held until the block ends, which it never does
        if isinstance(code, str) and sys.stderr is not None:
            print(code, file=sys.stderr)
        atexit._run_exitfuncs()  # CPython's own exit runs them here; os._exit would skip them
        if not (_flushed(sys.stdout) & _flushed(sys.stderr)):
            status = FLUSH_FAILED_EXIT
        os._exit(status)


def _flushed(stream: TextIO | None) -> bool:
    """Whether ``stream`` flushed, as Python's exit flushes it: one that is None or closed has
    nothing to flush; a full disk or a reader that left is False."""
    if stream is None or stream.closed:
        return True
    try:
        stream.flush()
    except OSError:
        return False
    return True


def _status(code: object) -> int:
    """The exit status ``sys.exit(code)`` gives: None 0, an integer modulo 256 (255 beyond a C
    long), anything else 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if -_C_LONG <= code < _C_LONG else 0xFF
    return 1
