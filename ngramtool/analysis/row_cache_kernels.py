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


def _popcount(word):
    """The set bits of a uint64 (SWAR)."""
    word = word - ((word >> np.uint64(1)) & np.uint64(0x5555555555555555))
    word = (word & np.uint64(0x3333333333333333)) + ((word >> np.uint64(2)) & np.uint64(0x3333333333333333))
    word = (word + (word >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((word * np.uint64(0x0101010101010101)) >> np.uint64(56))


def _marks_through(time, bits, tree):
    """How many times 0..``time`` are marked: whole words by the Fenwick tree, then the bits."""
    word, j = time >> 6, time >> 6
    marks = 0
    while j > 0:
        marks += tree[j]
        j -= j & -j
    return marks + _popcount(bits[word] & (np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(63 - (time & 63))))


def _mark(time, bits, tree, step):
    """Set (``step`` 1) or clear (-1) the mark of ``time``."""
    bit = np.uint64(1) << np.uint64(time & 63)
    word = time >> 6
    if step > 0:
        bits[word] |= bit
    else:
        bits[word] &= ~bit
    j = word + 1
    while j < tree.shape[0]:
        tree[j] += step
        j += j & -j


def _stack_distances(rows, start, docs, cold, table, info, bits, tree, who, state, out):
    """Distances of the reads of ``rows[start:]`` ([T, A], -1: not a read) into ``out`` ([T, A]).

    ``state`` holds [the next read time, the distinct rows seen, the hash shift]. ``table``
    [S, 2] maps rows (column 0, :data:`EMPTY` where free) to dense ids (column 1); a dense id's
    ``info`` row holds its last read's time, that read's document and its reads. The last read
    of each row is marked: one bit per read time in ``bits`` (uint64 words) and a Fenwick tree
    (1-based) of the marks per word in ``tree``, small enough to stay in cache; ``who`` holds the
    dense id read at each time. The distance of a read whose row was last read at ``p`` is the
    number of rows whose last read is after ``p``: rows seen minus the marks up to ``p``. With
    ``cold``, a row last read in another document (``docs``, one per token) is a first read.
    Stops before a token whose reads could overfill the hash table or the times and returns its
    index (T when done): grow them and call again.
    """
    now, count, shift = state[0], state[1], state[2]
    width = rows.shape[1]
    half, cap = table.shape[0] // 2, bits.shape[0] * 64
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
                    out[t, a] = count - _marks_through(seen, bits, tree)
                _mark(seen, bits, tree, -1)
            _mark(now, bits, tree, 1)
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


def _compact(info, who, now, bits, tree):
    """Renumber the last reads of the rows 0, 1, ... in time order (``info``'s times and ``who`` in
    place; the reads before them never count again) and mark them in ``bits`` and ``tree``;
    returns how many."""
    count = 0
    for t in range(now):
        index = who[t]
        if info[index, 0] == t:
            info[index, 0] = count
            who[count] = index
            count += 1
    for word in range(bits.shape[0]):
        ones = min(max(count - 64 * word, 0), 64)
        bits[word] = (
            np.uint64(0xFFFFFFFFFFFFFFFF) if ones == 64 else (np.uint64(1) << np.uint64(ones)) - np.uint64(1)
        )
    for j in range(1, tree.shape[0]):
        covered = min(64 * j, count) - 64 * (j - (j & -j))  # node j covers words (j - lowbit(j), j]
        tree[j] = covered if covered > 0 else 0
    tree[0] = 0
    return count


_popcount = compiled(_popcount)
_marks_through = compiled(_marks_through)
_mark = compiled(_mark)
_slot = compiled(_slot)
compact = compiled(_compact)
stack_distances = compiled(_stack_distances)
rehash = compiled(_rehash)
