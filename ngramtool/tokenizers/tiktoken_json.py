"""An HF ``tokenizer.json`` made from a tiktoken encoding's own ranks, for a fast engine to load.

The document holds tiktoken's split pattern (a ``Split`` pre-tokenizer, then byte-level; its
meaning spelled out for PCRE2, the engine's regex library, by :func:`pcre2_pattern`), its
ranks as a byte-level BPE vocabulary, one merge per way a ranked token splits into two ranked
tokens (ordered by the rank of the token they make, then of the left and the right part), the
rule that a piece which is one token is that token (``ignore_merges``, as tiktoken does), and
the special tokens as added tokens. Generating it takes seconds, so it is kept in the cache
(``$NGRAMTOOL_CACHE_DIR/engines``), and it is used only when its sha256 equals the one pinned here
for that encoding (:data:`PINNED_JSON_SHA256`, keyed by the tokenizer's fingerprint): an encoding
without a pin, or a document that differs from the pin, gets no engine.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from ..util.atomic import cache_dir
from .protocol import byte_level_string

# sha256 of the generated tokenizer.json, by the tiktoken tokenizer's fingerprint.
PINNED_JSON_SHA256 = {
    # cl100k_base
    "483ae1f5e1151981fbdbf475c0a465a94a7cde676c2eb02be3be8e4a92fd4d88": (
        "58e4bebeb98a8ffcbe3770feaecea6b6ef798df861e47b4dc20234905d6964bc"
    ),
    # r50k_base and gpt2
    "d88d9cb2df88011c48c34e444898600f3b03c006486720821b216a7bc47fcda9": (
        "8a46900e8df81d019b8413cedde22c8fbe30af4b4a01ee4721fca991990f0905"
    ),
}
_ADDED = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}


def tiktoken_tokenizer_json(encoding) -> str:
    """The tokenizer.json document of a ``tiktoken.Encoding`` (see the module docstring)."""
    ranks: dict[bytes, int] = encoding._mergeable_ranks
    merges = []
    for token, rank in ranks.items():
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in ranks and right in ranks:
                merges.append((rank, ranks[left], ranks[right], left, right))
    merges.sort(key=lambda merge: merge[:3])
    specials = sorted(encoding._special_tokens.items(), key=lambda item: item[1])
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": token_id, "content": text, **_ADDED} for text, token_id in specials],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": pcre2_pattern(encoding._pat_str)},
                 "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
            "vocab": {byte_level_string(token): rank for token, rank in ranks.items()},
            "merges": [[byte_level_string(left), byte_level_string(right)] for *_, left, right in merges],
        },
    }  # fmt: skip
    return json.dumps(document, ensure_ascii=False)


WHITE_SPACE = r"\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}"
r"""Unicode's White_Space characters: what ``\s`` matches in tiktoken's regex library (PCRE2's
``\s`` also matches U+180E)."""


def pcre2_pattern(pattern: str) -> str:
    r"""A tiktoken split pattern that means the same to PCRE2: ``\s`` and ``\S`` as
    :data:`WHITE_SPACE` and its complement (inside a class and out), ``$`` as ``\z`` (PCRE2's
    ``$`` also matches before a final line feed)."""
    out, in_class, i = [], False, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escape = pattern[i : i + 2]
            if escape == r"\s":
                out.append(WHITE_SPACE if in_class else f"[{WHITE_SPACE}]")
            elif escape == r"\S" and not in_class:
                out.append(f"[^{WHITE_SPACE}]")
            elif escape == r"\S":
                raise ValueError(rf"\S inside a character class of {pattern!r}")
            else:
                out.append(escape)
            i += 2
            continue
        in_class = (in_class or char == "[") and not (in_class and char == "]")
        out.append(r"\z" if char == "$" and not in_class else char)
        i += 1
    return "".join(out)


def pinned_tokenizer_json(encoding, fingerprint: str) -> bytes | None:
    """The generated document of a tiktoken encoding when its sha256 is the pinned one (from the
    cache when it holds it, else generated and cached), or None: no pin, or not the pinned bytes."""
    pinned = PINNED_JSON_SHA256.get(fingerprint)
    if pinned is None:
        return None
    path = _cache_path(pinned)
    try:
        cached = path.read_bytes()
    except OSError:
        cached = b""
    if hashlib.sha256(cached).hexdigest() == pinned:
        return cached
    data = tiktoken_tokenizer_json(encoding).encode("utf-8")
    if hashlib.sha256(data).hexdigest() != pinned:
        return None
    _store(path, data)
    return data


def _cache_path(sha256: str) -> Path:
    return cache_dir() / "engines" / f"tiktoken-{sha256[:32]}.json"


def _store(path: Path, data: bytes) -> None:
    """Write a cache entry whole or not at all (a cache that cannot be written is skipped)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as handle:
            handle.write(data)
        os.replace(handle.name, path)
    except OSError:
        return
