"""What every reader yields (:class:`TextPiece`, and :class:`Documents` for many whole records at
once), the reading options they share, and the bytes of a path or of stdin (``-``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any, BinaryIO, Literal

from ..errors import NgramToolError, UsageError

Errors = Literal["strict", "replace", "skip"]


@dataclass(frozen=True)
class TextPiece:
    """A piece of text that can be encoded on its own.

    Attributes:
        text: the text.
        doc_start: True when this piece begins a new document.
        nbytes: input bytes this piece accounts for (for progress).
        hard_cut: True when the piece ends at a cut that is not known to be safe (see
            :mod:`ngramtool.tokenizers.textcuts`).
        skipped: bad records skipped (``errors="skip"``) since the previous piece.
    """

    text: str
    doc_start: bool
    nbytes: int
    hard_cut: bool = False
    skipped: int = 0


@dataclass(frozen=True)
class Documents:
    """Whole documents one after another, each a document of its own and never cut: many records
    of a reader in one object instead of a :class:`TextPiece` each.

    Attributes:
        texts: the documents' texts.
        nbytes: input bytes they account for (for progress).
        skipped: bad records skipped (``errors="skip"``) before the first.
    """

    texts: list[str]
    nbytes: int
    skipped: int = 0

    def pieces(self) -> Iterator[TextPiece]:
        """The documents as one piece each, the first carrying the bytes and the skipped count."""
        for i, text in enumerate(self.texts):
            yield TextPiece(text, True, 0 if i else self.nbytes, skipped=0 if i else self.skipped)


def record_runs(blocks: Iterable[tuple[list[str | None], int]]) -> Iterator[Documents | TextPiece]:
    """Records as :class:`Documents`, from blocks of (texts, input bytes) where None stands for a
    bad record skipped: each run of good records between skipped ones is one :class:`Documents`,
    which carries the bytes and the skipped records since the previous one; bytes and skips after
    the last record come as an empty :class:`TextPiece`."""
    skipped = nbytes = 0
    for texts, block_bytes in blocks:
        nbytes += block_bytes
        for good, run in groupby(texts, lambda text: text is not None):
            if not good:
                skipped += sum(1 for _ in run)
                continue
            yield Documents(list(run), nbytes, skipped)  # type: ignore[arg-type]
            skipped = nbytes = 0
    if skipped or nbytes:
        yield TextPiece("", False, nbytes, skipped=skipped)


def open_input(source: str) -> BinaryIO:
    """A binary stream for a path, or stdin for ``-``; clear errors for missing files and dirs."""
    if source == "-":
        return sys.stdin.buffer
    path = Path(source)
    if path.is_dir():
        raise UsageError(
            f"input {source} is a directory; give the files inside it (a directory is read only when "
            "HF datasets.save_to_disk wrote it)"
        )
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise UsageError(f"input file not found: {source}") from None
    except OSError as exc:
        raise NgramToolError(f"cannot read {source}: {exc.strerror}") from None


def refuse_repeated_inputs(inputs: Iterable[str]) -> None:
    """Refuse an input named twice (``-`` twice, or two names of one file): it would be read twice."""
    seen: dict[Any, str] = {}
    for name in inputs:
        key = _file_identity(name)
        if key in seen:
            shown = "stdin (-)" if name == "-" else name
            alias = f" (also as {seen[key]})" if seen[key] != name else ""
            raise UsageError(f"input {shown} is given twice{alias}: name each input once")
        seen[key] = name


def _file_identity(name: str) -> Any:
    """What tells two inputs apart: the file itself (device and inode) when it exists, else the name."""
    if name == "-":
        return name
    try:
        info = os.stat(name)
    except OSError:
        return name
    return info.st_dev, info.st_ino


def invalid_utf8(name: str, offset: int, byte: int, *, skippable: bool) -> str:
    """The message for invalid UTF-8 at a byte offset, with the ways past it."""
    skip = ", or `errors=skip` to skip the line" if skippable else ""
    return (
        f"{name}: invalid UTF-8 at byte offset {offset} (byte 0x{byte:02x}); fix the file or pass "
        f"`errors=replace` to substitute U+FFFD{skip}"
    )


def input_size(inputs: Sequence[str]) -> int | None:
    """Total bytes of the input files, the files of dataset directories included (for progress),
    or None when stdin is among them."""
    if "-" in inputs:
        return None
    total = 0
    for name in inputs:
        path = Path(name)
        if path.is_dir():
            total += sum(file.stat().st_size for file in path.glob("*.arrow"))
        elif path.is_file():
            total += path.stat().st_size
    return total
