"""The caches ``ngramtool cache`` simulates, each exact, over one stream of row reads.

A read is a key (a row, the rows of every Engram layer numbered apart) of a token; ``-1`` is no
read. Every simulator takes the reads a block of tokens at a time ([T, A] keys, the document of
each token) and carries its state from block to block:

- **LRU** at every budget at once: :class:`CompiledStack` (numba: a cursor per budget on a
  bitmap of last reads) or :class:`NumpyStack` (each read's stack distance), tallied per token
  by :class:`Tally` (misses per token, and the pages those misses read);
- **CLOCK** (:class:`CompiledClock`, :class:`NumpyClock`) and **direct-mapped**
  (:class:`CompiledDirect`, :class:`NumpyDirect`) caches, one per budget;
- the **distinct rows of every batch** of N tokens (:class:`CompiledBatches`,
  :class:`NumpyBatches`).

The compiled ones run the kernels of :mod:`ngramtool.analysis.row_cache_kernels` over dense ids
(:class:`RowIds`); the numpy ones are the fallback without numba and give the same counts.
docs/analysis.md ("How it is computed") describes each.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

NOT_READ = -2  # a masked position: no read
FIRST = -1  # a first read (of the stream, or of the document with cold starts)
DIRECT_ROWS = 1 << 26  # the compiled pass indexes its per-row state by the row in row spaces up to this
TIME_ROOM = 4  # the compiled pass's read times: this many times the distinct rows, then renumbered
ARRAY_SLOTS = 1 << 26  # a direct-mapped cache up to this many slots is an array; larger: a hash table
BEYOND = np.iinfo(np.int64).max  # the last budget of a sweep: beyond any count of rows
_EMPTY_OUT = np.zeros((0, 0), dtype=np.int64)


def _empty_table(columns: int) -> np.ndarray:
    from .row_cache_kernels import EMPTY

    return np.full((1 << 10, columns), EMPTY, dtype=np.int64)


def _grown(table: np.ndarray, needed: int) -> tuple[np.ndarray, int]:
    """A hash table of twice the size (more until ``needed`` entries fill at most half of it)
    holding ``table``'s entries, and its shift."""
    from . import row_cache_kernels

    size = table.shape[0] * 2
    while needed > size // 2:
        size *= 2
    grown = np.full((size, table.shape[1]), row_cache_kernels.EMPTY, dtype=np.int64)
    shift = 64 - size.bit_length() + 1
    row_cache_kernels.rehash(table, grown, shift)
    return grown, shift


