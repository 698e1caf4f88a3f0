"""The checks that keep a fast engine from ever changing an id.

* At start-up (:func:`startup_problem`): canary strings, one for each way a fast tokenizer has
  been found to differ from its reference so far (:data:`CANARIES`), and each special token of the
  tokenizer with its fragments, are encoded by both, alone and joined; and a 300,000-character run
  of one character must encode in under a CPU second (engines that are quadratic on long runs).
  Any difference and the engine is not used.
* At run time (:class:`RunCheck`): the beginnings of the first pieces of text and of pieces
  spread over the rest, about one character in ``every``, are encoded by the reference too and
  compared with the engine's ids of those pieces; a difference raises :class:`EngineMismatch`,
  which stops the run before anything is published.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from ..util.errors import NgramToolError

CANARIES = (
    "a \u180e b",  # whitespace before U+180E (MONGOLIAN VOWEL SEPARATOR)
    "x\u180e\u180e  \u180e\n",
    "<|endoftext|>",  # special-token text and its fragments (the tokenizer's own are added)
    "<|endoftext",
    "|>x<|",
    "（［｛「」｝］）",  # full-width brackets
    "a\t's \t'll\t'S",  # a tab before a contraction
    "Ⅻ's ⅷ Ⅳ'll",  # Roman numerals (letter numbers)
    "@゠.x",  # KATAKANA-HIRAGANA DOUBLE HYPHEN between punctuation
    "𝐀's 𐐀'll 𝒜'VE",  # supplementary-plane letters before a contraction
    "\r\n\r\n  \n\t\t x\x00\x01\x7f",  # CRLF, NUL and controls
    "12345678901 3.14159 ١٢٣",  # digit runs, Arabic-Indic digits
    "👩\u200d👩\u200d👧 🏳️\u200d🌈",  # emoji with ZWJ
    "שָׁלוֹם مرحبا 你好世界 こんにちは 안녕",  # RTL and CJK
    "def f(x):\n    return x ** 2  # code\n",
    "ÿþ\xa0\xad ¡¿ «»",  # latin-1
)
"""One string for each divergence class found so far between fast tokenizers and their
references, and the kinds of text behind them."""
FIRST_CHECKED = 4
"""The first pieces of a run are always checked: at least this many."""
FIRST_CHECKED_CHARS = 1 << 16
"""Of each of the first pieces, about this many characters are checked, and the first pieces go
on until this many characters of the run have gone by (its first pieces are small:
:func:`~ngramtool.util.chunks.ramp`) (:class:`RunCheck`)."""
CHECK_EVERY = 256
"""About one character in this many is checked after the first pieces."""
CHECK_SLICE_CHARS = 1 << 12
"""After the first pieces, the checked beginnings of pieces are about this many characters."""
RUN_CHARS, RUN_SECONDS = 300_000, 1.0
"""The time guard: a run of one character this long must encode in this many CPU seconds of
the calling thread (one call encodes on it)."""

Encode = Callable[[str], np.ndarray]
Joined = Callable[[list[str]], tuple[np.ndarray, np.ndarray]]
PrefixCut = Callable[[str, int], int]
"""(text, characters) -> the last position before that many characters where cutting ``text``
keeps its ids, or -1 (no such cut, or a tokenizer whose ids change when cut)."""


class EngineMismatch(NgramToolError):
    """The engine's ids differ from the reference's on some text: the run stops.

    Attributes:
        text_index: the position of the text in the batch that was encoded.
    """

    def __init__(self, message: str, text_index: int = 0) -> None:
        super().__init__(message)
        self.text_index = text_index


def canaries(special_tokens: dict[str, int]) -> list[str]:
    """:data:`CANARIES` and, for each special token (the first 64), the token, its fragments and
    the token between letters."""
    found = list(CANARIES)
    for token in list(special_tokens)[:64]:
        found += [token, token[:-1], token[1:], f"a{token}b", f"{token}{token} {token[: len(token) // 2]}"]
    return found


def startup_problem(
    engine: Encode,
    engine_joined: Joined,
    reference: Encode,
    special: dict[str, int],
    time_runs: bool = True,
) -> str | None:
    """Why the engine must not be used (a canary whose ids differ, or a long run too slow), or None.
    ``time_runs=False`` skips the long runs (an engine build that passed them before:
    :mod:`.guard_memo`)."""
    texts = canaries(special)
    for text in texts:
        if not np.array_equal(engine(text), reference(text)):
            return f"its ids differ from the reference's on the canary {text!r}"
    ids, counts = engine_joined(texts)
    if not np.array_equal(ids, np.concatenate([reference(text) for text in texts])):
        return "its ids of the canaries encoded in one batch differ from the reference's"
    if counts.tolist() != [reference(text).shape[0] for text in texts]:
        return "it splits a batch of the canaries into other counts than the reference"
    for char in "a " if time_runs else "":
        began = time.thread_time()  # CPU time: a machine busy with other work does not fail it
        engine(char * RUN_CHARS)
        if time.thread_time() - began > RUN_SECONDS:
            return f"it took over {RUN_SECONDS:g} CPU s for a run of {RUN_CHARS:,} {char!r}"
    return None


class RunCheck:
    """Which pieces a run re-encodes with the reference, and the comparison (thread-safe).

    Checked are the beginning (about :data:`FIRST_CHECKED_CHARS` characters) of each of the
    first pieces, at least :data:`FIRST_CHECKED` of them and until the run has passed
    :data:`FIRST_CHECKED_CHARS` characters, and, after them, the beginning (about
    :data:`CHECK_SLICE_CHARS` characters) of each piece that takes the run past a multiple of
    ``every * CHECK_SLICE_CHARS`` characters: about one character in ``every``, spread evenly
    over the text whatever the size of its pieces. A beginning ends at a cut where cutting keeps
    the ids (``prefix_cut``, :data:`PrefixCut`), so its reference ids begin the engine's ids of
    the piece; a piece too short for that is checked whole; a long piece without such a cut
    (or a tokenizer whose ids change when text is cut) is checked by encoding its beginning with
    both the engine and the reference.
    """

    def __init__(self, every: int = CHECK_EVERY, prefix_cut: PrefixCut | None = None) -> None:
        self.every = every
        self._prefix_cut = prefix_cut
        self._pieces = 0
        self._chars = 0
        self._lock = threading.Lock()

    def chosen(self, texts: list[str]) -> list[tuple[int, int]]:
        """(position, characters of its beginning to check) of the pieces to check among
        ``texts``, the next pieces of the run."""
        step = self.every * CHECK_SLICE_CHARS
        found = []
        with self._lock:
            for index, text in enumerate(texts):
                before, self._chars = self._chars, self._chars + len(text)
                if self._pieces < FIRST_CHECKED or before < FIRST_CHECKED_CHARS:
                    found.append((index, FIRST_CHECKED_CHARS))
                elif self._chars // step > before // step:
                    found.append((index, CHECK_SLICE_CHARS))
                self._pieces += 1
        return found

    def _cut(self, text: str, chars: int) -> int:
        """Where the checked beginning of ``text`` ends: its length, a cut that keeps the ids, or
        -1 (no such cut)."""
        if len(text) <= chars:
            return len(text)
        return self._prefix_cut(text, chars) if self._prefix_cut is not None else -1

    def compare(
        self,
        texts: list[str],
        ids: np.ndarray,
        counts: np.ndarray,
        reference: Encode,
        engine: Encode,
        name: str,
    ) -> None:
        """Raise :class:`EngineMismatch` when the ids of a chosen text in ``ids`` (``counts`` per
        text) differ from the ``reference``'s (``engine``: the engine's encoding of one text,
        ``name``: its name and version)."""
        chosen = self.chosen(texts)
        ends = np.cumsum(counts)
        for index, chars in chosen:
            text = texts[index]
            cut = self._cut(text, chars)
            if cut > 0:  # the ids of the text up to the cut begin the piece's
                text = text[:cut]
                expected = reference(text)
                got = ids[ends[index] - counts[index] : ends[index]][: expected.shape[0]]
            else:
                text = text[:chars]
                expected, got = reference(text), engine(text)
            if not np.array_equal(got, expected):
                raise EngineMismatch(mismatch_message(name, text, got, expected), index)


def mismatch_message(engine: str, text: str, got: np.ndarray, expected: np.ndarray) -> str:
    """What the error says: the first differing token and how to run without the engine."""
    shorter = min(got.shape[0], expected.shape[0])
    differ = np.flatnonzero(got[:shorter] != expected[:shorter])
    token = int(differ[0]) if differ.shape[0] else shorter
    return (
        f"the tokenizer engine {engine} gave other ids than the reference at token {token:,} of a piece "
        f"of text starting {text[:40]!r}; nothing was written. Run again with --tokenizer-engine "
        "reference (NGRAMTOOL_TOKENIZER_ENGINE=reference) and report this text"
    )
