"""``ngramtool export``: re-lay an index's rows for trainers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
from ..export import export_per_layer
from ..formats.dataset import DATASET
from ..formats.index import MANIFEST, open_index
from .common import JsonOpt, QuietOpt, print_json, stderr

HELP = """Export an index's rows in another layout.

--layout per-layer writes one [T, (N-1)*K] .npy per Engram layer (rows_layer{ID}.npy) plus
layers.json, for trainers that load one layer's rows.

[bold]Examples[/]

  ngramtool export corpus.ngidx --layout per-layer              # -> corpus.ngidx.layers/
  ngramtool export corpus.ngidx --layout per-layer -o rows/ --force --json
"""


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("export", help=HELP)(export_command)


def export_command(
    index_path: Annotated[
        Path, typer.Argument(metavar="INDEX", help="An index directory or a merged dataset.")
    ],
    layout: Annotated[str, typer.Option("--layout", help="Only 'per-layer' for now.")] = "per-layer",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Output directory.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing output directory.")] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Export INDEX."""
    if layout != "per-layer":
        raise UsageError(f"--layout must be 'per-layer' (got {layout!r})")
    if output is not None and str(output) == "-":
        raise UsageError("export writes a directory of .npy files, not stdout: give -o DIR, not -o -")
    expected = f"an index directory (with {MANIFEST}) or a merged dataset (with {DATASET})"
    if not index_path.exists():
        raise UsageError(f"{index_path} does not exist: export reads {expected}")
    if not ((index_path / MANIFEST).is_file() or (index_path / DATASET).is_file()):
        raise UsageError(f"{index_path} is not {expected}")
    index = open_index(index_path)
    # '.' and '..' have no name of their own: take the directory's real one.
    named = index_path.resolve() if index_path.name in ("", "..") else index_path
    dest = output or named.with_name(named.name + ".layers")
    record = export_per_layer(index, dest, force=force)
    if as_json:
        print_json({"output": str(dest), **record})
    elif not quiet:
        files = ", ".join(f"{layer['file']} {layer['shape']}" for layer in record["layers"])
        stderr.print(f"wrote {dest}: {files}", markup=False)
