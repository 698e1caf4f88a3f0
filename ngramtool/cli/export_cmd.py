"""``ngramtool export``: re-lay an index's rows for trainers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..tools.export import export_path
from .command import Command
from .options import ChecksumOpt, JsonOpt, QuietOpt
from .render import print_json, stderr

HELP = """Export an index's rows in another layout.

--layout per-layer writes one [T, (N-1)*K] .npy per Engram layer (rows_layer{ID}.npy) plus
layers.json, for trainers that load one layer's rows.

[bold]Examples[/]

  ngramtool export corpus.ngidx --layout per-layer              # -> corpus.ngidx.layers/
  ngramtool export corpus.ngidx --layout per-layer -o rows/ --force --json
  ngramtool export corpus.ngidx --checksum sha256               # sha256 of each file in layers.json
"""


def export_command(
    index_path: Annotated[
        Path, typer.Argument(metavar="INDEX", help="An index directory or a merged dataset.")
    ],
    layout: Annotated[str, typer.Option("--layout", help="Only 'per-layer' for now.")] = "per-layer",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Output directory.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing output directory.")] = False,
    checksum: ChecksumOpt = "xxh3-128",
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Export INDEX."""
    dest, record = export_path(index_path, output, layout=layout, force=force, checksum=checksum)
    if as_json:
        print_json({"output": str(dest), **record})
    elif not quiet:
        files = ", ".join(f"{layer['file']} {layer['shape']}" for layer in record["layers"])
        stderr.print(f"wrote {dest}: {files}", markup=False)


COMMAND = Command("export", HELP, export_command)
