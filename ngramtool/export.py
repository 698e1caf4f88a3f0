"""Re-lay an index for trainers that load one Engram layer's rows at a time."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .artifacts import IndexLike, Kind, expect_kind, open_index
from .errors import NgramToolError, UsageError
from .formats.atomic import Staged, write_json_durably
from .formats.index import Index
from .formats.npy import NpyStreamWriter

CHUNK_TOKENS = 1 << 20
LAYOUT_FILE = "layers.json"


LAYOUTS = ("per-layer",)


def export_path(
    path: str | Path, output: str | Path | None = None, *, layout: str = "per-layer", force: bool = False
) -> tuple[Path, dict[str, Any]]:
    """Export the index or merged dataset at ``path`` in ``layout`` (:func:`export_per_layer`) to
    ``output`` (default: ``path`` + ``.layers``); returns (the output, its layout record).

    >>> from ngramtool.export import export_path
    >>> dest, record = export_path("corpus.ngidx", "corpus.layers", force=True)
    >>> [(layer["file"], layer["shape"]) for layer in record["layers"]]
    [('rows_layer1.npy', [158122, 16]), ('rows_layer15.npy', [158122, 16])]
    """
    if layout not in LAYOUTS:
        raise UsageError(f"`layout` must be 'per-layer' (got {layout!r})")
    if output is not None and str(output) == "-":
        raise UsageError("export writes a directory of .npy files, not stdout: give `output=DIR`, not -")
    expect_kind(path, [Kind.INDEX, Kind.DATASET])
    index = open_index(path)
    source = Path(path)
    named = source.resolve() if source.name in ("", "..") else source  # '.' and '..' have no name
    dest = Path(output) if output is not None else named.with_name(named.name + ".layers")
    return dest, export_per_layer(index, dest, force=force)


def export_per_layer(index: IndexLike, dest: Path, *, force: bool = False) -> dict[str, Any]:
    """Write one ``[T, C]`` .npy per Engram layer (``rows_layer{ID}.npy``) and ``layers.json``.

    Every row read is checked against the sha256 its index's manifest records (each shard's, for
    a merged dataset; a tokens-only index's rows are computed from its tokens, which are checked
    against their block checksums): a damaged index raises NgramToolError and leaves no output. The directory
    is built under a temporary name and renamed into place; an existing export (``force``) is
    replaced only once the new one is complete. Returns the layout record written to
    ``layers.json``.
    """
    dest = Path(dest)
    if dest.exists() and dest.resolve() == Path(index.path).resolve():
        raise UsageError(f"the export would replace its own index {dest}; choose another `output`")
    if dest.exists() and not force:
        raise UsageError(f"{dest} already exists; pass `force=True` to replace it")
    if dest.exists() and not (dest / LAYOUT_FILE).is_file():
        raise UsageError(
            f"{dest} exists and is not a per-layer export (no {LAYOUT_FILE}); refusing to replace it"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        with Staged(dest, directory=True) as staged:
            record = _write_layers(index, staged.path)
            staged.publish()
    except OSError as exc:
        raise NgramToolError(f"cannot write {dest}: {exc.strerror}") from None
    return record


def _write_layers(index: IndexLike, tmp: Path) -> dict[str, Any]:
    """Write the per-layer files and ``layers.json`` into ``tmp``; returns the layout record."""
    spec = index.spec
    writers = [
        NpyStreamWriter(tmp / f"rows_layer{layer_id}.npy", spec.row_dtype, (spec.num_columns,))
        for layer_id in spec.layer_ids
    ]
    for shard in index.shards:
        _copy_checked_rows(shard, writers)
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
    write_json_durably(tmp / LAYOUT_FILE, record)
    return record


def _copy_checked_rows(index: Index, writers: list[NpyStreamWriter]) -> None:
    """Append each layer's rows of ``index`` to its writer, checking the manifest's rows sha256
    (a tokens-only index's rows are computed from tokens checked against their block checksums)."""
    digest = hashlib.sha256()
    for lo in range(0, len(index), CHUNK_TOKENS):
        block = index.rows[lo : lo + CHUNK_TOKENS]
        digest.update(block.reshape(-1).view("u1"))
        for li, writer in enumerate(writers):
            writer.append(block[:, li, :])
    if not index.stores_rows:
        return
    record = index.manifest["arrays"]["rows"]
    if digest.hexdigest() != record["data_sha256"]:
        raise NgramToolError(
            f"{index.path / record['file']}: the rows do not match the sha256 in its manifest; "
            "the index is damaged (ngramtool verify checks it): nothing was exported"
        )
