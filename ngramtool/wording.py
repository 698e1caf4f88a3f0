"""Counts in messages: a number and its noun (and verb) in agreement."""

from __future__ import annotations


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``1 shard``, ``3 shards``: the count (with thousands separators) and the noun in agreement."""
    return f"{count:,} {noun if count == 1 else plural_noun or noun + 's'}"


def agree(count: int, singular: str, plural_form: str) -> str:
    """The word that agrees with ``count``: ``agree(1, "lies", "lie")`` is ``lies``."""
    return singular if count == 1 else plural_form
