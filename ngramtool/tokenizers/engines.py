"""Fast tokenizer engines: other libraries that give a reference tokenizer's ids, faster.

An engine encodes text only; everything else (vocabulary, special tokens, document marks) stays
the reference tokenizer's. Both engines are dependencies, each in a range; the one version of
each whose ids were verified (:data:`ENGINE_VERSIONS`, the extra ``fast`` pins it) is used,
another version leaves the text to the reference, which says so once:

- ``fastokens`` loads an HF tokenizer.json itself, applying the special-token rule as
  :class:`~ngramtool.tokenizers.HFTokenizer` applies it: ``all`` matches every added token,
  ``none`` reads special ones as text, a list of names marks those non-special (so they still
  match) and reads the others as text. For a tiktoken encoding it loads the encoding's own ranks
  and split pattern (spelled out for PCRE2, fastokens' regex library, and sha256-pinned:
  :mod:`.tiktoken_splintr`), with the special tokens the rule matches, as splintr does:
  ``Tokenizer.from_tiktoken``, which loads in half the time of a tokenizer.json made from the same
  ranks.
- ``splintr`` (package ``splintr-rs``) serves tiktoken encodings only: a tokenizer built from the
  encoding's own ranks, its pattern for PCRE2 (:mod:`.tiktoken_splintr`, sha256-pinned) and the
  special tokens the rule matches (all, none or the named ones, as tiktoken's
  ``allowed_special``). Its ids differ from the tokenizers library's on tokenizer.json files
  (DeepSeek-V3's), so it is not offered for them.

:func:`engine_for` builds the engine of a reference tokenizer or says, in
:class:`EngineUnavailable`, why there is none. Whether its ids are the reference's is checked
by :mod:`.guard`, not here.
"""

from __future__ import annotations

import hashlib
import itertools
import tempfile
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..util.errors import NgramToolError
from .hf import HFTokenizer, names_not_special
from .protocol import NO_IDS, Tokenizer, _read_maybe_gz
from .tiktoken_files import TiktokenTokenizer
from .tiktoken_splintr import pinned_fastokens_pattern, pinned_splintr_pattern

ENGINE_VERSIONS = {"fastokens": "0.3.5", "splintr": "0.22.0"}
"""Each engine and the one version of it whose ids were verified (the ``fast`` extra pins it)."""
AUTO_ORDER = {"tiktoken": ("splintr", "fastokens"), "hf": ("fastokens",)}
"""The engines ``auto`` tries, by the reference's kind, the fastest over a whole run first: for a
tiktoken encoding splintr, which starts in 0.3 s where fastokens takes 1.5-2 s, and encodes as fast
inside ``hash`` (the tokenizer is not what bounds it there; docs/performance.md)."""
ENGINE_PACKAGES = {"fastokens": "fastokens", "splintr": "splintr-rs"}
"""The package that installs each engine."""
ENGINE_CHOICES = ("auto", "reference", *ENGINE_VERSIONS)
"""What ``--tokenizer-engine`` takes: ``auto`` (the fastest verified engine installed, else the
reference), ``reference`` (the tokenizer library itself) or an engine's name."""


class EngineUnavailable(NgramToolError):
    """No engine of that name for this tokenizer: not installed, another version, or a tokenizer
    it is not verified to reproduce (the message says which)."""


class EngineUnverified(EngineUnavailable):
    """The engine is installed in another version than the one whose ids were verified: the
    reference encodes (a user should hear of it once: the engine they installed is not used)."""


class Encoder(Protocol):
    """What an engine does: a reference tokenizer's ``encode`` and ``encode_joined``."""

    name: str
    version: str
    build: str
    """What it was built from, as a digest (:func:`build_digest`): keys its time guard's pass."""

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids of ``text``, without document marks."""

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the texts one after another, and how many each has (int64)."""


class FastokensEncoder:
    """A fastokens tokenizer, with whether it splits special-token strings into text."""

    name = "fastokens"

    def __init__(self, tokenizer: Any, split_special: bool, version: str, build: str) -> None:
        self.version, self.build = version, build
        self._tok = tokenizer
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


class SplintrEncoder:
    """splintr on a tiktoken encoding's ranks, with PCRE2, matching the given special tokens."""

    name = "splintr"

    def __init__(self, ranks: bytes, pattern: str, special: dict[str, int], version: str, build: str) -> None:
        import splintr

        self.version, self.build = version, build
        self._tok = splintr.Tokenizer.from_bytes(ranks, pattern, special).pcre2(True)
        self._special = bool(special)

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids of ``text`` (one call, on this thread, holding the GIL)."""
        tok = self._tok
        ids = tok.encode_with_special(text) if self._special else tok.encode_ordinary(text)
        return np.asarray(ids, dtype=np.uint32) if ids else NO_IDS

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The texts on splintr's thread pool, the GIL released: ``encode_batch_flat`` (no
        special token matches) or ``encode_batch_with_special``."""
        if not self._special:
            ids, offsets = self._tok.encode_batch_flat(texts)
            bounds = np.frombuffer(offsets, dtype="<u8").astype(np.int64)
            return np.frombuffer(ids, dtype="<u4").astype(np.uint32), np.diff(bounds)
        lists = self._tok.encode_batch_with_special(texts)
        counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        joined = itertools.chain.from_iterable(lists)
        return np.fromiter(joined, dtype=np.uint32, count=int(counts.sum())), counts


