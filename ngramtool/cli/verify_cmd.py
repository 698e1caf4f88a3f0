"""``ngramtool verify``: re-derive every row and check every checksum."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from ..errors import NgramToolError, UsageError
from ..formats.dataset import DATASET, MergedIndex
from ..formats.index import MANIFEST, open_index
from ..formats.stream import file_is_stream, read_stream
from ..verify import VerifyReport, verify_dataset, verify_index, verify_stream
from .common import JsonOpt, QuietOpt, binary_input, print_json, status, stderr

HELP = """Verify an index, a merged dataset or a stream: checksums, fingerprints, every row.

Every row is re-derived from the tokens, the lookup table and the spec.

Exits 0 when everything matches; otherwise 1 with the first bad position.

[bold]Examples[/]

  ngramtool verify corpus.ngidx
  ngramtool hash corpus.txt -o - | ngramtool verify -
  ngramtool verify corpus.ngidx --json
  ngramtool verify out/                      # a merged dataset: every shard
"""


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("verify", help=HELP)(verify_command)


def verify_command(
    path: Annotated[str, typer.Argument(help="Index directory, stream file, or - for a stream on stdin.")],
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Verify PATH."""
    started = time.perf_counter()
    with status(f"verifying {path}", not quiet):
        try:
            report = _verify(path)
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


def _verify(path: str) -> VerifyReport:
    if path != "-" and (Path(path) / DATASET).is_file():
        return verify_dataset(MergedIndex(Path(path)))
    if path != "-" and (Path(path) / MANIFEST).is_file():
        return verify_index(open_index(path))
    if path == "-" or file_is_stream(Path(path)):
        with binary_input(path) as source:
            return verify_stream(read_stream(source))
    if Path(path).is_file():
        raise UsageError(
            f"{path} is not an index, a dataset or a stream, which hold rows to verify; "
            f"for a token file, `ngramtool inspect {path}` describes it"
        )
    if not Path(path).exists():
        raise UsageError(f"{path} does not exist: give an index, a merged dataset or a stream file")
    raise UsageError(f"{path} is neither an ngramtool index, a merged dataset nor a stream file")
