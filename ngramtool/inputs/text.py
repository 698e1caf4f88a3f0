"""Plain text, read in blocks and cut into pieces that encode to the ids of the whole text.

Each input starts a document; ``doc_sep`` separators start further ones. Pieces aim at
``TARGET_PIECE_CHARS`` characters (an input's first blocks at fewer: :func:`~ngramtool.util.chunks.ramp`)
and are cut where :mod:`ngramtool.tokenizers.textcuts` allows. Text given as
Python strings (:func:`string_pieces`) is cut the same way, each string one document.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

from ..tokenizers.textcuts import WholeStrings, cut_pieces
from ..util.chunks import ramp
from ..util.errors import NgramToolError
from .pieces import Errors, TextPiece, invalid_utf8, refuse_other_encodings

READ_BLOCK_BYTES = 1 << 20
HEAD_BYTES = 4096  # the first bytes that tell UTF-16 and UTF-32 text from UTF-8
TARGET_PIECE_CHARS = 1 << 20


class _Utf8Stream:
    """Incremental UTF-8 decoding that names the absolute byte offset of invalid input."""

    def __init__(self, name: str, errors: Errors) -> None:
        self.name = name
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)
        self._consumed = 0
        self._checked = False  # whether the first bytes were checked for UTF-16 and UTF-32

    def decode(self, data: bytes, final: bool = False) -> str:
        if not self._checked and (data or final):  # the first block (of 1 MiB, or the whole input)
            refuse_other_encodings(self.name, data[:HEAD_BYTES])
            self._checked = True
        pending = len(self._decoder.getstate()[0])
        try:
            text = self._decoder.decode(data, final)
        except UnicodeDecodeError as exc:
            offset = self._consumed - pending + exc.start
            raise NgramToolError(
                invalid_utf8(self.name, offset, exc.object[exc.start], skippable=False)
            ) from None
        self._consumed += len(data)
        return text  # a UTF-8 byte-order mark stays: the tokenizers keep it (docs/inputs.md)


class _ByteShares:
    """The input bytes each piece accounts for (for progress): the bytes read so far in
    proportion to the characters handed on, and all of them once every character read is.

    A block of input bytes may become many pieces (the first ones are small:
    :func:`~ngramtool.util.chunks.ramp`); giving the whole block to its first piece would count
    the stream's first chunk as up to a block of input it has not tokenized. The shares add up to
    the bytes read, whatever the rounding.
    """

    def __init__(self, consumed: Callable[[], int]) -> None:
        self._consumed = consumed
        self._chars = self._handed = self._given = 0

    def read(self, chars: int) -> None:
        """``chars`` more characters were decoded."""
        self._chars += chars

    def skip(self, chars: int) -> None:
        """``chars`` characters are handed on in no piece (a separator)."""
        self._handed += chars

    def take(self, chars: int) -> int:
        """The bytes of the next piece, of ``chars`` characters."""
        self._handed += chars
        read = self._consumed()
        due = read if self._handed >= self._chars else read * self._handed // self._chars
        share = max(due - self._given, 0)
        self._given += share
        return share


def plain_pieces(
    stream: BinaryIO,
    name: str,
    errors: Errors,
    doc_sep: str | None,
    target: int,
    safe: bool,
    whole: WholeStrings,
    consumed: Callable[[], int],
) -> Iterator[TextPiece]:
    """The pieces of one binary stream of UTF-8 text, in order; the first starts a document.
    ``consumed()`` counts the source bytes read so far (compressed ones for a compressed input).
    Pieces aim at ``target`` characters, those of the first blocks read at fewer (:func:`ramp`)."""
    decoder = _Utf8Stream(name, errors)
    shares = _ByteShares(consumed)
    buffer = ""
    doc_start = True
    for size in ramp(target):
        block = stream.read(READ_BLOCK_BYTES)
        final = not block
        decoded = decoder.decode(block, final)
        shares.read(len(decoded))
        buffer += decoded
        segments = buffer.split(doc_sep) if doc_sep else [buffer]
        buffer = segments.pop()
        for doc in segments:  # complete documents
            pieces = list(cut_pieces(doc, True, size, safe, whole)) or [("", False)]
            for text, hard in pieces:
                yield TextPiece(text, doc_start, shares.take(len(text)), hard)
                doc_start = False
            shares.skip(len(doc_sep or ""))
            doc_start = True
        emitted = 0
        # The last len(doc_sep)-1 characters may begin a separator that the next block completes.
        held = 0 if final or not doc_sep else len(doc_sep) - 1
        for text, hard in cut_pieces(buffer[: max(len(buffer) - held, 0)], final, size, safe, whole):
            yield TextPiece(text, doc_start, shares.take(len(text)), hard)
            doc_start = False
            emitted += len(text)
        buffer = buffer[emitted:]
        if final:
            rest = shares.take(0)  # bytes read after the last character (a compressed input's end)
            if doc_start or rest:  # the last document is empty, or bytes are left to count
                yield TextPiece("", doc_start, rest)
            return


def string_pieces(texts: Iterable[str], target: int, safe: bool, whole: WholeStrings) -> Iterator[TextPiece]:
    """The pieces of documents given as strings, each string one document (``nbytes`` counts its
    UTF-8 bytes)."""
    for text in texts:
        if not isinstance(text, str):
            raise NgramToolError(f"documents must be strings, got {type(text).__name__}")
        pieces = list(cut_pieces(text, True, target, safe, whole)) or [("", False)]
        nbytes = len(text.encode("utf-8", "surrogatepass"))
        for i, (piece, hard) in enumerate(pieces):
            yield TextPiece(piece, i == 0, nbytes if i == 0 else 0, hard)
