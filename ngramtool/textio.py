"""Streaming text input: files or stdin, plain text or JSONL, cut into independently encodable pieces.

Plain text is read in blocks and cut only where a BPE split pattern always splits, so encoding the
pieces one by one gives exactly the ids of encoding the whole text at once:

1. after a line feed that follows a non-space character and precedes a letter or digit (no
   pre-tokenizer piece of the tiktoken patterns spans it, and a lone trailing line feed is the
   same piece with or without the text after it);
2. failing that, within a very long line, before a space that follows a letter or digit and
   precedes a letter;
3. failing that (``MAX_PIECE_CHARS`` of text without either), anywhere: such text is reported
   by ``hard_cuts`` because the ids at that cut may differ from encoding the whole text.

Rules 1 and 2 hold for the tiktoken split patterns and for byte-level HF tokenizers built the
same way; a tokenizer that prefixes every text it encodes (SentencePiece's Metaspace) breaks them,
which :func:`cuts_keep_ids` detects, and then only rule 3 cuts. No rule ever cuts inside one of
the tokenizer's special-token strings (:class:`WholeStrings`): the tokenizers split text at those
first, so the ids of the pieces still equal the ids of the whole text.

Each input file starts a document; JSONL lines and ``doc_sep`` separators start further ones.
"""

from __future__ import annotations

import codecs
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO, Literal

from .errors import NgramToolError, UsageError

READ_BLOCK_BYTES = 1 << 20
TARGET_PIECE_CHARS = 1 << 20
MAX_PIECE_CHARS = 16 << 20
Errors = Literal["strict", "replace", "skip"]
ERRORS = ("strict", "replace", "skip")
_JSON_KINDS = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


@dataclass(frozen=True)
class TextPiece:
    """A piece of text that can be encoded on its own.

    Attributes:
        text: the text.
        doc_start: True when this piece begins a new document.
        nbytes: input bytes this piece accounts for (for progress).
        hard_cut: True when the piece ends at a cut that is not known to be safe (rule 3).
        skipped: bad JSONL records skipped (``errors="skip"``) since the previous piece.
    """

    text: str
    doc_start: bool
    nbytes: int
    hard_cut: bool = False
    skipped: int = 0


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


def _cuts(
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


def open_input(source: str) -> BinaryIO:
    """A binary stream for a path, or stdin for ``-``; clear errors for missing files and dirs."""
    if source == "-":
        return sys.stdin.buffer
    path = Path(source)
    if path.is_dir():
        raise UsageError(f"input {source} is a directory; give the text files inside it")
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise UsageError(f"input file not found: {source}") from None
    except OSError as exc:
        raise NgramToolError(f"cannot read {source}: {exc.strerror}") from None


def check_reading(json_key: str | None, doc_sep: str | None, errors: str) -> None:
    """Refuse options that cannot be read together (the CLI calls it before any work)."""
    if errors not in ERRORS:
        raise UsageError(f"--errors must be 'strict', 'replace' or 'skip' (got {errors!r})")
    if json_key is not None and doc_sep is not None:
        raise UsageError("--json-key and --doc-sep do not combine: JSONL lines are already documents")
    if doc_sep == "":
        raise UsageError("--doc-sep must not be empty")
    if errors == "skip" and json_key is None:
        raise UsageError(
            "--errors skip skips bad JSONL records and applies only with --json-key: plain text has no "
            "records; pass --errors replace to substitute U+FFFD for invalid UTF-8"
        )


def _invalid_utf8(name: str, offset: int, byte: int, *, skippable: bool) -> str:
    """The message for invalid UTF-8 at a byte offset, with the ways past it."""
    skip = ", or --errors skip to skip the line" if skippable else ""
    return (
        f"{name}: invalid UTF-8 at byte offset {offset} (byte 0x{byte:02x}); fix the file or pass "
        f"--errors replace to substitute U+FFFD{skip}"
    )


class _Utf8Stream:
    """Incremental UTF-8 decoding that names the absolute byte offset of invalid input."""

    def __init__(self, name: str, errors: Errors) -> None:
        self.name = name
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)
        self._consumed = 0
        self._at_start = True  # a byte-order mark at the very start is not text

    def decode(self, data: bytes, final: bool = False) -> str:
        pending = len(self._decoder.getstate()[0])
        try:
            text = self._decoder.decode(data, final)
        except UnicodeDecodeError as exc:
            offset = self._consumed - pending + exc.start
            raise NgramToolError(
                _invalid_utf8(self.name, offset, exc.object[exc.start], skippable=False)
            ) from None
        self._consumed += len(data)
        if self._at_start and text:
            self._at_start = False
            text = text.removeprefix("\ufeff")
        return text


def _plain_pieces(
    stream: BinaryIO,
    name: str,
    errors: Errors,
    doc_sep: str | None,
    target: int,
    safe: bool,
    whole: WholeStrings,
) -> Iterator[TextPiece]:
    decoder = _Utf8Stream(name, errors)
    buffer = ""
    nbytes = 0
    doc_start = True
    while True:
        block = stream.read(READ_BLOCK_BYTES)
        final = not block
        buffer += decoder.decode(block, final)
        nbytes += len(block)
        segments = buffer.split(doc_sep) if doc_sep else [buffer]
        buffer = segments.pop()
        for doc in segments:  # complete documents
            pieces = list(_cuts(doc, True, target, safe, whole)) or [("", False)]
            for text, hard in pieces:
                yield TextPiece(text, doc_start, nbytes, hard)
                nbytes, doc_start = 0, False
            doc_start = True
        emitted = 0
        # The last len(doc_sep)-1 characters may begin a separator that the next block completes.
        held = 0 if final or not doc_sep else len(doc_sep) - 1
        for text, hard in _cuts(buffer[: len(buffer) - held], final, target, safe, whole):
            yield TextPiece(text, doc_start, nbytes, hard)
            nbytes, doc_start = 0, False
            emitted += len(text)
        buffer = buffer[emitted:]
        if final:
            if doc_start:  # the last document is empty
                yield TextPiece("", True, nbytes)
            return


