"""Compiled kernels of the row-cache measure (numba): LRU stack distances in one pass.

:class:`ngramtool.analysis.row_cache.CompiledStack` uses them when numba is installed; otherwise
:class:`ngramtool.analysis.row_cache.NumpyStack` computes the same distances with numpy.

- :func:`stack_distances`: each read's LRU stack distance (the distinct rows read since the
  previous read of its row), with a hash table from rows to dense ids (open addressing), the
  time of each row's last read and a Fenwick tree over read times that marks each row's last
  read;
- :func:`rehash`: the hash table moved into a larger one;
- :func:`compact`: the read times renumbered when the tree is full (only each row's last read
  matters), so that memory stays O(distinct rows).
"""

from __future__ import annotations

import numpy as np

from ..backends.jit import compiled

EMPTY = -1  # a free slot of the hash table
NOT_READ = -2  # a masked position (rows -1): no read
FIRST = -1  # a first read (of the stream, or of the document with cold starts): no finite distance
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the high bits of row * 2^64 / phi


def _slot(row, table, shift):
    """The slot of ``row`` in the hash table (its own, or the free one it would take)."""
    mask = table.shape[0] - 1
    slot = np.int64((np.uint64(row) * _MIX) >> np.uint64(shift))
    while table[slot, 0] != row and table[slot, 0] != EMPTY:
        slot = (slot + 1) & mask
    return slot


def _stack_distances(rows, start, docs, cold, table, info, tree, who, state, out):
    """Distances of the reads of ``rows[start:]`` ([T, A], -1: not a read) into ``out`` ([T, A]).

    ``state`` holds [the next read time, the distinct rows seen, the hash shift]. ``table``
    [S, 2] maps rows (column 0, :data:`EMPTY` where free) to dense ids (column 1); a dense id's
    ``info`` row holds its last read's time, that read's document and its reads; ``tree``
    (1-based) counts, over read times, the last read of each row; ``who`` holds the dense id read
    at each time. The distance of a read whose row was last read at ``p`` is the number of rows
    whose last read is after ``p``: rows seen minus the marks up to ``p``. With ``cold``, a row
    last read in another document (``docs``, one per token) is a first read. Stops before a token
    whose reads could overfill the hash table or the tree and returns its index (T when done):
    grow them and call again.
    """
    now, count, shift = state[0], state[1], state[2]
    width = rows.shape[1]
    half, cap = table.shape[0] // 2, tree.shape[0] - 1
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
            slot = _slot(row, table, shift)
            if table[slot, 0] == EMPTY:
                table[slot, 0] = row
                table[slot, 1] = count
                index = count
                count += 1
                out[t, a] = FIRST
            else:
                index = table[slot, 1]
                seen = info[index, 0]
                if cold and info[index, 1] != doc:
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
            info[index, 0] = now
            info[index, 1] = doc
            info[index, 2] += 1
            who[now] = index
            now += 1
    state[0], state[1] = now, count
    return rows.shape[0]


def _rehash(old, table, shift):
    """Insert the rows of the hash table ``old`` into ``table``."""
    for i in range(old.shape[0]):
        if old[i, 0] != EMPTY:
            slot = _slot(old[i, 0], table, shift)
            table[slot, 0] = old[i, 0]
            table[slot, 1] = old[i, 1]


def _compact(info, who, now, tree):
    """Renumber the last reads of the rows 0, 1, ... in time order (``info``'s times and ``who`` in
    place; the reads before them never count again) and make ``tree`` mark them; returns how many."""
    count = 0
    for t in range(now):
        index = who[t]
        if info[index, 0] == t:
            info[index, 0] = count
            who[count] = index
            count += 1
    for j in range(1, tree.shape[0]):
        covered = min(j, count) - (j - (j & -j))  # node j covers (j - lowbit(j), j]
        tree[j] = covered if covered > 0 else 0
    tree[0] = 0
    return count


_slot = compiled(_slot)
compact = compiled(_compact)
stack_distances = compiled(_stack_distances)
rehash = compiled(_rehash)
