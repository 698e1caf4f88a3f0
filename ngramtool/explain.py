"""How each row number is born: token -> canonical id -> window -> XOR mix -> mod prime -> + offset."""

from __future__ import annotations

from typing import Any

import numpy as np

from .hashing import hash_ngrams, lag_windows, ngram_mixes
from .spec import HashSpec
from .tokenizers import Tokenizer, encode_document
from .vocab import CompressedVocab


def explain_text(
    text: str,
    tokenizer: Tokenizer,
    vocab: CompressedVocab,
    spec: HashSpec,
    *,
    backend: str = "auto",
    device: str | None = None,
) -> list[dict[str, Any]]:
    """One record per token of ``text``, read as one document (with the tokenizer's document prefix
    and suffix, as ``hash`` reads it), with every intermediate value of its rows.

    The rows come from ``backend`` on ``device`` (see :mod:`ngramtool.backends`); the mixes and
    the hash column are computed here from the definition, so the table shows that they agree.

    Each record: position, raw_id, text, canonical_id, key, and ``ngrams``: per layer and order,
    the window of canonical ids in reading order (oldest first, the current token last; pads
    before the stream start), the int64 mix, and per head the prime, the hash (mix mod prime),
    the column offset and the row.
    """
    raw = encode_document(tokenizer, text)
    canonical = vocab.canonicalize(raw)
    n = spec.max_ngram
    ext = np.concatenate([np.full(n - 1, spec.pad_id, dtype=np.int64), canonical])
    windows = lag_windows(ext, n)
    mixes = ngram_mixes(windows, spec)
    rows = hash_ngrams(canonical, spec, backend=backend, device=device)
    records = []
    for t, (raw_id, canon) in enumerate(zip(raw.tolist(), canonical.tolist(), strict=True)):
        ngrams = []
        for li, layer_id in enumerate(spec.layer_ids):
            for order in range(2, n + 1):
                mix = int(mixes[t, li, order - 2])
                heads = []
                for h in range(spec.heads):
                    col = spec.column(order, h)
                    prime = int(spec.primes[li, order - 2, h])
                    heads.append(
                        {
                            "head": h,
                            "prime": prime,
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
                        "mix": mix,
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
