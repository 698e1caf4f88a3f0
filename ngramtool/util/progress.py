"""What a long run reports while it runs. The library prints nothing: a caller that shows progress
(the command line's bars and spinners) overrides these methods; by default they do nothing."""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager


class Progress:
    """Progress of a run that reads its input once, in chunks."""

    def step(self, what: str) -> AbstractContextManager[None]:
        """A context around a slow step that has no progress of its own (``what``: e.g.
        ``"preparing the vocabulary"``)."""
        return contextlib.nullcontext()

    def started(self, total_bytes: int | None, jobs: int, engine: str) -> None:
        """Reading starts: ``total_bytes`` of input (None: unknown, stdin), in ``jobs`` outputs or
        streams, on ``engine`` (``local`` or ``ray``)."""

    def advanced(self, nbytes: int, ntokens: int) -> None:
        """A chunk was done: the input bytes and tokens it accounts for."""
