"""PyTorch datasets of training windows and their rows: an index, a token file, a pipe stream.

``IndexDataset`` reads windows of an index directory or a merged dataset (stored rows, or the rows
a tokens-only index computes); ``TokenFileDataset`` reads windows of any token file that ``hash
--tokens`` reads, or of an index, and computes their rows in the DataLoader worker;
``StreamDataset`` packs the chunks of a pipe stream (``ngramtool hash -o -``) into the same
windows. All yield the items of :mod:`ngramtool.torch.windows`. See docs/training.md.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np
from torch.utils.data import IterableDataset, get_worker_info

from ..formats.artifacts import IndexLike, Kind, detect, open_index
from ..formats.index import negative_ids_of
from ..formats.stream import read_stream
from ..formats.tokenfiles import TokenFile, open_token_file
from ..hashing.rawrows import RawRows
from ..model.mapping import NgramHashMapping
from ..spec.hashspec import HashSpec
from ..tokenizers import load_tokenizer
from ..util.errors import NgramToolError, UsageError
from .windows import Window, WindowDataset, WindowSource, check_seq_len, make_window


class IndexSource:
    """An index or a merged dataset as a :class:`~ngramtool.torch.windows.WindowSource`: stream
    rows are the index's own (stored or computed), sequence rows are computed from its tokens."""

    def __init__(self, path: Path) -> None:
        self.index: IndexLike = open_index(path)
        self.spec = self.index.spec
        self._sequence_rows: RawRows | None = None

    def __len__(self) -> int:
        return len(self.index)

    def tokens(self, lo: int, hi: int) -> np.ndarray:
        return np.asarray(self.index.checked_tokens[lo:hi])

    def rows(self, lo: int, hi: int, padding: str) -> np.ndarray:
        if padding == "stream":
            return np.asarray(self.index.rows[lo:hi])
        if self._sequence_rows is None:
            index = self.index
            lut, negative_ids = np.asarray(index.lut), negative_ids_of(index.manifest)
            self._sequence_rows = RawRows(self.spec, lut, str(index.path), negative_ids)  # type: ignore[arg-type]
        return self._sequence_rows(self.tokens(lo, hi), first_position=lo)


class TokenFileSource:
    """A token file as a :class:`~ngramtool.torch.windows.WindowSource`, its rows computed from
    its ids (stream rows with the N-1 ids before the window, as ``hash --tokens`` makes them)."""

    def __init__(self, path: Path, token_format: str | None, spec: HashSpec, lut: np.ndarray) -> None:
        self.file: TokenFile = open_token_file(path, token_format)
        self.spec = spec
        self.compute = RawRows(spec, lut, str(self.file.path))

    def __len__(self) -> int:
        return self.file.num_tokens

    def tokens(self, lo: int, hi: int) -> np.ndarray:
        return np.asarray(self.file.tokens[lo:hi])

    def rows(self, lo: int, hi: int, padding: str) -> np.ndarray:
        before = self.tokens(max(lo - (self.spec.max_ngram - 1), 0), lo) if padding == "stream" else None
        return self.compute(self.tokens(lo, hi), before, first_position=lo)


class IndexDataset(WindowDataset):
    """Windows of ``seq_len`` positions from an index directory or a merged dataset (map-style,
    DataLoader-worker safe; windows placed as :class:`~ngramtool.torch.windows.WindowDataset` says).

    Args:
        path: the index directory (``ngramtool hash ... -o PATH``) or merged dataset.
        seq_len: S, the positions per window; an item holds S+1 tokens (inputs and targets).
        random: draw random start offsets instead of the fixed non-overlapping grid.
        seed: the generator seed of ``random=True``; None draws one from the OS once, at
            construction, so all workers agree.
        padding: ``stream`` (default): the index's rows, whose windows reach back into the tokens
            before the window (a tokens-only index computes them); ``sequence``: each window
            padded at its start, as the Engram reference hashes its batches (computed from the
            window's tokens).

    Attributes:
        spec: the index's HashSpec; ``num_tokens``: T; ``index``: the open index.
    """

    def __init__(
        self,
        path: str | Path,
        seq_len: int,
        *,
        random: bool = False,
        seed: int | None = None,
        padding: str = "stream",
    ) -> None:
        super().__init__(path, seq_len, random=random, seed=seed, padding=padding)

    def _open(self) -> WindowSource:
        return IndexSource(self.path)

    @property
    def index(self) -> IndexLike:
        """The memory-mapped index, opened on first use in this process."""
        source = self.source
        assert isinstance(source, IndexSource)
        return source.index


