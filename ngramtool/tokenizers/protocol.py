"""What ngramtool needs of a tokenizer (:class:`Tokenizer`) and what every adapter shares.

The vocabulary entry :class:`TokenText`, the manifest record, encoding helpers (one text after
another, joined ids, a whole document), GPT-2's byte-level alphabet and reading a maybe-gzipped
tokenizer file.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..util.errors import NgramToolError
from .special import SpecialRule


@dataclass(frozen=True)
class TokenText:
    """One vocabulary entry as the Engram compression sees it (docs/engram-spec.md §2.2)."""

    token_id: int
    decoded: str  # bytes decoded as UTF-8 with U+FFFD; added tokens: their literal text
    raw_token: str  # the GPT-2 byte-to-unicode rendering (added tokens: their literal text)


class Tokenizer(Protocol):
    """What ngramtool needs of a tokenizer."""

    name: str
    fingerprint: str
    n_vocab: int  # the id space: every id is below it
    pad_token_id: int | None  # raw id used as the default pad (mapped through the vocabulary)
    special: SpecialRule  # how special-token strings in text are read (the package docstring)
    special_tokens: dict[str, int]  # strings that can stand for one id in text (HF: added tokens)
    document_prefix: np.ndarray  # uint32 ids before every document (an HF post-processor's BOS)
    document_suffix: np.ndarray  # uint32 ids after every document (an HF post-processor's EOS)
    # True when encode_batch spreads a batch over the library's own threads (it holds the GIL
    # in encode); False when encode releases the GIL, so callers encode on their own threads.
    parallel_batches: bool
    piece_chars: int | None  # text piece size that keeps encoding fast (None: the reader's default)
    cut_safe: bool  # cutting text where ngramtool.tokenizers.textcuts's rules allow keeps the ids

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids of ``text`` under the special rule, without the document prefix and suffix."""

    def encode_batch(self, texts: list[str]) -> list[np.ndarray]:
        """``[encode(t) for t in texts]``, possibly on several threads."""

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of ``encode_batch(texts)`` one after another, and how many each text has
        (:func:`joined_ids`): many short texts without an array each."""

    def token_id(self, token: str) -> int | None:
        """The id of one token given as its string, or None when it is not one token."""

    def eos_candidates(self) -> list[tuple[str, str]]:
        """(where, token string) for each end-of-sequence token the tokenizer's own data names."""

    def eos_sources(self) -> str:
        """Where :meth:`eos_candidates` looks, for the error when it finds nothing."""

    def vocabulary(self) -> Iterator[TokenText]:
        """Every assigned id in ascending order (ids with no token are skipped)."""

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a single id stands for (for display)."""


def _byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character alphabet (byte-level BPE vocab strings)."""
    printable = list(range(ord("!"), ord("~") + 1))
    printable += list(range(ord("\xa1"), ord("\xac") + 1)) + list(range(ord("\xae"), ord("\xff") + 1))
    mapping, extra = {}, 0
    for b in range(256):
        if b in printable:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


BYTE_TO_UNICODE = _byte_to_unicode()


def byte_level_string(data: bytes) -> str:
    """Render bytes in the GPT-2 byte-level alphabet (what HF ``convert_ids_to_tokens`` returns)."""
    return "".join(BYTE_TO_UNICODE[b] for b in data)


def tokenizer_record(tokenizer: Tokenizer | None) -> dict[str, Any]:
    """The manifest/JSON description of a tokenizer (None: ids that need none)."""
    if tokenizer is None:
        return {"name": None, "fingerprint": None, "n_vocab": None}
    return {"name": tokenizer.name, "fingerprint": tokenizer.fingerprint, "n_vocab": tokenizer.n_vocab}


def tokenizer_repr(tokenizer: Tokenizer, **extra: str) -> str:
    """``<TiktokenTokenizer 'cl100k_base' n_vocab=100277 special='none' fingerprint=483ae1f5e1151981>``:
    a tokenizer in one line (a rule of more than two names: their count), then ``extra``."""
    rule = tokenizer.special
    special = repr(rule) if isinstance(rule, str) or len(rule) <= 2 else f"({len(rule)} names)"
    words = [
        repr(tokenizer.name),
        f"n_vocab={tokenizer.n_vocab}",
        f"special={special}",
        f"fingerprint={tokenizer.fingerprint[:16]}",
        *(f"{key}={value!r}" for key, value in extra.items()),
    ]
    return f"<{type(tokenizer).__name__} {' '.join(words)}>"


NO_IDS = np.zeros(0, dtype=np.uint32)


def encode_each(tokenizer: Tokenizer, texts: list[str]) -> list[np.ndarray]:
    """``[tokenizer.encode(t) for t in texts]``, on the calling thread."""
    return [tokenizer.encode(text) for text in texts]


def joined_ids(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(the arrays one after another as uint32 ids, the length of each as int64)."""
    counts = np.fromiter((array.shape[0] for array in arrays), dtype=np.int64, count=len(arrays))
    ids = np.concatenate(arrays) if arrays else NO_IDS
    return ids.astype(np.uint32, copy=False), counts


def encode_document(tokenizer: Tokenizer, text: str) -> np.ndarray:
    """The ids of ``text`` as one document: the document prefix, the text's ids, the suffix (for an
    HF tokenizer.json under the default rule, exactly ``encode(text).ids``)."""
    return np.concatenate([tokenizer.document_prefix, tokenizer.encode(text), tokenizer.document_suffix])


class _OneByOne:
    """encode_batch for tokenizers whose encode releases the GIL: callers bring the threads."""

    parallel_batches = False
    piece_chars = None
    cut_safe = True  # the tiktoken patterns and bytes: tested in tests/inputs/test_inputs.py
    document_prefix = NO_IDS
    document_suffix = NO_IDS

    def __repr__(self) -> str:
        return tokenizer_repr(self)  # type: ignore[arg-type]

    def encode_batch(self, texts: list[str]) -> list[np.ndarray]:
        """``[encode(t) for t in texts]`` on this thread."""
        return encode_each(self, texts)  # type: ignore[arg-type]

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the texts one after another, and how many each has."""
        return joined_ids(self.encode_batch(texts))


def _read_maybe_gz(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise NgramToolError(f"cannot read tokenizer file {path}: {exc.strerror}") from None
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise NgramToolError(f"{path} is not a valid gzip file: {exc}") from None
    return data
