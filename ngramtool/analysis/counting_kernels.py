"""Compiled kernels of the distinct n-gram counter (numba): a chunk's keys, run lengths, merges.

:class:`ngramtool.analysis.counting.NgramTypeCounter` uses them when numba is installed and every
order's keys fit one uint64 word; otherwise it computes the same arrays with numpy. Each kernel
makes one pass and allocates nothing:

- :func:`ngram_keys`: the packed key of every unmasked position's n-grams, all orders at once,
  straight from the ids (the windows' pads at the stream and document starts and for masked
  ids included), instead of lag windows of ``N`` int64 per token;
- :func:`run_lengths`: a sorted buffer compacted in place to its distinct keys and counts (a run,
  spilled to disk by :class:`ngramtool.analysis.type_store.SortedRuns`);
- :func:`merge_windows`: the runs merged k ways at once, a window of each at a time;
- :func:`count_rows`, :func:`find_shared`: the analysis' two passes over a block of mixes for one
  head (rows by the hash backend's reciprocal modulo, no division), without temporaries.
"""

from __future__ import annotations

import numba
import numpy as np

from ..hashing.backends.numba_backend import FAST_MIN_PRIME, inverse_of, reciprocal_mod
from ..util.jit import compiled


def _ngram_keys(ids, context, resets, doc_start, pad, vocab, out):
    """Keys of orders 2..N of the unmasked positions of ``ids``; returns how many positions.

    ``out[n-2, i]`` is the order-n key of the i-th unmasked position: the sum over lags k < n of
    the window's id at lag k times ``vocab**k`` (``KeyCodec.encode``). The window at position t
    takes ``ids[t-k]`` (``context[N-1+t-k]`` before the chunk), or ``pad`` when that is negative
    (masked) or lies before the current document: the one starting at ``doc_start`` (relative to
    the chunk, <= 0) until the next of the sorted ``resets`` (positions in the chunk).
    """
    n1 = out.shape[0]
    doc = doc_start
    next_reset = 0
    written = 0
    for t in range(ids.shape[0]):
        while next_reset < resets.shape[0] and resets[next_reset] == t:
            doc = t
            next_reset += 1
        if ids[t] < 0:
            continue
        key = np.uint64(ids[t])
        scale = np.uint64(1)
        for lag in range(1, n1 + 1):
            pos = t - lag
            if pos < doc:
                w = pad
            elif pos >= 0:
                w = ids[pos]
            else:
                w = context[n1 + pos]
            if w < 0:
                w = pad
            scale *= vocab
            key += np.uint64(w) * scale
            out[lag - 1, written] = key
        written += 1
    return written


def _run_lengths(keys, counts):
    """Compact sorted ``keys`` in place to their distinct values, occurrences into ``counts``;
    returns how many distinct keys. Branch-free: every step writes, and a key that differs from
    the previous one moves the write position on."""
    size = keys.shape[0]
    if size == 0:
        return 0
    last = 0
    current = keys[0]
    seen = 1
    for i in range(1, size):
        key = keys[i]
        differs = key != current
        counts[last] = seen
        last += differs
        keys[last] = key
        seen = 1 if differs else seen + 1
        current = key
    counts[last] = seen
    return last + 1


