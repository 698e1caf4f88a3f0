"""Counts in messages: a number and its noun (and verb) in agreement."""

from __future__ import annotations


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``1 shard``, ``3 shards``: the count (with thousands separators) and the noun in agreement."""
    return f"{count:,} {noun if count == 1 else plural_noun or noun + 's'}"


def all_of(count: int, noun: str) -> str:
    """``all 3 rows``, ``the 1 row``, ``0 rows``: every one of a count, in agreement.

    >>> from ngramtool.util.wording import all_of
    >>> all_of(3, "row"), all_of(1, "row"), all_of(0, "row")
    ('all 3 rows', 'the 1 row', '0 rows')
    """
    return f"{'all ' if count > 1 else 'the ' if count == 1 else ''}{plural(count, noun)}"


def agree(count: int, singular: str, plural_form: str) -> str:
    """The word that agrees with ``count``: ``agree(1, "lies", "lie")`` is ``lies``."""
    return singular if count == 1 else plural_form


_UNITS = ("B", "kB", "MB", "GB", "TB", "PB")


def byte_size(count: int) -> str:
    """A number of bytes in decimal units, three significant digits: ``812 B``, ``21.7 MB``.

    >>> from ngramtool.util.wording import byte_size
    >>> byte_size(812), byte_size(21_700_000), byte_size(1_234_567_890_123)
    ('812 B', '21.7 MB', '1.23 TB')
    """
    value, rank = float(count), 0
    while abs(value) >= 999.5 and rank < len(_UNITS) - 1:
        value, rank = value / 1000, rank + 1
    return f"{count:,} B" if rank == 0 else f"{value:.3g} {_UNITS[rank]}"
