"""Compiled kernels of the row-cache measure (numba): LRU stack distances and their tally in one pass.

:class:`ngramtool.analysis.row_cache.CompiledStack` uses them when numba is installed; otherwise
:class:`ngramtool.analysis.row_cache.NumpyStack` computes the same distances with numpy.

- :func:`stack_distances`: each read's LRU stack distance (the distinct rows read since the
  previous read of its row) and, per token, its misses at every budget. Each row (its dense id)
  has a line of ``state``: the time of its last read, its reads, the document of its last read.
  The last read of each row is marked in a bitmap over read times, with a Fenwick tree of the
  marks per group of 8 words (512 times, one cache line of bits; the tree is small enough to
  stay in cache): the marks up to a time are the bits of its group and a walk up the tree. The
  state of the rows a token reads is prefetched :data:`AHEAD` tokens before, and the marks of
  their last reads one token before, so that the memory accesses of neighbouring reads overlap.
- :func:`renumber`, :func:`fill`: when the read times run out, only each row's last read
  matters: the times are renumbered 0, 1, ... in order and the marks rebuilt, so that memory
  stays O(distinct rows).
- :func:`identify`, :func:`rehash`: rows to dense ids by a hash table (open addressing), for
  row spaces too large to index directly.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..backends.jit import compiled

EMPTY = -1  # a free slot of the hash table
NOT_READ = -2  # a masked position (rows -1): no read
FIRST = -1  # a first read (of the stream, or of the document with cold starts): no finite distance
LAST, READS, DOC = 0, 1, 2  # the columns of a row's state: last read time + 1 (0: none), reads, document
GROUP_WORDS = 8  # words of marks per group of the Fenwick tree (one cache line, 512 read times)
AHEAD = 2  # tokens between prefetching a row's state and reading it
_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the high bits of row * 2^64 / phi


@intrinsic
def _prefetch(typingctx, array, index):
    """Ask the CPU to load the cache line of ``array[index]`` (its first item of a 2-d array)."""

    def codegen(context, builder, signature, args):
        kind = signature.args[0]
        view = context.make_array(kind)(context, builder, args[0])
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        zero = context.get_constant(types.intp, 0)
        item = cgutils.get_item_pointer(context, builder, kind, view, [index] + [zero] * (kind.ndim - 1))
        byte = builder.bitcast(item, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        hint = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte.type, i32, i32, i32]), "llvm.prefetch.p0"
        )
        builder.call(hint, [byte, i32(0), i32(3), i32(1)])  # read, keep in every cache level, data
        return context.get_dummy_value()

    return types.void(array, index), codegen


def _popcount(word):
    """The set bits of a uint64 (SWAR)."""
    word = word - ((word >> np.uint64(1)) & np.uint64(0x5555555555555555))
    word = (word & np.uint64(0x3333333333333333)) + ((word >> np.uint64(2)) & np.uint64(0x3333333333333333))
    word = (word + (word >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((word * np.uint64(0x0101010101010101)) >> np.uint64(56))


def _marks_through(time, bits, tree):
    """How many times 0..``time`` are marked: the bits of its word and of the words before it in
    its group (masked: no branch on the position), then the Fenwick tree over the groups before."""
    word = time >> 6
    marks = _popcount(bits[word] & (_ONES >> np.uint64(63 - (time & 63))))
    first = word & ~(GROUP_WORDS - 1)
    for k in range(GROUP_WORDS):
        marks += _popcount(bits[first + k]) if first + k < word else 0
    node = word // GROUP_WORDS  # the groups before: nodes are 1-based
    while node > 0:
        marks += tree[node]
        node &= node - 1
    return marks


def _mark(time, bits, tree, step):
    """Set (``step`` 1) or clear (-1) the mark of ``time``."""
    word = time >> 6
    if step > 0:
        bits[word] |= np.uint64(1) << np.uint64(time & 63)
    else:
        bits[word] &= ~(np.uint64(1) << np.uint64(time & 63))
    node = word // GROUP_WORDS + 1
    while node < tree.shape[0]:
        tree[node] += step
        node += node & -node


def _stack_distances(ids, start, docs, cold, state, clock, bits, tree, budgets, tally, misses, out):
    """Distances of the reads of ``ids[start:]`` ([T, A] dense ids, -1: not a read) into ``out``,
    and their tally.

    ``clock`` holds [the next read time, the rows marked]; ``tree`` the Fenwick tree (1-based)
    of the marks per group of ``bits``; ``state`` a line per id (columns
    :data:`LAST`, :data:`READS`, :data:`DOC` with ``cold``). The distance of a read whose row was
    last read at ``p`` is the number of rows whose last read is after ``p``: the rows marked minus
    the marks up to ``p``. With ``cold``, a row last read in another document (``docs``, one per
    token) is a first read. The tally: ``budgets`` (sorted, the last beyond any distance),
    ``misses[b, m]`` the tokens with ``m`` misses in a cache of ``budgets[b]`` rows, ``tally``
    [tokens, reads, the longest distance]. Stops before a token whose reads could overrun the
    read times and returns its index (T when done): renumber them and call again.
    """
    now, marked = clock[0], clock[1]
    width, sweep = ids.shape[1], budgets.shape[0]
    capacity = bits.shape[0] * 64
    beyond = np.zeros(sweep + 1, dtype=np.int64)  # this token's reads by how many budgets they miss
    tokens = ids.shape[0]
    for t in range(start, tokens):
        if now + width > capacity:
            clock[0], clock[1] = now, marked
            return t
        if t + AHEAD < tokens:
            for a in range(width):
                if ids[t + AHEAD, a] >= 0:
                    _prefetch(state, ids[t + AHEAD, a])
        if t + 1 < tokens:
            for a in range(width):
                if ids[t + 1, a] >= 0 and state[ids[t + 1, a], LAST] > 0:
                    last = state[ids[t + 1, a], LAST] - 1
                    _prefetch(bits, last >> 6)
                    _prefetch(tree, (last >> 6) // GROUP_WORDS + 1)
        beyond[:] = 0
        doc = docs[t]
        for a in range(width):
            index = ids[t, a]
            if index < 0:
                out[t, a] = NOT_READ
                continue
            seen = state[index, LAST] - 1
            if seen < 0:
                distance = FIRST
                marked += 1
            else:
                if cold and state[index, DOC] != doc:
                    distance = FIRST
                else:
                    distance = marked - _marks_through(seen, bits, tree)
                _mark(seen, bits, tree, -1)
            _mark(now, bits, tree, 1)
            state[index, LAST] = now + 1
            state[index, READS] += 1
            if cold:
                state[index, DOC] = doc
            now += 1
            out[t, a] = distance
            missed = sweep
            if distance != FIRST:
                missed = 0
                while budgets[missed] <= distance:
                    missed += 1
                tally[2] = max(tally[2], distance)
            beyond[missed] += 1
            tally[1] += 1
        tokens_missing = 0
        for b in range(sweep - 1, -1, -1):
            tokens_missing += beyond[b + 1]
            misses[b, tokens_missing] += 1
        tally[0] += 1
    clock[0], clock[1] = now, marked
    return tokens


def _renumber(state, bits):
    """Each row's last read time renumbered to its rank among the marked times (in place);
    returns how many are marked."""
    before = np.empty(bits.shape[0], dtype=np.int64)  # the marks before each word
    marks = 0
    for word in range(bits.shape[0]):
        before[word] = marks
        marks += _popcount(bits[word])
    for index in range(state.shape[0]):
        last = state[index, LAST] - 1
        if last >= 0:
            word = last >> 6
            state[index, LAST] = before[word] + _popcount(bits[word] & (_ONES >> np.uint64(63 - (last & 63))))
    return marks


def _fill(marked, bits, tree):
    """Mark the times 0 .. ``marked`` - 1 and no other in ``bits`` and the Fenwick tree."""
    for word in range(bits.shape[0]):
        ones = min(max(marked - 64 * word, 0), 64)
        bits[word] = _ONES if ones == 64 else (np.uint64(1) << np.uint64(ones)) - np.uint64(1)
    span = 64 * GROUP_WORDS  # the times of a group
    tree[0] = 0
    for node in range(1, tree.shape[0]):  # node j: the groups after j - lowbit(j), up to j
        low = node & -node
        tree[node] = min(max(marked - span * (node - low), 0), span * low)


def _slot(row, table, shift):
    """The slot of ``row`` in the hash table (its own, or the free one it would take)."""
    mask = table.shape[0] - 1
    slot = np.int64((np.uint64(row) * _MIX) >> np.uint64(shift))
    while table[slot, 0] != row and table[slot, 0] != EMPTY:
        slot = (slot + 1) & mask
    return slot


def _identify(rows, start, table, shift, known, ids):
    """The dense ids of the reads of ``rows[start:]`` ([T, A], -1: not a read) into ``ids``; a new
    row takes the next id (``known[0]``: the ids given). ``table`` [S, 2] maps rows (column 0,
    :data:`EMPTY` where free) to ids (column 1). Stops before a token whose reads could fill more
    than half the table and returns its index (T when done): grow it and call again."""
    given = known[0]
    width, half = rows.shape[1], table.shape[0] // 2
    for t in range(start, rows.shape[0]):
        if given + width > half:
            known[0] = given
            return t
        for a in range(width):
            row = rows[t, a]
            if row < 0:
                ids[t, a] = -1
                continue
            slot = _slot(row, table, shift)
            if table[slot, 0] == EMPTY:
                table[slot, 0], table[slot, 1] = row, given
                given += 1
            ids[t, a] = table[slot, 1]
    known[0] = given
    return rows.shape[0]


def _rehash(old, table, shift):
    """Insert the rows of the hash table ``old`` into ``table``."""
    for i in range(old.shape[0]):
        if old[i, 0] != EMPTY:
            slot = _slot(old[i, 0], table, shift)
            table[slot, 0] = old[i, 0]
            table[slot, 1] = old[i, 1]


_popcount = compiled(_popcount)
_marks_through = compiled(_marks_through)
_mark = compiled(_mark)
_slot = compiled(_slot)
stack_distances = compiled(_stack_distances)
renumber = compiled(_renumber)
fill = compiled(_fill)
identify = compiled(_identify)
rehash = compiled(_rehash)
