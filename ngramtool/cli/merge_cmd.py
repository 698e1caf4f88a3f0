"""``ngramtool merge``: a dataset manifest over a directory of index shards."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..formats.dataset import DATASET, merge_shards
from ..wording import plural
from .common import JsonOpt, QuietOpt, print_json, stderr

HELP = """Merge a directory of index shards into one dataset (writes DIR/dataset.json).

The shards must share one hash spec, vocabulary and boundary policy; mixing them is refused.
ngramtool.open_index(DIR) and the PyTorch datasets then read the shards as one index.

[bold]Examples[/]

  ngramtool hash 'shards/*.txt' -o out/ && ngramtool merge out/
  ngramtool merge out/ --json
"""


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("merge", help=HELP)(merge_command)


def merge_command(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="A directory of index shards.")],
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Merge the shards in DIR."""
    dataset = merge_shards(directory)
    if as_json:
        print_json(dataset)
    elif not quiet:
        stderr.print(
            f"wrote {directory / DATASET}: {plural(dataset['num_shards'], 'shard')}, "
            f"{plural(dataset['num_tokens'], 'token')}, {plural(dataset['num_documents'], 'document')}, "
            f"spec {dataset['spec']['fingerprint'][:16]}",
            markup=False,
        )
