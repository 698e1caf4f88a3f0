r"""What the fast engines are built from for a tiktoken encoding: its own ranks and its pattern.

splintr compiles a pattern with its own regex library first, which refuses possessive quantifiers
(``\p{L}++``), and only then, asked for PCRE2, compiles it again with PCRE2. tiktoken's patterns
use possessive quantifiers to avoid backtracking, never to change a match: in cl100k_base's and
r50k_base's, what follows each possessive quantifier cannot match what it gave back (the end of the
text after a shorter run of white space, a letter after a non-letter, or nothing at all). So the
pattern given to splintr is tiktoken's with each possessive ``+`` dropped
(:func:`without_possessives`), then spelled out for PCRE2 (:func:`pcre2_pattern`: PCRE2's ``\s``
and ``$`` differ from tiktoken's regex library's). That argument holds for the patterns
it was made for, so splintr serves an encoding only when the sha256 of that pattern equals the
one pinned for the encoding's fingerprint (:data:`PINNED_PATTERN_SHA256`). fastokens, whose
parser takes possessive quantifiers, is given tiktoken's pattern spelled out for PCRE2 alone, and
serves an encoding only when that pattern's sha256 is pinned for it
(:data:`PINNED_FASTOKENS_PATTERN_SHA256`).
"""

from __future__ import annotations

import hashlib

# sha256 of the pattern given to splintr, by the tiktoken tokenizer's fingerprint.
PINNED_PATTERN_SHA256 = {
    # cl100k_base
    "483ae1f5e1151981fbdbf475c0a465a94a7cde676c2eb02be3be8e4a92fd4d88": (
        "370487f8949cca9df3d3cfa3361462b166df228cdb6d4b2830a41a5824ceb79a"
    ),
    # r50k_base and gpt2
    "d88d9cb2df88011c48c34e444898600f3b03c006486720821b216a7bc47fcda9": (
        "2f89af7cd8a9426f49219b2b9e242d78c4d68f5af3c2b42966201cb7b490fc12"
    ),
}
# sha256 of the pattern given to fastokens, by the tiktoken tokenizer's fingerprint.
PINNED_FASTOKENS_PATTERN_SHA256 = {
    # cl100k_base
    "483ae1f5e1151981fbdbf475c0a465a94a7cde676c2eb02be3be8e4a92fd4d88": (
        "374102b2863dee298c8fbb4c8a230f9d0a8c8e13da7e34cc8a564a70cdde9ed8"
    ),
    # r50k_base and gpt2
    "d88d9cb2df88011c48c34e444898600f3b03c006486720821b216a7bc47fcda9": (
        "31900444a219f9cf52e8cec194d1af24bca23b1d2b9898d3806f8087f2f4abbe"
    ),
}
_QUANTIFIERS = "?*+}"

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


def without_possessives(pattern: str) -> str:
    r"""``pattern`` with the ``+`` that makes a quantifier possessive dropped (``X?+``, ``X*+``,
    ``X++``, ``X{m,n}+``); escapes (``\p{L}``, ``\x{85}``) and character classes are copied."""
    out, i, quantified, in_class = [], 0, False, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            end = i + 2
            if pattern[i + 1 : i + 2] in ("p", "P", "x") and pattern[i + 2 : i + 3] == "{":
                end = pattern.index("}", i) + 1
            out.append(pattern[i:end])
            i, quantified = end, False
            continue
        if in_class:
            in_class, quantified = char != "]", False
        elif char == "+" and quantified:
            i, quantified = i + 1, False  # the possessive mark
            continue
        elif char == "(" and pattern[i + 1 : i + 2] == "?":  # a group's flags, not a quantifier
            out.append("(?")
            i, quantified = i + 2, False
            continue
        else:
            in_class, quantified = char == "[", char in _QUANTIFIERS
        out.append(char)
        i += 1
    return "".join(out)


def splintr_pattern(encoding) -> str:
    """The pattern splintr is given for a ``tiktoken.Encoding`` (see the module docstring)."""
    return pcre2_pattern(without_possessives(encoding._pat_str))


def pinned_splintr_pattern(encoding, fingerprint: str) -> str | None:
    """:func:`splintr_pattern` when its sha256 is the one pinned for ``fingerprint``, else None."""
    return _pinned(splintr_pattern(encoding), PINNED_PATTERN_SHA256.get(fingerprint))


def pinned_fastokens_pattern(encoding, fingerprint: str) -> str | None:
    """The pattern fastokens is given (:func:`pcre2_pattern` of tiktoken's) when its sha256 is the
    one pinned for ``fingerprint``, else None."""
    return _pinned(pcre2_pattern(encoding._pat_str), PINNED_FASTOKENS_PATTERN_SHA256.get(fingerprint))


def _pinned(pattern: str, sha256: str | None) -> str | None:
    return pattern if hashlib.sha256(pattern.encode()).hexdigest() == sha256 else None
