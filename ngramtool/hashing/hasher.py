"""Bit-exact Engram n-gram hashing: the streaming hasher over every backend.

Output layout is token-major: ``rows[t, layer, (n-2)*K + head]``; a window of tokens is one
contiguous slice. See docs/hash-spec.md for the algorithm and docs/engram-spec.md §4.

:class:`NgramHasher` validates ids, carries the N-1 context ids between chunks and converts
inputs and outputs (numpy arrays or torch tensors); a backend (:mod:`ngramtool.hashing.backends`)
computes each chunk's rows: the numpy backend (:mod:`ngramtool.hashing.backends.numpy_backend`, which also
holds the definition on explicit windows, ``rows_from_windows``), numba, torch or Triton.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..spec.hashspec import Boundary, HashSpec, check_boundary_policy
from ..util.errors import NgramToolError, UsageError
from .backends import (
    BACKENDS,
    NegativeIds,
    RowsKernel,
    check_backend,
    check_negative_ids,
    choose_backend,
)
from .backends.arrays import as_array, device_of, is_integer, is_tensor, like, to_numpy, to_tensor


class Kernels:
    """The backend kernels of one spec and option set, each made on first use for the device its
    input lives on (constants are moved to a device once).

    Pickles without its kernels: a copy (a DataLoader worker) makes its own on first use.

    Args:
        spec, offsets, negative_ids, backend, device: as for :class:`NgramHasher`.
    """

    def __init__(
        self,
        spec: HashSpec,
        *,
        offsets: bool = True,
        negative_ids: NegativeIds = "mask",
        backend: str = "auto",
        device: str | None = None,
    ) -> None:
        check_negative_ids(negative_ids)
        check_backend(backend, device)  # an unknown or unusable backend fails here, not mid-stream
        self.spec = spec
        self.offsets = offsets
        self.negative_ids = negative_ids
        self.backend = backend
        self.device = device
        self._made: dict[str, RowsKernel] = {}

    def __call__(self, input_device: str) -> RowsKernel:
        """The kernel for inputs that live on ``input_device``."""
        kernel = self._made.get(input_device)
        if kernel is None:
            choice = choose_backend(self.backend, self.device, input_device=input_device)
            kernel = self._made[input_device] = BACKENDS[choice.name].kernel(
                self.spec, offsets=self.offsets, negative_ids=self.negative_ids, device=choice.device
            )
        return kernel

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_made": {}}

    def describe(self) -> str:
        """``spec=<fingerprint> backend='auto'`` and the options not at their defaults, for a repr."""
        words = [f"spec={self.spec.fingerprint[:16]}", f"backend={self.backend!r}"]
        if self.device is not None:
            words.append(f"device={self.device!r}")
        if self.negative_ids != "mask":
            words.append(f"negative_ids={self.negative_ids!r}")
        if not self.offsets:
            words.append("offsets=False")
        return " ".join(words)


class NgramHasher:
    """Streaming hasher: feed chunks of canonical ids, get their rows; any chunking gives the same rows.

    The last N-1 ids of each chunk are carried into the next one. Chunks may be numpy arrays or
    torch tensors on any device; each chunk's rows come back as the same kind (on its device).

    Args:
        spec: the hash configuration.
        boundary: ``"none"`` pads only at the start of the stream (the Engram reference);
            ``"reset"`` pads the window at every document start given to :meth:`__call__`.
        offsets: add per-layer column offsets (table rows, the default) or return hash ids.
        negative_ids: ``"mask"`` (default, TileKernels' convention): a negative id is a masked
            token whose rows are all -1 and which other windows see as the pad id; ``"barrier"``
            (DeepSeek-V4.1's reference): a negative id is a DEAD token, and a window's lookbacks
            from the first DEAD one back are the pad (a DEAD position hashes as all-pad and gets
            ordinary rows); ``"hash"``: hash negative ids with floor modulo, as the Engram demo does.
        backend: ``"auto"`` (default), ``"numba"``, ``"numpy"``, ``"torch"`` or ``"triton"``; see
            :mod:`ngramtool.hashing.backends`. Every backend gives identical rows.
        device: where to compute (``"cpu"``, ``"cuda"``, ``"cuda:N"``); None: where each chunk
            lives, when the backend can compute there.

    Examples:
        >>> import numpy as np
        >>> from ngramtool import HashSpec, NgramHasher, hash_ngrams
        >>> spec = HashSpec(heads=2, table_sizes=(1009, 1009), vocab_size=1000, pad_id=0)
        >>> ids = np.arange(10) * 97 % 1000
        >>> hasher = NgramHasher(spec)
        >>> rows = np.concatenate([hasher(ids[:3]), hasher(ids[3:])])  # any chunking, the same rows
        >>> np.array_equal(rows, hash_ngrams(ids, spec)), rows.shape
        (True, (10, 2, 4))
    """

    def __init__(
        self,
        spec: HashSpec,
        *,
        boundary: Boundary = "none",
        offsets: bool = True,
        negative_ids: NegativeIds = "mask",
        backend: str = "auto",
        device: str | None = None,
    ) -> None:
        check_boundary_policy(boundary)
        self._kernels = Kernels(
            spec, offsets=offsets, negative_ids=negative_ids, backend=backend, device=device
        )
        self.spec = spec
        self.boundary = boundary
        self.offsets = offsets
        self.negative_ids = negative_ids
        self.backend = backend
        self.device = device
        self._context = np.full(spec.max_ngram - 1, spec.pad_id, dtype=np.int64)
        self._position = 0
        self._start_next = False  # a document starts at the next chunk's first token (reset)

    def __repr__(self) -> str:
        where = f"boundary={self.boundary!r} position={self._position}"
        return f"<NgramHasher {self._kernels.describe()} {where}>"

    def __call__(self, ids: Any, doc_starts: Any = None) -> Any:
        """Rows [T, L, C] for the next ``T`` canonical ids of the stream.

        ``doc_starts`` are positions within this chunk (0 <= s <= T, non-decreasing; repeats and T
        stand for empty documents) where a document starts; they matter only with
        ``boundary="reset"``. If hashing fails, the stream stays where it was, so the chunk can be
        given again.
        """
        state = self._context, self._position, self._start_next
        try:
            return self.deferred(ids, doc_starts)()
        except BaseException:
            self._context, self._position, self._start_next = state
            raise

    def deferred(self, ids: Any, doc_starts: Any = None, out: np.ndarray | None = None) -> Callable[[], Any]:
        """Take the next chunk now; return a function that computes its rows (as :meth:`__call__`).

        The ids are checked and the stream advances at once, and the returned function carries
        this chunk's own context, so functions of consecutive chunks may run later, in any order
        and on several threads at once. ``ids`` must stay unchanged until its function has run.
        ``out`` (a numpy array [T, L, C] of the spec's row dtype) receives the rows, and the
        function returns it: the numba and numpy kernels compute into it, others are copied.
        """
        ids = _as_id_vector(ids)
        t_total = ids.shape[0]
        starts = _check_doc_starts(doc_starts, t_total)
        _check_range(ids, self.spec, self._position)
        resets = np.zeros(0, dtype=np.int64)
        start_next = False
        if self.boundary == "reset":
            resets = np.unique(starts[starts < t_total])
            if self._start_next and t_total:  # the previous chunk ended where a document starts
                resets = np.union1d(0, resets)
            start_next = start_carried(starts, t_total, self._start_next)
        if self.spec.reserved_first:  # each sequence's first token: the stream's and each document's
            ids = as_hashed(self.spec, ids, resets if self._position else np.union1d(0, resets))
        kernel = self._kernels(device_of(ids))
        chunk = to_tensor(ids, kernel.device) if kernel.tensors else to_numpy(ids)
        spec = self.spec
        if out is not None and (
            out.shape != (t_total, spec.num_layers, spec.num_columns) or out.dtype != spec.row_dtype
        ):
            raise ValueError(
                f"`out` must be {spec.row_dtype} [{t_total}, {spec.num_layers}, {spec.num_columns}]"
            )
        context = self._context
        self._context = self._next_context(ids, starts)
        self._position += t_total
        self._start_next = start_next
        if out is None:
            return lambda: like(kernel.rows(chunk, context, resets), ids)
        if getattr(kernel, "fills", False):
            return lambda: kernel.rows(chunk, context, resets, out=out)
        return lambda: _fill(out, to_numpy(kernel.rows(chunk, context, resets)))

    def _next_context(self, ids: Any, starts: np.ndarray) -> np.ndarray:
        """The N-1 ids the next chunk sees before it, with pads for ids before its document."""
        n, t_total = self.spec.max_ngram, ids.shape[0]
        tail = to_numpy(ids[max(t_total - (n - 1), 0) :]).astype(np.int64)
        context = np.concatenate([self._context, tail])[-(n - 1) :]
        if self.boundary == "reset" and starts.size:
            # The carried context must not reach back before the last document start.
            context[: max(int(starts[-1]) + n - 1 - t_total, 0)] = self.spec.pad_id
        return context


def _fill(out: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``rows`` copied into ``out``; returns ``out``."""
    np.copyto(out, rows)
    return out


class SequenceHasher:
    """Rows of independent sequences of canonical ids, each padded at its start (the Engram
    reference's batches) or continuing the ids given before it.

    It keeps no state between calls, so sequences may come in any order: windows of a corpus read
    at random, batches in a model's ``forward``. Arrays give arrays; tensors give tensors on their
    device (the backend is chosen per device, as for :class:`NgramHasher`).

    Args:
        spec: the hash configuration.
        offsets: add per-layer column offsets (table rows, the default) or return hash ids.
        negative_ids: ``"mask"``, ``"barrier"`` or ``"hash"``, as for :class:`NgramHasher`.
        backend: ``"auto"`` (default) or a backend's name, as for :class:`NgramHasher`.
        device: where to compute; None: where each sequence lives, as for :class:`NgramHasher`.
        check_ids: check that every id is below V' (an error names the first that is not);
            False skips the check (and, on a GPU, the wait for its answer) for ids known to be
            canonical, e.g. mapped through the compressed vocabulary's lookup table.

    Examples:
        >>> import numpy as np
        >>> from ngramtool import HashSpec, hash_ngrams
        >>> from ngramtool.hashing.hasher import SequenceHasher
        >>> spec = HashSpec(heads=2, table_sizes=(1009, 1009), vocab_size=1000, pad_id=0)
        >>> batch = np.arange(12).reshape(2, 6) * 97 % 1000
        >>> hasher = SequenceHasher(spec)
        >>> np.array_equal(hasher(batch), hash_ngrams(batch, spec))  # each row padded at its start
        True
        >>> stream = hash_ngrams(batch.reshape(-1), spec)  # one stream: row 1 continues row 0
        >>> np.array_equal(hasher(batch[1], before=batch[0]), stream[6:])
        True
    """

    def __init__(
        self,
        spec: HashSpec,
        *,
        offsets: bool = True,
        negative_ids: NegativeIds = "mask",
        backend: str = "auto",
        device: str | None = None,
        check_ids: bool = True,
    ) -> None:
        self.spec = spec
        self.check_ids = check_ids
        self._kernels = Kernels(
            spec, offsets=offsets, negative_ids=negative_ids, backend=backend, device=device
        )

    def __repr__(self) -> str:
        return f"<SequenceHasher {self._kernels.describe()}{'' if self.check_ids else ' check_ids=False'}>"

    def __call__(self, ids: Any, before: Any = None, doc_starts: Any = None) -> Any:
        """Rows ``[T, L, C]`` of a sequence ``[T]``, or ``[B, T, L, C]`` of a batch ``[B, T]``.

        Args:
            ids: canonical ids, [T] or [B, T]; negative ids are masked (see ``negative_ids``).
            before: the ids that precede the sequence ([k], or [B, k] for a batch; the last N-1
                are used): windows reach back into them instead of the pad. Fewer than N-1 ids,
                or negative ones, leave the pad in their place. None: pad only.
            doc_starts: for a sequence [T], positions where a document starts: windows after
                one see the pad before it, as with ``boundary="reset"``.
        """
        array = as_array(ids)
        if array.ndim == 2:
            if doc_starts is not None:
                raise UsageError("doc_starts applies to a 1-D sequence, not a [B, T] batch")
            return self._batch(array, before)
        array = _as_id_vector(array)
        starts = _check_doc_starts(doc_starts, array.shape[0])
        context = np.full(self.spec.max_ngram - 1, self.spec.pad_id, dtype=np.int64)
        given = np.zeros(0, dtype=np.int64)
        if before is not None:
            given = to_numpy(self._checked(_as_id_vector(as_array(before)), "before"))
            given = given[max(given.shape[0] - context.shape[0], 0) :]
            context[context.shape[0] - given.shape[0] :] = given
        resets = np.unique(starts[starts < array.shape[0]]) if starts.size else starts
        array = self._checked(array)
        if self.spec.reserved_first:  # a sequence that starts here, or inside `before`
            firsts = np.union1d(0, resets) if given.shape[0] == 0 else resets
            if 0 < given.shape[0] < context.shape[0]:
                context[context.shape[0] - given.shape[0]] = self.spec.pad_id
            array = as_hashed(self.spec, array, firsts)
        return self._rows(array, context, resets)

    def _rows(self, ids: Any, context: np.ndarray, resets: np.ndarray) -> Any:
        """The backend's rows of one checked sequence, as the kind of ``ids``."""
        kernel = self._kernels(device_of(ids))
        chunk = to_tensor(ids, kernel.device) if kernel.tensors else to_numpy(ids)
        return like(kernel.rows(chunk, context, resets), ids)

    def _checked(self, ids: Any, what: str = "") -> Any:
        """``ids`` after the range check (when ``check_ids``); ``before`` may hold the speedrun
        family's start marker, as the hash reads a sequence's first token (:func:`as_hashed`)."""
        if self.check_ids:
            _check_range(ids, self.spec, what=what, bound=self.spec.id_bound if what else None)
        return ids

    def _batch(self, ids: Any, before: Any) -> Any:
        """Each row its own stream: one stream with a document start at every row's start."""
        spec = self.spec
        if ids.shape[1] and not is_integer(ids):
            raise UsageError(f"token ids must be integers, got dtype {ids.dtype}")
        batch, length = ids.shape
        ids = self._checked(ids)
        first = 0  # each row's first token: its own, or inside `before` when that is short
        if before is not None:
            given = as_array(before).shape[1] if as_array(before).ndim == 2 else 0
            ids = self._prepend(ids, as_array(before))
            first = spec.max_ngram - 1 - given if given < spec.max_ngram - 1 else -1
        width = ids.shape[1]
        if spec.reserved_first and 0 <= first < width:
            ids = as_hashed(spec, ids, np.array([first]), axis=1)
        starts = np.arange(batch, dtype=np.int64) * width if width else np.zeros(0, dtype=np.int64)
        context = np.full(spec.max_ngram - 1, spec.pad_id, dtype=np.int64)
        rows = self._rows(ids.reshape(-1), context, starts)
        rows = rows.reshape(batch, width, spec.num_layers, spec.num_columns)
        if width == length:
            return rows
        rows = rows[:, width - length :]  # the rows of `before` go
        return rows.contiguous() if is_tensor(rows) else np.ascontiguousarray(rows)

    def _prepend(self, ids: Any, before: Any) -> Any:
        """``[B, N-1 + T]``: each row's last N-1 ids of ``before`` (the pad where fewer), then its ids."""
        n1 = self.spec.max_ngram - 1
        if (
            before.ndim != 2
            or before.shape[0] != ids.shape[0]
            or (before.shape[1] and not is_integer(before))
        ):
            raise UsageError(
                f"`before` of a batch [B, T] must be integer ids [B, k], got {before.dtype} "
                f"{tuple(before.shape)} for ids {tuple(ids.shape)}"
            )
        given = self._checked(before[:, max(before.shape[1] - n1, 0) :], "before")
        lead = np.full((ids.shape[0], n1 - given.shape[1]), self.spec.pad_id, dtype=np.int64)
        if is_tensor(ids):
            torch = sys.modules["torch"]
            device = str(ids.device)
            parts = [to_tensor(lead, device), to_tensor(given, device), ids]
            return torch.cat([part.to(torch.int64) for part in parts], dim=1)
        return np.concatenate([lead, to_numpy(given).astype(np.int64), ids.astype(np.int64)], axis=1)


def start_carried(starts: np.ndarray, length: int, carried: bool) -> bool:
    """Whether the next chunk of a stream opens a document: a start of this chunk of ``length``
    ids lies at its very end, or one ``carried`` into it passes on through it, empty."""
    return bool(starts.size and starts[-1] == length) or (carried and not length)


def as_hashed(spec: HashSpec, ids: Any, firsts: np.ndarray, *, axis: int = 0) -> Any:
    """``ids`` as the hash reads them: for a spec whose sequences' first tokens read as the pad
    (:attr:`HashSpec.reserved_first`, the speedrun family's reserved id), a copy (int64) with the
    pad at ``firsts`` (positions along ``axis``: 0 for a sequence [T], 1 for each row of a batch
    [B, T]); else ``ids`` as they are.

    Examples:
        >>> import numpy as np
        >>> from ngramtool import HashSpec
        >>> spec = HashSpec(family="speedrun", max_ngram=2, heads=1, table_sizes=(500,), vocab_size=100)
        >>> as_hashed(spec, np.array([7, 8, 9]), np.array([0])).tolist()
        [100, 8, 9]
    """
    firsts = np.asarray(firsts, dtype=np.int64)
    if not spec.reserved_first or not firsts.size or not ids.shape[axis]:
        return ids
    index = (slice(None),) * axis + (firsts,)
    if is_tensor(ids):
        torch = sys.modules["torch"]
        out = ids.to(torch.int64, copy=True)
        out[index] = spec.pad_id
        return out
    out = np.array(ids, dtype=np.int64)
    out[index] = spec.pad_id
    return out


def _as_id_vector(ids: object) -> Any:
    """``ids`` as a 1-D integer numpy array or torch tensor; anything else is a usage error."""
    array = as_array(ids)
    if array.ndim != 1:
        raise UsageError(f"expected a 1-D array of token ids, got shape {tuple(array.shape)}")
    if array.shape[0] and not is_integer(array):
        raise UsageError(f"token ids must be integers, got dtype {array.dtype}")
    return array


def _check_range(
    ids: Any, spec: HashSpec, first_position: int = 0, what: str = "", bound: int | None = None
) -> None:
    """Ids at or above V' (or ``bound``) are an error naming the first such position (a batch
    [B, T]: its row and position; a sequence: counted from ``first_position``); ``what`` names the
    argument."""
    if ids.numel() == 0 if is_tensor(ids) else ids.size == 0:
        return
    bound = spec.vocab_size if bound is None else bound
    top = int(ids.max())
    if top < bound:
        return
    flat = int(np.argmax(to_numpy(ids).reshape(-1) >= bound))
    if ids.ndim == 2:
        where = f"batch row {flat // ids.shape[1]}, position {flat % ids.shape[1]}"
    else:
        where = f"position {first_position + flat}"
    raise NgramToolError(
        f"{f'`{what}`: ' if what else ''}token id {top} at {where} is not a canonical id: ids must be below "
        f"vocab_size={spec.vocab_size}. Map raw ids through the compressed vocabulary "
        "first, or set the spec's vocab_size to the real V'."
    )


def _check_doc_starts(doc_starts: object, length: int) -> np.ndarray:
    if doc_starts is None:
        return np.zeros(0, dtype=np.int64)
    given = np.asarray(to_numpy(doc_starts))
    if given.ndim > 1 or (given.size and not np.issubdtype(given.dtype, np.integer)):
        raise UsageError(
            f"doc_starts must be a 1-D sequence of integer positions, got {given.dtype} {given.shape}"
        )
    starts = given.astype(np.int64).reshape(-1)
    if starts.size and (starts[0] < 0 or starts[-1] > length or np.any(np.diff(starts) < 0)):
        raise UsageError(
            f"doc_starts must be non-decreasing positions in [0, {length}], got {starts.tolist()[:8]}"
        )
    return starts


def hash_ngrams(
    canonical_ids: Any,
    spec: HashSpec,
    *,
    offsets: bool = True,
    doc_starts: Any = None,
    negative_ids: NegativeIds = "mask",
    backend: str = "auto",
    device: str | None = None,
) -> Any:
    """Engram n-gram rows for one stream (or a batch of streams) of canonical ids.

    Args:
        canonical_ids: integer ids in [0, V'), shape [T] (one stream) or [B, T] (each row its own
            stream, as in the Engram demo). Negative ids are masked (see ``negative_ids``).
            A numpy array gives numpy rows; a torch tensor gives a tensor on its device.
        spec: the hash configuration.
        offsets: True (default) gives table rows (hash + per-layer column offset, TileKernels'
            output); False gives the per-head hash ids (the Engram demo's output).
        doc_starts: positions where documents start; when given, every window is padded at its
            document's start (boundary policy ``reset``). None: pad only at the stream start.
        negative_ids: ``"mask"``, ``"barrier"`` or ``"hash"``, see :class:`NgramHasher`.
        backend: ``"auto"``, ``"numba"``, ``"numpy"``, ``"torch"`` or ``"triton"``; see
            :class:`NgramHasher`.
        device: where to compute; None: where the ids live. See :class:`NgramHasher`.

    Returns:
        ``[T, L, (N-1)*K]`` (or ``[B, T, L, (N-1)*K]``) of ``spec.row_dtype``; column
        ``(n-2)*K + head``.

    Examples:
        >>> import numpy as np
        >>> from ngramtool import HashSpec, hash_ngrams
        >>> spec = HashSpec(heads=2, table_sizes=(1009, 1013), vocab_size=1000, pad_id=0)
        >>> rows = hash_ngrams(np.array([5, 17, 42, 17]), spec)
        >>> rows.shape, rows.dtype, rows[3, 0].tolist()
        ((4, 2, 4), dtype('int32'), [...])
        >>> bool((rows[:, 0, :2] < spec.offsets[0, 2]).all())  # order-2 heads come first in a layer's table
        True
    """
    array = as_array(canonical_ids)
    options = {"offsets": offsets, "negative_ids": negative_ids, "backend": backend, "device": device}
    if array.ndim == 2:
        if doc_starts is not None:
            raise UsageError("doc_starts applies to a 1-D stream, not a [B, T] batch")
        return SequenceHasher(spec, **options)(array)
    boundary: Boundary = "none" if doc_starts is None else "reset"
    return NgramHasher(spec, boundary=boundary, **options)(array, doc_starts)
