"""Fast tokenizer engines: other libraries that give a reference tokenizer's ids, faster.

An engine encodes text only; everything else (vocabulary, special tokens, document marks) stays
the reference tokenizer's. The one engine is ``fastokens`` (extra ``fast``, version pinned in
:data:`ENGINE_VERSIONS`), loading a tokenizer.json: the HF file itself, or for a tiktoken
encoding the document generated from its ranks (:mod:`.tiktoken_json`, sha256-pinned). The
special-token rule is applied as :class:`~ngramtool.tokenizers.HFTokenizer` applies it: ``all``
matches every added token, ``none`` reads special ones as text, a list of names marks those
non-special (so they still match) and reads the others as text.

:func:`engine_for` builds the engine of a reference tokenizer or says, in
:class:`EngineUnavailable`, why there is none. Whether its ids are the reference's is checked
by :mod:`.guard`, not here.
"""

from __future__ import annotations

import importlib.metadata
from typing import Protocol

import numpy as np

from ..errors import NgramToolError
from .hf import HFTokenizer, names_not_special
from .protocol import NO_IDS, Tokenizer, _read_maybe_gz
from .special import SpecialRule
from .tiktoken_files import TiktokenTokenizer
from .tiktoken_json import pinned_tokenizer_json

ENGINE_VERSIONS = {"fastokens": "0.3.5"}
"""Each engine and the one version of it whose ids were verified (the ``fast`` extra pins it)."""
ENGINE_CHOICES = ("auto", "reference", *ENGINE_VERSIONS)
"""What ``--tokenizer-engine`` takes: ``auto`` (the fastest verified engine installed, else the
reference), ``reference`` (the tokenizer library itself) or an engine's name."""


class EngineUnavailable(NgramToolError):
    """No engine of that name for this tokenizer: not installed, another version, or a tokenizer
    it is not verified to reproduce (the message says which)."""


class Encoder(Protocol):
    """What an engine does: a reference tokenizer's ``encode`` and ``encode_joined``."""

    name: str
    version: str

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids of ``text``, without document marks."""

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the texts one after another, and how many each has (int64)."""


class FastokensEncoder:
    """fastokens on a tokenizer.json document, under a special-token rule."""

    name = "fastokens"

    def __init__(self, document: str, split_special: bool, version: str) -> None:
        import fastokens

        self.version = version
        self._tok = fastokens.Tokenizer.from_json_str(document)
        self._tok.no_padding()
        self._tok.no_truncation()
        self._split = split_special

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids of ``text`` (one call, on this thread)."""
        ids = self._tok.encode(text, add_special_tokens=False, split_special_tokens=self._split).ids
        return np.asarray(ids, dtype=np.uint32) if ids else NO_IDS

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``encode_batch_flat``: the texts on fastokens' thread pool, no per-token Python object."""
        ids, offsets = self._tok.encode_batch_flat(
            texts, add_special_tokens=False, split_special_tokens=self._split
        )
        bounds = np.frombuffer(offsets, dtype="<u8").astype(np.int64)
        return np.frombuffer(ids, dtype="<u4").astype(np.uint32), np.diff(bounds)


def installed_version(engine: str) -> str | None:
    """The installed version of an engine's package, or None."""
    try:
        return importlib.metadata.version(engine)
    except importlib.metadata.PackageNotFoundError:
        return None


def engine_for(engine: str, reference: Tokenizer) -> Encoder:
    """The engine ``engine`` for ``reference``'s text, or :class:`EngineUnavailable` saying why."""
    if engine not in ENGINE_VERSIONS:
        raise EngineUnavailable(
            f"unknown tokenizer engine {engine!r}: use one of {', '.join(ENGINE_CHOICES)}"
        )
    version, verified = installed_version(engine), ENGINE_VERSIONS[engine]
    if version is None:
        raise EngineUnavailable(f"tokenizer engine {engine} is not installed: pip install 'ngramtool[fast]'")
    if version != verified:
        raise EngineUnavailable(
            f"tokenizer engine {engine} {version} is installed, its ids are verified for {verified}: "
            "pip install 'ngramtool[fast]'"
        )
    document, rule = _document(reference)
    if isinstance(rule, tuple):
        document = names_not_special(document, rule)
    return FastokensEncoder(document.decode("utf-8"), split_special=rule != "all", version=version)


def _document(reference: Tokenizer) -> tuple[bytes, SpecialRule]:
    """The tokenizer.json of ``reference`` and its special rule."""
    if isinstance(reference, HFTokenizer):
        return _read_maybe_gz(reference.path), reference.special
    if isinstance(reference, TiktokenTokenizer):
        document = pinned_tokenizer_json(reference._enc, reference.fingerprint)
        if document is None:
            raise EngineUnavailable(
                f"no verified tokenizer.json for tiktoken encoding {reference.name}: the engine is not "
                "offered for it"
            )
        return document, reference.special
    raise EngineUnavailable(f"no tokenizer engine for {reference.name} (its own encoder is the fastest)")
