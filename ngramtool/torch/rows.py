"""``NgramRows``: the Engram hash mapping as an ``nn.Module``, raw token ids in, table rows out.

The Engram reference computes the rows of each batch inside ``forward``: its hash mapping takes
the ``[B, T]`` input ids and pads each sequence at its start. :class:`NgramRows` does the same,
bit-identically, on the device of the ids: the compressed vocabulary's lookup table maps raw ids
to canonical ids there, and the backend chosen for that device hashes them (numba, else numpy,
for CPU tensors; the Triton kernel on CUDA; torch where neither runs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ..hashing.backends import NegativeIds
from ..hashing.hasher import SequenceHasher
from ..spec.hashspec import HashSpec
from ..tokenizers import load_tokenizer
from ..tokenizers.vocab import CompressedVocab, build_vocab
from ..util.errors import NgramToolError, UsageError
from ..util.lookup import UNASSIGNED, check_table
from ..util.wording import plural


class NgramRows(nn.Module):
    """Raw token ids ``[B, T]`` -> Engram table rows ``[B, T, L, C]``, on the ids' device.

    ``rows[b, t, l, (n-2)*K + h]`` is the row of Engram layer ``l``'s table that head ``h`` of
    order ``n`` reads for the n-gram ending at ``input_ids[b, t]``: exactly
    ``hash_ngrams(canonical ids of input_ids, spec)``. Rows are int32 (int64 for tables of 2^31
    rows or more) and carry no gradient; the model's embedding lookups take them as indices, and
    the surrounding model trains as usual.

    The buffers ``lut`` (int64 [V]), ``multipliers`` (int64 [L, N]), ``primes`` (int64
    [L, N-1, K]) and ``offsets`` ([L, C]) hold the mapping's constants; ``.to(device)`` moves them
    (they follow from ``spec`` and ``vocab``, so they are left out of the state dict). The module
    pickles, so DataLoader workers and ``torch.save`` take it.

    Args:
        spec: the hash spec (its ``vocab_size`` is the vocabulary's V').
        vocab: the raw -> canonical map: a :class:`~ngramtool.tokenizers.vocab.CompressedVocab`, its lookup
            table (an index's ``lut``, array or tensor), or a tokenizer name or file, whose
            compressed vocabulary is built (cached on disk).
        backend: ``auto`` (by device), or ``numba``, ``numpy``, ``torch``, ``triton``.
        negative_ids: what a negative id is: ``"mask"`` (rows -1, the pad to its neighbours),
            ``"barrier"`` (a DEAD token: windows reaching it see the pad from there back;
            DeepSeek-V4.1) or ``"hash"``, as for :class:`ngramtool.NgramHasher`.

    Examples:
        >>> import torch
        >>> from ngramtool import HashSpec, hash_ngrams
        >>> from ngramtool.torch import NgramRows
        >>> from ngramtool.tokenizers.vocab import identity_vocab
        >>> spec = HashSpec(heads=2, table_sizes=(1009, 1013), vocab_size=1000, pad_id=0)
        >>> ngram_rows = NgramRows(spec, identity_vocab(1000))
        >>> input_ids = torch.tensor([[5, 17, 42, 17], [9, 9, 9, 9]])
        >>> rows = ngram_rows(input_ids)
        >>> rows.shape, rows.dtype
        (torch.Size([2, 4, 2, 4]), torch.int32)
        >>> torch.equal(rows, torch.from_numpy(hash_ngrams(input_ids.numpy(), spec)))
        True
        >>> later = ngram_rows(input_ids[:, 2:], preceding=input_ids[:, :2])  # stream semantics
        >>> torch.equal(later, rows[:, 2:])
        True
    """

    lut: torch.Tensor
    multipliers: torch.Tensor
    primes: torch.Tensor
    offsets: torch.Tensor

    def __init__(
        self,
        spec: HashSpec,
        vocab: CompressedVocab | np.ndarray | torch.Tensor | str,
        *,
        backend: str = "auto",
        negative_ids: NegativeIds = "mask",
    ) -> None:
        super().__init__()
        if not isinstance(spec, HashSpec):
            raise UsageError(
                f"`spec` must be a HashSpec (ngramtool.resolve_spec makes one), got {type(spec).__name__}"
            )
        self.spec = spec
        # The ids come from the table, so they need no range check.
        self.hasher = SequenceHasher(spec, backend=backend, negative_ids=negative_ids, check_ids=False)
        constants = {
            "lut": check_table(_table(vocab), spec.vocab_size),
            "multipliers": spec.family_multipliers,
            "primes": spec.primes,
            "offsets": spec.offsets.astype(spec.row_dtype),
        }
        for name, value in constants.items():
            self.register_buffer(name, torch.from_numpy(np.array(value)), persistent=False)

    def forward(self, input_ids: torch.Tensor, preceding: torch.Tensor | None = None) -> torch.Tensor:
        """Rows ``[B, T, L, C]`` of ``input_ids`` ``[B, T]``, on their device.

        Args:
            input_ids: raw token ids, int32 or int64 (any integer dtype), any device: the
                module's buffers must be there (``.to(device)``). Negative ids are masked
                tokens, as ``negative_ids`` says.
            preceding: optional ``[B, k]`` raw ids that precede each sequence (the last N-1
                are used; missing ones stand for the pad, negative ones as ``negative_ids``
                says): rows then equal
                those of the whole stream (``padding="stream"``) instead of a padded start.

        Raises:
            UsageError: ids that are not an integer [B, T] tensor, buffers on another device.
            NgramToolError: an id at or above the vocabulary's size, or without a token, naming
                its batch row and position.
        """
        ids = self._canonical(input_ids, "input_ids")
        before = None
        if preceding is not None:
            before = self._canonical(preceding, "preceding")
            if before.shape[0] != ids.shape[0]:
                raise UsageError(
                    f"`preceding` holds the ids before {plural(before.shape[0], 'sequence')} but "
                    f"`input_ids` holds {ids.shape[0]}: give the ids before each sequence, [B, k]"
                )
        return self.hasher(ids, before)

    def _canonical(self, value: Any, name: str) -> torch.Tensor:
        """Canonical int64 ids of raw ids ``value`` [B, T], on their device (negative ids kept)."""
        ids = value if isinstance(value, torch.Tensor) else torch.as_tensor(np.asarray(value))
        if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
            raise UsageError(
                f"`{name}` must hold integer token ids (int32 or int64), got {ids.dtype}: "
                "pass the tokenizer's ids, not embeddings or probabilities"
            )
        if ids.ndim != 2:
            raise UsageError(
                f"`{name}` must be [B, T] token ids, got a {ids.ndim}-D tensor of shape {tuple(ids.shape)}"
                + (": a single sequence is ids.unsqueeze(0)" if ids.ndim == 1 else "")
            )
        lut = self.lut
        if ids.device != lut.device:
            raise UsageError(
                f"`{name}` is on {ids.device} but NgramRows is on {lut.device}: move the module "
                f"with .to({str(ids.device)!r}) (its buffers hold the lookup table)"
            )
        wide = ids.to(torch.int64)
        mapped = lut[wide.clamp(0, lut.shape[0] - 1)]
        masked = wide < 0
        bad = (wide >= lut.shape[0]) | ((mapped == UNASSIGNED) & ~masked)
        if bool(bad.any()):
            self._refuse(wide, bad, name)
        return torch.where(masked, wide, mapped)

    def _refuse(self, ids: torch.Tensor, bad: torch.Tensor, name: str) -> None:
        """Raise for the first bad id, naming its batch row and position."""
        row, position = (int(i) for i in torch.nonzero(bad)[0])
        token, size = int(ids[row, position]), self.lut.shape[0]
        where = f"`{name}`: token id {token:,} at batch row {row}, position {position}"
        if token >= size:
            raise NgramToolError(
                f"{where} is at or above the {size:,} ids of the tokenizer's vocabulary: the ids come "
                "from another tokenizer (give NgramRows that tokenizer's vocabulary)"
            )
        raise NgramToolError(f"{where} has no token in this tokenizer (an unassigned id)")

    def extra_repr(self) -> str:
        spec = self.spec
        return (
            f"N={spec.max_ngram}, heads={spec.heads}, layers={list(spec.layer_ids)}, "
            f"V={self.lut.shape[0]:,}, V'={spec.vocab_size:,}, rows {spec.row_dtype.name} [B, T, "
            f"{spec.num_layers}, {spec.num_columns}], spec {spec.fingerprint[:16]}"
        )


def _table(vocab: CompressedVocab | np.ndarray | torch.Tensor | str) -> np.ndarray:
    """The lookup table of what ``NgramRows`` accepts as ``vocab``."""
    if isinstance(vocab, CompressedVocab):
        return vocab.lut
    if isinstance(vocab, str):
        return build_vocab(load_tokenizer(vocab)).lut
    if isinstance(vocab, torch.Tensor):
        return vocab.detach().cpu().numpy()
    return np.asarray(vocab)