class TokenFileDataset(WindowDataset):
    """Windows of ``seq_len`` positions of a token file or an index, their rows computed when an
    item is read (in the DataLoader worker); the same items as :class:`IndexDataset`.

    Reads every token file ``ngramtool hash --tokens`` reads (nanoGPT, llm.c, Megatron,
    datatrove, ``.npy``; :func:`ngramtool.open_token_file`) and index directories or merged
    datasets (tokens-only ones too), whose spec, lookup table and boundary it takes. Nothing but
    the tokens is stored: the rows of a window cost about 0.1 ms per 2,048 tokens to compute.

    Args:
        path: a token file, an index directory or a merged dataset.
        seq_len: S, the positions per window; an item holds S+1 tokens (inputs and targets).
        tokenizer: the tokenizer that made the ids (a name or path, as ``--tokenizer``); for an
            index, None takes the one it records, and a name must be that one.
        spec: the hash spec: a HashSpec, a preset name or a spec file's path; None: the defaults
            for the tokenizer (:func:`ngramtool.resolve_spec`). An index's own spec when None
            (another one is refused).
        padding: ``sequence`` (default): each window padded at its start (the reference's
            training); ``stream``: windows see the tokens before them (an index's boundary
            applies), equal to a stored index's rows.
        random: windows drawn at random (seeded), as :class:`IndexDataset`; else in order.
        seed: the seed of the random windows (default 0).
        token_format: a token file's format when its name does not tell (as ``--token-format``).

    Raises:
        NgramToolError: an id outside the tokenizer's vocabulary (naming the file and position,
            when the window holding it is read), an index written with another tokenizer.
    """

    def __init__(
        self,
        path: str | Path,
        seq_len: int,
        *,
        tokenizer: str | None,
        spec: HashSpec | str | None = None,
        padding: str = "sequence",
        random: bool = False,
        seed: int | None = 0,
        token_format: str | None = None,
    ) -> None:
        self.token_format = token_format
        self.is_index = detect(path) in (Kind.INDEX, Kind.DATASET)
        if self.is_index:
            if token_format is not None:
                raise UsageError("`token_format` applies to token files, not to an index")
            self._check_index(Path(path), tokenizer, spec)
            self.lut = None
        else:
            if tokenizer is None:
                raise UsageError(
                    f"{path} is a token file: give the `tokenizer` that made its ids (its name or file)"
                )
            mapping = NgramHashMapping.build(tokenizer, spec=spec)
            self.file_spec = mapping.spec
            self.lut = mapping.vocab.lut
        super().__init__(path, seq_len, random=random, seed=seed, padding=padding)

    def _open(self) -> WindowSource:
        if self.is_index:
            return IndexSource(self.path)
        assert self.lut is not None
        return TokenFileSource(self.path, self.token_format, self.file_spec, self.lut)

    @staticmethod
    def _check_index(path: Path, tokenizer: str | None, spec: HashSpec | str | None) -> None:
        """An index is read with its own tokenizer and spec: another one given is an error."""
        index = open_index(path)
        recorded = index.manifest["tokenizer"]
        if tokenizer is not None:
            given = load_tokenizer(tokenizer)
            if given.fingerprint != recorded["fingerprint"]:
                theirs, ours = str(recorded["fingerprint"])[:12], given.fingerprint[:12]
                raise NgramToolError(
                    f"{path} was written with tokenizer {recorded['name']} (fingerprint {theirs}...), "
                    f"not {given.name} ({ours}...): its ids are that tokenizer's; pass "
                    "`tokenizer=None` to use the index's own"
                )
        if spec is not None and spec != index.spec:
            raise NgramToolError(
                f"{path} was hashed with its own spec (fingerprint {index.spec.fingerprint[:12]}...), "
                "and its rows are that spec's: pass `spec=None` to use it"
            )


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
        self.seq_len = check_seq_len(seq_len)
        self._consumed = False

    def __repr__(self) -> str:
        source = self.source
        named = repr(str(source)) if isinstance(source, str | Path) else f"<{type(source).__name__}>"
        return f"<StreamDataset {named} seq_len={self.seq_len}>"

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
