"""Hash families: how a spec's constants are derived and how a window is mixed (docs/families.md).

==============  ===============  ============================================================
family          mix              constants
==============  ===============  ============================================================
``engram``      multiply-XOR     per-layer multipliers from numpy's PCG64, a distinct prime per
                                 head, the current token at lag 0 (the Engram demo, Engram-27B,
                                 DeepSeek-V4.1; :mod:`ngramtool.spec.hashspec`)
``tutorial``    multiply-XOR     multipliers per (order, head) from torch's CPU generator, the
                                 oldest token first, one table size per order (not prime)
                                 (:mod:`.tutorial`)
``longcat``     polynomial sum   weights ``V**j mod m_i``, sub-table i of ``m + 2i + 1`` rows
                                 (:mod:`.longcat`)
``stored``      multiply-XOR     multipliers, table sizes and offsets given explicitly, as a
                                 checkpoint stores them (Qwen3.8's ``ple``; :mod:`.stored`)
``speedrun``    XOR in int32     fixed multipliers 36313, 27191 (18731), one table per order of
                                 ``T`` rows hashed modulo ``T - 1``, row ``T - 1`` reserved for the
                                 sequence start (modded-nanogpt, parameter-golf; :mod:`.speedrun`)
==============  ===============  ============================================================
"""

from __future__ import annotations

from typing import Literal

from ...util.errors import UsageError

Family = Literal["engram", "tutorial", "longcat", "stored", "speedrun"]
FAMILIES: tuple[Family, ...] = ("engram", "tutorial", "longcat", "stored", "speedrun")
Mix = Literal["xor", "sum"]


def check_family(value: str) -> Family:
    """``value`` when it names a family (:data:`FAMILIES`); else a usage error naming them."""
    if value not in FAMILIES:
        raise UsageError(f"`family` must be one of {', '.join(FAMILIES)} (got {value!r})")
    return value  # type: ignore[return-value]


def mix_of(family: Family) -> Mix:
    """How a family combines a window's terms: ``sum`` (LongCat's polynomial) or ``xor``."""
    return "sum" if family == "longcat" else "xor"


TABLE_SIZES_IN_WORDS: dict[Family, str] = {
    "engram": "distinct primes >= bases",
    "tutorial": "one size per order, not prime",
    "longcat": "m + 2i + 1 for sub-table i",
    "stored": "as the checkpoint stores them",
    "speedrun": "T rows, hashed modulo T - 1",
}
"""How each family sizes its tables, as a report's note says it."""


def semantics(family: str, *, negative_ids: str = "mask", stop_token: int | None = None,
              eos_fill: bool = False, first_token: str | None = None) -> str:  # fmt: skip
    """Whose rows a spec of ``family`` gives, and what they put before a sequence and at ignored
    tokens (``negative_ids``: ``mask`` or ``barrier``), as ``spec show`` says it.

    >>> semantics("engram", negative_ids="barrier")
    "DeepSeek-V4.1's reference: the compressed pad before each sequence start, DEAD tokens as barriers"
    """
    if family == "tutorial":
        return "the tutorial chapter's: id 0 before each sequence start, the oldest token first"
    if family == "longcat":
        if stop_token is not None:
            return (
                f"LongCat as sglang serves it: the walk back stops at the sequence start, at ignored "
                f"tokens and at EOS {stop_token} at lookback j > 0"
            )
        return (
            "LongCat's reference (the Python kernel; vLLM): the walk back stops at the sequence start "
            "and at ignored tokens, not at an EOS"
        )
    if family == "speedrun":
        if first_token == "kept":
            return "parameter-golf's: row T - 1 wherever a window reaches before the sequence start"
        return (
            "modded-nanogpt's: row T - 1 at a sequence's first position, whose token later windows "
            "read as the reserved id T - 1"
        )
    if eos_fill:
        return "Qwen3.8's: the EOS id before each segment start (the sequence's, and after each EOS)"
    if negative_ids == "barrier":
        return (
            "DeepSeek-V4.1's reference: the compressed pad before each sequence start, DEAD tokens "
            "as barriers"
        )
    return (
        "the Engram demo's: the compressed pad before each sequence start; masked tokens -1 "
        "(TileKernels' minus-one), --masked barrier for DeepSeek-V4.1's"
    )


def family_note(family: str) -> str:
    """``""`` for Engram (the default), else ``" (family NAME)"``: what reports add after a spec's
    shape so that no family is read as another."""
    return "" if family == "engram" else f" (family {family})"
