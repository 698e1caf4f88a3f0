"""Re-lay an index for trainers that load one Engram layer's rows at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..formats.artifacts import IndexLike, Kind, expect_kind, open_index
from ..formats.checksum import DEFAULT_CHECKSUM, check_algorithm, checksum_record, new_digest, recorded
from ..formats.index import Index
from ..formats.npy import HEADER_BYTES, NpyStreamWriter
from ..util.atomic import Staged, write_json_durably
from ..util.errors import NgramToolError, UsageError

CHUNK_TOKENS = 1 << 20
LAYOUT_FILE = "layers.json"
LAYOUT_BYTES = 1 << 12  # about what layers.json takes


LAYOUTS = ("per-layer",)


def export_path(
    path: str | Path,
    output: str | Path | None = None,
    *,
    layout: str = "per-layer",
    force: bool = False,
    checksum: str = DEFAULT_CHECKSUM,
) -> tuple[Path, dict[str, Any]]:
    """Export the index or merged dataset at ``path`` in ``layout`` (:func:`export_per_layer`) to
    ``output`` (default: ``path`` + ``.layers``); returns (the output, its layout record). Each
    file's data is recorded with its ``checksum`` (``"xxh3-128"`` or ``"sha256"``).

    >>> from ngramtool.tools.export import export_path
    >>> dest, record = export_path("corpus.ngidx", "corpus.layers", force=True)
    >>> [(layer["file"], layer["shape"]) for layer in record["layers"]]
    [('rows_layer1.npy', [158122, 16]), ('rows_layer15.npy', [158122, 16])]
    """
    if layout not in LAYOUTS:
        raise UsageError(f"`layout` must be 'per-layer' (got {layout!r})")
    if output is not None and str(output) == "-":
        raise UsageError("export writes a directory of .npy files, not stdout: give `output=DIR`, not -")
    check_algorithm(checksum)
    expect_kind(path, [Kind.INDEX, Kind.DATASET])
    index = open_index(path)
    source = Path(path)
    named = source.resolve() if source.name in ("", "..") else source  # '.' and '..' have no name
    dest = Path(output) if output is not None else named.with_name(named.name + ".layers")
    return dest, export_per_layer(index, dest, force=force, checksum=checksum)


def export_per_layer(
    index: IndexLike, dest: Path, *, force: bool = False, checksum: str = DEFAULT_CHECKSUM
) -> dict[str, Any]:
    """Write one ``[T, C]`` .npy per Engram layer (``rows_layer{ID}.npy``) and ``layers.json``,
    each file's data recorded with its ``checksum``.

    Every row read is checked against the checksum its index's manifest records (each shard's,
    for a merged dataset; a tokens-only index's rows are computed from its tokens, which are
    checked against their block checksums): a damaged index raises NgramToolError and leaves no
    output. The directory is built under a temporary name and renamed into place; an existing
    export (``force``) is replaced only once the new one is complete. Returns the layout record
    written to ``layers.json``.
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
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NgramToolError(f"cannot write {dest}: {exc.strerror}") from None
    spec = index.spec
    size = (HEADER_BYTES + len(index) * spec.num_columns * spec.row_dtype.itemsize) * spec.num_layers
    size += LAYOUT_BYTES
    with Staged(dest, directory=True, expected_bytes=size) as staged:
        record = _write_layers(index, staged.path, checksum)
        staged.publish()
    return record


def _write_layers(index: IndexLike, tmp: Path, checksum: str) -> dict[str, Any]:
    """Write the per-layer files and ``layers.json`` into ``tmp``; returns the layout record."""
    spec = index.spec
    writers: list[NpyStreamWriter] = []
    try:
        for layer_id in spec.layer_ids:
            writers.append(
                NpyStreamWriter(
                    tmp / f"rows_layer{layer_id}.npy",
                    spec.row_dtype,
                    (spec.num_columns,),
                    checksum=checksum,
                )
            )
        for shard in index.shards:
            _copy_checked_rows(shard, writers)
        for writer in writers:
            writer.close()
    except BaseException:
        for writer in writers:
            writer.abort()
        raise
    layers = []
    for layer_id, rows_in_table, writer in zip(
        spec.layer_ids, spec.rows_per_layer.tolist(), writers, strict=True
    ):
        layers.append(
            {
                "layer_id": layer_id,
                "file": writer.path.name,
                "shape": list(writer.shape),
                "dtype": writer.dtype.str,
                "table_rows": rows_in_table,
                **checksum_record("data", writer.algorithm, writer.checksum),
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
    """Append each layer's rows of ``index`` to its writer, checking the manifest's rows checksum
    (a tokens-only index's rows are computed from tokens checked against their block checksums)."""
    record = index.manifest["arrays"]["rows"] if index.stores_rows else None
    algorithm, expected = recorded(record, "data") if record is not None else ("", "")
    digest = new_digest(algorithm) if record is not None else None  # computed rows: nothing to check
    for lo in range(0, len(index), CHUNK_TOKENS):
        block = index.rows[lo : lo + CHUNK_TOKENS]
        if digest is not None:
            digest.update(block.reshape(-1).view("u1"))
        for li, writer in enumerate(writers):
            writer.append(block[:, li, :])
    if digest is not None and digest.hexdigest() != expected:
        raise NgramToolError(
            f"{index.path / record['file']}: the rows do not match the {algorithm} in its manifest; "
            "the index is damaged (ngramtool verify checks it): nothing was exported"
        )
