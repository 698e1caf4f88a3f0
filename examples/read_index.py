"""Build an index with ``ngramtool.hash_files``, then read it the way a trainer does.

Steps: hash the bundled corpus into a temporary directory with ``hash_files`` (what ``ngramtool
hash`` does), open the index with ``open_index`` (memory-mapped), print the manifest summary and
the array shapes, take a window of tokens, and turn its rows into vectors by gathering from one
small embedding table per layer (``index.spec.rows_per_layer[l]`` rows of dimension 4). Finally it
checks the stored rows against ``hash_ngrams`` on the stored tokens.

Run from anywhere::

    python examples/read_index.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ngramtool import NgramHashMapping, build_vocab, hash_files, hash_ngrams, load_tokenizer, open_index

CORPUS = Path(__file__).resolve().parent / "corpus.txt"
# Smaller tables than the Engram demo (646,400 per order, 8 heads) keep the toy tables small.
HASH_OPTIONS = {"heads": 4, "table_sizes": 50000, "layer_ids": [1, 15]}
EMBED_DIM = 4
WINDOW_START, WINDOW_LENGTH = 8, 6


def gather(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Embedding vectors [T, C, dim] for rows [T, C]; a masked row (-1) gives a zero vector."""
    valid = rows >= 0
    return table[np.where(valid, rows, 0)] * valid[..., None]


def main() -> None:
    """Hash the corpus, open the index and gather vectors for one window."""
    with tempfile.TemporaryDirectory(prefix="ngramtool-example-") as tmp:
        shown = ", ".join(f"{name}={value!r}" for name, value in HASH_OPTIONS.items())
        print(
            "hash_files(['examples/corpus.txt'], '$TMP/corpus.ngidx', "
            f"mapping=NgramHashMapping.build({shown}))"
        )
        started = time.perf_counter()
        mapping = NgramHashMapping.build("cl100k_base", **HASH_OPTIONS)
        hash_files([str(CORPUS)], str(Path(tmp) / "corpus.ngidx"), mapping=mapping)
        print(f"  -> written in {time.perf_counter() - started:.2f} s")

        index = open_index(Path(tmp) / "corpus.ngidx")  # what hash_files returned, opened again
        manifest, spec = index.manifest, index.spec
        tok_record, vocab_record = manifest["tokenizer"], manifest["vocab"]
        print("\nmanifest:")
        print(f"  format          {manifest['format']} {manifest['format_version']}")
        print(f"  tokens          {manifest['num_tokens']:,} in {manifest['num_documents']} document(s)")
        print(f"  tokenizer       {tok_record['name']} (n_vocab {tok_record['n_vocab']:,})")
        print(f"  vocabulary      V' = {vocab_record['size']:,} (compressed: {vocab_record['compressed']})")
        print(f"  spec            N={spec.max_ngram}, K={spec.heads}, layers {list(spec.layer_ids)}")
        print(f"  rows per layer  {spec.rows_per_layer.tolist()}")
        print(f"  boundary        {manifest['boundary']}")
        print(f"  fingerprint     {spec.fingerprint[:16]}...")

        print("\narrays (memory-mapped):")
        for name in ("tokens", "rows", "doc_offsets"):
            array = getattr(index, name)
            print(f"  {name:<12} {array.dtype!s:<6} {array.shape}")
        print(f"  document d spans tokens[doc_offsets[d]:doc_offsets[d+1]]: {index.doc_offsets.tolist()}")

        tokens, rows = index.window(WINDOW_START, WINDOW_LENGTH)
        tokenizer = load_tokenizer(manifest["tokenizer"]["name"])
        texts = [tokenizer.token_bytes(int(t)).decode("utf-8", "replace") for t in tokens]
        print(f"\nwindow({WINDOW_START}, {WINDOW_LENGTH}): tokens {tokens.tolist()}")
        print(f"  text {''.join(texts)!r}")
        bigram = slice(spec.column(2, 0), spec.column(2, spec.heads - 1) + 1)
        columns = f"columns {bigram.start}-{bigram.stop - 1}"
        print(f"  rows {rows.shape}; layer {spec.layer_ids[0]}, order 2 ({columns}):")
        for text, row in zip(texts, rows[:, 0, bigram].tolist(), strict=True):
            print(f"    {text!r:<10} {row}")

        # A trainer keeps one table per Engram layer; each of its C = (N-1)*K columns addresses it.
        rng = np.random.default_rng(0)
        print(f"\ngathering from one [rows_per_layer, {EMBED_DIM}] float32 table per layer:")
        for li, layer_id in enumerate(spec.layer_ids):
            table = rng.standard_normal((int(spec.rows_per_layer[li]), EMBED_DIM), dtype=np.float32)
            vectors = gather(table, np.asarray(rows[:, li, :]))  # [T, C, dim]
            per_token = vectors.reshape(vectors.shape[0], -1)  # concatenated heads: [T, C*dim]
            start = np.array2string(per_token[0, :4], precision=3)
            print(
                f"  layer {layer_id:>2}: table {table.shape} -> vectors {vectors.shape} "
                f"-> per token {per_token.shape}; token 0: {start} ..."
            )

        vocab = build_vocab(tokenizer)
        if vocab.fingerprint != vocab_record["fingerprint"]:
            sys.exit("the vocabulary differs from the one the index was built with")
        expected = hash_ngrams(vocab.canonicalize(index.tokens), spec)
        print(f"\nrows match hash_ngrams: {bool(np.array_equal(index.rows, expected))}")
        del tokens, rows, index  # release the memory maps before the directory is removed


if __name__ == "__main__":
    main()
