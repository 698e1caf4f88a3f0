"""The end-of-sequence token that ``--add-eot`` appends: named (``--eot-token``) or the one the
tokenizer's data names, never guessed (:func:`resolve_eot`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..util.errors import NgramToolError, UsageError
from .protocol import Tokenizer

_EOS_WORDS = ("end", "eos", "eot", "</s>")


@dataclass(frozen=True)
class EndOfText:
    """The token ``--add-eot`` appends after each document, and where it was found."""

    token_id: int
    token: str
    source: str

    def record(self) -> dict[str, Any]:
        """The manifest form: id, token string and source."""
        return {"id": self.token_id, "token": self.token, "source": self.source}


def resolve_eot(tokenizer: Tokenizer, name: str | None = None) -> EndOfText:
    """The end-of-sequence token: ``name`` (``--eot-token``) when given, else the one the
    tokenizer's data names (HF: tokenizer_config.json ``eos_token`` and the post-processor's
    appended token, which must agree; tiktoken: ``<|endoftext|>``). Anything else is a usage error
    that says how to choose."""
    if name is not None:
        token_id = tokenizer.token_id(name)
        if token_id is None:
            raise UsageError(
                f"`eot_token={name!r}` is not a token of {tokenizer.name}: "
                f"name one token{_eos_hint(tokenizer)}"
            )
        return EndOfText(token_id, name, "--eot-token")
    found = tokenizer.eos_candidates()
    tokens = sorted({token for _, token in found})
    if len(tokens) > 1:
        named = "; ".join(f"{where} names {token!r}" for where, token in found)
        raise UsageError(
            f"{tokenizer.name} names more than one end-of-sequence token ({named}): choose one with "
            "`eot_token=NAME`"
        )
    if not tokens:
        raise UsageError(
            f"{tokenizer.name} names no end-of-sequence token for `add_eot` ({tokenizer.eos_sources()}): "
            f"choose one with `eot_token=NAME`{_eos_hint(tokenizer)}"
        )
    where, token = found[0]
    token_id = tokenizer.token_id(token)
    if token_id is None:
        raise NgramToolError(
            f"{where} names {token!r}, which is not a token of {tokenizer.name}: "
            "choose one with `eot_token=NAME`"
        )
    return EndOfText(token_id, token, where)


def _eos_hint(tokenizer: Tokenizer) -> str:
    """`, e.g. '<|im_end|>'`: special tokens named like an end of sequence, for error messages."""
    likely = [t for t in tokenizer.special_tokens if any(word in t.lower() for word in _EOS_WORDS)]
    return f", e.g. {', '.join(repr(t) for t in likely[:3])}" if likely else ""
