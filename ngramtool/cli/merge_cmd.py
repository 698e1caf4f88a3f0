"""``ngramtool merge``: a dataset manifest over a directory of index shards."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..formats.dataset import DATASET, merge_shards
from ..util.wording import agree, plural
from .command import Command
from .options import ChecksumOpt, JsonOpt, QuietOpt
from .render import print_json, stderr

HELP = """Merge a directory of index shards into one dataset (writes DIR/dataset.json).

The shards must share one hash spec, vocabulary and boundary policy; mixing them is refused.
ngramtool.open_index(DIR) and the PyTorch datasets then read the shards as one index.

Entries that are not finished shards (a killed run's .NAME.XXXX.partial directory, a directory
without a valid manifest) are named and refused; --allow-missing merges the finished shards
without them and records what was left out in dataset.json.

[bold]Examples[/]

  ngramtool hash 'shards/*.txt' -o out/ && ngramtool merge out/
  ngramtool merge out/ --json
  ngramtool merge out/ --allow-missing      # merge what is finished, record the rest
  ngramtool merge out/ --checksum sha256    # sha256 of each shard's manifest
"""


def merge_command(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="A directory of index shards.")],
    allow_missing: Annotated[
        bool,
        typer.Option(
            "--allow-missing",
            help="Merge the finished shards; leave out unfinished or damaged ones (listed in dataset.json).",
        ),
    ] = False,
    checksum: ChecksumOpt = "xxh3-128",
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Merge the shards in DIR."""
    dataset = merge_shards(directory, allow_missing=allow_missing, checksum=checksum)
    left_out = dataset.get("left_out", [])
    if left_out:  # shown even with --quiet and --json: the dataset is smaller than the directory
        stderr.print(
            f"warning: left out {plural(len(left_out), 'entry', 'entries')} that "
            f"{agree(len(left_out), 'is', 'are')} not a finished shard: "
            + "; ".join(f"{entry['path']} ({entry['reason']})" for entry in left_out),
            markup=False,
        )
    if as_json:
        print_json(dataset)
    elif not quiet:
        stderr.print(
            f"wrote {directory / DATASET}: {plural(dataset['num_shards'], 'shard')}, "
            f"{plural(dataset['num_tokens'], 'token')}, {plural(dataset['num_documents'], 'document')}, "
            f"spec {dataset['spec']['fingerprint'][:16]}",
            markup=False,
        )


COMMAND = Command("merge", HELP, merge_command)
