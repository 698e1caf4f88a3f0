"""A tiktoken rank file's ranks, parsed once per machine: the parsed ranks and their canonical
lines (what the tokenizer's fingerprint hashes) are cached in ``$NGRAMTOOL_CACHE_DIR/tiktoken``,
keyed by the sha256 of the file's bytes and verified by a sha256 of what the entry holds. A
missing, stale or damaged entry is rebuilt from the file; one that cannot be written is skipped.

Parsing cl100k_base's 100,256 lines and writing its canonical lines takes about 0.25 s; reading
the cached entry about 0.03 s (docs/performance.md, start-up).
"""

from __future__ import annotations

import binascii
import hashlib
import marshal
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path

from ..util.atomic import cache_path, store_cached

_FORMAT = b"ngramtool-tiktoken-ranks-v1"


@dataclass(frozen=True)
class Ranks:
    """A rank file's ranks and their canonical lines: ``base64(token) rank`` per line, in rank
    order (``tiktoken.load.dump_tiktoken_bpe``'s form)."""

    ranks: dict[bytes, int]
    lines: bytes


def load_ranks(contents: bytes, source: str = "the rank file") -> Ranks:
    """The ranks in a rank file's ``contents`` (already verified against its pinned sha256),
    from the cache when it holds them.

    >>> from ngramtool.tokenizers.tiktoken_ranks import parse_ranks
    >>> made = parse_ranks(b"Yg== 1\\nYQ== 0\\n")
    >>> made.ranks, made.lines
    ({b'b': 1, b'a': 0}, b'YQ== 0\\nYg== 1\\n')
    """
    key = hashlib.sha256(contents).hexdigest()
    path = cache_path("tiktoken", f"{key[:32]}.ranks")
    if path is None:  # no cache directory: nothing is cached
        return parse_ranks(contents, source)
    cached = _read_entry(path, key)
    if cached is not None:
        return cached
    made = parse_ranks(contents, source)
    _write_entry(path, key, made)
    return made


def parse_ranks(contents: bytes, source: str = "the rank file") -> Ranks:
    """Parse ``base64(token) rank`` lines, as ``tiktoken.load.load_tiktoken_bpe`` does (an
    error names the file); the canonical lines are written from what was parsed."""
    fields = contents.split()
    if len(fields) % 2:
        raise ValueError(f"{source}: a line without its rank (every line is `base64 rank`)")
    try:
        ranks = dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"{source}: not a tiktoken rank file ({error})") from None
    return Ranks(ranks, canonical_lines(ranks))


def canonical_lines(ranks: dict[bytes, int]) -> bytes:
    """``base64(token) rank`` lines in rank order: what the tokenizer's fingerprint hashes."""
    ordered = sorted(ranks.items(), key=itemgetter(1))
    return b"".join([binascii.b2a_base64(token, newline=False) + b" %d\n" % rank for token, rank in ordered])


def _read_entry(path: Path, key: str) -> Ranks | None:
    """The entry at ``path`` when it is whole and of the file keyed ``key``; else None."""
    try:
        blob = path.read_bytes()
        digest, payload = blob[:32], blob[32:]
        if hashlib.sha256(payload).digest() != digest:
            return None
        header, file_key, ranks, lines = marshal.loads(payload)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if header != _FORMAT or file_key != key or not isinstance(ranks, dict) or not isinstance(lines, bytes):
        return None
    return Ranks(ranks, lines)


def _write_entry(path: Path, key: str, made: Ranks) -> None:
    """Write the entry atomically; a cache that cannot be written is skipped, not an error."""
    payload = marshal.dumps((_FORMAT, key, made.ranks, made.lines))
    store_cached(path, lambda tmp: tmp.write_bytes(hashlib.sha256(payload).digest() + payload))
