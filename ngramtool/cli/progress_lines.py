"""Progress as plain lines when stderr is not a terminal (Slurm logs, CI, ``2> log``): one line every
``NGRAMTOOL_PROGRESS_SECONDS`` (30 s) with tokens, tokens/s, the share of the input done and the
time left, where a terminal shows a progress bar instead."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from ..util.errors import UsageError
from ..util.wording import plural

INTERVAL_VARIABLE = "NGRAMTOOL_PROGRESS_SECONDS"
DEFAULT_INTERVAL = 30.0


def line_interval() -> float:
    """Seconds between progress lines: ``NGRAMTOOL_PROGRESS_SECONDS``, else 30."""
    value = os.environ.get(INTERVAL_VARIABLE)
    if not value:
        return DEFAULT_INTERVAL
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise UsageError(f"{INTERVAL_VARIABLE} must be a number of seconds >= 0 (got {value!r})")
    return seconds


class ProgressLines:
    """Counts what a run has done and writes a line every ``interval`` seconds to ``write``.

    ``enabled`` False (a terminal, which shows a bar, or ``--quiet``) writes nothing.
    """

    def __init__(
        self,
        what: str,
        enabled: bool,
        write: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what, self.enabled, self.write, self.clock = what, enabled, write, clock
        self.interval = line_interval() if enabled else DEFAULT_INTERVAL
        self.total: int | None = None
        self.nbytes = self.tokens = 0
        self.started_at = self.last = clock()

    def started(self, total_bytes: int | None) -> None:
        """Reading starts: ``total_bytes`` of input (None: unknown, stdin)."""
        self.total = total_bytes
        self.started_at = self.last = self.clock()

    def advanced(self, nbytes: int, ntokens: int) -> None:
        """A chunk was done; write a line when the interval has passed since the last one."""
        self.nbytes += nbytes
        self.tokens += ntokens
        now = self.clock()
        if self.enabled and now - self.last >= self.interval:
            self.last = now
            self.write(self.line(now))

    def line(self, now: float) -> str:
        """``hashing: 12,345,678 tokens, 1.23M tokens/s, 45.6% done, ETA 2m05s (1m40s elapsed)``."""
        elapsed = max(now - self.started_at, 1e-9)
        parts = [
            f"{self.what}: {plural(self.tokens, 'token')}",
            f"{rate_text(self.tokens / elapsed)} tokens/s",
        ]
        if self.total:
            done = min(self.nbytes / self.total, 1.0)
            parts.append(f"{done:.1%} done")
            if done > 0:
                parts.append(f"ETA {_duration(elapsed * (1 - done) / done)}")
        return ", ".join(parts) + f" ({_duration(elapsed)} elapsed)"


def rate_text(per_second: float) -> str:
    """``1.23M`` or ``456.7K``: a rate as the progress shows it."""
    if per_second >= 1e6:
        return f"{per_second / 1e6:.2f}M"
    return f"{per_second / 1e3:.1f}K"


def _duration(seconds: float) -> str:
    """``45s``, ``2m05s``, ``1h02m``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
