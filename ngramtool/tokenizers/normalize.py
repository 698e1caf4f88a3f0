"""The Engram token-text normalization chain (docs/engram-spec.md §2.3), on ``unicodedata2``.

The chain is the demo's HF normalizer sequence, re-stated exactly:
NFKC, NFD, drop combining marks (Mn, Mc, Me), per-character lowercase, fold runs of
space/TAB/CR/LF into one space, a lone space survives the strip, strip White_Space.
"""

from __future__ import annotations

import re

import unicodedata2

# Bump when the chain changes: it is part of every vocabulary cache key and fingerprint.
NORMALIZATION_VERSION = 1

_FOLD_WHITESPACE = re.compile("[ \t\r\n]+")
# Unicode White_Space (PropList.txt). Not str.isspace(): U+001C..U+001F are not stripped.
_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _lower_per_char(text: str) -> str:
    # Per code point, with no context rules: final sigma stays sigma (HF Lowercase).
    return "".join(ch.lower() for ch in text)


def normalize(text: str) -> str:
    """Apply the Engram normalization chain to one token's text."""
    text = unicodedata2.normalize("NFKC", text)
    text = unicodedata2.normalize("NFD", text)
    text = "".join(ch for ch in text if not unicodedata2.category(ch).startswith("M"))
    text = _lower_per_char(text)
    text = _FOLD_WHITESPACE.sub(" ", text)
    if text == " ":
        return " "
    return text.strip(_WHITE_SPACE)


def token_key(decoded: str, raw_token: str) -> str:
    """The merge key of one token (docs/engram-spec.md §2.2).

    Args:
        decoded: the token's bytes decoded as UTF-8 with U+FFFD replacement (added tokens: their text).
        raw_token: the token's vocabulary string in the GPT-2 byte-to-unicode alphabet.
    """
    if "\ufffd" in decoded:
        return raw_token
    normalized = normalize(decoded)
    return normalized if normalized else decoded
