"""Hash the bundled corpus with the ngramtool library instead of the command line.

Steps: load the cl100k_base tokenizer (offline), build its Engram compressed vocabulary, map raw
ids to canonical ids, describe the hash with a HashSpec, then compute the rows twice: in one call
(``hash_ngrams``) and streaming over uneven chunks (``NgramHasher``). Both give the same rows.

Run from anywhere::

    python examples/hash_with_python.py
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ngramtool import HashSpec, NgramHasher, build_vocab, hash_ngrams, load_tokenizer

CORPUS = Path(__file__).resolve().parent / "corpus.txt"
CHUNK_SIZES = (1, 2, 7, 1000, 65_536, 4_097)  # uneven on purpose, repeated until the stream ends
SHOW_FROM, SHOW_TOKENS = 8, 4  # 'This is the J(argon File)'


def chunk_bounds(total: int, sizes: tuple[int, ...]) -> list[tuple[int, int]]:
    """[lo, hi) bounds covering ``range(total)``, cycling through ``sizes``."""
    bounds, lo, i = [], 0, 0
    while lo < total:
        hi = min(lo + sizes[i % len(sizes)], total)
        bounds.append((lo, hi))
        lo, i = hi, i + 1
    return bounds


def rate(count: int, seconds: float) -> str:
    """'1.23M tok/s' for ``count`` tokens in ``seconds``."""
    return f"{count / max(seconds, 1e-9) / 1e6:.2f}M tok/s"


def main() -> None:
    """Tokenize, canonicalize and hash the corpus; print a few rows, throughput and the chunking check."""
    tokenizer = load_tokenizer("cl100k_base")
    started = time.perf_counter()
    vocab = build_vocab(tokenizer)  # cached on disk after the first build ($NGRAMTOOL_CACHE_DIR)
    print(
        f"vocabulary: V = {vocab.raw_size:,} raw ids -> V' = {vocab.size:,} canonical ids "
        f"({time.perf_counter() - started:.2f} s)"
    )

    text = CORPUS.read_text(encoding="utf-8")
    started = time.perf_counter()
    raw = tokenizer.encode(text)
    tokenize_seconds = time.perf_counter() - started
    canonical = vocab.canonicalize(raw)
    print(f"corpus: {len(text.encode('utf-8')):,} bytes -> {raw.shape[0]:,} tokens")

    # The Engram demo configuration; the pad is <|endoftext|> mapped through the vocabulary, as
    # `ngramtool hash` does by default.
    spec = HashSpec(
        max_ngram=3,
        heads=8,
        layer_ids=(1, 15),
        table_sizes=(646_400, 646_400),
        pad_id=int(vocab.lut[tokenizer.pad_token_id]),
        vocab_size=vocab.size,
    )
    print(
        f"spec: N={spec.max_ngram}, K={spec.heads}, layers {list(spec.layer_ids)}, "
        f"fingerprint {spec.fingerprint[:16]}...\n"
        f"      rows per layer {spec.rows_per_layer.tolist()} -> {spec.row_dtype} rows"
    )

    started = time.perf_counter()
    rows = hash_ngrams(canonical, spec)  # [T, L, (N-1)*K]
    hash_seconds = time.perf_counter() - started
    print(f"rows: {rows.dtype} {rows.shape}, {rows.nbytes / 2**20:.1f} MiB")

    first = SHOW_FROM
    print(f"\ntokens {first}..{first + SHOW_TOKENS - 1}, layer {spec.layer_ids[0]}, heads 0-2 of each order:")
    print(f"  {'pos':>4}  {'token':<10} {'raw':>6} {'canon':>6}  {'n=2 rows':<28} n=3 rows")
    for t in range(first, first + SHOW_TOKENS):
        token_text = repr(tokenizer.token_bytes(int(raw[t])).decode("utf-8", "replace"))
        bigram = rows[t, 0, spec.column(2, 0) : spec.column(2, 0) + 3].tolist()
        trigram = rows[t, 0, spec.column(3, 0) : spec.column(3, 0) + 3].tolist()
        print(f"  {t:>4}  {token_text:<10} {int(raw[t]):>6} {int(canonical[t]):>6}  {bigram!s:<28} {trigram}")

    hasher = NgramHasher(spec)
    bounds = chunk_bounds(canonical.shape[0], CHUNK_SIZES)
    started = time.perf_counter()
    streamed = np.concatenate([hasher(canonical[lo:hi]) for lo, hi in bounds])
    stream_seconds = time.perf_counter() - started

    total = raw.shape[0]
    print("\nthroughput (one thread):")
    print(f"  tokenize          {tokenize_seconds:6.3f} s  {rate(total, tokenize_seconds)}")
    print(f"  hash_ngrams       {hash_seconds:6.3f} s  {rate(total, hash_seconds)}")
    print(f"  NgramHasher       {stream_seconds:6.3f} s  {rate(total, stream_seconds)}, {len(bounds)} chunks")
    print(f"\nchunked == whole: {bool(np.array_equal(streamed, rows))}")


if __name__ == "__main__":
    main()
