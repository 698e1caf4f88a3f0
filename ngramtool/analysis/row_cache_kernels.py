"""Compiled kernels of the row-cache measure (numba): LRU stack distances in one pass.

:class:`ngramtool.analysis.row_cache.CompiledStack` uses them when numba is installed; otherwise
:class:`ngramtool.analysis.row_cache.NumpyStack` computes the same distances with numpy.

- :func:`stack_distances`: each read's LRU stack distance (the distinct rows read since the
  previous read of its row), with a hash table from rows to dense ids, the time of each row's
  last read and a Fenwick tree over read times that marks each row's last read;
- :func:`rehash`: the hash table moved into a larger one.
"""

from __future__ import annotations

import numpy as np

from ..backends.jit import compiled

EMPTY = -1  # a free slot of the hash table
NOT_READ = -2  # a masked position (rows -1): no read
FIRST = -1  # a first read (of the stream, or of the document with cold starts): no finite distance
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the high bits of row * 2^64 / phi


def _slot(row, keys, shift):
    """The slot of ``row`` in the hash table ``keys`` (its own, or the free one it would take)."""
    mask = keys.shape[0] - 1
    slot = np.int64((np.uint64(row) * _MIX) >> np.uint64(shift))
    while keys[slot] != row and keys[slot] != EMPTY:
        slot = (slot + 1) & mask
    return slot


def _stack_distances(rows, start, docs, cold, keys, dense, last, last_doc, freq, tree, state, out):
    """Distances of the reads of ``rows[start:]`` ([T, A], -1: not a read) into ``out`` ([T, A]).

    ``state`` holds [the next read time, the distinct rows seen, the hash shift]. A row's dense id
    indexes ``last`` (its last read time), ``last_doc`` (that read's document) and ``freq`` (its
    reads); ``tree`` (1-based) counts, over read times, the last read of each row. The distance of
    a read whose row was last read at ``p`` is the number of rows whose last read is after ``p``:
    rows seen minus the marks up to ``p``. With ``cold``, a row last read in another document
    (``docs``, one per token) is a first read. Stops before a token whose reads could overfill
    the hash table or the tree and returns its index (T when done): grow them and call again.
    """
    now, count, shift = state[0], state[1], state[2]
    width = rows.shape[1]
    half, cap = keys.shape[0] // 2, tree.shape[0] - 1
    for t in range(start, rows.shape[0]):
        if count + width > half or now + width > cap:
            state[0], state[1] = now, count
            return t
        doc = docs[t]
        for a in range(width):
            row = rows[t, a]
            if row < 0:
                out[t, a] = NOT_READ
                continue
            slot = _slot(row, keys, shift)
            if keys[slot] == EMPTY:
                keys[slot] = row
                dense[slot] = count
                index = count
                count += 1
                out[t, a] = FIRST
            else:
                index = dense[slot]
                seen = last[index]
                if cold and last_doc[index] != doc:
                    out[t, a] = FIRST
                else:
                    marks, j = 0, seen + 1
                    while j > 0:
                        marks += tree[j]
                        j -= j & -j
                    out[t, a] = count - marks
                j = seen + 1
                while j <= cap:
                    tree[j] -= 1
                    j += j & -j
            j = now + 1
            while j <= cap:
                tree[j] += 1
                j += j & -j
            last[index] = now
            last_doc[index] = doc
            freq[index] += 1
            now += 1
    state[0], state[1] = now, count
    return rows.shape[0]


def _rehash(old_keys, old_dense, keys, dense, shift):
    """Insert the rows of the hash table ``old_keys`` (dense ids ``old_dense``) into ``keys``."""
    for i in range(old_keys.shape[0]):
        if old_keys[i] != EMPTY:
            slot = _slot(old_keys[i], keys, shift)
            keys[slot] = old_keys[i]
            dense[slot] = old_dense[i]


_slot = compiled(_slot)
stack_distances = compiled(_stack_distances)
rehash = compiled(_rehash)
