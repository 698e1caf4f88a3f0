"""Pipeline plumbing: splitting chunks keeps document starts; write-behind keeps order and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ngramtool.formats.behind import WriteBehind
from ngramtool.pipeline import TokenChunk, split_chunk


@given(st.integers(0, 40), st.lists(st.integers(0, 40), max_size=6), st.integers(1, 9))
def test_split_chunk_keeps_every_start_in_place(size, raw_starts, piece):
    starts = np.asarray(sorted(min(s, size) for s in raw_starts), dtype=np.int64)
    chunk = TokenChunk(np.arange(size, dtype=np.uint32), starts, nbytes=123, hard_cuts=2)
    pieces = list(split_chunk(chunk, piece))
    assert np.array_equal(np.concatenate([p.tokens for p in pieces]), chunk.tokens)
    offsets = np.cumsum([0] + [p.tokens.shape[0] for p in pieces[:-1]])
    rebuilt = np.concatenate([p.doc_starts + o for p, o in zip(pieces, offsets, strict=True)])
    assert rebuilt.tolist() == starts.tolist()
    assert sum(p.nbytes for p in pieces) == 123 and sum(p.hard_cuts for p in pieces) == 2
    assert all(p.tokens.shape[0] <= piece for p in pieces)


def test_write_behind_runs_in_order_and_raises_errors():
    seen = []
    with WriteBehind(depth=2) as behind:
        for i in range(50):
            behind.submit(seen.append, i)
    assert seen == list(range(50))

    def fail(_value):
        raise OSError(28, "No space left on device")

    behind = WriteBehind()
    behind.submit(fail, 1)
    with pytest.raises(OSError, match="No space left"):
        for i in range(10):
            behind.submit(seen.append, i)
        behind.drain()
