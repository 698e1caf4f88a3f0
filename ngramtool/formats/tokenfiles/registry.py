"""The one table of token-file formats (:data:`FORMATS`): for each, its name, the suffixes of its
files, how it is detected, its opener, and its writer's token dtype, header and index. What is
derived from the table: the formats read and written, the suffixes that mark a token file, the
default save format of a suffix, and the detection of a file's format.

A new format is one module beside the others (its opener, its detection, its writer's dtype,
header or index) and one :class:`TokenFormat` entry here; a detected one also gets its words in
the message of :func:`detect_token_format` that lists what is detected.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ...util.errors import UsageError
from . import datatrove, llmc, megatron, nanogpt, npy_ids, raw
from .base import Opened, no_header, single_file, vocab_dtype

BY_NAME = 0
"""Detection stage: the name alone says the format (npy, datatrove)."""
BY_INDEX = 1
"""Detection stage: an index file beside the tokens starts with the format's magic (megatron)."""
BY_MAGIC = 2
"""Detection stage: the file's own first bytes are the format's magic (llmc)."""
BY_SUFFIX = 3
"""Detection stage: the suffix, when no stage before claimed the file (nanogpt, any other ``.bin``)."""


@dataclass(frozen=True)
class TokenFormat:
    """One token-file format: how it is named, found, read and written.

    Attributes:
        name: what ``token_format`` and ``save_format`` call it.
        suffixes: how the names of its files end (a path ending so is a token file); the first
            names its tokens.
        open: reads its files (tokens first) into an :class:`~.base.Opened`; a format that stores
            no token type (``dtype_given``) also takes the ``token_dtype`` given (a name, or None).
        files: its files, tokens first, from the path given.
        detect: whether a path is in this format; may refuse one that is but cannot be read as it
            (a missing index, a wrong header). None: never detected, only named.
        detect_stage: when detection tries it (``BY_NAME``, ``BY_INDEX``, ``BY_MAGIC``, ``BY_SUFFIX``;
            in table order within a stage).
        save_default: written by ``save_tokens`` to a path whose suffix is its first suffix.
        documents: its files record document boundaries (else the file is one document).
        dtype_given: it stores no token type: opening it takes ``token_dtype``.
        write_dtype: the token dtype written for a vocabulary size; None: read only.
        header: the header of ``count`` tokens of ``dtype`` (the same size whatever the count).
        write_index: writes its index file (the second of ``files``) from the int64 document
            offsets [D+1] and the token dtype; formats that record documents have one.
        check_count: refuses a token count its header cannot hold (the tokens' path, the count).
        too_wide: what to do when an id does not fit its dtype; None: the general advice.
    """

    name: str
    suffixes: tuple[str, ...]
    open: Callable[..., Opened]
    files: Callable[[Path], tuple[Path, ...]] = single_file
    detect: Callable[[Path], bool] | None = None
    detect_stage: int = BY_NAME
    save_default: bool = False
    documents: bool = False
    dtype_given: bool = False
    write_dtype: Callable[[int], np.dtype] | None = None
    header: Callable[[np.dtype, int], bytes] = no_header
    write_index: Callable[[BinaryIO, np.ndarray, np.dtype], None] | None = None
    check_count: Callable[[Path, int], None] | None = None
    too_wide: str | None = None


