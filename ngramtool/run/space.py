"""How much disk a hash run needs: estimated before it starts, from the input size and the spec,
and checked against the free space (:func:`check_free_space`); refined while it runs, for the
message that a full disk ends it with (:class:`OutputSize`).

An index takes, per token, 4 bytes of raw id and ``L * (N-1) * K`` rows of the spec's row dtype,
plus a lookup table of 8 bytes per raw id and a manifest; a saved token file its format's bytes per
token. The token count of a token file is exact; that of text is its size divided by the bytes of
text per token that the tokenizer gives on the start of the first input (:func:`text_bytes_per_token`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..formats.npy import HEADER_BYTES
from ..formats.tokenfiles import LLMC_HEADER, token_itemsize
from ..inputs.compressed import COMPRESSION_SUFFIXES, sniff_compression
from ..inputs.forms import input_form
from ..spec.hashspec import HashSpec
from ..tokenizers import Tokenizer
from ..util.atomic import free_bytes
from ..util.errors import NgramToolError
from ..util.wording import byte_size

SAMPLE_BYTES = 1 << 16  # text tokenized to measure the bytes per token
MANIFEST_BYTES = 1 << 14  # a manifest and the arrays' headers, generously


@dataclass(frozen=True)
class OutputSize:
    """The size of one output as a function of its token count."""

    path: str
    per_token: int
    fixed: int

    def at(self, tokens: int) -> int:
        """The bytes of the output holding ``tokens`` tokens."""
        return self.fixed + self.per_token * tokens


def index_size(dest: str, spec: HashSpec, raw_size: int, *, shared_vocab: bool = False) -> OutputSize:
    """An index's (or a pipe stream's) size: ids and rows per token; lookup table and manifest."""
    row_bytes = spec.num_layers * spec.num_columns * spec.row_dtype.itemsize
    table = 0 if shared_vocab else HEADER_BYTES + 8 * raw_size
    return OutputSize(dest, 4 + row_bytes, MANIFEST_BYTES + table)


def token_file_size(dest: str, fmt: str, raw_size: int) -> OutputSize:
    """A saved token file's size: its format's bytes per token, and at most an llm.c header."""
    return OutputSize(dest, token_itemsize(fmt, raw_size), LLMC_HEADER.size)


PLAIN_FORMS = ("text", "jsonl")  # inputs whose size on disk estimates their tokens


def _plain(name: str) -> bool:
    """Whether an input is uncompressed text or JSONL (by its name)."""
    return Path(name).suffix.lower() not in COMPRESSION_SUFFIXES and input_form(name) in PLAIN_FORMS


def text_bytes_per_token(inputs: Sequence[str], tokenizer: Tokenizer) -> float | None:
    """Bytes of input per token: the start of the first input file that can be read, tokenized
    (None when no file can be: stdin only, or empty files; and None for compressed or columnar
    inputs, whose bytes on disk say little about their tokens: no estimate, no check)."""
    if any(name != "-" and not _plain(name) for name in inputs):
        return None
    for name in inputs:
        if name == "-":
            continue
        try:
            with Path(name).open("rb") as handle:
                sample = handle.read(SAMPLE_BYTES)
        except OSError:
            continue
        if sniff_compression(sample[:10]) is not None:
            return None
        tokens = len(tokenizer.encode(sample.decode("utf-8", errors="ignore"))) if sample else 0
        if tokens:
            return len(sample) / tokens
    return None


def expected_tokens(size: int | None, per_token: float | None) -> int | None:
    """The tokens of ``size`` bytes of text at ``per_token`` bytes per token (None when either is
    unknown: stdin, compressed inputs)."""
    if size is None or per_token is None:
        return None
    return math.ceil(size / per_token)


def _existing_folder(path: Path) -> Path:
    """The nearest folder of ``path`` that exists (outputs may create the folders they lie in)."""
    folder = path.absolute().parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


def check_free_space(needs: Sequence[tuple[str, int]], basis: str) -> None:
    """Refuse a run whose outputs (path, estimated bytes) need more than the free space of their
    file systems (outputs on one file system add up); ``basis`` says where the estimate comes
    from. Outputs on standard output (``-``) are not checked."""
    by_device: dict[int, tuple[Path, int, list[str]]] = {}
    for path, nbytes in needs:
        if path == "-":
            continue
        folder = _existing_folder(Path(path))
        folder_at, total, paths = by_device.get(folder.stat().st_dev, (folder, 0, []))
        by_device[folder.stat().st_dev] = (folder_at, total + nbytes, [*paths, path])
    for folder, total, paths in by_device.values():
        free = free_bytes(folder)
        if free is not None and total > free:
            shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
            raise NgramToolError(
                f"not enough free space for {shown}: about {byte_size(total)} needed ({basis}) but "
                f"{folder} has {byte_size(free)} free; free some space or write elsewhere, or pass "
                "`no_space_check=True` to try anyway"
            )
