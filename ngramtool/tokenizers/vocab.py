"""The Engram compressed vocabulary: raw token ids -> canonical ids (docs/engram-spec.md §2).

Ids are scanned in ascending order; each id's merge key is its normalized text (or a fallback,
see :func:`ngramtool.tokenizers.normalize.token_key`), and a new key gets the next canonical id. The result
is a lookup table ``lut[raw_id] = canonical_id`` (int64; -1 for ids that have no token).

Building a table for a 100k-200k vocabulary takes seconds, so it is cached on disk under
``$NGRAMTOOL_CACHE_DIR`` (default ``~/.cache/ngramtool``), keyed by the tokenizer fingerprint and
the normalization version.
"""

from __future__ import annotations

import functools
import hashlib
import json
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..util.atomic import cache_path, store_cached
from ..util.errors import NgramToolError, UsageError
from ..util.lookup import DEAD, UNASSIGNED, canonical_ids, check_ids
from . import Tokenizer
from .normalize import NORMALIZATION_VERSION, token_key


@dataclass(frozen=True)
class CompressedVocab:
    """A raw -> canonical id map (made by :func:`build_vocab`).

    Examples:
        >>> from ngramtool.tokenizers.vocab import identity_vocab
        >>> vocab = identity_vocab(4)
        >>> vocab.size, vocab.compressed, vocab.canonicalize([3, 0, -1]).tolist()
        (4, False, [3, 0, -1])

    Attributes:
        lut: int64 [V]; ``lut[raw] = canonical id``, -1 where the raw id has no token.
        keys: the merge key of each canonical id (index = canonical id).
        compressed: False for the identity map (``--no-compress``).
        tokenizer_fingerprint: the fingerprint of the tokenizer it was built from.
    """

    lut: np.ndarray
    keys: tuple[str, ...]
    compressed: bool
    tokenizer_fingerprint: str

    def __repr__(self) -> str:
        kind = "compressed" if self.compressed else "identity"
        sizes = f"V={self.raw_size} V'={self.size}"
        return f"<CompressedVocab {sizes} {kind} fingerprint={self.fingerprint[:16]}>"

    @property
    def raw_size(self) -> int:
        """V: the raw id space (the tokenizer's n_vocab)."""
        return int(self.lut.shape[0])

    @property
    def size(self) -> int:
        """V': the number of canonical ids."""
        return len(self.keys)

    @property
    def assigned(self) -> int:
        """Raw ids that have a token."""
        return int(np.count_nonzero(self.lut != UNASSIGNED))

    @property
    def reduction(self) -> float:
        """1 - V'/assigned raw ids."""
        return 1.0 - self.size / self.assigned if self.assigned else 0.0

    @property
    def fingerprint(self) -> str:
        """sha256 of the table as little-endian int64: equal fingerprints, equal mapping."""
        return hashlib.sha256(self.lut.astype("<i8").tobytes()).hexdigest()

    def canonicalize(self, raw_ids: np.ndarray, *, first_position: int = 0) -> np.ndarray:
        """Map raw ids to canonical ids (int64); negative raw ids stay negative (masked).

        Raises NgramToolError naming the position (counted from ``first_position``) of the first
        id that is outside the tokenizer's id space or has no token.
        """
        return canonical_ids(self.lut, raw_ids, first_position=first_position)

    def check(self, raw_ids: np.ndarray, *, first_position: int = 0) -> None:
        """Raise as :meth:`canonicalize` does for the first id without a canonical id, without
        mapping the ids (:func:`~ngramtool.util.lookup.check_ids`)."""
        check_ids(self.lut, raw_ids, first_position=first_position, holes=self._holes)

    @functools.cached_property
    def _holes(self) -> np.ndarray | None:
        """``lut == UNASSIGNED``, or None where every raw id has a token."""
        holes = self.lut == UNASSIGNED
        return holes if holes.any() else None

    def merge_groups(self, top: int) -> list[tuple[int, list[int]]]:
        """The ``top`` largest groups of raw ids sharing a canonical id: (canonical id, raw ids)."""
        counts = Counter(self.lut[self.lut != UNASSIGNED].tolist())
        groups = []
        for canonical, _ in counts.most_common(top):
            groups.append((canonical, np.flatnonzero(self.lut == canonical).tolist()))
        return groups


def vocab_record(vocab: CompressedVocab) -> dict[str, Any]:
    """The manifest/JSON description of a vocabulary."""
    return {
        "compressed": vocab.compressed,
        "size": vocab.size,
        "raw_size": vocab.raw_size,
        "fingerprint": vocab.fingerprint,
    }