class RowIds:
    """The index of each row's state in the compiled simulators: a dense id, in the order rows are
    first read (the rows read most tend to come first, so their state packs into fewer cache
    lines). In row spaces up to :data:`DIRECT_ROWS` (``rows`` given: every row read is below it)
    a row's id is found in an array over the rows (allocated zeroed: the OS backs the pages of
    rows read) and the simulators' state is allocated for every row (the pages of the ids given
    are backed: O(distinct rows)); else a row's id is found in a hash table and the state grows
    with the ids. One per cache, shared by its simulators: a block's ids are found once."""

    def __init__(self, rows: int | None = None) -> None:
        from . import row_cache_kernels

        self._kernels = row_cache_kernels
        self.direct = rows is not None and rows <= DIRECT_ROWS
        self._rows = rows
        self._remap = np.zeros(int(rows) if self.direct else 0, dtype=np.int32)  # id + 1 of each row
        self._table = _empty_table(2)  # row, dense id
        self._shift, self._known = 64 - 10, np.zeros(1, dtype=np.int64)  # hash shift, ids given
        # Every id is below it: the row space, where ids index arrays allocated zeroed (the
        # pages of the ids given are backed, the first ids first), else grown as ids are given.
        self.capacity = int(rows) if self.direct else 1 << 9
        self._last: tuple[np.ndarray, np.ndarray] | None = None

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """The ids of ``rows`` ([T, A], -1: not a read, kept)."""
        if self._last is not None and self._last[0] is rows:
            return self._last[1]
        ids = np.empty(rows.shape, dtype=np.int64)
        if self.direct:
            if rows.size and int(rows.max()) >= self._remap.shape[0]:
                raise ValueError(f"a row of {int(rows.max())} is beyond the {self._rows} rows given")
            self._kernels.first_seen(rows, self._remap, self._known, ids)
        else:
            start = 0
            while (
                start := self._kernels.identify(rows, start, self._table, self._shift, self._known, ids)
            ) < rows.shape[0]:
                self._table, self._shift = _grown(self._table, int(self._known[0]) + rows.shape[1])
        while self.capacity < int(self._known[0]):
            self.capacity *= 2
        self._last = (rows, ids)
        return ids

    def rows_of(self, reads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows, reads) of the ids read at least once, from per-id ``reads``."""
        if self.direct:
            rows = np.flatnonzero(self._remap)
            return rows.astype(np.int64), reads[self._remap[rows].astype(np.int64) - 1]
        used = self._table[self._table[:, 0] != self._kernels.EMPTY]
        return used[:, 0].copy(), reads[used[:, 1]]


def _fitted(array: np.ndarray, capacity: int) -> np.ndarray:
    """``array`` with ``capacity`` lines when it has fewer (grown zeroed)."""
    if array.shape[0] >= capacity:
        return array
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[: array.shape[0]] = array
    return grown


# ------------------------------------------------------------------------------ LRU stacks
class LruStack(Protocol):
    """One LRU cache's state over a stream of reads, counting each token's misses at every budget."""

    def count(
        self, rows: np.ndarray, docs: np.ndarray, tally: Tally, pages: np.ndarray | None = None
    ) -> None:
        """Count the reads ``rows`` [T, A] (-1: not a read) of tokens of documents ``docs`` [T]
        into ``tally`` (always the same tally: its budgets are part of the state); ``pages``
        [T, A]: the pages each read touches, tallied for the reads that miss."""
        ...

    def budgets_missed(
        self, rows: np.ndarray, docs: np.ndarray, tally: Tally, pages: np.ndarray | None = None
    ) -> np.ndarray:
        """:meth:`count`, and how many of ``tally``'s budgets each read misses [T, A] (-1: not a read)."""
        ...

    def frequencies(self) -> np.ndarray:
        """The reads of every distinct row so far (in no particular order)."""
        ...

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, reads) of every distinct row so far (in no particular order)."""
        ...


class CompiledStack:
    """The budgets each read misses, by the numba kernels (:mod:`ngramtool.analysis.row_cache_kernels`).

    The per-row state is indexed by :class:`RowIds` (``ids``; or its own, for ``rows``: every
    row read is below it, None: unknown).
    """

    def __init__(self, cold: bool, rows: int | None = None, ids: RowIds | None = None) -> None:
        from . import row_cache_kernels

        self._kernels = row_cache_kernels
        self._cold = cold
        self._ids = ids if ids is not None else RowIds(rows)
        columns = 3 if cold else 2  # last read time + 1, reads, document of the last read
        self._state = np.zeros((self._ids.capacity, columns), dtype=np.int64)
        self._clock = np.zeros(3, dtype=np.int64)  # the next read time, the rows marked, the first budget
        self._bits = np.zeros(8, dtype=np.uint64)  # with no cursor; the marks of the last reads
        self._budgets: np.ndarray | None = None
        self._cursors = np.zeros(0, dtype=np.int64)

    def count(
        self, rows: np.ndarray, docs: np.ndarray, tally: Tally, pages: np.ndarray | None = None
    ) -> None:
        self._run(rows, docs, tally, _EMPTY_OUT, pages)

    def budgets_missed(
        self, rows: np.ndarray, docs: np.ndarray, tally: Tally, pages: np.ndarray | None = None
    ) -> np.ndarray:
        out = np.empty(rows.shape, dtype=np.int64)
        self._run(rows, docs, tally, out, pages)
        return out

    def frequencies(self) -> np.ndarray:
        reads = self._state[:, self._kernels.READS]
        return reads[reads > 0]

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        return self._ids.rows_of(self._state[:, self._kernels.READS])

    def _run(
        self, rows: np.ndarray, docs: np.ndarray, tally: Tally, out: np.ndarray, pages: np.ndarray | None
    ) -> None:
        ids = self._ids(rows)
        self._state = _fitted(self._state, self._ids.capacity)
        if self._budgets is None or not np.array_equal(self._budgets, tally.budgets):
            self._budgets = tally.budgets
            self._cursors = np.empty(tally.budgets.shape[0], dtype=np.int64)
            self._place_cursors()
        pages = _EMPTY_OUT if pages is None else pages
        start = 0
        while True:
            start = self._kernels.count_misses(
                ids,
                start,
                docs,
                self._cold,
                self._state,
                self._clock,
                self._bits,
                self._cursors,
                self._budgets,
                tally.counters,
                tally.token_misses,
                out,
                pages,
                tally.page_misses,
            )
            if start == rows.shape[0]:
                return
            self._renumber(rows.shape[1])

    def _place_cursors(self) -> None:
        self._clock[2] = self._kernels.place_cursors(self._budgets, self._bits, self._clock[0], self._cursors)

    def _renumber(self, width: int) -> None:
        """Renumber the read times 0, 1, ... (each row's last read only) into room for
        :data:`TIME_ROOM` times the rows marked, and place the cursors again."""
        marked = self._kernels.renumber(self._state, self._bits)
        self._bits = np.empty(-(-TIME_ROOM * (marked + width) // 64), dtype=np.uint64)
        self._kernels.fill(marked, self._bits)
        self._clock[0] = marked
        if self._budgets is not None:
            self._place_cursors()


class NumpyStack:
    """Stack distances with numpy, a chunk at a time (the same counts as :class:`CompiledStack`).

    The state is each distinct row's last read, in time order. Within a chunk, the distance of a
    read at ``q`` whose row was read last at ``p`` is ``q - p - 1`` minus the reads in between
    that are not the last of their row before ``q``: the intervals (previous read, read) nested
    in ``(p, q)``, counted by a merge-sort count of inversions.
    """

    def __init__(self, cold: bool) -> None:
        self._cold = cold
        self._rows = np.zeros(0, dtype=np.int64)  # the distinct rows, by their last read's time
        self._docs = np.zeros(0, dtype=np.int64)  # the document of each one's last read
        self._freq = np.zeros(0, dtype=np.int64)

    def count(
        self, rows: np.ndarray, docs: np.ndarray, tally: Tally, pages: np.ndarray | None = None
    ) -> None:
        self.budgets_missed(rows, docs, tally, pages)

    def budgets_missed(
        self, rows: np.ndarray, docs: np.ndarray, tally: Tally, pages: np.ndarray | None = None
    ) -> np.ndarray:
        missed = tally.budgets_missed(self.distances(rows, docs))
        tally.add(missed, self._rows.shape[0], pages)
        return missed

    def distances(self, rows: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """Each read's stack distance [T, A]: :data:`NOT_READ`, :data:`FIRST` (a first read, of the
        stream or of its document with cold starts) or the distinct rows read since the previous
        read of its row."""
        flat = rows.reshape(-1)
        out = np.full(flat.shape[0], NOT_READ, dtype=np.int64)
        where = np.flatnonzero(flat >= 0)
        read, doc = flat[where], np.repeat(docs, rows.shape[1])[where]
        order = np.argsort(read, kind="stable")
        ordered = read[order]
        same = ordered[1:] == ordered[:-1]
        before = np.full(read.shape[0], -1, dtype=np.int64)  # the previous read of the row in the chunk
        before[order[1:][same]] = order[:-1][same]
        held = self._rows.shape[0]
        sorter = np.argsort(self._rows)
        found = np.searchsorted(self._rows, read, sorter=sorter)
        found = sorter[np.minimum(found, max(held - 1, 0))] if held else found
        in_history = (before < 0) & (self._rows[found] == read) if held else np.zeros(read.shape, bool)
        prev = np.where(before >= 0, held + before, -1)
        prev[in_history] = found[in_history]
        prev_doc = np.where(before >= 0, doc[np.maximum(before, 0)], -1)
        prev_doc[in_history] = self._docs[found[in_history]]
        seen = np.flatnonzero(prev >= 0)
        nested = _earlier_greater(prev[seen])
        distance = np.full(read.shape[0], FIRST, dtype=np.int64)
        distance[seen] = held + seen - prev[seen] - 1 - nested
        if self._cold:
            distance[(prev >= 0) & (prev_doc != doc)] = FIRST
        out[where] = distance
        self._advance(read, doc, order, ordered)
        return out.reshape(rows.shape)

    def frequencies(self) -> np.ndarray:
        return self._freq.copy()

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        return self._rows.copy(), self._freq.copy()

    def _advance(self, read: np.ndarray, doc: np.ndarray, order: np.ndarray, ordered: np.ndarray) -> None:
        """The state after the chunk: rows not read in it, then its rows by their last read."""
        if not read.shape[0]:
            return
        ends = np.flatnonzero(np.append(ordered[1:] != ordered[:-1], True))  # each row's last read
        reads = np.diff(np.append(-1, ends))
        last = order[ends]
        by_time = np.argsort(last)
        chunk_rows = ordered[ends]
        read_before = np.isin(self._rows, chunk_rows)
        earlier = np.zeros(chunk_rows.shape[0], dtype=np.int64)
        position = np.searchsorted(chunk_rows, self._rows[read_before])
        earlier[position] = self._freq[read_before]
        self._rows = np.concatenate([self._rows[~read_before], chunk_rows[by_time]])
        self._docs = np.concatenate([self._docs[~read_before], doc[last][by_time]])
        self._freq = np.concatenate([self._freq[~read_before], (reads + earlier)[by_time]])


def _earlier_greater(values: np.ndarray) -> np.ndarray:
    """For each of the distinct ``values``, how many values before it are greater (bottom-up merge
    sort: at each width, the right half of a block counts the greater values of its left half)."""
    n = values.shape[0]
    rank = np.empty(n, dtype=np.int64)
    rank[np.argsort(values)] = np.arange(n)
    index = np.arange(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    width = 1
    while width < n:
        block = index // (2 * width)
        right = (index // width) % 2 == 1
        left = np.sort(block[~right] * n + rank[~right])
        key = block[right] * n
        out[right] += np.searchsorted(left, key + n) - np.searchsorted(left, key + rank[right], side="right")
        width *= 2
    return out


# ------------------------------------------------------------------------------ tallying
class Tally:
    """Per-token misses at sorted budgets (rows; the last beyond any count of rows) of one cache.

    ``token_misses[b, m]``: the tokens with ``m`` misses in a cache of ``budgets[b]`` rows;
    ``page_misses[b]``: the pages those misses read (when pages are counted); ``counters``:
    [tokens, reads, distinct rows read]. The compiled pass counts into them itself; :meth:`add`
    counts the numpy pass's reads.
    """

    def __init__(self, budgets: np.ndarray, width: int) -> None:
        self.budgets = budgets
        self.token_misses = np.zeros((budgets.shape[0], width + 1), dtype=np.int64)
        self.page_misses = np.zeros(budgets.shape[0], dtype=np.int64)
        self.counters = np.array([0, 0, 0], dtype=np.int64)
        self.saturated: int | None = None  # rows from which only first reads miss (None: the distinct rows)

    def budgets_missed(self, distances: np.ndarray) -> np.ndarray:
        """How many of the budgets each read of stack ``distances`` misses (-1: not a read)."""
        far = np.where(distances == FIRST, np.iinfo(np.int64).max, distances)
        missed = np.searchsorted(self.budgets, far, side="right")  # the budgets at or below the distance
        missed[distances == NOT_READ] = -1
        return missed

    def add(self, missed: np.ndarray, distinct: int, pages: np.ndarray | None = None) -> None:
        """Count a block of tokens' reads by the budgets each misses ([T, A], -1: not a read);
        ``distinct``: the distinct rows read so far; ``pages`` [T, A]: each read's pages."""
        tokens = missed.shape[0]
        sweep = self.budgets.shape[0]
        slots = np.arange(tokens)[:, None] * (sweep + 1) + np.maximum(missed, 0)
        per_token = np.bincount(slots.reshape(-1), minlength=tokens * (sweep + 1)).reshape(tokens, sweep + 1)
        misses = per_token[:, ::-1].cumsum(axis=1)[:, ::-1]  # column b+1: misses at budget b
        for b in range(sweep):
            self.token_misses[b] += np.bincount(misses[:, b + 1], minlength=self.token_misses.shape[1])
        if pages is not None:
            read = missed >= 0
            by_missed = np.zeros(sweep + 1, dtype=np.int64)
            np.add.at(by_missed, missed[read], pages[read])
            self.page_misses += by_missed[::-1].cumsum()[::-1][1:]  # pages of the reads missing each
        self.counters[0] += tokens
        self.counters[1] += int(np.count_nonzero(missed >= 0))
        self.counters[2] = distinct

    @property
    def tokens(self) -> int:
        """Tokens counted."""
        return int(self.counters[0])

    @property
    def accesses(self) -> int:
        """Reads counted."""
        return int(self.counters[1])

    @property
    def first(self) -> int:
        """Reads with no finite distance: the misses of a cache beyond every distance."""
        return self._misses(self.budgets.shape[0] - 1)

    def counted(self, rows: int) -> bool:
        """Whether a cache of ``rows`` was counted: one of the budgets, or at least every distinct
        row (then only first reads miss)."""
        at = int(np.searchsorted(self.budgets, rows))
        return (at < self.budgets.shape[0] and self.budgets[at] == rows) or rows >= self._saturated

    def lru_hits(self, rows: int) -> int:
        """Hits of a cache of ``rows``: the reads at a distance below it."""
        return self.accesses - self._misses(self._budget(rows))

    def misses_per_token(self, rows: int) -> np.ndarray:
        """Tokens by their misses in a cache of ``rows``."""
        return self.token_misses[self._budget(rows)]

    def pages_missed(self, rows: int) -> int:
        """Pages read by the misses of a cache of ``rows``."""
        return int(self.page_misses[self._budget(rows)])

    def _misses(self, budget: int) -> int:
        return int(self.token_misses[budget] @ np.arange(self.token_misses.shape[1]))

    def _budget(self, rows: int) -> int:
        """The budget counted for a cache of ``rows``: one of the budgets, or the last for a cache
        of every distinct row (only first reads miss)."""
        at = int(np.searchsorted(self.budgets, rows))
        if at < self.budgets.shape[0] and self.budgets[at] == rows:
            return at
        if rows >= self._saturated:
            return self.budgets.shape[0] - 1
        raise ValueError(f"no misses were counted for a cache of {rows} rows")

    @property
    def _saturated(self) -> int:
        """A cache of this many rows or more misses only first reads: every distinct row fits (for
        caches split by layer, ``saturated``: the most distinct rows of one part)."""
        return int(self.counters[2]) if self.saturated is None else self.saturated


