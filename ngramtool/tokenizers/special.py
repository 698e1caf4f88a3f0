"""Special-token rules: how special-token strings in text are read (``none``, ``all`` or names).

The same rule holds for every tokenizer kind (docs/tokenizers.md); each adapter checks the names of
a rule against its own special tokens with :func:`_check_special_names`.
"""

from __future__ import annotations

from ..util.errors import UsageError

SPECIAL_RULES = ("none", "all")

SpecialRule = str | tuple[str, ...]
"""How special-token strings in text are read: ``"none"``, ``"all"``, or the sorted names matched."""


def parse_special(text: str | None) -> SpecialRule | None:
    """``--special``: ``none``, ``all`` or comma-separated token names; None (not given) stays None."""
    if text is None or text in SPECIAL_RULES:
        return text
    names = tuple(sorted({name for name in text.split(",") if name}))
    if not names:
        raise UsageError("`special` takes none, all, or comma-separated special-token names")
    return names


def special_record(rule: SpecialRule) -> str | list[str]:
    """The JSON form of a rule: the word, or the list of names."""
    return rule if isinstance(rule, str) else list(rule)


def _check_special_names(rule: SpecialRule, known: dict[str, int], tokenizer: str) -> None:
    """Names in ``rule`` must be special tokens of the tokenizer."""
    if isinstance(rule, str):
        return
    unknown = [name for name in rule if name not in known]
    if unknown:
        examples = ", ".join(list(known)[:4]) or "it has none"
        raise UsageError(
            f"`special={unknown[0]!r}` is not a special token of {tokenizer} ({examples}): "
            "name its special tokens, or use `special=none` / all"
        )