def _merge_windows(keys, counts, positions, fills, more, out_keys, out_counts, filled):
    """Merge sorted runs, a window of each at a time, into ``out_keys``/``out_counts`` from
    ``filled`` on (equal keys once, counts added); returns (filled, status).

    Run r's window is ``keys[r, positions[r]:fills[r]]`` (and its counts); ``more[r]`` says the run
    has more entries than its window held. Each live run has a slot holding its head key and its
    flat position: each step takes the smallest head (a branch-free scan: there are few runs),
    emits it and loads that run's next key. The chain from one step to the next is what bounds
    the speed, so the slots keep everything a step needs. ``positions`` are brought up to date
    on return. Status: ``r >= 0`` when run r's window is empty and it has more (the caller
    refills it, then calls again), -1 when the output is full, -2 when every run is merged.
    """
    runs = keys.shape[0]
    width = keys.shape[1]
    flat_keys = keys.reshape(-1)
    flat_counts = counts.reshape(-1)
    capacity = out_keys.shape[0]
    run_of = np.empty(runs, dtype=np.int64)
    at = np.empty(runs, dtype=np.int64)  # flat position of each slot's head
    end = np.empty(runs, dtype=np.int64)
    heads = np.empty(runs, dtype=np.uint64)
    live = 0
    for r in range(runs):
        if positions[r] < fills[r]:
            run_of[live] = r
            at[live] = r * width + positions[r]
            end[live] = r * width + fills[r]
            heads[live] = keys[r, positions[r]]
            live += 1
        elif more[r]:
            return filled, r
    status = -1
    while filled < capacity and live > 0:
        best = 0
        best_key = heads[0]
        for slot in range(1, live):
            key = heads[slot]
            less = key < best_key
            best = slot if less else best
            best_key = key if less else best_key
        a = at[best]
        count = flat_counts[a]
        if filled > 0 and out_keys[filled - 1] == best_key:
            out_counts[filled - 1] += count
        else:
            out_keys[filled] = best_key
            out_counts[filled] = count
            filled += 1
        a += 1
        at[best] = a
        if a < end[best]:
            heads[best] = flat_keys[a]
            continue
        r = run_of[best]
        if more[r]:
            status = r
            break
        positions[r] = fills[r]  # merged: the slot takes the last live one
        live -= 1
        run_of[best] = run_of[live]
        at[best] = at[live]
        end[best] = end[live]
        heads[best] = heads[live]
    for slot in range(live):
        r = run_of[slot]
        positions[r] = at[slot] - r * width
    if status >= 0:
        return filled, status
    return filled, (-2 if live == 0 else -1)


def divisor(prime: int) -> tuple[int, float, bool]:
    """(prime, its biased reciprocal, whether the reciprocal modulo is exact for it): the
    arguments :func:`count_rows` and :func:`find_shared` take after the mixes."""
    return prime, float(inverse_of(np.array([prime]))[0]), prime >= FAST_MIN_PRIME


def _mod_row(mix, prime, inverse, fast):
    """``mix mod prime`` (mix < 2^63): by the biased reciprocal when ``fast``, else by division."""
    return reciprocal_mod(mix, prime, inverse) if fast else mix % np.uint64(prime)


mod_row = numba.njit(inline="always", error_model="numpy")(_mod_row)


def _count_rows(mixes, prime, inverse, fast, loads):
    """Pass one of the analysis: add each mix's row (``mix mod prime``) to ``loads``."""
    for i in range(mixes.shape[0]):
        loads[mod_row(mixes[i], prime, inverse, fast)] += 1


def _find_shared(mixes, prime, inverse, fast, loads, counts, everywhere, packed):
    """Pass two: which rows hold more than one n-gram. Clears ``everywhere[i]`` where n-gram i's
    row holds no other; when ``packed`` is not empty, appends the row to ``packed[i]`` as a
    mixed-radix digit. Returns (shared n-grams, their occurrences)."""
    shared_types = 0
    shared_tokens = 0
    pack = packed.shape[0] > 0
    for i in range(mixes.shape[0]):
        row = mod_row(mixes[i], prime, inverse, fast)
        if loads[row] > 1:
            shared_types += 1
            shared_tokens += counts[i]
        else:
            everywhere[i] = False
        if pack:
            packed[i] = packed[i] * np.uint64(prime) + row
    return shared_types, shared_tokens


ngram_keys = compiled(_ngram_keys)
run_lengths = compiled(_run_lengths)
merge_windows = compiled(_merge_windows)
count_rows = compiled(_count_rows)
find_shared = compiled(_find_shared)
