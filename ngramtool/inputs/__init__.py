"""Readers: the documents of a corpus as text pieces, in bounded memory, one module per form.

:func:`iter_text_items` (and :func:`iter_text_pieces`) is the one way to read an input (a path, a
``datasets.save_to_disk`` directory, or ``-`` for stdin); its form comes from ``input_format`` or its name
(:mod:`.forms`): plain text (:mod:`.text`), JSONL (:mod:`.jsonl`), either one compressed
(:mod:`.compressed`: gzip, bzip2, xz, zstd, decompressed on a thread beside tokenizing), parquet
and Arrow (:mod:`.columnar`); a record's field may be a dotted path (:mod:`.fields`), and a record's
chat becomes text through the tokenizer's chat template (:mod:`.chat`).
:func:`iter_string_pieces` reads documents given as Python strings.
Every reader yields :class:`TextPiece` objects: pieces of text that encode on their own to the ids
of the whole text (cut where :mod:`ngramtool.tokenizers.textcuts` allows), the first piece of each document
marked; the record readers (JSONL, parquet, Arrow) yield records many at a time, as :class:`Documents`
(:func:`iter_text_pieces` gives them as one piece each). A new form of input is a module here that
yields the same pieces, chosen in :func:`iter_text_items`.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from ..tokenizers.textcuts import whole_strings
from ..util.errors import UsageError
from . import text
from .chat import ChatTemplate
from .columnar import arrow_pieces, parquet_pieces, parquet_row_groups, parquet_share
from .compressed import open_decompressed
from .forms import (
    DEFAULT_TEXT_KEY,
    ERRORS,
    FORMATS,
    RECORD_FORMATS,
    chat_key,
    check_errors,
    check_input,
    check_reading,
    input_form,
    record_key,
    text_key_of,
)
from .jsonl import jsonl_pieces
from .pieces import Documents, Errors, TextPiece, input_size, open_input, refuse_repeated_inputs

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_TEXT_KEY",
    "ERRORS",
    "FORMATS",
    "RECORD_FORMATS",
    "ChatTemplate",
    "Documents",
    "Errors",
    "TextPiece",
    "chat_key",
    "check_reading",
    "input_form",
    "input_size",
    "iter_string_pieces",
    "iter_text_items",
    "iter_text_pieces",
    "open_input",
    "parquet_row_groups",
    "parquet_share",
    "record_key",
    "refuse_repeated_inputs",
    "text_key_of",
]


def iter_text_pieces(source: str, **reading: Any) -> Iterator[TextPiece]:
    """Pieces of one input (a path, a saved dataset directory or ``-``), in order; the first piece
    of each document is marked. ``reading``: the options of :func:`iter_text_items`, which gives
    the same pieces with many records at a time as :class:`Documents`."""
    for item in iter_text_items(source, **reading):
        if isinstance(item, Documents):
            yield from item.pieces()
        else:
            yield item


def iter_text_items(
    source: str,
    *,
    input_format: str | None = None,
    text_key: str | None = None,
    doc_sep: str | None = None,
    errors: Errors = "strict",
    piece_chars: int | None = None,
    safe_cuts: bool = True,
    keep_whole: tuple[str, ...] = (),
    row_groups: tuple[int, int] | None = None,
    chat: ChatTemplate | None = None,
) -> Iterator[TextPiece | Documents]:
    """The text of one input (a path, a saved dataset directory or ``-``), in order: pieces, the
    first piece of each document marked, and records many at a time (:class:`Documents`).

    The form is ``input_format`` or comes from the name (:func:`~.forms.input_form`). Plain text
    is cut into pieces of about ``piece_chars`` characters (default ``TARGET_PIECE_CHARS``) where
    :mod:`ngramtool.tokenizers.textcuts` rules 1 and 2 allow; with ``safe_cuts=False`` (a tokenizer for
    which those cuts change ids, see :func:`~ngramtool.tokenizers.textcuts.cuts_keep_ids`) only every
    ``MAX_PIECE_CHARS``, reported as hard cuts. No cut splits one of the ``keep_whole`` strings
    (the tokenizer's special tokens). A record (a JSONL line, a parquet or dataset row: its text
    under ``text_key``, default ``text``; a dotted path reads a nested field) is one document,
    never cut; with ``chat``, its chat (under ``text_key``, default ``messages``) rendered through
    that template. ``row_groups`` (first, stop) reads only those row groups of a parquet file.
    """
    check_errors(errors)
    text_key = chat_key(text_key, chat is not None)
    form = check_input(source, input_format, text_key, doc_sep)
    key = text_key or DEFAULT_TEXT_KEY
    log.debug("reading %s as %s%s", source, form, "" if form == "text" else f" (text under {key!r})")
    if chat is not None and form == "text":
        raise UsageError(
            f"`chat_template` renders the chats of records (JSONL, parquet, datasets), but {source} is "
            "read as plain text (`input_format=text`): drop one of them"
        )
    if form == "parquet":
        yield from parquet_pieces(source, key, errors, row_groups, chat)
        return
    if form == "arrow":
        yield from arrow_pieces(source, key, errors, chat)
        return
    name = "<stdin>" if source == "-" else source
    with contextlib.ExitStack() as opened:
        handle = open_input(source)
        if handle is not sys.stdin.buffer:
            opened.callback(handle.close)
        stream, consumed = open_decompressed(handle, name)
        opened.callback(stream.close)
        if form == "jsonl":
            yield from jsonl_pieces(stream, name, errors, key, consumed, chat)
        else:
            target = piece_chars or text.TARGET_PIECE_CHARS
            whole = whole_strings(keep_whole)
            decoding: Errors = "strict" if errors == "skip" else errors  # skip applies to records
            yield from text.plain_pieces(stream, name, decoding, doc_sep, target, safe_cuts, whole, consumed)


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
