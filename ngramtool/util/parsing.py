"""How the numbers users type are read: one parser per concept, used by every command.

* **Sizes** (table sizes, rows, token counts): ``646400``, ``646_400``, ``646,400`` (thousands
  separators: a head of one to three digits, then groups of exactly three), ``2.2624e6`` (an exact
  power-of-ten form). Several sizes are separated by commas: ``262144,1048576``. A comma list is
  one number when every group after the first has three digits and the first has one to three
  (``646,400`` is 646,400, the way the tool prints it); a list that mixes that form with several
  values (``16384,262,144``) is refused, since it reads two ways.
* **Ids** (layer ids, token ids): plain integers, comma-separated (``1,15``); no separators.
* **Budgets**: a size with a byte unit is bytes (``10GB``, ``512MiB``, ``1.5e9B``: decimal kB, MB,
  GB, TB; binary KiB, MiB, GiB, TiB); a number without one is a count, whose meaning the command
  says (parameters in ``size``, bytes in ``cache``).

Every parser raises :class:`~ngramtool.util.errors.UsageError` naming the option and the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import UsageError

BYTE_UNITS = {
    "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}  # fmt: skip
"""Byte units, by their lower-case spelling."""

# One number written with thousands separators: 1-3 digits, then groups of 3 (a decimal part, an
# exponent and a unit may follow the last group).
_THOUSANDS = re.compile(r"^\s*\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:e[+-]?\d+)?\s*[a-z]*\s*$", re.I)
# Such a number inside a comma list: ambiguous (one number, or several values).
_THOUSANDS_INSIDE = re.compile(r"(?:^|,)\s*(\d{1,3}(?:,\d{3})+(?:\.\d*)?\s*[a-z]*)\s*(?=,|$)", re.I)
_AMOUNT = re.compile(r"^\s*(\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)\s*([a-z]*)\s*$", re.I)

SIZES_RULE = (
    "write each number plainly (646400), with _ (646_400) or with thousands separators (646,400), "
    "and separate several with commas (262144,1048576)"
)


@dataclass(frozen=True)
class Amount:
    """A budget as typed: ``value`` in bytes when ``in_bytes``, else a count the command defines."""

    value: float
    in_bytes: bool
    text: str


def _values(text: str, option: str) -> list[str]:
    """The comma-separated values of ``text``, a thousands-separated number kept whole."""
    cleaned = text.replace("_", "")
    if _THOUSANDS.match(cleaned):
        return [cleaned.replace(",", "")]
    ambiguous = _THOUSANDS_INSIDE.search(cleaned)
    if ambiguous is not None and "," in cleaned.replace(ambiguous.group(1), ""):
        number = ambiguous.group(1)
        raise UsageError(
            f"{option} {text!r}: {number} reads as one number with a thousands separator or as "
            f"{len(number.split(','))} values; {SIZES_RULE}"
        )
    values = [part.strip() for part in cleaned.split(",")]
    if not all(values):
        raise UsageError(f"{option} {text!r} has an empty value: {SIZES_RULE}")
    return values


def _exact_integer(text: str) -> int:
    """An integer written plainly or as an exact power-of-ten form (2.2624e6); anything else fails."""
    if text.isdigit():
        return int(text)
    value = float(text)
    if not value.is_integer():
        raise ValueError(text)
    return int(value)


def parse_sizes(text: str, option: str, *, minimum: int = 1) -> list[int]:
    """Sizes (table sizes, rows), comma-separated, each at least ``minimum``.

    Examples:
        >>> parse_sizes("646,400", "--table"), parse_sizes("262144,1048576", "--table")
        ([646400], [262144, 1048576])
        >>> parse_sizes("1_048_576", "--table"), parse_sizes("2.2624e6", "--table")
        ([1048576], [2262400])
    """
    sizes = []
    for value in _values(text, option):
        try:
            size = _exact_integer(value)
        except ValueError:
            raise UsageError(f"{option} takes whole numbers, got {value!r}: {SIZES_RULE}") from None
        if size < minimum:
            raise UsageError(f"{option} takes numbers of at least {minimum:,}, got {size:,}")
        sizes.append(size)
    return sizes


def parse_size(text: str, option: str, *, minimum: int = 1) -> int:
    """One size (a vocabulary's rows, a rank count), read as :func:`parse_sizes` reads each.

    Examples:
        >>> parse_size("129,280", "--model-vocab")
        129280
    """
    sizes = parse_sizes(text, option, minimum=minimum)
    if len(sizes) != 1:
        raise UsageError(f"{option} takes one number, got {len(sizes)}: {text!r}")
    return sizes[0]


def parse_id(text: str, option: str) -> int:
    """One id (a token id), read as :func:`parse_ids` reads each.

    Examples:
        >>> parse_id("2", "--stop-token")
        2
    """
    ids = parse_ids(text, option)
    if len(ids) != 1:
        raise UsageError(f"{option} takes one id, got {len(ids)}: {text!r}")
    return ids[0]


def parse_ids(text: str, option: str) -> list[int]:
    """Ids (Engram layer ids, token ids): plain integers, comma-separated (``1,15``).

    Examples:
        >>> parse_ids("1,15", "--layers")
        [1, 15]
    """
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() for part in parts):
        raise UsageError(f"{option} takes ids: whole numbers separated by commas (1,15), got {text!r}")
    return [int(part) for part in parts]


def parse_amounts(text: str, option: str) -> list[Amount]:
    """Budgets, comma-separated: with a byte unit (``10GB``) bytes, else counts.

    Examples:
        >>> [(a.value, a.in_bytes) for a in parse_amounts("1GB,512MiB,5.7e9", "--budget")]
        [(1000000000.0, True), (536870912.0, True), (5700000000.0, False)]
        >>> parse_amounts("1,000MB", "--budget")[0].value
        1000000000.0
    """
    amounts = []
    for value in _values(text, option):
        match = _AMOUNT.match(value)
        unit = match.group(2).lower() if match else None
        if match is None or (unit and unit not in BYTE_UNITS):
            raise UsageError(
                f"{option} takes amounts like 10GB, 512MiB (bytes) or 5.7e9, comma-separated; got "
                f"{value!r} (units: kB, MB, GB, TB, KiB, MiB, GiB, TiB, B)"
            )
        number = float(match.group(1)) * (BYTE_UNITS[unit] if unit else 1)
        amounts.append(Amount(number, bool(unit), value))
    return amounts


def parse_amount(text: str, option: str) -> Amount:
    """One budget (see :func:`parse_amounts`)."""
    amounts = parse_amounts(text, option)
    if len(amounts) != 1:
        raise UsageError(f"{option} takes one amount, got {len(amounts)} ({text!r})")
    return amounts[0]


def parse_byte_sizes(text: str, option: str) -> list[int]:
    """Byte sizes, comma-separated: with a unit, or a bare number of bytes (``1GB,512MiB,1e9``).

    Examples:
        >>> parse_byte_sizes("1GB,512MiB,1e9", "--budget")
        [1000000000, 536870912, 1000000000]
    """
    sizes = []
    for amount in parse_amounts(text, option):
        if not amount.value.is_integer():
            raise UsageError(f"{option} {amount.text!r} is not a whole number of bytes")
        sizes.append(int(amount.value))
    return sizes