# ------------------------------------------------------------------------------ CLOCK, direct
class PolicyCaches(Protocol):
    """One cache per budget of a policy over the same reads; ``hits[k]``: the hits of ``budgets[k]``."""

    budgets: np.ndarray
    hits: np.ndarray

    def count(self, rows: np.ndarray, docs: np.ndarray) -> None:
        """Count the reads ``rows`` [T, A] (-1: not a read) of tokens of documents ``docs`` [T]."""
        ...


class CompiledDirect:
    """Direct-mapped caches, one per budget (rows, sorted), by :func:`row_cache_kernels.count_direct`.

    A budget at or beyond the row space ``space`` gives every key a slot of its own (``key mod
    B`` is the key): only first reads miss, and it is not simulated (its hits stay 0; the report
    counts them). The slots of caches up to :data:`ARRAY_SLOTS` are one
    array (allocated zeroed: the OS backs the pages slots are filled in); larger caches keep the
    slots used in one hash table (O(distinct rows)).
    """

    def __init__(self, budgets: np.ndarray, space: int, cold: bool) -> None:
        from . import row_cache_kernels

        self._kernels = row_cache_kernels
        self.budgets = np.asarray(budgets, dtype=np.int64)
        self.hits = np.zeros(self.budgets.shape[0], dtype=np.int64)
        # A cache of the whole row space gives every row a slot of its own (hits: every read but
        # the first): not simulated (size 0: its hits stay 0).
        self._sizes = np.where(self.budgets >= space, 0, self.budgets)
        small = self._sizes <= ARRAY_SLOTS
        ends = np.cumsum(np.where(small, self._sizes, 0))
        self._starts = np.where(small, ends - np.where(small, self._sizes, 0), -1).astype(np.int64)
        total = int(ends[-1]) if ends.size else 0
        self._slots = np.zeros(total, dtype=np.int32 if space < 2**31 - 1 else np.int64)
        self._slot_docs = np.zeros(total if cold else 0, dtype=np.int64)
        fast = space <= 1 << 32  # keys and sizes below 2^32: the remainder by multiplication
        self._magics = np.array(
            [row_cache_kernels.fast_modulus(int(size)) if fast and size > 0 else 0 for size in self._sizes],
            dtype=np.uint64,
        )
        self._hashed = bool((~small & (self._sizes > 0)).any())
        self._table, self._shift = _empty_table(3), 64 - 10
        self._used = np.zeros(1, dtype=np.int64)
        self._cold = cold

    def count(self, rows: np.ndarray, docs: np.ndarray) -> None:
        kernels = self._kernels
        kernels.count_direct(
            rows,
            docs,
            self._cold,
            self._sizes,
            self._magics,
            self._starts,
            self._slots,
            self._slot_docs,
            self.hits,
        )
        start = 0
        while (
            self._hashed
            and (
                start := kernels.count_direct_hashed(
                    rows,
                    start,
                    docs,
                    self._cold,
                    self._sizes,
                    self._starts,
                    self._table,
                    self._shift,
                    self._used,
                    self.hits,
                )
            )
            < rows.shape[0]
        ):
            hashed = int(np.count_nonzero((self._starts < 0) & (self._sizes > 0)))
            self._table, self._shift = _grown(self._table, int(self._used[0]) + rows.shape[1] * hashed)


