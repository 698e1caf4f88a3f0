"""``ngramtool vocab``: the compressed vocabulary of a tokenizer."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..tools.describe import describe_vocab
from ..util.wording import plural
from .command import Command
from .options import (
    TOKENIZER_OPTIONS,
    ForceOpt,
    JsonOpt,
    TokenizerOptions,
    option_groups,
    refuse_idle_options,
)
from .render import print_json, print_table, stdout

HELP = """Report a tokenizer's Engram compressed vocabulary.

Shows V (raw ids), V' (canonical ids), the reduction and the largest merge groups; the table is
built once and then read from the cache.

[bold]Examples[/]

  ngramtool vocab                                   # cl100k_base: V = 100,277 ids -> V' = 62,330
  ngramtool vocab --tokenizer tokenizer.json --top 5
  ngramtool vocab --export lut.npy --json
"""


@option_groups
def vocab_command(
    ctx: typer.Context,
    vocab: TokenizerOptions = TOKENIZER_OPTIONS,
    top: Annotated[
        int, typer.Option("--top", help="How many of the largest merge groups to list.", min=0)
    ] = 10,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            help="Write the lookup table (int64 [V], -1 = no token) as .npy.",
        ),
    ] = None,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Report the compressed vocabulary."""
    if export is None:
        refuse_idle_options(ctx, ["force"], "with --export FILE", "add --export FILE")
    report = describe_vocab(**vocab.values(), top=top, export=export, force=force)
    groups, described, name = report["largest_groups"], report["vocab"], report["tokenizer"]["name"]
    if as_json:
        print_json(report)
        return
    if not described["compressed"]:
        ids = plural(described["raw_size"], "id")
        stdout.print(f"[bold]{name}[/]: identity map (--no-compress): V' = V = {ids}")
    else:
        stdout.print(
            f"[bold]{name}[/]: V = {plural(described['raw_size'], 'id')} ({report['assigned_ids']:,} with a "
            f"token) -> V' = {plural(described['size'], 'canonical id')} ({report['reduction']:.2%} fewer)"
        )
    stdout.print(f"vocabulary fingerprint {described['fingerprint']}")
    if groups:
        grid = Table(title=f"largest {plural(len(groups), 'merge group')}", title_justify="left")
        for column in ("canonical", "key", "raw ids", "members (first 8)"):
            grid.add_column(column, justify="right" if column in ("canonical", "raw ids") else "left")
        for group in groups:
            members = " ".join(repr(m["text"]) for m in group["members"])
            grid.add_row(str(group["canonical_id"]), repr(group["key"]), str(group["size"]), members)
        print_table(grid)
    if export is not None:
        stdout.print(f"wrote {export}")


COMMAND = Command("vocab", HELP, vocab_command)
