"""A reference tokenizer whose text a fast engine encodes, guarded (:class:`EngineTokenizer`).

Which engine is the mapping's choice (``NgramHashMapping.build(engine=...)``, ``load_tokenizer(...,
engine=)``, ``--tokenizer-engine``): ``auto`` (the default), ``reference`` or an engine's name
(:data:`~ngramtool.tokenizers.engines.ENGINE_CHOICES`); with the check, one piece of text in
:data:`~ngramtool.tokenizers.guard.CHECK_EVERY` is encoded again by the reference
(``--no-engine-check``: none).

The engine is decided before a run encodes its first text (:meth:`EngineTokenizer.decide`,
called by :func:`~ngramtool.inputs.encoding.iter_token_chunks` and ``iter_text_chunks``),
so that the run's manifest can name it: a named engine is built at once and an engine that
cannot be used is an error; ``auto`` builds one only for input of a known size large enough to
repay loading it (:data:`AUTO_MIN_BYTES`; not for stdin or a generator of texts): the first
engine, fastest over a whole run first (:data:`~ngramtool.tokenizers.engines.AUTO_ORDER`), that is
installed, verified for the tokenizer and passes its start-up checks (:mod:`.guard`), else the
reference. Text encoded outside a run before that (``encode`` of one string) is the reference's.
Every id either way is the reference's.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

from ..util.errors import UsageError
from . import guard, guard_memo
from .engines import AUTO_ORDER, Encoder, EngineUnavailable, EngineUnverified, engine_for
from .guard import CHECK_EVERY, PrefixCut, RunCheck, startup_problem
from .protocol import Tokenizer, tokenizer_repr
from .textcuts import safe_cut, whole_strings

AUTO_MIN_BYTES = {
    ("tiktoken", "splintr"): 8 << 20,
    ("tiktoken", "fastokens"): 32 << 20,
    ("hf", "fastokens"): 4 << 20,
}
"""``auto`` uses an engine for input of at least this many bytes, by the reference's kind and the
engine: where its faster encoding repays loading it (splintr's 0.3 s against tiktoken's 12 MB per
second on two cores, where ``hash`` saves 0.03 s per MB; fastokens' 1.5-2 s on a tiktoken
encoding, 2-5 s on a tokenizer.json against the tokenizers library's 1 MB per second)."""
SMALL_INPUT = "input too small (or of unknown size) to repay loading the engine"
_REFERENCE_LIBRARY = {"tiktoken": "tiktoken", "hf": "tokenizers"}


def reference_kind(tokenizer: Tokenizer) -> str | None:
    """``tiktoken`` or ``hf`` for the tokenizers an engine may serve, else None."""
    from .hf import HFTokenizer
    from .tiktoken_files import TiktokenTokenizer

    if isinstance(tokenizer, TiktokenTokenizer):
        return "tiktoken"
    return "hf" if isinstance(tokenizer, HFTokenizer) else None


class EngineTokenizer:
    """A reference tokenizer (every attribute is its) whose ``encode``, ``encode_batch`` and
    ``encode_joined`` go to an engine once :meth:`decide` chose one; the run-time check compares
    a sample of the pieces with the reference (:class:`~ngramtool.tokenizers.guard.RunCheck`)."""

    def __init__(self, reference: Tokenizer, choice: str, check_every: int = CHECK_EVERY) -> None:
        self.reference = reference
        self.choice = choice
        self.check = RunCheck(check_every, _prefix_cut(reference)) if check_every else None
        self.engine: Encoder | None = None
        self.decided = False
        self.declined: str | None = None  # why auto uses the reference
        self.unverified: tuple[str, ...] = ()  # engines installed in a version not verified
        self._lock = threading.Lock()
        # An engine spreads a batch over its own threads (tiktoken's callers bring theirs).
        self.parallel_batches = reference.parallel_batches
        if choice != "auto":
            self.decide(None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.reference, name)

    def __repr__(self) -> str:
        """The reference tokenizer's repr and the engine (its choice until one is decided)."""
        return tokenizer_repr(self.reference, engine=self.engine.name if self.engine else self.choice)

    def decide(self, input_bytes: int | None) -> Encoder | None:
        """Choose the engine for a run and return it (None: the reference): ``input_bytes``, the
        size of the run's input when known, lets ``auto`` keep the reference for small input.
        The first choice stays, but for the reference kept for small input, which a larger run
        may change."""
        with self._lock:
            if not self.decided or self.declined == SMALL_INPUT:
                self.declined = None
                self.engine = self._chosen(input_bytes)
                self.decided = True
        return self.engine

    def use(self, encoder: Encoder) -> None:
        """Use ``encoder`` from now on, once it passed the start-up checks (a test's engine)."""
        with self._lock:
            problem = _startup_problem(encoder, self.reference)
            if problem is not None:
                raise EngineUnavailable(
                    f"tokenizer engine {encoder.name} is not used for {self.name}: {problem}"
                )
            self.engine, self.decided = encoder, True

    def _chosen(self, input_bytes: int | None) -> Encoder | None:
        kind = reference_kind(self.reference) or "tiktoken"
        names = [self.choice]
        if self.choice == "auto":
            size = -1 if input_bytes is None else input_bytes
            names = [name for name in AUTO_ORDER[kind] if size >= AUTO_MIN_BYTES[kind, name]]
            if not names:
                self.declined = SMALL_INPUT
                return None
        reasons, unverified = [], []
        for name in names:
            try:
                encoder = engine_for(name, self.reference)
            except EngineUnavailable as exc:
                if self.choice != "auto":
                    raise UsageError(f"`tokenizer_engine={name}`: {exc}") from None
                reasons.append(str(exc))
                if isinstance(exc, EngineUnverified):
                    unverified.append(str(exc))
                continue
            problem = _startup_problem(encoder, self.reference)
            if problem is None:
                return encoder
            if self.choice != "auto":
                raise EngineUnavailable(f"tokenizer engine {name} is not used for {self.name}: {problem}")
            reasons.append(f"tokenizer engine {name}: {problem}")
        self.declined, self.unverified = "; ".join(reasons), tuple(unverified)
        return None

    def encode(self, text: str) -> np.ndarray:
        """The ids of ``text`` (the engine's once chosen, checked like a piece of a batch)."""
        if self.engine is None:
            return self.reference.encode(text)
        return self.encode_joined([text])[0]

    def encode_batch(self, texts: list[str]) -> list[np.ndarray]:
        """:meth:`encode` of each text."""
        ids, counts = self.encode_joined(texts)
        return np.split(ids, np.cumsum(counts)[:-1]) if texts else []

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the texts one after another and how many each has: the engine's, a sample
        checked; texts the engine refuses (lone surrogates) are left to the reference."""
        engine = self.engine
        if engine is None:
            return self.reference.encode_joined(texts)
        try:
            ids, counts = engine.encode_joined(texts)
        except UnicodeEncodeError:
            return self.reference.encode_joined(texts)
        if self.check is not None:
            name = f"{engine.name} {engine.version}"
            self.check.compare(texts, ids, counts, self.reference.encode, engine.encode, name)
        return ids, counts

    def engine_record(self) -> dict[str, Any]:
        """The manifest's record of what encoded the text (:func:`engine_record`)."""
        if self.engine is None:
            return engine_record(self.reference)
        return {
            "name": self.engine.name,
            "version": self.engine.version,
            "checked_every": self.check.every if self.check is not None else None,
        }


def engine_record(tokenizer: Tokenizer | None) -> dict[str, Any]:
    """What encodes ``tokenizer``'s text: ``{"name", "version", "checked_every"}``, the name
    ``reference`` with the tokenizer library's version when no engine does."""
    if isinstance(tokenizer, EngineTokenizer):
        return tokenizer.engine_record()
    library = _REFERENCE_LIBRARY.get(reference_kind(tokenizer) or "") if tokenizer is not None else None
    return {"name": "reference", "version": _version(library) if library else None, "checked_every": None}


def _version(package: str) -> str | None:
    """The version of an installed library: its module's ``__version__`` when it is imported (the
    reference libraries are by then, and state their distribution's version), else its
    distribution's (importlib.metadata costs 20 ms to import)."""
    stated = getattr(sys.modules.get(package), "__version__", None)
    if isinstance(stated, str):
        return stated
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _prefix_cut(reference: Tokenizer) -> PrefixCut | None:
    """Where the run-time check may cut the first pieces of ``reference``'s text (None: nowhere)."""
    if not reference.cut_safe:
        return None
    whole = whole_strings(tuple(reference.special_tokens))
    return lambda text, chars: safe_cut(text, 0, chars, whole)


def _startup_problem(encoder: Encoder, reference: Tokenizer) -> str | None:
    """The start-up checks of ``encoder``, its long runs timed unless this build passed them before."""
    key = guard_memo.memo_key(encoder, (guard.RUN_CHARS, guard.RUN_SECONDS))
    remembered = key is not None and guard_memo.passed(key)
    problem = startup_problem(
        encoder.encode, encoder.encode_joined, reference.encode, reference.special_tokens, not remembered
    )
    if problem is None and key is not None and not remembered:
        guard_memo.remember(key)
    return problem


def with_engine(reference: Tokenizer, choice: str, check_every: int) -> Tokenizer:
    """``reference`` itself for ``reference`` or a tokenizer no engine serves, else an
    :class:`EngineTokenizer`."""
    if choice == "reference":
        return reference
    if reference_kind(reference) is None:
        if choice != "auto":
            raise UsageError(
                f"`tokenizer_engine={choice}`: no engine serves {reference.name}; use auto or reference"
            )
        return reference
    return EngineTokenizer(reference, choice, check_every)