class CompiledClock:
    """CLOCK caches, one per budget (rows), by :func:`row_cache_kernels.count_clock`: each ring
    grows as it fills, up to its budget; two bits per id and budget."""

    def __init__(self, budgets: np.ndarray, cold: bool, ids: RowIds, space: int | None = None) -> None:
        from . import row_cache_kernels

        self._kernels = row_cache_kernels
        self.budgets = np.asarray(budgets, dtype=np.int64)
        # A cache of the whole row space never evicts (hits: every read but the first): not
        # simulated (size 0: its hits stay 0).
        self._sizes = self.budgets if space is None else np.where(self.budgets >= space, 0, self.budgets)
        sweep = self.budgets.shape[0]
        self.hits = np.zeros(sweep, dtype=np.int64)
        self._ids = ids
        self._flags = np.zeros((sweep, -(-ids.capacity // 4)), dtype=np.uint8)  # two bits an id
        self._room = np.zeros(sweep, dtype=np.int64)
        self._starts = np.zeros(sweep, dtype=np.int64)
        self._ring = np.zeros(0, dtype=np.int32)
        self._fill = np.zeros(sweep, dtype=np.int64)
        self._hands = np.zeros(sweep, dtype=np.int64)
        self._current = np.full(sweep, -1, dtype=np.int64)
        self._cold = cold

    def count(self, rows: np.ndarray, docs: np.ndarray) -> None:
        ids = self._ids(rows)
        if 4 * self._flags.shape[1] < self._ids.capacity:
            wide = -(-self._ids.capacity // 4)
            flags = np.zeros((self._flags.shape[0], wide), np.uint8)
            flags[:, : self._flags.shape[1]] = self._flags
            self._flags = flags
        self._make_room(rows.size)
        self._kernels.count_clock(
            ids, docs, self._cold, self._sizes, self._flags, self._ring, self._starts,
            self._fill, self._hands, self._current, self.hits,
        )  # fmt: skip

    def _make_room(self, reads: int) -> None:
        """Give every ring room for ``reads`` more ids (up to its budget), twice what it needs
        when it grows, and lay the rings out again."""
        needed = np.minimum(self._sizes, self._fill + reads)
        if (needed <= self._room).all():
            return
        room = np.where(
            needed > self._room, np.minimum(self._sizes, np.maximum(needed, 2 * self._room)), self._room
        )
        starts = np.concatenate([[0], np.cumsum(room)[:-1]]).astype(np.int64)
        ring = np.zeros(int(room.sum()), dtype=np.int32)  # dense ids
        for k in range(self.budgets.shape[0]):
            ring[starts[k] : starts[k] + self._fill[k]] = self._ring[
                self._starts[k] : self._starts[k] + self._fill[k]
            ]
        self._room, self._starts, self._ring = room, starts, ring


class NumpyDirect:
    """Direct-mapped caches with numpy (the same counts as :class:`CompiledDirect`): a read hits iff
    the previous read of its slot was of its key (in its document, with cold starts). Each
    budget's state is the occupant of every slot read so far (sorted by slot)."""

    def __init__(self, budgets: np.ndarray, space: int, cold: bool) -> None:
        self.budgets = np.asarray(budgets, dtype=np.int64)
        self.hits = np.zeros(self.budgets.shape[0], dtype=np.int64)
        self._sizes = np.where(self.budgets >= space, 0, self.budgets)  # the whole row space: not simulated
        empty = np.zeros(0, dtype=np.int64)
        self._held = [(empty, empty, empty) for _ in self._sizes]  # slots, keys, documents
        self._cold = cold

    def count(self, rows: np.ndarray, docs: np.ndarray) -> None:
        flat = rows.reshape(-1)
        read = flat >= 0
        keys, doc = flat[read], np.repeat(docs, rows.shape[1])[read]
        for k, size in enumerate(self._sizes.tolist()):
            if size == 0 or not keys.shape[0]:
                continue
            slot = keys % size
            order = np.argsort(slot, kind="stable")
            slots, held, held_doc = slot[order], keys[order], doc[order]
            starts = np.append(True, slots[1:] != slots[:-1])  # the first read of each slot in the block
            before = np.append(-1, held[:-1])
            before_doc = np.append(-1, held_doc[:-1])
            known_slots, known_keys, known_docs = self._held[k]
            at = np.minimum(np.searchsorted(known_slots, slots[starts]), max(known_slots.shape[0] - 1, 0))
            found = known_slots[at] == slots[starts] if known_slots.shape[0] else np.zeros(0, bool)
            before[starts] = np.where(found, known_keys[at], -1) if known_slots.shape[0] else -1
            before_doc[starts] = np.where(found, known_docs[at], -1) if known_slots.shape[0] else -1
            hit = (before == held) & ((before_doc == held_doc) | (not self._cold))
            self.hits[k] += int(np.count_nonzero(hit))
            ends = np.append(slots[1:] != slots[:-1], True)  # each slot's last read: its occupant now
            merged = np.concatenate([slots[ends], known_slots])
            _, first = np.unique(merged, return_index=True)  # the block's occupant before the older one
            self._held[k] = (
                merged[first],
                np.concatenate([held[ends], known_keys])[first],
                np.concatenate([held_doc[ends], known_docs])[first],
            )


class NumpyClock:
    """CLOCK caches read by read (the same counts as :class:`CompiledClock`; slow: the fallback
    without numba). Each budget: the ring of keys, their referenced bits, the slot of each key
    held, the hand."""

    def __init__(self, budgets: np.ndarray, cold: bool) -> None:
        self.budgets = np.asarray(budgets, dtype=np.int64)
        self.hits = np.zeros(self.budgets.shape[0], dtype=np.int64)
        self._rings: list[list[int]] = [[] for _ in self.budgets]
        self._bits: list[list[bool]] = [[] for _ in self.budgets]
        self._held: list[dict[int, int]] = [{} for _ in self.budgets]
        self._hands = [0] * self.budgets.shape[0]
        self._doc: int | None = None
        self._cold = cold

    def count(self, rows: np.ndarray, docs: np.ndarray) -> None:
        for token, doc in zip(rows.tolist(), docs.tolist(), strict=True):
            if self._cold and doc != self._doc:
                for k in range(len(self._rings)):
                    self._rings[k], self._bits[k], self._held[k], self._hands[k] = [], [], {}, 0
            self._doc = doc
            for key in token:
                if key >= 0:
                    for k, size in enumerate(self.budgets.tolist()):
                        self._read(k, size, key)

    def _read(self, k: int, size: int, key: int) -> None:
        ring, bits, held = self._rings[k], self._bits[k], self._held[k]
        if key in held:
            bits[held[key]] = True
            self.hits[k] += 1
            return
        if size == 0:
            return
        if len(ring) < size:
            held[key] = len(ring)
            ring.append(key)
            bits.append(False)
            return
        hand = self._hands[k]
        while bits[hand]:
            bits[hand] = False
            hand = (hand + 1) % size
        del held[ring[hand]]
        ring[hand], bits[hand], held[key] = key, False, hand
        self._hands[k] = (hand + 1) % size


# ------------------------------------------------------------------------------ batches
class BatchCounter(Protocol):
    """The distinct rows and the reads of every whole batch of ``sizes[j]`` tokens, in order."""

    sizes: np.ndarray

    def count(self, rows: np.ndarray) -> None:
        """Count the next tokens' reads ``rows`` [T, A] (-1: not a read)."""
        ...

    def batches(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """(distinct rows, reads) of each whole batch of ``sizes[j]`` tokens so far."""
        ...


class CompiledBatches:
    """Distinct rows per batch by :func:`row_cache_kernels.count_batches`: a stamp per id and
    batch size (the last batch it was counted in)."""

    def __init__(self, sizes: np.ndarray, ids: RowIds) -> None:
        from . import row_cache_kernels

        self._kernels = row_cache_kernels
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self._ids = ids
        kinds = self.sizes.shape[0]
        self._stamps = np.zeros((ids.capacity, kinds), dtype=np.int64)
        self._done = np.zeros(1, dtype=np.int64)
        self._open = np.zeros((2, kinds), dtype=np.int64)  # the open batch's distinct rows, reads
        self._closed: list[list[np.ndarray]] = [[] for _ in range(kinds)]

    def count(self, rows: np.ndarray) -> None:
        ids = self._ids(rows)
        self._stamps = _fitted(self._stamps, self._ids.capacity)
        kinds = self.sizes.shape[0]
        most = rows.shape[0] // int(self.sizes.min()) + 1
        distinct, reads = np.zeros((kinds, most), dtype=np.int64), np.zeros((kinds, most), dtype=np.int64)
        closed = np.zeros(kinds, dtype=np.int64)
        self._kernels.count_batches(
            ids,
            0,
            self.sizes,
            self._stamps,
            self._done,
            self._open[0],
            self._open[1],
            distinct,
            reads,
            closed,
        )
        for j in range(kinds):
            self._closed[j].append(np.stack([distinct[j, : closed[j]], reads[j, : closed[j]]]))

    def batches(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        both = np.concatenate([np.zeros((2, 0), dtype=np.int64), *self._closed[j]], axis=1)
        return both[0], both[1]


class NumpyBatches:
    """Distinct rows per batch with numpy (the same counts as :class:`CompiledBatches`): the
    distinct (batch, row) pairs of each block, the open batch's rows carried to the next."""

    def __init__(self, sizes: np.ndarray) -> None:
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self._done = 0
        empty = np.zeros(0, dtype=np.int64)
        self._open = [(empty, 0) for _ in self.sizes]  # the open batch's distinct rows, reads
        self._closed: list[list[np.ndarray]] = [[] for _ in self.sizes]

    def count(self, rows: np.ndarray) -> None:
        tokens = rows.shape[0]
        position = np.repeat(self._done + np.arange(tokens, dtype=np.int64), rows.shape[1])
        flat = rows.reshape(-1)
        read = flat >= 0
        for j, size in enumerate(self.sizes.tolist()):
            first = self._done // size  # the open batch
            end = (self._done + tokens) // size  # batches before it close in this block
            number = position[read] // size - first
            carried, carried_reads = self._open[j]
            number = np.concatenate([np.zeros(carried.shape[0], dtype=np.int64), number])
            keys = np.concatenate([carried, flat[read]])
            pairs = np.unique(np.stack([number, keys]), axis=1)
            span = end - first + 1
            distinct = np.bincount(pairs[0], minlength=span)
            reads = np.bincount(number[carried.shape[0] :], minlength=span)
            reads[0] += carried_reads
            self._closed[j].append(np.stack([distinct[: end - first], reads[: end - first]]))
            self._open[j] = (pairs[1][pairs[0] == end - first], int(reads[end - first]))
        self._done += tokens

    def batches(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        both = np.concatenate([np.zeros((2, 0), dtype=np.int64), *self._closed[j]], axis=1)
        return both[0], both[1]