def installed_version(engine: str) -> str | None:
    """The installed version of an engine's package, or None: the version its module states
    (``__version__``: splintr's, read in 2 ms), else its distribution's (importlib.metadata, 20
    ms to import: fastokens states none)."""
    import importlib
    import importlib.util

    if importlib.util.find_spec(engine) is None:
        return None
    try:
        stated = getattr(importlib.import_module(engine), "__version__", None)
    except Exception:  # a broken install: its distribution still says which version it is
        stated = None
    if isinstance(stated, str):
        return stated
    import importlib.metadata

    try:
        return importlib.metadata.version(ENGINE_PACKAGES[engine])
    except importlib.metadata.PackageNotFoundError:
        return None


def engine_for(engine: str, reference: Tokenizer) -> Encoder:
    """The engine ``engine`` for ``reference``'s text, or :class:`EngineUnavailable` saying why."""
    if engine not in ENGINE_VERSIONS:
        raise EngineUnavailable(
            f"unknown tokenizer engine {engine!r}: use one of {', '.join(ENGINE_CHOICES)}"
        )
    if engine == "splintr" and not isinstance(reference, TiktokenTokenizer):
        raise EngineUnavailable(
            f"tokenizer engine splintr serves tiktoken encodings only, not {reference.name}: its ids "
            "differ from the tokenizers library's on tokenizer.json files; use fastokens or reference"
        )
    version, verified = installed_version(engine), ENGINE_VERSIONS[engine]
    if version is None:
        raise EngineUnavailable(f"tokenizer engine {engine} is not installed: pip install 'ngramtool[fast]'")
    if version != verified:
        raise EngineUnverified(
            f"tokenizer engine {engine} {version} is installed, its ids are verified for {verified}, so "
            f"the reference encodes: pip install 'ngramtool[fast]' for {engine} {verified}"
        )
    if engine == "splintr":
        return _splintr_for(reference, version)
    return _fastokens_for(reference, version)


def _fastokens_for(reference: Tokenizer, version: str) -> FastokensEncoder:
    """fastokens on an HF tokenizer.json, or on a verified tiktoken encoding's ranks and pattern."""
    import fastokens

    if isinstance(reference, HFTokenizer):
        document, rule = _read_maybe_gz(reference.path), reference.special
        if isinstance(rule, tuple):
            document = names_not_special(document, rule)
        tokenizer = fastokens.Tokenizer.from_json_str(document.decode("utf-8"))
        return FastokensEncoder(tokenizer, rule != "all", version, build_digest(reference, repr(rule), {}))
    if isinstance(reference, TiktokenTokenizer):
        pattern = pinned_fastokens_pattern(reference._enc, reference.fingerprint)
        if pattern is None:
            raise EngineUnavailable(
                f"tokenizer engine fastokens is not verified for tiktoken encoding {reference.name}: the "
                "engine is not offered for it"
            )
        special = _matched_special(reference)
        try:
            with tempfile.TemporaryDirectory(prefix="ngramtool-ranks-") as folder:
                ranks = Path(folder) / "ranks.tiktoken"
                ranks.write_bytes(reference.rank_lines)
                tokenizer = fastokens.Tokenizer.from_tiktoken(
                    str(ranks), pattern=pattern, special_tokens=special
                )
        except OSError as exc:
            raise EngineUnavailable(
                f"tokenizer engine fastokens could not be given {reference.name}'s ranks: a temporary "
                f"file could not be written ({exc}); set TMPDIR to a writable directory"
            ) from None
        return FastokensEncoder(tokenizer, False, version, build_digest(reference, pattern, special))
    raise EngineUnavailable(f"no tokenizer engine for {reference.name} (its own encoder is the fastest)")


def _splintr_for(reference: TiktokenTokenizer, version: str) -> SplintrEncoder:
    """splintr for a tiktoken encoding whose pattern for splintr is the pinned one."""
    pattern = pinned_splintr_pattern(reference._enc, reference.fingerprint)
    if pattern is None:
        raise EngineUnavailable(
            f"tokenizer engine splintr is not verified for tiktoken encoding {reference.name}: the engine "
            "is not offered for it"
        )
    special = _matched_special(reference)
    return SplintrEncoder(
        reference.rank_lines, pattern, special, version, build_digest(reference, pattern, special)
    )


def build_digest(reference: Tokenizer, setting: str, special: dict[str, int]) -> str:
    """sha256 of what an engine is built from for ``reference``: the reference's fingerprint (which
    hashes its ranks or tokenizer.json), the pattern or special-token rule it is given
    (``setting``) and the special tokens it matches."""
    parts = (reference.fingerprint, setting, repr(sorted(special.items())))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _matched_special(reference: TiktokenTokenizer) -> dict[str, int]:
    """The special tokens a tiktoken tokenizer's rule matches in text: all, none or the named."""
    rule, special = reference.special, reference.special_tokens
    return special if rule == "all" else {} if rule == "none" else {name: special[name] for name in rule}