FORMATS = (
    TokenFormat(
        "npy",
        (".npy",),
        npy_ids.open_npy,
        detect=npy_ids.detect_npy,
        save_default=True,
        write_dtype=vocab_dtype,
        header=npy_ids.npy_ids_header,
    ),
    TokenFormat(
        "nanogpt",
        (".bin",),
        nanogpt.open_nanogpt,
        detect=nanogpt.detect_nanogpt,
        detect_stage=BY_SUFFIX,
        save_default=True,
        write_dtype=nanogpt.nanogpt_dtype,
        too_wide=nanogpt.TOO_WIDE,
    ),
    TokenFormat(
        "llmc",
        (".bin",),
        llmc.open_llmc,
        detect=llmc.detect_llmc,
        detect_stage=BY_MAGIC,
        write_dtype=vocab_dtype,
        header=llmc.llmc_header,
        check_count=llmc.check_llmc_count,
    ),
    TokenFormat(
        "megatron",
        (".bin", ".idx"),
        megatron.open_megatron,
        files=megatron.megatron_files,
        detect=megatron.detect_megatron,
        detect_stage=BY_INDEX,
        documents=True,
        write_dtype=megatron.megatron_dtype,
        write_index=megatron.write_megatron_index,
    ),
    TokenFormat(
        "datatrove",
        (".ds", ".ds.index"),
        datatrove.open_datatrove,
        files=datatrove.datatrove_files,
        detect=datatrove.detect_datatrove,
        save_default=True,
        documents=True,
        write_dtype=vocab_dtype,
        write_index=datatrove.write_datatrove_index,
    ),
    TokenFormat("raw", (), raw.open_raw, dtype_given=True),
)
"""Every token-file format, in the order they are listed to users."""

TOKEN_FORMATS = tuple(fmt.name for fmt in FORMATS if fmt.write_dtype is not None)
"""The formats ngramtool reads and writes."""
READ_FORMATS = tuple(fmt.name for fmt in FORMATS)
"""The formats ngramtool reads: those it writes, and headerless memmaps (``raw``)."""
FORMATS_WITH_DOCUMENTS = frozenset(fmt.name for fmt in FORMATS if fmt.documents)
"""Formats that store document boundaries; in the others the whole file is one document."""
TOKEN_FILE_SUFFIXES = tuple(dict.fromkeys(suffix for fmt in FORMATS for suffix in fmt.suffixes))
"""Every suffix that marks a token file."""

_BY_NAME = {fmt.name: fmt for fmt in FORMATS}
_SAVE_DEFAULTS = {fmt.suffixes[0]: fmt.name for fmt in FORMATS if fmt.save_default}
_DETECTION_ORDER = sorted(FORMATS, key=lambda fmt: fmt.detect_stage)


def check_format(fmt: str, formats: tuple[str, ...] = TOKEN_FORMATS) -> TokenFormat:
    """The format named ``fmt``, refused unless it is one of ``formats``."""
    if fmt not in formats:
        raise UsageError(f"unknown token format {fmt!r}; choose one of {', '.join(formats)}")
    return _BY_NAME[fmt]


def format_of_suffix(path: str | Path) -> str | None:
    """The format ``save_tokens`` writes to ``path`` when none is named, from its suffix
    (``.npy``: npy, ``.bin``: nanogpt, ``.ds``: datatrove); None for any other suffix.

    Examples:
        >>> from ngramtool.formats.tokenfiles import format_of_suffix
        >>> format_of_suffix("out/train.bin"), format_of_suffix("train.ds"), format_of_suffix("train.idx")
        ('nanogpt', 'datatrove', None)
    """
    return _SAVE_DEFAULTS.get(Path(path).suffix)


def detect_token_format(path: str | Path) -> str:
    """The format of the token file at ``path``, from its name, its first bytes and its siblings.

    ``.npy`` is npy; ``.ds`` (or ``.ds.index``) is datatrove; a ``.bin`` (or ``.idx``, or the
    common prefix) whose ``.idx`` starts with ``MMIDIDX`` is megatron; a ``.bin`` that starts with
    a known llm.c magic and version is llmc; any other ``.bin`` is nanogpt (headerless files carry
    no type; uint16 is nanoGPT's convention).
    """
    path = Path(path)
    for fmt in _DETECTION_ORDER:
        if fmt.detect is not None and fmt.detect(path):
            return fmt.name
    if not path.exists():
        raise UsageError(f"token file not found: {path}")
    raise UsageError(
        f"cannot tell the token format of {path}: supported are .npy (npy), .bin (nanogpt, llmc, or "
        f"megatron with its .idx) and .ds (datatrove); pass `token_format` ({', '.join(READ_FORMATS)})"
    )
