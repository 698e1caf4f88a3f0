"""Training windows: the item every dataset yields, and where map-style datasets place them.

An item is ``{"tokens": LongTensor [S+1], "rows": [S, L, C], "start": int}``: ``rows[t]`` belongs
to the n-gram ending at ``tokens[t]``, whose target is ``tokens[t+1]``; ``rows`` keeps the row
dtype (int32, or int64 for tables of 2^31 rows or more). :class:`WindowDataset` places item ``i``
on a fixed grid or at a seeded random offset, and opens what it reads in each process.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from torch.utils.data import Dataset

from ..spec.hashspec import HashSpec
from ..util.errors import NgramToolError, UsageError

Window = dict[str, "torch.Tensor | int"]
PADDINGS = ("sequence", "stream")


def make_window(tokens: np.ndarray, rows: np.ndarray, start: int) -> Window:
    """The item dict of a window: ``tokens`` [S+1] as int64, ``rows`` [S, L, C] (copied unless
    they are a writable array of their own, as computed rows are), ``start``."""
    return {
        "tokens": torch.from_numpy(np.array(tokens, dtype=np.int64)),
        "rows": torch.from_numpy(np.require(rows, requirements="CWO")),
        "start": int(start),
    }


def whole(value: object, name: str, least: int) -> int:
    """``value`` as an int of at least ``least`` (ints, numpy and 0-d torch integers); else a UsageError."""
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise UsageError(f"{name} must be an integer (got {value!r})") from None
    if number < least:
        raise UsageError(f"{name} must be at least {least} (got {number})")
    return number


def check_seq_len(seq_len: object) -> int:
    """``seq_len`` as a positive int."""
    return whole(seq_len, "seq_len", 1)


def check_padding(padding: str) -> str:
    """``padding`` when it is one of :data:`PADDINGS`."""
    if padding not in PADDINGS:
        raise UsageError(f"`padding` must be 'sequence' or 'stream' (got {padding!r})")
    return padding


class WindowSource(Protocol):
    """The tokens of a corpus and the rows of any span of them, opened in the process that reads."""

    spec: HashSpec

    def __len__(self) -> int: ...

    def tokens(self, lo: int, hi: int) -> np.ndarray:
        """Raw ids of positions [lo, hi)."""
        ...

    def rows(self, lo: int, hi: int, padding: str) -> np.ndarray:
        """Rows [hi - lo, L, C] of positions [lo, hi), the window padded as ``padding`` says."""
        ...


class WindowDataset(Dataset):
    """Windows of ``seq_len`` positions over a :class:`WindowSource` (map-style, DataLoader-worker safe).

    ``len(dataset)`` is the number of non-overlapping windows, ``(T - 1) // seq_len``. Item ``i``
    is the window starting at ``i * seq_len``; with ``random=True`` it starts instead at an offset
    drawn uniformly from ``[0, T - seq_len - 1]`` by a generator keyed on ``(seed, epoch, i)``, so
    an item does not depend on which worker loads it or in which order. Call :meth:`set_epoch`
    before each epoch to draw new offsets (DataLoader workers copy the dataset when they start, so
    with ``persistent_workers=True`` they keep the epoch they started with).

    The source (memory maps) is opened lazily in each process and never pickled: workers started
    by ``spawn`` or ``forkserver`` open it again. Subclasses say what to open (:meth:`_open`).

    Attributes:
        spec: the HashSpec of the rows; ``num_tokens``: T; ``padding``: ``sequence`` or ``stream``.
    """

    def __init__(
        self, path: str | Path, seq_len: int, *, random: bool, seed: int | None, padding: str
    ) -> None:
        self.path = Path(path)
        self.seq_len = check_seq_len(seq_len)
        self.random = random
        self.seed = int(np.random.SeedSequence(None if seed is None else whole(seed, "seed", 0)).entropy)
        self.epoch = 0
        self.padding = check_padding(padding)
        self._source: WindowSource | None = self._open()
        self.num_tokens = len(self._source)
        self.spec = self._source.spec
        if self.num_tokens <= self.seq_len:
            raise NgramToolError(
                f"{self.path} holds {self.num_tokens} tokens: too few for one window of "
                f"seq_len={self.seq_len} (it needs seq_len + 1)"
            )

    def __repr__(self) -> str:
        drawn = f"random=True seed={self.seed}" if self.random else "random=False"
        windows = f"seq_len={self.seq_len} windows={len(self)} padding={self.padding!r} {drawn}"
        source = f"{str(self.path)!r} tokens={self.num_tokens}"
        return f"<{type(self).__name__} {source} {windows} spec={self.spec.fingerprint[:16]}>"

    def _open(self) -> WindowSource:
        """Open the source (in the process that reads it)."""
        raise NotImplementedError

    @property
    def source(self) -> WindowSource:
        """The tokens and rows, opened on first use in this process."""
        if self._source is None:
            self._source = self._open()
        return self._source

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_source"] = None  # memory maps are opened again by the receiving process
        return state

    def __len__(self) -> int:
        return (self.num_tokens - 1) // self.seq_len

    def set_epoch(self, epoch: int) -> None:
        """Select the epoch whose random offsets ``random=True`` draws (no effect otherwise)."""
        self.epoch = int(epoch)

    def start_of(self, i: int) -> int:
        """The first position of item ``i``."""
        i = operator.index(i)  # ints, numpy integers and 0-d integer tensors
        if not 0 <= i < len(self):
            raise IndexError(f"window {i} is outside the {len(self)} windows")
        if not self.random:
            return i * self.seq_len
        rng = np.random.default_rng([self.seed, self.epoch, i])
        return int(rng.integers(0, self.num_tokens - self.seq_len))

    def window(self, start: int) -> Window:
        """The window of positions ``[start, start + seq_len)`` (tokens up to ``start + seq_len``)."""
        start = operator.index(start)
        end = start + self.seq_len
        if start < 0 or end + 1 > self.num_tokens:
            raise NgramToolError(f"window [{start}, {end + 1}) is outside the {self.num_tokens} tokens")
        source = self.source
        return make_window(source.tokens(start, end + 1), source.rows(start, end, self.padding), start)

    def __getitem__(self, i: int) -> Window:
        return self.window(self.start_of(i))