def build_vocab(tokenizer: Tokenizer, *, compress: bool = True, cache: bool = True) -> CompressedVocab:
    """The compressed (or identity) vocabulary of ``tokenizer``, from the disk cache when present.

    Args:
        tokenizer: a loaded tokenizer (:func:`load_tokenizer`).
        compress: merge ids whose tokens normalize to the same key; False: the identity map.
        cache: read and write the disk cache (``NGRAMTOOL_CACHE_DIR``).

    Examples:
        >>> from ngramtool import build_vocab, load_tokenizer
        >>> vocab = build_vocab(load_tokenizer("cl100k_base"))
        >>> vocab.raw_size, vocab.size, vocab.keys[vocab.lut[9906]]
        (100277, 62330, 'hello')
        >>> vocab.canonicalize([9906, 1917]).tolist() == vocab.lut[[9906, 1917]].tolist()
        True
    """
    if not compress:
        return identity_vocab(tokenizer.n_vocab, tokenizer.fingerprint)
    path = _cache_path(tokenizer) if cache else None  # None also where there is no cache directory
    if path is not None and path.is_file():
        loaded = _load_cached(path, tokenizer)
        if loaded is not None:
            return loaded
    lut = np.full(tokenizer.n_vocab, UNASSIGNED, dtype=np.int64)
    canonical_of: dict[str, int] = {}
    for entry in tokenizer.vocabulary():
        key = token_key(entry.decoded, entry.raw_token)
        lut[entry.token_id] = canonical_of.setdefault(key, len(canonical_of))
    vocab = CompressedVocab(lut, tuple(canonical_of), True, tokenizer.fingerprint)
    if path is not None:
        _store_cached(path, vocab)
    return vocab


def _cache_path(tokenizer: Tokenizer) -> Path | None:
    key = hashlib.sha256(f"{tokenizer.fingerprint}:norm-v{NORMALIZATION_VERSION}".encode()).hexdigest()
    return cache_path("vocab", f"{key[:32]}.npz")


def _load_cached(path: Path, tokenizer: Tokenizer) -> CompressedVocab | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            lut = data["lut"].astype(np.int64)
            keys = tuple(json.loads(bytes(data["keys"]).decode("utf-8")))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error):
        return None  # an unreadable cache entry (truncated, corrupted) is rebuilt
    if lut.shape[0] != tokenizer.n_vocab or int(lut.max(initial=-1)) + 1 != len(keys):
        return None
    return CompressedVocab(lut, keys, True, tokenizer.fingerprint)


def _store_cached(path: Path, vocab: CompressedVocab) -> None:
    """Write atomically; a cache that cannot be written (a full disk, a read-only home, another
    process writing the same entry) is skipped, not an error, and leaves nothing behind."""
    keys = np.frombuffer(json.dumps(list(vocab.keys), ensure_ascii=False).encode("utf-8"), dtype=np.uint8)

    def write(tmp: Path) -> None:
        with tmp.open("wb") as handle:
            np.savez(handle, lut=vocab.lut, keys=keys)

    store_cached(path, write)


def identity_vocab(size: int, tokenizer_fingerprint: str = "") -> CompressedVocab:
    """The identity map over ``size`` ids (``--no-compress``, or pre-tokenized ids with --vocab-size)."""
    if size < 1:
        raise NgramToolError(f"a vocabulary needs at least one id (got {size})")
    keys = tuple(str(i) for i in range(size))
    return CompressedVocab(np.arange(size, dtype=np.int64), keys, False, tokenizer_fingerprint)


def with_dead_tokens(vocab: CompressedVocab, raw_ids: tuple[int, ...]) -> CompressedVocab:
    """``vocab`` with the raw ids ``raw_ids`` marked :data:`~ngramtool.util.lookup.DEAD`: their canonical
    ids are negative, so hashing treats them as masked tokens (image spans and the like). V' and
    every other id's canonical id are unchanged.

    Examples:
        >>> from ngramtool.tokenizers.vocab import identity_vocab, with_dead_tokens
        >>> vocab = with_dead_tokens(identity_vocab(5), (3,))
        >>> vocab.size, vocab.canonicalize([1, 3, 4]).tolist()
        (5, [1, -2, 4])
    """
    if not raw_ids:
        return vocab
    for raw in raw_ids:
        if not 0 <= raw < vocab.raw_size or vocab.lut[raw] == UNASSIGNED:
            raise UsageError(
                f"`mask_tokens`: {raw} is not a token id of this tokenizer (ids 0..{vocab.raw_size - 1} "
                "that have a token): give the raw id of the token to mask"
            )
    lut = vocab.lut.copy()
    lut[list(raw_ids)] = DEAD
    return replace(vocab, lut=lut)


def table_vocab(lut: np.ndarray) -> CompressedVocab:
    """The vocabulary of a stored lookup table (an index's ``lut``): canonical ids are the table's
    values, their keys the ids as text (the tokens' texts are not stored)."""
    table = np.asarray(lut, dtype=np.int64)
    size = int(table.max(initial=-1)) + 1
    return CompressedVocab(table, tuple(str(i) for i in range(size)), True, "")
