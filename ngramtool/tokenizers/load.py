"""A tokenizer by name or path (:func:`load_tokenizer`, the order in :mod:`ngramtool.tokenizers`), cached."""

from __future__ import annotations

from pathlib import Path

from ..util.errors import UsageError
from .engine_choice import with_engine
from .engines import ENGINE_CHOICES
from .guard import CHECK_EVERY
from .hf import HFTokenizer
from .names import encoding_of_model, hub_cache_tokenizer, refuse_config_file, unknown_tokenizer
from .protocol import Tokenizer
from .special import SpecialRule, parse_special
from .tiktoken_files import _tiktoken_by_name, _tiktoken_from_file, tiktoken_names
from .utf8_bytes import ByteTokenizer

DEFAULT_TOKENIZER = "cl100k_base"
"""The tokenizer of text, and of token files that name neither a tokenizer nor a vocabulary size."""

_REFERENCES: dict[tuple[str, SpecialRule | None], Tokenizer] = {}
_CACHE: dict[tuple[str, SpecialRule | None, str, int], Tokenizer] = {}


def load_tokenizer(
    spec: str, special: str | None = None, engine: str = "auto", engine_check: bool = True
) -> Tokenizer:
    """Resolve a tokenizer by name or path (see :mod:`ngramtool.tokenizers`), reading special tokens in
    text by ``special`` (``none``, ``all``, comma-separated names; None: the library's own way),
    its text encoded by ``engine`` (docs/tokenizers.md). Results are cached.

    Args:
        spec: a tiktoken name (``cl100k_base``), a ``*.tiktoken`` ranks file, an HF
            ``tokenizer.json`` (or a directory holding one), or ``bytes``.
        special: which special-token strings in text become their ids.
        engine: ``auto``, ``reference`` or an engine's name (``fastokens``, ``splintr``); the ids
            are the same.
        engine_check: re-encode a sample of an engine's text with the reference (one piece in
            :data:`~ngramtool.tokenizers.guard.CHECK_EVERY`).

    Examples:
        >>> from ngramtool import load_tokenizer
        >>> tokenizer = load_tokenizer("cl100k_base")  # offline
        >>> tokenizer.encode("Hello world").tolist(), tokenizer.n_vocab
        ([9906, 1917], 100277)
        >>> load_tokenizer("cl100k_base", special="all").encode("<|endoftext|>").tolist()
        [100257]
    """
    rule = parse_special(special)
    if engine not in ENGINE_CHOICES:
        raise UsageError(f"`tokenizer_engine={engine}`: use one of {', '.join(ENGINE_CHOICES)}")
    check_every = CHECK_EVERY if engine_check else 0
    key = (spec, rule, engine, check_every)
    if key not in _CACHE:
        if (spec, rule) not in _REFERENCES:
            _REFERENCES[spec, rule] = _resolve(spec, rule)
        _CACHE[key] = with_engine(_REFERENCES[spec, rule], engine, check_every)
    return _CACHE[key]


def _resolve(spec: str, special: SpecialRule | None) -> Tokenizer:
    if spec == "bytes":
        return ByteTokenizer(special)
    path = Path(spec)
    name = path.name.removesuffix(".gz")
    if path.is_dir():
        candidate = path / "tokenizer.json"
        if candidate.is_file():
            return HFTokenizer(candidate, special)
        raise UsageError(f"`tokenizer={spec}` is a directory without a tokenizer.json")
    if name.endswith(".tiktoken"):
        if not path.is_file():
            raise UsageError(f"tokenizer file not found: {spec}")
        return _tiktoken_from_file(path, special)
    if name.endswith(".json"):
        refuse_config_file(path)
        if not path.is_file():
            raise UsageError(f"tokenizer file not found: {spec}")
        return HFTokenizer(path, special)
    found = _tiktoken_by_name(spec, special)
    if found is None and (encoding := encoding_of_model(spec)) is not None:
        found = _tiktoken_by_name(encoding, special)  # an OpenAI model name: its encoding
    if found is not None:
        return found
    cached = hub_cache_tokenizer(spec)
    if cached is not None:
        return HFTokenizer(cached, special)
    raise unknown_tokenizer(spec, [*tiktoken_names(), "bytes"])
