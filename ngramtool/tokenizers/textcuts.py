"""Where text may be cut so that encoding the pieces one by one gives the ids of the whole text.

Text is cut only where a BPE split pattern always splits:

1. after a line feed that follows a non-space character and precedes a letter or digit (no
   pre-tokenizer piece of the tiktoken patterns spans it, and a lone trailing line feed is the
   same piece with or without the text after it);
2. failing that, within a very long line, before a space that follows a letter or digit and
   precedes a letter;
3. failing that (``MAX_PIECE_CHARS`` of text without either), anywhere: such cuts are reported
   as hard cuts because the ids at that cut may differ from encoding the whole text.

Rules 1 and 2 hold for the tiktoken split patterns and for byte-level HF tokenizers built the
same way; a tokenizer that prefixes every text it encodes (SentencePiece's Metaspace) breaks them,
which :func:`cuts_keep_ids` detects, and then only rule 3 cuts. No rule ever cuts inside one of
the tokenizer's special-token strings (:class:`WholeStrings`): the tokenizers split text at those
first, so the ids of the pieces still equal the ids of the whole text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache

MAX_PIECE_CHARS = 16 << 20


def _is_word(ch: str) -> bool:
    return ch.isalpha() or ch.isdigit()


class WholeStrings:
    """Strings that no cut may split: a tokenizer's special tokens (``<|im_end|>``)."""

    def __init__(self, strings: Iterable[str]) -> None:
        ordered = sorted({s for s in strings if len(s) > 1}, key=len, reverse=True)
        self.longest = len(ordered[0]) if ordered else 0
        self._first = {s[0] for s in ordered}
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def start_spanning(self, text: str, pos: int) -> int | None:
        """The start of an occurrence that begins before ``pos`` and ends after it, or None."""
        if self._pattern is None:
            return None
        for start in range(max(0, pos - self.longest + 1), pos):
            if text[start] in self._first:
                found = self._pattern.match(text, start)  # the longest string at start comes first
                if found is not None and found.end() > pos:
                    return start
        return None


NOTHING_WHOLE = WholeStrings(())


@lru_cache(maxsize=8)
def whole_strings(strings: tuple[str, ...]) -> WholeStrings:
    """A :class:`WholeStrings` for these strings (built once per set)."""
    return WholeStrings(strings)


def safe_cut(text: str, lo: int, hi: int, whole: WholeStrings = NOTHING_WHOLE) -> int:
    """The last position p with lo < p < hi where ``text`` may be cut (rules 1 and 2, never inside
    one of the ``whole`` strings), or -1."""
    hi = min(hi, len(text) - 1)
    pos = hi
    while (nl := text.rfind("\n", lo, pos)) >= 0:
        after_line = _is_word(text[nl + 1]) and nl > 0 and not text[nl - 1].isspace()
        if after_line and whole.start_spanning(text, nl + 1) is None:
            return nl + 1
        pos = nl
    pos = hi
    while (sp := text.rfind(" ", lo + 1, pos)) >= 0:
        if _is_word(text[sp - 1]) and text[sp + 1].isalpha() and whole.start_spanning(text, sp) is None:
            return sp
        pos = sp
    return -1


# Texts and the cut that rules 1 and 2 allow in each: a tokenizer whose ids are the same whole
# and cut there treats these cuts as the tiktoken patterns do (see cuts_keep_ids).
CUT_PROBES = (
    ("Hello world.\nNext line", 13),
    ("a\nb", 2),
    ("x)\n7 up", 3),
    ("é\nÀ", 2),
    ("hello world", 5),
    ("42 apples", 2),
    ("ü ß", 1),
)


def cuts_keep_ids(encode: Callable[[str], Sequence[int]]) -> bool:
    """Whether cutting text where rules 1 and 2 allow leaves ``encode``'s ids unchanged.

    True for the tiktoken patterns (tested exhaustively in the test suite); a tokenizer that
    adds a prefix to every text it encodes (SentencePiece's Metaspace, ``add_prefix_space``) fails
    and must be given whole documents.
    """
    return all(list(encode(text)) == [*encode(text[:cut]), *encode(text[cut:])] for text, cut in CUT_PROBES)


def cut_pieces(
    text: str, final: bool, target: int, safe: bool = True, whole: WholeStrings = NOTHING_WHOLE
) -> Iterator[tuple[str, bool]]:
    """(piece, hard_cut) pairs covering a prefix of ``text`` (all of it when ``final``); pieces aim
    at ``target`` characters. Without ``safe`` cuts, text is cut only every ``MAX_PIECE_CHARS``,
    and such cuts are hard. No cut splits one of the ``whole`` strings; before more text arrives
    (not ``final``), cuts stay far enough from the end to see any that would span them."""
    start = 0
    seen = len(text) if final else len(text) - max(whole.longest - 1, 0)
    while True:
        rest = len(text) - start
        if rest == 0 or (rest <= target and not final):
            return
        if rest <= target:
            yield text[start:], False
            return
        cut = safe_cut(text, start, min(start + 2 * target, seen), whole) if safe else -1
        if cut < 0 and safe:
            cut = safe_cut(text, start, min(start + MAX_PIECE_CHARS, seen), whole)
        hard = cut < 0
        if hard:
            if rest < MAX_PIECE_CHARS:
                if final:
                    yield text[start:], False
                return
            cut = start + MAX_PIECE_CHARS
            spanning = whole.start_spanning(text, cut)
            cut = spanning if spanning is not None and spanning > start else cut
        yield text[start:cut], hard
        start = cut
