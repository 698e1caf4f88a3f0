"""``ngramtool verify``: re-derive every row and check every checksum."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from ..tools.verify import verify_path
from ..util.errors import NgramToolError, UsageError
from .command import Command
from .options import JsonOpt, QuietOpt
from .render import print_json, status, stderr

HELP = """Verify an index, a merged dataset or a stream: checksums, fingerprints, every row.

Every row is re-derived from the tokens, the lookup table and the spec.

Exits 0 when everything matches; otherwise 1 with the first bad position.

[bold]Examples[/]

  ngramtool verify corpus.ngidx
  ngramtool hash corpus.txt -o - | ngramtool verify -
  ngramtool verify corpus.ngidx --json
  ngramtool verify out/                      # a merged dataset: every shard
"""


def verify_command(
    path: Annotated[str, typer.Argument(help="Index directory, stream file, or - for a stream on stdin.")],
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Verify PATH."""
    started = time.perf_counter()
    with status(f"verifying {path}", not quiet):
        try:
            report = verify_path(path)
        except NgramToolError as exc:
            if as_json and not isinstance(exc, UsageError):  # a failed check is a result too
                print_json({"path": path, "ok": False, "error": str(exc)})
            raise
    seconds = time.perf_counter() - started
    result = {
        "path": path,
        "ok": True,
        "num_tokens": report.num_tokens,
        "num_documents": report.num_documents,
        "checks": report.checks,
        "seconds": round(seconds, 3),
    }
    if as_json:
        print_json(result)
    elif not quiet:
        stderr.print(f"ok: {path}: " + "; ".join(report.checks) + f" in {seconds:.2f} s", markup=False)


COMMAND = Command("verify", HELP, verify_command)
