"""How each row number is born: token -> canonical id -> window -> XOR mix -> mod prime -> + offset."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..hashing.backends import BackendChoice, choose_backend
from ..hashing.backends.numpy_backend import column_mixes, lag_windows
from ..hashing.hasher import hash_ngrams
from ..model.mapping import NgramHashMapping
from ..spec.hashspec import HashSpec
from ..util.errors import UsageError


@dataclass(frozen=True)
class Explanation:
    """The rows of a short text, explained (:func:`explain`).

    Attributes:
        spec: the spec of the rows.
        backend: the backend that computed the rows.
        num_tokens: the text's tokens.
        tokens: the records of the first ``limit`` tokens (see :func:`explain_text`).
    """

    spec: HashSpec
    backend: BackendChoice
    num_tokens: int
    tokens: list[dict[str, Any]]

    @property
    def left_out(self) -> int:
        """Tokens after the ones shown."""
        return self.num_tokens - len(self.tokens)


def explain(
    text: str,
    mapping: NgramHashMapping | None = None,
    *,
    backend: str = "auto",
    device: str | None = None,
    layer: int | None = None,
    limit: int = 64,
) -> Explanation:
    """Every intermediate value of the rows of ``text`` (read as one document, as hashing reads
    it) under ``mapping`` (None: cl100k_base and the default spec): the first ``limit`` tokens
    (0: all), of Engram layer ``layer`` only when given.

    >>> from ngramtool import NgramHashMapping
    >>> from ngramtool.tools.explain import explain
    >>> shown = explain("the horse", NgramHashMapping.build("cl100k_base", heads=2, layer_ids=[1]))
    >>> [(t["text"], t["canonical_id"]) for t in shown.tokens]
    [('the', 241), (' horse', 10153)]
    >>> head = shown.tokens[1]["ngrams"][0]["heads"][0]
    >>> head["hash"] + head["offset"] == head["row"]
    True
    """
    mapping = mapping or NgramHashMapping.build()
    spec = mapping.spec
    if layer is not None and layer not in spec.layer_ids:
        raise UsageError(
            f"`layer` {layer} is not one of the Engram layers {list(spec.layer_ids)} (`layer_ids`)"
        )
    choice = choose_backend(backend, device, input_bytes=len(text.encode("utf-8", "replace")))
    records = explain_text(text, mapping, backend=choice.name, device=choice.device)
    shown = records[:limit] if limit else records
    if layer is not None:
        for record in shown:
            record["ngrams"] = [gram for gram in record["ngrams"] if gram["layer"] == layer]
    return Explanation(spec, choice, len(records), shown)


def explain_text(
    text: str,
    mapping: NgramHashMapping,
    *,
    backend: str = "auto",
    device: str | None = None,
) -> list[dict[str, Any]]:
    """One record per token of ``text``, read as one document (with the tokenizer's document prefix
    and suffix, as ``hash`` reads it), with every intermediate value of its rows.

    The rows come from ``backend`` on ``device`` (see :mod:`ngramtool.hashing.backends`); the mixes and
    the hash column are computed here from the definition, so the table shows that they agree.

    Each record: position, raw_id, text, canonical_id, key, and ``ngrams``: per layer and order,
    the window of canonical ids in reading order (oldest first, the current token last; pads
    before the stream start), the int64 mix (None where each head has its own: the tutorial,
    LongCat), and per head its mix, the table size (``prime``), the hash (mix mod size), the
    column offset and the row.
    """
    tokenizer, vocab, spec = mapping.tokenizer, mapping.vocab, mapping.spec
    if tokenizer is None:
        raise UsageError("explaining text needs a `tokenizer`")
    raw = mapping.encode(text)
    canonical = vocab.canonicalize(raw)
    n = spec.max_ngram
    ext = np.concatenate([np.full(n - 1, spec.pad_id, dtype=np.int64), canonical])
    windows = lag_windows(ext, n)
    mixes = column_mixes(
        windows, spec
    )  # [T, L, C]: a layer's heads share it unless the family mixes per head
    rows = hash_ngrams(canonical, spec, backend=backend, device=device)
    records = []
    for t, (raw_id, canon) in enumerate(zip(raw.tolist(), canonical.tolist(), strict=True)):
        ngrams = []
        for li, layer_id in enumerate(spec.layer_ids):
            for order in range(2, n + 1):
                heads = []
                for h in range(spec.heads):
                    col = spec.column(order, h)
                    prime = int(spec.primes[li, order - 2, h])
                    mix = int(mixes[t, li, col])
                    heads.append(
                        {
                            "head": h,
                            "prime": prime,
                            "mix": mix,
                            "hash": mix % prime,
                            "offset": int(spec.offsets[li, col]),
                            "row": int(rows[t, li, col]),
                        }
                    )
                ngrams.append(
                    {
                        "layer": layer_id,
                        "order": order,
                        "window": windows[t, :order][::-1].tolist(),
                        "mix": heads[0]["mix"] if spec.layer_mix else None,
                        "heads": heads,
                    }
                )
        records.append(
            {
                "position": t,
                "raw_id": raw_id,
                "text": tokenizer.token_bytes(raw_id).decode("utf-8", "replace"),
                "canonical_id": canon,
                "key": vocab.keys[canon],
                "ngrams": ngrams,
            }
        )
    return records
