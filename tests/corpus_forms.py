"""The same documents written in every form the readers take (for the equivalence tests): JSONL,
compressed JSONL, parquet, Arrow, an HF ``datasets.save_to_disk`` directory; and one text written
as plain and compressed text. Everything is built locally: nothing is downloaded."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

datasets.disable_progress_bars()

COMPRESSORS = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda data: zstandard.ZstdCompressor(write_checksum=True).compress(data),
}


def jsonl_bytes(docs: Sequence[str], key: str = "text") -> bytes:
    """One JSON object per line, the text under ``key`` beside another field."""
    return b"".join(
        json.dumps({"id": i, key: doc}, ensure_ascii=i % 2 == 0).encode() + b"\n"
        for i, doc in enumerate(docs)
    )


def write_record_forms(folder: Path, docs: Sequence[str], key: str = "text") -> dict[str, Path]:
    """``docs`` as JSONL (plain and compressed), parquet (several row groups), an Arrow file and a
    ``save_to_disk`` directory; by form name."""
    folder.mkdir(parents=True, exist_ok=True)
    data = jsonl_bytes(docs, key)
    paths = {"jsonl": folder / "docs.jsonl"}
    paths["jsonl"].write_bytes(data)
    for suffix, compress in COMPRESSORS.items():
        paths[f"jsonl{suffix}"] = folder / f"docs.jsonl{suffix}"
        paths[f"jsonl{suffix}"].write_bytes(compress(data))
    table = pa.table({"id": list(range(len(docs))), key: list(docs)})
    paths["parquet"] = folder / "docs.parquet"
    pq.write_table(table, paths["parquet"], row_group_size=max(1, len(docs) // 3))
    paths["arrow"] = folder / "docs.arrow"
    with pa.ipc.new_stream(str(paths["arrow"]), table.schema) as writer:
        for batch in table.to_batches(max_chunksize=max(1, len(docs) // 2)):
            writer.write_batch(batch)
    paths["save_to_disk"] = folder / "saved"
    datasets.Dataset.from_dict({key: list(docs), "n": list(range(len(docs)))}).save_to_disk(
        str(paths["save_to_disk"]), max_shard_size="20KB"
    )
    return paths


def write_text_forms(folder: Path, text: str) -> dict[str, Path]:
    """``text`` as a plain and a compressed text file of each kind; by form name."""
    folder.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    paths = {"txt": folder / "doc.txt"}
    paths["txt"].write_bytes(data)
    for suffix, compress in COMPRESSORS.items():
        paths[f"txt{suffix}"] = folder / f"doc.txt{suffix}"
        paths[f"txt{suffix}"].write_bytes(compress(data))
    return paths
