"""Compiled kernels of the row-cache measure (numba): per read, the budgets it misses, in one pass.

The simulators of :mod:`ngramtool.analysis.row_cache_policies` (``CompiledStack``,
``CompiledClock``, ...) use them when numba is installed; otherwise their numpy counterparts
(``NumpyStack``, ...) give the same counts.

A read misses an LRU cache of B rows iff its row's LRU stack distance (the distinct rows read
since the previous read of the row) is B or more (Mattson et al.): iff fewer than B rows were
read more recently than the row. So the kernel needs no distances, only, for each budget B of
the sweep, the time of the B-th most recent "last read" (its **cursor**): a row last read at
or after a budget's cursor is in that cache, a row last read before it is not.

- :func:`count_misses`: each row (its dense id) has a line of ``state``: the time of its last
  read, its reads, the document of its last read. The last read of each row is marked in a
  bitmap over read times. A read moves its row's mark from its previous read to now; each
  cursor then moves forward to the next mark when the read missed its budget (the mark that
  was B-th most recent is now B+1-th), and stays put when it hit (one mark below it left, one
  above it came). Cursors only move forward: each scans the bitmap once between renumberings.
  Per token, its misses at every budget are tallied in the same pass. The state of the rows a
  token reads is prefetched :data:`AHEAD` tokens before, the mark of their last reads one token
  before.
- :func:`renumber`, :func:`fill`, :func:`place_cursors`: when the read times run out, only each
  row's last read matters: the times are renumbered 0, 1, ... in order, the marks rebuilt and
  the cursors placed again, so that memory stays O(distinct rows).
- :func:`identify`, :func:`rehash`: rows to dense ids by a hash table (open addressing), for
  row spaces too large to index directly.

The other figures, each exact, over the same reads (docs/analysis.md, ``cache``, "What is counted"):

- :func:`count_direct`: a direct-mapped cache of B slots per budget, a key in slot ``key mod B``
  (Lemire's remainder by multiplication): each slot holds its key (and document, for cold
  starts); caches up to :data:`~ngramtool.analysis.row_cache_policies.ARRAY_SLOTS` slots are
  arrays, larger ones keep the slots used in a hash table (:func:`count_direct_hashed`).
- :func:`count_clock`: CLOCK per budget: a ring of the ids held (filled in order, grown as it
  fills) and a hand; each id's two bits (held, referenced) per budget, four ids a byte.
- :func:`count_batches`: the distinct rows of every batch of N tokens: each id's stamp per N is
  the last batch it was counted in.
- :func:`first_seen`: rows to dense ids in the order they are first read, by an array over the
  rows (row spaces up to 2^26; beyond, :func:`identify`).

CLOCK and direct-mapped run one cache at a time over a block of reads (a cache's state stays in
the CPU's caches as long as it can) and prefetch the slot (:data:`PREFETCH` reads ahead) or the
bits (:data:`CLOCK_AHEAD` reads ahead) of a read.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic

from ..util.jit import compiled

EMPTY = -1  # a free slot of the hash table
NOT_READ = -1  # a masked position (rows -1): no read, misses no budget
LAST, READS, DOC = 0, 1, 2  # the columns of a row's state: last read time + 1 (0: none), reads, document
NONE = -1  # the cursor of a budget larger than the rows read: every row read is in its cache
ABOVE = np.iinfo(np.int64).max  # the cursor of a budget of 0 rows: no row is in its cache
AHEAD = 2  # tokens between prefetching a row's state and reading it
PREFETCH = 16  # reads between prefetching a read's slot, bits or id and reading it
CLOCK_AHEAD = 64  # reads between prefetching a read's CLOCK bits and reading it (a read takes less time)
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
    """The set bits of a uint64 (SWAR; LLVM makes it one instruction where the CPU has one)."""
    word = word - ((word >> np.uint64(1)) & np.uint64(0x5555555555555555))
    word = (word & np.uint64(0x3333333333333333)) + ((word >> np.uint64(2)) & np.uint64(0x3333333333333333))
    word = (word + (word >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((word * np.uint64(0x0101010101010101)) >> np.uint64(56))


def _next_mark(time, bits):
    """The first marked time after ``time`` (there is one)."""
    position = time + 1
    word = position >> 6
    rest = bits[word] & (_ONES << np.uint64(position & 63))
    while rest == 0:
        word += 1
        rest = bits[word]
    return (word << 6) + np.int64(trailing_zeros(rest))


def _count_misses(
    ids, start, docs, cold, state, clock, bits, cursors, budgets, tally, misses, out, pages, page_misses
):
    """Count the reads of ``ids[start:]`` ([T, A] dense ids, -1: not a read): ``misses[b, m]``
    gains the tokens with ``m`` misses in a cache of ``budgets[b]`` rows; ``out`` (empty, or
    [T, A]) takes how many budgets each read misses (:data:`NOT_READ`: none, not a read);
    ``page_misses[b]`` gains the pages (``pages`` [T, A], or empty: none counted) of the reads
    that miss ``budgets[b]``.

    ``budgets`` are sorted, the last beyond any count of rows; ``cursors`` hold their cursors
    (:func:`place_cursors`). ``clock`` holds [the next read time, the rows marked, the first
    budget whose cursor is :data:`NONE`]; ``state`` a line per id (columns :data:`LAST`,
    :data:`READS`, :data:`DOC` with ``cold``). With ``cold``, a row last read in another
    document (``docs``, one per token) misses every budget. ``tally``: [tokens, reads, rows
    read]. Stops before a token whose reads could overrun the read times and returns its index
    (T when done): renumber them and call again.
    """
    now, marked, pending = clock[0], clock[1], clock[2]
    width, sweep = ids.shape[1], budgets.shape[0]
    capacity = bits.shape[0] * 64
    empty = budgets[0] == 0  # a budget of 0 rows: its cursor stays ABOVE
    keep = out.shape[0] > 0
    paged = pages.shape[0] > 0
    beyond = np.zeros(sweep + 1, dtype=np.int64)  # this token's reads by how many budgets they miss
    beyond_pages = np.zeros(sweep + 1, dtype=np.int64)  # and their pages
    tokens = ids.shape[0]
    for t in range(start, tokens):
        if now + width > capacity:
            clock[0], clock[1], clock[2] = now, marked, pending
            return t
        if t + AHEAD < tokens:
            for a in range(width):
                if ids[t + AHEAD, a] >= 0:
                    _prefetch(state, ids[t + AHEAD, a])
        if t + 1 < tokens:
            for a in range(width):
                if ids[t + 1, a] >= 0 and state[ids[t + 1, a], LAST] > 0:
                    _prefetch(bits, (state[ids[t + 1, a], LAST] - 1) >> 6)
        beyond[:] = 0
        if paged:
            beyond_pages[:] = 0
        doc = docs[t]
        for a in range(width):
            index = ids[t, a]
            if index < 0:
                if keep:
                    out[t, a] = NOT_READ
                continue
            seen = state[index, LAST] - 1
            bits[now >> 6] |= np.uint64(1) << np.uint64(now & 63)
            if seen < 0:  # a first read: every cursor moves on, a budget may get its first
                missed = sweep
                for k in range(1 if empty else 0, pending):
                    cursors[k] = _next_mark(cursors[k], bits)
                marked += 1
                if pending < sweep and budgets[pending] == marked:
                    cursors[pending] = _next_mark(-1, bits)
                    pending += 1
            else:
                bits[seen >> 6] &= ~(np.uint64(1) << np.uint64(seen & 63))
                missed = 1 if empty else 0
                while missed < pending and seen < cursors[missed]:
                    cursors[missed] = _next_mark(cursors[missed], bits)
                    missed += 1
                if missed < pending and seen == cursors[missed]:
                    cursors[missed] = _next_mark(seen, bits)
                if cold and state[index, DOC] != doc:
                    missed = sweep
            state[index, LAST] = now + 1
            state[index, READS] += 1
            if cold:
                state[index, DOC] = doc
            now += 1
            if keep:
                out[t, a] = missed
            beyond[missed] += 1
            if paged:
                beyond_pages[missed] += pages[t, a]
            tally[1] += 1
        tokens_missing = pages_missing = 0
        for b in range(sweep - 1, -1, -1):
            tokens_missing += beyond[b + 1]
            misses[b, tokens_missing] += 1
            if paged:
                pages_missing += beyond_pages[b + 1]
                page_misses[b] += pages_missing
        tally[0] += 1
    clock[0], clock[1], clock[2] = now, marked, pending
    tally[2] = marked
    return tokens


def _place_cursors(budgets, bits, now, cursors):
    """Each budget's cursor (the time of its ``budgets[k]``-th most recent mark; :data:`ABOVE`
    for 0 rows, :data:`NONE` beyond the marks) from the marks before ``now``; returns the first
    budget whose cursor is :data:`NONE`."""
    sweep = budgets.shape[0]
    k = 0
    while k < sweep and budgets[k] == 0:
        cursors[k] = ABOVE
        k += 1
    counted = 0  # the marks after the word being read
    word = (now - 1) >> 6
    while k < sweep and word >= 0:
        rest = bits[word]
        ones = _popcount(rest)
        while k < sweep and counted + ones >= budgets[k]:
            found = rest
            for _ in range(budgets[k] - counted - 1):  # drop the marks above the one sought
                found &= ~(np.uint64(1) << np.uint64(63 - leading_zeros(found)))
            cursors[k] = (word << 6) + 63 - np.int64(leading_zeros(found))
            k += 1
        counted += ones
        word -= 1
    for j in range(k, sweep):
        cursors[j] = NONE
    return k


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


def _fill(marked, bits):
    """Mark the times 0 .. ``marked`` - 1 and no other."""
    for word in range(bits.shape[0]):
        ones = min(max(marked - 64 * word, 0), 64)
        bits[word] = _ONES if ones == 64 else (np.uint64(1) << np.uint64(ones)) - np.uint64(1)


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


def _first_seen(rows, remap, known, ids):
    """The dense ids of the reads ``rows`` [T, A] (-1: not a read) into ``ids``: ``remap[row]``
    is the row's id + 1 (0: not read yet; a new row takes the next id, ``known[0]``: the ids
    given), so ids follow the order rows are first read in."""
    tokens = rows.shape[0]
    flat, out = rows.reshape(-1), ids.reshape(-1)
    given = known[0]
    for i in range(flat.shape[0]):
        if i + PREFETCH < flat.shape[0] and flat[i + PREFETCH] >= 0:
            _prefetch(remap, flat[i + PREFETCH])
        row = flat[i]
        if row < 0:
            out[i] = -1
            continue
        if remap[row] == 0:
            given += 1
            remap[row] = given
        out[i] = remap[row] - 1
    known[0] = given
    return tokens


def _rehash(old, table, shift):
    """Insert the entries of the hash table ``old`` (key in column 0, values after it) into ``table``."""
    for i in range(old.shape[0]):
        if old[i, 0] != EMPTY:
            slot = _slot(old[i, 0], table, shift)
            for column in range(old.shape[1]):
                table[slot, column] = old[i, column]


SLOT_BITS = 40  # a large direct cache's slot in its hash table: (budget << SLOT_BITS) | slot


@intrinsic
def _mulhi(typingctx, a, b):
    """The high 64 bits of the 128-bit product of two uint64 (one instruction)."""

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

    return types.uint64(types.uint64, types.uint64), codegen


def fast_modulus(divisor):
    """Lemire's constant for :func:`_fast_mod` by ``divisor`` (< 2^32): ceil(2^64 / divisor) mod 2^64."""
    return np.uint64(((1 << 64) - 1) // divisor + 1 & ((1 << 64) - 1))


def _fast_mod(value, magic, divisor):
    """``value mod divisor`` for value and divisor below 2^32, by two multiplications (Lemire,
    Kaser and Kurz, "Faster remainder by direct computation", 2019)."""
    return np.int64(_mulhi(np.uint64(value) * magic, np.uint64(divisor)))


def _count_direct(keys, docs, cold, sizes, magics, starts, slots, slot_docs, hits):
    """Count the hits of direct-mapped caches whose slots are arrays over the reads ``keys`` [T, A]
    (-1: not a read), one cache after another (each cache's slots stay in the CPU's caches as
    long as they can).

    Cache k has ``sizes[k]`` slots, ``slots[starts[k]:starts[k] + sizes[k]]`` (the key + 1 each
    holds; 0: empty) and with ``cold`` ``slot_docs`` alike (the document that filled it); a key
    lives in slot ``key mod sizes[k]`` (by :func:`_fast_mod` with ``magics[k]`` where keys are
    below 2^32: ``magics[k]`` 0 means plain ``%``). A read hits iff its slot holds its key (filled
    in its document, ``docs`` one per token, with ``cold``); otherwise it takes the slot.
    ``hits[k]`` gains the hits.
    """
    tokens, width = keys.shape
    flat = keys.reshape(-1)
    reads = flat.shape[0]
    for k in range(sizes.shape[0]):
        size, magic = sizes[k], magics[k]
        if size == 0 or starts[k] < 0:
            continue
        held = slots[starts[k] : starts[k] + size]
        held_docs = slot_docs[starts[k] : starts[k] + size] if cold else slot_docs
        found = 0
        upcoming = np.zeros(PREFETCH, dtype=np.int64)  # the slots of the next reads, found once
        for i in range(min(PREFETCH, reads)):
            ahead = flat[i]
            upcoming[i] = (_fast_mod(ahead, magic, size) if magic else ahead % size) if ahead >= 0 else 0
        for i in range(reads):
            slot = upcoming[i % PREFETCH]
            if i + PREFETCH < reads:
                ahead = flat[i + PREFETCH]
                next_slot = (_fast_mod(ahead, magic, size) if magic else ahead % size) if ahead >= 0 else 0
                upcoming[i % PREFETCH] = next_slot
                _prefetch(held, next_slot)
            key = flat[i]
            if key < 0:
                continue
            if held[slot] == key + 1 and (not cold or held_docs[slot] == docs[i // width]):
                found += 1
            else:
                held[slot] = key + 1
                if cold:
                    held_docs[slot] = docs[i // width]
        hits[k] += found
    return tokens


def _count_direct_hashed(keys, start, docs, cold, sizes, starts, table, shift, used, hits):
    """:func:`_count_direct` for the caches too large for an array (``starts[k] < 0``): their slots
    used are entries of ``table`` [S, 3] (key (k << SLOT_BITS) | slot, key + 1, document),
    ``used[0]`` of them taken, from the token ``start``. Stops before a token whose reads could
    fill more than half the table and returns its index (T when done): grow it and call again."""
    tokens, width, sweep = keys.shape[0], keys.shape[1], sizes.shape[0]
    hashed = 0
    for k in range(sweep):
        if starts[k] < 0 and sizes[k] > 0:
            hashed += 1
    half = table.shape[0] // 2
    for t in range(start, tokens):
        if used[0] + width * hashed > half:
            return t
        doc = docs[t]
        for a in range(width):
            key = keys[t, a]
            if key < 0:
                continue
            for k in range(sweep):
                if starts[k] >= 0 or sizes[k] == 0:
                    continue
                entry = (k << SLOT_BITS) | (key % sizes[k])
                at = _slot(entry, table, shift)
                if table[at, 0] == EMPTY:
                    table[at, 0] = entry
                    used[0] += 1
                elif table[at, 1] == key + 1 and (not cold or table[at, 2] == doc):
                    hits[k] += 1
                    continue
                table[at, 1] = key + 1
                table[at, 2] = doc
    return tokens


HELD, REFERENCED = 1, 2  # an id's bits for one CLOCK cache (two bits an id, four ids a byte)
AHEAD_SLOTS = 8  # slots between prefetching the bits of a slot's id and the hand reaching it


def _count_clock(ids, docs, cold, budgets, flags, ring, starts, fill, hands, current, hits):
    """Count the hits of CLOCK caches over the reads ``ids`` [T, A] (dense ids, -1: not a read),
    one cache after another (each cache's state stays in the CPU's caches as long as it can).

    Cache k has ``budgets[k]`` slots in a ring, ``ring[starts[k]:]``, whose first ``fill[k]``
    slots hold ids (the caller gives each ring room for every read of the block, up to its
    budget); ``flags[k]`` holds each id's two bits (:data:`HELD`, :data:`REFERENCED`; four ids
    a byte, both clear while the id is not held). A hit sets the referenced bit; a miss while
    slots are free fills the next free slot (bit clear); a miss on a full cache moves the hand
    (``hands[k]``) forward, clearing set bits, to the first slot whose bit is clear, puts the id
    there (bit clear) and leaves the hand one past it. With ``cold`` a cache is emptied when the
    document (``docs``, one per token) changes from ``current[k]``. ``hits[k]`` gains the hits.
    """
    tokens, width = ids.shape
    flat = ids.reshape(-1)
    reads = flat.shape[0]
    for k in range(budgets.shape[0]):
        size = budgets[k]
        if size == 0:
            continue
        bits = flags[k]
        base = starts[k]
        hand, filled, found, doc = hands[k], fill[k], 0, current[k]
        for i in range(reads):
            if i + CLOCK_AHEAD < reads and flat[i + CLOCK_AHEAD] >= 0:
                _prefetch(bits, flat[i + CLOCK_AHEAD] >> 2)
            if cold and docs[i // width] != doc:
                doc = docs[i // width]
                for j in range(filled):
                    other = ring[base + j]
                    bits[other >> 2] &= ~np.uint8(3 << ((other & 3) << 1))
                filled = hand = 0
            index = flat[i]
            if index < 0:
                continue
            byte, shift = index >> 2, (index & 3) << 1
            if (bits[byte] >> shift) & HELD:
                bits[byte] |= np.uint8(REFERENCED << shift)
                found += 1
                continue
            if filled < size:
                ring[base + filled] = index
                filled += 1
            else:
                other = ring[base + hand]
                while (bits[other >> 2] >> ((other & 3) << 1)) & REFERENCED:
                    bits[other >> 2] &= ~np.uint8(REFERENCED << ((other & 3) << 1))
                    hand = hand + 1 if hand + 1 < size else 0
                    other = ring[base + hand]
                    _prefetch(
                        bits, ring[base + (hand + AHEAD_SLOTS if hand + AHEAD_SLOTS < size else 0)] >> 2
                    )
                bits[other >> 2] &= ~np.uint8(3 << ((other & 3) << 1))
                ring[base + hand] = index
                hand = hand + 1 if hand + 1 < size else 0
                _prefetch(bits, ring[base + (hand + AHEAD_SLOTS if hand + AHEAD_SLOTS < size else 0)] >> 2)
            bits[byte] |= np.uint8(HELD << shift)
        hands[k], fill[k], current[k] = hand, filled, doc
        hits[k] += found
    return tokens


def _count_batches(ids, start, sizes, stamps, done, open_rows, open_reads, rows_out, reads_out, closed):
    """Count the distinct rows and the reads of every batch of ``sizes[j]`` consecutive tokens
    over ``ids[start:]`` ([T, A] dense ids, -1: not a read).

    ``done[0]``: the tokens counted before; ``stamps[id, j]``: the number (from 1) of the last
    batch of size j the id was counted in; ``open_rows[j]``, ``open_reads[j]``: the open batch's
    distinct rows and reads. A batch that closes (its last token counted) is appended to
    ``rows_out[j]`` and ``reads_out[j]`` at ``closed[j]``, which it advances.
    """
    tokens, width, kinds = ids.shape[0], ids.shape[1], sizes.shape[0]
    for t in range(start, tokens):
        position = done[0]
        for a in range(width):
            index = ids[t, a]
            if index < 0:
                continue
            for j in range(kinds):
                number = position // sizes[j] + 1
                open_reads[j] += 1
                if stamps[index, j] != number:
                    stamps[index, j] = number
                    open_rows[j] += 1
        for j in range(kinds):
            if (position + 1) % sizes[j] == 0:
                rows_out[j, closed[j]] = open_rows[j]
                reads_out[j, closed[j]] = open_reads[j]
                closed[j] += 1
                open_rows[j] = 0
                open_reads[j] = 0
        done[0] = position + 1
    return tokens


_popcount = compiled(_popcount)
_next_mark = compiled(_next_mark)
_slot = compiled(_slot)
count_misses = compiled(_count_misses)
place_cursors = compiled(_place_cursors)
renumber = compiled(_renumber)
fill = compiled(_fill)
identify = compiled(_identify)
first_seen = compiled(_first_seen)
rehash = compiled(_rehash)
_fast_mod = compiled(_fast_mod)
count_direct = compiled(_count_direct)
count_direct_hashed = compiled(_count_direct_hashed)
count_clock = compiled(_count_clock)
count_batches = compiled(_count_batches)
