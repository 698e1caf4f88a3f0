"""How each row number is born: token -> canonical id -> window -> XOR mix -> mod prime -> + offset."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .backends import BackendChoice, choose_backend
from .errors import UsageError
from .hashing import hash_ngrams, lag_windows, ngram_mixes
from .presets import resolve_spec
from .spec import HashSpec
from .tokenizers import Tokenizer, encode_document, load_tokenizer
from .vocab import CompressedVocab, build_vocab


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
    *,
    tokenizer: str = "cl100k_base",
    special: str | None = None,
    no_compress: bool = False,
    spec_file: str | Path | None = None,
    preset: str | None = None,
    max_ngram: int | None = None,
    heads: int | None = None,
    layer_ids: Sequence[int] | None = None,
    table_sizes: int | Sequence[int] | None = None,
    seed: int | None = None,
    pad_id: int | None = None,
    backend: str = "auto",
    device: str | None = None,
    layer: int | None = None,
    limit: int = 64,
) -> Explanation:
    """Every intermediate value of the rows of ``text`` (read as one document, as hashing reads
    it): the first ``limit`` tokens (0: all), of Engram layer ``layer`` only when given. The spec
    comes from :func:`ngramtool.resolve_spec` with the same parameters.

    >>> from ngramtool.explain import explain
    >>> shown = explain("the horse", heads=2, layer_ids=[1])
    >>> [(t["text"], t["canonical_id"]) for t in shown.tokens]
    [('the', 241), (' horse', 10153)]
    >>> head = shown.tokens[1]["ngrams"][0]["heads"][0]
    >>> head["hash"] + head["offset"] == head["row"]
    True
    """
    tok = load_tokenizer(tokenizer, special)
    vocab = build_vocab(tok, compress=not no_compress)
    spec = resolve_spec(
        spec_file=spec_file,
        preset=preset,
        tokenizer=tok,
        vocab=vocab,
        max_ngram=max_ngram,
        heads=heads,
        layer_ids=layer_ids,
        table_sizes=table_sizes,
        seed=seed,
        pad_id=pad_id,
    )
    if layer is not None and layer not in spec.layer_ids:
        raise UsageError(
            f"`layer` {layer} is not one of the Engram layers {list(spec.layer_ids)} (`layer_ids`)"
        )
    choice = choose_backend(backend, device)
    records = explain_text(text, tok, vocab, spec, backend=choice.name, device=choice.device)
    shown = records[:limit] if limit else records
    if layer is not None:
        for record in shown:
            record["ngrams"] = [gram for gram in record["ngrams"] if gram["layer"] == layer]
    return Explanation(spec, choice, len(records), shown)


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
