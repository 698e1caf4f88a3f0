"""Raw token ids -> canonical ids through a lookup table, with errors that name the position.

The one mapping every reader of raw ids shares: the compressed vocabulary
(:meth:`ngramtool.vocab.CompressedVocab.canonicalize`) and the readers that have only an index's
table (:mod:`ngramtool.rawrows`), which need none of the tokenizer machinery.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import NgramToolError

UNASSIGNED = -1


def canonical_ids(lut: np.ndarray, raw_ids: Any, *, first_position: int = 0) -> np.ndarray:
    """``lut[raw_ids]`` as int64; negative raw ids stay negative (masked).

    Raises NgramToolError naming the position (counted from ``first_position``) of the first id
    that is outside the table's raw ids or has no token (``UNASSIGNED`` in the table).

    >>> import numpy as np
    >>> canonical_ids(np.array([0, 0, 1, -1]), [2, 1, -5]).tolist()
    [1, 0, -5]
    """
    raw = np.asarray(raw_ids)
    if raw.size == 0:
        return np.zeros(0, dtype=np.int64)
    raw64 = raw.astype(np.int64, copy=False)
    raw_size = lut.shape[0]
    too_big = raw64 >= raw_size
    if too_big.any():
        pos = int(np.argmax(too_big))
        raise NgramToolError(
            f"token id {int(raw64[pos])} at position {first_position + pos} is outside the "
            f"{raw_size:,} raw ids of this vocabulary: the tokens were made with another "
            "tokenizer (check `tokenizer`, or `vocab_size` for pre-tokenized ids)"
        )
    out = lut[np.maximum(raw64, 0)]
    negative = raw64 < 0
    if negative.any():
        out[negative] = raw64[negative]
    holes = (out == UNASSIGNED) & ~negative
    if holes.any():
        pos = int(np.argmax(holes))
        raise NgramToolError(
            f"token id {int(raw64[pos])} at position {first_position + pos} has no token in "
            "this tokenizer (an unassigned id)"
        )
    return out