class _BadRecord(NgramToolError):
    """A JSONL line that gives no text: not UTF-8, not JSON, no object with the key, or no string."""


class _JsonlRecords:
    """The texts of JSONL lines, under one key; errors name the line and say what it holds."""

    def __init__(self, name: str, json_key: str, errors: Errors) -> None:
        self.name = name
        self.key = json_key
        self.errors = errors
        self.key_seen = False  # whether an earlier record had the key
        self.offset = 0  # bytes before the current line

    def text(self, raw: bytes, line_no: int) -> str | None:
        """The text of one line (None for a blank line); raises _BadRecord for a bad record."""
        offset, self.offset = self.offset, self.offset + len(raw)
        where = f"{self.name}:{line_no}"
        try:
            line = raw.decode("utf-8", "replace" if self.errors == "replace" else "strict")
        except UnicodeDecodeError as exc:
            byte = exc.object[exc.start]
            raise _BadRecord(_invalid_utf8(self.name, offset + exc.start, byte, skippable=True)) from None
        if line_no == 1:
            line = line.removeprefix("\ufeff")
        if not line.strip():
            return None
        skip = "fix the line or pass --errors skip to skip bad records"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            fix = skip if self.key_seen else "is this a JSONL file (one JSON object per line)?"
            raise _BadRecord(f"{where}: not valid JSON: {exc.msg} at column {exc.colno}; {fix}") from None
        if not isinstance(record, dict):
            raise _BadRecord(f"{where}: the line holds a JSON {_kind(record)}, not an object; {skip}")
        if self.key not in record:
            keys = _key_list(record)
            if self.key_seen:
                raise _BadRecord(
                    f"{where}: this record has no key {self.key!r} (its keys: {keys}) though earlier "
                    f"records have it; {skip}"
                )
            raise _BadRecord(
                f"{where}: no key {self.key!r} in this record (its keys: {keys}); pass the key that holds "
                "the text with --json-key"
            )
        self.key_seen = True
        value = record[self.key]
        if not isinstance(value, str):
            raise _BadRecord(f"{where}: {self.key!r} holds a JSON {_kind(value)}, not text; {skip}")
        return _no_lone_surrogates(value, where, self.errors)


def _kind(value: object) -> str:
    """The JSON name of a decoded value's type."""
    return _JSON_KINDS.get(type(value), "null")


def _key_list(record: dict, shown: int = 8) -> str:
    """A record's keys, quoted, the first ``shown`` of them."""
    keys = ", ".join(repr(key) for key in list(record)[:shown])
    more = f", ... ({len(record):,} in all)" if len(record) > shown else ""
    return (keys + more) or "none"


def _jsonl_pieces(stream: BinaryIO, name: str, errors: Errors, json_key: str) -> Iterator[TextPiece]:
    """One piece per record; with ``errors="skip"`` bad records are counted, not raised."""
    records = _JsonlRecords(name, json_key, errors)
    skipped = nbytes = 0
    for line_no, raw in enumerate(stream, start=1):
        nbytes += len(raw)
        try:
            text = records.text(raw, line_no)
        except _BadRecord:
            if errors != "skip":
                raise
            skipped += 1
            continue
        if text is not None:
            yield TextPiece(text, True, nbytes, skipped=skipped)
            skipped = nbytes = 0
    if skipped or nbytes:  # bad or blank lines at the end: their count and bytes
        yield TextPiece("", False, nbytes, skipped=skipped)


def _no_lone_surrogates(text: str, where: str, errors: Errors) -> str:
    """JSON can escape lone surrogates (\\ud800), which are not text: an error, or U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        if errors != "replace":
            raise _BadRecord(
                f"{where}: the text holds a lone surrogate escape (not valid Unicode); "
                "pass --errors replace to substitute U+FFFD"
            ) from None
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text


def iter_text_pieces(
    source: str,
    *,
    json_key: str | None = None,
    doc_sep: str | None = None,
    errors: Errors = "strict",
    piece_chars: int | None = None,
    safe_cuts: bool = True,
    keep_whole: tuple[str, ...] = (),
) -> Iterator[TextPiece]:
    """Pieces of one input (a path or ``-``), in order; the first piece starts a document.

    Plain text is cut into pieces of about ``piece_chars`` characters (default
    ``TARGET_PIECE_CHARS``) where rules 1 and 2 allow; with ``safe_cuts=False`` (a tokenizer for
    which those cuts change ids, see :func:`cuts_keep_ids`) only every ``MAX_PIECE_CHARS``,
    reported as hard cuts. No cut splits one of the ``keep_whole`` strings (the tokenizer's
    special tokens). A JSONL record is one piece.
    """
    check_reading(json_key, doc_sep, errors)
    stream = open_input(source)
    name = "<stdin>" if source == "-" else source
    try:
        if json_key is not None:
            yield from _jsonl_pieces(stream, name, errors, json_key)
        else:
            target = piece_chars or TARGET_PIECE_CHARS
            whole = whole_strings(keep_whole)
            yield from _plain_pieces(stream, name, errors, doc_sep, target, safe_cuts, whole)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def input_size(inputs: list[str] | tuple[str, ...]) -> int | None:
    """Total bytes of the input files (for progress), or None when stdin is among them."""
    if "-" in inputs:
        return None
    return sum(Path(name).stat().st_size for name in inputs if Path(name).is_file())
