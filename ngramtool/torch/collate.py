"""``RowsCollate``: Engram rows added to the batches of any dataset of token ids, in the loader.

Trainers that keep their data pipeline (HF ``datasets``, litdata, Megatron's ``GPTDataset``, a
plain list of sequences) add the rows of each batch where the batch is made: as the DataLoader's
``collate_fn`` (in its worker processes) or as an HF dataset's transform. The rows are computed on
the CPU by :class:`~ngramtool.torch.NgramRows`, each sequence padded at its start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data import default_collate

from ..hashing.backends import NegativeIds
from ..spec.hashspec import HashSpec
from ..tokenizers.vocab import CompressedVocab
from ..util.errors import UsageError
from .rows import NgramRows


class RowsCollate:
    """Add ``rows`` (``[B, T, L, C]``) to batches of token ids: a DataLoader ``collate_fn`` or an
    HF ``Dataset.with_transform`` transform.

    It takes:

    - a list of items (``collate_fn``): dicts (HF datasets with ``with_format("torch")``,
      Megatron's GPTDataset with ``key="tokens"``) are collated by torch's ``default_collate``
      and get ``rows``; sequences of ids (a plain list, litdata's ``TokensLoader`` blocks) are
      stacked into ``{key: [B, T], "rows": [B, T, L, C]}``;
    - a dict of columns (``with_transform``): the same dict with ``rows`` added, a list of
      ``[T_i, L, C]`` tensors when ``batch[key]`` is a list (sequences may differ in length).

    ``rows[b, t]`` is ``hash_ngrams(canonical ids of sequence b, spec)[t]``: each sequence padded
    at its start, as the Engram reference hashes its batches. It pickles, so DataLoader workers
    compute the rows.

    Args:
        spec: the hash spec.
        vocab: the raw -> canonical map, as for :class:`~ngramtool.torch.NgramRows`.
        key: the field that holds the token ids (``input_ids``; Megatron: ``tokens``).
        rows_key: the field the rows are added as.
        negative_ids: what a negative id in the batch is (``"mask"``, ``"barrier"``, ``"hash"``),
            as for :class:`~ngramtool.torch.NgramRows`.

    Examples:
        >>> import torch
        >>> from ngramtool import HashSpec
        >>> from ngramtool.torch import RowsCollate
        >>> from ngramtool.tokenizers.vocab import identity_vocab
        >>> spec = HashSpec(heads=2, table_sizes=(1009, 1013), vocab_size=1000, pad_id=0)
        >>> collate = RowsCollate(spec, identity_vocab(1000))
        >>> batch = collate([[5, 17, 42], [9, 9, 9]])                  # a plain list's items
        >>> batch["input_ids"].shape, batch["rows"].shape
        (torch.Size([2, 3]), torch.Size([2, 3, 2, 4]))
        >>> columns = collate({"input_ids": [[5, 17, 42], [9, 9]]})  # an HF transform's batch
        >>> [rows.shape for rows in columns["rows"]]
        [torch.Size([3, 2, 4]), torch.Size([2, 2, 4])]
    """

    def __init__(
        self,
        spec: HashSpec,
        vocab: CompressedVocab | np.ndarray | torch.Tensor | str,
        key: str = "input_ids",
        *,
        rows_key: str = "rows",
        negative_ids: NegativeIds = "mask",
    ) -> None:
        self.ngram_rows = NgramRows(spec, vocab, negative_ids=negative_ids)
        self.key = key
        self.rows_key = rows_key

    def __repr__(self) -> str:
        return f"<RowsCollate {self.key!r} -> {self.rows_key!r} {self.ngram_rows!r}>"

    def __call__(self, batch: Mapping[str, Any] | Sequence[Any]) -> dict[str, Any]:
        """The batch (collated when it is a list of items) with its rows added."""
        if isinstance(batch, Mapping):
            return self._with_rows(dict(batch))
        items = list(batch)
        if items and isinstance(items[0], Mapping):
            return self._with_rows(default_collate(items))
        return self._with_rows({self.key: torch.stack([_as_ids(item) for item in items])})

    def _with_rows(self, batch: dict[str, Any]) -> dict[str, Any]:
        if self.key not in batch:
            raise UsageError(
                f"the batch has no field {self.key!r} (it has {', '.join(map(repr, batch)) or 'none'}): "
                "name the field of the token ids with `key`"
            )
        ids = batch[self.key]
        if isinstance(ids, torch.Tensor):
            batch[self.rows_key] = self.ngram_rows(ids)
        elif len({len(sequence) for sequence in ids}) <= 1:  # one length: hashed as one batch
            batch[self.rows_key] = list(self.ngram_rows(_as_ids(ids)))
        else:
            batch[self.rows_key] = [self.ngram_rows(_as_ids(seq)[None])[0] for seq in ids]
        return batch


def _as_ids(sequence: Any) -> torch.Tensor:
    """Ids as a tensor: a tensor as it is, anything else (lists, read-only numpy arrays, as
    tokenizers and memory maps give) copied into a tensor of its own; no ids at all are int64."""
    if isinstance(sequence, torch.Tensor):
        return sequence
    ids = np.array(sequence)
    return torch.from_numpy(ids if ids.size else ids.astype(np.int64))
