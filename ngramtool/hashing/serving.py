"""Hash state for serving engines: the rows of prefill chunks and decode steps, as they come.

An engine hashes a request's tokens incrementally: prefill chunks, then one token per decode step,
and with speculative decoding it rolls back the draft tokens the model rejected. The rows of token
``t`` depend on the canonical ids ``t-N+1 .. t`` (docs/hash-spec.md), so a request's state is its
last ids. :class:`HashState` keeps them for one request, :class:`BatchHashState` for many at once
(numpy arrays on the CPU, or torch tensors on a device). Their rows equal hashing the whole
sequence at once (:func:`ngramtool.hash_ngrams`), for every ``negative_ids`` convention.

Rolling back. A state keeps a request's last ``N-1 + max_rollback`` ids. A rollback of ``k``
tokens needs the N-1 ids before the new end, so while a request is longer than what is kept it
may roll back ``kept - (N-1)`` tokens: ``max_rollback`` once enough tokens came, less right after a
rollback (it forgot ids), and back up to ``max_rollback`` as new tokens come. A shorter request may
roll back to its start. ``rollback_limit`` says how far a rollback may go now; a larger one, or
one before the sequence start, is a :class:`~ngramtool.util.errors.UsageError` naming the limit.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

import numpy as np

from ..spec.hashspec import HashSpec
from ..util.errors import NgramToolError, UsageError
from .backends import MASKED_ROW, NegativeIds, check_negative_ids, choose_backend
from .backends.arrays import as_array, is_integer, is_tensor, to_numpy, to_tensor
from .backends.numpy_backend import rows_from_windows
from .hasher import SequenceHasher, as_hashed

__all__ = ["DEFAULT_MAX_ROLLBACK", "BatchHashState", "HashState"]

DEFAULT_MAX_ROLLBACK = 64
"""Tokens a state can roll back by default: more than speculative decoding drafts per step."""


class HashState:
    """One request's hash state: its rows chunk by chunk, equal to hashing the whole sequence.

    ``extend`` takes a prefill chunk or a decode step (canonical ids: a numpy array, a list or a
    torch tensor) and returns its rows ``[T, L, C]`` as the ids' kind (a tensor on its device);
    ``rollback(k)`` forgets the last ``k`` tokens; ``copy()`` is an independent snapshot. See the
    module docstring for how far a rollback may go.

    Args:
        spec: the hash configuration.
        negative_ids: ``"mask"``, ``"barrier"`` or ``"hash"``, as for :class:`~ngramtool.NgramHasher`.
        max_rollback: how many tokens beyond the last N-1 the state keeps for rollbacks.
        backend: ``"auto"`` (default) or a backend's name, as for :class:`~ngramtool.NgramHasher`.
        device: where to compute; None: where each chunk lives.

    Examples:
        >>> import numpy as np
        >>> from ngramtool import HashSpec, HashState, hash_ngrams
        >>> spec = HashSpec(heads=2, table_sizes=(1009, 1009), vocab_size=1000, pad_id=0)
        >>> state = HashState(spec)
        >>> prompt = state.extend([5, 17, 42])            # a prefill chunk
        >>> draft = state.extend([17, 99])                # two draft tokens
        >>> state.rollback(1)                             # the model rejected the second one
        >>> step = state.extend([7])                      # a decode step
        >>> whole = hash_ngrams(np.array([5, 17, 42, 17, 7]), spec)
        >>> np.array_equal(np.concatenate([prompt, draft[:1], step]), whole), state.length
        (True, 5)
    """

    def __init__(
        self,
        spec: HashSpec,
        *,
        negative_ids: NegativeIds = "mask",
        max_rollback: int = DEFAULT_MAX_ROLLBACK,
        backend: str = "auto",
        device: str | None = None,
    ) -> None:
        self.spec = spec
        self.negative_ids = negative_ids
        self.max_rollback = _checked_max_rollback(max_rollback)
        self._hasher = SequenceHasher(spec, negative_ids=negative_ids, backend=backend, device=device)
        self._keep = spec.max_ngram - 1 + max_rollback
        self._kept = np.zeros(0, dtype=np.int64)  # the last ids, at most _keep; replaced, never mutated
        self._length = 0

    def __repr__(self) -> str:
        where = f"length={self._length} rollback_limit={self.rollback_limit}"
        return f"<HashState spec={self.spec.fingerprint[:16]} {where} max_rollback={self.max_rollback}>"

    @property
    def length(self) -> int:
        """The number of tokens of the request so far."""
        return self._length

    @property
    def rollback_limit(self) -> int:
        """The most tokens :meth:`rollback` can forget now."""
        return int(_rollback_limits(self._length, self._kept.shape[0], self.spec.max_ngram - 1))

    def extend(self, ids: Any) -> Any:
        """Rows ``[T, L, C]`` of the next ``T`` canonical ids ([T]: a prefill chunk, or one decode
        step), the rows hashing the whole sequence gives there. If hashing fails (an id at or
        above V' is an error naming its position in ``ids``), the state stays as it was."""
        chunk = as_array(ids)
        if chunk.ndim != 1:
            raise UsageError(f"a chunk of token ids must be 1-D [T], got shape {tuple(chunk.shape)}")
        rows = self._hasher(chunk, before=self._kept[-(self.spec.max_ngram - 1) :])
        seen = as_hashed(self.spec, chunk, np.zeros(int(self._length == 0), dtype=np.int64))
        tail = to_numpy(seen[-self._keep :]).astype(np.int64)
        self._kept = np.concatenate([self._kept, tail])[-self._keep :]
        self._length += chunk.shape[0]
        return rows

    def rollback(self, count: int) -> None:
        """Forget the last ``count`` tokens (draft tokens the model rejected)."""
        _check_rollback(count, self._length, self.rollback_limit, self.max_rollback)
        if count:
            self._kept = self._kept[:-count]
            self._length -= count

    def copy(self) -> HashState:
        """An independent snapshot: extending or rolling back one leaves the other as it was."""
        return copy.copy(self)  # the kept ids are replaced, never changed in place


class BatchHashState:
    """The hash states of many requests, one slot each, stepped together from an engine's step.

    A decode step hashes one token for each of a set of slots in one vectorized computation (no
    loop over requests): it gathers each slot's last ids from a ``[slots, N + max_rollback]``
    history, forms the windows ``[B, N]`` (the pad before each sequence start, the
    ``negative_ids`` convention applied), computes their rows and records the tokens. Prefill
    chunks go through :class:`~ngramtool.hashing.hasher.SequenceHasher` one slot at a time. Slot
    bookkeeping (lengths, what is kept) lives on the host; ids and rows are numpy arrays
    (``device=None``) or torch tensors on ``device``, whatever kind the ids come in.

    Every slot starts as an empty request. :meth:`release` frees a slot (a step or prefill that
    names it is an error), :meth:`reset` starts a new request in it.

    Args:
        spec: the hash configuration.
        slots: how many requests it holds.
        negative_ids: ``"mask"``, ``"barrier"`` or ``"hash"``, as for :class:`~ngramtool.NgramHasher`.
        max_rollback: how many tokens beyond the last N-1 each slot keeps for rollbacks.
        device: None: numpy on the CPU; ``"cpu"``, ``"cuda"``, ``"cuda:N"``: torch tensors there.
        backend: the backend that hashes prefill chunks (``"auto"`` or a name).
        check_ids: check that every id is below V' (on a GPU, a wait for the answer each call);
            False for ids known to be canonical.

    Examples:
        >>> import numpy as np
        >>> from ngramtool import BatchHashState, HashSpec, hash_ngrams
        >>> spec = HashSpec(heads=2, table_sizes=(1009, 1009), vocab_size=1000, pad_id=0)
        >>> state = BatchHashState(spec, slots=4)
        >>> first = state.prefill(0, [5, 17, 42])        # request 0's prompt
        >>> second = state.prefill(2, [8])               # request 2's prompt
        >>> rows = state.step([0, 2], [99, 7])           # one decode step for both: [2, L, C]
        >>> np.array_equal(rows[0], hash_ngrams(np.array([5, 17, 42, 99]), spec)[-1])
        True
        >>> state.rollback([0, 2], [1, 1])               # both draft tokens rejected
        >>> state.lengths.tolist()
        [3, 0, 1, 0]
    """

    def __init__(
        self,
        spec: HashSpec,
        slots: int,
        *,
        negative_ids: NegativeIds = "mask",
        max_rollback: int = DEFAULT_MAX_ROLLBACK,
        device: str | None = None,
        backend: str = "auto",
        check_ids: bool = True,
    ) -> None:
        check_negative_ids(negative_ids)
        if isinstance(slots, bool) or not isinstance(slots, int | np.integer) or slots < 1:
            raise UsageError(f"`slots` must be a positive number of requests (got {slots!r})")
        self.spec = spec
        self.slots = int(slots)
        self.negative_ids = negative_ids
        self.max_rollback = _checked_max_rollback(max_rollback)
        self.device = device
        self.check_ids = check_ids
        self._hasher = SequenceHasher(
            spec, negative_ids=negative_ids, backend=backend, device=device, check_ids=check_ids
        )
        n = spec.max_ngram
        self._keep = n - 1 + max_rollback
        # One more column than is kept: a step writes its token before reading the N-1 before it.
        self._width = self._keep + 1
        self._lengths = np.zeros(self.slots, dtype=np.int64)
        self._kept = np.zeros(self.slots, dtype=np.int64)
        self._active = np.ones(self.slots, dtype=bool)
        history = np.full((self.slots, self._width), spec.pad_id, dtype=np.int64)
        lags = np.arange(n, dtype=np.int64)
        if device is None:
            self._history, self._lags = history, lags
            self._rows = self._numpy_rows
        else:
            choice = choose_backend("torch", device)  # torch missing or no such device: one clear error
            from .backends.torch_backend import TorchRows  # torch is there: choose_backend said so

            # The block arithmetic alone: this class forms the windows (pads, DEAD ids, EOS segments).
            self._kernel = TorchRows(spec, offsets=True, negative_ids="mask", device=choice.device)
            self._history, self._lags = to_tensor(history, device), to_tensor(lags, device)
            self._rows = self._torch_rows

    def __repr__(self) -> str:
        slots = f"slots={self.slots} active={int(self._active.sum())} max_rollback={self.max_rollback}"
        where = "" if self.device is None else f" device={self.device!r}"
        return f"<BatchHashState spec={self.spec.fingerprint[:16]} {slots}{where}>"

    @property
    def lengths(self) -> np.ndarray:
        """int64 [slots]: each slot's number of tokens so far (a copy)."""
        return self._lengths.copy()

    @property
    def active(self) -> np.ndarray:
        """bool [slots]: which slots hold a request (not released)."""
        return self._active.copy()

    @property
    def rollback_limits(self) -> np.ndarray:
        """int64 [slots]: the most tokens :meth:`rollback` can forget now, per slot."""
        return _rollback_limits(self._lengths, self._kept, self.spec.max_ngram - 1)

    def step(self, slot_ids: Any, token_ids: Any) -> Any:
        """Rows ``[B, L, C]`` of one more token for each of ``B`` distinct active slots.

        Args:
            slot_ids: int [B], the slots (host values; a tensor is read back to the host).
            token_ids: int [B], their next canonical ids, in the state's kind (a numpy array, or a
                tensor on its device; other kinds are converted).
        """
        slots = self._slot_vector(slot_ids)
        tokens = self._ids(token_ids, "token_ids")
        if tokens.shape[0] != slots.shape[0]:
            raise UsageError(
                f"step needs one token per slot: {slots.shape[0]} slot ids but {tokens.shape[0]} token ids"
            )
        self._check_range(tokens, slots)
        xp = _namespace(tokens)
        lengths = self._lengths[slots]
        moved = self._put(np.stack([slots, lengths]))  # one copy to the device
        slot, length = moved[0], moved[1]
        if self.spec.reserved_first:  # a request's first token reads as the reserved id
            tokens = xp.where(length == 0, self.spec.pad_id, tokens)
        self._history[slot, length % self._width] = tokens
        positions = length[:, None] - self._lags[None, :]  # lag k of each token: position t - k
        windows = self._history[slot[:, None], positions % self._width]
        windows = xp.where(positions < 0, self.spec.pad_id, windows)  # before the sequence start
        stop = self.spec.segment_stop
        eos = windows == stop  # a real stop id (a masked id is none)
        if self.negative_ids != "hash":  # the conventions as backends/barrier.py defines them
            dead = windows < 0
            if self.negative_ids == "barrier":  # a DEAD id (the current token too) and every older lag
                for lag in range(1, self.spec.max_ngram):
                    dead[:, lag] |= dead[:, lag - 1]
            windows = xp.where(dead, self.spec.pad_id, windows)
        if stop is not None:  # a stop id at lag >= 1 and every older lag: before the segment, the pad
            eos[:, 0] = False
            for lag in range(2, self.spec.max_ngram):
                eos[:, lag] |= eos[:, lag - 1]
            windows = xp.where(eos, self.spec.pad_id, windows)
        rows = self._rows(windows)
        if self.negative_ids == "mask":
            rows[dead[:, 0]] = MASKED_ROW
        self._lengths[slots] += 1
        self._kept[slots] = np.minimum(self._kept[slots] + 1, self._keep)
        return rows

    def prefill(self, slot: int, ids: Any) -> Any:
        """Rows ``[T, L, C]`` of the next ``T`` canonical ids of one slot's request (a prompt or a
        chunk of it), hashed by the backend; the ids continue what the slot holds."""
        index = int(self._slot_vector([slot])[0])
        chunk = self._ids(ids, "ids")
        n1, length, total = self.spec.max_ngram - 1, int(self._lengths[index]), chunk.shape[0]
        before = self._history[index, self._put(np.arange(max(length - n1, 0), length) % self._width)]
        rows = self._hasher(chunk, before=before)
        seen = as_hashed(self.spec, chunk, np.zeros(int(length == 0), dtype=np.int64))
        stored = min(total, self._keep)
        positions = np.arange(length + total - stored, length + total) % self._width
        self._history[index, self._put(positions)] = seen[total - stored :]
        self._lengths[index] += total
        self._kept[index] = min(int(self._kept[index]) + total, self._keep)
        return rows

    def rollback(self, slot_ids: Any, counts: Any) -> None:
        """Forget the last ``counts`` tokens of each of ``slot_ids`` (ints or int [B] each; a
        count applies to every slot). Nothing changes if any rollback goes too far."""
        slots = self._slot_vector(np.atleast_1d(to_numpy(slot_ids)))
        given = np.asarray(to_numpy(counts))
        if given.ndim > 1 or given.size not in (1, slots.shape[0]):
            raise UsageError(
                f"rollback needs one count, or one per slot: {given.shape} for {slots.shape[0]} slots"
            )
        if given.size and not np.issubdtype(given.dtype, np.integer):
            raise UsageError(f"rollback counts must be integers, got dtype {given.dtype}")
        given = np.broadcast_to(given.astype(np.int64).reshape(-1), slots.shape)
        lengths, limits = self._lengths[slots], self.rollback_limits[slots]
        refused = np.flatnonzero((given < 0) | (given > lengths) | (given > limits))
        if refused.size:
            at = int(refused[0])
            where = f" of slot {int(slots[at])}"
            _check_rollback(int(given[at]), int(lengths[at]), int(limits[at]), self.max_rollback, where)
        self._lengths[slots] -= given
        self._kept[slots] -= given

    def reset(self, slot: int) -> None:
        """Start a new, empty request in ``slot`` (released or not)."""
        index = self._slot_index(slot)
        self._lengths[index] = self._kept[index] = 0
        self._active[index] = True

    def release(self, slot: int) -> None:
        """Free ``slot``: steps, prefills and rollbacks that name it are errors until :meth:`reset`."""
        index = self._slot_index(slot)
        self._lengths[index] = self._kept[index] = 0
        self._active[index] = False

    def _slot_index(self, slot: int) -> int:
        """``slot`` checked to be a slot number."""
        if isinstance(slot, bool) or not isinstance(slot, int | np.integer) or not 0 <= slot < self.slots:
            raise UsageError(f"slot {slot!r} is not a slot of this state: slots are 0..{self.slots - 1}")
        return int(slot)

    def _slot_vector(self, slot_ids: Any) -> np.ndarray:
        """int64 [B] on the host: distinct numbers of active slots."""
        slots = np.asarray(to_numpy(slot_ids))
        if slots.ndim != 1 or (slots.size and not np.issubdtype(slots.dtype, np.integer)):
            raise UsageError(f"slot ids must be 1-D integers [B], got {slots.dtype} {slots.shape}")
        slots = slots.astype(np.int64)
        outside = (slots < 0) | (slots >= self.slots)
        if outside.any():
            raise UsageError(
                f"slot {int(slots[outside][0])} is not a slot of this state: slots are 0..{self.slots - 1}"
            )
        if slots.shape[0] and np.bincount(slots, minlength=self.slots).max() > 1:
            raise UsageError(f"slot ids must be distinct, got {slots.tolist()[:16]}")
        free = ~self._active[slots]
        if free.any():
            raise UsageError(f"slot {int(slots[free][0])} holds no request: it was released (reset it first)")
        return slots

    def _ids(self, ids: Any, name: str) -> Any:
        """``ids`` as int64 [T] of the state's kind (numpy, or a tensor on its device)."""
        array = as_array(ids)
        if array.ndim != 1 or (array.shape[0] and not is_integer(array)):
            raise UsageError(f"`{name}` must be 1-D integer ids, got {array.dtype} {tuple(array.shape)}")
        if self.device is None:
            return to_numpy(array).astype(np.int64, copy=False)
        return to_tensor(array, self.device).to(sys.modules["torch"].int64)

    def _check_range(self, tokens: Any, slots: np.ndarray) -> None:
        """Ids at or above V' are an error naming the first one's slot (when ``check_ids``)."""
        if not self.check_ids or not bool((tokens >= self.spec.vocab_size).any()):
            return
        first = int(np.argmax(to_numpy(tokens) >= self.spec.vocab_size))
        raise NgramToolError(
            f"token id {int(tokens[first])} for slot {int(slots[first])} (position {first} of the step) "
            f"is not a canonical id: ids must be below vocab_size={self.spec.vocab_size}"
        )

    def _put(self, array: np.ndarray) -> Any:
        """A host int64 array where the history lives."""
        return array if self.device is None else to_tensor(array, self.device)

    def _numpy_rows(self, windows: np.ndarray) -> np.ndarray:
        """Rows [B, L, C] of int64 windows [B, N] (numpy): the definition, vectorized over B."""
        return rows_from_windows(windows, self.spec)

    def _torch_rows(self, windows: Any) -> Any:
        """Rows [B, L, C] of int64 windows [B, N] (tensors): the torch backend's block arithmetic."""
        spec, torch = self.spec, sys.modules["torch"]
        dest = torch.empty(
            (windows.shape[0], spec.num_layers, spec.num_columns), dtype=torch.int64, device=windows.device
        )
        self._kernel.hash_block(list(windows.unbind(1)), dest)
        return (dest + self._kernel.offsets).to(self._kernel.offsets.dtype)


def _rollback_limits(lengths: Any, kept: Any, n1: int) -> Any:
    """How many tokens a rollback may forget: all while the request is what is kept, else what is
    kept beyond the N-1 ids the next token needs (numbers or int arrays)."""
    return np.where(np.asarray(kept) >= lengths, lengths, np.asarray(kept) - n1)


def _checked_max_rollback(max_rollback: int) -> int:
    if isinstance(max_rollback, bool) or not isinstance(max_rollback, int | np.integer) or max_rollback < 0:
        raise UsageError(f"`max_rollback` must be a number of tokens >= 0 (got {max_rollback!r})")
    return int(max_rollback)


def _check_rollback(count: int, length: int, limit: int, max_rollback: int, where: str = "") -> None:
    """A rollback of ``count`` tokens that cannot be done is one clear error."""
    if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
        raise UsageError(f"a rollback forgets a number of tokens >= 0 (got {count!r})")
    if count > length:
        raise UsageError(
            f"cannot roll back {count} tokens{where}: the request has {length}, and a rollback cannot "
            "go before its start"
        )
    if count > limit:
        raise UsageError(
            f"cannot roll back {count} tokens{where}: it keeps the ids for at most {limit} now "
            f"(max_rollback={max_rollback}); make the state with a larger max_rollback"
        )


def _namespace(array: Any) -> Any:
    """The module whose ``where`` works on ``array``: numpy, or torch for a tensor."""
    return sys.modules["torch"] if is_tensor(array) else np
