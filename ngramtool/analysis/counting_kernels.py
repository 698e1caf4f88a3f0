"""Compiled kernels of the distinct n-gram counter (numba): a chunk's keys, run lengths, merges.

:class:`ngramtool.analysis.collisions.NgramTypeCounter` uses them when numba is installed and every
order's keys fit one uint64 word; otherwise it computes the same arrays with numpy. Each kernel
makes one pass and allocates nothing, so the counter's memory is its sorted distinct keys and
counts plus fixed buffers:

- :func:`ngram_keys`: the packed key of every unmasked position's n-grams, all orders at once,
  straight from the ids (the windows' pads at the stream and document starts and for masked
  ids included), instead of lag windows of ``N`` int64 per token;
- :func:`run_lengths`: a sorted buffer compacted in place to its distinct keys and counts;
- :func:`merge_run`: a sorted run merged into the sorted distinct keys in place, from the back
  (the caller grows the arrays by the run's size first and trims them after), so no element is
  overwritten before it is moved and no copy is made.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..jit import compiled


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


@intrinsic
def move_items(typingctx, array, start, stop, shift):
    """``array[start + shift : stop + shift] = array[start:stop]`` as one ``memmove`` (overlap
    allowed). Compiled code only; the caller keeps every index in bounds."""
    signature = types.void(array, types.intp, types.intp, types.intp)

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        first, last, by = args[1], args[2], args[3]
        itemsize = context.get_abi_sizeof(context.get_data_type(sig.args[0].dtype))
        source = builder.gep(data, [first])
        target = builder.gep(data, [builder.add(first, by)])
        cgutils.raw_memmove(builder, target, source, builder.sub(last, first), itemsize)
        return context.get_dummy_value()

    return signature, codegen


def _merge_run(keys, counts, size, run_keys, run_counts, distinct):
    """Merge the run (``distinct`` sorted distinct keys with counts) into ``keys[:size]`` (sorted,
    distinct; the arrays have room for ``size + distinct``); returns the merged size.

    From the back, branch-free: each step compares the last unmerged key of each side, writes the
    larger (equal keys once, counts added) and moves on in one or both. Writes never pass an
    unread key. A key present on both sides leaves a gap below the merged part, closed at the end
    by one ``memmove`` of the part that moved.
    """
    i = size - 1
    j = distinct - 1
    k = size + distinct - 1
    while i >= 0 and j >= 0:
        present = keys[i]
        key = run_keys[j]
        count_present = counts[i]
        count_key = run_counts[j]
        take_present = present >= key
        take_key = key >= present
        keys[k] = present if take_present else key
        counts[k] = (count_present if take_present else 0) + (count_key if take_key else 0)
        i -= take_present
        j -= take_key
        k -= 1
    while j >= 0:
        keys[k] = run_keys[j]
        counts[k] = run_counts[j]
        j -= 1
        k -= 1
    gap = k - i  # keys found in both: the merged part starts that far above the untouched part
    end = size + distinct
    if gap:
        move_items(keys, k + 1, end, -gap)
        move_items(counts, k + 1, end, -gap)
    return end - gap


ngram_keys = compiled(_ngram_keys)
run_lengths = compiled(_run_lengths)
merge_run = compiled(_merge_run)
