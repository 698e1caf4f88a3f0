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

from ..util.errors import NgramToolError, UsageError

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


# Byte-order marks of the encodings that are not UTF-8, longest first (UTF-32LE begins like UTF-16LE),
# with iconv's name for text that begins with that mark.
_OTHER_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32LE", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32BE", "UTF-32"),
    (b"\xff\xfe", "UTF-16LE", "UTF-16"),
    (b"\xfe\xff", "UTF-16BE", "UTF-16"),
)


def refuse_other_encodings(name: str, head: bytes) -> None:
    """A usage error when the first bytes of an input show UTF-16 or UTF-32 text (a byte-order mark,
    or ASCII with a zero byte beside each character), saying how to convert it to UTF-8, or binary
    data (any other zero byte: UTF-8 text holds none), whatever ``errors`` says."""
    found = next(((shown, iconv) for bom, shown, iconv in _OTHER_BOMS if head.startswith(bom)), None)
    pairs = len(head) // 2
    if found is None and pairs >= 4:
        even_zeros, odd_zeros = head[0 : 2 * pairs : 2].count(0) / pairs, head[1::2].count(0) / pairs
        if odd_zeros > 0.9 and even_zeros < 0.1:
            found = ("UTF-16LE (no byte-order mark)", "UTF-16LE")
        elif even_zeros > 0.9 and odd_zeros < 0.1:
            found = ("UTF-16BE (no byte-order mark)", "UTF-16BE")
    if found is None:
        zero = head.find(0)
        if zero >= 0:  # text holds no zero bytes: random bytes, a token file, an archive
            raise UsageError(
                f"{name} is binary data, not text (a zero byte at offset {zero}): give text, or a token "
                "file with --tokens FILE --token-format FORMAT (docs/token-files.md)"
            )
        return
    shown, iconv = found
    convert = (
        f"pipe it through iconv -f {iconv} -t UTF-8"
        if name.startswith("<")
        else f"convert it first: iconv -f {iconv} -t UTF-8 {name} > converted.txt"
    )
    raise UsageError(f"{name} is {shown} text, not UTF-8: {convert}")


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
