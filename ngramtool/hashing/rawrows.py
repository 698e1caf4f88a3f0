"""Rows of raw token ids, computed when asked: for any span of a stream, at any time.

Engram rows are a pure function of the token ids, so nothing forces them to be stored: a
tokens-only index (``ngramtool hash --rows lazy``) computes the rows a read asks for from its
tokens, and datasets compute the rows of each window in their DataLoader workers
(:mod:`ngramtool.torch`). :class:`RawRows` is that computation: raw ids through the compressed
vocabulary's lookup table, then the hash of :class:`~ngramtool.hashing.hasher.SequenceHasher` with the
ids before the span as context. It needs only the table, so reading a tokens-only index loads no
tokenizer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..spec.hashspec import HashSpec
from ..util.errors import NgramToolError
from ..util.lookup import canonical_ids, check_table
from .backends import NegativeIds
from .hasher import SequenceHasher


class RawRows:
    """Rows of spans of raw token ids, each span hashed with the ids before it.

    Args:
        spec: the hash spec; its ``vocab_size`` must be the vocabulary's V'.
        lut: int64 [V], the raw -> canonical lookup table (an index's ``lut``, or the ``lut`` of
            :func:`ngramtool.build_vocab`).
        source: what the ids come from (a file, an index), named in error messages.
        negative_ids: how DEAD ids (negative canonical ids; raw ids the table marks
            :data:`~ngramtool.util.lookup.DEAD`) hash: ``"mask"`` or ``"barrier"`` (see
            :class:`~ngramtool.hashing.hasher.NgramHasher`).
        backend, device: where to hash (see :class:`~ngramtool.hashing.hasher.NgramHasher`).

    Examples:
        >>> import numpy as np
        >>> import ngramtool
        >>> from ngramtool.hashing.rawrows import RawRows
        >>> index = ngramtool.open_index("corpus.ngidx")
        >>> rows_of = RawRows(index.spec, index.lut)  # or build_vocab(load_tokenizer("cl100k_base")).lut
        >>> tokens = np.asarray(index.tokens[:1000])
        >>> np.array_equal(rows_of(tokens[500:], before=tokens[:500]), index.rows[500:1000])
        True
    """

    def __init__(
        self,
        spec: HashSpec,
        lut: np.ndarray,
        source: str = "",
        negative_ids: NegativeIds = "mask",
        *,
        backend: str = "auto",
        device: str | None = None,
    ) -> None:
        self.lut = check_table(lut, spec.vocab_size)
        self.spec = spec
        self.source = source
        self.hasher = SequenceHasher(
            spec, negative_ids=negative_ids, backend=backend, device=device, check_ids=False
        )

    def __call__(
        self, tokens: Any, before: Any = None, doc_starts: Any = None, *, first_position: int = 0
    ) -> np.ndarray:
        """Rows [T, L, C] of the raw ids ``tokens`` [T].

        Args:
            tokens: raw ids.
            before: the raw ids that precede ``tokens`` (the last N-1 are used; fewer leave the
                pad in front); None or empty: the pad only.
            doc_starts: positions in ``tokens`` where a document starts (windows after one see
                the pad before it).
            first_position: the stream position of ``tokens[0]``, named in errors.

        Raises:
            NgramToolError: an id outside the vocabulary's raw ids, or one without a token,
                naming the source and the position.
        """
        lead = 0 if before is None else len(before)
        if lead:  # one lookup for both
            tokens = np.concatenate([np.asarray(before), np.asarray(tokens)])
        try:
            ids = canonical_ids(self.lut, tokens, first_position=first_position - lead)
        except NgramToolError as exc:
            if not self.source:
                raise
            raise NgramToolError(f"{self.source}: {exc}") from None
        return self.hasher(ids[lead:], ids[:lead] if lead else None, doc_starts)
