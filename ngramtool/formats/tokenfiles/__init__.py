"""Token files that trainers already use: nanoGPT, llm.c, Megatron and datatrove binaries, ``.npy``,
and headerless token memmaps (OLMo, Dolma: ``raw`` with a given dtype).

Readers memory-map the tokens (nothing is loaded whole) and give document boundaries as
``doc_offsets`` (int64 [D+1]: document ``d`` spans ``tokens[doc_offsets[d]:doc_offsets[d+1]]``).
A file that records no boundaries is one document, or is cut after every end-of-sequence id
(``eos_id``); a raw file with Dolma's ``.csv.gz`` metadata beside it takes its documents from there.
Writers stream tokens into temporary files beside the destination that are renamed into place by
:meth:`TokenFileWriter.commit`. Every byte layout and the detection rules: docs/token-files.md.

The formats are one table, :mod:`.registry` (names, suffixes, detection, openers, writers' headers
and indexes); each format's reading and writing specifics are a module of their own (:mod:`.npy_ids`,
:mod:`.nanogpt`, :mod:`.llmc`, :mod:`.megatron`, :mod:`.datatrove`, :mod:`.raw`) over what they
share (:mod:`.base`); :mod:`.reading` opens and reads any of them, :mod:`.writing` writes them.
"""

from __future__ import annotations

from .llmc import LLMC_HEADER
from .reading import (
    TokenFile,
    check_boundary,
    iter_token_file_chunks,
    open_token_file,
    refuse_reset_without_documents,
    token_file_chunks,
)
from .registry import (
    FORMATS_WITH_DOCUMENTS,
    READ_FORMATS,
    TOKEN_FILE_SUFFIXES,
    TOKEN_FORMATS,
    detect_token_format,
    format_of_suffix,
)
from .writing import TokenFileWriter, token_itemsize

__all__ = [
    "FORMATS_WITH_DOCUMENTS",
    "LLMC_HEADER",
    "READ_FORMATS",
    "TOKEN_FILE_SUFFIXES",
    "TOKEN_FORMATS",
    "TokenFile",
    "TokenFileWriter",
    "check_boundary",
    "detect_token_format",
    "format_of_suffix",
    "iter_token_file_chunks",
    "open_token_file",
    "refuse_reset_without_documents",
    "token_file_chunks",
    "token_itemsize",
]
