"""Re-lay an index for trainers that load one Engram layer's rows at a time."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from .errors import NgramToolError, UsageError
from .formats.index import Index
from .formats.npy import NpyStreamWriter
from .formats.partial import partial_dir

CHUNK_TOKENS = 1 << 20
LAYOUT_FILE = "layers.json"


def export_per_layer(index: Index, dest: Path, *, force: bool = False) -> dict[str, Any]:
    """Write one ``[T, C]`` .npy per Engram layer (``rows_layer{ID}.npy``) and ``layers.json``.

    The directory is built under a temporary name and renamed into place; returns the layout
    record written to ``layers.json``.
    """
    dest = Path(dest)
    if dest.exists() and dest.resolve() == Path(index.path).resolve():
        raise UsageError(f"the export would replace its own index {dest}; choose another -o")
    if dest.exists() and not force:
        raise UsageError(f"{dest} already exists; pass --force to replace it")
    if dest.exists() and not (dest / LAYOUT_FILE).is_file():
        raise UsageError(
            f"{dest} exists and is not a per-layer export (no {LAYOUT_FILE}); refusing to replace it"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = partial_dir(dest)
    try:
        spec = index.spec
        writers = [
            NpyStreamWriter(tmp / f"rows_layer{layer_id}.npy", spec.row_dtype, (spec.num_columns,))
            for layer_id in spec.layer_ids
        ]
        for lo in range(0, len(index), CHUNK_TOKENS):
            block = index.rows[lo : lo + CHUNK_TOKENS]
            for li, writer in enumerate(writers):
                writer.append(block[:, li, :])
        layers = []
        for layer_id, rows_in_table, writer in zip(
            spec.layer_ids, spec.rows_per_layer.tolist(), writers, strict=True
        ):
            writer.close()
            layers.append(
                {
                    "layer_id": layer_id,
                    "file": writer.path.name,
                    "shape": list(writer.shape),
                    "dtype": writer.dtype.str,
                    "table_rows": rows_in_table,
                    "data_sha256": writer.sha256,
                }
            )
        record = {
            "source_index": str(index.path),
            "spec_fingerprint": spec.fingerprint,
            "vocab_fingerprint": index.manifest["vocab"]["fingerprint"],
            "layout": "per-layer [T, (N-1)*K]; column (n-2)*K + head; -1 = masked token",
            "layers": layers,
        }
        (tmp / LAYOUT_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise NgramToolError(f"cannot write {dest}: {exc.strerror}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return record
