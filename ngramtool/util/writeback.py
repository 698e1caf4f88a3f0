"""Write-behind: run output calls on one background thread so hashing overlaps writing.

File writes and checksum updates (xxh3-128 or sha256) release the GIL, so the writer thread runs
while the main thread hashes the next chunk and tokenizer threads encode the next text. The queue
is bounded, which bounds memory, and calls run in submission order. An error in the thread is
raised in the caller at its next submit or at :meth:`WriteBehind.drain`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

DEPTH = 4


class WriteBehind:
    """A single background thread that runs submitted calls in order."""

    def __init__(self, depth: int = DEPTH, name: str = "ngramtool-write") -> None:
        self._queue: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = queue.Queue(depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is None:
                fn, args = item
                try:
                    fn(*args)
                except BaseException as exc:  # handed to the caller, never lost
                    self._error = exc

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Queue ``fn(*args)`` (blocks while the queue is full); raises an earlier call's error."""
        self._raise()
        self._queue.put((fn, args))

    def drain(self) -> None:
        """Wait until every submitted call ran; raise the first error, if any."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def stop(self) -> None:
        """Let the queued calls finish and end the thread, dropping any error among them (for
        callers that are failing already and keep their own error)."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._error = None

    def __enter__(self) -> WriteBehind:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.drain()
        else:  # already failing: keep the original error
            self.stop()
