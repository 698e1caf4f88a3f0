"""PyTorch: datasets of training windows with their rows, a module and a collate function that hash
(extra ``torch``). See docs/training.md.

Datasets (map-style, DataLoader-worker safe) yield ``{"tokens": [S+1], "rows": [S, L, C], "start"}``:

- :class:`IndexDataset`: windows of an index (stored rows, or a tokens-only index's computed ones);
- :class:`TokenFileDataset`: windows of a token file (nanoGPT, llm.c, Megatron, datatrove, ``.npy``)
  or an index, rows computed in the worker;
- :class:`StreamDataset`: windows packed from a pipe stream (``ngramtool hash -o -``).

Hashing in the model or the loader:

- :class:`NgramRows`: an ``nn.Module``, raw ids ``[B, T]`` -> rows ``[B, T, L, C]`` on their device;
- :class:`RowsCollate`: adds ``rows`` to the batches of any dataset of token ids.

``padding="sequence"`` pads each window at its start, as the Engram reference hashes its batches;
``padding="stream"`` gives each window the real tokens before it, the rows an index stores.
"""

from __future__ import annotations

from ..util.errors import MissingDependencyError

try:
    import torch  # noqa: F401
except ImportError as exc:
    raise MissingDependencyError(
        f"ngramtool.torch needs PyTorch ({exc}); install it with: pip install 'ngramtool[torch]'"
    ) from None

from .collate import RowsCollate
from .datasets import IndexDataset, StreamDataset, TokenFileDataset
from .rows import NgramRows
from .windows import Window, make_window

__all__ = [
    "IndexDataset",
    "NgramRows",
    "RowsCollate",
    "StreamDataset",
    "TokenFileDataset",
    "Window",
    "make_window",
]
