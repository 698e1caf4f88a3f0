"""The ``bytes`` tokenizer: UTF-8 bytes as ids 0..255, no dependency."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np

from .protocol import TokenText, _OneByOne, byte_level_string
from .special import SpecialRule, _check_special_names


class ByteTokenizer(_OneByOne):
    """UTF-8 bytes as ids 0..255. The default pad is byte 0."""

    name = "bytes"
    n_vocab = 256
    pad_token_id: int | None = 0
    fingerprint = hashlib.sha256(b"ngramtool-bytes-v1").hexdigest()

    def __init__(self, special: SpecialRule | None = None) -> None:
        self.special_tokens: dict[str, int] = {}
        self.special: SpecialRule = special or "none"
        _check_special_names(self.special, self.special_tokens, self.name)

    def token_id(self, token: str) -> int | None:
        """The byte of a one-byte character."""
        data = token.encode("utf-8", "surrogateescape")
        return data[0] if len(data) == 1 else None

    def eos_candidates(self) -> list[tuple[str, str]]:
        """Bytes name no end-of-sequence token."""
        return []

    def eos_sources(self) -> str:
        """Bytes have no special tokens."""
        return "bytes have no special tokens"

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids: the UTF-8 bytes of ``text``."""
        return np.frombuffer(text.encode("utf-8", "surrogateescape"), dtype=np.uint8).astype(np.uint32)

    def vocabulary(self) -> Iterator[TokenText]:
        """Each byte as a token."""
        for b in range(256):
            data = bytes([b])
            yield TokenText(b, data.decode("utf-8", "replace"), byte_level_string(data))

    def token_bytes(self, token_id: int) -> bytes:
        """The single byte."""
        return bytes([token_id])
