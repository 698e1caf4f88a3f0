"""PyTorch datasets over an index directory or a pipe stream (extra ``torch``).

``IndexDataset`` reads windows from an index directory's memory maps; ``StreamDataset`` packs the
chunks of a pipe stream (``ngramtool hash -o -``) into the same windows. Both yield dicts::

    {"tokens": LongTensor [S+1], "rows": IntTensor or LongTensor [S, L, C], "start": int}

``rows[t]`` belongs to the n-gram ending at ``tokens[t]``; the target of position ``t`` is
``tokens[t+1]``. ``rows`` keeps the index's row dtype (int32, or int64 for tables of 2^31 rows
or more). See docs/training.md.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .artifacts import IndexLike, open_index
from .errors import MissingDependencyError, NgramToolError, UsageError
from .formats.stream import read_stream

try:
    import torch
    from torch.utils.data import Dataset, IterableDataset, get_worker_info
except ImportError as exc:
    raise MissingDependencyError(
        f"ngramtool.torch needs PyTorch ({exc}); install it with: pip install 'ngramtool[torch]'"
    ) from None

Window = dict[str, "torch.Tensor | int"]


def make_window(tokens: np.ndarray, rows: np.ndarray, start: int) -> Window:
    """The item dict of a window: ``tokens`` [S+1] as int64, ``rows`` [S, L, C] copied, ``start``."""
    return {
        "tokens": torch.from_numpy(np.array(tokens, dtype=np.int64)),
        "rows": torch.from_numpy(np.array(rows)),
        "start": int(start),
    }


def _whole(value: object, name: str, least: int) -> int:
    """``value`` as an int of at least ``least`` (ints, numpy and 0-d torch integers); else a UsageError."""
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise UsageError(f"{name} must be an integer (got {value!r})") from None
    if number < least:
        raise UsageError(f"{name} must be at least {least} (got {number})")
    return number


def _check_seq_len(seq_len: int) -> int:
    return _whole(seq_len, "seq_len", 1)


class IndexDataset(Dataset):
    """Windows of ``seq_len`` positions from an index directory (map-style, DataLoader-worker safe).

    ``len(dataset)`` is the number of non-overlapping windows, ``(T - 1) // seq_len``. Item ``i``
    is the window starting at ``i * seq_len``; with ``random=True`` it starts instead at an offset
    drawn uniformly from ``[0, T - seq_len - 1]`` by a generator keyed on ``(seed, epoch, i)``, so
    an item does not depend on which worker loads it or in which order. Call :meth:`set_epoch`
    before each epoch to draw new offsets (DataLoader workers copy the dataset when they start, so
    with ``persistent_workers=True`` they keep the epoch they started with).

    The memory maps are opened lazily in each process and never pickled: workers started by
    ``spawn`` or ``forkserver`` reopen the index.

    Args:
        path: the index directory (``ngramtool hash ... -o PATH``).
        seq_len: S, the positions per window; an item holds S+1 tokens (inputs and targets).
        random: draw random start offsets instead of the fixed non-overlapping grid.
        seed: the generator seed of ``random=True``; None draws one from the OS once, at
            construction, so all workers agree.

    Attributes:
        spec: the index's HashSpec; ``num_tokens``: T; ``index``: the open :class:`Index`.
    """

    def __init__(
        self, path: str | Path, seq_len: int, *, random: bool = False, seed: int | None = None
    ) -> None:
        self.path = Path(path)
        self.seq_len = _check_seq_len(seq_len)
        self.random = random
        self.seed = int(np.random.SeedSequence(None if seed is None else _whole(seed, "seed", 0)).entropy)
        self.epoch = 0
        self._index: IndexLike | None = open_index(self.path)
        self.num_tokens = len(self._index)
        self.spec = self._index.spec
        if self.num_tokens <= self.seq_len:
            raise NgramToolError(
                f"{self.path} holds {self.num_tokens} tokens: too few for one window of "
                f"seq_len={self.seq_len} (it needs seq_len + 1)"
            )

    @property
    def index(self) -> IndexLike:
        """The memory-mapped index, opened on first use in this process."""
        if self._index is None:
            self._index = open_index(self.path)
        return self._index

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state["_index"] = None  # memory maps are reopened by the receiving process
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
        tokens, rows = self.index.window(start, self.seq_len + 1)
        return make_window(tokens, rows[:-1], start)

    def __getitem__(self, i: int) -> Window:
        return self.window(self.start_of(i))


class StreamDataset(IterableDataset):
    """Windows of ``seq_len`` positions packed from a pipe stream, in stream order.

    Yields the same items as ``IndexDataset(index, seq_len)`` over the index the stream carries,
    in order: consecutive chunks are concatenated (the remainder of one chunk is carried into the
    next), and the last ``< seq_len + 1`` tokens are dropped. A truncated or corrupted stream
    raises :class:`NgramToolError` when the reader reaches the damage (earlier windows have been
    yielded by then).

    A stream is read sequentially, so it cannot be split: with DataLoader workers, only worker 0
    reads it and the others yield nothing (the items equal those of ``num_workers=0``). Worker 0
    opens a path itself; ``-`` (stdin) is readable only in the main process, since worker
    processes have no stdin, and a file object can be read only once.

    Args:
        source: a stream file's path, ``-`` for stdin, or a binary file object.
        seq_len: S, the positions per window.
    """

    def __init__(self, source: str | Path | BinaryIO, seq_len: int) -> None:
        self.source = source
        self.seq_len = _check_seq_len(seq_len)
        self._consumed = False

    def __iter__(self) -> Iterator[Window]:
        worker = get_worker_info()
        if worker is not None and worker.id > 0:
            return
        if isinstance(self.source, str | Path) and str(self.source) != "-":
            try:
                with Path(self.source).open("rb") as src:
                    yield from self._windows(src)
            except OSError as exc:
                raise NgramToolError(f"cannot read the stream {self.source}: {exc.strerror}") from None
            return
        if worker is not None and self.source == "-":
            raise NgramToolError(
                "StreamDataset reads stdin ('-') only with num_workers=0; pass a path instead"
            )
        if self._consumed:
            raise NgramToolError("this StreamDataset's stream was read already; a path can be read again")
        self._consumed = True
        yield from self._windows(sys.stdin.buffer if self.source == "-" else self.source)

    def _windows(self, src: BinaryIO) -> Iterator[Window]:
        size = self.seq_len
        reader = read_stream(src)
        spec = reader.spec
        tokens = np.zeros(0, dtype=np.uint32)
        rows = np.zeros((0, spec.num_layers, spec.num_columns), dtype=spec.row_dtype)
        start = 0  # the stream position of tokens[0]
        for chunk in reader:
            tokens = np.concatenate([tokens, chunk.tokens])
            rows = np.concatenate([rows, chunk.rows])
            count = max(tokens.shape[0] - 1, 0) // size  # complete windows in hand
            for lo in range(0, count * size, size):
                yield make_window(tokens[lo : lo + size + 1], rows[lo : lo + size], start + lo)
            tokens, rows = tokens[count * size :], rows[count * size :]
            start += count * size
