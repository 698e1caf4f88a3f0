"""Readers: the documents of a corpus as text pieces, in bounded memory, one module per form.

:func:`iter_text_pieces` is the one way to read an input (a path, or ``-`` for stdin): plain
text (:mod:`.text`) or, with ``json_key``, JSONL (:mod:`.jsonl`). :func:`iter_string_pieces`
reads documents given as Python strings. Every reader yields :class:`TextPiece` objects: pieces of
text that encode on their own to the ids of the whole text (cut where :mod:`ngramtool.textcuts`
allows), the first piece of each document marked. A new form of input is a module here that
yields the same pieces, chosen in :func:`iter_text_pieces`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator

from ..textcuts import whole_strings
from . import text
from .jsonl import jsonl_pieces
from .pieces import (
    ERRORS,
    Errors,
    TextPiece,
    check_reading,
    input_size,
    open_input,
    refuse_repeated_inputs,
)

__all__ = [
    "ERRORS",
    "Errors",
    "TextPiece",
    "check_reading",
    "input_size",
    "iter_string_pieces",
    "iter_text_pieces",
    "open_input",
    "refuse_repeated_inputs",
]


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
    ``TARGET_PIECE_CHARS``) where :mod:`ngramtool.textcuts` rules 1 and 2 allow; with
    ``safe_cuts=False`` (a tokenizer for which those cuts change ids, see
    :func:`~ngramtool.textcuts.cuts_keep_ids`) only every ``MAX_PIECE_CHARS``, reported as hard
    cuts. No cut splits one of the ``keep_whole`` strings (the tokenizer's special tokens). A JSONL
    record is one piece.
    """
    check_reading(json_key, doc_sep, errors)
    stream = open_input(source)
    name = "<stdin>" if source == "-" else source
    try:
        if json_key is not None:
            yield from jsonl_pieces(stream, name, errors, json_key)
        else:
            target = piece_chars or text.TARGET_PIECE_CHARS
            whole = whole_strings(keep_whole)
            yield from text.plain_pieces(stream, name, errors, doc_sep, target, safe_cuts, whole)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def iter_string_pieces(
    texts: Iterable[str],
    *,
    piece_chars: int | None = None,
    safe_cuts: bool = True,
    keep_whole: tuple[str, ...] = (),
) -> Iterator[TextPiece]:
    """Pieces of documents given as Python strings (a list, a generator, an HF ``datasets``
    column), each string one document, cut as :func:`iter_text_pieces` cuts plain text."""
    target = piece_chars or text.TARGET_PIECE_CHARS
    yield from text.string_pieces(texts, target, safe_cuts, whole_strings(keep_whole))
