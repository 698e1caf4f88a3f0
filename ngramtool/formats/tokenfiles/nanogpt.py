"""nanoGPT ``.bin`` token files: headerless uint16 ids, one document."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .base import UINT16, Opened, map_tokens, whole, whole_tokens

TOO_WIDE = "nanoGPT .bin files hold uint16 ids; use `save_format=llmc`, megatron or datatrove"
"""What to do when an id does not fit a nanoGPT file."""


def detect_nanogpt(path: Path) -> bool:
    """Whether ``path`` is an existing ``.bin`` (what any .bin is that no other format claims:
    headerless files carry no type, and uint16 is nanoGPT's convention)."""
    return path.suffix == ".bin" and path.exists()


def open_nanogpt(files: tuple[Path, ...]) -> Opened:
    """Map the uint16 ids of a nanoGPT file."""
    (path,) = files
    count = whole_tokens(
        path,
        UINT16,
        "; a nanoGPT .bin is headerless uint16, so the file is truncated or in another "
        "format (pass `token_format`)",
    )
    return Opened(files, map_tokens(path, UINT16, 0, count), whole(count), UINT16)


def nanogpt_dtype(vocab_size: int) -> np.dtype:
    """The token dtype written for any vocabulary: uint16."""
    return UINT16
