"""Signals that stop a run: SIGINT, SIGTERM and SIGHUP become an exception, so that the outputs being
written are removed on the way out; a second signal ends the process at once.

The command line calls :func:`install` first thing. A signal then raises :class:`Interrupted` in the
main thread wherever it is, every ``with`` block that holds an output removes it (``formats/atomic``),
and the command exits with ``128 + signal`` (130, 143, 129). Steps that must not stop halfway
(publishing an output by renames, removing one) run :func:`shielded`: a signal that arrives
meanwhile is raised when the step ends. A second signal does not wait for anything: the process
exits at once with the same status, and the next run to the same output reclaims what it left.

A program that calls the library may call :func:`install` too (from its main thread).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(BaseException):
    """A stop signal arrived: the run stops and removes what it had begun. Like SystemExit, it is
    no Exception (``except Exception`` lets it through) and no KeyboardInterrupt (which click
    turns into its own exit status).

    Attributes:
        signum: the signal.
        exit_code: the status to exit with, ``128 + signum`` (SIGINT 130, SIGTERM 143, SIGHUP 129).
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


@dataclass
class _State:
    received: int | None = None  # the first signal, once one came
    shields: int = 0  # how many shielded() blocks are open
    pending: int | None = None  # a signal that came inside one, raised when the last one ends


_STATE = _State()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    """The handler: the first signal raises Interrupted (or waits for a shielded step to end);
    a second one exits at once."""
    if _STATE.received is not None:
        os._exit(128 + signum)
    _STATE.received = signum
    if _STATE.shields:
        _STATE.pending = signum
        return
    raise Interrupted(signum)


def install() -> None:
    """Handle SIGINT, SIGTERM and SIGHUP as described above; a signal that this process started
    with ignored (``nohup``, a background job's SIGINT) stays ignored. Call it from the main
    thread."""
    for signum in SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _on_signal)


@contextmanager
def shielded() -> Iterator[None]:
    """Run a step that must not stop halfway: a first signal that arrives meanwhile is raised as
    :class:`Interrupted` when the step ends (a second one still exits at once)."""
    _STATE.shields += 1
    try:
        yield
    finally:
        _STATE.shields -= 1
        if not _STATE.shields and _STATE.pending is not None:
            signum, _STATE.pending = _STATE.pending, None
            raise Interrupted(signum)
